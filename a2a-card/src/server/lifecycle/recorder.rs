//! The one place a task's events go: its log, the store, its webhooks.

use std::sync::Arc;
use std::time::Duration;

use a2a::*;
use a2a_server::TaskStore;

use super::log::{Live, Tracked};
use super::run::{Mailbox, Sessions};
use crate::server::push::Delivery;
use crate::server::store::{Event, EventLog};

/// The one place a task's events go: its log, the store, its webhooks.
pub(crate) struct Recorder {
    pub(super) store: Arc<dyn TaskStore>,
    pub(super) live: Arc<Live>,
    pub(super) sessions: Sessions,
    /// Answers for durable tasks no handler here waits on yet.
    pub(super) mailbox: Mailbox,
    pub(super) push: Option<Arc<Delivery>>,
    pub(super) input_timeout: Option<Duration>,
    /// The store's event log, where it keeps one.
    pub(super) log: Option<Arc<dyn EventLog>>,
    /// Whether the listener's drain began: tasks the store takes over are not run here any
    /// more (this process gives them up at its drain's end).
    pub(super) stopping: std::sync::atomic::AtomicBool,
}

/// Whether an event's change is written to the store by [`Recorder::record_as`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Write {
    /// Logged and written (the usual case).
    Store,
    /// Logged; the task is already in the store (a cancel the store made itself).
    Skip,
}

impl Recorder {
    /// The store's event log, where it keeps durable skills' journals.
    pub(super) fn journals(&self) -> Option<&Arc<dyn EventLog>> {
        self.log.as_ref().filter(|log| log.keeps_journals())
    }

    /// Records `event` of task `tracked`; `false` when the task had already ended.
    pub(super) async fn record(&self, tracked: &Tracked, event: StreamResponse) -> bool {
        self.record_as(tracked, event, Write::Store).await
    }

    pub(super) async fn record_as(
        &self,
        tracked: &Tracked,
        event: StreamResponse,
        write: Write,
    ) -> bool {
        let reached = match &event {
            StreamResponse::StatusUpdate(update) => Some(update.status.state.clone()),
            StreamResponse::ArtifactUpdate(_) => {
                crate::server::telemetry::chunk();
                None
            }
            _ => None,
        };
        let Some((seq, event, stored)) =
            tracked.record(event, |seq, event| self.log(tracked, seq, event))
        else {
            return false;
        };
        if let Some(task) = stored {
            if write == Write::Store {
                self.store(task, seq).await;
            }
            tracked.publish(seq);
        }
        // Posted in the task's trace (read before a final state ends the task's span).
        if let Some(push) = self.pushes(&tracked.id, &event) {
            let span = tracked.span().unwrap_or_else(tracing::Span::current);
            push.deliver_in(&tracked.id, event, &span);
        }
        if let Some(state) = reached {
            tracked.reached(&state);
        }
        true
    }

    /// Where `event` of task `id` goes for its webhooks, unless the task is known to have
    /// none.
    fn pushes(&self, id: &str, event: &Event) -> Option<&Arc<Delivery>> {
        self.push
            .as_ref()
            .filter(|push| push.wants(id, event.event()))
    }

    /// Takes note that the webhooks of task `id` changed here (`Some`: they are these).
    pub(super) fn webhooks_changed(&self, id: &str, now: Option<Vec<TaskPushNotificationConfig>>) {
        if let Some(push) = &self.push {
            push.know(id, now);
        }
    }

    /// Records the failure `event` of a turn whose caller gets `error` instead of the task.
    pub(super) async fn record_error(
        &self,
        tracked: &Tracked,
        error: A2AError,
        event: StreamResponse,
    ) {
        let logged = |seq, event: &Arc<Event>| self.log(tracked, seq, event);
        let Some((seq, event, stored)) = tracked.record_error(error, event, logged) else {
            return;
        };
        if let Some(task) = stored {
            self.store(task, seq).await;
            tracked.publish(seq);
            tracked.reached(&tracked.state());
        }
        if let Some(push) = self.pushes(&tracked.id, &event) {
            push.deliver(&tracked.id, event);
        }
    }

    /// Hands event `seq` to the store's log, where it keeps one.
    pub(super) fn log(&self, tracked: &Tracked, seq: u64, event: &Arc<Event>) {
        if let Some(log) = &self.log {
            log.append(&tracked.id, seq, event);
        }
    }

    /// Writes `task`, as it is after its event `seq`.
    pub(super) async fn store(&self, task: Task, seq: u64) {
        let id = task.id.clone();
        let written = match &self.log {
            Some(log) => log.update_at(task, seq).await,
            None => self.store.update(task).await.map(drop),
        };
        if let Err(e) = written {
            // Another writer finished the task first (a cancel on another replica): its
            // state stands.
            tracing::debug!(task = %id, error = %e.message, "a task update was not stored");
        }
    }
}
