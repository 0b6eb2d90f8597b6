//! Answers kept for durable tasks whose handler no process runs at the time (its process
//! stopped, and the task is not taken over yet), for the handler that runs the task again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a::{A2AError, Message};
use chrono::{DateTime, Utc};

use super::stage::{Caller, Waiting};
use super::{Registry, Tracked, lock};
use crate::context::Answer;

/// Answers that came for durable tasks whose handler no process ran at the time (its process
/// stopped, and the task is not taken over yet): each is handed to the handler that runs the
/// task again, once its replay reaches the question it answers, and begins that handler's turn
/// of its caller (told if the handler refuses it). Kept an hour at most.
#[derive(Default)]
pub(crate) struct Mailbox(Mutex<HashMap<String, Kept>>);

/// An answer to keep: the caller's message, the handler's answer, and the caller waiting for
/// the turn it begins (`None`: an answer forwarded by another process, whose caller waits
/// there).
pub(crate) struct Letter {
    pub(crate) message: Message,
    pub(crate) answer: Answer,
    pub(crate) caller: Option<Caller>,
}

/// A letter kept, and when it came.
struct Kept {
    letter: Letter,
    at: DateTime<Utc>,
}

/// The handler of a task waiting for an answer when one came: the letter goes to it at once.
pub(crate) struct Found {
    pub(crate) tracked: Arc<Tracked>,
    pub(crate) letter: Letter,
    pub(crate) waiting: Waiting,
}

/// How many answers a mailbox keeps at most, and for how long.
const MAILBOX: (usize, Duration) = (10_000, Duration::from_secs(3600));

impl Mailbox {
    /// Keeps `letter` for task `task`, whose question was asked at `asked_at`, unless a
    /// handler of the task here already waits for an answer: then that handler, to hand it to.
    /// One lock for both, with [`Mailbox::take`] (which a handler calls once it waits): an
    /// answer is either kept and found, or handed over, never missed in between.
    ///
    /// A second answer to the same question is refused, as a handler that took one refuses
    /// the next (the same message again is kept once); with `asked_at` unknown (an answer
    /// another process forwarded, checked there), the newer answer replaces the older. The
    /// oldest kept answer makes room for a new one.
    pub(crate) fn keep(
        &self,
        registry: &Registry,
        task: &str,
        mut letter: Letter,
        asked_at: Option<DateTime<Utc>>,
    ) -> Result<Option<Found>, A2AError> {
        let mut kept = lock(&self.0);
        if let Some(tracked) = registry.get(task)
            && let Ok(waiting) = tracked.stage.take_waiting(&mut letter.caller)
        {
            return Ok(Some(Found {
                tracked,
                letter,
                waiting,
            }));
        }
        let now = Utc::now();
        let max_age = chrono::Duration::from_std(MAILBOX.1).unwrap_or(chrono::Duration::MAX);
        kept.retain(|_, k| now - k.at < max_age);
        if let Some(earlier) = kept.get(task) {
            if earlier.letter.message.message_id == letter.message.message_id {
                return Ok(None);
            }
            if let Some(asked) = asked_at
                && earlier.at >= asked
            {
                return Err(A2AError::invalid_request(format!(
                    "task `{task}` already has an answer to its question, kept for its handler, which runs again once the task is taken over; wait for the task to ask again (input-required) before answering"
                )));
            }
        }
        if kept.len() >= MAILBOX.0
            && !kept.contains_key(task)
            && let Some(oldest) = kept
                .iter()
                .min_by_key(|(_, k)| k.at)
                .map(|(t, _)| t.clone())
        {
            kept.remove(&oldest);
        }
        kept.insert(task.to_owned(), Kept { letter, at: now });
        Ok(None)
    }

    /// The letter kept for task `task` that came after its question was asked (`asked_at`),
    /// if any; an older one answered an earlier question: it is dropped, its caller refused.
    pub(crate) fn take(&self, task: &str, asked_at: Option<DateTime<Utc>>) -> Option<Letter> {
        let Kept { letter, at } = lock(&self.0).remove(task)?;
        if asked_at.is_none_or(|asked| at >= asked) {
            return Some(letter);
        }
        if let Some(caller) = letter.caller {
            caller.refuse(A2AError::invalid_request(format!(
                "the answer to task `{task}` came for a question the task no longer asks; answer the question it asks now"
            )));
        }
        None
    }

    /// Drops the answer kept for `task` if the task already holds it (another process
    /// handed it over before it stopped): its caller waits for the task as it goes on.
    pub(crate) fn forget_answered(&self, task: &a2a::Task) {
        let mut kept = lock(&self.0);
        let answered = kept.get(&task.id).is_some_and(|k| {
            task.history
                .iter()
                .flatten()
                .any(|m| m.message_id == k.letter.message.message_id)
        });
        if answered {
            kept.remove(&task.id);
        }
    }
}
