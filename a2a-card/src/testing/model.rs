//! A completion model that answers from a script (features `testing` and `rig`), for tests of
//! agents that wrap a model: the model's replies are written up front, and every request it
//! was sent is kept to read back.
//!
//! On rig 0.44 a model is a [`Model`]: a [`Wire`] (what a request becomes, and how a reply's
//! frames decode) bound to a [`Transport`] (what sends the payload and delivers the frames).
//! [`ScriptedWire`] is the wire, whose payload is the request itself; [`ScriptedModel`] is the
//! transport, which records the request and delivers the next reply of its script as frames.
//! Calls and streams run rig's own driver, so a request is prepared, validated and folded into
//! its response exactly as a provider's would be.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};

use rig_core::DynModel;
use rig_core::completion::options::{Mapping, OptionFields, OptionMap};
use rig_core::completion::{
    Accepts, CompletionRequest, CompletionResponse, FinishReason, ReplayTarget, Usage,
};
use rig_core::driver::{Exchange, Model, Opened, Opening, Transport};
use rig_core::error::{EncodeError, ProviderError};
use rig_core::message::{Api, CallId, ToolName};
use rig_core::operation::{Block, Completion, Finish};
use rig_core::streaming::CompletionStream;
use rig_core::wire::{Descriptor, Mode, Wire};
use serde_json::{Value, json};

/// One tool call of a scripted reply: the tool's name, its JSON arguments, and the call's id.
///
/// A call given no id gets `call_N` when its reply joins a [`ScriptedModel`]'s script, `N`
/// its place among all the calls of the script (from 1).
///
/// ```
/// use a2a_card::testing::{ScriptedCall, ScriptedModel};
/// use serde_json::json;
///
/// let model = ScriptedModel::new().tool_calls([
///     ScriptedCall::new("add", json!({"a": 1, "b": 2})),
///     ScriptedCall::new("add", json!({"a": 3, "b": 4})).id("second"),
/// ]);
/// assert_eq!(model.remaining(), 1);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct ScriptedCall {
    id: Option<String>,
    name: String,
    arguments: Value,
}

impl ScriptedCall {
    /// A call of the tool `name` with `arguments` (a JSON object, as a tool takes; anything
    /// else reaches the agent as malformed arguments, as a model's would).
    ///
    /// ```
    /// use a2a_card::testing::ScriptedCall;
    /// let call = ScriptedCall::new("weather", serde_json::json!({"city": "Paris"}));
    /// # let _ = call;
    /// ```
    pub fn new(name: impl Into<String>, arguments: Value) -> ScriptedCall {
        ScriptedCall {
            id: None,
            name: name.into(),
            arguments,
        }
    }

    /// The same call with the id `id`, as the model sends it and a tool result answers it (an
    /// empty id is no id: rig then issues one).
    ///
    /// ```
    /// use a2a_card::testing::ScriptedCall;
    /// let call = ScriptedCall::new("weather", serde_json::json!({})).id("call-weather");
    /// # let _ = call;
    /// ```
    pub fn id(mut self, id: impl Into<String>) -> ScriptedCall {
        self.id = Some(id.into());
        self
    }
}

/// One block of a scripted reply, in reply order.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Call(ScriptedCall),
}

/// What a scripted reply answers.
#[derive(Debug, Clone, PartialEq)]
enum Answer {
    /// Assistant content, and the usage the reply reports.
    Content { pieces: Vec<Piece>, usage: Usage },
    /// A provider error with this message.
    Error(String),
}

/// One reply of a [`ScriptedModel`]'s script: text, one or more tool calls (or text then
/// calls, in the order given), or a provider error; with the token usage it reports (none by
/// default).
///
/// ```
/// use a2a_card::testing::{ScriptedModel, ScriptedReply};
/// use serde_json::json;
///
/// let model = ScriptedModel::new()
///     .reply(ScriptedReply::text("Let me add them.").and_tool_call("add", json!({"a": 1, "b": 2})))
///     .reply(ScriptedReply::text("1 + 2 = 3").usage(120, 8));
/// assert_eq!(model.remaining(), 2);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct ScriptedReply {
    answer: Answer,
}

impl ScriptedReply {
    /// A reply of `text`. Streamed, it arrives word by word: each delta is one word with the
    /// whitespace after it.
    ///
    /// ```
    /// use a2a_card::testing::ScriptedReply;
    /// let reply = ScriptedReply::text("Paris is the capital of France.");
    /// # let _ = reply;
    /// ```
    pub fn text(text: impl Into<String>) -> ScriptedReply {
        ScriptedReply::content(Piece::Text(text.into()))
    }

    /// A reply that calls the tool `name` with `arguments`.
    ///
    /// ```
    /// use a2a_card::testing::ScriptedReply;
    /// let reply = ScriptedReply::tool_call("weather", serde_json::json!({"city": "Paris"}));
    /// # let _ = reply;
    /// ```
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> ScriptedReply {
        ScriptedReply::content(Piece::Call(ScriptedCall::new(name, arguments)))
    }

    /// A reply that makes `calls`, in order (parallel tool calls).
    ///
    /// ```
    /// use a2a_card::testing::{ScriptedCall, ScriptedReply};
    /// use serde_json::json;
    /// let reply = ScriptedReply::tool_calls([
    ///     ScriptedCall::new("weather", json!({"city": "Paris"})),
    ///     ScriptedCall::new("weather", json!({"city": "Rome"})),
    /// ]);
    /// # let _ = reply;
    /// ```
    pub fn tool_calls(calls: impl IntoIterator<Item = ScriptedCall>) -> ScriptedReply {
        ScriptedReply {
            answer: Answer::Content {
                pieces: calls.into_iter().map(Piece::Call).collect(),
                usage: Usage::new(),
            },
        }
    }

    /// A reply that fails with a provider error ([`ProviderError::Provider`]) of `message`,
    /// as a provider's refusal or outage would. The builders that add content or usage leave
    /// it as it is.
    ///
    /// ```
    /// use a2a_card::testing::ScriptedReply;
    /// let reply = ScriptedReply::error("rate limited");
    /// # let _ = reply;
    /// ```
    pub fn error(message: impl Into<String>) -> ScriptedReply {
        ScriptedReply {
            answer: Answer::Error(message.into()),
        }
    }

    /// The same reply, then `text`.
    ///
    /// ```
    /// use a2a_card::testing::ScriptedReply;
    /// let reply = ScriptedReply::text("First.").and_text("Second.");
    /// # let _ = reply;
    /// ```
    pub fn and_text(self, text: impl Into<String>) -> ScriptedReply {
        self.and(Piece::Text(text.into()))
    }

    /// The same reply, then a call of the tool `name` with `arguments`.
    ///
    /// ```
    /// use a2a_card::testing::ScriptedReply;
    /// let reply = ScriptedReply::text("Checking.").and_tool_call("weather", serde_json::json!({}));
    /// # let _ = reply;
    /// ```
    pub fn and_tool_call(self, name: impl Into<String>, arguments: Value) -> ScriptedReply {
        self.and(Piece::Call(ScriptedCall::new(name, arguments)))
    }

    /// The same reply, then `call` (a call with an id of its own).
    ///
    /// ```
    /// use a2a_card::testing::{ScriptedCall, ScriptedReply};
    /// let reply = ScriptedReply::text("Checking.")
    ///     .and_call(ScriptedCall::new("weather", serde_json::json!({})).id("w1"));
    /// # let _ = reply;
    /// ```
    pub fn and_call(self, call: ScriptedCall) -> ScriptedReply {
        self.and(Piece::Call(call))
    }

    /// The same reply, reporting `input` prompt tokens and `output` generated tokens (their
    /// sum as the total).
    ///
    /// ```
    /// use a2a_card::testing::ScriptedReply;
    /// let reply = ScriptedReply::text("Hi.").usage(12, 3);
    /// # let _ = reply;
    /// ```
    pub fn usage(self, input: u64, output: u64) -> ScriptedReply {
        self.with_usage(tokens(input, output))
    }

    /// The same reply, reporting `usage` as it is (cached and reasoning tokens, cost).
    ///
    /// ```
    /// use a2a_card::rig::rig_core::completion::Usage;
    /// use a2a_card::testing::ScriptedReply;
    /// let reply = ScriptedReply::text("Hi.")
    ///     .with_usage(Usage::new().input_tokens(12).cached_input_tokens(10).output_tokens(3));
    /// # let _ = reply;
    /// ```
    pub fn with_usage(mut self, usage: Usage) -> ScriptedReply {
        if let Answer::Content {
            usage: reported, ..
        } = &mut self.answer
        {
            *reported = usage;
        }
        self
    }

    fn content(piece: Piece) -> ScriptedReply {
        ScriptedReply {
            answer: Answer::Content {
                pieces: vec![piece],
                usage: Usage::new(),
            },
        }
    }

    fn and(mut self, piece: Piece) -> ScriptedReply {
        if let Answer::Content { pieces, .. } = &mut self.answer {
            pieces.push(piece);
        }
        self
    }

    /// The tool calls of this reply, to number.
    fn calls_mut(&mut self) -> impl Iterator<Item = &mut ScriptedCall> {
        let pieces = match &mut self.answer {
            Answer::Content { pieces, .. } => pieces.as_mut_slice(),
            Answer::Error(_) => &mut [],
        };
        pieces.iter_mut().filter_map(|piece| match piece {
            Piece::Call(call) => Some(call),
            Piece::Text(_) => None,
        })
    }
}

/// Usage of `input` and `output` tokens, their sum the total.
fn tokens(input: u64, output: u64) -> Usage {
    Usage::new()
        .input_tokens(input)
        .output_tokens(output)
        .total_tokens(input.saturating_add(output))
}

/// The script and what the model was sent, shared by every clone.
#[derive(Default)]
struct State {
    /// Every reply scripted, answered or not, in order.
    script: Vec<ScriptedReply>,
    /// The place in `script` of the next reply to give.
    next: usize,
    /// How many tool calls the script holds (to number the calls without an id).
    calls: usize,
    /// A misuse of the builder, which every request then answers with.
    misuse: Option<String>,
    /// Whether a request is answered by its turn in the conversation ([`ScriptedModel::by_turn`]).
    by_turn: bool,
    /// Every request that reached the model, in order.
    requests: Vec<CompletionRequest>,
}

/// A completion model for tests, which answers each request with the next reply of a script
/// given up front, and keeps every request it was sent.
///
/// Use it wherever a real model goes: `rig_agent::AgentBuilder::new(model.clone())` (it is
/// `Into<DynModel<Completion>>`), [`call`](Self::call), or [`stream`](Self::stream) into
/// [`TextDeltas`](crate::rig::TextDeltas). A request runs rig's own driver: it is prepared and
/// validated as for any provider, then reaches this model, which records it
/// ([`requests`](Self::requests)) and answers with the next reply: text (streamed word by
/// word), tool calls (streamed as tool-call parts, whole arguments), or a scripted provider
/// error; the response reports the reply's usage, finish reason `ToolCalls` or `Stop`, and
/// the response id `scripted-N` (`N` the reply's place in the script, from 1). A request after
/// the last reply fails with a provider error saying the script ran out.
///
/// Clones share the script and the record of requests: keep one to read back what the model
/// was sent, and script more replies on any of them. It is `Send + Sync`.
///
/// ```
/// use a2a_card::rig::rig_core::completion::CompletionRequest;
/// use a2a_card::testing::ScriptedModel;
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let model = ScriptedModel::new()
///     .tool_call("weather", json!({"city": "Paris"}))
///     .text("Sunny in Paris.")
///     .usage(40, 5);
///
/// let first = model.call(CompletionRequest::new("Weather in Paris?").preamble("Be brief.")).await?;
/// let call = first.tool_calls().next().ok_or("a tool call")?;
/// assert_eq!(call.function.name, "weather");
/// assert_eq!(call.id.to_string(), "call_1");
/// let second = model.call("And now?").await?;
/// assert_eq!(second.text(), "Sunny in Paris.");
/// assert_eq!(second.usage.output_tokens, Some(5));
///
/// // What the model was sent.
/// let sent = model.requests();
/// assert_eq!(sent.len(), 2);
/// assert_eq!(sent[0].system_instructions(), Some("Be brief."));
///
/// // The script ran out: a provider error, no panic.
/// let error = model.call("More?").await.err().ok_or("an error")?;
/// assert!(error.to_string().contains("script"), "{error}");
/// # Ok(()) }
/// ```
///
/// In rig's agent loop (`rig-agent`), which streams each turn:
///
/// ```
/// use a2a_card::testing::ScriptedModel;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let model = ScriptedModel::new().text("Bonjour !");
/// let agent = rig_agent::AgentBuilder::new(model.clone())
///     .preamble("Answer in French.")
///     .build();
/// let response = agent.prompt("Hello").await?;
/// assert_eq!(response.output(), "Bonjour !");
/// assert_eq!(model.requests()[0].system_instructions(), Some("Answer in French."));
/// # Ok(()) }
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct ScriptedModel {
    state: Arc<Mutex<State>>,
}

impl fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("ScriptedModel")
            .field("replies", &state.script.len())
            .field("answered", &state.next)
            .field("requests", &state.requests.len())
            .finish()
    }
}

impl ScriptedModel {
    /// The provider name of the model's wire and responses (`"scripted"`).
    ///
    /// ```
    /// assert_eq!(a2a_card::testing::ScriptedModel::PROVIDER, "scripted");
    /// ```
    pub const PROVIDER: &'static str = "scripted";

    /// The model id a request addresses when it names none (`"scripted-model"`).
    ///
    /// ```
    /// assert_eq!(a2a_card::testing::ScriptedModel::MODEL, "scripted-model");
    /// ```
    pub const MODEL: &'static str = "scripted-model";

    /// A model with an empty script (every request fails until replies are scripted).
    ///
    /// ```
    /// let model = a2a_card::testing::ScriptedModel::new().text("Hello.");
    /// assert_eq!(model.remaining(), 1);
    /// ```
    pub fn new() -> ScriptedModel {
        ScriptedModel::default()
    }

    /// The same model, answering each request with the reply at the request's turn in its
    /// conversation (the first reply to a history without an assistant message, the second
    /// to one with one, ...) rather than with the next reply: a request sent again (a durable
    /// loop taken over after its process stopped in the middle of a completion) gets the same
    /// reply again, as the test of a crash at every point needs.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
    /// let model = a2a_card::testing::ScriptedModel::new().by_turn().text("First.").text("Second.");
    /// assert_eq!(model.call("Hi").await?.text(), "First.");
    /// assert_eq!(model.call("Hi again").await?.text(), "First.", "no assistant turn yet");
    /// # Ok::<(), Box<dyn std::error::Error>>(()) })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn by_turn(self) -> ScriptedModel {
        self.lock().by_turn = true;
        self
    }

    /// The same model, with `reply` scripted after the others.
    ///
    /// ```
    /// use a2a_card::testing::{ScriptedModel, ScriptedReply};
    /// let model = ScriptedModel::new().reply(ScriptedReply::text("Hi.").usage(3, 1));
    /// assert_eq!(model.remaining(), 1);
    /// ```
    pub fn reply(self, reply: ScriptedReply) -> ScriptedModel {
        self.push(reply);
        self
    }

    /// The same model, with a reply of `text` scripted after the others.
    ///
    /// ```
    /// let model = a2a_card::testing::ScriptedModel::new().text("Hello.").text("Goodbye.");
    /// assert_eq!(model.remaining(), 2);
    /// ```
    pub fn text(self, text: impl Into<String>) -> ScriptedModel {
        self.reply(ScriptedReply::text(text))
    }

    /// The same model, with a reply that calls the tool `name` with `arguments` scripted
    /// after the others.
    ///
    /// ```
    /// use serde_json::json;
    /// let model = a2a_card::testing::ScriptedModel::new()
    ///     .tool_call("add", json!({"a": 1, "b": 2}))
    ///     .text("3");
    /// assert_eq!(model.remaining(), 2);
    /// ```
    pub fn tool_call(self, name: impl Into<String>, arguments: Value) -> ScriptedModel {
        self.reply(ScriptedReply::tool_call(name, arguments))
    }

    /// The same model, with a reply that makes `calls` (in one turn) scripted after the others.
    ///
    /// ```
    /// use a2a_card::testing::{ScriptedCall, ScriptedModel};
    /// use serde_json::json;
    /// let model = ScriptedModel::new().tool_calls([
    ///     ScriptedCall::new("weather", json!({"city": "Paris"})),
    ///     ScriptedCall::new("weather", json!({"city": "Rome"})),
    /// ]);
    /// assert_eq!(model.remaining(), 1);
    /// ```
    pub fn tool_calls(self, calls: impl IntoIterator<Item = ScriptedCall>) -> ScriptedModel {
        self.reply(ScriptedReply::tool_calls(calls))
    }

    /// The same model, with a reply that fails with a provider error of `message` scripted
    /// after the others.
    ///
    /// ```
    /// let model = a2a_card::testing::ScriptedModel::new().error("overloaded").text("Hi.");
    /// assert_eq!(model.remaining(), 2);
    /// ```
    pub fn error(self, message: impl Into<String>) -> ScriptedModel {
        self.reply(ScriptedReply::error(message))
    }

    /// The same model, the reply scripted last reporting `input` prompt tokens and `output`
    /// generated tokens (their sum as the total). Called before any reply is scripted, it is
    /// a mistake in the test, which every request then fails with (a provider error saying
    /// so).
    ///
    /// ```
    /// let model = a2a_card::testing::ScriptedModel::new().text("Hello.").usage(10, 2);
    /// assert_eq!(model.remaining(), 1);
    /// ```
    pub fn usage(self, input: u64, output: u64) -> ScriptedModel {
        {
            let mut state = self.lock();
            match state.script.last_mut() {
                Some(last) => {
                    if let Answer::Content { usage, .. } = &mut last.answer {
                        *usage = tokens(input, output);
                    }
                }
                None => {
                    state.misuse.get_or_insert_with(|| {
                        format!(
                            "the scripted model was misused: `usage({input}, {output})` was \
                             called before any reply was scripted (it sets the usage of the \
                             reply scripted last)"
                        )
                    });
                }
            }
        }
        self
    }

    /// Script `reply` after the others, through a shared reference: for a model already handed
    /// to an agent (clones share the script).
    ///
    /// ```
    /// use a2a_card::testing::{ScriptedModel, ScriptedReply};
    /// let model = ScriptedModel::new();
    /// let kept = model.clone();
    /// kept.push(ScriptedReply::text("Later."));
    /// assert_eq!(model.remaining(), 1);
    /// ```
    pub fn push(&self, mut reply: ScriptedReply) {
        let mut state = self.lock();
        for call in reply.calls_mut() {
            state.calls += 1;
            if call.id.is_none() {
                call.id = Some(format!("call_{}", state.calls));
            }
        }
        state.script.push(reply);
    }

    /// Every request the model was sent, in order, as it reached the model: prepared by rig's
    /// driver (the model resolved, the preamble the leading system message, so
    /// [`CompletionRequest::system_instructions`] reads it), with its messages, tools,
    /// documents and options. A request the driver refused before sending it is not there; one
    /// that found the script exhausted is.
    ///
    /// ```
    /// use a2a_card::rig::rig_core::completion::CompletionRequest;
    /// use a2a_card::testing::ScriptedModel;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedModel::new().text("Hi.");
    /// model.call(CompletionRequest::new("Hello").preamble("Be kind.").temperature(0.0)).await?;
    /// let sent = &model.requests()[0];
    /// assert_eq!(sent.system_instructions(), Some("Be kind."));
    /// assert_eq!(sent.temperature, Some(0.0));
    /// assert_eq!(sent.model.as_deref(), Some(ScriptedModel::MODEL));
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn requests(&self) -> Vec<CompletionRequest> {
        self.lock().requests.clone()
    }

    /// The last request the model was sent, if any (see [`requests`](Self::requests)).
    ///
    /// ```
    /// use a2a_card::testing::ScriptedModel;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedModel::new().text("Hi.");
    /// assert!(model.last_request().is_none());
    /// model.call("Hello").await?;
    /// assert!(model.last_request().is_some());
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn last_request(&self) -> Option<CompletionRequest> {
        self.lock().requests.last().cloned()
    }

    /// How many requests the model was sent.
    ///
    /// ```
    /// use a2a_card::testing::ScriptedModel;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let model = ScriptedModel::new();
    /// let _ = model.call("Hello").await; // the script is empty: an error, but a request
    /// assert_eq!(model.request_count(), 1);
    /// # }
    /// ```
    #[must_use]
    pub fn request_count(&self) -> usize {
        self.lock().requests.len()
    }

    /// How many scripted replies are not given yet.
    ///
    /// ```
    /// use a2a_card::testing::ScriptedModel;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedModel::new().text("One.").text("Two.");
    /// model.call("Hello").await?;
    /// assert_eq!(model.remaining(), 1);
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn remaining(&self) -> usize {
        let state = self.lock();
        state.script.len().saturating_sub(state.next)
    }

    /// Send `request` (a prompt, messages or a [`CompletionRequest`]) and get the whole
    /// response: [`Model::call`] on this model.
    ///
    /// ```
    /// use a2a_card::testing::ScriptedModel;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedModel::new().text("Hello there.").usage(4, 2);
    /// let response = model.call("Hi").await?;
    /// assert_eq!(response.text(), "Hello there.");
    /// assert_eq!(response.usage.total_tokens, Some(6));
    /// assert_eq!(response.response_id(), Some("scripted-1"));
    /// # Ok(()) }
    /// ```
    pub fn call<R: Into<CompletionRequest>>(
        &self,
        request: R,
    ) -> impl Future<Output = Result<CompletionResponse, ProviderError>> + Send + 'static + use<R>
    {
        let model = self.model();
        let request = request.into();
        async move { model.call(request).await }
    }

    /// Open a streamed reply to `request`: [`Model::stream`] on this model. Text arrives as
    /// text deltas (one word each), tool calls as tool-call parts; the stream's
    /// [`finish`](rig_core::streaming::Streamed::finish) gives the response, with the
    /// reply's usage. A request the driver refuses is the `Err`; an exhausted script is the
    /// stream's one item, an `Err`.
    ///
    /// ```
    /// use a2a_card::rig::TextDeltas;
    /// use a2a_card::testing::ScriptedModel;
    /// use futures::TryStreamExt;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedModel::new().text("Hello there, friend.");
    /// let deltas: Vec<String> = TextDeltas::new(model.stream("Hi")).try_collect().await?;
    /// assert_eq!(deltas, ["Hello ", "there, ", "friend."]);
    /// # Ok(()) }
    /// ```
    #[allow(
        clippy::result_large_err,
        reason = "the result of rig's `Model::stream`, which `TextDeltas::new` takes"
    )]
    pub fn stream(
        &self,
        request: impl Into<CompletionRequest>,
    ) -> Result<CompletionStream, ProviderError> {
        self.model().stream(request)
    }

    /// This model as a rig [`Model`]: the [`ScriptedWire`] over this model's script (sharing
    /// it), for what [`Model`] offers beyond [`call`](Self::call) and
    /// [`stream`](Self::stream) (observed calls, erasing).
    ///
    /// ```
    /// use a2a_card::testing::ScriptedModel;
    /// let model = ScriptedModel::new().text("Hi.");
    /// let rig_model = model.model();
    /// assert_eq!(rig_model.name(), ScriptedModel::PROVIDER);
    /// assert_eq!(rig_model.id(), Some(ScriptedModel::MODEL));
    /// ```
    pub fn model(&self) -> Model<ScriptedWire, ScriptedModel> {
        Model::new(ScriptedWire::new(), self.clone())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Record `request` and answer it: the frames of the next reply, or the error of a misused
    /// builder, of a scripted error or of an exhausted script.
    fn answer(&self, request: CompletionRequest) -> Opened<wire::Frame> {
        match self
            .take(request)
            .and_then(|(reply, place)| wire::frames(reply, place))
        {
            Ok((frames, document)) => {
                Opened::new(futures::stream::iter(frames.into_iter().map(Ok)))
                    .with_document(document)
            }
            Err(message) => Opened::failed(ProviderError::Provider(message)),
        }
    }

    /// Record `request` and take the next reply, with its place in the script (from 1); or
    /// the message of the error the request gets.
    fn take(&self, request: CompletionRequest) -> Result<(ScriptedReply, usize), String> {
        let mut state = self.lock();
        let turn = request
            .chat_history
            .iter()
            .filter(|m| matches!(m, rig_core::message::Message::Assistant(_)))
            .count();
        state.requests.push(request);
        if let Some(misuse) = &state.misuse {
            return Err(misuse.clone());
        }
        if state.by_turn {
            state.next = turn;
        }
        let Some(reply) = state.script.get(state.next).cloned() else {
            let held = state.script.len();
            return Err(format!(
                "the scripted model has no reply left for request {}: its script held {held} {} \
                 and all were given",
                state.requests.len(),
                if held == 1 { "reply" } else { "replies" },
            ));
        };
        state.next += 1;
        Ok((reply, state.next))
    }
}

impl Transport<ScriptedWire> for ScriptedModel {
    /// The reply to `request`, opened when first polled: the request is recorded and the next
    /// reply taken then, so a stream dropped unpolled takes no reply.
    fn send(&self, request: CompletionRequest, _exchange: Exchange) -> Opening<wire::Frame> {
        let model = self.clone();
        Opening::new(async move { Ok(model.answer(request)) })
    }
}

impl From<ScriptedModel> for DynModel<Completion> {
    /// The model erased, as `rig_agent::AgentBuilder::new` and other consumers take it.
    fn from(model: ScriptedModel) -> DynModel<Completion> {
        model.model().erase()
    }
}

impl From<ScriptedModel> for Model<ScriptedWire, ScriptedModel> {
    /// [`ScriptedModel::model`].
    fn from(model: ScriptedModel) -> Model<ScriptedWire, ScriptedModel> {
        Model::new(ScriptedWire::new(), model)
    }
}

/// The wire of a [`ScriptedModel`]: its payload is the request as rig's driver prepared it,
/// and its frames are the steps of a scripted reply. It names the provider
/// [`ScriptedModel::PROVIDER`] and the model [`ScriptedModel::MODEL`], reads every kind of
/// content (images, tool calls and results), sends documents and tool results as given, and
/// takes every generation option (sending nothing for it: read the options on the recorded
/// request).
///
/// ```
/// use a2a_card::rig::rig_core::driver::Model;
/// use a2a_card::testing::{ScriptedModel, ScriptedWire};
/// let model: Model<ScriptedWire, ScriptedModel> = Model::new(ScriptedWire::new(), ScriptedModel::new());
/// assert_eq!(model.name(), "scripted");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScriptedWire {
    _private: (),
}

impl ScriptedWire {
    /// The scripted wire.
    ///
    /// ```
    /// let wire = a2a_card::testing::ScriptedWire::new();
    /// # let _ = wire;
    /// ```
    #[must_use]
    pub fn new() -> ScriptedWire {
        ScriptedWire::default()
    }
}

/// The wire format a scripted reply records as its turn's API.
const API: Api = Api::from_static("scripted");

impl ReplayTarget for ScriptedWire {
    fn api(&self) -> Api {
        API
    }

    fn provider(&self) -> &str {
        ScriptedModel::PROVIDER
    }

    fn model(&self) -> &str {
        ScriptedModel::MODEL
    }

    fn accepts(&self, _model: &str) -> Accepts {
        Accepts::ALL
    }

    /// Every option is taken and nothing sent for it: the recorded request keeps it.
    fn map_options(&self, _request: &CompletionRequest, fields: OptionFields<'_>) -> OptionMap {
        let OptionFields {
            reasoning,
            cache,
            service_tier,
            verbosity,
            parallel_tool_calls,
            top_p,
            seed,
            stop,
        } = fields;
        fn taken<T>(_: T) -> Mapping {
            Mapping::Omit("a scripted model sends nothing for an option")
        }
        OptionMap {
            reasoning: Mapping::of(reasoning, taken),
            cache: Mapping::of(cache, taken),
            service_tier: Mapping::of(service_tier, taken),
            verbosity: Mapping::of(verbosity, taken),
            parallel_tool_calls: Mapping::of(parallel_tool_calls, taken),
            top_p: Mapping::of(top_p, taken),
            seed: Mapping::of(seed, taken),
            stop: Mapping::of_stop(stop, |stop| taken(stop)),
        }
    }

    fn states_finish_reason(&self) -> bool {
        false
    }

    fn takes_documents(&self) -> bool {
        true
    }

    fn result_parts(&self, _model: &str) -> bool {
        true
    }
}

impl Wire for ScriptedWire {
    type Op = Completion;
    type Payload = CompletionRequest;
    type Frame = wire::Frame;
    type Decoder<'id> = wire::Steps;
    type Reassembler = wire::Stated;

    fn describe(&self) -> Descriptor<'_> {
        Descriptor::new(ScriptedModel::PROVIDER)
            .model(ScriptedModel::MODEL)
            .replay(self)
    }

    fn encode(
        &self,
        request: CompletionRequest,
        _mode: Mode,
    ) -> Result<CompletionRequest, EncodeError> {
        Ok(request)
    }

    fn decoder<'id>(&self) -> Self::Decoder<'id> {
        wire::Steps
    }
}

/// The frames of a scripted reply and their decoder (public for the wire's associated types,
/// not reachable from outside the crate).
mod wire {
    use super::*;
    use rig_core::wire::document::{Reassemble, Serves};
    use rig_core::wire::{Decoder, Flow, Out, WireEvent};

    /// One step of a scripted reply, written through the completion writer as it comes.
    pub enum Frame {
        /// A block opens at `index`.
        Open { index: usize, block: Block },
        /// A fragment of the block at `index`: text, or argument JSON.
        Push { index: usize, fragment: String },
        /// The block at `index` is complete.
        Finish { index: usize },
        /// The reply ends.
        End(Finish),
    }

    /// The decoder: each frame is written as it is.
    #[derive(Debug, Default)]
    pub struct Steps;

    impl<'id> Decoder<'id, Completion, Frame> for Steps {
        type Event = Frame;

        fn classify(&self, frame: Frame) -> WireEvent<Frame> {
            WireEvent::Known(frame)
        }

        fn decode(
            &mut self,
            frame: Frame,
            mut out: Out<'id, Completion>,
        ) -> Result<Flow, ProviderError> {
            match frame {
                Frame::Open { index, block } => out.open(index, block, Value::Null)?,
                Frame::Push { index, fragment } => out.push(index, &fragment)?,
                Frame::Finish { index } => out.finish(index)?,
                Frame::End(finish) => return Ok(out.end(finish)),
            }
            Ok(Flow::More)
        }
    }

    /// The reply document: the transport states it whole with every reply (the reply as
    /// scripted), so nothing is rebuilt from frames.
    #[derive(Debug, Default)]
    pub struct Stated;

    impl Reassemble<Frame> for Stated {
        fn absorb(&mut self, _frame: &Frame) {}

        fn finish(self) -> Value {
            Value::Null
        }
    }

    impl Serves<Completion> for Stated {}

    /// The text deltas of `text`: each word with the whitespace after it.
    pub(super) fn deltas(text: &str) -> Vec<&str> {
        let mut deltas = Vec::new();
        let mut start = 0;
        let mut after_space = false;
        for (at, c) in text.char_indices() {
            if after_space && !c.is_whitespace() {
                deltas.push(&text[start..at]);
                start = at;
            }
            after_space = c.is_whitespace();
        }
        if start < text.len() {
            deltas.push(&text[start..]);
        }
        deltas
    }

    /// The frames of `reply`, the `place`-th of its script (from 1), and the reply's document;
    /// or the message of the error it answers with.
    pub(super) fn frames(
        reply: ScriptedReply,
        place: usize,
    ) -> Result<(Vec<Frame>, Value), String> {
        let (pieces, usage) = match reply.answer {
            Answer::Error(message) => return Err(message),
            Answer::Content { pieces, usage } => (pieces, usage),
        };
        let response_id = format!("scripted-{place}");
        let mut frames = Vec::new();
        let mut content = Vec::new();
        let mut calls = false;
        for (index, piece) in pieces.into_iter().enumerate() {
            match piece {
                Piece::Text(text) => {
                    frames.push(Frame::Open {
                        index,
                        block: Block::Text,
                    });
                    frames.extend(deltas(&text).into_iter().map(|delta| Frame::Push {
                        index,
                        fragment: delta.to_owned(),
                    }));
                    content.push(json!({"type": "text", "text": text}));
                }
                Piece::Call(ScriptedCall {
                    id,
                    name,
                    arguments,
                }) => {
                    let Ok(tool) = ToolName::new(name.as_str()) else {
                        return Err(format!(
                            "scripted reply {place} calls a tool with an empty name"
                        ));
                    };
                    let id = id.unwrap_or_default();
                    calls = true;
                    frames.push(Frame::Open {
                        index,
                        block: Block::Call {
                            id: CallId::from_wire(id.as_str()),
                            name: tool,
                        },
                    });
                    frames.push(Frame::Push {
                        index,
                        fragment: arguments.to_string(),
                    });
                    content.push(json!({
                        "type": "tool_call", "id": id, "name": name, "arguments": arguments,
                    }));
                }
            }
            frames.push(Frame::Finish { index });
        }
        let document = json!({
            "id": response_id,
            "content": content,
            "usage": serde_json::to_value(usage).unwrap_or(Value::Null),
        });
        frames.push(Frame::End(Finish {
            usage,
            reason: Some(if calls {
                FinishReason::ToolCalls
            } else {
                FinishReason::Stop
            }),
            response_id: Some(response_id),
            ..Finish::default()
        }));
        Ok((frames, document))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::{StreamExt, TryStreamExt};
    use rig_core::completion::AssistantContent;
    use rig_core::message::{Message, ToolResultContent, UserContent};
    use rig_core::streaming::{Item, PartKind, StreamEvent};
    use rig_core::tool::PortableTool;

    /// The text of the last user message of `request` (its prompt).
    fn prompt(request: &CompletionRequest) -> String {
        request
            .chat_history
            .iter()
            .rev()
            .find_map(|message| match message {
                Message::User { content } => Some(
                    content
                        .iter()
                        .filter_map(|c| match c {
                            UserContent::Text(t) => Some(t.text.as_str()),
                            _ => None,
                        })
                        .collect::<String>(),
                ),
                _ => None,
            })
            .unwrap_or_default()
    }

    #[test]
    fn is_send_sync_and_a_model() {
        fn send_sync<T: Send + Sync + Clone + 'static>() {}
        send_sync::<ScriptedModel>();
        let model: DynModel<Completion> = ScriptedModel::new().into();
        assert_eq!(model.name(), ScriptedModel::PROVIDER);
    }

    #[test]
    fn text_is_streamed_word_by_word() {
        assert_eq!(
            wire::deltas("Hello there,  friend.\n"),
            ["Hello ", "there,  ", "friend.\n"]
        );
        assert_eq!(wire::deltas("  lead"), ["  ", "lead"]);
        assert!(wire::deltas("").is_empty());
    }

    #[tokio::test]
    async fn the_script_is_replayed_in_order() {
        let model = ScriptedModel::new()
            .text("One.")
            .usage(10, 2)
            .tool_call("add", json!({"a": 1, "b": 2}))
            .tool_calls([
                ScriptedCall::new("add", json!({"a": 3})),
                ScriptedCall::new("sub", json!({"a": 4})).id("mine"),
            ])
            .reply(ScriptedReply::text("Checking.").and_tool_call("look", json!({})))
            .error("overloaded")
            .text("Last.");
        assert_eq!(model.remaining(), 6);

        let one = model.call("1").await.expect("a text reply");
        assert_eq!(one.text(), "One.");
        assert_eq!(one.usage.input_tokens, Some(10));
        assert_eq!(one.usage.output_tokens, Some(2));
        assert_eq!(one.usage.total_tokens, Some(12));
        assert_eq!(one.finish_reason(), Some(FinishReason::Stop));
        assert_eq!(one.response_id(), Some("scripted-1"));
        assert_eq!(one.origin.provider, ScriptedModel::PROVIDER);
        assert_eq!(one.raw["content"][0]["text"], "One.");

        let two = model.call("2").await.expect("a tool call");
        let calls: Vec<_> = two.tool_calls().collect();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].id.to_string(), "call_1");
        assert_eq!(calls[0].function.name, "add");
        assert_eq!(calls[0].function.arguments_value(), json!({"a": 1, "b": 2}));
        assert_eq!(two.finish_reason(), Some(FinishReason::ToolCalls));
        assert!(!two.usage.is_reported());

        let three = model.call("3").await.expect("two tool calls");
        let ids: Vec<String> = three.tool_calls().map(|c| c.id.to_string()).collect();
        assert_eq!(ids, ["call_2", "mine"]);

        let four = model.call("4").await.expect("text and a call");
        assert!(
            matches!(&four.choice[..], [AssistantContent::Text(t), AssistantContent::ToolCall(c)]
            if t.text == "Checking." && c.id.to_string() == "call_4")
        );

        let five = model.call("5").await.expect_err("a scripted error");
        assert!(
            matches!(&five, ProviderError::Provider(m) if m == "overloaded"),
            "{five:?}"
        );

        assert_eq!(model.call("6").await.expect("text").text(), "Last.");
        assert_eq!(model.remaining(), 0);
    }

    #[tokio::test]
    async fn requests_are_recorded_and_shared_by_clones() {
        let model = ScriptedModel::new().text("A.").text("B.");
        let kept = model.clone();
        let tool = rig_core::completion::ToolDefinition {
            name: ToolName::new("add").expect("a name"),
            description: "Adds.".into(),
            parameters: json!({"type": "object"}),
        };
        let request = CompletionRequest::new("What is 1 + 2?")
            .preamble("You add.")
            .tool(tool)
            .temperature(0.5)
            .max_tokens(64);
        model.call(request).await.expect("a reply");
        model
            .stream("Second")
            .expect("a stream")
            .finish()
            .await
            .expect("a reply");

        let sent = kept.requests();
        assert_eq!(sent.len(), 2);
        assert_eq!(kept.request_count(), 2);
        assert_eq!(sent[0].system_instructions(), Some("You add."));
        assert_eq!(prompt(&sent[0]), "What is 1 + 2?");
        assert_eq!(sent[0].tools.len(), 1);
        assert_eq!(sent[0].tools[0].name, "add");
        assert_eq!(sent[0].temperature, Some(0.5));
        assert_eq!(sent[0].max_tokens, Some(64));
        assert_eq!(sent[0].model.as_deref(), Some(ScriptedModel::MODEL));
        assert_eq!(sent[1].system_instructions(), None);
        assert_eq!(
            kept.last_request().map(|r| prompt(&r)).as_deref(),
            Some("Second")
        );
        // A clone scripts for all.
        kept.push(ScriptedReply::text("C."));
        assert_eq!(model.call("3").await.expect("a reply").text(), "C.");
    }

    #[tokio::test]
    async fn an_exhausted_script_is_a_provider_error() {
        let model = ScriptedModel::new().text("Only.");
        model.call("1").await.expect("the one reply");
        let error = model.call("2").await.expect_err("no reply left");
        let ProviderError::Provider(message) = &error else {
            panic!("a provider error expected, got {error:?}");
        };
        assert!(message.contains("no reply left for request 2"), "{message}");
        assert!(message.contains("held 1 reply"), "{message}");
        // Streamed, the error is the stream's one item.
        let mut stream = model.stream("3").expect("a stream");
        assert!(matches!(
            stream.next().await,
            Some(Err(ProviderError::Provider(_)))
        ));
        assert!(stream.next().await.is_none());
        assert_eq!(model.request_count(), 3);

        let empty = ScriptedModel::new();
        let error = empty.call("1").await.expect_err("an empty script");
        assert!(error.to_string().contains("held 0 replies"), "{error}");
    }

    #[tokio::test]
    async fn usage_before_any_reply_is_reported() {
        let model = ScriptedModel::new().usage(1, 2).text("Hi.");
        let error = model.call("1").await.expect_err("a misused builder");
        assert!(error.to_string().contains("`usage(1, 2)`"), "{error}");
    }

    #[tokio::test]
    async fn an_empty_tool_name_is_a_provider_error() {
        let model = ScriptedModel::new().tool_call("", json!({}));
        let error = model.call("1").await.expect_err("no tool name");
        assert!(error.to_string().contains("empty name"), "{error}");
    }

    #[tokio::test]
    async fn a_stream_unpolled_takes_no_reply() {
        let model = ScriptedModel::new().text("Kept.");
        drop(model.stream("dropped").expect("a stream"));
        assert_eq!(model.request_count(), 0);
        assert_eq!(model.remaining(), 1);
    }

    #[tokio::test]
    async fn streaming_yields_text_deltas_then_the_response() {
        let model = ScriptedModel::new().text("The answer is 42.").usage(7, 5);
        let mut stream = model.stream("Question?").expect("a stream");
        let mut deltas = Vec::new();
        while let Some(item) = stream.next().await {
            if let Item::Event(StreamEvent::Text { text, .. }) = item.expect("an item") {
                deltas.push(text);
            }
        }
        assert_eq!(deltas, ["The ", "answer ", "is ", "42."]);
        let response = stream.finish().await.expect("the response");
        assert_eq!(response.text(), "The answer is 42.");
        assert_eq!(response.usage.input_tokens, Some(7));
        assert_eq!(response.usage.output_tokens, Some(5));

        // Through this crate's adapter, as a streaming skill returns it.
        let model = ScriptedModel::new().text("Hello there.");
        let chunks: Vec<String> = crate::rig::TextDeltas::new(model.stream("Hi"))
            .try_collect()
            .await
            .expect("the deltas");
        assert_eq!(chunks, ["Hello ", "there."]);
    }

    #[tokio::test]
    async fn streaming_yields_tool_call_parts() {
        let model = ScriptedModel::new().tool_call("add", json!({"a": 1}));
        let mut stream = model.stream("Add").expect("a stream");
        let mut events = Vec::new();
        while let Some(item) = stream.next().await {
            if let Item::Event(event) = item.expect("an item") {
                events.push(event);
            }
        }
        assert!(
            matches!(&events[0], StreamEvent::Start { kind: PartKind::ToolCall, name: Some(n), .. } if n == "add"),
            "{events:?}"
        );
        assert!(
            matches!(&events[1], StreamEvent::Arguments { json, .. } if json == r#"{"a":1}"#),
            "{events:?}"
        );
        assert!(
            matches!(&events[2], StreamEvent::End { content: AssistantContent::ToolCall(c), .. }
                if c.id.to_string() == "call_1" && c.function.arguments_value() == json!({"a": 1})),
            "{events:?}"
        );
        assert_eq!(events.len(), 3);
        let response = stream.finish().await.expect("the response");
        assert_eq!(response.finish_reason(), Some(FinishReason::ToolCalls));
    }

    /// A tool that adds two numbers, and keeps the arguments of each call.
    #[derive(Clone, Default)]
    struct Add {
        calls: Arc<Mutex<Vec<AddArgs>>>,
    }

    #[derive(Debug, Clone, PartialEq, serde::Deserialize)]
    struct AddArgs {
        a: i64,
        b: i64,
    }

    impl PortableTool for Add {
        const NAME: &'static str = "add";
        type Args = AddArgs;
        type Output = i64;
        type Error = std::convert::Infallible;

        fn description(&self) -> String {
            "Adds two integers.".into()
        }

        fn parameters(&self) -> Value {
            json!({
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"]
            })
        }

        async fn call(&self, args: AddArgs) -> Result<i64, Self::Error> {
            let sum = args.a + args.b;
            self.calls
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(args);
            Ok(sum)
        }
    }

    #[tokio::test]
    async fn an_agent_calls_the_tool_then_answers() {
        let model = ScriptedModel::new()
            .tool_call("add", json!({"a": 2, "b": 3}))
            .usage(30, 4)
            .text("2 + 3 = 5.")
            .usage(45, 6);
        let add = Add::default();
        let agent = rig_agent::AgentBuilder::new(model.clone())
            .preamble("You add numbers with the tool.")
            .tool(add.clone())
            .build();
        let response = agent
            .prompt("What is 2 + 3?")
            .max_turns(3)
            .await
            .expect("the agent answers");
        assert_eq!(response.output(), "2 + 3 = 5.");
        assert_eq!(response.usage.input_tokens, Some(75));
        assert_eq!(response.usage.output_tokens, Some(10));

        // The tool ran once, with the scripted arguments.
        let calls = add.calls.lock().unwrap_or_else(|p| p.into_inner()).clone();
        assert_eq!(calls, [AddArgs { a: 2, b: 3 }]);

        // The first request offered the tool, under the preamble.
        let sent = model.requests();
        assert_eq!(sent.len(), 2);
        assert_eq!(
            sent[0].system_instructions(),
            Some("You add numbers with the tool.")
        );
        assert_eq!(prompt(&sent[0]), "What is 2 + 3?");
        let offered: Vec<&str> = sent[0].tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(offered, ["add"]);

        // The second carried the call and the tool's result, answering it by its id.
        let history = &sent[1].chat_history;
        let called = history.iter().any(|m| {
            matches!(m, Message::Assistant(turn) if turn.content.iter().any(|c|
                matches!(c, AssistantContent::ToolCall(call) if call.id.to_string() == "call_1")))
        });
        assert!(called, "{history:?}");
        let result = history
            .iter()
            .find_map(|m| match m {
                Message::User { content } => content.iter().find_map(|c| match c {
                    UserContent::ToolResult(result) => Some(result.clone()),
                    _ => None,
                }),
                _ => None,
            })
            .expect("a tool result in the second request");
        assert_eq!(result.call.to_string(), "call_1");
        assert_eq!(result.name, "add");
        assert!(!result.is_error);
        let output: String = result
            .content
            .iter()
            .map(|c| match c {
                ToolResultContent::Text(t) => t.text.clone(),
                ToolResultContent::Json { value, .. } => value.to_string(),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(output, "5");
    }
}
