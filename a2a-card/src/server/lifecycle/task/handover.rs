//! An answer handed to the handler that asked: journaled first (a durable handler's), joined
//! to the task's conversation, the task `working` again; and the timer that withdraws a
//! question no answer came to in time.

use std::sync::Arc;
use std::time::Duration;

use a2a::*;

use super::updates::status;
use super::{Ending, Happening, Recorder, Tracked, Waiting, asks};
use crate::arguments::CallInput;
use crate::context::Answer;

/// The question the task asked (its status message, while it waits), then `answer`, join the
/// task's conversation.
pub(super) fn join(task: &mut Task, answer: &Message) {
    let history = task.history.get_or_insert_with(Vec::new);
    if asks(&task.status.state)
        && let Some(question) = task.status.message.take()
    {
        history.push(question);
    }
    history.push(answer.clone());
}

/// Hands the caller's answer (`message`, as the dispatcher read it into `call`) to the
/// handler `waiting` for it: the answer joins the history, the task goes `working`. The task
/// then, and that state's number.
pub(crate) async fn hand_over(
    recorder: &Arc<Recorder>,
    tracked: &Arc<Tracked>,
    message: Message,
    call: crate::arguments::SkillCall,
    waiting: Waiting,
) -> Result<(Task, u64), A2AError> {
    deliver(recorder, tracked, message, answer_of(call), waiting).await
}

/// Hands `answer` (the caller's `message`) to the handler `waiting` for it: see
/// [`hand_over`]. A durable handler's answer is journaled first; when the store does not
/// keep it, the handler waits on and the caller is told (nothing is acknowledged that a
/// restart could lose).
pub(crate) async fn deliver(
    recorder: &Arc<Recorder>,
    tracked: &Arc<Tracked>,
    message: Message,
    answer: Answer,
    waiting: Waiting,
) -> Result<(Task, u64), A2AError> {
    if let Some((journal, n)) = &waiting.journal {
        let entry = crate::journal::Entry::Answer {
            message: Box::new(message.clone()),
        };
        if let Err(why) = journal.write_at(*n, entry).await {
            if tracked.wait_again(waiting) {
                withdraw_unanswered(recorder, tracked, None);
            }
            return Err(A2AError::internal(format!(
                "the answer to task `{}` could not be kept (the task store did not write it: {why}); the task still waits for it: send it again",
                tracked.id
            )));
        }
    }
    tracked.edit(|task| join(task, &message));
    recorder
        .record(tracked, status(tracked, TaskState::Working, None))
        .await;
    let snapshot = tracked.snapshot();
    // A handler dropped meanwhile (cancelled) leaves nothing to resume.
    let _ = waiting.answer.send(answer);
    Ok(snapshot)
}

/// The answer a handler gets from the follow-up `call` dispatch made of the caller's message.
pub(crate) fn answer_of(call: crate::arguments::SkillCall) -> Answer {
    let (text, data) = match call.input {
        CallInput::Text(text) => (text, None),
        CallInput::Data(data) => (String::new(), Some(data)),
        _ => (String::new(), None),
    };
    let mut answer = Answer::new(text, data);
    answer.files = call.files;
    answer.message = call.context.message;
    answer
}

/// Fails the task if the question just asked is still unanswered after the input timeout:
/// the handler is dropped at its `.await` (as on cancel), and the task fails, saying why. An
/// answer, or a cancel, disarms it.
pub(crate) fn withdraw_unanswered(
    recorder: &Arc<Recorder>,
    tracked: &Arc<Tracked>,
    asked_at: Option<chrono::DateTime<chrono::Utc>>,
) {
    let Some(timeout) = recorder.input_timeout else {
        return;
    };
    // A question asked before its process stopped has what is left of its time. The time is
    // counted on the server's clock (a test's moves it past the timeout).
    let left = match asked_at {
        Some(at) => timeout.saturating_sub((chrono::Utc::now() - at).to_std().unwrap_or_default()),
        None => timeout,
    };
    let clock = recorder.clock.clone();
    let due = clock
        .now_ms()
        .saturating_add(i64::try_from(left.as_millis()).unwrap_or(i64::MAX));
    // Weak: a task that ends otherwise is not kept alive by its timer.
    let weak = Arc::downgrade(tracked);
    let recorder = Arc::clone(recorder);
    let timer = tokio::spawn(async move {
        clock.wait_until_ms(due).await;
        let Some(tracked) = weak.upgrade() else {
            return;
        };
        let why = format!(
            "no answer came within {} (the agent's input timeout), so the question was withdrawn; start a new task",
            span(timeout)
        );
        let event = status(&tracked, TaskState::Failed, Some(why));
        // Refused when the handler waits no more (answered or stopped meanwhile).
        let _ = recorder
            .end(&tracked, Happening::Expire, Ending::with(event))
            .await;
    });
    tracked.arm(timer.abort_handle());
}

/// A duration as a message says it: `24 h`, `90 s`, `250 ms`.
fn span(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        0 => format!("{} ms", d.as_millis()),
        s if s % 3600 == 0 => format!("{} h", s / 3600),
        s if s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}
