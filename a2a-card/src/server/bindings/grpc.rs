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
use tonic::metadata::{Ascii, MetadataValue};
use tonic::{Request, Response, Status};

use crate::server::call::{Answer, Binding, Context, EXTENSIONS_HEADER, Failure, Op, unexpected};
use crate::server::lifecycle::Calls;
use crate::server::store::Event;

/// The gRPC service's path prefix.
pub(crate) const SERVICE_PATH: &str = "/lf.a2a.v1.A2AService";

/// The routes of the gRPC binding over `calls`, with messages limited to `body_limit` bytes.
pub(crate) fn router(calls: Arc<dyn Calls>, body_limit: usize) -> axum::Router {
    let service = A2aServiceServer::new(Grpc(calls)).max_decoding_message_size(body_limit);
    axum::Router::new()
        .route_service(&format!("{SERVICE_PATH}/{{*method}}"), service)
        .layer(axum::middleware::from_fn(telemetry))
}

/// The request's span names its method (the path's last segment); the answer is a failed call
/// when its status says so.
async fn telemetry(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    // The service's methods are the 1.0 methods, by the same names.
    use a2a::methods::*;
    let path = request.uri().path();
    let method = [
        SEND_MESSAGE,
        SEND_STREAMING_MESSAGE,
        GET_TASK,
        LIST_TASKS,
        CANCEL_TASK,
        SUBSCRIBE_TO_TASK,
        CREATE_PUSH_CONFIG,
        GET_PUSH_CONFIG,
        LIST_PUSH_CONFIGS,
        DELETE_PUSH_CONFIG,
        GET_EXTENDED_AGENT_CARD,
    ]
    .into_iter()
    .find(|m| path.strip_suffix(m).is_some_and(|p| p.ends_with('/')))
    .unwrap_or("unknown");
    crate::server::telemetry::method(Binding::Grpc.names(), method, "1.0");
    let mut response = next.run(request).await;
    crate::server::telemetry::called(&mut response, method);
    let status = response.headers().get("grpc-status");
    if status.is_some_and(|s| s.as_bytes() != b"0") {
        crate::server::telemetry::failed(&mut response);
    }
    response
}

/// The service: each method one call.
struct Grpc(Arc<dyn Calls>);

type Events = Pin<Box<dyn Stream<Item = Result<proto::StreamResponse, Status>> + Send>>;

impl Grpc {
    /// Answers `op`, called with `request`'s metadata and the authentication layer's word;
    /// with the answer, the extensions it used (for its `a2a-extensions` metadata).
    async fn call<T>(&self, request: &Request<T>, op: Op) -> Result<(Answer, Used), Status> {
        let ctx = Context::of(
            Binding::Grpc,
            request.metadata().as_ref(),
            request.extensions(),
        )
        .map_err(|refusal| refusal.grpc())?;
        let answered = self
            .0
            .call(&ctx, op)
            .await
            .map_err(|failure| match failure {
                Failure::Error(e) => a2a_error_to_status(&e),
                Failure::Refused(refusal) => refusal.grpc(),
            })?;
        let used = answered
            .used
            .header()
            .and_then(|v| MetadataValue::try_from(v.as_bytes()).ok());
        Ok((answered.answer, used))
    }
}

fn status(e: A2AError) -> Status {
    a2a_error_to_status(&e)
}

/// The extensions an answer used, as the metadata `a2a-extensions`.
type Used = Option<MetadataValue<Ascii>>;

/// `message` as the answer, naming the extensions it used.
fn respond<T>(message: T, used: Used) -> Response<T> {
    let mut response = Response::new(message);
    if let Some(used) = used {
        response.metadata_mut().insert(EXTENSIONS_HEADER, used);
    }
    response
}

fn task((answer, used): (Answer, Used)) -> Result<Response<proto::Task>, Status> {
    match answer {
        Answer::Task(task) => Ok(respond(pbconv::to_proto_task(&task), used)),
        _ => Err(status(unexpected())),
    }
}

fn config(
    (answer, used): (Answer, Used),
) -> Result<Response<proto::TaskPushNotificationConfig>, Status> {
    match answer {
        Answer::Config(c) => Ok(respond(
            pbconv::to_proto_task_push_notification_config(&c),
            used,
        )),
        _ => Err(status(unexpected())),
    }
}

fn events((answer, used): (Answer, Used)) -> Result<Response<Events>, Status> {
    let Answer::Stream(events) = answer else {
        return Err(status(unexpected()));
    };
    let events = events.map(
        |event: Result<(Option<u64>, Arc<Event>), A2AError>| match event {
            Ok((_, event)) => event
                .event()
                .map(|event| pbconv::to_proto_stream_response(&event))
                .map_err(status),
            Err(e) => Err(status(e)),
        },
    );
    Ok(respond(Box::pin(events), used))
}

#[tonic::async_trait]
impl A2aService for Grpc {
    async fn send_message(
        &self,
        request: Request<proto::SendMessageRequest>,
    ) -> Result<Response<proto::SendMessageResponse>, Status> {
        let op = Op::Send(pbconv::from_proto_send_message_request(request.get_ref()));
        match self.call(&request, op).await? {
            (Answer::Sent(sent), used) => {
                Ok(respond(pbconv::to_proto_send_message_response(&sent), used))
            }
            _ => Err(status(unexpected())),
        }
    }

    type SendStreamingMessageStream = Events;

    async fn send_streaming_message(
        &self,
        request: Request<proto::SendMessageRequest>,
    ) -> Result<Response<Events>, Status> {
        let op = Op::Stream(pbconv::from_proto_send_message_request(request.get_ref()));
        events(self.call(&request, op).await?)
    }

    async fn get_task(
        &self,
        request: Request<proto::GetTaskRequest>,
    ) -> Result<Response<proto::Task>, Status> {
        let op = Op::Get(pbconv::from_proto_get_task_request(request.get_ref()));
        task(self.call(&request, op).await?)
    }

    async fn list_tasks(
        &self,
        request: Request<proto::ListTasksRequest>,
    ) -> Result<Response<proto::ListTasksResponse>, Status> {
        let op = Op::List(pbconv::from_proto_list_tasks_request(request.get_ref()));
        match self.call(&request, op).await? {
            (Answer::Tasks(list), used) => {
                Ok(respond(pbconv::to_proto_list_tasks_response(&list), used))
            }
            _ => Err(status(unexpected())),
        }
    }

    async fn cancel_task(
        &self,
        request: Request<proto::CancelTaskRequest>,
    ) -> Result<Response<proto::Task>, Status> {
        let op = Op::Cancel(pbconv::from_proto_cancel_task_request(request.get_ref()));
        task(self.call(&request, op).await?)
    }

    type SubscribeToTaskStream = Events;

    async fn subscribe_to_task(
        &self,
        request: Request<proto::SubscribeToTaskRequest>,
    ) -> Result<Response<Events>, Status> {
        let op = Op::Subscribe(pbconv::from_proto_subscribe_to_task_request(
            request.get_ref(),
        ));
        events(self.call(&request, op).await?)
    }

    async fn create_task_push_notification_config(
        &self,
        request: Request<proto::TaskPushNotificationConfig>,
    ) -> Result<Response<proto::TaskPushNotificationConfig>, Status> {
        let op = Op::CreateConfig(
            pbconv::from_proto_create_task_push_notification_config_request(request.get_ref()),
        );
        config(self.call(&request, op).await?)
    }

    async fn get_task_push_notification_config(
        &self,
        request: Request<proto::GetTaskPushNotificationConfigRequest>,
    ) -> Result<Response<proto::TaskPushNotificationConfig>, Status> {
        let op = Op::GetConfig(
            pbconv::from_proto_get_task_push_notification_config_request(request.get_ref()),
        );
        config(self.call(&request, op).await?)
    }

    async fn list_task_push_notification_configs(
        &self,
        request: Request<proto::ListTaskPushNotificationConfigsRequest>,
    ) -> Result<Response<proto::ListTaskPushNotificationConfigsResponse>, Status> {
        let op = Op::ListConfigs(
            pbconv::from_proto_list_task_push_notification_configs_request(request.get_ref()),
        );
        match self.call(&request, op).await? {
            (Answer::Configs(list), used) => Ok(respond(
                pbconv::to_proto_list_task_push_notification_configs_response(&list),
                used,
            )),
            _ => Err(status(unexpected())),
        }
    }

    async fn get_extended_agent_card(
        &self,
        request: Request<proto::GetExtendedAgentCardRequest>,
    ) -> Result<Response<proto::AgentCard>, Status> {
        match self.call(&request, Op::ExtendedCard).await? {
            (Answer::Card(card), used) => Ok(respond(pbconv::to_proto_agent_card(&card), used)),
            _ => Err(status(unexpected())),
        }
    }

    async fn delete_task_push_notification_config(
        &self,
        request: Request<proto::DeleteTaskPushNotificationConfigRequest>,
    ) -> Result<Response<()>, Status> {
        let op = Op::DeleteConfig(
            pbconv::from_proto_delete_task_push_notification_config_request(request.get_ref()),
        );
        let (_, used) = self.call(&request, op).await?;
        Ok(respond((), used))
    }
}
