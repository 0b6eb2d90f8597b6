//! The skills of a declared agent in this process as rig tools: called without HTTP, the
//! arguments checked by the dispatcher the server uses.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::channel::{mpsc, oneshot};
use futures::future::{self, Either};
use rig_core::message::ToolName;
use rig_core::tool::{DynamicTool, ToolExecutionError, ToolOutput};
use serde_json::{Value, json};

use super::{
    Gathered, Takes, answer_arguments, answer_name, answer_parameters, invalid_arguments, question,
    takes, text_argument,
};
use crate::agent::Agent;
use crate::builder::BuildError;
use crate::context::{Answer, Signal};
use crate::dispatch::{Decision, DispatchError, Dispatcher, SchemaCompileError};
use crate::file::File;
use crate::skill::{Reply, SkillError};

/// Why the tools of a declared agent cannot be made: only what the compiler could not check
/// about its declaration (see [`Agent::card`]).
///
/// ```
/// # use a2a_card::{agent, skill};
/// # struct Echo;
/// # /// Says back what it is told.
/// # #[agent(url = "http://127.0.0.1:9000")]
/// # impl Echo {
/// #     /// Echoes the text.
/// #     #[skill]
/// #     fn echo(&self, text: String) -> String { text }
/// # }
/// match a2a_card::rig::local_tools(std::sync::Arc::new(Echo)) {
///     Ok(tools) => assert_eq!(tools.len(), 2), // `echo`, and `answer-echo`
///     Err(e) => eprintln!("no tools: {e}"),
/// }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum LocalToolsError {
    /// The agent's card does not build (see [`Agent::card`]).
    Card(&'static BuildError),
    /// One of its input schemas does not compile.
    Schema(SchemaCompileError),
}

impl fmt::Display for LocalToolsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocalToolsError::Card(e) => write!(f, "the agent's card does not build: {e}"),
            LocalToolsError::Schema(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for LocalToolsError {}

/// One rig tool per skill of the declared agent `agent` (its public card's skills, in
/// order), called in this process: no HTTP, no task store. The tool's name is the skill's id,
/// its description the skill's, its parameters the skill's input schema as the card publishes
/// it (`{"text": ...}` for a skill that takes text).
///
/// A call is checked and routed by the same [`Dispatcher`] the server uses, so arguments
/// that break the schema are a tool error listing each violation by its JSON pointer; then
/// the handler runs, its streamed chunks are gathered, and its output is the tool's result
/// (data as JSON, text as text). A handler that fails is a tool error. Dropping the tool's
/// future drops the handler.
///
/// A handler that asks the caller something ([`SkillContext::ask`](crate::SkillContext::ask))
/// waits, and the tool's result is the question, as [`remote_tool`](super::remote_tool) gives
/// it: `{"state": "input-required", "task_id", "question", "answer_with"}`. The last tool is
/// the agent's answer tool, named `answer-` and the agent's name in kebab-case, taking
/// `{"task_id", "text"}`: it gives the handler the answer and what follows is its result. At
/// most 64 calls wait for an answer; a call past that drops the one that waited longest.
///
/// ```
/// use std::sync::Arc;
/// use a2a_card::{Schema, agent, skill};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Deserialize, JsonSchema, Schema)]
/// struct Sum { a: i64, b: i64 }
/// #[derive(Serialize, JsonSchema, Schema)]
/// struct Total { total: i64 }
///
/// struct Calculator;
/// /// Adds numbers.
/// #[agent(url = "http://127.0.0.1:9000")]
/// impl Calculator {
///     /// Adds two integers.
///     #[skill]
///     fn add(&self, sum: Sum) -> Total { Total { total: sum.a + sum.b } }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let tools = a2a_card::rig::local_tools(Arc::new(Calculator)).unwrap();
/// assert_eq!(tools[0].name(), "add");
/// assert_eq!(tools[1].name(), "answer-calculator");
/// let out = tools[0].execute(serde_json::json!({"a": 2, "b": 3})).await.unwrap();
/// assert_eq!(out.as_json(), Some(&serde_json::json!({"total": 5})));
/// let err = tools[0].execute(serde_json::json!({"a": 2})).await.unwrap_err();
/// assert!(err.message().contains("\"b\" is a required property"));
/// # });
/// ```
pub fn local_tools<A: Agent>(agent: Arc<A>) -> Result<Vec<DynamicTool>, LocalToolsError> {
    let card = A::card().map_err(LocalToolsError::Card)?;
    let dispatcher = Arc::new(Dispatcher::for_agent::<A>().map_err(LocalToolsError::Schema)?);
    let answer_with = answer_name(&card.name);
    let waiting = Arc::new(Waiting::default());
    let mut tools = Vec::new();
    for (index, decl) in A::SKILLS.iter().enumerate() {
        let Some(skill) = card.skills.iter().find(|s| s.id == decl.id) else {
            continue;
        };
        let Ok(name) = ToolName::new(skill.id.clone()) else {
            continue;
        };
        let (takes, parameters) = takes(card, skill);
        let (agent, dispatcher, waiting) = (
            Arc::clone(&agent),
            Arc::clone(&dispatcher),
            Arc::clone(&waiting),
        );
        let (skill_id, answer_with) = (decl.id, answer_with.clone());
        tools.push(DynamicTool::new(
            name,
            skill.description.clone(),
            parameters,
            move |args| {
                let started = start(
                    Arc::clone(&agent),
                    &dispatcher,
                    index,
                    skill_id,
                    &takes,
                    args,
                );
                let (waiting, answer_with) = (Arc::clone(&waiting), answer_with.clone());
                Box::pin(async move {
                    let step = drive(started?).await;
                    waiting.result(step, &answer_with)
                })
            },
        ));
    }
    if !A::SKILLS.iter().any(|s| s.id == answer_with)
        && let Ok(name) = ToolName::new(answer_with.clone())
    {
        let description = format!(
            "Answers the question a skill of {} asked (a result with \"state\": \"input-required\"): the task's id and the answer, in plain text.",
            card.name
        );
        tools.push(DynamicTool::new(
            name,
            description,
            answer_parameters(),
            move |args| {
                let (waiting, answer_with) = (Arc::clone(&waiting), answer_with.clone());
                Box::pin(async move {
                    let (task_id, text) = answer_arguments(&args)?;
                    let Some((running, answer)) = waiting.take(&task_id) else {
                        return Err(ToolExecutionError::invalid_args(format!(
                            "/task_id: no question waits under `{task_id}` (each is answered once)"
                        )));
                    };
                    // A handler that stopped waiting is read on to its end all the same.
                    let _ = answer.send(Answer::new(text, None));
                    waiting.result(drive(running).await, &answer_with)
                })
            },
        ));
    }
    Ok(tools)
}

/// How many calls may wait for an answer at once.
const MAX_WAITING: usize = 64;

/// A handler's run: its future, which owns the agent.
type Handler = Pin<Box<dyn Future<Output = Result<Reply, SkillError>> + Send>>;

/// A call in progress: the handler, its events, and the output it has sent so far.
struct Running {
    skill: &'static str,
    handler: Handler,
    events: mpsc::Receiver<Signal>,
    gathered: Gathered,
}

/// Where a call stands after running as far as it can.
enum Step {
    /// It ended: its result.
    Done(Result<ToolOutput, ToolExecutionError>),
    /// It asks `question` and waits for the answer on `answer`.
    Asked {
        question: String,
        answer: oneshot::Sender<Answer>,
        running: Running,
    },
}

/// The calls of one agent's tools that wait for an answer, oldest first.
#[derive(Default)]
struct Waiting {
    next: AtomicU64,
    calls: Mutex<VecDeque<(String, Running, oneshot::Sender<Answer>)>>,
}

impl Waiting {
    fn calls(
        &self,
    ) -> std::sync::MutexGuard<'_, VecDeque<(String, Running, oneshot::Sender<Answer>)>> {
        self.calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The tool's result for `step`: its output, or the question (the call kept until it is
    /// answered).
    fn result(&self, step: Step, answer_with: &str) -> Result<ToolOutput, ToolExecutionError> {
        match step {
            Step::Done(result) => result,
            Step::Asked {
                question: text,
                answer,
                running,
            } => {
                let id = format!(
                    "{}-{}",
                    running.skill,
                    self.next.fetch_add(1, Ordering::Relaxed) + 1
                );
                let mut calls = self.calls();
                if calls.len() >= MAX_WAITING {
                    calls.pop_front();
                }
                calls.push_back((id.clone(), running, answer));
                Ok(question(&id, &text, answer_with))
            }
        }
    }

    fn take(&self, id: &str) -> Option<(Running, oneshot::Sender<Answer>)> {
        let mut calls = self.calls();
        let at = calls.iter().position(|(i, ..)| i == id)?;
        calls
            .remove(at)
            .map(|(_, running, answer)| (running, answer))
    }
}

/// The message a tool call makes, in the 1.0 shape the dispatcher reads.
fn message_of(takes: &Takes, args: Value) -> Result<Value, ToolExecutionError> {
    let part = match takes {
        Takes::Schema(name) => {
            let mode = crate::schema::SchemaMode::new(name.as_str())
                .map(|m| m.to_string())
                .unwrap_or_else(|| format!("application/json;schema={name}"));
            json!({"data": args, "mediaType": mode})
        }
        Takes::Json => json!({"data": args, "mediaType": crate::dispatch::PLAIN_JSON}),
        Takes::Text => json!({"text": text_argument(&args)?}),
    };
    Ok(json!({"role": "ROLE_USER", "messageId": "rig-tool-call", "parts": [part]}))
}

/// Routes the call as the server would, and links its context: the handler, not yet run.
fn start<A: Agent>(
    agent: Arc<A>,
    dispatcher: &Dispatcher,
    index: usize,
    skill: &'static str,
    takes: &Takes,
    args: Value,
) -> Result<Running, ToolExecutionError> {
    let message = message_of(takes, args)?;
    let mut call = match dispatcher.dispatch_to(index, message, Vec::new()) {
        Decision::Run { call, .. } => call,
        Decision::Reject(DispatchError::InvalidData {
            schema, violations, ..
        }) => return Err(invalid_arguments(&schema, &violations)),
        Decision::Reject(e) => return Err(ToolExecutionError::invalid_args(e.to_string())),
        Decision::FollowUp(_) => {
            return Err(ToolExecutionError::other(
                "the call was read as an answer to a running task",
            ));
        }
    };
    let (handle, events) = call.context.link(skill, 16, None);
    let handler: Handler = Box::pin(async move {
        let outcome = agent.call_skill(index, call).await;
        // The task's end of the link: dropped so that the events end with the handler.
        drop(handle);
        outcome
    });
    Ok(Running {
        skill,
        handler,
        events,
        gathered: Gathered::default(),
    })
}

/// Runs the handler while reading its events, until it returns or asks something.
async fn drive(mut running: Running) -> Step {
    loop {
        let next = match future::select(running.handler.as_mut(), running.events.next()).await {
            Either::Left((outcome, _)) => Either::Left(outcome),
            Either::Right((event, _)) => Either::Right(event),
        };
        let outcome = match next {
            Either::Left(outcome) => outcome,
            Either::Right(Some(Signal::Ask {
                question, answer, ..
            })) => {
                return Step::Asked {
                    question,
                    answer,
                    running,
                };
            }
            Either::Right(Some(event)) => {
                absorb(event, &mut running.gathered);
                continue;
            }
            Either::Right(None) => running.handler.as_mut().await,
        };
        // The handler returned: what it sent is all in the channel already.
        while let Ok(event) = running.events.try_recv() {
            absorb(event, &mut running.gathered);
        }
        return Step::Done(finish(outcome, running.gathered));
    }
}

fn finish(
    outcome: Result<Reply, SkillError>,
    mut gathered: Gathered,
) -> Result<ToolOutput, ToolExecutionError> {
    match outcome {
        Ok(Reply::Streamed) => {}
        Ok(reply) => push_reply(&mut gathered, reply),
        Err(SkillError::Input(m)) => return Err(ToolExecutionError::invalid_args(m)),
        Err(e) => return Err(ToolExecutionError::other(e.to_string())),
    }
    Ok(gathered.into_output())
}

fn absorb(event: Signal, gathered: &mut Gathered) {
    match event {
        Signal::Chunk { reply, .. } => push_reply(gathered, reply),
        // A question after the handler returned has nobody to wait for it: dropped.
        Signal::Ask { .. }
        | Signal::Asked { .. }
        | Signal::Progress(_)
        | Signal::Close { .. }
        | Signal::End { .. } => {}
    }
}

fn push_reply(gathered: &mut Gathered, reply: Reply) {
    match reply {
        Reply::Text(t) => gathered.push_text(&t),
        Reply::Data { value, .. } => gathered.data.push(value),
        Reply::File(file) => gathered.files.push(file_json(&file)),
        Reply::Streamed => {}
    }
}

fn file_json(file: &File) -> Value {
    let mut out = json!({"file": {"name": file.name, "mediaType": file.media_type}});
    match file.url() {
        Some(url) => out["file"]["url"] = json!(url),
        None => out["file"]["bytes"] = json!(file.len()),
    }
    out
}
