//! The write path of [`SqlTasks`](super::SqlTasks): one writer per store commits every write
//! queued since its last commit in one transaction (group commit), folding several writes of
//! one task into one row write.
//!
//! - A **create** and a write that a caller must be able to rely on (a terminal state, a
//!   question to the caller, a task this store did not create) are *awaited*: the call returns
//!   once its transaction committed, so a crash after it cannot lose it.
//! - The **intermediate** writes of a task this store runs (`working`, progress, artifact
//!   chunks) are *queued*: the call returns at once, reads on this replica see the queued task
//!   ([`Local::queued`]), and the row is written with the next commit, usually together with the
//!   task's next write. Should the process die first, the task is failed by recovery (it was
//!   running), as it would be anyway. A queued write that the database refuses (another writer
//!   changed the task) is reported by the task's next write.
//!
//! Each batch costs at most two statements whatever its size, each atomic by itself: one
//! multi-row `INSERT` for the creates, one `UPDATE .. FROM (VALUES ..)` compare-and-swap for
//! the updates, both announced on Postgres by the statements themselves.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use a2a::{A2AError, Task, TaskState};
use sqlx::{AnyPool, Row};
use tokio::sync::{mpsc, oneshot};

use super::{CHANGES, Dialect, db_error, encode, now_millis, sql_for, state_name};
use crate::server::store::memory::terminal_error;

/// The most writes one transaction takes.
const MAX_BATCH: usize = 256;

/// What this replica knows of the tasks it writes.
#[derive(Default)]
pub(super) struct Local {
    tasks: Mutex<HashMap<String, Entry>>,
}

struct Entry {
    /// The version this store last wrote or queued.
    version: i64,
    /// The task as queued and not yet committed, with its version.
    queued: Option<(i64, Task)>,
    /// Why a queued write was refused, for the task's next write.
    refused: Option<A2AError>,
}

impl Local {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The task as this replica queued it, if a write of it is still uncommitted.
    pub(super) fn queued(&self, id: &str) -> Option<Task> {
        self.lock()
            .get(id)
            .and_then(|e| e.queued.as_ref().map(|(_, t)| t.clone()))
    }

    /// Records that `version` of task `id` is committed (and forgets a finished task: no more
    /// writes are expected of this store).
    pub(super) fn committed(&self, id: &str, version: i64, terminal: bool) {
        let mut tasks = self.lock();
        if terminal {
            tasks.remove(id);
            return;
        }
        let entry = tasks.entry(id.to_owned()).or_insert(Entry {
            version,
            queued: None,
            refused: None,
        });
        entry.version = entry.version.max(version);
        if entry.queued.as_ref().is_some_and(|(v, _)| *v <= version) {
            entry.queued = None;
        }
    }

    /// Records that a write of task `id` was refused: its next write reports `why` (unless
    /// the refused one finished the task: no next write is expected).
    fn refused(&self, id: &str, why: A2AError, terminal: bool) {
        let mut tasks = self.lock();
        if terminal {
            tasks.remove(id);
        } else if let Some(entry) = tasks.get_mut(id) {
            entry.queued = None;
            entry.refused = Some(why);
        }
    }
}

/// How a write reaches the writer.
enum Op {
    Create {
        task: Task,
        done: oneshot::Sender<Result<(), A2AError>>,
    },
    Update {
        task: Task,
        /// The version the stored task must have (`None`: whatever it has).
        expected: Option<i64>,
        done: Option<oneshot::Sender<Result<i64, A2AError>>>,
    },
    Flush(oneshot::Sender<()>),
}

/// The writer's handle; the writer stops when the last handle is dropped.
pub(super) struct Writer {
    ops: mpsc::UnboundedSender<Op>,
    local: Arc<Local>,
}

/// What the writer writes to.
pub(super) struct Db {
    pub(super) pool: AnyPool,
    pub(super) dialect: Dialect,
    pub(super) replica: String,
}

fn stopped() -> A2AError {
    A2AError::internal("the task store is shutting down")
}

impl Writer {
    /// Starts the writer of `db`.
    pub(super) fn spawn(db: Db, local: Arc<Local>) -> Writer {
        let (ops, mut rx) = mpsc::unbounded_channel();
        let writer_local = Arc::clone(&local);
        tokio::spawn(async move {
            let mut batch = Vec::new();
            while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
                db.commit(std::mem::take(&mut batch), &writer_local).await;
            }
        });
        Writer { ops, local }
    }

    /// Inserts a new task; returns once committed.
    pub(super) async fn create(&self, task: Task) -> Result<(), A2AError> {
        let (done, answer) = oneshot::channel();
        self.ops
            .send(Op::Create { task, done })
            .map_err(|_| stopped())?;
        answer.await.unwrap_or_else(|_| Err(stopped()))
    }

    /// Writes `task` over the stored one, which must still have version `expected` (`None`:
    /// any); returns the new version once committed.
    pub(super) async fn update(&self, task: Task, expected: Option<i64>) -> Result<i64, A2AError> {
        let (done, answer) = oneshot::channel();
        self.ops
            .send(Op::Update {
                task,
                expected,
                done: Some(done),
            })
            .map_err(|_| stopped())?;
        answer.await.unwrap_or_else(|_| Err(stopped()))
    }

    /// Writes `task` the way its state asks (see the [module docs](self)): queued when it is
    /// an intermediate write of a task this store writes, else awaited. Reports a refused
    /// queued write of the same task first.
    pub(super) async fn write(&self, task: Task) -> Result<i64, A2AError> {
        let queue = matches!(task.status.state, TaskState::Submitted | TaskState::Working);
        let expected = {
            let mut tasks = self.local.lock();
            match tasks.get_mut(&task.id) {
                None => None,
                Some(entry) => {
                    if let Some(why) = entry.refused.take() {
                        return Err(why);
                    }
                    if queue {
                        let expected = entry.version;
                        entry.version += 1;
                        entry.queued = Some((entry.version, task.clone()));
                        let version = entry.version;
                        drop(tasks);
                        self.ops
                            .send(Op::Update {
                                task,
                                expected: Some(expected),
                                done: None,
                            })
                            .map_err(|_| stopped())?;
                        return Ok(version);
                    }
                    Some(entry.version)
                }
            }
        };
        self.update(task, expected).await
    }

    /// Returns once every write queued before the call is committed (or refused).
    pub(super) async fn flush(&self) {
        let (done, answer) = oneshot::channel();
        if self.ops.send(Op::Flush(done)).is_ok() {
            let _ = answer.await;
        }
    }
}

/// The updates of one task in a batch, folded into one row write.
struct Folded {
    task: Task,
    /// The task's JSON, made once per batch (see [`Batch::encode`]).
    body: String,
    expected: Option<i64>,
    steps: i64,
    /// Who waits, and how many writes after theirs the batch holds.
    waiting: Vec<(oneshot::Sender<Result<i64, A2AError>>, i64)>,
}

/// A new task, its JSON, and who waits for it.
type Create = (Task, String, oneshot::Sender<Result<(), A2AError>>);

/// What one batch asks of the database.
#[derive(Default)]
struct Batch {
    creates: Vec<Create>,
    updates: Vec<Folded>,
    flushes: Vec<oneshot::Sender<()>>,
}

impl Batch {
    fn of(ops: Vec<Op>) -> Batch {
        let mut batch = Batch::default();
        let mut index: HashMap<String, usize> = HashMap::new();
        for op in ops {
            match op {
                Op::Create { task, done } => batch.creates.push((task, String::new(), done)),
                Op::Flush(done) => batch.flushes.push(done),
                Op::Update {
                    task,
                    expected,
                    done,
                } => match index.get(&task.id) {
                    Some(&i) => {
                        let folded = &mut batch.updates[i];
                        for (_, after) in &mut folded.waiting {
                            *after += 1;
                        }
                        folded.steps += 1;
                        folded.task = task;
                        folded.waiting.extend(done.map(|d| (d, 0)));
                    }
                    None => {
                        index.insert(task.id.clone(), batch.updates.len());
                        batch.updates.push(Folded {
                            task,
                            body: String::new(),
                            expected,
                            steps: 1,
                            waiting: done.map(|d| (d, 0)).into_iter().collect(),
                        });
                    }
                },
            }
        }
        batch.encode();
        batch
    }

    /// Makes each row's JSON, once for all the writes folded into it; a task that cannot be
    /// made JSON is refused to its callers and left out.
    fn encode(&mut self) {
        for (task, _, done) in std::mem::take(&mut self.creates) {
            match encode(&task) {
                Ok(body) => self.creates.push((task, body, done)),
                Err(why) => {
                    let _ = done.send(Err(why));
                }
            }
        }
        for mut folded in std::mem::take(&mut self.updates) {
            match encode(&folded.task) {
                Ok(body) => {
                    folded.body = body;
                    self.updates.push(folded);
                }
                Err(why) => {
                    for (done, _) in folded.waiting {
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

    /// Writes `ops`, answers their callers and updates `local`.
    async fn commit(&self, ops: Vec<Op>, local: &Local) {
        let Batch {
            creates,
            updates,
            flushes,
        } = Batch::of(ops);
        self.create_all(creates, local).await;
        self.update_all(updates, local).await;
        for done in flushes {
            let _ = done.send(());
        }
    }

    /// Inserts new tasks in one statement; should it fail (e.g. one id exists already), one by
    /// one, so that each caller learns its own outcome.
    async fn create_all(&self, creates: Vec<Create>, local: &Local) {
        if creates.is_empty() {
            return;
        }
        let outcome = self.insert(&creates).await;
        if outcome.is_err() && creates.len() > 1 {
            for create in creates {
                let outcome = self.insert(std::slice::from_ref(&create)).await;
                self.created(vec![create], outcome, local);
            }
        } else {
            self.created(creates, outcome, local);
        }
    }

    fn created(&self, creates: Vec<Create>, outcome: Result<(), sqlx::Error>, local: &Local) {
        for (task, _, done) in creates {
            let answer = match &outcome {
                Ok(()) => {
                    local.committed(&task.id, 1, task.status.state.is_terminal());
                    Ok(())
                }
                Err(sqlx::Error::Database(d)) if d.is_unique_violation() => Err(
                    A2AError::invalid_request(format!("task {} already exists", task.id)),
                ),
                Err(e) => Err(db_error(e)),
            };
            let _ = done.send(answer);
        }
    }

    /// Applies every update in one compare-and-swap statement; those it did not apply were
    /// refused, and their writers are told why.
    async fn update_all(&self, updates: Vec<Folded>, local: &Local) {
        if updates.is_empty() {
            return;
        }
        let versions: HashMap<String, i64> = match self.cas(&updates).await {
            Ok(rows) => rows
                .iter()
                .map(|row| (row.get::<String, _>(0), row.get::<i64, _>(1)))
                .collect(),
            Err(e) => {
                let why = db_error(e);
                for folded in updates {
                    let terminal = folded.task.status.state.is_terminal();
                    local.refused(&folded.task.id, why.clone(), terminal);
                    for (done, _) in folded.waiting {
                        let _ = done.send(Err(why.clone()));
                    }
                }
                return;
            }
        };
        for folded in updates {
            let id = &folded.task.id;
            let terminal = folded.task.status.state.is_terminal();
            match versions.get(id) {
                Some(&version) => {
                    local.committed(id, version, terminal);
                    for (done, after) in folded.waiting {
                        let _ = done.send(Ok(version - after));
                    }
                }
                None => {
                    let why = self.refusal(&folded.task).await;
                    local.refused(id, why.clone(), terminal);
                    for (done, _) in folded.waiting {
                        let _ = done.send(Err(why.clone()));
                    }
                }
            }
        }
    }

    /// Inserts `creates` in one statement (atomic by itself: no transaction needed).
    async fn insert(&self, creates: &[Create]) -> Result<(), sqlx::Error> {
        let rows = vec!["(?, ?, ?, ?, 1, ?, ?, ?)"; creates.len()].join(", ");
        let insert = format!(
            "INSERT INTO a2a_card_tasks (id, context_id, state, status_at, version, ended_at, owner, body) VALUES {rows}"
        );
        let statement = match self.dialect {
            Dialect::Sqlite => insert,
            Dialect::Postgres => format!(
                "WITH created AS ({insert} RETURNING id) SELECT created.id FROM created, pg_notify('{CHANGES}', created.id)"
            ),
        };
        let statement = self.sql(&statement);
        let mut query = sqlx::query(&statement);
        for (task, body, _) in creates {
            let terminal = task.status.state.is_terminal();
            query = query
                .bind(&task.id)
                .bind(&task.context_id)
                .bind(state_name(&task.status.state))
                .bind(task.status.timestamp.map(|t| t.to_rfc3339()))
                .bind(terminal.then(now_millis))
                .bind((!terminal).then_some(self.replica.as_str()))
                .bind(body.as_str());
        }
        query.execute(&self.pool).await?;
        Ok(())
    }

    /// The compare-and-swap of every update in the batch, in one statement: a task is written
    /// only if it still has the version its writer last saw and is not finished (or finishes
    /// the same way again). The rows written, with their new versions.
    async fn cas(&self, updates: &[Folded]) -> Result<Vec<sqlx::any::AnyRow>, sqlx::Error> {
        let rows = vec!["(?, ?, ?, ?, ?, ?, ?, ?, ?)"; updates.len()].join(", ");
        let update = "UPDATE a2a_card_tasks SET context_id = v.context_id, state = v.state,
                status_at = v.status_at, version = a2a_card_tasks.version + v.steps,
                ended_at = COALESCE(a2a_card_tasks.ended_at, v.ended_at), owner = v.owner, body = v.body
            FROM v WHERE a2a_card_tasks.id = v.id
                AND (a2a_card_tasks.ended_at IS NULL OR a2a_card_tasks.state = v.state)
                AND (v.expected IS NULL OR a2a_card_tasks.version = v.expected)
            RETURNING a2a_card_tasks.id, a2a_card_tasks.version";
        let values = format!(
            "v (id, expected, steps, context_id, state, status_at, ended_at, owner, body) AS (VALUES {rows})"
        );
        let statement = match self.dialect {
            Dialect::Sqlite => format!("WITH {values} {update}"),
            Dialect::Postgres => format!(
                "WITH {values}, changed AS ({update}) SELECT changed.id, changed.version FROM changed, pg_notify('{CHANGES}', changed.id)"
            ),
        };
        let statement = self.sql(&statement);
        let mut query = sqlx::query(&statement);
        for folded in updates {
            let task = &folded.task;
            let terminal = task.status.state.is_terminal();
            query = query
                .bind(&task.id)
                .bind(folded.expected)
                .bind(folded.steps)
                .bind(&task.context_id)
                .bind(state_name(&task.status.state))
                .bind(task.status.timestamp.map(|t| t.to_rfc3339()))
                .bind(terminal.then(now_millis))
                .bind((!terminal).then_some(self.replica.as_str()))
                .bind(folded.body.as_str());
        }
        query.fetch_all(&self.pool).await
    }

    /// Why an update of `task` changed no row.
    async fn refusal(&self, task: &Task) -> A2AError {
        let row = sqlx::query(&self.sql("SELECT state, ended_at FROM a2a_card_tasks WHERE id = ?"))
            .bind(&task.id)
            .fetch_optional(&self.pool)
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
