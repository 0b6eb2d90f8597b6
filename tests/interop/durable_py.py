"""The official A2A Python SDK 1.3 client following a durable task across the kill of the
process that ran it, driven by tests/stores/replicas.rs: it subscribes again, on the process that took
the task over, with `Last-Event-ID` (the number of the last event seen before the kill), and
reads on to COMPLETED, every day of the plan after the last seen once and in order.

    python durable_py.py AGENT TASK LAST_EVENT_ID NEXT_DAY DAYS

AGENT is the base URL of the trip planner that took task TASK over; NEXT_DAY the first day not
seen before the kill, DAYS the plan's length.

Prints one line per check, `ok ...` or `FAIL ...`, and exits 1 if any check failed.
"""

import asyncio
import sys

import httpx

from a2a.client import A2ACardResolver, ClientCallContext, ClientConfig, ClientFactory
from a2a.types import SubscribeToTaskRequest, TaskState
from a2a.utils.constants import TransportProtocol

from checks import expect, run  # noqa: E402 - this folder's helpers
import checks  # noqa: E402

AGENT, TASK, LAST, NEXT_DAY, DAYS = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])


async def main():
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, AGENT).get_agent_card()
        config = ClientConfig(
            streaming=True,
            httpx_client=http,
            supported_protocol_bindings=[TransportProtocol.JSONRPC],
        )
        client = ClientFactory(config).create(card)

        async def check():
            context = ClientCallContext(service_parameters={'Last-Event-ID': LAST})
            days, final = [], None
            async for event in client.subscribe(SubscribeToTaskRequest(id=TASK), context=context):
                update = event.artifact_update if event.HasField('artifact_update') else None
                if update is not None and update.append:
                    for part in update.artifact.parts:
                        days.append(int(part.data.struct_value['day']))
                if event.HasField('status_update'):
                    final = event.status_update.status.state
            expect(final == TaskState.TASK_STATE_COMPLETED, f'the stream ends COMPLETED, not {final}')
            expect(days == list(range(NEXT_DAY, DAYS + 1)),
                   f'days {NEXT_DAY}..{DAYS} once each, in order, got {days}')

        await run('the re-subscribed stream reads on to COMPLETED, each later day once', check)
    return checks.exit_status()


if __name__ == '__main__':
    sys.exit(asyncio.run(main()))
