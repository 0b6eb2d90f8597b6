//! The HTTP+JSON binding's methods answered by the request handler with the `a2a` types'
//! serde: sending (blocking and streaming), subscribing (with `Last-Event-ID`) and listing.
//! The other routes, and bodies in a ProtoJSON spelling serde does not read, go on to the
//! official router behind.

use std::collections::HashMap;
use std::sync::Arc;

use a2a::errordetails::{self, TypedDetail};
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
    Send { streaming: bool },
    Subscribe(String),
    List,
}

/// The route of `method path` this layer answers, if any (paths relative to the binding's
/// base, in the spellings the official router takes).
fn route(method: &Method, path: &str) -> Option<Route> {
    let path = path.trim_end_matches('/');
    if *method == Method::POST {
        if path.ends_with("/message:send") || path.ends_with("/message/send") {
            return Some(Route::Send { streaming: false });
        }
        if path.ends_with("/message:stream") || path.ends_with("/message/stream") {
            return Some(Route::Send { streaming: true });
        }
    }
    if *method == Method::GET && (path.ends_with("/tasks") || path == "tasks") {
        return Some(Route::List);
    }
    if *method == Method::GET || *method == Method::POST {
        let (_, task) = path.rsplit_once("/tasks/")?;
        let id = task
            .strip_suffix(":subscribe")
            .or_else(|| task.strip_suffix("/subscribe"))?;
        if !id.is_empty() && !id.contains('/') {
            return Some(Route::Subscribe(id.to_owned()));
        }
    }
    None
}

/// The layer (see the [module docs](self)).
pub(crate) async fn layer(State(rest): State<Arc<Rest>>, request: Request, next: Next) -> Response {
    let Some(route) = route(request.method(), request.uri().path()) else {
        return next.run(request).await;
    };
    let (parts, body) = request.into_parts();
    let service = service_params(&parts.headers);
    let h = &rest.handler;
    match route {
        Route::Send { streaming } => {
            let bytes = match body_limit::read(&parts.headers, body, rest.body_limit).await {
                Ok(bytes) => bytes,
                Err(e @ body_limit::BodyError::TooLarge) => {
                    return body_limit::closing(body_limit::rest_error(e, rest.body_limit));
                }
                Err(e) => return body_limit::rest_error(e, rest.body_limit),
            };
            // A body not declared as JSON: the official router refuses it (`415`), now that
            // the body is read and the connection can carry the next request.
            let value: Option<Value> = is_json(&parts.headers)
                .then(|| serde_json::from_slice(&bytes).ok())
                .flatten();
            if let Some(value) = &value {
                if !value.get("message").is_some_and(Value::is_object) {
                    return error(field_error("message", "is required: the message to send"));
                }
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
        Route::List => {
            let query = match axum::extract::Query::<a2a_server::rest::ListTasksQuery>::try_from_uri(
                &parts.uri,
            ) {
                Ok(axum::extract::Query(query)) => query,
                Err(e) => return error(A2AError::invalid_params(format!("the query: {e}"))),
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
    let mut details: Vec<TypedDetail> = err
        .details
        .unwrap_or_default()
        .into_iter()
        .filter(|d| d.type_url != errordetails::ERROR_INFO_TYPE)
        .collect();
    let metadata = HashMap::from([("timestamp".to_owned(), chrono::Utc::now().to_rfc3339())]);
    details.push(TypedDetail::error_info(
        a2a::errors::error_reason(err.code),
        errordetails::PROTOCOL_DOMAIN,
        Some(metadata),
    ));
    let body = serde_json::json!({"error": {
        "code": status.as_u16(),
        "status": grpc_status(err.code),
        "message": err.message,
        "details": details,
    }});
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    response
}

/// The gRPC status name of an A2A error code (A2A 1.0 section 5.4).
fn grpc_status(code: i32) -> &'static str {
    use a2a::error_code as c;
    match code {
        c::TASK_NOT_FOUND => "NOT_FOUND",
        c::METHOD_NOT_FOUND => "UNIMPLEMENTED",
        c::TASK_NOT_CANCELABLE
        | c::EXTENDED_CARD_NOT_CONFIGURED
        | c::EXTENSION_SUPPORT_REQUIRED
        | c::PUSH_NOTIFICATION_NOT_SUPPORTED
        | c::UNSUPPORTED_OPERATION
        | c::VERSION_NOT_SUPPORTED => "FAILED_PRECONDITION",
        c::CONTENT_TYPE_NOT_SUPPORTED | c::PARSE_ERROR | c::INVALID_REQUEST | c::INVALID_PARAMS => {
            "INVALID_ARGUMENT"
        }
        _ => "INTERNAL",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        let is = |m: Method, p: &str| {
            route(&m, p).map(|r| match r {
                Route::Send { streaming } => format!("send {streaming}"),
                Route::Subscribe(id) => format!("subscribe {id}"),
                Route::List => "list".to_owned(),
            })
        };
        assert_eq!(
            is(Method::POST, "/message:send").as_deref(),
            Some("send false")
        );
        assert_eq!(
            is(Method::POST, "/a2a/message/stream").as_deref(),
            Some("send true")
        );
        assert_eq!(
            is(Method::GET, "/tasks/t1:subscribe").as_deref(),
            Some("subscribe t1")
        );
        assert_eq!(
            is(Method::POST, "/tasks/t1/subscribe").as_deref(),
            Some("subscribe t1")
        );
        assert_eq!(is(Method::GET, "/tasks").as_deref(), Some("list"));
        assert_eq!(is(Method::GET, "/tasks/t1"), None);
        assert_eq!(is(Method::POST, "/tasks/t1:cancel"), None);
        assert_eq!(is(Method::GET, "/tasks/t1/pushNotificationConfigs"), None);
    }
}
