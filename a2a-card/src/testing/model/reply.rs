//! The replies a [`ScriptedModel`]'s script is made of: [`ScriptedReply`] (text, tool calls
//! or a provider error, and the usage it reports) and the [`ScriptedCall`]s it makes.
//!
//! [`ScriptedModel`]: super::ScriptedModel

use rig_core::completion::Usage;
use serde_json::Value;

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
///
/// [`ScriptedModel`]: super::ScriptedModel
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct ScriptedCall {
    pub(super) id: Option<String>,
    pub(super) name: String,
    pub(super) arguments: Value,
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
pub(super) enum Piece {
    Text(String),
    Call(ScriptedCall),
}

/// What a scripted reply answers.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Answer {
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
///
/// [`ScriptedModel`]: super::ScriptedModel
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct ScriptedReply {
    pub(super) answer: Answer,
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
    ///
    /// [`ProviderError::Provider`]: rig_core::error::ProviderError::Provider
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
    pub(super) fn calls_mut(&mut self) -> impl Iterator<Item = &mut ScriptedCall> {
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
pub(super) fn tokens(input: u64, output: u64) -> Usage {
    Usage::new()
        .input_tokens(input)
        .output_tokens(output)
        .total_tokens(input.saturating_add(output))
}
