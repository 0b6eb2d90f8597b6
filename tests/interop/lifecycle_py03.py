"""The official A2A Python SDK 0.3 client (`a2a.client`, a2a-sdk 0.3.26) against agents of
this crate, driven by tests/sdks/sdk_clients.rs, over JSON-RPC 0.3 (the methods `message/send`,
`message/stream`, `tasks/resubscribe`, `tasks/cancel` at the card's URL, without an
`A2A-Version: 1.0` header).

    python lifecycle_py03.py PLANNER SLOW_PLANNER PLANNER_WITHOUT_0_3 FIGHT_CLUB

The arguments are the base URLs tests/sdks/sdk_clients.rs serves (see lifecycle_py.py). The 0.3 SDK
has no ListTasks (A2A 0.3 has no such method), so there is no paging check here, and the check
that a refused message leaves no task counts the agent's tasks with one plain JSON-RPC 1.0
`ListTasks` request, outside the SDK.

Prints one line per check, `ok ...` or `FAIL ...`, and exits 1 if any check failed.
"""

import asyncio
import sys
import uuid

import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientError, A2AClientJSONRPCError
from a2a.types import (
    DataPart,
    Message,
    MessageSendConfiguration,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
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
        self.http = httpx.AsyncClient(timeout=30, event_hooks={'response': [self._record]})

    async def _record(self, response):
        self.last = (
            response.request.method,
            str(response.request.url),
            response.status_code,
            response.headers.get('content-type'),
        )

    def status(self):
        return self.last[2] if self.last else None


def message(parts, task_id=None):
    return Message(
        role=Role.user, parts=parts, message_id=str(uuid.uuid4()), task_id=task_id
    )


def trip(days, start=None):
    data = {'destination': 'Lisbon', 'days': days}
    if start is not None:
        data['start_date'] = start
    # A 0.3 data part names its schema in `metadata.mimeType`.
    return message([Part(root=DataPart(data=data, metadata={'mimeType': TRIP_SCHEMA}))])


def text(words, task_id):
    return message([Part(root=TextPart(text=words))], task_id)


async def events_of(stream):
    return [e async for e in stream]


async def task_of(stream):
    """The task of a non-streaming client's single answer."""
    answers = await events_of(stream)
    expect(len(answers) == 1, f'one answer, got {answers}')
    expect(isinstance(answers[0], tuple), f'a task, got {answers[0]}')
    task, update = answers[0]
    expect(update is None, f'no update with a non-streaming answer: {update}')
    return task


async def expect_rpc_error(call, code, wire):
    """`call` raises the SDK's A2AClientJSONRPCError with `code`, from an HTTP 200 answer (an
    A2AClientHTTPError would be the SDK's transport failure instead)."""
    try:
        result = await call()
    except A2AClientJSONRPCError as e:
        expect(e.error.code == code, f'code {e.error.code} ({e.error.message}), not {code}')
        expect(wire.status() == 200, f'the JSON-RPC error came with HTTP {wire.last}')
        return e
    except A2AClientError as e:
        raise Check(f'expected JSON-RPC error {code}, got {e!r} (HTTP answer {wire.last})') from e
    raise Check(f'expected JSON-RPC error {code}, got an answer: {result}')


async def task_ids(http, base):
    """Every task id of the agent at `base`, by a plain JSON-RPC 1.0 ListTasks (not in 0.3)."""
    body = {'jsonrpc': '2.0', 'id': 1, 'method': 'ListTasks', 'params': {'pageSize': 100}}
    answer = (await http.post(f'{base}/', json=body, headers={'A2A-Version': '1.0'})).json()
    return {t['id'] for t in answer['result']['tasks']}


async def main():
    wire = Wire()
    resolver = A2ACardResolver(wire.http, PLANNER)
    card = await resolver.get_agent_card()

    def client(card, streaming):
        return ClientFactory(ClientConfig(httpx_client=wire.http, streaming=streaming)).create(card)

    streaming = client(card, True)
    blocking = client(card, False)
    slow_card = await A2ACardResolver(wire.http, SLOW_PLANNER).get_agent_card()
    slow = client(slow_card, False)

    async def reads_the_card():
        expect(card.capabilities.streaming, f'the card says streaming: {card.capabilities}')
        expect(card.url.startswith(PLANNER), f'the card URL {card.url} is the served one')
        task = await task_of(blocking.send_message(trip(1, '2026-12-01')))
        expect(task.status.state == TaskState.completed, f'{task.status}')
        expect(wire.last[0] == 'POST' and wire.status() == 200, f'{wire.last}')

    await run('JSON-RPC 0.3: the card resolves and message/send answers with a completed task',
              reads_the_card)

    async def stream_begins_with_the_task():
        # The SDK's task tracker takes one Task, then updates: a second Task in the stream
        # would raise "Task is already set".
        events = await events_of(streaming.send_message(trip(3, '2026-12-01')))
        expect(events, 'events')
        updates = [u for _, u in events]
        expect(updates[0] is None, f'the first event is the task: {updates[0]}')
        expect(
            all(isinstance(u, TaskStatusUpdateEvent | TaskArtifactUpdateEvent) for u in updates[1:]),
            f'then only updates: {updates}',
        )
        last = updates[-1]
        expect(
            isinstance(last, TaskStatusUpdateEvent) and last.status.state == TaskState.completed
            and last.final,
            f'ends with a final completed status: {last}',
        )
        chunks = [u for u in updates if isinstance(u, TaskArtifactUpdateEvent)]
        expect(len(chunks) >= 3, f'the plan arrives in chunks: {chunks}')
        task = events[-1][0]  # as the SDK's tracker assembled it
        expect(task.status.state == TaskState.completed, f'{task.status}')
        dates = [p.root.data.get('date') for a in task.artifacts or [] for p in a.parts]
        expect(dates == ['2026-12-01', '2026-12-02', '2026-12-03'], f'one part a day: {task}')

    await run('JSON-RPC 0.3: message/stream yields the task, then updates, ending completed',
              stream_begins_with_the_task)

    async def resubscribe_to_a_waiting_task():
        asked = await task_of(blocking.send_message(trip(2)))
        expect(asked.status.state == TaskState.input_required, f'the planner asks: {asked.status}')
        # The SDK hands out one Task object, updated in place: keep its state now.
        events, follower = await following(
            streaming.resubscribe(TaskIdParams(id=asked.id)),
            lambda pair: (pair[0].status.state, pair[1]))
        # The subscription is open (its first event arrived): now the answer.
        done = await task_of(blocking.send_message(text('2026-12-01', asked.id)))
        expect(done.status.state == TaskState.completed, f'the answer completes it: {done.status}')
        # "Task is already set" would surface here, raised by the tracker inside resubscribe.
        await asyncio.wait_for(follower, 15)
        updates = [u for _, u in events]
        expect(updates and updates[0] is None, f'the subscription begins with the task: {events}')
        expect(events[0][0] == TaskState.input_required, f'the task as it waits: {events[0][0]}')
        expect(len(updates) > 1 and all(u is not None for u in updates[1:]), f'then updates: {updates}')
        last = updates[-1]
        expect(
            isinstance(last, TaskStatusUpdateEvent) and last.status.state == TaskState.completed
            and last.final,
            f'ends with a final completed status: {last}',
        )

    await run('JSON-RPC 0.3: tasks/resubscribe to a task in input-required yields the task, then '
              'updates (no "Task is already set"); the answer completes it',
              resubscribe_to_a_waiting_task)

    async def cancel_waiting_twice():
        asked = await task_of(blocking.send_message(trip(2)))
        expect(asked.status.state == TaskState.input_required, f'{asked.status}')
        for attempt in ('first', 'second'):
            task = await blocking.cancel_task(TaskIdParams(id=asked.id))
            expect(isinstance(task, Task) and task.id == asked.id, f'{attempt} cancel: {task}')
            expect(task.status.state == TaskState.canceled, f'{attempt} cancel: {task.status}')

    await run('JSON-RPC 0.3: tasks/cancel on a waiting task gives canceled, and again when repeated',
              cancel_waiting_twice)

    async def cancel_running():
        started = await task_of(
            slow.send_message(
                trip(14, '2026-12-01'), configuration=MessageSendConfiguration(blocking=False)
            )
        )
        expect(
            started.status.state in (TaskState.submitted, TaskState.working),
            f'still running: {started.status}',
        )
        task = await slow.cancel_task(TaskIdParams(id=started.id))
        expect(task.status.state == TaskState.canceled, f'{task.status}')

    await run('JSON-RPC 0.3: tasks/cancel on a running task gives canceled', cancel_running)

    async def cancel_completed():
        done = await task_of(blocking.send_message(trip(1, '2026-12-01')))
        expect(done.status.state == TaskState.completed, f'{done.status}')
        await expect_rpc_error(lambda: blocking.cancel_task(TaskIdParams(id=done.id)), -32002, wire)

    await run('JSON-RPC 0.3: tasks/cancel on a completed task is JSON-RPC error -32002 '
              '(TaskNotCancelable)', cancel_completed)

    async def refused(client, cases):
        # Each refused message is error -32602, and the agent has no task more than before.
        before = await task_ids(wire.http, PLANNER)
        for what, request in cases:
            try:
                await expect_rpc_error(lambda: events_of(client.send_message(request)), -32602, wire)
            except Check as e:
                raise Check(f'{what}: {e}') from e
        after = await task_ids(wire.http, PLANNER)
        expect(after == before, f'new tasks: {after - before}')

    def refusals():
        return [
            ('a message without parts', message([])),
            ('days 30 (the schema allows 14)', trip(30, '2026-12-01')),
        ]

    async def refused_sends():
        await refused(blocking, refusals())

    await run('JSON-RPC 0.3: message/send without parts, or with data breaking the schema, is '
              'JSON-RPC error -32602 and creates no task', refused_sends)

    async def refused_streams():
        # The official 0.3 client reads a message/stream answer only as server-sent events (an
        # error too, as one event): any other answer is its HTTP error, without the code.
        await refused(streaming, refusals())

    await run('JSON-RPC 0.3: message/stream without parts, or with data breaking the schema, is '
              'JSON-RPC error -32602 and creates no task', refused_streams)

    async def an_agent_without_streaming():
        # The fight club's card says `streaming: false`: the streaming client sends
        # message/send instead, and the one answer is the completed task with the typed output.
        fights = client(await A2ACardResolver(wire.http, FIGHT_CLUB).get_agent_card(), True)
        data = DataPart(
            data={'a': 'Godzilla', 'b': 'Mothra'},
            metadata={'mimeType': 'application/json;schema=fightComparison'},
        )
        task = await task_of(fights.send_message(message([Part(root=data)])))
        expect(task.status.state == TaskState.completed, f'{task.status}')
        parts = [p.root for a in task.artifacts or [] for p in a.parts]
        expect(len(parts) == 1 and isinstance(parts[0], DataPart), f'one data part: {parts}')
        expect(
            (parts[0].metadata or {}).get('mimeType') == 'application/json;schema=fightResponse',
            f'the output schema: {parts[0]}',
        )
        expect(parts[0].data.get('winner') in ('Godzilla', 'Mothra'), f'a winner: {parts[0]}')

    await run('JSON-RPC 0.3: an agent without streaming answers the streaming client with one '
              'completed task and its typed output', an_agent_without_streaming)

    async def unknown_method():
        # The same card, pointed at the planner that has the 0.3 translation turned off: there
        # `message/send` is no method at all, -32601, which must reach the SDK as a JSON-RPC
        # error in an HTTP 200 answer, not as an HTTP failure.
        stale = card.model_copy(
            update={'url': WITHOUT_0_3 + card.url.removeprefix(PLANNER), 'additional_interfaces': None}
        )
        old = client(stale, False)
        await expect_rpc_error(lambda: events_of(old.send_message(trip(1, '2026-12-01'))), -32601,
                               wire)
        expect(wire.last[1].startswith(WITHOUT_0_3), f'asked {wire.last}')

    await run('JSON-RPC 0.3: an unknown method is JSON-RPC error -32601 in an HTTP 200 answer',
              unknown_method)

    await wire.http.aclose()
    sys.exit(checks.exit_status())


asyncio.run(main())
