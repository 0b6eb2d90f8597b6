//! `GetExtendedAgentCard`: the card authenticated callers get, where the agent has one.

use a2a::*;

use super::{Asked, Called, Operation};
use crate::server::call::Context;
use crate::server::lifecycle::Lifecycle;

/// `GetExtendedAgentCard`.
pub(crate) struct GetExtendedAgentCard;

impl Operation for GetExtendedAgentCard {
    type Answer = AgentCard;
    const METHOD: Option<&'static str> = Some(a2a::methods::GET_EXTENDED_AGENT_CARD);

    async fn answer(self, lifecycle: &Lifecycle, ctx: &Context) -> Called<AgentCard> {
        let asked = Asked {
            extended_card: true,
            ..Asked::default()
        };
        let scope = lifecycle.admit(ctx, asked).await?;
        let card = lifecycle
            .extended
            .clone()
            .ok_or_else(A2AError::extended_card_not_configured)?;
        Ok(scope.answered(card))
    }
}
