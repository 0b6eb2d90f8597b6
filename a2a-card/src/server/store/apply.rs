//! How an event changes a task: the one rule the server applies to the task it follows in
//! memory, and a store to a stored task and the tail of its event log; the status update that
//! tells of a task's status, and a task failed because its process stopped.

use a2a::{StreamResponse, Task, TaskState, TaskStatus};

/// Stamps a status update with the time, when it has none (before it is recorded).
pub(crate) fn stamp(event: &mut StreamResponse) {
    if let StreamResponse::StatusUpdate(update) = event
        && update.status.timestamp.is_none()
    {
        update.status.timestamp = Some(chrono::Utc::now());
    }
}

/// Applies `event` to `task`; whether the store keeps the change (a status, or an artifact
/// written whole).
pub(crate) fn apply(task: &mut Task, event: &StreamResponse) -> bool {
    match event {
        StreamResponse::StatusUpdate(update) => {
            // What the update puts in the task's metadata (a handler's, with its end).
            if let Some(metadata) = &update.metadata {
                let kept = task.metadata.get_or_insert_with(Default::default);
                kept.extend(metadata.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            let TaskStatus { state, message, .. } =
                std::mem::replace(&mut task.status, update.status.clone());
            // The question it replaces joins the conversation (progress notes do not).
            if let (Some(message), true) = (message, asks(&state)) {
                task.history.get_or_insert_with(Vec::new).push(message);
            }
            true
        }
        StreamResponse::ArtifactUpdate(update) => {
            let artifacts = task.artifacts.get_or_insert_with(Vec::new);
            let append = update.append == Some(true);
            let found = artifacts
                .iter_mut()
                .find(|a| a.artifact_id == update.artifact.artifact_id);
            match found {
                Some(artifact) if append => {
                    artifact.parts.extend(update.artifact.parts.iter().cloned());
                    false
                }
                Some(artifact) => {
                    // An artifact written whole as the task holds it already (its chunks
                    // closed) is compared, not copied again.
                    if *artifact != update.artifact {
                        artifact.clone_from(&update.artifact);
                    }
                    update.last_chunk == Some(true)
                }
                None => {
                    artifacts.push(update.artifact.clone());
                    update.last_chunk == Some(true)
                }
            }
        }
        StreamResponse::Task(t) => {
            *task = t.clone();
            true
        }
        StreamResponse::Message(_) => false,
    }
}

/// [`apply`] of an event the caller gives up: the parts of a chunk appended to an artifact
/// move into the task instead of being copied.
pub(crate) fn apply_owned(task: &mut Task, event: StreamResponse) -> bool {
    match event {
        StreamResponse::ArtifactUpdate(update) if update.append == Some(true) => {
            let found = task.artifacts.as_mut().and_then(|artifacts| {
                artifacts
                    .iter_mut()
                    .find(|a| a.artifact_id == update.artifact.artifact_id)
            });
            match found {
                Some(artifact) => {
                    artifact.parts.extend(update.artifact.parts);
                    false
                }
                None => apply(task, &StreamResponse::ArtifactUpdate(update)),
            }
        }
        event => apply(task, &event),
    }
}

/// Whether a task in `state` waits for the caller (its status message is a question).
pub(crate) fn asks(state: &TaskState) -> bool {
    matches!(state, TaskState::InputRequired | TaskState::AuthRequired)
}

/// Whether a state is one a handler was busy in (and so cannot be anymore after a restart).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn was_running(state: &TaskState) -> bool {
    matches!(
        state,
        TaskState::Submitted
            | TaskState::Working
            | TaskState::InputRequired
            | TaskState::AuthRequired
    )
}

/// The status update that tells of `task`'s status as it is.
pub(crate) fn status_update(task: &Task) -> a2a::StreamResponse {
    a2a::StreamResponse::StatusUpdate(a2a::TaskStatusUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone(),
        status: task.status.clone(),
        metadata: None,
    })
}

/// `task` marked failed because its process stopped.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn interrupted(mut task: Task) -> Task {
    let mut message =
        a2a::Message::new(a2a::Role::Agent, vec![a2a::Part::text(super::INTERRUPTED)]);
    message.task_id = Some(task.id.clone());
    message.context_id = Some(task.context_id.clone());
    task.status = a2a::TaskStatus {
        state: TaskState::Failed,
        message: Some(message),
        timestamp: Some(chrono::Utc::now()),
    };
    task
}
