//! What a skill handler returns (its reply or its error, [`SkillReturn`]) and the input and
//! output types and modes its signature declares ([`Io`]), with the glue the macros' generated
//! code calls (through `__private`). What it takes is in `arguments`. The user guide, with the
//! tables of types, is on `#[skill]` in `lib.rs`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde::Serialize;
use serde_json::Value;

use crate::file::File;
use crate::schema::NamedSchema;

/// A skill's answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Reply {
    /// Text, as a text part.
    Text(String),
    /// Structured data following the named schema, as a data part with mode
    /// `application/json;schema=NAME`.
    Data {
        /// The schema name.
        schema: &'static str,
        /// The data.
        value: Value,
    },
    /// A file, as a file part.
    File(File),
    /// Nothing more: the output was sent as it was produced (a streaming skill). The server's
    /// plumbing, not a value a handler returns.
    #[doc(hidden)]
    Streamed,
}

/// Why a skill produced no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkillError {
    /// The message's input cannot be given to the handler (wrong kind, or data that does not
    /// deserialise into the handler's type).
    Input(String),
    /// The handler returned an error: the task fails with this message.
    Failed(String),
    /// The handler's output could not be serialised.
    Output(String),
    /// No skill has this index.
    UnknownSkill(usize),
}

impl fmt::Display for SkillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkillError::Input(m) => write!(f, "invalid input: {m}"),
            SkillError::Failed(m) => f.write_str(m),
            SkillError::Output(m) => write!(f, "the skill's output could not be serialised: {m}"),
            SkillError::UnknownSkill(i) => write!(f, "no skill has index {i}"),
        }
    }
}

impl std::error::Error for SkillError {}

/// A durable handler that did not replay as its journal says fails with why.
impl From<crate::journal::Diverged> for SkillError {
    fn from(diverged: crate::journal::Diverged) -> Self {
        SkillError::Failed(diverged.0)
    }
}

/// The future a skill call returns.
#[doc(hidden)] // Macro plumbing: reached by generated code through `__private`.
pub type SkillFuture<'a> = Pin<Box<dyn Future<Output = Result<Reply, SkillError>> + Send + 'a>>;

/// A skill input that is either text or data following `T`'s schema: the skill lists both
/// `text/plain` and `application/json;schema=NAME`.
#[derive(Debug, Clone, PartialEq)]
pub enum Input<T> {
    /// The message's text.
    Text(String),
    /// Structured data.
    Data(T),
}

/// A skill output that is either text or data following `T`'s schema: the skill lists both
/// `text/plain` and `application/json;schema=NAME`.
#[derive(Debug, Clone, PartialEq)]
pub enum Output<T> {
    /// Text.
    Text(String),
    /// Structured data.
    Data(T),
}

/// What an input or output carries: text, a named schema, both, or nothing.
#[doc(hidden)] // Macro plumbing: reached by generated code through `__private`.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Io {
    /// Whether it is `text/plain`.
    pub text: bool,
    /// The named schema, if any.
    pub schema: Option<SchemaRef>,
    /// Whether it is plain JSON (`application/json` without a schema: a `serde_json::Value`).
    pub json: bool,
    /// Whether it carries files (of the skill's declared modes).
    pub files: bool,
    /// Whether it is streamed (an output only).
    pub streaming: bool,
    /// Whether the handler takes a [`SkillContext`] (and so can report progress and ask).
    pub context: bool,
}

impl Io {
    /// Neither text nor data.
    pub const NONE: Io = Io {
        text: false,
        schema: None,
        json: false,
        files: false,
        streaming: false,
        context: false,
    };
    /// Text only.
    pub const TEXT: Io = Io {
        text: true,
        ..Io::NONE
    };
    /// Plain JSON only (`application/json`).
    pub const JSON: Io = Io {
        json: true,
        ..Io::NONE
    };
    /// Files only.
    pub const FILES: Io = Io {
        files: true,
        ..Io::NONE
    };

    /// Data following `T`'s schema, and text too when `text`.
    pub const fn of<T: NamedSchema>(text: bool) -> Io {
        Io {
            text,
            schema: Some(SchemaRef::of::<T>()),
            ..Io::NONE
        }
    }

    /// The same, streamed.
    pub const fn streamed(self) -> Io {
        Io {
            streaming: true,
            ..self
        }
    }

    /// Whether it takes the message's input (text or data).
    pub const fn is_some(&self) -> bool {
        self.text || self.schema.is_some() || self.json
    }
}

/// A named schema, by name and generator.
#[doc(hidden)] // Macro plumbing: reached by generated code through `__private`.
#[derive(Clone, Copy)]
pub struct SchemaRef {
    /// The schema name.
    pub name: &'static str,
    /// Generates the schema.
    pub schema: fn() -> Value,
}

impl SchemaRef {
    /// The schema of `T`.
    pub const fn of<T: NamedSchema>() -> SchemaRef {
        SchemaRef {
            name: T::SCHEMA_NAME,
            schema: T::json_schema_value,
        }
    }
}

impl fmt::Debug for SchemaRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaRef")
            .field("name", &self.name)
            .finish()
    }
}

/// A type a skill handler can return. See [`#[skill]`](macro@crate::skill) for the types that
/// are.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a skill",
    label = "the dispatcher cannot turn this into an answer",
    note = "a skill returns a type deriving `a2a_card::Schema` and `serde::Serialize`, `String`, `a2a_card::Output<T>`, `a2a_card::File`, `impl Stream<Item = R>` of one of these, or a `Result` of one of these whose error implements `Display`"
)]
#[doc(hidden)] // Macro plumbing: reached by generated code through `__private`.
pub trait SkillReturn {
    /// The output modes the return type gives the skill.
    const OUTPUT: Io;
    /// Turns the value into an answer.
    fn into_reply(self) -> Result<Reply, SkillError>;
}

fn serialise<T: NamedSchema + Serialize>(value: &T) -> Result<Reply, SkillError> {
    serde_json::to_value(value)
        .map(|value| Reply::Data {
            schema: T::SCHEMA_NAME,
            value,
        })
        .map_err(|e| SkillError::Output(e.to_string()))
}

impl<T: NamedSchema + Serialize> SkillReturn for T {
    const OUTPUT: Io = Io::of::<T>(false);
    fn into_reply(self) -> Result<Reply, SkillError> {
        serialise(&self)
    }
}

impl<T: NamedSchema + Serialize> SkillReturn for Output<T> {
    const OUTPUT: Io = Io::of::<T>(true);
    fn into_reply(self) -> Result<Reply, SkillError> {
        match self {
            Output::Text(text) => Ok(Reply::Text(text)),
            Output::Data(value) => serialise(&value),
        }
    }
}

impl SkillReturn for File {
    const OUTPUT: Io = Io::FILES;
    fn into_reply(self) -> Result<Reply, SkillError> {
        Ok(Reply::File(self))
    }
}

impl SkillReturn for String {
    const OUTPUT: Io = Io::TEXT;
    fn into_reply(self) -> Result<Reply, SkillError> {
        Ok(Reply::Text(self))
    }
}

impl SkillReturn for &'static str {
    const OUTPUT: Io = Io::TEXT;
    fn into_reply(self) -> Result<Reply, SkillError> {
        Ok(Reply::Text(self.to_owned()))
    }
}

impl<R: SkillReturn, E: fmt::Display> SkillReturn for Result<R, E> {
    const OUTPUT: Io = R::OUTPUT;
    fn into_reply(self) -> Result<Reply, SkillError> {
        match self {
            Ok(r) => r.into_reply(),
            Err(e) => Err(SkillError::Failed(e.to_string())),
        }
    }
}
