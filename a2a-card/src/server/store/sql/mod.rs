//! Tasks in a SQL database, on sqlx: a SQLite file (feature `sqlite`) or Postgres (feature
//! `postgres`), each on sqlx's own types. [`SqlTasks`] holds the store's rules (the writer,
//! recovery, ownership, retention, what a read answers: this file and `task_store.rs`); what
//! it asks of its database is a [`Database`](database::Database), implemented once over
//! sqlx's generic types for the [`Backend`](backend::Backend) of each (`sqlite.rs`,
//! `postgres.rs`), with the statements both read alike written once.

mod backend;
mod database;
mod deadline;
mod migrations;
#[cfg(feature = "postgres")]
mod postgres;
mod push_configs;
mod round;
#[cfg(feature = "sqlite")]
mod sqlite;
mod statements;
mod task_store;
mod writer;

use std::sync::{Arc, Weak};
use std::time::Duration;

use a2a::{A2AError, Task, TaskState};
use async_trait::async_trait;

use super::notify::Others;
use super::{Retention, StoreError};
use database::Database;
pub use push_configs::SqlPushConfigs;
#[cfg(feature = "sqlite")]
pub(crate) use sqlite::sqlite_url;

/// How long a replica that stopped renewing its lease still owns its running tasks.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);

/// The size of a SQLite store's log (the database's `-wal` file) past which the store starts
/// it over: 16 MiB.
///
/// The store moves its log into the database every 100 ms without holding up its writer (a
/// passive checkpoint); once that leaves more than this in the log, a checkpoint that
/// restarts the log follows, holding the writer off only while it moves what came in
/// meanwhile (at most 20 ms more: past that it gives up until the next 100 ms). The log on
/// disk then stays within this plus what the writer appends meanwhile: 27 to 46 MiB at the
/// full rate of a 2-core machine over five minutes (the book states 64 MiB as the bound), where
/// it grew by gigabytes a minute before. The file is cut
/// back to this size after each restart, and to nothing once the store has been idle for a
/// second; the index SQLite keeps of it (the `-shm` file, mapped into the process) stays
/// within a few hundred KiB.
///
/// ```
/// assert_eq!(a2a_card::server::store::SQLITE_LOG_LIMIT, 16 << 20);
/// ```
#[cfg(feature = "sqlite")]
pub const SQLITE_LOG_LIMIT: u64 = 16 << 20;

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
    /// The database, and the statements this store runs on it.
    db: Arc<dyn Database>,
    retention: Retention,
    lease: Duration,
    /// This replica's id.
    replica: String,
    /// The tasks this replica writes, as far as it knows them.
    local: Arc<writer::Local>,
    /// Whether new tasks are queued (a server [settles](super::Store::settle) them before it
    /// answers) or written before `create` returns.
    queue_creates: bool,
    /// What recovery does, told from the store's opening on: kept (in `held`) until the
    /// server hands the store its own (see [`Store::recover_into`](super::Store::recover_into)).
    recovery: super::Recovery,
    held: std::sync::Mutex<Option<super::Recovered>>,
    /// Where writes go (group commit; see [`writer`]).
    writer: writer::Writer,
    /// The connection URL (for Postgres notifications).
    url: String,
    /// Whether another replica may listen to this one's writes (see [`Others`]).
    others: Arc<Others>,
    /// Whether this replica listens (a server's store): only then is `others` kept.
    listens: std::sync::atomic::AtomicBool,
    /// Whether this replica gave up its lease ([`Store::release`](super::Store::release)):
    /// it is not renewed again.
    released: std::sync::atomic::AtomicBool,
    /// Held while the lease is renewed, and by the release: a renewal under way does not put
    /// back the row the release takes out.
    renewing: tokio::sync::Mutex<()>,
    /// Whether the last lease renewal failed (the database did not answer).
    unreachable: std::sync::atomic::AtomicBool,
    /// Whether a retention sweep runs (beside the lease, which it must not hold up).
    sweeping: std::sync::atomic::AtomicBool,
    /// The durable tasks this replica's last recovery left to the other replicas (see
    /// [`recover`](Shared::recover)).
    left: std::sync::Mutex<std::collections::HashSet<String>>,
}

impl std::fmt::Debug for SqlTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlTasks")
            .field("database", &self.inner.db.system())
            .field("retention", &self.inner.retention)
            .field("replica", &self.inner.replica)
            .finish_non_exhaustive()
    }
}

fn db_error(e: impl std::fmt::Display) -> A2AError {
    // The cause goes to the log; the caller learns only that the store failed.
    static SINCE: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    static ERRORS: Throttle = Throttle::new();
    let now = SINCE
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_millis();
    if let Some(muted) = ERRORS.due(u64::try_from(now).unwrap_or(u64::MAX - 1)) {
        tracing::error!(error = %e, muted, "task store error");
    }
    A2AError::internal(super::contract::UNAVAILABLE)
}

/// At most one log line a second, across the process: while the database is out of reach
/// every statement fails, each for the same cause, and a line for each would flood an
/// operator's log (hundreds a second were seen in the fault campaign).
struct Throttle {
    /// When the last line was due (milliseconds; none yet: `u64::MAX`).
    last: std::sync::atomic::AtomicU64,
    /// How many were not logged since.
    muted: std::sync::atomic::AtomicU64,
}

impl Throttle {
    const fn new() -> Throttle {
        Throttle {
            last: std::sync::atomic::AtomicU64::new(u64::MAX),
            muted: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Whether a line is due at `now` (milliseconds): how many were not logged since the last
    /// one, if it is.
    fn due(&self, now: u64) -> Option<u64> {
        use std::sync::atomic::Ordering::Relaxed;
        let last = self.last.load(Relaxed);
        let due = last == u64::MAX || now.saturating_sub(last) >= 1_000;
        if due
            && self
                .last
                .compare_exchange(last, now, Relaxed, Relaxed)
                .is_ok()
        {
            return Some(self.muted.swap(0, Relaxed));
        }
        self.muted.fetch_add(1, Relaxed);
        None
    }
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
        SqlTasks::open(&sqlite_url(path.as_ref()), retention, DEFAULT_LEASE, false).await
    }

    /// Connects to the Postgres database at `url` (`postgres://user:pass@host:port/db`, or a
    /// unix socket with `?host=/path`).
    #[cfg(feature = "postgres")]
    pub async fn postgres(url: &str, retention: Retention) -> Result<SqlTasks, StoreError> {
        SqlTasks::open(url, retention, DEFAULT_LEASE, false).await
    }

    /// Opens the database at `url` (SQLite for a `sqlite:` URL, else Postgres) with this
    /// lease: how long a replica that stopped renewing still owns its running tasks.
    /// `queue_creates`: new tasks are queued for the writer's next round instead of written
    /// before `create` returns, for a server that [settles](super::Store::settle) a task
    /// before it tells a caller of it.
    pub(crate) async fn open(
        url: &str,
        retention: Retention,
        lease: Duration,
        queue_creates: bool,
    ) -> Result<SqlTasks, StoreError> {
        let replica = a2a::new_task_id();
        let others = Arc::new(Others {
            announce: true.into(),
            ..Default::default()
        });
        let db = connect(url, replica.clone(), Arc::clone(&others)).await?;
        let local = Arc::new(writer::Local::default());
        let (recovery, held) = super::Recovery::new();
        let store = SqlTasks {
            inner: Arc::new(Shared {
                writer: writer::Writer::spawn(Arc::clone(&db), Arc::clone(&local)),
                db,
                retention,
                lease,
                replica,
                local,
                queue_creates,
                recovery,
                held: std::sync::Mutex::new(Some(held)),
                url: url.to_owned(),
                others,
                listens: Default::default(),
                released: Default::default(),
                renewing: Default::default(),
                unreachable: Default::default(),
                sweeping: Default::default(),
                left: Default::default(),
            }),
        };
        let unavailable = |e: A2AError| StoreError::Unavailable(e.message);
        store.inner.db.renew().await.map_err(unavailable)?;
        // Heard by the replicas that listen (Postgres), which announce their writes from now
        // on: before this one serves, so before any of its readers waits for one.
        store.inner.db.opened().await.map_err(unavailable)?;
        spawn_lease(Arc::downgrade(&store.inner));
        if store.inner.db.checkpoints() {
            spawn_checkpoints(Arc::downgrade(&store.inner));
        }
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
        use std::sync::atomic::Ordering::Relaxed;
        let inner = &self.inner;
        let Some(feed) = inner.db.listen(&inner.url).await else {
            return;
        };
        inner.local.keep_feed(feed);
        // Listening now: a replica that opens from here on is heard, one already open is
        // in the table.
        inner.listens.store(true, Relaxed);
        if let Err(e) = inner.count_others().await {
            tracing::warn!(error = %e.message, "the other replicas could not be counted");
        }
    }
}

/// The database at `url`, for replica `replica`: SQLite for a `sqlite:` URL, else Postgres.
async fn connect(
    url: &str,
    replica: String,
    others: Arc<Others>,
) -> Result<Arc<dyn Database>, StoreError> {
    let shown = redact(url);
    if url.starts_with("sqlite:") {
        #[cfg(feature = "sqlite")]
        return Ok(Arc::new(deadline::Deadline(
            backend::Pools::<sqlx::Sqlite>::open(url, &shown, replica, others).await?,
        )));
        #[cfg(not(feature = "sqlite"))]
        return Err(StoreError::Unavailable(format!(
            "{shown}: this build has no SQLite store (enable the `sqlite` feature of a2a-card)"
        )));
    }
    #[cfg(feature = "postgres")]
    return Ok(Arc::new(deadline::Deadline(
        backend::Pools::<sqlx::Postgres>::open(url, &shown, replica, others).await?,
    )));
    #[cfg(not(feature = "postgres"))]
    Err(StoreError::Unavailable(format!(
        "{shown}: this build has no Postgres store (enable the `postgres` feature of a2a-card)"
    )))
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
    fn changes(&self) -> Option<super::ChangeFeed> {
        self.inner.local.feed().cloned()
    }

    async fn forward(&self, task_id: &str, message: &a2a::Message) -> Result<bool, A2AError> {
        if self.inner.local.feed().is_none() {
            return Ok(false);
        }
        let payload = super::notify::answer_payload(task_id, message);
        self.inner.db.forward(task_id, message, payload).await?;
        Ok(true)
    }

    async fn settle(&self, task_id: &str) -> Result<(), A2AError> {
        self.inner.writer.settle(task_id).await
    }

    /// Postgres: counted for every replica, one row per key and window. SQLite: `None` (one
    /// process at a time counts its own).
    async fn hit(&self, key: &str, start_ms: i64, window_ms: i64) -> Result<Option<u64>, A2AError> {
        self.inner.db.hit(key, start_ms, window_ms).await
    }

    /// Kept in `a2a_card_keys`, for every process on the database: the first claim of a key
    /// inserts it, a later one reads what the first kept.
    async fn claim_key(
        &self,
        key: &str,
        task_id: &str,
        digest: &str,
    ) -> Result<super::KeyClaim, A2AError> {
        self.inner.db.claim_key(key, task_id, digest).await
    }

    /// What this store's recovery did since it opened, and does from now on, told to
    /// `recovery` (the first recovery handed over; only a server's store tells the tasks it
    /// failed).
    fn recover_into(&self, recovery: super::Recovery) {
        let held = self
            .inner
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(held) = held {
            held.forward(move |_| Some(recovery.clone()));
        }
    }

    /// Every replica in the table, with its lease and the running tasks it owns.
    async fn replicas(&self) -> Result<Option<Vec<super::Replica>>, A2AError> {
        let s = &self.inner;
        let this = s.db.replica().to_owned();
        let rows = s.db.replicas().await?;
        let ms = |ms: i64| Duration::from_millis(u64::try_from(ms).unwrap_or(0));
        Ok(Some(
            rows.into_iter()
                .map(|(id, seen, running)| {
                    let here = id == this;
                    super::Replica::new(
                        id,
                        ms(seen),
                        u64::try_from(running).unwrap_or(0),
                        here,
                        s.lease,
                    )
                })
                .collect(),
        ))
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
        let _ = inner.writer.flush().await;
        inner.db.leave().await
    }
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

/// How often a store that runs its database's checkpoints ([`Database::checkpoints`]) moves
/// what it wrote into the database: on SQLite, a hundred milliseconds of writes at full rate is
/// a few hundred pages of log.
const CHECKPOINT_PERIOD: Duration = Duration::from_millis(100);

/// Runs the database's checkpoints, while the store lives.
fn spawn_checkpoints(store: Weak<Shared>) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(CHECKPOINT_PERIOD).await;
            let Some(s) = store.upgrade() else { return };
            if let Err(e) = s.db.checkpoint().await {
                tracing::debug!(error = %e.message, "the database's log could not be checkpointed");
            }
        }
    });
}

/// Renews the lease and recovers dead replicas' tasks, while the store lives.
///
/// A renewal that fails is tried again sooner (every twelfth of the lease), each attempt given
/// a sixth of it. Once half the lease has gone by since the last renewal, this process steps
/// back: it says [`Change::LeaseLost`](super::Change::LeaseLost) to whoever runs tasks here,
/// who stops them (by then at most three quarters of the lease has gone by: another process
/// takes them over only once all of it has). A process woken a whole lease after its last
/// renewal (it was stalled) renews first, then stops only the tasks whose rows are no longer
/// its own ([`Change::TakenOver`](super::Change::TakenOver)): another process may have taken
/// some over meanwhile, and their runs' writes are refused (a claim moves the task's version
/// on, and the log of a task whose row is another's takes nothing more of this process's run);
/// the others go on, not run again from their journals. Should it not renew at once, or not
/// read which tasks are still its own, it steps back.
fn spawn_lease(store: Weak<Shared>) {
    tokio::spawn(async move {
        let mut renewed_at = tokio::time::Instant::now();
        // When the renewals began to fail, and how many have failed since.
        let mut failing_since: Option<(tokio::time::Instant, u64)> = None;
        let mut lost = false;
        // Woken a lease after the last renewal, and not renewed since.
        let mut stalled = false;
        loop {
            let (lease, others) = match store.upgrade() {
                Some(s) => (s.lease, Arc::clone(&s.others)),
                None => return,
            };
            let period = match failing_since {
                Some(_) => lease / 12,
                None => lease / 3,
            };
            // At the period's end, or at once when another replica says it stopped.
            let period = tokio::time::sleep(period.max(Duration::from_millis(50)));
            futures::future::select(
                std::pin::pin!(period),
                std::pin::pin!(others.gone.notified()),
            )
            .await;
            let Some(s) = store.upgrade() else { return };
            // Woken a lease after the last renewal (the process was stalled: paused, swapped
            // out, starved): another process may have taken its tasks over meanwhile. Renewed
            // first, then those taken over stop.
            if !lost && renewed_at.elapsed() >= lease {
                stalled = true;
            }
            let renewed = {
                let _renewing = s.renewing.lock().await;
                if s.released.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                match tokio::time::timeout(lease / 6, s.db.renew()).await {
                    Ok(renewed) => renewed,
                    Err(_) => Err(A2AError::internal("the database did not answer in time")),
                }
            };
            s.unreachable
                .store(renewed.is_err(), std::sync::atomic::Ordering::Relaxed);
            if let Err(e) = renewed {
                // The first failure of a run of them is a warning; the retries that follow
                // (every twelfth of the lease) are told once the lease is renewed again.
                match failing_since {
                    None => {
                        tracing::warn!(error = %e.message, "the task store lease could not be renewed; trying again");
                        failing_since = Some((tokio::time::Instant::now(), 1));
                    }
                    Some((_, ref mut tries)) => {
                        *tries += 1;
                        tracing::debug!(error = %e.message, "the task store lease could not be renewed");
                    }
                }
                if !lost && stalled {
                    lost = true;
                    s.step_back(
                        "this process was stalled past its task store lease and could not renew it: the tasks running here are given up, as another process may have taken them over",
                    );
                } else if !lost && renewed_at.elapsed() >= lease / 2 {
                    lost = true;
                    s.step_back(
                        "the task store lease was not renewed for half of it: the tasks running here are given up before another process may take them over",
                    );
                }
                continue;
            }
            if let Some((since, tries)) = failing_since.take() {
                tracing::info!(
                    failed = tries,
                    for_ms = u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX),
                    "the task store lease is renewed again"
                );
            }
            renewed_at = tokio::time::Instant::now();
            if std::mem::take(&mut stalled) && !lost {
                match s.taken_over().await {
                    Ok(0) => {}
                    Ok(n) => tracing::warn!(
                        tasks = n,
                        "this process was stalled past its task store lease: the tasks another process took over meanwhile stop here"
                    ),
                    Err(e) => {
                        s.step_back(&format!(
                            "this process was stalled past its task store lease, and which of its tasks are still its own could not be read ({}): the tasks running here are given up",
                            e.message
                        ));
                    }
                }
            }
            lost = false;
            if let Err(e) = s.count_others().await {
                tracing::warn!(error = %e.message, "the other replicas could not be counted");
            }
            if let Err(e) = s.recover().await {
                tracing::warn!(error = %e.message, "tasks of stopped replicas could not be recovered");
            }
            // On its own: a long sweep (a large backlog of finished tasks) must not hold up
            // the next renewal, which the other replicas wait for. One at a time.
            if !s.sweeping.swap(true, std::sync::atomic::Ordering::SeqCst) {
                let s = Arc::clone(&s);
                tokio::spawn(async move {
                    if let Err(e) = s.sweep().await {
                        tracing::warn!(error = %e.message, "finished tasks could not be removed");
                    }
                    s.sweeping.store(false, std::sync::atomic::Ordering::SeqCst);
                });
            }
        }
    });
}

impl Shared {
    /// Steps back, saying why (`why`, logged): whoever runs tasks here stops them
    /// ([`Change::LeaseLost`](super::Change::LeaseLost)).
    fn step_back(&self, why: &str) {
        tracing::error!("{why}");
        if let Some(feed) = self.local.feed() {
            feed.send(super::Change::LeaseLost);
        }
    }

    /// Stops the runs here of the tasks whose rows are no longer this replica's (another took
    /// them over while it was stalled, [`Change::TakenOver`](super::Change::TakenOver)): their
    /// writes are refused from now on. How many.
    async fn taken_over(&self) -> Result<usize, A2AError> {
        // Those written before the rows are read: a task written after is in them.
        let running = self.local.running();
        let owned = self.db.owned().await?;
        let mut n = 0;
        for id in running {
            if !owned.contains(&id) {
                self.local.taken_over(&id);
                n += 1;
            }
        }
        Ok(n)
    }

    /// Reads whether another replica's lease is live, into [`others`](Self::others) (a
    /// replica that listens, on Postgres; the others keep announcing).
    async fn count_others(&self) -> Result<(), A2AError> {
        use std::sync::atomic::Ordering::{Relaxed, SeqCst};
        if !self.listens.load(Relaxed) {
            return Ok(());
        }
        let heard = self.others.heard.load(SeqCst);
        let others = self.db.others_live(millis(self.lease)).await?;
        // A newcomer heard while the table was read may not be in what was read.
        if others || self.others.heard.load(SeqCst) == heard {
            self.others.announce.store(others, SeqCst);
        }
        Ok(())
    }

    /// Task `task`, stored as it was at its event `seq`, as it is now: with the events its
    /// log holds after `seq` applied (the chunks of an artifact under way, which are logged
    /// but for which the row is not written); and the number of the last of them.
    async fn as_now(&self, task: Task, seq: Option<i64>) -> Result<(Task, u64), A2AError> {
        let tail = self.db.tail(&task.id, seq.unwrap_or(0)).await?;
        caught_up(task, seq, tail)
    }

    /// Takes over the tasks of replicas whose lease ran out: a durable skill's task to run
    /// again here, any other failed.
    ///
    /// The durable tasks are shared among the live replicas, each of which recovers when its
    /// lease is renewed and at once when a replica says it stopped: this one takes its share
    /// (the tasks over the number of live replicas, from a place in the list of its own, so
    /// that they do not all reach for the same ones first) and leaves the rest to the others;
    /// a task it left last time and finds still left (the others did not take it: they could
    /// not, or are not servers) it takes whatever its share.
    async fn recover(&self) -> Result<usize, A2AError> {
        let lease = millis(self.lease);
        let mut n = 0;
        let mut orphans = self.db.orphans(lease).await?;
        let durable = orphans.iter().filter(|o| o.journaled).count();
        let mut share = durable;
        if self.queue_creates && durable > 1 {
            let live = self.db.live_replicas(lease).await.unwrap_or(1).max(1);
            share = durable.div_ceil(live);
            // Where this replica starts in the list: its id's own place.
            let start = self.replica.bytes().fold(0usize, |h, b| {
                h.wrapping_mul(31).wrapping_add(usize::from(b))
            });
            let len = orphans.len();
            orphans.rotate_left(start % len);
        }
        let before = std::mem::take(&mut *self.left.lock().unwrap_or_else(|p| p.into_inner()));
        let mut left = std::collections::HashSet::new();
        let mut taken = 0;
        for orphan in orphans {
            let Ok(task) = decode(&orphan.body) else {
                continue;
            };
            if !super::was_running(&task.status.state) {
                continue;
            }
            // A durable skill's task (it has a journal): a server's store takes it over, to
            // run again from its journal; another store leaves it for a server. Another
            // replica may take it first; the claim moves its version on: should the replica
            // that ran it only have lost the database for a while, its next write of the task
            // is refused, not taken over this one's.
            if orphan.journaled {
                let owner = orphan.owner.as_deref();
                if !self.queue_creates {
                    continue;
                }
                if taken >= share && !before.contains(&task.id) {
                    left.insert(task.id);
                    continue;
                }
                if let Some(version) = self.db.claim(&task.id, owner, lease).await? {
                    taken += 1;
                    // The claimed version is this replica's to write from: a replica that
                    // claims the task after it moves the version on, and this one's writes
                    // are refused from then on. A refusal its earlier run here met is not
                    // this run's.
                    self.local.claimed(&task.id, version);
                    n += 1;
                    let token = u64::try_from(version).unwrap_or_default();
                    self.recovery.resumed(super::Claimed::new(task, token));
                }
                continue;
            }
            // What it logged after its row was written (an artifact's chunks) stays; its failure
            // is the event after the last one logged.
            let (task, logged) = self.as_now(task, orphan.seq).await?;
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
                    self.recovery.failed(failed);
                }
            }
        }
        *self.left.lock().unwrap_or_else(|p| p.into_inner()) = left;
        self.db.forget_replicas(lease.saturating_mul(11)).await?;
        Ok(n)
    }

    /// Gives up this replica's claim on running task `id` (its run here stopped), so that the
    /// next recovery of any replica takes it over; a claim another replica took since is left
    /// as it is. The task's version moves on: a write this replica still had queued is refused.
    ///
    /// A creation of the task still on its way is waited for first: given up before its row is
    /// written, the task would be written after, this replica's with no handler, and its
    /// caller (who waits for the creation too) told it was kept when it was not. So are the
    /// task's other writes still queued (written, or dropped when the task's writes were
    /// refused): once the task is forgotten here they would no longer be told from a later
    /// run's. An error while the database has not answered for it yet (the caller tries
    /// again).
    pub(super) async fn give_up(&self, id: &str) -> Result<(), A2AError> {
        if let Err(why) = self.writer.settle(id).await {
            if self.local.pending(id) {
                return Err(why);
            }
            // Refused: never stored, nothing to give up.
            return Ok(());
        }
        self.writer.flush().await?;
        self.db.give_up(id).await?;
        self.local.forget(id);
        Ok(())
    }

    /// Removes the terminal tasks retention lets go (run with the lease, not on every write).
    async fn sweep(&self) -> Result<(), A2AError> {
        self.db.sweep(self.retention).await?;
        self.local.forget_finished();
        Ok(())
    }
}

/// Task `task`, stored as it was at its event `seq` (`None`: 0), with `tail`, the events its
/// log holds after `seq`, applied: the task as it is now, and the number of the last event.
fn caught_up(
    mut task: Task,
    seq: Option<i64>,
    tail: Vec<(u64, Arc<super::Event>)>,
) -> Result<(Task, u64), A2AError> {
    let mut last = u64::try_from(seq.unwrap_or(0)).unwrap_or(0);
    for (n, event) in tail {
        super::apply(&mut task, &*event.event()?);
        last = n;
    }
    Ok((task, last))
}

#[cfg(test)]
mod tests {
    use super::Throttle;

    /// A recovery claims the orphans it read one after another: by the time it reaches one,
    /// the owner may have renewed its lease (it was slowed, not gone) and still run the task.
    #[cfg(feature = "sqlite")]
    #[tokio::test]
    async fn a_claim_is_refused_once_the_owner_it_read_as_gone_renewed_its_lease() {
        use super::backend::Pools;
        use super::database::Database as _;
        let path = std::env::temp_dir().join(format!(
            "a2a-card-claim-{}-{}.db",
            std::process::id(),
            a2a::new_message_id()
        ));
        let url = super::sqlite::sqlite_url(&path);
        let open = |replica: &str| {
            Pools::<sqlx::Sqlite>::open(&url, "test", replica.into(), Default::default())
        };
        let (a, b) = (open("a").await.expect("a"), open("b").await.expect("b"));
        sqlx::query(
            "INSERT INTO a2a_card_tasks (id, context_id, state, status_at, version, owner, body, seq)
             VALUES ('t', 'c', 'TASK_STATE_INPUT_REQUIRED', '', 3, 'a', '{}', 1)",
        )
        .execute(&a.pool)
        .await
        .expect("a task of a's");
        a.renew().await.expect("a's lease");
        assert_eq!(
            b.claim("t", Some("a"), 60_000).await.expect("a claim"),
            None,
            "a's lease is live: the task is not b's to claim"
        );
        sqlx::query("UPDATE a2a_card_replicas SET seen_at = seen_at - 120000 WHERE id = 'a'")
            .execute(&a.pool)
            .await
            .expect("a's lease run out");
        assert_eq!(
            b.claim("t", Some("a"), 60_000).await.expect("a claim"),
            Some(4),
            "a's lease ran out: b claims the task"
        );
        drop((a, b));
        for end in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{end}", path.display()));
        }
    }

    #[test]
    fn a_store_error_is_logged_at_most_once_a_second_with_the_count_of_those_that_were_not() {
        let errors = Throttle::new();
        let lines: Vec<_> = [0, 10, 500, 999, 1_000, 1_001, 1_500, 2_600]
            .into_iter()
            .map(|now| errors.due(now))
            .collect();
        assert_eq!(
            lines,
            [Some(0), None, None, None, Some(3), None, None, Some(2)]
        );
    }
}
