// The official A2A JS SDK 1.3 client (`@a2a-js/sdk/client`) against agents of this crate,
// driven by tests/sdks/sdk_clients.rs, over JSON-RPC 1.0 and HTTP+JSON.
//
//   node lifecycle_js.mjs PLANNER SLOW_PLANNER PLANNER_WITHOUT_0_3 FIGHT_CLUB
//
// The arguments are the base URLs tests/sdks/sdk_clients.rs serves: PLANNER, the trip planner
// planning a day in a few milliseconds; SLOW_PLANNER, one slow enough that a task is still
// running when it is cancelled; PLANNER_WITHOUT_0_3, one with the A2A 0.3 translation turned off
// (so a 0.3 method is an unknown method there); FIGHT_CLUB, the fight club, which does not stream.
// The SDK is looked up from $A2A_JS_DIR (a directory with node_modules/@a2a-js/sdk).
//
// Prints one line per check, `ok ...` or `FAIL ...`, and exits 1 if any check failed.
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { Check, checks, expect } from './checks.mjs';

const require = createRequire(`${process.env.A2A_JS_DIR}/`);
const load = async (name) =>
  import(pathToFileURL(require.resolve(name).replace(/\.cjs$/, '.js')).href);
const sdk = await load('@a2a-js/sdk');
const clientSdk = await load('@a2a-js/sdk/client');
const errors = await load('@a2a-js/sdk/errors');

const {
  CancelTaskRequest,
  ListTasksRequest,
  SendMessageRequest,
  SubscribeToTaskRequest,
  TaskState,
} = sdk;
const {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} = clientSdk;
const {
  A2AError,
  RequestMalformedError,
  TaskNotCancelableError,
  isJsonRpcError,
  isRestError,
  restStatusFor,
} = errors;

const [PLANNER, SLOW_PLANNER, WITHOUT_0_3, FIGHT_CLUB] = process.argv.slice(2);
const TRIP_SCHEMA = 'application/json;schema=tripRequest';

const { report, run, failed } = checks(describe);

function describe(e) {
  const fields = {
    name: e?.name,
    message: e?.message,
    envelopeCode: e?.envelopeCode,
    statusCode: e?.statusCode,
    reason: e?.reason,
    cause: e?.cause?.message,
  };
  return JSON.stringify(fields);
}

const show = (value) =>
  JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? String(v) : v));

/** A fetch that remembers the last HTTP answer (method, URL, status, content type), so that a
 * check can say whether an error came as a JSON-RPC error in an HTTP 200 answer. */
const wire = { last: null };
async function recordingFetch(url, init) {
  const response = await fetch(url, init);
  wire.last = {
    method: init?.method ?? 'GET',
    url: String(url),
    status: response.status,
    type: response.headers.get('content-type'),
  };
  return response;
}

function message(parts, taskId) {
  const body = { messageId: randomUUID(), role: 'ROLE_USER', parts };
  if (taskId) body.taskId = taskId;
  return body;
}

/** A `SendMessageRequest` from its 1.0 JSON (the SDK's own parser). */
function request(msg, configuration) {
  return SendMessageRequest.fromJSON(configuration ? { message: msg, configuration } : { message: msg });
}

function trip(days, start) {
  const data = { destination: 'Lisbon', days };
  if (start !== undefined) data.start_date = start;
  return message([{ data, mediaType: TRIP_SCHEMA }]);
}

const kinds = (events) => events.map((e) => e.payload?.$case);

function stateOf(event) {
  const payload = event.payload;
  if (payload?.$case === 'task' || payload?.$case === 'statusUpdate') {
    return TaskState[payload.value.status?.state];
  }
  return undefined;
}

const stateName = (task) => TaskState[task.status?.state];

async function collect(stream) {
  const events = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** `call` fails with the SDK error `type`; on JSON-RPC its envelope code is `code` and the
 * answer was HTTP 200 (a JSON-RPC error, not a transport failure); on HTTP+JSON the SDK's REST
 * error of that type, with the HTTP status the SDK gives that error. */
async function expectError(call, type, code, jsonrpc) {
  let result;
  try {
    result = await call();
  } catch (e) {
    if (!(e instanceof A2AError)) throw new Check(`expected ${type.name}, got ${describe(e)}`);
    expect(e instanceof type, `expected ${type.name} (${code}), got ${describe(e)}`);
    if (jsonrpc) {
      expect(isJsonRpcError(e), `a JSON-RPC error: ${describe(e)}`);
      expect(e.envelopeCode === code, `code ${e.envelopeCode}, not ${code}: ${describe(e)}`);
      expect(wire.last?.status === 200, `the JSON-RPC error came with HTTP ${show(wire.last)}`);
    } else {
      expect(isRestError(e), `an HTTP+JSON error: ${describe(e)}`);
      const status = restStatusFor(new type());
      expect(e.statusCode === status, `HTTP ${e.statusCode}, not ${status}: ${describe(e)}`);
    }
    return e;
  }
  throw new Check(`expected ${type.name} (${code}), got an answer: ${show(result)}`);
}

/** The artifacts the updates of a stream build, by the A2A rules: `append` adds the parts to
 * the artifact of that id, otherwise the artifact is replaced. artifactId -> parts. */
function assemble(updates) {
  const artifacts = new Map();
  for (const update of updates) {
    const { artifactId, parts } = update.artifact;
    if (update.append) {
      artifacts.set(artifactId, [...(artifacts.get(artifactId) ?? []), ...parts]);
    } else {
      artifacts.set(artifactId, [...parts]);
    }
  }
  return artifacts;
}

function transports(options = {}) {
  return [
    new JsonRpcTransportFactory({ fetchImpl: recordingFetch, ...options }),
    new RestTransportFactory({ fetchImpl: recordingFetch, ...options }),
  ];
}

function factory(binding, options = {}) {
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: transports(options),
      preferredTransports: [binding],
    }),
  );
}

async function checksFor(binding) {
  const jsonrpc = binding === 'JSONRPC';
  // How the checks' names give an error: its JSON-RPC code, or its HTTP status on HTTP+JSON.
  const code = (rpc, http) => (jsonrpc ? rpc : `HTTP ${http}`);
  const client = await factory(binding).createFromUrl(PLANNER);
  const slow = await factory(binding).createFromUrl(SLOW_PLANNER);

  await run(`${binding}: the client picked ${binding} from the served card`, async () => {
    const answer = await client.sendMessage(request(trip(1, '2026-12-01')));
    const path = new URL(wire.last.url).pathname;
    const wanted = jsonrpc ? !path.endsWith(':send') : path.endsWith('/message:send');
    expect(client.transport.protocolName === binding, `transport ${client.transport.protocolName}`);
    expect(wanted && wire.last.status === 200, `last request ${show(wire.last)}`);
    expect(stateName(answer) === 'TASK_STATE_COMPLETED', show(answer));
  });

  await run(`${binding}: SendStreamingMessage yields the task, then updates, ending completed`, async () => {
    const events = await collect(client.sendMessageStream(request(trip(3, '2026-12-01'))));
    const got = kinds(events);
    expect(got[0] === 'task', `the first event is the task: ${got}`);
    expect(
      got.slice(1).every((k) => k === 'statusUpdate' || k === 'artifactUpdate'),
      `then only updates: ${got}`,
    );
    expect(stateOf(events.at(-1)) === 'TASK_STATE_COMPLETED', `ends completed: ${show(events.at(-1))}`);
    const taskId = events[0].payload.value.id;
    const ids = new Set(events.slice(1).map((e) => e.payload.value.taskId));
    expect(ids.size === 1 && ids.has(taskId), `every update is of task ${taskId}: ${[...ids]}`);
    const updates = events.filter((e) => e.payload.$case === 'artifactUpdate').map((e) => e.payload.value);
    expect(updates.length >= 3, `the plan arrives in chunks: ${updates.length} artifact updates`);
    const plan = assemble(updates).get('plan-trip') ?? [];
    const dates = plan.map((p) => p.content?.value?.date);
    expect(show(dates) === show(['2026-12-01', '2026-12-02', '2026-12-03']), `one part a day: ${show(plan)}`);
  });

  await run(
    `${binding}: SubscribeToTask on a task in input-required yields the task, then updates; the answer completes it`,
    async () => {
      const asked = await client.sendMessage(request(trip(2)));
      expect(stateName(asked) === 'TASK_STATE_INPUT_REQUIRED', `the planner asks: ${show(asked.status)}`);
      const events = [];
      let subscribed;
      const firstEvent = new Promise((resolve) => {
        subscribed = resolve;
      });
      const follower = (async () => {
        try {
          for await (const e of client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: asked.id }))) {
            events.push(e);
            subscribed();
          }
        } finally {
          subscribed();
        }
      })();
      await firstEvent;
      expect(events.length > 0, 'the subscription ended before its first event');
      // The subscription is open (its first event arrived): now the answer.
      const done = await client.sendMessage(request(message([{ text: '2026-12-01' }], asked.id)));
      expect(stateName(done) === 'TASK_STATE_COMPLETED', `the answer completes it: ${show(done.status)}`);
      await follower;
      const got = kinds(events);
      expect(got[0] === 'task', `the subscription begins with the task: ${got}`);
      expect(stateOf(events[0]) === 'TASK_STATE_INPUT_REQUIRED', show(events[0]));
      expect(!got.slice(1).includes('task'), `no second task: ${got}`);
      expect(got.length > 1, `updates follow: ${got}`);
      expect(stateOf(events.at(-1)) === 'TASK_STATE_COMPLETED', `ends completed: ${show(events.at(-1))}`);
    },
  );

  await run(`${binding}: CancelTask on a waiting task gives CANCELED, and again when repeated`, async () => {
    const asked = await client.sendMessage(request(trip(2)));
    expect(stateName(asked) === 'TASK_STATE_INPUT_REQUIRED', show(asked.status));
    for (const attempt of ['first', 'second']) {
      const task = await client.cancelTask(CancelTaskRequest.fromJSON({ id: asked.id }));
      expect(task.id === asked.id, `${attempt} cancel answered task ${task.id}`);
      expect(stateName(task) === 'TASK_STATE_CANCELED', `${attempt} cancel: ${stateName(task)}`);
    }
  });

  await run(`${binding}: CancelTask on a running task gives CANCELED`, async () => {
    const started = await slow.sendMessage(request(trip(14, '2026-12-01'), { returnImmediately: true }));
    expect(
      ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'].includes(stateName(started)),
      `still running: ${show(started.status)}`,
    );
    const task = await slow.cancelTask(CancelTaskRequest.fromJSON({ id: started.id }));
    expect(stateName(task) === 'TASK_STATE_CANCELED', show(task.status));
  });

  await run(`${binding}: CancelTask on a completed task is TaskNotCancelableError (${code(-32002, 400)})`, async () => {
    const done = await client.sendMessage(request(trip(1, '2026-12-01')));
    expect(stateName(done) === 'TASK_STATE_COMPLETED', show(done.status));
    await expectError(
      () => client.cancelTask(CancelTaskRequest.fromJSON({ id: done.id })),
      TaskNotCancelableError,
      -32002,
      jsonrpc,
    );
  });

  await run(`${binding}: ListTasks is newest first and pages with nextPageToken`, async () => {
    const made = [];
    for (let i = 0; i < 3; i += 1) {
      made.push((await client.sendMessage(request(trip(1, '2026-12-01')))).id);
      await new Promise((resolve) => setTimeout(resolve, 10)); // distinct status times
    }
    const first = await client.listTasks(ListTasksRequest.fromJSON({ pageSize: 2 }));
    const ids = first.tasks.map((t) => t.id);
    expect(show(ids) === show([made[2], made[1]]), `newest first: ${ids}, made ${made}`);
    expect(first.nextPageToken, `a next page token: ${show(first)}`);
    expect(first.totalSize >= 3, `totalSize ${first.totalSize}`);
    const second = await client.listTasks(
      ListTasksRequest.fromJSON({ pageSize: 2, pageToken: first.nextPageToken }),
    );
    const next = second.tasks.map((t) => t.id);
    expect(next[0] === made[0], `the next page goes on: ${next}, made ${made}`);
    expect(!next.includes(made[1]) && !next.includes(made[2]), `no task twice: ${next}`);
  });

  await run(`${binding}: ListTasks pageSize 0 and 101 are RequestMalformedError (${code(-32602, 400)})`, async () => {
    for (const pageSize of [0, 101]) {
      await expectError(
        () => client.listTasks(ListTasksRequest.fromJSON({ pageSize })),
        RequestMalformedError,
        -32602,
        jsonrpc,
      );
    }
  });

  const count = async () =>
    (await client.listTasks(ListTasksRequest.fromJSON({ pageSize: 100 }))).totalSize;
  const refusals = () => [
    ['a message without parts', message([])],
    ['days 30 (the schema allows 14)', trip(30, '2026-12-01')],
  ];
  // Each refused message is RequestMalformedError (-32602), in an HTTP 200 answer on JSON-RPC,
  // and the agent has no task more than before.
  async function refused(send) {
    const before = await count();
    for (const [what, msg] of refusals()) {
      try {
        await expectError(() => send(request(msg)), RequestMalformedError, -32602, jsonrpc);
      } catch (e) {
        throw new Check(`${what}: ${e.message}`);
      }
    }
    const after = await count();
    expect(after === before, `tasks before ${before}, after ${after}`);
  }

  await run(
    `${binding}: SendMessage without parts, or with data breaking the schema, is RequestMalformedError (${code(-32602, 400)}) and creates no task`,
    () => refused((r) => client.sendMessage(r)),
  );

  await run(
    `${binding}: SendStreamingMessage without parts, or with data breaking the schema, is RequestMalformedError (${code(-32602, 400)}) and creates no task`,
    () => refused((r) => collect(client.sendMessageStream(r))),
  );

  await run(
    `${binding}: an agent without streaming answers the streaming client with one completed task and its typed output`,
    async () => {
      // The fight club's card says `streaming: false`: the client sends SendMessage instead,
      // and the one answer is the completed task with the typed output.
      const fights = await factory(binding).createFromUrl(FIGHT_CLUB);
      const msg = message([
        { data: { a: 'Godzilla', b: 'Mothra' }, mediaType: 'application/json;schema=fightComparison' },
      ]);
      const events = await collect(fights.sendMessageStream(request(msg)));
      expect(show(kinds(events)) === show(['task']), `one task: ${kinds(events)}`);
      const task = events[0].payload.value;
      expect(stateName(task) === 'TASK_STATE_COMPLETED', show(task.status));
      const parts = task.artifacts.flatMap((a) => a.parts);
      expect(parts.length === 1, `one part: ${show(parts)}`);
      expect(parts[0].mediaType === 'application/json;schema=fightResponse', `the output schema: ${show(parts[0])}`);
      const verdict = parts[0].content?.value ?? {};
      expect(['Godzilla', 'Mothra'].includes(verdict.winner), `a winner: ${show(verdict)}`);
    },
  );

  if (jsonrpc) {
    await run(`${binding}: an unknown method is a JSON-RPC error -32601 in an HTTP 200 answer`, async () => {
      // The served card names a JSON-RPC 0.3 interface; the SDK (with its 0.3 layer on), given a
      // card that names only that one, speaks 0.3 (`message/send`). The agent without the 0.3
      // translation knows no such method: -32601, which the SDK maps to RequestMalformedError
      // with that envelope code; it must come in an HTTP 200 answer, not as an HTTP failure.
      const card = await new DefaultAgentCardResolver({ fetchImpl: recordingFetch }).resolve(PLANNER);
      const legacy = (card.supportedInterfaces ?? []).filter(
        (i) => i.protocolBinding === 'JSONRPC' && i.protocolVersion.startsWith('0.3'),
      );
      expect(legacy.length > 0, `the card names a JSON-RPC 0.3 interface: ${show(card.supportedInterfaces)}`);
      const url = WITHOUT_0_3 + legacy[0].url.slice(PLANNER.length);
      const stale = { ...card, supportedInterfaces: [{ ...legacy[0], url }] };
      const old = await factory('JSONRPC', { legacyCompat: { enabled: true } }).createFromAgentCard(stale);
      expect(old.protocolVersion.startsWith('0.3'), `the client speaks ${old.protocolVersion}`);
      await expectError(
        () => old.sendMessage(request(trip(1, '2026-12-01'))),
        RequestMalformedError,
        -32601,
        true,
      );
      expect(wire.last.url.startsWith(WITHOUT_0_3), `asked ${show(wire.last)}`);
    });
  }
}

for (const binding of ['JSONRPC', 'HTTP+JSON']) {
  try {
    await checksFor(binding);
  } catch (e) {
    report(false, `${binding}: a client for the served card`, describe(e));
  }
}
process.exit(failed() ? 1 : 0);
