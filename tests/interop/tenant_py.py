"""The official A2A Python SDK 1.3 client against an agent whose card names a tenant, driven by
tests/serving/tenants.rs: the SDK sends the tenant its card's interface names (A2A 1.0 section 8.3.2)
over JSON-RPC, HTTP+JSON and gRPC, and each call lands in that tenant.

    python tenant_py.py AGENT TENANT

AGENT is the base URL of an agent whose skill `here` answers the tenant it was called in, served
with the gRPC binding on; TENANT the tenant its card names.

Prints one line per check, `ok ...` or `FAIL ...`, and exits 1 if any check failed.
"""

import asyncio
import sys
import uuid

from urllib.parse import urlsplit

import grpc
import httpx

from google.protobuf.json_format import ParseDict

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import GetTaskRequest, SendMessageRequest
from a2a.utils.constants import TransportProtocol

from checks import expect, report, run  # noqa: E402 - this folder's helpers
import checks  # noqa: E402

AGENT, TENANT = sys.argv[1:3]


def channel(url):
    """A plain-text gRPC channel on the interface's host:port."""
    parts = urlsplit(url if '://' in url else f'//{url}')
    return grpc.aio.insecure_channel(parts.netloc)


def message():
    body = {'messageId': str(uuid.uuid4()), 'role': 'ROLE_USER', 'parts': [{'text': '?'}]}
    return ParseDict({'message': body}, SendMessageRequest())


async def main():
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, AGENT).get_agent_card()
        for binding in [
            TransportProtocol.JSONRPC,
            TransportProtocol.HTTP_JSON,
            TransportProtocol.GRPC,
        ]:
            config = ClientConfig(
                streaming=False,
                httpx_client=http,
                grpc_channel_factory=channel,
                supported_protocol_bindings=[binding],
            )
            client = ClientFactory(config).create(card)

            async def check(client=client):
                answers = [e async for e in client.send_message(message())]
                expect(len(answers) == 1, f'one answer, got {answers}')
                task = answers[0].task
                expect(task.id.startswith(f'{TENANT}:'), f'a task of {TENANT}: {task.id}')
                said = task.artifacts[0].parts[0].text if task.artifacts else ''
                expect(said == TENANT, f'the skill was called in {said!r}')
                # Found again through the same client, in the same tenant.
                again = await client.get_task(GetTaskRequest(id=task.id))
                expect(again.id == task.id, f'found again: {again.id}')

            await run(f'{binding}: the call lands in the tenant the card names', check)
    return checks.exit_status()


if __name__ == '__main__':
    sys.exit(asyncio.run(main()))
