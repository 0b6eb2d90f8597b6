//! The SQL of a round, and where it is written: one call per round on SQLite (each statement's
//! end seen), `WITH` statements on Postgres (each row's outcome read back), on the writer's
//! own connection.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::Instrument as _;

use a2a::{A2AError, Task, TaskState};
use sqlx::pool::PoolConnection;
use sqlx::{AnyPool, Row as _};

use super::super::notify::{CHANGES, EVENTS, Others};
use super::round::Row;
use super::{Dialect, db_error, now_millis, sql_for, state_name};
use crate::server::store::Event;
use crate::server::store::memory::terminal_error;

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
pub(super) type Held = Option<(PoolConnection<sqlx::Any>, Instant)>;

/// How long the writer's kept connection may stay unused before the next round tries it first
/// (the pool tries each connection it hands out).
pub(super) const IDLE_PING: Duration = Duration::from_secs(1);

/// How long a round waits for a connection while the database was found unreachable.
pub(super) const RETRY_ACQUIRE: Duration = Duration::from_millis(250);

impl Db {
    pub(super) fn sql<'a>(&self, sql: &'a str) -> std::borrow::Cow<'a, str> {
        sql_for(self.dialect, sql)
    }

    /// Writes a round on one connection, each statement atomic by itself (on SQLite, wrapping
    /// the round in a transaction measured slower: two more statements a round); each row with
    /// its outcome.
    pub(super) async fn round(
        &self,
        rows: Vec<Row>,
        events: &[(String, i64, Arc<Event>)],
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
    pub(super) async fn round_on(
        &self,
        rows: Vec<Row>,
        events: &[(String, i64, Arc<Event>)],
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
    pub(super) async fn connection(
        &self,
        held: Held,
    ) -> Result<PoolConnection<sqlx::Any>, sqlx::Error> {
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
    pub(super) async fn round_with(
        &self,
        conn: &mut sqlx::AnyConnection,
        rows: Vec<Row>,
        events: &[(String, i64, Arc<Event>)],
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
        let none: &[(String, i64, Arc<Event>)] = &[];
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
    pub(super) async fn round_sqlite(
        &self,
        conn: &mut sqlx::AnyConnection,
        rows: Vec<Row>,
        events: &[(String, i64, Arc<Event>)],
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
    pub(super) async fn log(
        &self,
        conn: &mut sqlx::AnyConnection,
        events: &[(String, i64, Arc<Event>)],
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
    pub(super) async fn insert_all(
        &self,
        conn: &mut sqlx::AnyConnection,
        rows: Vec<Row>,
        events: &[(String, i64, Arc<Event>)],
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
    pub(super) async fn insert_each(
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
    pub(super) async fn update_all(
        &self,
        conn: &mut sqlx::AnyConnection,
        rows: Vec<Row>,
        events: &[(String, i64, Arc<Event>)],
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
    pub(super) async fn updated(
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
    pub(super) async fn insert(
        &self,
        conn: &mut sqlx::AnyConnection,
        rows: &[Row],
        events: &[(String, i64, Arc<Event>)],
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
    pub(super) async fn cas(
        &self,
        conn: &mut sqlx::AnyConnection,
        rows: &[Row],
        events: &[(String, i64, Arc<Event>)],
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
    pub(super) fn bind<'q>(
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
    pub(super) async fn refusal(&self, conn: &mut sqlx::AnyConnection, task: &Task) -> A2AError {
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
pub(super) enum Statement {
    Log,
    Update,
    Insert,
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

/// The [`INSERT`] of `n` rows, announcing nothing, with `events` logged by the same statement
/// ([`logged_cte`]: Postgres only; SQLite is given none, its round logs them in a statement of
/// their own). The events' `INSERT` runs though nothing reads its result: a `WITH` item that
/// writes always runs to its end.
pub(super) fn insert_rows(n: usize, events: usize) -> String {
    format!("WITH {}{} {INSERT}", values(n), logged_cte(events))
}

/// The [`UPDATE`] of `n` rows, as [`insert_rows`] is written.
pub(super) fn update_rows(n: usize, events: usize) -> String {
    format!("WITH {}{} {UPDATE}", values(n), logged_cte(events))
}

/// On Postgres, `n` events logged by the statement a round's rows are written by: a `WITH`
/// item `logged` (empty when there are none), bound after the rows by [`bind_events`].
pub(super) fn logged_cte(n: usize) -> String {
    if n == 0 {
        return String::new();
    }
    format!(", logged AS ({} RETURNING task_id)", log_events(n))
}

/// The `INSERT` of `n` events into their tasks' logs (an event logged already stays as it
/// was), bound by [`bind_events`].
pub(super) fn log_events(n: usize) -> String {
    let rows = vec!["(?, ?, ?)"; n].join(", ");
    format!("INSERT INTO a2a_card_events (task_id, seq, body) VALUES {rows} ON CONFLICT DO NOTHING")
}

/// The tail of the statement's result that announces each task whose log grew (its id, then
/// `more` columns), when [`logged_cte`] logged any.
pub(super) fn announce_logged(n: usize, more: &str) -> String {
    if n == 0 {
        return String::new();
    }
    format!(
        " UNION ALL SELECT t.task_id{more} FROM (SELECT DISTINCT task_id FROM logged) AS t, pg_notify('{EVENTS}', t.task_id)"
    )
}

/// `query` with `events` bound after what it has.
pub(super) fn bind_events<'q>(
    mut query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    events: &'q [(String, i64, Arc<Event>)],
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    for (task_id, seq, body) in events {
        query = query.bind(task_id).bind(*seq).bind(body.json());
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

/// The rows of a round as a table `v` for a `WITH` clause: `n` rows of placeholders, bound by
/// [`Db::bind`].
pub(super) fn values(n: usize) -> String {
    let rows = vec!["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"; n].join(", ");
    format!(
        "v (id, expected, steps, context_id, state, status_at, ended_at, owner, body, seq) AS (VALUES {rows})"
    )
}

/// Every row of `rows` refused, for `why`.
pub(super) fn all_refused(
    rows: impl IntoIterator<Item = Row>,
    why: &A2AError,
) -> Vec<(Row, Result<i64, A2AError>)> {
    rows.into_iter()
        .map(|row| (row, Err(why.clone())))
        .collect()
}

/// The outcome of inserting `rows`, for each.
pub(super) fn inserted(
    rows: Vec<Row>,
    outcome: Result<(), sqlx::Error>,
) -> Vec<(Row, Result<i64, A2AError>)> {
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
