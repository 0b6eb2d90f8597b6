//! The skills of a declared agent in this process as rig tools: called without HTTP, the
//! arguments checked by the dispatcher the server uses.

use std::fmt;
use std::sync::Arc;

use futures::StreamExt;
use futures::future::{self, Either};
use rig_core::message::ToolName;
use rig_core::tool::{DynamicTool, ToolExecutionError, ToolOutput};
use serde_json::{Value, json};

use super::{Gathered, Takes, invalid_arguments, takes, text_argument};
use crate::agent::Agent;
use crate::builder::BuildError;
use crate::context::Event;
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
///     Ok(tools) => assert_eq!(tools.len(), 1),
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
/// (data as JSON, text as text). A handler that fails, or that asks the caller something
/// (there is nobody to ask in process: the question is in the error), is a tool error.
/// Dropping the tool's future drops the handler.
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
/// let out = tools[0].execute(serde_json::json!({"a": 2, "b": 3})).await.unwrap();
/// assert_eq!(out.as_json(), Some(&serde_json::json!({"total": 5})));
/// let err = tools[0].execute(serde_json::json!({"a": 2})).await.unwrap_err();
/// assert!(err.message().contains("\"b\" is a required property"));
/// # });
/// ```
pub fn local_tools<A: Agent>(agent: Arc<A>) -> Result<Vec<DynamicTool>, LocalToolsError> {
    let card = A::card().map_err(LocalToolsError::Card)?;
    let dispatcher = Arc::new(Dispatcher::for_agent::<A>().map_err(LocalToolsError::Schema)?);
    let mut tools = Vec::new();
    for (index, decl) in A::SKILLS.iter().enumerate() {
        let Some(skill) = card.skills.iter().find(|s| s.id == decl.id) else {
            continue;
        };
        let Ok(name) = ToolName::new(skill.id.clone()) else {
            continue;
        };
        let (takes, parameters) = takes(card, skill);
        let (agent, dispatcher) = (Arc::clone(&agent), Arc::clone(&dispatcher));
        let skill_id = decl.id;
        tools.push(DynamicTool::new(
            name,
            skill.description.clone(),
            parameters,
            move |args| {
                let (agent, dispatcher, takes) =
                    (Arc::clone(&agent), Arc::clone(&dispatcher), takes.clone());
                Box::pin(async move {
                    call_local(&*agent, &dispatcher, index, skill_id, &takes, args).await
                })
            },
        ));
    }
    Ok(tools)
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

async fn call_local<A: Agent>(
    agent: &A,
    dispatcher: &Dispatcher,
    index: usize,
    skill_id: &'static str,
    takes: &Takes,
    args: Value,
) -> Result<ToolOutput, ToolExecutionError> {
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
    let (handle, events) = call.context.link(skill_id, 16);
    let handler = Box::pin(async move {
        let outcome = agent.call_skill(index, call).await;
        // The task's end of the link: dropped so that the events end with the handler.
        drop(handle);
        outcome
    });
    let mut gathered = Gathered::default();
    let mut question = None;
    let mut events = events;
    let mut handler = handler;
    // The handler runs while its events are read; once it has returned, the events it left
    // are read to their end.
    let outcome = loop {
        match future::select(handler, events.next()).await {
            Either::Left((outcome, _)) => break outcome,
            Either::Right((event, pending)) => {
                handler = pending;
                match event {
                    Some(event) => absorb(event, &mut gathered, &mut question),
                    None => break handler.await,
                }
            }
        }
    };
    while let Some(event) = events.next().await {
        absorb(event, &mut gathered, &mut question);
    }
    if let Some(question) = question {
        return Err(ToolExecutionError::other(format!(
            "skill `{skill_id}` asked \"{question}\", and a call in this process cannot answer: call it again with what it asks for"
        )));
    }
    match outcome {
        Ok(Reply::Streamed) => {}
        Ok(reply) => push_reply(&mut gathered, reply),
        Err(SkillError::Input(m)) => return Err(ToolExecutionError::invalid_args(m)),
        Err(e) => return Err(ToolExecutionError::other(e.to_string())),
    }
    Ok(gathered.into_output())
}

fn absorb(event: Event, gathered: &mut Gathered, question: &mut Option<String>) {
    match event {
        Event::Chunk { reply, .. } => push_reply(gathered, reply),
        // Nobody can answer: the sender is dropped, and the handler's `ask` fails.
        Event::Ask { question: q, .. } => *question = Some(q),
        Event::Progress(_) | Event::Close { .. } | Event::End { .. } => {}
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
