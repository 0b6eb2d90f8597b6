//! Tasks in a SQLite file (feature `sqlite`), on sqlx.

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

use a2a::{A2AError, ListTasksRequest, ListTasksResponse, Task, TaskState};
use a2a_server::TaskStore;
use a2a_server::task_store::TaskVersion;
use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};
use sqlx::{Row, Sqlite, Transaction};

use super::memory::terminal_error;
use super::{Retention, StoreError};

/// The schema this release writes, and the steps that bring an older database to it (step
/// `i` takes version `i` to `i + 1`). A later release appends a step; it never edits one.
const MIGRATIONS: &[&str] = &[
    // 0 -> 1: tasks and their push-notification configs.
    "CREATE TABLE a2a_card_tasks (
        id TEXT PRIMARY KEY,
        context_id TEXT NOT NULL,
        state TEXT NOT NULL,
        status_at TEXT,
        version INTEGER NOT NULL,
        ended_at INTEGER,
        body TEXT NOT NULL
    );
    CREATE INDEX a2a_card_tasks_context ON a2a_card_tasks (context_id, id);
    CREATE INDEX a2a_card_tasks_state ON a2a_card_tasks (state);
    CREATE INDEX a2a_card_tasks_ended ON a2a_card_tasks (ended_at);",
];

/// The name the schema table gives this crate's databases.
const SCHEMA_NAME: &str = "a2a-card tasks";

/// A task store in a SQLite file: one file, WAL, schema versioned and migrated at open.
///
/// Each update is a compare-and-swap on the task's version: the version this process last
/// wrote must still be the stored one, so two writers (two processes on one file) never
/// silently overwrite each other; the loser gets an error. A terminal state is final.
///
/// ```no_run
/// # async fn run() -> Result<(), a2a_card::server::store::StoreError> {
/// use a2a_card::server::store::{Retention, SqliteTasks};
/// let store = SqliteTasks::open("tasks.db", Retention::default()).await?;
/// # drop(store);
/// # Ok(()) }
/// ```
pub struct SqliteTasks {
    pool: SqlitePool,
    retention: Retention,
    /// The version of each task this process last wrote.
    written: Mutex<HashMap<String, i64>>,
}

impl std::fmt::Debug for SqliteTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteTasks")
            .field("retention", &self.retention)
            .finish_non_exhaustive()
    }
}

fn db_error(e: sqlx::Error) -> A2AError {
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

impl SqliteTasks {
    /// Opens (or creates) the database at `path` and brings its schema up to date. A file
    /// that holds other tables, or a schema newer than this release knows, is refused and
    /// left untouched.
    pub async fn open(
        path: impl AsRef<Path>,
        retention: Retention,
    ) -> Result<SqliteTasks, StoreError> {
        let path = path.as_ref();
        let options = SqliteConnectOptions::from_str("sqlite:")
            .map_err(|e| StoreError::Unavailable(e.to_string()))?
            .filename(path)
            .create_if_missing(true)
            .busy_timeout(Duration::from_secs(5));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(|e| StoreError::Unavailable(format!("{}: {e}", path.display())))?;
        // The schema is checked before anything is written: a file that is not ours stays as
        // it was, journal mode included.
        migrate(&pool).await?;
        sqlx::query("PRAGMA journal_mode = WAL")
            .execute(&pool)
            .await
            .map_err(|e| StoreError::Unavailable(e.to_string()))?;
        Ok(SqliteTasks {
            pool,
            retention,
            written: Mutex::new(HashMap::new()),
        })
    }

    /// Fails every task a previous run left running (`submitted`, `working`, waiting for
    /// input): no handler runs them any more. Their status message says so.
    pub async fn recover(&self) -> Result<usize, StoreError> {
        let rows = sqlx::query("SELECT body FROM a2a_card_tasks WHERE ended_at IS NULL")
            .fetch_all(&self.pool)
            .await
            .map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let mut n = 0;
        for row in rows {
            let body: String = row.get(0);
            let Ok(task) = decode(&body) else { continue };
            if !super::was_running(&task.status.state) {
                continue;
            }
            let task = super::interrupted(task);
            if self.write(&task, None).await.is_ok() {
                n += 1;
            }
        }
        Ok(n)
    }

    fn remember(&self, id: &str, version: i64) {
        self.written
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.to_owned(), version);
    }

    fn last_written(&self, id: &str) -> Option<i64> {
        self.written
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .copied()
    }

    /// Writes `task` over the stored one; `expected` is the version it must still have
    /// (`None`: whatever it has). The new version.
    async fn write(&self, task: &Task, expected: Option<i64>) -> Result<i64, A2AError> {
        let mut tx = self.pool.begin().await.map_err(db_error)?;
        let row = sqlx::query("SELECT state, version, ended_at FROM a2a_card_tasks WHERE id = ?")
            .bind(&task.id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db_error)?;
        let Some(row) = row else {
            return Err(A2AError::task_not_found(&task.id));
        };
        let (state, version, ended): (String, i64, Option<i64>) =
            (row.get(0), row.get(1), row.get(2));
        let new_state = state_name(&task.status.state);
        if ended.is_some() && state != new_state {
            let was: TaskState = serde_json::from_value(serde_json::Value::String(state))
                .unwrap_or(TaskState::Failed);
            return Err(terminal_error(&task.id, &was, &task.status.state));
        }
        if let Some(expected) = expected {
            if expected != version {
                return Err(A2AError::invalid_request(format!(
                    "task {} was changed by another writer (version {version}, this writer last wrote {expected}); read it again",
                    task.id
                )));
            }
        }
        let ended_at = match ended {
            Some(at) => Some(at),
            None if task.status.state.is_terminal() => Some(now_millis()),
            None => None,
        };
        let status_at = task.status.timestamp.map(|t| t.to_rfc3339());
        sqlx::query(
            "UPDATE a2a_card_tasks SET context_id = ?, state = ?, status_at = ?, version = ?, ended_at = ?, body = ? WHERE id = ?",
        )
        .bind(&task.context_id)
        .bind(&new_state)
        .bind(status_at)
        .bind(version + 1)
        .bind(ended_at)
        .bind(encode(task)?)
        .bind(&task.id)
        .execute(&mut *tx)
        .await
        .map_err(db_error)?;
        if ended.is_none() && ended_at.is_some() {
            self.prune(&mut tx).await?;
        }
        tx.commit().await.map_err(db_error)?;
        self.remember(&task.id, version + 1);
        Ok(version + 1)
    }

    /// Removes the terminal tasks retention lets go.
    async fn prune(&self, tx: &mut Transaction<'_, Sqlite>) -> Result<(), A2AError> {
        if let Some(age) = self.retention.age_limit() {
            let cutoff = now_millis() - i64::try_from(age.as_millis()).unwrap_or(i64::MAX);
            sqlx::query("DELETE FROM a2a_card_tasks WHERE ended_at IS NOT NULL AND ended_at < ?")
                .bind(cutoff)
                .execute(&mut **tx)
                .await
                .map_err(db_error)?;
        }
        if let Some(max) = self.retention.count_limit() {
            sqlx::query(
                "DELETE FROM a2a_card_tasks WHERE id IN (
                    SELECT id FROM a2a_card_tasks WHERE ended_at IS NOT NULL
                    ORDER BY ended_at DESC, id DESC LIMIT -1 OFFSET ?)",
            )
            .bind(i64::try_from(max).unwrap_or(i64::MAX))
            .execute(&mut **tx)
            .await
            .map_err(db_error)?;
        }
        Ok(())
    }
}

/// Creates or migrates the schema, refusing foreign and newer databases.
async fn migrate(pool: &SqlitePool) -> Result<(), StoreError> {
    let unavailable = |e: sqlx::Error| StoreError::Unavailable(e.to_string());
    let mut tx = pool.begin().await.map_err(unavailable)?;
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )
    .fetch_all(&mut *tx)
    .await
    .map_err(|e| StoreError::Foreign(format!("not a SQLite database: {e}")))?;
    let known = MIGRATIONS.len() as i64;
    let current = if tables.iter().any(|t| t == "a2a_card_schema") {
        let row = sqlx::query("SELECT name, version FROM a2a_card_schema")
            .fetch_optional(&mut *tx)
            .await
            .map_err(unavailable)?;
        match row {
            Some(row) if row.get::<String, _>(0) == SCHEMA_NAME => row.get::<i64, _>(1),
            _ => {
                return Err(StoreError::Foreign(
                    "its schema table names another schema".into(),
                ));
            }
        }
    } else if tables.is_empty() {
        sqlx::query("CREATE TABLE a2a_card_schema (name TEXT NOT NULL, version INTEGER NOT NULL)")
            .execute(&mut *tx)
            .await
            .map_err(unavailable)?;
        sqlx::query("INSERT INTO a2a_card_schema (name, version) VALUES (?, 0)")
            .bind(SCHEMA_NAME)
            .execute(&mut *tx)
            .await
            .map_err(unavailable)?;
        0
    } else {
        return Err(StoreError::Foreign(format!(
            "it has other tables: {}",
            tables.join(", ")
        )));
    };
    if current > known {
        return Err(StoreError::Newer {
            found: current,
            known,
        });
    }
    for step in MIGRATIONS
        .iter()
        .skip(usize::try_from(current).unwrap_or(0))
    {
        sqlx::raw_sql(step)
            .execute(&mut *tx)
            .await
            .map_err(unavailable)?;
    }
    sqlx::query("UPDATE a2a_card_schema SET version = ?")
        .bind(known)
        .execute(&mut *tx)
        .await
        .map_err(unavailable)?;
    tx.commit().await.map_err(unavailable)
}

#[async_trait]
impl TaskStore for SqliteTasks {
    async fn create(&self, task: Task) -> Result<TaskVersion, A2AError> {
        let ended_at = task.status.state.is_terminal().then(now_millis);
        let result = sqlx::query(
            "INSERT INTO a2a_card_tasks (id, context_id, state, status_at, version, ended_at, body) VALUES (?, ?, ?, ?, 1, ?, ?)",
        )
        .bind(&task.id)
        .bind(&task.context_id)
        .bind(state_name(&task.status.state))
        .bind(task.status.timestamp.map(|t| t.to_rfc3339()))
        .bind(ended_at)
        .bind(encode(&task)?)
        .execute(&self.pool)
        .await;
        match result {
            Ok(_) => {
                self.remember(&task.id, 1);
                Ok(1)
            }
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(
                A2AError::invalid_request(format!("task {} already exists", task.id)),
            ),
            Err(e) => Err(db_error(e)),
        }
    }

    async fn update(&self, task: Task) -> Result<TaskVersion, A2AError> {
        let expected = self.last_written(&task.id);
        self.write(&task, expected).await.map(|v| v as TaskVersion)
    }

    async fn get(&self, task_id: &str) -> Result<Option<Task>, A2AError> {
        let body: Option<String> =
            sqlx::query_scalar("SELECT body FROM a2a_card_tasks WHERE id = ?")
                .bind(task_id)
                .fetch_optional(&self.pool)
                .await
                .map_err(db_error)?;
        body.as_deref().map(decode).transpose()
    }

    async fn list(&self, req: &ListTasksRequest) -> Result<ListTasksResponse, A2AError> {
        let size = a2a_server::pagination::resolve_page_size(req.page_size);
        let offset = super::offset(req)?;
        let filter = "(?1 IS NULL OR context_id = ?1) AND (?2 IS NULL OR state = ?2) AND (?3 IS NULL OR status_at > ?3)";
        let context = req.context_id.clone();
        let state = req.status.as_ref().map(state_name);
        let after = req.status_timestamp_after.map(|t| t.to_rfc3339());
        let total: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM a2a_card_tasks WHERE {filter}"
        ))
        .bind(&context)
        .bind(&state)
        .bind(&after)
        .fetch_one(&self.pool)
        .await
        .map_err(db_error)?;
        let bodies: Vec<String> = sqlx::query_scalar(&format!(
            "SELECT body FROM a2a_card_tasks WHERE {filter} ORDER BY id LIMIT ?4 OFFSET ?5"
        ))
        .bind(&context)
        .bind(&state)
        .bind(&after)
        .bind(size as i64)
        .bind(offset as i64)
        .fetch_all(&self.pool)
        .await
        .map_err(db_error)?;
        let tasks = bodies
            .iter()
            .map(|b| decode(b).map(|t| super::shape(t, req)))
            .collect::<Result<Vec<_>, _>>()?;
        let end = offset + tasks.len();
        let total = usize::try_from(total).unwrap_or(0);
        Ok(ListTasksResponse {
            tasks,
            next_page_token: if end < total {
                end.to_string()
            } else {
                String::new()
            },
            page_size: size as i32,
            total_size: total as i32,
        })
    }

    async fn begin_cancel(&self, task_id: &str) -> Result<Task, A2AError> {
        // One transaction: the check and the change cannot interleave with another writer.
        let mut tx = self.pool.begin().await.map_err(db_error)?;
        let row = sqlx::query("SELECT body, version, ended_at FROM a2a_card_tasks WHERE id = ?")
            .bind(task_id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db_error)?;
        let Some(row) = row else {
            return Err(A2AError::task_not_found(task_id));
        };
        let (body, version, ended): (String, i64, Option<i64>) =
            (row.get(0), row.get(1), row.get(2));
        if ended.is_some() {
            return Err(A2AError::task_not_cancelable(task_id));
        }
        let mut task = decode(&body)?;
        task.status.state = TaskState::Canceled;
        task.status.timestamp = Some(chrono::Utc::now());
        let changed = sqlx::query(
            "UPDATE a2a_card_tasks SET state = ?, status_at = ?, version = ?, ended_at = ?, body = ? WHERE id = ? AND version = ?",
        )
        .bind(state_name(&task.status.state))
        .bind(task.status.timestamp.map(|t| t.to_rfc3339()))
        .bind(version + 1)
        .bind(now_millis())
        .bind(encode(&task)?)
        .bind(task_id)
        .bind(version)
        .execute(&mut *tx)
        .await
        .map_err(db_error)?;
        if changed.rows_affected() != 1 {
            return Err(A2AError::task_not_cancelable(task_id));
        }
        self.prune(&mut tx).await?;
        tx.commit().await.map_err(db_error)?;
        self.remember(task_id, version + 1);
        Ok(task)
    }
}
