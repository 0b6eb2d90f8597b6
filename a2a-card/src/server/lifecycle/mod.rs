//! The task lifecycle of a declared agent: what answers every [call](super::call).
//!
//! One path per call, and one place per event:
//!
//! 1. A message is checked (`messageId`, `role`, `parts`), then dispatched once by the
//!    [structured input flow](crate::dispatch) before any task exists: a refused message
//!    creates no task. The skill's own security requirement is checked once dispatch picks it.
//! 2. A new task is created (`submitted`, the caller's message as its history) and its skill
//!    started ([`run`]); an answer to a question resumes the handler that asked, here or (on
//!    Postgres) on the replica that runs it, to which the answer is forwarded.
//! 3. Every change of a task (started, working, progress, artifact chunk, question, answer,
//!    completion, failure, cancel, timeout, handed over) is made in one module, [`task`]: the
//!    [table](task::Phase) says whether the change is allowed where the task stands and what
//!    it requires, and the [`Recorder`] carries that out in order: the event numbered in the
//!    task's log, applied to the task in place, written to the store when it changes what the
//!    store keeps (a status, a whole artifact), told to its readers and posted to its
//!    webhooks. Nothing else writes a task.
//! 4. Readers read the log: a blocking send waits for the task to finish or ask; a stream (a
//!    send's, or a subscriber's) begins with the task as it is, then every event after it, in
//!    order, at the reader's own pace.
//!
//! One file per concern: [`request_checks`] (what a request must hold), [`dispatched`] (a
//! message dispatched to its skill's handler), [`at_once`] (a call answered without a task),
//! [`task`] (a task followed here, the one place its state changes: its log, its phase with
//! its handler, the table of changes, the recorder that carries them out, answers handed over
//! or kept, the events made), [`run`] (the skills' runs: a handler's signals made task
//! events), [`answers`] (an answer to a task's question, here, forwarded, or kept
//! for a takeover), [`durable`] (durable skills' journals and takeovers), [`cluster`] (what
//! the processes that share a store tell each other), [`operations`] (each A2A operation in a
//! module of its own, and the one way in of every binding: `Lifecycle::call`); this file
//! holds the turns: a task created, a stream or a subscription begun.
//!
//! [`Lifecycle`] holds the agent's parts once; its work is spread over the files above, one
//! `impl Lifecycle` block in each, so that each concern's code stands in the file named for it
//! (a file with a block says so above it).

mod answers;
#[cfg(feature = "mcp")]
mod at_once;
mod cluster;
#[cfg(feature = "console")]
mod console;
mod dispatched;
mod durable;
mod operations;
mod request_checks;
mod run;
mod task;

use std::sync::Arc;
use std::time::Duration;

use a2a::*;
use a2a_server::{PushConfigStore, TaskStore};
use futures::StreamExt;
use futures::stream;

use crate::agent::Declared;
use crate::dispatch::Dispatcher;

use super::auth::Guard;
use super::call::{Answered, Context, Extensions, Failure, NumberedStream, Used};
use super::limits::Limiter;
use super::push::{Delivery, Webhooks};
use super::store::{Logged, Place, Store};
#[cfg(feature = "mcp")]
pub(crate) use at_once::Unfolding;
use cluster::{Cluster, follow_log, hear, post_recovered};
use dispatched::Prepared;
#[cfg(feature = "testing")]
pub(crate) use durable::Checked;
pub(crate) use operations::Called;
#[cfg(feature = "mcp")]
pub(crate) use operations::FollowedTurn;
pub(crate) use operations::{
    CancelTask, CreatePushConfig, DeletePushConfig, GetExtendedAgentCard, GetPushConfig, GetTask,
    ListPushConfigs, ListTasks, SendMessage, SendStreamingMessage, SubscribeToTask,
};
use request_checks::{check_message, finished, log_gone};
pub use task::FinishedLogs;
use task::updates::status;
use task::{Happening, Recorder, Registry, Tracked, TurnOutcome, Until, answer_of};

/// What the handler is built from (see [`Server`](super::Server)).
pub(crate) struct Parts {
    /// The store, opened.
    pub(crate) store: Arc<dyn Store>,
    /// The memory store itself, where it is the store.
    pub(crate) memory: Option<Arc<crate::server::store::MemoryTasks>>,
    pub(crate) push: Option<(Arc<dyn PushConfigStore>, Arc<Delivery>, Webhooks)>,
    pub(crate) guard: Option<Arc<Guard>>,
    /// The agent's limits and their counters.
    pub(crate) limiter: Arc<Limiter>,
    pub(crate) extended: Option<a2a::AgentCard>,
    /// What is kept in memory of finished tasks' logs where the store keeps none.
    pub(crate) finished_logs: FinishedLogs,
    pub(crate) streaming: bool,
    pub(crate) max_inline_file: usize,
    pub(crate) input_timeout: Option<Duration>,
    /// The clock durable sleeps read.
    pub(crate) clock: crate::server::Clock,
    /// The extensions the served card declares.
    pub(crate) extensions: Extensions,
    /// The namespace of the agent's tasks where a host keeps several agents' tasks in one
    /// store (see `store::prefix`).
    pub(crate) namespace: Option<String>,
    /// The agent's tasks the store's recovery failed, for their webhooks.
    pub(crate) recovered: Option<tokio::sync::mpsc::UnboundedReceiver<Task>>,
}

/// The request handler of a declared agent (see the [module docs](self)).
pub(crate) struct Lifecycle {
    agent: Arc<dyn Declared>,
    dispatcher: Arc<Dispatcher>,
    recorder: Arc<Recorder>,
    /// The store, for what the recorder does not do with it (settling).
    store: Arc<dyn Store>,
    /// The other processes on the store, if any.
    cluster: Arc<dyn Cluster>,
    configs: Option<(Arc<dyn PushConfigStore>, Webhooks)>,
    guard: Option<Arc<Guard>>,
    limiter: Arc<Limiter>,
    extended: Option<a2a::AgentCard>,
    streaming: bool,
    max_inline_file: usize,
    extensions: Extensions,
    namespace: Option<String>,
    /// The clock durable sleeps read.
    clock: crate::server::Clock,
    /// The idempotency keys of sends, where the store keeps none.
    keys: crate::server::idempotency::Keys,
}

/// What a call's context comes to once admitted (`Lifecycle::admit`): the tenant it is made
/// in, and the extensions it uses (those it asked for that the card declares).
struct Scope {
    tenant: Option<String>,
    /// Where the call's tasks are: the prefix of the ids of those it makes and of those it
    /// reaches (its tenant's, under the agent's namespace in a host, and its owner's: see
    /// `store::Place`).
    place: Place,
    extensions: Vec<String>,
    /// The skill the call's message names for a new task ([`SKILL_EXTENSION_URI`]), checked
    /// to be one of the agent's.
    ///
    /// [`SKILL_EXTENSION_URI`]: crate::dispatch::SKILL_EXTENSION_URI
    skill: Option<usize>,
}

impl Scope {
    /// `answer`, naming the extensions the call used.
    fn answered<T>(self, answer: T) -> Answered<T> {
        Answered {
            answer,
            used: Used(self.extensions),
        }
    }
}

/// A turn under way: the task, its state when the turn began, that state's number, and what
/// the turn comes to for its caller (the handler's refusal of the input, if it refuses it).
struct Turn {
    tracked: Arc<Tracked>,
    /// The task at `seq` (`None`: not read by the caller, a blocking send's new task).
    task: Option<Task>,
    seq: u64,
    outcome: TurnOutcome,
    /// Whether the turn shows on the task already (`false`: an answer kept for the handler
    /// or forwarded to the replica that runs it, the task still asking until the handler takes
    /// it: its caller waits for an event after `seq`).
    begun: bool,
}

impl Turn {
    /// A turn of `tracked` from its state `task`, numbered `seq`, that no handler here answers
    /// (a subscription, an answer kept or forwarded).
    fn followed(tracked: Arc<Tracked>, (task, seq): (Task, u64)) -> Turn {
        Turn {
            tracked,
            task: Some(task),
            seq,
            outcome: TurnOutcome::none(),
            begun: true,
        }
    }

    /// A turn whose input the handler took (its caller `outcome`), from the task's state
    /// `task` then, numbered `seq`.
    fn taken(tracked: Arc<Tracked>, (task, seq): (Task, u64), outcome: TurnOutcome) -> Turn {
        Turn {
            tracked,
            task: Some(task),
            seq,
            outcome,
            begun: true,
        }
    }

    /// A turn whose input the handler has not taken yet (see [`Turn::begun`]), from the
    /// task's state `task`, numbered `seq`.
    fn pending(tracked: Arc<Tracked>, (task, seq): (Task, u64), outcome: TurnOutcome) -> Turn {
        Turn {
            tracked,
            task: Some(task),
            seq,
            outcome,
            begun: false,
        }
    }
}

/// How a turn that makes a new task begins.
struct Start {
    /// The skill the task runs, named by the caller (an index into the agent's skills)
    /// rather than chosen by dispatch.
    skill: Option<usize>,
    /// The task's id (one an idempotency key was kept for), else a new one.
    id: Option<String>,
    /// Whether the caller reads the task as the turn begins (a stream, `returnImmediately`).
    snapshot: bool,
    /// Whether the caller reads the task's events as a stream it may resume with
    /// `Last-Event-ID` (the log is kept for it once the task ends).
    resumable: bool,
}

impl Lifecycle {
    /// The agent whose tasks this runs.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn agent(&self) -> &dyn Declared {
        &*self.agent
    }

    pub(crate) fn new(agent: Arc<dyn Declared>, dispatcher: Arc<Dispatcher>, parts: Parts) -> Self {
        let store = parts.store;
        let log = store.events();
        let recorder = Arc::new(Recorder {
            store: store.tasks(),
            memory: parts.memory,
            // Nothing of a finished task stays in memory where the store keeps its log.
            registry: Arc::new(Registry::new(match log {
                Some(_) => FinishedLogs::none(),
                None => parts.finished_logs,
            })),
            mailbox: Default::default(),
            push: parts.push.as_ref().map(|(_, d, _)| Arc::clone(d)),
            input_timeout: parts.input_timeout,
            clock: parts.clock.clone(),
            log,
            stopping: Default::default(),
        });
        let cluster = cluster::of(&store);
        if let Some(changes) = cluster.wake() {
            hear(
                changes,
                Arc::clone(&recorder),
                Arc::clone(&dispatcher),
                parts.max_inline_file,
                parts.namespace.clone(),
            );
        }
        if let (Some(recovered), Some(push)) = (parts.recovered, &recorder.push) {
            post_recovered(recovered, Arc::clone(push));
        }
        Lifecycle {
            agent,
            dispatcher,
            recorder,
            store,
            cluster,
            configs: parts.push.map(|(c, _, w)| (c, w)),
            guard: parts.guard,
            limiter: parts.limiter,
            extended: parts.extended,
            streaming: parts.streaming,
            max_inline_file: parts.max_inline_file,
            extensions: parts.extensions,
            namespace: parts.namespace,
            clock: parts.clock,
            keys: Default::default(),
        }
    }

    /// What a drain stops of this lifecycle.
    pub(crate) fn halt(&self) -> Halt {
        Halt {
            recorder: Arc::clone(&self.recorder),
            store: Arc::clone(&self.store),
        }
    }

    /// The tasks.
    fn tasks(&self) -> &dyn TaskStore {
        &*self.recorder.store
    }

    /// The push-notification configs, where the card declares push notifications.
    fn configs(&self) -> Result<&Arc<dyn PushConfigStore>, A2AError> {
        match &self.configs {
            Some((configs, _)) => Ok(configs),
            None => Err(A2AError::push_notification_not_supported()),
        }
    }

    /// Refuses a call without an authenticated caller when the card requires one (the
    /// authentication layer in front already did; this holds for a caller in the process).
    fn authorize(&self, ctx: &Context) -> Result<(), Failure> {
        match &self.guard {
            Some(guard) if !guard.is_open() && !ctx.is_authenticated() => {
                Err(guard.unauthenticated_any().into())
            }
            _ => Ok(()),
        }
    }

    /// Waits until the store has written task `id`, where it holds new tasks back.
    async fn settle(&self, id: &str) -> Result<(), A2AError> {
        self.store.settle(id).await
    }

    /// The task `id`, followed here or stored.
    async fn find(&self, id: &str) -> Result<Task, A2AError> {
        if let Some(tracked) = self.current(id) {
            return Ok(tracked.snapshot().0);
        }
        self.tasks()
            .get(id)
            .await?
            .ok_or_else(|| A2AError::task_not_found(id))
    }

    /// Task `id` as followed here, where this process's copy is the task as it is: a task it
    /// runs, one that ended, or any where the store keeps no log (then the copy here is all
    /// there is). A copy of a task another process runs may be behind the store: it is read
    /// from the store instead.
    fn current(&self, id: &str) -> Option<Arc<Tracked>> {
        let tracked = self.recorder.registry.get(id)?;
        let current = self.recorder.log.is_none()
            || tracked.phase().runs_here()
            || tracked.state().is_terminal();
        current.then_some(tracked)
    }

    /// Starts a turn: a new task for a message that names none (as `start` says), or the
    /// answer to the question of the task it names. `scope`: the tenant a new task is made
    /// in, and the extensions its skill uses.
    async fn begin(
        &self,
        ctx: &Context,
        req: SendMessageRequest,
        scope: &Scope,
        start: Start,
    ) -> Result<Turn, Failure> {
        check_message(&req.message)?;
        let config = req
            .configuration
            .as_ref()
            .and_then(|c| c.task_push_notification_config.clone());
        if let Some(config) = &config {
            let Some((_, policy)) = &self.configs else {
                return Err(A2AError::push_notification_not_supported().into());
            };
            policy.check(&config.url).await?;
        }
        match req.message.task_id.clone() {
            None => self.create(ctx, req, config, scope, start).await,
            Some(id) => Ok(self.resume(req, &id, config, start.resumable).await?),
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
        ctx: &Context,
        req: SendMessageRequest,
        config: Option<TaskPushNotificationConfig>,
        scope: &Scope,
        start: Start,
    ) -> Result<Turn, Failure> {
        let Start {
            skill: named,
            id,
            snapshot,
            resumable,
        } = start;
        let Prepared {
            skill,
            call,
            permits,
            deadline_ms,
        } = self.dispatched(ctx, &req.message, scope, named)?;
        let skill_id = self.agent.skills().get(skill).map_or("", |s| s.id);
        let message = req.message;
        let task = Arc::new(Task {
            // A task's id says whose it is (see `store::Place`).
            // (Under an idempotency key, the id the key was kept for.)
            id: id.unwrap_or_else(|| scope.place.new_id()),
            context_id: message.context_id.clone().unwrap_or_else(new_context_id),
            status: TaskStatus {
                state: TaskState::Submitted,
                message: None,
                timestamp: Some(chrono::Utc::now()),
            },
            artifacts: None,
            history: Some(vec![message]),
            metadata: None,
        });
        // Shared with the memory store, which keeps it as it is (the run copies it as it
        // changes it next).
        self.recorder.create(&task).await?;
        self.keep_webhook(&task.id, config, true).await?;
        let tracked = self.recorder.registry.track(task);
        if resumable {
            tracked.resumable();
        }
        tracked.hold(permits);
        tracked.observe(task::Observed {
            span: super::telemetry::task_span(
                &tracked.id,
                &tracked.context,
                self.agent.decl().name,
                skill_id,
            ),
            skill: skill_id,
            since: std::time::Instant::now(),
        });
        // A durable skill's journal begins with what the task runs.
        let durable = self.durable_version(skill).and_then(|version| {
            let log = self.recorder.journals()?;
            // The trace the task is in, so that a run of it elsewhere continues it.
            let trace = tracked
                .span()
                .map(|span| super::telemetry::outgoing_headers(&span))
                .unwrap_or_default();
            let begin = crate::journal::Entry::Begin {
                begin: Box::new(crate::journal::Begin {
                    skill: skill_id.to_owned(),
                    version: version.map(str::to_owned),
                    principal: call.context.principal().cloned(),
                    extensions: call.context.extensions().to_vec(),
                    tenant: call.context.tenant().map(str::to_owned),
                    trace,
                    deadline_ms,
                    tokens: call.context.tokens_given(),
                }),
            };
            log.journal(&tracked.id, 0, &begin);
            Some(run::Durable {
                journal: Arc::new(durable::open(
                    Arc::clone(log),
                    &tracked.id,
                    Vec::new(),
                    self.clock.clone(),
                )),
                replay: Default::default(),
            })
        });
        // The task as it begins, where the caller reads it (a blocking send reads the task it
        // comes to instead: no copy is made for it).
        let (task, seq) = match snapshot {
            true => {
                let (task, seq) = tracked.snapshot();
                (Some(task), seq)
            }
            false => (None, tracked.last()),
        };
        self.recorder
            .record(&tracked, status(&tracked, TaskState::Working, None))
            .await;
        let (caller, outcome) = task::turn();
        run::start(
            Arc::clone(&self.agent),
            Arc::clone(&self.recorder),
            Arc::clone(&tracked),
            skill,
            call,
            durable,
            Some(caller),
        );
        Ok(Turn {
            tracked,
            task,
            seq,
            outcome,
            begun: true,
        })
    }

    /// Follows task `id`, which this process does not run, from the store: as its log has
    /// it where the store keeps one (so that its events keep the numbers the replica that
    /// runs it gave them).
    async fn track_stored(&self, id: &str) -> Result<Arc<Tracked>, A2AError> {
        let logged = match &self.recorder.log {
            Some(log) => log.read(id, None).await?,
            None => self
                .tasks()
                .get(id)
                .await?
                .map(|task| Logged::new(task, 0, Vec::new())),
        };
        self.track_logged(logged.ok_or_else(|| A2AError::task_not_found(id))?)
    }

    /// Follows the task `logged` holds, as it is after the events it holds (those this
    /// process holds already are left out).
    fn track_logged(&self, logged: Logged) -> Result<Arc<Tracked>, A2AError> {
        let (task, seq) = (logged.task, logged.seq);
        if task.status.state.is_terminal() {
            return Err(finished(&task.id));
        }
        let tracked = self.recorder.registry.track_at(task, seq);
        for (seq, event) in logged.events {
            self.recorder.heard(&tracked, seq, event);
        }
        Ok(tracked)
    }

    /// The stream of a turn or a subscription: the task, then its events after it, each with
    /// its number in the task's log. The turn's caller reads the handler's refusal of its input
    /// instead of the task's failure. A turn not [begun](Turn::begun) yet streams from the
    /// task as it is once the handler takes its input (a stream that began with the task still
    /// asking would read as the question asked again).
    fn stream(&self, turn: Turn, until: Until) -> NumberedStream {
        let store = Arc::clone(&self.store);
        if turn.begun {
            return turn_stream(store, turn, until);
        }
        Box::pin(
            stream::once(async move {
                turn.tracked.wait_beyond(turn.seq).await;
                let (task, seq) = turn.tracked.snapshot();
                turn_stream(
                    store,
                    Turn {
                        task: Some(task),
                        seq,
                        begun: true,
                        ..turn
                    },
                    until,
                )
            })
            .flatten(),
        )
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
        let held = self.current(id).filter(|tracked| {
            // Events from before this process followed the task are in the store's log.
            after.is_none_or(|n| n + 1 >= tracked.first() || self.recorder.log.is_none())
        });
        if let Some(tracked) = held {
            tracked.resumable();
            let (task, seq) = tracked.snapshot();
            // After `seq` too: the subscriber saw events this log does not hold yet (sent by
            // a process that stopped before they were stored, which the run taken over here
            // makes again, with the same numbers); it reads on after them once they are.
            if let Some(after) = after {
                if after >= seq && task.status.state.is_terminal() {
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
            return Ok(self.stream(Turn::followed(tracked, (task, seq)), Until::Terminal));
        }
        let Some(log) = &self.recorder.log else {
            // A store without a log: the task as it is.
            let task = self
                .tasks()
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
                Ok((None, Arc::new(StreamResponse::Task(task).into())))
            })));
        };
        // Woken from before the log is read, so that no event is missed in between.
        let wake = self.cluster.wake();
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
                Some((
                    Some(logged.seq),
                    Arc::new(StreamResponse::Task(logged.task).into()),
                )),
                logged.seq,
            ),
        };
        let events = follow_log(Arc::clone(log), wake, id.to_owned(), from, logged.events);
        let events = events.map(|e| e.map(|(n, e)| (Some(n), e)));
        Ok(Box::pin(stream::iter(first.map(Ok)).chain(events)))
    }
}

/// The stream of `turn`, begun (see [`Lifecycle::stream`]).
fn turn_stream(store: Arc<dyn Store>, turn: Turn, until: Until) -> NumberedStream {
    let Turn {
        tracked,
        task,
        seq,
        mut outcome,
        begun: _,
    } = turn;
    // (A turn begun without its task read: the task as it is now, and its number.)
    let (task, seq) = match task {
        Some(task) => (task, seq),
        None => tracked.snapshot(),
    };
    let id = tracked.id.clone();
    let first = stream::once(async move {
        store.settle(&id).await?;
        Ok((Some(seq), Arc::new(StreamResponse::Task(task).into())))
    });
    let events = tracked.events(seq, until).map(move |event| {
        let (seq, event) = event?;
        if let Some(StreamResponse::StatusUpdate(update)) = event.kept()
            && update.status.state == TaskState::Failed
            && let Some(refusal) = outcome.refused()
        {
            return Err(refusal);
        }
        Ok((Some(seq), event))
    });
    Box::pin(first.chain(events))
}

/// What the drain of a listener stops of an agent's lifecycle (see
/// [`Listening::serve`](super::Listening::serve)): the handlers that run here, and the
/// agent's hold on its tasks in the store.
#[derive(Clone)]
pub(crate) struct Halt {
    recorder: Arc<Recorder>,
    pub(crate) store: Arc<dyn Store>,
}

impl Halt {
    /// The drain began: the durable tasks the store takes over from now on (another
    /// process's, which stopped too) are left for the processes that stay.
    pub(crate) fn begin(&self) {
        self.recorder
            .stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Hands over at once every durable task that no caller here reads (a task waiting for an
    /// answer, or running for a caller that did not wait): its handler is dropped, its writes
    /// stored, and the store's claim on it given up, so that another process takes it over
    /// now rather than when this one's drain ends. A task a blocking call or a stream here
    /// reads goes on here (the call is answered; a stream is ended by the drain and resumed
    /// elsewhere): the drain calls this again until it settles, and the task is handed over
    /// once no caller here reads it, or at the drain's end ([`stop`](Self::stop)).
    pub(crate) async fn hand_over(&self) {
        let Some(log) = self.recorder.log.clone() else {
            return;
        };
        for tracked in self.recorder.registry.all() {
            if tracked.phase().journaled() != Some(true)
                || tracked.state().is_terminal()
                || tracked.read_here()
            {
                continue;
            }
            self.recorder.stop(&tracked, true);
            let handed = async {
                self.store.settle(&tracked.id).await?;
                log.give_up(&tracked.id).await
            };
            if let Err(e) = handed.await {
                // Its claim goes with this process's lease, at the drain's end.
                tracing::warn!(task = %tracked.id, error = %e.message, "a durable task could not be handed over during the drain");
            }
        }
    }

    /// Whether a handler whose task only this process can finish is at work (a skill that is
    /// not durable here, not waiting for an answer).
    pub(crate) fn busy(&self) -> bool {
        let busy = |t: &Arc<Tracked>| t.phase() == task::Phase::Running { journaled: false };
        self.recorder.registry.all().iter().any(busy)
    }

    /// Stops every handler that runs here: a durable skill's is dropped, its task left as
    /// its journal has it for another process to take over; any other's task fails, saying
    /// that the agent shut down ([`SHUT_DOWN`](super::SHUT_DOWN)).
    pub(crate) async fn stop(&self) {
        for tracked in self.recorder.registry.all() {
            let Some(durable) = tracked.phase().journaled() else {
                continue;
            };
            if durable || tracked.state().is_terminal() {
                self.recorder.stop(&tracked, false);
                continue;
            }
            let why = super::SHUT_DOWN.to_owned();
            let event = status(&tracked, TaskState::Failed, Some(why));
            let _ = self
                .recorder
                .end(&tracked, Happening::Fail, task::Ending::with(event))
                .await;
        }
    }
}
