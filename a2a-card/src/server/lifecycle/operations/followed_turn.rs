//! MCP's turn of a tool call: a message followed as a stream whatever the card says of
//! streaming (feature `mcp`).

use super::{Asked, Called, Operation};
use crate::server::call::Context;
use crate::server::lifecycle::{Lifecycle, Unfolding};
use a2a::SendMessageRequest;

/// One turn of a message followed as a stream whatever the card says of streaming, a new task
/// running `skill` when the caller names one (an MCP tool call); or, for a new call of a skill
/// that can only return, its answer at once, without a task (see
/// [`at_once`](crate::server::lifecycle::at_once)). Not an A2A method: MCP's gate records it.
pub(crate) struct FollowedTurn {
    /// The message.
    pub(crate) req: SendMessageRequest,
    /// The skill the caller names (an index into the agent's skills).
    pub(crate) skill: Option<usize>,
}

impl Operation for FollowedTurn {
    type Answer = Unfolding;
    const METHOD: Option<&'static str> = None;

    async fn answer(self, lifecycle: &Lifecycle, ctx: &Context) -> Called<Unfolding> {
        let FollowedTurn { req, skill } = self;
        // The skill is the caller's to name here, not the message's.
        let asked = Asked {
            message: None,
            ..Asked::send(&req)
        };
        let scope = lifecycle.admit(ctx, asked).await?;
        if let Some(skill) = skill
            && lifecycle.answers_at_once(ctx, &req, skill)?
        {
            let answer = lifecycle
                .answer_at_once(ctx, req.message, &scope, skill)
                .await?;
            return Ok(scope.answered(Unfolding::Answered(answer)));
        }
        // Followed here, by no reader that could resume it.
        let events = lifecycle.turn(ctx, req, skill, &scope, false).await?;
        Ok(scope.answered(Unfolding::Turn(events)))
    }
}
