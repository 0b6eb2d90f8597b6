"""The official A2A Python SDK 1.3 client (`a2a.client`) against agents of this crate, driven
by tests/sdks/sdk_clients.rs, over JSON-RPC 1.0 and HTTP+JSON.

    python lifecycle_py.py PLANNER SLOW_PLANNER PLANNER_WITHOUT_0_3 FIGHT_CLUB

Each argument is the base URL of an example agent served by the test: PLANNER, the trip planner
planning a day in a few milliseconds; SLOW_PLANNER, one slow enough that a task is still running
when it is cancelled; PLANNER_WITHOUT_0_3, one with the A2A 0.3 translation turned off (so a 0.3
method is an unknown method there); FIGHT_CLUB, the fight club, which does not stream.

Prints one line per check, `ok ...` or `FAIL ...`, and exits 1 if any check failed.
"""

import asyncio
import sys
import uuid

import httpx

from google.protobuf.json_format import MessageToDict, ParseDict

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import (
    A2A_ERROR_MAPPING,
    JSON_RPC_ERROR_CODE_MAP,
    A2AError,
    InvalidParamsError,
    MethodNotFoundError,
    TaskNotCancelableError,
)

PLANNER, SLOW_PLANNER, WITHOUT_0_3, FIGHT_CLUB = sys.argv[1:5]
TRIP_SCHEMA = 'application/json;schema=tripRequest'

from checks import Check, expect, following, report, run  # noqa: E402 - this folder's helpers
import checks  # noqa: E402


class Wire:
    """An httpx client that remembers the last HTTP answer (method, URL, status), so that a
    check can say whether an error came as a JSON-RPC error in an HTTP 200 answer."""

    def __init__(self):
        self.last = None
        self.http = httpx.AsyncClient(
            timeout=30, event_hooks={'response': [self._record]}
        )

    async def _record(self, response):
        self.last = (response.request.method, str(response.request.url), response.status_code)

    def status(self):
        return self.last[2] if self.last else None


def trip(days, start=None, task_id=None):
    data = {'destination': 'Lisbon', 'days': days}
    if start is not None:
        data['start_date'] = start
    return message([{'data': data, 'mediaType': TRIP_SCHEMA}], task_id)


def message(parts, task_id=None):
    """A `SendMessageRequest` from the message's 1.0 JSON (the SDK's own protobuf parser)."""
    body = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': parts}
    if task_id:
        body['taskId'] = task_id
    return ParseDict({'message': body}, SendMessageRequest())


def state_name(state):
    return TaskState.Name(state)


def kinds(events):
    return [e.WhichOneof('payload') for e in events]


def state_of(event):
    kind = event.WhichOneof('payload')
    if kind == 'task':
        return state_name(event.task.status.state)
    if kind == 'status_update':
        return state_name(event.status_update.status.state)
    return None


def assemble(updates):
    """The artifacts the updates of a stream build, by the A2A rules: `append` adds the parts to
    the artifact of that id, otherwise the artifact is replaced. artifactId -> parts."""
    artifacts = {}
    for update in updates:
        artifact = update.artifact
        if update.append:
            artifacts.setdefault(artifact.artifact_id, []).extend(artifact.parts)
        else:
            artifacts[artifact.artifact_id] = list(artifact.parts)
    return artifacts


def error_code(error):
    """The JSON-RPC code the SDK maps its error type to (its errors carry no code of their own)."""
    return JSON_RPC_ERROR_CODE_MAP.get(type(error))


async def expect_error(call, error_type, code, wire, jsonrpc):
    """`call` raises the SDK's `error_type`, which it maps to JSON-RPC `code`; on JSON-RPC the
    answer was HTTP 200 (a JSON-RPC error, not a transport failure), on HTTP+JSON it had the
    HTTP status the SDK gives that error."""
    try:
        result = await call()
    except error_type as e:
        expect(error_code(e) == code, f'{type(e).__name__} maps to {error_code(e)}, not {code}')
        status = 200 if jsonrpc else A2A_ERROR_MAPPING[error_type].http_code
        expect(wire.status() == status, f'HTTP {wire.last}, not {status}')
        return e
    except A2AError as e:
        raise Check(f'expected {error_type.__name__} ({code}), got {e!r}') from e
    raise Check(f'expected {error_type.__name__} ({code}), got an answer: {result}')


async def one(stream):
    """The single answer of a non-streaming client's `send_message`."""
    answers = [e async for e in stream]
    expect(len(answers) == 1, f'one answer, got {kinds(answers)}')
    return answers[0]


async def count_tasks(client):
    return (await client.list_tasks(ListTasksRequest(page_size=100))).total_size


async def checks_for(binding):
    wire = Wire()

    def factory(streaming):
        return ClientFactory(
            ClientConfig(
                httpx_client=wire.http,
                streaming=streaming,
                supported_protocol_bindings=[binding],
            )
        )

    streaming = await factory(True).create_from_url(PLANNER)
    blocking = await factory(False).create_from_url(PLANNER)
    slow = await factory(False).create_from_url(SLOW_PLANNER)
    jsonrpc = binding == 'JSONRPC'

    async def speaks_the_binding():
        answer = await one(blocking.send_message(trip(1, '2026-12-01')))
        method, url, status = wire.last
        path = httpx.URL(url).path
        wanted = path.endswith('/message:send') if not jsonrpc else not path.endswith(':send')
        expect(wanted and method == 'POST' and status == 200, f'last request {wire.last}')
        expect(state_of(answer) == 'TASK_STATE_COMPLETED', f'{answer}')

    await run(f'{binding}: the client picked {binding} from the served card', speaks_the_binding)

    async def stream_begins_with_the_task():
        events = [e async for e in streaming.send_message(trip(3, '2026-12-01'))]
        got = kinds(events)
        expect(got and got[0] == 'task', f'the first event is the task: {got}')
        expect(
            all(k in ('status_update', 'artifact_update') for k in got[1:]),
            f'then only updates: {got}',
        )
        expect(state_of(events[-1]) == 'TASK_STATE_COMPLETED', f'ends completed: {events[-1]}')
        task_id = events[0].task.id
        ids = {getattr(e, k).task_id for e, k in zip(events[1:], got[1:])}
        expect(ids == {task_id}, f'every update is of task {task_id}: {ids}')
        updates = [e.artifact_update for e in events if e.WhichOneof('payload') == 'artifact_update']
        expect(len(updates) >= 3, f'the plan arrives in chunks: {len(updates)} artifact updates')
        plan = assemble(updates)
        dates = [MessageToDict(p.data).get('date') for p in plan.get('plan-trip', [])]
        expect(dates == ['2026-12-01', '2026-12-02', '2026-12-03'], f'one part a day: {plan}')

    await run(f'{binding}: SendStreamingMessage yields the task, then updates, ending completed',
              stream_begins_with_the_task)

    async def subscriber_gets_task_then_updates():
        asked = await one(blocking.send_message(trip(2)))
        expect(state_of(asked) == 'TASK_STATE_INPUT_REQUIRED', f'the planner asks: {asked}')
        task_id = asked.task.id
        events, follower = await following(
            streaming.subscribe(SubscribeToTaskRequest(id=task_id)))
        # The subscription is open (its first event arrived): now the answer.
        done = await one(blocking.send_message(message([{'text': '2026-12-01'}], task_id)))
        expect(state_of(done) == 'TASK_STATE_COMPLETED', f'the answer completes it: {done}')
        await asyncio.wait_for(follower, 15)
        got = kinds(events)
        expect(got and got[0] == 'task', f'the subscription begins with the task: {got}')
        expect(state_of(events[0]) == 'TASK_STATE_INPUT_REQUIRED', f'{events[0]}')
        expect('task' not in got[1:], f'no second task: {got}')
        expect(len(got) > 1, f'updates follow: {got}')
        expect(state_of(events[-1]) == 'TASK_STATE_COMPLETED', f'ends completed: {events[-1]}')

    await run(f'{binding}: SubscribeToTask on a task in input-required yields the task, then '
              'updates; the answer completes it', subscriber_gets_task_then_updates)

    async def cancel_waiting_twice():
        asked = await one(blocking.send_message(trip(2)))
        expect(state_of(asked) == 'TASK_STATE_INPUT_REQUIRED', f'{asked}')
        for attempt in ('first', 'second'):
            task = await blocking.cancel_task(CancelTaskRequest(id=asked.task.id))
            expect(
                state_name(task.status.state) == 'TASK_STATE_CANCELED',
                f'{attempt} cancel: {state_name(task.status.state)}',
            )
            expect(task.id == asked.task.id, f'{attempt} cancel answered task {task.id}')

    await run(f'{binding}: CancelTask on a waiting task gives CANCELED, and again when repeated',
              cancel_waiting_twice)

    async def cancel_running():
        request = trip(14, '2026-12-01')
        request.configuration.return_immediately = True
        started = await one(slow.send_message(request))
        expect(
            state_of(started) in ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'),
            f'still running: {started}',
        )
        task = await slow.cancel_task(CancelTaskRequest(id=started.task.id))
        expect(state_name(task.status.state) == 'TASK_STATE_CANCELED', f'{task}')

    await run(f'{binding}: CancelTask on a running task gives CANCELED', cancel_running)

    async def cancel_completed():
        done = await one(blocking.send_message(trip(1, '2026-12-01')))
        expect(state_of(done) == 'TASK_STATE_COMPLETED', f'{done}')
        await expect_error(
            lambda: blocking.cancel_task(CancelTaskRequest(id=done.task.id)),
            TaskNotCancelableError,
            -32002,
            wire,
            jsonrpc,
        )

    await run(f'{binding}: CancelTask on a completed task is TaskNotCancelableError (-32002)',
              cancel_completed)

    async def list_newest_first_with_a_cursor():
        made = []
        for _ in range(3):
            answer = await one(blocking.send_message(trip(1, '2026-12-01')))
            made.append(answer.task.id)
            await asyncio.sleep(0.01)  # distinct status times
        first = await blocking.list_tasks(ListTasksRequest(page_size=2))
        ids = [t.id for t in first.tasks]
        expect(ids == [made[2], made[1]], f'newest first: {ids}, made {made}')
        expect(first.next_page_token, f'a next page token: {first}')
        expect(first.total_size >= 3, f'totalSize {first.total_size}')
        second = await blocking.list_tasks(
            ListTasksRequest(page_size=2, page_token=first.next_page_token)
        )
        ids = [t.id for t in second.tasks]
        expect(ids and ids[0] == made[0], f'the next page goes on: {ids}, made {made}')
        expect(not set(ids) & {made[1], made[2]}, f'no task twice: {ids}')

    await run(f'{binding}: ListTasks is newest first and pages with nextPageToken',
              list_newest_first_with_a_cursor)

    async def page_sizes_out_of_range():
        for size in (0, 101):
            await expect_error(
                lambda: blocking.list_tasks(ListTasksRequest(page_size=size)),
                InvalidParamsError,
                -32602,
                wire,
                jsonrpc,
            )

    await run(f'{binding}: ListTasks pageSize 0 and 101 are InvalidParamsError (-32602)',
              page_sizes_out_of_range)

    async def one_or_all(client, request):
        return [e async for e in client.send_message(request)]

    async def refused(client, cases):
        # Each refused message is InvalidParamsError (-32602), and the agent has no task more
        # than before.
        before = await count_tasks(blocking)
        for what, request in cases:
            try:
                await expect_error(
                    lambda: one_or_all(client, request), InvalidParamsError, -32602, wire, jsonrpc
                )
            except Check as e:
                raise Check(f'{what}: {e}') from e
        after = await count_tasks(blocking)
        expect(after == before, f'tasks before {before}, after {after}')

    def refusals():
        return [
            ('a message without parts', message([])),
            ('days 30 (the schema allows 14)', trip(30, '2026-12-01')),
        ]

    async def refused_sends():
        await refused(blocking, refusals())

    await run(f'{binding}: SendMessage without parts, or with data breaking the schema, is '
              'InvalidParamsError (-32602) and creates no task', refused_sends)

    async def refused_streams():
        await refused(streaming, refusals())

    await run(f'{binding}: SendStreamingMessage without parts, or with data breaking the schema, '
              'is InvalidParamsError (-32602) and creates no task', refused_streams)

    async def an_agent_without_streaming():
        # The fight club's card says `streaming: false`: the streaming client sends
        # SendMessage instead, and the one answer is the completed task with the typed output.
        fights = await factory(True).create_from_url(FIGHT_CLUB)
        request = message(
            [{'data': {'a': 'Godzilla', 'b': 'Mothra'},
              'mediaType': 'application/json;schema=fightComparison'}]
        )
        answer = await one(fights.send_message(request))
        await fights.close()
        expect(state_of(answer) == 'TASK_STATE_COMPLETED', f'{answer}')
        parts = [p for a in answer.task.artifacts for p in a.parts]
        expect(len(parts) == 1, f'one part: {parts}')
        expect(
            parts[0].media_type == 'application/json;schema=fightResponse',
            f'the output schema: {parts[0]}',
        )
        verdict = MessageToDict(parts[0].data)
        expect(verdict.get('winner') in ('Godzilla', 'Mothra'), f'a winner: {verdict}')

    await run(f'{binding}: an agent without streaming answers the streaming client with one '
              'completed task and its typed output', an_agent_without_streaming)

    if jsonrpc:

        async def unknown_method():
            # The served card names a JSON-RPC 0.3 interface; the SDK, given a card that names
            # only that one, speaks 0.3 (`message/send`). The agent without the 0.3 translation
            # knows no such method: -32601, which must reach the SDK as its MethodNotFoundError
            # in an HTTP 200 answer, not as an HTTP failure.
            card = await A2ACardResolver(wire.http, PLANNER).get_agent_card()
            legacy = [
                i
                for i in card.supported_interfaces
                if i.protocol_binding == 'JSONRPC' and i.protocol_version.startswith('0.3')
            ]
            expect(legacy, f'the card names a JSON-RPC 0.3 interface: {card.supported_interfaces}')
            stale = AgentCard()
            stale.CopyFrom(card)
            del stale.supported_interfaces[:]
            interface = stale.supported_interfaces.add()
            interface.CopyFrom(legacy[0])
            interface.url = WITHOUT_0_3 + interface.url.removeprefix(PLANNER)
            old = ClientFactory(ClientConfig(httpx_client=wire.http, streaming=False)).create(stale)
            await expect_error(
                lambda: one_or_all(old, trip(1, '2026-12-01')),
                MethodNotFoundError,
                -32601,
                wire,
                jsonrpc,
            )
            expect(wire.last[1].startswith(WITHOUT_0_3), f'asked {wire.last}')

        await run(f'{binding}: an unknown method is MethodNotFoundError (-32601) in an HTTP 200 '
                  'answer', unknown_method)

    for client in (streaming, blocking, slow):
        await client.close()
    await wire.http.aclose()


async def main():
    for binding in ('JSONRPC', 'HTTP+JSON'):
        try:
            await checks_for(binding)
        except Exception as e:  # noqa: BLE001 - no client at all is a failure too
            report(False, f'{binding}: a client for the served card', repr(e))
    sys.exit(checks.exit_status())


asyncio.run(main())
