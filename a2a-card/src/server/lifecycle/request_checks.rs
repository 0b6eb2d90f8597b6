//! What a request must hold, checked before anything is done with it, and the refusals the
//! lifecycle answers with.

use a2a::*;

use crate::server::call::field_error;

/// The refusal of a message to a task that has ended.
pub(super) fn finished(id: &str) -> A2AError {
    A2AError::unsupported_operation(format!(
        "task `{id}` has already reached a terminal state; send a new message without a taskId"
    ))
}

/// The refusal of a subscription that resumes after event `after` of a finished task whose
/// log this process no longer keeps (see [`FinishedLogs`]).
pub(super) fn log_gone(id: &str, after: u64) -> A2AError {
    A2AError::unsupported_operation(format!(
        "task `{id}` has ended and its events after event {after} are no longer kept (this agent keeps in memory only the logs of its latest finished tasks that a stream read); GetTask answers the task as it ended"
    ))
}

/// The message's required fields (A2A 1.0: `messageId`, `role`, at least one part).
pub(super) fn check_message(message: &Message) -> Result<(), A2AError> {
    if message.message_id.trim().is_empty() {
        return Err(field_error(
            "message.messageId",
            "is required: a unique id the sender gives each message",
        ));
    }
    if message.role == Role::Unspecified {
        return Err(field_error(
            "message.role",
            "is required: ROLE_USER for a caller's message",
        ));
    }
    if message.parts.is_empty() {
        return Err(field_error(
            "message.parts",
            "is required and holds at least one part",
        ));
    }
    Ok(())
}

/// A `historyLength` of a request: none, or zero and more.
pub(super) fn check_history_length(field: &str, n: Option<i32>) -> Result<(), A2AError> {
    match n {
        Some(n) if n < 0 => Err(field_error(
            field,
            format!("is {n}; it is zero or more (omit it for the whole history)"),
        )),
        _ => Ok(()),
    }
}

/// The last `n` messages of the task's history, when `n` is given.
pub(super) fn cut_history(task: &mut Task, n: Option<i32>) {
    if let (Some(keep), Some(history)) = (kept(n), task.history.as_mut())
        && history.len() > keep
    {
        history.drain(..history.len() - keep);
    }
}

/// [`cut_history`] of a shared task: copied only when its history is cut.
pub(super) fn cut_shared_history(task: &mut std::sync::Arc<Task>, n: Option<i32>) {
    if let (Some(keep), Some(history)) = (kept(n), task.history.as_ref())
        && history.len() > keep
    {
        cut_history(std::sync::Arc::make_mut(task), n);
    }
}

/// How many messages of the history a `historyLength` of `n` keeps (`None`: all).
fn kept(n: Option<i32>) -> Option<usize> {
    n.map(|n| usize::try_from(n.max(0)).unwrap_or(0))
}
