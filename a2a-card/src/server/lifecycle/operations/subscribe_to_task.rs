//! `SubscribeToTask`: a task's events from now (or after the caller's `Last-Event-ID`),
//! counted as an open stream until it closes.

use a2a::*;

use super::send_message::{held_open, not_streaming};
use super::{Asked, Called, Operation};
use crate::server::call::{Context, NumberedStream};
use crate::server::lifecycle::Lifecycle;

/// `SubscribeToTask`.
pub(crate) struct SubscribeToTask(pub(crate) SubscribeToTaskRequest);

impl Operation for SubscribeToTask {
    type Answer = NumberedStream;
    const METHOD: Option<&'static str> = Some(a2a::methods::SUBSCRIBE_TO_TASK);

    async fn answer(self, lifecycle: &Lifecycle, ctx: &Context) -> Called<NumberedStream> {
        let req = self.0;
        let scope = lifecycle
            .admit(ctx, Asked::task(&req.id, req.tenant.as_deref()))
            .await?;
        if !lifecycle.streaming {
            return Err(not_streaming().into());
        }
        let open = lifecycle
            .limiter
            .stream(ctx.principal.as_deref(), ctx.peer)?;
        let events = lifecycle.subscription(&req.id, ctx.after).await?;
        Ok(scope.answered(held_open(events, open)))
    }
}
