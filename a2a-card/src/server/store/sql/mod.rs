//! Tasks in a SQL database, on sqlx: a SQLite file (feature `sqlite`) or Postgres (feature
//! `postgres`), one implementation for both.

mod migrations;
mod push_configs;
mod round;
mod statements;
mod task_store;
mod writer;

use std::borrow::Cow;
use std::sync::{Arc, Weak};
use std::time::Duration;

use a2a::{A2AError, Task, TaskState};
use async_trait::async_trait;
use sqlx::AnyPool;
use sqlx::any::AnyPoolOptions;
use sqlx::{Any, Row, Transaction};

use super::notify::{ANSWERS, CHANGES, GONE, Others, REPLICAS};
use super::{Retention, StoreError};
use migrations::migrate;
pub use push_configs::SqlPushConfigs;

/// How long a replica that stopped renewing its lease still owns its running tasks.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);

/// Which SQL database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

/// A task store in a SQL database: a SQLite file (one file, WAL) or Postgres, with its schema
/// versioned and migrated at open.
///
/// - **Concurrency.** Each update is a compare-and-swap on the task's version: the version this
///   store last wrote must still be the stored one, so two writers (two replicas) never
///   silently overwrite each other; the loser gets an error. A terminal state is final.
///   `begin_cancel` checks and cancels in one transaction.
/// - **Replicas and crashes.** Each open store is a replica with a lease it renews every
///   third of [`DEFAULT_LEASE`]; the running tasks it writes are its own. When a replica's
///   lease runs out (its process died), the replicas still alive fail its running tasks, with
///   a status message that says why ([`INTERRUPTED`](super::INTERRUPTED)): no task stays
///   `working` forever. A replica that stops (a server's drain:
///   [`Store::release`](super::Store::release)) takes itself out of the table of replicas,
///   and on Postgres says so (`NOTIFY`): the others take its tasks over at once instead of
///   once its lease runs out.
/// - **Notifications** (Postgres). A server's store announces its writes (`NOTIFY`) only
///   while another replica is live: a replica says so when it opens, and each reads the
///   table of replicas at every lease renewal. A reader of the log that waits for a
///   notification reads the log again after 5 s all the same.
/// - **Retention.** Terminal tasks go as the [`Retention`] says, checked at each lease renewal
///   (so the database may hold one renewal period's worth more).
///
/// ```no_run
/// # async fn run() -> Result<(), a2a_card::server::store::StoreError> {
/// use a2a_card::server::store::{Retention, SqlTasks};
/// let store = SqlTasks::sqlite("tasks.db", Retention::default()).await?;
/// # drop(store);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct SqlTasks {
    inner: Arc<Shared>,
}

struct Shared {
    /// Where writes go.
    pool: AnyPool,
    /// Where reads go (SQLite: other connections than the writer's).
    reads: AnyPool,
    dialect: Dialect,
    retention: Retention,
    lease: Duration,
    /// This replica's id.
    replica: String,
    /// The tasks this replica writes, as far as it knows them.
    local: Arc<writer::Local>,
    /// Whether new tasks are queued (a server [settles](super::Store::settle) them before it
    /// answers) or written before `create` returns.
    queue_creates: bool,
    /// Where the tasks recovery fails are told, for a server to post them to their webhooks
    /// (only a server's store tells, and the server takes them: see [`SqlTasks::recovered`]).
    recovered: tokio::sync::mpsc::UnboundedSender<Task>,
    recovered_rx: std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<Task>>>,
    /// Where the durable skills' tasks recovery takes over are told, for the server to run
    /// again (see [`Store::resumed`](super::Store::resumed)).
    resumed: tokio::sync::mpsc::UnboundedSender<Task>,
    resumed_rx: std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<Task>>>,
    /// Where writes go (group commit; see [`writer`]).
    writer: writer::Writer,
    /// The connection URL (for Postgres notifications).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    url: String,
    /// Whether another replica may listen to this one's writes (see [`Others`]).
    others: Arc<Others>,
    /// Whether this replica listens (a server's store): only then is `others` kept.
    listens: std::sync::atomic::AtomicBool,
    /// The replicas' changes, heard (a server's store on Postgres).
    feed: std::sync::OnceLock<tokio::sync::broadcast::Sender<super::Change>>,
    /// Whether this replica gave up its lease ([`Store::release`](super::Store::release)):
    /// it is not renewed again.
    released: std::sync::atomic::AtomicBool,
    /// Held while the lease is renewed, and by the release: a renewal under way does not put
    /// back the row the release takes out.
    renewing: tokio::sync::Mutex<()>,
    /// Whether the last lease renewal failed (the database did not answer).
    unreachable: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for SqlTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlTasks")
            .field("dialect", &self.inner.dialect)
            .field("retention", &self.inner.retention)
            .field("replica", &self.inner.replica)
            .finish_non_exhaustive()
    }
}

fn db_error(e: impl std::fmt::Display) -> A2AError {
    // The cause goes to the log; the caller learns only that the store failed.
    tracing::error!(error = %e, "task store error");
    A2AError::internal("the task store is unavailable")
}

fn encode(task: &Task) -> Result<String, A2AError> {
    serde_json::to_string(task)
        .map_err(|e| A2AError::internal(format!("a task could not be stored: {e}")))
}

fn decode(body: &str) -> Result<Task, A2AError> {
    serde_json::from_str(body)
        .map_err(|e| A2AError::internal(format!("a stored task could not be read: {e}")))
}

fn state_name(state: &TaskState) -> String {
    serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{state:?}"))
}

fn now_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl SqlTasks {
    /// Opens (or creates) the SQLite database at `path`.
    #[cfg(feature = "sqlite")]
    pub async fn sqlite(
        path: impl AsRef<std::path::Path>,
        retention: Retention,
    ) -> Result<SqlTasks, StoreError> {
        SqlTasks::open(
            &sqlite_url(path.as_ref()),
            Dialect::Sqlite,
            retention,
            DEFAULT_LEASE,
            false,
        )
        .await
    }

    /// Connects to the Postgres database at `url` (`postgres://user:pass@host:port/db`, or a
    /// unix socket with `?host=/path`).
    #[cfg(feature = "postgres")]
    pub async fn postgres(url: &str, retention: Retention) -> Result<SqlTasks, StoreError> {
        SqlTasks::open(url, Dialect::Postgres, retention, DEFAULT_LEASE, false).await
    }

    /// Opens the database at `url` with this lease: how long a replica that stopped renewing
    /// still owns its running tasks. `queue_creates`: new tasks are queued for the writer's
    /// next round instead of written before `create` returns, for a server that
    /// [settles](super::Store::settle) a task before it tells a caller of it.
    pub(crate) async fn open(
        url: &str,
        dialect: Dialect,
        retention: Retention,
        lease: Duration,
        queue_creates: bool,
    ) -> Result<SqlTasks, StoreError> {
        sqlx::any::install_default_drivers();
        let shown = redact(url);
        // SQLite: two connections write, the writer's (kept from round to round) and one for
        // the rest (the lease, recovery, push configs), which wait for each other (the file
        // has one writer at a time; `busy_timeout`); others read beside them (WAL readers do
        // not wait for a writer). Postgres: one pool for both.
        let pool = connect(url, dialect, if dialect == Dialect::Sqlite { 2 } else { 8 })
            .await
            .map_err(|e| StoreError::Unavailable(format!("{shown}: {e}")))?;
        migrate(&pool, dialect).await?;
        if dialect == Dialect::Sqlite {
            // Only once the file is known to be ours: a foreign file stays as it was.
            sqlx::query("PRAGMA journal_mode = WAL")
                .execute(&pool)
                .await
                .map_err(|e| StoreError::Unavailable(e.to_string()))?;
        }
        let reads = match dialect {
            Dialect::Sqlite => connect(url, dialect, 4)
                .await
                .map_err(|e| StoreError::Unavailable(format!("{shown}: {e}")))?,
            Dialect::Postgres => pool.clone(),
        };
        let replica = a2a::new_task_id();
        let local = Arc::new(writer::Local::default());
        let others = Arc::new(Others {
            announce: true.into(),
            heard: 0.into(),
            gone: Default::default(),
        });
        let (recovered, recovered_rx) = tokio::sync::mpsc::unbounded_channel();
        let (resumed, resumed_rx) = tokio::sync::mpsc::unbounded_channel();
        let store = SqlTasks {
            inner: Arc::new(Shared {
                dialect,
                retention,
                lease,
                replica: replica.clone(),
                writer: writer::Writer::spawn(
                    statements::Db {
                        pool: pool.clone(),
                        dialect,
                        replica,
                        down: Default::default(),
                        others: Arc::clone(&others),
                    },
                    Arc::clone(&local),
                ),
                local,
                queue_creates,
                recovered,
                recovered_rx: std::sync::Mutex::new(Some(recovered_rx)),
                resumed,
                resumed_rx: std::sync::Mutex::new(Some(resumed_rx)),
                url: url.to_owned(),
                pool,
                reads,
                others,
                listens: Default::default(),
                feed: Default::default(),
                released: Default::default(),
                renewing: Default::default(),
                unreachable: Default::default(),
            }),
        };
        store
            .inner
            .renew()
            .await
            .map_err(|e| StoreError::Unavailable(e.message))?;
        if dialect == Dialect::Postgres {
            // Heard by the replicas that listen, which announce their writes from now on:
            // before this one serves, so before any of its readers waits for one.
            sqlx::query(&format!("SELECT pg_notify('{REPLICAS}', $1)"))
                .bind(&store.inner.replica)
                .execute(&store.inner.pool)
                .await
                .map_err(|e| StoreError::Unavailable(e.to_string()))?;
        }
        spawn_lease(Arc::downgrade(&store.inner));
        // A server's store follows the other replicas (Postgres: `LISTEN`).
        if queue_creates {
            store.listen().await;
        }
        Ok(store)
    }

    /// Fails the running tasks of replicas whose lease ran out (their process died): no
    /// handler runs them any more. The number failed.
    pub async fn recover(&self) -> Result<usize, StoreError> {
        self.inner
            .recover()
            .await
            .map_err(|e| StoreError::Unavailable(e.message))
    }

    /// This store's replica id.
    pub fn replica(&self) -> &str {
        &self.inner.replica
    }

    /// The push-notification configs, in the same database.
    pub fn push_configs(&self) -> SqlPushConfigs {
        SqlPushConfigs {
            inner: Arc::clone(&self.inner),
        }
    }

    /// Listens to what the replicas on the database tell each other (Postgres only:
    /// `LISTEN`), for [`Store::changes`](super::Store::changes).
    async fn listen(&self) {
        #[cfg(feature = "postgres")]
        if self.inner.dialect == Dialect::Postgres {
            use std::sync::atomic::Ordering::Relaxed;
            let inner = &self.inner;
            let Some(feed) = super::notify::listen(
                &inner.url,
                &inner.replica,
                Arc::clone(&inner.others),
                inner.reads.clone(),
            )
            .await
            else {
                return;
            };
            let _ = inner.feed.set(feed);
            // Listening now: a replica that opens from here on is heard, one already open is
            // in the table.
            inner.listens.store(true, Relaxed);
            if let Err(e) = inner.count_others().await {
                tracing::warn!(error = %e.message, "the other replicas could not be counted");
            }
        }
    }
}

#[async_trait]
impl super::Store for SqlTasks {
    fn tasks(&self) -> Arc<dyn a2a_server::TaskStore> {
        Arc::new(self.clone())
    }

    fn push_configs(&self) -> Option<Arc<dyn a2a_server::PushConfigStore>> {
        Some(Arc::new(SqlTasks::push_configs(self)))
    }

    fn events(&self) -> Option<Arc<dyn super::EventLog>> {
        Some(Arc::new(self.clone()))
    }

    /// A server's store on Postgres: what every replica announces. SQLite: none (one
    /// process at a time).
    fn changes(&self) -> Option<tokio::sync::broadcast::Sender<super::Change>> {
        self.inner.feed.get().cloned()
    }

    async fn forward(&self, task_id: &str, message: &a2a::Message) -> Result<bool, A2AError> {
        if self.inner.feed.get().is_none() {
            return Ok(false);
        }
        let mut payload = super::notify::answer_payload(task_id, message);
        // Postgres carries a notification's payload up to 8000 bytes: a larger answer is kept
        // in the store, and the notification names it.
        if payload.len() > super::notify::CARRIED {
            let id = a2a::new_task_id();
            let body = serde_json::to_string(message).map_err(|e| {
                A2AError::internal(format!("the answer could not be forwarded: {e}"))
            })?;
            sqlx::query(
                "INSERT INTO a2a_card_answers (id, task_id, body, sent_at) VALUES ($1, $2, $3, $4)",
            )
            .bind(&id)
            .bind(task_id)
            .bind(body)
            .bind(now_millis())
            .execute(&self.inner.pool)
            .await
            .map_err(db_error)?;
            payload = super::notify::kept_payload(task_id, &id);
        }
        sqlx::query(&format!("SELECT pg_notify('{ANSWERS}', $1)"))
            .bind(payload)
            .execute(&self.inner.pool)
            .await
            .map_err(db_error)?;
        Ok(true)
    }

    async fn settle(&self, task_id: &str) -> Result<(), A2AError> {
        self.inner.writer.settle(task_id).await
    }

    /// Postgres: counted for every replica, one row per key and window. SQLite: `None` (one
    /// process at a time counts its own).
    async fn hit(&self, key: &str, start_ms: i64, window_ms: i64) -> Result<Option<u64>, A2AError> {
        let s = &self.inner;
        if s.dialect != Dialect::Postgres {
            return Ok(None);
        }
        let hits: i64 = sqlx::query_scalar(
            "INSERT INTO a2a_card_hits (key, window_start, ends_at, hits) VALUES ($1, $2, $3, 1)
             ON CONFLICT (key, window_start) DO UPDATE SET hits = a2a_card_hits.hits + 1
             RETURNING hits",
        )
        .bind(key)
        .bind(start_ms)
        .bind(start_ms.saturating_add(window_ms))
        .fetch_one(&s.pool)
        .await
        .map_err(db_error)?;
        Ok(Some(u64::try_from(hits).unwrap_or(0)))
    }

    /// Kept in `a2a_card_keys`, for every process on the database: the first claim of a key
    /// inserts it, a later one reads what the first kept.
    async fn claim_key(
        &self,
        key: &str,
        task_id: &str,
        digest: &str,
    ) -> Result<super::KeyClaim, A2AError> {
        let s = &self.inner;
        // Twice at most: a key found taken may be pruned before it is read.
        for _ in 0..2 {
            let inserted = sqlx::query(&s.sql(
                "INSERT INTO a2a_card_keys (key, task_id, digest, made_at) VALUES (?, ?, ?, ?)
                 ON CONFLICT (key) DO NOTHING",
            ))
            .bind(key)
            .bind(task_id)
            .bind(digest)
            .bind(now_millis())
            .execute(&s.pool)
            .await
            .map_err(db_error)?;
            if inserted.rows_affected() == 1 {
                return Ok(super::KeyClaim::New);
            }
            let kept: Option<(String, String)> =
                sqlx::query_as(&s.sql("SELECT task_id, digest FROM a2a_card_keys WHERE key = ?"))
                    .bind(key)
                    .fetch_optional(&s.pool)
                    .await
                    .map_err(db_error)?;
            if let Some((task_id, digest)) = kept {
                return Ok(super::KeyClaim::Taken { task_id, digest });
            }
        }
        Err(A2AError::internal("the idempotency key could not be kept"))
    }

    /// The tasks this store's recovery fails from now on (and has failed since it opened),
    /// once. Only a store opened for a server tells them.
    fn recovered(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<Task>> {
        self.inner
            .recovered_rx
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// The durable skills' tasks this store's recovery takes over from now on (and has taken
    /// since it opened), once. Only a server's store takes them.
    fn resumed(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<Task>> {
        self.inner
            .resumed_rx
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// Whether the last lease renewal (every third of the lease) reached the database.
    fn reachable(&self) -> bool {
        !self
            .inner
            .unreachable
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Writes what is queued, then takes this replica out of the table of replicas: the
    /// running tasks it still owns are then another's to take over (the others' next check;
    /// on Postgres at once, as this replica says it went (`NOTIFY`); on SQLite, the next
    /// process that opens the file).
    async fn release(&self) -> Result<(), A2AError> {
        let inner = &self.inner;
        let _renewing = inner.renewing.lock().await;
        inner
            .released
            .store(true, std::sync::atomic::Ordering::SeqCst);
        inner.writer.flush().await;
        sqlx::query(&inner.sql("DELETE FROM a2a_card_replicas WHERE id = ?"))
            .bind(&inner.replica)
            .execute(&inner.pool)
            .await
            .map_err(db_error)?;
        if inner.dialect == Dialect::Postgres {
            sqlx::query(&format!("SELECT pg_notify('{GONE}', $1)"))
                .bind(&inner.replica)
                .execute(&inner.pool)
                .await
                .map_err(db_error)?;
        }
        Ok(())
    }
}

/// A pool of up to `connections` connections to `url`.
async fn connect(url: &str, dialect: Dialect, connections: u32) -> Result<AnyPool, sqlx::Error> {
    AnyPoolOptions::new()
        .max_connections(connections)
        .acquire_timeout(Duration::from_secs(5))
        .after_connect(move |conn, _| {
            Box::pin(async move {
                if dialect == Dialect::Sqlite {
                    sqlx::query("PRAGMA busy_timeout = 5000")
                        .execute(&mut *conn)
                        .await?;
                    // With WAL: a commit survives the process being killed; only a power loss
                    // may take the last ones.
                    sqlx::query("PRAGMA synchronous = NORMAL")
                        .execute(&mut *conn)
                        .await?;
                }
                Ok(())
            })
        })
        .connect(url)
        .await
}

/// The sqlx URL of a SQLite file, created when missing.
#[cfg(feature = "sqlite")]
pub(crate) fn sqlite_url(path: &std::path::Path) -> String {
    format!("sqlite://{}?mode=rwc", path.display())
}

/// The URL with its password hidden, for messages.
pub(crate) fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => url.to_owned(),
    }
}

/// The statement in this database's syntax: `?` placeholders become `$1, $2, ..` for
/// Postgres.
fn sql_for(dialect: Dialect, sql: &str) -> Cow<'_, str> {
    match dialect {
        Dialect::Sqlite => Cow::Borrowed(sql),
        Dialect::Postgres => {
            let mut out = String::with_capacity(sql.len() + 8);
            let mut n = 0;
            for c in sql.chars() {
                if c == '?' {
                    n += 1;
                    out.push('$');
                    out.push_str(&n.to_string());
                } else {
                    out.push(c);
                }
            }
            Cow::Owned(out)
        }
    }
}

/// Renews the lease and recovers dead replicas' tasks, while the store lives.
///
/// A renewal that fails is tried again sooner (every twelfth of the lease), each attempt given
/// a sixth of it. Once half the lease has gone by since the last renewal, this process steps
/// back: it says [`Change::LeaseLost`](super::Change::LeaseLost) to whoever runs tasks here,
/// who stops them (by then at most three quarters of the lease has gone by: another process
/// takes them over only once all of it has).
fn spawn_lease(store: Weak<Shared>) {
    tokio::spawn(async move {
        let mut renewed_at = tokio::time::Instant::now();
        let mut failing = false;
        let mut lost = false;
        loop {
            let (lease, others) = match store.upgrade() {
                Some(s) => (s.lease, Arc::clone(&s.others)),
                None => return,
            };
            let period = if failing { lease / 12 } else { lease / 3 };
            // At the period's end, or at once when another replica says it stopped.
            let period = tokio::time::sleep(period.max(Duration::from_millis(50)));
            futures::future::select(
                std::pin::pin!(period),
                std::pin::pin!(others.gone.notified()),
            )
            .await;
            let Some(s) = store.upgrade() else { return };
            let renewed = {
                let _renewing = s.renewing.lock().await;
                if s.released.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                match tokio::time::timeout(lease / 6, s.renew()).await {
                    Ok(renewed) => renewed,
                    Err(_) => Err(A2AError::internal("the database did not answer in time")),
                }
            };
            failing = renewed.is_err();
            s.unreachable
                .store(failing, std::sync::atomic::Ordering::Relaxed);
            if let Err(e) = renewed {
                tracing::warn!(error = %e.message, "the task store lease could not be renewed");
                if !lost && renewed_at.elapsed() >= lease / 2 {
                    lost = true;
                    tracing::error!(
                        "the task store lease was not renewed for half of it: the tasks running here are given up before another process may take them over"
                    );
                    if let Some(feed) = s.feed.get() {
                        let _ = feed.send(super::Change::LeaseLost);
                    }
                }
                continue;
            }
            renewed_at = tokio::time::Instant::now();
            lost = false;
            if let Err(e) = s.count_others().await {
                tracing::warn!(error = %e.message, "the other replicas could not be counted");
            }
            if let Err(e) = s.recover().await {
                tracing::warn!(error = %e.message, "tasks of stopped replicas could not be recovered");
            }
            if let Err(e) = s.sweep().await {
                tracing::warn!(error = %e.message, "finished tasks could not be removed");
            }
        }
    });
}

impl Shared {
    fn sql<'a>(&self, sql: &'a str) -> Cow<'a, str> {
        sql_for(self.dialect, sql)
    }

    /// A transaction that writes after it reads. On SQLite it takes the file's write lock at
    /// its start (`BEGIN IMMEDIATE`, waiting as `busy_timeout` says): a deferred one, upgraded
    /// to a writer after the writer's connection committed, would fail at once (its snapshot
    /// is stale).
    async fn begin(&self) -> Result<Transaction<'static, Any>, sqlx::Error> {
        match self.dialect {
            Dialect::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Dialect::Postgres => self.pool.begin().await,
        }
    }

    /// `FOR UPDATE` where the database locks rows (SQLite locks the whole file on write).
    fn for_update(&self) -> &'static str {
        match self.dialect {
            Dialect::Sqlite => "",
            Dialect::Postgres => " FOR UPDATE",
        }
    }

    async fn renew(&self) -> Result<(), A2AError> {
        let sql = self.sql(
            "INSERT INTO a2a_card_replicas (id, seen_at) VALUES (?, ?)
             ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at",
        );
        sqlx::query(&sql)
            .bind(&self.replica)
            .bind(now_millis())
            .execute(&self.pool)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    /// Reads whether another replica's lease is live, into [`others`](Self::others) (a
    /// replica that listens, on Postgres; the others keep announcing).
    async fn count_others(&self) -> Result<(), A2AError> {
        use std::sync::atomic::Ordering::{Relaxed, SeqCst};
        if self.dialect != Dialect::Postgres || !self.listens.load(Relaxed) {
            return Ok(());
        }
        let heard = self.others.heard.load(SeqCst);
        let sql = self
            .sql("SELECT EXISTS (SELECT 1 FROM a2a_card_replicas WHERE id <> ? AND seen_at >= ?)");
        let row = sqlx::query(&sql)
            .bind(&self.replica)
            .bind(now_millis() - millis(self.lease))
            .fetch_one(&self.pool)
            .await
            .map_err(db_error)?;
        let others: bool = row.try_get(0).map_err(db_error)?;
        // A newcomer heard while the table was read may not be in what was read.
        if others || self.others.heard.load(SeqCst) == heard {
            self.others.announce.store(others, SeqCst);
        }
        Ok(())
    }

    /// The events of task `id` after event `seq` that its log holds (`on`: the connection
    /// or transaction to read with), in order.
    async fn tail<'e, E>(
        &self,
        on: E,
        id: &str,
        seq: i64,
    ) -> Result<Vec<(u64, Arc<super::Event>)>, A2AError>
    where
        E: sqlx::Executor<'e, Database = Any>,
    {
        let rows = sqlx::query(&self.sql(
            "SELECT seq, body FROM a2a_card_events WHERE task_id = ? AND seq > ? ORDER BY seq",
        ))
        .bind(id)
        .bind(seq)
        .fetch_all(on)
        .await
        .map_err(db_error)?;
        let mut events = Vec::with_capacity(rows.len());
        for row in rows {
            let (n, body): (i64, String) = (row.get(0), row.get(1));
            let event = serde_json::from_str(&body).map_err(|e| {
                A2AError::internal(format!("event {n} of task {id} cannot be read: {e}"))
            })?;
            // Its JSON, as logged, serves whoever writes it on.
            let event = Arc::new(super::Event::with_json(event, body));
            events.push((u64::try_from(n).unwrap_or(0), event));
        }
        Ok(events)
    }

    /// Task `task`, stored as it was at its event `seq`, as it is now: with the events its
    /// log holds after `seq` applied (the chunks of an artifact under way, which are logged
    /// but for which the row is not written); and the number of the last of them.
    async fn as_now<'e, E>(&self, on: E, mut task: Task, seq: i64) -> Result<(Task, u64), A2AError>
    where
        E: sqlx::Executor<'e, Database = Any>,
    {
        let mut last = u64::try_from(seq).unwrap_or(0);
        for (n, event) in self.tail(on, &task.id, seq).await? {
            super::apply(&mut task, event.event());
            last = n;
        }
        Ok((task, last))
    }

    async fn recover(&self) -> Result<usize, A2AError> {
        let cutoff = now_millis() - millis(self.lease);
        let sql = self.sql(
            "SELECT body, seq, owner, EXISTS (SELECT 1 FROM a2a_card_events e WHERE e.task_id = a2a_card_tasks.id AND e.seq = -1)
                FROM a2a_card_tasks WHERE ended_at IS NULL AND (owner IS NULL OR owner NOT IN
                (SELECT id FROM a2a_card_replicas WHERE seen_at >= ?))",
        );
        let rows = sqlx::query(&sql)
            .bind(cutoff)
            .fetch_all(&self.pool)
            .await
            .map_err(db_error)?;
        let mut n = 0;
        for row in rows {
            let (body, seq, owner): (String, Option<i64>, Option<String>) =
                (row.get(0), row.get(1), row.get(2));
            let journaled = row
                .try_get::<bool, _>(3)
                .or_else(|_| row.try_get::<i64, _>(3).map(|n| n != 0))
                .unwrap_or(false);
            let Ok(task) = decode(&body) else { continue };
            if !super::was_running(&task.status.state) {
                continue;
            }
            // A durable skill's task (it has a journal): a server's store takes it over, to
            // run again from its journal; another store leaves it for a server.
            if journaled {
                if self.queue_creates && self.claim(&task.id, owner.as_deref()).await? {
                    n += 1;
                    let _ = self.resumed.send(task);
                }
                continue;
            }
            // What it logged after its row was written (an artifact's chunks) stays; its failure
            // is the event after the last one logged.
            let (task, logged) = self.as_now(&self.pool, task, seq.unwrap_or(0)).await?;
            // Another replica may recover it at the same time: whoever writes first wins.
            let failed = super::interrupted(task);
            let seq = logged + 1;
            self.writer.append(
                &failed.id,
                seq,
                &Arc::new(super::status_update(&failed).into()),
            );
            if self
                .writer
                .update_at(failed.clone(), None, seq)
                .await
                .is_ok()
            {
                n += 1;
                if self.queue_creates {
                    let _ = self.recovered.send(failed);
                }
            }
        }
        let forget = self.sql("DELETE FROM a2a_card_replicas WHERE seen_at < ?");
        sqlx::query(&forget)
            .bind(cutoff - millis(self.lease) * 10)
            .execute(&self.pool)
            .await
            .map_err(db_error)?;
        Ok(n)
    }

    /// Gives up this replica's claim on running task `id` (its run here stopped), so that the
    /// next recovery of any replica takes it over; a claim another replica took since is left
    /// as it is. The task's version moves on: a write this replica still had queued is refused.
    pub(super) async fn give_up(&self, id: &str) -> Result<(), A2AError> {
        let sql = self.sql(
            "UPDATE a2a_card_tasks SET owner = NULL, version = version + 1 WHERE id = ? AND ended_at IS NULL AND owner = ?",
        );
        sqlx::query(&sql)
            .bind(id)
            .bind(&self.replica)
            .execute(&self.pool)
            .await
            .map_err(db_error)?;
        self.local.forget(id);
        Ok(())
    }

    /// Makes this replica the owner of running task `id`, which `was` owned (the replica that
    /// stopped): whether it did (another replica may have taken it first). The task's version
    /// moves on: should the replica that owned it only have lost the database for a while,
    /// its next write of the task is refused, not taken over this one's.
    async fn claim(&self, id: &str, was: Option<&str>) -> Result<bool, A2AError> {
        let sql = match was {
            Some(_) => {
                "UPDATE a2a_card_tasks SET owner = ?, version = version + 1 WHERE id = ? AND ended_at IS NULL AND owner = ?"
            }
            None => {
                "UPDATE a2a_card_tasks SET owner = ?, version = version + 1 WHERE id = ? AND ended_at IS NULL AND owner IS NULL"
            }
        };
        let sql = self.sql(sql);
        let mut query = sqlx::query(&sql).bind(&self.replica).bind(id);
        if let Some(was) = was {
            query = query.bind(was);
        }
        let done = query.execute(&self.pool).await.map_err(db_error)?;
        Ok(done.rows_affected() == 1)
    }

    /// Tells the other replicas that task `id` changed (Postgres), in the transaction.
    async fn announce(&self, tx: &mut Transaction<'_, Any>, id: &str) -> Result<(), A2AError> {
        if self.dialect == Dialect::Postgres {
            sqlx::query(&format!("SELECT pg_notify('{CHANGES}', $1)"))
                .bind(id)
                .execute(&mut **tx)
                .await
                .map_err(db_error)?;
        }
        Ok(())
    }

    /// Removes the terminal tasks retention lets go (run with the lease, not on every write).
    async fn sweep(&self) -> Result<(), A2AError> {
        let mut tx = self.begin().await.map_err(db_error)?;
        self.prune(&mut tx).await?;
        tx.commit().await.map_err(db_error)?;
        self.local.forget_finished();
        Ok(())
    }

    /// Removes the terminal tasks (and their push configs) retention lets go.
    async fn prune(&self, tx: &mut Transaction<'_, Any>) -> Result<(), A2AError> {
        let mut doomed = String::new();
        if let Some(age) = self.retention.age_limit() {
            doomed.push_str(&format!(
                "SELECT id FROM a2a_card_tasks WHERE ended_at IS NOT NULL AND ended_at < {}",
                now_millis() - millis(age)
            ));
        }
        if let Some(max) = self.retention.count_limit() {
            if !doomed.is_empty() {
                doomed.push_str(" UNION ");
            }
            let all = match self.dialect {
                Dialect::Sqlite => " LIMIT -1",
                Dialect::Postgres => "",
            };
            doomed.push_str(&format!(
                "SELECT id FROM (SELECT id FROM a2a_card_tasks WHERE ended_at IS NOT NULL ORDER BY ended_at DESC, id DESC{all} OFFSET {max}) AS old"
            ));
        }
        // Request counters whose window has ended, answers forwarded an hour ago, and
        // idempotency keys past their retention.
        let now = now_millis();
        for (expired, before) in [
            ("a2a_card_hits WHERE ends_at", now),
            ("a2a_card_answers WHERE sent_at", now - 3_600_000),
            (
                "a2a_card_keys WHERE made_at",
                now.saturating_sub(millis(crate::idempotency::KEY_RETENTION)),
            ),
        ] {
            sqlx::query(&format!("DELETE FROM {expired} < {before}"))
                .execute(&mut **tx)
                .await
                .map_err(db_error)?;
        }
        if doomed.is_empty() {
            return Ok(());
        }
        for table in [
            "a2a_card_push_configs WHERE task_id",
            "a2a_card_events WHERE task_id",
            "a2a_card_tasks WHERE id",
        ] {
            sqlx::query(&format!("DELETE FROM {table} IN ({doomed})"))
                .execute(&mut **tx)
                .await
                .map_err(db_error)?;
        }
        Ok(())
    }
}
