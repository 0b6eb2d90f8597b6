//! A round: the writes of a task folded into one row write, and what one round asks of the
//! database (rows, and what it logs: events and journal entries).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use a2a::{A2AError, Task};
use tokio::sync::oneshot;

use super::encode;
use crate::server::store::Event;

/// How a write reaches the writer. A task is boxed: the queue holds an event (the bulk of a
/// long stream) in a few words.
pub(super) enum Op {
    Create {
        task: Box<Task>,
        done: Option<oneshot::Sender<Result<i64, A2AError>>>,
    },
    Update {
        task: Box<Task>,
        /// The version the stored task must have (`None`: whatever it has).
        expected: Option<i64>,
        /// The number of the last event of the task this write reflects.
        seq: Option<i64>,
        done: Option<oneshot::Sender<Result<i64, A2AError>>>,
    },
    /// Event `seq` of task `task_id` (its JSON is what is logged).
    Event {
        task_id: String,
        seq: i64,
        body: Arc<Event>,
    },
    /// Entry `n` of task `task_id`'s journal (JSON), and who waits for it: told `true` once
    /// its round wrote its log, `false` when that is not sure.
    Journal {
        task_id: String,
        n: i64,
        entry: String,
        done: Option<oneshot::Sender<bool>>,
    },
}

impl Op {
    /// The task the write is of.
    pub(super) fn task(&self) -> &str {
        match self {
            Op::Create { task, .. } | Op::Update { task, .. } => &task.id,
            Op::Event { task_id, .. } | Op::Journal { task_id, .. } => task_id,
        }
    }

    /// Whether someone waits for the write.
    pub(super) fn awaited(&self) -> bool {
        match self {
            Op::Create { done, .. } | Op::Update { done, .. } => done.is_some(),
            Op::Journal { done, .. } => done.is_some(),
            Op::Event { .. } => false,
        }
    }
}

/// The writes of one task in a round, folded into one row write.
pub(super) struct Row {
    pub(super) task: Task,
    /// The task's JSON, made once per round (see [`Round::encode`]).
    pub(super) body: String,
    /// Whether the row is new (an `INSERT`), else an update.
    pub(super) new: bool,
    /// The version the stored row must have (updates; `None`: any).
    pub(super) expected: Option<i64>,
    /// How many writes the row folds (for a new row: its version).
    pub(super) steps: i64,
    /// The number of the last event the task reflects, when its writer said.
    pub(super) seq: Option<i64>,
    /// Who waits, and how many writes after theirs the row holds.
    pub(super) waiting: Vec<(oneshot::Sender<Result<i64, A2AError>>, i64)>,
}

/// What one round asks of the database.
#[derive(Default)]
pub(super) struct Round {
    pub(super) rows: Vec<Row>,
    pub(super) log: Log,
    /// Who waits for a journal entry of the round.
    pub(super) journaled: Vec<oneshot::Sender<bool>>,
    /// Where those entries are in the log's journal entries.
    pub(super) waited: Vec<usize>,
}

/// What a round logs beside its rows (an entry logged already stays as it was).
#[derive(Default)]
pub(super) struct Log {
    /// Events: task id, number, event.
    pub(super) events: Vec<(String, i64, Arc<Event>)>,
    /// Journal entries of durable skills' tasks: task id, number, entry.
    pub(super) journal: Vec<(String, i64, String)>,
    /// The tasks of the log that this replica runs: on a database shared by several replicas
    /// ([`Backend::FENCES`](super::backend::Backend::FENCES)) their items are logged only
    /// while the task's row is still this replica's and not ended, and those refused are said
    /// in [`Written::fenced`].
    pub(super) fenced: HashSet<String>,
}

impl Log {
    pub(super) fn is_empty(&self) -> bool {
        self.events.is_empty() && self.journal.is_empty()
    }

    /// The tasks a lost log leaves a gap in, should any later item of theirs be written: those
    /// of its events, and of its journal entries but those at `waited` (entries someone waits
    /// for, not counted written when they are not: asked for again at the same number).
    pub(super) fn gaps(&self, waited: &[usize]) -> HashSet<&str> {
        let events = self.events.iter().map(|(id, _, _)| id.as_str());
        let entries = self.journal.iter().enumerate();
        events
            .chain(
                entries
                    .filter(|(i, _)| !waited.contains(i))
                    .map(|(_, (id, _, _))| id.as_str()),
            )
            .collect()
    }

    /// Fences the items of the tasks that `runs` says this replica runs (see
    /// [`fenced`](Self::fenced)).
    pub(super) fn fence(&mut self, runs: impl Fn(&str) -> bool) {
        let events = self.events.iter().map(|(id, _, _)| id);
        for id in events.chain(self.journal.iter().map(|(id, _, _)| id)) {
            if !self.fenced.contains(id) && runs(id) {
                self.fenced.insert(id.clone());
            }
        }
    }

    /// The tasks with an event or a journal entry in the log (the [`gaps`](Self::gaps) it
    /// leaves when no one waits for any of its entries).
    pub(super) fn tasks(&self) -> HashSet<&str> {
        self.gaps(&[])
    }
}

/// What the database did with a round.
#[derive(Default)]
pub(super) struct Written {
    /// Each row with its outcome: the version written, or why not.
    pub(super) rows: Vec<(Row, Result<i64, A2AError>)>,
    /// Why the round's log (its events and journal entries) is not surely written, when it is
    /// not: a log that failed leaves a gap in its tasks' logs should any later item of theirs
    /// be written, so the writer stops writing those tasks (see
    /// [`writer`](super::writer)'s `write`).
    pub(super) unlogged: Option<A2AError>,
    /// The tasks whose events or journal entries the database refused because their rows are
    /// no longer this replica's (another replica claimed the task, this one gave it up) or
    /// ended: the run here is not the task's any more, and stops (see
    /// [`writer`](super::writer)'s `write`). Only on a database that
    /// [fences](super::backend::Backend::FENCES) the log.
    pub(super) fenced: HashSet<String>,
}

impl Written {
    /// A round whose rows were all refused for `why`, its log (if any) not written.
    pub(super) fn refused(rows: Vec<Row>, log: &Log, why: &A2AError) -> Written {
        Written {
            rows: super::statements::all_refused(rows, why),
            unlogged: (!log.is_empty()).then(|| why.clone()),
            fenced: HashSet::new(),
        }
    }
}

impl Round {
    pub(super) fn of(ops: Vec<Op>) -> Round {
        let mut round = Round::default();
        let mut index: HashMap<String, usize> = HashMap::new();
        for op in ops {
            let (task, new, expected, seq, done) = match op {
                Op::Event { task_id, seq, body } => {
                    round.log.events.push((task_id, seq, body));
                    continue;
                }
                Op::Journal {
                    task_id,
                    n,
                    entry,
                    done,
                } => {
                    if done.is_some() {
                        round.waited.push(round.log.journal.len());
                    }
                    round.log.journal.push((task_id, n, entry));
                    round.journaled.extend(done);
                    continue;
                }
                Op::Create { task, done } => (*task, true, None, None, done),
                Op::Update {
                    task,
                    expected,
                    seq,
                    done,
                } => (*task, false, expected, seq, done),
            };
            match index.get(&task.id) {
                Some(&i) if !new => {
                    let row = &mut round.rows[i];
                    for (_, after) in &mut row.waiting {
                        *after += 1;
                    }
                    row.steps += 1;
                    row.task = task;
                    row.seq = seq.or(row.seq);
                    row.waiting.extend(done.map(|d| (d, 0)));
                }
                _ => {
                    index.insert(task.id.clone(), round.rows.len());
                    round.rows.push(Row {
                        task,
                        body: String::new(),
                        new,
                        expected,
                        steps: 1,
                        seq,
                        waiting: done.map(|d| (d, 0)).into_iter().collect(),
                    });
                }
            }
        }
        round.encode();
        round
    }

    /// Makes each row's JSON, once for all the writes folded into it; a task that cannot be
    /// made JSON is refused to its writers and left out.
    pub(super) fn encode(&mut self) {
        for mut row in std::mem::take(&mut self.rows) {
            match encode(&row.task) {
                Ok(body) => {
                    row.body = body;
                    self.rows.push(row);
                }
                Err(why) => {
                    for (done, _) in row.waiting {
                        let _ = done.send(Err(why.clone()));
                    }
                }
            }
        }
    }
}
