"""The official A2A Python SDK's card signer and verifier, driven by tests/sdks/sign_interop.rs.

    python a2a_py.py verify CARD.json JWKS.json    exit 0 verified, 1 rejected
    python a2a_py.py sign CARD.json PRIVATE.jwk KID  prints the signed card (1.0 JSON)
"""

import json
import sys

from google.protobuf.json_format import MessageToDict, ParseDict
from jwt.api_jwk import PyJWK

from a2a.types import AgentCard
from a2a.utils.signing import (
    SignatureVerificationError,
    create_agent_card_signer,
    create_signature_verifier,
)


def load_card(path):
    with open(path, encoding='utf-8') as f:
        # As the SDK's card resolver reads a card: unknown keys (root `schemas`) are dropped.
        return ParseDict(json.load(f), AgentCard(), ignore_unknown_fields=True)


def main():
    mode, card_path, key_path = sys.argv[1:4]
    card = load_card(card_path)
    with open(key_path, encoding='utf-8') as f:
        key = json.load(f)
    if mode == 'verify':
        keys = {k.get('kid'): k for k in key['keys']}

        def provider(kid, jku):
            return PyJWK(keys[kid])

        try:
            create_signature_verifier(provider, ['EdDSA', 'ES256'])(card)
        except SignatureVerificationError as e:
            print(f'rejected: {e!r}')
            return 1
        print('verified')
        return 0
    if mode == 'sign':
        kid = sys.argv[4]
        signer = create_agent_card_signer(
            PyJWK(key), {'alg': key['alg'], 'kid': kid, 'typ': 'JOSE'}
        )
        print(json.dumps(MessageToDict(signer(card))))
        return 0
    print(f'unknown mode {mode}')
    return 2


if __name__ == '__main__':
    sys.exit(main())
