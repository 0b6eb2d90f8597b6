//! About how many bytes a task or an event holds in memory: what the bounds on finished tasks
//! count ([`Retention::max_bytes`](super::Retention::max_bytes),
//! [`FinishedLogs`](crate::server::FinishedLogs)). An estimate of the data (strings, parts,
//! JSON values, each with its bookkeeping), not an allocator's count.

use a2a::{StreamResponse, Task};

/// The bytes `task` holds, about.
pub(crate) fn task_bytes(task: &Task) -> usize {
    size_of::<Task>()
        + task.id.len()
        + task.context_id.len()
        + task.status.message.as_ref().map_or(0, message_bytes)
        + task
            .artifacts
            .iter()
            .flatten()
            .map(artifact_bytes)
            .sum::<usize>()
        + task
            .history
            .iter()
            .flatten()
            .map(message_bytes)
            .sum::<usize>()
}

/// The bytes `event` holds, about.
pub(crate) fn event_bytes(event: &StreamResponse) -> usize {
    size_of::<StreamResponse>()
        + match event {
            StreamResponse::StatusUpdate(u) => {
                u.task_id.len()
                    + u.context_id.len()
                    + u.status.message.as_ref().map_or(0, message_bytes)
            }
            StreamResponse::ArtifactUpdate(u) => {
                u.task_id.len() + u.context_id.len() + artifact_bytes(&u.artifact)
            }
            StreamResponse::Task(task) => task_bytes(task),
            StreamResponse::Message(message) => message_bytes(message),
        }
}

fn message_bytes(message: &a2a::Message) -> usize {
    size_of::<a2a::Message>() + message.message_id.len() + parts_bytes(&message.parts)
}

fn artifact_bytes(artifact: &a2a::Artifact) -> usize {
    size_of::<a2a::Artifact>() + artifact.artifact_id.len() + parts_bytes(&artifact.parts)
}

fn parts_bytes(parts: &[a2a::Part]) -> usize {
    parts
        .iter()
        .map(|part| {
            let content = match &part.content {
                a2a::PartContent::Text(s) | a2a::PartContent::Url(s) => s.len(),
                a2a::PartContent::Raw(bytes) => bytes.len(),
                a2a::PartContent::Data(value) => value_bytes(value),
            };
            size_of::<a2a::Part>()
                + content
                + part.media_type.as_ref().map_or(0, String::len)
                + part.filename.as_ref().map_or(0, String::len)
                + part
                    .metadata
                    .iter()
                    .flatten()
                    .map(|(k, v)| k.len() + value_bytes(v))
                    .sum::<usize>()
        })
        .sum()
}

/// The bytes a JSON value holds, about (each map entry counted with its key and some
/// bookkeeping).
fn value_bytes(value: &serde_json::Value) -> usize {
    use serde_json::Value;
    size_of::<Value>()
        + match value {
            Value::String(s) => s.len(),
            Value::Array(items) => items.iter().map(value_bytes).sum(),
            Value::Object(map) => map
                .iter()
                .map(|(k, v)| k.len() + 2 * size_of::<usize>() + value_bytes(v))
                .sum(),
            _ => 0,
        }
}
