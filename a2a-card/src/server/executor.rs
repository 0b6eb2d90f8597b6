//! The official server's [`AgentExecutor`] for a declared agent: the structured input flow,
//! then the skill, run as a task that streams, reports progress, asks, and can be cancelled.

use std::collections::HashMap;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use a2a::{
    A2AError, Artifact, Message, Part, PartContent, Role, StreamResponse, TaskArtifactUpdateEvent,
    TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use a2a_server::{AgentExecutor, ExecutorContext, TaskStore};
use futures::channel::{mpsc, oneshot};
use futures::future::{self, Either};
use futures::stream::{self, BoxStream};
use futures::{FutureExt, StreamExt};
use serde_json::Value;
use tokio::sync::OwnedMutexGuard;

use crate::agent::Agent;
use crate::context::{Answer, Event, LinkHandle};
use crate::dispatch::{Decision, Dispatcher, SchemaCompileError};
use crate::file::{File, FileContent};
use crate::schema::SchemaMode;
use crate::skill::{CallInput, Reply, SkillCall, SkillError};

use super::errors::{dispatch_error, input_error};
use super::message::{message_json, split_files};
use super::push::Delivery;

/// How many events a handler may run ahead of the task before it waits.
const EVENT_BUFFER: usize = 16;

/// The status message of a task whose handler panicked (the panic's text goes to the log only).
pub(crate) const PANIC_MESSAGE: &str =
    "the skill failed unexpectedly; the agent's log has the details";

/// Runs a declared agent's skills for the official A2A server.
///
/// For each message the [dispatcher](Dispatcher) picks the skill (or rejects the message), and
/// the handler runs in its own task; what it does becomes task events, in order:
///
/// | the handler | events |
/// |---|---|
/// | starts | a `working` status |
/// | calls [`SkillContext::progress`](crate::SkillContext::progress) | a `working` status carrying the text |
/// | sends artifact chunks, or returns a stream | `TaskArtifactUpdateEvent`s (see [`Artifact`](crate::Artifact)) |
/// | calls [`SkillContext::ask`](crate::SkillContext::ask) | an `input-required` status carrying the question (`auth-required` for [`ask_auth`](crate::SkillContext::ask_auth)); the caller's next message on the task resumes the handler |
/// | returns [`Reply::Data`] / [`Reply::Text`] / [`Reply::File`] | an artifact with one data part (`mediaType` and `metadata.mimeType` `application/json;schema=NAME`), text part or file part, then `completed` |
/// | returns `Err` ([`SkillError::Failed`]) | a `failed` status carrying the error's text |
/// | panics | a `failed` status with a generic message; the panic's text goes to the log only |
/// | is cancelled (`CancelTask`) | its future is dropped at its next `.await`; the task is `canceled` |
///
/// A message that answers a question (it names a task waiting in `input-required`) resumes the
/// handler that asked, in this process. When no handler here is waiting for it (the agent
/// restarted since it asked), the task fails with a message that says so: the caller starts a
/// new task rather than waiting for an answer that cannot come.
///
/// The dispatcher normally runs before the task exists, in
/// [`StructuredInput`](super::StructuredInput); the executor checks again so that it is correct
/// on its own too. When it has the task store, an error answer also marks the task `failed`, so
/// no task is left `submitted` forever.
///
/// ```
/// use a2a_card::server::SkillExecutor;
/// use a2a_card::{agent, skill};
/// use a2a_card::server::a2a_server::{DefaultRequestHandler, InMemoryTaskStore};
///
/// struct Echo;
/// /// Says back what it is told.
/// #[agent(url = "http://127.0.0.1:9000")]
/// impl Echo {
///     /// Echoes the text.
///     #[skill]
///     fn echo(&self, text: String) -> String { text }
/// }
///
/// let executor = SkillExecutor::new(Echo)?;
/// let handler = DefaultRequestHandler::new(executor, InMemoryTaskStore::new());
/// # drop(handler);
/// # Ok::<(), a2a_card::dispatch::SchemaCompileError>(())
/// ```
pub struct SkillExecutor<A: Agent> {
    agent: Arc<A>,
    dispatcher: Arc<Dispatcher>,
    store: Option<Arc<dyn TaskStore>>,
    sessions: Arc<Sessions>,
    max_inline_file: usize,
    push: Option<Arc<Delivery>>,
    decisions: Option<Arc<Decisions>>,
    input_timeout: Option<Duration>,
}

impl<A: Agent> fmt::Debug for SkillExecutor<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillExecutor")
            .field("agent", &A::DECL.source)
            .field("dispatcher", &self.dispatcher)
            .field("max_inline_file", &self.max_inline_file)
            .field("input_timeout", &self.input_timeout)
            .finish_non_exhaustive()
    }
}

impl<A: Agent> SkillExecutor<A> {
    /// The executor of `agent`, with its dispatcher (schemas compiled now).
    pub fn new(agent: A) -> Result<Self, SchemaCompileError> {
        Ok(SkillExecutor::with_parts(
            Arc::new(agent),
            Arc::new(Dispatcher::for_agent::<A>()?),
            None,
            super::DEFAULT_MAX_INLINE_FILE,
            None,
        ))
    }

    /// An executor sharing the agent, the dispatcher and the task store.
    pub(crate) fn with_parts(
        agent: Arc<A>,
        dispatcher: Arc<Dispatcher>,
        store: Option<Arc<dyn TaskStore>>,
        max_inline_file: usize,
        push: Option<Arc<Delivery>>,
    ) -> Self {
        SkillExecutor {
            agent,
            dispatcher,
            store,
            sessions: Arc::new(Sessions::default()),
            max_inline_file,
            push,
            decisions: None,
            input_timeout: Some(super::DEFAULT_INPUT_TIMEOUT),
        }
    }

    /// How long a question may stay unanswered before its task fails
    /// ([`DEFAULT_INPUT_TIMEOUT`](super::DEFAULT_INPUT_TIMEOUT)); `None`: as long as the process
    /// runs. See [`Server::input_timeout`](super::Server::input_timeout).
    ///
    /// ```
    /// use std::time::Duration;
    /// use a2a_card::server::SkillExecutor;
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Says back what it is told.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// let executor = SkillExecutor::new(Echo)?.input_timeout(Duration::from_secs(600));
    /// # drop(executor);
    /// # Ok::<(), a2a_card::dispatch::SchemaCompileError>(())
    /// ```
    pub fn input_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.input_timeout = timeout.into();
        self
    }

    /// Takes the decisions [`StructuredInput`](super::StructuredInput) made before the task
    /// existed, rather than dispatching each message again.
    pub(crate) fn with_decisions(mut self, decisions: Arc<Decisions>) -> Self {
        self.decisions = Some(decisions);
        self
    }

    /// The handlers running in this process.
    pub(crate) fn sessions(&self) -> Arc<Sessions> {
        Arc::clone(&self.sessions)
    }

    /// Starts the handler of `skill` for a new task.
    fn start(
        &self,
        ids: Ids,
        skill: usize,
        mut call: SkillCall,
    ) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        call.context.task_id = Some(ids.task.clone());
        call.context.context_id = Some(ids.context.clone());
        let skill_id = A::SKILLS.get(skill).map_or("output", |s| s.id);
        let (link, events) = call.context.link(skill_id, EVENT_BUFFER);
        let (abort, aborted) = oneshot::channel::<()>();
        let session = Arc::new(Session {
            pump: Arc::new(tokio::sync::Mutex::new(Pump {
                events,
                open: Vec::new(),
            })),
            waiting: Mutex::new(None),
            abort: Mutex::new(Some(abort)),
            expiry: Mutex::new(None),
            link: link.clone(),
        });
        self.sessions
            .lock()
            .insert(ids.task.clone(), Arc::clone(&session));
        let agent = Arc::clone(&self.agent);
        let task = ids.task.clone();
        tokio::spawn(async move {
            let run = AssertUnwindSafe(agent.call_skill(skill, call)).catch_unwind();
            let outcome = match future::select(std::pin::pin!(run), aborted).await {
                Either::Left((Ok(outcome), _)) => outcome,
                Either::Left((Err(panic), _)) => {
                    let text = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "(no message)".to_owned());
                    tracing::error!(task = %task, skill = skill_id, panic = %text, "a skill handler panicked");
                    Err(SkillError::Failed(PANIC_MESSAGE.to_owned()))
                }
                // Cancelled: the handler's future is dropped here, and nothing more is sent.
                Either::Right(_) => return,
            };
            link.end(outcome).await;
        });
        let working = stream::iter([Ok(ids.status(TaskState::Working, None))]);
        Box::pin(working.chain(self.pump(session, ids)))
    }

    /// Gives a waiting handler the caller's answer and follows it again.
    fn resume(
        &self,
        ids: Ids,
        call: SkillCall,
    ) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let session = self.sessions.lock().get(&ids.task).cloned();
        let Some(session) = session else {
            let why = format!(
                "task `{}` was waiting for input, but the handler that asked is no longer running (the agent restarted since); start a new task",
                ids.task
            );
            return Box::pin(stream::iter([Ok(ids.status(TaskState::Failed, Some(why)))]));
        };
        let waiting = lock(&session.waiting).take();
        if let Some(expiry) = lock(&session.expiry).take() {
            expiry.abort();
        }
        let Some(waiting) = waiting else {
            let err = A2AError::invalid_request(format!(
                "task `{}` is working and has not asked for input; wait for it to ask (input-required) before answering",
                ids.task
            ));
            return Box::pin(stream::iter([Err(err)]));
        };
        let SkillCall {
            input,
            files,
            context,
            ..
        } = call;
        let (text, data) = match input {
            CallInput::Text(text) => (text, None),
            CallInput::Data(data) => (String::new(), Some(data)),
            _ => (String::new(), None),
        };
        let mut answer = Answer::new(text, data);
        answer.files = files;
        answer.message = context.message;
        // A handler that was dropped meanwhile (cancelled) leaves nothing to resume.
        let _ = waiting.send(answer);
        let working = stream::iter([Ok(ids.status(TaskState::Working, None))]);
        Box::pin(working.chain(self.pump(session, ids)))
    }

    /// The task events of a session, until the handler ends, asks, or is cancelled.
    fn pump(
        &self,
        session: Arc<Session>,
        ids: Ids,
    ) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let ctx = PumpContext {
            session,
            ids,
            store: self.store.clone(),
            sessions: Arc::clone(&self.sessions),
            push: self.push.clone(),
            input_timeout: self.input_timeout,
        };
        let state = (ctx, None::<OwnedMutexGuard<Pump>>, false);
        Box::pin(
            stream::unfold(state, |(ctx, guard, stop)| async move {
                if stop {
                    return None;
                }
                // One follower at a time: a resumed turn waits for the previous one to let go.
                let mut guard = match guard {
                    Some(g) => g,
                    None => Arc::clone(&ctx.session.pump).lock_owned().await,
                };
                // `None`: every sender is gone (the task was cancelled).
                let event = guard.events.next().await?;
                let (out, stop) = ctx.handle(&mut guard, event).await;
                if let Some(push) = &ctx.push {
                    for event in out.iter().flatten() {
                        push.deliver(&ctx.ids.task, event).await;
                    }
                }
                Some((stream::iter(out), (ctx, Some(guard), stop)))
            })
            .flatten(),
        )
    }
}

impl<A: Agent> AgentExecutor for SkillExecutor<A> {
    fn execute(
        &self,
        ctx: ExecutorContext,
    ) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let ids = Ids {
            task: ctx.task_id,
            context: ctx.context_id,
        };
        let store = self.store.clone();
        let Some(mut message) = ctx.message else {
            let err = A2AError::invalid_params("a message is required to run a skill");
            return refuse(store, ids, err);
        };
        // Decided once, before the task existed (see `Decisions`); decided here otherwise.
        let decided = self
            .decisions
            .as_ref()
            .and_then(|d| d.take(ctx.metadata.as_ref()));
        let decision = match decided {
            Some(decision) => decision,
            None => {
                let existing_task = message.task_id.clone();
                let files = match split_files(&mut message, self.max_inline_file) {
                    Ok(files) => files,
                    Err(err) => return refuse(store, ids, err),
                };
                let json = match message_json(&message) {
                    Ok(json) => json,
                    Err(err) => return refuse(store, ids, err),
                };
                self.dispatcher
                    .dispatch_with_files(json, files, existing_task.as_deref())
            }
        };
        match decision {
            Decision::Run { skill, mut call } => {
                // Who called, as the authentication layer found (nobody, without one).
                call.context
                    .set_principal(super::auth::principal_of(&ctx.service_params).map(Arc::new));
                self.start(ids, skill, call)
            }
            Decision::FollowUp(call) => self.resume(ids, call),
            Decision::Reject(e) => refuse(store, ids, dispatch_error(&e)),
        }
    }

    fn cancel(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let ids = Ids {
            task: ctx.task_id,
            context: ctx.context_id,
        };
        self.sessions.cancel(&ids.task);
        Box::pin(stream::iter([Ok(ids.status(TaskState::Canceled, None))]))
    }
}

/// The key, in a `SendMessage` request's metadata, of the dispatcher's decision on its message,
/// which the pre-check leaves for the executor (the request's metadata reaches the executor and
/// is not stored with the task).
pub(crate) const DECISION_KEY: &str = "a2a-card.decision";

/// Decisions on messages, made once before their task exists and taken by the executor, by a
/// random key set in the request's metadata (any value a caller sent there is replaced, so a
/// caller cannot name another request's decision).
#[derive(Default)]
pub(crate) struct Decisions(Mutex<HashMap<String, Decision>>);

impl Decisions {
    /// Keeps `decision` for the executor; the key to put in the request's metadata.
    pub(crate) fn keep(&self, decision: Decision) -> String {
        let key = a2a::new_task_id();
        lock(&self.0).insert(key.clone(), decision);
        key
    }

    /// The decision a request's metadata names, taken.
    fn take(&self, metadata: Option<&HashMap<String, Value>>) -> Option<Decision> {
        let key = metadata?.get(DECISION_KEY)?.as_str()?;
        lock(&self.0).remove(key)
    }

    /// Drops a decision no executor will take (the request failed before its task ran).
    pub(crate) fn forget(&self, key: &str) {
        lock(&self.0).remove(key);
    }
}

/// The running handlers of this process, by task.
#[derive(Default)]
pub(crate) struct Sessions(Mutex<HashMap<String, Arc<Session>>>);

impl Sessions {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        lock(&self.0)
    }

    /// Whether a handler of task `id` runs here.
    pub(crate) fn runs(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    /// Drops the handler of task `id`, if it runs here (waiting for an answer or not).
    pub(crate) fn cancel(&self, id: &str) {
        let Some(session) = self.lock().remove(id) else {
            return;
        };
        session.link.cancel();
        if let Some(abort) = lock(&session.abort).take() {
            let _ = abort.send(());
        }
        lock(&session.waiting).take();
        if let Some(expiry) = lock(&session.expiry).take() {
            expiry.abort();
        }
    }
}

/// A handler running for a task.
struct Session {
    /// Its events, followed by one execution stream at a time.
    pump: Arc<tokio::sync::Mutex<Pump>>,
    /// Where the answer goes while it waits in `input-required`.
    waiting: Mutex<Option<oneshot::Sender<Answer>>>,
    /// Drops the handler's future (cancellation).
    abort: Mutex<Option<oneshot::Sender<()>>>,
    /// Withdraws the question it waits on, when no answer comes in time.
    expiry: Mutex<Option<tokio::task::AbortHandle>>,
    link: LinkHandle,
}

/// What follows a handler: its events, and the artifacts it has not closed.
struct Pump {
    events: mpsc::Receiver<Event>,
    open: Vec<Open>,
}

/// An artifact sent in chunks and not yet complete: its parts so far.
struct Open {
    id: String,
    name: String,
    parts: Vec<Part>,
}

struct PumpContext {
    session: Arc<Session>,
    ids: Ids,
    store: Option<Arc<dyn TaskStore>>,
    sessions: Arc<Sessions>,
    push: Option<Arc<Delivery>>,
    input_timeout: Option<Duration>,
}

type Out = Vec<Result<StreamResponse, A2AError>>;

impl PumpContext {
    /// Fails the task if the question just asked is still unanswered after the input timeout:
    /// the handler is dropped at its `.await` (as on cancel), the task failed in the store,
    /// saying why, and the update pushed. An answer, or a cancel, disarms it.
    fn withdraw_unanswered(&self) {
        let Some(after) = self.input_timeout else {
            return;
        };
        // Weak: a session that ends otherwise is not kept alive by its timer.
        let session = Arc::downgrade(&self.session);
        let (ids, store, sessions, push) = (
            self.ids.clone(),
            self.store.clone(),
            Arc::clone(&self.sessions),
            self.push.clone(),
        );
        let timer = tokio::spawn(async move {
            tokio::time::sleep(after).await;
            let Some(session) = session.upgrade() else {
                return;
            };
            if lock(&session.waiting).take().is_none() {
                return;
            }
            // This timer is the session's expiry: taken out first, so that the cancel does not
            // abort the timer itself before the store has the failure.
            lock(&session.expiry).take();
            sessions.cancel(&ids.task);
            let why = format!(
                "no answer came within {} (the agent's input timeout), so the question was withdrawn; start a new task",
                span(after)
            );
            fail_in_store(store.as_deref(), &ids, &why).await;
            if let Some(push) = push {
                push.deliver(&ids.task, &ids.status(TaskState::Failed, Some(why)))
                    .await;
            }
        });
        if let Some(earlier) = lock(&self.session.expiry).replace(timer.abort_handle()) {
            earlier.abort();
        }
    }

    /// The task events of one handler event, and whether the stream stops after them.
    async fn handle(&self, pump: &mut Pump, event: Event) -> (Out, bool) {
        let ids = &self.ids;
        match event {
            Event::Progress(text) => (vec![Ok(ids.status(TaskState::Working, Some(text)))], false),
            Event::Chunk {
                id,
                name,
                reply,
                append,
                last,
            } => {
                let Some(part) = reply_part(reply) else {
                    return (Vec::new(), false);
                };
                let position = pump.open.iter().position(|o| o.id == id);
                match (last, position) {
                    (true, Some(i)) => {
                        pump.open.swap_remove(i);
                    }
                    (true, None) => {}
                    (false, Some(i)) => pump.open[i].parts.push(part.clone()),
                    (false, None) => pump.open.push(Open {
                        id: id.clone(),
                        name: name.clone(),
                        parts: vec![part.clone()],
                    }),
                }
                let event = ids.artifact(id, name, vec![part], append, last);
                (vec![Ok(event)], false)
            }
            Event::Close { id } => match pump.open.iter().position(|o| o.id == id) {
                Some(i) => {
                    let open = pump.open.swap_remove(i);
                    (vec![Ok(ids.whole(open))], false)
                }
                None => (Vec::new(), false),
            },
            Event::Ask {
                auth,
                question,
                answer,
            } => {
                *lock(&self.session.waiting) = Some(answer);
                self.withdraw_unanswered();
                let state = if auth {
                    TaskState::AuthRequired
                } else {
                    TaskState::InputRequired
                };
                (vec![Ok(ids.status(state, Some(question)))], true)
            }
            Event::End {
                outcome,
                artifact_id,
            } => {
                self.sessions.lock().remove(&ids.task);
                let mut out: Out = pump.open.drain(..).map(|o| Ok(ids.whole(o))).collect();
                match outcome {
                    Ok(reply) => {
                        if let Some(part) = reply_part(reply) {
                            let name = artifact_id.clone();
                            out.push(Ok(ids.artifact(artifact_id, name, vec![part], false, true)));
                        }
                        out.push(Ok(ids.status(TaskState::Completed, None)));
                    }
                    Err(e @ SkillError::Input(_)) => {
                        let err = input_error(&e);
                        fail_in_store(self.store.as_deref(), ids, &err.message).await;
                        out.push(Err(err));
                    }
                    Err(e) => out.push(Ok(ids.status(TaskState::Failed, Some(e.to_string())))),
                }
                (out, true)
            }
        }
    }
}

/// Locks a mutex whose data stays consistent even if a holder panicked.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// An error answer: the task (already created by the server) is marked failed, then the error.
fn refuse(
    store: Option<Arc<dyn TaskStore>>,
    ids: Ids,
    err: A2AError,
) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
    Box::pin(stream::once(async move {
        fail_in_store(store.as_deref(), &ids, &err.message).await;
        Err(err)
    }))
}

/// Marks the task failed in the store, with `why` as its status message, when it is still
/// there and not finished.
/// A duration as a message says it: `24 h`, `90 s`, `250 ms`.
fn span(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        0 => format!("{} ms", d.as_millis()),
        s if s % 3600 == 0 => format!("{} h", s / 3600),
        s if s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

async fn fail_in_store(store: Option<&dyn TaskStore>, ids: &Ids, why: &str) {
    let Some(store) = store else { return };
    if let Ok(Some(mut task)) = store.get(&ids.task).await {
        if !task.status.state.is_terminal() {
            task.status = TaskStatus {
                state: TaskState::Failed,
                message: Some(ids.agent_message(why.to_owned())),
                timestamp: Some(chrono::Utc::now()),
            };
            // Nothing more to do if the store refuses: the error answer still goes out.
            let _ = store.update(task).await;
        }
    }
}

/// The task and context of one execution.
#[derive(Clone)]
struct Ids {
    task: String,
    context: String,
}

impl Ids {
    fn agent_message(&self, text: String) -> Message {
        let mut message = Message::new(Role::Agent, vec![Part::text(text)]);
        message.task_id = Some(self.task.clone());
        message.context_id = Some(self.context.clone());
        message
    }

    fn status(&self, state: TaskState, text: Option<String>) -> StreamResponse {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: self.task.clone(),
            context_id: self.context.clone(),
            status: TaskStatus {
                state,
                message: text.map(|t| self.agent_message(t)),
                timestamp: None,
            },
            metadata: None,
        })
    }

    fn artifact(
        &self,
        id: String,
        name: String,
        parts: Vec<Part>,
        append: bool,
        last: bool,
    ) -> StreamResponse {
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: self.task.clone(),
            context_id: self.context.clone(),
            artifact: Artifact {
                artifact_id: id,
                name: Some(name),
                description: None,
                parts,
                metadata: None,
                extensions: None,
            },
            append: append.then_some(true),
            last_chunk: Some(last),
            metadata: None,
        })
    }

    /// The closing update of an artifact sent in chunks: all of it, complete.
    fn whole(&self, open: Open) -> StreamResponse {
        self.artifact(open.id, open.name, open.parts, false, true)
    }
}

/// The part that carries a skill's answer (`None` for [`Reply::Streamed`]: already sent).
pub(crate) fn reply_part(reply: Reply) -> Option<Part> {
    let part = match reply {
        Reply::Text(text) => Part::text(text),
        Reply::Data { schema, value } => {
            let mode = SchemaMode::new(schema)
                .map(|m| m.to_string())
                .unwrap_or_else(|| "application/json".to_owned());
            Part {
                content: PartContent::Data(value),
                filename: None,
                metadata: Some(HashMap::from([(
                    "mimeType".to_owned(),
                    Value::String(mode.clone()),
                )])),
                media_type: Some(mode),
            }
        }
        Reply::File(file) => file_part(file),
        Reply::Streamed => return None,
    };
    Some(part)
}

/// A file as a file part.
fn file_part(file: File) -> Part {
    let File {
        name,
        media_type,
        content,
        ..
    } = file;
    Part {
        content: match content {
            FileContent::Bytes(bytes) => PartContent::Raw(bytes),
            FileContent::Url(url) => PartContent::Url(url),
        },
        filename: name,
        media_type,
        metadata: None,
    }
}
