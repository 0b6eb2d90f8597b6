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
//!   new task to be written before it tells a caller about it ([`super::super::Settle`]), so
//!   a crash cannot lose a task a caller knows of; a crash can lose intermediate writes, and
//!   recovery then fails the task (it was running), as it would anyway. A queued write that
//!   the database refuses (the id exists; another writer changed the task) is reported by the
//!   task's next write.
//! - A write that a caller must be able to rely on (a terminal state, a question to the
//!   caller, a task this store did not create) is *awaited*: the call returns once it is
//!   written, with the writes queued before it.
//!
//! Each round costs at most three statements whatever its size, each atomic by itself: the
//! round's events into their tasks' logs (on SQLite a multi-row `INSERT` of their own, first,
//! so that a task read at its event `n` finds every later event logged; on Postgres inside the
//! round's first row statement, a data-modifying `WITH`, so that they commit together), one
//! multi-row `INSERT` for the new tasks, one `UPDATE .. FROM (VALUES ..)` compare-and-swap for
//! the others, each announced on Postgres by the statement itself.
//!
//! On Postgres up to three rounds are in the database at once, each on a connection of its
//! own: a write someone waits for starts a round while others commit, rather than waiting for
//! them. A task's writes stay in order: while a round holding a task is in the database, the
//! task's later writes wait for the next round ([`Queue`]). SQLite writes one round at a time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tracing::Instrument as _;

use a2a::{A2AError, Task, TaskState};
use sqlx::pool::PoolConnection;
use sqlx::{AnyPool, Row as _};
use tokio::sync::{mpsc, oneshot};

use super::super::notify::{CHANGES, EVENTS, Others};
use super::{Dialect, db_error, encode, now_millis, sql_for, state_name};
use crate::server::store::memory::terminal_error;

/// The most writes one round takes.
const MAX_BATCH: usize = 256;

/// How long a queued write (one no one waits for) may wait for its task's next write before
/// it is written without it: a task created and finished within it is one row written once.
const LINGER: Duration = Duration::from_millis(2);

/// How many finished tasks [`Local`] keeps.
const FINISHED: usize = 1024;

/// What this replica knows of the tasks it writes.
#[derive(Default)]
pub(super) struct Local {
    tasks: Mutex<HashMap<String, Entry>>,
    /// The tasks this store finished last, as written: what a server reads back right after
    /// it finishes one (a finished task never changes; retention empties it).
    finished: Mutex<Finished>,
}

#[derive(Default)]
struct Finished {
    order: std::collections::VecDeque<String>,
    tasks: HashMap<String, Task>,
}

struct Entry {
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
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
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
            if finished.tasks.insert(id.clone(), task.clone()).is_none() {
                finished.order.push_back(id.clone());
            }
            while finished.order.len() > FINISHED {
                if let Some(old) = finished.order.pop_front() {
                    finished.tasks.remove(&old);
                }
            }
            return;
        }
        let mut tasks = self.lock();
        let entry = tasks.entry(id.to_owned()).or_insert(Entry {
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

/// How a write reaches the writer.
enum Op {
    Create {
        task: Task,
        done: Option<oneshot::Sender<Result<i64, A2AError>>>,
    },
    Update {
        task: Task,
        /// The version the stored task must have (`None`: whatever it has).
        expected: Option<i64>,
        /// The number of the last event of the task this write reflects.
        seq: Option<i64>,
        done: Option<oneshot::Sender<Result<i64, A2AError>>>,
    },
    /// Event `seq` of task `task_id`, as JSON.
    Event {
        task_id: String,
        seq: i64,
        body: String,
    },
}

impl Op {
    /// The task the write is of.
    fn task(&self) -> &str {
        match self {
            Op::Create { task, .. } | Op::Update { task, .. } => &task.id,
            Op::Event { task_id, .. } => task_id,
        }
    }

    /// Whether someone waits for the write.
    fn awaited(&self) -> bool {
        match self {
            Op::Create { done, .. } | Op::Update { done, .. } => done.is_some(),
            Op::Event { .. } => false,
        }
    }
}

/// What reaches the writer: a write, or a flush (answered once every write sent before it is
/// written).
// Writes are nearly all of what is sent: boxing them would allocate once per write to save
// space on flushes.
#[allow(clippy::large_enum_variant)]
enum Sent {
    Write(Op),
    Flush(oneshot::Sender<()>),
}

/// The writer's handle; the writer stops when the last handle is dropped.
pub(super) struct Writer {
    ops: mpsc::UnboundedSender<Sent>,
    local: Arc<Local>,
}

/// What the writer writes to.
pub(super) struct Db {
    pub(super) pool: AnyPool,
    pub(super) dialect: Dialect,
    pub(super) replica: String,
    /// Whether the last round found the database unreachable: the next waits less for a
    /// connection, so that the writes queued meanwhile learn it quickly (and the first that
    /// reaches it clears this).
    pub(super) down: std::sync::atomic::AtomicBool,
    /// Whether a round announces what it wrote (Postgres `NOTIFY`): only while another
    /// replica may listen.
    pub(super) others: Arc<Others>,
}

/// A connection the writer keeps between rounds, and since when it is unused.
type Held = Option<(PoolConnection<sqlx::Any>, Instant)>;

/// How long the writer's kept connection may stay unused before the next round tries it first
/// (the pool tries each connection it hands out).
const IDLE_PING: Duration = Duration::from_secs(1);

/// How long a round waits for a connection while the database was found unreachable.
const RETRY_ACQUIRE: Duration = Duration::from_millis(250);

fn stopped() -> A2AError {
    A2AError::internal("the task store is shutting down")
}

impl Writer {
    /// Starts the writer of `db`.
    pub(super) fn spawn(db: Db, local: Arc<Local>) -> Writer {
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
                Entry {
                    version: 1,
                    queued: Some((1, task.clone())),
                    written: false,
                    refused: None,
                },
            );
        }
        if queue {
            return self.send(Op::Create { task, done: None });
        }
        let id = task.id.clone();
        let created = self
            .wait(|done| Op::Create {
                task,
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
            task,
            expected,
            seq: Some(i64::try_from(seq).unwrap_or(i64::MAX)),
            done: Some(done),
        })
        .await
    }

    /// Queues event `seq` of task `task_id` for the next round (an event that cannot be made
    /// JSON is left out, and said in the log).
    pub(super) fn append(&self, task_id: &str, seq: u64, event: &a2a::StreamResponse) {
        // A task whose write was refused is not the store's any more: its events neither.
        if self
            .local
            .lock()
            .get(task_id)
            .is_some_and(|e| e.refused.is_some())
        {
            return;
        }
        let body = match serde_json::to_string(event) {
            Ok(body) => body,
            Err(e) => {
                tracing::warn!(task = %task_id, seq, error = %e, "an event cannot be logged");
                return;
            }
        };
        let op = Op::Event {
            task_id: task_id.to_owned(),
            seq: i64::try_from(seq).unwrap_or(i64::MAX),
            body,
        };
        if self.send(op).is_err() {
            tracing::warn!(task = %task_id, seq, "an event was not logged: the store is shutting down");
        }
    }

    /// Hands `op` to the writer.
    fn send(&self, op: Op) -> Result<(), A2AError> {
        self.ops.send(Sent::Write(op)).map_err(|_| stopped())
    }

    /// Hands the writer the op `make` builds around its answer's sender, and waits for the
    /// answer: the version written.
    async fn wait(
        &self,
        make: impl FnOnce(oneshot::Sender<Result<i64, A2AError>>) -> Op,
    ) -> Result<i64, A2AError> {
        let (done, answer) = oneshot::channel();
        self.send(make(done))?;
        answer.await.unwrap_or_else(|_| Err(stopped()))
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
                            task,
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
            task,
            expected,
            seq,
            done: Some(done),
        })
        .await
    }

    /// Returns once every write queued before the call is written (or refused).
    pub(super) async fn flush(&self) {
        let (done, answer) = oneshot::channel();
        if self.ops.send(Sent::Flush(done)).is_ok() {
            let _ = answer.await;
        }
    }

    /// Returns once task `id` exists in the database, if this store created it; why not, when
    /// the database refused it.
    pub(super) async fn settle(&self, id: &str) -> Result<(), A2AError> {
        let pending = self.local.lock().get(id).is_some_and(|e| !e.written);
        if !pending {
            return Ok(());
        }
        self.flush().await;
        let mut tasks = self.local.lock();
        let (why, refused) = match tasks.get(id) {
            Some(entry) if !entry.written => (
                entry
                    .refused
                    .clone()
                    .unwrap_or_else(|| A2AError::internal("the task store is unavailable")),
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

/// How many rounds the writer has in the database at once. SQLite writes one at a time (a
/// second round would wait for the first's lock); Postgres commits rounds on several
/// connections at once, so that a write arriving while a round is in the database starts the
/// next at once instead of waiting for it.
fn rounds_in_flight(dialect: Dialect) -> usize {
    match dialect {
        Dialect::Sqlite => 1,
        Dialect::Postgres => 3,
    }
}

/// The writer: takes what is queued into rounds, each task's writes in the order they came
/// (a task in a round still in the database waits for it), and answers flushes once what came
/// before them is written.
async fn run(db: Db, local: Arc<Local>, mut rx: mpsc::UnboundedReceiver<Sent>) {
    use futures::StreamExt as _;
    let limit = rounds_in_flight(db.dialect);
    let mut queue = Queue {
        linger: LINGER,
        ..Queue::default()
    };
    let mut received = Vec::new();
    // The connections kept between rounds (one per round in the database at most).
    let mut kept: Vec<Held> = Vec::new();
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
            let held = kept.pop().flatten();
            let local = &local;
            let db = &db;
            rounds.push(async move {
                let held = db.write(round.ops, local, held).await;
                (round.tasks, round.first, held)
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
            Some((tasks, first, back)) = rounds.next(), if !rounds.is_empty() => {
                if back.is_some() {
                    kept.push(back);
                }
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
    busy: std::collections::HashSet<String>,
    /// The number of the first write of each round in the database.
    firsts: Vec<u64>,
    /// How many writes waiting someone waits for.
    awaited: usize,
}

/// A round taken from the [`Queue`].
struct Taken {
    ops: Vec<Op>,
    tasks: std::collections::HashSet<String>,
    /// The number of its first write.
    first: u64,
}

impl Queue {
    fn push(&mut self, received: impl Iterator<Item = Sent>) {
        let now = Instant::now();
        for sent in received {
            match sent {
                Sent::Flush(done) => self.flushes.push((self.next, done)),
                Sent::Write(op) => {
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
            tasks: std::collections::HashSet::new(),
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
        let awaited: std::collections::HashSet<String> = if self.awaited > 0 {
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
    fn written(&mut self, tasks: std::collections::HashSet<String>, first: u64) {
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

/// The writes of one task in a round, folded into one row write.
struct Row {
    task: Task,
    /// The task's JSON, made once per round (see [`Round::encode`]).
    body: String,
    /// Whether the row is new (an `INSERT`), else an update.
    new: bool,
    /// The version the stored row must have (updates; `None`: any).
    expected: Option<i64>,
    /// How many writes the row folds (for a new row: its version).
    steps: i64,
    /// The number of the last event the task reflects, when its writer said.
    seq: Option<i64>,
    /// Who waits, and how many writes after theirs the row holds.
    waiting: Vec<(oneshot::Sender<Result<i64, A2AError>>, i64)>,
}

/// What one round asks of the database.
#[derive(Default)]
struct Round {
    rows: Vec<Row>,
    /// Events logged: task id, number, JSON.
    events: Vec<(String, i64, String)>,
}

impl Round {
    fn of(ops: Vec<Op>) -> Round {
        let mut round = Round::default();
        let mut index: HashMap<String, usize> = HashMap::new();
        for op in ops {
            let (task, new, expected, seq, done) = match op {
                Op::Event { task_id, seq, body } => {
                    round.events.push((task_id, seq, body));
                    continue;
                }
                Op::Create { task, done } => (task, true, None, None, done),
                Op::Update {
                    task,
                    expected,
                    seq,
                    done,
                } => (task, false, expected, seq, done),
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
    fn encode(&mut self) {
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

impl Db {
    fn sql<'a>(&self, sql: &'a str) -> std::borrow::Cow<'a, str> {
        sql_for(self.dialect, sql)
    }

    /// Writes `ops`, answers their writers and updates `local`.
    async fn write(&self, ops: Vec<Op>, local: &Local, mut held: Held) -> Held {
        let Round { rows, events } = Round::of(ops);
        for (row, outcome) in self.round(rows, &events, &mut held).await {
            match outcome {
                Ok(version) => accept(row, version, local),
                Err(why) => refuse(row, &why, local),
            }
        }
        held
    }

    /// Writes a round on one connection, each statement atomic by itself (on SQLite, wrapping
    /// the round in a transaction measured slower: two more statements a round); each row with
    /// its outcome.
    async fn round(
        &self,
        rows: Vec<Row>,
        events: &[(String, i64, String)],
        held: &mut Held,
    ) -> Vec<(Row, Result<i64, A2AError>)> {
        if rows.is_empty() && events.is_empty() {
            return Vec::new();
        }
        let system = match self.dialect {
            Dialect::Sqlite => "sqlite",
            Dialect::Postgres => "postgresql",
        };
        let (new, changed) = rows.iter().fold((0, 0), |(n, c), r| match r.new {
            true => (n + 1, c),
            false => (n, c + 1),
        });
        let merged = self.dialect == Dialect::Postgres && !rows.is_empty();
        let statements = usize::from(!merged && !events.is_empty())
            + usize::from(new > 0)
            + usize::from(changed > 0);
        let span =
            crate::server::telemetry::store_span(system, statements, rows.len(), events.len());
        let started = Instant::now();
        let size = rows.len() + events.len();
        let outcomes = self.round_on(rows, events, held).instrument(span).await;
        crate::server::telemetry::store_round(system, size, started.elapsed());
        outcomes
    }

    /// [`round`](Self::round), in its span, on a connection the writer keeps from round to
    /// round while they succeed: the pool tries a connection each time it hands one out and
    /// each time it is given back (a round trip to the database each, and on SQLite a
    /// hand-over to its thread), which cost as much as the round's own statement.
    async fn round_on(
        &self,
        rows: Vec<Row>,
        events: &[(String, i64, String)],
        held: &mut Held,
    ) -> Vec<(Row, Result<i64, A2AError>)> {
        use std::sync::atomic::Ordering::Relaxed;
        let mut conn = match self.connection(held.take()).await {
            Ok(conn) => conn,
            Err(e) => {
                self.down.store(unreachable(&e), Relaxed);
                return all_refused(rows, &db_error(e));
            }
        };
        let outcomes = self.round_with(&mut conn, rows, events).await;
        // After any refusal or fault the connection goes back to the pool, which tries it.
        if !self.down.load(Relaxed) && outcomes.iter().all(|(_, outcome)| outcome.is_ok()) {
            *held = Some((conn, Instant::now()));
        }
        outcomes
    }

    /// The writer's connection: the one kept from the last round (tried first when it has
    /// been idle a while), else one from the pool.
    async fn connection(&self, held: Held) -> Result<PoolConnection<sqlx::Any>, sqlx::Error> {
        use std::sync::atomic::Ordering::Relaxed;
        if let Some((mut conn, since)) = held
            && (since.elapsed() < IDLE_PING || sqlx::Connection::ping(&mut *conn).await.is_ok())
        {
            return Ok(conn);
        }
        if self.down.load(Relaxed) {
            tokio::time::timeout(RETRY_ACQUIRE, self.pool.acquire())
                .await
                .unwrap_or(Err(sqlx::Error::PoolTimedOut))
        } else {
            self.pool.acquire().await
        }
    }

    /// [`round_on`](Self::round_on), on `conn`.
    async fn round_with(
        &self,
        conn: &mut sqlx::AnyConnection,
        rows: Vec<Row>,
        events: &[(String, i64, String)],
    ) -> Vec<(Row, Result<i64, A2AError>)> {
        use std::sync::atomic::Ordering::Relaxed;
        if self.dialect == Dialect::Sqlite {
            return self.round_sqlite(conn, rows, events).await;
        }
        // On Postgres, the events go into the round's first row statement (one statement
        // fewer, and the events and the rows commit together); else in one of their own,
        // first: a task read at event `n` finds every event after `n` logged.
        let merged = !rows.is_empty();
        if !merged && let Err(e) = self.log(conn, events).await {
            // The database cannot be reached: the rows would wait as long again to learn it.
            if unreachable(&e) {
                self.down.store(true, Relaxed);
                return all_refused(rows, &db_error(e));
            }
        }
        self.down.store(false, Relaxed);
        let (new, changed): (Vec<Row>, Vec<Row>) = rows.into_iter().partition(|r| r.new);
        let none: &[(String, i64, String)] = &[];
        let (with_new, with_changed) = match (merged, new.is_empty()) {
            (false, _) => (none, none),
            (true, false) => (events, none),
            (true, true) => (none, events),
        };
        let mut outcomes = self.insert_all(conn, new, with_new).await;
        outcomes.extend(self.update_all(conn, changed, with_changed).await);
        outcomes
    }

    /// A SQLite round in one call to the database: the events' `INSERT`, the updates'
    /// compare-and-swap and the new rows' `INSERT`, in this order, each statement atomic by
    /// itself (the database's worker thread runs them one after the other: one hand-over and
    /// one wake-up a round instead of one per statement, which bound SQLite's throughput).
    /// Should a statement fail, those after it did not run: they run one by one as on their
    /// own, and each row learns its own outcome.
    async fn round_sqlite(
        &self,
        conn: &mut sqlx::AnyConnection,
        rows: Vec<Row>,
        events: &[(String, i64, String)],
    ) -> Vec<(Row, Result<i64, A2AError>)> {
        use futures::StreamExt as _;
        use std::sync::atomic::Ordering::Relaxed;
        let (new, changed): (Vec<Row>, Vec<Row>) = rows.into_iter().partition(|r| r.new);
        let mut statements = Vec::with_capacity(3);
        let mut sql = String::new();
        for (kind, n, text) in [
            (
                Statement::Log,
                events.len(),
                log_events as fn(usize) -> String,
            ),
            (Statement::Update, changed.len(), |n| update_rows(n, 0)),
            (Statement::Insert, new.len(), |n| insert_rows(n, 0)),
        ] {
            if n > 0 {
                sql.push_str(&text(n));
                sql.push_str(";\n");
                statements.push(kind);
            }
        }
        let query = self.bind(
            self.bind(bind_events(sqlx::query(&sql), events), &changed),
            &new,
        );
        // Each statement ends with its result (`Left`); the updates' written rows come before.
        let (mut ran, mut written, mut failure) = (0, Vec::new(), None);
        {
            // `fetch_many` is deprecated because only SQLite runs several statements in one
            // call (sqlx 0.9 still does); it is the one way to see where each one ends.
            #[allow(deprecated)]
            let mut results = query.fetch_many(&mut *conn);
            while let Some(result) = results.next().await {
                match result {
                    Ok(sqlx::Either::Left(_)) => ran += 1,
                    Ok(sqlx::Either::Right(row)) => written.push(row),
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
            }
        }
        let mut outcomes = Vec::with_capacity(new.len() + changed.len());
        let (mut new, mut changed) = (Some(new), Some(changed));
        // Reached (only an unreachable database, found by the first statement, says otherwise).
        self.down.store(false, Relaxed);
        for (i, statement) in statements.into_iter().enumerate() {
            let failed = if i == ran { failure.take() } else { None };
            match (statement, failed) {
                (Statement::Log, None) if i < ran => {}
                (Statement::Log, failed) => {
                    let failed = failed.unwrap_or(sqlx::Error::WorkerCrashed);
                    tracing::warn!(error = %failed, events = events.len(), "task events were not logged");
                    if unreachable(&failed) {
                        self.down.store(true, Relaxed);
                        let rows = new.take().into_iter().chain(changed.take()).flatten();
                        return all_refused(rows, &db_error(failed));
                    }
                }
                (Statement::Update, None) if i < ran => {
                    let rows = changed.take().unwrap_or_default();
                    outcomes.extend(self.updated(conn, rows, &written).await);
                }
                (Statement::Update, Some(failed)) => {
                    let rows = changed.take().unwrap_or_default();
                    outcomes.extend(all_refused(rows, &db_error(failed)));
                }
                (Statement::Insert, None) if i < ran => {
                    outcomes.extend(inserted(new.take().unwrap_or_default(), Ok(())));
                }
                (Statement::Insert, Some(failed)) => {
                    let rows = new.take().unwrap_or_default();
                    outcomes.extend(self.insert_each(conn, rows, Err(failed)).await);
                }
                // Not run (a statement before it failed): on its own.
                (Statement::Update, None) => {
                    let rows = changed.take().unwrap_or_default();
                    outcomes.extend(self.update_all(conn, rows, &[]).await);
                }
                (Statement::Insert, None) => {
                    let rows = new.take().unwrap_or_default();
                    outcomes.extend(self.insert_all(conn, rows, &[]).await);
                }
            }
        }
        outcomes
    }

    /// Logs `events` in one statement (an event logged already stays as it was), announced on
    /// Postgres by the statement itself. A refusal is said in the log: the events' tasks go
    /// on, and their readers find the stored task.
    async fn log(
        &self,
        conn: &mut sqlx::AnyConnection,
        events: &[(String, i64, String)],
    ) -> Result<(), sqlx::Error> {
        if events.is_empty() {
            return Ok(());
        }
        let insert = log_events(events.len());
        let statement = match self.dialect {
            Dialect::Postgres if self.others.announce() => format!(
                "WITH logged AS ({insert} RETURNING task_id) SELECT pg_notify('{EVENTS}', t.task_id) FROM (SELECT DISTINCT task_id FROM logged) AS t"
            ),
            _ => insert,
        };
        let statement = self.sql(&statement);
        let logged = bind_events(sqlx::query(&statement), events)
            .execute(&mut *conn)
            .await;
        if let Err(e) = &logged {
            tracing::warn!(error = %e, events = events.len(), "task events were not logged");
        }
        logged.map(drop)
    }

    /// Inserts new rows in one statement; should it fail (e.g. one id exists already), one by
    /// one, so that each task learns its own outcome.
    async fn insert_all(
        &self,
        conn: &mut sqlx::AnyConnection,
        rows: Vec<Row>,
        events: &[(String, i64, String)],
    ) -> Vec<(Row, Result<i64, A2AError>)> {
        if rows.is_empty() {
            return Vec::new();
        }
        let outcome = self.insert(conn, &rows, events).await;
        if outcome.is_err() {
            // The events went with the refused statement: on their own.
            let _ = self.log(conn, events).await;
        }
        self.insert_each(conn, rows, outcome).await
    }

    /// The outcomes of inserting `rows` in one statement that ended with `outcome`: should it
    /// have failed (e.g. one id exists already), the rows are inserted one by one, so that
    /// each task learns its own outcome.
    async fn insert_each(
        &self,
        conn: &mut sqlx::AnyConnection,
        rows: Vec<Row>,
        outcome: Result<(), sqlx::Error>,
    ) -> Vec<(Row, Result<i64, A2AError>)> {
        if outcome.is_err() && rows.len() > 1 {
            let mut outcomes = Vec::with_capacity(rows.len());
            for row in rows {
                let outcome = self.insert(conn, std::slice::from_ref(&row), &[]).await;
                outcomes.extend(inserted(vec![row], outcome));
            }
            outcomes
        } else {
            inserted(rows, outcome)
        }
    }

    /// Applies every update in one compare-and-swap statement; those it did not apply were
    /// refused, and their writers are told why.
    async fn update_all(
        &self,
        conn: &mut sqlx::AnyConnection,
        rows: Vec<Row>,
        events: &[(String, i64, String)],
    ) -> Vec<(Row, Result<i64, A2AError>)> {
        if rows.is_empty() {
            return Vec::new();
        }
        match self.cas(conn, &rows, events).await {
            Ok(written) => self.updated(conn, rows, &written).await,
            Err(e) => {
                // The events went with the failed statement: on their own.
                let _ = self.log(conn, events).await;
                all_refused(rows, &db_error(e))
            }
        }
    }

    /// The outcomes of the compare-and-swap of `rows` that wrote `written` (id, new version):
    /// a row it did not write was refused, and its writers are told why.
    async fn updated(
        &self,
        conn: &mut sqlx::AnyConnection,
        rows: Vec<Row>,
        written: &[sqlx::any::AnyRow],
    ) -> Vec<(Row, Result<i64, A2AError>)> {
        let versions: HashMap<String, i64> = written
            .iter()
            .map(|r| (r.get::<String, _>(0), r.get::<i64, _>(1)))
            // The events' own rows (their tasks, to announce) carry no version.
            .filter(|(_, version)| *version >= 0)
            .collect();
        let mut outcomes = Vec::with_capacity(rows.len());
        for row in rows {
            let outcome = match versions.get(&row.task.id) {
                Some(&version) => Ok(version),
                None => Err(self.refusal(conn, &row.task).await),
            };
            outcomes.push((row, outcome));
        }
        outcomes
    }

    /// Inserts `rows` in one statement (atomic by itself: no transaction needed).
    async fn insert(
        &self,
        conn: &mut sqlx::AnyConnection,
        rows: &[Row],
        events: &[(String, i64, String)],
    ) -> Result<(), sqlx::Error> {
        let statement = match self.dialect {
            Dialect::Postgres if self.others.announce() => format!(
                "WITH {}{}, created AS ({INSERT} RETURNING id) SELECT created.id FROM created, pg_notify('{CHANGES}', created.id){}",
                values(rows.len()),
                logged_cte(events.len()),
                announce_logged(events.len(), "")
            ),
            _ => insert_rows(rows.len(), events.len()),
        };
        let statement = self.sql(&statement);
        bind_events(self.bind(sqlx::query(&statement), rows), events)
            .execute(&mut *conn)
            .await?;
        Ok(())
    }

    /// The compare-and-swap of every update in the round, in one statement: a task is written
    /// only if it still has the version its writer last saw and is not finished (or finishes
    /// the same way again). The rows written, with their new versions.
    async fn cas(
        &self,
        conn: &mut sqlx::AnyConnection,
        rows: &[Row],
        events: &[(String, i64, String)],
    ) -> Result<Vec<sqlx::any::AnyRow>, sqlx::Error> {
        let statement = match self.dialect {
            Dialect::Postgres if self.others.announce() => format!(
                "WITH {}{}, changed AS ({UPDATE}) SELECT changed.id, changed.version FROM changed, pg_notify('{CHANGES}', changed.id){}",
                values(rows.len()),
                logged_cte(events.len()),
                announce_logged(events.len(), ", CAST(-1 AS BIGINT)")
            ),
            _ => update_rows(rows.len(), events.len()),
        };
        let statement = self.sql(&statement);
        bind_events(self.bind(sqlx::query(&statement), rows), events)
            .fetch_all(&mut *conn)
            .await
    }

    /// `query` with the values of `rows`, in the order of [`values`].
    fn bind<'q>(
        &'q self,
        mut query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
        rows: &'q [Row],
    ) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
        for row in rows {
            let task = &row.task;
            let terminal = task.status.state.is_terminal();
            query = query
                .bind(&task.id)
                .bind(row.expected)
                .bind(row.steps)
                .bind(&task.context_id)
                .bind(state_name(&task.status.state))
                .bind(task.status.timestamp.map(|t| t.to_rfc3339()))
                .bind(terminal.then(now_millis))
                .bind((!terminal).then_some(self.replica.as_str()))
                .bind(row.body.as_str())
                .bind(row.seq);
        }
        query
    }

    /// Why an update of `task` changed no row.
    async fn refusal(&self, conn: &mut sqlx::AnyConnection, task: &Task) -> A2AError {
        let row = sqlx::query(&self.sql("SELECT state, ended_at FROM a2a_card_tasks WHERE id = ?"))
            .bind(&task.id)
            .fetch_optional(&mut *conn)
            .await;
        match row {
            Err(e) => db_error(e),
            Ok(None) => A2AError::task_not_found(&task.id),
            Ok(Some(row)) => {
                let (state, ended): (String, Option<i64>) = (row.get(0), row.get(1));
                if ended.is_some() && state != state_name(&task.status.state) {
                    let was: TaskState = serde_json::from_value(serde_json::Value::String(state))
                        .unwrap_or(TaskState::Failed);
                    terminal_error(&task.id, &was, &task.status.state)
                } else {
                    A2AError::invalid_request(format!(
                        "task {} was changed by another writer since this one last wrote it; read it again",
                        task.id
                    ))
                }
            }
        }
    }
}

/// The statements of a SQLite round, in their order.
#[derive(Clone, Copy)]
enum Statement {
    Log,
    Update,
    Insert,
}

/// The `INSERT` of new rows from the table `v` ([`values`]).
const INSERT: &str = "INSERT INTO a2a_card_tasks (id, context_id, state, status_at, version, ended_at, owner, body, seq)
    SELECT id, context_id, state, status_at, steps, ended_at, owner, body, seq FROM v";

/// The compare-and-swap of rows from the table `v` ([`values`]): a task is written only if it
/// still has the version its writer last saw and is not finished (or finishes the same way
/// again); the rows written, with their new versions.
const UPDATE: &str = "UPDATE a2a_card_tasks SET context_id = v.context_id, state = v.state,
        status_at = v.status_at, version = a2a_card_tasks.version + v.steps,
        ended_at = COALESCE(a2a_card_tasks.ended_at, v.ended_at), owner = v.owner, body = v.body,
        seq = COALESCE(v.seq, a2a_card_tasks.seq)
    FROM v WHERE a2a_card_tasks.id = v.id
        AND (a2a_card_tasks.ended_at IS NULL OR a2a_card_tasks.state = v.state)
        AND (v.expected IS NULL OR a2a_card_tasks.version = v.expected)
    RETURNING a2a_card_tasks.id, a2a_card_tasks.version";

/// The [`INSERT`] of `n` rows, announcing nothing, with `events` logged by the same statement
/// ([`logged_cte`]: Postgres only; SQLite is given none, its round logs them in a statement of
/// their own). The events' `INSERT` runs though nothing reads its result: a `WITH` item that
/// writes always runs to its end.
fn insert_rows(n: usize, events: usize) -> String {
    format!("WITH {}{} {INSERT}", values(n), logged_cte(events))
}

/// The [`UPDATE`] of `n` rows, as [`insert_rows`] is written.
fn update_rows(n: usize, events: usize) -> String {
    format!("WITH {}{} {UPDATE}", values(n), logged_cte(events))
}

/// On Postgres, `n` events logged by the statement a round's rows are written by: a `WITH`
/// item `logged` (empty when there are none), bound after the rows by [`bind_events`].
fn logged_cte(n: usize) -> String {
    if n == 0 {
        return String::new();
    }
    format!(", logged AS ({} RETURNING task_id)", log_events(n))
}

/// The `INSERT` of `n` events into their tasks' logs (an event logged already stays as it
/// was), bound by [`bind_events`].
fn log_events(n: usize) -> String {
    let rows = vec!["(?, ?, ?)"; n].join(", ");
    format!("INSERT INTO a2a_card_events (task_id, seq, body) VALUES {rows} ON CONFLICT DO NOTHING")
}

/// The tail of the statement's result that announces each task whose log grew (its id, then
/// `more` columns), when [`logged_cte`] logged any.
fn announce_logged(n: usize, more: &str) -> String {
    if n == 0 {
        return String::new();
    }
    format!(
        " UNION ALL SELECT t.task_id{more} FROM (SELECT DISTINCT task_id FROM logged) AS t, pg_notify('{EVENTS}', t.task_id)"
    )
}

/// `query` with `events` bound after what it has.
fn bind_events<'q>(
    mut query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    events: &'q [(String, i64, String)],
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    for (task_id, seq, body) in events {
        query = query.bind(task_id).bind(*seq).bind(body.as_str());
    }
    query
}

/// Whether `e` says the database cannot be reached (rather than that it refused a statement).
fn unreachable(e: &sqlx::Error) -> bool {
    matches!(
        e,
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_)
    )
}

/// The rows of a round as a table `v` for a `WITH` clause: `n` rows of placeholders, bound by
/// [`Db::bind`].
fn values(n: usize) -> String {
    let rows = vec!["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"; n].join(", ");
    format!(
        "v (id, expected, steps, context_id, state, status_at, ended_at, owner, body, seq) AS (VALUES {rows})"
    )
}

/// Every row of `rows` refused, for `why`.
fn all_refused(
    rows: impl IntoIterator<Item = Row>,
    why: &A2AError,
) -> Vec<(Row, Result<i64, A2AError>)> {
    rows.into_iter()
        .map(|row| (row, Err(why.clone())))
        .collect()
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

/// The outcome of inserting `rows`, for each.
fn inserted(rows: Vec<Row>, outcome: Result<(), sqlx::Error>) -> Vec<(Row, Result<i64, A2AError>)> {
    rows.into_iter()
        .map(|row| {
            let outcome = match &outcome {
                Ok(()) => Ok(row.steps),
                Err(sqlx::Error::Database(d)) if d.is_unique_violation() => Err(
                    A2AError::invalid_request(format!("task {} already exists", row.task.id)),
                ),
                Err(e) => Err(db_error(e)),
            };
            (row, outcome)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str) -> Task {
        Task {
            id: id.to_owned(),
            context_id: "c".to_owned(),
            status: a2a::TaskStatus {
                state: TaskState::Working,
                message: None,
                timestamp: None,
            },
            artifacts: None,
            history: None,
            metadata: None,
        }
    }

    fn update(id: &str, awaited: bool) -> (Sent, Option<oneshot::Receiver<Result<i64, A2AError>>>) {
        let (done, answer) = oneshot::channel();
        let sent = Sent::Write(Op::Update {
            task: task(id),
            expected: None,
            seq: None,
            done: awaited.then_some(done),
        });
        (sent, awaited.then_some(answer))
    }

    fn event(id: &str, seq: i64) -> Sent {
        Sent::Write(Op::Event {
            task_id: id.to_owned(),
            seq,
            body: "{}".to_owned(),
        })
    }

    fn tasks(round: &Taken) -> Vec<&str> {
        round.ops.iter().map(Op::task).collect()
    }

    #[test]
    fn a_task_in_a_round_in_the_database_waits_with_its_later_writes_for_the_next_round() {
        let mut queue = Queue::default();
        queue.push([update("a", false).0, event("a", 1)].into_iter());
        let first = queue.take(Instant::now()).expect("a round");
        assert_eq!(tasks(&first), ["a", "a"]);
        queue.push([event("a", 2), update("b", true).0, update("a", true).0].into_iter());
        let second = queue
            .take(Instant::now())
            .expect("a round beside the first");
        assert_eq!(tasks(&second), ["b"], "only the task not in the database");
        assert!(
            queue.take(Instant::now()).is_none(),
            "a's writes wait for its round"
        );
        queue.written(first.tasks, first.first);
        let third = queue
            .take(Instant::now())
            .expect("a's writes, once its round is written");
        assert_eq!(tasks(&third), ["a", "a"]);
        match &third.ops[0] {
            Op::Event { seq, .. } => assert_eq!(*seq, 2, "in the order they came"),
            _ => panic!("the event came first"),
        }
    }

    #[test]
    fn a_flush_is_answered_once_every_write_before_it_is_written() {
        let mut queue = Queue::default();
        queue.push([update("a", false).0].into_iter());
        let first = queue.take(Instant::now()).expect("a round");
        let (done, mut answer) = oneshot::channel();
        queue.push([Sent::Flush(done), update("b", false).0].into_iter());
        let second = queue.take(Instant::now()).expect("b's round");
        queue.answer_flushes();
        assert!(answer.try_recv().is_err(), "a is not written yet");
        // A write after the flush, still in the database, does not hold it back.
        queue.written(first.tasks, first.first);
        queue.answer_flushes();
        assert!(answer.try_recv().is_ok(), "answered once a is written");
        queue.written(second.tasks, second.first);
    }

    #[test]
    fn a_queued_write_lingers_for_its_tasks_next_write_unless_someone_waits_for_it() {
        let mut queue = Queue {
            linger: Duration::from_secs(60),
            ..Queue::default()
        };
        let now = Instant::now();
        queue.push([update("a", false).0, event("a", 1), update("b", false).0].into_iter());
        assert!(queue.take(now).is_none(), "nothing is due yet");
        // A write of a that someone waits for takes a's earlier writes along, folded.
        let (sent, _answer) = update("a", true);
        queue.push([sent].into_iter());
        let round = queue.take(now).expect("a's round");
        assert_eq!(tasks(&round), ["a", "a", "a"], "b lingers on");
        queue.written(round.tasks, round.first);
        // A flush after b makes it due.
        let (done, _flushed) = oneshot::channel();
        queue.push([Sent::Flush(done), update("c", false).0].into_iter());
        let round = queue.take(now).expect("b's round");
        assert_eq!(tasks(&round), ["b"], "c came after the flush");
        queue.written(round.tasks, round.first);
        // And c is due once it has lingered.
        let later = queue.ripens().expect("c waits");
        assert!(queue.take(later - Duration::from_millis(1)).is_none());
        assert_eq!(tasks(&queue.take(later).expect("c's round")), ["c"]);
    }

    #[test]
    fn only_a_write_someone_waits_for_or_a_flush_asks_for_a_round_beside_others() {
        let mut queue = Queue::default();
        queue.push([update("a", false).0].into_iter());
        assert!(!queue.awaited(), "a queued write waits for the next round");
        let (sent, _answer) = update("b", true);
        queue.push([sent].into_iter());
        assert!(queue.awaited());
        let round = queue.take(Instant::now()).expect("a round");
        assert_eq!(tasks(&round), ["a", "b"]);
        assert!(!queue.awaited(), "taken");
        let (done, _answer) = oneshot::channel();
        queue.push([Sent::Flush(done)].into_iter());
        assert!(queue.awaited(), "a flush waits");
    }
}
