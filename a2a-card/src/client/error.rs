//! Why a call to an agent did not give an answer.

use std::fmt;

use crate::dispatch::Violation;
use crate::sign::VerifyError;

/// Why discovering or calling an agent failed.
///
/// Each variant says where: the URL, the skill, the schema and the JSON pointer of each
/// violation. Credentials given to [`Connect`](super::Connect) never appear in an error.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ClientError {
    /// The agent could not be reached (connection refused, DNS, timeout) or answered the card
    /// request with an HTTP error.
    Unreachable {
        /// The URL asked.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The document at the card URL is not a card (not JSON, too large, too deep).
    NotACard {
        /// The card URL.
        url: String,
        /// What is wrong with it.
        message: String,
    },
    /// Signature verification was asked for and no signature verified.
    Signature(VerifyError),
    /// The card names no skill with this id.
    UnknownSkill {
        /// The id asked for.
        skill: String,
        /// The ids the card lists.
        available: Vec<String>,
    },
    /// The skill does not take this kind of input (data for a text-only skill, or text for a
    /// skill that takes only structured data).
    UnsupportedInput {
        /// The skill.
        skill: String,
        /// What was given (`structured data`, `text`).
        given: &'static str,
        /// The skill's input modes.
        modes: Vec<String>,
    },
    /// The data does not follow the skill's input schema (checked before anything is sent).
    InvalidInput {
        /// The schema.
        schema: String,
        /// Each violation, with its JSON pointer into the data.
        violations: Vec<Violation>,
    },
    /// The typed client was built from a declaration that the remote agent no longer matches:
    /// a skill is missing, or a schema differs (compared by SHA-256 digest of its RFC 8785
    /// form).
    Stale {
        /// The skill.
        skill: String,
        /// What differs.
        reason: String,
    },
    /// The agent refused the request (an A2A error answer: invalid params, unsupported content
    /// type, unauthenticated...).
    Rejected {
        /// The A2A (JSON-RPC) error code.
        code: i32,
        /// The agent's message.
        message: String,
        /// The `reason` of the error's `google.rpc.ErrorInfo` detail (`UNAUTHENTICATED`,
        /// `INVALID_PARAMS`...), when it has one.
        reason: Option<String>,
        /// The violations the agent listed, when it rejected structured data.
        violations: Vec<Violation>,
    },
    /// The task ended without an answer: failed, rejected or canceled.
    TaskFailed {
        /// The task.
        task_id: String,
        /// Its final state.
        state: a2a::TaskState,
        /// The status message, when the agent gave one.
        message: Option<String>,
    },
    /// The task waits for the caller: answer it (see [`Run::answer`](super::Run::answer) and
    /// [`TaskHandle::answer`](super::TaskHandle::answer)).
    InputRequired {
        /// The task.
        task_id: String,
        /// The agent's question.
        question: String,
        /// Whether it asks for authentication (`auth-required`) rather than input.
        auth: bool,
    },
    /// The answer does not follow the skill's output schema, or is not of the skill's output
    /// kind.
    InvalidOutput {
        /// The skill's output schema, or the kind expected.
        expected: String,
        /// What is wrong, with JSON pointers.
        message: String,
    },
    /// The card offers no interface the client speaks (A2A 1.0 JSON-RPC or HTTP+JSON, or
    /// 0.3 JSON-RPC), or the request could not be made.
    Transport(String),
    /// The root certificates given to
    /// [`Connect::root_certificates_pem`](super::Connect::root_certificates_pem) are not a
    /// PEM bundle of certificates.
    Certificates(String),
    /// The budget of the task that made the call ([`SkillContext::budget`](crate::SkillContext::budget))
    /// was spent before the agent called answered: the call stopped waiting (and cancelled
    /// the task it made there, if any).
    OutOfTime {
        /// The task the call made at the agent called, if it made one.
        task_id: Option<String>,
    },
    /// A durable skill's call did not replay as its journal says (another skill called where
    /// the journal records this one, or a recorded outcome that no longer reads): the durable
    /// handler's code changed without a marker or a new version.
    Journal(String),
}

impl ClientError {
    /// Whether the request never reached a skill because of what the caller gave or where it
    /// pointed (exit code 2 of `a2a-card call`), as opposed to a task that ran and ended badly.
    ///
    /// ```
    /// use a2a_card::client::ClientError;
    /// let e = ClientError::UnknownSkill { skill: "x".into(), available: vec![] };
    /// assert!(e.is_usage());
    /// ```
    pub fn is_usage(&self) -> bool {
        !matches!(
            self,
            ClientError::TaskFailed { .. }
                | ClientError::InputRequired { .. }
                | ClientError::InvalidOutput { .. }
                | ClientError::OutOfTime { .. }
                | ClientError::Journal(_)
        )
    }

    pub(crate) fn from_a2a(e: a2a::A2AError) -> ClientError {
        let violations = e
            .details
            .iter()
            .flatten()
            .filter(|d| d.type_url.ends_with("google.protobuf.Struct"))
            .flat_map(|d| {
                d.value
                    .get("violations")
                    .and_then(|v| v.as_array())
                    .cloned()
                    .unwrap_or_default()
            })
            .map(|v| Violation {
                instance_path: text(&v, "instancePath"),
                schema_path: text(&v, "schemaPath"),
                message: text(&v, "message"),
            })
            .collect();
        let reason = e
            .details
            .iter()
            .flatten()
            .filter(|d| d.type_url.ends_with("google.rpc.ErrorInfo"))
            .find_map(|d| d.value.get("reason")?.as_str().map(str::to_owned));
        ClientError::Rejected {
            code: e.code,
            message: e.message,
            reason,
            violations,
        }
    }
}

fn text(v: &serde_json::Value, key: &str) -> String {
    v.get(key)
        .and_then(|s| s.as_str())
        .unwrap_or_default()
        .to_owned()
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Unreachable { url, message } => {
                write!(f, "cannot reach the agent at {url}: {message}")
            }
            ClientError::NotACard { url, message } => {
                write!(f, "{url} is not an agent card: {message}")
            }
            ClientError::Signature(e) => write!(f, "the card's signature was rejected: {e}"),
            ClientError::Certificates(message) => f.write_str(message),
            ClientError::UnknownSkill { skill, available } => write!(
                f,
                "the agent has no skill `{skill}`; its skills: {}",
                if available.is_empty() {
                    "none".to_owned()
                } else {
                    available.join(", ")
                }
            ),
            ClientError::UnsupportedInput {
                skill,
                given,
                modes,
            } => write!(
                f,
                "skill `{skill}` does not take {given}; its input modes: {}",
                modes.join(", ")
            ),
            ClientError::InvalidInput { schema, violations } => {
                write!(f, "the data does not follow schema `{schema}`")?;
                for (i, v) in violations.iter().enumerate() {
                    let sep = if i == 0 { ": " } else { "; " };
                    write!(f, "{sep}{v}")?;
                }
                Ok(())
            }
            ClientError::Stale { skill, reason } => write!(
                f,
                "the remote agent does not match the compiled declaration of skill `{skill}`: {reason}; rebuild the client against the agent's current declaration"
            ),
            ClientError::Rejected {
                code,
                message,
                violations,
                ..
            } => {
                write!(f, "the agent refused the request ({code}): {message}")?;
                for v in violations.iter().skip(1) {
                    write!(f, "; {v}")?;
                }
                Ok(())
            }
            ClientError::TaskFailed {
                task_id,
                state,
                message,
            } => {
                write!(f, "task {task_id} ended {}", crate::v0_3::state_name(state))?;
                match message {
                    Some(m) => write!(f, ": {m}"),
                    None => Ok(()),
                }
            }
            ClientError::InputRequired {
                task_id,
                question,
                auth,
            } => write!(
                f,
                "task {task_id} waits for {}: {question}",
                if *auth { "authentication" } else { "input" }
            ),
            ClientError::InvalidOutput { expected, message } => {
                write!(f, "the answer is not a valid {expected}: {message}")
            }
            ClientError::Transport(m) | ClientError::Journal(m) => f.write_str(m),
            ClientError::OutOfTime { task_id } => {
                f.write_str("the calling task's budget was spent before the agent answered")?;
                match task_id {
                    Some(id) => write!(f, ": its task {id} was cancelled"),
                    None => Ok(()),
                }
            }
        }
    }
}

impl std::error::Error for ClientError {}

/// A handler that calls another agent may use `?` on the call: its task fails saying why.
impl From<ClientError> for crate::SkillError {
    fn from(e: ClientError) -> Self {
        crate::SkillError::Failed(e.to_string())
    }
}
