//! The wire of a [`ScriptedModel`] ([`ScriptedWire`]): its payload is the request itself, and
//! its frames, decoded here, are the steps of a scripted reply (the frames and their decoder
//! public for the wire's associated types, not reachable from outside the crate).

use rig_core::completion::options::{Mapping, OptionFields, OptionMap};
use rig_core::completion::{Accepts, CompletionRequest, FinishReason, ReplayTarget};
use rig_core::error::{EncodeError, ProviderError};
use rig_core::message::{Api, CallId, ToolName};
use rig_core::operation::{Block, Completion, Finish};
use rig_core::wire::document::{Reassemble, Serves};
use rig_core::wire::{Decoder, Descriptor, Flow, Mode, Out, Wire, WireEvent};
use serde_json::{Value, json};

use super::ScriptedModel;
use super::reply::{Answer, Piece, ScriptedCall, ScriptedReply};

/// The wire of a [`ScriptedModel`]: its payload is the request as rig's driver prepared it,
/// and its frames are the steps of a scripted reply. It names the provider
/// [`ScriptedModel::PROVIDER`] and the model [`ScriptedModel::MODEL`], reads every kind of
/// content (images, tool calls and results), sends documents and tool results as given, and
/// takes every generation option (sending nothing for it: read the options on the recorded
/// request).
///
/// ```
/// use a2a_card::rig::rig_core::driver::Model;
/// use a2a_card::testing::{ScriptedModel, ScriptedWire};
/// let model: Model<ScriptedWire, ScriptedModel> = Model::new(ScriptedWire::new(), ScriptedModel::new());
/// assert_eq!(model.name(), "scripted");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScriptedWire {
    _private: (),
}

impl ScriptedWire {
    /// The scripted wire.
    ///
    /// ```
    /// let wire = a2a_card::testing::ScriptedWire::new();
    /// # let _ = wire;
    /// ```
    #[must_use]
    pub fn new() -> ScriptedWire {
        ScriptedWire::default()
    }
}

/// The wire format a scripted reply records as its turn's API.
const API: Api = Api::from_static("scripted");

impl ReplayTarget for ScriptedWire {
    fn api(&self) -> Api {
        API
    }

    fn provider(&self) -> &str {
        ScriptedModel::PROVIDER
    }

    fn model(&self) -> &str {
        ScriptedModel::MODEL
    }

    fn accepts(&self, _model: &str) -> Accepts {
        Accepts::ALL
    }

    /// Every option is taken and nothing sent for it: the recorded request keeps it.
    fn map_options(&self, _request: &CompletionRequest, fields: OptionFields<'_>) -> OptionMap {
        let OptionFields {
            reasoning,
            cache,
            service_tier,
            verbosity,
            parallel_tool_calls,
            top_p,
            seed,
            stop,
        } = fields;
        fn taken<T>(_: T) -> Mapping {
            Mapping::Omit("a scripted model sends nothing for an option")
        }
        OptionMap {
            reasoning: Mapping::of(reasoning, taken),
            cache: Mapping::of(cache, taken),
            service_tier: Mapping::of(service_tier, taken),
            verbosity: Mapping::of(verbosity, taken),
            parallel_tool_calls: Mapping::of(parallel_tool_calls, taken),
            top_p: Mapping::of(top_p, taken),
            seed: Mapping::of(seed, taken),
            stop: Mapping::of_stop(stop, |stop| taken(stop)),
        }
    }

    fn states_finish_reason(&self) -> bool {
        false
    }

    fn takes_documents(&self) -> bool {
        true
    }

    fn result_parts(&self, _model: &str) -> bool {
        true
    }
}

impl Wire for ScriptedWire {
    type Op = Completion;
    type Payload = CompletionRequest;
    type Frame = Frame;
    type Decoder<'id> = Steps;
    type Reassembler = Stated;

    fn describe(&self) -> Descriptor<'_> {
        Descriptor::new(ScriptedModel::PROVIDER)
            .model(ScriptedModel::MODEL)
            .replay(self)
    }

    fn encode(
        &self,
        request: CompletionRequest,
        _mode: Mode,
    ) -> Result<CompletionRequest, EncodeError> {
        Ok(request)
    }

    fn decoder<'id>(&self) -> Self::Decoder<'id> {
        Steps
    }
}

/// One step of a scripted reply, written through the completion writer as it comes.
pub enum Frame {
    /// A block opens at `index`.
    Open { index: usize, block: Block },
    /// A fragment of the block at `index`: text, or argument JSON.
    Push { index: usize, fragment: String },
    /// The block at `index` is complete.
    Finish { index: usize },
    /// The reply ends.
    End(Finish),
}

/// The decoder: each frame is written as it is.
#[derive(Debug, Default)]
pub struct Steps;

impl<'id> Decoder<'id, Completion, Frame> for Steps {
    type Event = Frame;

    fn classify(&self, frame: Frame) -> WireEvent<Frame> {
        WireEvent::Known(frame)
    }

    fn decode(
        &mut self,
        frame: Frame,
        mut out: Out<'id, Completion>,
    ) -> Result<Flow, ProviderError> {
        match frame {
            Frame::Open { index, block } => out.open(index, block, Value::Null)?,
            Frame::Push { index, fragment } => out.push(index, &fragment)?,
            Frame::Finish { index } => out.finish(index)?,
            Frame::End(finish) => return Ok(out.end(finish)),
        }
        Ok(Flow::More)
    }
}

/// The reply document: the transport states it whole with every reply (the reply as
/// scripted), so nothing is rebuilt from frames.
#[derive(Debug, Default)]
pub struct Stated;

impl Reassemble<Frame> for Stated {
    fn absorb(&mut self, _frame: &Frame) {}

    fn finish(self) -> Value {
        Value::Null
    }
}

impl Serves<Completion> for Stated {}

/// The text deltas of `text`: each word with the whitespace after it.
pub(super) fn deltas(text: &str) -> Vec<&str> {
    let mut deltas = Vec::new();
    let mut start = 0;
    let mut after_space = false;
    for (at, c) in text.char_indices() {
        if after_space && !c.is_whitespace() {
            deltas.push(&text[start..at]);
            start = at;
        }
        after_space = c.is_whitespace();
    }
    if start < text.len() {
        deltas.push(&text[start..]);
    }
    deltas
}

/// The frames of `reply`, the `place`-th of its script (from 1), and the reply's document;
/// or the message of the error it answers with.
pub(super) fn frames(reply: ScriptedReply, place: usize) -> Result<(Vec<Frame>, Value), String> {
    let (pieces, usage) = match reply.answer {
        Answer::Error(message) => return Err(message),
        Answer::Content { pieces, usage } => (pieces, usage),
    };
    let response_id = format!("scripted-{place}");
    let mut frames = Vec::new();
    let mut content = Vec::new();
    let mut calls = false;
    for (index, piece) in pieces.into_iter().enumerate() {
        match piece {
            Piece::Text(text) => {
                frames.push(Frame::Open {
                    index,
                    block: Block::Text,
                });
                frames.extend(deltas(&text).into_iter().map(|delta| Frame::Push {
                    index,
                    fragment: delta.to_owned(),
                }));
                content.push(json!({"type": "text", "text": text}));
            }
            Piece::Call(ScriptedCall {
                id,
                name,
                arguments,
            }) => {
                let Ok(tool) = ToolName::new(name.as_str()) else {
                    return Err(format!(
                        "scripted reply {place} calls a tool with an empty name"
                    ));
                };
                let id = id.unwrap_or_default();
                calls = true;
                frames.push(Frame::Open {
                    index,
                    block: Block::Call {
                        id: CallId::from_wire(id.as_str()),
                        name: tool,
                    },
                });
                frames.push(Frame::Push {
                    index,
                    fragment: arguments.to_string(),
                });
                content.push(json!({
                    "type": "tool_call", "id": id, "name": name, "arguments": arguments,
                }));
            }
        }
        frames.push(Frame::Finish { index });
    }
    let document = json!({
        "id": response_id,
        "content": content,
        "usage": serde_json::to_value(usage).unwrap_or(Value::Null),
    });
    frames.push(Frame::End(Finish {
        usage,
        reason: Some(if calls {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        }),
        response_id: Some(response_id),
        ..Finish::default()
    }));
    Ok((frames, document))
}
