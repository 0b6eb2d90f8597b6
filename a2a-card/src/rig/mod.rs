//! Agents that wrap a model (feature `rig`), on [rig](https://docs.rs/rig-core) (`rig-core`,
//! re-exported as [`rig_core`]).
//!
//! Three pieces of glue between declared skills and a model:
//!
//! - **Remote skills as tools** (with the `client` feature): [`remote_tools`] gives one rig
//!   [`DynamicTool`] per skill of a [`RemoteAgent`](crate::client::RemoteAgent): its name the
//!   skill's id, its description the skill's, its parameters the skill's input schema from the
//!   card (`{"text": ...}` for a skill that takes text). Calling it sends the arguments as the
//!   skill's structured input through the client (checked against the schema first), follows the
//!   task to its end, and gives the skill's output as JSON (text as text). A violation, a
//!   refusal or a failed task is a tool error that says why (each violation with its JSON
//!   pointer); a question the skill asks (`input-required`) is a result the model reads and
//!   answers through the agent's answer tool ([`answer_tool`]), on the same task.
//! - **Local skills as tools**: [`local_tools`] gives the same tools for a declared agent in
//!   the process, called without HTTP, the arguments checked against the same schemas by the
//!   same dispatcher the server uses; a question is answered in process, through the agent's
//!   answer tool, by the same handler.
//! - **A model's streamed completion as a skill's stream**: [`TextDeltas`] turns rig's
//!   streamed completion into the `Stream<Item = Result<String, _>>` a streaming skill returns:
//!   each text delta is one chunk of the skill's artifact, sent as it arrives. When the task
//!   is cancelled the server drops the skill's stream, which drops the model request.
//!
//! [`tool_definitions`] gives the tools' definitions from any card, with no client.
//!
//! ```no_run
//! use a2a_card::rig::{TextDeltas, rig_core};
//! use a2a_card::{agent, skill};
//! use rig_core::completion::CompletionRequest;
//! use rig_core::providers::openai::{self, OpenAI};
//!
//! struct Oracle {
//!     model: rig_core::Model<openai::wire::Chat>,
//! }
//!
//! /// Answers questions, streaming the answer as the model writes it.
//! #[agent(url = "http://127.0.0.1:9000")]
//! impl Oracle {
//!     /// Answers a question in a few sentences.
//!     #[skill]
//!     fn ask(&self, question: String) -> impl futures::Stream<Item = Result<String, rig_core::ProviderError>> + Send {
//!         let request = CompletionRequest::new(question).temperature(0.0);
//!         TextDeltas::new(self.model.stream(request))
//!     }
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let model = OpenAI::from_env()?.chat("gpt-4o-mini");
//! a2a_card::serve(Oracle { model }, "127.0.0.1:9000").await?;
//! # Ok(()) }
//! ```

#[cfg(feature = "server")]
mod durable;
mod local;
#[cfg(feature = "client")]
mod remote;

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use rig_core::completion::ToolDefinition;
use rig_core::error::ProviderError;
use rig_core::message::ToolName;
use rig_core::streaming::{CompletionStream, Item, StreamEvent};
use rig_core::tool::{ToolExecutionError, ToolOutput};
use serde_json::{Value, json};

use crate::card::{AgentCard, AgentSkill};
use crate::dispatch::Violation;
use crate::schema::SchemaMode;

#[cfg(feature = "server")]
pub use durable::{Finished, ModelLoop, USAGE_METADATA, approval_schema};
pub use local::{LocalToolsError, local_tools};
#[cfg(feature = "client")]
pub use remote::{answer_tool, remote_tool, remote_tools, tools_at, typed_tool};
/// The rig crate this module builds on (`rig-core`), for its models, requests and tool types.
pub use rig_core;
/// A tool defined at run time (rig's): what [`remote_tools`] and [`local_tools`] give.
pub use rig_core::tool::DynamicTool;

/// The `parameters` of a tool whose skill takes text: `{"text": "..."}`.
///
/// ```
/// let p = a2a_card::rig::text_parameters();
/// assert_eq!(p["required"], serde_json::json!(["text"]));
/// ```
pub fn text_parameters() -> Value {
    crate::ag_ui::text_parameters()
}

/// What one skill takes, as a tool sees it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Takes {
    /// Data following the named schema (its `application/json;schema=NAME` mode).
    Schema(String),
    /// Plain JSON (`application/json`, no schema).
    Json,
    /// Text, as `{"text": ...}`.
    Text,
}

/// What `skill` of `card` takes, and the tool parameters that say so: its input schema from
/// the card, `{"type": "object"}` for plain JSON, `{"text": ...}` for text.
pub(crate) fn takes(card: &AgentCard, skill: &AgentSkill) -> (Takes, Value) {
    let modes = card.input_modes_of(skill);
    let schema = modes
        .iter()
        .filter_map(|m| SchemaMode::parse(m))
        .find_map(|mode| {
            let name = mode.name().to_owned();
            crate::ag_ui::named_schema(card, &name).map(|s| (name, s.clone()))
        });
    if let Some((name, schema)) = schema {
        return (Takes::Schema(name), schema);
    }
    let media = || modes.iter().filter_map(|m| crate::MediaType::parse(m).ok());
    if media().any(|m| m.essence() == crate::dispatch::PLAIN_JSON) {
        (Takes::Json, json!({"type": "object"}))
    } else {
        (Takes::Text, text_parameters())
    }
}

/// The tool definition of each skill of `card`, in the card's order: its name the skill's id,
/// its description the skill's, its parameters the skill's input schema (see the
/// [module docs](self)). Skills whose id cannot name a tool (empty) are left out.
///
/// ```
/// use a2a_card::{Agent, agent, skill};
/// struct Echo;
/// /// Says back what it is told.
/// #[agent(url = "http://127.0.0.1:9000")]
/// impl Echo {
///     /// Echoes the text.
///     #[skill]
///     fn echo(&self, text: String) -> String { text }
/// }
/// let tools = a2a_card::rig::tool_definitions(Echo::card().unwrap());
/// assert_eq!(tools[0].name, "echo");
/// assert_eq!(tools[0].parameters, a2a_card::rig::text_parameters());
/// ```
pub fn tool_definitions(card: &AgentCard) -> Vec<ToolDefinition> {
    card.skills
        .iter()
        .filter_map(|skill| {
            let name = ToolName::new(skill.id.clone()).ok()?;
            Some(ToolDefinition {
                name,
                description: skill.description.clone(),
                parameters: takes(card, skill).1,
            })
        })
        .collect()
}

/// The tool arguments as the message parts of a skill's input: a data part for a schema or
/// plain JSON, the `text` argument for text.
fn text_argument(args: &Value) -> Result<String, ToolExecutionError> {
    match args.get("text") {
        Some(Value::String(text)) => Ok(text.clone()),
        Some(_) => Err(ToolExecutionError::invalid_args(
            "/text: must be a string (the request, in plain text)",
        )),
        None => Err(ToolExecutionError::invalid_args(
            "/text: is required (the request, in plain text)",
        )),
    }
}

/// The name of an agent's answer tool: `answer-` and the agent's name in kebab-case.
fn answer_name(agent_name: &str) -> String {
    let mut slug = String::new();
    for c in agent_name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_matches('-');
    if slug.is_empty() {
        "answer-agent".to_owned()
    } else {
        format!("answer-{slug}")
    }
}

/// The parameters of an answer tool: the task that asked, and the answer.
fn answer_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "task_id": {"description": "The `task_id` of the result that asked", "type": "string"},
            "text": {"description": "The answer, in plain text", "type": "string"}
        },
        "required": ["task_id", "text"]
    })
}

/// The task id and the answer of an answer tool's call.
fn answer_arguments(args: &Value) -> Result<(String, String), ToolExecutionError> {
    let Some(task_id) = args.get("task_id").and_then(Value::as_str) else {
        return Err(ToolExecutionError::invalid_args(
            "/task_id: is required (the `task_id` of the result that asked)",
        ));
    };
    Ok((task_id.to_owned(), text_argument(args)?))
}

/// The result that asks the model a question, to answer with the tool `answer_with`.
fn question(task_id: &str, text: &str, answer_with: &str) -> ToolOutput {
    ToolOutput::json(json!({
        "state": "input-required",
        "task_id": task_id,
        "question": text,
        "answer_with": answer_with,
    }))
}

/// A tool error for arguments that break the skill's input schema: each violation with its
/// JSON pointer, which names the field.
fn invalid_arguments(schema: &str, violations: &[Violation]) -> ToolExecutionError {
    let listed: Vec<String> = violations.iter().map(ToString::to_string).collect();
    ToolExecutionError::invalid_args(format!(
        "the arguments do not follow schema `{schema}`: {}",
        listed.join("; ")
    ))
}

/// The outputs of a finished call, gathered for the model: the data values (one value, or an
/// array of a streamed output's items) as JSON; otherwise the text, the chunks of one
/// artifact joined as sent.
#[derive(Debug, Default)]
struct Gathered {
    data: Vec<Value>,
    text: String,
    files: Vec<Value>,
}

impl Gathered {
    fn push_text(&mut self, text: &str) {
        self.text.push_str(text);
    }

    fn into_output(self) -> ToolOutput {
        let Gathered {
            mut data,
            text,
            files,
        } = self;
        if data.is_empty() && files.is_empty() {
            return ToolOutput::text(text);
        }
        if !text.is_empty() {
            data.push(json!({"text": text}));
        }
        data.extend(files);
        if data.len() == 1 {
            ToolOutput::json(data.remove(0))
        } else {
            ToolOutput::json(Value::Array(data))
        }
    }
}

/// A model's streamed completion as the text a skill streams: each text delta, as it arrives,
/// one item (empty deltas, reasoning and tool-call fragments are skipped). A failure of the
/// model is the last item, an `Err` (which fails the skill's task with its message).
///
/// Return it (or `impl Stream<Item = Result<String, ProviderError>> + Send`) from a
/// `#[skill]` handler: each item becomes a chunk of the skill's artifact. Dropping it drops the
/// model request, so a cancelled task stops the generation.
///
/// ```no_run
/// use a2a_card::rig::{TextDeltas, rig_core};
/// use futures::StreamExt;
/// use rig_core::completion::CompletionRequest;
/// use rig_core::providers::openai::OpenAI;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let model = OpenAI::from_env()?.chat("gpt-4o-mini");
/// let mut deltas = TextDeltas::new(model.stream(CompletionRequest::new("Say hi")));
/// while let Some(delta) = deltas.next().await {
///     print!("{}", delta?);
/// }
/// # Ok(()) }
/// ```
#[must_use = "a stream does nothing unless polled"]
pub struct TextDeltas {
    stream: Option<CompletionStream>,
    failed: Option<ProviderError>,
}

impl std::fmt::Debug for TextDeltas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextDeltas")
            .field("open", &self.stream.is_some())
            .field("failed", &self.failed.is_some())
            .finish()
    }
}

impl TextDeltas {
    /// The text deltas of a streamed completion, as a model's `stream` gives it (a request it
    /// could not encode gives one `Err` item).
    ///
    /// ```no_run
    /// # use a2a_card::rig::{TextDeltas, rig_core};
    /// # use rig_core::completion::CompletionRequest;
    /// # fn run(model: rig_core::DynModel<rig_core::operation::Completion>) {
    /// let deltas = TextDeltas::new(model.stream(CompletionRequest::new("Say hi")));
    /// # }
    /// ```
    pub fn new(stream: Result<CompletionStream, ProviderError>) -> TextDeltas {
        match stream {
            Ok(stream) => TextDeltas {
                stream: Some(stream),
                failed: None,
            },
            Err(e) => TextDeltas {
                stream: None,
                failed: Some(e),
            },
        }
    }
}

impl Stream for TextDeltas {
    type Item = Result<String, ProviderError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(e) = self.failed.take() {
            return Poll::Ready(Some(Err(e)));
        }
        loop {
            let Some(stream) = self.stream.as_mut() else {
                return Poll::Ready(None);
            };
            match Pin::new(stream).poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    self.stream = None;
                    return Poll::Ready(None);
                }
                Poll::Ready(Some(Err(e))) => {
                    self.stream = None;
                    return Poll::Ready(Some(Err(e)));
                }
                Poll::Ready(Some(Ok(Item::Event(StreamEvent::Text { text, .. }))))
                    if !text.is_empty() =>
                {
                    return Poll::Ready(Some(Ok(text)));
                }
                Poll::Ready(Some(Ok(_))) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_gathered_as_text_or_json() {
        let mut g = Gathered::default();
        g.push_text("Hel");
        g.push_text("lo");
        assert_eq!(g.into_output().as_text(), Some("Hello"));
        let g = Gathered {
            data: vec![json!({"winner": "Tiger"})],
            ..Gathered::default()
        };
        assert_eq!(g.into_output().as_json(), Some(&json!({"winner": "Tiger"})));
        let g = Gathered {
            data: vec![json!(1), json!(2)],
            ..Gathered::default()
        };
        assert_eq!(g.into_output().as_json(), Some(&json!([1, 2])));
    }

    #[test]
    fn a_violation_names_its_field() {
        let e = invalid_arguments(
            "fightComparison",
            &[Violation {
                instance_path: "/a".into(),
                schema_path: "/properties/a/type".into(),
                message: "1 is not of type \"string\"".into(),
            }],
        );
        assert!(
            e.message().contains("/a: 1 is not of type"),
            "{}",
            e.message()
        );
        assert_eq!(e.kind(), rig_core::tool::ToolErrorKind::InvalidArgs);
    }

    #[test]
    fn a_failed_request_is_the_one_item() {
        let mut deltas = TextDeltas::new(Err(ProviderError::Truncated));
        use futures::{FutureExt, StreamExt};
        let first = deltas.next().now_or_never();
        assert!(matches!(first, Some(Some(Err(ProviderError::Truncated)))));
        assert!(matches!(deltas.next().now_or_never(), Some(None)));
    }
}
