//! The binding of callers in the same process: the official request handler trait
//! ([`Server::request_handler`](crate::server::Server::request_handler)), each method one
//! call of the lifecycle by an anonymous caller.

use std::sync::Arc;

use a2a::*;
use a2a_server::{RequestHandler, ServiceParams};
use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::BoxStream;

use crate::server::call::{Context, Failure, NumberedStream};
use crate::server::lifecycle::{
    Called, CancelTask, CreatePushConfig, DeletePushConfig, GetExtendedAgentCard, GetPushConfig,
    GetTask, Lifecycle, ListPushConfigs, ListTasks, SendMessage, SendStreamingMessage,
    SubscribeToTask,
};

/// The official request handler trait, for a caller in the process
/// ([`Server::request_handler`](crate::server::Server::request_handler)): each method one
/// call, anonymous.
#[async_trait]
impl RequestHandler for Lifecycle {
    async fn send_message(
        &self,
        _: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2AError> {
        let task = in_process(self.call(&Context::in_process(), SendMessage(req)).await)?;
        Ok(SendMessageResponse::Task(Arc::unwrap_or_clone(task)))
    }

    async fn send_streaming_message(
        &self,
        _: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let called = self
            .call(&Context::in_process(), SendStreamingMessage(req))
            .await;
        in_process(called).map(unnumbered)
    }

    async fn get_task(&self, _: &ServiceParams, req: GetTaskRequest) -> Result<Task, A2AError> {
        in_process(self.call(&Context::in_process(), GetTask(req)).await)
    }

    async fn list_tasks(
        &self,
        _: &ServiceParams,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2AError> {
        in_process(self.call(&Context::in_process(), ListTasks(req)).await)
    }

    async fn cancel_task(
        &self,
        _: &ServiceParams,
        req: CancelTaskRequest,
    ) -> Result<Task, A2AError> {
        in_process(self.call(&Context::in_process(), CancelTask(req)).await)
    }

    async fn subscribe_to_task(
        &self,
        _: &ServiceParams,
        req: SubscribeToTaskRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let called = self
            .call(&Context::in_process(), SubscribeToTask(req))
            .await;
        in_process(called).map(unnumbered)
    }

    async fn create_push_config(
        &self,
        _: &ServiceParams,
        req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        in_process(
            self.call(&Context::in_process(), CreatePushConfig(req))
                .await,
        )
    }

    async fn get_push_config(
        &self,
        _: &ServiceParams,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        in_process(self.call(&Context::in_process(), GetPushConfig(req)).await)
    }

    async fn list_push_configs(
        &self,
        _: &ServiceParams,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2AError> {
        in_process(
            self.call(&Context::in_process(), ListPushConfigs(req))
                .await,
        )
    }

    async fn delete_push_config(
        &self,
        _: &ServiceParams,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<(), A2AError> {
        in_process(
            self.call(&Context::in_process(), DeletePushConfig(req))
                .await,
        )
    }

    async fn get_extended_agent_card(
        &self,
        _: &ServiceParams,
        _: GetExtendedAgentCardRequest,
    ) -> Result<a2a::AgentCard, A2AError> {
        in_process(
            self.call(&Context::in_process(), GetExtendedAgentCard)
                .await,
        )
    }
}

/// The answer of a call by an anonymous caller in the process.
fn in_process<T>(called: Called<T>) -> Result<T, A2AError> {
    called
        .map(|answered| answered.answer)
        .map_err(Failure::into_error)
}

/// A stream's events, without their numbers.
fn unnumbered(events: NumberedStream) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
    Box::pin(
        events.map(|event| {
            event.and_then(|(_, event)| event.event().map(std::borrow::Cow::into_owned))
        }),
    )
}
