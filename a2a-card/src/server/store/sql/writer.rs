//! The write path of [`SqlTasks`](super::SqlTasks): one writer per store writes everything
//! queued since its last write in one go (group commit), folding the writes of one task into
//! one row write.
//!
//! - A **new task** and the **intermediate** writes of a task this store runs (`submitted`,
//!   `working`, progress, artifact chunks) are *queued*: the call returns at once, reads on this
//!   replica see the queued task ([`Local::queued`]), and the row is written with the writer's
//!   next round, usually together with the task's next write: a queued write waits up to
//!   [`LINGER`] for a write of its task that someone waits for (or a flush), so that a task
//!   created and finished within it is one `INSERT` of the finished task. The server waits for a
//!   new task to be written before it tells a caller about it ([`Store::settle`](super::super::Store::settle)), so
//!   a crash cannot lose a task a caller knows of; a crash can lose intermediate writes, and
//!   recovery then fails the task (it was running), as it would anyway. A queued write that
//!   the database refuses (the id exists; another writer changed the task) is reported by the
//!   task's next write; so is a round whose log (events, journal entries) the database
//!   refused, after which nothing more of its tasks is written (see [`write`]).
//! - A write that a caller must be able to rely on (a terminal state, a question to the
//!   caller, a task this store did not create) is *awaited*: the call returns once it is
//!   written, with the writes queued before it.
//!
//! Each round costs at most four statements whatever its size, each atomic by itself: the
//! round's events into their tasks' logs and its journal entries into their tasks' journals
//! (on SQLite a multi-row `INSERT` each, first, so that a task read at its event `n` finds
//! every later event logged; on Postgres inside the round's first row statement, data-modifying
//! `WITH` items, so that they commit together), one multi-row `INSERT` for the new tasks, one
//! `UPDATE .. FROM (VALUES ..)` compare-and-swap for the others, each announced on Postgres by
//! the statement itself.
//!
//! On Postgres up to three rounds are in the database at once, each on a connection of its
//! own: a write someone waits for starts a round while others commit, rather than waiting for
//! them. A task's writes stay in order: while a round holding a task is in the database, the
//! task's later writes wait for the next round ([`Queue`]). SQLite writes one round at a time.
//!
//! This file holds the scheduling (what is queued, when a round starts, who learns what);
//! [`round`](super::round) what a round is, and [`statements`](super::statements) its SQL
//! (each database's own in its [`Backend`](super::backend::Backend)).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a::{A2AError, Task, TaskState};
use tokio::sync::{mpsc, oneshot};

use super::database::Database;
use super::round::*;

/// The most writes one round takes.
const MAX_BATCH: usize = 256;

/// How long a queued write (one no one waits for) may wait for its task's next write before
/// it is written without it: a task created and finished within it is one row written once.
const LINGER: Duration = Duration::from_millis(2);

/// How many finished tasks [`Local`] keeps.
const FINISHED: usize = 1024;

/// How many bytes of finished tasks [`Local`] keeps (their estimated size): a long task (an
/// artifact streamed in many chunks) is read back from the database rather than kept.
const FINISHED_BYTES: usize = 8 << 20;

/// What this replica knows of the tasks it writes.
#[derive(Default)]
pub(super) struct Local {
    tasks: Mutex<HashMap<String, Versioned>>,
    /// The tasks this store finished last, as written: what a server reads back right after
    /// it finishes one (a finished task never changes; retention empties it).
    finished: Mutex<Finished>,
    /// The feed of the store's changes (Postgres), once it listens: what the store tells a
    /// server, among it each task another replica took over from this one
    /// ([`Change::TakenOver`](crate::server::store::Change::TakenOver)).
    feed: std::sync::OnceLock<crate::server::store::ChangeFeed>,
}

#[derive(Default)]
struct Finished {
    /// The tasks kept, oldest first, with the bytes each is counted for.
    order: std::collections::VecDeque<(String, usize)>,
    tasks: HashMap<String, Task>,
    /// The bytes of the tasks kept, in all.
    bytes: usize,
}

impl Finished {
    /// Keeps `task` as it is now (a copy kept before goes), letting the oldest go while more
    /// than [`FINISHED`] tasks or [`FINISHED_BYTES`] are kept; a task larger than that is not
    /// kept.
    fn keep(&mut self, task: &Task) {
        if self.tasks.remove(&task.id).is_some()
            && let Some(i) = self.order.iter().position(|(id, _)| *id == task.id)
            && let Some((_, bytes)) = self.order.remove(i)
        {
            self.bytes -= bytes;
        }
        let bytes = super::super::task_bytes(task);
        if bytes > FINISHED_BYTES {
            return;
        }
        self.tasks.insert(task.id.clone(), task.clone());
        self.order.push_back((task.id.clone(), bytes));
        self.bytes += bytes;
        while self.order.len() > FINISHED || self.bytes > FINISHED_BYTES {
            let Some((old, bytes)) = self.order.pop_front() else {
                break;
            };
            self.bytes -= bytes;
            self.tasks.remove(&old);
        }
    }
}

struct Versioned {
    /// The version this store last wrote or queued.
    version: i64,
    /// The task as queued and not yet written, with its version.
    queued: Option<(i64, Task)>,
    /// Whether the task's row exists (its creation was written).
    written: bool,
    /// Why a queued write was refused, for the task's later writes.
    refused: Option<A2AError>,
}

impl Local {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Versioned>> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The task as this replica last wrote it, if a write of it is still pending or this
    /// store finished it lately.
    pub(super) fn read(&self, id: &str) -> Option<Task> {
        if let Some(task) = self
            .lock()
            .get(id)
            .and_then(|e| e.queued.as_ref().map(|(_, t)| t.clone()))
        {
            return Some(task);
        }
        let finished = self.finished.lock().unwrap_or_else(|p| p.into_inner());
        finished.tasks.get(id).cloned()
    }

    /// Whether task `id`'s creation here is not written yet (nor refused).
    pub(super) fn pending(&self, id: &str) -> bool {
        self.lock()
            .get(id)
            .is_some_and(|e| !e.written && e.refused.is_none())
    }

    /// The tasks this store runs whose rows are written (not those whose writes were
    /// refused).
    pub(super) fn running(&self) -> Vec<String> {
        self.lock()
            .iter()
            .filter(|(_, e)| e.written && e.refused.is_none())
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Records that task `id` is another replica's now (its row says so, or the log refused
    /// its run's items): its writes here are refused from now on, and its run is told to stop
    /// (a run that waits, for an answer or a timer, writes nothing that would stop it).
    pub(super) fn taken_over(&self, id: &str) {
        if let Some(entry) = self.lock().get_mut(id) {
            entry.queued = None;
            entry.refused.get_or_insert_with(|| taken_over(id));
        }
        if let Some(feed) = self.feed.get() {
            feed.send(crate::server::store::Change::TakenOver(id.to_owned()));
        }
    }

    /// The store's feed of changes, once it listens.
    pub(super) fn feed(&self) -> Option<&crate::server::store::ChangeFeed> {
        self.feed.get()
    }

    /// Keeps `feed`, the store's feed of changes, once it listens.
    pub(super) fn keep_feed(&self, feed: crate::server::store::ChangeFeed) {
        let _ = self.feed.set(feed);
    }

    /// Records that this replica claimed task `id` at `version`: its writes are written from
    /// that version on, whatever an earlier run of it here met.
    pub(super) fn claimed(&self, id: &str, version: i64) {
        self.lock().insert(
            id.to_owned(),
            Versioned {
                version,
                queued: None,
                written: true,
                refused: None,
            },
        );
    }

    /// Forgets task `id` (this replica gave up its claim on it).
    pub(super) fn forget(&self, id: &str) {
        self.lock().remove(id);
    }

    /// Forgets the finished tasks (retention may have removed them).
    pub(super) fn forget_finished(&self) {
        *self.finished.lock().unwrap_or_else(|p| p.into_inner()) = Finished::default();
    }

    /// Records that `version` of `task` is written (and, for a finished task, that no more
    /// writes are expected of this store).
    pub(super) fn committed(&self, task: &Task, version: i64) {
        let id = &task.id;
        if task.status.state.is_terminal() {
            self.lock().remove(id);
            let mut finished = self.finished.lock().unwrap_or_else(|p| p.into_inner());
            finished.keep(task);
            return;
        }
        let mut tasks = self.lock();
        let entry = tasks.entry(id.to_owned()).or_insert(Versioned {
            version,
            queued: None,
            written: true,
            refused: None,
        });
        entry.version = entry.version.max(version);
        entry.written = true;
        if entry.queued.as_ref().is_some_and(|(v, _)| *v <= version) {
            entry.queued = None;
        }
    }

    /// The writes of `ops` that may be written: those of a task whose write was refused are
    /// answered with why (an awaited row write), told they are not sure (a journal entry
    /// waited for) or dropped (an event, a queued write).
    fn writable(&self, ops: Vec<Op>) -> Vec<Op> {
        let tasks = self.lock();
        let mut kept = Vec::with_capacity(ops.len());
        for op in ops {
            let Some(why) = tasks.get(op.task()).and_then(|e| e.refused.as_ref()) else {
                kept.push(op);
                continue;
            };
            match op {
                Op::Create { done, .. } | Op::Update { done, .. } => {
                    if let Some(done) = done {
                        let _ = done.send(Err(why.clone()));
                    }
                }
                Op::Journal { done, .. } => {
                    if let Some(done) = done {
                        let _ = done.send(false);
                    }
                }
                Op::Event { .. } => {}
            }
        }
        kept
    }

    /// Records that task `id`'s events or journal entries of a round were not written (`why`):
    /// no later write of it is written (see [`write`]), and its next write is refused.
    fn unlogged(&self, id: &str, why: &A2AError) {
        let mut tasks = self.lock();
        let entry = tasks.entry(id.to_owned()).or_insert(Versioned {
            version: 0,
            queued: None,
            written: true,
            refused: None,
        });
        entry.queued = None;
        entry.refused.get_or_insert_with(|| why.clone());
    }

    /// Records that a write of task `id` was refused: its later writes, and its settling,
    /// report `why` (unless the refused one finished a task whose creation was written: no
    /// later write is expected).
    fn refused(&self, id: &str, why: A2AError, terminal: bool) {
        let mut tasks = self.lock();
        let Some(entry) = tasks.get_mut(id) else {
            return;
        };
        if terminal && entry.written {
            tasks.remove(id);
        } else {
            // A task whose creation was refused stays until it is settled: its caller must
            // learn why.
            entry.queued = None;
            entry.refused = Some(why);
        }
    }
}

/// What reaches the writer: a write, or a flush (answered once every write sent before it is
/// written).
enum Queued {
    Write(Op),
    Flush(oneshot::Sender<()>),
}

/// The writer's handle; the writer stops when the last handle is dropped.
pub(super) struct Writer {
    ops: mpsc::UnboundedSender<Queued>,
    local: Arc<Local>,
}

fn stopped() -> A2AError {
    A2AError::internal("the task store is shutting down")
}

impl Writer {
    /// Starts the writer to `db`.
    pub(super) fn spawn(db: Arc<dyn Database>, local: Arc<Local>) -> Writer {
        let (ops, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(db, Arc::clone(&local), rx));
        Writer { ops, local }
    }

    /// Writes a new task: queued when `queue` (see the [module docs](self)), else returns
    /// once it is written.
    pub(super) async fn create(&self, task: Task, queue: bool) -> Result<(), A2AError> {
        {
            let mut tasks = self.local.lock();
            if tasks.contains_key(&task.id) {
                return Err(A2AError::invalid_request(format!(
                    "task {} already exists",
                    task.id
                )));
            }
            tasks.insert(
                task.id.clone(),
                Versioned {
                    version: 1,
                    queued: Some((1, task.clone())),
                    written: false,
                    refused: None,
                },
            );
        }
        if queue {
            return self.send(Op::Create {
                task: Box::new(task),
                done: None,
            });
        }
        let id = task.id.clone();
        let created = self
            .wait(|done| Op::Create {
                task: Box::new(task),
                done: Some(done),
            })
            .await
            .map(drop);
        if created.is_err() {
            // The caller learns it here; the task is not this store's to write (another
            // writer's task may have the id).
            self.local.lock().remove(&id);
        }
        created
    }

    /// Writes `task` (as it is after its event `seq`) over the stored one, which must still
    /// have version `expected` (`None`: any); returns the new version once written.
    pub(super) async fn update_at(
        &self,
        task: Task,
        expected: Option<i64>,
        seq: u64,
    ) -> Result<i64, A2AError> {
        self.wait(|done| Op::Update {
            task: Box::new(task),
            expected,
            seq: Some(i64::try_from(seq).unwrap_or(i64::MAX)),
            done: Some(done),
        })
        .await
    }

    /// Queues event `seq` of task `task_id` for the next round.
    pub(super) fn append(&self, task_id: &str, seq: u64, event: &Arc<super::super::Event>) {
        let seq = i64::try_from(seq).unwrap_or(i64::MAX);
        self.log(Op::Event {
            task_id: task_id.to_owned(),
            seq,
            body: Arc::clone(event),
        });
    }

    /// Queues entry `n` of task `task_id`'s journal (its JSON) for the next round; `done`, if
    /// given, is told how the round went (see [`journal_now`](Self::journal_now)).
    pub(super) fn journal(
        &self,
        task_id: &str,
        n: u64,
        entry: String,
        done: Option<oneshot::Sender<bool>>,
    ) {
        self.log(Op::Journal {
            task_id: task_id.to_owned(),
            n: i64::try_from(n).unwrap_or(i64::MAX),
            entry,
            done,
        });
    }

    /// Writes entry `n` of task `task_id`'s journal in the next round, at once (the task's
    /// queued writes with it), and returns once the round ran: `true` when it surely wrote
    /// the entry (its round's log was written), `false` when that is not sure (read it
    /// back); an error once the store's deadline went by first.
    pub(super) async fn journal_now(
        &self,
        task_id: &str,
        n: u64,
        entry: String,
    ) -> Result<bool, A2AError> {
        let (done, answer) = oneshot::channel();
        self.journal(task_id, n, entry, Some(done));
        // Not handed over (the task refused, the store stopping): not sure.
        super::deadline::within(async { Ok(answer.await.unwrap_or(false)) }).await
    }

    /// Queues `op`, an event or a journal entry, for the next round.
    fn log(&self, op: Op) {
        // A task whose write was refused is not the store's any more: what it logs neither.
        if self
            .local
            .lock()
            .get(op.task())
            .is_some_and(|e| e.refused.is_some())
        {
            return;
        }
        let task = op.task().to_owned();
        if self.send(op).is_err() {
            tracing::warn!(task = %task, "an event or journal entry was not logged: the store is shutting down");
        }
    }

    /// Hands `op` to the writer.
    fn send(&self, op: Op) -> Result<(), A2AError> {
        self.ops.send(Queued::Write(op)).map_err(|_| stopped())
    }

    /// Hands the writer the op `make` builds around its answer's sender, and waits for the
    /// answer: the version written.
    async fn wait(
        &self,
        make: impl FnOnce(oneshot::Sender<Result<i64, A2AError>>) -> Op,
    ) -> Result<i64, A2AError> {
        let (done, answer) = oneshot::channel();
        self.send(make(done))?;
        // Within the store's deadline: a round the database does not answer (a partition)
        // goes on in the background, and its writer is told that the store did not answer.
        super::deadline::within(async { answer.await.unwrap_or_else(|_| Err(stopped())) }).await
    }

    /// Writes `task` the way its state asks (see the [module docs](self)): queued when it is
    /// an intermediate write of a task this store writes, else awaited. Reports a refused
    /// queued write of the same task instead.
    pub(super) async fn write(&self, task: Task) -> Result<i64, A2AError> {
        self.write_at(task, None).await
    }

    /// [`write`](Self::write), of `task` as it is after its event `seq`.
    pub(super) async fn write_at(&self, task: Task, seq: Option<u64>) -> Result<i64, A2AError> {
        let seq = seq.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
        let queue = matches!(task.status.state, TaskState::Submitted | TaskState::Working);
        let expected = {
            let mut tasks = self.local.lock();
            match tasks.get_mut(&task.id) {
                None => None,
                Some(entry) => {
                    // Once refused, this replica's view of the task is stale: every later
                    // write is refused too (the last one forgets the task).
                    if let Some(why) = entry.refused.clone() {
                        // A task whose creation was refused stays until it is settled (its
                        // caller must learn why); another is forgotten with its last write.
                        if task.status.state.is_terminal() && entry.written {
                            tasks.remove(&task.id);
                        }
                        return Err(why);
                    }
                    if queue {
                        let expected = entry.version;
                        entry.version += 1;
                        entry.queued = Some((entry.version, task.clone()));
                        let version = entry.version;
                        drop(tasks);
                        self.send(Op::Update {
                            task: Box::new(task),
                            expected: Some(expected),
                            seq,
                            done: None,
                        })?;
                        return Ok(version);
                    }
                    Some(entry.version)
                }
            }
        };
        self.wait(|done| Op::Update {
            task: Box::new(task),
            expected,
            seq,
            done: Some(done),
        })
        .await
    }

    /// Returns once every write queued before the call is written (or refused); an error
    /// once the store's deadline went by first.
    pub(super) async fn flush(&self) -> Result<(), A2AError> {
        let (done, answer) = oneshot::channel();
        if self.ops.send(Queued::Flush(done)).is_err() {
            return Ok(());
        }
        // A writer that stopped (its answer dropped) has nothing left to write either.
        super::deadline::within(async {
            let _ = answer.await;
            Ok(())
        })
        .await
    }

    /// Returns once task `id` exists in the database, if this store created it; why not, when
    /// the database refused it.
    pub(super) async fn settle(&self, id: &str) -> Result<(), A2AError> {
        let pending = self.local.lock().get(id).is_some_and(|e| !e.written);
        if !pending {
            return Ok(());
        }
        // Past the deadline, the entry is still not written: the store is unavailable.
        let _ = self.flush().await;
        let mut tasks = self.local.lock();
        let (why, refused) = match tasks.get(id) {
            Some(entry) if !entry.written => (
                entry.refused.clone().unwrap_or_else(|| {
                    A2AError::internal(crate::server::store::contract::UNAVAILABLE)
                }),
                entry.refused.is_some(),
            ),
            _ => return Ok(()),
        };
        // Its caller knows now; the task was never this store's.
        if refused {
            tasks.remove(id);
        }
        Err(why)
    }
}

/// The writer: takes what is queued into rounds, each task's writes in the order they came
/// (a task in a round still in the database waits for it), and answers flushes once what came
/// before them is written.
async fn run(db: Arc<dyn Database>, local: Arc<Local>, mut rx: mpsc::UnboundedReceiver<Queued>) {
    use futures::StreamExt as _;
    // How many rounds may be in the database at once (see `Backend::ROUNDS`).
    let limit = db.rounds();
    let mut queue = Queue {
        linger: LINGER,
        ..Queue::default()
    };
    let mut received = Vec::new();
    let mut rounds = futures::stream::FuturesUnordered::new();
    let mut open = true;
    // Wakes the writer, with no round in the database, when a write waiting becomes due.
    let mut timer = Box::pin(tokio::time::sleep(Duration::ZERO));
    let mut armed = None;
    loop {
        queue.answer_flushes();
        // Another round starts beside those in the database only for a write someone waits
        // for: a queued write waits for the next round, usually with its task's next write.
        let now = Instant::now();
        while rounds.is_empty() || (rounds.len() < limit && queue.awaited()) {
            let Some(round) = queue.take(now) else { break };
            let local = &local;
            let db = &db;
            rounds.push(async move {
                write(db.as_ref(), round.ops, local).await;
                (round.tasks, round.first)
            });
        }
        let ripens = queue.ripens().filter(|_| rounds.is_empty());
        if ripens != armed {
            if let Some(at) = ripens {
                timer.as_mut().reset(at.into());
            }
            armed = ripens;
        }
        tokio::select! {
            () = timer.as_mut(), if armed.is_some() => armed = None,
            Some((tasks, first)) = rounds.next(), if !rounds.is_empty() => {
                queue.written(tasks, first);
            }
            n = rx.recv_many(&mut received, MAX_BATCH), if open => {
                if n == 0 {
                    // Closing: whatever waits is written now.
                    open = false;
                    queue.linger = Duration::ZERO;
                }
                queue.push(received.drain(..));
            }
            else => break,
        }
    }
}

/// What the writer has received and not yet written.
#[derive(Default)]
struct Queue {
    /// Writes not yet in a round, in the order they came, each with its number and when it
    /// came.
    waiting: std::collections::VecDeque<(u64, Instant, Op)>,
    /// How long a queued write waits for its task's next write ([`LINGER`]).
    linger: Duration,
    /// The number the next write gets.
    next: u64,
    /// Flushes, each with the number of the first write after it.
    flushes: Vec<(u64, oneshot::Sender<()>)>,
    /// The tasks of the rounds in the database.
    busy: HashSet<String>,
    /// The number of the first write of each round in the database.
    firsts: Vec<u64>,
    /// How many writes waiting someone waits for.
    awaited: usize,
}

/// A round taken from the [`Queue`].
struct Taken {
    ops: Vec<Op>,
    tasks: HashSet<String>,
    /// The number of its first write.
    first: u64,
}

impl Queue {
    fn push(&mut self, received: impl Iterator<Item = Queued>) {
        let now = Instant::now();
        for sent in received {
            match sent {
                Queued::Flush(done) => self.flushes.push((self.next, done)),
                Queued::Write(op) => {
                    self.awaited += usize::from(op.awaited());
                    self.waiting.push_back((self.next, now, op));
                    self.next += 1;
                }
            }
        }
    }

    /// The next round at `now` (up to [`MAX_BATCH`] writes): the writes waiting whose tasks
    /// are in no round in the database and that are due: someone waits for a write of their
    /// task, a flush came after them, or they have lingered. The others wait on, in order.
    fn take(&mut self, now: Instant) -> Option<Taken> {
        let mut round = Taken {
            ops: Vec::new(),
            tasks: HashSet::new(),
            first: u64::MAX,
        };
        // Writes that came before this flush, or by this time, are due whoever waits.
        let flushed = self
            .flushes
            .iter()
            .map(|(after, _)| *after)
            .max()
            .unwrap_or(0);
        let ripe = now.checked_sub(self.linger).unwrap_or(now);
        let awaited: HashSet<String> = if self.awaited > 0 {
            self.waiting
                .iter()
                .filter(|(_, _, op)| op.awaited())
                .map(|(_, _, op)| op.task().to_owned())
                .collect()
        } else {
            Default::default()
        };
        // Each write waiting is looked at once; those that wait on go back to the end in the
        // order they came (no new queue a round). A task's later writes follow one that waits:
        // a full round or a busy task holds them all, and a write not yet due is the latest.
        for _ in 0..self.waiting.len() {
            let Some((n, at, op)) = self.waiting.pop_front() else {
                break;
            };
            let task = op.task();
            let due = n < flushed || at <= ripe || awaited.contains(task);
            if !due || round.ops.len() >= MAX_BATCH || self.busy.contains(task) {
                self.waiting.push_back((n, at, op));
                continue;
            }
            if !round.tasks.contains(task) {
                round.tasks.insert(task.to_owned());
            }
            round.first = round.first.min(n);
            self.awaited -= usize::from(op.awaited());
            round.ops.push(op);
        }
        // A burst (a long stream outpacing the database) grew the queue: its room goes back
        // once it is drained.
        let room = self.waiting.capacity();
        if room > 4 * MAX_BATCH && self.waiting.len() < room / 4 {
            self.waiting
                .shrink_to((2 * self.waiting.len()).max(MAX_BATCH));
        }
        if round.ops.is_empty() {
            return None;
        }
        self.busy.extend(round.tasks.iter().cloned());
        self.firsts.push(round.first);
        Some(round)
    }

    /// Whether a write waiting, or a flush, is waited for.
    fn awaited(&self) -> bool {
        self.awaited > 0 || !self.flushes.is_empty()
    }

    /// When the oldest write waiting has lingered enough to be written by itself.
    fn ripens(&self) -> Option<Instant> {
        self.waiting.front().map(|(_, at, _)| *at + self.linger)
    }

    /// The round of `tasks` whose first write was `first` is written.
    fn written(&mut self, tasks: HashSet<String>, first: u64) {
        for task in &tasks {
            self.busy.remove(task);
        }
        if let Some(i) = self.firsts.iter().position(|&n| n == first) {
            self.firsts.swap_remove(i);
        }
    }

    /// Answers the flushes that every write before them is written for.
    fn answer_flushes(&mut self) {
        let unwritten = self
            .firsts
            .iter()
            .copied()
            .chain(self.waiting.front().map(|(n, _, _)| *n))
            .min()
            .unwrap_or(u64::MAX);
        for (after, done) in std::mem::take(&mut self.flushes) {
            if after <= unwritten {
                let _ = done.send(());
            } else {
                self.flushes.push((after, done));
            }
        }
    }
}

/// Why a run's writes are refused once the fence refused its log items ([`Written::fenced`]).
fn taken_over(task: &str) -> A2AError {
    A2AError::invalid_request(format!(
        "task {task} is no longer this process's to write: another process took it over, or it ended, while this one ran it; read it again"
    ))
}

/// A row written at `version`: its writers learn their versions.
fn accept(row: Row, version: i64, local: &Local) {
    local.committed(&row.task, version);
    for (done, after) in row.waiting {
        let _ = done.send(Ok(version - after));
    }
}
/// A row refused: its writers (and the task's next write) learn why.
fn refuse(row: Row, why: &A2AError, local: &Local) {
    local.refused(
        &row.task.id,
        why.clone(),
        row.task.status.state.is_terminal(),
    );
    for (done, _) in row.waiting {
        let _ = done.send(Err(why.clone()));
    }
}
/// Writes `ops`, answers their writers and updates `local`.
///
/// The writes of a task whose write was refused (or whose log was not written) are not
/// written: the task is no longer this store's to write, and an event or a journal entry
/// written after one that was lost would leave a gap in its log, which no reader (a stream
/// resumed after an event, a durable replay) can tell from the task's own history. Its writers
/// learn why; its run here stops at its next write, and the store's recovery takes the task
/// over from what its log holds.
async fn write(db: &dyn Database, ops: Vec<Op>, local: &Local) {
    let ops = local.writable(ops);
    if ops.is_empty() {
        return;
    }
    let Round {
        rows,
        mut log,
        journaled,
        waited,
    } = Round::of(ops);
    if db.fences() {
        // The tasks this store created or claimed and has not ended: it runs them.
        let running = local.lock();
        log.fence(|id| running.contains_key(id));
    }
    let written = db.round(rows, &log).await;
    // A task that ended is written no more: no gap can follow its log, no run to stop.
    let ended: Vec<String> = match written.unlogged.is_some() || !written.fenced.is_empty() {
        false => Vec::new(),
        true => written
            .rows
            .iter()
            .filter(|(row, _)| row.task.status.state.is_terminal())
            .map(|(row, _)| row.task.id.clone())
            .collect(),
    };
    for (row, outcome) in written.rows {
        match outcome {
            Ok(version) => accept(row, version, local),
            Err(why) => refuse(row, &why, local),
        }
    }
    if let Some(why) = &written.unlogged {
        for task in log.gaps(&waited) {
            if !ended.iter().any(|id| id == task) {
                local.unlogged(task, why);
            }
        }
    }
    // A task whose items the fence refused is another replica's now (or ended): its run here
    // stops, as after a lost log, and whoever waits for one of its entries learns it was not
    // written.
    for task in &written.fenced {
        if !ended.contains(task) {
            local.taken_over(task);
        }
    }
    for (done, i) in journaled.into_iter().zip(waited) {
        let fenced = log
            .journal
            .get(i)
            .is_some_and(|(task, _, _)| written.fenced.contains(task));
        let _ = done.send(written.unlogged.is_none() && !fenced);
    }
}

#[cfg(test)]
mod tests;
