//! The store of an agent stopped at a point ([`Cutting`]): a SQLite (or Postgres) store whose
//! writes stop where the [`Cut`] says, as a killed process's do, and the [`Tally`] of what
//! the point's agents wrote and ran.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use a2a::{A2AError, ListTasksRequest, ListTasksResponse, Task};
use a2a_server::TaskStore;
use a2a_server::task_store::TaskVersion;
use tokio::sync::watch;

use crate::journal::{Entry, STARTS};
use crate::server::store::{
    ChangeFeed, Event, EventLog, KeyClaim, Logged, Recovery, SqlTasks, Store,
};

/// What one point's agents did, all lives together.
#[derive(Default)]
pub(super) struct Tally {
    /// The journal writes stored, in order (entry 0 aside).
    pub(super) entries: Vec<Entry>,
    /// How often each step's body began.
    pub(super) runs: BTreeMap<String, u32>,
    /// Steps begun and not finished in a journal a resumed agent read (task, number): a result
    /// written there is their body run again.
    again: HashMap<(String, u64), String>,
    /// Answers stored: the next question takes the answer after them.
    pub(super) answers: usize,
    /// The task the journal is written for (known before a send that is stopped returns).
    pub(super) task: Option<String>,
}

/// Where one agent's writes stop: before journal write number `at`, or (`at` the count of
/// them all) before the write that ends the task. Past it the agent stores nothing: its
/// writes wait forever, as a stopped process's.
pub(super) struct Cut {
    pub(super) at: Option<usize>,
    pub(super) tally: Arc<Mutex<Tally>>,
    pub(super) dead: AtomicBool,
    pub(super) stopped: watch::Sender<bool>,
}

impl Cut {
    fn alive(&self) -> bool {
        !self.dead.load(Ordering::SeqCst)
    }

    fn stop(&self) {
        self.dead.store(true, Ordering::SeqCst);
        self.stopped.send_replace(true);
    }

    pub(super) fn tally(&self) -> std::sync::MutexGuard<'_, Tally> {
        self.tally.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether journal entry `n` of task `task` is stored (counted), or is where the agent stops.
    fn journal(&self, task: &str, n: u64, entry: &Entry) -> bool {
        if !self.alive() {
            return false;
        }
        let mut tally = self.tally();
        if tally.task.is_none() {
            tally.task = Some(task.to_owned());
        }
        if n == 0 {
            return true;
        }
        if Some(tally.entries.len()) == self.at {
            drop(tally);
            self.stop();
            return false;
        }
        tally.entries.push(entry.clone());
        match entry {
            Entry::Started { started } => *tally.runs.entry(started.clone()).or_default() += 1,
            Entry::Step { name, .. } if tally.again.remove(&(task.to_owned(), n)).is_some() => {
                *tally.runs.entry(name.clone()).or_default() += 1;
            }
            Entry::Answer { .. } => tally.answers += 1,
            _ => {}
        }
        true
    }

    /// Whether a write of `task` is stored, or is where the agent stops (the task's end, once
    /// every journal write before it was).
    fn write(&self, task: &Task) -> bool {
        if !self.alive() {
            return false;
        }
        if task.status.state.is_terminal() && Some(self.tally().entries.len()) == self.at {
            self.stop();
            return false;
        }
        true
    }

    /// A journal read by an agent that takes task `task` over: its steps begun and not finished
    /// run again.
    fn read(&self, task: &str, rows: &[(u64, Entry)]) {
        let mut tally = self.tally();
        for (n, entry) in rows {
            if let (Some(at), Entry::Started { started }) = (n.checked_sub(STARTS), entry)
                && !rows.iter().any(|(m, _)| *m == at)
            {
                tally.again.insert((task.to_owned(), at), started.clone());
            }
        }
    }
}

/// A write past the stop: it never ends (the process is gone).
async fn never<T>() -> T {
    std::future::pending().await
}

/// The SQLite store of one agent, its writes cut where [`Cut`] says.
pub(super) struct Cutting {
    pub(super) sql: SqlTasks,
    pub(super) cut: Arc<Cut>,
}

struct CutTasks {
    inner: Arc<dyn TaskStore>,
    cut: Arc<Cut>,
}

struct CutLog {
    inner: Arc<dyn EventLog>,
    cut: Arc<Cut>,
}

#[async_trait::async_trait]
impl TaskStore for CutTasks {
    async fn create(&self, task: Task) -> Result<TaskVersion, A2AError> {
        if !self.cut.write(&task) {
            return never().await;
        }
        self.inner.create(task).await
    }

    async fn update(&self, task: Task) -> Result<TaskVersion, A2AError> {
        if !self.cut.write(&task) {
            return never().await;
        }
        self.inner.update(task).await
    }

    async fn get(&self, task_id: &str) -> Result<Option<Task>, A2AError> {
        self.inner.get(task_id).await
    }

    async fn list(&self, req: &ListTasksRequest) -> Result<ListTasksResponse, A2AError> {
        self.inner.list(req).await
    }

    async fn begin_cancel(&self, task_id: &str) -> Result<Task, A2AError> {
        if !self.cut.alive() {
            return never().await;
        }
        self.inner.begin_cancel(task_id).await
    }
}

#[async_trait::async_trait]
impl EventLog for CutLog {
    fn append(&self, task_id: &str, seq: u64, event: &Arc<Event>) {
        if self.cut.alive() {
            self.inner.append(task_id, seq, event);
        }
    }

    async fn update_at(&self, task: Task, seq: u64) -> Result<(), A2AError> {
        if !self.cut.write(&task) {
            return never().await;
        }
        self.inner.update_at(task, seq).await
    }

    async fn read(&self, task_id: &str, after: Option<u64>) -> Result<Option<Logged>, A2AError> {
        self.inner.read(task_id, after).await
    }

    fn keeps_journals(&self) -> bool {
        self.inner.keeps_journals()
    }

    fn journal(&self, task_id: &str, n: u64, entry: &Entry) {
        if self.cut.journal(task_id, n, entry) {
            self.inner.journal(task_id, n, entry);
        }
    }

    async fn journal_written(&self, task_id: &str, n: u64) -> Result<(), A2AError> {
        if !self.cut.alive() {
            return never().await;
        }
        self.inner.journal_written(task_id, n).await
    }

    async fn write_journal(&self, task_id: &str, n: u64, entry: &Entry) -> Result<(), A2AError> {
        if !self.cut.journal(task_id, n, entry) {
            return never().await;
        }
        self.inner.write_journal(task_id, n, entry).await
    }

    async fn read_journal(&self, task_id: &str) -> Result<Vec<(u64, Entry)>, A2AError> {
        let rows = self.inner.read_journal(task_id).await?;
        self.cut.read(task_id, &rows);
        Ok(rows)
    }

    async fn give_up(&self, task_id: &str) -> Result<(), A2AError> {
        if !self.cut.alive() {
            return never().await;
        }
        self.inner.give_up(task_id).await
    }
}

#[async_trait::async_trait]
impl Store for Cutting {
    fn tasks(&self) -> Arc<dyn TaskStore> {
        Arc::new(CutTasks {
            inner: Store::tasks(&self.sql),
            cut: Arc::clone(&self.cut),
        })
    }

    fn push_configs(&self) -> Option<Arc<dyn a2a_server::PushConfigStore>> {
        Store::push_configs(&self.sql)
    }

    fn events(&self) -> Option<Arc<dyn EventLog>> {
        let inner = Store::events(&self.sql)?;
        Some(Arc::new(CutLog {
            inner,
            cut: Arc::clone(&self.cut),
        }))
    }

    fn changes(&self) -> Option<ChangeFeed> {
        self.sql.changes()
    }

    async fn forward(&self, task_id: &str, message: &a2a::Message) -> Result<bool, A2AError> {
        self.sql.forward(task_id, message).await
    }

    async fn settle(&self, task_id: &str) -> Result<(), A2AError> {
        if !self.cut.alive() {
            return never().await;
        }
        self.sql.settle(task_id).await
    }

    fn recover_into(&self, recovery: Recovery) {
        self.sql.recover_into(recovery);
    }

    async fn hit(&self, key: &str, start_ms: i64, window_ms: i64) -> Result<Option<u64>, A2AError> {
        self.sql.hit(key, start_ms, window_ms).await
    }

    async fn claim_key(
        &self,
        key: &str,
        task_id: &str,
        digest: &str,
    ) -> Result<KeyClaim, A2AError> {
        if !self.cut.alive() {
            return never().await;
        }
        self.sql.claim_key(key, task_id, digest).await
    }

    async fn release(&self) -> Result<(), A2AError> {
        self.sql.release().await
    }

    fn reachable(&self) -> bool {
        self.sql.reachable()
    }
}
