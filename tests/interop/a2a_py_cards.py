"""The official A2A Python SDK's Agent Card parsers, driven by tests/sdks/conformance.rs.

    python a2a_py_cards.py CARDS.json

CARDS.json is a list of {"name", "card"}. For each card this prints one JSON object (a list, on
standard output) with what each official parser says; `null` means accepted:

- "client": `a2a.client.card_resolver.parse_agent_card`, the SDK client's card parser, which
  reads 1.0, compat and 0.3 cards (unknown fields are ignored);
- "required": the REQUIRED fields (`google.api.field_behavior`) missing from what the client
  parsed, as the SDK's `validate_proto_required_fields` lists them (empty when none);
- "strict": `ParseDict` into the SDK's 1.0 `AgentCard` without ignoring unknown fields;
- "v03": the SDK's 0.3 model, `a2a.compat.v0_3.types.AgentCard.model_validate`.
"""

import copy
import json
import sys

from google.protobuf.json_format import ParseDict

from a2a.client.card_resolver import parse_agent_card
from a2a.compat.v0_3.types import AgentCard as AgentCardV03
from a2a.types import AgentCard
from a2a.utils.errors import InvalidParamsError
from a2a.utils.proto_utils import validate_proto_required_fields


def failure(e):
    return f'{type(e).__name__}: {e}'[:2000]


def judge(card):
    out = {'client': None, 'required': [], 'strict': None, 'v03': None}
    try:
        parsed = parse_agent_card(copy.deepcopy(card))
    except Exception as e:  # noqa: BLE001 - any failure is the parser's verdict
        out['client'] = failure(e)
    else:
        try:
            validate_proto_required_fields(parsed)
        except InvalidParamsError as e:
            out['required'] = [
                f'{v["field"]}: {v["message"]}' for v in e.data['errors']
            ]
    try:
        ParseDict(copy.deepcopy(card), AgentCard())
    except Exception as e:  # noqa: BLE001
        out['strict'] = failure(e)
    try:
        AgentCardV03.model_validate(copy.deepcopy(card))
    except Exception as e:  # noqa: BLE001
        out['v03'] = failure(e)
    return out


def main():
    with open(sys.argv[1], encoding='utf-8') as f:
        cards = json.load(f)
    results = [dict(name=c['name'], **judge(c['card'])) for c in cards]
    json.dump(results, sys.stdout)
    return 0


if __name__ == '__main__':
    sys.exit(main())
