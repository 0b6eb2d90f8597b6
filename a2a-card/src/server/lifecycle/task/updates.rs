//! The task's update events as this process makes them: a status (stamped now, its text an
//! agent's message), an artifact chunk, and the part that carries a skill's reply.

use std::collections::HashMap;

use a2a::{
    Artifact, Message, Part, PartContent, Role, StreamResponse, TaskArtifactUpdateEvent, TaskState,
    TaskStatus, TaskStatusUpdateEvent,
};
use serde_json::Value;

use super::Tracked;
use crate::file::{File, FileContent};
use crate::schema::SchemaMode;
use crate::skill::Reply;

/// A status update of task `tracked`, stamped now.
pub(crate) fn status(tracked: &Tracked, state: TaskState, text: Option<String>) -> StreamResponse {
    status_of(&tracked.id, &tracked.context, state, text)
}

/// A status update of task `task` in context `context`, stamped now, its text as an agent's
/// message.
pub(crate) fn status_of(
    task: &str,
    context: &str,
    state: TaskState,
    text: Option<String>,
) -> StreamResponse {
    let message = text.map(|text| {
        let mut message = Message::new(Role::Agent, vec![Part::text(text)]);
        message.task_id = Some(task.to_owned());
        message.context_id = Some(context.to_owned());
        message
    });
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: task.to_owned(),
        context_id: context.to_owned(),
        status: TaskStatus {
            state,
            message,
            timestamp: Some(chrono::Utc::now()),
        },
        metadata: None,
    })
}

/// A question's status update of task `tracked`, stamped now: its text, then `data` (where the
/// question carries some) as a data part.
pub(crate) fn question_status(
    tracked: &Tracked,
    state: TaskState,
    question: String,
    data: Option<Value>,
) -> StreamResponse {
    let mut event = status(tracked, state, Some(question));
    if let (StreamResponse::StatusUpdate(update), Some(data)) = (&mut event, data)
        && let Some(message) = update.status.message.as_mut()
    {
        message.parts.push(Part::data(data));
    }
    event
}

pub(crate) fn artifact(
    tracked: &Tracked,
    id: String,
    name: String,
    parts: Vec<Part>,
    append: bool,
    last: bool,
) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: tracked.id.clone(),
        context_id: tracked.context.clone(),
        artifact: Artifact {
            artifact_id: id,
            name: Some(name),
            description: None,
            parts,
            metadata: None,
            extensions: None,
        },
        append: append.then_some(true),
        last_chunk: Some(last),
        metadata: None,
    })
}

/// The part that carries a skill's answer (`None` for [`Reply::Streamed`]: already sent).
pub(crate) fn reply_part(reply: Reply) -> Option<Part> {
    let part = match reply {
        Reply::Text(text) => Part::text(text),
        Reply::Data { schema, value } => {
            let mode = SchemaMode::mode_of(schema).unwrap_or_else(|| "application/json".to_owned());
            Part {
                content: PartContent::Data(value),
                filename: None,
                metadata: Some(HashMap::from([(
                    "mimeType".to_owned(),
                    Value::String(mode.clone()),
                )])),
                media_type: Some(mode),
            }
        }
        Reply::File(file) => file_part(file),
        Reply::Streamed => return None,
    };
    Some(part)
}

/// A file as a file part.
fn file_part(file: File) -> Part {
    let File {
        name,
        media_type,
        content,
        ..
    } = file;
    Part {
        content: match content {
            FileContent::Bytes(bytes) => PartContent::Raw(bytes),
            FileContent::Url(url) => PartContent::Url(url),
        },
        filename: name,
        media_type,
        metadata: None,
    }
}
