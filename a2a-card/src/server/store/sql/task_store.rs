//! The task store's traits on [`SqlTasks`](super::SqlTasks): the official `TaskStore` (reads
//! answer a running task with the chunks logged since its row), and the event log.

use a2a::{A2AError, ListTasksRequest, ListTasksResponse, Task, TaskState};
use a2a_server::TaskStore;
use a2a_server::task_store::TaskVersion;
use async_trait::async_trait;
use sqlx::Row;

use super::*;

#[async_trait]
impl TaskStore for SqlTasks {
    async fn create(&self, task: Task) -> Result<TaskVersion, A2AError> {
        let s = &self.inner;
        s.writer.create(task, s.queue_creates).await?;
        Ok(1)
    }

    async fn update(&self, task: Task) -> Result<TaskVersion, A2AError> {
        self.inner
            .writer
            .write(task)
            .await
            .map(|v| TaskVersion::try_from(v).unwrap_or_default())
    }

    async fn get(&self, task_id: &str) -> Result<Option<Task>, A2AError> {
        let s = &self.inner;
        if let Some(task) = s.local.read(task_id) {
            return Ok(Some(task));
        }
        let row =
            sqlx::query(&s.sql("SELECT body, seq, ended_at FROM a2a_card_tasks WHERE id = ?"))
                .bind(task_id)
                .fetch_optional(&s.reads)
                .await
                .map_err(db_error)?;
        let Some(row) = row else { return Ok(None) };
        let (body, seq, ended): (String, Option<i64>, Option<i64>) =
            (row.get(0), row.get(1), row.get(2));
        let task = decode(&body)?;
        if ended.is_some() {
            // A finished task's row is whole.
            return Ok(Some(task));
        }
        // Running (here or on another replica): with what it logged since its row.
        let (task, _) = s.as_now(&s.reads, task, seq.unwrap_or(0)).await?;
        Ok(Some(task))
    }

    async fn list(&self, req: &ListTasksRequest) -> Result<ListTasksResponse, A2AError> {
        let s = &self.inner;
        // What this replica queued is listed too.
        s.writer.flush().await;
        let size = a2a_server::pagination::resolve_page_size(req.page_size);
        let cursor = super::super::Cursor::parse(req.page_token.as_deref())?;
        let mut filter = String::from("1 = 1");
        let mut binds: Vec<String> = Vec::new();
        // The tasks of the caller's reach only (see `Store`): a task's id begins with the
        // reach and has no `:` after it; without one, a task's id has no `:`. A reach is
        // letters, digits, `._~-` and `:`; `_` (and, for safety, `%` and `\`) are escaped.
        match &req.tenant {
            Some(reach) => {
                filter.push_str(" AND id LIKE ? ESCAPE '\\' AND id NOT LIKE ? ESCAPE '\\'");
                let reach = reach
                    .replace('\\', "\\\\")
                    .replace('_', "\\_")
                    .replace('%', "\\%");
                binds.push(format!("{reach}%"));
                binds.push(format!("{reach}%:%"));
            }
            None => filter.push_str(" AND id NOT LIKE '%:%'"),
        }
        if let Some(c) = &req.context_id {
            filter.push_str(" AND context_id = ?");
            binds.push(c.clone());
        }
        if let Some(st) = &req.status {
            filter.push_str(" AND state = ?");
            binds.push(state_name(st));
        }
        if let Some(after) = req.status_timestamp_after {
            filter.push_str(" AND status_at > ?");
            binds.push(after.to_rfc3339());
        }
        let count = s
            .sql(&format!(
                "SELECT COUNT(*) FROM a2a_card_tasks WHERE {filter}"
            ))
            .into_owned();
        let mut q = sqlx::query_scalar::<_, i64>(&count);
        for b in &binds {
            q = q.bind(b);
        }
        let total = q.fetch_one(&s.reads).await.map_err(db_error)?;
        // Newest status first, then id; one row past the page says whether another follows.
        let mut after = String::new();
        if let Some(cursor) = cursor {
            after.push_str(
                " AND (COALESCE(status_at, '') < ? OR (COALESCE(status_at, '') = ? AND id < ?))",
            );
            binds.extend([cursor.at.clone(), cursor.at, cursor.id]);
        }
        let page = s
            .sql(&format!(
                "SELECT body, seq, ended_at FROM a2a_card_tasks WHERE {filter}{after} ORDER BY COALESCE(status_at, '') DESC, id DESC LIMIT {}",
                size + 1
            ))
            .into_owned();
        let mut q = sqlx::query(&page);
        for b in &binds {
            q = q.bind(b);
        }
        let rows = q.fetch_all(&s.reads).await.map_err(db_error)?;
        let more = rows.len() > size;
        let mut tasks = Vec::with_capacity(size.min(rows.len()));
        for row in rows.iter().take(size) {
            let (body, seq, ended): (String, Option<i64>, Option<i64>) =
                (row.get(0), row.get(1), row.get(2));
            let task = decode(&body)?;
            // A running task with what it logged since its row (as `get` answers it).
            tasks.push(match ended {
                Some(_) => task,
                None => s.as_now(&s.reads, task, seq.unwrap_or(0)).await?.0,
            });
        }
        let next_page_token = match tasks.last() {
            Some(last) if more => {
                super::super::Cursor::token(&super::super::status_at(last), &last.id)
            }
            _ => String::new(),
        };
        Ok(ListTasksResponse {
            tasks: tasks
                .into_iter()
                .map(|t| super::super::shape(t, req))
                .collect(),
            next_page_token,
            page_size: i32::try_from(size).unwrap_or(i32::MAX),
            total_size: i32::try_from(total).unwrap_or(i32::MAX),
        })
    }

    async fn begin_cancel(&self, task_id: &str) -> Result<Task, A2AError> {
        let s = &self.inner;
        // The task as this replica last wrote it, not as it was before its queued writes.
        s.writer.flush().await;
        // One transaction: the check and the change cannot interleave with another writer.
        let mut tx = s.begin().await.map_err(db_error)?;
        let select = format!(
            "SELECT body, version, ended_at, seq FROM a2a_card_tasks WHERE id = ?{}",
            s.for_update()
        );
        let row = sqlx::query(&s.sql(&select))
            .bind(task_id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db_error)?;
        let Some(row) = row else {
            return Err(A2AError::task_not_found(task_id));
        };
        let (body, version, ended, seq): (String, i64, Option<i64>, Option<i64>) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        if ended.is_some() {
            return Err(A2AError::task_not_cancelable(task_id));
        }
        // The canceled task keeps what it logged since its row (an artifact's chunks so far).
        let (mut task, _) = s.as_now(&mut *tx, decode(&body)?, seq.unwrap_or(0)).await?;
        task.status.state = TaskState::Canceled;
        task.status.timestamp = Some(chrono::Utc::now());
        let update = s.sql(
            "UPDATE a2a_card_tasks SET state = ?, status_at = ?, version = ?, ended_at = ?, owner = NULL, body = ? WHERE id = ? AND version = ?",
        );
        let changed = sqlx::query(&update)
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
        s.announce(&mut tx, task_id).await?;
        tx.commit().await.map_err(db_error)?;
        // Later writes of its executor are refused by the stored state (a finished task stays
        // finished), whatever version they expect.
        s.local.committed(&task, version + 1);
        Ok(task)
    }
}

#[async_trait]
impl super::super::EventLog for SqlTasks {
    fn append(&self, task_id: &str, seq: u64, event: &std::sync::Arc<super::super::Event>) {
        self.inner.writer.append(task_id, seq, event);
    }

    async fn update_at(&self, task: Task, seq: u64) -> Result<(), A2AError> {
        self.inner.writer.write_at(task, Some(seq)).await.map(drop)
    }

    async fn read(
        &self,
        task_id: &str,
        after: Option<u64>,
    ) -> Result<Option<super::super::Logged>, A2AError> {
        let s = &self.inner;
        // What this replica queued is read too.
        s.writer.flush().await;
        let row = sqlx::query(&s.sql("SELECT body, seq FROM a2a_card_tasks WHERE id = ?"))
            .bind(task_id)
            .fetch_optional(&s.reads)
            .await
            .map_err(db_error)?;
        let Some(row) = row else { return Ok(None) };
        let (body, seq): (String, Option<i64>) = (row.get(0), row.get(1));
        let task = decode(&body)?;
        let seq = u64::try_from(seq.unwrap_or(0)).unwrap_or(0);
        let from = after.unwrap_or(seq);
        let events = s
            .tail(&s.reads, task_id, i64::try_from(from).unwrap_or(i64::MAX))
            .await?;
        Ok(Some(super::super::Logged { task, seq, events }))
    }

    fn keeps_journals(&self) -> bool {
        true
    }

    fn journal(&self, task_id: &str, n: u64, entry: &str) {
        // Entry `n` is row `-1 - n` of the task's log: below its events, which are read from
        // 0 up.
        let row = -1 - i64::try_from(n).unwrap_or(i64::MAX - 1);
        let event = std::sync::Arc::new(super::super::Event::journal_row(entry.to_owned()));
        self.inner.writer.log(task_id, row, &event);
    }

    async fn journal_written(&self, task_id: &str, n: u64) -> Result<(), A2AError> {
        let s = &self.inner;
        s.writer.flush().await;
        // A round that holds only log rows answers nobody when the database refuses it: the
        // entry is read back (answers only wait for this; they are few).
        let row = -1 - i64::try_from(n).unwrap_or(i64::MAX - 1);
        let found: Option<i64> = sqlx::query_scalar(
            &s.sql("SELECT seq FROM a2a_card_events WHERE task_id = ? AND seq = ?"),
        )
        .bind(task_id)
        .bind(row)
        .fetch_optional(&s.pool)
        .await
        .map_err(db_error)?;
        match found {
            Some(_) => Ok(()),
            None => Err(A2AError::internal(format!(
                "entry {n} of task {task_id}'s journal was not written"
            ))),
        }
    }

    async fn give_up(&self, task_id: &str) -> Result<(), A2AError> {
        self.inner.give_up(task_id).await
    }

    async fn read_journal(&self, task_id: &str) -> Result<Vec<(u64, String)>, A2AError> {
        let s = &self.inner;
        s.writer.flush().await;
        let rows = sqlx::query(&s.sql(
            "SELECT seq, body FROM a2a_card_events WHERE task_id = ? AND seq < 0 ORDER BY seq DESC",
        ))
        .bind(task_id)
        .fetch_all(&s.reads)
        .await
        .map_err(db_error)?;
        // Entry `n` is row `-1 - n`.
        Ok(rows
            .into_iter()
            .map(|row| {
                let (seq, body): (i64, String) = (row.get(0), row.get(1));
                (u64::try_from(-1 - seq).unwrap_or(u64::MAX), body)
            })
            .collect())
    }
}
