//! The caller's side (feature `client`): discover an agent, call its skills with input checked
//! locally against the card's schemas, follow streams, answer questions, and the typed client
//! that `#[agent]` generates.
//!
//! Everything goes through the official A2A Rust client (`a2a-client-lf`, on the official
//! types, `a2a-lf`): this module adds what a caller needs from the card around it.
//!
//! - [`RemoteAgent::discover`] (or [`Connect`] with credentials and signature checks) reads the
//!   card of any agent, declared with this crate or not, in any profile and version (1.0, 0.3,
//!   compat, 0.2), lints it ([`RemoteAgent::findings`]) and lists its skills with their input
//!   and output schemas ([`RemoteAgent::skills`]).
//! - [`RemoteAgent::call`] sends a skill's input and waits for the task; data is validated
//!   against the skill's input schema *before* anything is sent, and a violation names its JSON
//!   pointer. [`RemoteAgent::stream`] gives a [`Run`]: a `Stream` of [`Event`]s (progress,
//!   output chunks, questions, the end), which can [`answer`](Run::answer) a question.
//!   [`RemoteAgent::send`] returns at once with a [`TaskHandle`] to poll, follow or cancel.
//! - `#[agent]` generates `NameClient` for a declared agent `Name`, with one method per skill
//!   that takes the skill's input type and gives its output type (see [`Call`]). It refuses
//!   to connect to an agent whose card lacks one of its skills or publishes a different schema
//!   (by digest), and validates every output against its schema before deserialising it.
//!
//! Credentials ([`Connect::bearer_token`], [`Connect::api_key`], [`Connect::header`]) go on
//! every request, the card's included, and never into an error or `Debug` output.
//!
//! Calls go through the official client, over the card's A2A 1.0 JSON-RPC or HTTP+JSON
//! interface; an agent that offers only A2A 0.3 (the installed base of the 0.3 SDKs) is called
//! over its 0.3 JSON-RPC interface, its requests and answers mapped both ways by the same
//! mapping the server uses for its own 0.3 interface, with data numbers kept exact. Agents are
//! reached over `http` or `https` (rustls, with the platform's certificate roots and any given
//! to [`Connect::root_certificates_pem`]); one HTTP client carries the card request and every
//! call of a [`RemoteAgent`].
//!
//! ```no_run
//! use a2a_card::client::{Event, Payload, RemoteAgent};
//! use futures::StreamExt;
//! use serde_json::json;
//!
//! # async fn run() -> Result<(), a2a_card::client::ClientError> {
//! let agent = RemoteAgent::discover("http://127.0.0.1:8080").await?;
//! for skill in agent.skills() {
//!     println!("{}: takes {:?}", skill.id(), skill.input_schema_name());
//! }
//! // Checked against `fightComparison` here, then sent:
//! let task = agent.call("fight-comparison", Payload::data(json!({"a": "Lion", "b": "Tiger"}))).await?;
//! println!("{:?}", task.outputs());
//!
//! let mut run = agent.stream("fight-comparison", Payload::text("Lion or Tiger?")).await?;
//! while let Some(event) = run.next().await {
//!     if let Event::Question { text, .. } = event? {
//!         run.answer(&format!("answer to {text}")).await?;
//!     }
//! }
//! # Ok(()) }
//! ```

mod catalog;
mod connect;
mod error;
mod exchange;
mod jsonrpc;
mod official;
mod remote;
mod run;
mod typed;
mod within;

use serde_json::Value;

pub use connect::Connect;
pub use error::ClientError;
#[cfg(feature = "testing")]
pub(crate) use exchange::{Exchange, Verb};
#[cfg(feature = "testing")]
pub(crate) use jsonrpc::next_event;
pub use remote::{RemoteAgent, RemoteSkill, SignatureStatus};
pub use run::{Content, Event, Output, Run, TaskHandle, TaskOutcome};
pub use typed::{
    Call, ClientReturn, FromContent, IntoPayload, Pending, Streaming, TypedEvent, TypedRun,
    connect_checked,
};
pub use within::REACH_FOR;

/// What to send to a skill: structured data (checked against the skill's input schema) or
/// text.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Payload {
    /// Data for the skill's `application/json;schema=NAME` input mode.
    Data(Value),
    /// Text, for a skill that takes `text/plain`.
    Text(String),
}

impl Payload {
    /// Structured data.
    ///
    /// ```
    /// use a2a_card::client::Payload;
    /// assert!(matches!(Payload::data(serde_json::json!({"a": 1})), Payload::Data(_)));
    /// ```
    pub fn data(value: Value) -> Payload {
        Payload::Data(value)
    }

    /// Text.
    ///
    /// ```
    /// use a2a_card::client::Payload;
    /// assert_eq!(Payload::text("hi"), Payload::Text("hi".into()));
    /// ```
    pub fn text(text: impl Into<String>) -> Payload {
        Payload::Text(text.into())
    }
}
