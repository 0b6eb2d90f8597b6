//! What MCP sees of A2A: a task as an MCP task, an artifact as a tool result, a streamed part as
//! progress, a question as an elicitation.

use a2a::{A2AError, Artifact, Message, Part, PartContent};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, TaskStatus};
use serde_json::{Map, Value, json};

use crate::agent::SkillDecl;

use super::tools::{Output, ToolEntry};

/// How often a caller should poll a task, in milliseconds.
pub(super) const POLL_INTERVAL_MS: u64 = 500;

/// The MCP view of A2A task `task`, in `status`. A2A tasks keep the time of their last status,
/// not of their creation: both times are that one.
pub(super) fn mcp_task(
    task: &a2a::Task,
    status: TaskStatus,
    message: Option<String>,
) -> rmcp::model::Task {
    let at = task
        .status
        .timestamp
        .unwrap_or_else(chrono::Utc::now)
        .to_rfc3339();
    let mut out = rmcp::model::Task::new(task.id.clone(), status, at.clone(), at)
        .with_poll_interval_ms(POLL_INTERVAL_MS);
    if let Some(message) = message.filter(|m| !m.is_empty()) {
        out = out.with_status_message(message);
    }
    out
}

/// A tool result as the JSON object a task's payload carries.
pub(super) fn object_of(result: &CallToolResult) -> Result<Map<String, Value>, McpError> {
    match serde_json::to_value(result) {
        Ok(Value::Object(object)) => Ok(object),
        _ => Err(McpError::internal_error(
            "a tool result is a JSON object",
            None,
        )),
    }
}

/// The result of a completed task of tool `entry`: the skill's artifact as structured content
/// and text, other artifacts and files as content.
pub(super) fn result_of(
    skills: &[SkillDecl],
    entry: &ToolEntry,
    artifacts: Vec<Artifact>,
) -> CallToolResult {
    let own = skills[entry.skill].id;
    let mut content = Vec::new();
    let mut data = Vec::new();
    for artifact in artifacts {
        let is_own = artifact.name.as_deref() == Some(own);
        for part in artifact.parts {
            match part.content {
                PartContent::Data(value) if is_own => data.push(value),
                PartContent::Data(value) => content.push(ContentBlock::text(value.to_string())),
                PartContent::Text(text) => content.push(ContentBlock::text(text)),
                PartContent::Raw(_) | PartContent::Url(_) => {
                    content.extend(resource_of(&part, &artifact.artifact_id));
                }
            }
        }
    }
    let structured = match (entry.output, data.len()) {
        (Output::Items, _) => Some(json!({"items": data})),
        (_, 0) => None,
        (Output::Object, _) if data[0].is_object() => Some(data.swap_remove(0)),
        (Output::Unstructured, _) if data.len() == 1 && data[0].is_object() => {
            Some(data.swap_remove(0))
        }
        (_, 1) => Some(json!({"result": data.swap_remove(0)})),
        (_, _) => Some(json!({"result": data})),
    };
    let mut result = match &structured {
        Some(value) => {
            let mut blocks = vec![ContentBlock::text(value.to_string())];
            blocks.extend(content);
            CallToolResult::success(blocks)
        }
        None => CallToolResult::success(content),
    };
    result.structured_content = structured;
    result
}

/// Applies an artifact update to the artifacts seen so far.
pub(super) fn apply(artifacts: &mut Vec<Artifact>, artifact: Artifact, append: bool) {
    match artifacts
        .iter_mut()
        .find(|a| a.artifact_id == artifact.artifact_id)
    {
        Some(seen) if append => seen.parts.extend(artifact.parts),
        Some(seen) => *seen = artifact,
        None => artifacts.push(artifact),
    }
}

/// What a progress notification says of a streamed part.
pub(super) fn render_part(part: &Part) -> String {
    match &part.content {
        PartContent::Text(text) => text.clone(),
        PartContent::Data(value) => value.to_string(),
        PartContent::Raw(bytes) => format!(
            "a file ({}, {} bytes)",
            part.media_type
                .as_deref()
                .unwrap_or("application/octet-stream"),
            bytes.len()
        ),
        PartContent::Url(url) => format!("a file at {url}"),
    }
}

/// The text of a status message.
pub(super) fn message_text(message: &Message) -> String {
    let texts: Vec<&str> = message.parts.iter().filter_map(Part::as_text).collect();
    texts.join("\n")
}

/// A file part as MCP content: an embedded resource (bytes) or a resource link (a URL).
pub(super) fn resource_of(part: &Part, artifact: &str) -> Option<ContentBlock> {
    let mime = part.media_type.clone();
    let block = match &part.content {
        PartContent::Raw(bytes) => {
            let name = part.filename.as_deref().unwrap_or(artifact);
            json!({"type": "resource", "resource": {
                "uri": format!("a2a-artifact:{artifact}/{name}"),
                "mimeType": mime,
                "blob": STANDARD.encode(bytes),
            }})
        }
        PartContent::Url(url) => json!({
            "type": "resource_link",
            "uri": url,
            "name": part.filename.as_deref().unwrap_or(artifact),
            "mimeType": mime,
        }),
        _ => return None,
    };
    serde_json::from_value(block).ok()
}

pub(super) fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// A refused or failed call as a tool error: the message, and the details (the violations of
/// invalid arguments, each naming its field) as JSON.
pub(super) fn tool_error(error: A2AError, task: Option<&str>) -> CallToolResult {
    let mut blocks = vec![ContentBlock::text(error.message.clone())];
    let details = error.to_jsonrpc_error().data;
    if let Some(details) = details.filter(|d| !d.is_null()) {
        blocks.push(ContentBlock::text(details.to_string()));
    }
    if let Some(task) = task {
        blocks.push(ContentBlock::text(format!("task: {task}")));
    }
    CallToolResult::error(blocks)
}

/// The form that asks `question`: one required string, the answer.
pub(super) fn elicitation(question: &str) -> Result<rmcp::model::ElicitRequestParams, McpError> {
    serde_json::from_value(json!({
        "mode": "form",
        "message": question,
        "requestedSchema": {
            "type": "object",
            "properties": {ANSWER: {"type": "string", "title": "Answer", "description": question}},
            "required": [ANSWER],
        },
    }))
    .map_err(|e| McpError::internal_error(format!("the elicitation is not MCP's: {e}"), None))
}

/// The `input_required` result that asks `question` of a 2026-07-28 caller, who retries with
/// the answer and the task's id as the request state.
pub(super) fn input_required(question: &str, task: &str) -> Result<CallToolResponse, McpError> {
    let asked = elicitation(question)?;
    let result = json!({
        "resultType": "input_required",
        "inputRequests": {ANSWER: {"method": "elicitation/create", "params": asked}},
        "requestState": task,
    });
    serde_json::from_value::<rmcp::model::InputRequiredResult>(result)
        .map(CallToolResponse::InputRequired)
        .map_err(|e| McpError::internal_error(format!("the input request is not MCP's: {e}"), None))
}

/// The answer in an elicitation's result, or why there is none.
pub(super) fn answer_in(result: Option<Value>) -> Result<String, String> {
    let Some(result) = result else {
        return Err("the retry carries no answer to the skill's question".to_owned());
    };
    match result.get("action").and_then(Value::as_str) {
        Some("accept") => {}
        Some(action) => {
            return Err(format!(
                "the caller did not answer the skill's question ({action})"
            ));
        }
        None => return Err("the answer has no `action`".to_owned()),
    }
    match result.pointer("/content/answer") {
        Some(Value::String(answer)) => Ok(answer.clone()),
        Some(other) => Ok(other.to_string()),
        None => Err("the answer has no `content.answer`".to_owned()),
    }
}

/// The name of the one field an elicited answer has.
pub(super) const ANSWER: &str = "answer";
