//! What a task store does for the server: the [`Store`] trait (the tasks, and what else a store
//! keeps and does for several processes), what [`Store::claim_key`] answers ([`KeyClaim`]), and
//! the [`Change`]s a shared store's feed carries.

use std::sync::Arc;

use a2a::Task;
use a2a_server::TaskStore;

use super::EventLog;

/// A change that a process made to a shared store, as the store's change feed tells every
/// process on it ([`Store::changes`], a [`ChangeFeed`]).
///
/// ```
/// use a2a_card::server::store::{Change, ChangeFeed};
///
/// // A store of your own shared by several processes announces what each writes.
/// let feed = ChangeFeed::new(64);
/// feed.send(Change::Task("t-1".into()));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Change {
    /// Task `id` was written (its status or what it holds changed).
    Task(String),
    /// Task `id`'s event log grew.
    Events(String),
    /// Task `id` was cancelled through the store (by a process other than the one whose
    /// handler runs it, which stops it); a [`Task`](Change::Task) change is told too.
    Canceled(String),
    /// An answer to the question of task `task`, for the process whose handler asked
    /// ([`Store::forward`]).
    Answer {
        /// The task that asked.
        task: String,
        /// The caller's answer.
        message: Box<a2a::Message>,
    },
    /// Changes may have been missed (the feed's connection was lost for a while): whoever
    /// follows tasks reads them again from the store.
    Missed,
    /// This process could not renew its lease for half of it: the tasks it runs are no
    /// longer its own (another process may take them over once the lease runs out), and it
    /// stops them now, before that, acknowledging nothing more of them.
    LeaseLost,
    /// Task `id`, which this process ran, is no longer its own: another process took it over
    /// while this one was stalled past its lease (paused, swapped out, starved) or cut off
    /// from the store, as the process found once it renewed its lease, or as the store found
    /// when it refused the run's writes. Its run here stops, acknowledging nothing more of it
    /// (the store refuses its writes anyway), even one that waits and writes nothing; the
    /// tasks no other process took over go on running here.
    TakenOver(String),
}

/// The feed of a store shared by several processes ([`Store::changes`]): what the store tells
/// of each [`Change`] any process on it makes, as it is made, to every server on the store
/// (each server follows it from when it subscribes). A listener more than the feed's
/// capacity behind misses the oldest changes; a store that knows it missed some (its
/// connection to the database was lost a moment) sends [`Change::Missed`], for the servers to
/// read again what they follow. Cloned, it is the same feed.
///
/// ```
/// use a2a_card::server::store::{Change, ChangeFeed};
///
/// let feed = ChangeFeed::new(1024);
/// // What the store hears from the database (another process wrote task `t-1`):
/// feed.send(Change::Task("t-1".into()));
/// ```
#[derive(Debug, Clone)]
pub struct ChangeFeed(tokio::sync::broadcast::Sender<Change>);

impl ChangeFeed {
    /// A feed that keeps up to `capacity` changes for a listener that lags (at least 1).
    ///
    /// ```
    /// use a2a_card::server::store::ChangeFeed;
    ///
    /// let feed = ChangeFeed::new(4096);
    /// let same = feed.clone(); // the same feed, for the task that hears the database
    /// # drop((feed, same));
    /// ```
    pub fn new(capacity: usize) -> ChangeFeed {
        ChangeFeed(tokio::sync::broadcast::channel(capacity.max(1)).0)
    }

    /// Tells every server on the store of `change` (none listening: nobody is told).
    ///
    /// ```
    /// use a2a_card::server::store::{Change, ChangeFeed};
    ///
    /// let feed = ChangeFeed::new(64);
    /// // Another process logged events of task `t-1`: its subscribers here read them.
    /// feed.send(Change::Events("t-1".into()));
    /// ```
    pub fn send(&self, change: Change) {
        let _ = self.0.send(change);
    }

    /// A listener of the changes from now on.
    pub(crate) fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.0.subscribe()
    }
}

/// A durable task a store took over from a process that stopped ([`Recovery::resumed`]), and
/// the fencing token of the run it gets here.
///
/// ```
/// use a2a::{Task, TaskState, TaskStatus};
/// use a2a_card::server::store::Claimed;
///
/// let task = Task {
///     id: "t".into(),
///     context_id: "c".into(),
///     status: TaskStatus { state: TaskState::InputRequired, message: None, timestamp: None },
///     artifacts: None,
///     history: None,
///     metadata: None,
/// };
/// let claimed = Claimed::new(task, 7);
/// assert_eq!((claimed.task.id.as_str(), claimed.fencing_token), ("t", 7));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Claimed {
    /// The task, as stored when it was claimed.
    pub task: Task,
    /// The fencing token of its run here: larger than that of every run the task had
    /// before, and smaller than that of any run after (the SQL stores: the version the
    /// task's row has once claimed, which every later claim moves on). A handler reads it
    /// with [`SkillContext::fencing_token`](crate::SkillContext::fencing_token).
    pub fencing_token: u64,
}

impl Claimed {
    /// Task `task`, claimed with fencing token `fencing_token`.
    pub fn new(task: Task, fencing_token: u64) -> Self {
        Claimed {
            task,
            fencing_token,
        }
    }
}

/// Where a store's recovery tells the server that opened it what it did with the tasks of a
/// process that stopped ([`Store::recover_into`]): each task it failed, which the server posts
/// to the task's webhooks, and each durable skill's task it took over, which the server runs
/// again from its journal. Cloned freely; told after the server stopped, it is dropped.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use a2a::Task;
/// use a2a_card::server::store::{Recovery, Store};
/// use a2a_server::{InMemoryTaskStore, TaskStore};
///
/// /// A store whose own recovery (not shown) calls `interrupted` for each task it fails.
/// struct Mine {
///     tasks: Arc<InMemoryTaskStore>,
///     recovery: Mutex<Option<Recovery>>,
/// }
///
/// impl Mine {
///     fn interrupted(&self, task: Task) {
///         if let Some(recovery) = &*self.recovery.lock().unwrap() {
///             recovery.failed(task); // the server posts it to the task's webhooks
///         }
///     }
/// }
///
/// #[async_trait::async_trait]
/// impl Store for Mine {
///     fn tasks(&self) -> Arc<dyn TaskStore> {
///         self.tasks.clone()
///     }
///     fn recover_into(&self, recovery: Recovery) {
///         *self.recovery.lock().unwrap() = Some(recovery);
///     }
/// }
/// # let _ = Mine::interrupted;
/// ```
#[derive(Debug, Clone)]
pub struct Recovery {
    failed: tokio::sync::mpsc::UnboundedSender<Task>,
    resumed: tokio::sync::mpsc::UnboundedSender<Claimed>,
}

impl Recovery {
    /// A recovery, and where the server hears what it tells.
    pub(crate) fn new() -> (Recovery, Recovered) {
        let (failed, failed_rx) = tokio::sync::mpsc::unbounded_channel();
        let (resumed, resumed_rx) = tokio::sync::mpsc::unbounded_channel();
        (
            Recovery { failed, resumed },
            Recovered {
                failed: failed_rx,
                resumed: resumed_rx,
            },
        )
    }

    /// The store failed `task`, as its status says, because the process that ran it stopped.
    ///
    /// ```
    /// use a2a::Task;
    /// use a2a_card::server::store::Recovery;
    ///
    /// // Written back as failed, by the store's recovery: the server is told.
    /// fn failed_by_recovery(recovery: &Recovery, task: Task) {
    ///     recovery.failed(task);
    /// }
    /// # let _ = failed_by_recovery;
    /// ```
    pub fn failed(&self, task: Task) {
        let _ = self.failed.send(task);
    }

    /// The store took over durable skill's task `claimed` from a process that stopped, for
    /// this one to run it again from its journal ([`Claimed`]: the task, and the fencing token
    /// of its run here).
    ///
    /// ```
    /// use a2a::Task;
    /// use a2a_card::server::store::{Claimed, Recovery};
    ///
    /// // Claimed by the store's recovery with fencing token `token`: this process runs it again.
    /// fn taken_over(recovery: &Recovery, task: Task, token: u64) {
    ///     recovery.resumed(Claimed::new(task, token));
    /// }
    /// # let _ = taken_over;
    /// ```
    pub fn resumed(&self, claimed: Claimed) {
        let _ = self.resumed.send(claimed);
    }
}

/// What a [`Recovery`] tells, as the server hears it.
pub(crate) struct Recovered {
    /// The tasks failed.
    pub(crate) failed: tokio::sync::mpsc::UnboundedReceiver<Task>,
    /// The durable skills' tasks taken over.
    pub(crate) resumed: tokio::sync::mpsc::UnboundedReceiver<Claimed>,
}

impl Recovered {
    /// These, unless the store kept nothing of its [`Recovery`] (dropped it, having told
    /// nothing: a store that recovers nothing), for the server to follow nothing then.
    pub(crate) fn kept(self) -> Option<Recovered> {
        let dropped = self.failed.is_closed()
            && self.failed.is_empty()
            && self.resumed.is_closed()
            && self.resumed.is_empty();
        (!dropped).then_some(self)
    }

    /// Tells each task to the recovery `to` names for the task's id (none: the task is
    /// dropped), for as long as the store tells.
    pub(crate) fn forward(self, to: impl Fn(&str) -> Option<Recovery> + Send + Sync + 'static) {
        let Recovered {
            mut failed,
            mut resumed,
        } = self;
        let to = Arc::new(to);
        let failed_to = Arc::clone(&to);
        tokio::spawn(async move {
            while let Some(task) = failed.recv().await {
                if let Some(recovery) = failed_to(&task.id) {
                    recovery.failed(task);
                }
            }
        });
        tokio::spawn(async move {
            while let Some(claimed) = resumed.recv().await {
                if let Some(recovery) = to(&claimed.task.id) {
                    recovery.resumed(claimed);
                }
            }
        });
    }
}

/// A task store, as the server uses it: the tasks (the official [`TaskStore`] trait), and what
/// else it keeps and does. The memory, SQLite and Postgres stores are `Store`s; a store of your
/// own implements as much of it as it keeps. What it leaves out, the server does without or
/// keeps in memory:
///
/// | method | without it |
/// |---|---|
/// | [`push_configs`](Self::push_configs) | push configs in memory |
/// | [`events`](Self::events) | a stream resumes with `Last-Event-ID` only while the process that runs the task holds its events |
/// | [`changes`](Self::changes) | each server on the store sees the others' tasks when it reads them, but a cancel does not reach a handler another process runs, nor does a subscriber there follow the task |
/// | [`forward`](Self::forward) | an answer sent to a process whose handler did not ask fails the task, saying why |
/// | [`settle`](Self::settle) | (nothing: a store that writes a task before `create` returns has nothing to settle) |
/// | [`recover_into`](Self::recover_into) | (nothing posted to webhooks for tasks the store failed at start; a durable skill's task of a process that stopped is not run again) |
///
/// A [`TaskStore`] alone is a `Store` (`Arc<dyn TaskStore>`).
///
/// Whose tasks a `ListTasks` lists: a task's id says whose it is (`[AGENT:][TENANT:][OWNER.]ID`:
/// the agent where a [`Host`](crate::server::Host) keeps several agents' tasks, the tenant that made
/// it, and, where the server authenticates its callers, a mark of the caller that owns it; a
/// task of the default tenant of an agent alone, without authentication, has no `:`). The
/// request a store's [`TaskStore::list`] receives names in its `tenant` the prefix of the
/// ids the caller reaches (`acme:`, `planner:acme:`, `acme:3f1c…e2.`): its tasks are those
/// whose id begins with that prefix and has no `:` after it (with `tenant` `None`, those whose
/// id has no `:`). The server drops any other from what a store lists, and checks every id a
/// call names against the caller's prefix before it reads the store.
///
/// ```
/// use std::sync::Arc;
/// use a2a_server::{InMemoryPushConfigStore, InMemoryTaskStore, PushConfigStore, TaskStore};
/// use a2a_card::server::store::{Store, Tasks};
///
/// /// Tasks and push configs of your own.
/// struct Mine {
///     tasks: Arc<InMemoryTaskStore>,
///     configs: Arc<InMemoryPushConfigStore>,
/// }
///
/// #[async_trait::async_trait]
/// impl Store for Mine {
///     fn tasks(&self) -> Arc<dyn TaskStore> {
///         self.tasks.clone()
///     }
///     fn push_configs(&self) -> Option<Arc<dyn PushConfigStore>> {
///         Some(self.configs.clone())
///     }
/// }
///
/// let tasks = Tasks::custom(Mine {
///     tasks: Arc::new(InMemoryTaskStore::new()),
///     configs: Arc::new(InMemoryPushConfigStore::new()),
/// });
/// # drop(tasks);
/// ```
#[async_trait::async_trait]
pub trait Store: Send + Sync + 'static {
    /// The tasks.
    fn tasks(&self) -> Arc<dyn TaskStore>;

    /// The tasks' push-notification configs, where the store keeps them (by default the
    /// server keeps them in memory).
    fn push_configs(&self) -> Option<Arc<dyn a2a_server::PushConfigStore>> {
        None
    }

    /// The tasks' event logs, where the store keeps them (see [`EventLog`]).
    fn events(&self) -> Option<Arc<dyn EventLog>> {
        None
    }

    /// The feed of [`Change`]s any process on the store makes, as they are made, where several
    /// processes share the store: each server follows the others' tasks through it (a cancel
    /// reaches the handler, a subscriber follows the task's log, an answer reaches the handler
    /// that asked). `None`: the store is this process's alone.
    fn changes(&self) -> Option<ChangeFeed> {
        None
    }

    /// Sends the caller's answer `message` to the question of task `task_id` to every process
    /// on the store, as a [`Change::Answer`] on their feeds, for the one whose handler asked;
    /// `Ok(false)` when the store carries no answers (the default).
    async fn forward(&self, task_id: &str, message: &a2a::Message) -> Result<bool, a2a::A2AError> {
        let _ = (task_id, message);
        Ok(false)
    }

    /// Returns once task `task_id` is written, where the store may hold a new task back for a
    /// moment (the SQL stores' group commit): the server settles a task before it tells a
    /// caller of it, so that a crash cannot lose a task a caller knows of. Why not, when the
    /// database refused it (the caller must not hear of the task then).
    async fn settle(&self, task_id: &str) -> Result<(), a2a::A2AError> {
        let _ = task_id;
        Ok(())
    }

    /// Hands the store the [`Recovery`] of the server that opened it, once, at its start:
    /// what the store's recovery does with the tasks of a process that stopped (failed, or,
    /// for durable skills' tasks, taken over to run again here), from then on and since the
    /// store opened, it tells there. By default nothing: a store that recovers nothing.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use a2a_card::server::store::{Recovery, Store};
    /// use a2a_server::{InMemoryTaskStore, TaskStore};
    ///
    /// /// A store whose recovery finds nothing to do, for the example's sake.
    /// struct Mine(Arc<InMemoryTaskStore>);
    ///
    /// #[async_trait::async_trait]
    /// impl Store for Mine {
    ///     fn tasks(&self) -> Arc<dyn TaskStore> {
    ///         self.0.clone()
    ///     }
    ///     fn recover_into(&self, recovery: Recovery) {
    ///         // Kept, and told of each task the recovery fails (`recovery.failed(task)`) or
    ///         // takes over (`recovery.resumed(claimed)`), for as long as the store runs.
    ///         drop(recovery);
    ///     }
    /// }
    /// # drop(Mine(Arc::new(InMemoryTaskStore::new())));
    /// ```
    fn recover_into(&self, recovery: Recovery) {
        let _ = recovery;
    }

    /// Counts one more request of `key` in the window of `window_ms` milliseconds that began
    /// at `start_ms` (Unix time), for every process on the store (the agent's requests per
    /// window, see [`Limits`](crate::server::Limits)): the requests of `key` counted in that window so
    /// far, this one included. `Ok(None)` (the default): the store does not count, and each
    /// process counts its own. Postgres counts for its replicas.
    ///
    /// ```
    /// use a2a_card::server::store::{Store, Tasks};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// // Memory: each process counts its own.
    /// let tasks: std::sync::Arc<dyn a2a_server::TaskStore> = Tasks::memory().open().await.unwrap();
    /// assert_eq!(tasks.hit("caller/alice", 0, 60_000).await.unwrap(), None);
    /// # })
    /// ```
    async fn hit(
        &self,
        key: &str,
        start_ms: i64,
        window_ms: i64,
    ) -> Result<Option<u64>, a2a::A2AError> {
        let _ = (key, start_ms, window_ms);
        Ok(None)
    }

    /// Keeps idempotency key `key` (already scoped to its caller: a digest) for the task
    /// `task_id` a send with message digest `digest` is about to make, unless the key is
    /// kept already: then the task and digest it was kept with
    /// ([`crate::idempotency`]). Atomic across every process that shares the store. By
    /// default [`KeyClaim::NotKept`]: the server keeps the key in its process.
    ///
    /// ```
    /// use a2a_card::server::store::{KeyClaim, Store, Tasks};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// // The memory store leaves keys to the server's process.
    /// let tasks: std::sync::Arc<dyn a2a_server::TaskStore> = Tasks::memory().open().await.unwrap();
    /// assert_eq!(tasks.claim_key("k", "t-1", "d").await.unwrap(), KeyClaim::NotKept);
    /// # })
    /// ```
    async fn claim_key(
        &self,
        key: &str,
        task_id: &str,
        digest: &str,
    ) -> Result<KeyClaim, a2a::A2AError> {
        let _ = (key, task_id, digest);
        Ok(KeyClaim::NotKept)
    }

    /// This process stops: what it wrote is written, and the tasks it still holds (those of
    /// durable skills, whose handlers it dropped) are given up at once, so that another
    /// process on the store takes them over now rather than once this one's lease runs out.
    /// A server calls it last, at the end of its drain
    /// ([`Listening::serve`](crate::server::Listening::serve)), and writes nothing more. By default,
    /// nothing.
    ///
    /// ```
    /// use a2a_card::server::store::{Store, Tasks};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// // The memory store holds nothing another process could take over.
    /// let tasks: std::sync::Arc<dyn a2a_server::TaskStore> = Tasks::memory().open().await.unwrap();
    /// tasks.release().await.unwrap();
    /// # })
    /// ```
    async fn release(&self) -> Result<(), a2a::A2AError> {
        Ok(())
    }

    /// Whether the store answered when it was last asked, as far as the store knows without
    /// asking now (the SQL stores: their last lease renewal, every third of the lease). A
    /// served listener's `/readyz` answers `503` while it did not. By default, `true`.
    ///
    /// ```
    /// use a2a_card::server::store::{Store, Tasks};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let tasks: std::sync::Arc<dyn a2a_server::TaskStore> = Tasks::memory().open().await.unwrap();
    /// assert!(tasks.reachable());
    /// # })
    /// ```
    fn reachable(&self) -> bool {
        true
    }

    /// The processes serving the store's tasks, as the store last saw them (each with its
    /// lease and the running tasks it owns), where the store keeps them: the SQL stores do
    /// (Postgres: every replica; SQLite: this process). `Ok(None)` (the default): the store
    /// keeps no replicas (the memory store: one process). The operators' console shows them.
    ///
    /// ```
    /// use a2a_card::server::store::{Store, Tasks};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let tasks: std::sync::Arc<dyn a2a_server::TaskStore> = Tasks::memory().open().await.unwrap();
    /// assert!(tasks.replicas().await.unwrap().is_none());
    /// # })
    /// ```
    async fn replicas(&self) -> Result<Option<Vec<super::Replica>>, a2a::A2AError> {
        Ok(None)
    }
}

impl Store for Arc<dyn TaskStore> {
    fn tasks(&self) -> Arc<dyn TaskStore> {
        Arc::clone(self)
    }
}

/// What [`Store::claim_key`] found.
///
/// ```
/// use a2a_card::server::store::KeyClaim;
///
/// // What a store answers for a key a send already used (the server then compares digests).
/// let claim = KeyClaim::Taken { task_id: "t-1".into(), digest: "9f2c".into() };
/// assert!(matches!(claim, KeyClaim::Taken { ref task_id, .. } if task_id == "t-1"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyClaim {
    /// The key is new: it is kept for the task now.
    New,
    /// The key was kept already, for this task and message digest.
    Taken {
        /// The task the key was kept for.
        task_id: String,
        /// The digest of the message that made it.
        digest: String,
    },
    /// The store keeps no keys.
    NotKept,
}

/// What a store says when its database does not answer (or cannot be reached): an internal
/// error whose message begins so. A passing fault, not one of the task: the same call may
/// succeed later.
pub(crate) const UNAVAILABLE: &str = "the task store is unavailable";

/// Whether `e` is a store's [`UNAVAILABLE`].
pub(crate) fn unavailable(e: &a2a::A2AError) -> bool {
    e.message.starts_with(UNAVAILABLE)
}
