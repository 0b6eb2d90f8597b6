//! The task store's traits on [`SqlTasks`](super::SqlTasks): the official `TaskStore` (reads
//! answer a running task with the chunks logged since its row), and the event log.

use std::sync::Arc;

use a2a::{A2AError, ListTasksRequest, ListTasksResponse, Task};
use a2a_server::TaskStore;
use a2a_server::task_store::TaskVersion;
use async_trait::async_trait;

use super::{SqlTasks, decode};
use crate::journal::Entry;
use crate::server::store::{Cursor, Event, EventLog, Logged, shape, status_at};

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
        let Some(row) = s.db.task(task_id).await? else {
            return Ok(None);
        };
        let task = decode(&row.body)?;
        if row.ended.is_some() {
            // A finished task's row is whole.
            return Ok(Some(task));
        }
        // Running (here or on another replica): with what it logged since its row.
        Ok(Some(s.as_now(task, row.seq).await?.0))
    }

    async fn list(&self, req: &ListTasksRequest) -> Result<ListTasksResponse, A2AError> {
        let s = &self.inner;
        // What this replica queued is listed too.
        s.writer.flush().await?;
        let size = a2a_server::pagination::resolve_page_size(req.page_size);
        let (total, rows) = s.db.list(req, size).await?;
        let more = rows.len() > size;
        let mut tasks = Vec::with_capacity(size.min(rows.len()));
        for row in rows.into_iter().take(size) {
            let task = decode(&row.body)?;
            // A running task with what it logged since its row (as `get` answers it).
            tasks.push(match row.ended {
                Some(_) => task,
                None => s.as_now(task, row.seq).await?.0,
            });
        }
        let next_page_token = match tasks.last() {
            Some(last) if more => Cursor::token(&status_at(last), &last.id),
            _ => String::new(),
        };
        Ok(ListTasksResponse {
            tasks: tasks.into_iter().map(|t| shape(t, req)).collect(),
            next_page_token,
            page_size: i32::try_from(size).unwrap_or(i32::MAX),
            total_size: i32::try_from(total).unwrap_or(i32::MAX),
        })
    }

    async fn begin_cancel(&self, task_id: &str) -> Result<Task, A2AError> {
        let s = &self.inner;
        // The task as this replica last wrote it, not as it was before its queued writes.
        s.writer.flush().await?;
        let (task, version) = s.db.cancel(task_id).await?;
        // Later writes of its executor are refused by the stored state (a finished task stays
        // finished), whatever version they expect.
        s.local.committed(&task, version);
        Ok(task)
    }
}

#[async_trait]
impl EventLog for SqlTasks {
    fn append(&self, task_id: &str, seq: u64, event: &Arc<Event>) {
        self.inner.writer.append(task_id, seq, event);
    }

    async fn update_at(&self, task: Task, seq: u64) -> Result<(), A2AError> {
        self.inner.writer.write_at(task, Some(seq)).await.map(drop)
    }

    async fn read(&self, task_id: &str, after: Option<u64>) -> Result<Option<Logged>, A2AError> {
        let s = &self.inner;
        // What this replica queued is read too.
        s.writer.flush().await?;
        let Some(row) = s.db.task(task_id).await? else {
            return Ok(None);
        };
        let task = decode(&row.body)?;
        let seq = u64::try_from(row.seq.unwrap_or(0)).unwrap_or(0);
        let from = after.unwrap_or(seq);
        let events =
            s.db.tail(task_id, i64::try_from(from).unwrap_or(i64::MAX))
                .await?;
        Ok(Some(Logged { task, seq, events }))
    }

    /// Kept in a table of their own (`a2a_card_journal`), written with the events.
    fn keeps_journals(&self) -> bool {
        true
    }

    fn journal(&self, task_id: &str, n: u64, entry: &Entry) {
        match encoded(task_id, n, entry) {
            Ok(json) => self.inner.writer.journal(task_id, n, json, None),
            // Not written: a step runs again, an answer's caller is told (journal_written).
            Err(e) => tracing::warn!(task = %task_id, "{}", e.message),
        }
    }

    async fn write_journal(&self, task_id: &str, n: u64, entry: &Entry) -> Result<(), A2AError> {
        let json = encoded(task_id, n, entry)?;
        match self.inner.writer.journal_now(task_id, n, json).await? {
            true => Ok(()),
            // Its round's log failed, or was not written (the task's writes stopped):
            // read back, in case the database wrote it before it failed to answer.
            false => self.journal_written(task_id, n).await,
        }
    }

    async fn journal_written(&self, task_id: &str, n: u64) -> Result<(), A2AError> {
        let s = &self.inner;
        s.writer.flush().await?;
        // A round that holds only log rows answers nobody when the database refuses it: the
        // entry is read back (answers only wait for this; they are few).
        let written =
            s.db.journaled(task_id, i64::try_from(n).unwrap_or(i64::MAX))
                .await?;
        match written {
            true => Ok(()),
            false => Err(A2AError::internal(format!(
                "entry {n} of task {task_id}'s journal was not written"
            ))),
        }
    }

    async fn give_up(&self, task_id: &str) -> Result<(), A2AError> {
        self.inner.give_up(task_id).await
    }

    async fn read_journal(&self, task_id: &str) -> Result<Vec<(u64, Entry)>, A2AError> {
        let s = &self.inner;
        s.writer.flush().await?;
        s.db.journal(task_id)
            .await?
            .into_iter()
            .map(|(n, json, _)| {
                serde_json::from_str(&json).map(|entry| (n, entry)).map_err(|e| {
                    A2AError::internal(format!(
                        "entry {n} of task {task_id}'s journal is not one this release knows ({e})"
                    ))
                })
            })
            .collect()
    }

    async fn journal_times(&self, task_id: &str) -> Result<Vec<(u64, i64)>, A2AError> {
        let s = &self.inner;
        s.writer.flush().await?;
        Ok(s.db
            .journal(task_id)
            .await?
            .into_iter()
            .filter_map(|(n, _, at)| Some((n, at?)))
            .collect())
    }
}

/// Entry `n` of task `task_id`'s journal as the table keeps it (JSON), or why it cannot be.
fn encoded(task_id: &str, n: u64, entry: &Entry) -> Result<String, A2AError> {
    serde_json::to_string(entry).map_err(|e| {
        A2AError::internal(format!(
            "entry {n} of task {task_id}'s journal cannot be written as JSON: {e}"
        ))
    })
}
