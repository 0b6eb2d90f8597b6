//! The calls of the A2A bindings, recorded once: each names its method on its request's span
//! and is counted as it ends ([`CallRecord`]), whichever binding made it.

use std::future::Future;
use std::sync::Arc;

use a2a::methods as m;
use a2a::*;
use async_trait::async_trait;

use crate::server::call::{Context, NumberedStream};
use crate::server::lifecycle::{Called, Calls, Followed};
use crate::server::telemetry::CallRecord;

/// [`Calls`] that record each call ([`CallRecord`]) before they answer it with the calls they
/// wrap: what the A2A bindings call. MCP's methods are not A2A's (a `tools/call` may cancel a
/// task), so its gate records them, and it calls the lifecycle itself.
pub(crate) struct Observed(pub(crate) Arc<dyn Calls>);

/// `call`, a call of `method` in `ctx`, recorded.
async fn recorded<T>(
    ctx: &Context,
    method: &'static str,
    call: impl Future<Output = Called<T>>,
) -> Called<T> {
    let record = CallRecord::begin(ctx.binding.names(), method, ctx.version.as_str());
    let called = call.await;
    record.end(called.is_ok());
    called
}

#[async_trait]
impl Calls for Observed {
    async fn send_message(&self, ctx: &Context, req: SendMessageRequest) -> Called<Arc<Task>> {
        recorded(ctx, m::SEND_MESSAGE, self.0.send_message(ctx, req)).await
    }

    async fn send_streaming_message(
        &self,
        ctx: &Context,
        req: SendMessageRequest,
    ) -> Called<NumberedStream> {
        let call = self.0.send_streaming_message(ctx, req);
        recorded(ctx, m::SEND_STREAMING_MESSAGE, call).await
    }

    async fn followed_turn(
        &self,
        ctx: &Context,
        req: SendMessageRequest,
        skill: Option<usize>,
    ) -> Called<Followed> {
        // MCP's call alone, which its gate records.
        self.0.followed_turn(ctx, req, skill).await
    }

    async fn get_task(&self, ctx: &Context, req: GetTaskRequest) -> Called<Task> {
        recorded(ctx, m::GET_TASK, self.0.get_task(ctx, req)).await
    }

    async fn list_tasks(&self, ctx: &Context, req: ListTasksRequest) -> Called<ListTasksResponse> {
        recorded(ctx, m::LIST_TASKS, self.0.list_tasks(ctx, req)).await
    }

    async fn cancel_task(&self, ctx: &Context, req: CancelTaskRequest) -> Called<Task> {
        recorded(ctx, m::CANCEL_TASK, self.0.cancel_task(ctx, req)).await
    }

    async fn subscribe_to_task(
        &self,
        ctx: &Context,
        req: SubscribeToTaskRequest,
    ) -> Called<NumberedStream> {
        recorded(
            ctx,
            m::SUBSCRIBE_TO_TASK,
            self.0.subscribe_to_task(ctx, req),
        )
        .await
    }

    async fn create_push_config(
        &self,
        ctx: &Context,
        req: TaskPushNotificationConfig,
    ) -> Called<TaskPushNotificationConfig> {
        recorded(
            ctx,
            m::CREATE_PUSH_CONFIG,
            self.0.create_push_config(ctx, req),
        )
        .await
    }

    async fn get_push_config(
        &self,
        ctx: &Context,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Called<TaskPushNotificationConfig> {
        recorded(ctx, m::GET_PUSH_CONFIG, self.0.get_push_config(ctx, req)).await
    }

    async fn list_push_configs(
        &self,
        ctx: &Context,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Called<ListTaskPushNotificationConfigsResponse> {
        recorded(
            ctx,
            m::LIST_PUSH_CONFIGS,
            self.0.list_push_configs(ctx, req),
        )
        .await
    }

    async fn delete_push_config(
        &self,
        ctx: &Context,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Called<()> {
        recorded(
            ctx,
            m::DELETE_PUSH_CONFIG,
            self.0.delete_push_config(ctx, req),
        )
        .await
    }

    async fn get_extended_agent_card(&self, ctx: &Context) -> Called<AgentCard> {
        recorded(
            ctx,
            m::GET_EXTENDED_AGENT_CARD,
            self.0.get_extended_agent_card(ctx),
        )
        .await
    }
}
