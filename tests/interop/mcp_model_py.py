"""The official MCP Python SDK client (`mcp.Client`) against the MCP face of the model agent
(examples/model_agent, wrapping a real model), driven by tests/model/model.rs.

    python mcp_model_py.py MODEL_AGENT QUESTION EXPECTED_ANSWER

MODEL_AGENT is the agent's base URL (its MCP endpoint at `/mcp`); QUESTION is asked of its `ask`
tool, whose answer must be EXPECTED_ANSWER (what the test got from the same model directly,
with the same greedy decoding), streamed as progress notifications as the model writes it.

Prints one line per check, `ok ...` or `FAIL ...`, and exits 1 if any check failed.
"""

import sys
import time

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from checks import expect, run  # this folder's helpers
import checks


def texts(result):
    return ''.join(block.text for block in result.content if block.type == 'text')


async def checks_of(url, question, expected):
    async def tools():
        async with Client(streamable_http_client(f'{url}/mcp')) as client:
            listed = await client.list_tools()
        by_name = {tool.name: tool for tool in listed.tools}
        expect(sorted(by_name) == ['ask', 'fight-question'], f'the tools: {sorted(by_name)}')
        schema = by_name['ask'].input_schema
        expect(schema.get('required') == ['text'], f'ask takes text: {schema}')
        schema = by_name['fight-question'].input_schema
        expect(schema.get('required') == ['question'], f'fight-question takes a question: {schema}')

    await run('the model agent lists its two skills as tools, with their schemas', tools)

    async def streamed_answer():
        progress = []

        async def on_progress(value, total, message):
            progress.append((time.monotonic(), message))

        started = time.monotonic()
        async with Client(streamable_http_client(f'{url}/mcp')) as client:
            result = await client.call_tool('ask', {'text': question}, progress_callback=on_progress)
        ended = time.monotonic()
        expect(not result.is_error, f'a tool error: {texts(result)}')
        expect(texts(result) == expected, f'the answer {texts(result)!r}, not {expected!r}')
        joined = ''.join(message or '' for _, message in progress)
        expect(joined == expected, f'the progress, joined: {joined!r}')
        expect(len(progress) >= 10, f'{len(progress)} progress notifications: one per token expected')
        # Timed from the first token (before it, the model reads the prompt): the notifications
        # are spread over the generation, the first long before the result.
        first, last = progress[0][0], progress[-1][0]
        expect(
            ended - first > 0.1 and last - first > (ended - first) / 2,
            f'progress from {first - started:.3f} s to {last - started:.3f} s, '
            f'the result at {ended - started:.3f} s',
        )

    await run('ask streams the model\'s answer as progress, one notification per token, and '
              'returns the text', streamed_answer)


async def main():
    url, question, expected = sys.argv[1:4]
    await checks_of(url, question, expected)
    sys.exit(1 if checks.failures else 0)


if __name__ == '__main__':
    anyio.run(main)
