//! What dispatch answers to a message ([`Decision`]), and why it refuses one
//! ([`DispatchError`], each [`Violation`] of a schema).

use std::fmt;

use serde_json::{Value, json};

use crate::arguments::SkillCall;

/// How many violations an [`DispatchError::InvalidData`] lists at most.
pub const MAX_VIOLATIONS: usize = 16;
/// How long (in bytes) a violation's message, or a path, may be before it is cut.
pub const MAX_DETAIL_LEN: usize = 256;

/// What to answer to a message: run a skill, give a running task the caller's answer, or reject
/// the message.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Decision {
    /// Run skill `skill` (an index into [`Agent::SKILLS`](crate::Agent)) with this call.
    Run {
        /// The skill.
        skill: usize,
        /// The input and context to call it with: what the server hands the skill (an opaque
        /// value outside the crate).
        call: SkillCall,
    },
    /// The message names an existing task and carries no structured input: it answers a
    /// question the task asked. The call holds its text (or unflagged data) and files (an
    /// opaque value outside the crate, as in [`Run`](Self::Run)).
    FollowUp(SkillCall),
    /// Answer with this error.
    Reject(DispatchError),
}

/// One way the data of a structured part breaks its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Violation {
    /// Where in the data (a JSON pointer).
    pub instance_path: String,
    /// Which keyword of the schema (a JSON pointer into the schema).
    pub schema_path: String,
    /// What is wrong.
    pub message: String,
}

/// `pointer: message` (`(root)` for the whole value), as every message that lists violations
/// says it.
impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = match self.instance_path.as_str() {
            "" => "(root)",
            path => path,
        };
        write!(f, "{at}: {}", self.message)
    }
}

/// Why a message cannot run a skill, with the A2A error code to answer with.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DispatchError {
    /// The message's structured part names a schema that no skill of the card takes.
    UndeclaredSchema {
        /// The part's mode as sent.
        mode: String,
        /// The schema name it names.
        name: String,
    },
    /// The structured part's data does not follow its schema.
    InvalidData {
        /// The schema.
        schema: String,
        /// The violations, at most [`MAX_VIOLATIONS`].
        violations: Vec<Violation>,
        /// Whether there were more than are listed.
        truncated: bool,
    },
    /// The message carries structured input but names a task that already exists.
    TaskAlreadyRunning {
        /// The task.
        task_id: String,
        /// The schema of the structured part.
        schema: String,
    },
    /// The message has no structured part, and no skill takes text.
    NoTextSkill,
    /// The message has no structured part and no text.
    NoInput,
    /// The message is not a message object (no `parts` array).
    Malformed(String),
    /// The message carries a file of a media type the skill does not take.
    UnsupportedFile {
        /// The file's media type as sent (empty when it gave none).
        media_type: String,
        /// The skill.
        skill: String,
        /// The media types the skill takes files of.
        accepted: Vec<String>,
    },
}

impl DispatchError {
    /// The A2A error code: `-32005` (content type not supported) for input the agent does not
    /// take, `-32602` (invalid params) for data that breaks its schema or comes on a running task.
    pub fn code(&self) -> i64 {
        match self {
            DispatchError::UndeclaredSchema { .. }
            | DispatchError::NoTextSkill
            | DispatchError::NoInput
            | DispatchError::UnsupportedFile { .. } => -32005,
            DispatchError::InvalidData { .. }
            | DispatchError::TaskAlreadyRunning { .. }
            | DispatchError::Malformed(_) => -32602,
        }
    }

    /// The error's details, for the `data` of the error answer.
    pub fn data(&self) -> Value {
        match self {
            DispatchError::UndeclaredSchema { mode, name } => {
                json!({"reason": "undeclared-schema", "mode": mode, "schema": name})
            }
            DispatchError::InvalidData {
                schema,
                violations,
                truncated,
            } => json!({
                "reason": "invalid-data",
                "schema": schema,
                "violations": violations.iter().map(|v| json!({
                    "instancePath": v.instance_path,
                    "schemaPath": v.schema_path,
                    "message": v.message,
                })).collect::<Vec<_>>(),
                "truncated": truncated,
            }),
            DispatchError::TaskAlreadyRunning { task_id, schema } => json!({
                "reason": "task-already-running", "taskId": task_id, "schema": schema
            }),
            DispatchError::NoTextSkill => json!({"reason": "no-text-skill"}),
            DispatchError::NoInput => json!({"reason": "no-input"}),
            DispatchError::Malformed(m) => json!({"reason": "malformed-message", "detail": m}),
            DispatchError::UnsupportedFile {
                media_type,
                skill,
                accepted,
            } => json!({
                "reason": "unsupported-file", "mediaType": media_type, "skill": skill, "accepted": accepted
            }),
        }
    }
}

impl fmt::Display for DispatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DispatchError::UndeclaredSchema { name, .. } => write!(
                f,
                "the structured input names schema `{name}`, which no skill of this agent takes"
            ),
            DispatchError::InvalidData {
                schema, violations, ..
            } => {
                write!(f, "the data does not follow schema `{schema}`")?;
                if let Some(v) = violations.first() {
                    write!(f, ": {v}")?;
                    if violations.len() > 1 {
                        write!(f, " (and {} more)", violations.len() - 1)?;
                    }
                }
                Ok(())
            }
            DispatchError::TaskAlreadyRunning { task_id, .. } => write!(
                f,
                "structured input is rejected: task `{task_id}` is already running; send it in a new message without a task id"
            ),
            DispatchError::NoTextSkill => f.write_str(
                "this agent takes no text: send a data part, with an `application/json;schema=NAME` media type for a skill that takes a schema (or plain JSON for one that takes it)",
            ),
            DispatchError::NoInput => f.write_str("the message has no text, no structured data part, and no file that a skill of this agent takes"),
            DispatchError::Malformed(m) => write!(f, "malformed message: {m}"),
            DispatchError::UnsupportedFile {
                media_type,
                skill,
                accepted,
            } if accepted.is_empty() => write!(
                f,
                "skill `{skill}` takes no files, and the message carries one ({})",
                if media_type.is_empty() { "no media type" } else { media_type }
            ),
            DispatchError::UnsupportedFile {
                media_type,
                skill,
                accepted,
            } => write!(
                f,
                "skill `{skill}` takes files of {}, not `{media_type}`",
                accepted.join(", ")
            ),
        }
    }
}

impl std::error::Error for DispatchError {}
