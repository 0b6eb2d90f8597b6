//! The one place a task's changes are carried out: its events numbered into its log, written
//! to the store, told to its readers and webhooks; its end recorded and taken note of.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use a2a::*;
use a2a_server::TaskStore;

use super::machine::{Effect, Happening, Refused};
use super::mailbox::Mailbox;
use super::{Record, Registry, Tracked};
use crate::server::push::Delivery;
use crate::server::store::{Event, EventLog};

/// The one place a task's changes are carried out (see the [module docs](self)).
pub(crate) struct Recorder {
    pub(crate) store: Arc<dyn TaskStore>,
    /// The memory store itself, where it is the store (it keeps the task a run shares).
    pub(crate) memory: Option<Arc<crate::server::store::MemoryTasks>>,
    pub(crate) registry: Arc<Registry>,
    /// Answers for durable tasks no handler here waits on yet.
    pub(crate) mailbox: Mailbox,
    pub(crate) push: Option<Arc<Delivery>>,
    pub(crate) input_timeout: Option<Duration>,
    /// The server's clock, which a question's input timeout is counted on.
    pub(crate) clock: crate::server::Clock,
    /// The store's event log, where it keeps one.
    pub(crate) log: Option<Arc<dyn EventLog>>,
    /// Whether the listener's drain began: tasks the store takes over are not run here any
    /// more (this process gives them up at its drain's end).
    pub(crate) stopping: std::sync::atomic::AtomicBool,
}

/// The state `record` brings its task to, for the telemetry (a chunk or a close is counted
/// here).
fn observed(record: &Record) -> Option<TaskState> {
    match record {
        Record::Event(StreamResponse::StatusUpdate(update)) => Some(update.status.state.clone()),
        Record::Event(StreamResponse::ArtifactUpdate(_)) | Record::Close(_) => {
            crate::server::telemetry::chunk();
            None
        }
        Record::Event(_) => None,
    }
}

/// Whether the change an end records is written to the store ([`Ending::written`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Storing {
    /// Logged and written (the usual case).
    Store,
    /// Logged; the task is already in the store (a cancel the store made itself).
    Skip,
}

/// What a task's end records: its last events (the closes of artifacts sent in chunks, a
/// reply, the final status), written to the store as `write` says, and the refusal the caller
/// of the handler's turn is told where the handler refused its input.
pub(crate) struct Ending {
    events: Vec<Record>,
    write: Storing,
    refusal: Option<A2AError>,
}

impl Ending {
    /// An end of `events`, in order, written to the store.
    pub(crate) fn of(events: impl IntoIterator<Item = impl Into<Record>>) -> Ending {
        Ending {
            events: events.into_iter().map(Into::into).collect(),
            write: Storing::Store,
            refusal: None,
        }
    }

    /// An end of one event (its final status), written to the store.
    pub(crate) fn with(event: impl Into<Record>) -> Ending {
        Ending::of([event.into()])
    }

    /// The same end, written to the store as `write` says.
    pub(crate) fn written(mut self, write: Storing) -> Ending {
        self.write = write;
        self
    }

    /// The same end, the caller of the handler's turn told `refusal` first.
    pub(crate) fn refusing(mut self, refusal: Option<A2AError>) -> Ending {
        self.refusal = refusal;
        self
    }
}

impl Recorder {
    /// Makes the change `happening` that ends task `tracked` (see
    /// [`Happening::ends`]) with `ending`, as the table allows it: the handler and its calls
    /// stopped as the table says, the caller told, the end recorded and, once the store kept
    /// it, the task finished here. `Ok(false)` when the store refused the end (the run here is
    /// given up, and [`Tracked::broken`] says why); why, when the table refuses the change (the
    /// task ended here already).
    pub(crate) async fn end(
        &self,
        tracked: &Arc<Tracked>,
        happening: Happening,
        mut ending: Ending,
    ) -> Result<bool, Refused> {
        debug_assert!(happening.ends(), "{happening:?} does not end a task");
        let mut carried = tracked.stage.change(happening)?;
        for effect in carried.effects {
            match effect {
                Effect::TellCaller => {
                    if let (Some(caller), Some(refusal)) =
                        (carried.caller.take(), ending.refusal.take())
                    {
                        caller.refuse(refusal);
                    }
                }
                Effect::Record => {
                    let events = std::mem::take(&mut ending.events);
                    if !self.record_all(tracked, events, ending.write).await
                        && tracked.broken().is_some()
                    {
                        return Ok(false);
                    }
                }
                Effect::Finish => self.registry.finished(tracked),
                Effect::Forget => self.registry.forget(tracked),
                // Carried out by the stage, under its lock.
                Effect::Disarm | Effect::CancelCalls | Effect::StopHandler | Effect::Deliver => {}
            }
        }
        Ok(true)
    }

    /// Stops the handler of task `tracked`, if it runs here, and the task goes on in another
    /// run (a durable task handed over or left at shutdown; see [`Happening::Stop`]);
    /// `forget`: nothing of it is kept here any more (reads go to the store).
    pub(crate) fn stop(&self, tracked: &Arc<Tracked>, forget: bool) {
        if tracked.stage.change(Happening::Stop).is_ok() && forget {
            self.registry.forget(tracked);
        }
    }

    /// Takes note that what followed task `tracked` here is over (its run here, or the
    /// reading of another replica's log): it is no longer followed here, but for its log where
    /// a resumable reader may come back to it (see [`Registry::finished`]).
    pub(crate) fn finish(&self, tracked: &Arc<Tracked>) {
        self.registry.finished(tracked);
    }

    /// Records event `seq` of task `tracked` as another process numbered it (a task it runs);
    /// events this process holds already are left out.
    pub(crate) fn heard(&self, tracked: &Tracked, seq: u64, event: Arc<Event>) {
        tracked.record_at(seq, event);
    }

    /// Breaks off the copy of task `tracked` followed here: its readers get `error` (the
    /// store no longer has the task).
    pub(crate) fn lost(&self, tracked: &Tracked, error: A2AError) {
        tracked.break_off(error);
    }

    /// The caller's `message` joins the conversation of task `tracked` (after the question it
    /// answers), without an event: the status that follows carries it.
    pub(crate) fn join(&self, tracked: &Tracked, message: &Message) {
        tracked.edit(|task| super::handover::join(task, message));
    }

    /// Stops following `tracked`, a copy that may be behind the store (no handler of it runs
    /// here): the task is read again.
    pub(crate) fn drop_stale(&self, tracked: &Arc<Tracked>) {
        if !tracked.phase().runs_here() {
            self.registry.forget(tracked);
        }
    }

    /// The store's event log, where it keeps durable skills' journals.
    pub(crate) fn journals(&self) -> Option<&Arc<dyn EventLog>> {
        self.log.as_ref().filter(|log| log.keeps_journals())
    }

    /// Records `event` of task `tracked`; `false` when the task had already ended.
    ///
    /// The event is numbered, applied and logged at once; the future writes it to the store
    /// and tells its readers. (What the future holds is that outcome, not the event: a run's
    /// future, which awaits one of these at a time, stays small.)
    pub(crate) fn record<'a>(
        &'a self,
        tracked: &'a Arc<Tracked>,
        event: impl Into<Record>,
    ) -> impl Future<Output = bool> + Send + 'a {
        let event = event.into();
        let reached = observed(&event);
        let recorded = tracked.record(event, |seq, event| self.log(tracked, seq, event));
        async move {
            let Some((seq, event, stored)) = recorded else {
                return false;
            };
            if !self.keep(tracked, seq, stored, Storing::Store).await {
                return false;
            }
            self.tell(tracked, event);
            if let Some(state) = reached {
                tracked.reached(&state);
            }
            true
        }
    }

    /// Records `events` of task `tracked` in order as one change, written to the store once
    /// as `write` says (a reply's artifact and the state that ends the task: one write, not
    /// one for each); `false` when the task had already ended. Recorded at once, as
    /// [`record`](Self::record) records.
    fn record_all<'a>(
        &'a self,
        tracked: &'a Arc<Tracked>,
        events: Vec<Record>,
        write: Storing,
    ) -> impl Future<Output = bool> + Send + 'a {
        // Each event observed (a chunk counted), the last state kept.
        let reached = events
            .iter()
            .fold(None, |reached, event| observed(event).or(reached));
        let (recorded, stored) =
            tracked.record_all(events, |seq, event| self.log(tracked, seq, event));
        async move {
            let Some(&(last, _)) = recorded.last() else {
                return false;
            };
            if !self.keep(tracked, last, stored, write).await {
                return false;
            }
            for (_, event) in recorded {
                self.tell(tracked, event);
            }
            if let Some(state) = reached {
                tracked.reached(&state);
            }
            true
        }
    }

    /// Writes `stored` (the task as it is after its event `seq`, when that event changed what
    /// the store keeps) unless `write` says the store has it, then lets readers see the
    /// events up to `seq`; `false` when the store refused it (the run here is abandoned).
    async fn keep(
        &self,
        tracked: &Arc<Tracked>,
        seq: u64,
        stored: Option<Arc<Task>>,
        write: Storing,
    ) -> bool {
        let Some(task) = stored else {
            return true;
        };
        if write == Storing::Store
            && let Err(refused) = self.store(task, seq).await
        {
            self.abandon(tracked, refused);
            return false;
        }
        tracked.publish(seq);
        true
    }

    /// Posts `event` of task `tracked` to its webhooks, in the task's trace (read before a
    /// final state ends the task's span).
    fn tell(&self, tracked: &Arc<Tracked>, event: Arc<Event>) {
        if let Some(push) = self.pushes(&tracked.id, &event) {
            let span = tracked.span().unwrap_or_else(tracing::Span::current);
            push.deliver_in(&tracked.id, event, &span);
        }
    }

    /// Where `event` of task `id` goes for its webhooks, unless the task is known to have
    /// none.
    fn pushes(&self, id: &str, event: &Event) -> Option<&Arc<Delivery>> {
        self.push.as_ref().filter(|push| push.wants(id, event))
    }

    /// Takes note that the webhooks of task `id` changed here (`Some`: they are these).
    pub(crate) fn webhooks_changed(&self, id: &str, now: Option<Vec<TaskPushNotificationConfig>>) {
        if let Some(push) = &self.push {
            push.know(id, now);
        }
    }

    /// Hands event `seq` to the store's log, where it keeps one.
    pub(crate) fn log(&self, tracked: &Tracked, seq: u64, event: &Arc<Event>) {
        if let Some(log) = &self.log {
            log.append(&tracked.id, seq, event);
        }
    }

    /// Writes `task`, as it is after its event `seq`; why not, when the store refused (another
    /// process wrote the task since: it took it over, or cancelled it; or the store is
    /// unreachable). The memory store keeps the task shared; any other store takes a copy.
    pub(crate) async fn store(&self, task: Arc<Task>, seq: u64) -> Result<(), A2AError> {
        match (&self.log, &self.memory) {
            (Some(log), _) => log.update_at(Arc::unwrap_or_clone(task), seq).await,
            (None, Some(memory)) => memory.update_shared(task).await.map(drop),
            (None, None) => self
                .store
                .update(Arc::unwrap_or_clone(task))
                .await
                .map(drop),
        }
    }

    /// Keeps new task `task` in the store, as [`store`](Self::store) keeps a state of it.
    pub(crate) async fn create(&self, task: &Arc<Task>) -> Result<(), A2AError> {
        match &self.memory {
            Some(memory) => memory.create_shared(Arc::clone(task)).await.map(drop),
            None => self.store.create(Task::clone(task)).await.map(drop),
        }
    }

    /// Stops the run here of task `tracked`, whose write the store refused (`refused`): no
    /// caller is told of the state that was not stored (each reader waiting for it gets an
    /// error), the handler is dropped, the task is no longer followed here (reads go to the
    /// store), and the store is asked to hand the task to its recovery, which runs a durable
    /// skill's task again from its journal (here or on another replica) and fails any other
    /// saying why.
    pub(crate) fn abandon(&self, tracked: &Arc<Tracked>, refused: A2AError) {
        let id = tracked.id.clone();
        tracing::warn!(task = %id, error = %refused.message, "the store refused a write of the task: its run here stops");
        tracked.break_off(A2AError::internal(format!(
            "task `{id}` could not be stored as it went on (the task store refused the write: another process took the task over or cancelled it, or the store is unreachable); nothing of it was kept that the store does not have: GetTask answers the task as stored"
        )));
        // A durable task runs again from its journal (its calls followed there); any other
        // fails, and the tasks its calls made end with it: the table says which.
        if let Ok(carried) = tracked.stage.change(Happening::GiveUp) {
            debug_assert_eq!(carried.effects.last(), Some(&Effect::Forget));
            self.registry.forget(tracked);
        }
        self.give_back(&id);
    }

    /// Hands task `id`, whose run here stopped or never began, back to the store's recovery
    /// (tried until the store answers, in the background), unless a run of it is here again
    /// by then.
    pub(crate) fn give_back(&self, id: &str) {
        if let Some(log) = self.log.clone() {
            let registry = Arc::clone(&self.registry);
            let id = id.to_owned();
            tokio::spawn(async move {
                // The store may be unreachable for a while: tried until it answers.
                let mut wait = Duration::from_millis(200);
                for _ in 0..60 {
                    // Taken up here again meanwhile (the store's recovery gave it back to
                    // this process): the claim is that run's now, and the store checks only
                    // that the task is this process's, so giving it up would leave the new
                    // run going on a task another replica then takes over too.
                    if registry.get(&id).is_some_and(|t| t.phase().runs_here()) {
                        return;
                    }
                    match log.give_up(&id).await {
                        Ok(()) => return,
                        Err(e) => {
                            tracing::debug!(task = %id, error = %e.message, "the task could not be handed back yet");
                        }
                    }
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(10));
                }
                tracing::error!(task = %id, "the task could not be handed back to the store's recovery");
            });
        }
    }
}
