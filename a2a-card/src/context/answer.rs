//! The caller's answers to a handler's questions, and why a question has none.

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::file::File;
use crate::skill::SkillError;

/// The caller's answer to [`SkillContext::ask`](super::SkillContext::ask): the message it sent on the task.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Answer {
    /// The message's text (its text parts, joined by newlines).
    pub text: String,
    /// The data of its first data part, if any.
    pub data: Option<Value>,
    /// Its files.
    pub files: Vec<File>,
    /// The whole message, as JSON (file parts taken out into `files`).
    pub message: Value,
}

impl Answer {
    /// The answer's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The answer's data as `T`.
    ///
    /// ```
    /// let answer = a2a_card::Answer::new("", Some(serde_json::json!({"day": 3})));
    /// #[derive(serde::Deserialize)]
    /// struct Day { day: u8 }
    /// assert_eq!(answer.data::<Day>().unwrap().day, 3);
    /// ```
    pub fn data<T: DeserializeOwned>(&self) -> Result<T, SkillError> {
        let data = self
            .data
            .clone()
            .ok_or_else(|| SkillError::Input("the answer carries no data part".to_owned()))?;
        serde_json::from_value(data)
            .map_err(|e| SkillError::Input(format!("the answer's data does not fit: {e}")))
    }

    /// An answer of this text and data (for tests of handlers).
    pub fn new(text: impl Into<String>, data: Option<Value>) -> Answer {
        Answer {
            text: text.into(),
            data,
            files: Vec::new(),
            message: Value::Null,
        }
    }
}

/// Why [`SkillContext::ask`](super::SkillContext::ask) has no answer: there is no caller to ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interrupted(pub(super) String);

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Interrupted {}

impl From<Interrupted> for String {
    fn from(e: Interrupted) -> String {
        e.0
    }
}

impl From<SkillError> for String {
    fn from(e: SkillError) -> String {
        e.to_string()
    }
}

impl From<Interrupted> for SkillError {
    fn from(e: Interrupted) -> SkillError {
        SkillError::Failed(e.0)
    }
}
