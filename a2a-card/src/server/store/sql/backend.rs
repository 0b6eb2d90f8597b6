//! The databases a SQL store runs on, each with sqlx's own types (`Sqlite`, `Postgres`): what
//! each does its own way ([`Backend`], implemented in `sqlite.rs` and `postgres.rs`), and
//! where a store's statements run ([`Pools`], whose statements are written once for both, in
//! `database.rs` and `statements.rs`).
//!
//! The statements both databases read alike are written once, their parameters numbered
//! (`$1`, `$2`, ..): Postgres's syntax, which SQLite reads too (sqlx binds `$N` to the N-th
//! argument on both). What one database says otherwise (a transaction that writes, a locked
//! read, notifications, the round's statements) is its [`Backend`]'s.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::Instant;

use sqlx::pool::PoolConnection;
use sqlx::{Pool, Transaction};

use super::round::{Log, Row, Written};
use crate::server::store::notify::Others;
use crate::server::store::{ChangeFeed, StoreError};

/// A database a SQL store runs on: what it does its own way. Implemented for sqlx's
/// [`Sqlite`](sqlx::Sqlite) and [`Postgres`](sqlx::Postgres).
pub(super) trait Backend: sqlx::Database {
    /// The database's name in telemetry (OpenTelemetry's `db.system`).
    const SYSTEM: &'static str;

    /// Whether several processes share the database at once (Postgres): they count requests
    /// together and hear each other's writes. SQLite: one process at a time.
    const SHARED: bool;

    /// How many rounds the writer may have in the database at once: SQLite writes one at a
    /// time (a second would wait for the first's lock); Postgres commits rounds on several
    /// connections at once, so that a write arriving while a round is in the database starts
    /// the next at once instead of waiting for it.
    const ROUNDS: usize;

    /// Task `$1`'s row (`body, version, ended_at, seq`), read in a transaction that then
    /// writes it, locked where the database locks rows.
    const LOCKED_TASK: &'static str;

    /// The names of the database's tables (its schema's, on Postgres).
    const TABLES: &'static str;

    /// The database's clock, in milliseconds since the Unix epoch, as an SQL expression: the
    /// one clock of the leases, which every replica reads alike whatever its own says.
    const NOW_MS: &'static str;

    /// How many rows a statement wrote.
    fn rows_affected(done: &Self::QueryResult) -> u64;

    /// Connects to the database at `url` (shown as `shown` in errors) and brings its schema up
    /// to date: the pool writes go to, and the pool reads go to.
    fn open(
        url: &str,
        shown: &str,
    ) -> impl Future<Output = Result<(Pool<Self>, Pool<Self>), StoreError>> + Send;

    /// A transaction that writes after it reads.
    fn begin_writing(
        pool: &Pool<Self>,
    ) -> impl Future<Output = Result<Transaction<'static, Self>, sqlx::Error>> + Send;

    /// Holds the schema, for the rest of the transaction on `conn`, against the other
    /// processes that open the database at the same time (by default nothing: one process at
    /// a time opens it).
    fn lock_schema(
        conn: &mut Self::Connection,
    ) -> impl Future<Output = Result<(), sqlx::Error>> + Send {
        let _ = conn;
        async { Ok(()) }
    }

    /// Tells the processes that listen on `channel` the `payload` (by default nothing: no
    /// other process listens).
    fn notify(
        conn: &mut Self::Connection,
        channel: &'static str,
        payload: &str,
    ) -> impl Future<Output = Result<(), sqlx::Error>> + Send {
        let _ = (conn, channel, payload);
        async { Ok(()) }
    }

    /// Listens to what the processes on the database at `url` tell each other, for as long
    /// as the process runs: the [`Change`]s, on the returned feed (`None`, by default: no
    /// other process writes to the database).
    fn listen(
        url: &str,
        replica: &str,
        others: Arc<Others>,
        reads: Pool<Self>,
    ) -> impl Future<Output = Option<ChangeFeed>> + Send {
        let _ = (url, replica, others, reads);
        async { None }
    }

    /// Whether the database's log of writes is moved into the database by this store, off
    /// the writer's path ([`checkpoint`](Self::checkpoint)): SQLite's WAL, whose automatic
    /// checkpoint would otherwise run (and wait for the disk) in the commit of whichever round
    /// passed its size. By default the database does it itself.
    const CHECKPOINTS: bool = false;

    /// Moves into the database what was appended to its log of writes since the last time,
    /// without holding up the writer (see [`CHECKPOINTS`](Self::CHECKPOINTS)), and keeps the
    /// log within its bound; `idle` once nothing was written for a while (the store is
    /// idle: what is left of the log can go).
    fn checkpoint(
        pools: &Pools<Self>,
        idle: bool,
    ) -> impl Future<Output = Result<(), sqlx::Error>> + Send {
        let _ = (pools, idle);
        async { Ok(()) }
    }

    /// Whether a round's log is fenced by the claims on its tasks (a database several
    /// replicas share): an event or a journal entry of a task this replica runs
    /// ([`Log::fenced`]) is written only while the task's row is still this replica's and not
    /// ended, checked by the statement that writes it, and those refused are said
    /// ([`fenced`](Self::fenced)). A replica stalled past its lease, whose task another took
    /// over meanwhile, would otherwise log into the log of the run that holds the task (their
    /// numbers meet, and the first written wins) before it learns it lost the task. SQLite:
    /// one process at a time, no one to fence out.
    const FENCES: bool = false;

    /// The tasks whose log items a round's statement refused, read from its result `rows`
    /// (see [`FENCES`](Self::FENCES)).
    fn fenced(rows: &[Self::Row]) -> std::collections::HashSet<String> {
        let _ = rows;
        std::collections::HashSet::new()
    }

    /// Writes a round on `conn`: `rows` and `log`, each row with its outcome.
    fn round(
        pools: &Pools<Self>,
        conn: &mut Self::Connection,
        rows: Vec<Row>,
        log: &Log,
    ) -> impl Future<Output = Written> + Send;

    /// The `INSERT` of `rows` new rows, with `log` logged by the same statement (where the
    /// database can), announced when `announce`.
    fn insert_sql(rows: usize, log: &Log, announce: bool) -> String;

    /// The compare-and-swap of `rows` rows, as [`insert_sql`](Self::insert_sql) is written:
    /// its result the rows written (id, new version).
    fn update_sql(rows: usize, log: &Log, announce: bool) -> String;

    /// The `INSERT` of `log` on its own, announced when `announce`.
    fn log_sql(log: &Log, announce: bool) -> String;
}

/// Where the statements of a store on backend `B` run.
pub(super) struct Pools<B: Backend> {
    /// Where writes go.
    pub(super) pool: Pool<B>,
    /// Where reads go (SQLite: other connections than the writer's).
    pub(super) reads: Pool<B>,
    /// This replica's id.
    pub(super) replica: String,
    /// Whether a round announces what it wrote (Postgres `NOTIFY`): only while another
    /// replica may listen.
    pub(super) others: Arc<Others>,
    /// Whether the last round found the database unreachable: the next waits less for a
    /// connection, so that the writes queued meanwhile learn it quickly (and the first that
    /// reaches it clears this).
    pub(super) down: AtomicBool,
    /// The connections the writer keeps between rounds (one per round in the database at
    /// most), each with since when it is unused.
    pub(super) kept: std::sync::Mutex<Vec<(PoolConnection<B>, Instant)>>,
    /// How many times this replica wrote (the writer's rounds, the lease's renewals), and
    /// how many it had when the last [checkpoint](Backend::checkpoint) began: a checkpoint
    /// with nothing new to move is not run.
    pub(super) writes: AtomicU64,
    pub(super) checkpointed: AtomicU64,
    /// The frames the database's log held after the last checkpoint, and the size of a page
    /// (0 until read): what keeps the log within its bound (SQLite's WAL).
    #[cfg(feature = "sqlite")]
    pub(super) log_frames: AtomicU64,
    #[cfg(feature = "sqlite")]
    pub(super) page_bytes: AtomicU64,
    /// The checkpoints in a row that found nothing written since the one before.
    pub(super) quiet: std::sync::atomic::AtomicU32,
}

impl<B: Backend> Pools<B> {
    /// Connects replica `replica` to the database at `url` (shown as `shown` in errors), its
    /// schema brought up to date.
    pub(super) async fn open(
        url: &str,
        shown: &str,
        replica: String,
        others: Arc<Others>,
    ) -> Result<Pools<B>, StoreError> {
        let (pool, reads) = B::open(url, shown).await?;
        Ok(Pools {
            pool,
            reads,
            replica,
            others,
            down: AtomicBool::new(false),
            kept: Default::default(),
            writes: AtomicU64::new(0),
            checkpointed: AtomicU64::new(0),
            #[cfg(feature = "sqlite")]
            log_frames: AtomicU64::new(0),
            #[cfg(feature = "sqlite")]
            page_bytes: AtomicU64::new(0),
            quiet: Default::default(),
        })
    }
}
