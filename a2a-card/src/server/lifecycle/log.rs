//! The tasks this process follows: each one's current state and its event log, numbered.
//!
//! Every event of a task goes through [`Tracked::record`]: it gets the next sequence number,
//! is applied to the task in place (a question joins the history when the status moves on; an artifact chunk is appended to its artifact, so each chunk costs its own size),
//! and is kept in the log, from which every reader (the caller's stream, subscribers, a
//! blocking send waiting for its answer) reads at its own pace: a slow reader is never
//! dropped, it reads the log later.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use a2a::{A2AError, StreamResponse, Task, TaskState, TaskStatus};
use futures::stream::{self, BoxStream};
use tokio::sync::watch;

/// How long the log of a finished task stays in memory, for subscribers that reconnect.
pub(crate) const LINGER: Duration = Duration::from_secs(60);

/// The tasks followed here, by id.
#[derive(Default)]
pub(crate) struct Live(Mutex<HashMap<String, Arc<Tracked>>>);

impl Live {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Tracked>>> {
        lock(&self.0)
    }

    /// The tracked task `id`, if this process follows it.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<Tracked>> {
        self.lock().get(id).cloned()
    }

    /// Follows `task` from now on (its log starts at sequence number 0, the task itself); the
    /// one already followed when there is one.
    pub(crate) fn track(&self, task: Task) -> Arc<Tracked> {
        self.track_at(task, 0)
    }

    /// Follows `task` as it is after its event `seq` (a task read from the store's log); the
    /// one already followed when there is one.
    pub(crate) fn track_at(&self, task: Task, seq: u64) -> Arc<Tracked> {
        let mut tasks = self.lock();
        if let Some(tracked) = tasks.get(&task.id) {
            return Arc::clone(tracked);
        }
        let tracked = Arc::new(Tracked::new(task, seq));
        tasks.insert(tracked.id.clone(), Arc::clone(&tracked));
        tracked
    }

    /// Stops following `id` after [`LINGER`], if it is still the same entry.
    pub(crate) fn forget_later(self: &Arc<Self>, tracked: &Arc<Tracked>) {
        let live = Arc::downgrade(self);
        let entry = Arc::downgrade(tracked);
        let id = tracked.id.clone();
        tokio::spawn(async move {
            tokio::time::sleep(LINGER).await;
            let (Some(live), Some(entry)) = (live.upgrade(), entry.upgrade()) else {
                return;
            };
            let mut tasks = live.lock();
            if tasks.get(&id).is_some_and(|t| Arc::ptr_eq(t, &entry)) {
                tasks.remove(&id);
            }
        });
    }
}

/// One task followed here.
pub(crate) struct Tracked {
    pub(crate) id: String,
    pub(crate) context: String,
    state: Mutex<State>,
    /// The sequence number of the last event recorded (readers wait on it).
    last: watch::Sender<u64>,
    /// The task's span and what its metrics need, while it runs here.
    observed: Mutex<Option<Observed>>,
}

/// A task observed by the telemetry: its span (closed at its final state), its skill, and
/// when it began.
pub(crate) struct Observed {
    pub(crate) span: tracing::Span,
    pub(crate) skill: &'static str,
    pub(crate) since: std::time::Instant,
}

struct State {
    task: Task,
    /// The number of the event `task` was at when this process began to follow it.
    base: u64,
    /// Events `base + 1`, `base + 2`, ... in order (event `n` at index `n - base - 1`).
    log: Vec<StreamResponse>,
    /// The number of the last event readers may see: an event the store must keep (a status,
    /// a whole artifact) is seen once it is written, so that no reader learns of a state a
    /// crash could lose.
    published: u64,
    /// An error the caller that started the current turn gets instead of the task (a skill
    /// that could not take its input), with the sequence number after which it applies.
    error: Option<(u64, A2AError)>,
}

/// What a reader of the log stops at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Until {
    /// A terminal state (a subscriber).
    Terminal,
    /// A terminal state or one that waits for the caller (the stream of a send).
    Interrupted,
}

impl Until {
    pub(crate) fn stops_at(self, state: &TaskState) -> bool {
        state.is_terminal() || (self == Until::Interrupted && asks(state))
    }
}

impl Tracked {
    fn new(task: Task, base: u64) -> Tracked {
        Tracked {
            id: task.id.clone(),
            context: task.context_id.clone(),
            state: Mutex::new(State {
                task,
                base,
                log: Vec::new(),
                published: base,
                error: None,
            }),
            last: watch::channel(base).0,
            observed: Mutex::new(None),
        }
    }

    /// Observes the task from now on (a task created here).
    pub(crate) fn observe(&self, observed: Observed) {
        super::super::telemetry::task_started(observed.skill);
        *lock(&self.observed) = Some(observed);
    }

    /// The task's span, while it is observed.
    pub(crate) fn span(&self) -> Option<tracing::Span> {
        let observed = lock(&self.observed);
        observed.as_ref().map(|o| o.span.clone())
    }

    /// Tells the telemetry of a state the task reached; a final one ends its observation.
    pub(crate) fn reached(&self, state: &TaskState) {
        let mut observed = lock(&self.observed);
        let Some(o) = observed.as_ref() else { return };
        let terminal = state.is_terminal();
        super::super::telemetry::state_changed(
            &o.span,
            o.skill,
            crate::v0_3::state_name(state),
            terminal,
            o.since.elapsed(),
        );
        if terminal {
            *observed = None;
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// The task as it is now, and the sequence number it reflects.
    pub(crate) fn snapshot(&self) -> (Task, u64) {
        let state = self.lock();
        (state.task.clone(), state.last())
    }

    /// The number of the first event this process holds (the events before it are in the
    /// store's log, if anywhere).
    pub(crate) fn first(&self) -> u64 {
        self.lock().base + 1
    }

    /// The task's state now.
    pub(crate) fn state(&self) -> TaskState {
        self.lock().task.status.state.clone()
    }

    /// Artifact `id` as the task holds it now.
    pub(crate) fn artifact(&self, id: &str) -> Option<a2a::Artifact> {
        let state = self.lock();
        let artifacts = state.task.artifacts.as_ref()?;
        artifacts.iter().find(|a| a.artifact_id == id).cloned()
    }

    /// Applies `f` to the task without an event (the caller's message joining the history).
    pub(crate) fn edit(&self, f: impl FnOnce(&mut Task)) {
        f(&mut self.lock().task);
    }

    /// Records `event`: numbered, applied to the task, handed to `logged` with its number
    /// (for the store's log), and kept. Returns its number, with the task as it now is when
    /// the event changes what the store keeps (a status, or a whole artifact): readers see
    /// such an event once the caller has written it and [`publish`](Self::publish)es it; a
    /// chunk (`None`), which the log alone carries, they see at once. An event after the task
    /// has ended is dropped (`None`): a terminal state is final.
    pub(crate) fn record(
        &self,
        mut event: StreamResponse,
        logged: impl FnOnce(u64, &StreamResponse),
    ) -> Option<(u64, Option<Task>)> {
        let seq = {
            let mut state = self.lock();
            if state.task.status.state.is_terminal() {
                return None;
            }
            let stored = apply(&mut state.task, &mut event);
            let seq = state.last() + 1;
            logged(seq, &event);
            state.log.push(event);
            if stored {
                return Some((seq, Some(state.task.clone())));
            }
            state.published = seq;
            seq
        };
        self.last.send_replace(seq);
        Some((seq, None))
    }

    /// Lets readers see the events up to `seq` (written to the store).
    pub(crate) fn publish(&self, seq: u64) {
        {
            let mut state = self.lock();
            if seq <= state.published {
                return;
            }
            state.published = seq.min(state.last());
        }
        self.last.send_modify(|_| {});
    }

    /// Records event `seq` as another process numbered it (a task it runs); events this
    /// process holds already are left out.
    pub(crate) fn record_at(&self, seq: u64, mut event: StreamResponse) {
        {
            let mut state = self.lock();
            if seq <= state.last() || state.task.status.state.is_terminal() {
                return;
            }
            apply(&mut state.task, &mut event);
            if state.last() + 1 != seq {
                // A gap (events this process never saw): the log here starts again at `seq`.
                state.log.clear();
                state.base = seq - 1;
            }
            state.log.push(event);
            state.published = seq;
        }
        self.last.send_replace(seq);
    }

    /// Records an error for the caller of the current turn, then `event` (the failure).
    pub(crate) fn record_error(
        &self,
        error: A2AError,
        event: StreamResponse,
        logged: impl FnOnce(u64, &StreamResponse),
    ) -> Option<Task> {
        {
            let mut state = self.lock();
            let after = state.last();
            state.error = Some((after, error));
        }
        self.record(event, logged).and_then(|(_, task)| task)
    }

    /// The error recorded for the turn whose events start after `seq`, if any.
    pub(crate) fn error_after(&self, seq: u64) -> Option<A2AError> {
        let state = self.lock();
        match &state.error {
            Some((at, e)) if *at >= seq => Some(e.clone()),
            _ => None,
        }
    }

    /// Waits until the task reaches a state `until` stops at, after event `after`.
    pub(crate) async fn wait(&self, after: u64, until: Until) {
        let mut last = self.last.subscribe();
        loop {
            {
                let state = self.lock();
                let seen = state.published == state.last();
                if seen && state.last() >= after && until.stops_at(&state.task.status.state) {
                    return;
                }
            }
            if last.changed().await.is_err() {
                return;
            }
        }
    }

    /// Waits until an event after `after` is recorded (or the task has ended).
    pub(crate) async fn wait_beyond(&self, after: u64) {
        let mut last = self.last.subscribe();
        loop {
            {
                let state = self.lock();
                if state.published > after {
                    return;
                }
            }
            if last.changed().await.is_err() {
                return;
            }
        }
    }

    /// The events after `after`, in order, as they come, until one that `until` stops at; the
    /// turn's error instead of its failure event, when one was recorded.
    pub(crate) fn events(
        self: &Arc<Self>,
        after: u64,
        until: Until,
    ) -> BoxStream<'static, Result<(u64, StreamResponse), A2AError>> {
        struct Reader {
            tracked: Arc<Tracked>,
            last: watch::Receiver<u64>,
            next: u64,
            until: Until,
            done: bool,
        }
        let reader = Reader {
            last: self.last.subscribe(),
            tracked: Arc::clone(self),
            next: after + 1,
            until,
            done: false,
        };
        Box::pin(stream::unfold(reader, |mut r| async move {
            if r.done {
                return None;
            }
            loop {
                let found = {
                    let state = r.tracked.lock();
                    // Events before this process followed the task are not here.
                    r.next = r.next.max(state.base + 1);
                    let visible = r.next <= state.published;
                    match state
                        .log
                        .get((r.next - state.base - 1) as usize)
                        .filter(|_| visible)
                    {
                        Some(event) => {
                            let mut error = None;
                            if let StreamResponse::StatusUpdate(u) = event {
                                if r.until.stops_at(&u.status.state) {
                                    r.done = true;
                                    // The caller's own turn (a send) gets its error, if any.
                                    let own = r.until == Until::Interrupted;
                                    if let Some((at, e)) = state.error.as_ref().filter(|_| own) {
                                        if *at + 1 == r.next {
                                            error = Some(e.clone());
                                        }
                                    }
                                }
                            }
                            Some(match error {
                                Some(e) => Err(e),
                                None => Ok((r.next, event.clone())),
                            })
                        }
                        None if state.task.status.state.is_terminal()
                            && state.published == state.last() =>
                        {
                            return None;
                        }
                        None => None,
                    }
                };
                if let Some(item) = found {
                    r.next += 1;
                    return Some((item, r));
                }
                if r.last.changed().await.is_err() {
                    return None;
                }
            }
        }))
    }
}

impl State {
    /// The number of the last event recorded.
    fn last(&self) -> u64 {
        self.base + self.log.len() as u64
    }
}

/// Applies `event` to `task` (stamping a status with the time when it has none); whether the
/// store keeps the change (a status, or an artifact written whole).
fn apply(task: &mut Task, event: &mut StreamResponse) -> bool {
    match event {
        StreamResponse::StatusUpdate(update) => {
            if update.status.timestamp.is_none() {
                update.status.timestamp = Some(chrono::Utc::now());
            }
            let TaskStatus { state, message, .. } =
                std::mem::replace(&mut task.status, update.status.clone());
            // The question it replaces joins the conversation (progress notes do not).
            if let (Some(message), true) = (message, asks(&state)) {
                task.history.get_or_insert_with(Vec::new).push(message);
            }
            true
        }
        StreamResponse::ArtifactUpdate(update) => {
            let artifacts = task.artifacts.get_or_insert_with(Vec::new);
            let append = update.append == Some(true);
            let found = artifacts
                .iter_mut()
                .find(|a| a.artifact_id == update.artifact.artifact_id);
            match found {
                Some(artifact) if append => {
                    artifact.parts.extend(update.artifact.parts.iter().cloned());
                    false
                }
                Some(artifact) => {
                    *artifact = update.artifact.clone();
                    update.last_chunk == Some(true)
                }
                None => {
                    artifacts.push(update.artifact.clone());
                    update.last_chunk == Some(true)
                }
            }
        }
        StreamResponse::Task(t) => {
            *task = t.clone();
            true
        }
        StreamResponse::Message(_) => false,
    }
}

/// Whether a task in `state` waits for the caller (its status message is a question).
pub(crate) fn asks(state: &TaskState) -> bool {
    matches!(state, TaskState::InputRequired | TaskState::AuthRequired)
}

/// Locks a mutex whose data stays consistent even if a holder panicked.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
