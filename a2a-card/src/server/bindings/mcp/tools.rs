//! The tools: one per skill, with its schemas, and how a call's arguments become a message.

use a2a::{A2AError, Message, Part, PartContent, Role};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::Tool;
use serde_json::{Map, Value, json};

use crate::agent::SkillDecl;
use crate::card::AgentCard;
use crate::schema::SchemaMode;

use crate::server::ServerError;

/// The tools, one per skill, in the order of the skills.
pub(super) struct Tools {
    pub(super) entries: Vec<ToolEntry>,
}

/// One tool: what MCP sees, and how its calls become messages and its answers results.
pub(super) struct ToolEntry {
    pub(super) tool: Tool,
    pub(super) skill: usize,
    pub(super) input: Input,
    pub(super) output: Output,
    pub(super) extended: bool,
    /// Whether a call may run as an MCP task (its skill streams, or takes a context: it can
    /// report progress and ask).
    pub(super) long: bool,
}

/// How a tool's arguments become the message's parts.
pub(super) enum Input {
    /// The arguments are the data of a part with this schema media type.
    Schema(String),
    /// The arguments are the data of a plain JSON part.
    Json,
    /// `{"text": "..."}`: a text part.
    Text,
    /// `{"files": [...]}`: file parts.
    Files,
}

/// How the skill's artifact becomes `structuredContent`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Output {
    /// The one data value, an object.
    Object,
    /// `{"result": value}` (a value that is not an object).
    Wrapped,
    /// `{"items": [...]}`: a streamed output.
    Items,
    /// No structured content (text or files).
    Unstructured,
}

impl Tools {
    pub(super) fn of(skills: &[SkillDecl], card: &AgentCard) -> Result<Tools, ServerError> {
        let mut entries = Vec::new();
        for (index, decl) in skills.iter().enumerate() {
            let Some(skill) = card.skills.iter().find(|s| s.id == decl.id) else {
                continue;
            };
            let named = |name: &str| crate::ag_ui::named_schema(card, name).cloned();
            let input_schema = decl.input.schema.map(|s| s.name);
            let (input, input_json) = match input_schema.and_then(|n| Some((n, named(n)?))) {
                Some((name, schema)) => (
                    Input::Schema(
                        SchemaMode::new(name)
                            .map(|m| m.to_string())
                            .unwrap_or_default(),
                    ),
                    schema,
                ),
                None if decl.input.json => (Input::Json, json!({"type": "object"})),
                None if decl.input.text => (Input::Text, crate::ag_ui::text_parameters()),
                None if decl.input.files => (Input::Files, files_parameters()),
                None => (Input::Text, crate::ag_ui::text_parameters()),
            };
            let (output, output_json) = match decl.output.schema.and_then(|s| named(s.name)) {
                Some(schema) if decl.output.streaming => (Output::Items, Some(items_of(schema))),
                Some(schema) if is_object(&schema) => (Output::Object, Some(schema)),
                Some(schema) => (Output::Wrapped, Some(wrapped(schema, "result"))),
                None if decl.output.json => (Output::Wrapped, None),
                None => (Output::Unstructured, None),
            };
            let mut tool = json!({
                "name": skill.id,
                "title": skill.name,
                "description": skill.description,
                "inputSchema": input_json,
            });
            if let Some(schema) = output_json {
                tool["outputSchema"] = schema;
            }
            let tool: Tool = serde_json::from_value(tool).map_err(|e| {
                ServerError::Mcp(format!(
                    "skill `{}` does not make an MCP tool: {e}",
                    skill.id
                ))
            })?;
            entries.push(ToolEntry {
                tool,
                skill: index,
                input,
                output,
                extended: decl.extended,
                long: decl.output.streaming || decl.input.context,
            });
        }
        Ok(Tools { entries })
    }

    /// The tool called `name`, as the caller may see it.
    pub(super) fn find(&self, name: &str, authenticated: bool) -> Option<&ToolEntry> {
        self.visible(authenticated).find(|e| e.tool.name == name)
    }

    pub(super) fn visible(&self, authenticated: bool) -> impl Iterator<Item = &ToolEntry> {
        self.entries
            .iter()
            .filter(move |e| authenticated || !e.extended)
    }
}

/// The `inputSchema` of a tool whose skill takes only files: MCP resource contents.
pub(super) fn files_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {"files": {
            "description": "The files, as MCP resource contents: base64 `blob` or `text`",
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "mimeType": {"type": "string"},
                    "blob": {"type": "string", "contentEncoding": "base64"},
                    "text": {"type": "string"},
                    "name": {"type": "string"},
                    "uri": {"type": "string"}
                },
                "required": ["mimeType"]
            }
        }},
        "required": ["files"]
    })
}

pub(super) fn is_object(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// `schema` as the one property `field` of an object schema; its `$defs` stay at the root,
/// where its references point.
pub(super) fn wrapped(mut schema: Value, field: &str) -> Value {
    let defs = schema.as_object_mut().and_then(|o| o.remove("$defs"));
    let mut out = json!({
        "type": "object",
        "properties": {field: schema},
        "required": [field],
    });
    if let Some(defs) = defs {
        out["$defs"] = defs;
    }
    out
}

/// The output schema of a streamed output: `{"items": [item, ...]}`.
pub(super) fn items_of(mut item: Value) -> Value {
    let defs = item.as_object_mut().and_then(|o| o.remove("$defs"));
    let mut out = wrapped(json!({"type": "array", "items": item}), "items");
    if let Some(defs) = defs {
        out["$defs"] = defs;
    }
    out
}

/// The message of a tool call: the arguments as the skill's input.
pub(super) fn message_of(
    entry: &ToolEntry,
    arguments: Option<Map<String, Value>>,
) -> Result<Message, A2AError> {
    let arguments = arguments.unwrap_or_default();
    let parts = match &entry.input {
        Input::Schema(mode) => vec![data_part(Value::Object(arguments), mode)],
        Input::Json => vec![data_part(
            Value::Object(arguments),
            crate::dispatch::PLAIN_JSON,
        )],
        Input::Text => match arguments.get("text") {
            Some(Value::String(text)) => vec![Part::text(text.clone())],
            _ => {
                return Err(crate::server::call::field_error(
                    "arguments.text",
                    "is required: the request, as a string",
                ));
            }
        },
        Input::Files => files_in(arguments.get("files"))?,
    };
    let mut message = Message::new(Role::User, parts);
    // The tool a task was called as, for `tasks/get` to read its result as the tool's.
    message.metadata = Some(std::collections::HashMap::from([(
        TOOL_KEY.to_owned(),
        Value::String(entry.tool.name.to_string()),
    )]));
    Ok(message)
}

/// The metadata key, on a tool call's message, naming its tool.
pub(super) const TOOL_KEY: &str = "a2a-card/mcp-tool";

pub(super) fn data_part(data: Value, media_type: &str) -> Part {
    Part {
        content: PartContent::Data(data),
        filename: None,
        media_type: Some(media_type.to_owned()),
        metadata: None,
    }
}

/// The file parts of `{"files": [...]}` (MCP resource contents).
pub(super) fn files_in(files: Option<&Value>) -> Result<Vec<Part>, A2AError> {
    let Some(Value::Array(files)) = files.filter(|f| f.as_array().is_some_and(|a| !a.is_empty()))
    else {
        return Err(crate::server::call::field_error(
            "arguments.files",
            "is required: an array of at least one file (`mimeType`, and `blob` or `text`)",
        ));
    };
    let mut parts = Vec::with_capacity(files.len());
    for (i, file) in files.iter().enumerate() {
        let field = |name: &str| file.get(name).and_then(Value::as_str);
        let at = |name: &str| format!("arguments.files[{i}].{name}");
        let Some(mime) = field("mimeType") else {
            return Err(crate::server::call::field_error(
                &at("mimeType"),
                "is required: the file's media type",
            ));
        };
        let bytes = match (field("blob"), field("text")) {
            (Some(blob), _) => STANDARD.decode(blob).map_err(|e| {
                crate::server::call::field_error(&at("blob"), format!("is not base64: {e}"))
            })?,
            (None, Some(text)) => text.as_bytes().to_vec(),
            (None, None) => {
                return Err(crate::server::call::field_error(
                    &at("blob"),
                    "is required (or `text`): the file's content",
                ));
            }
        };
        parts.push(Part {
            content: PartContent::Raw(bytes),
            filename: field("name").map(str::to_owned),
            media_type: Some(mime.to_owned()),
            metadata: None,
        });
    }
    Ok(parts)
}
