//! The request handler: the task lifecycle of a declared agent, behind the official
//! [`RequestHandler`] trait.
//!
//! One path per request, and one place per event:
//!
//! 1. A message is checked (`messageId`, `role`, `parts`), then dispatched once by the
//!    [structured input flow](crate::dispatch) before any task exists: a refused message
//!    creates no task. The skill's own security requirement is checked once dispatch picks it.
//! 2. A new task is created (`submitted`, the caller's message as its history) and its skill
//!    started ([`run`]); an answer to a question resumes the handler that asked, here or (on
//!    Postgres) on the replica that runs it, to which the answer is forwarded.
//! 3. Every event of a task (working, progress, artifact chunk, question, answer, completion,
//!    failure, cancel, timeout) goes through [`Recorder::record`]: numbered in the task's
//!    event log ([`log`]), applied to the task in place, written to the store when it changes
//!    what the store keeps (a status, a whole artifact), and posted to the task's webhooks.
//!    Nothing else writes a task.
//! 4. Readers read the log: a blocking send waits for the task to finish or ask; a stream (a
//!    send's, or a subscriber's) begins with the task as it is, then every event after it, in
//!    order, at the reader's own pace.

mod log;
mod run;

use std::sync::Arc;
use std::time::Duration;

use a2a::errordetails::{FieldViolation, TypedDetail};
use a2a::*;
use a2a_server::{PushConfigStore, RequestHandler, ServiceParams, TaskStore};
use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::{self, BoxStream};
use tokio::sync::broadcast;

use crate::agent::Agent;
use crate::context::Answer;
use crate::dispatch::{Decision, Dispatcher};
use crate::skill::CallInput;

use super::auth::{self, Guard};
use super::errors::dispatch_error;
use super::exact;
use super::message::{dispatch_json, files_of, has_files, message_json, restore_data, split_files};
use super::push::{Delivery, Webhooks, ends};
use super::store::{EventLog, Forward, Settle, status_update};
pub use log::FinishedLogs;
use log::{Live, Tracked, Until};
use run::{NotWaiting, Sessions, status, status_of};

/// The one place a task's events go: its log, the store, its webhooks.
pub(crate) struct Recorder {
    store: Arc<dyn TaskStore>,
    live: Arc<Live>,
    sessions: Sessions,
    push: Option<Arc<Delivery>>,
    input_timeout: Option<Duration>,
    /// The store's event log, where it keeps one.
    log: Option<Arc<dyn EventLog>>,
    /// What wakes a reader of the store's log: the ids of tasks whose log grew, and of tasks
    /// written (Postgres: on any replica).
    wake: Option<(broadcast::Sender<String>, broadcast::Sender<String>)>,
}

/// Whether an event's change is written to the store by [`Recorder::record_as`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Write {
    /// Logged and written (the usual case).
    Store,
    /// Logged; the task is already in the store (a cancel the store made itself).
    Skip,
}

impl Recorder {
    /// Records `event` of task `tracked`; `false` when the task had already ended.
    async fn record(&self, tracked: &Tracked, event: StreamResponse) -> bool {
        self.record_as(tracked, event, Write::Store).await
    }

    async fn record_as(&self, tracked: &Tracked, event: StreamResponse, write: Write) -> bool {
        let pushed = self.pushed(&tracked.id, &event);
        let reached = match &event {
            StreamResponse::StatusUpdate(update) => Some(update.status.state.clone()),
            StreamResponse::ArtifactUpdate(_) => {
                super::telemetry::chunk();
                None
            }
            _ => None,
        };
        let Some((seq, stored)) = tracked.record(event, |seq, event| self.log(tracked, seq, event))
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
        if let (Some(push), Some(event)) = (&self.push, pushed) {
            let span = tracked.span().unwrap_or_else(tracing::Span::current);
            push.deliver_in(&tracked.id, event, &span);
        }
        if let Some(state) = reached {
            tracked.reached(&state);
        }
        true
    }

    /// A copy of `event` for the webhooks of task `id`, unless it is known to have none.
    fn pushed(&self, id: &str, event: &StreamResponse) -> Option<StreamResponse> {
        self.push
            .as_ref()
            .filter(|push| push.wants(id, event))
            .map(|_| event.clone())
    }

    /// Takes note that the webhooks of task `id` changed here (`Some`: they are these).
    fn webhooks_changed(&self, id: &str, now: Option<Vec<TaskPushNotificationConfig>>) {
        if let Some(push) = &self.push {
            push.know(id, now);
        }
    }

    /// Records the failure `event` of a turn whose caller gets `error` instead of the task.
    async fn record_error(&self, tracked: &Tracked, error: A2AError, event: StreamResponse) {
        let pushed = self.pushed(&tracked.id, &event);
        let mut at = 0;
        let logged = |seq, event: &StreamResponse| {
            at = seq;
            self.log(tracked, seq, event);
        };
        if let Some(task) = tracked.record_error(error, event, logged) {
            self.store(task, at).await;
            tracked.publish(at);
            tracked.reached(&tracked.state());
        }
        if let (Some(push), Some(event)) = (&self.push, pushed) {
            push.deliver(&tracked.id, event);
        }
    }

    /// Hands event `seq` to the store's log, where it keeps one.
    fn log(&self, tracked: &Tracked, seq: u64, event: &StreamResponse) {
        if let Some(log) = &self.log {
            log.append(&tracked.id, seq, event);
        }
    }

    /// Writes `task`, as it is after its event `seq`.
    async fn store(&self, task: Task, seq: u64) {
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

    /// The receivers that wake a reader of the store's log, subscribed now.
    fn wake(&self) -> Option<Wake> {
        self.wake
            .as_ref()
            .map(|(events, changes)| (events.subscribe(), changes.subscribe()))
    }
}

/// What wakes a reader of the store's log (see [`Recorder::wake`]).
type Wake = (broadcast::Receiver<String>, broadcast::Receiver<String>);

/// What the handler is built from (see [`Server`](super::Server)).
pub(crate) struct Parts {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) settle: Option<Arc<dyn Settle>>,
    /// The store's change feed where other processes may run its tasks (Postgres).
    pub(crate) changes: Option<broadcast::Sender<String>>,
    pub(crate) push: Option<(Arc<dyn PushConfigStore>, Arc<Delivery>, Webhooks)>,
    pub(crate) guard: Option<Arc<Guard>>,
    pub(crate) extended: Option<a2a::AgentCard>,
    /// What is kept in memory of finished tasks' logs; `None`: nothing (the store keeps them).
    pub(crate) finished_logs: Option<FinishedLogs>,
    pub(crate) streaming: bool,
    pub(crate) max_inline_file: usize,
    pub(crate) input_timeout: Option<Duration>,
    /// The tasks the store's recovery fails (a stopped process left them running): each
    /// failure is posted to the task's webhooks.
    pub(crate) recovered: Option<tokio::sync::mpsc::UnboundedReceiver<Task>>,
    /// Where answers go to the replica whose handler asked, and where they arrive.
    pub(crate) answers: Option<(Arc<dyn Forward>, broadcast::Sender<String>)>,
    /// The store's event log, where it keeps one.
    pub(crate) log: Option<Arc<dyn EventLog>>,
    /// The ids of tasks whose log grew on any replica (Postgres).
    pub(crate) events: Option<broadcast::Sender<String>>,
    /// Whether answers are for this crate's HTTP layer, which splices encoded data back (see
    /// [`exact`]).
    pub(crate) exact: bool,
}

/// The request handler of a declared agent (see the [module docs](self)).
pub(crate) struct Lifecycle<A: Agent> {
    agent: Arc<A>,
    dispatcher: Arc<Dispatcher>,
    recorder: Arc<Recorder>,
    settle: Option<Arc<dyn Settle>>,
    changes: Option<broadcast::Sender<String>>,
    /// Where answers go to the replica whose handler asked (Postgres).
    forward: Option<Arc<dyn Forward>>,
    configs: Option<(Arc<dyn PushConfigStore>, Webhooks)>,
    guard: Option<Arc<Guard>>,
    extended: Option<a2a::AgentCard>,
    streaming: bool,
    max_inline_file: usize,
    exact: bool,
}

/// A turn under way: the task, its state when the turn began, and that state's number.
struct Turn {
    tracked: Arc<Tracked>,
    task: Task,
    seq: u64,
}

impl<A: Agent> Lifecycle<A> {
    pub(crate) fn new(agent: A, dispatcher: Arc<Dispatcher>, parts: Parts) -> Self {
        let recorder = Arc::new(Recorder {
            store: parts.store,
            live: Arc::new(Live::new(parts.finished_logs)),
            sessions: Sessions::default(),
            push: parts.push.as_ref().map(|(_, d, _)| Arc::clone(d)),
            input_timeout: parts.input_timeout,
            log: parts.log,
            wake: parts.events.zip(parts.changes.clone()),
        });
        if let Some(changes) = &parts.changes {
            cancel_here(changes.subscribe(), Arc::clone(&recorder));
        }
        if let (Some(recovered), Some(push)) = (parts.recovered, &recorder.push) {
            post_recovered(recovered, Arc::clone(push));
        }
        let forward = parts.answers.map(|(forward, arriving)| {
            take_forwarded(
                arriving.subscribe(),
                Arc::clone(&recorder),
                Arc::clone(&dispatcher),
                parts.max_inline_file,
            );
            forward
        });
        Lifecycle {
            agent: Arc::new(agent),
            dispatcher,
            recorder,
            settle: parts.settle,
            changes: parts.changes,
            forward,
            configs: parts.push.map(|(c, _, w)| (c, w)),
            guard: parts.guard,
            extended: parts.extended,
            streaming: parts.streaming,
            max_inline_file: parts.max_inline_file,
            exact: parts.exact,
        }
    }

    fn store(&self) -> &dyn TaskStore {
        &*self.recorder.store
    }

    /// The push-notification configs, where the card declares push notifications.
    fn configs(&self) -> Result<&Arc<dyn PushConfigStore>, A2AError> {
        match &self.configs {
            Some((configs, _)) => Ok(configs),
            None => Err(A2AError::push_notification_not_supported()),
        }
    }

    /// Refuses a call without an authenticated caller when the card requires one (the HTTP
    /// layer in front already did; this holds when the handler is reached some other way).
    fn authorize(&self, params: &ServiceParams) -> Result<(), A2AError> {
        match &self.guard {
            Some(guard) if !guard.is_open() && !auth::is_authenticated(params) => {
                Err(auth::report(guard.unauthenticated_any()))
            }
            _ => Ok(()),
        }
    }

    /// Answers with data parts encoded for the official HTTP layer, which splices the exact
    /// JSON back (see [`exact`]), unless it writes this answer with serde itself.
    fn out_task(&self, mut task: Task) -> Task {
        if self.exact && !exact::is_plain() {
            exact::encode_task(&mut task);
        }
        task
    }

    fn out_events(
        &self,
        events: BoxStream<'static, Result<StreamResponse, A2AError>>,
    ) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        if !self.exact || exact::is_plain() {
            return events;
        }
        Box::pin(events.map(|event| {
            event.map(|mut event| {
                exact::encode_event(&mut event);
                event
            })
        }))
    }

    /// Waits until the store has written task `id`, where it holds new tasks back.
    async fn settle(&self, id: &str) -> Result<(), A2AError> {
        match &self.settle {
            Some(settle) => settle.settle(id).await,
            None => Ok(()),
        }
    }

    /// The task `id`, followed here or stored.
    async fn find(&self, id: &str) -> Result<Task, A2AError> {
        if let Some(tracked) = self.recorder.live.get(id) {
            return Ok(tracked.snapshot().0);
        }
        self.store()
            .get(id)
            .await?
            .ok_or_else(|| A2AError::task_not_found(id))
    }

    /// Starts a turn: a new task for a message that names none, or the answer to the
    /// question of the task it names.
    async fn begin(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<Turn, A2AError> {
        self.begin_for(params, req, None).await
    }

    /// [`begin`](Self::begin), with the skill of a new task named by the caller (`skill`, an
    /// index into the agent's skills) rather than chosen by dispatch.
    async fn begin_for(
        &self,
        params: &ServiceParams,
        mut req: SendMessageRequest,
        skill: Option<usize>,
    ) -> Result<Turn, A2AError> {
        check_message(&req.message)?;
        let raw = exact::take_inbound();
        if let Some(raw) = &raw {
            restore_data(&mut req.message, raw)?;
        }
        let config = req
            .configuration
            .as_ref()
            .and_then(|c| c.task_push_notification_config.clone());
        if let Some(config) = &config {
            let Some((_, policy)) = &self.configs else {
                return Err(A2AError::push_notification_not_supported());
            };
            policy.check(&config.url).await?;
        }
        match req.message.task_id.clone() {
            None => self.create(params, req, raw, config, skill).await,
            Some(id) => self.resume(req, raw, &id, config).await,
        }
    }

    /// Keeps the webhook a message names for its task, before the turn's first event (so
    /// that the webhook gets every event of the turn); `new`: the task was just created, so
    /// this is all the webhooks it has.
    async fn keep_webhook(
        &self,
        task: &str,
        config: Option<TaskPushNotificationConfig>,
        new: bool,
    ) -> Result<(), A2AError> {
        let saved = match (config, &self.configs) {
            (Some(mut config), Some((configs, _))) => {
                config.task_id = task.to_owned();
                config.id.get_or_insert_with(new_task_id);
                Some(configs.save(config).await?)
            }
            _ => None,
        };
        match (saved, new) {
            (saved, true) => self
                .recorder
                .webhooks_changed(task, Some(saved.into_iter().collect())),
            (Some(_), false) => self.recorder.webhooks_changed(task, None),
            (None, false) => {}
        }
        Ok(())
    }

    /// A new task for a message that names none, its skill started.
    async fn create(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
        raw: Option<serde_json::Value>,
        config: Option<TaskPushNotificationConfig>,
        named: Option<usize>,
    ) -> Result<Turn, A2AError> {
        let decision = match named {
            Some(skill) => {
                let (json, files) = dispatch_input(self.max_inline_file, &req.message, raw)?;
                self.dispatcher.dispatch_to(skill, json, files)
            }
            None => self.decide(&req.message, raw, None)?,
        };
        let (skill, mut call) = match decision {
            Decision::Run { skill, call } => (skill, call),
            Decision::Reject(e) => return Err(dispatch_error(&e)),
            Decision::FollowUp(_) => {
                return Err(A2AError::internal("a new message was taken for an answer"));
            }
        };
        let principal = auth::principal_of(params);
        if let Some(guard) = &self.guard {
            guard
                .authorize_skill(skill, principal.as_ref())
                .map_err(auth::report)?;
        }
        call.context.set_principal(principal.map(Arc::new));
        let message = req.message;
        let task = Task {
            id: new_task_id(),
            context_id: message.context_id.clone().unwrap_or_else(new_context_id),
            status: TaskStatus {
                state: TaskState::Submitted,
                message: None,
                timestamp: Some(chrono::Utc::now()),
            },
            artifacts: None,
            history: Some(vec![message]),
            metadata: None,
        };
        self.store().create(task.clone()).await?;
        self.keep_webhook(&task.id, config, true).await?;
        let tracked = self.recorder.live.track(task);
        let skill_id = A::SKILLS.get(skill).map_or("", |s| s.id);
        tracked.observe(log::Observed {
            span: super::telemetry::task_span(
                &tracked.id,
                &tracked.context,
                A::DECL.name,
                skill_id,
            ),
            skill: skill_id,
            since: std::time::Instant::now(),
        });
        let (task, seq) = tracked.snapshot();
        self.recorder
            .record(&tracked, status(&tracked, TaskState::Working, None))
            .await;
        run::start(
            Arc::clone(&self.agent),
            Arc::clone(&self.recorder),
            Arc::clone(&tracked),
            skill,
            call,
        );
        Ok(Turn { tracked, task, seq })
    }

    /// The caller's answer to the question of task `id`, handed to the handler that asked.
    async fn resume(
        &self,
        req: SendMessageRequest,
        raw: Option<serde_json::Value>,
        id: &str,
        config: Option<TaskPushNotificationConfig>,
    ) -> Result<Turn, A2AError> {
        // Structured input on an existing task is refused whatever its state (the
        // extension's rule 5), before anything else is said of the task.
        let call = match self.decide(&req.message, raw, Some(id))? {
            Decision::FollowUp(call) => call,
            Decision::Reject(e) => return Err(dispatch_error(&e)),
            Decision::Run { .. } => {
                return Err(A2AError::internal("an answer was taken for a new message"));
            }
        };
        let tracked = match self.recorder.live.get(id) {
            Some(tracked) => tracked,
            None => self.track_stored(id).await?,
        };
        if tracked.state().is_terminal() {
            return Err(finished(id));
        }
        if let Some(requested) = req.message.context_id.as_deref() {
            if requested != tracked.context {
                return Err(A2AError::invalid_params(format!(
                    "contextId `{requested}` does not match task `{id}`, which belongs to context `{}`",
                    tracked.context
                )));
            }
        }
        let message = req.message;
        self.keep_webhook(id, config, false).await?;
        let waiting = match run::take_waiting(&self.recorder, id) {
            Ok(waiting) => waiting,
            Err(NotWaiting::Working) => {
                return Err(A2AError::invalid_request(format!(
                    "task `{id}` is working and has not asked for input; wait for it to ask (input-required) before answering"
                )));
            }
            // Another replica may run the handler that asked: the answer goes there.
            Err(NotWaiting::Gone) if self.forward.is_some() => {
                return self.forward_answer(tracked, message).await;
            }
            Err(NotWaiting::Gone) => {
                tracked.edit(|task| join(task, &message));
                let (task, seq) = tracked.snapshot();
                let why = format!(
                    "task `{id}` was waiting for input, but the handler that asked is no longer running (the agent restarted since); start a new task"
                );
                let event = status(&tracked, TaskState::Failed, Some(why));
                self.recorder.record(&tracked, event).await;
                self.recorder.live.finished(&tracked);
                return Ok(Turn { tracked, task, seq });
            }
        };
        let (task, seq) = hand_over(&self.recorder, &tracked, message, call, waiting).await;
        Ok(Turn { tracked, task, seq })
    }

    /// Follows task `id`, which this process does not run, from the store: as its log has
    /// it where the store keeps one (so that its events keep the numbers the replica that
    /// runs it gave them).
    async fn track_stored(&self, id: &str) -> Result<Arc<Tracked>, A2AError> {
        let (task, seq, events) = match &self.recorder.log {
            Some(log) => {
                let logged = log
                    .read(id, None)
                    .await?
                    .ok_or_else(|| A2AError::task_not_found(id))?;
                (logged.task, logged.seq, logged.events)
            }
            None => {
                let task = self
                    .store()
                    .get(id)
                    .await?
                    .ok_or_else(|| A2AError::task_not_found(id))?;
                (task, 0, Vec::new())
            }
        };
        if task.status.state.is_terminal() {
            return Err(finished(id));
        }
        let tracked = self.recorder.live.track_at(task, seq);
        for (seq, event) in events {
            tracked.record_at(seq, event);
        }
        Ok(tracked)
    }

    /// Sends the caller's answer to the replica whose handler asked (Postgres), and follows
    /// the task here through the store's log, as a mirror: this replica's readers see its
    /// events, with their numbers, as they are logged there. The turn begins with the first
    /// of them (the handler taking the answer).
    async fn forward_answer(
        &self,
        tracked: Arc<Tracked>,
        message: Message,
    ) -> Result<Turn, A2AError> {
        let (Some(forward), Some(log), Some(wake)) =
            (&self.forward, &self.recorder.log, self.recorder.wake())
        else {
            return Err(A2AError::internal("no replica to forward the answer to"));
        };
        // Followed from before the answer goes, so that no event of the task is missed.
        let (_, after) = tracked.snapshot();
        let payload = serde_json::json!({"task": tracked.id, "message": message}).to_string();
        forward.forward(&payload).await?;
        // The question and the answer join the conversation here as on the replica that
        // asked (the log carries events, not the caller's messages).
        tracked.edit(|task| join(task, &message));
        mirror(
            Arc::clone(&self.recorder),
            Arc::clone(&tracked),
            follow_log(
                Arc::clone(log),
                Some(wake),
                tracked.id.clone(),
                after,
                Vec::new(),
            ),
        );
        tracked.wait_beyond(after).await;
        let (task, seq) = tracked.snapshot();
        Ok(Turn { tracked, task, seq })
    }

    /// The dispatcher's decision on `message` (read from the request's own JSON when the HTTP
    /// layer handed it over).
    fn decide(
        &self,
        message: &Message,
        raw: Option<serde_json::Value>,
        existing: Option<&str>,
    ) -> Result<Decision, A2AError> {
        decide(
            &self.dispatcher,
            self.max_inline_file,
            message,
            raw,
            existing,
        )
    }

    /// One turn of a message, followed as a stream (the task, then its events until it ends or
    /// asks), whatever the card says of streaming: what the MCP face reads a tool call from.
    /// `skill`: the skill a new task runs, named by the caller (a tool), else dispatch picks.
    pub(crate) async fn turn(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
        skill: Option<usize>,
    ) -> Result<NumberedStream, A2AError> {
        self.authorize(params)?;
        let turn = self.begin_for(params, req, skill).await?;
        Ok(self.stream(turn, Until::Interrupted))
    }

    /// The stream of a turn or a subscription: the task, then its events after it, each with
    /// its number in the task's log.
    fn stream(&self, turn: Turn, until: Until) -> NumberedStream {
        let settle = self.settle.clone();
        let id = turn.tracked.id.clone();
        let seq = turn.seq;
        let first = stream::once(async move {
            if let Some(settle) = settle {
                settle.settle(&id).await?;
            }
            Ok((Some(seq), StreamResponse::Task(turn.task)))
        });
        let events = turn
            .tracked
            .events(turn.seq, until)
            .map(|event| event.map(|(seq, event)| (Some(seq), event)));
        Box::pin(first.chain(events))
    }

    /// A subscription to task `id`: the task, then its events; or, `after` an event the
    /// subscriber has seen (`Last-Event-ID`), exactly the events that follow it: from this
    /// process while it holds them, else from the store's log (any process, any replica).
    async fn subscription(&self, id: &str, after: Option<u64>) -> Result<NumberedStream, A2AError> {
        if !self.streaming {
            return Err(A2AError::unsupported_operation(
                "the agent card does not declare streaming",
            ));
        }
        let held = self.recorder.live.get(id).filter(|tracked| {
            // Events from before this process followed the task are in the store's log.
            after.is_none_or(|n| n + 1 >= tracked.first() || self.recorder.log.is_none())
        });
        if let Some(tracked) = held {
            let (task, seq) = tracked.snapshot();
            if let Some(after) = after.filter(|n| *n <= seq) {
                if after == seq && task.status.state.is_terminal() {
                    return Err(finished(id));
                }
                let events = tracked
                    .events(after, Until::Terminal)
                    .map(|event| event.map(|(seq, event)| (Some(seq), event)));
                return Ok(Box::pin(events));
            }
            if task.status.state.is_terminal() {
                return Err(finished(id));
            }
            return Ok(self.stream(Turn { tracked, task, seq }, Until::Terminal));
        }
        let Some(log) = &self.recorder.log else {
            // A store without a log: the task as it is.
            let task = self
                .store()
                .get(id)
                .await?
                .ok_or_else(|| A2AError::task_not_found(id))?;
            if task.status.state.is_terminal() {
                return Err(match after {
                    Some(after) => log_gone(id, after),
                    None => finished(id),
                });
            }
            return Ok(Box::pin(stream::once(async move {
                Ok((None, StreamResponse::Task(task)))
            })));
        };
        // Woken from before the log is read, so that no event is missed in between.
        let wake = self.recorder.wake();
        let logged = log
            .read(id, after)
            .await?
            .ok_or_else(|| A2AError::task_not_found(id))?;
        let ended = logged.task.status.state.is_terminal();
        let (first, from) = match after {
            // Nothing after what the subscriber saw, and nothing to come.
            Some(_) if ended && logged.events.is_empty() => return Err(finished(id)),
            Some(n) => (None, n),
            None if ended => return Err(finished(id)),
            None => (
                Some((Some(logged.seq), StreamResponse::Task(logged.task))),
                logged.seq,
            ),
        };
        let events = follow_log(Arc::clone(log), wake, id.to_owned(), from, logged.events);
        let events = events.map(|e| e.map(|(n, e)| (Some(n), e)));
        Ok(Box::pin(stream::iter(first.map(Ok)).chain(events)))
    }
}

/// Task events with their number in the task's log (`None` for events read from another
/// replica's changes).
pub(crate) type NumberedStream =
    BoxStream<'static, Result<(Option<u64>, StreamResponse), A2AError>>;

/// The streaming methods with each event's number in its task's log: what the HTTP bindings
/// write as the SSE `id`, and take back in `Last-Event-ID`.
#[async_trait]
pub(crate) trait Numbered: RequestHandler {
    /// `SendStreamingMessage`, numbered.
    async fn send_streaming_numbered(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<NumberedStream, A2AError>;

    /// `SubscribeToTask`, numbered; `after`: the number of the last event the subscriber
    /// saw.
    async fn subscribe_numbered(
        &self,
        params: &ServiceParams,
        req: SubscribeToTaskRequest,
        after: Option<u64>,
    ) -> Result<NumberedStream, A2AError>;
}

#[async_trait]
impl<A: Agent> Numbered for Lifecycle<A> {
    async fn send_streaming_numbered(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<NumberedStream, A2AError> {
        if !self.streaming {
            return Err(A2AError::unsupported_operation(
                "the agent card does not declare streaming",
            ));
        }
        self.turn(params, req, None).await
    }

    async fn subscribe_numbered(
        &self,
        params: &ServiceParams,
        req: SubscribeToTaskRequest,
        after: Option<u64>,
    ) -> Result<NumberedStream, A2AError> {
        self.authorize(params)?;
        self.subscription(&req.id, after).await
    }
}

/// The events of a numbered stream, without their numbers.
fn unnumbered(events: NumberedStream) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
    Box::pin(events.map(|event| event.map(|(_, event)| event)))
}

/// The question the task asked (its status message, while it waits), then `answer`, join the
/// task's conversation.
fn join(task: &mut Task, answer: &Message) {
    let history = task.history.get_or_insert_with(Vec::new);
    if log::asks(&task.status.state) {
        if let Some(question) = task.status.message.take() {
            history.push(question);
        }
    }
    history.push(answer.clone());
}

/// Hands the caller's answer (`message`, as the dispatcher read it into `call`) to the
/// handler `waiting` for it: the answer joins the history, the task goes `working`. The task
/// then, and that state's number.
async fn hand_over(
    recorder: &Recorder,
    tracked: &Arc<Tracked>,
    message: Message,
    call: crate::skill::SkillCall,
    waiting: futures::channel::oneshot::Sender<Answer>,
) -> (Task, u64) {
    let (text, data) = match call.input {
        CallInput::Text(text) => (text, None),
        CallInput::Data(data) => (String::new(), Some(data)),
        _ => (String::new(), None),
    };
    let mut answer = Answer::new(text, data);
    answer.files = call.files;
    answer.message = call.context.message;
    tracked.edit(|task| join(task, &message));
    recorder
        .record(tracked, status(tracked, TaskState::Working, None))
        .await;
    let snapshot = tracked.snapshot();
    // A handler dropped meanwhile (cancelled) leaves nothing to resume.
    let _ = waiting.send(answer);
    snapshot
}

/// Takes the answers other replicas forward, and hands each to the handler here that waits
/// for it (answers for tasks that run elsewhere are not this replica's).
fn take_forwarded(
    mut answers: broadcast::Receiver<String>,
    recorder: Arc<Recorder>,
    dispatcher: Arc<Dispatcher>,
    max_inline_file: usize,
) {
    tokio::spawn(async move {
        loop {
            let payload = match answers.recv().await {
                Ok(payload) => payload,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            };
            let Ok(forwarded) = serde_json::from_str::<serde_json::Value>(&payload) else {
                continue;
            };
            let Some(id) = forwarded["task"].as_str() else {
                continue;
            };
            let Some(tracked) = recorder.live.get(id) else {
                continue;
            };
            let Ok(message) = serde_json::from_value::<Message>(forwarded["message"].clone())
            else {
                continue;
            };
            // The replica that took it checked it; read here as any answer is.
            let Ok(Decision::FollowUp(call)) =
                decide(&dispatcher, max_inline_file, &message, None, Some(id))
            else {
                continue;
            };
            if let Ok(waiting) = run::take_waiting(&recorder, id) {
                hand_over(&recorder, &tracked, message, call, waiting).await;
            }
        }
    });
}

/// Records the events of task `tracked`, which another replica runs, as `events` (its log)
/// brings them, with their numbers (not logged, written or posted again), until it ends.
fn mirror(recorder: Arc<Recorder>, tracked: Arc<Tracked>, mut events: LogStream) {
    tokio::spawn(async move {
        while let Some(Ok((seq, event))) = events.next().await {
            tracked.record_at(seq, event);
        }
        recorder.live.finished(&tracked);
    });
}

/// The dispatcher's decision on `message` (read from the request's own JSON, `raw`, when the
/// HTTP layer handed it over), for a new task or (`existing`) an answer.
fn decide(
    dispatcher: &Dispatcher,
    max_inline_file: usize,
    message: &Message,
    raw: Option<serde_json::Value>,
    existing: Option<&str>,
) -> Result<Decision, A2AError> {
    let (json, files) = dispatch_input(max_inline_file, message, raw)?;
    Ok(dispatcher.dispatch_with_files(json, files, existing))
}

/// What dispatch reads of `message`: its JSON (from `raw`, the request's own, when the HTTP
/// layer kept it), and its files taken out.
fn dispatch_input(
    max_inline_file: usize,
    message: &Message,
    raw: Option<serde_json::Value>,
) -> Result<(serde_json::Value, Vec<crate::file::File>), A2AError> {
    Ok(if let Some(raw) = raw {
        let files = files_of(message, max_inline_file)?;
        (dispatch_json(raw, message), files)
    } else if has_files(message) {
        // File parts are taken out of a copy only when there are any.
        let mut message = message.clone();
        let files = split_files(&mut message, max_inline_file)?;
        (message_json(&message)?, files)
    } else {
        (message_json(message)?, Vec::new())
    })
}

/// The refusal of a message to a task that has ended.
fn finished(id: &str) -> A2AError {
    A2AError::unsupported_operation(format!(
        "task `{id}` has already reached a terminal state; send a new message without a taskId"
    ))
}

/// The refusal of a subscription that resumes after event `after` of a finished task whose
/// log this process no longer keeps (see [`FinishedLogs`]).
fn log_gone(id: &str, after: u64) -> A2AError {
    A2AError::unsupported_operation(format!(
        "task `{id}` has ended and its events after event {after} are no longer kept (this agent keeps the logs of its latest finished tasks in memory only); GetTask answers the task as it ended"
    ))
}

/// An invalid-params error about one field of the request, with a `BadRequest` detail.
pub(crate) fn field_error(field: &str, description: impl Into<String>) -> A2AError {
    let description = description.into();
    A2AError::invalid_params(format!("`{field}`: {description}")).with_details(vec![
        TypedDetail::bad_request(vec![FieldViolation {
            field: field.to_owned(),
            description,
        }]),
    ])
}

/// The message's required fields (A2A 1.0: `messageId`, `role`, at least one part).
fn check_message(message: &Message) -> Result<(), A2AError> {
    if message.message_id.trim().is_empty() {
        return Err(field_error(
            "message.messageId",
            "is required: a unique id the sender gives each message",
        ));
    }
    if message.role == Role::Unspecified {
        return Err(field_error(
            "message.role",
            "is required: ROLE_USER for a caller's message",
        ));
    }
    if message.parts.is_empty() {
        return Err(field_error(
            "message.parts",
            "is required and holds at least one part",
        ));
    }
    Ok(())
}

/// A `historyLength` of a request: none, or zero and more.
fn check_history_length(field: &str, n: Option<i32>) -> Result<(), A2AError> {
    match n {
        Some(n) if n < 0 => Err(field_error(
            field,
            format!("is {n}; it is zero or more (omit it for the whole history)"),
        )),
        _ => Ok(()),
    }
}

/// The last `n` messages of the task's history, when `n` is given.
fn cut_history(task: &mut Task, n: Option<i32>) {
    let (Some(n), Some(history)) = (n, task.history.as_mut()) else {
        return;
    };
    let keep = usize::try_from(n.max(0)).unwrap_or(0);
    if history.len() > keep {
        history.drain(..history.len() - keep);
    }
}

#[async_trait]
impl<A: Agent> RequestHandler for Lifecycle<A> {
    async fn send_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2AError> {
        self.authorize(params)?;
        let config = req.configuration.as_ref();
        let history_length = config.and_then(|c| c.history_length);
        check_history_length("configuration.historyLength", history_length)?;
        let immediately = config.and_then(|c| c.return_immediately) == Some(true);
        let turn = self.begin(params, req).await?;
        let task = if immediately {
            turn.task
        } else {
            turn.tracked.wait(turn.seq, Until::Interrupted).await;
            if let Some(error) = turn.tracked.error_after(turn.seq) {
                return Err(error);
            }
            turn.tracked.snapshot().0
        };
        self.settle(&turn.tracked.id).await?;
        let mut task = task;
        cut_history(&mut task, history_length);
        Ok(SendMessageResponse::Task(self.out_task(task)))
    }

    async fn send_streaming_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let events = self.send_streaming_numbered(params, req).await?;
        Ok(self.out_events(unnumbered(events)))
    }

    async fn get_task(
        &self,
        params: &ServiceParams,
        req: GetTaskRequest,
    ) -> Result<Task, A2AError> {
        self.authorize(params)?;
        check_history_length("historyLength", req.history_length)?;
        let mut task = self.find(&req.id).await?;
        cut_history(&mut task, req.history_length);
        Ok(self.out_task(task))
    }

    async fn list_tasks(
        &self,
        params: &ServiceParams,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2AError> {
        self.authorize(params)?;
        if let Some(size) = req.page_size {
            if !(1..=100).contains(&size) {
                return Err(field_error(
                    "pageSize",
                    format!("is {size}; it is between 1 and 100 (omit it for 50)"),
                ));
            }
        }
        check_history_length("historyLength", req.history_length)?;
        let mut list = self.store().list(&req).await?;
        if self.exact && !exact::is_plain() {
            list.tasks.iter_mut().for_each(exact::encode_task);
        }
        Ok(list)
    }

    async fn cancel_task(
        &self,
        params: &ServiceParams,
        req: CancelTaskRequest,
    ) -> Result<Task, A2AError> {
        self.authorize(params)?;
        let id = req.id;
        // Cancelling a canceled task answers it as it is (cancel is idempotent); a task that
        // ended otherwise cannot be canceled.
        let settled = |task: Task| {
            if task.status.state == TaskState::Canceled {
                Ok(self.out_task(task))
            } else {
                Err(A2AError::task_not_cancelable(&id))
            }
        };
        if let Some(tracked) = self.recorder.live.get(&id) {
            let event = status(&tracked, TaskState::Canceled, None);
            if self.recorder.record(&tracked, event).await {
                self.recorder.sessions.cancel(&id);
                self.recorder.live.finished(&tracked);
            }
            return settled(tracked.snapshot().0);
        }
        let task = self
            .store()
            .get(&id)
            .await?
            .ok_or_else(|| A2AError::task_not_found(&id))?;
        if task.status.state.is_terminal() {
            return settled(task);
        }
        match self.store().begin_cancel(&id).await {
            Ok(task) => {
                // Another replica runs it: its handler stops there, and it posts the update.
                // Here, nobody else would.
                if self.changes.is_none() {
                    if let Some(push) = &self.recorder.push {
                        let event = status_of(&id, &task.context_id, TaskState::Canceled, None);
                        push.deliver(&id, event);
                    }
                }
                Ok(self.out_task(task))
            }
            Err(e) if e.code == error_code::TASK_NOT_CANCELABLE => settled(self.find(&id).await?),
            Err(e) => Err(e),
        }
    }

    async fn subscribe_to_task(
        &self,
        params: &ServiceParams,
        req: SubscribeToTaskRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let events = self.subscribe_numbered(params, req, None).await?;
        Ok(self.out_events(unnumbered(events)))
    }

    async fn create_push_config(
        &self,
        params: &ServiceParams,
        mut req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        self.authorize(params)?;
        let Some((configs, policy)) = &self.configs else {
            return Err(A2AError::push_notification_not_supported());
        };
        policy.check(&req.url).await?;
        self.find(&req.task_id).await?;
        req.id.get_or_insert_with(new_task_id);
        let saved = configs.save(req).await?;
        self.recorder.webhooks_changed(&saved.task_id, None);
        Ok(saved)
    }

    async fn get_push_config(
        &self,
        params: &ServiceParams,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        self.authorize(params)?;
        let configs = self.configs()?;
        configs.get(&req.task_id, &req.id).await
    }

    async fn list_push_configs(
        &self,
        params: &ServiceParams,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2AError> {
        self.authorize(params)?;
        let configs = self.configs()?;
        self.find(&req.task_id).await?;
        let mut configs = configs.list(&req.task_id).await?;
        configs.sort_by(|a, b| a.id.cmp(&b.id));
        let size = a2a_server::pagination::resolve_page_size(req.page_size);
        let start = match &req.page_token {
            Some(token) if !token.is_empty() => token
                .parse::<usize>()
                .map_err(|_| field_error("pageToken", "is not a token this agent gave"))?,
            _ => 0,
        }
        .min(configs.len());
        let end = (start + size).min(configs.len());
        Ok(ListTaskPushNotificationConfigsResponse {
            next_page_token: (end < configs.len()).then(|| end.to_string()),
            configs: configs.drain(start..end).collect(),
        })
    }

    async fn delete_push_config(
        &self,
        params: &ServiceParams,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<(), A2AError> {
        self.authorize(params)?;
        let configs = self.configs()?;
        configs.delete(&req.task_id, &req.id).await?;
        self.recorder.webhooks_changed(&req.task_id, None);
        Ok(())
    }

    async fn get_extended_agent_card(
        &self,
        params: &ServiceParams,
        _req: GetExtendedAgentCardRequest,
    ) -> Result<a2a::AgentCard, A2AError> {
        // Only for authenticated callers, whatever the card requires of other calls.
        if let Some(guard) = &self.guard {
            if !auth::is_authenticated(params) {
                return Err(auth::report(guard.unauthenticated_any()));
            }
        }
        self.extended
            .clone()
            .ok_or_else(A2AError::extended_card_not_configured)
    }
}

/// Stops the handlers running here whose task another replica cancelled, and records the
/// cancel (already in the store) in their log.
fn cancel_here(mut changes: broadcast::Receiver<String>, recorder: Arc<Recorder>) {
    tokio::spawn(async move {
        loop {
            let id = match changes.recv().await {
                Ok(id) => id,
                // Missed some: go on with the next change.
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            };
            let Some(tracked) = recorder.live.get(&id) else {
                continue;
            };
            if tracked.state().is_terminal() {
                continue;
            }
            if let Ok(Some(task)) = recorder.store.get(&id).await {
                if task.status.state == TaskState::Canceled {
                    let event = status(&tracked, TaskState::Canceled, None);
                    recorder.record_as(&tracked, event, Write::Skip).await;
                    recorder.sessions.cancel(&id);
                    recorder.live.finished(&tracked);
                }
            }
        }
    });
}

/// Posts the failure of each task the store's recovery fails to the task's webhooks.
fn post_recovered(mut recovered: tokio::sync::mpsc::UnboundedReceiver<Task>, push: Arc<Delivery>) {
    tokio::spawn(async move {
        while let Some(task) = recovered.recv().await {
            push.deliver(&task.id, status_update(&task));
        }
    });
}

/// How long a reader of the store's log waits for a notification before it reads the log
/// again all the same.
const RECHECK: Duration = Duration::from_secs(5);

/// Events read from the store's log, with their numbers.
type LogStream = BoxStream<'static, Result<(u64, StreamResponse), A2AError>>;

/// The events of task `id` after event `after`, from the store's log: `read` (those read
/// already), then each as any replica logs it (woken by `wake`), until one ends the task. A
/// task that ended without its end in the log (cancelled where no handler ran it) ends the
/// stream with its stored status.
fn follow_log(
    log: Arc<dyn EventLog>,
    wake: Option<Wake>,
    id: String,
    after: u64,
    read: Vec<(u64, StreamResponse)>,
) -> LogStream {
    struct Follow {
        log: Arc<dyn EventLog>,
        wake: Option<Wake>,
        id: String,
        after: u64,
        pending: std::collections::VecDeque<(u64, StreamResponse)>,
        done: bool,
    }
    let state = Follow {
        log,
        wake,
        id,
        after,
        pending: read.into(),
        done: false,
    };
    Box::pin(stream::unfold(state, |mut st| async move {
        loop {
            if st.done {
                return None;
            }
            if let Some((seq, event)) = st.pending.pop_front() {
                if seq <= st.after {
                    continue;
                }
                st.after = seq;
                st.done = ends(&event);
                return Some((Ok((seq, event)), st));
            }
            let logged = match st.log.read(&st.id, Some(st.after)).await {
                Ok(Some(logged)) => logged,
                Ok(None) => {
                    st.done = true;
                    return Some((Err(A2AError::task_not_found(&st.id)), st));
                }
                Err(e) => {
                    st.done = true;
                    return Some((Err(e), st));
                }
            };
            if !logged.events.is_empty() {
                st.pending.extend(logged.events);
                continue;
            }
            if logged.task.status.state.is_terminal() {
                st.done = true;
                let seq = st.after.max(logged.seq) + 1;
                return Some((Ok((seq, status_update(&logged.task))), st));
            }
            let Some((events, changes)) = st.wake.as_mut() else {
                // No other process writes this store: nothing more will come.
                return None;
            };
            // Until its log grows or it changes (or some notifications were missed), or for
            // `RECHECK` at most: a replica that runs the task may not have heard of this one
            // yet, and so not announce (see `SqlTasks`).
            let recheck = tokio::time::sleep(RECHECK);
            tokio::pin!(recheck);
            loop {
                let woken = tokio::select! {
                    id = events.recv() => id,
                    id = changes.recv() => id,
                    () = &mut recheck => break,
                };
                match woken {
                    Ok(id) if id != st.id => {}
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => break,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        }
    }))
}

#[cfg(all(test, feature = "sqlite"))]
mod tests {
    use super::*;

    fn task(state: TaskState) -> Task {
        Task {
            id: "t".to_owned(),
            context_id: "c".to_owned(),
            status: TaskStatus {
                state,
                message: None,
                timestamp: None,
            },
            artifacts: None,
            history: None,
            metadata: None,
        }
    }

    /// A replica that runs a task may not have heard of this one yet and write without
    /// announcing: the follower finds the write all the same, `RECHECK` later.
    #[tokio::test]
    async fn a_follower_that_hears_no_notification_reads_the_log_again() {
        let path = std::env::temp_dir().join(format!("a2a-recheck-{}.db", std::process::id()));
        let store = Arc::new(
            crate::server::store::SqlTasks::sqlite(&path, Default::default())
                .await
                .expect("a store"),
        );
        store
            .create(task(TaskState::Working))
            .await
            .expect("created");
        // Wake-ups that never come (kept open: closed, the follower would end).
        let (events, changes) = (broadcast::channel(1).0, broadcast::channel(1).0);
        let log: Arc<dyn EventLog> = Arc::clone(&store) as Arc<dyn EventLog>;
        let mut follow = follow_log(
            log,
            Some((events.subscribe(), changes.subscribe())),
            "t".to_owned(),
            0,
            Vec::new(),
        );
        let nothing = tokio::time::timeout(Duration::from_millis(300), follow.next()).await;
        assert!(nothing.is_err(), "nothing was written yet: {nothing:?}");

        let done = task(TaskState::Completed);
        store.append("t", 1, &status_update(&done));
        store.update_at(done, 1).await.expect("written");
        let started = std::time::Instant::now();
        let next = tokio::time::timeout(RECHECK * 2, follow.next())
            .await
            .expect("found without a notification");
        let (seq, event) = next.expect("an event").expect("read");
        assert_eq!(seq, 1);
        assert!(ends(&event), "the task's end: {event:?}");
        assert!(
            started.elapsed() <= RECHECK + Duration::from_secs(1),
            "found after {:?}",
            started.elapsed()
        );
        assert!(
            follow.next().await.is_none(),
            "the stream ends with the task"
        );
        drop((events, changes));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }
}
