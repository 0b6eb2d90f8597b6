//! A task followed here: the one place its state changes.
//!
//! A [`Tracked`] task is everything this process knows of one task: the task as it is and its
//! event log (numbered, read by every follower at its own pace), its [phase](machine::Phase)
//! with its handler (not run here, running, waiting for an answer, ended: [`stage`]), the
//! permits it counts in the agent's limits, and its telemetry. Nothing outside this module
//! changes it: the methods that do are private to it, and its phase moves only by the
//! [table](machine::next) of allowed changes, which says what each change requires; the
//! [`Recorder`] carries that out, in order (the store write, the events its readers and
//! webhooks see, the end of the task here).
//!
//! Every event of a task goes through [`Recorder::record`]: it gets the next sequence
//! number, is applied to the task in place (a question joins the history when the status
//! moves on; an artifact chunk is appended to its artifact, so each chunk costs its own size),
//! and is kept in the log, from which every reader (the caller's stream, subscribers, a
//! blocking send waiting for its answer) reads at its own pace: a slow reader is never
//! dropped, it reads the log later.
//!
//! One file per part: [`machine`] (the table of changes), [`stage`] (the handler and its
//! question, as the table moves them), [`recorder`] (where a change's effects are carried
//! out: the store, readers, webhooks), [`handover`] (an answer handed to the handler that
//! asked, a question withdrawn), [`mailbox`] (answers kept for a durable task no process
//! runs yet), [`registry`] (the tasks followed here, by id), [`updates`] (the events this
//! process makes: a status, an artifact chunk, a reply's part); this file holds the task and
//! its log.

mod handover;
mod machine;
mod mailbox;
mod recorder;
mod registry;
mod stage;
pub(crate) mod updates;

pub(crate) use handover::{answer_of, deliver, hand_over, withdraw_unanswered};
pub(crate) use machine::{Happening, Phase, Refused};
pub(crate) use mailbox::{Found, Letter};
pub(crate) use recorder::{Ending, Recorder, Storing};
pub use registry::FinishedLogs;
pub(crate) use registry::Registry;
pub(crate) use stage::{Caller, Handler, Journal, Run, TurnOutcome, Waiter, Waiting, turn};

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};

use a2a::{A2AError, StreamResponse, Task, TaskState};
use futures::stream::{self, BoxStream};
use tokio::sync::watch;

use super::super::limits::Permits;
use super::super::store::{Event, apply_owned, stamp, task_bytes};
pub(crate) use super::super::store::{apply, asks};

/// An event of a task's log, with its number.
pub(crate) type Numbered = (u64, Arc<Event>);

/// One task followed here.
pub(crate) struct Tracked {
    pub(crate) id: String,
    pub(crate) context: String,
    state: Mutex<State>,
    /// The sequence number of the last event recorded (readers wait on it).
    last: watch::Sender<u64>,
    /// The task's span and what its metrics need, while it runs here.
    observed: Mutex<Option<Observed>>,
    /// Whether [`Registry::finished`] took note of its end.
    noted: AtomicBool,
    /// Whether a stream that can be resumed reads its log ([`Tracked::resumable`]): only such a
    /// log is kept once the task ends.
    resumable: AtomicBool,
    /// What the task counts in the agent's limits of running tasks, until it ends.
    permits: Mutex<Option<Permits>>,
    /// Its handler, as its phase holds it (see [`stage`]).
    stage: stage::Stage,
}

/// A task observed by the telemetry: its span (closed at its final state), its skill, and
/// when it began.
pub(crate) struct Observed {
    pub(crate) span: tracing::Span,
    pub(crate) skill: &'static str,
    pub(crate) since: std::time::Instant,
}

struct State {
    /// Shared with the readers of a snapshot ([`Tracked::shared`]); copied by the next change
    /// while one still holds it.
    task: Arc<Task>,
    /// The number of the event `task` was at when this process began to follow it.
    base: u64,
    /// Events `base + 1`, `base + 2`, ... in order (event `n` at index `n - base - 1`).
    log: Vec<Arc<Event>>,
    /// The number of the last event readers may see: an event the store must keep (a status,
    /// a whole artifact) is seen once it is written, so that no reader learns of a state a
    /// crash could lose.
    published: u64,
    /// Why the task's run here stopped short, when the store refused a write of it: every
    /// reader waiting for what was not stored gets this error instead, and nothing more is
    /// recorded (the store's copy is the task).
    broken: Option<A2AError>,
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
    fn new(task: Arc<Task>, base: u64) -> Tracked {
        Tracked {
            id: task.id.clone(),
            context: task.context_id.clone(),
            state: Mutex::new(State {
                task,
                base,
                log: Vec::new(),
                published: base,
                broken: None,
            }),
            last: watch::channel(base).0,
            observed: Mutex::new(None),
            noted: AtomicBool::new(false),
            resumable: AtomicBool::new(false),
            permits: Mutex::new(None),
            stage: Default::default(),
        }
    }

    /// The task's phase here (see [`machine`]).
    pub(crate) fn phase(&self) -> Phase {
        self.stage.phase()
    }

    /// A handler of the task starts here, its first turn `caller`'s (an older one is
    /// stopped); `false`, and `handler` dropped, when the task ended here.
    pub(crate) fn start(&self, handler: Handler) -> bool {
        self.stage.start(handler)
    }

    /// The handler of `run` asks a question and waits on `waiter` for its answer; `false`
    /// when it runs here no more (stopped, or replaced by a newer run).
    pub(crate) fn ask(&self, run: Run, waiter: Waiter) -> bool {
        self.stage.ask(Some(run), waiter)
    }

    /// Whether a newer run of the task than `run` runs here (the task was taken up here
    /// again while `run` went on): `run` is over, and what its handler sent last is not the
    /// task's.
    pub(crate) fn replaced(&self, run: Run) -> bool {
        self.stage.replaced(run)
    }

    /// Puts `waiting` back: the handler waits on for an answer (one taken for it could not be
    /// kept); `false` when it runs here no more. Its question's timer is armed again by the
    /// caller.
    pub(crate) fn wait_again(&self, waiting: Waiting) -> bool {
        let entry = waiting.journal.map(|(_, n)| n);
        self.stage.ask(None, Waiter::new(waiting.answer, entry))
    }

    /// Arms `expiry`, the timer that withdraws the question the handler waits on; aborted at
    /// once when it waits no more.
    pub(crate) fn arm(&self, expiry: tokio::task::AbortHandle) {
        self.stage.arm(expiry);
    }

    /// Takes the way to the handler waiting for an answer, its question's timer disarmed;
    /// the answer begins a turn of `caller`, taken from it (`None`: of no caller here), which
    /// is left where it is when the handler does not wait (and the table's reason is given).
    pub(crate) fn take_waiting(&self, caller: &mut Option<Caller>) -> Result<Waiting, Refused> {
        self.stage.take_waiting(caller)
    }

    /// Counts the task in the agent's limits of running tasks until it ends.
    pub(crate) fn hold(&self, permits: Permits) {
        *lock(&self.permits) = Some(permits);
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
    fn reached(&self, state: &TaskState) {
        if state.is_terminal() {
            lock(&self.permits).take();
        }
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

    /// About how many bytes the task and its log hold: their data, estimated (what
    /// [`FinishedLogs`] counts).
    fn weight(&self) -> usize {
        let state = self.lock();
        // Each event behind its `Arc` (two counters), in the log's room.
        let events: usize = state.log.capacity() * size_of::<Arc<Event>>()
            + state
                .log
                .iter()
                .map(|e| 2 * size_of::<usize>() + e.bytes())
                .sum::<usize>();
        size_of::<Tracked>() + self.id.len() + self.context.len() + task_bytes(&state.task) + events
    }

    /// The task as it is now, and the sequence number it reflects.
    pub(crate) fn snapshot(&self) -> (Task, u64) {
        let state = self.lock();
        (Task::clone(&state.task), state.last())
    }

    /// The task as it is now, shared rather than copied (a change made while the caller holds
    /// it copies it then, and a task that has ended does not change), and the sequence number
    /// it reflects.
    pub(crate) fn shared(&self) -> (Arc<Task>, u64) {
        let state = self.lock();
        (Arc::clone(&state.task), state.last())
    }

    /// The number of the task's last event.
    pub(crate) fn last(&self) -> u64 {
        self.lock().last()
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

    /// Applies `f` to the task without an event (the caller's message joining the history).
    fn edit(&self, f: impl FnOnce(&mut Task)) {
        f(Arc::make_mut(&mut self.lock().task));
    }

    /// Records `event`: numbered, applied to the task, handed to `logged` with its number
    /// (for the store's log), and kept. Returns its number, with the task as it now is (shared:
    /// the next change copies it while the store holds it) when
    /// the event changes what the store keeps (a status, or a whole artifact): readers see
    /// such an event once the caller has written it and [`publish`](Self::publish)es it; a
    /// chunk (`None`), which the log alone carries, they see at once. An event after the task
    /// has ended is dropped (`None`): a terminal state is final.
    fn record(
        &self,
        event: impl Into<Record>,
        logged: impl FnOnce(u64, &Arc<Event>),
    ) -> Option<(u64, Arc<Event>, Option<Arc<Task>>)> {
        let event = Made::new(event.into());
        let (seq, event) = {
            let mut state = self.lock();
            let (seq, event, stored) = state.push(event, logged)?;
            if stored {
                return Some((seq, event, Some(Arc::clone(&state.task))));
            }
            state.published = seq;
            (seq, event)
        };
        self.last.send_replace(seq);
        Some((seq, event, None))
    }

    /// Records `events` in order as one change, each as [`record`](Self::record) records
    /// one, with the task as it is after the last (shared) when any of them changes what
    /// the store keeps (readers see them all once it is written). The events recorded (none
    /// once the task has ended), with their numbers.
    fn record_all(
        &self,
        events: impl IntoIterator<Item = Record>,
        mut logged: impl FnMut(u64, &Arc<Event>),
    ) -> (Vec<Numbered>, Option<Arc<Task>>) {
        let events: Vec<Made> = events.into_iter().map(Made::new).collect();
        let mut recorded = Vec::with_capacity(events.len());
        let mut stored = false;
        let last = {
            let mut state = self.lock();
            for event in events {
                // The close of an artifact the task does not hold is not recorded, and the
                // events after it are.
                if let Made::Close(id) = &event
                    && state.artifact(id).is_none()
                {
                    continue;
                }
                let Some((seq, event, keeps)) = state.push(event, &mut logged) else {
                    break;
                };
                stored |= keeps;
                recorded.push((seq, event));
            }
            let Some(&(last, _)) = recorded.last() else {
                return (recorded, None);
            };
            if stored {
                return (recorded, Some(Arc::clone(&state.task)));
            }
            state.published = last;
            last
        };
        self.last.send_replace(last);
        (recorded, None)
    }

    /// Stops the task's run here short: the store refused to write event `seq` or an earlier
    /// one. Readers of what was not stored get `error` instead (a caller is never told of a
    /// state the store does not have), and nothing more is recorded.
    fn break_off(&self, error: A2AError) {
        {
            let mut state = self.lock();
            if state.broken.is_none() {
                state.broken = Some(error);
            }
        }
        self.last.send_modify(|_| {});
    }

    /// Why the task's run here stopped short, if it did (see [`break_off`](Self::break_off)).
    pub(crate) fn broken(&self) -> Option<A2AError> {
        self.lock().broken.clone()
    }

    /// Lets readers see the events up to `seq` (written to the store).
    fn publish(&self, seq: u64) {
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
    fn record_at(&self, seq: u64, event: Arc<Event>) {
        {
            let mut state = self.lock();
            if seq <= state.last() || state.task.status.state.is_terminal() {
                return;
            }
            match event.event() {
                Ok(read) => {
                    apply(Arc::make_mut(&mut state.task), &read);
                }
                // Not an event this process can follow: its readers learn why, and read the
                // store's copy.
                Err(e) => {
                    state.broken.get_or_insert(e);
                    drop(state);
                    self.last.send_modify(|_| {});
                    return;
                }
            }
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

    /// Whether a caller here reads the task: a blocking call waiting for it, or a stream.
    pub(crate) fn read_here(&self) -> bool {
        self.last.receiver_count() > 0
    }

    /// Waits until the task reaches a state `until` stops at, after event `after`.
    pub(crate) async fn wait(&self, after: u64, until: Until) {
        let mut last = self.last.subscribe();
        loop {
            {
                let state = self.lock();
                let seen = state.published == state.last();
                let stops =
                    seen && state.last() >= after && until.stops_at(&state.task.status.state);
                if stops || state.broken.is_some() {
                    return;
                }
            }
            if last.changed().await.is_err() {
                return;
            }
        }
    }

    /// Waits until an event after `after` is recorded (or the run here broke off).
    pub(crate) async fn wait_beyond(&self, after: u64) {
        let mut last = self.last.subscribe();
        loop {
            {
                let state = self.lock();
                if state.published > after || state.broken.is_some() {
                    return;
                }
            }
            if last.changed().await.is_err() {
                return;
            }
        }
    }

    /// Takes note that a stream whose reader may resume it (with `Last-Event-ID`) reads the
    /// task's log: the log is kept for it once the task ends, as [`FinishedLogs`] allows.
    pub(crate) fn resumable(&self) {
        self.resumable
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// The events after `after`, in order, as they come, until one that `until` stops at.
    pub(crate) fn events(
        self: &Arc<Self>,
        after: u64,
        until: Until,
    ) -> BoxStream<'static, Result<Numbered, A2AError>> {
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
                    // What the store did not keep is never read: the reader gets why.
                    if let Some(broken) = state.broken.as_ref().filter(|_| !visible) {
                        r.done = true;
                        let broken = broken.clone();
                        drop(state);
                        return Some((Err(broken), r));
                    }
                    match state
                        .log
                        .get((r.next - state.base - 1) as usize)
                        .filter(|_| visible)
                    {
                        Some(event) => {
                            if let Some(StreamResponse::StatusUpdate(u)) = event.kept()
                                && r.until.stops_at(&u.status.state)
                            {
                                r.done = true;
                            }
                            Some(Ok((r.next, Arc::clone(event))))
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
    /// Artifact `id` of the task, if it holds one.
    fn artifact(&self, id: &str) -> Option<&a2a::Artifact> {
        let mut artifacts = self.task.artifacts.iter().flatten();
        artifacts.find(|a| a.artifact_id == id)
    }

    /// The number of the last event recorded.
    fn last(&self) -> u64 {
        self.base + self.log.len() as u64
    }

    /// Numbers `event`, applies it to the task, hands it to `logged` and keeps it: its number,
    /// and whether it changes what the store keeps (a status, or a whole artifact); `None` (and
    /// nothing recorded) once the task has ended or its run here broke off, and for the close
    /// of an artifact the task does not hold.
    fn push(
        &mut self,
        event: Made,
        logged: impl FnOnce(u64, &Arc<Event>),
    ) -> Option<(u64, Arc<Event>, bool)> {
        if self.task.status.state.is_terminal() || self.broken.is_some() {
            return None;
        }
        let (event, stored) = match event {
            Made::Chunk { event, chunk } => {
                let stored = apply_owned(Arc::make_mut(&mut self.task), chunk);
                (event, stored)
            }
            Made::Whole(event) => {
                let stored = event
                    .kept()
                    .is_some_and(|kept| apply(Arc::make_mut(&mut self.task), kept));
                (event, stored)
            }
            // The artifact is in the task already, whole: the task is not changed (nor
            // copied, while the store shares it), only written, its artifact complete.
            Made::Close(id) => {
                let artifact = self.artifact(&id)?;
                let closing = Event::closing(&self.task.id, &self.task.context_id, artifact);
                (Arc::new(closing), true)
            }
        };
        let seq = self.last() + 1;
        logged(seq, &event);
        self.log.push(Arc::clone(&event));
        Some((seq, event, stored))
    }
}

/// What is recorded of a task: an event, or the close of an artifact sent in chunks.
// Passed by value on its way to being recorded, as the event it holds is: boxing the event
// would cost every chunk an allocation.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Record {
    /// An event, as it is.
    Event(StreamResponse),
    /// The closing update of artifact `0`, sent in chunks: all of it, once, complete, written
    /// from the artifact the task holds when it is recorded ([`Event::closing`]).
    Close(String),
}

impl From<StreamResponse> for Record {
    fn from(event: StreamResponse) -> Record {
        Record::Event(event)
    }
}

/// An event made ready to record before the task's lock is taken: stamped, and an appended
/// chunk serialised (what its readers, the log and the webhooks share), its parts kept apart
/// to move into the task. A close is made under the lock, from the task's artifact.
// Made and recorded at once (see `Record`).
#[allow(clippy::large_enum_variant)]
enum Made {
    Chunk {
        event: Arc<Event>,
        chunk: StreamResponse,
    },
    Whole(Arc<Event>),
    Close(String),
}

impl Made {
    fn new(record: Record) -> Made {
        let mut event = match record {
            Record::Event(event) => event,
            Record::Close(id) => return Made::Close(id),
        };
        stamp(&mut event);
        match Event::chunk_of(&event) {
            Some(made) => Made::Chunk {
                event: Arc::new(made),
                chunk: event,
            },
            None => Made::Whole(Arc::new(Event::new(event))),
        }
    }
}

/// Locks a mutex whose data stays consistent even if a holder panicked.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests;
