//! About how many bytes a task or an event holds in memory: what the bounds on finished tasks
//! count ([`Retention::max_bytes`](super::Retention::max_bytes),
//! [`FinishedLogs`](crate::server::FinishedLogs)). An estimate of the data (strings, parts,
//! JSON values, each with its bookkeeping: strings and lists by the room they hold), checked
//! against what the allocator really holds in the tests below.

use a2a::{StreamResponse, Task};

/// The bytes `task` holds, about.
pub(crate) fn task_bytes(task: &Task) -> usize {
    size_of::<Task>()
        + task.id.capacity()
        + task.context_id.capacity()
        + task.status.message.as_ref().map_or(0, message_bytes)
        + task.artifacts.as_ref().map_or(0, |artifacts| {
            artifacts.capacity() * size_of::<a2a::Artifact>()
                + artifacts.iter().map(artifact_bytes).sum::<usize>()
        })
        + task.history.as_ref().map_or(0, |history| {
            history.capacity() * size_of::<a2a::Message>()
                + history.iter().map(message_bytes).sum::<usize>()
        })
}

/// The bytes `event` holds, about.
pub(crate) fn event_bytes(event: &StreamResponse) -> usize {
    size_of::<StreamResponse>()
        + match event {
            StreamResponse::StatusUpdate(u) => {
                u.task_id.capacity()
                    + u.context_id.capacity()
                    + u.status.message.as_ref().map_or(0, message_bytes)
            }
            StreamResponse::ArtifactUpdate(u) => {
                u.task_id.capacity() + u.context_id.capacity() + artifact_bytes(&u.artifact)
            }
            StreamResponse::Task(task) => task_bytes(task) - size_of::<Task>(),
            StreamResponse::Message(message) => message_bytes(message),
        }
}

/// What a message holds beyond its own size (counted where it is).
fn message_bytes(message: &a2a::Message) -> usize {
    message.message_id.capacity() + parts_bytes(&message.parts)
}

/// What an artifact holds beyond its own size (counted where it is).
fn artifact_bytes(artifact: &a2a::Artifact) -> usize {
    artifact.artifact_id.capacity() + parts_bytes(&artifact.parts)
}

fn parts_bytes(parts: &Vec<a2a::Part>) -> usize {
    (parts.capacity() - parts.len()) * size_of::<a2a::Part>()
        + parts
            .iter()
            .map(|part| {
                let content = match &part.content {
                    a2a::PartContent::Text(s) | a2a::PartContent::Url(s) => s.capacity(),
                    a2a::PartContent::Raw(bytes) => bytes.capacity(),
                    a2a::PartContent::Data(value) => value_bytes(value),
                };
                size_of::<a2a::Part>()
                    + content
                    + part.media_type.as_ref().map_or(0, String::capacity)
                    + part.filename.as_ref().map_or(0, String::capacity)
                    + part
                        .metadata
                        .iter()
                        .flatten()
                        .map(|(k, v)| k.len() + value_bytes(v))
                        .sum::<usize>()
            })
            .sum::<usize>()
}

/// The bytes a JSON value holds, about (each map entry counted with its key and some
/// bookkeeping).
fn value_bytes(value: &serde_json::Value) -> usize {
    use serde_json::Value;
    size_of::<Value>()
        + match value {
            Value::String(s) => s.capacity(),
            Value::Array(items) => {
                (items.capacity() - items.len()) * size_of::<Value>()
                    + items.iter().map(value_bytes).sum::<usize>()
            }
            Value::Object(map) => map
                .iter()
                .map(|(k, v)| k.len() + 2 * size_of::<usize>() + value_bytes(v))
                .sum(),
            _ => 0,
        }
}

#[cfg(test)]
mod tests {
    use a2a::{
        Artifact, Message, Part, Role, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState,
        TaskStatus,
    };

    use super::task_bytes;
    use crate::counted::{assert_close, held};

    fn chunk(i: usize) -> StreamResponse {
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: "task-0123456789".to_owned(),
            context_id: "context-0123456789".to_owned(),
            artifact: Artifact {
                artifact_id: "artifact-0123456789".to_owned(),
                name: None,
                description: None,
                parts: vec![Part::text(format!("chunk {i}"))],
                metadata: None,
                extensions: None,
            },
            append: Some(i > 0),
            last_chunk: None,
            metadata: None,
        })
    }

    #[test]
    fn a_streamed_tasks_estimate_is_close_to_what_it_holds() {
        let updates: Vec<_> = (0..10_000).map(chunk).collect();
        let (task, real) = held(|| {
            let mut task = Task {
                id: "task-0123456789".to_owned(),
                context_id: "context-0123456789".to_owned(),
                status: TaskStatus {
                    state: TaskState::Working,
                    message: None,
                    timestamp: None,
                },
                artifacts: None,
                history: Some(vec![Message::new(Role::User, vec![Part::text("go")])]),
                metadata: None,
            };
            for update in &updates {
                super::super::apply(&mut task, update);
            }
            Box::new(task)
        });
        assert_eq!(
            task.artifacts.as_ref().map(|a| a[0].parts.len()),
            Some(10_000)
        );
        assert_close("a task of 10,000 chunks", task_bytes(&task), real);
    }

    #[test]
    fn a_chunks_event_is_its_json_and_a_few_words() {
        let (events, real) = held(|| {
            (0..10_000)
                .map(|i| std::sync::Arc::new(crate::server::store::Event::new(chunk(i + 1))))
                .collect::<Vec<_>>()
        });
        let estimate: usize = events.iter().map(|e| e.bytes()).sum();
        assert_close("10,000 chunk events", estimate, real);
        let json: usize = events.iter().map(|e| e.json().len()).sum();
        assert!(
            real < 2 * json,
            "a chunk's event holds {} bytes for {} bytes of JSON",
            real / events.len(),
            json / events.len()
        );
    }
}
