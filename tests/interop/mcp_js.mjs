// The official MCP TypeScript SDK client (`@modelcontextprotocol/sdk`: `Client` over
// `StreamableHTTPClientTransport`) against the MCP face of agents of this crate, driven by
// tests/sdks/mcp_sdks.rs. The SDK speaks MCP up to 2025-11-25: the initialize handshake, and a skill's
// question arrives as an `elicitation/create` request during the call.
//
//   node mcp_js.mjs PLANNER SLOW_PLANNER FIGHT_CLUB JUDGE WRITER_TOKEN READER_TOKEN
//
// Each of the first four arguments is the base URL of an agent served by the test, its MCP
// endpoint at `/mcp`: PLANNER, the trip planner planning a day in a few milliseconds;
// SLOW_PLANNER, the same at a day a second (a 14-day plan is still running when it is cancelled);
// FIGHT_CLUB, the fight club; JUDGE, the guarded judge (a bearer JWT required, `record` needing
// the scope `fights:write`, `odds` listed only to authenticated callers). WRITER_TOKEN has that
// scope, READER_TOKEN is valid without it. The SDK is looked up from $MCP_JS_DIR (a directory
// with node_modules/@modelcontextprotocol/sdk).
//
// Prints one line per check, `ok ...` or `FAIL ...`, and exits 1 if any check failed.
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { Check, checks, expect } from './checks.mjs';

const require = createRequire(`${process.env.MCP_JS_DIR}/`);
// The SDK's ES modules (`require.resolve` finds their CommonJS twins).
const load = async (name) =>
  import(pathToFileURL(require.resolve(name).replace('/dist/cjs/', '/dist/esm/')).href);
const { Client } = await load('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport, StreamableHTTPError } = await load(
  '@modelcontextprotocol/sdk/client/streamableHttp.js',
);
const { ElicitRequestSchema, ErrorCode, McpError } = await load(
  '@modelcontextprotocol/sdk/types.js',
);

const [PLANNER, SLOW_PLANNER, FIGHT_CLUB, JUDGE, WRITER, READER] = process.argv.slice(2);
const EXTENSION = 'https://github.com/a2a-card/a2a-card/extensions/mcp/v1';
const AUTHORIZATION_SERVER = 'https://auth.example.com';
const QUESTION = 'Which day do you leave?';
const START = '2026-12-01';
const VERSION = '2025-11-25';

const { report, run, failed } = checks(describe);

function describe(e) {
  return JSON.stringify({ name: e?.name, message: e?.message, code: e?.code, data: e?.data });
}

const show = (value) => JSON.stringify(value);

/** Deep equality of JSON values, key order aside. */
function same(a, b) {
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]))
    );
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && same(a[k], b[k]));
  }
  return a === b;
}

/** The HTTP answers the MCP client got (method, URL, status, headers), read by the security
 * checks: the SDK's errors carry the status but not the challenge. */
class Wire {
  constructor() {
    this.answers = [];
    this.fetch = async (url, init) => {
      const response = await fetch(url, init);
      this.answers.push({
        method: init?.method ?? 'GET',
        url: String(url),
        status: response.status,
        headers: response.headers,
      });
      return response;
    };
  }

  refusals(status) {
    return this.answers.filter((a) => a.status === status);
  }

  statuses() {
    return show(this.answers.map((a) => [a.method, a.status]));
  }
}

/** Runs `body(client, transport)` with a client connected to `url`: sending `token` as a bearer
 * token, `fetch` through `wire`, answering elicitations with `elicit` (which also declares the
 * capability). The session is ended (`DELETE`) and the client closed afterwards. */
async function withClient(url, { token, wire, elicit } = {}, body) {
  const capabilities = elicit ? { elicitation: { form: {} } } : {};
  const client = new Client({ name: 'a2a-card-interop', version: '1.0.0' }, { capabilities });
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => elicit(request.params));
  }
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: token ? { Authorization: `Bearer ${token}` } : {} },
    fetch: wire?.fetch,
  });
  await client.connect(transport);
  try {
    return await body(client, transport);
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
}

function answering(answer, asked) {
  return async (params) => {
    asked.push(params);
    if (answer === null) return { action: 'decline' };
    return { action: 'accept', content: { answer } };
  };
}

/** One A2A JSON-RPC 1.0 call to the agent at `base`; its result. */
async function a2a(base, method, params) {
  const response = await fetch(`${base}/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params }),
  });
  const answer = await response.json();
  expect('result' in answer, `A2A ${method}: HTTP ${response.status} ${show(answer)}`);
  return answer.result;
}

async function getJson(url) {
  const response = await fetch(url);
  expect(response.status === 200, `GET ${url}: HTTP ${response.status}`);
  return response.json();
}

const cardOf = (base) => getJson(`${base}/.well-known/agent-card.json`);

/** The card's named schemas: at its root (`schemas`), or in an extension entry's params. */
function namedSchemas(card) {
  const schemas = { ...(card.schemas ?? {}) };
  for (const extension of card.capabilities?.extensions ?? []) {
    Object.assign(schemas, extension.params?.schemas ?? {});
  }
  return schemas;
}

/** The schema named by an `application/json;schema=NAME` mode, if any. */
function schemaMode(modes) {
  const mode = (modes ?? []).find((m) => m.startsWith('application/json;schema='));
  return mode?.split('=')[1];
}

const texts = (result) =>
  result.content
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('\n');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function newestTask(base) {
  const listed = await a2a(base, 'ListTasks', { pageSize: 1 });
  expect(listed.tasks?.length, `ListTasks gave no task: ${show(listed)}`);
  return listed.tasks[0];
}

/** The newest task once it is in `state` (polled: a cancellation lands asynchronously). */
async function settled(base, state, seconds = 10) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const task = await newestTask(base);
    if (task.status.state === state || Date.now() > deadline) {
      expect(task.status.state === state, `the newest task is not ${state}: ${show(task.status)}`);
      return task;
    }
    await sleep(100);
  }
}

const dataOf = (task) =>
  (task.artifacts ?? []).flatMap((a) => a.parts.filter((p) => 'data' in p).map((p) => p.data));

/** Each tool is the card's skill of that name, its input schema the card's, key for key; the
 * card names the MCP endpoint. */
function checkTools(tools, card, base) {
  const schemas = namedSchemas(card);
  const names = tools.map((t) => t.name);
  const ids = card.skills.map((s) => s.id);
  expect(same(names, ids), `tools ${show(names)}, skills ${show(ids)}`);
  tools.forEach((tool, i) => {
    const skill = card.skills[i];
    expect(tool.title === skill.name, `${tool.name}: title ${tool.title}`);
    expect(tool.description === skill.description, `${tool.name}: ${tool.description}`);
    const wanted = schemaMode(skill.inputModes);
    expect(wanted in schemas, `${tool.name}: the card has no input schema ${wanted}`);
    expect(
      same(tool.inputSchema, schemas[wanted]),
      `${tool.name}: inputSchema ${show(tool.inputSchema)} != ${show(schemas[wanted])}`,
    );
  });
  const entries = (card.capabilities.extensions ?? []).filter((e) => e.uri === EXTENSION);
  expect(entries.length === 1, `one MCP extension entry: ${show(card.capabilities)}`);
  expect(entries[0].params.url === `${base}/mcp`, `the entry: ${show(entries[0])}`);
  return schemas;
}

async function httpChecks() {
  await run(`the client speaks MCP ${VERSION}, the server named as the card, the session ends`, async () => {
    const card = await cardOf(FIGHT_CLUB);
    await withClient(`${FIGHT_CLUB}/mcp`, {}, async (client, transport) => {
      expect(transport.protocolVersion === VERSION, `protocol ${transport.protocolVersion}`);
      expect(client.getServerVersion()?.name === card.name, show(client.getServerVersion()));
      expect(transport.sessionId, 'no session id');
      // Ending the session (`DELETE`) succeeds: the SDK throws on an answer other than 2xx.
      await transport.terminateSession();
      expect(transport.sessionId === undefined, `the session is still ${transport.sessionId}`);
    });
  });

  await run(
    "the fight club's tools are its skills, with the card's input and output schemas key for key",
    async () => {
      const card = await cardOf(FIGHT_CLUB);
      const { tools } = await withClient(`${FIGHT_CLUB}/mcp`, {}, (client) => client.listTools());
      const schemas = checkTools(tools, card, FIGHT_CLUB);
      const output = schemaMode(card.skills[0].outputModes);
      expect(
        same(tools[0].outputSchema, schemas[output]),
        `outputSchema ${show(tools[0].outputSchema)} != ${output}`,
      );
    },
  );

  await run(
    `the planner's tools have the card's schemas, a streamed output as {"items": [...]}`,
    async () => {
      const card = await cardOf(PLANNER);
      const { tools } = await withClient(`${PLANNER}/mcp`, {}, (client) => client.listTools());
      const schemas = checkTools(tools, card, PLANNER);
      const { $defs, ...day } = schemas.itineraryDay;
      const wanted = {
        type: 'object',
        properties: { items: { type: 'array', items: day } },
        required: ['items'],
      };
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
      expect(
        same(byName['plan-trip'].outputSchema, wanted),
        `plan-trip outputSchema ${show(byName['plan-trip'].outputSchema)}`,
      );
      // A file output has no structured content, so no output schema.
      expect(
        byName['export-calendar'].outputSchema === undefined,
        `export-calendar outputSchema ${show(byName['export-calendar'].outputSchema)}`,
      );
    },
  );

  await run("a fight-comparison call answers the A2A answer's data as structuredContent", async () => {
    const fight = { a: 'Godzilla', b: 'Mothra' };
    const answer = await a2a(FIGHT_CLUB, 'SendMessage', {
      message: {
        messageId: randomUUID(),
        role: 'ROLE_USER',
        parts: [{ data: fight, mediaType: 'application/json;schema=fightComparison' }],
      },
    });
    expect(answer.task.status.state === 'TASK_STATE_COMPLETED', `A2A: ${show(answer)}`);
    const data = dataOf(answer.task);
    expect(data.length === 1, `one data part over A2A: ${show(answer)}`);
    const result = await withClient(`${FIGHT_CLUB}/mcp`, {}, async (client) => {
      await client.listTools(); // the SDK checks structuredContent against the listed schema
      return client.callTool({ name: 'fight-comparison', arguments: fight });
    });
    expect(!result.isError, `a tool error: ${show(result)}`);
    expect(
      same(result.structuredContent, data[0]),
      `structuredContent ${show(result.structuredContent)}, A2A ${show(data[0])}`,
    );
    expect(same(JSON.parse(texts(result)), data[0]), `the text content: ${texts(result)}`);
  });

  await run('arguments without b are a tool error naming b', async () => {
    const result = await withClient(`${FIGHT_CLUB}/mcp`, {}, (client) =>
      client.callTool({ name: 'fight-comparison', arguments: { a: 'Lion' } }),
    );
    expect(result.isError === true, `not a tool error: ${show(result)}`);
    expect(texts(result).includes('"b" is a required property'), `b not named: ${texts(result)}`);
  });

  await run('an unknown tool is an McpError (-32602) naming it', async () => {
    await withClient(`${FIGHT_CLUB}/mcp`, {}, async (client) => {
      let result;
      try {
        result = await client.callTool({ name: 'no-such-tool', arguments: {} });
      } catch (e) {
        expect(e instanceof McpError, `not an McpError: ${describe(e)}`);
        expect(e.code === ErrorCode.InvalidParams, `code ${e.code}: ${e.message}`);
        expect(e.message.includes('no-such-tool'), `the tool not named: ${e.message}`);
        return;
      }
      throw new Check(`an answer: ${show(result)}`);
    });
  });

  await run(
    'plan-trip reports progress, asks the start date, and the answer completes the plan',
    async () => {
      const progress = [];
      const asked = [];
      const result = await withClient(
        `${PLANNER}/mcp`,
        { elicit: answering(START, asked) },
        async (client) => {
          await client.listTools();
          return client.callTool(
            { name: 'plan-trip', arguments: { destination: 'Lisbon', days: 3 } },
            undefined,
            { onprogress: (p) => progress.push(p.message) },
          );
        },
      );
      expect(!result.isError, `a tool error: ${texts(result)}`);
      expect(asked.length === 1, `one question: ${show(asked)}`);
      expect(asked[0].message.startsWith(QUESTION), `the question: ${asked[0].message}`);
      expect('answer' in (asked[0].requestedSchema?.properties ?? {}), show(asked[0]));
      const items = result.structuredContent?.items ?? [];
      expect(
        same(
          items.map((d) => d.date),
          [START, '2026-12-02', '2026-12-03'],
        ),
        `the plan: ${show(result.structuredContent)}`,
      );
      expect(progress[0] === 'Planning 3 days in Lisbon', `progress ${show(progress)}`);
      const days = progress.slice(1).map((message) => {
        try {
          return JSON.parse(message);
        } catch {
          throw new Check(`a progress message that is not a JSON day: ${message}`);
        }
      });
      expect(same(days, items), `one progress notification per day, in order: ${show(progress)}`);
    },
  );

  await run('a declined question is a tool error, and the task is canceled', async () => {
    const asked = [];
    const result = await withClient(
      `${PLANNER}/mcp`,
      { elicit: answering(null, asked) },
      (client) =>
        client.callTool({ name: 'plan-trip', arguments: { destination: 'Lisbon', days: 2 } }),
    );
    expect(asked.length === 1, `one question: ${show(asked)}`);
    expect(result.isError === true, `not a tool error: ${show(result)}`);
    expect(texts(result).includes('decline'), `the error: ${texts(result)}`);
    // Nobody will answer: the task is canceled, not left waiting.
    await settled(PLANNER, 'TASK_STATE_CANCELED');
  });

  await run('a call aborted mid-plan cancels its task, which plans no day more', async () => {
    const progress = [];
    const abort = new AbortController();
    let abortedAt;
    await withClient(`${SLOW_PLANNER}/mcp`, {}, async (client) => {
      const call = client.callTool(
        {
          name: 'plan-trip',
          arguments: { destination: 'Lisbon', days: 14, start_date: START },
        },
        undefined,
        {
          signal: abort.signal,
          onprogress: (p) => {
            progress.push({ at: Date.now(), message: p.message });
            if (p.message.startsWith('{') && abortedAt === undefined) {
              abortedAt = Date.now();
              abort.abort('enough');
            }
          },
        },
      );
      let outcome;
      try {
        outcome = await call;
      } catch (e) {
        outcome = e;
      }
      expect(abortedAt !== undefined, `no day arrived: ${show(progress)}`);
      expect(!(outcome?.content), `the 14-day plan finished: ${show(outcome)}`);
      const task = await settled(SLOW_PLANNER, 'TASK_STATE_CANCELED');
      const made = dataOf(await a2a(SLOW_PLANNER, 'GetTask', { id: task.id })).length;
      // Two days' pace later, the session still open: no day more, no progress more.
      await sleep(2500);
      const later = await a2a(SLOW_PLANNER, 'GetTask', { id: task.id });
      expect(later.status.state === 'TASK_STATE_CANCELED', show(later.status));
      expect(made >= 1 && made < 14, `${made} days made before the cancellation`);
      expect(dataOf(later).length === made, `${made} days, then ${dataOf(later).length}`);
      const after = progress.filter((p) => p.at > abortedAt);
      expect(after.length === 0, `progress after the cancellation: ${show(after)}`);
    });
  });

  await judgeChecks();
}

async function judgeChecks() {
  const url = `${JUDGE}/mcp`;
  const metadataUrl = `${JUDGE}/.well-known/oauth-protected-resource/mcp`;

  await run(
    'the judge without a token: HTTP 401 (the SDK raises), the challenge naming the resource metadata',
    async () => {
      const wire = new Wire();
      let error;
      try {
        await withClient(url, { wire }, (client) => client.listTools());
      } catch (e) {
        error = e;
      }
      expect(error, 'connected without a token');
      expect(
        error instanceof StreamableHTTPError && error.code === 401,
        `not an HTTP 401 error: ${describe(error)}`,
      );
      const refused = wire.refusals(401);
      expect(refused.length === 1, `answers ${wire.statuses()}`);
      const challenge = refused[0].headers.get('www-authenticate') ?? '';
      expect(challenge.startsWith('Bearer'), `the challenge: ${challenge}`);
      expect(challenge.includes(`resource_metadata="${metadataUrl}"`), `the challenge: ${challenge}`);
    },
  );

  await run(
    'the protected-resource metadata names the MCP endpoint and the authorization server',
    async () => {
      const metadata = await getJson(metadataUrl);
      expect(metadata.resource === url, `resource: ${show(metadata)}`);
      expect(same(metadata.authorization_servers, [AUTHORIZATION_SERVER]), show(metadata));
      expect((metadata.scopes_supported ?? []).includes('fights:write'), show(metadata));
    },
  );

  await run(
    'a token without fights:write: winner runs, record is refused (HTTP 403 insufficient_scope, the SDK raises)',
    async () => {
      const wire = new Wire();
      await withClient(url, { token: READER, wire }, async (client) => {
        const result = await client.callTool({
          name: 'winner',
          arguments: { text: 'Lion vs Tiger' },
        });
        expect(!result.isError, `winner: ${show(result)}`);
        expect(texts(result) === 'Tiger wins (judged for reader)', `winner: ${texts(result)}`);
        let error;
        try {
          error = await client.callTool({ name: 'record', arguments: { winner: 'Lion' } });
          throw new Check(`record answered: ${show(error)}`);
        } catch (e) {
          if (e instanceof Check) throw e;
          error = e;
        }
        expect(
          error instanceof StreamableHTTPError && error.code === 403,
          `not an HTTP 403 error: ${describe(error)}`,
        );
      });
      const refused = wire.refusals(403);
      expect(refused.length === 1, `answers ${wire.statuses()}`);
      const challenge = refused[0].headers.get('www-authenticate') ?? '';
      expect(
        challenge.includes('error="insufficient_scope"') && challenge.includes('fights:write'),
        `the challenge: ${challenge}`,
      );
    },
  );

  await run('a token with fights:write: record runs', async () => {
    const result = await withClient(url, { token: WRITER }, (client) =>
      client.callTool({ name: 'record', arguments: { winner: 'Lion' } }),
    );
    expect(!result.isError && texts(result) === 'recorded: Lion won', show(result));
  });

  await run(
    'odds, an extended skill, is a tool for a caller with a token, not on the public card',
    async () => {
      const publicSkills = (await cardOf(JUDGE)).skills.map((s) => s.id);
      expect(same(publicSkills, ['winner', 'record']), `the public card: ${show(publicSkills)}`);
      const [names, result] = await withClient(url, { token: READER }, async (client) => [
        (await client.listTools()).tools.map((t) => t.name),
        await client.callTool({ name: 'odds', arguments: { a: 'Lion', b: 'Tiger' } }),
      ]);
      expect(same(names, ['winner', 'record', 'odds']), `tools ${show(names)}`);
      expect(!result.isError && texts(result) === 'Lion 3:2 Tiger', `odds: ${show(result)}`);
    },
  );
}

try {
  await httpChecks();
} catch (e) {
  report(false, 'the checks ran to the end', describe(e));
}
process.exit(failed() ? 1 : 0);
