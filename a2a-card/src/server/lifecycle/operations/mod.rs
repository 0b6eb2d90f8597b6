//! The A2A operations, one module each: its parameters (a type named for the method), its
//! checks and its answer ([`Operation`]). Every binding and the in-process caller call them
//! through one place, [`Lifecycle::call`], which admits nothing itself but records the call
//! once (its span's method, its metrics); the JSON bindings, which read the operation from a
//! request's method name, go through [`Lifecycle::dispatch`] with an [`Op`].
//!
//! Adding an operation: its module here (a type, its `Operation`), its arm in
//! [`Lifecycle::dispatch`] and in [`Op`], and each binding's mapping of it.

use std::future::Future;
use std::sync::Arc;

use a2a::*;
use a2a_server::PushConfigStore;

use super::{Lifecycle, Scope};
use crate::agent::SkillDecl;
use crate::dispatch::{SKILL_EXTENSION_URI, named_skill};
use crate::server::call::{
    Answered, Binding, CallAnswer, Context, Failure, Op, field_error, tenant_of,
};
use crate::server::store::{Place, prefix};
use crate::server::telemetry::CallRecord;

mod cancel_task;
mod create_push_config;
mod delete_push_config;
#[cfg(feature = "mcp")]
mod followed_turn;
mod get_extended_agent_card;
mod get_push_config;
mod get_task;
mod list_push_configs;
mod list_tasks;
mod send_message;
mod subscribe_to_task;

pub(crate) use cancel_task::CancelTask;
pub(crate) use create_push_config::CreatePushConfig;
pub(crate) use delete_push_config::DeletePushConfig;
#[cfg(feature = "mcp")]
pub(crate) use followed_turn::FollowedTurn;
pub(crate) use get_extended_agent_card::GetExtendedAgentCard;
pub(crate) use get_push_config::GetPushConfig;
pub(crate) use get_task::GetTask;
pub(crate) use list_push_configs::ListPushConfigs;
pub(crate) use list_tasks::ListTasks;
pub(crate) use send_message::{SendMessage, SendStreamingMessage};
pub(crate) use subscribe_to_task::SubscribeToTask;

/// What a call comes to: its operation's own answer, with the extensions it used, or why
/// not.
pub(crate) type Called<T> = Result<Answered<T>, Failure>;

/// One operation a caller asks of the agent: its parameters are the type's value, its answer
/// [`Answer`](Self::Answer).
pub(crate) trait Operation: Send + 'static {
    /// What the operation answers.
    type Answer: Send + 'static;
    /// The A2A 1.0 method's name, under which the call is recorded; `None` for an operation
    /// that is no A2A method (MCP's turn, which MCP's gate records under its own).
    const METHOD: Option<&'static str>;

    /// The operation answered on `lifecycle` for the caller of `ctx`: admitted (the card's
    /// security, extensions, tenant, limits, reach), checked, done.
    fn answer(
        self,
        lifecycle: &Lifecycle,
        ctx: &Context,
    ) -> impl Future<Output = Called<Self::Answer>> + Send;
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

// One of `Lifecycle`'s blocks (see the lifecycle's module docs): the one way in of every call, beside the operations it dispatches.
impl Lifecycle {
    /// Answers `op` for the caller of `ctx`: the one way in of every binding and of the
    /// in-process caller. The calls of the A2A bindings are recorded here, once (MCP's gate
    /// records MCP's methods; a caller in the process is not recorded).
    pub(crate) async fn call<O: Operation>(&self, ctx: &Context, op: O) -> Called<O::Answer> {
        let record = match (O::METHOD, ctx.binding) {
            (Some(method), Binding::JsonRpc | Binding::HttpJson | Binding::Grpc) => Some(
                CallRecord::begin(ctx.binding.names(), method, ctx.version.as_str()),
            ),
            _ => None,
        };
        let called = op.answer(self, ctx).await;
        if let Some(record) = record {
            record.end(called.is_ok());
        }
        called
    }

    /// Answers `op`, an operation read from a request by its method's name, with the answer
    /// as the JSON bindings write it.
    pub(crate) async fn dispatch(&self, ctx: &Context, op: Op) -> Called<CallAnswer> {
        Ok(match op {
            Op::Send(req) => self
                .call(ctx, SendMessage(req))
                .await?
                .map(CallAnswer::Sent),
            Op::Stream(req) => self
                .call(ctx, SendStreamingMessage(req))
                .await?
                .map(CallAnswer::Stream),
            Op::Get(req) => self
                .call(ctx, GetTask(req))
                .await?
                .map(|task| CallAnswer::Task(Box::new(task))),
            Op::List(req) => self.call(ctx, ListTasks(req)).await?.map(CallAnswer::Tasks),
            Op::Cancel(req) => self
                .call(ctx, CancelTask(req))
                .await?
                .map(|task| CallAnswer::Task(Box::new(task))),
            Op::Subscribe(req) => self
                .call(ctx, SubscribeToTask(req))
                .await?
                .map(CallAnswer::Stream),
            Op::CreateConfig(req) => self
                .call(ctx, CreatePushConfig(req))
                .await?
                .map(CallAnswer::Config),
            Op::GetConfig(req) => self
                .call(ctx, GetPushConfig(req))
                .await?
                .map(CallAnswer::Config),
            Op::ListConfigs(req) => self
                .call(ctx, ListPushConfigs(req))
                .await?
                .map(CallAnswer::Configs),
            Op::DeleteConfig(req) => self
                .call(ctx, DeletePushConfig(req))
                .await?
                .map(|()| CallAnswer::Deleted),
            Op::ExtendedCard => self
                .call(ctx, GetExtendedAgentCard)
                .await?
                .map(|card| CallAnswer::Card(Box::new(card))),
        })
    }

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
