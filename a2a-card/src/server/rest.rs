//! The HTTP+JSON binding (A2A 1.0 section 11): every route answered by the request handler,
//! read and written with the `a2a` types' serde; streams as SSE numbered from the task's event
//! log (`Last-Event-ID` resumes a subscription). A body in a ProtoJSON spelling serde does not
//! read (snake_case names, enum numbers) goes on to the official router behind.

use std::sync::Arc;

use a2a::{A2AError, ListTasksRequest, SendMessageRequest, SubscribeToTaskRequest, TaskState};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::Value;

use super::body_limit;
use super::exact;
use super::jsonrpc::{is_json, last_event_id, service_params, sse};
use super::lifecycle::{Numbered, field_error};

/// What the layer answers with.
pub(crate) struct Rest {
    pub(crate) handler: Arc<dyn Numbered>,
    pub(crate) body_limit: usize,
}

/// The routes this layer answers.
enum Route {
    Send {
        streaming: bool,
    },
    Subscribe(String),
    List,
    Get(String),
    Cancel(String),
    /// Create (`POST`) or list (`GET`) a task's push-notification configs.
    Configs(String),
    /// Get (`GET`) or delete (`DELETE`) one.
    Config(String, String),
    Extended,
}

impl Route {
    /// The protocol method the route calls.
    fn method(&self, http: &Method) -> &'static str {
        match self {
            Route::Send { streaming: false } => "SendMessage",
            Route::Send { streaming: true } => "SendStreamingMessage",
            Route::Subscribe(_) => "SubscribeToTask",
            Route::List => "ListTasks",
            Route::Get(_) => "GetTask",
            Route::Cancel(_) => "CancelTask",
            Route::Configs(_) if *http == Method::POST => "CreateTaskPushNotificationConfig",
            Route::Configs(_) => "ListTaskPushNotificationConfigs",
            Route::Config(..) if *http == Method::DELETE => "DeleteTaskPushNotificationConfig",
            Route::Config(..) => "GetTaskPushNotificationConfig",
            Route::Extended => "GetExtendedAgentCard",
        }
    }
}

/// The route of `method path` this layer answers, if any (paths relative to the binding's
/// base, in the spellings the official router takes).
fn route(method: &Method, path: &str) -> Option<Route> {
    let path = path.trim_end_matches('/');
    let (get, post, delete) = (
        *method == Method::GET,
        *method == Method::POST,
        *method == Method::DELETE,
    );
    if post {
        if path.ends_with("/message:send") || path.ends_with("/message/send") {
            return Some(Route::Send { streaming: false });
        }
        if path.ends_with("/message:stream") || path.ends_with("/message/stream") {
            return Some(Route::Send { streaming: true });
        }
    }
    if get && (path.ends_with("/extendedAgentCard") || path.ends_with("/agent-card/extended")) {
        return Some(Route::Extended);
    }
    if get && (path.ends_with("/tasks") || path == "tasks") {
        return Some(Route::List);
    }
    let (_, rest) = path.rsplit_once("/tasks/")?;
    let segments: Vec<&str> = rest.split('/').collect();
    let configs = |s: &str| s == "pushNotificationConfigs" || s == "push-configs";
    match segments.as_slice() {
        [task] if get || post => {
            if let Some(id) = task.strip_suffix(":subscribe") {
                return Some(Route::Subscribe(id.to_owned()));
            }
            if let Some(id) = task.strip_suffix(":cancel") {
                return post.then(|| Route::Cancel(id.to_owned()));
            }
            get.then(|| Route::Get((*task).to_owned()))
        }
        [task, "subscribe"] if get || post => Some(Route::Subscribe((*task).to_owned())),
        [task, "cancel"] if post => Some(Route::Cancel((*task).to_owned())),
        [task, c] if configs(c) && (get || post) => Some(Route::Configs((*task).to_owned())),
        [task, c, id] if configs(c) && (get || delete) => {
            Some(Route::Config((*task).to_owned(), (*id).to_owned()))
        }
        _ => None,
    }
    .filter(|route| match route {
        Route::Subscribe(id) | Route::Get(id) | Route::Cancel(id) | Route::Configs(id) => {
            !id.is_empty()
        }
        _ => true,
    })
}

/// A query string's parameters, as the HTTP+JSON binding names them.
#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct PageQuery {
    history_length: Option<i32>,
    page_size: Option<i32>,
    page_token: Option<String>,
}

/// The layer (see the [module docs](self)).
pub(crate) async fn layer(State(rest): State<Arc<Rest>>, request: Request, next: Next) -> Response {
    let Some(route) = route(request.method(), request.uri().path()) else {
        return next.run(request).await;
    };
    super::telemetry::method("HTTP+JSON", "http", route.method(request.method()), "1.0");
    let (parts, body) = request.into_parts();
    let service = service_params(&parts.headers);
    let h = &rest.handler;
    match route {
        Route::Send { streaming } => {
            let bytes = match read(&parts.headers, body, rest.body_limit).await {
                Ok(bytes) => bytes,
                Err(refusal) => return refusal,
            };
            // A body not declared as JSON: the official router refuses it (`415`), now that
            // the body is read and the connection can carry the next request.
            let value: Option<Value> = is_json(&parts.headers)
                .then(|| serde_json::from_slice(&bytes).ok())
                .flatten();
            if let Some(value) = &value
                && !value.get("message").is_some_and(Value::is_object)
            {
                return error(field_error("message", "is required: the message to send"));
            }
            let request = value.and_then(|v| serde_json::from_value::<SendMessageRequest>(v).ok());
            let Some(request) = request else {
                // Not read here: the official router reads (or refuses) it.
                return next
                    .run(Request::from_parts(parts, Body::from(bytes)))
                    .await;
            };
            if streaming {
                match h.send_streaming_numbered(&service, request).await {
                    Ok(events) => sse(events, write_event),
                    Err(e) => error(e),
                }
            } else {
                match exact::plain(h.send_message(&service, request)).await {
                    Ok(answer) => json(&answer),
                    Err(e) => error(e),
                }
            }
        }
        Route::Subscribe(id) => {
            let request = SubscribeToTaskRequest { id, tenant: None };
            match h
                .subscribe_numbered(&service, request, last_event_id(&parts.headers))
                .await
            {
                Ok(events) => sse(events, write_event),
                Err(e) => error(e),
            }
        }
        Route::Get(id) => {
            let query = query::<PageQuery>(&parts.uri).unwrap_or_default();
            let request = a2a::GetTaskRequest {
                id,
                history_length: query.history_length,
                tenant: None,
            };
            answer(exact::plain(h.get_task(&service, request)).await)
        }
        Route::Cancel(id) => {
            let request = a2a::CancelTaskRequest {
                id,
                metadata: None,
                tenant: None,
            };
            answer(exact::plain(h.cancel_task(&service, request)).await)
        }
        Route::Configs(task_id) if parts.method == Method::GET => {
            let query = query::<PageQuery>(&parts.uri).unwrap_or_default();
            let request = a2a::ListTaskPushNotificationConfigsRequest {
                task_id,
                page_size: query.page_size,
                page_token: query.page_token,
                tenant: None,
            };
            answer(h.list_push_configs(&service, request).await)
        }
        Route::Configs(task_id) => {
            let bytes = match read(&parts.headers, body, rest.body_limit).await {
                Ok(bytes) => bytes,
                Err(refusal) => return refusal,
            };
            let config = is_json(&parts.headers)
                .then(|| serde_json::from_slice::<a2a::TaskPushNotificationConfig>(&bytes).ok())
                .flatten();
            let Some(mut config) = config else {
                return next
                    .run(Request::from_parts(parts, Body::from(bytes)))
                    .await;
            };
            if !config.task_id.is_empty() && config.task_id != task_id {
                return error(field_error(
                    "taskId",
                    format!(
                        "is `{}`, and the path names task `{task_id}`",
                        config.task_id
                    ),
                ));
            }
            config.task_id = task_id;
            answer(h.create_push_config(&service, config).await)
        }
        Route::Config(task_id, id) => {
            if parts.method == Method::DELETE {
                let request = a2a::DeleteTaskPushNotificationConfigRequest {
                    task_id,
                    id,
                    tenant: None,
                };
                return match h.delete_push_config(&service, request).await {
                    Ok(()) => Response::new(Body::empty()),
                    Err(e) => error(e),
                };
            }
            let request = a2a::GetTaskPushNotificationConfigRequest {
                task_id,
                id,
                tenant: None,
            };
            answer(h.get_push_config(&service, request).await)
        }
        Route::Extended => {
            let request = a2a::GetExtendedAgentCardRequest { tenant: None };
            answer(h.get_extended_agent_card(&service, request).await)
        }
        Route::List => {
            let query = match query::<a2a_server::rest::ListTasksQuery>(&parts.uri) {
                Ok(query) => query,
                Err(e) => return error(e),
            };
            let status = match query.status {
                None => None,
                Some(s) => match serde_json::from_value::<TaskState>(Value::String(s.clone())) {
                    Ok(state) => Some(state),
                    Err(_) => {
                        return error(field_error(
                            "status",
                            format!("`{s}` is not a task state (TASK_STATE_WORKING, ...)"),
                        ));
                    }
                },
            };
            let request = ListTasksRequest {
                context_id: query.context_id,
                status,
                page_size: query.page_size,
                page_token: query.page_token,
                history_length: query.history_length,
                status_timestamp_after: query.status_timestamp_after,
                include_artifacts: query.include_artifacts,
                tenant: None,
            };
            match exact::plain(h.list_tasks(&service, request)).await {
                Ok(list) => json(&list),
                Err(e) => error(e),
            }
        }
    }
}

/// The request body, read within the limit; the refusal otherwise.
async fn read(
    headers: &axum::http::HeaderMap,
    body: Body,
    limit: usize,
) -> Result<axum::body::Bytes, Response> {
    match body_limit::read(headers, body, limit).await {
        Ok(bytes) => Ok(bytes),
        Err(e @ body_limit::BodyError::TooLarge) => {
            Err(body_limit::closing(body_limit::rest_error(e, limit)))
        }
        Err(e) => Err(body_limit::rest_error(e, limit)),
    }
}

/// The query string's parameters, or an invalid-params error saying what was wrong.
fn query<T: serde::de::DeserializeOwned>(uri: &axum::http::Uri) -> Result<T, A2AError> {
    axum::extract::Query::<T>::try_from_uri(uri)
        .map(|axum::extract::Query(query)| query)
        .map_err(|e| A2AError::invalid_params(format!("the query string: {e}")))
}

/// A handler's answer: the value, or the error.
fn answer<T: serde::Serialize>(result: Result<T, A2AError>) -> Response {
    match result {
        Ok(value) => json(&value),
        Err(e) => error(e),
    }
}

/// One stream event's `data`: the event, or the error that ends the stream.
fn write_event(event: Result<a2a::StreamResponse, A2AError>) -> String {
    let body = match event {
        Ok(event) => serde_json::to_string(&event),
        Err(e) => serde_json::to_string(&e.to_jsonrpc_error()),
    };
    // The `a2a` types always serialise.
    body.unwrap_or_default()
}

/// A success answer, as the A2A media type.
fn json(value: &impl serde::Serialize) -> Response {
    let mut response = Response::new(Body::from(serde_json::to_vec(value).unwrap_or_default()));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/a2a+json"),
    );
    response
}

/// An error answer: a `google.rpc.Status` (its HTTP status, the gRPC status name, the
/// message, the error's details and an `ErrorInfo` naming the A2A reason), as
/// `application/problem+json`.
pub(crate) fn error(err: A2AError) -> Response {
    let status =
        StatusCode::from_u16(err.http_status_code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    super::errors::rest_status(status, err)
}

/// The HTTP+JSON routes' outer layer: every error answer is a `google.rpc.Status` (A2A 1.0
/// section 11.6), whoever wrote it: an answer of the framework's own that is not JSON (a body
/// that does not parse, a missing content type, an unknown route or method), written as text,
/// is written again as one, with its status and its text as the message.
pub(crate) async fn status_json(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 16 * 1024)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let message = match text.trim() {
        "" => status.canonical_reason().unwrap_or("refused").to_owned(),
        text => text.to_owned(),
    };
    use a2a::error_code as c;
    let code = match status {
        StatusCode::BAD_REQUEST => c::PARSE_ERROR,
        StatusCode::UNPROCESSABLE_ENTITY => c::INVALID_PARAMS,
        StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED => c::METHOD_NOT_FOUND,
        s if s.is_client_error() => c::INVALID_REQUEST,
        _ => c::INTERNAL_ERROR,
    };
    let mut answer = super::errors::rest_status(status, A2AError::new(code, message));
    // What else the framework said of the connection or the method stays.
    for name in [header::CONNECTION, header::ALLOW] {
        if let Some(value) = parts.headers.get(&name) {
            answer.headers_mut().insert(name, value.clone());
        }
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is(m: Method, p: &str) -> Option<String> {
        route(&m, p).map(|r| match r {
            Route::Send { streaming } => format!("send {streaming}"),
            Route::Subscribe(id) => format!("subscribe {id}"),
            Route::List => "list".to_owned(),
            Route::Get(id) => format!("get {id}"),
            Route::Cancel(id) => format!("cancel {id}"),
            Route::Configs(id) => format!("configs {id}"),
            Route::Config(t, id) => format!("config {t} {id}"),
            Route::Extended => "extended".to_owned(),
        })
    }

    #[test]
    fn routes() {
        for (method, path, route) in [
            (Method::POST, "/message:send", Some("send false")),
            (Method::POST, "/a2a/message/stream", Some("send true")),
            (Method::GET, "/tasks/t1:subscribe", Some("subscribe t1")),
            (Method::POST, "/tasks/t1/subscribe", Some("subscribe t1")),
            (Method::GET, "/tasks", Some("list")),
            (Method::GET, "/tasks/t1", Some("get t1")),
            (Method::POST, "/tasks/t1:cancel", Some("cancel t1")),
            (Method::POST, "/tasks/t1/cancel", Some("cancel t1")),
            (Method::GET, "/tasks/t1:cancel", None),
            (
                Method::POST,
                "/tasks/t1/pushNotificationConfigs",
                Some("configs t1"),
            ),
            (
                Method::DELETE,
                "/tasks/t1/push-configs/c1",
                Some("config t1 c1"),
            ),
            (Method::GET, "/extendedAgentCard", Some("extended")),
            (Method::PUT, "/tasks/t1", None),
            (Method::GET, "/tasks/t1/other", None),
        ] {
            assert_eq!(
                is(method.clone(), path).as_deref(),
                route,
                "{method} {path}"
            );
        }
    }
}
