//! Tasks in Postgres, shared by several replicas: each write announced to the others
//! (`NOTIFY`, while another listens), a round's log written by its first row statement (a
//! data-modifying `WITH`, so that they commit together), rounds on several connections at
//! once.

use std::sync::Arc;

use sqlx::postgres::PgPoolOptions;
use sqlx::{PgConnection, PgPool, Postgres, Transaction};

use super::backend::{Backend, Pools};
use super::db_error;
use super::round::{Log, Row, Written};
use super::statements::{
    INSERT, Params, UPDATE, journal_entries, log_events, refuse_logged, unreachable, values,
};
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
            return Written {
                rows: Vec::new(),
                unlogged: logged.err().map(db_error),
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
        written
    }

    /// `WITH` the rows and the log, and when `announce`, each new task announced.
    fn insert_sql(rows: usize, log: &Log, announce: bool) -> String {
        let mut params = Params::default();
        let values = values(rows, &mut params);
        let logged = logged(log, &mut params);
        match announce {
            true => format!(
                "WITH {values}{logged}, created AS ({INSERT} RETURNING id) SELECT created.id FROM created, pg_notify('{CHANGES}', created.id){}",
                announce_logged(log, "")
            ),
            false => format!("WITH {values}{logged} {INSERT}"),
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
                "WITH {values}{logged}, changed AS ({UPDATE}) SELECT changed.id, changed.version FROM changed, pg_notify('{CHANGES}', changed.id){}",
                announce_logged(log, ", CAST(NULL AS BIGINT)")
            ),
            false => format!("WITH {values}{logged} {UPDATE}"),
        }
    }

    /// The log's `INSERT`s as `WITH` items, each task whose log grew announced when
    /// `announce`.
    fn log_sql(log: &Log, announce: bool) -> String {
        let logged = logged(log, &mut Params::default());
        let logged = logged.trim_start_matches(", ");
        if announce && !log.events.is_empty() {
            format!(
                "WITH {logged} SELECT pg_notify('{EVENTS}', t.task_id) FROM (SELECT DISTINCT task_id FROM logged) AS t"
            )
        } else {
            // A `WITH` item that writes runs to its end, whatever reads its result.
            format!("WITH {logged} SELECT 1")
        }
    }
}

/// The log written by the statement a round's rows are written by: `WITH` items `logged`
/// (the events) and `journaled` (the journal entries), each when there are any, bound after
/// the rows by [`bind_log`](super::statements::bind_log). An item that writes always runs to
/// its end, though nothing reads its result.
fn logged(log: &Log, params: &mut Params) -> String {
    let mut items = String::new();
    if !log.events.is_empty() {
        items.push_str(&format!(
            ", logged AS ({} RETURNING task_id)",
            log_events(log.events.len(), params)
        ));
    }
    if !log.journal.is_empty() {
        items.push_str(&format!(
            ", journaled AS ({})",
            journal_entries(log.journal.len(), params)
        ));
    }
    items
}

/// The tail of the statement's result that announces each task whose log grew (its id, then
/// `more` columns), when [`logged`] logged events.
fn announce_logged(log: &Log, more: &str) -> String {
    if log.events.is_empty() {
        return String::new();
    }
    format!(
        " UNION ALL SELECT t.task_id{more} FROM (SELECT DISTINCT task_id FROM logged) AS t, pg_notify('{EVENTS}', t.task_id)"
    )
}
