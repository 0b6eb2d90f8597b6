//! The gRPC binding (feature `grpc`): the canonical `lf.a2a.v1.A2AService`, served by the
//! official binding (`a2a-grpc`'s `GrpcHandler`) over this crate's request handler, on the same
//! listener as the HTTP bindings (requests to `/lf.a2a.v1.A2AService/*` over HTTP/2).
//!
//! Everything the other bindings do goes through the same handler: structured input checked
//! and dispatched, streams, cancel, subscriptions, push configs, the extended card. The card's
//! security applies as on the other bindings, from the request's metadata (`authorization`, the
//! API key's header), answered with `UNAUTHENTICATED` or `PERMISSION_DENIED`; a request message
//! larger than the body limit is refused before it is decoded (`OUT_OF_RANGE`, as tonic says
//! it, naming the limit).

use std::sync::Arc;

use a2a::*;
use a2a_pb::proto::a2a_service_server::A2aServiceServer;
use a2a_server::{RequestHandler, ServiceParams};
use async_trait::async_trait;
use futures::stream::BoxStream;

use super::auth::{self, Guard};
use super::exact;

/// The gRPC service's path prefix.
pub(crate) const SERVICE_PATH: &str = "/lf.a2a.v1.A2AService";

/// The routes of the gRPC binding over `handler`, behind the card's security (`guard`), with
/// messages limited to `body_limit` bytes.
pub(crate) fn router<H: RequestHandler>(
    handler: Arc<H>,
    guard: Option<Arc<Guard>>,
    body_limit: usize,
) -> axum::Router {
    let service = A2aServiceServer::new(a2a_grpc::GrpcHandler::new(Arc::new(Plain(handler))))
        .max_decoding_message_size(body_limit);
    let router = axum::Router::new().route_service(&format!("{SERVICE_PATH}/{{*method}}"), service);
    match guard {
        Some(guard) => router.layer(axum::middleware::from_fn_with_state(
            guard,
            auth::grpc_layer,
        )),
        None => router,
    }
}

/// The request handler with its answers as they are (protobuf carries data parts as
/// `Struct`s, converted by the official binding; nothing to splice back).
struct Plain<H>(Arc<H>);

#[async_trait]
impl<H: RequestHandler> RequestHandler for Plain<H> {
    async fn send_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2AError> {
        super::telemetry::method("GRPC", "grpc", "SendMessage", "1.0");
        exact::plain(self.0.send_message(params, req)).await
    }

    async fn send_streaming_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        super::telemetry::method("GRPC", "grpc", "SendStreamingMessage", "1.0");
        exact::plain(self.0.send_streaming_message(params, req)).await
    }

    async fn get_task(
        &self,
        params: &ServiceParams,
        req: GetTaskRequest,
    ) -> Result<Task, A2AError> {
        super::telemetry::method("GRPC", "grpc", "GetTask", "1.0");
        exact::plain(self.0.get_task(params, req)).await
    }

    async fn list_tasks(
        &self,
        params: &ServiceParams,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2AError> {
        super::telemetry::method("GRPC", "grpc", "ListTasks", "1.0");
        exact::plain(self.0.list_tasks(params, req)).await
    }

    async fn cancel_task(
        &self,
        params: &ServiceParams,
        req: CancelTaskRequest,
    ) -> Result<Task, A2AError> {
        super::telemetry::method("GRPC", "grpc", "CancelTask", "1.0");
        exact::plain(self.0.cancel_task(params, req)).await
    }

    async fn subscribe_to_task(
        &self,
        params: &ServiceParams,
        req: SubscribeToTaskRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        super::telemetry::method("GRPC", "grpc", "SubscribeToTask", "1.0");
        exact::plain(self.0.subscribe_to_task(params, req)).await
    }

    async fn create_push_config(
        &self,
        params: &ServiceParams,
        req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        super::telemetry::method("GRPC", "grpc", "CreateTaskPushNotificationConfig", "1.0");
        self.0.create_push_config(params, req).await
    }

    async fn get_push_config(
        &self,
        params: &ServiceParams,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        super::telemetry::method("GRPC", "grpc", "GetTaskPushNotificationConfig", "1.0");
        self.0.get_push_config(params, req).await
    }

    async fn list_push_configs(
        &self,
        params: &ServiceParams,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2AError> {
        super::telemetry::method("GRPC", "grpc", "ListTaskPushNotificationConfigs", "1.0");
        self.0.list_push_configs(params, req).await
    }

    async fn delete_push_config(
        &self,
        params: &ServiceParams,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<(), A2AError> {
        super::telemetry::method("GRPC", "grpc", "DeleteTaskPushNotificationConfig", "1.0");
        self.0.delete_push_config(params, req).await
    }

    async fn get_extended_agent_card(
        &self,
        params: &ServiceParams,
        req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2AError> {
        super::telemetry::method("GRPC", "grpc", "GetExtendedAgentCard", "1.0");
        self.0.get_extended_agent_card(params, req).await
    }
}
