//! The skills of a remote agent as rig tools, called through the client.

use std::future::IntoFuture;

use futures::StreamExt;
use rig_core::message::ToolName;
use rig_core::tool::{DynamicTool, ToolExecutionError, ToolOutput};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{
    Gathered, Takes, answer_name, answer_parameters, invalid_arguments, question, takes,
    text_argument,
};
use crate::client::{ClientError, Content, Event, Output, Payload, RemoteAgent, TaskOutcome};

/// Reads the card at `url` and gives [`remote_tools`] of the agent.
///
/// ```no_run
/// # async fn run() -> Result<(), a2a_card::client::ClientError> {
/// let tools = a2a_card::rig::tools_at("http://127.0.0.1:8080").await?;
/// # Ok(()) }
/// ```
pub async fn tools_at(url: impl Into<String>) -> Result<Vec<DynamicTool>, ClientError> {
    Ok(remote_tools(&RemoteAgent::discover(url).await?))
}

/// One rig tool per skill of `agent`, in the card's order ([`remote_tool`]), then the agent's
/// [`answer_tool`] (for the questions its skills ask).
///
/// ```no_run
/// # async fn run() -> Result<(), a2a_card::client::ClientError> {
/// let agent = a2a_card::client::RemoteAgent::discover("http://127.0.0.1:8080").await?;
/// for tool in a2a_card::rig::remote_tools(&agent) {
///     println!("{}: {}", tool.name(), tool.definition().parameters);
/// }
/// # Ok(()) }
/// ```
pub fn remote_tools(agent: &RemoteAgent) -> Vec<DynamicTool> {
    let mut tools: Vec<DynamicTool> = agent
        .skills()
        .filter_map(|s| remote_tool(agent, s.id()).ok())
        .collect();
    tools.extend(answer_tool(agent));
    tools
}

/// The skill `skill` of `agent` as a rig tool: its name the skill's id, its description the
/// skill's, its parameters the skill's input schema from the card (`{"text": ...}` for a skill
/// that takes text, `{"type": "object"}` for plain JSON).
///
/// Calling it checks the arguments against the schema, sends them as the skill's input
/// (streamed when the card says the agent streams, else one blocking call), follows the task to
/// its end and gives its output: data as JSON (an array of a streamed output's items), text as
/// text; data is checked against the skill's output schema first. A tool error when the
/// arguments break the schema (each violation by its JSON pointer), when the agent refuses the
/// request, or when the task fails, is cancelled or rejected (with its message). When the task
/// asks a question, the result is `{"state": "input-required", "task_id", "question",
/// "answer_with"}`: the model answers with the tool `answer_with` names (see [`answer_tool`]).
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = a2a_card::client::RemoteAgent::discover("http://127.0.0.1:8080").await?;
/// let tool = a2a_card::rig::remote_tool(&agent, "fight-comparison")?;
/// let verdict = tool.execute(serde_json::json!({"a": "Lion", "b": "Tiger"})).await?;
/// println!("{}", verdict.render());
/// # Ok(()) }
/// ```
pub fn remote_tool(agent: &RemoteAgent, skill: &str) -> Result<DynamicTool, ClientError> {
    let remote = agent.skill(skill)?;
    let name = ToolName::new(remote.id()).map_err(|_| ClientError::UnknownSkill {
        skill: skill.to_owned(),
        available: agent.skills().map(|s| s.id().to_owned()).collect(),
    })?;
    let (takes, parameters) = takes(agent.card(), remote.declaration());
    let description = remote.declaration().description.clone();
    let (agent, skill) = (agent.clone(), remote.id().to_owned());
    Ok(DynamicTool::new(
        name,
        description,
        parameters,
        move |args| {
            let (agent, skill, takes) = (agent.clone(), skill.clone(), takes.clone());
            Box::pin(async move { call_remote(&agent, &skill, &takes, args).await })
        },
    ))
}

/// The skill `skill` of `agent` as a typed rig tool: named, described and with parameters as
/// [`remote_tool`] gives them, but called through `call`, typically a method of the typed
/// client `#[agent]` generates. The arguments are checked against the skill's input schema
/// (each violation a tool error naming its field), read as `I`, given to `call`, and its
/// output (validated by the typed client) is the tool's result as JSON. A task that asks a
/// question gives the same `input-required` result as [`remote_tool`]; other errors are tool
/// errors.
///
/// ```no_run
/// use a2a_card::{Schema, agent, skill};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, JsonSchema, Schema)]
/// pub struct Pair { pub a: String, pub b: String }
/// #[derive(Serialize, Deserialize, JsonSchema, Schema)]
/// pub struct Verdict { pub winner: String }
///
/// pub struct Judge;
/// /// Picks winners.
/// #[agent(url = "http://127.0.0.1:8080")]
/// impl Judge {
///     /// Picks the winner of a pair.
///     #[skill]
///     fn pick(&self, pair: Pair) -> Verdict { Verdict { winner: pair.a } }
/// }
///
/// # async fn run() -> Result<(), a2a_card::client::ClientError> {
/// let judge = JudgeClient::connect("http://127.0.0.1:8080").await?;
/// let remote = judge.remote().clone();
/// // `Pair` in, `Verdict` out, checked against the card's schemas on the way.
/// let tool = a2a_card::rig::typed_tool(&remote, "pick", move |pair: Pair| judge.pick(pair))?;
/// # Ok(()) }
/// ```
pub fn typed_tool<I, O, F, C>(
    agent: &RemoteAgent,
    skill: &str,
    call: F,
) -> Result<DynamicTool, ClientError>
where
    I: DeserializeOwned + Send + 'static,
    O: Serialize + 'static,
    F: Fn(I) -> C + Send + Sync + 'static,
    C: IntoFuture<Output = Result<O, ClientError>>,
    C::IntoFuture: Send + 'static,
{
    let remote = agent.skill(skill)?;
    let name = ToolName::new(remote.id()).map_err(|_| ClientError::UnknownSkill {
        skill: skill.to_owned(),
        available: agent.skills().map(|s| s.id().to_owned()).collect(),
    })?;
    let (takes, parameters) = takes(agent.card(), remote.declaration());
    let description = remote.declaration().description.clone();
    let (agent, call) = (agent.clone(), std::sync::Arc::new(call));
    let answer_with = answer_tool_name(&agent);
    Ok(DynamicTool::new(
        name,
        description,
        parameters,
        move |args| {
            let checked = match &takes {
                Takes::Schema(schema) => agent
                    .validate(schema, &args)
                    .map_err(|e| client_error(None, e)),
                Takes::Json | Takes::Text => Ok(()),
            };
            let input = checked.and_then(|()| {
                serde_json::from_value::<I>(args).map_err(|e| {
                    ToolExecutionError::invalid_args(format!("the arguments cannot be read: {e}"))
                })
            });
            let pending = input.map(|input| call(input).into_future());
            let answer_with = answer_with.clone();
            Box::pin(async move {
                match pending?.await {
                    Ok(output) => {
                        let value = serde_json::to_value(output).map_err(|e| {
                            ToolExecutionError::other(format!("the output cannot be written: {e}"))
                        })?;
                        Ok(match value {
                            Value::String(text) => ToolOutput::text(text),
                            value => ToolOutput::json(value),
                        })
                    }
                    Err(ClientError::InputRequired {
                        task_id,
                        question: q,
                        ..
                    }) => Ok(question(&task_id, &q, &answer_with)),
                    Err(ClientError::TaskFailed {
                        task_id,
                        state,
                        message,
                    }) => Err(ended(Some(&task_id), &state, message)),
                    Err(e) => Err(client_error(None, e)),
                }
            })
        },
    ))
}

/// The name of `agent`'s answer tool: `answer-` and the agent's name in kebab-case.
fn answer_tool_name(agent: &RemoteAgent) -> String {
    answer_name(&agent.card().name)
}

/// The tool that answers a question a skill of `agent` asked (a tool result with `"state":
/// "input-required"`): named `answer-` and the agent's name in kebab-case
/// (`answer-trip-planner`), taking `{"task_id": "...", "text": "..."}`. It sends the text on
/// that task and gives what follows, as a skill's tool does. `None` when a skill of the agent
/// already has that name.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = a2a_card::client::RemoteAgent::discover("http://127.0.0.1:8081").await?;
/// let answer = a2a_card::rig::answer_tool(&agent).expect("no skill has its name");
/// assert_eq!(answer.name(), "answer-trip-planner");
/// # Ok(()) }
/// ```
pub fn answer_tool(agent: &RemoteAgent) -> Option<DynamicTool> {
    let name = answer_tool_name(agent);
    if agent.skills().any(|s| s.id() == name) {
        return None;
    }
    let tool_name = ToolName::new(name.clone()).ok()?;
    let description = format!(
        "Answers the question a skill of {} asked (a result with \"state\": \"input-required\"): the task's id and the answer, in plain text.",
        agent.card().name
    );
    let parameters = answer_parameters();
    let agent = agent.clone();
    Some(DynamicTool::new(
        tool_name,
        description,
        parameters,
        move |args| {
            let agent = agent.clone();
            Box::pin(async move { answer_remote(&agent, args).await })
        },
    ))
}

async fn answer_remote(agent: &RemoteAgent, args: Value) -> Result<ToolOutput, ToolExecutionError> {
    let (task_id, text) = super::answer_arguments(&args)?;
    let mut message = a2a::Message::new(a2a::Role::User, vec![a2a::Part::text(text)]);
    message.task_id = Some(task_id);
    let answer_with = answer_tool_name(agent);
    if streams(agent) {
        let run = agent
            .stream_message(message)
            .await
            .map_err(|e| client_error(None, e))?;
        follow(run, None, &answer_with).await
    } else {
        let outcome = agent
            .send_message(message, false)
            .await
            .map_err(|e| client_error(None, e))?;
        settle(None, outcome, &answer_with)
    }
}

fn streams(agent: &RemoteAgent) -> bool {
    agent.card().capabilities.streaming == Some(true)
}

async fn call_remote(
    agent: &RemoteAgent,
    skill: &str,
    takes: &Takes,
    args: Value,
) -> Result<ToolOutput, ToolExecutionError> {
    let payload = match takes {
        Takes::Schema(_) | Takes::Json => Payload::data(args),
        Takes::Text => Payload::text(text_argument(&args)?),
    };
    let output_schema = agent.skill(skill).ok().and_then(|s| s.output_schema_name());
    let checked = OutputCheck {
        agent,
        schema: output_schema.as_deref(),
    };
    let answer_with = answer_tool_name(agent);
    if streams(agent) {
        let run = agent
            .stream(skill, payload)
            .await
            .map_err(|e| client_error(Some(skill), e))?;
        follow(run, Some(checked), &answer_with).await
    } else {
        let outcome = agent
            .call(skill, payload)
            .await
            .map_err(|e| client_error(Some(skill), e))?;
        settle(Some(checked), outcome, &answer_with)
    }
}

/// Calls skill `skill` of `agent` with tool arguments `args` from the running skill of `ctx`,
/// as a durable call ([`crate::SkillContext::call`]: journaled, followed after a crash, within
/// the task's budgets), and gives its result as [`remote_tool`]'s call gives it.
#[cfg(feature = "server")]
pub(crate) async fn call_within(
    ctx: &crate::SkillContext,
    agent: &RemoteAgent,
    skill: &str,
    args: Value,
) -> Result<ToolOutput, ToolExecutionError> {
    let (takes, _) = takes(
        agent.card(),
        agent
            .skill(skill)
            .map_err(|e| client_error(Some(skill), e))?
            .declaration(),
    );
    let payload = match takes {
        Takes::Schema(_) | Takes::Json => Payload::data(args),
        Takes::Text => Payload::text(text_argument(&args)?),
    };
    let output_schema = agent.skill(skill).ok().and_then(|s| s.output_schema_name());
    let checked = OutputCheck {
        agent,
        schema: output_schema.as_deref(),
    };
    let outcome = ctx
        .call(agent, skill, payload)
        .await
        .map_err(|e| client_error(Some(skill), e))?;
    settle(Some(checked), outcome, &answer_tool_name(agent))
}

/// The skill's output schema, to check data outputs against.
#[derive(Clone, Copy)]
struct OutputCheck<'a> {
    agent: &'a RemoteAgent,
    schema: Option<&'a str>,
}

impl OutputCheck<'_> {
    fn check(&self, value: &Value) -> Result<(), ToolExecutionError> {
        let Some(schema) = self.schema else {
            return Ok(());
        };
        self.agent.validate(schema, value).map_err(|e| {
            ToolExecutionError::provider(format!(
                "the agent's answer does not follow its output schema: {e}"
            ))
        })
    }
}

/// A client error as a tool error: violations name their fields; a refusal is a refusal.
fn client_error(skill: Option<&str>, e: ClientError) -> ToolExecutionError {
    match &e {
        ClientError::InvalidInput { schema, violations } => invalid_arguments(schema, violations),
        ClientError::Rejected {
            violations,
            message,
            ..
        } if !violations.is_empty() => {
            let schema = skill.unwrap_or("the skill's input schema");
            invalid_arguments(schema, violations).with_model_feedback(format!(
                "the agent rejected the arguments: {message}; {}",
                invalid_arguments(schema, violations).message()
            ))
        }
        ClientError::Rejected { .. } => ToolExecutionError::refused(e.to_string()),
        ClientError::UnsupportedInput { .. } | ClientError::UnknownSkill { .. } => {
            ToolExecutionError::invalid_args(e.to_string())
        }
        ClientError::Unreachable { .. } | ClientError::Transport(_) => {
            ToolExecutionError::network(e.to_string())
        }
        _ => ToolExecutionError::other(e.to_string()),
    }
}

fn ended(
    task_id: Option<&str>,
    state: &a2a::TaskState,
    text: Option<String>,
) -> ToolExecutionError {
    let what = format!(
        "task {} ended {}{}",
        task_id.unwrap_or("(unknown)"),
        crate::v0_3::state_name(state),
        text.map(|t| format!(": {t}")).unwrap_or_default()
    );
    if *state == a2a::TaskState::Rejected {
        ToolExecutionError::refused(what)
    } else {
        ToolExecutionError::other(what)
    }
}

fn gather(
    gathered: &mut Gathered,
    output: Output,
    checked: Option<OutputCheck<'_>>,
) -> Result<(), ToolExecutionError> {
    match output.content {
        Content::Text(t) => gathered.push_text(&t),
        Content::Data { value, .. } => {
            if let Some(checked) = checked {
                checked.check(&value)?;
            }
            gathered.data.push(value);
        }
        Content::File {
            name,
            media_type,
            bytes,
            url,
        } => gathered.files.push(json!({"file": {
            "name": name, "mediaType": media_type, "url": url,
            "bytes": bytes.map(|b| b.len()),
        }})),
    }
    Ok(())
}

/// Follows a streamed task to its end, or to its question.
async fn follow(
    mut run: crate::client::Run,
    checked: Option<OutputCheck<'_>>,
    answer_with: &str,
) -> Result<ToolOutput, ToolExecutionError> {
    let mut gathered = Gathered::default();
    while let Some(event) = run.next().await {
        match event.map_err(|e| client_error(None, e))? {
            Event::Output(output) => gather(&mut gathered, output, checked)?,
            Event::Question { text, .. } => {
                let task = run.task_id().unwrap_or_default().to_owned();
                return Ok(question(&task, &text, answer_with));
            }
            Event::Finished { state, text } if state != a2a::TaskState::Completed => {
                return Err(ended(run.task_id(), &state, text));
            }
            Event::Message(m) => {
                for part in &m.parts {
                    let output = Output {
                        artifact_id: None,
                        artifact_name: None,
                        content: Content::of_part(part),
                    };
                    gather(&mut gathered, output, checked)?;
                }
            }
            Event::Finished { .. } | Event::Status { .. } => {}
        }
    }
    Ok(gathered.into_output())
}

/// The result of a task a blocking call gave: done, asking, or failed.
fn settle(
    checked: Option<OutputCheck<'_>>,
    outcome: TaskOutcome,
    answer_with: &str,
) -> Result<ToolOutput, ToolExecutionError> {
    if let Some(state) = outcome.state() {
        if matches!(
            state,
            a2a::TaskState::InputRequired | a2a::TaskState::AuthRequired
        ) {
            let task = outcome.task_id().unwrap_or_default();
            let text = outcome.status_text().unwrap_or_default();
            return Ok(question(task, &text, answer_with));
        }
        if state.is_terminal() && state != a2a::TaskState::Completed {
            return Err(ended(outcome.task_id(), &state, outcome.status_text()));
        }
    }
    let mut gathered = Gathered::default();
    for output in outcome.outputs() {
        gather(&mut gathered, output, checked)?;
    }
    Ok(gathered.into_output())
}
