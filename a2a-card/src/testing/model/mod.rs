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
//!
//! One file per part: `reply.rs` (the replies a script is made of), `wire.rs` (the wire, and
//! the frames a reply is sent as); this file holds the model, its script and the requests it
//! was sent.

mod reply;
mod wire;

pub use reply::{ScriptedCall, ScriptedReply};
pub use wire::ScriptedWire;

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};

use rig_core::DynModel;
use rig_core::completion::{CompletionRequest, CompletionResponse};
use rig_core::driver::{Exchange, Model, Opened, Opening, Transport};
use rig_core::error::ProviderError;
use rig_core::operation::Completion;
use rig_core::streaming::CompletionStream;
use serde_json::Value;

use reply::{Answer, tokens};

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

#[cfg(test)]
mod tests;
