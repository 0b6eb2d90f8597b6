//! Tasks in memory, bounded: terminal tasks go as their [`Retention`] says.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use a2a::{A2AError, ListTasksRequest, ListTasksResponse, Task, TaskState};
use a2a_server::TaskStore;
use a2a_server::task_store::TaskVersion;
use async_trait::async_trait;
use tokio::sync::RwLock;

use super::Retention;

/// A task store in memory whose terminal tasks are removed as its [`Retention`] says, so that
/// memory stays flat under sustained load. Lost when the process ends.
///
/// ```
/// use a2a_card::server::store::{MemoryTasks, Retention};
/// let store = MemoryTasks::new(Retention::default().max_terminal(1_000));
/// # drop(store);
/// ```
pub struct MemoryTasks {
    retention: Retention,
    inner: RwLock<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Each task as last written, shared with the server's run of it where the server wrote
    /// it ([`MemoryTasks::create_shared`]): a run copies its task only as it changes it next.
    tasks: HashMap<String, (Arc<Task>, TaskVersion)>,
    /// Terminal tasks, oldest first, with when they ended and the bytes each holds.
    ended: VecDeque<(Instant, String, usize)>,
    /// The bytes of the terminal tasks, in all.
    ended_bytes: usize,
}

impl std::fmt::Debug for MemoryTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryTasks")
            .field("retention", &self.retention)
            .finish_non_exhaustive()
    }
}

impl MemoryTasks {
    /// An empty store.
    pub fn new(retention: Retention) -> MemoryTasks {
        MemoryTasks {
            retention,
            inner: RwLock::new(Inner::default()),
        }
    }

    /// Keeps new task `task`, shared with its caller ([`TaskStore::create`] without a copy).
    pub(crate) async fn create_shared(&self, task: Arc<Task>) -> Result<TaskVersion, A2AError> {
        let mut inner = self.inner.write().await;
        if inner.tasks.contains_key(&task.id) {
            return Err(A2AError::invalid_request(format!(
                "task {} already exists",
                task.id
            )));
        }
        let (id, terminal) = (task.id.clone(), task.status.state.is_terminal());
        inner.tasks.insert(id.clone(), (task, 1));
        let removed = if terminal {
            inner.ended(&id, &self.retention)
        } else {
            inner.prune(&self.retention)
        };
        drop(inner);
        drop(removed);
        Ok(1)
    }

    /// Keeps `task` as its new state, shared with its caller ([`TaskStore::update`] without a
    /// copy).
    pub(crate) async fn update_shared(&self, task: Arc<Task>) -> Result<TaskVersion, A2AError> {
        let mut inner = self.inner.write().await;
        let (stored, version) = inner
            .tasks
            .get_mut(&task.id)
            .ok_or_else(|| A2AError::task_not_found(&task.id))?;
        let was = &stored.status.state;
        if was.is_terminal() && *was != task.status.state {
            return Err(terminal_error(&task.id, was, &task.status.state));
        }
        let ends = !was.is_terminal() && task.status.state.is_terminal();
        *version += 1;
        let version = *version;
        // The task it replaces is dropped once the lock is let go.
        let replaced = std::mem::replace(stored, task);
        let removed = if ends {
            inner.ended(&replaced.id, &self.retention)
        } else {
            Removed::new()
        };
        drop(inner);
        drop((replaced, removed));
        Ok(version)
    }
}

impl Inner {
    /// Records that `id` ended now, and removes what retention lets go (returned, see
    /// [`Inner::prune`]).
    fn ended(&mut self, id: &str, retention: &Retention) -> Removed {
        let bytes = self
            .tasks
            .get(id)
            .map_or(0, |(task, _)| super::task_bytes(task));
        self.ended.push_back((Instant::now(), id.to_owned(), bytes));
        self.ended_bytes += bytes;
        self.prune(retention)
    }

    /// Removes what retention lets go, oldest first. The tasks removed are returned for the
    /// caller to drop once it has let go of the lock: freeing a task (its history, its
    /// artifacts) is most of what removing it costs, and no other call need wait for it.
    fn prune(&mut self, retention: &Retention) -> Removed {
        let now = Instant::now();
        let mut removed = Vec::new();
        while let Some((at, _, _)) = self.ended.front() {
            let too_many = retention
                .count_limit()
                .is_some_and(|max| self.ended.len() > max);
            let too_big = retention
                .bytes_limit()
                .is_some_and(|max| self.ended_bytes > max);
            let too_old = retention
                .age_limit()
                .is_some_and(|age| now.duration_since(*at) > age);
            if !(too_many || too_big || too_old) {
                break;
            }
            let Some((_, id, bytes)) = self.ended.pop_front() else {
                break;
            };
            self.ended_bytes -= bytes;
            removed.extend(self.tasks.remove(&id).map(|(task, _)| task));
        }
        removed
    }
}

/// Tasks retention removed, dropped by the caller after the store's lock.
type Removed = Vec<Arc<Task>>;

#[async_trait]
impl TaskStore for MemoryTasks {
    async fn create(&self, task: Task) -> Result<TaskVersion, A2AError> {
        self.create_shared(Arc::new(task)).await
    }

    async fn update(&self, task: Task) -> Result<TaskVersion, A2AError> {
        self.update_shared(Arc::new(task)).await
    }

    async fn get(&self, task_id: &str) -> Result<Option<Task>, A2AError> {
        let inner = self.inner.read().await;
        Ok(inner.tasks.get(task_id).map(|(t, _)| Task::clone(t)))
    }

    async fn list(&self, req: &ListTasksRequest) -> Result<ListTasksResponse, A2AError> {
        let inner = self.inner.read().await;
        let tasks = inner.tasks.values().map(|(t, _)| t);
        super::page(
            tasks
                .filter(|t| super::matches(req, t))
                .map(|t| Task::clone(t))
                .collect(),
            req,
        )
    }

    async fn begin_cancel(&self, task_id: &str) -> Result<Task, A2AError> {
        let mut inner = self.inner.write().await;
        let (task, version) = inner
            .tasks
            .get_mut(task_id)
            .ok_or_else(|| A2AError::task_not_found(task_id))?;
        if task.status.state.is_terminal() {
            return Err(A2AError::task_not_cancelable(task_id));
        }
        *version += 1;
        let task = Arc::make_mut(task);
        task.status.state = TaskState::Canceled;
        task.status.timestamp = Some(chrono::Utc::now());
        let task = task.clone();
        let removed = inner.ended(task_id, &self.retention);
        drop(inner);
        drop(removed);
        Ok(task)
    }
}

/// The error of an update that would leave a terminal state.
pub(crate) fn terminal_error(id: &str, was: &TaskState, to: &TaskState) -> A2AError {
    A2AError::invalid_request(format!(
        "task {id} is in terminal state {was:?} and cannot change to {to:?}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::fixtures;

    fn task(id: &str, text: &str, state: TaskState) -> Task {
        Task {
            artifacts: Some(vec![fixtures::text_artifact(text)]),
            ..fixtures::task(id, state)
        }
    }

    #[tokio::test]
    async fn a_task_written_shared_is_kept_without_a_copy_and_read_as_written() {
        let store = MemoryTasks::new(Retention::default());
        let created = Arc::new(task("t", "", TaskState::Working));
        store
            .create_shared(Arc::clone(&created))
            .await
            .expect("created");
        assert_eq!(
            Arc::strong_count(&created),
            2,
            "the store holds the caller's task"
        );
        let done = Arc::new(task("t", "hello", TaskState::Completed));
        store
            .update_shared(Arc::clone(&done))
            .await
            .expect("updated");
        assert_eq!(
            Arc::strong_count(&created),
            1,
            "the state it replaced is let go"
        );
        assert_eq!(Arc::strong_count(&done), 2);
        assert_eq!(
            store.get("t").await.expect("read"),
            Some(Task::clone(&done))
        );
        // A terminal state is final, shared or not.
        let again = Arc::new(task("t", "", TaskState::Working));
        assert!(store.update_shared(again).await.is_err());
    }

    #[tokio::test]
    async fn terminal_tasks_are_bounded_by_their_bytes_oldest_first() {
        let store = MemoryTasks::new(Retention::default().max_bytes(50_000));
        let big = "x".repeat(20_000);
        for i in 0..5 {
            let id = format!("t{i}");
            store
                .create(task(&id, "", TaskState::Working))
                .await
                .expect("created");
            store
                .update(task(&id, &big, TaskState::Completed))
                .await
                .expect("completed");
        }
        // Two of about 20 kB fit in 50 kB: the three oldest went.
        for i in 0..3 {
            assert!(
                store.get(&format!("t{i}")).await.expect("read").is_none(),
                "t{i}"
            );
        }
        for i in 3..5 {
            assert!(
                store.get(&format!("t{i}")).await.expect("read").is_some(),
                "t{i}"
            );
        }
        // A running task weighs nothing against the bound, and is never removed.
        store
            .create(task("running", &big, TaskState::Working))
            .await
            .expect("created");
        store
            .create(task("done", &big, TaskState::Completed))
            .await
            .expect("created");
        assert!(store.get("running").await.expect("read").is_some());
        assert!(
            store.get("t3").await.expect("read").is_none(),
            "t3 made room"
        );
    }
}
