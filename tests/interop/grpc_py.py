"""The official A2A Python SDK 1.3 gRPC client (`a2a.client` with `a2a-sdk[grpc]`) against agents
of this crate, driven by tests/sdks/sdk_grpc.rs.

    python grpc_py.py PLANNER SLOW_PLANNER FIGHT_CLUB JUDGE TOKEN SUBJECT

Each URL is the base URL of an example agent served by the test with the gRPC binding on:
PLANNER, the trip planner planning a day in a few milliseconds (webhooks to loopback allowed);
SLOW_PLANNER, one slow enough that a task is still running when it is cancelled; FIGHT_CLUB, the
fight club; JUDGE, the guarded judge, whose card requires a bearer JWT. TOKEN is a JWT the judge
accepts, for SUBJECT, without the `fights:write` scope its `record` skill needs.

The clients come from the served cards through the SDK's `ClientFactory`, offered only the GRPC
binding, with a `grpc_channel_factory` that opens a plain-text `grpc.aio` channel on the
interface's host:port; every call on those channels is recorded, so a check can tell that it
went over gRPC.

Prints one line per check, `ok ...` or `FAIL ...`, and exits 1 if any check failed.
"""

import asyncio
import re
import sys
import uuid

from urllib.parse import urlsplit

import grpc
import httpx

from google.protobuf.json_format import MessageToDict, ParseDict

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.auth.credentials import CredentialService
from a2a.client.auth.interceptor import AuthInterceptor
from a2a.types import (
    CancelTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.constants import TransportProtocol
from a2a.utils.errors import A2AError, InvalidParamsError

PLANNER, SLOW_PLANNER, FIGHT_CLUB, JUDGE, TOKEN, SUBJECT = sys.argv[1:7]
TRIP_SCHEMA = 'application/json;schema=tripRequest'
FIGHT_SCHEMA = 'application/json;schema=fightComparison'
SERVICE = '/lf.a2a.v1.A2AService/'

from checks import Check, expect, following, report, run  # noqa: E402 - this folder's helpers
import checks  # noqa: E402


class Recorder:
    """Remembers the method of every call made on the channels it is given to: a unary and a
    streaming interceptor (a channel takes each interceptor for one kind of call only)."""

    def __init__(self):
        self.methods = []
        self.interceptors = [Unary(self.methods), Streaming(self.methods)]


def record(methods, details):
    method = details.method
    methods.append(method.decode() if isinstance(method, bytes) else method)


class Unary(grpc.aio.UnaryUnaryClientInterceptor):
    def __init__(self, methods):
        self.methods = methods

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        record(self.methods, client_call_details)
        return await continuation(client_call_details, request)


class Streaming(grpc.aio.UnaryStreamClientInterceptor):
    def __init__(self, methods):
        self.methods = methods

    async def intercept_unary_stream(self, continuation, client_call_details, request):
        record(self.methods, client_call_details)
        # The call itself (not a generator), so that the SDK can `read()` it.
        return await continuation(client_call_details, request)


class Channels:
    """The `grpc_channel_factory`: a plain-text channel on the interface URL's host:port (the
    card's GRPC interface is `http://host:port`), remembering the URLs it was asked for."""

    def __init__(self):
        self.urls = []
        self.recorder = Recorder()

    def __call__(self, url):
        self.urls.append(url)
        parts = urlsplit(url if '://' in url else f'//{url}')
        return grpc.aio.insecure_channel(parts.netloc, interceptors=self.recorder.interceptors)


class Token(CredentialService):
    """The bearer token for the judge's `bearer` scheme (the SDK's AuthInterceptor puts it in
    the call's `authorization` metadata)."""

    def __init__(self, token):
        self.token = token

    async def get_credentials(self, security_scheme_name, context):
        return self.token if security_scheme_name == 'bearer' else None


def factory(channels, streaming):
    return ClientFactory(
        ClientConfig(
            streaming=streaming,
            grpc_channel_factory=channels,
            supported_protocol_bindings=[TransportProtocol.GRPC],
        )
    )


def message(parts, task_id=None):
    """A `SendMessageRequest` from the message's 1.0 JSON (the SDK's own protobuf parser)."""
    body = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': parts}
    if task_id:
        body['taskId'] = task_id
    return ParseDict({'message': body}, SendMessageRequest())


def trip(days, start=None):
    data = {'destination': 'Lisbon', 'days': days}
    if start is not None:
        data['start_date'] = start
    return message([{'data': data, 'mediaType': TRIP_SCHEMA}])


def fight(data):
    return message([{'data': data, 'mediaType': FIGHT_SCHEMA}])


def kinds(events):
    return [e.WhichOneof('payload') for e in events]


def state_of(event):
    kind = event.WhichOneof('payload')
    if kind == 'task':
        return TaskState.Name(event.task.status.state)
    if kind == 'status_update':
        return TaskState.Name(event.status_update.status.state)
    return None


def assemble(updates):
    """The artifacts the updates of a stream build: `append` adds the parts to the artifact of
    that id, otherwise the artifact is replaced. artifactId -> parts."""
    artifacts = {}
    for update in updates:
        artifact = update.artifact
        if update.append:
            artifacts.setdefault(artifact.artifact_id, []).extend(artifact.parts)
        else:
            artifacts[artifact.artifact_id] = list(artifact.parts)
    return artifacts


async def one(stream):
    """The single answer of a non-streaming client's `send_message`."""
    answers = [e async for e in stream]
    expect(len(answers) == 1, f'one answer, got {kinds(answers)}')
    return answers[0]


async def all_of(stream):
    return [e async for e in stream]


def grpc_code(error):
    """The gRPC status under an SDK error: the SDK raises its own error type `from` the
    `grpc.aio.AioRpcError` it got."""
    cause = error.__cause__
    return cause.code() if isinstance(cause, grpc.aio.AioRpcError) else None


async def refused_with(call, code):
    """`call` fails with an SDK error whose gRPC status is `code`; the error."""
    try:
        result = await call()
    except A2AError as e:
        expect(grpc_code(e) == code, f'{code.name} expected, got {grpc_code(e)}: {e!r}')
        return e
    raise Check(f'{code.name} expected, got an answer: {result}')


def texts(event):
    """Every text of an answer: a message's parts, or a task's artifacts and status message."""
    kind = event.WhichOneof('payload')
    if kind == 'message':
        parts = list(event.message.parts)
    elif kind == 'task':
        parts = [p for a in event.task.artifacts for p in a.parts]
        parts += list(event.task.status.message.parts)
    else:
        parts = []
    return [p.text for p in parts if p.WhichOneof('content') == 'text']


async def main():
    channels = Channels()
    fights = await factory(channels, False).create_from_url(FIGHT_CLUB)
    blocking = await factory(channels, False).create_from_url(PLANNER)
    streaming = await factory(channels, True).create_from_url(PLANNER)
    slow = await factory(channels, False).create_from_url(SLOW_PLANNER)
    slow_streaming = await factory(channels, True).create_from_url(SLOW_PLANNER)

    async def picks_grpc():
        # The card as the SDK resolves it: a GRPC 1.0 interface at the URL's origin.
        async with httpx.AsyncClient(timeout=30) as http:
            card = await A2ACardResolver(http, FIGHT_CLUB).get_agent_card()
        grpc_interfaces = [
            (i.url, i.protocol_version)
            for i in card.supported_interfaces
            if i.protocol_binding == TransportProtocol.GRPC
        ]
        expect(grpc_interfaces == [(FIGHT_CLUB, '1.0')],
               f'one GRPC 1.0 interface at {FIGHT_CLUB}: {card.supported_interfaces}')
        # The factory opened the client's channel on that interface, and a call goes over it.
        expect(channels.urls and channels.urls[0] == FIGHT_CLUB,
               f'the first channel was for {FIGHT_CLUB}: {channels.urls}')
        before = len(channels.recorder.methods)
        await fights.list_tasks(ListTasksRequest(page_size=10))
        made = channels.recorder.methods[before:]
        expect(made == [SERVICE + 'ListTasks'], f'the call went over gRPC: {made}')

    await run('the served card offers a GRPC 1.0 interface and the client picked it', picks_grpc)

    async def structured_answer():
        before = len(channels.recorder.methods)
        answer = await one(fights.send_message(fight({'a': 'Lion', 'b': 'Tiger'})))
        made = channels.recorder.methods[before:]
        expect(made == [SERVICE + 'SendMessage'], f'one SendMessage over gRPC: {made}')
        expect(state_of(answer) == 'TASK_STATE_COMPLETED', f'completed: {answer}')
        data = [
            MessageToDict(p.data)
            for a in answer.task.artifacts
            for p in a.parts
            if p.WhichOneof('content') == 'data'
        ]
        expect(len(data) == 1, f'one data part: {answer.task.artifacts}')
        expect(data[0].get('winner') == 'Tiger', f'the winner: {data[0]}')

    await run('a blocking SendMessage with structured data completes with the typed answer',
              structured_answer)

    async def schema_violation():
        before = (await fights.list_tasks(ListTasksRequest(page_size=100))).total_size
        refused = await refused_with(
            lambda: one(fights.send_message(fight({'a': 'Lion'}))),
            grpc.StatusCode.INVALID_ARGUMENT,
        )
        # The SDK reads the status's A2A ErrorInfo reason (INVALID_PARAMS) as its own error type,
        # and its BadRequest details as `data['errors']`.
        expect(isinstance(refused, InvalidParamsError), f'InvalidParamsError: {refused!r}')
        said = [refused.message or ''] + [
            f"{v.get('field', '')} {v.get('message', '')}"
            for v in (refused.data or {}).get('errors', [])
        ]
        expect(any(re.search(r'["\'`]b["\'`]|/b\b', t) for t in said),
               f'the error names the field b: {refused!r}')
        after = (await fights.list_tasks(ListTasksRequest(page_size=100))).total_size
        expect(after == before, f'tasks before {before}, after {after}')

    await run('data breaking the schema is INVALID_ARGUMENT naming the field, and makes no task',
              schema_violation)

    async def stream_begins_with_the_task():
        before = len(channels.recorder.methods)
        events = await all_of(streaming.send_message(trip(3, '2026-12-01')))
        made = channels.recorder.methods[before:]
        expect(made == [SERVICE + 'SendStreamingMessage'], f'a stream over gRPC: {made}')
        got = kinds(events)
        expect(got and got[0] == 'task', f'the first event is the task: {got}')
        expect(len(got) > 1 and all(k in ('status_update', 'artifact_update') for k in got[1:]),
               f'then updates: {got}')
        expect(state_of(events[-1]) == 'TASK_STATE_COMPLETED', f'ends completed: {events[-1]}')
        plan = assemble([e.artifact_update for e in events if e.HasField('artifact_update')])
        dates = [MessageToDict(p.data).get('date') for p in plan.get('plan-trip', [])]
        expect(dates == ['2026-12-01', '2026-12-02', '2026-12-03'], f'one part a day: {plan}')

    await run('SendStreamingMessage yields the task, then updates, ending completed',
              stream_begins_with_the_task)

    async def question_answered():
        asked = await one(blocking.send_message(trip(2)))
        expect(state_of(asked) == 'TASK_STATE_INPUT_REQUIRED', f'the planner asks: {asked}')
        done = await one(blocking.send_message(message([{'text': '2026-12-01'}], asked.task.id)))
        expect(state_of(done) == 'TASK_STATE_COMPLETED', f'the answer completes it: {done}')
        expect(done.task.id == asked.task.id, f'the same task: {done.task.id}')

    await run('a question (input-required) answered with text completes the task',
              question_answered)

    async def cancel_waiting():
        asked = await one(blocking.send_message(trip(2)))
        expect(state_of(asked) == 'TASK_STATE_INPUT_REQUIRED', f'{asked}')
        task = await blocking.cancel_task(CancelTaskRequest(id=asked.task.id))
        expect(TaskState.Name(task.status.state) == 'TASK_STATE_CANCELED', f'{task}')
        expect(task.id == asked.task.id, f'cancel answered task {task.id}')

    await run('CancelTask on a waiting task gives CANCELED', cancel_waiting)

    async def subscribe_then_cancel():
        request = trip(14, '2026-12-01')
        request.configuration.return_immediately = True
        started = await one(slow.send_message(request))
        expect(state_of(started) in ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'),
               f'still running: {started}')
        task_id = started.task.id
        events, follower = await following(
            slow_streaming.subscribe(SubscribeToTaskRequest(id=task_id)))
        task = await slow.cancel_task(CancelTaskRequest(id=task_id))
        expect(TaskState.Name(task.status.state) == 'TASK_STATE_CANCELED', f'{task}')
        await asyncio.wait_for(follower, 15)
        got = kinds(events)
        expect(got and got[0] == 'task', f'the subscription begins with the task: {got}')
        expect(len(got) > 1 and 'task' not in got[1:], f'then updates: {got}')
        expect(state_of(events[-1]) == 'TASK_STATE_CANCELED', f'ends canceled: {events[-1]}')

    await run('SubscribeToTask on a running task yields the task, then updates, and ends '
              'CANCELED after CancelTask', subscribe_then_cancel)

    async def push_configs():
        asked = await one(blocking.send_message(trip(2)))
        expect(state_of(asked) == 'TASK_STATE_INPUT_REQUIRED', f'{asked}')
        task_id = asked.task.id
        config = TaskPushNotificationConfig(
            task_id=task_id, id='hook', url='http://127.0.0.1:9/hook', token='t'
        )
        made = await blocking.create_task_push_notification_config(config)
        expect(made.url == config.url and made.task_id == task_id, f'created: {made}')
        listed = await blocking.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task_id)
        )
        got = [(c.id, c.url, c.task_id) for c in listed.configs]
        expect(got == [('hook', config.url, task_id)], f'listed: {listed}')

    await run('CreateTaskPushNotificationConfig on a waiting task, then '
              'ListTaskPushNotificationConfigs lists it', push_configs)

    # The guarded judge: its card requires a bearer token.
    anonymous = await factory(channels, False).create_from_url(JUDGE)
    guarded = await factory(channels, False).create_from_url(
        JUDGE, interceptors=[AuthInterceptor(Token(TOKEN))]
    )

    async def no_token():
        await refused_with(
            lambda: one(anonymous.send_message(message([{'text': 'Lion vs Tiger'}]))),
            grpc.StatusCode.UNAUTHENTICATED,
        )

    await run('guarded judge: a call without a token is UNAUTHENTICATED', no_token)

    async def with_token():
        answer = await one(guarded.send_message(message([{'text': 'Lion vs Tiger'}])))
        said = texts(answer)
        expect(any(f'judged for {SUBJECT}' in t for t in said),
               f'the skill saw the caller {SUBJECT}: {said} in {answer}')

    await run('guarded judge: with the token, the winner skill answers for the caller', with_token)

    async def under_scoped():
        await refused_with(
            lambda: one(guarded.send_message(message(
                [{'data': {'winner': 'Tiger'}, 'mediaType': 'application/json;schema=fightResult'}]
            ))),
            grpc.StatusCode.PERMISSION_DENIED,
        )

    await run('guarded judge: the record skill without the fights:write scope is '
              'PERMISSION_DENIED', under_scoped)

    for client in (fights, blocking, streaming, slow, slow_streaming, anonymous, guarded):
        await client.close()


async def start():
    try:
        await main()
    except Exception as e:  # noqa: BLE001 - no client at all is a failure too
        report(False, 'gRPC clients for the served cards', repr(e))
    sys.exit(checks.exit_status())


asyncio.run(start())
