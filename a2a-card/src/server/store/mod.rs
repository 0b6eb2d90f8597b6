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

//!
//! The parts: the [`Store`] trait a store implements and the [`Change`]s it announces
//! (`contract`), the tasks' event logs and journals ([`EventLog`], `event_log`), how an event
//! changes a task (`apply`), `ListTasks` as every store answers it (`listing`), whose a task is
//! by its id (`ids`), and the stores: in memory (`memory`) and SQL (`sql`).

mod apply;
mod contract;
mod event_log;
mod ids;
mod listing;
mod memory;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod notify;
mod replicas;
mod size;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use a2a_server::TaskStore;

pub(crate) use apply::{apply, apply_owned, asks, stamp, status_update};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use apply::{interrupted, was_running};
pub use contract::{Change, ChangeFeed, Claimed, KeyClaim, Recovery, Store};
pub(crate) use contract::{Recovered, unavailable};
pub use event_log::{Event, EventLog, Logged};
pub(crate) use ids::{ANONYMOUS, Place, hex, mark, namespace_of, prefix, reaches};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use listing::{Cursor, shape, status_at};
pub(crate) use listing::{matches, page};
pub use memory::MemoryTasks;
pub use replicas::Replica;
pub(crate) use size::{event_bytes, task_bytes};
#[cfg(feature = "sqlite")]
pub use sql::SQLITE_LOG_LIMIT;
#[cfg(all(feature = "sqlite", feature = "testing"))]
pub(crate) use sql::sqlite_url;
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
        Ok(self.open_store(false).await?.store.tasks())
    }

    /// Opens the store; `serving`: for a server (which [settles](Store::settle) new tasks,
    /// and follows the other replicas' [changes](Store::changes)).
    #[cfg_attr(
        not(any(feature = "sqlite", feature = "postgres")),
        allow(unused_variables)
    )]
    pub(crate) async fn open_store(&self, serving: bool) -> Result<Opened, StoreError> {
        let (store, memory): (Arc<dyn Store>, _) = match self {
            Tasks::Memory(retention) => {
                let memory = Arc::new(MemoryTasks::new(*retention));
                let tasks: Arc<dyn TaskStore> = Arc::clone(&memory) as _;
                (Arc::new(tasks), Some(memory))
            }
            #[cfg(any(feature = "sqlite", feature = "postgres"))]
            Tasks::Sql {
                url,
                retention,
                lease,
            } => {
                let store = SqlTasks::open(url, *retention, *lease, serving).await?;
                store.recover().await?;
                (Arc::new(store), None)
            }
            Tasks::Custom(store) => (Arc::clone(store), None),
        };
        Ok(Opened { store, memory })
    }
}

/// A store opened for a server.
#[derive(Clone)]
pub(crate) struct Opened {
    pub(crate) store: Arc<dyn Store>,
    /// The memory store itself, where the store is [`Tasks::memory`]: a task's run shares the
    /// task with it instead of handing it a copy of each state.
    pub(crate) memory: Option<Arc<MemoryTasks>>,
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
