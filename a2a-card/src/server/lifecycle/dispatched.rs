//! A new task's message (or a call's answered at once) dispatched to its skill's handler, ready
//! to run: the skill chosen once, its own security checked, its place among the running tasks
//! the limits allow taken, and its context told who calls, where and by when.

use a2a::{A2AError, Message};

use super::{Lifecycle, Scope};
use crate::arguments::SkillCall;
use crate::dispatch::{Decision, SKILL_EXTENSION_URI};
use crate::server::call::{Context, Failure};
use crate::server::errors::dispatch_error;
use crate::server::limits::Permits;
use crate::server::message::{decide, dispatch_input};

/// A message dispatched, its skill's handler ready to run ([`Lifecycle::dispatched`]).
pub(super) struct Prepared {
    /// The skill it runs (an index into the agent's skills).
    pub(super) skill: usize,
    pub(super) call: SkillCall,
    /// Its place among the running tasks the limits allow, held until it ends.
    pub(super) permits: Permits,
    /// When the caller's budget runs out (Unix milliseconds).
    pub(super) deadline_ms: Option<i64>,
}

// One of `Lifecycle`'s blocks (see the lifecycle's module docs): dispatching a message to its handler is the lifecycle's work, kept here with its concern.
impl Lifecycle {
    /// What a new task's (or an answer at once's) message comes to before its skill runs:
    /// dispatched once (to the skill `named` by the caller, or the message, or as dispatch
    /// picks), checked against the skill's own security, and admitted by the limits on
    /// running tasks; its context told who calls, in which tenant, with which extensions, by
    /// when.
    pub(super) fn dispatched(
        &self,
        ctx: &Context,
        message: &Message,
        scope: &Scope,
        named: Option<usize>,
    ) -> Result<Prepared, Failure> {
        // The caller's budget, as this process's deadline for the task.
        let deadline_ms = crate::budget::budget_of(message.metadata.as_ref())
            .map_err(|why| {
                A2AError::invalid_params(format!(
                    "message.metadata.{} {why}",
                    crate::budget::BUDGET_EXTENSION_URI
                ))
            })?
            .map(|budget| {
                let ms = i64::try_from(budget.as_millis()).unwrap_or(i64::MAX);
                self.clock.now_ms().saturating_add(ms)
            });
        let tokens = crate::budget::tokens_of(message.metadata.as_ref()).map_err(|why| {
            A2AError::invalid_params(format!(
                "message.metadata.{} {why}",
                crate::budget::BUDGET_EXTENSION_URI
            ))
        })?;
        let decision = match named.or(scope.skill) {
            Some(skill) => {
                let (json, files) = dispatch_input(self.max_inline_file, message)?;
                self.dispatcher.dispatch_to(skill, json, files)
            }
            None => decide(&self.dispatcher, self.max_inline_file, message, None)?,
        };
        let (skill, mut call) = match decision {
            Decision::Run { skill, call } => (skill, call),
            // The skill the message names cannot take it: said of that skill.
            Decision::Reject(e) if named.is_none() && scope.skill.is_some() => {
                let id = scope
                    .skill
                    .and_then(|i| self.agent.skills().get(i))
                    .map_or("", |s| s.id);
                let error = dispatch_error(&e);
                return Err(A2AError::invalid_params(format!(
                    "the message names skill `{id}` (metadata `{SKILL_EXTENSION_URI}`), which cannot take it: {}",
                    error.message
                ))
                .with_details(error.details.unwrap_or_default())
                .into());
            }
            Decision::Reject(e) => return Err(dispatch_error(&e).into()),
            Decision::FollowUp(_) => {
                return Err(A2AError::internal("a new message was taken for an answer").into());
            }
        };
        if let Some(guard) = &self.guard
            && ctx.admitted != Some(skill)
        {
            guard.authorize_skill(skill, ctx.principal.as_deref())?;
        }
        // Over a limit of running tasks, nothing is made.
        let skill_id = self.agent.skills().get(skill).map_or("", |s| s.id);
        let permits = self.limiter.run(
            ctx.principal.as_deref(),
            ctx.peer,
            scope.tenant.as_deref(),
            skill_id,
        )?;
        call.context.set_principal(ctx.principal.clone());
        call.context.set_extensions(scope.extensions.clone());
        call.context.set_tenant(scope.tenant.clone());
        call.context.set_deadline(deadline_ms, self.clock.clone());
        call.context.set_tokens(tokens);
        Ok(Prepared {
            skill,
            call,
            permits,
            deadline_ms,
        })
    }
}
