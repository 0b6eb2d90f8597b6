"""An agent on the official A2A Python SDK 0.3 (JSON-RPC 0.3 only), called by
tests/sdks/remote_0_3.rs through a2a_card::client.

    python a2a_py_0_3_agent.py PORT

Skill `echo`: text in, the words back as chunks of one streamed artifact `words`, with a
progress status first; data in, `{"echo": DATA}` as a data artifact. Text `ask` makes it ask
"Which word?" (input-required) and echo the answer. Text `fail` fails the task.
"""

import sys

import uvicorn

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    DataPart,
    Part,
    TaskState,
    TextPart,
)
from a2a.utils import new_agent_text_message, new_task


class Echo(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            task = new_task(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        data = [p.root.data for p in context.message.parts if isinstance(p.root, DataPart)]
        text = context.get_user_input()
        if context.current_task is not None and context.current_task.status.state == TaskState.input_required:
            await updater.add_artifact([Part(root=TextPart(text=text))], name='answer')
            await updater.complete()
            return
        await updater.update_status(
            TaskState.working, new_agent_text_message('echoing', task.context_id, task.id)
        )
        if data:
            await updater.add_artifact([Part(root=DataPart(data={'echo': data[0]}))], name='echo')
        elif text == 'ask':
            await updater.update_status(
                TaskState.input_required,
                new_agent_text_message('Which word?', task.context_id, task.id),
                final=True,
            )
            return
        elif text == 'fail':
            await updater.failed(new_agent_text_message('asked to fail', task.context_id, task.id))
            return
        else:
            words = text.split()
            for i, word in enumerate(words):
                await updater.add_artifact(
                    [Part(root=TextPart(text=word))],
                    artifact_id='words',
                    name='words',
                    append=i > 0,
                    last_chunk=i == len(words) - 1,
                )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError('cancel is not supported')


def main() -> None:
    port = int(sys.argv[1])
    card = AgentCard(
        name='Python Echo',
        description='Echoes text word by word, and data whole; on the A2A Python SDK 0.3.',
        url=f'http://127.0.0.1:{port}/',
        version='1.0.0',
        protocol_version='0.3.0',
        preferred_transport='JSONRPC',
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=['text/plain', 'application/json'],
        default_output_modes=['text/plain', 'application/json'],
        skills=[
            AgentSkill(
                id='echo',
                name='Echo',
                description='Echoes text word by word, and data whole.',
                tags=['echo'],
            )
        ],
    )
    handler = DefaultRequestHandler(agent_executor=Echo(), task_store=InMemoryTaskStore())
    app = A2AStarletteApplication(agent_card=card, http_handler=handler).build()
    uvicorn.run(app, host='127.0.0.1', port=port, log_level='warning')


if __name__ == '__main__':
    main()
