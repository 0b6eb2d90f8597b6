//! The tasks followed here, by id: those running, and the latest finished ones whose logs a
//! resumable reader may come back to.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use a2a::Task;

use super::{Tracked, lock};

/// How much of its finished tasks' event logs a server keeps in memory, for subscribers that
/// reconnect with `Last-Event-ID` after a task ended.
///
/// Where the store keeps the event log (SQLite, Postgres, a [`Store`](super::super::super::store::Store)
/// of your own with an [`EventLog`](super::super::super::store::EventLog)), nothing of a finished task
/// stays in memory: a reconnecting subscriber reads the log from the store. Elsewhere (the
/// memory store) the logs of the latest finished tasks that a stream read are kept (a task
/// answered by a blocking call alone has no stream to resume), oldest evicted first, at most
/// [`max_entries`](Self::max_entries) of them (and never more than the store's
/// [`Retention::max_terminal`](super::super::super::store::Retention::max_terminal)) and at most
/// [`max_bytes`](Self::max_bytes) in all (an estimate of their data). A subscriber that
/// reconnects to a task whose log was evicted is told so.
///
/// The default keeps at most 10,000 logs and 32 MiB.
///
/// ```
/// use a2a_card::server::FinishedLogs;
///
/// let logs = FinishedLogs::default().max_entries(1_000).max_bytes(8 << 20);
/// assert_eq!(logs.entries(), 1_000);
/// assert_eq!(logs.bytes(), 8 << 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FinishedLogs {
    entries: usize,
    bytes: usize,
}

impl Default for FinishedLogs {
    fn default() -> Self {
        FinishedLogs {
            entries: 10_000,
            bytes: 32 << 20,
        }
    }
}

impl FinishedLogs {
    /// Keeps no log of a finished task in memory (a subscriber reconnecting after the end
    /// reads the store's log, or is told the log is gone).
    pub fn none() -> Self {
        FinishedLogs {
            entries: 0,
            bytes: 0,
        }
    }

    /// Keeps the logs of at most `count` finished tasks.
    pub fn max_entries(mut self, count: usize) -> Self {
        self.entries = count;
        self
    }

    /// Keeps at most about `bytes` of finished tasks' logs (their events' data, estimated).
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.bytes = bytes;
        self
    }

    /// The most logs kept.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// The most bytes kept.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// The tasks followed here, by id: those running, and the latest finished ones as
/// [`FinishedLogs`] says (none where the store keeps the log).
pub(crate) struct Registry {
    inner: Mutex<Entries>,
    /// What is kept of finished tasks ([`FinishedLogs::none`] where the store keeps their logs).
    keep: FinishedLogs,
}

#[derive(Default)]
struct Entries {
    tasks: HashMap<String, Arc<Tracked>>,
    /// The finished tasks kept, oldest first, with the bytes each is counted for.
    ended: VecDeque<(String, usize)>,
    /// The bytes of `ended`, in all.
    bytes: usize,
}

impl Registry {
    /// Follows tasks, keeping the logs of finished ones as `keep` says.
    pub(crate) fn new(keep: FinishedLogs) -> Registry {
        Registry {
            inner: Mutex::new(Entries::default()),
            keep,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Entries> {
        lock(&self.inner)
    }

    /// The tracked task `id`, if this process follows it.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<Tracked>> {
        self.lock().tasks.get(id).cloned()
    }

    /// Follows `task` from now on (its log starts at sequence number 0, the task itself); the
    /// one already followed when there is one.
    pub(crate) fn track(&self, task: impl Into<Arc<Task>>) -> Arc<Tracked> {
        self.track_at(task, 0)
    }

    /// Follows `task` as it is after its event `seq` (a task read from the store's log); the
    /// one already followed when there is one.
    pub(crate) fn track_at(&self, task: impl Into<Arc<Task>>, seq: u64) -> Arc<Tracked> {
        let task = task.into();
        let mut entries = self.lock();
        if let Some(tracked) = entries.tasks.get(&task.id) {
            return Arc::clone(tracked);
        }
        let tracked = Arc::new(Tracked::new(task, seq));
        entries
            .tasks
            .insert(tracked.id.clone(), Arc::clone(&tracked));
        tracked
    }

    /// Takes note that `tracked` ended: it is no longer followed, but for its log, kept while
    /// [`FinishedLogs`] allows (the oldest evicted first) where the store keeps none and a
    /// stream read it. Readers that hold it read on. Once per task; later calls do nothing.
    pub(super) fn finished(&self, tracked: &Arc<Tracked>) {
        if tracked
            .noted
            .swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            return;
        }
        let keep = self.keep;
        // A log no resumable stream read has no reader to come back to it.
        let resumable = tracked.resumable.load(std::sync::atomic::Ordering::Acquire);
        let weight = (keep.entries > 0 && resumable).then(|| tracked.weight());
        let mut entries = self.lock();
        let same = |t: &Arc<Tracked>| Arc::ptr_eq(t, tracked);
        let Some(weight) = weight else {
            if entries.tasks.get(&tracked.id).is_some_and(same) {
                entries.tasks.remove(&tracked.id);
            }
            return;
        };
        if !entries.tasks.get(&tracked.id).is_some_and(same) {
            return;
        }
        entries.ended.push_back((tracked.id.clone(), weight));
        entries.bytes += weight;
        while entries.ended.len() > keep.entries || entries.bytes > keep.bytes {
            let Some((id, weight)) = entries.ended.pop_front() else {
                break;
            };
            entries.bytes -= weight;
            entries.tasks.remove(&id);
        }
    }

    /// The tasks followed here.
    pub(crate) fn all(&self) -> Vec<Arc<Tracked>> {
        self.lock().tasks.values().cloned().collect()
    }

    /// Stops following `tracked` at once, keeping nothing of it (its run here stopped short:
    /// the store's copy is the task).
    pub(super) fn forget(&self, tracked: &Arc<Tracked>) {
        tracked
            .noted
            .store(true, std::sync::atomic::Ordering::Release);
        let mut entries = self.lock();
        if entries
            .tasks
            .get(&tracked.id)
            .is_some_and(|t| Arc::ptr_eq(t, tracked))
        {
            entries.tasks.remove(&tracked.id);
        }
    }

    /// How many tasks are followed (running or kept), and how many of them finished.
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (usize, usize) {
        let entries = self.lock();
        (entries.tasks.len(), entries.ended.len())
    }
}
