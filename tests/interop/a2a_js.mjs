// The official A2A JS SDK's card signer and verifier, driven by tests/sdks/sign_interop.rs.
//
//   node a2a_js.mjs verify CARD.json JWKS.json        exit 0 verified, 1 rejected
//   node a2a_js.mjs sign CARD.json PRIVATE.jwk KID    prints the signed card (1.0 JSON)
//
// The SDK is looked up from $A2A_JS_DIR (a directory with node_modules/@a2a-js/sdk).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const require = createRequire(`${process.env.A2A_JS_DIR}/`);
const load = async (name) =>
  import(pathToFileURL(require.resolve(name).replace(/\.cjs$/, '.js')).href);
const sdk = await load('@a2a-js/sdk');
const jose = await load('jose');

const [mode, cardPath, keyPath, kid] = process.argv.slice(2);
const card = JSON.parse(readFileSync(cardPath, 'utf8'));
const key = JSON.parse(readFileSync(keyPath, 'utf8'));

if (mode === 'verify') {
  const keys = new Map(key.keys.map((k) => [k.kid, k]));
  const verifier = sdk.verifyAgentCardSignature(async (kid) => {
    const jwk = keys.get(kid);
    if (!jwk) throw new Error(`unknown kid ${kid}`);
    return jose.importJWK(jwk, jwk.alg);
  });
  try {
    await verifier(card);
    console.log('verified');
  } catch (e) {
    console.log(`rejected: ${e}`);
    process.exit(1);
  }
} else if (mode === 'sign') {
  const signer = sdk.generateAgentCardSignature(await jose.importJWK(key, key.alg), {
    alg: key.alg,
    kid,
    typ: 'JOSE',
  });
  console.log(JSON.stringify(await signer(card)));
} else {
  console.log(`unknown mode ${mode}`);
  process.exit(2);
}
