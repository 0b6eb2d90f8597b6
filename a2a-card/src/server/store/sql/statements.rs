//! The SQL of a round, and where it is written: on the writer's own connection, each
//! database's way ([`Backend::round`]: one call per round on SQLite, `WITH` statements on
//! Postgres), with the steps both share here (the inserts, the compare-and-swap, each row's
//! outcome), and the statements both read alike.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::Instrument as _;

use a2a::{A2AError, Task, TaskState};
use sqlx::pool::PoolConnection;
use sqlx::query::Query;
use sqlx::{ColumnIndex, Decode, Encode, Executor, IntoArguments, Row as _, Type};

use super::backend::{Backend, Pools};
use super::round::{Log, Row, Written};
use super::{db_error, now_millis, state_name};
use crate::server::store::Event;
use crate::server::store::memory::terminal_error;

/// How long the writer's kept connection may stay unused before the next round tries it first
/// (the pool tries each connection it hands out).
const IDLE_PING: Duration = Duration::from_secs(1);

/// How long a round waits for a connection while the database was found unreachable.
const RETRY_ACQUIRE: Duration = Duration::from_millis(250);

/// A row's outcome: the version written, or why not.
pub(super) type RowOutcome = (Row, Result<i64, A2AError>);

impl<B: Backend> Pools<B>
where
    // What sqlx's generic code asks of a database, as `database.rs` says.
    for<'c> &'c mut B::Connection: Executor<'c, Database = B>,
    for<'q> B::Arguments<'q>: IntoArguments<'q, B>,
    for<'q> String: Encode<'q, B> + Decode<'q, B> + Type<B>,
    for<'q> &'q str: Encode<'q, B> + Type<B>,
    for<'q> i64: Encode<'q, B> + Decode<'q, B> + Type<B>,
    for<'q> Option<String>: Encode<'q, B>,
    for<'q> Option<i64>: Encode<'q, B>,
    usize: ColumnIndex<B::Row>,
{
    /// Writes a round on one connection, each statement atomic by itself (on SQLite, wrapping
    /// the round in a transaction measured slower: two more statements a round); each row with
    /// its outcome, in the round's span.
    pub(super) async fn round_in_span(&self, rows: Vec<Row>, log: &Log) -> Written {
        if rows.is_empty() && log.is_empty() {
            return Written::default();
        }
        let (new, changed) = rows.iter().fold((0, 0), |(n, c), r| match r.new {
            true => (n + 1, c),
            false => (n, c + 1),
        });
        // Postgres logs with the round's first row statement; SQLite in one of its own.
        let merged = B::SHARED && !rows.is_empty();
        let statements = usize::from(!merged && !log.events.is_empty())
            + usize::from(!merged && !log.journal.is_empty())
            + usize::from(new > 0)
            + usize::from(changed > 0);
        let logged = log.events.len() + log.journal.len();
        let span = crate::server::telemetry::store_span(B::SYSTEM, statements, rows.len(), logged);
        let started = Instant::now();
        let size = rows.len() + logged;
        let written = self.round_on(rows, log).instrument(span).await;
        crate::server::telemetry::store_round(B::SYSTEM, size, started.elapsed());
        written
    }

    /// A round on a connection the writer keeps from round to round while they succeed: the
    /// pool tries a connection each time it hands one out and each time it is given back (a
    /// round trip to the database each, and on SQLite a hand-over to its thread), which cost
    /// as much as the round's own statement.
    async fn round_on(&self, rows: Vec<Row>, log: &Log) -> Written {
        use std::sync::atomic::Ordering::Relaxed;
        let held = self.kept.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut conn = match self.connection(held).await {
            Ok(conn) => conn,
            Err(e) => {
                self.down.store(unreachable(&e), Relaxed);
                return Written::refused(rows, log, &db_error(e));
            }
        };
        let written = B::round(self, &mut conn, rows, log).await;
        // After any refusal or fault the connection goes back to the pool, which tries it.
        if !self.down.load(Relaxed)
            && written.unlogged.is_none()
            && written.rows.iter().all(|(_, outcome)| outcome.is_ok())
        {
            let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
            kept.push((conn, Instant::now()));
        }
        written
    }

    /// The writer's connection: the one kept from an earlier round (tried first when it has
    /// been idle a while), else one from the pool.
    async fn connection(
        &self,
        held: Option<(PoolConnection<B>, Instant)>,
    ) -> Result<PoolConnection<B>, sqlx::Error> {
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

    /// Logs `log` in one statement (an entry logged already stays as it was), announced on
    /// Postgres by the statement itself; the tasks whose items the fence refused
    /// ([`Written::fenced`]). A refusal is said in the log, and returned: the round's writer
    /// stops writing the log's tasks (see [`Written`]).
    pub(super) async fn log(
        &self,
        conn: &mut B::Connection,
        log: &Log,
    ) -> Result<HashSet<String>, sqlx::Error> {
        if log.is_empty() {
            return Ok(HashSet::new());
        }
        let statement = B::log_sql(log, self.others.announce());
        let logged = bind_log(sqlx::query(&statement), log, &self.replica)
            .fetch_all(&mut *conn)
            .await;
        if let Err(e) = &logged {
            tracing::warn!(error = %e, events = log.events.len(), entries = log.journal.len(), "task events were not logged");
        }
        logged.map(|rows| B::fenced(&rows))
    }

    /// Inserts new rows in one statement (with `log`, where the database writes it with
    /// them); should it fail (e.g. one id exists already), one by one, so that each task
    /// learns its own outcome.
    pub(super) async fn insert_all(
        &self,
        conn: &mut B::Connection,
        mut rows: Vec<Row>,
        log: &Log,
    ) -> Written {
        if rows.is_empty() {
            return Written::default();
        }
        let (outcome, mut fenced) = match self.insert(conn, &rows, log).await {
            Ok(fenced) => (Ok(()), fenced),
            Err(e) => (Err(e), HashSet::new()),
        };
        if outcome.is_err() {
            match self.log(conn, log).await {
                Ok(alone) => fenced = alone,
                Err(e) => {
                    // The log went with the refused statement, and failed on its own too: the
                    // rows of its tasks are not written past it, the others one by one.
                    let why = db_error(e);
                    let mut outcomes = refuse_logged(&mut rows, log, &why);
                    // The statement may have failed for a row taken out: each of the others
                    // alone.
                    outcomes.extend(match outcomes.is_empty() {
                        true => self.insert_each(conn, rows, outcome).await,
                        false => self.insert_one_by_one(conn, rows).await,
                    });
                    return Written {
                        rows: outcomes,
                        unlogged: Some(why),
                        fenced: HashSet::new(),
                    };
                }
            }
        }
        Written {
            rows: self.insert_each(conn, rows, outcome).await,
            unlogged: None,
            fenced,
        }
    }

    /// The outcomes of inserting `rows` in one statement that ended with `outcome`: should it
    /// have failed (e.g. one id exists already), the rows are inserted one by one, so that
    /// each task learns its own outcome.
    pub(super) async fn insert_each(
        &self,
        conn: &mut B::Connection,
        rows: Vec<Row>,
        outcome: Result<(), sqlx::Error>,
    ) -> Vec<RowOutcome> {
        if outcome.is_err() && rows.len() > 1 {
            self.insert_one_by_one(conn, rows).await
        } else {
            inserted(rows, outcome)
        }
    }

    /// Inserts each of `rows` in a statement of its own, each with its outcome.
    async fn insert_one_by_one(&self, conn: &mut B::Connection, rows: Vec<Row>) -> Vec<RowOutcome> {
        let mut outcomes = Vec::with_capacity(rows.len());
        for row in rows {
            let outcome = self
                .insert(conn, std::slice::from_ref(&row), &Log::default())
                .await;
            outcomes.extend(inserted(vec![row], outcome.map(drop)));
        }
        outcomes
    }

    /// Applies every update in one compare-and-swap statement (with `log`, as
    /// [`insert_all`](Self::insert_all)); those it did not apply were refused, and their
    /// writers are told why.
    pub(super) async fn update_all(
        &self,
        conn: &mut B::Connection,
        rows: Vec<Row>,
        log: &Log,
    ) -> Written {
        if rows.is_empty() {
            return Written::default();
        }
        let statement = B::update_sql(rows.len(), log, self.others.announce());
        let written = bind_log(
            self.bind(sqlx::query(&statement), &rows),
            log,
            &self.replica,
        )
        .fetch_all(&mut *conn)
        .await;
        let written =
            written.and_then(|written| Ok((Self::versions(&written)?, B::fenced(&written))));
        match written {
            Ok((written, fenced)) => Written {
                rows: self.updated(conn, rows, &written).await,
                unlogged: None,
                fenced,
            },
            Err(e) => {
                // The log went with the failed statement: on its own.
                let (unlogged, fenced) = match self.log(conn, log).await {
                    Ok(fenced) => (None, fenced),
                    Err(e) => (Some(db_error(e)), HashSet::new()),
                };
                Written {
                    rows: all_refused(rows, &db_error(e)),
                    unlogged,
                    fenced,
                }
            }
        }
    }

    /// The rows a compare-and-swap wrote, `written` (id, new version), by id. The logged
    /// tasks' own rows, which announce them, carry no version.
    pub(super) fn versions(written: &[B::Row]) -> Result<HashMap<String, i64>, sqlx::Error> {
        let mut versions = HashMap::with_capacity(written.len());
        for row in written {
            let (id, version): (String, Option<i64>) = (row.try_get(0)?, row.try_get(1)?);
            if let Some(version) = version {
                versions.insert(id, version);
            }
        }
        Ok(versions)
    }

    /// The outcomes of the compare-and-swap of `rows` that wrote `written` (id to new
    /// version): a row it did not write was refused, and its writers are told why.
    pub(super) async fn updated(
        &self,
        conn: &mut B::Connection,
        rows: Vec<Row>,
        written: &HashMap<String, i64>,
    ) -> Vec<RowOutcome> {
        let mut outcomes = Vec::with_capacity(rows.len());
        for row in rows {
            let outcome = match written.get(&row.task.id) {
                Some(&version) => Ok(version),
                None => Err(self.refusal(conn, &row.task).await),
            };
            outcomes.push((row, outcome));
        }
        outcomes
    }

    /// Inserts `rows` in one statement (atomic by itself: no transaction needed), with `log`
    /// where the database writes it with them; the tasks whose items the fence refused
    /// ([`Written::fenced`]).
    async fn insert(
        &self,
        conn: &mut B::Connection,
        rows: &[Row],
        log: &Log,
    ) -> Result<HashSet<String>, sqlx::Error> {
        let statement = B::insert_sql(rows.len(), log, self.others.announce());
        let written = bind_log(self.bind(sqlx::query(&statement), rows), log, &self.replica)
            .fetch_all(&mut *conn)
            .await?;
        Ok(B::fenced(&written))
    }

    /// `query` with the values of `rows`, in the order of [`values`].
    pub(super) fn bind<'q>(
        &'q self,
        mut query: Query<'q, B, B::Arguments<'q>>,
        rows: &'q [Row],
    ) -> Query<'q, B, B::Arguments<'q>> {
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
                .bind((!terminal).then(|| self.replica.clone()))
                .bind(row.body.as_str())
                .bind(row.seq);
        }
        query
    }

    /// Why an update of `task` changed no row.
    async fn refusal(&self, conn: &mut B::Connection, task: &Task) -> A2AError {
        let row: Result<Option<(String, Option<i64>)>, _> =
            sqlx::query_as("SELECT state, ended_at FROM a2a_card_tasks WHERE id = $1")
                .bind(&task.id)
                .fetch_optional(&mut *conn)
                .await;
        match row {
            Err(e) => db_error(e),
            Ok(None) => A2AError::task_not_found(&task.id),
            Ok(Some((state, ended))) => {
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

    /// The events of task `id` after event `seq` that its log holds (`on`: the pool or
    /// transaction to read with), in order.
    pub(super) async fn tail_on<'e, E>(
        &self,
        on: E,
        id: &str,
        seq: i64,
    ) -> Result<Vec<(u64, Arc<Event>)>, A2AError>
    where
        E: Executor<'e, Database = B>,
    {
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "SELECT seq, body FROM a2a_card_events WHERE task_id = $1 AND seq > $2 ORDER BY seq",
        )
        .bind(id)
        .bind(seq)
        .fetch_all(on)
        .await
        .map_err(db_error)?;
        let mut events = Vec::with_capacity(rows.len());
        for (n, body) in rows {
            let event = serde_json::from_str(&body).map_err(|e| {
                A2AError::internal(format!("event {n} of task {id} cannot be read: {e}"))
            })?;
            let n = u64::try_from(n).map_err(|_| {
                A2AError::internal(format!("task {id}'s log holds an event numbered {n}"))
            })?;
            // Its JSON, as logged, serves whoever writes it on.
            events.push((n, Arc::new(Event::with_json(event, body))));
        }
        Ok(events)
    }
}

/// Numbers a statement's parameters as they are written, `$1`, `$2`, .. (read alike by both
/// databases), in the order they are bound.
#[derive(Default)]
pub(super) struct Params(usize);

impl Params {
    /// `n` rows of `columns` parameters each: `($1, $2), ($3, $4)`.
    pub(super) fn rows(&mut self, n: usize, columns: usize) -> String {
        let mut out = String::with_capacity(n * columns * 5);
        for row in 0..n {
            if row > 0 {
                out.push_str(", ");
            }
            out.push('(');
            for column in 0..columns {
                if column > 0 {
                    out.push_str(", ");
                }
                self.0 += 1;
                out.push('$');
                out.push_str(&self.0.to_string());
            }
            out.push(')');
        }
        out
    }
}

/// The `INSERT` of new rows from the table `v` ([`values`]).
pub(super) const INSERT: &str = "INSERT INTO a2a_card_tasks (id, context_id, state, status_at, version, ended_at, owner, body, seq)
    SELECT id, context_id, state, status_at, steps, ended_at, owner, body, seq FROM v";

/// The compare-and-swap of rows from the table `v` ([`values`]): a task is written only if it
/// still has the version its writer last saw and is not finished (or finishes the same way
/// again); the rows written, with their new versions.
pub(super) const UPDATE: &str =
    "UPDATE a2a_card_tasks SET context_id = v.context_id, state = v.state,
        status_at = v.status_at, version = a2a_card_tasks.version + v.steps,
        ended_at = COALESCE(a2a_card_tasks.ended_at, v.ended_at), owner = v.owner, body = v.body,
        seq = COALESCE(v.seq, a2a_card_tasks.seq)
    FROM v WHERE a2a_card_tasks.id = v.id
        AND (a2a_card_tasks.ended_at IS NULL OR a2a_card_tasks.state = v.state)
        AND (v.expected IS NULL OR a2a_card_tasks.version = v.expected)
    RETURNING a2a_card_tasks.id, a2a_card_tasks.version";

/// The rows of a round as a table `v` for a `WITH` clause: `n` rows of parameters, bound by
/// [`Pools::bind`].
pub(super) fn values(n: usize, params: &mut Params) -> String {
    format!(
        "v (id, expected, steps, context_id, state, status_at, ended_at, owner, body, seq) AS (VALUES {})",
        params.rows(n, 10)
    )
}

/// `query` with `log` bound after what it has: its events, then its journal entries (each
/// with the time it is written); where the database [fences](Backend::FENCES) the log, each
/// item then with its fence: this replica for the tasks it runs ([`Log::fenced`]), else
/// `NULL`.
pub(super) fn bind_log<'q, B: Backend>(
    mut query: Query<'q, B, B::Arguments<'q>>,
    log: &'q Log,
    replica: &'q str,
) -> Query<'q, B, B::Arguments<'q>>
where
    for<'a> &'a str: Encode<'a, B> + Type<B>,
    for<'a> Option<String>: Encode<'a, B> + Type<B>,
    for<'a> String: Encode<'a, B> + Type<B>,
    for<'a> i64: Encode<'a, B> + Type<B>,
{
    let fence = |task: &str| log.fenced.contains(task).then(|| replica.to_owned());
    for (task_id, seq, body) in &log.events {
        query = query.bind(task_id).bind(*seq).bind(body.json());
        if B::FENCES {
            query = query.bind(fence(task_id));
        }
    }
    let at = super::now_millis();
    for (task_id, n, entry) in &log.journal {
        query = query.bind(task_id).bind(*n).bind(entry).bind(at);
        if B::FENCES {
            query = query.bind(fence(task_id));
        }
    }
    query
}

/// Whether `e` says the database cannot be reached (rather than that it refused a statement).
pub(super) fn unreachable(e: &sqlx::Error) -> bool {
    matches!(
        e,
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_)
    )
}

/// Every row of `rows` refused, for `why`.
pub(super) fn all_refused(rows: impl IntoIterator<Item = Row>, why: &A2AError) -> Vec<RowOutcome> {
    rows.into_iter()
        .map(|row| (row, Err(why.clone())))
        .collect()
}

/// Takes out of `rows` those of the tasks whose events or journal entries are in `log`, which
/// was not written (`why`): each refused, not written past its task's log.
pub(super) fn refuse_logged(rows: &mut Vec<Row>, log: &Log, why: &A2AError) -> Vec<RowOutcome> {
    let tasks = log.tasks();
    let (lost, kept): (Vec<Row>, Vec<Row>) = std::mem::take(rows)
        .into_iter()
        .partition(|r| tasks.contains(r.task.id.as_str()));
    *rows = kept;
    all_refused(lost, why)
}

/// The outcome of inserting `rows`, for each.
pub(super) fn inserted(rows: Vec<Row>, outcome: Result<(), sqlx::Error>) -> Vec<RowOutcome> {
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
