//! Answers kept for durable tasks whose handler no process runs at the time (its process
//! stopped, and the task is not taken over yet), for the handler that runs the task again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a::Message;

use super::log::{Live, Tracked, lock};
use super::stage::Waiting;
use crate::context::Answer;

/// Answers that came for durable tasks whose handler no process ran at the time (its process
/// stopped, and the task is not taken over yet): each is handed to the handler that runs the
/// task again, once its replay reaches the question it answers. Kept an hour at most.
#[derive(Default)]
pub(crate) struct Mailbox(Mutex<HashMap<String, Kept>>);

/// An answer kept: the caller's message, the handler's answer, when it came.
type Kept = (Message, Answer, chrono::DateTime<chrono::Utc>);

/// How many answers a mailbox keeps at most, and for how long.
const MAILBOX: (usize, Duration) = (10_000, Duration::from_secs(3600));

impl Mailbox {
    /// Keeps `answer` (the caller's `message`) for task `task`, unless a handler of the task
    /// here already waits for an answer: then that handler, to hand it to. One lock for both,
    /// with [`Mailbox::take`] (which a handler calls once it waits): an answer is either kept
    /// and found, or handed over, never missed in between. The oldest kept answer makes room
    /// for a new one.
    pub(crate) fn keep(
        &self,
        live: &Live,
        task: &str,
        message: Message,
        answer: Answer,
    ) -> Option<(Arc<Tracked>, Message, Answer, Waiting)> {
        let mut kept = lock(&self.0);
        if let Some(tracked) = live.get(task)
            && let Ok(waiting) = tracked.stage.take_waiting(None)
        {
            return Some((tracked, message, answer, waiting));
        }
        let now = chrono::Utc::now();
        let max_age = chrono::Duration::from_std(MAILBOX.1).unwrap_or(chrono::Duration::MAX);
        kept.retain(|_, (_, _, at)| now - *at < max_age);
        if kept.len() >= MAILBOX.0
            && let Some(oldest) = kept.iter().min_by_key(|(_, k)| k.2).map(|(t, _)| t.clone())
        {
            kept.remove(&oldest);
        }
        kept.insert(task.to_owned(), (message, answer, now));
        None
    }

    /// The answer kept for task `task` that came after its question was asked (`asked_at`),
    /// if any; an older one answered an earlier question, and is dropped.
    pub(crate) fn take(
        &self,
        task: &str,
        asked_at: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Option<(Message, Answer)> {
        let (message, answer, at) = lock(&self.0).remove(task)?;
        asked_at
            .is_none_or(|asked| at >= asked)
            .then_some((message, answer))
    }

    /// Takes back the answer kept for `task` if it is still `message` (no handler took it):
    /// whether it was.
    pub(crate) fn take_back(&self, task: &str, message: &str) -> bool {
        let mut kept = lock(&self.0);
        let ours = kept
            .get(task)
            .is_some_and(|(m, _, _)| m.message_id == message);
        if ours {
            kept.remove(task);
        }
        ours
    }

    /// Drops the answer kept for `task` if the task already holds it (another process
    /// handed it over before it stopped).
    pub(crate) fn forget_answered(&self, task: &a2a::Task) {
        let mut kept = lock(&self.0);
        let answered = kept.get(&task.id).is_some_and(|(message, _, _)| {
            task.history
                .iter()
                .flatten()
                .any(|m| m.message_id == message.message_id)
        });
        if answered {
            kept.remove(&task.id);
        }
    }
}
