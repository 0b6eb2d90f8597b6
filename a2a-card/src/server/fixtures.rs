//! Tasks and events the server's unit tests make: each in context `c`, with no history and no
//! metadata.

use a2a::{Artifact, Part, StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent};

/// Task `id` in `state`, and nothing else.
pub(crate) fn task(id: &str, state: TaskState) -> Task {
    Task {
        id: id.to_owned(),
        context_id: "c".to_owned(),
        status: TaskStatus {
            state,
            message: None,
            timestamp: None,
        },
        artifacts: None,
        history: None,
        metadata: None,
    }
}

/// Artifact `a`, holding `text`.
pub(crate) fn text_artifact(text: &str) -> Artifact {
    Artifact {
        artifact_id: "a".to_owned(),
        name: None,
        description: None,
        parts: vec![Part::text(text)],
        metadata: None,
        extensions: None,
    }
}

/// Task `id` turning `state`.
pub(crate) fn status(id: &str, state: TaskState) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: id.to_owned(),
        context_id: "c".to_owned(),
        status: TaskStatus {
            state,
            message: None,
            timestamp: None,
        },
        metadata: None,
    })
}
