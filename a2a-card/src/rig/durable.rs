//! A model in a loop with tools, run through a durable skill's context ([`ModelLoop`]): each
//! completion and each tool call a step of the skill's journal, so that a run after a crash
//! (or on another replica) gets the model's answers and the tools' results back without
//! calling the model or running a tool again.

use std::collections::BTreeMap;

use futures::StreamExt as _;
use rig_core::DynModel;
use rig_core::completion::{CompletionRequest, CompletionResponse, ToolDefinition, Usage};
use rig_core::error::ProviderError;
use rig_core::message::{Message, ToolResultContent, UserContent};
use rig_core::operation::Completion;
use rig_core::streaming::{Item, StreamEvent};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tracing::Instrument as _;

use super::DynamicTool;
use crate::context::SkillContext;
use crate::skill::SkillError;

/// A model in a loop with tools, inside a durable skill (`#[skill(durable)]`): the model answers
/// or asks for tools, the tools run, their results go back to the model, until it answers
/// without asking for one. Each completion is a step of the task's journal (the messages sent
/// since the last one, a digest of the whole request, and the whole response, tool calls
/// included; not the provider's raw document, which repeats it), and so is each tool call (its
/// arguments and its result): after a crash, or on
/// another replica, the loop gets them back from the journal and goes on from the first that
/// is missing, without sending the conversation again or running a tool twice.
///
/// A tool marked with [`approve`](Self::approve) asks first: the task goes `input-required`
/// with the proposed call as the question's data (`{"tool": NAME, "arguments": {..},
/// "answer": SCHEMA}`, the schema [`approval_schema`]), durable like any question; the answer
/// `yes` (or data `{"approve": true}`) runs it, data `{"arguments": {..}}` runs it with those
/// arguments, anything else tells the model it was denied (with `{"approve": false, "reason":
/// ..}`'s reason, or the answer's text).
///
/// Another agent's skills are tools too ([`agent`](Self::agent)): a call of one is a durable call
/// ([`SkillContext::call`]), so after a crash the loop follows the task the call made there
/// instead of sending it again, and the call carries what is left of the task's budgets. With
/// [`stream_text`](Self::stream_text) the caller sees each completion's text as the model writes
/// it, as chunks of an artifact; only the finished response is journaled.
///
/// A replay whose request differs from the journaled one (a new version changed the prompt,
/// the preamble or the tools) fails the task saying which turn differs: branch on
/// [`SkillContext::patched`] for tasks begun before such a change.
///
/// ```
/// use a2a_card::rig::{DynamicTool, ModelLoop};
/// use a2a_card::rig::rig_core::{message::ToolName, tool::ToolOutput};
/// use a2a_card::testing::ScriptedModel;
/// use a2a_card::{SkillContext, SkillError, agent, skill};
/// use serde_json::json;
///
/// struct Weather { model: ScriptedModel }
/// /// Says the weather.
/// #[agent(url = "https://weather.example.com/a2a")]
/// impl Weather {
///     /// Answers a question about the weather.
///     #[skill(durable)]
///     async fn ask(&self, question: String, ctx: SkillContext) -> Result<String, SkillError> {
///         let forecast = DynamicTool::new(
///             ToolName::new("forecast").map_err(|e| SkillError::Failed(e.to_string()))?,
///             "The forecast for a city",
///             json!({"type": "object", "properties": {"city": {"type": "string"}}}),
///             |_args| Box::pin(async { Ok(ToolOutput::text("sunny")) }),
///         );
///         let done = ModelLoop::new(self.model.model())
///             .preamble("Answer in one sentence.")
///             .tool(forecast)
///             .run(&ctx, question)
///             .await?;
///         Ok(done.text)
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// let model = ScriptedModel::new()
///     .tool_call("forecast", json!({"city": "Paris"}))
///     .text("Sunny in Paris.");
/// let agent = a2a_card::testing::TestAgent::start(
///     a2a_card::server::Server::new(Weather { model: model.clone() }),
/// ).await?;
/// let weather = WeatherClient::connect_with(agent.connect()).await?;
/// assert_eq!(weather.ask("Paris?".into()).await?, "Sunny in Paris.");
/// assert_eq!(model.request_count(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(()) })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub struct ModelLoop {
    model: DynModel<Completion>,
    tools: Vec<DynamicTool>,
    approve: Vec<String>,
    preamble: Option<String>,
    temperature: Option<f64>,
    max_turns: u32,
    max_tokens: Option<u64>,
    stream_text: Option<String>,
    /// The tools that are another agent's skills: called as durable calls.
    #[cfg(feature = "client")]
    agents: Vec<AgentSkill>,
}

/// A tool that is skill `skill` of `agent`.
#[cfg(feature = "client")]
struct AgentSkill {
    tool: String,
    agent: crate::client::RemoteAgent,
    skill: String,
}

impl std::fmt::Debug for ModelLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelLoop")
            .field("model", &self.model.id())
            .field("tools", &self.tools.len())
            .field("approve", &self.approve)
            .field("max_turns", &self.max_turns)
            .field("max_tokens", &self.max_tokens)
            .field("stream_text", &self.stream_text)
            .finish_non_exhaustive()
    }
}

/// How a [`ModelLoop`] ended: the model's last answer, the turns it took, and the tokens its
/// completions used.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Finished {
    /// The text of the model's last answer.
    pub text: String,
    /// How many completions the loop asked for.
    pub turns: u32,
    /// The tokens its completions used, summed.
    pub usage: Usage,
}

/// A completion as the journal keeps it.
#[derive(Serialize, Deserialize)]
struct Turn {
    /// The messages sent since the previous completion (the prompt, or tool results).
    sent: Vec<Message>,
    /// The SHA-256 of the whole request (history and tools), hex.
    digest: String,
    /// What the model answered, or why it did not.
    response: Result<CompletionResponse, String>,
}

/// A tool call as the journal keeps it: what the model gets back.
#[derive(Serialize, Deserialize)]
struct Ran {
    /// The arguments it ran with (the model's, or those an approval gave).
    arguments: Value,
    /// Its result's content, or why it failed (the model reads that too).
    result: Result<Value, String>,
}

impl ModelLoop {
    /// A loop on `model` (any rig completion model: `rig_core::Model<W>` of a provider, or
    /// a test's `ScriptedModel::model()`), with no tool, at most 16 turns.
    pub fn new(model: impl Into<DynModel<Completion>>) -> ModelLoop {
        ModelLoop {
            model: model.into(),
            tools: Vec::new(),
            approve: Vec::new(),
            preamble: None,
            temperature: None,
            max_turns: 16,
            max_tokens: None,
            stream_text: None,
            #[cfg(feature = "client")]
            agents: Vec::new(),
        }
    }

    /// The system prompt.
    pub fn preamble(mut self, preamble: impl Into<String>) -> ModelLoop {
        self.preamble = Some(preamble.into());
        self
    }

    /// The temperature of each completion.
    pub fn temperature(mut self, temperature: f64) -> ModelLoop {
        self.temperature = Some(temperature);
        self
    }

    /// A tool the model may call (a local or remote skill as [`local_tools`](super::local_tools)
    /// and [`remote_tools`](super::remote_tools) give them, or any rig `DynamicTool`).
    pub fn tool(mut self, tool: DynamicTool) -> ModelLoop {
        self.tools.push(tool);
        self
    }

    /// Tools the model may call.
    pub fn tools(mut self, tools: impl IntoIterator<Item = DynamicTool>) -> ModelLoop {
        self.tools.extend(tools);
        self
    }

    /// The skills of `agent` as tools, named by their ids with the parameters of their input
    /// schemas (as [`remote_tools`](super::remote_tools) gives them, its answer tool among
    /// them; feature `client`). Unlike a tool added with [`tool`](Self::tool), which runs as a
    /// step of the journal (run again when the process stopped inside it), a call of one of
    /// these skills is a durable call ([`SkillContext::call`]): the task it made at the agent
    /// is journaled before it is followed, so a run after a crash follows that task to its
    /// answer instead of sending the call again; the call carries what is left of the task's
    /// time and token budgets; and a task made there that has not answered when this one ends
    /// is cancelled.
    ///
    /// ```no_run
    /// # use a2a_card::rig::ModelLoop;
    /// # async fn run(ctx: a2a_card::SkillContext, model: a2a_card::testing::ScriptedModel) -> Result<(), Box<dyn std::error::Error>> {
    /// let hotels = a2a_card::client::RemoteAgent::discover("http://127.0.0.1:8082").await?;
    /// let done = ModelLoop::new(model.model())
    ///     .agent(&hotels)
    ///     .run(&ctx, "A room in Lisbon for two nights")
    ///     .await?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "client")]
    pub fn agent(mut self, agent: &crate::client::RemoteAgent) -> ModelLoop {
        for skill in agent.skills() {
            if let Ok(tool) = super::remote_tool(agent, skill.id()) {
                self.agents.push(AgentSkill {
                    tool: tool.name().to_string(),
                    agent: agent.clone(),
                    skill: skill.id().to_owned(),
                });
                self.tools.push(tool);
            }
        }
        self.tools.extend(super::answer_tool(agent));
        self
    }

    /// Streams each completion's text to the caller while the model writes it: each delta a
    /// chunk of an artifact named `artifact` (one artifact per completion that writes text;
    /// a completion that only calls tools sends none). Only the finished response is journaled:
    /// a completion the journal holds is not streamed again, and one cut short by a crash is
    /// asked for and streamed again.
    ///
    /// ```
    /// # use a2a_card::rig::ModelLoop;
    /// # let model = a2a_card::testing::ScriptedModel::new();
    /// let looped = ModelLoop::new(model.model()).stream_text("reply");
    /// ```
    pub fn stream_text(mut self, artifact: impl Into<String>) -> ModelLoop {
        self.stream_text = Some(artifact.into());
        self
    }

    /// Tool `name` runs only once the caller approves each call of it (see the type's docs).
    pub fn approve(mut self, name: impl Into<String>) -> ModelLoop {
        self.approve.push(name.into());
        self
    }

    /// At most `turns` completions (16 by default): past them the task fails saying so.
    pub fn max_turns(mut self, turns: u32) -> ModelLoop {
        self.max_turns = turns;
        self
    }

    /// A budget of `tokens` (input and output, summed over the completions): once spent, no
    /// completion is asked for, and the task fails saying so. The task's own budget of tokens, where its
    /// caller gave one ([`SkillContext::token_budget`], [`crate::budget`]), stops it too: each
    /// completion's usage is counted against it, and a call of another agent sends on what is
    /// left.
    pub fn max_tokens(mut self, tokens: u64) -> ModelLoop {
        self.max_tokens = Some(tokens);
        self
    }

    /// Runs the loop on `prompt` through `ctx`, until the model answers without calling a
    /// tool: its answer, turns and usage. Fails when the model fails, the turns or the tokens
    /// run out, or a replay does not match its journal.
    pub async fn run(
        &self,
        ctx: &SkillContext,
        prompt: impl Into<String>,
    ) -> Result<Finished, SkillError> {
        let mut usage = Usage::new();
        let mut turns = 0;
        let ran = self.turns(ctx, prompt.into(), &mut usage, &mut turns).await;
        // What the loop used, in the task's metadata, however it ended.
        ctx.set_metadata(
            USAGE_METADATA,
            &json!({
                "model": self.model.id(),
                "turns": turns,
                "inputTokens": usage.input_tokens.unwrap_or(0),
                "outputTokens": usage.output_tokens.unwrap_or(0),
            }),
        );
        ran
    }

    /// The loop's turns, counting its usage and turns as they go.
    async fn turns(
        &self,
        ctx: &SkillContext,
        prompt: String,
        usage: &mut Usage,
        turns: &mut u32,
    ) -> Result<Finished, SkillError> {
        let definitions: Vec<ToolDefinition> = self.tools.iter().map(|t| t.definition()).collect();
        let mut history: Vec<Message> = self.preamble.iter().map(Message::system).collect();
        let mut sent = vec![Message::user(prompt)];
        for turn in 1..=self.max_turns {
            // No completion once a budget is spent.
            let spent = usage.input_tokens.unwrap_or(0) + usage.output_tokens.unwrap_or(0);
            if let Some(max) = self.max_tokens
                && spent >= max
            {
                return Err(SkillError::Failed(format!(
                    "the token budget is spent: {spent} tokens used of {max}, after {} model turn(s)",
                    turn - 1
                )));
            }
            if let (Some(0), Some(given)) = (ctx.token_budget(), ctx.tokens_given()) {
                return Err(SkillError::Failed(format!(
                    "the task's token budget is spent: its caller gave {given} tokens, and {} model turn(s) used them",
                    turn - 1
                )));
            }
            history.extend(sent.iter().cloned());
            let mut request = CompletionRequest::new(Message::user(""));
            request.chat_history = history.clone();
            request.tools = definitions.clone();
            request.temperature = self.temperature;
            let digest = digest(&history, &definitions);
            let model = self.model.clone();
            let journaled: Turn = ctx
                .step(&format!("model turn {turn}"), async move {
                    let span = crate::server::telemetry::completion_span(
                        model.name(),
                        model.id().unwrap_or("unknown"),
                        turn,
                    );
                    let response = match &self.stream_text {
                        None => model.call(request).instrument(span.clone()).await,
                        Some(artifact) => {
                            streamed(ctx, &model, request, artifact)
                                .instrument(span.clone())
                                .await
                        }
                    };
                    let response = response
                        .map(|mut response| {
                            // The provider's own document repeats the response: not journaled.
                            response.raw = Value::Null;
                            response
                        })
                        .map_err(|e| e.to_string());
                    match &response {
                        Ok(r) => {
                            if let Some(n) = r.usage.input_tokens {
                                span.record("gen_ai.usage.input_tokens", n);
                            }
                            if let Some(n) = r.usage.output_tokens {
                                span.record("gen_ai.usage.output_tokens", n);
                            }
                        }
                        Err(_) => {
                            span.record("error.type", "provider");
                        }
                    }
                    Turn {
                        sent: std::mem::take(&mut sent),
                        digest,
                        response,
                    }
                })
                .await?;
            let now = self::digest(&history, &definitions);
            if journaled.digest != now {
                return Err(SkillError::Failed(format!(
                    "model turn {turn} was journaled for another request (the prompt, the preamble, the tools or an answer before it changed since the task began); a new version that changes them must branch on ctx.patched(..) for the tasks begun before"
                )));
            }
            let response = journaled
                .response
                .map_err(|e| SkillError::Failed(format!("the model failed: {e}")))?;
            *turns = turn;
            *usage = add(*usage, response.usage);
            ctx.spend_tokens(
                response.usage.input_tokens.unwrap_or(0)
                    + response.usage.output_tokens.unwrap_or(0),
            );
            history.extend(response.message());
            let calls: Vec<_> = response.tool_calls().cloned().collect();
            if calls.is_empty() {
                return Ok(Finished {
                    text: response.text(),
                    turns: turn,
                    usage: *usage,
                });
            }
            let mut results = Vec::with_capacity(calls.len());
            for call in calls {
                let name = call.function.name.to_string();
                let arguments = Value::Object(call.function.arguments.clone());
                let content = match self.approved(ctx, &name, arguments).await? {
                    Err(denied) => vec![ToolResultContent::text(denied)],
                    Ok(arguments) => {
                        let ran = self
                            .call(ctx, turn, &call.id.to_string(), &name, arguments)
                            .await?;
                        match ran.result {
                            Ok(content) => serde_json::from_value(content).unwrap_or_else(|e| {
                                vec![ToolResultContent::text(format!(
                                    "the journaled result of tool `{name}` does not read back: {e}"
                                ))]
                            }),
                            Err(why) => vec![ToolResultContent::text(why)],
                        }
                    }
                };
                results.push(UserContent::tool_result(
                    call.id,
                    call.function.name,
                    content,
                ));
            }
            sent = vec![Message::User { content: results }];
        }
        Err(SkillError::Failed(format!(
            "the model did not answer within {} turns",
            self.max_turns
        )))
    }

    /// Whether tool call `name(arguments)` may run, and with which arguments; `Err` with what
    /// the model is told when the caller denied it.
    async fn approved(
        &self,
        ctx: &SkillContext,
        name: &str,
        arguments: Value,
    ) -> Result<Result<Value, String>, SkillError> {
        if !self.approve.iter().any(|a| a == name) {
            return Ok(Ok(arguments));
        }
        let question = format!(
            "Approve the call of tool `{name}` with {arguments}? Answer yes, no (with a reason), or data {{\"arguments\": {{..}}}} to run it with other arguments."
        );
        let proposal = json!({
            "tool": name,
            "arguments": arguments,
            "answer": approval_schema(),
        });
        let answer = ctx
            .ask_with_data(question, &proposal)
            .await
            .map_err(|e| SkillError::Failed(e.to_string()))?;
        let data: Option<BTreeMap<String, Value>> = answer.data().ok();
        if let Some(data) = data {
            if let Some(edited) = data.get("arguments") {
                return Ok(Ok(edited.clone()));
            }
            match data.get("approve") {
                Some(Value::Bool(true)) => return Ok(Ok(arguments)),
                Some(Value::Bool(false)) => {
                    let reason = data
                        .get("reason")
                        .and_then(Value::as_str)
                        .unwrap_or("no reason given");
                    return Ok(Err(format!(
                        "the caller did not approve this call of `{name}`: {reason}"
                    )));
                }
                _ => {}
            }
        }
        let text = answer.text().trim();
        if ["yes", "y", "approve", "approved", "ok"]
            .iter()
            .any(|y| text.eq_ignore_ascii_case(y))
        {
            return Ok(Ok(arguments));
        }
        let reason = if text.is_empty() {
            "no reason given"
        } else {
            text
        };
        Ok(Err(format!(
            "the caller did not approve this call of `{name}`: {reason}"
        )))
    }

    /// Runs tool `name` with `arguments` as a step (once, its result journaled).
    async fn call(
        &self,
        ctx: &SkillContext,
        turn: u32,
        id: &str,
        name: &str,
        arguments: Value,
    ) -> Result<Ran, SkillError> {
        let tool = self.tools.iter().find(|t| t.name().as_str() == name);
        let span = crate::server::telemetry::tool_span(name, id);
        #[cfg(feature = "client")]
        if let (Some(tool), Some(skill)) = (tool, self.agents.iter().find(|a| a.tool == name)) {
            // A durable call of its own (journaled by the call): no step around it.
            let result = match violations(&tool.definition().parameters, &arguments) {
                Some(why) => Err(format!(
                    "the arguments of `{name}` do not follow its parameters' schema: {why}; call it again with arguments that do"
                )),
                None => {
                    super::remote::call_within(ctx, &skill.agent, &skill.skill, arguments.clone())
                        .instrument(span.clone())
                        .await
                        .and_then(|output| {
                            serde_json::to_value(&output).map_err(|e| {
                                rig_core::tool::ToolExecutionError::other(e.to_string())
                            })
                        })
                        .map_err(|e| e.to_string())
                }
            };
            if result.is_err() {
                span.record("error.type", "tool");
            }
            return Ok(Ran { arguments, result });
        }
        let step = format!("tool {name} (turn {turn}, call {id})");
        let names = || {
            self.tools
                .iter()
                .map(|t| t.name().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        ctx.step(&step, async move {
            let result = match tool {
                None => Err(format!(
                    "there is no tool `{name}`; the tools are: {}",
                    names()
                )),
                // Told to the model, which may call again with other arguments.
                Some(tool) => match violations(&tool.definition().parameters, &arguments) {
                    Some(why) => Err(format!(
                        "the arguments of `{name}` do not follow its parameters' schema: {why}; call it again with arguments that do"
                    )),
                    None => match tool
                        .execute(arguments.clone())
                        .instrument(span.clone())
                        .await
                    {
                        Ok(output) => serde_json::to_value(&output).map_err(|e| e.to_string()),
                        Err(e) => Err(e.to_string()),
                    },
                },
            };
            if result.is_err() {
                span.record("error.type", "tool");
            }
            Ran { arguments, result }
        })
        .await
    }
}

/// A completion of `model` streamed: each text delta sent as a chunk of artifact `artifact`
/// as it comes, then the response the stream folds into.
async fn streamed(
    ctx: &SkillContext,
    model: &DynModel<Completion>,
    request: CompletionRequest,
    artifact: &str,
) -> Result<CompletionResponse, ProviderError> {
    let mut stream = model.stream(request)?;
    let mut chunks = ctx.artifact::<String>(artifact);
    while let Some(item) = stream.next().await {
        match item {
            // A caller gone does not stop the completion: its response is journaled.
            Ok(Item::Event(StreamEvent::Text { text, .. })) if !text.is_empty() => {
                let _ = chunks.send(text).await;
            }
            Ok(_) => {}
            // The stream ends after its error, which `finish` gives.
            Err(_) => break,
        }
    }
    chunks.close().await;
    stream.finish().await
}

/// The key under which a model loop puts what it used in its task's metadata:
/// `{"model": ID, "turns": N, "inputTokens": N, "outputTokens": N}` (the last loop's, where a
/// task runs several).
pub const USAGE_METADATA: &str = "https://github.com/a2a-card/a2a-card/model-usage/v1";

/// The JSON Schema of an approval's answer, as a question proposing a tool call carries it
/// (`answer`): approve, deny with a reason, or run with other arguments. Text answers too:
/// `yes` approves, anything else denies with that text as the reason.
pub fn approval_schema() -> Value {
    json!({
        "oneOf": [
            {"type": "object", "properties": {"approve": {"const": true}}, "required": ["approve"]},
            {"type": "object", "properties": {"approve": {"const": false}, "reason": {"type": "string"}}, "required": ["approve"]},
            {"type": "object", "properties": {"arguments": {"type": "object"}}, "required": ["arguments"]}
        ]
    })
}

/// How `arguments` break the JSON Schema `parameters` (each violation at its JSON pointer),
/// or `None` when they follow it (or the schema does not compile: the tool judges then).
fn violations(parameters: &Value, arguments: &Value) -> Option<String> {
    let validator = jsonschema::validator_for(parameters).ok()?;
    let found: Vec<String> = validator
        .iter_errors(arguments)
        .map(|e| {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() { "/".to_owned() } else { at };
            format!("at {at}: {e}")
        })
        .collect();
    (!found.is_empty()).then(|| found.join("; "))
}

/// The SHA-256 of a request's history and tools, hex.
fn digest(history: &[Message], tools: &[ToolDefinition]) -> String {
    let bytes =
        serde_json::to_vec(&json!({"history": history, "tools": tools})).unwrap_or_default();
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Two usages summed.
fn add(total: Usage, more: Usage) -> Usage {
    let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    Usage::new()
        .input_tokens(sum(total.input_tokens, more.input_tokens))
        .output_tokens(sum(total.output_tokens, more.output_tokens))
}
