//! The HTTP+JSON binding (A2A 1.0 section 11): each route decoded into a
//! [call](crate::server::call) (bodies in any ProtoJSON spelling, query parameters in camelCase or
//! snake_case), answered, and written with the `a2a` types' serde; streams as SSE numbered from
//! the task's event log (`Last-Event-ID` resumes a subscription). Every error, of every route,
//! is a `google.rpc.Status` (section 11.6).

use std::sync::Arc;

use a2a::{A2AError, TaskState};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::body::{self, BodyError};
use super::jsonrpc::{is_json, sse};
use super::protojson::{normalize, read, read_text};
use crate::server::auth::Refusal;
use crate::server::call::{
    Answered, Binding, Bound, CallAnswer, EXTENSIONS_HEADER, Failure, Incoming, Op, field_error,
};
use crate::server::errors::{rest_status, rest_status_json};
use crate::server::lifecycle::Lifecycle;
use crate::server::store::Event;

/// The HTTP+JSON binding's state.
pub(crate) struct Rest {
    /// What answers every call.
    pub(crate) lifecycle: Arc<Lifecycle>,
    /// The largest request body.
    pub(crate) body_limit: usize,
}

/// The routes of the binding, by what they call.
#[derive(Debug, PartialEq, Eq)]
enum Route {
    Send { streaming: bool },
    Subscribe(String),
    List,
    Get(String),
    Cancel(String),
    CreateConfig(String),
    ListConfigs(String),
    GetConfig(String, String),
    DeleteConfig(String, String),
    Extended,
}

impl Route {
    /// The route of `method path` (the path relative to the binding's base), if any.
    fn of(method: &Method, path: &str) -> Option<Route> {
        let (get, post, delete) = (
            *method == Method::GET,
            *method == Method::POST,
            *method == Method::DELETE,
        );
        let path = path.trim_end_matches('/');
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let configs = |s: &str| s == "pushNotificationConfigs" || s == "push-configs";
        let task = |id: &str| (!id.is_empty()).then(|| id.to_owned());
        match segments.as_slice() {
            ["message:send"] | ["message", "send"] if post => {
                Some(Route::Send { streaming: false })
            }
            ["message:stream"] | ["message", "stream"] if post => {
                Some(Route::Send { streaming: true })
            }
            ["extendedAgentCard"] | ["agent-card", "extended"] if get => Some(Route::Extended),
            ["tasks"] if get => Some(Route::List),
            ["tasks", id] => {
                if let Some(id) = id.strip_suffix(":subscribe") {
                    return (get || post)
                        .then(|| task(id))
                        .flatten()
                        .map(Route::Subscribe);
                }
                if let Some(id) = id.strip_suffix(":cancel") {
                    return post.then(|| task(id)).flatten().map(Route::Cancel);
                }
                get.then(|| task(id)).flatten().map(Route::Get)
            }
            ["tasks", id, "subscribe"] if get || post => task(id).map(Route::Subscribe),
            ["tasks", id, "cancel"] if post => task(id).map(Route::Cancel),
            ["tasks", id, c] if configs(c) && post => task(id).map(Route::CreateConfig),
            ["tasks", id, c] if configs(c) && get => task(id).map(Route::ListConfigs),
            ["tasks", id, c, config] if configs(c) && get => {
                task(id).map(|id| Route::GetConfig(id, (*config).to_owned()))
            }
            ["tasks", id, c, config] if configs(c) && delete => {
                task(id).map(|id| Route::DeleteConfig(id, (*config).to_owned()))
            }
            _ => None,
        }
    }

    /// The route of `method path` and the tenant the path names first, if it does
    /// (`/{tenant}/message:send`, A2A 1.0 section 11).
    fn in_tenant(method: &Method, path: &str) -> Option<(Option<String>, Route)> {
        if let Some(route) = Route::of(method, path) {
            return Some((None, route));
        }
        let (tenant, rest) = path.trim_start_matches('/').split_once('/')?;
        let route = Route::of(method, rest)?;
        Some((Some(tenant.to_owned()), route))
    }

    /// The HTTP methods `path` has a route for (for a `405`'s `Allow`).
    fn allowed(path: &str) -> Vec<&'static str> {
        [Method::GET, Method::POST, Method::DELETE]
            .into_iter()
            .filter(|m| Route::in_tenant(m, path).is_some())
            .map(|m| match m {
                Method::GET => "GET",
                Method::POST => "POST",
                _ => "DELETE",
            })
            .collect()
    }

    /// Whether the route reads a body.
    fn has_body(&self) -> bool {
        matches!(self, Route::Send { .. } | Route::CreateConfig(_))
    }
}

/// A query string's parameters, as the HTTP+JSON binding names them (in camelCase, or in
/// snake_case as ProtoJSON allows).
#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Query {
    #[serde(alias = "history_length")]
    history_length: Option<i32>,
    #[serde(alias = "page_size")]
    page_size: Option<i32>,
    #[serde(alias = "page_token")]
    page_token: Option<String>,
    #[serde(alias = "context_id")]
    context_id: Option<String>,
    status: Option<String>,
    #[serde(alias = "status_timestamp_after")]
    status_timestamp_after: Option<chrono::DateTime<chrono::Utc>>,
    #[serde(alias = "include_artifacts")]
    include_artifacts: Option<bool>,
}

impl Bound for Arc<Rest> {
    const BINDING: Binding = Binding::HttpJson;
}

/// Answers every request of the binding (see the [module docs](self)).
pub(crate) async fn endpoint(
    State(rest): State<Arc<Rest>>,
    Incoming(ctx): Incoming,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let Some((tenant, route)) = Route::in_tenant(&parts.method, parts.uri.path()) else {
        let allowed = Route::allowed(parts.uri.path());
        if allowed.is_empty() {
            return rest_status(
                StatusCode::NOT_FOUND,
                A2AError::new(
                    a2a::error_code::METHOD_NOT_FOUND,
                    format!(
                        "no HTTP+JSON route at {} {}",
                        parts.method,
                        parts.uri.path()
                    ),
                ),
            );
        }
        let mut response = rest_status(
            StatusCode::METHOD_NOT_ALLOWED,
            A2AError::new(
                a2a::error_code::METHOD_NOT_FOUND,
                format!(
                    "{} is not a method of {}: it takes {}",
                    parts.method,
                    parts.uri.path(),
                    allowed.join(", ")
                ),
            ),
        );
        if let Ok(allow) = HeaderValue::from_str(&allowed.join(", ")) {
            response.headers_mut().insert(header::ALLOW, allow);
        }
        return response;
    };
    // Before anything is done with the request: the card's requirement.
    let mut ctx = match ctx {
        Ok(ctx) => ctx,
        Err(refusal) => return refused(&refusal),
    };
    ctx.tenant = tenant;
    let body = match route.has_body() {
        true => match read_body(&parts.headers, body, rest.body_limit).await {
            Ok(body) => body,
            Err(refusal) => return refusal,
        },
        false => Bytes::new(),
    };
    // A message in the 1.0 spelling is read straight into its type; anything else the
    // careful way, which says what is wrong and where.
    let fast = match &route {
        Route::Send { streaming } => std::str::from_utf8(&body)
            .ok()
            .and_then(read_text::<a2a::SendMessageRequest>)
            .map(|request| match streaming {
                true => Op::Stream(request),
                false => Op::Send(request),
            }),
        _ => None,
    };
    let op = match fast {
        Some(op) => Ok(op),
        None => route
            .has_body()
            .then(|| json_of(&body))
            .transpose()
            .and_then(|body| decode(route, body.unwrap_or_default(), &parts.uri)),
    };
    match op {
        Ok(op) => match rest.lifecycle.dispatch(&ctx, op).await {
            Ok(Answered { answer, used }) => {
                let response = match answer {
                    CallAnswer::Stream(events) => sse(events, write_event),
                    CallAnswer::Deleted => Response::new(Body::empty()),
                    answer => json(&answer),
                };
                used.name_in(response, EXTENSIONS_HEADER)
            }
            Err(Failure::Error(e)) => error(e),
            Err(Failure::Refused(refusal)) => refused(&refusal),
        },
        Err(e) => error(e),
    }
}

/// The call of `route`, with its body (already read where it has one) and query string.
fn decode(route: Route, body: Value, uri: &axum::http::Uri) -> Result<Op, A2AError> {
    let query = || -> Result<Query, A2AError> {
        axum::extract::Query::<Query>::try_from_uri(uri)
            .map(|axum::extract::Query(query)| query)
            .map_err(|e| A2AError::invalid_params(format!("the query string: {e}")))
    };
    Ok(match route {
        Route::Send { streaming } => {
            if !body.get("message").is_some_and(Value::is_object) {
                return Err(field_error("message", "is required: the message to send"));
            }
            let request = read(body)?;
            if streaming {
                Op::Stream(request)
            } else {
                Op::Send(request)
            }
        }
        Route::Subscribe(id) => Op::Subscribe(a2a::SubscribeToTaskRequest { id, tenant: None }),
        Route::Get(id) => Op::Get(a2a::GetTaskRequest {
            id,
            history_length: query()?.history_length,
            tenant: None,
        }),
        Route::Cancel(id) => Op::Cancel(a2a::CancelTaskRequest {
            id,
            metadata: None,
            tenant: None,
        }),
        Route::List => {
            let query = query()?;
            let status = match query.status {
                None => None,
                Some(s) => Some(state(&s).ok_or_else(|| {
                    field_error(
                        "status",
                        format!("`{s}` is not a task state (TASK_STATE_WORKING, ...)"),
                    )
                })?),
            };
            Op::List(a2a::ListTasksRequest {
                context_id: query.context_id,
                status,
                page_size: query.page_size,
                page_token: query.page_token,
                history_length: query.history_length,
                status_timestamp_after: query.status_timestamp_after,
                include_artifacts: query.include_artifacts,
                tenant: None,
            })
        }
        Route::CreateConfig(task_id) => {
            let mut config: a2a::TaskPushNotificationConfig = read(body)?;
            if !config.task_id.is_empty() && config.task_id != task_id {
                return Err(field_error(
                    "taskId",
                    format!(
                        "is `{}`, and the path names task `{task_id}`",
                        config.task_id
                    ),
                ));
            }
            config.task_id = task_id;
            Op::CreateConfig(config)
        }
        Route::ListConfigs(task_id) => {
            let query = query()?;
            Op::ListConfigs(a2a::ListTaskPushNotificationConfigsRequest {
                task_id,
                page_size: query.page_size,
                page_token: query.page_token,
                tenant: None,
            })
        }
        Route::GetConfig(task_id, id) => Op::GetConfig(a2a::GetTaskPushNotificationConfigRequest {
            task_id,
            id,
            tenant: None,
        }),
        Route::DeleteConfig(task_id, id) => {
            Op::DeleteConfig(a2a::DeleteTaskPushNotificationConfigRequest {
                task_id,
                id,
                tenant: None,
            })
        }
        Route::Extended => Op::ExtendedCard,
    })
}

/// A task state by its name or (ProtoJSON) its number.
fn state(s: &str) -> Option<TaskState> {
    let mut value = json!({"state": s.parse::<u64>().map_or_else(|_| json!(s), |n| json!(n))});
    normalize(&mut value);
    serde_json::from_value(value["state"].take()).ok()
}

/// The request body, within the limit and declared as JSON; the refusal otherwise (`415` not
/// declared as JSON, `413` too large).
async fn read_body(
    headers: &axum::http::HeaderMap,
    body: Body,
    limit: usize,
) -> Result<Bytes, Response> {
    let bytes: Bytes = match body::read(headers, body, limit).await {
        Ok(bytes) => bytes,
        Err(e @ BodyError::TooLarge) => {
            return Err(body::closing(body::rest_error(e, limit)));
        }
        Err(e) => return Err(body::rest_error(e, limit)),
    };
    // Refused only once the body is read, so that the connection carries the next request.
    if !is_json(headers) {
        return Err(rest_status(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            A2AError::invalid_request(
                "an HTTP+JSON request body is sent with `Content-Type: application/json`",
            ),
        ));
    }
    Ok(bytes)
}

/// A request body as JSON in the spelling the `a2a` types read ([`normalize`]); why not
/// (`400`: not JSON, or not an object).
fn json_of(bytes: &[u8]) -> Result<Value, A2AError> {
    let mut value: Value = serde_json::from_slice(bytes).map_err(|e| {
        A2AError::new(
            a2a::error_code::PARSE_ERROR,
            format!("the request body is not JSON: {e}"),
        )
    })?;
    if !value.is_object() {
        return Err(A2AError::invalid_request(
            "the request body is a JSON object",
        ));
    }
    normalize(&mut value);
    Ok(value)
}

/// One stream event's `data`: the event, or the error that ends the stream.
fn write_event(data: &mut String, event: Result<Arc<Event>, A2AError>) {
    match event {
        // Its JSON, made once, shared with the log and the webhooks.
        Ok(event) => data.push_str(event.json()),
        // The error as an answer would carry it (the official SDKs' shape of an `error` event).
        Err(e) => data.push_str(&rest_status_json(http_status(&e), e)),
    }
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

/// An error answer: a `google.rpc.Status` with the error's HTTP status.
pub(crate) fn error(err: A2AError) -> Response {
    rest_status(http_status(&err), err)
}

/// The HTTP status of an error.
fn http_status(err: &A2AError) -> StatusCode {
    StatusCode::from_u16(err.http_status_code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// The HTTP+JSON answer of a request `refusal` refused: a `google.rpc.Status`, as every
/// HTTP+JSON error, with the refusal's status, challenges and `Retry-After`.
fn refused(refusal: &Refusal) -> Response {
    let (_, status) = refusal.canonical();
    let body = json!({"error": {
        "code": refusal.status().as_u16(),
        "status": status,
        "message": refusal.message(),
        "details": [refusal.error_info()],
    }});
    let mut response = Response::new(Body::from(body.to_string()));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    refusal.over_http(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        use Route::*;
        let s = |s: &str| s.to_owned();
        for (method, path, route) in [
            (
                Method::POST,
                "/message:send",
                Some(Send { streaming: false }),
            ),
            (
                Method::POST,
                "/message/stream",
                Some(Send { streaming: true }),
            ),
            (Method::GET, "/tasks/t1:subscribe", Some(Subscribe(s("t1")))),
            (
                Method::POST,
                "/tasks/t1/subscribe",
                Some(Subscribe(s("t1"))),
            ),
            (Method::GET, "/tasks", Some(List)),
            (Method::GET, "/tasks/", Some(List)),
            (Method::GET, "/tasks/t1", Some(Get(s("t1")))),
            (Method::POST, "/tasks/t1:cancel", Some(Cancel(s("t1")))),
            (Method::POST, "/tasks/t1/cancel", Some(Cancel(s("t1")))),
            (Method::GET, "/tasks/t1:cancel", None),
            (
                Method::POST,
                "/tasks/t1/pushNotificationConfigs",
                Some(CreateConfig(s("t1"))),
            ),
            (
                Method::DELETE,
                "/tasks/t1/push-configs/c1",
                Some(DeleteConfig(s("t1"), s("c1"))),
            ),
            (Method::GET, "/extendedAgentCard", Some(Extended)),
            (Method::PUT, "/tasks/t1", None),
            (Method::GET, "/tasks/t1/other", None),
            (Method::GET, "/tasks/:cancel", None),
            // A path under a tenant is not one of these routes (see `in_tenant`).
            (Method::POST, "/acme/message:send", None),
        ] {
            assert_eq!(Route::of(&method, path), route, "{method} {path}");
        }
        assert_eq!(Route::allowed("/tasks/t1"), ["GET"]);
        assert!(Route::allowed("/nowhere").is_empty());
        let (tenant, route) = Route::in_tenant(&Method::GET, "/acme/tasks/acme:t1").unwrap();
        assert_eq!(
            (tenant.as_deref(), route),
            (Some("acme"), Get(s("acme:t1")))
        );
        assert!(Route::in_tenant(&Method::POST, "/a/b/message:send").is_none());
        assert_eq!(Route::allowed("/acme/tasks/t1"), ["GET"]);
    }

    #[test]
    fn a_state_is_read_by_name_or_number() {
        assert_eq!(state("TASK_STATE_WORKING"), Some(TaskState::Working));
        assert_eq!(state("2"), Some(TaskState::Working));
        assert_eq!(state("working"), None);
    }
}
