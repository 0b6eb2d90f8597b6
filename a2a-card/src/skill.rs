//! What a skill handler takes and returns, and the glue the macros' generated code calls
//! (through `__private`). The user guide, with the tables of types, is on `#[skill]` in `lib.rs`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::SkillContext;
use crate::file::File;
use crate::schema::NamedSchema;

/// The incoming message, as the dispatcher gives it to a skill.
#[doc(hidden)] // Macro plumbing: reached by generated code through `__private`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SkillCall {
    /// The input the message carries for the skill.
    pub input: CallInput,
    /// The message's files, in order.
    pub files: Vec<File>,
    /// The task, the context and the raw message.
    pub context: SkillContext,
}

impl SkillCall {
    /// A call with this input and context.
    pub fn new(input: CallInput, context: SkillContext) -> Self {
        SkillCall {
            input,
            files: Vec::new(),
            context,
        }
    }

    /// The same call, carrying these files.
    pub fn with_files(mut self, files: Vec<File>) -> Self {
        self.files = files;
        self
    }
}

/// The input of a call.
#[doc(hidden)] // Macro plumbing: reached by generated code through `__private`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallInput {
    /// The message's text.
    Text(String),
    /// The data of the message's structured part (already validated against the schema).
    Data(Value),
    /// Nothing (already taken by an argument).
    None,
}

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

/// A type a skill handler can take as an argument. See [`#[skill]`](macro@crate::skill) for the
/// types that are.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an argument of a skill",
    label = "the dispatcher cannot produce this argument",
    note = "a skill takes at most one input: a type deriving `a2a_card::Schema` and `serde::Deserialize`, `String`, `a2a_card::Input<T>`, or `serde_json::Value` (plain JSON); and optionally an `a2a_card::SkillContext` and the message's files (`a2a_card::File`, `Option<File>`, `Vec<File>`)"
)]
#[doc(hidden)] // Macro plumbing: reached by generated code through `__private`.
pub trait SkillArg: Sized + Send {
    /// The input this argument takes from the message.
    const INPUT: Io;
    /// Takes the argument from the call.
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError>;
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

fn take_input(call: &mut SkillCall) -> CallInput {
    std::mem::replace(&mut call.input, CallInput::None)
}

fn data<T: NamedSchema + DeserializeOwned>(value: Value) -> Result<T, SkillError> {
    serde_json::from_value(value).map_err(|e| {
        SkillError::Input(format!(
            "the data does not fit schema `{}`: {e}",
            T::SCHEMA_NAME
        ))
    })
}

impl<T: NamedSchema + DeserializeOwned + Send> SkillArg for T {
    const INPUT: Io = Io::of::<T>(false);
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError> {
        match take_input(call) {
            CallInput::Data(value) => data(value),
            _ => Err(SkillError::Input(format!(
                "this skill takes structured data (application/json;schema={}), not text",
                T::SCHEMA_NAME
            ))),
        }
    }
}

impl<T: NamedSchema + DeserializeOwned + Send> SkillArg for Input<T> {
    const INPUT: Io = Io::of::<T>(true);
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError> {
        match take_input(call) {
            CallInput::Text(text) => Ok(Input::Text(text)),
            CallInput::Data(value) => data(value).map(Input::Data),
            CallInput::None => Err(SkillError::Input("the message has no input".into())),
        }
    }
}

impl SkillArg for String {
    const INPUT: Io = Io::TEXT;
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError> {
        match take_input(call) {
            CallInput::Text(text) => Ok(text),
            _ => Err(SkillError::Input(
                "this skill takes text (text/plain)".into(),
            )),
        }
    }
}

/// Plain JSON: a data part without a schema media type (`application/json`, or none), as it
/// is. The skill lists `application/json`.
impl SkillArg for Value {
    const INPUT: Io = Io::JSON;
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError> {
        match take_input(call) {
            CallInput::Data(value) => Ok(value),
            _ => Err(SkillError::Input(
                "this skill takes JSON data (application/json): send a data part".into(),
            )),
        }
    }
}

impl SkillArg for SkillContext {
    const INPUT: Io = Io {
        context: true,
        ..Io::NONE
    };
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError> {
        Ok(call.context.clone())
    }
}

impl SkillArg for File {
    const INPUT: Io = Io::FILES;
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError> {
        if call.files.is_empty() {
            return Err(SkillError::Input(
                "this skill takes a file: attach one as a file part".into(),
            ));
        }
        Ok(call.files.remove(0))
    }
}

impl SkillArg for Option<File> {
    const INPUT: Io = Io::FILES;
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError> {
        Ok((!call.files.is_empty()).then(|| call.files.remove(0)))
    }
}

impl SkillArg for Vec<File> {
    const INPUT: Io = Io::FILES;
    fn extract(call: &mut SkillCall) -> Result<Self, SkillError> {
        Ok(std::mem::take(&mut call.files))
    }
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

/// Sends a streaming handler's items as they come, each turned into a reply by `reply` (what
/// `#[skill]` calls for a handler that returns `impl Stream<Item = R>`, with
/// `R::into_reply`).
#[doc(hidden)]
pub async fn drain<S, R>(
    stream: S,
    context: &SkillContext,
    reply: fn(R) -> Result<Reply, SkillError>,
) -> Result<Reply, SkillError>
where
    S: futures::Stream<Item = R> + Send,
{
    context.drain(stream, reply).await
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
