//! Where the server keeps tasks: in memory (bounded), in a SQLite file (feature `sqlite`), or
//! in Postgres for several replicas (feature `postgres`), and for how long.
//!
//! ```
//! use std::time::Duration;
//! use a2a_card::server::store::{Retention, Tasks};
//!
//! let tasks = Tasks::memory();                                   // bounded, lost on restart
//! # #[cfg(feature = "sqlite")]
//! let tasks = Tasks::sqlite("tasks.db");                         // one file, survives restarts
//! let tasks = tasks.retention(Retention::default().max_age(Duration::from_secs(3600)));
//! # drop(tasks);
//! ```
//!
//! Every store keeps the official task-store semantics: a terminal state is final (an update
//! that would leave it fails), `begin_cancel` checks and cancels in one step, `list` filters
//! by context, state and status time and pages by an opaque token. Retention applies to
//! terminal tasks only: those older than [`Retention::max_age`] go, and beyond
//! [`Retention::max_terminal`] the oldest go first; tasks still running are never removed.
//!
//! **Several replicas.** With [`Tasks::postgres`], any number of server processes share one
//! database (no shared memory, no cluster of our own): each sees every task (`GetTask`,
//! `ListTasks`); a `CancelTask` on one reaches the handler running on another (the store
//! announces each change with Postgres `NOTIFY`, and each replica `LISTEN`s); a
//! `SubscribeToTask` on a replica that does not run the task follows the task's event log,
//! which the SQL stores keep (each event with the number the running replica gave it, so that
//! `Last-Event-ID` resumes a stream on any replica and after a restart); and when a replica dies, the others
//! fail its running tasks once its lease runs out ([`SqlTasks`]). An answer to a question a
//! handler asks may go to any replica: it is forwarded (`NOTIFY`) to the one that runs the
//! handler, so no sticky routing is needed.

mod apply;
mod ids;
mod memory;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod notify;
mod size;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use a2a::Task;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use a2a::TaskState;
use a2a_server::TaskStore;

pub(crate) use apply::{apply, asks, stamp};
pub(crate) use ids::{ANONYMOUS, Place, hex, mark, namespace_of, prefix, reaches};
pub use memory::MemoryTasks;
pub(crate) use size::{event_bytes, task_bytes};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use sql::{DEFAULT_LEASE, SqlPushConfigs, SqlTasks};

/// How long finished tasks are kept.
///
/// The default keeps a terminal task for a day, and at most 10,000 of them (in memory, at most
/// 64 MiB of them too): enough for callers to fetch results, while memory and disk stay
/// bounded under any load, whatever the rate and whatever the tasks hold.
///
/// ```
/// use std::time::Duration;
/// use a2a_card::server::store::Retention;
///
/// let retention = Retention::default()
///     .max_age(Duration::from_secs(3600))
///     .max_terminal(1_000)
///     .max_bytes(16 << 20);
/// assert_eq!(retention.count_limit(), Some(1_000));
/// assert_eq!(retention.bytes_limit(), Some(16 << 20));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    max_age: Option<Duration>,
    max_terminal: Option<usize>,
    max_bytes: Option<usize>,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            max_age: Some(Duration::from_secs(24 * 3600)),
            max_terminal: Some(10_000),
            max_bytes: Some(64 << 20),
        }
    }
}

impl Retention {
    /// Keeps every task forever (memory and disk grow with every task).
    pub fn forever() -> Self {
        Retention {
            max_age: None,
            max_terminal: None,
            max_bytes: None,
        }
    }

    /// Keeps at most about `bytes` of terminal tasks in memory, removing the oldest first (the
    /// [memory store](Tasks::memory)'s bound: a task that streamed a long answer weighs what it
    /// holds; a database keeps its tasks on disk, bounded by count and age).
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = Some(bytes);
        self
    }

    /// The bytes limit of the memory store, if any.
    pub fn bytes_limit(&self) -> Option<usize> {
        self.max_bytes
    }

    /// Removes terminal tasks that finished longer ago than `age`.
    pub fn max_age(mut self, age: Duration) -> Self {
        self.max_age = Some(age);
        self
    }

    /// Keeps at most `count` terminal tasks, removing the oldest first.
    pub fn max_terminal(mut self, count: usize) -> Self {
        self.max_terminal = Some(count);
        self
    }

    /// The age limit, if any.
    pub fn age_limit(&self) -> Option<Duration> {
        self.max_age
    }

    /// The count limit, if any.
    pub fn count_limit(&self) -> Option<usize> {
        self.max_terminal
    }
}

/// Which task store a server uses; see the [module docs](self).
#[derive(Clone)]
#[non_exhaustive]
pub enum Tasks {
    /// In memory, bounded by its retention.
    Memory(Retention),
    /// A SQL database: a SQLite file (created when missing, WAL) or Postgres.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    Sql {
        /// The sqlx URL (`sqlite://FILE?mode=rwc`, `postgres://...`).
        url: String,
        /// How long finished tasks are kept.
        retention: Retention,
        /// How long a replica that stopped renewing still owns its running tasks.
        lease: Duration,
    },
    /// A store of your own ([`Tasks::custom`]).
    Custom(Arc<dyn Store>),
}

impl fmt::Debug for Tasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tasks::Memory(r) => f.debug_tuple("Memory").field(r).finish(),
            #[cfg(any(feature = "sqlite", feature = "postgres"))]
            Tasks::Sql {
                url,
                retention,
                lease,
            } => f
                .debug_struct("Sql")
                .field("url", &sql::redact(url))
                .field("retention", retention)
                .field("lease", lease)
                .finish(),
            Tasks::Custom(_) => f.write_str("Custom(..)"),
        }
    }
}

/// A change that a process made to a shared store, as the store's change feed tells every
/// process on it ([`Store::changes`]).
///
/// ```
/// use a2a_card::server::store::Change;
/// use tokio::sync::broadcast;
///
/// // A store of your own shared by several processes announces what each writes.
/// let (feed, mut heard) = broadcast::channel(64);
/// feed.send(Change::Task("t-1".into())).unwrap();
/// assert_eq!(heard.try_recv().unwrap(), Change::Task("t-1".into()));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Change {
    /// Task `id` was written (its status or what it holds changed).
    Task(String),
    /// Task `id`'s event log grew.
    Events(String),
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
/// | [`recovered`](Self::recovered) | (nothing posted to webhooks for tasks the store failed at start) |
///
/// A [`TaskStore`] alone is a `Store` (`Arc<dyn TaskStore>`).
///
/// Whose tasks a `ListTasks` lists: a task's id says whose it is (`[AGENT:][TENANT:][OWNER.]ID`:
/// the agent where a [`Host`](super::Host) keeps several agents' tasks, the tenant that made
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
    fn changes(&self) -> Option<tokio::sync::broadcast::Sender<Change>> {
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

    /// The tasks the store fails because the process that ran them stopped (recovery), as it
    /// fails them, once: the server posts each failure to the task's webhooks.
    fn recovered(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<Task>> {
        None
    }

    /// The tasks of durable skills (those with a journal, see [`EventLog::keeps_journals`])
    /// that the store took over from a process that stopped (recovery), as it takes them,
    /// once: this process runs each again from its journal, instead of failing it.
    ///
    /// ```
    /// use a2a_card::server::store::{Store, Tasks};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// // The memory store keeps nothing past its process: no task to take over.
    /// let tasks: std::sync::Arc<dyn a2a_server::TaskStore> = Tasks::memory().open().await.unwrap();
    /// assert!(tasks.resumed().is_none());
    /// # })
    /// ```
    fn resumed(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<Task>> {
        None
    }

    /// Counts one more request of `key` in the window of `window_ms` milliseconds that began
    /// at `start_ms` (Unix time), for every process on the store (the agent's requests per
    /// window, see [`Limits`](super::Limits)): the requests of `key` counted in that window so
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
    /// ([`Listening::serve`](super::Listening::serve)), and writes nothing more. By default,
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

/// The tasks' events as a store keeps them, numbered as the server numbers them (a task is
/// its own event 0; each later event of the task, in order, is 1, 2, ...): with it, a stream
/// resumes (`Last-Event-ID`) from the store after a restart and on any process that shares
/// it. The SQL stores keep one; a [`Store`] of your own may.
///
/// The server calls [`append`](Self::append) for every event, in order, and
/// [`update_at`](Self::update_at) instead of [`TaskStore::update`] for each change of what
/// the task holds (a status, a whole artifact); a reader calls [`read`](Self::read).
///
/// An event log in memory beside a task store (a sketch of what a database-backed one does
/// with a table of events and a column for the task's event number):
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::{Arc, Mutex};
/// use a2a::{A2AError, Task};
/// use a2a_server::{InMemoryTaskStore, TaskStore};
/// use a2a_card::server::store::{Event, EventLog, Logged};
///
/// #[derive(Default)]
/// struct Log {
///     tasks: Arc<InMemoryTaskStore>,
///     /// Each task's events by number, and the number its stored task is at.
///     events: Mutex<HashMap<String, (u64, Vec<(u64, Arc<Event>)>)>>,
/// }
///
/// #[async_trait::async_trait]
/// impl EventLog for Log {
///     fn append(&self, task_id: &str, seq: u64, event: &Arc<Event>) {
///         let mut events = self.events.lock().unwrap();
///         events.entry(task_id.to_owned()).or_default().1.push((seq, Arc::clone(event)));
///     }
///
///     async fn update_at(&self, task: Task, seq: u64) -> Result<(), A2AError> {
///         self.events.lock().unwrap().entry(task.id.clone()).or_default().0 = seq;
///         self.tasks.update(task).await.map(drop)
///     }
///
///     async fn read(&self, task_id: &str, after: Option<u64>) -> Result<Option<Logged>, A2AError> {
///         let Some(task) = self.tasks.get(task_id).await? else { return Ok(None) };
///         let events = self.events.lock().unwrap();
///         let (at, logged) = events.get(task_id).cloned().unwrap_or_default();
///         let after = after.unwrap_or(at);
///         let events = logged.into_iter().filter(|(n, _)| *n > after).collect();
///         Ok(Some(Logged::new(task, at, events)))
///     }
/// }
/// # drop(Log::default());
/// ```
#[async_trait::async_trait]
pub trait EventLog: Send + Sync {
    /// Keeps event `seq` of task `task_id` (its JSON, [`Event::json`], is what a log row
    /// holds). Called on the server's event path: it must not block (queue the write); the
    /// events of a task must be readable, in order, once the task's next
    /// [`update_at`](Self::update_at) returns.
    fn append(&self, task_id: &str, seq: u64, event: &Arc<Event>);

    /// Writes `task` as it is after its event `seq` (as [`TaskStore::update`] does, and
    /// remembering `seq` for [`read`](Self::read)).
    async fn update_at(&self, task: Task, seq: u64) -> Result<(), a2a::A2AError>;

    /// Task `task_id` as stored, the number of the last event the stored task reflects, and
    /// the events kept after `after` (by default, after that number), in order. `None` for a
    /// task the store does not have.
    async fn read(
        &self,
        task_id: &str,
        after: Option<u64>,
    ) -> Result<Option<Logged>, a2a::A2AError>;

    /// Whether the log keeps the journals of durable skills (`#[skill(durable)]`), with which
    /// their tasks resume after their process stops ([`journal`](Self::journal),
    /// [`read_journal`](Self::read_journal), and [`Store::resumed`]). By default no: a durable
    /// skill then runs as any other.
    ///
    /// A log that keeps journals beside its events (in memory here, for the sketch: a
    /// database keeps them as rows of the task, written with its events):
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use std::sync::{Arc, Mutex};
    /// use a2a::{A2AError, Task};
    /// use a2a_card::server::store::{Event, EventLog, Logged};
    ///
    /// #[derive(Default)]
    /// struct Journals {
    ///     /// Each task's journal entries, by number.
    ///     entries: Mutex<HashMap<String, Vec<(u64, String)>>>,
    /// }
    ///
    /// #[async_trait::async_trait]
    /// impl EventLog for Journals {
    ///     # fn append(&self, _: &str, _: u64, _: &Arc<Event>) {}
    ///     # async fn update_at(&self, _: Task, _: u64) -> Result<(), A2AError> { Ok(()) }
    ///     # async fn read(&self, _: &str, _: Option<u64>) -> Result<Option<Logged>, A2AError> { Ok(None) }
    ///     fn keeps_journals(&self) -> bool {
    ///         true
    ///     }
    ///
    ///     fn journal(&self, task_id: &str, n: u64, entry: &str) {
    ///         let mut entries = self.entries.lock().unwrap();
    ///         entries.entry(task_id.to_owned()).or_default().push((n, entry.to_owned()));
    ///     }
    ///
    ///     async fn journal_written(&self, _task_id: &str, _n: u64) -> Result<(), A2AError> {
    ///         Ok(()) // kept as soon as `journal` returns
    ///     }
    ///
    ///     async fn read_journal(&self, task_id: &str) -> Result<Vec<(u64, String)>, A2AError> {
    ///         let mut entries = self.entries.lock().unwrap().get(task_id).cloned().unwrap_or_default();
    ///         entries.sort_by_key(|(n, _)| *n);
    ///         Ok(entries)
    ///     }
    /// }
    /// # drop(Journals::default());
    /// ```
    fn keeps_journals(&self) -> bool {
        false
    }

    /// Keeps entry `n` of task `task_id`'s journal (JSON the server reads back: entry 0 is
    /// what the task runs, each later one what its handler did), in order with the task's
    /// events, and written soon (the SQL stores: within the writer's linger of 2 ms, not held
    /// back until the task's next write; a step whose result is not written yet runs again
    /// after a crash). As [`append`](Self::append), it must not block.
    fn journal(&self, task_id: &str, n: u64, entry: &str) {
        let _ = (task_id, n, entry);
    }

    /// Returns once the journal entries of task `task_id` queued so far are written (an
    /// answer is kept before its handler has it); an error when entry `n` was not (the
    /// store refused it, or cannot be reached): the answer is then not handed over, and its
    /// caller is told so.
    async fn journal_written(&self, task_id: &str, n: u64) -> Result<(), a2a::A2AError> {
        let _ = (task_id, n);
        Ok(())
    }

    /// Task `task_id`'s journal: each entry written, with its number, in order of number.
    async fn read_journal(&self, task_id: &str) -> Result<Vec<(u64, String)>, a2a::A2AError> {
        let _ = task_id;
        Ok(Vec::new())
    }

    /// Gives up this process's claim on running task `task_id`, whose run here stopped (the
    /// store refused a write of it), so that the store's recovery takes it over without
    /// waiting for this process's lease to run out: a durable skill's task runs again from its
    /// journal (on this process or another), any other fails saying why. A claim another
    /// process took since is left as it is. By default nothing (a store of one process
    /// recovers its tasks at its next start).
    async fn give_up(&self, task_id: &str) -> Result<(), a2a::A2AError> {
        let _ = task_id;
        Ok(())
    }
}

/// A task's event as the server records it: the event, and its JSON (the A2A 1.0
/// `StreamResponse`), made once, when first needed, and shared by whatever writes it: the
/// frames of every stream that carries it, the store's log row, the webhooks' bodies.
///
/// ```
/// use a2a::{StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent};
/// use a2a_card::server::store::Event;
///
/// let update = TaskStatusUpdateEvent {
///     task_id: "t".into(),
///     context_id: "c".into(),
///     status: TaskStatus { state: TaskState::Working, message: None, timestamp: None },
///     metadata: None,
/// };
/// let event = Event::new(StreamResponse::StatusUpdate(update));
/// assert!(event.json().starts_with(r#"{"statusUpdate":"#));
/// ```
#[derive(Debug)]
pub struct Event {
    event: a2a::StreamResponse,
    json: std::sync::OnceLock<String>,
}

impl Event {
    /// `event`, its JSON to be made when first asked for.
    pub fn new(event: a2a::StreamResponse) -> Event {
        Event {
            event,
            json: std::sync::OnceLock::new(),
        }
    }

    /// `event` with its JSON as already written (read back from a log): `json` must be
    /// `event` serialised.
    pub fn with_json(event: a2a::StreamResponse, json: String) -> Event {
        Event {
            event,
            json: json.into(),
        }
    }

    /// A journal entry's row in an event log that keeps journals below its events (numbers
    /// under 0, which no reader of events reads): `json` is what is written; the event is
    /// never read.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn journal_row(json: String) -> Event {
        let placeholder = a2a::StreamResponse::Message(a2a::Message::new(a2a::Role::Agent, vec![]));
        Event::with_json(placeholder, json)
    }

    /// The event.
    pub fn event(&self) -> &a2a::StreamResponse {
        &self.event
    }

    /// The event's JSON, made once.
    pub fn json(&self) -> &str {
        self.json.get_or_init(|| {
            // The `a2a` types always serialise.
            serde_json::to_string(&self.event).unwrap_or_default()
        })
    }
}

impl From<a2a::StreamResponse> for Event {
    fn from(event: a2a::StreamResponse) -> Event {
        Event::new(event)
    }
}

/// What [`EventLog::read`] finds.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Logged {
    /// The task as stored.
    pub task: Task,
    /// The number of the last event `task` reflects.
    pub seq: u64,
    /// The events asked for, with their numbers, in order.
    pub events: Vec<(u64, Arc<Event>)>,
}

impl Logged {
    /// The task as stored at its event `seq`, and the `events` after the point asked for.
    ///
    /// ```
    /// use a2a::{Task, TaskState, TaskStatus};
    /// use a2a_card::server::store::Logged;
    ///
    /// let task = Task {
    ///     id: "t".into(),
    ///     context_id: "c".into(),
    ///     status: TaskStatus { state: TaskState::Working, message: None, timestamp: None },
    ///     artifacts: None,
    ///     history: None,
    ///     metadata: None,
    /// };
    /// let logged = Logged::new(task, 2, Vec::new()); // stored at event 2, nothing after it
    /// assert_eq!(logged.seq, 2);
    /// ```
    pub fn new(task: Task, seq: u64, events: Vec<(u64, Arc<Event>)>) -> Logged {
        Logged { task, seq, events }
    }
}

impl Tasks {
    /// Tasks in memory, with the default [`Retention`].
    pub fn memory() -> Tasks {
        Tasks::Memory(Retention::default())
    }

    /// Tasks in a store of your own (see [`Store`]; an `Arc<dyn TaskStore>` is one).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use a2a_server::{InMemoryTaskStore, TaskStore};
    /// use a2a_card::server::store::Tasks;
    ///
    /// let shared: Arc<dyn TaskStore> = Arc::new(InMemoryTaskStore::new());
    /// let tasks = Tasks::custom(Arc::clone(&shared)); // servers on `shared` see each other's tasks
    /// # drop(tasks);
    /// ```
    pub fn custom(store: impl Store) -> Tasks {
        Tasks::Custom(Arc::new(store))
    }

    /// Tasks in the SQLite file at `path`, with the default [`Retention`].
    #[cfg(feature = "sqlite")]
    pub fn sqlite(path: impl AsRef<std::path::Path>) -> Tasks {
        Tasks::Sql {
            url: sql::sqlite_url(path.as_ref()),
            retention: Retention::default(),
            lease: DEFAULT_LEASE,
        }
    }

    /// Tasks in the Postgres database at `url`, shared by every replica that uses it.
    #[cfg(feature = "postgres")]
    pub fn postgres(url: impl Into<String>) -> Tasks {
        Tasks::Sql {
            url: url.into(),
            retention: Retention::default(),
            lease: DEFAULT_LEASE,
        }
    }

    /// Tasks from a URL, as a `--tasks` flag takes it: `memory`, `sqlite:PATH`,
    /// `sqlite://PATH`, or `postgres://...` / `postgresql://...`.
    ///
    /// ```
    /// use a2a_card::server::store::Tasks;
    /// assert!(matches!(Tasks::from_url("memory"), Ok(Tasks::Memory(_))));
    /// assert!(Tasks::from_url("mysql://db").is_err());
    /// ```
    pub fn from_url(url: &str) -> Result<Tasks, String> {
        let url = url.trim();
        if url == "memory" || url == "memory:" {
            return Ok(Tasks::memory());
        }
        if let Some(path) = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            let path = path.split('?').next().unwrap_or_default();
            #[cfg(feature = "sqlite")]
            return match path {
                "" => Err("`sqlite:` needs a file path, e.g. sqlite://tasks.db".to_owned()),
                path => Ok(Tasks::sqlite(path)),
            };
            #[cfg(not(feature = "sqlite"))]
            return Err(format!(
                "`{path}`: this build has no SQLite store (enable the `sqlite` feature of a2a-card)"
            ));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            #[cfg(feature = "postgres")]
            return Ok(Tasks::postgres(url));
            #[cfg(not(feature = "postgres"))]
            return Err(
                "this build has no Postgres store (enable the `postgres` feature of a2a-card)"
                    .to_owned(),
            );
        }
        Err(format!(
            "`{url}` is not a task store: use `memory`, `sqlite://PATH` or `postgres://...`"
        ))
    }

    /// The same store with another retention (no effect on a custom store).
    pub fn retention(self, retention: Retention) -> Tasks {
        match self {
            Tasks::Memory(_) => Tasks::Memory(retention),
            #[cfg(any(feature = "sqlite", feature = "postgres"))]
            Tasks::Sql { url, lease, .. } => Tasks::Sql {
                url,
                retention,
                lease,
            },
            custom => custom,
        }
    }

    /// The same store with another lease (SQL stores; see [`SqlTasks`]): how long a replica
    /// that stopped renewing still owns its running tasks ([`DEFAULT_LEASE`]).
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub fn lease(self, lease: Duration) -> Tasks {
        match self {
            Tasks::Sql { url, retention, .. } => Tasks::Sql {
                url,
                retention,
                lease,
            },
            other => other,
        }
    }

    /// Opens the store: creates or migrates the database, and fails the tasks of replicas
    /// that stopped (see [`SqlTasks`]).
    pub async fn open(&self) -> Result<Arc<dyn TaskStore>, StoreError> {
        Ok(self.open_store(false).await?.tasks())
    }

    /// Opens the store; `serving`: for a server (which [settles](Store::settle) new tasks,
    /// and follows the other replicas' [changes](Store::changes)).
    #[cfg_attr(
        not(any(feature = "sqlite", feature = "postgres")),
        allow(unused_variables)
    )]
    pub(crate) async fn open_store(&self, serving: bool) -> Result<Arc<dyn Store>, StoreError> {
        match self {
            Tasks::Memory(retention) => {
                let tasks: Arc<dyn TaskStore> = Arc::new(MemoryTasks::new(*retention));
                Ok(Arc::new(tasks))
            }
            #[cfg(any(feature = "sqlite", feature = "postgres"))]
            Tasks::Sql {
                url,
                retention,
                lease,
            } => {
                let dialect = if url.starts_with("sqlite:") {
                    sql::Dialect::Sqlite
                } else {
                    sql::Dialect::Postgres
                };
                let store = SqlTasks::open(url, dialect, *retention, *lease, serving).await?;
                store.recover().await?;
                Ok(Arc::new(store))
            }
            Tasks::Custom(store) => Ok(Arc::clone(store)),
        }
    }
}

/// Why a task store cannot be opened or used.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// The database cannot be reached or opened.
    Unavailable(String),
    /// The database holds something other than this crate's tasks; it is left untouched.
    Foreign(String),
    /// The database was made by a newer release (its schema version is higher than this one
    /// knows); it is left untouched.
    Newer {
        /// Its schema version.
        found: i64,
        /// The newest this release knows.
        known: i64,
    },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Unavailable(m) => write!(f, "the task store cannot be opened: {m}"),
            StoreError::Foreign(m) => write!(
                f,
                "the task store is not an a2a-card task database ({m}); it was left as it is: point the server at another file"
            ),
            StoreError::Newer { found, known } => write!(
                f,
                "the task store has schema version {found}, newer than this release knows ({known}); it was left as it is: run the newer release, or use another file"
            ),
        }
    }
}

impl std::error::Error for StoreError {}

/// The status message of a task that was running when its process stopped.
pub const INTERRUPTED: &str = "the agent stopped while this task was running (its process ended); send the request again as a new task";

/// Whether a state is one a handler was busy in (and so cannot be anymore after a restart).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn was_running(state: &TaskState) -> bool {
    matches!(
        state,
        TaskState::Submitted
            | TaskState::Working
            | TaskState::InputRequired
            | TaskState::AuthRequired
    )
}

/// The status update that tells of `task`'s status as it is.
pub(crate) fn status_update(task: &Task) -> a2a::StreamResponse {
    a2a::StreamResponse::StatusUpdate(a2a::TaskStatusUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone(),
        status: task.status.clone(),
        metadata: None,
    })
}

/// `task` marked failed because its process stopped.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn interrupted(mut task: Task) -> Task {
    let mut message = a2a::Message::new(a2a::Role::Agent, vec![a2a::Part::text(INTERRUPTED)]);
    message.task_id = Some(task.id.clone());
    message.context_id = Some(task.context_id.clone());
    task.status = a2a::TaskStatus {
        state: TaskState::Failed,
        message: Some(message),
        timestamp: Some(chrono::Utc::now()),
    };
    task
}

/// Whether `task` passes the filters of a `ListTasks` request (the tasks of the caller's
/// reach only: see [`Store`] on the request's `tenant`).
pub(crate) fn matches(req: &a2a::ListTasksRequest, task: &Task) -> bool {
    ids::reaches(req.tenant.as_deref().unwrap_or(""), &task.id)
        && req
            .context_id
            .as_ref()
            .is_none_or(|c| *c == task.context_id)
        && req.status.as_ref().is_none_or(|s| *s == task.status.state)
        && req
            .status_timestamp_after
            .is_none_or(|after| task.status.timestamp.is_some_and(|t| t > after))
}

/// The page of `tasks` a `ListTasks` request asks for: newest status first (then id,
/// descending), from the request's cursor, history cut to `historyLength`, artifacts left out
/// unless `includeArtifacts`.
pub(crate) fn page(
    mut tasks: Vec<Task>,
    req: &a2a::ListTasksRequest,
) -> Result<a2a::ListTasksResponse, a2a::A2AError> {
    let cursor = Cursor::parse(req.page_token.as_deref())?;
    let total = tasks.len();
    let mut keyed: Vec<(String, Task)> = tasks.drain(..).map(|t| (status_at(&t), t)).collect();
    keyed.sort_by(|(a, x), (b, y)| b.cmp(a).then_with(|| y.id.cmp(&x.id)));
    let size = a2a_server::pagination::resolve_page_size(req.page_size);
    let mut rest = keyed
        .into_iter()
        .filter(|(at, t)| cursor.as_ref().is_none_or(|c| c.precedes(at, &t.id)));
    let page: Vec<(String, Task)> = rest.by_ref().take(size).collect();
    let more = rest.next().is_some();
    Ok(a2a::ListTasksResponse {
        next_page_token: match page.last() {
            Some((at, t)) if more => Cursor::token(at, &t.id),
            _ => String::new(),
        },
        tasks: page.into_iter().map(|(_, t)| shape(t, req)).collect(),
        page_size: size as i32,
        total_size: total as i32,
    })
}

/// When a task's status last changed, as the stores keep and compare it (RFC 3339; empty when
/// the task has no timestamp).
pub(crate) fn status_at(task: &Task) -> String {
    task.status
        .timestamp
        .map(|t| t.to_rfc3339())
        .unwrap_or_default()
}

/// Where the next page of a `ListTasks` starts: after the task last listed, in the list's
/// order (newest status first, then id). A cursor, not an offset: tasks created meanwhile do
/// not shift the pages that follow.
pub(crate) struct Cursor {
    pub(crate) at: String,
    pub(crate) id: String,
}

impl Cursor {
    /// The opaque token of the cursor after the task with status time `at` and id `id`.
    pub(crate) fn token(at: &str, id: &str) -> String {
        use base64::Engine as _;
        let json = serde_json::json!([at, id]).to_string();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }

    /// The cursor a page token stands for (`None` for the first page).
    pub(crate) fn parse(token: Option<&str>) -> Result<Option<Cursor>, a2a::A2AError> {
        use base64::Engine as _;
        let token = match token {
            None | Some("") => return Ok(None),
            Some(token) => token,
        };
        let invalid = || {
            a2a::A2AError::invalid_params(
                "`pageToken` is not a token this agent gave: pass the `nextPageToken` of the page before",
            )
        };
        let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(token)
            .map_err(|_| invalid())?;
        let (at, id): (String, String) = serde_json::from_slice(&json).map_err(|_| invalid())?;
        Ok(Some(Cursor { at, id }))
    }

    /// Whether the task with status time `at` and id `id` comes after the cursor.
    fn precedes(&self, at: &str, id: &str) -> bool {
        at < self.at.as_str() || (at == self.at && id < self.id.as_str())
    }
}

/// A listed task as the request wants it.
pub(crate) fn shape(mut task: Task, req: &a2a::ListTasksRequest) -> Task {
    if let (Some(n), Some(history)) = (req.history_length, task.history.as_mut()) {
        let keep = usize::try_from(n.max(0)).unwrap_or(0);
        if history.len() > keep {
            history.drain(..history.len() - keep);
        }
    }
    if req.include_artifacts == Some(false) {
        task.artifacts = None;
    }
    task
}
