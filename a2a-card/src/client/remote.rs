//! An agent whose card was read ([`RemoteAgent`]): its skills with their schemas
//! ([`RemoteSkill`]), input checked locally against them, and the calls that send it.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use a2a_card_rules::media::essence_is;
use serde_json::Value;

use crate::card::{AgentCard, AgentSkill};
use crate::dispatch::Violation;
use crate::lint::Finding;
use crate::schema::SchemaMode;
use crate::sign::VerifiedSignature;

use super::official::{Official, traced};
use super::{ClientError, Payload, Run, TaskHandle, TaskOutcome};

/// The media type of text input and output.
const TEXT_PLAIN: &str = "text/plain";

/// Whether the card's signature was checked, and how it went.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SignatureStatus {
    /// Not asked for ([`Connect::verify_signature`](super::Connect::verify_signature)); the card
    /// carries this many signatures.
    NotChecked {
        /// How many signatures the card carries.
        signatures: usize,
    },
    /// A signature verified.
    Verified(VerifiedSignature),
}

pub(super) struct Inner {
    pub(super) card_url: String,
    pub(super) document: Value,
    pub(super) card: AgentCard,
    pub(super) findings: Vec<Finding>,
    pub(super) signature: SignatureStatus,
    pub(super) validators: HashMap<String, Result<Arc<jsonschema::Validator>, String>>,
    pub(super) client: Result<Official, String>,
}

/// An agent whose card was read: its skills and schemas, and the official client to call it.
///
/// Cheap to clone (clones share the connection).
#[derive(Clone)]
pub struct RemoteAgent {
    pub(super) inner: Arc<Inner>,
}

impl fmt::Debug for RemoteAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteAgent")
            .field("card_url", &self.inner.card_url)
            .field("name", &self.inner.card.name)
            .field("skills", &self.inner.card.skills.len())
            .finish_non_exhaustive()
    }
}

/// One skill of a [`RemoteAgent`], with its schemas resolved from the card.
#[derive(Debug, Clone, Copy)]
pub struct RemoteSkill<'a> {
    card: &'a AgentCard,
    skill: &'a AgentSkill,
}

impl<'a> RemoteSkill<'a> {
    /// The skill's id.
    ///
    /// ```no_run
    /// # async fn run(agent: a2a_card::client::RemoteAgent) {
    /// let ids: Vec<&str> = agent.skills().map(|s| s.id()).collect();
    /// # }
    /// ```
    pub fn id(&self) -> &'a str {
        &self.skill.id
    }

    /// The skill as the card declares it.
    pub fn declaration(&self) -> &'a AgentSkill {
        self.skill
    }

    /// Its input modes (the agent's defaults when it lists none).
    pub fn input_modes(&self) -> &'a [String] {
        self.card.input_modes_of(self.skill)
    }

    /// Its output modes (the agent's defaults when it lists none).
    pub fn output_modes(&self) -> &'a [String] {
        self.card.output_modes_of(self.skill)
    }

    /// Whether it takes text.
    pub fn takes_text(&self) -> bool {
        self.input_modes().iter().any(|m| is_text_mode(m))
    }

    /// The name of its input schema (its first `application/json;schema=NAME` input mode).
    pub fn input_schema_name(&self) -> Option<String> {
        schema_name(self.input_modes())
    }

    /// The name of its output schema.
    pub fn output_schema_name(&self) -> Option<String> {
        schema_name(self.output_modes())
    }

    /// Its input schema, from the card's `schemas`.
    pub fn input_schema(&self) -> Option<&'a Value> {
        self.card.schemas.get(&self.input_schema_name()?)
    }

    /// Its output schema, from the card's `schemas`.
    pub fn output_schema(&self) -> Option<&'a Value> {
        self.card.schemas.get(&self.output_schema_name()?)
    }
}

fn is_text_mode(mode: &str) -> bool {
    essence_is(mode, TEXT_PLAIN) || essence_is(mode, "text")
}

fn schema_name(modes: &[String]) -> Option<String> {
    modes
        .iter()
        .find_map(|m| SchemaMode::parse(m).map(|s| s.name().to_owned()))
}

/// Whether `card` declares extension `uri`.
pub(super) fn declares(card: &AgentCard, uri: &str) -> bool {
    card.capabilities.extensions.iter().any(|e| e.uri == uri)
}

/// Whether a mode is JSON: `application/json`, or a `+json` type (parameters aside).
fn is_json(mode: &str) -> bool {
    crate::MediaType::parse(mode)
        .is_ok_and(|m| m.essence() == "application/json" || m.subtype().ends_with("+json"))
}

// One of `RemoteAgent`'s blocks, each in the file of its concern: here, calling a skill.
impl RemoteAgent {
    /// The card, as read (normalised from whatever profile the agent served).
    pub fn card(&self) -> &AgentCard {
        &self.inner.card
    }

    /// The card document as served.
    pub fn document(&self) -> &Value {
        &self.inner.document
    }

    /// Where the card was read.
    pub fn card_url(&self) -> &str {
        &self.inner.card_url
    }

    /// The linter's findings on the card (see [`lint`](crate::lint)).
    pub fn findings(&self) -> &[Finding] {
        &self.inner.findings
    }

    /// Whether the card's signature was checked, and how it went.
    pub fn signature(&self) -> &SignatureStatus {
        &self.inner.signature
    }

    /// The skills, in the card's order.
    pub fn skills(&self) -> impl Iterator<Item = RemoteSkill<'_>> {
        let card = &self.inner.card;
        card.skills
            .iter()
            .map(move |skill| RemoteSkill { card, skill })
    }

    /// The skill `id`, or [`ClientError::UnknownSkill`] listing the card's skills.
    pub fn skill(&self, id: &str) -> Result<RemoteSkill<'_>, ClientError> {
        self.skills()
            .find(|s| s.id() == id)
            .ok_or_else(|| ClientError::UnknownSkill {
                skill: id.to_owned(),
                available: self.skills().map(|s| s.id().to_owned()).collect(),
            })
    }

    /// Checks `data` against the card's schema `schema`: every violation, with its JSON
    /// pointer.
    pub fn validate(&self, schema: &str, data: &Value) -> Result<(), ClientError> {
        let validator = self.validator(schema)?;
        let violations: Vec<Violation> = validator
            .iter_errors(data)
            .take(crate::dispatch::MAX_VIOLATIONS)
            .map(|e| Violation {
                instance_path: e.instance_path().to_string(),
                schema_path: e.schema_path().to_string(),
                message: e.to_string(),
            })
            .collect();
        if violations.is_empty() {
            Ok(())
        } else {
            Err(ClientError::InvalidInput {
                schema: schema.to_owned(),
                violations,
            })
        }
    }

    fn validator(&self, schema: &str) -> Result<&jsonschema::Validator, ClientError> {
        match self.inner.validators.get(schema) {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(ClientError::Transport(format!(
                "the card's schema `{schema}` does not compile: {e}"
            ))),
            None => Err(ClientError::Transport(format!(
                "the card publishes no schema `{schema}` (no entry under `schemas`)"
            ))),
        }
    }

    /// The message that sends `payload` to skill `skill`, after checking it locally: the skill
    /// exists, takes this kind of input, and data follows its input schema (data to a skill
    /// that takes `application/json` without a schema goes as it is, with that mode). Where
    /// the card declares [`SKILL_EXTENSION_URI`](crate::dispatch::SKILL_EXTENSION_URI), the
    /// message names the skill in its metadata, and the agent runs that one.
    ///
    /// ```no_run
    /// # async fn run(agent: a2a_card::client::RemoteAgent) -> Result<(), a2a_card::client::ClientError> {
    /// use a2a_card::client::Payload;
    /// let m = agent.message("fight-comparison", Payload::data(serde_json::json!({"a": "x", "b": "y"})))?;
    /// assert_eq!(m.parts[0].media_type.as_deref(), Some("application/json;schema=fightComparison"));
    /// # Ok(()) }
    /// ```
    pub fn message(&self, skill: &str, payload: Payload) -> Result<a2a::Message, ClientError> {
        let remote = self.skill(skill)?;
        let part = match payload {
            Payload::Data(data) => match remote.input_schema_name() {
                Some(name) => {
                    self.validate(&name, &data)?;
                    let mode = SchemaMode::new(name.as_str())
                        .map(|m| m.to_string())
                        .unwrap_or_else(|| format!("application/json;schema={name}"));
                    a2a::Part::data(data).with_media_type(mode)
                }
                // A skill that takes JSON without naming a schema: the data as it is.
                None => match remote.input_modes().iter().find(|m| is_json(m)) {
                    Some(mode) => a2a::Part::data(data).with_media_type(mode.clone()),
                    None => {
                        return Err(ClientError::UnsupportedInput {
                            skill: skill.to_owned(),
                            given: "structured data",
                            modes: remote.input_modes().to_vec(),
                        });
                    }
                },
            },
            Payload::Text(text) => {
                if !remote.takes_text() {
                    return Err(ClientError::UnsupportedInput {
                        skill: skill.to_owned(),
                        given: "text",
                        modes: remote.input_modes().to_vec(),
                    });
                }
                a2a::Part::text(text)
            }
        };
        let mut message = a2a::Message::new(a2a::Role::User, vec![part]);
        // Where the agent lets its caller name the skill, it is named: the agent runs that
        // skill rather than the one its own routing would pick.
        if self.names_skills() {
            let named = serde_json::json!({ "skill": skill });
            message.metadata = Some(HashMap::from([(
                crate::dispatch::SKILL_EXTENSION_URI.to_owned(),
                named,
            )]));
        }
        Ok(message)
    }

    /// Whether the card declares the extension by which a caller names the skill a new task
    /// runs ([`SKILL_EXTENSION_URI`](crate::dispatch::SKILL_EXTENSION_URI)), so that
    /// [`message`](Self::message) names it.
    ///
    /// ```no_run
    /// # async fn run(agent: a2a_card::client::RemoteAgent) -> Result<(), a2a_card::client::ClientError> {
    /// use a2a_card::client::Payload;
    /// let m = agent.message("plan-trip", Payload::text("Lisbon, 2 days"))?;
    /// if agent.names_skills() {
    ///     let named = &m.metadata.as_ref().unwrap()[a2a_card::dispatch::SKILL_EXTENSION_URI];
    ///     assert_eq!(named["skill"], "plan-trip");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn names_skills(&self) -> bool {
        declares(&self.inner.card, crate::dispatch::SKILL_EXTENSION_URI)
    }

    /// Whether the agent makes sends idempotent by their message's id (its card declares
    /// [`IDEMPOTENCY_EXTENSION_URI`](crate::idempotency::IDEMPOTENCY_EXTENSION_URI)): then
    /// this client asks for it on every request, and a message sent again (the same
    /// `messageId`) reaches the task the first sending made instead of making another.
    ///
    /// ```no_run
    /// # async fn run(agent: a2a_card::client::RemoteAgent) -> Result<(), a2a_card::client::ClientError> {
    /// use a2a_card::client::Payload;
    /// let message = agent.message("plan-trip", Payload::text("Lisbon, 2 days"))?;
    /// let first = agent.send_message(message.clone(), false).await;
    /// if first.is_err() && agent.idempotent_sends() {
    ///     // The answer was lost: sending the same message again is safe.
    ///     agent.send_message(message, false).await?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn idempotent_sends(&self) -> bool {
        declares(
            &self.inner.card,
            crate::idempotency::IDEMPOTENCY_EXTENSION_URI,
        )
    }

    /// Whether the agent reads a new task's budget (its card declares
    /// [`BUDGET_EXTENSION_URI`](crate::budget::BUDGET_EXTENSION_URI)): then a message given one
    /// with [`with_budget`](crate::budget::with_budget) makes a task whose skill sees it.
    ///
    /// ```no_run
    /// # async fn run(agent: a2a_card::client::RemoteAgent) -> Result<(), a2a_card::client::ClientError> {
    /// use std::time::Duration;
    /// use a2a_card::client::Payload;
    /// let mut message = agent.message("plan-trip", Payload::text("Lisbon, 2 days"))?;
    /// if agent.takes_budgets() {
    ///     a2a_card::budget::with_budget(&mut message, Duration::from_secs(30));
    /// }
    /// agent.send_message(message, false).await?;
    /// # Ok(()) }
    /// ```
    pub fn takes_budgets(&self) -> bool {
        declares(&self.inner.card, crate::budget::BUDGET_EXTENSION_URI)
    }

    pub(crate) fn client(&self) -> Result<&Official, ClientError> {
        self.inner
            .client
            .as_ref()
            .map_err(|e| ClientError::Transport(e.clone()))
    }

    /// Sends `payload` to skill `skill` and waits for the task to finish or to ask something.
    /// The outcome's state says which ([`TaskOutcome::into_result`] turns a failed task into
    /// an error).
    ///
    /// ```no_run
    /// # async fn run(agent: a2a_card::client::RemoteAgent) -> Result<(), a2a_card::client::ClientError> {
    /// use a2a_card::client::{Content, Payload};
    /// let done = agent.call("fight-comparison", Payload::text("Lion or Tiger?")).await?.into_result()?;
    /// for output in done.outputs() {
    ///     if let Content::Text(t) = &output.content { println!("{t}"); }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn call(&self, skill: &str, payload: Payload) -> Result<TaskOutcome, ClientError> {
        let message = self.message(skill, payload)?;
        self.send_message(message, false).await
    }

    /// Sends `payload` to skill `skill` without waiting: the task as it was created.
    ///
    /// ```no_run
    /// # async fn run(agent: a2a_card::client::RemoteAgent) -> Result<(), a2a_card::client::ClientError> {
    /// use a2a_card::client::Payload;
    /// let handle = agent.send("fight-comparison", Payload::text("Lion or Tiger?")).await?;
    /// println!("task {}", handle.task_id());
    /// let done = handle.wait().await?;
    /// # Ok(()) }
    /// ```
    pub async fn send(&self, skill: &str, payload: Payload) -> Result<TaskHandle, ClientError> {
        let message = self.message(skill, payload)?;
        let outcome = self.send_message(message, true).await?;
        TaskHandle::from_outcome(self.clone(), outcome)
    }

    /// Sends `payload` to skill `skill` and follows the task as it runs.
    ///
    /// ```no_run
    /// # async fn run(agent: a2a_card::client::RemoteAgent) -> Result<(), a2a_card::client::ClientError> {
    /// use a2a_card::client::{Event, Payload};
    /// use futures::StreamExt;
    /// let mut run = agent.stream("plan-trip", Payload::data(serde_json::json!({"destination": "Lisbon", "days": 2}))).await?;
    /// while let Some(event) = run.next().await {
    ///     match event? {
    ///         Event::Question { .. } => run.answer("2026-12-01").await?,
    ///         other => println!("{other:?}"),
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn stream(&self, skill: &str, payload: Payload) -> Result<Run, ClientError> {
        let message = self.message(skill, payload)?;
        Run::start(self.clone(), message).await
    }

    /// Sends a prepared message (see [`message`](Self::message)) and follows the task.
    pub async fn stream_message(&self, message: a2a::Message) -> Result<Run, ClientError> {
        Run::start(self.clone(), message).await
    }

    /// Sends a prepared message (see [`message`](Self::message)) and waits, or not
    /// (`return_immediately`).
    pub async fn send_message(
        &self,
        message: a2a::Message,
        return_immediately: bool,
    ) -> Result<TaskOutcome, ClientError> {
        let request = a2a::SendMessageRequest {
            message,
            configuration: Some(a2a::SendMessageConfiguration {
                accepted_output_modes: None,
                task_push_notification_config: None,
                history_length: None,
                return_immediately: Some(return_immediately),
            }),
            metadata: None,
            tenant: None,
        };
        let client = self.client()?;
        let response = traced("SendMessage", client.send_message(&request))
            .await
            .map_err(ClientError::from_a2a)?;
        Ok(TaskOutcome::from_response(response))
    }
}
