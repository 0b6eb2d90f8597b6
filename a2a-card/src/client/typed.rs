//! The typed side of the client: what the `NameClient` that `#[agent]` generates is made of.
//!
//! `#[agent]` on `impl Name` generates `NameClient` (with the crate's `client` feature): a
//! struct with `connect(url)` and `connect_with(Connect)`, and one method per skill of the block
//! (skills listed with `skills(..)` from other modules are left out), named after the handler,
//! taking the handler's input argument (the one that is not a `SkillContext` or files) and
//! returning a [`Call`] (or, for a skill that streams, a [`Streaming`]). Awaiting it sends the
//! input and gives the skill's output type, validated against its output schema before it is
//! deserialised. The input type must also derive `Serialize` and the output `Deserialize`, which
//! the compiler asks for where a method is used.
//!
//! ```no_run
//! use a2a_card::{Schema, agent, skill};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, JsonSchema, Schema)]
//! pub struct Question { pub text: String }
//! #[derive(Serialize, Deserialize, JsonSchema, Schema)]
//! pub struct Verdict { pub yes: bool }
//!
//! pub struct Oracle;
//! /// Answers yes-or-no questions.
//! #[agent(url = "http://127.0.0.1:9000")]
//! impl Oracle {
//!     /// Answers one question.
//!     #[skill]
//!     fn ask(&self, q: Question) -> Verdict { Verdict { yes: q.text.len() % 2 == 0 } }
//! }
//!
//! # async fn run() -> Result<(), a2a_card::client::ClientError> {
//! // Refuses an agent whose card lacks `ask` or publishes other schemas:
//! let oracle = OracleClient::connect("http://127.0.0.1:9000").await?;
//! let verdict: Verdict = oracle.ask(Question { text: "Rain?".into() }).await?;
//! let pending = oracle.ask(Question { text: "Snow?".into() }).no_wait().await?;
//! let later: Verdict = pending.wait().await?;
//! # Ok(()) }
//! ```
//!
//! A skill only on the extended card (`#[skill(extended)]`) gets no method: a client checks the
//! public card, where that skill is not.
//!
//! ```compile_fail,E0599
//! use a2a_card::{agent, skill};
//!
//! pub struct Judge;
//! /// Judges fights.
//! #[agent(
//!     url = "https://judge.example.com/a2a",
//!     security_schemes(bearer = bearer("JWT")),
//!     security(bearer),
//!     extended_agent_card
//! )]
//! impl Judge {
//!     /// Names the winner.
//!     #[skill]
//!     fn winner(&self, fight: String) -> String { fight }
//!     /// Tells the house odds; only on the extended card.
//!     #[skill(extended)]
//!     fn odds(&self, fight: String) -> String { fight }
//! }
//!
//! let _public = JudgeClient::winner;
//! let _extended = JudgeClient::odds; // error[E0599]: no function `odds` on `JudgeClient`
//! ```

use std::fmt;
use std::future::IntoFuture;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use futures::stream::Stream;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::run::{Content, Event, Run, TaskHandle, TaskOutcome};
use super::{ClientError, Connect, Payload, RemoteAgent};
use crate::agent::Agent;
use crate::file::File;
use crate::schema::{NamedSchema, SchemaMode};
use crate::skill::{Input, Output};

/// A handler's input type as the client sends it: a schema type as data, `String` as text,
/// [`Input<T>`] as either.
#[diagnostic::on_unimplemented(
    message = "the typed client cannot send `{Self}`",
    label = "a skill input sent by the typed client must derive `serde::Serialize` (and `a2a_card::Schema`), or be `String`"
)]
pub trait IntoPayload {
    /// The payload.
    fn into_payload(self) -> Result<Payload, ClientError>;
}

impl<T: NamedSchema + Serialize> IntoPayload for T {
    fn into_payload(self) -> Result<Payload, ClientError> {
        serde_json::to_value(&self)
            .map(Payload::Data)
            .map_err(|e| ClientError::InvalidInput {
                schema: T::SCHEMA_NAME.to_owned(),
                violations: vec![crate::dispatch::Violation {
                    instance_path: String::new(),
                    schema_path: String::new(),
                    message: format!("cannot be serialised: {e}"),
                }],
            })
    }
}

impl IntoPayload for String {
    fn into_payload(self) -> Result<Payload, ClientError> {
        Ok(Payload::Text(self))
    }
}

impl<T: NamedSchema + Serialize> IntoPayload for Input<T> {
    fn into_payload(self) -> Result<Payload, ClientError> {
        match self {
            Input::Text(t) => Ok(Payload::Text(t)),
            Input::Data(d) => d.into_payload(),
        }
    }
}

/// What a handler's return type gives the caller: a schema type itself, `String` for text
/// (`&'static str` too), [`Output<T>`], [`File`], and `R` for `Result<R, E>`.
pub trait ClientReturn {
    /// The type the client gives.
    type Value;
}

impl<T: NamedSchema> ClientReturn for T {
    type Value = T;
}
impl<T: NamedSchema> ClientReturn for Output<T> {
    type Value = Output<T>;
}
impl ClientReturn for String {
    type Value = String;
}
impl ClientReturn for &'static str {
    type Value = String;
}
impl ClientReturn for File {
    type Value = File;
}
impl<R: ClientReturn, E> ClientReturn for Result<R, E> {
    type Value = R::Value;
}

/// Reads one part of an answer as the skill's output type, after checking data against the
/// output schema (from the card, whose digest matched the compiled one at connect).
#[diagnostic::on_unimplemented(
    message = "the typed client cannot read `{Self}` from an answer",
    label = "a skill output read by the typed client must derive `serde::Deserialize` (and `a2a_card::Schema`), or be `String`, `Output<T>` or `File`"
)]
pub trait FromContent: Sized {
    /// What is expected, for messages (`data of schema fightResponse`, `text`).
    fn expected() -> String;
    /// Whether `content` is of this output's kind.
    fn accepts(content: &Content) -> bool;
    /// The output, or [`ClientError::InvalidOutput`] naming what is wrong and where.
    fn from_content(content: Content, agent: &RemoteAgent) -> Result<Self, ClientError>;
}

fn data_of<T: NamedSchema + DeserializeOwned>(
    content: Content,
    agent: &RemoteAgent,
) -> Result<T, ClientError> {
    let invalid = |message: String| ClientError::InvalidOutput {
        expected: format!("`{}`", T::SCHEMA_NAME),
        message,
    };
    let Content::Data { value, .. } = content else {
        return Err(invalid("the part is not data".to_owned()));
    };
    match agent.validate(T::SCHEMA_NAME, &value) {
        Ok(()) => {}
        Err(ClientError::InvalidInput { violations, .. }) => {
            let listed: Vec<String> = violations.iter().map(ToString::to_string).collect();
            return Err(invalid(listed.join("; ")));
        }
        Err(other) => return Err(other),
    }
    serde_json::from_value(value).map_err(|e| invalid(e.to_string()))
}

impl<T: NamedSchema + DeserializeOwned> FromContent for T {
    fn expected() -> String {
        format!("data of schema `{}`", T::SCHEMA_NAME)
    }
    fn accepts(content: &Content) -> bool {
        matches!(content, Content::Data { schema: Some(s), .. } if s == T::SCHEMA_NAME)
    }
    fn from_content(content: Content, agent: &RemoteAgent) -> Result<Self, ClientError> {
        data_of(content, agent)
    }
}

impl FromContent for String {
    fn expected() -> String {
        "text".to_owned()
    }
    fn accepts(content: &Content) -> bool {
        matches!(content, Content::Text(_))
    }
    fn from_content(content: Content, _: &RemoteAgent) -> Result<Self, ClientError> {
        match content {
            Content::Text(t) => Ok(t),
            _ => Err(ClientError::InvalidOutput {
                expected: "text".to_owned(),
                message: "the part is not text".to_owned(),
            }),
        }
    }
}

impl<T: NamedSchema + DeserializeOwned> FromContent for Output<T> {
    fn expected() -> String {
        format!("text or data of schema `{}`", T::SCHEMA_NAME)
    }
    fn accepts(content: &Content) -> bool {
        String::accepts(content) || T::accepts(content)
    }
    fn from_content(content: Content, agent: &RemoteAgent) -> Result<Self, ClientError> {
        match content {
            Content::Text(t) => Ok(Output::Text(t)),
            data => data_of(data, agent).map(Output::Data),
        }
    }
}

impl FromContent for File {
    fn expected() -> String {
        "a file".to_owned()
    }
    fn accepts(content: &Content) -> bool {
        matches!(content, Content::File { .. })
    }
    fn from_content(content: Content, _: &RemoteAgent) -> Result<Self, ClientError> {
        let Content::File {
            name,
            media_type,
            bytes,
            url,
        } = content
        else {
            return Err(ClientError::InvalidOutput {
                expected: "a file".to_owned(),
                message: "the part is not a file".to_owned(),
            });
        };
        let media = media_type.unwrap_or_else(|| "application/octet-stream".to_owned());
        let file = match (bytes, url) {
            (Some(bytes), _) => File::from_bytes(media, bytes),
            (None, Some(url)) => File::from_url(media, url),
            (None, None) => File::from_bytes(media, Vec::new()),
        };
        Ok(match name {
            Some(n) => file.with_name(n),
            None => file,
        })
    }
}

/// The output of a finished task: its first part of the expected kind.
fn decode<O: FromContent>(agent: &RemoteAgent, outcome: TaskOutcome) -> Result<O, ClientError> {
    let outcome = outcome.into_result()?;
    let outputs = outcome.outputs();
    let kinds: Vec<&'static str> = outputs
        .iter()
        .map(|o| match o.content {
            Content::Text(_) => "text",
            Content::Data { .. } => "data",
            Content::File { .. } => "a file",
        })
        .collect();
    match outputs.into_iter().find(|o| O::accepts(&o.content)) {
        Some(o) => O::from_content(o.content, agent),
        None => Err(ClientError::InvalidOutput {
            expected: O::expected(),
            message: if kinds.is_empty() {
                format!("the {outcome} carries no output")
            } else {
                format!("the {outcome} carries only {}", kinds.join(", "))
            },
        }),
    }
}

/// A call of a skill by the typed client: `.await` it for the output, or take it
/// [`stream`](Self::stream)ed or [`no_wait`](Self::no_wait).
///
/// `I` is the skill's input type and `R` its handler's return type; the output is
/// `<R as ClientReturn>::Value` (`Result<T, E>` gives `T`).
#[must_use = "a call does nothing until it is awaited"]
pub struct Call<I, R> {
    agent: RemoteAgent,
    skill: &'static str,
    input: I,
    _output: PhantomData<fn() -> R>,
}

impl<I, R> fmt::Debug for Call<I, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call").field("skill", &self.skill).finish()
    }
}

impl<I, R> Call<I, R> {
    /// A call of `skill` with `input` (what the generated methods return).
    pub fn new(agent: &RemoteAgent, skill: &'static str, input: I) -> Self {
        Call {
            agent: agent.clone(),
            skill,
            input,
            _output: PhantomData,
        }
    }
}

impl<I, R> Call<I, R>
where
    I: IntoPayload,
    R: ClientReturn,
    R::Value: FromContent,
{
    /// Sends the input and waits: the skill's output, or why there is none
    /// ([`ClientError::InputRequired`] when the skill asks something: use
    /// [`stream`](Self::stream) or [`no_wait`](Self::no_wait) to answer).
    pub async fn send(self) -> Result<R::Value, ClientError> {
        let payload = self.input.into_payload()?;
        let outcome = self.agent.call(self.skill, payload).await?;
        decode(&self.agent, outcome)
    }

    /// Sends the input from the running skill of `ctx` and waits: as [`send`](Self::send),
    /// made with [`SkillContext::call`](crate::SkillContext::call), so that in a durable skill
    /// the call is journaled (a run after a takeover follows the task it made instead of
    /// sending again), its task is cancelled if the calling task ends first, and it goes with
    /// what is left of the calling task's budget.
    ///
    /// ```no_run
    /// use a2a_card::{Schema, SkillContext, SkillError, agent, skill};
    /// use schemars::JsonSchema;
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Serialize, Deserialize, JsonSchema, Schema)]
    /// pub struct Question { pub text: String }
    /// #[derive(Serialize, Deserialize, JsonSchema, Schema)]
    /// pub struct Verdict { pub yes: bool }
    ///
    /// pub struct Oracle;
    /// /// Answers yes-or-no questions.
    /// #[agent(url = "http://127.0.0.1:9000")]
    /// impl Oracle {
    ///     /// Answers one question.
    ///     #[skill]
    ///     fn ask(&self, q: Question) -> Verdict { Verdict { yes: q.text.len() % 2 == 0 } }
    /// }
    ///
    /// pub struct Advisor { oracle: OracleClient }
    /// /// Advises, after asking the oracle.
    /// #[agent(url = "http://127.0.0.1:9001")]
    /// impl Advisor {
    ///     /// Advises on a plan.
    ///     #[skill(durable)]
    ///     async fn advise(&self, plan: String, ctx: SkillContext) -> Result<String, SkillError> {
    ///         let verdict = self.oracle.ask(Question { text: plan.clone() }).within(&ctx).await?;
    ///         Ok(if verdict.yes { format!("go ahead with {plan}") } else { "wait".into() })
    ///     }
    /// }
    /// ```
    pub async fn within(self, ctx: &crate::SkillContext) -> Result<R::Value, ClientError> {
        let payload = self.input.into_payload()?;
        let outcome = ctx.call(&self.agent, self.skill, payload).await?;
        decode(&self.agent, outcome)
    }

    /// Sends the input and follows the task: outputs, progress and questions as they come.
    pub async fn stream(self) -> Result<TypedRun<R::Value>, ClientError> {
        let payload = self.input.into_payload()?;
        let run = self.agent.stream(self.skill, payload).await?;
        Ok(TypedRun::new(self.agent, run))
    }

    /// Sends the input and returns at once, with a handle on the task.
    pub async fn no_wait(self) -> Result<Pending<R::Value>, ClientError> {
        let payload = self.input.into_payload()?;
        let handle = self.agent.send(self.skill, payload).await?;
        Ok(Pending {
            agent: self.agent,
            handle,
            _output: PhantomData,
        })
    }
}

impl<I, R> IntoFuture for Call<I, R>
where
    I: IntoPayload + Send + 'static,
    R: ClientReturn + 'static,
    R::Value: FromContent + Send + 'static,
{
    type Output = Result<R::Value, ClientError>;
    type IntoFuture = BoxFuture<'static, Result<R::Value, ClientError>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

/// A call of a skill that streams: `.await` it for a [`TypedRun`] of its items. `R` is the
/// stream's item type as the handler yields it.
#[must_use = "a call does nothing until it is awaited"]
pub struct Streaming<I, R> {
    call: Call<I, R>,
}

impl<I, R> fmt::Debug for Streaming<I, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Streaming")
            .field("skill", &self.call.skill)
            .finish()
    }
}

impl<I, R> Streaming<I, R> {
    /// A streamed call of `skill` with `input` (what the generated methods return).
    pub fn new(agent: &RemoteAgent, skill: &'static str, input: I) -> Self {
        Streaming {
            call: Call::new(agent, skill, input),
        }
    }
}

impl<I, R> Streaming<I, R>
where
    I: IntoPayload,
    R: ClientReturn,
    R::Value: FromContent,
{
    /// Sends the input and returns at once, with a handle on the task.
    pub async fn no_wait(self) -> Result<Pending<R::Value>, ClientError> {
        self.call.no_wait().await
    }
}

impl<I, R> IntoFuture for Streaming<I, R>
where
    I: IntoPayload + Send + 'static,
    R: ClientReturn + 'static,
    R::Value: FromContent + Send + 'static,
{
    type Output = Result<TypedRun<R::Value>, ClientError>;
    type IntoFuture = BoxFuture<'static, Result<TypedRun<R::Value>, ClientError>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.call.stream())
    }
}

/// An event of a [`TypedRun`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TypedEvent<O> {
    /// An output item, validated and deserialised.
    Item(O),
    /// Progress the skill reported.
    Progress(String),
    /// The task waits for the caller: [`TypedRun::answer`] answers.
    Question {
        /// The question.
        text: String,
        /// Whether it asks for authentication.
        auth: bool,
        /// The data the question carries beside its text, if any.
        data: Option<serde_json::Value>,
    },
    /// Anything else (parts of another kind, a message answer).
    Other(Event),
}

/// A typed task followed as it runs: a `Stream` of [`TypedEvent`]s that ends when the task
/// completes; a failed task ends it with [`ClientError::TaskFailed`].
pub struct TypedRun<O> {
    agent: RemoteAgent,
    run: Run,
    _output: PhantomData<fn() -> O>,
}

impl<O> fmt::Debug for TypedRun<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedRun").field("run", &self.run).finish()
    }
}

impl<O> TypedRun<O> {
    fn new(agent: RemoteAgent, run: Run) -> Self {
        TypedRun {
            agent,
            run,
            _output: PhantomData,
        }
    }

    /// The task's id, once known.
    pub fn task_id(&self) -> Option<&str> {
        self.run.task_id()
    }

    /// Answers the task's question and follows it on.
    pub async fn answer(&mut self, text: &str) -> Result<(), ClientError> {
        self.run.answer(text).await
    }

    /// Cancels the task.
    pub async fn cancel(&self) -> Result<(), ClientError> {
        self.run.cancel().await.map(drop)
    }
}

impl<O: FromContent> Stream for TypedRun<O> {
    type Item = Result<TypedEvent<O>, ClientError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            let event = match Pin::new(&mut this.run).poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Ok(event))) => event,
            };
            let typed = match event {
                Event::Output(o) if O::accepts(&o.content) => {
                    O::from_content(o.content, &this.agent).map(TypedEvent::Item)
                }
                Event::Status {
                    text: Some(text), ..
                } => Ok(TypedEvent::Progress(text)),
                Event::Status { text: None, .. } => continue,
                Event::Question { text, auth, data } => {
                    Ok(TypedEvent::Question { text, auth, data })
                }
                Event::Finished {
                    state: a2a::TaskState::Completed,
                    ..
                } => continue,
                Event::Finished { state, text } => Err(ClientError::TaskFailed {
                    task_id: this.run.task_id().unwrap_or_default().to_owned(),
                    state,
                    message: text,
                }),
                other => Ok(TypedEvent::Other(other)),
            };
            return Poll::Ready(Some(typed));
        }
    }
}

/// A typed task running without the caller waiting: wait for its output, follow it, answer it,
/// or cancel it.
pub struct Pending<O> {
    agent: RemoteAgent,
    handle: TaskHandle,
    _output: PhantomData<fn() -> O>,
}

impl<O> fmt::Debug for Pending<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pending")
            .field("task_id", &self.handle.task_id())
            .finish()
    }
}

impl<O: FromContent> Pending<O> {
    /// The task's id.
    pub fn task_id(&self) -> &str {
        self.handle.task_id()
    }

    /// The untyped handle.
    pub fn handle(&mut self) -> &mut TaskHandle {
        &mut self.handle
    }

    /// The output, once the task completed (`None` while it runs).
    pub async fn poll(&mut self) -> Result<Option<O>, ClientError> {
        let outcome = self.handle.poll().await?.clone();
        match outcome.state() {
            Some(s) if !s.is_terminal() && s != a2a::TaskState::InputRequired => Ok(None),
            _ => decode(&self.agent, outcome).map(Some),
        }
    }

    /// Waits for the task and gives its output.
    pub async fn wait(self) -> Result<O, ClientError> {
        let outcome = self.handle.wait().await?;
        decode(&self.agent, outcome)
    }

    /// Follows the task's events from now on.
    pub async fn subscribe(&self) -> Result<TypedRun<O>, ClientError> {
        let run = self.handle.subscribe().await?;
        Ok(TypedRun::new(self.agent.clone(), run))
    }

    /// Answers the task's question and waits for its output.
    pub async fn answer(&self, text: &str) -> Result<O, ClientError> {
        let outcome = self.handle.answer(text).await?;
        decode(&self.agent, outcome)
    }

    /// Cancels the task.
    pub async fn cancel(&self) -> Result<(), ClientError> {
        self.handle.cancel().await.map(drop)
    }
}

// One of `RemoteAgent`'s blocks, each in the file of its concern: here, what the typed
// clients `#[agent]` generates call.
impl RemoteAgent {
    /// Checks that the agent's card matches the compiled declaration of `A`: every skill of
    /// `A` (but those only on the extended card) is on the card, takes and gives the same
    /// schemas, and each schema has the same digest ([`value_digest`](crate::sign::value_digest))
    /// as the compiled one. The generated clients call it when they connect.
    pub fn check_declaration<A: Agent>(&self) -> Result<(), ClientError> {
        for decl in A::SKILLS.iter().filter(|s| !s.poisoned && !s.extended) {
            let stale = |reason: String| ClientError::Stale {
                skill: decl.id.to_owned(),
                reason,
            };
            let remote = self.skill(decl.id).map_err(|_| {
                stale(format!(
                    "the agent's card ({}) does not list it",
                    self.card_url()
                ))
            })?;
            for (schema, modes, side) in [
                (decl.input.schema, remote.input_modes(), "input"),
                (decl.output.schema, remote.output_modes(), "output"),
            ] {
                let Some(schema) = schema else { continue };
                let named = modes
                    .iter()
                    .any(|m| SchemaMode::parse(m).is_some_and(|s| s.name() == schema.name));
                if !named {
                    return Err(stale(format!(
                        "its {side} modes on the card ({}) do not name schema `{}`",
                        modes.join(", "),
                        schema.name
                    )));
                }
                let Some(published) = self.card().schemas.get(schema.name) else {
                    return Err(stale(format!(
                        "the card publishes no schema `{}`",
                        schema.name
                    )));
                };
                let digest = |v: &serde_json::Value| {
                    crate::sign::value_digest(v).map_err(|e| {
                        stale(format!("schema `{}` cannot be digested: {e}", schema.name))
                    })
                };
                let (compiled, theirs) = (digest(&(schema.schema)())?, digest(published)?);
                if compiled != theirs {
                    return Err(stale(format!(
                        "its {side} schema `{}` differs: compiled {compiled}, the agent's {theirs}",
                        schema.name
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Connects a generated client: discovers the agent and checks it against `A`'s declaration.
#[doc(hidden)]
pub async fn connect_checked<A: Agent>(connect: Connect) -> Result<RemoteAgent, ClientError> {
    let agent = connect.discover().await?;
    agent.check_declaration::<A>()?;
    Ok(agent)
}
