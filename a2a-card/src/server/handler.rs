//! The structured input flow in front of the official request handler, before any task exists.

use std::cell::Cell;
use std::fmt;
use std::sync::Arc;

use a2a::*;
use a2a_server::task_store::TaskVersion;
use a2a_server::{
    DefaultRequestHandler, PushConfigStore, RequestHandler, ServiceParams, TaskStore,
};
use async_trait::async_trait;
use futures::stream::{BoxStream, StreamExt as _};

use crate::dispatch::{Decision, Dispatcher};

use super::auth::{self, Guard};
use super::errors::dispatch_error;
use super::exact;
use super::executor::{DECISION_KEY, Decisions};
use super::message::{dispatch_json, files_of, has_files, message_json, restore_data, split_files};
use super::push::Webhooks;
use super::store::Settle;

/// A [`RequestHandler`] that runs the [dispatcher](Dispatcher) on every incoming message before
/// handing it to the inner handler (by default the official [`DefaultRequestHandler`]).
///
/// The official handler creates the task (`submitted`) before its executor sees the message, so
/// a message refused there would leave a task behind. Here a refused message is answered at
/// once with the dispatcher's error (see [`dispatch_error`](super::dispatch_error)) and no
/// task is created: so is a file over the inline size limit, or of a media type the skill does
/// not take. A message that names an existing task (in any state) and carries a structured
/// part gets the extension's "task already running" answer (`-32602`), not the official
/// handler's "terminal state" one; one without (an answer to the task's question) goes on.
///
/// With push notifications on ([`Server::webhooks`](super::Server::webhooks)), a webhook URL
/// (in `CreateTaskPushNotificationConfig`, or in a message's configuration) that the policy
/// refuses is answered `-32602` before anything is stored. Every other call goes to the inner
/// handler as is.
///
/// ```
/// use std::sync::Arc;
/// use a2a_card::dispatch::Dispatcher;
/// use a2a_card::server::{SkillExecutor, StructuredInput};
/// use a2a_card::server::a2a_server::{DefaultRequestHandler, InMemoryTaskStore};
/// use a2a_card::{agent, skill};
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
/// let inner = DefaultRequestHandler::new(SkillExecutor::new(Echo)?, InMemoryTaskStore::new());
/// let handler = StructuredInput::new(inner, Arc::new(Dispatcher::for_agent::<Echo>()?));
/// # drop(handler);
/// # Ok::<(), a2a_card::dispatch::SchemaCompileError>(())
/// ```
pub struct StructuredInput<H = DefaultRequestHandler> {
    inner: Arc<H>,
    dispatcher: Arc<Dispatcher>,
    max_inline_file: usize,
    push: Option<(Arc<dyn PushConfigStore>, Webhooks)>,
    /// The task store and its change feed, where the store has one (memory and SQL): a
    /// subscription to a task that no execution here streams (one waiting for input, or one
    /// another replica runs) follows it through the feed.
    feed: Option<(Arc<dyn TaskStore>, tokio::sync::broadcast::Sender<String>)>,
    guard: Option<Arc<Guard>>,
    decisions: Option<Arc<Decisions>>,
    /// The store's new tasks to wait for before a caller hears of them.
    settle: Option<Arc<dyn Settle>>,
    /// Whether answers carry data parts encoded for the HTTP layer (see [`exact`]).
    exact: bool,
}

impl<H> fmt::Debug for StructuredInput<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StructuredInput")
            .field("dispatcher", &self.dispatcher)
            .finish_non_exhaustive()
    }
}

impl<H: RequestHandler> StructuredInput<H> {
    /// Runs `dispatcher` in front of `inner`.
    pub fn new(inner: H, dispatcher: Arc<Dispatcher>) -> Self {
        StructuredInput {
            inner: Arc::new(inner),
            dispatcher,
            max_inline_file: super::DEFAULT_MAX_INLINE_FILE,
            push: None,
            feed: None,
            guard: None,
            decisions: None,
            settle: None,
            exact: false,
        }
    }

    /// Waits for the store to write a new task before a caller hears of it (see
    /// [`Settle`]).
    pub(crate) fn settle(mut self, settle: Option<Arc<dyn Settle>>) -> Self {
        self.settle = settle;
        self
    }

    /// Checks each skill's own security requirement (and that an extended-only skill has an
    /// authenticated caller) once dispatch picks the skill, and the extended card's caller.
    pub(crate) fn guard(mut self, guard: Option<Arc<Guard>>) -> Self {
        self.guard = guard;
        self
    }

    /// Follows a task that no execution here streams (one waiting for input, or one another
    /// replica runs) through the store's change feed, when asked to subscribe to it.
    pub(crate) fn follow(
        mut self,
        store: Arc<dyn TaskStore>,
        changes: tokio::sync::broadcast::Sender<String>,
    ) -> Self {
        self.feed = Some((store, changes));
        self
    }

    /// The largest file a message may carry inline, in bytes.
    pub(crate) fn max_inline_file(mut self, bytes: usize) -> Self {
        self.max_inline_file = bytes;
        self
    }

    /// Checks webhook URLs against `policy`, and lists configs from `store` (which the inner
    /// handler holds behind [`ConfigsOnly`](super::push::ConfigsOnly)).
    pub(crate) fn push(mut self, store: Arc<dyn PushConfigStore>, policy: Webhooks) -> Self {
        self.push = Some((store, policy));
        self
    }

    async fn check_webhook(&self, url: &str) -> Result<(), A2AError> {
        match &self.push {
            Some((_, policy)) => policy.check(url).await,
            None => Ok(()),
        }
    }

    /// Hands the dispatcher's decisions to the executor, which then dispatches nothing again.
    pub(crate) fn decisions(mut self, decisions: Arc<Decisions>) -> Self {
        self.decisions = Some(decisions);
        self
    }

    /// Answers with every data part encoded for the HTTP layer of [`Server`](super::Server),
    /// which splices the exact JSON back (see [`exact`]).
    pub(crate) fn exact(mut self, yes: bool) -> Self {
        self.exact = yes;
        self
    }

    /// Whether answers are encoded: for the HTTP layer, unless it writes this answer itself
    /// with the `a2a` types' serde, which keeps data exact ([`exact::plain`]).
    fn encodes(&self) -> bool {
        self.exact && !exact::is_plain()
    }

    fn out_task(&self, mut task: Task) -> Task {
        if self.encodes() {
            exact::encode_task(&mut task);
        }
        task
    }

    fn out_events(
        &self,
        events: BoxStream<'static, Result<StreamResponse, A2AError>>,
    ) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        use futures::StreamExt;
        if !self.encodes() {
            return events;
        }
        Box::pin(events.map(|event| {
            event.map(|mut event| {
                exact::encode_event(&mut event);
                event
            })
        }))
    }

    /// Runs the structured input flow on the request's message: `Err` with the answer when it
    /// is refused; otherwise the request, with the key of the decision left for the executor.
    ///
    /// The flow reads the request's own message JSON when the HTTP layer handed it over (see
    /// [`exact`]), and puts its data back, as sent, into the message the inner handler runs
    /// and stores; otherwise it reads the official message.
    async fn check(
        &self,
        params: &ServiceParams,
        mut req: SendMessageRequest,
    ) -> Result<(SendMessageRequest, Option<String>), A2AError> {
        let raw = exact::take_inbound();
        if let Some(raw) = &raw {
            restore_data(&mut req.message, raw)?;
        }
        let decision = self.decide(params, &req, raw).await?;
        let Some(decision) = decision else {
            return Ok((req, None));
        };
        let Some(decisions) = &self.decisions else {
            return Ok((req, None));
        };
        let key = decisions.keep(decision);
        req.metadata.get_or_insert_with(Default::default).insert(
            DECISION_KEY.to_owned(),
            serde_json::Value::String(key.clone()),
        );
        Ok((req, Some(key)))
    }

    /// The dispatcher's decision on the request's message (`None` when the message names a
    /// task that does not exist: the inner handler answers that), or the refusal.
    async fn decide(
        &self,
        params: &ServiceParams,
        req: &SendMessageRequest,
        raw: Option<serde_json::Value>,
    ) -> Result<Option<Decision>, A2AError> {
        let existing = match req.message.task_id.as_deref() {
            None => None,
            Some(id) => {
                let lookup = GetTaskRequest {
                    id: id.to_owned(),
                    history_length: Some(0),
                    tenant: req.tenant.clone(),
                };
                match self.inner.get_task(params, lookup).await {
                    Ok(_) => Some(id),
                    // No such task: the inner handler says so, in its own words.
                    Err(e) if e.code == error_code::TASK_NOT_FOUND => return Ok(None),
                    Err(e) => return Err(e),
                }
            }
        };
        if let Some(config) = req
            .configuration
            .as_ref()
            .and_then(|c| c.task_push_notification_config.as_ref())
        {
            self.check_webhook(&config.url).await?;
        }
        let (message, files) = if let Some(raw) = raw {
            let files = files_of(&req.message, self.max_inline_file)?;
            (dispatch_json(raw, &req.message), files)
        } else if has_files(&req.message) {
            // File parts are taken out of a copy only when there are any.
            let mut message = req.message.clone();
            let files = split_files(&mut message, self.max_inline_file)?;
            (message_json(&message)?, files)
        } else {
            (message_json(&req.message)?, Vec::new())
        };
        let decision = self
            .dispatcher
            .dispatch_with_files(message, files, existing);
        match &decision {
            Decision::Reject(e) => return Err(dispatch_error(e)),
            // The skill is known now: its own requirement, before it runs.
            Decision::Run { skill, .. } => {
                if let Some(guard) = &self.guard {
                    guard
                        .authorize_skill(*skill, auth::principal_of(params).as_ref())
                        .map_err(auth::report)?;
                }
            }
            Decision::FollowUp(_) => {}
        }
        Ok(Some(decision))
    }
}

/// The task an event is about.
fn event_task(event: &StreamResponse) -> Option<&str> {
    match event {
        StreamResponse::Task(task) => Some(&task.id),
        StreamResponse::Message(message) => message.task_id.as_deref(),
        StreamResponse::StatusUpdate(update) => Some(&update.task_id),
        StreamResponse::ArtifactUpdate(update) => Some(&update.task_id),
    }
}

#[async_trait]
impl<H: RequestHandler> RequestHandler for StructuredInput<H> {
    async fn send_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2AError> {
        let (req, key) = self.check(params, req).await?;
        let answer = if req.message.task_id.is_none() {
            NEW_TASK
                .scope(Cell::new(true), self.inner.send_message(params, req))
                .await
        } else {
            self.inner.send_message(params, req).await
        };
        if let (Err(_), Some(key), Some(decisions)) = (&answer, &key, &self.decisions) {
            decisions.forget(key);
        }
        if let (Ok(answer), Some(settle)) = (&answer, &self.settle) {
            let id = match answer {
                SendMessageResponse::Task(task) => Some(task.id.as_str()),
                SendMessageResponse::Message(message) => message.task_id.as_deref(),
            };
            if let Some(id) = id {
                settle.settle(id).await?;
            }
        }
        Ok(match answer? {
            SendMessageResponse::Task(task) => SendMessageResponse::Task(self.out_task(task)),
            SendMessageResponse::Message(mut message) => {
                if self.encodes() {
                    exact::encode_message(&mut message);
                }
                SendMessageResponse::Message(message)
            }
        })
    }

    async fn send_streaming_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let (req, key) = self.check(params, req).await?;
        let started = if req.message.task_id.is_none() {
            NEW_TASK
                .scope(
                    Cell::new(true),
                    self.inner.send_streaming_message(params, req),
                )
                .await
        } else {
            self.inner.send_streaming_message(params, req).await
        };
        let events = match started {
            Ok(events) => events,
            Err(e) => {
                if let (Some(key), Some(decisions)) = (&key, &self.decisions) {
                    decisions.forget(key);
                }
                return Err(e);
            }
        };
        let events = resync(Arc::clone(&self.inner), params.clone(), None, events);
        let events = match self.settle.clone() {
            None => events,
            // Each event waits for its task to be written (a no-op once it is).
            Some(settle) => events
                .then(move |event| {
                    let settle = Arc::clone(&settle);
                    async move {
                        match event.as_ref().ok().and_then(event_task) {
                            Some(id) => settle.settle(id).await.and(event),
                            None => event,
                        }
                    }
                })
                .boxed(),
        };
        Ok(self.out_events(events))
    }

    async fn get_task(
        &self,
        params: &ServiceParams,
        req: GetTaskRequest,
    ) -> Result<Task, A2AError> {
        Ok(self.out_task(self.inner.get_task(params, req).await?))
    }

    async fn list_tasks(
        &self,
        params: &ServiceParams,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2AError> {
        let mut list = self.inner.list_tasks(params, req).await?;
        if self.encodes() {
            list.tasks.iter_mut().for_each(exact::encode_task);
        }
        Ok(list)
    }

    async fn cancel_task(
        &self,
        params: &ServiceParams,
        req: CancelTaskRequest,
    ) -> Result<Task, A2AError> {
        Ok(self.out_task(self.inner.cancel_task(params, req).await?))
    }

    async fn subscribe_to_task(
        &self,
        params: &ServiceParams,
        req: SubscribeToTaskRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let id = req.id.clone();
        let events = match self.inner.subscribe_to_task(params, req).await {
            Ok(events) => events,
            // No execution here (the task waits for input, or another replica runs it): its
            // store's changes, until it ends.
            Err(e) if e.code == error_code::TASK_NOT_FOUND => {
                let Some((store, changes)) = &self.feed else {
                    return Err(e);
                };
                // Subscribed before reading, so that no change is missed in between.
                let feed = changes.subscribe();
                match store.get(&id).await? {
                    Some(task) if !task.status.state.is_terminal() => {
                        let events = super::replicas::follow(id, Arc::clone(store), feed);
                        return Ok(self.out_events(events));
                    }
                    _ => return Err(e),
                }
            }
            Err(e) => return Err(e),
        };
        Ok(self.out_events(resync(
            Arc::clone(&self.inner),
            params.clone(),
            Some(id),
            events,
        )))
    }

    async fn create_push_config(
        &self,
        params: &ServiceParams,
        req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        self.check_webhook(&req.url).await?;
        self.inner.create_push_config(params, req).await
    }

    async fn get_push_config(
        &self,
        params: &ServiceParams,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        self.inner.get_push_config(params, req).await
    }

    async fn list_push_configs(
        &self,
        params: &ServiceParams,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2AError> {
        let Some((store, _)) = &self.push else {
            return self.inner.list_push_configs(params, req).await;
        };
        // The inner handler's view of the store lists nothing (see `ConfigsOnly`): page here.
        let task = GetTaskRequest {
            id: req.task_id.clone(),
            history_length: Some(0),
            tenant: req.tenant.clone(),
        };
        self.inner.get_task(params, task).await?;
        let mut configs = store.list(&req.task_id).await?;
        configs.sort_by(|a, b| a.id.cmp(&b.id));
        let size = a2a_server::pagination::resolve_page_size(req.page_size);
        let start = match &req.page_token {
            Some(token) => token
                .parse::<usize>()
                .map_err(|_| A2AError::invalid_params("invalid page token"))?,
            None => 0,
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
        self.inner.delete_push_config(params, req).await
    }

    async fn get_extended_agent_card(
        &self,
        params: &ServiceParams,
        req: GetExtendedAgentCardRequest,
    ) -> Result<a2a::AgentCard, A2AError> {
        // Only for authenticated callers, whatever the card requires of other calls.
        if let Some(guard) = &self.guard {
            if !auth::is_authenticated(params) {
                return Err(auth::report(guard.unauthenticated_any()));
            }
        }
        self.inner.get_extended_agent_card(params, req).await
    }
}

/// How many times one stream is picked up again after falling behind.
const MAX_RESYNCS: u32 = 16;

/// Follows a task's event stream; when it fails with an internal error while the task runs
/// (the official handler's subscriber fell behind the 32 events its channel holds, under a
/// burst of events), picks the task up again with `SubscribeToTask`: the caller gets the task
/// as it is now (artifacts assembled so far), then the events that follow, instead of losing
/// the stream. When the task has ended meanwhile, the caller gets the final task.
fn resync<H: RequestHandler>(
    inner: Arc<H>,
    params: ServiceParams,
    task: Option<String>,
    events: BoxStream<'static, Result<StreamResponse, A2AError>>,
) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
    use futures::StreamExt;
    struct Follow<H> {
        inner: Arc<H>,
        params: ServiceParams,
        task: Option<String>,
        events: BoxStream<'static, Result<StreamResponse, A2AError>>,
        resyncs: u32,
        done: bool,
    }
    let state = Follow {
        inner,
        params,
        task,
        events,
        resyncs: 0,
        done: false,
    };
    Box::pin(futures::stream::unfold(state, |mut st| async move {
        if st.done {
            return None;
        }
        loop {
            let item = st.events.next().await?;
            match &item {
                Ok(event) => {
                    let (id, terminal) = match event {
                        StreamResponse::Task(t) => (Some(&t.id), t.status.state.is_terminal()),
                        StreamResponse::StatusUpdate(u) => {
                            (Some(&u.task_id), u.status.state.is_terminal())
                        }
                        StreamResponse::ArtifactUpdate(u) => (Some(&u.task_id), false),
                        StreamResponse::Message(_) => (None, false),
                    };
                    if let (None, Some(id)) = (&st.task, id) {
                        st.task = Some(id.clone());
                    }
                    st.done = terminal;
                }
                Err(e) if e.code == error_code::INTERNAL_ERROR && st.resyncs < MAX_RESYNCS => {
                    if let Some(id) = st.task.clone() {
                        st.resyncs += 1;
                        let again = SubscribeToTaskRequest {
                            id: id.clone(),
                            tenant: None,
                        };
                        match st.inner.subscribe_to_task(&st.params, again).await {
                            Ok(events) => {
                                st.events = events;
                                continue;
                            }
                            Err(_) => {
                                // Ended meanwhile: the final task says how.
                                let get = GetTaskRequest {
                                    id,
                                    history_length: None,
                                    tenant: None,
                                };
                                if let Ok(task) = st.inner.get_task(&st.params, get).await {
                                    st.done = true;
                                    return Some((Ok(StreamResponse::Task(task)), st));
                                }
                            }
                        }
                    }
                    st.done = true;
                }
                Err(_) => st.done = true,
            }
            return Some((item, st));
        }
    }))
}

/// One task store shared by the official handler and the executor (which marks a task failed
/// when it answers with an error).
pub(crate) struct SharedStore(pub(crate) Arc<dyn TaskStore>);

tokio::task_local! {
    /// Set while the official handler starts a task for a message that names none: its first
    /// lookup is of the id it has just made up, which no store can hold yet.
    static NEW_TASK: Cell<bool>;
}

/// Whether `id` is a UUIDv7 made in the last ten seconds (as the official handler makes
/// task ids).
fn just_made(id: &str) -> bool {
    let b = id.as_bytes();
    if b.len() != 36 || b[8] != b'-' || b[13] != b'-' || b[14] != b'7' {
        return false;
    }
    // The first 48 bits are the milliseconds since the epoch (the dashes are char boundaries).
    let (Ok(high), Ok(low)) = (
        i64::from_str_radix(&id[..8], 16),
        i64::from_str_radix(&id[9..13], 16),
    ) else {
        return false;
    };
    let made = (high << 16) | low;
    (chrono::Utc::now().timestamp_millis() - made).abs() < 10_000
}

#[async_trait]
impl TaskStore for SharedStore {
    async fn create(&self, task: Task) -> Result<TaskVersion, A2AError> {
        self.0.create(task).await
    }

    async fn update(&self, task: Task) -> Result<TaskVersion, A2AError> {
        self.0.update(task).await
    }

    async fn get(&self, task_id: &str) -> Result<Option<Task>, A2AError> {
        // The official handler looks up the id it made for a new task before it creates it:
        // asking the store would only cost a round trip.
        if NEW_TASK
            .try_with(|first| first.replace(false))
            .unwrap_or(false)
            && just_made(task_id)
        {
            return Ok(None);
        }
        self.0.get(task_id).await
    }

    async fn list(&self, req: &ListTasksRequest) -> Result<ListTasksResponse, A2AError> {
        self.0.list(req).await
    }

    async fn begin_cancel(&self, task_id: &str) -> Result<Task, A2AError> {
        self.0.begin_cancel(task_id).await
    }
}
