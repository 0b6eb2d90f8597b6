//! The official server's [`AgentExecutor`] for a declared agent: the structured input flow,
//! then the skill, then the answer as task events.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use a2a::{
    A2AError, Artifact, Message, Part, PartContent, Role, StreamResponse, TaskArtifactUpdateEvent,
    TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use a2a_server::{AgentExecutor, ExecutorContext, TaskStore};
use futures::StreamExt;
use futures::stream::{self, BoxStream};
use serde_json::Value;

use crate::agent::Agent;
use crate::dispatch::{Decision, Dispatcher, SchemaCompileError};
use crate::schema::SchemaMode;
use crate::skill::{Reply, SkillError};

use super::errors::{dispatch_error, input_error};
use super::message::message_json;

/// Runs a declared agent's skills for the official A2A server.
///
/// For each message: the [dispatcher](Dispatcher) picks the skill (or rejects the message),
/// the skill runs, and its answer becomes task events:
///
/// | answer | events |
/// |---|---|
/// | [`Reply::Data`] | a `working` status, an artifact with one data part whose `mediaType` and `metadata.mimeType` are `application/json;schema=NAME`, a `completed` status |
/// | [`Reply::Text`] | the same with one text part |
/// | [`SkillError::Failed`] (the handler's `Err`) | a `failed` status whose message carries the error's text |
/// | [`SkillError::Input`], or a message the dispatcher rejects | an A2A error (`-32602`, or the dispatcher's code) |
///
/// The dispatcher normally runs before the task exists, in
/// [`StructuredInput`](super::StructuredInput); the executor checks again so that it is correct
/// on its own too. When it has the task store, an error answer also marks the task `failed`, so
/// no task is left `submitted` forever.
///
/// ```
/// use a2a_card::server::SkillExecutor;
/// use a2a_card::{agent, skill};
/// use a2a_card::server::a2a_server::{DefaultRequestHandler, InMemoryTaskStore};
///
/// struct Echo;
/// /// Says back what it is told.
/// #[agent(url = "http://127.0.0.1:9000")]
/// impl Echo {
///     /// Echoes the text.
///     #[skill]
///     fn echo(&self, text: String) -> String { text }
/// }
///
/// let executor = SkillExecutor::new(Echo)?;
/// let handler = DefaultRequestHandler::new(executor, InMemoryTaskStore::new());
/// # drop(handler);
/// # Ok::<(), a2a_card::dispatch::SchemaCompileError>(())
/// ```
pub struct SkillExecutor<A: Agent> {
    agent: Arc<A>,
    dispatcher: Arc<Dispatcher>,
    store: Option<Arc<dyn TaskStore>>,
}

impl<A: Agent> fmt::Debug for SkillExecutor<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillExecutor")
            .field("agent", &A::DECL.source)
            .field("dispatcher", &self.dispatcher)
            .finish_non_exhaustive()
    }
}

impl<A: Agent> SkillExecutor<A> {
    /// The executor of `agent`, with its dispatcher (schemas compiled now).
    pub fn new(agent: A) -> Result<Self, SchemaCompileError> {
        Ok(SkillExecutor::with_parts(
            Arc::new(agent),
            Arc::new(Dispatcher::for_agent::<A>()?),
            None,
        ))
    }

    /// An executor sharing the agent, the dispatcher and the task store.
    pub(crate) fn with_parts(
        agent: Arc<A>,
        dispatcher: Arc<Dispatcher>,
        store: Option<Arc<dyn TaskStore>>,
    ) -> Self {
        SkillExecutor {
            agent,
            dispatcher,
            store,
        }
    }
}

impl<A: Agent> AgentExecutor for SkillExecutor<A> {
    fn execute(
        &self,
        ctx: ExecutorContext,
    ) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let ids = Ids {
            task: ctx.task_id,
            context: ctx.context_id,
        };
        let store = self.store.clone();
        let Some(message) = ctx.message else {
            let err = A2AError::invalid_params("a message is required to run a skill");
            return refuse(store, ids, err);
        };
        let existing_task = message.task_id.clone();
        let json = match message_json(&message) {
            Ok(json) => json,
            Err(err) => return refuse(store, ids, err),
        };
        let (skill, mut call) = match self.dispatcher.dispatch(json, existing_task.as_deref()) {
            Decision::Run { skill, call } => (skill, call),
            Decision::Reject(e) => return refuse(store, ids, dispatch_error(&e)),
        };
        call.context.task_id = Some(ids.task.clone());
        call.context.context_id = Some(ids.context.clone());
        let skill_id = A::SKILLS.get(skill).map(|s| s.id).unwrap_or_default();
        let agent = Arc::clone(&self.agent);
        let working = stream::iter([Ok(ids.status(TaskState::Working, None))]);
        let answer = stream::once(async move {
            let events: Vec<Result<StreamResponse, A2AError>> =
                match agent.call_skill(skill, call).await {
                    Ok(reply) => vec![
                        Ok(ids.artifact(skill_id, reply)),
                        Ok(ids.status(TaskState::Completed, None)),
                    ],
                    Err(e @ SkillError::Input(_)) => {
                        let err = input_error(&e);
                        fail_in_store(store.as_deref(), &ids, &err.message).await;
                        vec![Err(err)]
                    }
                    Err(e) => {
                        let text = e.to_string();
                        vec![Ok(ids.status(TaskState::Failed, Some(text)))]
                    }
                };
            stream::iter(events)
        })
        .flatten();
        Box::pin(working.chain(answer))
    }

    fn cancel(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let ids = Ids {
            task: ctx.task_id,
            context: ctx.context_id,
        };
        // A skill call is one await: there is nothing to stop, only the answer to drop, which
        // the server does once the task is canceled.
        Box::pin(stream::iter([Ok(ids.status(TaskState::Canceled, None))]))
    }
}

/// An error answer: the task (already created by the server) is marked failed, then the error.
fn refuse(
    store: Option<Arc<dyn TaskStore>>,
    ids: Ids,
    err: A2AError,
) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
    Box::pin(stream::once(async move {
        fail_in_store(store.as_deref(), &ids, &err.message).await;
        Err(err)
    }))
}

/// Marks the task failed in the store, with `why` as its status message, when it is still
/// there and not finished.
async fn fail_in_store(store: Option<&dyn TaskStore>, ids: &Ids, why: &str) {
    let Some(store) = store else { return };
    if let Ok(Some(mut task)) = store.get(&ids.task).await {
        if !task.status.state.is_terminal() {
            task.status = TaskStatus {
                state: TaskState::Failed,
                message: Some(ids.agent_message(why.to_owned())),
                timestamp: Some(chrono::Utc::now()),
            };
            // Nothing more to do if the store refuses: the error answer still goes out.
            let _ = store.update(task).await;
        }
    }
}

/// The task and context of one execution.
struct Ids {
    task: String,
    context: String,
}

impl Ids {
    fn agent_message(&self, text: String) -> Message {
        let mut message = Message::new(Role::Agent, vec![Part::text(text)]);
        message.task_id = Some(self.task.clone());
        message.context_id = Some(self.context.clone());
        message
    }

    fn status(&self, state: TaskState, text: Option<String>) -> StreamResponse {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: self.task.clone(),
            context_id: self.context.clone(),
            status: TaskStatus {
                state,
                message: text.map(|t| self.agent_message(t)),
                timestamp: None,
            },
            metadata: None,
        })
    }

    fn artifact(&self, skill_id: &str, reply: Reply) -> StreamResponse {
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: self.task.clone(),
            context_id: self.context.clone(),
            artifact: Artifact {
                artifact_id: a2a::new_artifact_id(),
                name: (!skill_id.is_empty()).then(|| skill_id.to_owned()),
                description: None,
                parts: vec![reply_part(reply)],
                metadata: None,
                extensions: None,
            },
            append: None,
            last_chunk: Some(true),
            metadata: None,
        })
    }
}

/// The part that carries a skill's answer.
pub(crate) fn reply_part(reply: Reply) -> Part {
    match reply {
        Reply::Text(text) => Part::text(text),
        Reply::Data { schema, value } => {
            let mode = SchemaMode::new(schema)
                .map(|m| m.to_string())
                .unwrap_or_else(|| "application/json".to_owned());
            Part {
                content: PartContent::Data(value),
                filename: None,
                metadata: Some(HashMap::from([(
                    "mimeType".to_owned(),
                    Value::String(mode.clone()),
                )])),
                media_type: Some(mode),
            }
        }
    }
}
