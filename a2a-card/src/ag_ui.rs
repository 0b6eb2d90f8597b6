//! The AG-UI projection of a card: the `AgentCapabilities` snapshot that AG-UI clients fetch
//! from `GET {url}/capabilities` (AG-UI 1.0, from its capabilities discovery proposal).
//!
//! [`snapshot`] gives the JSON a server answers with; [`Capabilities::from_card`] gives
//! the same snapshot typed, for code that wants to add to it (say, a [`custom`](Capabilities::custom)
//! entry) before serialising it.
//!
//! AG-UI's rule is *absent = unknown*: a field is there only when the card says it. So the
//! projection derives every field from something the card declares, and leaves out what a card
//! cannot tell:
//!
//! | AG-UI field | emitted when | value |
//! |---|---|---|
//! | `identity.name`, `.description`, `.version` | non-empty on the card | the card's |
//! | `identity.type` | always | `"a2a"` ([`IDENTITY_TYPE`]) |
//! | `identity.provider` | the card has a provider | its `organization` |
//! | `identity.documentationUrl` | the card has one | the card's |
//! | `identity.metadata` | the card has an icon or a provider URL | `iconUrl`, `providerUrl` |
//! | `transport.streaming`, `.pushNotifications` | the card declares the capability | `true` or `false`, as declared |
//! | `transport.websocket`, `.httpBinary`, `.resumable` | never | a card does not say |
//! | `tools.supported` | the card has skills | `true` |
//! | `tools.items` | the card has skills | one [`Tool`] per skill (below) |
//! | `tools.parallelCalls`, `.clientProvided` | never | a card does not say |
//! | `output.structuredOutput` | a skill outputs an `application/json;schema=NAME` mode | `true` |
//! | `output.supportedMimeTypes` | a skill has output modes | their media types without parameters, deduplicated, in order of first appearance |
//! | `multimodal.input.*`, `multimodal.output.*` | a skill's modes include the modality (below) | `true` |
//! | `custom.a2a.supportedInterfaces` | the card has interfaces | where the agent speaks A2A: `url`, `protocolBinding`, `protocolVersion`, `tenant` |
//!
//! An object with nothing in it is left out, so a card that says nothing about transport gives no
//! `transport` key at all.
//!
//! A served agent knows more than its card says: [`Capabilities::for_agent`] (what the server's
//! `GET /capabilities` answers) adds, from the declaration:
//!
//! | AG-UI field | emitted when | value |
//! |---|---|---|
//! | `humanInTheLoop.supported` | a skill takes a [`SkillContext`](crate::SkillContext), with which it can ask the caller (`input-required`) | `true` |
//! | `transport.resumable` | the agent streams: `SubscribeToTask` with `Last-Event-ID` picks up a running task's events again after a dropped stream, exactly where it broke off | `true` |
//! | `custom.a2a.cancellation` | always: `CancelTask` reaches the running handler | `true` |
//!
//! **`identity.type`.** AG-UI defines it as "the framework or platform powering this agent"
//! (`"langgraph"`, `"mastra"`, ...). The projection is a function of the card, which may have been
//! parsed from any A2A agent, so it names the one thing every card is true of: the agent is an A2A
//! agent (`"a2a"`), reached with the A2A protocol at the interfaces in `custom.a2a`.
//!
//! **Tools.** Each skill is a tool named by the skill's `id` (a stable, kebab-case identifier,
//! which is what AG-UI tool names are), described by its `description`. Its `parameters` is a
//! JSON Schema of what the skill takes, always present (AG-UI's Python SDK before 1.0 requires
//! it):
//! 1. The skill lists an `application/json;schema=NAME` input mode whose schema the card carries
//!    (in its root `schemas`, or in the schemas extension entry's `params.schemas`): that schema,
//!    verbatim. The first such mode counts. A skill that also takes text keeps this schema: it is
//!    the structured form of its input.
//! 2. Otherwise, the skill takes text (a `text/*` input mode): an object with one required string,
//!    `text` — the message's text, which is all the skill reads ([`text_parameters`]).
//! 3. Otherwise (files, images, ...): `{"type": "object"}`, which says no more than AG-UI already
//!    does about tool arguments.
//!
//! The skill's display name, tags, examples and modes stay on the card: AG-UI's `Tool` has no
//! place for them that every SDK accepts (the Python SDK rejects unknown keys).
//!
//! **Modalities.** From the skills' input and output modes (a skill without modes has the card's
//! defaults; a card without skills, the defaults alone), by media type, case-insensitively:
//!
//! | flag | modes |
//! |---|---|
//! | `input.image` / `output.image` | `image/*` (any image subtype) |
//! | `input.audio` / `output.audio` | `audio/*` |
//! | `input.video` | `video/*` |
//! | `input.pdf` | `application/pdf` |
//! | `input.file` | `application/octet-stream` or `*/*`: arbitrary files |
//!
//! Only `true` is emitted. A card's modes are a list of what the agent takes, so a missing
//! modality could be read as `false`; but AG-UI clients gate features on `true` alone, and saying
//! `false` for every modality of every text agent would add noise and no information. Modes that
//! are not media types (0.2-era `"text"`, `"file"`) count for nothing; the linter reports them.
//!
//! ```
//! use a2a_card::{AgentCard, AgentSkill};
//! use a2a_card::ag_ui::snapshot;
//! use serde_json::json;
//!
//! let card = AgentCard::builder("Echo Agent", "Repeats every message back, word for word.", "1.0.0")
//!     .jsonrpc("https://echo.example.com/a2a")
//!     .streaming(true)
//!     .skill(AgentSkill::builder("echo", "Echo", "Returns the input message unchanged."))
//!     .build()
//!     .unwrap();
//! let caps = snapshot(&card);
//! assert_eq!(caps["identity"]["name"], "Echo Agent");
//! assert_eq!(caps["transport"], json!({"streaming": true}));
//! assert_eq!(caps["tools"]["items"][0]["name"], "echo");
//! assert_eq!(caps["output"]["supportedMimeTypes"], json!(["text/plain"]));
//! assert!(caps.get("multimodal").is_none());
//! ```

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::card::{AgentCard, AgentSkill};
use crate::schema::SchemaMode;
use a2a_card_rules::media::MediaType;

/// The `identity.type` of every projected card: the agent is an A2A agent.
pub const IDENTITY_TYPE: &str = "a2a";

/// The `parameters` of a tool whose skill takes text and no declared schema: an object with one
/// required string, `text`.
///
/// ```
/// let schema = a2a_card::ag_ui::text_parameters();
/// assert_eq!(schema["required"][0], "text");
/// ```
pub fn text_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "text": {
                "description": "The request, in plain text",
                "type": "string"
            }
        },
        "required": ["text"]
    })
}

/// AG-UI's `AgentCapabilities`: a typed, categorised snapshot of what an agent supports.
///
/// Every field is optional and omitted from the JSON when unset; AG-UI reads an omitted field as
/// *unknown*. Build it from a card with [`from_card`](Self::from_card) (the rules are in the
/// [module docs](self)), then serialise it with serde or [`to_json`](Self::to_json).
///
/// Only the categories a card or a declaration can speak to are modelled; AG-UI's `state`,
/// `multiAgent`, `reasoning` and `execution` are never emitted.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Capabilities {
    /// Who the agent is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<IdentityCapabilities>,
    /// How the agent can be reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport: Option<TransportCapabilities>,
    /// The tools the agent provides itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapabilities>,
    /// What the agent produces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputCapabilities>,
    /// Which non-text modalities the agent takes and produces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multimodal: Option<MultimodalCapabilities>,
    /// Whether the agent pauses for a person's input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub human_in_the_loop: Option<HumanInTheLoopCapabilities>,
    /// Integration-specific capabilities (AG-UI's escape hatch); omitted when empty.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub custom: Map<String, Value>,
}

/// AG-UI's `IdentityCapabilities`: who the agent is.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct IdentityCapabilities {
    /// Human-readable name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The framework or platform powering the agent.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// What the agent does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The agent's version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The organization that maintains the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Where the agent's documentation is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    /// Other identity information; omitted when empty.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}

/// AG-UI's `TransportCapabilities`: how the agent can be reached.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TransportCapabilities {
    /// Streams responses (server-sent events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Accepts WebSocket connections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub websocket: Option<bool>,
    /// Speaks AG-UI's binary protocol (protobuf over HTTP).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_binary: Option<bool>,
    /// Sends updates to a webhook after a run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// Resumes interrupted streams.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumable: Option<bool>,
}

/// AG-UI's `HumanInTheLoopCapabilities`: whether the agent pauses for a person.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct HumanInTheLoopCapabilities {
    /// The agent can stop and ask for input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supported: Option<bool>,
}

/// AG-UI's `ToolsCapabilities`: the tools the agent provides.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolsCapabilities {
    /// Whether the agent calls tools at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supported: Option<bool>,
    /// The tools the agent provides itself; omitted when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<Tool>,
    /// Whether the agent calls several tools at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_calls: Option<bool>,
    /// Whether the agent uses tools the client provides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_provided: Option<bool>,
}

/// AG-UI's `Tool`: a name, a description and a JSON Schema of the arguments.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Tool {
    /// The tool's name (a skill's id).
    pub name: String,
    /// What the tool does.
    pub description: String,
    /// A JSON Schema of the tool's arguments.
    pub parameters: Value,
}

impl Tool {
    /// A tool with this name, description and parameter schema.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Tool {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }

    /// The tool of one skill of `card` (see the [module docs](self) for `parameters`).
    pub fn from_skill(card: &AgentCard, skill: &AgentSkill) -> Self {
        Tool::new(
            skill.id.clone(),
            skill.description.clone(),
            parameters(card, card.input_modes_of(skill)),
        )
    }
}

/// AG-UI's `OutputCapabilities`: what the agent produces.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct OutputCapabilities {
    /// Whether the agent produces JSON that follows a schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<bool>,
    /// The media types the agent produces; omitted when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub supported_mime_types: Vec<String>,
}

/// AG-UI's `MultimodalCapabilities`: the modalities the agent takes and produces.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[non_exhaustive]
pub struct MultimodalCapabilities {
    /// What the agent takes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<MultimodalInput>,
    /// What the agent produces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<MultimodalOutput>,
}

/// AG-UI's `MultimodalInputCapabilities`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[non_exhaustive]
pub struct MultimodalInput {
    /// Takes images.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<bool>,
    /// Takes audio.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audio: Option<bool>,
    /// Takes video.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video: Option<bool>,
    /// Takes PDF documents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pdf: Option<bool>,
    /// Takes arbitrary files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<bool>,
}

/// AG-UI's `MultimodalOutputCapabilities`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[non_exhaustive]
pub struct MultimodalOutput {
    /// Produces images.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<bool>,
    /// Produces audio.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audio: Option<bool>,
}

/// The AG-UI `AgentCapabilities` JSON of a card: what `GET /capabilities` answers. See the
/// [module docs](self) for what is emitted when.
pub fn snapshot(card: &AgentCard) -> Value {
    Capabilities::from_card(card).to_json()
}

impl Capabilities {
    /// The capabilities a card declares (see the [module docs](self)).
    pub fn from_card(card: &AgentCard) -> Self {
        Capabilities {
            identity: Some(identity(card)),
            transport: transport(card),
            tools: tools(card),
            output: output(card),
            multimodal: multimodal(card),
            human_in_the_loop: None,
            custom: custom(card),
        }
    }

    /// The capabilities of a declared agent served with this crate's server: those of `card`
    /// (the card as served), plus what the declaration tells (see the [module docs](self)).
    ///
    /// ```
    /// use a2a_card::ag_ui::Capabilities;
    /// use a2a_card::{Agent, SkillContext, agent, skill};
    ///
    /// struct Booker;
    /// /// Books tables.
    /// #[agent(url = "http://127.0.0.1:9000")]
    /// impl Booker {
    ///     /// Books a table, asking for the time when it is missing.
    ///     #[skill]
    ///     async fn book(&self, request: String, ctx: SkillContext) -> Result<String, String> {
    ///         let time = ctx.ask("At what time?").await?;
    ///         Ok(format!("{request} at {}", time.text()))
    ///     }
    /// }
    /// let caps = Capabilities::for_agent::<Booker>(Booker::card().unwrap()).to_json();
    /// assert_eq!(caps["humanInTheLoop"]["supported"], true);
    /// assert_eq!(caps["custom"]["a2a"]["cancellation"], true);
    /// ```
    pub fn for_agent<A: crate::Agent>(card: &AgentCard) -> Self {
        let mut caps = Capabilities::from_card(card);
        if A::SKILLS.iter().any(|s| s.input.context) {
            caps.human_in_the_loop = Some(HumanInTheLoopCapabilities {
                supported: Some(true),
            });
        }
        if card.capabilities.streaming == Some(true) {
            caps.transport
                .get_or_insert_with(Default::default)
                .resumable = Some(true);
        }
        let a2a = caps
            .custom
            .entry("a2a")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(a2a) = a2a {
            a2a.insert("cancellation".into(), Value::Bool(true));
        }
        caps
    }

    /// The JSON of the snapshot.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("string-keyed maps, strings and booleans serialise")
    }
}

impl From<&AgentCard> for Capabilities {
    fn from(card: &AgentCard) -> Self {
        Capabilities::from_card(card)
    }
}

/// `Some` of a non-empty string.
fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

fn identity(card: &AgentCard) -> IdentityCapabilities {
    let mut metadata = Map::new();
    if let Some(icon) = card.icon_url.as_deref().and_then(non_empty) {
        metadata.insert("iconUrl".into(), icon.into());
    }
    if let Some(url) = card.provider.as_ref().and_then(|p| non_empty(&p.url)) {
        metadata.insert("providerUrl".into(), url.into());
    }
    IdentityCapabilities {
        name: non_empty(&card.name),
        type_: Some(IDENTITY_TYPE.to_owned()),
        description: non_empty(&card.description),
        version: non_empty(&card.version),
        provider: card
            .provider
            .as_ref()
            .and_then(|p| non_empty(&p.organization)),
        documentation_url: card.documentation_url.as_deref().and_then(non_empty),
        metadata,
    }
}

fn transport(card: &AgentCard) -> Option<TransportCapabilities> {
    let c = &card.capabilities;
    (c.streaming.is_some() || c.push_notifications.is_some()).then(|| TransportCapabilities {
        streaming: c.streaming,
        push_notifications: c.push_notifications,
        ..TransportCapabilities::default()
    })
}

fn tools(card: &AgentCard) -> Option<ToolsCapabilities> {
    (!card.skills.is_empty()).then(|| ToolsCapabilities {
        supported: Some(true),
        items: card
            .skills
            .iter()
            .map(|skill| Tool::from_skill(card, skill))
            .collect(),
        ..ToolsCapabilities::default()
    })
}

/// The named schema `name`: the card's root `schemas`, else the schemas extension entry's
/// `params.schemas` (where the strict placement puts them).
pub(crate) fn named_schema<'a>(card: &'a AgentCard, name: &str) -> Option<&'a Value> {
    card.schemas
        .get(name)
        .or_else(|| crate::wire::schemas_in_params(card)?.get(name))
}

fn parameters(card: &AgentCard, modes: &[String]) -> Value {
    let schema = modes
        .iter()
        .filter_map(|m| SchemaMode::parse(m))
        .find_map(|mode| named_schema(card, mode.name()));
    if let Some(schema) = schema {
        return schema.clone();
    }
    let media = || modes.iter().filter_map(|m| MediaType::parse(m).ok());
    if media().any(|m| m.type_() == "text") {
        text_parameters()
    } else {
        json!({"type": "object"})
    }
}

/// The input and output mode lists that describe the agent: each skill's (its own or the card's
/// defaults), or the defaults alone when there are no skills.
fn mode_lists(card: &AgentCard) -> (Vec<&[String]>, Vec<&[String]>) {
    if card.skills.is_empty() {
        return (
            vec![&card.default_input_modes],
            vec![&card.default_output_modes],
        );
    }
    card.skills
        .iter()
        .map(|s| (card.input_modes_of(s), card.output_modes_of(s)))
        .unzip()
}

fn media_types<'a>(lists: &'a [&'a [String]]) -> impl Iterator<Item = MediaType> + 'a {
    lists
        .iter()
        .flat_map(|list| list.iter())
        .filter_map(|m| MediaType::parse(m).ok())
}

fn output(card: &AgentCard) -> Option<OutputCapabilities> {
    let (_, outputs) = mode_lists(card);
    let structured = outputs
        .iter()
        .flat_map(|list| list.iter())
        .any(|m| SchemaMode::parse(m).is_some());
    let mut types: Vec<String> = Vec::new();
    for media in media_types(&outputs) {
        let essence = media.essence();
        if !types.contains(&essence) {
            types.push(essence);
        }
    }
    (structured || !types.is_empty()).then(|| OutputCapabilities {
        structured_output: structured.then_some(true),
        supported_mime_types: types,
    })
}

/// `Some(true)` when any of `media` passes `test`.
fn any(media: &[MediaType], test: impl Fn(&MediaType) -> bool) -> Option<bool> {
    media.iter().any(test).then_some(true)
}

fn multimodal(card: &AgentCard) -> Option<MultimodalCapabilities> {
    let (inputs, outputs) = mode_lists(card);
    let ins: Vec<MediaType> = media_types(&inputs).collect();
    let outs: Vec<MediaType> = media_types(&outputs).collect();
    let of = |t: &'static str| move |m: &MediaType| m.type_() == t;
    let input = MultimodalInput {
        image: any(&ins, of("image")),
        audio: any(&ins, of("audio")),
        video: any(&ins, of("video")),
        pdf: any(&ins, |m| m.type_() == "application" && m.subtype() == "pdf"),
        file: any(&ins, |m| {
            (m.type_() == "application" && m.subtype() == "octet-stream")
                || (m.type_() == "*" && m.subtype() == "*")
        }),
    };
    let output = MultimodalOutput {
        image: any(&outs, of("image")),
        audio: any(&outs, of("audio")),
    };
    let input = (input != MultimodalInput::default()).then_some(input);
    let output = (output != MultimodalOutput::default()).then_some(output);
    (input.is_some() || output.is_some()).then_some(MultimodalCapabilities { input, output })
}

fn custom(card: &AgentCard) -> Map<String, Value> {
    let interfaces: Vec<Value> = card
        .interfaces
        .iter()
        .map(|i| {
            let mut o = Map::new();
            o.insert("url".into(), i.url.clone().into());
            o.insert("protocolBinding".into(), i.protocol_binding.clone().into());
            if let Some(v) = &i.protocol_version {
                o.insert("protocolVersion".into(), v.clone().into());
            }
            if let Some(t) = &i.tenant {
                o.insert("tenant".into(), t.clone().into());
            }
            Value::Object(o)
        })
        .collect();
    let mut custom = Map::new();
    if !interfaces.is_empty() {
        custom.insert("a2a".into(), json!({ "supportedInterfaces": interfaces }));
    }
    custom
}
