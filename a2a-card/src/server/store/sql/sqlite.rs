//! Tasks in a SQLite file: one process at a time, one file in WAL mode, its rounds written in
//! one call each.

use sqlx::sqlite::SqlitePoolOptions;
use sqlx::{Sqlite, SqliteConnection, SqlitePool, Transaction};

use super::backend::{Backend, Pools};
use super::round::{Log, Row, Written};
use super::statements::{
    INSERT, Params, UPDATE, all_refused, bind_log, inserted, refuse_logged, unreachable, values,
};
use super::{SQLITE_LOG_LIMIT, db_error};
use crate::server::store::StoreError;

impl Backend for Sqlite {
    const SYSTEM: &'static str = "sqlite";
    const SHARED: bool = false;
    const ROUNDS: usize = 1;
    // SQLite locks the whole file on write (see `begin_writing`), not rows.
    const LOCKED_TASK: &'static str =
        "SELECT body, version, ended_at, seq FROM a2a_card_tasks WHERE id = $1";
    const TABLES: &'static str =
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'";
    const NOW_MS: &'static str = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";

    /// Two connections write, the writer's (kept from round to round) and one for the rest
    /// (the lease, recovery, push configs), which wait for each other (the file has one
    /// writer at a time; `busy_timeout`); others read beside them (WAL readers do not wait
    /// for a writer).
    fn rows_affected(done: &sqlx::sqlite::SqliteQueryResult) -> u64 {
        done.rows_affected()
    }

    async fn open(url: &str, shown: &str) -> Result<(SqlitePool, SqlitePool), StoreError> {
        let unavailable = |e: sqlx::Error| StoreError::Unavailable(format!("{shown}: {e}"));
        let pool = connect(url, 2).await.map_err(unavailable)?;
        super::migrations::migrate(&pool).await?;
        // Only once the file is known to be ours: a foreign file stays as it was.
        sqlx::query("PRAGMA journal_mode = WAL")
            .execute(&pool)
            .await
            .map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let reads = connect(url, 4).await.map_err(unavailable)?;
        Ok((pool, reads))
    }

    /// Takes the file's write lock at its start (`BEGIN IMMEDIATE`, waiting as `busy_timeout`
    /// says): a deferred transaction, upgraded to a writer after the writer's connection
    /// committed, would fail at once (its snapshot is stale).
    async fn begin_writing(pool: &SqlitePool) -> Result<Transaction<'static, Sqlite>, sqlx::Error> {
        pool.begin_with("BEGIN IMMEDIATE").await
    }

    const CHECKPOINTS: bool = true;

    /// A passive checkpoint on a reader's connection: it copies the pages the log holds into
    /// the file and waits for the disk (twice, with `synchronous = NORMAL`), while the
    /// writer's connection goes on appending to the log (a checkpoint takes no write lock).
    /// Left to SQLite, the commit that passed 1,000 pages did it, and the requests waiting on
    /// that round waited for the disk: every hundredth blocking request took 20 ms where the
    /// others took 0.4 ms.
    ///
    /// A passive checkpoint never lets the log start over while the writer keeps appending
    /// (SQLite restarts it only at a write that begins with every frame copied and no reader
    /// inside it), so under steady load the log, and the index of it SQLite maps into the
    /// process, grew without end (38 GB in five minutes at full rate). Once a passive
    /// checkpoint leaves more than [`SQLITE_LOG_LIMIT`] of log, a restarting checkpoint
    /// follows at once: it holds the writer off only while it copies what was appended since
    /// the passive one and syncs it (a few milliseconds, at most twice a second at full
    /// rate), and gives up rather than wait longer than [`RESTART_WAIT_MS`] for the writer's
    /// round or a reader (the next tick tries again). The file left behind is cut down to
    /// [`SQLITE_LOG_LIMIT`] at the next commit (`journal_size_limit`); the log of a store
    /// idle for a second is cut to nothing.
    async fn checkpoint(pools: &Pools<Sqlite>, idle: bool) -> Result<(), sqlx::Error> {
        use std::sync::atomic::Ordering::Relaxed;
        if idle {
            // Nothing written for a while: the log can go whole, at no cost to anyone.
            if pools.log_frames.load(Relaxed) > 0 {
                let frames = truncating(pools, "TRUNCATE").await?;
                pools.log_frames.store(frames, Relaxed);
            }
            return Ok(());
        }
        let (_, frames, _): (i64, i64, i64) = sqlx::query_as("PRAGMA wal_checkpoint(PASSIVE)")
            .fetch_one(&pools.reads)
            .await?;
        let frames = u64::try_from(frames).unwrap_or(0);
        let page: u64 = match pools.page_bytes.load(Relaxed) {
            0 => {
                let page: i64 = sqlx::query_scalar("PRAGMA page_size")
                    .fetch_one(&pools.reads)
                    .await?;
                let page = u64::try_from(page).unwrap_or(4096);
                pools.page_bytes.store(page, Relaxed);
                page
            }
            page => page,
        };
        // A frame is a page and its 24-byte header.
        let frames = if frames * (page + 24) > SQLITE_LOG_LIMIT {
            truncating(pools, "RESTART").await?
        } else {
            frames
        };
        pools.log_frames.store(frames, Relaxed);
        Ok(())
    }

    /// A round in one call to the database: the events' `INSERT`, the journal entries'
    /// `INSERT`, the updates' compare-and-swap and the new rows' `INSERT`, in this order, each
    /// statement atomic by itself (the database's worker thread runs them one after the
    /// other: one hand-over and one wake-up a round instead of one per statement, which bound
    /// SQLite's throughput). Should a statement fail, those after it did not run: they run one
    /// by one as on their own, and each row learns its own outcome; but should the log fail
    /// (a full disk), the rows of its tasks are refused with it, not written past it.
    async fn round(
        pools: &Pools<Sqlite>,
        conn: &mut SqliteConnection,
        rows: Vec<Row>,
        log: &Log,
    ) -> Written {
        use futures::StreamExt as _;
        use std::sync::atomic::Ordering::Relaxed;
        let (new, changed): (Vec<Row>, Vec<Row>) = rows.into_iter().partition(|r| r.new);
        let mut params = Params::default();
        let mut statements = Vec::with_capacity(4);
        let mut sql = String::new();
        for (kind, n, text) in [
            (
                Statement::Log,
                log.events.len(),
                log_events as fn(usize, &mut Params) -> String,
            ),
            (Statement::Journal, log.journal.len(), journal_entries),
            (Statement::Update, changed.len(), update_rows),
            (Statement::Insert, new.len(), insert_rows),
        ] {
            if n > 0 {
                sql.push_str(&text(n, &mut params));
                sql.push_str(";\n");
                statements.push(kind);
            }
        }
        let query = pools.bind(
            pools.bind(bind_log(sqlx::query(&sql), log, &pools.replica), &changed),
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
        let mut unlogged = None;
        let (mut new, mut changed) = (Some(new), Some(changed));
        // Reached (only an unreachable database, found by the first statement, says otherwise).
        pools.down.store(false, Relaxed);
        let none = Log::default();
        for (i, statement) in statements.into_iter().enumerate() {
            let failed = if i == ran { failure.take() } else { None };
            match (statement, failed) {
                (Statement::Log | Statement::Journal, None) if i < ran => {}
                // Not run: the log's statement before it failed, and was dealt with.
                (Statement::Log | Statement::Journal, None) if unlogged.is_some() => {}
                (Statement::Log | Statement::Journal, failed) => {
                    let failed = failed.unwrap_or(sqlx::Error::WorkerCrashed);
                    tracing::warn!(error = %failed, events = log.events.len(), entries = log.journal.len(), "task events were not logged");
                    let why = db_error(&failed);
                    if unreachable(&failed) {
                        pools.down.store(true, Relaxed);
                        let rows = new.take().into_iter().chain(changed.take()).flatten();
                        return Written::refused(rows.collect(), log, &why);
                    }
                    // A row written past its task's lost log would say more than the log.
                    for rows in [&mut new, &mut changed].into_iter().flatten() {
                        outcomes.extend(refuse_logged(rows, log, &why));
                    }
                    unlogged = Some(why);
                }
                (Statement::Update, None) if i < ran => {
                    let rows = changed.take().unwrap_or_default();
                    match Pools::<Sqlite>::versions(&written) {
                        Ok(written) => outcomes.extend(pools.updated(conn, rows, &written).await),
                        Err(e) => outcomes.extend(all_refused(rows, &db_error(e))),
                    }
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
                    outcomes.extend(pools.insert_each(conn, rows, Err(failed)).await);
                }
                // Not run (a statement before it failed): on its own.
                (Statement::Update, None) => {
                    let rows = changed.take().unwrap_or_default();
                    outcomes.extend(pools.update_all(conn, rows, &none).await.rows);
                }
                (Statement::Insert, None) => {
                    let rows = new.take().unwrap_or_default();
                    outcomes.extend(pools.insert_all(conn, rows, &none).await.rows);
                }
            }
        }
        Written {
            rows: outcomes,
            unlogged,
            fenced: Default::default(),
        }
    }

    /// SQLite writes a round's log in a statement of its own ([`round`](Self::round)): `log`
    /// is empty, and nothing is announced (no other process listens).
    fn insert_sql(rows: usize, log: &Log, _announce: bool) -> String {
        debug_assert!(log.is_empty(), "SQLite logs in a statement of its own");
        insert_rows(rows, &mut Params::default())
    }

    /// As [`insert_sql`](Self::insert_sql).
    fn update_sql(rows: usize, log: &Log, _announce: bool) -> String {
        debug_assert!(log.is_empty(), "SQLite logs in a statement of its own");
        update_rows(rows, &mut Params::default())
    }

    /// The events' `INSERT`, then the journal entries' (one call runs both).
    fn log_sql(log: &Log, _announce: bool) -> String {
        let mut params = Params::default();
        let mut sql = Vec::with_capacity(2);
        if !log.events.is_empty() {
            sql.push(log_events(log.events.len(), &mut params));
        }
        if !log.journal.is_empty() {
            sql.push(journal_entries(log.journal.len(), &mut params));
        }
        sql.join(";\n")
    }
}

/// How long a restarting checkpoint waits for the writer's round to commit, and then for the
/// readers still inside the log to finish, before it gives up until the next tick: the most
/// it may hold the writer off beyond its own copying.
const RESTART_WAIT_MS: u32 = 20;

/// A checkpoint in `mode` (`RESTART` or `TRUNCATE`) on a writing connection, which takes the
/// file's write lock: waiting at most [`RESTART_WAIT_MS`] for it and for the readers. The
/// frames left in the log (none once it started over).
async fn truncating(pools: &Pools<Sqlite>, mode: &str) -> Result<u64, sqlx::Error> {
    let mut conn = pools.pool.acquire().await?;
    sqlx::query(&format!("PRAGMA busy_timeout = {RESTART_WAIT_MS}"))
        .execute(&mut *conn)
        .await?;
    let done: Result<(i64, i64, i64), sqlx::Error> =
        sqlx::query_as(&format!("PRAGMA wal_checkpoint({mode})"))
            .fetch_one(&mut *conn)
            .await;
    // The connection goes back to the pool with the timeout every other write waits with.
    sqlx::query(BUSY_TIMEOUT).execute(&mut *conn).await?;
    let (busy, frames, _) = done?;
    Ok(if busy == 0 {
        0
    } else {
        u64::try_from(frames).unwrap_or(0)
    })
}

/// How long a statement waits for the file's write lock (another connection's write).
const BUSY_TIMEOUT: &str = "PRAGMA busy_timeout = 5000";

/// The statements of a SQLite round, in their order.
#[derive(Clone, Copy)]
enum Statement {
    Log,
    Journal,
    Update,
    Insert,
}

/// The [`INSERT`] of `n` new rows.
fn insert_rows(n: usize, params: &mut Params) -> String {
    format!("WITH {} {INSERT}", values(n, params))
}

/// The [`UPDATE`] of `n` rows.
fn update_rows(n: usize, params: &mut Params) -> String {
    format!("WITH {} {UPDATE}", values(n, params))
}

/// A pool of up to `connections` connections to the file at `url`.
async fn connect(url: &str, connections: u32) -> Result<SqlitePool, sqlx::Error> {
    SqlitePoolOptions::new()
        .max_connections(connections)
        .acquire_timeout(super::deadline::DEADLINE)
        .after_connect(|conn, _| {
            Box::pin(async move {
                sqlx::query(BUSY_TIMEOUT).execute(&mut *conn).await?;
                // With WAL: a commit survives the process being killed; only a power loss
                // may take the last ones.
                sqlx::query("PRAGMA synchronous = NORMAL")
                    .execute(&mut *conn)
                    .await?;
                // No commit moves the log into the file (and waits for the disk): the store's
                // checkpoints do, beside the writes (`Backend::checkpoint`).
                sqlx::query("PRAGMA wal_autocheckpoint = 0")
                    .execute(&mut *conn)
                    .await?;
                // A log that started over is cut back to this size at the next commit (left
                // alone, its file keeps the size it once had).
                sqlx::query(&format!("PRAGMA journal_size_limit = {SQLITE_LOG_LIMIT}"))
                    .execute(&mut *conn)
                    .await?;
                Ok(())
            })
        })
        .connect(url)
        .await
}

/// The sqlx URL of a SQLite file, created when missing.
pub(crate) fn sqlite_url(path: &std::path::Path) -> String {
    format!("sqlite://{}?mode=rwc", path.display())
}

/// The `INSERT` of `n` events into their tasks' logs (an event logged already stays as it
/// was), bound by [`bind_log`](super::statements::bind_log).
fn log_events(n: usize, params: &mut Params) -> String {
    format!(
        "INSERT INTO a2a_card_events (task_id, seq, body) VALUES {} ON CONFLICT DO NOTHING",
        params.rows(n, 3)
    )
}

/// The `INSERT` of `n` journal entries (an entry written already stays as it was, with its
/// time), bound after the events by [`bind_log`](super::statements::bind_log).
fn journal_entries(n: usize, params: &mut Params) -> String {
    format!(
        "INSERT INTO a2a_card_journal (task_id, n, body, at) VALUES {} ON CONFLICT DO NOTHING",
        params.rows(n, 4)
    )
}
