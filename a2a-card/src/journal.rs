//! A durable skill's journal (`#[skill(durable)]`): what its handler already did (its steps'
//! results, its timers' deadlines, the answers to its questions), kept with its task's event
//! log, so that a run of the handler after its process stopped replays what is recorded
//! instead of doing it again.
//!
//! The server writes entry 0 (what the task runs: the skill, its version, the caller); each
//! later entry is one the handler made, in the order it made them. On a replay the handler
//! meets its recorded entries in that order: a step of another name, or a sleep where a step
//! was recorded, means the handler does not do what it did (its code changed, or it decided on
//! something that is not its input, its answers or its steps' results), and the run fails
//! saying which entry differed.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use crate::context::Answer;
use crate::skill::SkillError;

/// One recorded entry a handler meets again on a replay.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(not(feature = "server"), allow(dead_code))]
pub(crate) enum Entry {
    /// Step `name` returned `value`.
    Step { name: String, value: Value },
    /// A durable sleep until this time (milliseconds since the Unix epoch).
    Sleep { until_ms: i64 },
    /// A question was answered with this.
    Answer(Box<Answer>),
}

impl Entry {
    /// What the entry is, for messages.
    fn describe(&self) -> String {
        match self {
            Entry::Step { name, .. } => format!("step `{name}`"),
            Entry::Sleep { .. } => "a sleep".to_owned(),
            Entry::Answer(_) => "an answer to a question".to_owned(),
        }
    }

    /// The JSON a step's or a sleep's entry is kept as (an answer's is written by the server,
    /// as the message that answered: see [`answer_entry`]).
    fn to_json(&self) -> Value {
        match self {
            Entry::Step { name, value } => json!({"step": name, "value": value}),
            Entry::Sleep { until_ms } => json!({"sleep": until_ms}),
            Entry::Answer(answer) => answer_entry(&answer.message),
        }
    }

    /// The entry a step or sleep is kept as: `None` for another JSON (the server reads
    /// answers itself, with its dispatcher).
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    pub(crate) fn from_json(value: &Value) -> Option<Entry> {
        if let Some(name) = value.get("step").and_then(Value::as_str) {
            return Some(Entry::Step {
                name: name.to_owned(),
                value: value.get("value").cloned().unwrap_or(Value::Null),
            });
        }
        value
            .get("sleep")
            .and_then(Value::as_i64)
            .map(|until_ms| Entry::Sleep { until_ms })
    }
}

/// The entry an answer is kept as: the message that answered, as JSON.
#[cfg_attr(not(feature = "server"), allow(dead_code))]
pub(crate) fn answer_entry(message: &Value) -> Value {
    json!({ "answer": message })
}

/// Where a journal's new entries go: entry `n` as JSON (the server queues it with the task's
/// events, in order, at once, for a round of the writer soon), and the future that resolves
/// once it is written (awaited for answers only: a step's result rides in the next round,
/// beside the task's other writes).
pub(crate) type Sink =
    Box<dyn Fn(u64, Value) -> futures::future::BoxFuture<'static, ()> + Send + Sync>;

/// A durable handler's journal: the entries still to replay, and where new ones go.
pub(crate) struct Journal {
    replay: Mutex<VecDeque<Entry>>,
    /// How many entries the handler met so far (recorded or new), for messages.
    met: AtomicU64,
    /// The number of the next entry written.
    next: AtomicU64,
    sink: Sink,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("next", &self.next.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

#[cfg_attr(not(feature = "server"), allow(dead_code))]
impl Journal {
    /// A journal whose entries `replay` were recorded (entry 0, the server's, not among
    /// them), the next written as entry `next`.
    pub(crate) fn new(replay: Vec<Entry>, next: u64, sink: Sink) -> Journal {
        Journal {
            replay: Mutex::new(replay.into()),
            met: AtomicU64::new(0),
            next: AtomicU64::new(next),
            sink,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Entry>> {
        self.replay.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The next recorded entry, if the handler has not met them all.
    fn take(&self) -> Option<Entry> {
        let entry = self.lock().pop_front();
        self.met.fetch_add(1, Ordering::Relaxed);
        entry
    }

    /// Writes `entry` as the next one, and returns once it is written (an answer: kept
    /// before the handler has it, so that it is never asked again).
    pub(crate) async fn write(&self, entry: Value) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        (self.sink)(n, entry).await;
    }

    /// Queues `entry` as the next one, written in the store's next round (a step's result or
    /// a sleep's deadline: a crash before that round runs the step again, as a crash in its
    /// body does).
    fn queue(&self, entry: Value) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        drop((self.sink)(n, entry));
    }

    /// The failure of a replay that met `recorded` where the handler did `did`.
    fn diverged(&self, recorded: &Entry, did: &str) -> SkillError {
        SkillError::Failed(format!(
            "the durable handler did not replay as its journal says: its entry {} is {}, and the handler now did {did}; a durable handler must do the same steps, sleeps and questions in the same order (its code changed? give the skill a new `durable = \"VERSION\"`)",
            self.met.load(Ordering::Relaxed),
            recorded.describe(),
        ))
    }

    /// Step `name`: its recorded result, or `None` when it is not recorded (run it, then
    /// [`stepped`](Self::stepped)).
    pub(crate) fn step(&self, name: &str) -> Result<Option<Value>, SkillError> {
        match self.take() {
            None => Ok(None),
            Some(Entry::Step { name: n, value }) if n == name => Ok(Some(value)),
            Some(other) => Err(self.diverged(&other, &format!("step `{name}`"))),
        }
    }

    /// Records the result of step `name`.
    pub(crate) fn stepped(&self, name: &str, value: Value) {
        let entry = Entry::Step {
            name: name.to_owned(),
            value,
        };
        self.queue(entry.to_json());
    }

    /// The deadline of a sleep of `ms` milliseconds from `now_ms`: the recorded one, or a
    /// new one, recorded.
    pub(crate) fn sleep(&self, now_ms: i64, ms: i64) -> Result<i64, SkillError> {
        match self.take() {
            Some(Entry::Sleep { until_ms }) => Ok(until_ms),
            Some(other) => Err(self.diverged(&other, "a sleep")),
            None => {
                let until_ms = now_ms.saturating_add(ms);
                self.queue(Entry::Sleep { until_ms }.to_json());
                Ok(until_ms)
            }
        }
    }

    /// The recorded answer of the next question, or `None` when it is not recorded (ask it:
    /// the server records the answer as it hands it over).
    pub(crate) fn answer(&self) -> Result<Option<Answer>, SkillError> {
        match self.take() {
            None => Ok(None),
            Some(Entry::Answer(answer)) => Ok(Some(*answer)),
            Some(other) => Err(self.diverged(&other, "a question")),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// The entries a test's journal wrote.
    type Written = Arc<Mutex<Vec<(u64, Value)>>>;

    fn journal(replay: Vec<Entry>) -> (Journal, Written) {
        let written = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&written);
        let next = replay.len() as u64 + 1;
        let journal = Journal::new(
            replay,
            next,
            Box::new(move |n, v| {
                sink.lock().unwrap().push((n, v));
                Box::pin(async {})
            }),
        );
        (journal, written)
    }

    #[test]
    fn a_recorded_step_is_returned_and_a_new_one_written_after_the_recorded() {
        let recorded = Entry::Step {
            name: "charge".into(),
            value: json!({"receipt": 7}),
        };
        let (journal, written) = journal(vec![recorded]);
        assert_eq!(journal.step("charge").unwrap(), Some(json!({"receipt": 7})));
        assert_eq!(journal.step("ship").unwrap(), None);
        journal.stepped("ship", json!("done"));
        assert_eq!(
            *written.lock().unwrap(),
            vec![(2, json!({"step": "ship", "value": "done"}))]
        );
        assert_eq!(
            Entry::from_json(&json!({"step": "ship", "value": "done"})),
            Some(Entry::Step {
                name: "ship".into(),
                value: json!("done")
            })
        );
    }

    #[test]
    fn a_replay_that_differs_says_which_entry_and_what_it_was() {
        let (journal, _) = journal(vec![Entry::Sleep { until_ms: 5 }]);
        let SkillError::Failed(why) = journal.step("charge").unwrap_err() else {
            panic!("a failure")
        };
        assert!(why.contains("entry 1 is a sleep"), "{why}");
        assert!(why.contains("step `charge`"), "{why}");
        let (journal, _) = journal_with_step();
        let SkillError::Failed(why) = journal.step("refund").unwrap_err() else {
            panic!("a failure")
        };
        assert!(
            why.contains("step `charge`") && why.contains("step `refund`"),
            "{why}"
        );
    }

    fn journal_with_step() -> (Journal, Written) {
        journal(vec![Entry::Step {
            name: "charge".into(),
            value: Value::Null,
        }])
    }

    #[test]
    fn a_sleep_keeps_its_recorded_deadline() {
        let (journal, written) = journal(vec![Entry::Sleep { until_ms: 1_000 }]);
        assert_eq!(journal.sleep(5_000, 60_000).unwrap(), 1_000);
        assert_eq!(journal.sleep(5_000, 60_000).unwrap(), 65_000);
        assert_eq!(written.lock().unwrap()[0].1, json!({"sleep": 65_000}));
    }
}
