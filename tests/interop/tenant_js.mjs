// The official A2A JS SDK 1.3 client against an agent whose card names a tenant, driven by
// tests/serving/tenants.rs: the SDK sends the tenant its card's interface names (A2A 1.0 section 8.3.2)
// over JSON-RPC and HTTP+JSON, and each call lands in that tenant.
//
//   node tenant_js.mjs AGENT TENANT
//
// AGENT is the base URL of an agent whose skill `here` answers the tenant it was called in;
// TENANT the tenant its card names. The SDK is looked up from $A2A_JS_DIR.
//
// Prints one line per check, `ok ...` or `FAIL ...`, and exits 1 if any check failed.
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { checks, expect } from './checks.mjs';

const require = createRequire(`${process.env.A2A_JS_DIR}/`);
const load = async (name) =>
  import(pathToFileURL(require.resolve(name).replace(/\.cjs$/, '.js')).href);
const sdk = await load('@a2a-js/sdk');
const clientSdk = await load('@a2a-js/sdk/client');

const { SendMessageRequest } = sdk;
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } = clientSdk;

const [AGENT, TENANT] = process.argv.slice(2);
const { run, failed } = checks((e) => `${e?.name}: ${e?.message}`);

for (const binding of ['JSONRPC', 'HTTP+JSON']) {
  await run(`${binding}: the call lands in the tenant the card names`, async () => {
    const client = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory(), new RestTransportFactory()],
        preferredTransports: [binding],
      }),
    ).createFromUrl(AGENT);
    const message = { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: '?' }] };
    const answer = await client.sendMessage(SendMessageRequest.fromJSON({ message }));
    const task = answer.payload?.value ?? answer;
    expect(String(task.id).startsWith(`${TENANT}:`), `a task of ${TENANT}: ${task.id}`);
    const said = task.artifacts?.[0]?.parts?.[0]?.content?.value ?? task.artifacts?.[0]?.parts?.[0]?.text;
    expect(said === TENANT, `the skill was called in ${JSON.stringify(said)}: ${JSON.stringify(task.artifacts)}`);
  });
}

process.exit(failed() ? 1 : 0);
