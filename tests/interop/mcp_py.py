"""The official MCP Python SDK client (`mcp.Client`) against the MCP face of agents of this crate,
driven by tests/sdks/mcp_sdks.rs, in both of the client's modes: `auto` (it discovers MCP 2026-07-28,
where a skill's question comes back as an `input_required` result that the client answers and
retries) and `legacy` (the initialize handshake, where the server sends `elicitation/create`
during the call).

    python mcp_py.py http PLANNER SLOW_PLANNER FIGHT_CLUB JUDGE WRITER_TOKEN READER_TOKEN
    python mcp_py.py stdio FIGHT_CLUB_EXAMPLE EXPECTED_VERDICT

`http`: each of the first four arguments is the base URL of an agent served by the test, its MCP
endpoint at `/mcp`: PLANNER, the trip planner planning a day in a few milliseconds; SLOW_PLANNER,
the same at a day a second (a 14-day plan is still running when it is cancelled); FIGHT_CLUB, the
fight club; JUDGE, the guarded judge (a bearer JWT required, `record` needing the scope
`fights:write`, `odds` listed only to authenticated callers). WRITER_TOKEN has that scope,
READER_TOKEN is valid without it.

`stdio`: the client launches FIGHT_CLUB_EXAMPLE (the example's binary) with `--mcp-stdio --tasks
memory`, as a desktop host does; EXPECTED_VERDICT is the judge's answer to Lion vs Tiger, as JSON.

Prints one line per check, `ok ...` or `FAIL ...`, and exits 1 if any check failed.
"""

import json
import logging
import subprocess
import sys
import time
import uuid
from contextlib import asynccontextmanager

import anyio
import httpx2
import mcp_types as types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from checks import Check, expect, report, run  # this folder's helpers
import checks

EXTENSION = 'https://github.com/a2a-card/a2a-card/extensions/mcp/v1'
AUTHORIZATION_SERVER = 'https://auth.example.com'
QUESTION = 'Which day do you leave?'
START = '2026-12-01'
MODES = ('auto', 'legacy')
# The version each mode ends up speaking with this server.
VERSIONS = {'auto': '2026-07-28', 'legacy': '2025-11-25'}


class Wire:
    """The HTTP answers the MCP client got (method, URL, status, headers), read by the security
    checks: the SDK's errors do not carry the status or the challenge."""

    def __init__(self):
        self.answers = []

    async def record(self, response):
        request = response.request
        self.answers.append((request.method, str(request.url), response.status_code, response.headers))

    def refusals(self, status):
        return [a for a in self.answers if a[2] == status]


class Warnings(logging.Handler):
    """The warnings the SDK logs while it is active (a `with` block)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())

    def __enter__(self):
        logging.getLogger('mcp').addHandler(self)

    def __exit__(self, *_):
        logging.getLogger('mcp').removeHandler(self)


@asynccontextmanager
async def connect(url, mode, token=None, wire=None, elicit=None):
    """An MCP client on `url` in `mode`, sending `token` as a bearer token when given."""
    headers = {'Authorization': f'Bearer {token}'} if token else None
    async with create_mcp_http_client(headers=headers) as http:
        if wire is not None:
            http.event_hooks = {'response': [wire.record]}
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, elicitation_callback=elicit) as client:
            yield client


def answering(answer, asked):
    """An elicitation callback that records the question and answers `answer` (a date), or
    declines when `answer` is None."""

    async def elicit(context, params):
        asked.append(params)
        if answer is None:
            return types.ElicitResult(action='decline')
        return types.ElicitResult(action='accept', content={'answer': answer})

    return elicit


async def a2a(base, method, params):
    """One A2A JSON-RPC 1.0 call to the agent at `base`; its result."""
    body = {'jsonrpc': '2.0', 'id': str(uuid.uuid4()), 'method': method, 'params': params}
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(f'{base}/', json=body, headers={'A2A-Version': '1.0'})
    answer = response.json()
    expect('result' in answer, f'A2A {method}: HTTP {response.status_code} {answer}')
    return answer['result']


async def get_json(url, headers=None):
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.get(url, headers=headers)
    expect(response.status_code == 200, f'GET {url}: HTTP {response.status_code}')
    return response.json()


async def card_of(base):
    return await get_json(f'{base}/.well-known/agent-card.json')


def named_schemas(card):
    """The card's named schemas: at its root (`schemas`), or in an extension entry's params."""
    schemas = dict(card.get('schemas') or {})
    for extension in card.get('capabilities', {}).get('extensions') or []:
        schemas.update((extension.get('params') or {}).get('schemas') or {})
    return schemas


def schema_mode(modes):
    """The schema named by an `application/json;schema=NAME` mode, if any."""
    for mode in modes or []:
        if mode.startswith('application/json;schema='):
            return mode.split('=', 1)[1]
    return None


def texts(result):
    return '\n'.join(block.text for block in result.content if block.type == 'text')


def leaves(error):
    """The exceptions in `error`, exception groups opened."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for e in error.exceptions for leaf in leaves(e)]
    return [error]


async def newest_task(base):
    """The newest task of the agent at `base` (ListTasks is newest first)."""
    listed = await a2a(base, 'ListTasks', {'pageSize': 1})
    tasks = listed.get('tasks') or []
    expect(tasks, f'ListTasks gave no task: {listed}')
    return tasks[0]


async def settled(base, state, seconds=10):
    """The newest task once it is in `state` (polled: a cancellation lands asynchronously)."""
    deadline = time.monotonic() + seconds
    while True:
        task = await newest_task(base)
        if task['status']['state'] == state or time.monotonic() > deadline:
            expect(task['status']['state'] == state, f'the newest task is not {state}: {task["status"]}')
            return task
        await anyio.sleep(0.1)


def days_of(task):
    """The itinerary days in a task's artifacts."""
    return [p['data'] for a in task.get('artifacts') or [] for p in a['parts'] if 'data' in p]


def check_tools(tools, card, base):
    """Each tool is the card's skill of that name, its schemas the card's, key for key; the card
    names the MCP endpoint."""
    schemas = named_schemas(card)
    skills = card['skills']
    names = [t.name for t in tools]
    expect(names == [s['id'] for s in skills], f'tools {names}, skills {[s["id"] for s in skills]}')
    for tool, skill in zip(tools, skills):
        expect(tool.title == skill['name'], f'{tool.name}: title {tool.title!r}, skill {skill["name"]!r}')
        expect(
            tool.description == skill['description'],
            f'{tool.name}: description {tool.description!r}',
        )
        wanted = schema_mode(skill.get('inputModes'))
        expect(wanted in schemas, f'{tool.name}: the card has no input schema {wanted}')
        expect(
            tool.input_schema == schemas[wanted],
            f'{tool.name}: inputSchema {json.dumps(tool.input_schema)} != {json.dumps(schemas[wanted])}',
        )
    entries = [
        e for e in card['capabilities'].get('extensions') or [] if e.get('uri') == EXTENSION
    ]
    expect(len(entries) == 1, f'one MCP extension entry: {card["capabilities"]}')
    expect(entries[0]['params']['url'] == f'{base}/mcp', f'the entry: {entries[0]}')
    return schemas


async def http_checks(mode, planner, slow_planner, fight_club, judge, writer, reader):
    async def speaks_the_version():
        warnings = Warnings()
        with warnings:
            async with connect(f'{fight_club}/mcp', mode) as client:
                expect(
                    client.protocol_version == VERSIONS[mode],
                    f'protocol {client.protocol_version}, not {VERSIONS[mode]}',
                )
                card = await card_of(fight_club)
                info = client.server_info
                expect(info is not None and info.name == card['name'], f'server info {info}')
                await client.list_tools()
        # Leaving ends the session (`DELETE`); the SDK warns of an answer other than 200 or 204.
        expect(not warnings.messages, f'the SDK warned: {warnings.messages}')

    await run(f'{mode}: the client speaks MCP {VERSIONS[mode]}, the server named as the card, '
              'the session ends cleanly', speaks_the_version)

    async def fight_club_tools():
        card = await card_of(fight_club)
        async with connect(f'{fight_club}/mcp', mode) as client:
            tools = (await client.list_tools()).tools
        schemas = check_tools(tools, card, fight_club)
        output = schema_mode(card['skills'][0].get('outputModes'))
        expect(
            tools[0].output_schema == schemas[output],
            f'outputSchema {json.dumps(tools[0].output_schema)} != {output}',
        )

    await run(f'{mode}: the fight club\'s tools are its skills, with the card\'s input and output '
              'schemas key for key', fight_club_tools)

    async def planner_tools():
        card = await card_of(planner)
        async with connect(f'{planner}/mcp', mode) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
        schemas = check_tools(list(tools.values()), card, planner)
        day = {k: v for k, v in schemas['itineraryDay'].items() if k != '$defs'}
        wanted = {
            'type': 'object',
            'properties': {'items': {'type': 'array', 'items': day}},
            'required': ['items'],
        }
        got = tools['plan-trip'].output_schema
        expect(got == wanted, f'plan-trip outputSchema {json.dumps(got)}')
        # A file output has no structured content, so no output schema.
        got = tools['export-calendar'].output_schema
        expect(got is None, f'export-calendar outputSchema {got}')

    await run(f'{mode}: the planner\'s tools have the card\'s schemas, a streamed output as '
              '{"items": [...]}', planner_tools)

    async def fight_as_a2a_answers():
        fight = {'a': 'Godzilla', 'b': 'Mothra'}
        answer = await a2a(fight_club, 'SendMessage', {'message': {
            'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER',
            'parts': [{'data': fight, 'mediaType': 'application/json;schema=fightComparison'}],
        }})
        expect(answer['task']['status']['state'] == 'TASK_STATE_COMPLETED', f'A2A: {answer}')
        data = [p['data'] for a in answer['task']['artifacts'] for p in a['parts'] if 'data' in p]
        expect(len(data) == 1, f'one data part over A2A: {answer}')
        async with connect(f'{fight_club}/mcp', mode) as client:
            result = await client.call_tool('fight-comparison', fight)
        expect(not result.is_error, f'a tool error: {result}')
        expect(result.structured_content == data[0],
               f'structuredContent {result.structured_content}, A2A {data[0]}')
        expect(json.loads(texts(result)) == data[0], f'the text content: {texts(result)}')

    await run(f'{mode}: a fight-comparison call answers the A2A answer\'s data as '
              'structuredContent', fight_as_a2a_answers)

    async def invalid_arguments():
        async with connect(f'{fight_club}/mcp', mode) as client:
            result = await client.call_tool('fight-comparison', {'a': 'Lion'})
        expect(result.is_error, f'not a tool error: {result}')
        expect('"b" is a required property' in texts(result), f'the field b not named: {texts(result)}')

    await run(f'{mode}: arguments without b are a tool error naming b', invalid_arguments)

    async def unknown_tool():
        async with connect(f'{fight_club}/mcp', mode) as client:
            try:
                result = await client.call_tool('no-such-tool', {})
            except MCPError as e:
                expect(e.code == types.INVALID_PARAMS, f'code {e.code}: {e.message}')
                expect('no-such-tool' in e.message, f'the tool not named: {e.message}')
                return
        raise Check(f'an answer: {result}')

    await run(f'{mode}: an unknown tool is an MCPError (-32602) naming it', unknown_tool)

    async def plan_with_progress_and_a_question():
        progress, asked = [], []

        async def on_progress(value, total, message):
            progress.append(message)

        elicit = answering(START, asked)
        async with connect(f'{planner}/mcp', mode, elicit=elicit) as client:
            result = await client.call_tool(
                'plan-trip', {'destination': 'Lisbon', 'days': 3}, progress_callback=on_progress
            )
        expect(not result.is_error, f'a tool error: {texts(result)}')
        expect(len(asked) == 1, f'one question: {asked}')
        expect(asked[0].message.startswith(QUESTION), f'the question: {asked[0].message!r}')
        expect(
            'answer' in asked[0].requested_schema.get('properties', {}),
            f'the form: {asked[0].requested_schema}',
        )
        items = (result.structured_content or {}).get('items')
        dates = [d.get('date') for d in items or []]
        expect(dates == [START, '2026-12-02', '2026-12-03'], f'the plan: {result.structured_content}')
        expect(progress and progress[0] == 'Planning 3 days in Lisbon', f'progress {progress}')
        days = []
        for message in progress[1:]:
            try:
                days.append(json.loads(message))
            except (TypeError, ValueError):
                raise Check(f'a progress message that is not a JSON day: {message!r}') from None
        expect(days == items, f'one progress notification per day, in order: {progress[1:]}')

    await run(f'{mode}: plan-trip reports progress, asks the start date, and the answer completes '
              'the plan', plan_with_progress_and_a_question)

    async def a_declined_question():
        asked = []
        async with connect(f'{planner}/mcp', mode, elicit=answering(None, asked)) as client:
            result = await client.call_tool('plan-trip', {'destination': 'Lisbon', 'days': 2})
        expect(len(asked) == 1, f'one question: {asked}')
        expect(result.is_error, f'not a tool error: {result}')
        expect('decline' in texts(result), f'the error: {texts(result)}')
        # Nobody will answer: the task is canceled, not left waiting.
        await settled(planner, 'TASK_STATE_CANCELED')

    await run(f'{mode}: a declined question is a tool error, and the task is canceled',
              a_declined_question)

    async def cancel_mid_plan():
        progress = []
        first_day = anyio.Event()
        cancelled_at = None

        async def on_progress(value, total, message):
            progress.append((time.monotonic(), message))
            if message.startswith('{'):
                first_day.set()

        async with connect(f'{slow_planner}/mcp', mode) as client:
            with anyio.CancelScope() as scope:
                async with anyio.create_task_group() as tasks:
                    async def call():
                        await client.call_tool(
                            'plan-trip',
                            {'destination': 'Lisbon', 'days': 14, 'start_date': START},
                            progress_callback=on_progress,
                        )
                        raise Check('the 14-day plan finished before it was cancelled')

                    tasks.start_soon(call)
                    with anyio.fail_after(15):
                        await first_day.wait()
                    cancelled_at = time.monotonic()
                    scope.cancel()
            expect(scope.cancelled_caught, 'the call was not cancelled')
            task = await settled(slow_planner, 'TASK_STATE_CANCELED')
            made = len(days_of(await a2a(slow_planner, 'GetTask', {'id': task['id']})))
            # Two days' pace later: no day more, no progress more.
            await anyio.sleep(2.5)
            later = await a2a(slow_planner, 'GetTask', {'id': task['id']})
        expect(later['status']['state'] == 'TASK_STATE_CANCELED', f'{later["status"]}')
        expect(1 <= made < 14, f'{made} days made before the cancellation')
        expect(len(days_of(later)) == made, f'{made} days, then {len(days_of(later))}')
        after = [m for t, m in progress if t > cancelled_at]
        expect(not after, f'progress after the cancellation: {after}')

    await run(f'{mode}: a call cancelled mid-plan cancels its task, which plans no day more',
              cancel_mid_plan)

    await judge_checks(mode, judge, writer, reader)


async def judge_checks(mode, judge, writer, reader):
    url = f'{judge}/mcp'
    metadata_url = f'{judge}/.well-known/oauth-protected-resource/mcp'

    async def no_token():
        wire = Wire()
        try:
            async with connect(url, mode, wire=wire) as client:
                await client.list_tools()
        except Exception as e:  # noqa: BLE001 - the SDK's error, whatever wraps it
            errors = leaves(e)
            expect(any(isinstance(x, MCPError) for x in errors), f'not an MCPError: {errors!r}')
        else:
            raise Check('connected without a token')
        refused = wire.refusals(401)
        expect(refused, f'no 401: {[a[:3] for a in wire.answers]}')
        expect(all(a[2] == 401 for a in wire.answers), f'answers {[a[:3] for a in wire.answers]}')
        challenge = refused[0][3].get('www-authenticate', '')
        expect(challenge.startswith('Bearer'), f'the challenge: {challenge!r}')
        expect(f'resource_metadata="{metadata_url}"' in challenge, f'the challenge: {challenge!r}')

    await run(f'{mode}: the judge without a token: HTTP 401 (the SDK raises), the challenge '
              'naming the resource metadata', no_token)

    async def resource_metadata():
        metadata = await get_json(metadata_url)
        expect(metadata.get('resource') == url, f'resource {metadata}')
        expect(metadata.get('authorization_servers') == [AUTHORIZATION_SERVER], f'{metadata}')
        expect('fights:write' in metadata.get('scopes_supported', []), f'{metadata}')

    await run(f'{mode}: the protected-resource metadata names the MCP endpoint and the '
              'authorization server', resource_metadata)

    async def under_scoped():
        wire = Wire()
        async with connect(url, mode, token=reader, wire=wire) as client:
            result = await client.call_tool('winner', {'text': 'Lion vs Tiger'})
            expect(not result.is_error, f'winner: {texts(result)}')
            expect(texts(result) == 'Tiger wins (judged for reader)', f'winner: {texts(result)}')
            try:
                result = await client.call_tool('record', {'winner': 'Lion'})
            except MCPError:
                pass
            else:
                raise Check(f'record answered: {result}')
        refused = wire.refusals(403)
        expect(len(refused) == 1, f'one 403: {[a[:3] for a in wire.answers]}')
        challenge = refused[0][3].get('www-authenticate', '')
        expect('error="insufficient_scope"' in challenge and 'fights:write' in challenge,
               f'the challenge: {challenge!r}')

    await run(f'{mode}: a token without fights:write: winner runs, record is refused (HTTP 403 '
              'insufficient_scope, the SDK raises)', under_scoped)

    async def scoped():
        async with connect(url, mode, token=writer) as client:
            result = await client.call_tool('record', {'winner': 'Lion'})
        expect(not result.is_error and texts(result) == 'recorded: Lion won', f'{result}')

    await run(f'{mode}: a token with fights:write: record runs', scoped)

    async def extended_only_with_a_token():
        public = [s['id'] for s in (await card_of(judge))['skills']]
        expect(public == ['winner', 'record'], f'the public card\'s skills: {public}')
        async with connect(url, mode, token=reader) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            result = await client.call_tool('odds', {'a': 'Lion', 'b': 'Tiger'})
        expect(names == ['winner', 'record', 'odds'], f'tools {names}')
        expect(not result.is_error and texts(result) == 'Lion 3:2 Tiger', f'odds: {result}')

    await run(f'{mode}: odds, an extended skill, is a tool for a caller with a token, not on the '
              'public card', extended_only_with_a_token)


async def stdio_checks(mode, example, verdict):
    params = StdioServerParameters(command=example, args=['--mcp-stdio', '--tasks', 'memory'])

    async def tools():
        printed = subprocess.run([example, '--print-card'], capture_output=True, check=True)
        card = json.loads(printed.stdout)
        async with Client(params, mode=mode) as client:
            listed = (await client.list_tools()).tools
        schemas = named_schemas(card)
        expect([t.name for t in listed] == ['fight-comparison'], f'tools {listed}')
        expect(listed[0].input_schema == schemas['fightComparison'],
               f'inputSchema {json.dumps(listed[0].input_schema)}')
        expect(listed[0].output_schema == schemas['fightResponse'],
               f'outputSchema {json.dumps(listed[0].output_schema)}')

    await run(f'stdio {mode}: the launched example lists its skill as a tool with the card\'s '
              'schemas', tools)

    async def call():
        async with Client(params, mode=mode) as client:
            result = await client.call_tool('fight-comparison', {'a': 'Lion', 'b': 'Tiger'})
        expect(not result.is_error, f'a tool error: {texts(result)}')
        expect(result.structured_content == verdict,
               f'structuredContent {result.structured_content}, expected {verdict}')

    await run(f'stdio {mode}: a fight-comparison call answers the verdict', call)


async def main():
    kind, args = sys.argv[1], sys.argv[2:]
    for mode in MODES:
        try:
            if kind == 'http':
                await http_checks(mode, *args)
            else:
                example, verdict = args
                await stdio_checks(mode, example, json.loads(verdict))
        except Exception as e:  # noqa: BLE001 - a driver that stops early fails too
            report(False, f'{mode}: the checks ran to the end', repr(e))
    sys.exit(checks.exit_status())


if __name__ == '__main__':
    anyio.run(main)
