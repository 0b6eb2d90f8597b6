//! The gRPC binding (feature `grpc`): the canonical `lf.a2a.v1.A2AService` of the official
//! binding (its protobuf service, `a2a-pb`, and its conversions), implemented by decoding each
//! request into a [call](crate::server::call), on the same listener as the HTTP bindings (requests to
//! `/lf.a2a.v1.A2AService/*` over HTTP/2).
//!
//! The card's security applies as on the other bindings, from the request's metadata
//! (`authorization`, the API key's header), answered with `UNAUTHENTICATED` or
//! `PERMISSION_DENIED` and the challenges as `www-authenticate` metadata; a request message
//! larger than the body limit is refused before it is decoded (`OUT_OF_RANGE`, as tonic says
//! it, naming the limit).

use std::pin::Pin;
use std::sync::Arc;

use a2a::A2AError;
use a2a_grpc::errors::a2a_error_to_status;
use a2a_pb::pbconv;
use a2a_pb::proto::{self, a2a_service_server::A2aService, a2a_service_server::A2aServiceServer};
use futures::{Stream, StreamExt};
use tonic::metadata::MetadataValue;
use tonic::{Request, Response, Status};

use crate::server::auth::Refusal;
use crate::server::call::{
    Binding, Bound, Context, EXTENSIONS_HEADER, Failure, Incoming, NumberedStream,
};
use crate::server::lifecycle::{
    Called, CancelTask, CreatePushConfig, DeletePushConfig, GetExtendedAgentCard, GetPushConfig,
    GetTask, Lifecycle, ListPushConfigs, ListTasks, SendMessage, SendStreamingMessage,
    SubscribeToTask,
};
use crate::server::store::Event;

/// The gRPC service's path prefix.
pub(crate) const SERVICE_PATH: &str = "/lf.a2a.v1.A2AService";

/// The routes of the gRPC binding over `lifecycle`, with messages limited to `body_limit` bytes.
pub(crate) fn router(lifecycle: Arc<Lifecycle>, body_limit: usize) -> axum::Router {
    let service = A2aServiceServer::new(Grpc(lifecycle)).max_decoding_message_size(body_limit);
    axum::Router::new()
        .route_service(&format!("{SERVICE_PATH}/{{*method}}"), service)
        .layer(axum::middleware::from_fn_with_state(GrpcRequests, context))
}

/// The state the gRPC routes' context is made with.
#[derive(Clone, Copy)]
struct GrpcRequests;

impl Bound for GrpcRequests {
    const BINDING: Binding = Binding::Grpc;
}

/// Makes each request's call context from its head, before tonic reads it, for its method
/// to take ([`context`]); a caller the authentication layer refused is answered here, with the
/// status [`refused`] says.
async fn context(
    Incoming(ctx): Incoming,
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    match ctx {
        Ok(ctx) => {
            request.extensions_mut().insert(ctx);
            next.run(request).await
        }
        Err(refusal) => refused(&refusal).into_http(),
    }
}

/// The service: each method one call.
struct Grpc(Arc<Lifecycle>);

type Events = Pin<Box<dyn Stream<Item = Result<proto::StreamResponse, Status>> + Send>>;

/// The call context the routes' layer made of `request`'s head ([`context`]).
fn ctx_of<T>(request: &mut Request<T>) -> Result<Context, Status> {
    request
        .extensions_mut()
        .remove::<Context>()
        .ok_or_else(|| Status::internal("the request reached the service without its context"))
}

/// The status of a call `refusal` refused: `UNAUTHENTICATED`, `PERMISSION_DENIED`,
/// `UNAVAILABLE` or `RESOURCE_EXHAUSTED`, the message, the challenges as `www-authenticate`
/// metadata and `retry-after` where the refusal says when to try again.
fn refused(refusal: &Refusal) -> Status {
    crate::server::telemetry::refused(refusal.reason());
    let code = tonic::Code::from_i32(refusal.canonical().0);
    let mut metadata = tonic::metadata::MetadataMap::new();
    if let Some(seconds) = refusal.retry_after() {
        metadata.insert("retry-after", seconds.into());
    }
    for c in refusal.challenges() {
        if let Ok(v) = c.parse() {
            metadata.append("www-authenticate", v);
        }
    }
    Status::with_metadata(code, refusal.message(), metadata)
}

/// A call's answer made a message by `into_message`, naming in its `a2a-extensions` metadata
/// the extensions it used; or its failure as a status.
fn answer<T, M>(
    called: Called<T>,
    into_message: impl FnOnce(T) -> M,
) -> Result<Response<M>, Status> {
    let answered = called.map_err(|failure| match failure {
        Failure::Error(e) => a2a_error_to_status(&e),
        Failure::Refused(refusal) => refused(&refusal),
    })?;
    let used = answered
        .used
        .header()
        .and_then(|v| MetadataValue::try_from(v.as_bytes()).ok());
    let mut response = Response::new(into_message(answered.answer));
    if let Some(used) = used {
        response.metadata_mut().insert(EXTENSIONS_HEADER, used);
    }
    Ok(response)
}

/// A call's answer as its protobuf message (`to_proto`): see [`answer`].
fn respond<T, M>(called: Called<T>, to_proto: impl FnOnce(&T) -> M) -> Result<Response<M>, Status> {
    answer(called, |answered| to_proto(&answered))
}

/// A stream's events as the service's stream of messages.
fn events(called: Called<NumberedStream>) -> Result<Response<Events>, Status> {
    answer(called, |events| -> Events {
        Box::pin(
            events.map(
                |event: Result<(Option<u64>, Arc<Event>), A2AError>| match event {
                    Ok((_, event)) => event
                        .event()
                        .map(|event| pbconv::to_proto_stream_response(&event))
                        .map_err(|e| a2a_error_to_status(&e)),
                    Err(e) => Err(a2a_error_to_status(&e)),
                },
            ),
        )
    })
}

#[tonic::async_trait]
impl A2aService for Grpc {
    async fn send_message(
        &self,
        mut request: Request<proto::SendMessageRequest>,
    ) -> Result<Response<proto::SendMessageResponse>, Status> {
        let ctx = ctx_of(&mut request)?;
        let req = pbconv::from_proto_send_message_request(request.get_ref());
        let called = self.0.call(&ctx, SendMessage(req)).await;
        respond(called, |task: &Arc<a2a::Task>| proto::SendMessageResponse {
            payload: Some(proto::send_message_response::Payload::Task(
                pbconv::to_proto_task(task),
            )),
        })
    }

    type SendStreamingMessageStream = Events;

    async fn send_streaming_message(
        &self,
        mut request: Request<proto::SendMessageRequest>,
    ) -> Result<Response<Events>, Status> {
        let ctx = ctx_of(&mut request)?;
        let req = pbconv::from_proto_send_message_request(request.get_ref());
        events(self.0.call(&ctx, SendStreamingMessage(req)).await)
    }

    async fn get_task(
        &self,
        mut request: Request<proto::GetTaskRequest>,
    ) -> Result<Response<proto::Task>, Status> {
        let ctx = ctx_of(&mut request)?;
        let req = pbconv::from_proto_get_task_request(request.get_ref());
        respond(self.0.call(&ctx, GetTask(req)).await, pbconv::to_proto_task)
    }

    async fn list_tasks(
        &self,
        mut request: Request<proto::ListTasksRequest>,
    ) -> Result<Response<proto::ListTasksResponse>, Status> {
        let ctx = ctx_of(&mut request)?;
        let req = pbconv::from_proto_list_tasks_request(request.get_ref());
        let called = self.0.call(&ctx, ListTasks(req)).await;
        respond(called, pbconv::to_proto_list_tasks_response)
    }

    async fn cancel_task(
        &self,
        mut request: Request<proto::CancelTaskRequest>,
    ) -> Result<Response<proto::Task>, Status> {
        let ctx = ctx_of(&mut request)?;
        let req = pbconv::from_proto_cancel_task_request(request.get_ref());
        respond(
            self.0.call(&ctx, CancelTask(req)).await,
            pbconv::to_proto_task,
        )
    }

    type SubscribeToTaskStream = Events;

    async fn subscribe_to_task(
        &self,
        mut request: Request<proto::SubscribeToTaskRequest>,
    ) -> Result<Response<Events>, Status> {
        let ctx = ctx_of(&mut request)?;
        let req = pbconv::from_proto_subscribe_to_task_request(request.get_ref());
        events(self.0.call(&ctx, SubscribeToTask(req)).await)
    }

    async fn create_task_push_notification_config(
        &self,
        mut request: Request<proto::TaskPushNotificationConfig>,
    ) -> Result<Response<proto::TaskPushNotificationConfig>, Status> {
        let ctx = ctx_of(&mut request)?;
        let req =
            pbconv::from_proto_create_task_push_notification_config_request(request.get_ref());
        let called = self.0.call(&ctx, CreatePushConfig(req)).await;
        respond(called, pbconv::to_proto_task_push_notification_config)
    }

    async fn get_task_push_notification_config(
        &self,
        mut request: Request<proto::GetTaskPushNotificationConfigRequest>,
    ) -> Result<Response<proto::TaskPushNotificationConfig>, Status> {
        let ctx = ctx_of(&mut request)?;
        let req = pbconv::from_proto_get_task_push_notification_config_request(request.get_ref());
        let called = self.0.call(&ctx, GetPushConfig(req)).await;
        respond(called, pbconv::to_proto_task_push_notification_config)
    }

    async fn list_task_push_notification_configs(
        &self,
        mut request: Request<proto::ListTaskPushNotificationConfigsRequest>,
    ) -> Result<Response<proto::ListTaskPushNotificationConfigsResponse>, Status> {
        let ctx = ctx_of(&mut request)?;
        let req = pbconv::from_proto_list_task_push_notification_configs_request(request.get_ref());
        let called = self.0.call(&ctx, ListPushConfigs(req)).await;
        respond(
            called,
            pbconv::to_proto_list_task_push_notification_configs_response,
        )
    }

    async fn get_extended_agent_card(
        &self,
        mut request: Request<proto::GetExtendedAgentCardRequest>,
    ) -> Result<Response<proto::AgentCard>, Status> {
        let ctx = ctx_of(&mut request)?;
        let called = self.0.call(&ctx, GetExtendedAgentCard).await;
        respond(called, pbconv::to_proto_agent_card)
    }

    async fn delete_task_push_notification_config(
        &self,
        mut request: Request<proto::DeleteTaskPushNotificationConfigRequest>,
    ) -> Result<Response<()>, Status> {
        let ctx = ctx_of(&mut request)?;
        let req =
            pbconv::from_proto_delete_task_push_notification_config_request(request.get_ref());
        respond(self.0.call(&ctx, DeletePushConfig(req)).await, |()| ())
    }
}
