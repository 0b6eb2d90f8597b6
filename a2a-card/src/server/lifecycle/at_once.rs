//! A call answered at once, without a task: the caller names a skill that can only return
//! (it neither streams nor takes a context, so it can neither report progress, nor ask, nor
//! call other agents) and that is not durable, and nothing in the call asks for a task (no
//! idempotency key to reach it again, no configuration of a task). An MCP tool call that is
//! not an MCP task is such a call: MCP's client reads the result and nothing else. (A budget
//! is read and checked as a task's is, and told to the context, which such a skill does not
//! take: nothing else keeps it.)
//!
//! The call is admitted, dispatched, authorised and limited as a new task's message is
//! ([`Lifecycle::dispatched`]); only the task is not made: nothing is stored, no event is
//! numbered, no webhook called, and the handler runs in the caller's own future (dropped with
//! it, as a cancelled call's handler is).

use std::panic::AssertUnwindSafe;

use a2a::{Message, Part, SendMessageRequest};
use futures::FutureExt;
use tracing::Instrument;

use super::dispatched::Prepared;
use super::run::{PANIC_MESSAGE, panicked};
use super::task::updates::reply_part;
use super::{Lifecycle, Scope};
use crate::server::call::{Context, Failure, NumberedStream};
use crate::server::errors::input_error;
use crate::server::idempotency::Key;
use crate::skill::SkillError;

/// What a followed turn comes to (see [`FollowedTurn`](super::FollowedTurn)).
pub(crate) enum Unfolding {
    /// The turn's task: the task as the turn begins, then its events until it ends or asks.
    Turn(NumberedStream),
    /// The skill's answer to a call made at once, without a task: the part its reply is
    /// (none: it replied nothing), or why it failed (as its task's failed status would say).
    Answered(Result<Option<Part>, String>),
}

// One of `Lifecycle`'s blocks (see the lifecycle's module docs): a call answered at once is the lifecycle's work, kept here with its concern (feature `mcp`).
impl Lifecycle {
    /// Whether `req`, a new call of `skill` (an index into the agent's skills), is answered at
    /// once rather than as a task (see the [module docs](self)).
    pub(super) fn answers_at_once(
        &self,
        ctx: &Context,
        req: &SendMessageRequest,
        skill: usize,
    ) -> Result<bool, Failure> {
        let Some(decl) = self.agent.skills().get(skill) else {
            return Ok(false);
        };
        let returns = !decl.output.streaming && !decl.input.context && decl.durable.is_none();
        let message = &req.message;
        let untracked = message.task_id.is_none() && req.configuration.is_none();
        Ok(returns && untracked && Key::of(ctx, message)?.is_none())
    }

    /// Runs `skill` on `message` at once, without a task: its reply's part or why it failed;
    /// a refusal of its input is the call's refusal, as it is a turn's.
    pub(super) async fn answer_at_once(
        &self,
        ctx: &Context,
        message: Message,
        scope: &Scope,
        skill: usize,
    ) -> Result<Result<Option<Part>, String>, Failure> {
        super::request_checks::check_message(&message)?;
        let Prepared {
            skill,
            call,
            permits,
            ..
        } = self.dispatched(ctx, &message, scope, Some(skill))?;
        drop(message);
        let skill_id = self.agent.skills().get(skill).map_or("output", |s| s.id);
        let span = crate::server::telemetry::skill_span(&tracing::Span::current(), skill_id);
        let run = AssertUnwindSafe(self.agent.run_skill(skill, call).instrument(span.clone()))
            .catch_unwind()
            .await;
        // The running call's place among those the limits allow, given back as it ends.
        drop(permits);
        span.record("a2a.skill.cancelled", false);
        let outcome = match run {
            Ok(outcome) => {
                span.record("a2a.skill.panicked", false);
                outcome
            }
            Err(panic) => {
                let text = panicked(&span, &*panic);
                tracing::error!(skill = skill_id, panic = %text, "a skill handler panicked");
                Err(SkillError::Failed(PANIC_MESSAGE.to_owned()))
            }
        };
        match outcome {
            Ok(reply) => Ok(Ok(reply_part(reply))),
            Err(refused @ SkillError::Input(_)) => Err(input_error(&refused).into()),
            Err(failed) => Ok(Err(failed.to_string())),
        }
    }
}
