//! Tasks in Postgres, shared by several replicas: each write announced to the others
//! (`NOTIFY`, while another listens), a round's log written by its first row statement (a
//! data-modifying `WITH`, so that they commit together), rounds on several connections at
//! once.

use std::collections::HashSet;
use std::sync::Arc;

use sqlx::Row as _;
use sqlx::postgres::{PgPoolOptions, PgRow};
use sqlx::{PgConnection, PgPool, Postgres, Transaction};

use super::backend::{Backend, Pools};
use super::db_error;
use super::round::{Log, Row, Written};
use super::statements::{INSERT, Params, UPDATE, refuse_logged, unreachable, values};
use crate::server::store::notify::{CHANGES, EVENTS, Others};
use crate::server::store::{ChangeFeed, StoreError};

impl Backend for Postgres {
    const SYSTEM: &'static str = "postgresql";
    const SHARED: bool = true;
    const ROUNDS: usize = 3;
    const LOCKED_TASK: &'static str =
        "SELECT body, version, ended_at, seq FROM a2a_card_tasks WHERE id = $1 FOR UPDATE";
    const TABLES: &'static str = "SELECT table_name::TEXT FROM information_schema.tables WHERE table_schema = current_schema()";
    const NOW_MS: &'static str = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";

    /// One pool for reads and writes.
    fn rows_affected(done: &sqlx::postgres::PgQueryResult) -> u64 {
        done.rows_affected()
    }

    async fn open(url: &str, shown: &str) -> Result<(PgPool, PgPool), StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(super::deadline::DEADLINE)
            .connect(url)
            .await
            .map_err(|e| StoreError::Unavailable(format!("{shown}: {e}")))?;
        super::migrations::migrate(&pool).await?;
        Ok((pool.clone(), pool))
    }

    async fn begin_writing(pool: &PgPool) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
        pool.begin().await
    }

    /// Replicas starting together check the schema one at a time.
    async fn lock_schema(conn: &mut PgConnection) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT pg_advisory_xact_lock(727274101)")
            .execute(conn)
            .await
            .map(drop)
    }

    async fn notify(
        conn: &mut PgConnection,
        channel: &'static str,
        payload: &str,
    ) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(channel)
            .bind(payload)
            .execute(conn)
            .await
            .map(drop)
    }

    async fn listen(
        url: &str,
        replica: &str,
        others: Arc<Others>,
        reads: PgPool,
    ) -> Option<ChangeFeed> {
        crate::server::store::notify::listen(url, replica, others, reads).await
    }

    /// The events and journal entries go into the round's first row statement (one statement
    /// fewer, and the log and the rows commit together); else in one of their own, first: a
    /// task read at event `n` finds every event after `n` logged.
    async fn round(
        pools: &Pools<Postgres>,
        conn: &mut PgConnection,
        rows: Vec<Row>,
        log: &Log,
    ) -> Written {
        use std::sync::atomic::Ordering::Relaxed;
        if rows.is_empty() {
            let logged = pools.log(conn, log).await;
            pools
                .down
                .store(logged.as_ref().is_err_and(unreachable), Relaxed);
            return match logged {
                Ok(fenced) => Written {
                    fenced,
                    ..Written::default()
                },
                Err(e) => Written {
                    unlogged: Some(db_error(e)),
                    ..Written::default()
                },
            };
        }
        pools.down.store(false, Relaxed);
        let (new, mut changed): (Vec<Row>, Vec<Row>) = rows.into_iter().partition(|r| r.new);
        let none = Log::default();
        let (with_new, with_changed) = match new.is_empty() {
            false => (log, &none),
            true => (&none, log),
        };
        let mut written = pools.insert_all(conn, new, with_new).await;
        // The log failed with the inserts: the updates of its tasks are not written past it.
        if let Some(why) = &written.unlogged {
            written.rows.extend(refuse_logged(&mut changed, log, why));
        }
        let updated = pools.update_all(conn, changed, with_changed).await;
        written.rows.extend(updated.rows);
        written.unlogged = written.unlogged.or(updated.unlogged);
        written.fenced.extend(updated.fenced);
        written
    }

    /// `WITH` the rows and the log, and when `announce`, each new task announced; the result
    /// ends with the tasks whose log items the fence refused ([`fenced_rows`]).
    fn insert_sql(rows: usize, log: &Log, announce: bool) -> String {
        let mut params = Params::default();
        let values = values(rows, &mut params);
        let logged = logged(log, &mut params);
        match (announce, log.is_empty()) {
            (true, _) => format!(
                "WITH {values}{logged}, created AS ({INSERT} RETURNING id) SELECT created.id, {NO_VERSION}, FALSE FROM created, pg_notify('{CHANGES}', created.id){}{}",
                announce_logged(log),
                fenced_rows(log, " UNION ALL "),
            ),
            (false, true) => format!("WITH {values} {INSERT}"),
            (false, false) => format!(
                "WITH {values}{logged}, created AS ({INSERT}) {}",
                fenced_rows(log, "")
            ),
        }
    }

    /// As [`insert_sql`](Self::insert_sql), each changed task announced; the announcements of
    /// the logged tasks carry no version.
    fn update_sql(rows: usize, log: &Log, announce: bool) -> String {
        let mut params = Params::default();
        let values = values(rows, &mut params);
        let logged = logged(log, &mut params);
        match announce {
            true => format!(
                "WITH {values}{logged}, changed AS ({UPDATE}) SELECT changed.id, changed.version, FALSE FROM changed, pg_notify('{CHANGES}', changed.id){}{}",
                announce_logged(log),
                fenced_rows(log, " UNION ALL "),
            ),
            false => format!(
                "WITH {values}{logged}, changed AS ({UPDATE}) SELECT changed.id, changed.version, FALSE FROM changed{}",
                fenced_rows(log, " UNION ALL "),
            ),
        }
    }

    /// The log's `INSERT`s as `WITH` items, each task whose log grew announced when
    /// `announce`.
    fn log_sql(log: &Log, announce: bool) -> String {
        let logged = logged(log, &mut Params::default());
        let logged = logged.trim_start_matches(", ");
        if announce && !log.events.is_empty() {
            format!(
                "WITH {logged} SELECT t.task_id, {NO_VERSION}, FALSE FROM (SELECT DISTINCT task_id FROM logged) AS t, pg_notify('{EVENTS}', t.task_id){}",
                fenced_rows(log, " UNION ALL ")
            )
        } else {
            // A `WITH` item that writes runs to its end, whatever reads its result.
            format!("WITH {logged} {}", fenced_rows(log, ""))
        }
    }

    const FENCES: bool = true;

    /// The rows whose third column is true ([`fenced_rows`]).
    fn fenced(rows: &[PgRow]) -> HashSet<String> {
        rows.iter()
            .filter(|row| row.len() == 3 && row.try_get::<bool, _>(2).unwrap_or(false))
            .filter_map(|row| row.try_get::<String, _>(0).ok())
            .collect()
    }
}

/// A version column that holds none.
const NO_VERSION: &str = "CAST(NULL AS BIGINT)";

/// The log written by the statement a round's rows are written by: its events (`ev`) and its
/// journal entries (`jn`) as tables, and the `WITH` items that insert them, `logged` and
/// `journaled`, each when there are any, bound after the rows by
/// [`bind_log`](super::statements::bind_log). An item that writes always runs to its end,
/// though nothing reads its result. An item whose fence is not `NULL` (a task this replica
/// runs, [`Log::fenced`]) is inserted only while no row of its task says it is ended or
/// another's ([`open`]); [`fenced_rows`] says which tasks' items were not.
fn logged(log: &Log, params: &mut Params) -> String {
    let mut items = String::new();
    if !log.events.is_empty() {
        items.push_str(&format!(
            ", ev (task_id, seq, body, fence) AS (VALUES {}), logged AS (INSERT INTO a2a_card_events (task_id, seq, body) SELECT task_id, seq, body FROM ev WHERE {} ON CONFLICT DO NOTHING RETURNING task_id)",
            params.rows(log.events.len(), 4),
            open("ev")
        ));
    }
    if !log.journal.is_empty() {
        items.push_str(&format!(
            ", jn (task_id, n, body, at, fence) AS (VALUES {}), journaled AS (INSERT INTO a2a_card_journal (task_id, n, body, at) SELECT task_id, n, body, at FROM jn WHERE {} ON CONFLICT DO NOTHING)",
            params.rows(log.journal.len(), 5),
            open("jn")
        ));
    }
    items
}

/// Whether the log item in table `item` may be written: it is not fenced, or its task's row is
/// not written yet or is still the fence's (this replica's) and not ended. Read in the
/// statement's snapshot: the claim of another replica that committed before it is seen, one
/// that commits after it finds the item logged (and moves the version on, refusing the run's
/// next row write).
fn open(item: &str) -> String {
    format!(
        "({item}.fence IS NULL OR NOT EXISTS (SELECT 1 FROM a2a_card_tasks t WHERE t.id = {item}.task_id AND (t.ended_at IS NOT NULL OR t.owner IS NULL OR t.owner <> {item}.fence)))"
    )
}

/// A `SELECT` of the tasks whose log items [`open`] refused, each `(id, NULL, TRUE)`, after
/// `joined` (a `UNION ALL`, or nothing when it is the statement's whole result, the log then
/// never empty); nothing when the log is empty.
fn fenced_rows(log: &Log, joined: &str) -> String {
    let mut tables = Vec::new();
    if !log.events.is_empty() {
        tables.push("SELECT task_id, fence FROM ev");
    }
    if !log.journal.is_empty() {
        tables.push("SELECT task_id, fence FROM jn");
    }
    if tables.is_empty() {
        return String::new();
    }
    format!(
        "{joined}SELECT DISTINCT f.task_id, {NO_VERSION}, TRUE FROM ({}) AS f WHERE NOT {}",
        tables.join(" UNION ALL "),
        open("f")
    )
}

/// The tail of the statement's result that announces each task whose log grew (its id, no
/// version, not fenced), when [`logged`] logged events.
fn announce_logged(log: &Log) -> String {
    if log.events.is_empty() {
        return String::new();
    }
    format!(
        " UNION ALL SELECT t.task_id, {NO_VERSION}, FALSE FROM (SELECT DISTINCT task_id FROM logged) AS t, pg_notify('{EVENTS}', t.task_id)"
    )
}
