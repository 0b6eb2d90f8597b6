//! Each operation of a [call](crate::server::call) answered on the [`Lifecycle`]: the one API
//! the bindings call ([`Calls`]).

use std::sync::Arc;

use a2a::*;
use a2a_server::PushConfigStore;
use async_trait::async_trait;
use futures::StreamExt;

use super::log::Until;
use super::request_checks::{check_history_length, cut_history, cut_shared_history};
use super::updates::{status, status_of};
use super::{Followed, Lifecycle, NumberedStream, Scope, new_task_id};
use crate::agent::SkillDecl;
use crate::dispatch::{SKILL_EXTENSION_URI, named_skill};
use crate::server::call::{
    Answer, Answered, Binding, Context, Failure, Op, field_error, tenant_of,
};
use crate::server::idempotency::Key;
use crate::server::limits::Permits;
use crate::server::store::{KeyClaim, Place, prefix, reaches};

/// What a send's idempotency key comes to.
enum Keyed {
    /// A new task: under this id (the key's), or a new one (no key).
    Fresh(Option<String>),
    /// The task an earlier send with the same key made.
    Retry(String),
}

/// What a call comes to: its operation's own answer, with the extensions it used, or why
/// not.
pub(crate) type Called<T> = Result<Answered<T>, Failure>;

/// What the bindings call: each operation with its typed parameters, answered with its own
/// type of answer, in its context. The JSON bindings, which read the operation from the
/// request's method, call [`call`](Self::call) with an [`Op`].
#[async_trait]
pub(crate) trait Calls: Send + Sync + 'static {
    /// `SendMessage`.
    async fn send_message(&self, ctx: &Context, req: SendMessageRequest) -> Called<Arc<Task>>;
    /// `SendStreamingMessage`.
    async fn send_streaming_message(
        &self,
        ctx: &Context,
        req: SendMessageRequest,
    ) -> Called<NumberedStream>;
    /// One turn of a message followed as a stream whatever the card says of streaming, a new
    /// task running `skill` when the caller names one (an MCP tool call); or, for a new call
    /// of a skill that can only return, its answer at once, without a task (see
    /// [`at_once`](super::at_once)).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    async fn followed_turn(
        &self,
        ctx: &Context,
        req: SendMessageRequest,
        skill: Option<usize>,
    ) -> Called<Followed>;
    /// `GetTask`.
    async fn get_task(&self, ctx: &Context, req: GetTaskRequest) -> Called<Task>;
    /// `ListTasks`.
    async fn list_tasks(&self, ctx: &Context, req: ListTasksRequest) -> Called<ListTasksResponse>;
    /// `CancelTask`.
    async fn cancel_task(&self, ctx: &Context, req: CancelTaskRequest) -> Called<Task>;
    /// `SubscribeToTask`.
    async fn subscribe_to_task(
        &self,
        ctx: &Context,
        req: SubscribeToTaskRequest,
    ) -> Called<NumberedStream>;
    /// `CreateTaskPushNotificationConfig`.
    async fn create_push_config(
        &self,
        ctx: &Context,
        req: TaskPushNotificationConfig,
    ) -> Called<TaskPushNotificationConfig>;
    /// `GetTaskPushNotificationConfig`.
    async fn get_push_config(
        &self,
        ctx: &Context,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Called<TaskPushNotificationConfig>;
    /// `ListTaskPushNotificationConfigs`.
    async fn list_push_configs(
        &self,
        ctx: &Context,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Called<ListTaskPushNotificationConfigsResponse>;
    /// `DeleteTaskPushNotificationConfig`.
    async fn delete_push_config(
        &self,
        ctx: &Context,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Called<()>;
    /// `GetExtendedAgentCard`.
    async fn get_extended_agent_card(&self, ctx: &Context) -> Called<AgentCard>;
}

impl dyn Calls {
    /// Answers `op`, an operation read from a request by its method's name, with the answer
    /// as the JSON bindings write it.
    pub(crate) async fn call(&self, ctx: &Context, op: Op) -> Called<Answer> {
        Ok(match op {
            Op::Send(req) => self.send_message(ctx, req).await?.map(Answer::Sent),
            Op::Stream(req) => self
                .send_streaming_message(ctx, req)
                .await?
                .map(Answer::Stream),
            Op::Get(req) => self
                .get_task(ctx, req)
                .await?
                .map(|task| Answer::Task(Box::new(task))),
            Op::List(req) => self.list_tasks(ctx, req).await?.map(Answer::Tasks),
            Op::Cancel(req) => self
                .cancel_task(ctx, req)
                .await?
                .map(|task| Answer::Task(Box::new(task))),
            Op::Subscribe(req) => self.subscribe_to_task(ctx, req).await?.map(Answer::Stream),
            Op::CreateConfig(req) => self.create_push_config(ctx, req).await?.map(Answer::Config),
            Op::GetConfig(req) => self.get_push_config(ctx, req).await?.map(Answer::Config),
            Op::ListConfigs(req) => self.list_push_configs(ctx, req).await?.map(Answer::Configs),
            Op::DeleteConfig(req) => self
                .delete_push_config(ctx, req)
                .await?
                .map(|()| Answer::Deleted),
            Op::ExtendedCard => self
                .get_extended_agent_card(ctx)
                .await?
                .map(|card| Answer::Card(Box::new(card))),
        })
    }
}

/// What a call's admission reads of its operation.
#[derive(Default)]
struct Asked<'a> {
    /// The tenant the operation's own `tenant` field names.
    tenant: Option<&'a str>,
    /// The existing task the operation is about.
    task: Option<&'a str>,
    /// The message of a send, which may name the skill of the task it makes.
    message: Option<&'a Message>,
    /// `GetExtendedAgentCard`, which answers only authenticated callers.
    extended_card: bool,
}

impl<'a> Asked<'a> {
    /// A call about task `task`, in the tenant `tenant` names.
    fn task(task: &'a str, tenant: Option<&'a str>) -> Self {
        Asked {
            tenant,
            task: Some(task),
            ..Asked::default()
        }
    }

    /// A send of `req`'s message.
    fn send(req: &'a SendMessageRequest) -> Self {
        Asked {
            tenant: req.tenant.as_deref(),
            task: req.message.task_id.as_deref(),
            message: Some(&req.message),
            extended_card: false,
        }
    }
}

impl Lifecycle {
    /// Admits a call of `asked` in `ctx`, or says why not: the card's security, the
    /// extensions asked for, the tenant, the limits, the caller's reach; what the call may do
    /// (its [`Scope`]).
    async fn admit(&self, ctx: &Context, asked: Asked<'_>) -> Result<Scope, Failure> {
        // The extended card answers only authenticated callers, whatever the card requires of
        // other calls; every other call meets the card's requirement.
        if let (true, Some(guard)) = (asked.extended_card, &self.guard)
            && !ctx.is_authenticated()
        {
            return Err(guard.unauthenticated_any().into());
        }
        self.authorize(ctx)?;
        // The extensions asked for, before anything else is done (MCP's callers and callers in
        // the process speak no A2A extension: none is required of them).
        let extensions = match ctx.binding {
            Binding::Mcp | Binding::InProcess => self
                .extensions
                .activate(&ctx.extensions)
                .unwrap_or_default(),
            _ => self.extensions.activate(&ctx.extensions)?,
        };
        // The tenant (and, in a host, the agent): a task of another one is not found,
        // whatever is asked of it.
        let tenant = tenant_of(ctx, asked.tenant)?;
        if let Some(guard) = &self.guard {
            guard.authorize_tenant(tenant, ctx.principal.as_deref())?;
        }
        // Over a limit, nothing is done.
        self.limiter
            .request(ctx.principal.as_deref(), ctx.peer, tenant)
            .await?;
        // Whose tasks the call makes and reaches: decided from the ids alone, so that a task
        // beyond the caller's reach is not found, whatever is asked of it, before anything is
        // read of it (A2A 1.0.1 section 13.1).
        let tenant_prefix = prefix(self.namespace.as_deref(), tenant);
        let place = match &self.guard {
            Some(guard) => guard.place(tenant_prefix, ctx.principal.as_deref())?,
            None => Place::new(tenant_prefix, None, false),
        };
        if let Some(id) = asked.task
            && !place.reaches(id)
        {
            return Err(A2AError::task_not_found(id).into());
        }
        // The skill a new task's message names (the skill extension), one of the agent's.
        let skill = match asked.message {
            Some(message) => named(self.agent.skills(), message)?,
            None => None,
        };
        Ok(Scope {
            place,
            tenant: tenant.map(str::to_owned),
            extensions,
            skill,
        })
    }

    /// A push config store, and task `id` as the caller may read it (a task that does not
    /// exist is said so, whatever the config).
    async fn configs_of(&self, id: &str) -> Result<&Arc<dyn PushConfigStore>, A2AError> {
        let configs = self.configs()?;
        self.find(id).await?;
        Ok(configs)
    }
}

#[async_trait]
impl Calls for Lifecycle {
    async fn send_message(&self, ctx: &Context, req: SendMessageRequest) -> Called<Arc<Task>> {
        let scope = self.admit(ctx, Asked::send(&req)).await?;
        let task = self.send(ctx, req, &scope).await?;
        Ok(scope.answered(task))
    }

    async fn send_streaming_message(
        &self,
        ctx: &Context,
        req: SendMessageRequest,
    ) -> Called<NumberedStream> {
        let scope = self.admit(ctx, Asked::send(&req)).await?;
        if !self.streaming {
            return Err(not_streaming().into());
        }
        let open = self.limiter.stream(ctx.principal.as_deref(), ctx.peer)?;
        let events = self.turn(ctx, req, None, &scope, true).await?;
        Ok(scope.answered(held_open(events, open)))
    }

    async fn followed_turn(
        &self,
        ctx: &Context,
        req: SendMessageRequest,
        skill: Option<usize>,
    ) -> Called<Followed> {
        // The skill is the caller's to name here, not the message's.
        let asked = Asked {
            message: None,
            ..Asked::send(&req)
        };
        let scope = self.admit(ctx, asked).await?;
        if let Some(skill) = skill
            && self.answers_at_once(ctx, &req, skill)?
        {
            let answer = self.answer_at_once(ctx, req.message, &scope, skill).await?;
            return Ok(scope.answered(Followed::Answered(answer)));
        }
        // Followed here, by no reader that could resume it.
        let events = self.turn(ctx, req, skill, &scope, false).await?;
        Ok(scope.answered(Followed::Turn(events)))
    }

    async fn get_task(&self, ctx: &Context, req: GetTaskRequest) -> Called<Task> {
        let scope = self
            .admit(ctx, Asked::task(&req.id, req.tenant.as_deref()))
            .await?;
        Ok(scope.answered(self.get(req).await?))
    }

    async fn list_tasks(
        &self,
        ctx: &Context,
        mut req: ListTasksRequest,
    ) -> Called<ListTasksResponse> {
        let asked = Asked {
            tenant: req.tenant.as_deref(),
            ..Asked::default()
        };
        let scope = self.admit(ctx, asked).await?;
        // The store lists the tasks of the caller's reach.
        req.tenant = scope.place.listed();
        Ok(scope.answered(self.list(req).await?))
    }

    async fn cancel_task(&self, ctx: &Context, req: CancelTaskRequest) -> Called<Task> {
        let scope = self
            .admit(ctx, Asked::task(&req.id, req.tenant.as_deref()))
            .await?;
        Ok(scope.answered(self.cancel(req.id).await?))
    }

    async fn subscribe_to_task(
        &self,
        ctx: &Context,
        req: SubscribeToTaskRequest,
    ) -> Called<NumberedStream> {
        let scope = self
            .admit(ctx, Asked::task(&req.id, req.tenant.as_deref()))
            .await?;
        if !self.streaming {
            return Err(not_streaming().into());
        }
        let open = self.limiter.stream(ctx.principal.as_deref(), ctx.peer)?;
        let events = self.subscription(&req.id, ctx.after).await?;
        Ok(scope.answered(held_open(events, open)))
    }

    async fn create_push_config(
        &self,
        ctx: &Context,
        req: TaskPushNotificationConfig,
    ) -> Called<TaskPushNotificationConfig> {
        let scope = self
            .admit(ctx, Asked::task(&req.task_id, req.tenant.as_deref()))
            .await?;
        Ok(scope.answered(self.create_config(req).await?))
    }

    async fn get_push_config(
        &self,
        ctx: &Context,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Called<TaskPushNotificationConfig> {
        let scope = self
            .admit(ctx, Asked::task(&req.task_id, req.tenant.as_deref()))
            .await?;
        let configs = self.configs_of(&req.task_id).await?;
        let config = configs.get(&req.task_id, &req.id).await?;
        Ok(scope.answered(redacted(config)))
    }

    async fn list_push_configs(
        &self,
        ctx: &Context,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Called<ListTaskPushNotificationConfigsResponse> {
        let scope = self
            .admit(ctx, Asked::task(&req.task_id, req.tenant.as_deref()))
            .await?;
        let mut list = self.list_configs(req).await?;
        list.configs = list.configs.into_iter().map(redacted).collect();
        Ok(scope.answered(list))
    }

    async fn delete_push_config(
        &self,
        ctx: &Context,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Called<()> {
        let scope = self
            .admit(ctx, Asked::task(&req.task_id, req.tenant.as_deref()))
            .await?;
        let configs = self.configs_of(&req.task_id).await?;
        configs.delete(&req.task_id, &req.id).await?;
        self.recorder.webhooks_changed(&req.task_id, None);
        Ok(scope.answered(()))
    }

    async fn get_extended_agent_card(&self, ctx: &Context) -> Called<AgentCard> {
        let asked = Asked {
            extended_card: true,
            ..Asked::default()
        };
        let scope = self.admit(ctx, asked).await?;
        let card = self
            .extended
            .clone()
            .ok_or_else(A2AError::extended_card_not_configured)?;
        Ok(scope.answered(card))
    }
}

/// The skill `message` names in its metadata under [`SKILL_EXTENSION_URI`], as an index into
/// the agent's skills: `-32602` naming the field when the entry is not `{"skill": ID}`, when
/// the agent has no such skill (listing those it has), or when the message answers a task
/// (whose skill is already chosen).
fn named(skills: &[SkillDecl], message: &Message) -> Result<Option<usize>, A2AError> {
    // The field an error names, made only for an error.
    let field = || format!("message.metadata.{SKILL_EXTENSION_URI}");
    let id = match named_skill(message.metadata.as_ref()) {
        Ok(Some(id)) => id,
        Ok(None) => return Ok(None),
        Err(why) => return Err(field_error(&field(), why)),
    };
    if let Some(task) = &message.task_id {
        return Err(field_error(
            &field(),
            format!(
                "names skill `{id}` on a message that answers task `{task}`; a skill is named only on the message that starts a task"
            ),
        ));
    }
    match skills.iter().position(|s| s.id == id) {
        Some(index) => Ok(Some(index)),
        None => Err(field_error(
            &field(),
            format!(
                "names skill `{}`, which this agent does not have; its skills are {}",
                id.chars().take(64).collect::<String>(),
                skills
                    .iter()
                    .map(|s| format!("`{}`", s.id))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// A push config as the read methods answer it: without the secrets the webhook is called
/// with (its `token` and its authentication's `credentials`), which only the agent's
/// deliveries carry.
fn redacted(mut config: TaskPushNotificationConfig) -> TaskPushNotificationConfig {
    config.token = None;
    if let Some(auth) = config.authentication.as_mut() {
        auth.credentials = None;
    }
    config
}

/// `events`, counted as an open stream (by `open`) until it is dropped.
fn held_open(events: NumberedStream, open: Permits) -> NumberedStream {
    Box::pin(events.map(move |event| {
        let _counted = &open;
        event
    }))
}

fn not_streaming() -> A2AError {
    A2AError::unsupported_operation("the agent card does not declare streaming")
}

impl Lifecycle {
    /// `SendMessage`: the task when its turn ends or asks (or at once, when the caller says
    /// `returnImmediately`).
    async fn send(
        &self,
        ctx: &Context,
        req: SendMessageRequest,
        scope: &Scope,
    ) -> Result<Arc<Task>, Failure> {
        let config = req.configuration.as_ref();
        let history_length = config.and_then(|c| c.history_length);
        check_history_length("configuration.historyLength", history_length)?;
        let immediately = config.and_then(|c| c.return_immediately) == Some(true);
        let id = match self.keyed(ctx, &req.message, scope).await? {
            Keyed::Fresh(id) => id,
            Keyed::Retry(id) => {
                let mut task = if immediately {
                    self.find(&id).await?
                } else {
                    self.retried(&id).await?
                };
                cut_history(&mut task, history_length);
                return Ok(Arc::new(task));
            }
        };
        let start = super::Start {
            skill: None,
            id,
            snapshot: immediately,
            resumable: false,
        };
        let mut turn = self.begin(ctx, req, scope, start).await?;
        let mut task = if let (true, Some(task)) = (immediately, turn.task) {
            Arc::new(task)
        } else {
            // A turn not begun yet ends beyond the state it began from (which still asks).
            let from = if turn.begun { turn.seq } else { turn.seq + 1 };
            turn.tracked.wait(from, Until::Interrupted).await;
            if let Some(refusal) = turn.outcome.refused() {
                return Err(refusal.into());
            }
            // The store refused to keep what the turn came to: the caller is not told of it.
            if let Some(broken) = turn.tracked.broken() {
                return Err(broken.into());
            }
            // The task as it ended (or asks), shared with its log here rather than copied.
            turn.tracked.shared().0
        };
        self.settle(&turn.tracked.id).await?;
        cut_shared_history(&mut task, history_length);
        Ok(task)
    }

    /// One turn of a message, followed as a stream (the task, then its events until it ends or
    /// asks). `skill`: the skill a new task runs, named by the caller, else dispatch picks.
    /// `resumable`: whether the stream's reader may resume it with `Last-Event-ID` (its log
    /// is kept once the task ends).
    async fn turn(
        &self,
        ctx: &Context,
        req: SendMessageRequest,
        skill: Option<usize>,
        scope: &Scope,
        resumable: bool,
    ) -> Result<NumberedStream, Failure> {
        let id = match self.keyed(ctx, &req.message, scope).await? {
            Keyed::Fresh(id) => id,
            Keyed::Retry(id) => return self.retried_stream(&id, ctx.after).await,
        };
        let start = super::Start {
            skill,
            id,
            snapshot: true,
            resumable,
        };
        let turn = self.begin(ctx, req, scope, start).await?;
        Ok(self.stream(turn, Until::Interrupted))
    }

    /// What a send's idempotency key (if any) comes to: the id the new task takes, or the
    /// task an earlier send with the same key and message made; `-32602` for the same key
    /// with another message.
    async fn keyed(
        &self,
        ctx: &Context,
        message: &Message,
        scope: &Scope,
    ) -> Result<Keyed, Failure> {
        let Some(key) = Key::of(ctx, message)? else {
            return Ok(Keyed::Fresh(None));
        };
        let id = scope.place.new_id();
        let scoped = key.scoped(&scope.place.make);
        let digest = key.digest(message);
        let claim = match self.store.claim_key(&scoped, &id, &digest).await? {
            KeyClaim::NotKept => self.keys.claim(&scoped, &id, &digest),
            claim => claim,
        };
        let KeyClaim::Taken {
            task_id,
            digest: kept,
        } = claim
        else {
            return Ok(Keyed::Fresh(Some(id)));
        };
        if kept != digest {
            return Err(key.conflict(&task_id).into());
        }
        // The first send may still be making its task (for a moment), or have made none (it
        // was refused): then this one makes it, under the id the key was kept for.
        for _ in 0..20 {
            if self.current(&task_id).is_some() || self.tasks().get(&task_id).await?.is_some() {
                return Ok(Keyed::Retry(task_id));
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        Ok(Keyed::Fresh(Some(task_id)))
    }

    /// The task `id` a retried blocking send answers: as the first send would have, once its
    /// turn ends or asks.
    async fn retried(&self, id: &str) -> Result<Task, Failure> {
        let mut pause = std::time::Duration::from_millis(10);
        loop {
            if let Some(tracked) = self.current(id) {
                tracked.wait(0, Until::Interrupted).await;
                if let Some(broken) = tracked.broken() {
                    return Err(broken.into());
                }
                return Ok(tracked.snapshot().0);
            }
            // Another process runs it: read until it ends or asks.
            let task = self.find(id).await?;
            if Until::Interrupted.stops_at(&task.status.state) {
                return Ok(task);
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(std::time::Duration::from_millis(250));
        }
    }

    /// The stream a retried streaming send answers: the task's events (from the start, or
    /// after the caller's `Last-Event-ID`), or the task alone once it ended.
    async fn retried_stream(
        &self,
        id: &str,
        after: Option<u64>,
    ) -> Result<NumberedStream, Failure> {
        let task = self.find(id).await?;
        if task.status.state.is_terminal() {
            let event =
                std::sync::Arc::new(crate::server::store::Event::new(StreamResponse::Task(task)));
            return Ok(Box::pin(futures::stream::once(
                async move { Ok((None, event)) },
            )));
        }
        Ok(self.subscription(id, after).await?)
    }

    pub(super) async fn get(&self, req: GetTaskRequest) -> Result<Task, A2AError> {
        check_history_length("historyLength", req.history_length)?;
        let mut task = self.find(&req.id).await?;
        cut_history(&mut task, req.history_length);
        Ok(task)
    }

    pub(super) async fn list(&self, req: ListTasksRequest) -> Result<ListTasksResponse, A2AError> {
        if let Some(size) = req.page_size
            && !(1..=100).contains(&size)
        {
            return Err(field_error(
                "pageSize",
                format!("is {size}; it is between 1 and 100 (omit it for 50)"),
            ));
        }
        check_history_length("historyLength", req.history_length)?;
        let mut list = self.tasks().list(&req).await?;
        // A store of one's own may not read the reach: nothing beyond it is answered.
        let reach = req.tenant.as_deref().unwrap_or("");
        list.tasks.retain(|task| reaches(reach, &task.id));
        Ok(list)
    }

    pub(super) async fn cancel(&self, id: String) -> Result<Task, A2AError> {
        // Cancelling a canceled task answers it as it is (cancel is idempotent); a task that
        // ended otherwise cannot be canceled.
        let settled = |task: Task| {
            if task.status.state == TaskState::Canceled {
                Ok(task)
            } else {
                Err(A2AError::task_not_cancelable(&id))
            }
        };
        if let Some(tracked) = self.current(&id) {
            let event = status(&tracked, TaskState::Canceled, None);
            if self.recorder.record(&tracked, event).await {
                tracked.stage.end_run();
                self.recorder.live.finished(&tracked);
            }
            return settled(tracked.snapshot().0);
        }
        let task = self
            .tasks()
            .get(&id)
            .await?
            .ok_or_else(|| A2AError::task_not_found(&id))?;
        if task.status.state.is_terminal() {
            return settled(task);
        }
        match self.tasks().begin_cancel(&id).await {
            Ok(task) => {
                // Another replica runs it: its handler stops there, and it posts the update.
                // Here, nobody else would.
                if !self.cluster.is_shared()
                    && let Some(push) = &self.recorder.push
                {
                    let event = status_of(&id, &task.context_id, TaskState::Canceled, None);
                    push.deliver(&id, std::sync::Arc::new(event.into()));
                }
                Ok(task)
            }
            Err(e) if e.code == error_code::TASK_NOT_CANCELABLE => settled(self.find(&id).await?),
            Err(e) => Err(e),
        }
    }

    async fn create_config(
        &self,
        mut req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        let Some((configs, policy)) = &self.configs else {
            return Err(A2AError::push_notification_not_supported());
        };
        // A task that does not exist is said so before anything of the webhook is.
        self.find(&req.task_id).await?;
        policy.check(&req.url).await?;
        req.id.get_or_insert_with(new_task_id);
        let saved = configs.save(req).await?;
        self.recorder.webhooks_changed(&saved.task_id, None);
        Ok(saved)
    }

    async fn list_configs(
        &self,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2AError> {
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
}
