//! Where the server keeps tasks: in memory (bounded), or in a SQLite file (feature `sqlite`),
//! and for how long.
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

mod memory;
#[cfg(feature = "sqlite")]
mod sqlite;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use a2a::{Task, TaskState};
use a2a_server::TaskStore;

pub use memory::MemoryTasks;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteTasks;

/// How long finished tasks are kept.
///
/// The default keeps a terminal task for a day, and at most 10,000 of them: enough for callers
/// to fetch results, while memory and disk stay bounded under any load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    max_age: Option<Duration>,
    max_terminal: Option<usize>,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            max_age: Some(Duration::from_secs(24 * 3600)),
            max_terminal: Some(10_000),
        }
    }
}

impl Retention {
    /// Keeps every task forever (memory and disk grow with every task).
    pub fn forever() -> Self {
        Retention {
            max_age: None,
            max_terminal: None,
        }
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
    /// A SQLite database file (created when missing, WAL mode).
    #[cfg(feature = "sqlite")]
    Sqlite {
        /// The file.
        path: std::path::PathBuf,
        /// How long finished tasks are kept.
        retention: Retention,
    },
    /// A store of your own.
    Custom(Arc<dyn TaskStore>),
}

impl fmt::Debug for Tasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tasks::Memory(r) => f.debug_tuple("Memory").field(r).finish(),
            #[cfg(feature = "sqlite")]
            Tasks::Sqlite { path, retention } => f
                .debug_struct("Sqlite")
                .field("path", path)
                .field("retention", retention)
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

    /// Tasks in the SQLite file at `path`, with the default [`Retention`].
    #[cfg(feature = "sqlite")]
    pub fn sqlite(path: impl Into<std::path::PathBuf>) -> Tasks {
        Tasks::Sqlite {
            path: path.into(),
            retention: Retention::default(),
        }
    }

    /// Tasks from a URL, as a `--tasks` flag takes it: `memory`, `sqlite:PATH` or
    /// `sqlite://PATH`.
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
        Err(format!(
            "`{url}` is not a task store: use `memory` or `sqlite://PATH`"
        ))
    }

    /// The same store with another retention (no effect on a custom store).
    pub fn retention(self, retention: Retention) -> Tasks {
        match self {
            Tasks::Memory(_) => Tasks::Memory(retention),
            #[cfg(feature = "sqlite")]
            Tasks::Sqlite { path, .. } => Tasks::Sqlite { path, retention },
            custom => custom,
        }
    }

    /// Opens the store: creates or migrates the database, and fails the tasks a previous run
    /// left running (see [`recover`]).
    pub async fn open(&self) -> Result<Arc<dyn TaskStore>, StoreError> {
        match self {
            Tasks::Memory(retention) => Ok(Arc::new(MemoryTasks::new(*retention))),
            #[cfg(feature = "sqlite")]
            Tasks::Sqlite { path, retention } => {
                let store = SqliteTasks::open(path, *retention).await?;
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
pub(crate) fn was_running(state: &TaskState) -> bool {
    matches!(
        state,
        TaskState::Submitted
            | TaskState::Working
            | TaskState::InputRequired
            | TaskState::AuthRequired
    )
}

/// `task` marked failed because its process stopped.
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

/// Whether `task` passes the filters of a `ListTasks` request.
pub(crate) fn matches(req: &a2a::ListTasksRequest, task: &Task) -> bool {
    req.context_id
        .as_ref()
        .is_none_or(|c| *c == task.context_id)
        && req.status.as_ref().is_none_or(|s| *s == task.status.state)
        && req
            .status_timestamp_after
            .is_none_or(|after| task.status.timestamp.is_some_and(|t| t > after))
}

/// The page of `tasks` a `ListTasks` request asks for: sorted by id, offset tokens, history cut
/// to `historyLength`, artifacts left out unless `includeArtifacts`.
pub(crate) fn page(
    mut tasks: Vec<Task>,
    req: &a2a::ListTasksRequest,
) -> Result<a2a::ListTasksResponse, a2a::A2AError> {
    tasks.sort_by(|a, b| a.id.cmp(&b.id));
    let size = a2a_server::pagination::resolve_page_size(req.page_size);
    let start = offset(req)?.min(tasks.len());
    let end = start.saturating_add(size).min(tasks.len());
    let total = tasks.len();
    let page = tasks.drain(start..end).map(|t| shape(t, req)).collect();
    Ok(a2a::ListTasksResponse {
        tasks: page,
        next_page_token: if end < total {
            end.to_string()
        } else {
            String::new()
        },
        page_size: size as i32,
        total_size: total as i32,
    })
}

/// The offset a page token stands for.
pub(crate) fn offset(req: &a2a::ListTasksRequest) -> Result<usize, a2a::A2AError> {
    match req.page_token.as_deref() {
        None | Some("") => Ok(0),
        Some(token) => token
            .parse()
            .map_err(|_| a2a::A2AError::invalid_params("invalid page token")),
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
