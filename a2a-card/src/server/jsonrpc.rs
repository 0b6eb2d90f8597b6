//! The JSON-RPC endpoint: request checks, the A2A 0.3 translation, and every 1.0 method
//! answered with the handler, read and written with the `a2a` types' own serde ([`call`]);
//! streams as SSE whose event ids are the events' numbers in their task's log, so that a
//! subscriber that reconnects with `Last-Event-ID` gets exactly the events after it.

use std::sync::Arc;

use a2a::{A2AError, JsonRpcId, JsonRpcResponse, StreamResponse, error_code};
use a2a_server::ServiceParams;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::Response;
use serde_json::Value;
use tower::ServiceExt;

use super::auth::{self, Guard};
use super::body_limit::{self, BodyError};
use super::documents::A2A_VERSION_HEADER;
use super::errors::json_response;
use super::exact::{self, MAX_ANSWER_BYTES};
use super::lifecycle::{Numbered, NumberedStream};
use crate::v0_3::{self, Method};

/// The JSON-RPC endpoint.
pub(crate) struct JsonRpc {
    /// The official JSON-RPC router (its one route is `/`).
    pub(crate) inner: axum::Router,
    /// The handler, which answers every method.
    pub(crate) handler: Arc<dyn Numbered>,
    /// The largest request body.
    pub(crate) body_limit: usize,
    /// Whether A2A 0.3 requests are translated.
    pub(crate) v0_3: bool,
    /// The security the card declares, when it declares any.
    pub(crate) guard: Option<Arc<Guard>>,
}

/// An answer to a request that did not reach the handler: a JSON-RPC error with an HTTP
/// status (`200` for every JSON-RPC error, as the official SDKs answer and their clients
/// expect; another status only where the transport refuses the body).
fn refuse(status: StatusCode, id: JsonRpcId, code: i32, message: impl Into<String>) -> Response {
    super::telemetry::failed();
    let error = A2AError::new(code, message).to_jsonrpc_error();
    json_response(status, &JsonRpcResponse::error(id, error))
}

/// Whether the request says its body is JSON (`application/json` or `application/*+json`,
/// with any parameters).
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    use a2a_card_rules::media::{essence_is, type_and_subtype};
    let Some(value) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    essence_is(value, "application/json")
        || type_and_subtype(value).is_some_and(|(t, s)| {
            t.eq_ignore_ascii_case("application")
                && s.len() > 5
                && s.to_ascii_lowercase().ends_with("+json")
        })
}

/// The request's id, when it has a valid one.
fn id_of(request: &Value) -> Option<JsonRpcId> {
    match request.get("id")? {
        Value::String(s) => Some(JsonRpcId::String(s.clone())),
        Value::Number(n) => n.as_i64().map(JsonRpcId::Number),
        Value::Null => Some(JsonRpcId::Null),
        _ => None,
    }
}

/// Whether the `A2A-Version` header asks for 0.3 (absent means 0.3, A2A section 3.6).
fn asks_for_0_3(headers: &HeaderMap) -> bool {
    match headers.get(A2A_VERSION_HEADER).map(|v| v.to_str()) {
        None => true,
        Some(Ok(v)) => {
            let v = v.trim();
            v.is_empty() || v == "0" || v.starts_with("0.")
        }
        Some(Err(_)) => false,
    }
}

/// Handles `POST` on the JSON-RPC path.
pub(crate) async fn endpoint(State(rpc): State<Arc<JsonRpc>>, request: Request) -> Response {
    let (mut parts, body) = request.into_parts();
    if !is_json(&parts.headers) {
        let refusal = refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            JsonRpcId::Null,
            error_code::INVALID_REQUEST,
            "a JSON-RPC request is sent with `Content-Type: application/json`",
        );
        return refusal;
    }
    let bytes = match body_limit::read(&parts.headers, body, rpc.body_limit).await {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge) => {
            return body_limit::closing(refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                JsonRpcId::Null,
                error_code::INVALID_REQUEST,
                body_limit::too_large_message(rpc.body_limit),
            ));
        }
        Err(BodyError::Unreadable) => {
            return refuse(
                StatusCode::OK,
                JsonRpcId::Null,
                error_code::PARSE_ERROR,
                BodyError::Unreadable.message(rpc.body_limit),
            );
        }
    };
    if std::str::from_utf8(&bytes).is_err() {
        return refuse(
            StatusCode::OK,
            JsonRpcId::Null,
            error_code::PARSE_ERROR,
            "parse error: the request body is not valid UTF-8",
        );
    }
    let request: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return refuse(
                StatusCode::OK,
                JsonRpcId::Null,
                error_code::PARSE_ERROR,
                format!("parse error: {e}"),
            );
        }
    };
    let invalid = |id: JsonRpcId, why: &str| {
        refuse(
            StatusCode::OK,
            id,
            error_code::INVALID_REQUEST,
            format!("invalid request: {why}"),
        )
    };
    if request.is_array() {
        return invalid(JsonRpcId::Null, "batch requests are not supported");
    }
    if !request.is_object() {
        return invalid(JsonRpcId::Null, "a JSON-RPC request is a JSON object");
    }
    let Some(id) = id_of(&request) else {
        return invalid(
            JsonRpcId::Null,
            "`id` is required, and is a string, an integer or null",
        );
    };
    if request.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(id, "`jsonrpc` must be \"2.0\"");
    }
    let Some(method) = request.get("method").and_then(Value::as_str) else {
        return invalid(id, "`method` is required, and is a string");
    };
    if let Some(params) = request.get("params")
        && !params.is_object()
        && !params.is_null()
    {
        return invalid(id, "`params` is an object");
    }
    let legacy = Method::parse(method).filter(|_| rpc.v0_3 && asks_for_0_3(&parts.headers));
    let version = if legacy.is_some() { "0.3" } else { "1.0" };
    super::telemetry::method("JSONRPC", "jsonrpc", method, version);
    if legacy.is_none() && !a2a::methods::is_valid(method) {
        return method_not_found(id, method);
    }
    let Some(guard) = &rpc.guard else {
        return route(&rpc, parts, bytes, request, legacy, id).await;
    };
    // Before any task exists: the card's requirement, then the skill's (in the handler).
    match guard.authenticate(&parts).await {
        Ok(principal) => auth::seal(&mut parts.headers, principal.as_ref()),
        Err(refusal) => return refusal.jsonrpc(id),
    }
    let (response, refusal) =
        auth::scoped(route(&rpc, parts, bytes, request, legacy, id.clone())).await;
    match refusal {
        Some(refusal) => refusal.jsonrpc(id),
        None => response,
    }
}

/// The answer to a method that is neither 1.0 nor (translated) 0.3.
fn method_not_found(id: JsonRpcId, method: &str) -> Response {
    let hint = if Method::parse(method).is_some() {
        " (an A2A 0.3 method: send it without an `A2A-Version: 1.0` header, or use its 1.0 name)"
    } else {
        ""
    };
    refuse(
        StatusCode::OK,
        id,
        error_code::METHOD_NOT_FOUND,
        format!(
            "method not found: {}{hint}",
            method.chars().take(64).collect::<String>()
        ),
    )
}

/// Runs a valid request: a 0.3 one translated, a 1.0 one as it is. Every 1.0 method is
/// answered here ([`call`]); the official router only reads params these types do not (other
/// ProtoJSON spellings).
async fn route(
    rpc: &JsonRpc,
    mut parts: axum::http::request::Parts,
    bytes: Bytes,
    mut request: Value,
    legacy: Option<Method>,
    id: JsonRpcId,
) -> Response {
    if let Some(legacy) = legacy {
        return translate(rpc, parts, request, legacy, id).await;
    }
    if let Err(e) = check_version(&parts.headers) {
        return error_response(&id, e);
    }
    let method = request
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let params = request
        .get_mut("params")
        .map(Value::take)
        .unwrap_or(Value::Null);
    let service = service_params(&parts.headers);
    match call(rpc, &service, &parts.headers, &method, params, &id).await {
        Ok(response) => response,
        Err(mut params) => {
            // Params the `a2a` types do not read: the official router reads every ProtoJSON
            // spelling (snake_case names, enum numbers), and its answer's data are spliced
            // back exactly.
            let sends = matches!(
                method.as_str(),
                a2a::methods::SEND_MESSAGE | a2a::methods::SEND_STREAMING_MESSAGE
            );
            parts.uri = Uri::from_static("/");
            if let Some(request) = request.as_object_mut() {
                request.insert("params".to_owned(), params.take());
            }
            let inbound = if sends {
                exact::inbound(&mut request, true, false)
            } else {
                None
            };
            let (message, body) = match inbound {
                Some((message, Some(body))) => {
                    parts.headers.remove(header::CONTENT_LENGTH);
                    (Some(message), Body::from(body))
                }
                Some((message, None)) => (Some(message), Body::from(bytes)),
                None => (None, Body::from(bytes)),
            };
            let response =
                exact::with_inbound(message, forward(rpc, Request::from_parts(parts, body)));
            exact::decode_response(response.await).await
        }
    }
}

/// The `A2A-Version` of a 1.0 request: `1.x` (A2A section 3.6.2: none means 0.3, which only
/// the 0.3 methods are).
fn check_version(headers: &HeaderMap) -> Result<(), A2AError> {
    let requested = headers
        .get(A2A_VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("0.3");
    match requested.trim().split('.').next() {
        Some("1") => Ok(()),
        _ => Err(A2AError::version_not_supported(requested)),
    }
}

/// The request's headers as the handler's service parameters.
pub(crate) fn service_params(headers: &HeaderMap) -> ServiceParams {
    let mut service = ServiceParams::new();
    for (name, value) in headers {
        if let Ok(value) = value.to_str() {
            service
                .entry(name.as_str().to_owned())
                .or_default()
                .push(value.to_owned());
        }
    }
    service
}

/// A successful JSON-RPC answer, written straight from the `a2a` types.
#[derive(serde::Serialize)]
struct Success<'a, T: serde::Serialize> {
    jsonrpc: &'static str,
    id: &'a JsonRpcId,
    result: &'a T,
}

fn error_response(id: &JsonRpcId, e: A2AError) -> Response {
    super::telemetry::failed();
    json_response(
        StatusCode::OK,
        &JsonRpcResponse::error(id.clone(), e.to_jsonrpc_error()),
    )
}

fn answer<T: serde::Serialize>(id: &JsonRpcId, answer: Result<T, A2AError>) -> Response {
    match answer {
        Ok(result) => json_response(
            StatusCode::OK,
            &Success {
                jsonrpc: "2.0",
                id,
                result: &result,
            },
        ),
        Err(e) => error_response(id, e),
    }
}

/// The number of the last event a reconnecting subscriber saw (`Last-Event-ID`).
pub(crate) fn last_event_id(headers: &HeaderMap) -> Option<u64> {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

/// A stream's events as SSE, each with its number in the task's log as its `id` (where it
/// has one), and a comment every 15 s while idle.
pub(crate) fn sse<F>(events: NumberedStream, write: F) -> Response
where
    F: Fn(Result<StreamResponse, A2AError>) -> String + Send + 'static,
{
    use axum::response::IntoResponse;
    use axum::response::sse::{Event, KeepAlive, Sse};
    use futures::StreamExt;
    let frames = events.map(move |event| {
        let (seq, event) = match event {
            Ok((seq, event)) => (seq, Ok(event)),
            Err(e) => (None, Err(e)),
        };
        let frame = Event::default().data(write(event));
        Ok::<_, std::convert::Infallible>(match seq {
            Some(seq) => frame.id(seq.to_string()),
            None => frame,
        })
    });
    Sse::new(frames)
        .keep_alive(KeepAlive::new().interval(std::time::Duration::from_secs(15)))
        .into_response()
}

/// A streaming answer to JSON-RPC request `id`, or its error.
fn stream_answer(id: &JsonRpcId, events: Result<NumberedStream, A2AError>) -> Response {
    let events = match events {
        Ok(events) => events,
        Err(e) => return error_response(id, e),
    };
    let id = id.clone();
    sse(events, move |event| {
        let body = match event {
            Ok(event) => serde_json::to_string(&Success {
                jsonrpc: "2.0",
                id: &id,
                result: &event,
            }),
            Err(e) => {
                serde_json::to_string(&JsonRpcResponse::error(id.clone(), e.to_jsonrpc_error()))
            }
        };
        // The `a2a` types always serialise.
        body.unwrap_or_default()
    })
}

/// Params of type `T`, or `Err` with the params back for the official router.
fn params<T: serde::de::DeserializeOwned>(params: Value) -> Result<T, Value> {
    let params = if params.is_null() {
        Value::Object(Default::default())
    } else {
        params
    };
    T::deserialize(&params).map_err(|_| params)
}

/// Answers a 1.0 method with the handler, the request and answer read and written with the
/// `a2a` types' serde (data exactly as sent and returned, no ProtoJSON round trip); `Err`
/// with the params when these types do not read them.
async fn call(
    rpc: &JsonRpc,
    service: &ServiceParams,
    headers: &HeaderMap,
    method: &str,
    raw: Value,
    id: &JsonRpcId,
) -> Result<Response, Value> {
    use a2a::methods as m;
    let h = &rpc.handler;
    if matches!(method, m::SEND_MESSAGE | m::SEND_STREAMING_MESSAGE)
        && !raw.get("message").is_some_and(Value::is_object)
    {
        return Ok(error_response(
            id,
            super::lifecycle::field_error("message", "is required: the message to send"),
        ));
    }
    Ok(match method {
        m::SEND_MESSAGE => answer(
            id,
            exact::plain(h.send_message(service, params(raw)?)).await,
        ),
        m::SEND_STREAMING_MESSAGE => {
            stream_answer(id, h.send_streaming_numbered(service, params(raw)?).await)
        }
        m::GET_TASK => answer(id, exact::plain(h.get_task(service, params(raw)?)).await),
        m::LIST_TASKS => answer(id, exact::plain(h.list_tasks(service, params(raw)?)).await),
        m::CANCEL_TASK => answer(id, exact::plain(h.cancel_task(service, params(raw)?)).await),
        m::SUBSCRIBE_TO_TASK => stream_answer(
            id,
            h.subscribe_numbered(service, params(raw)?, last_event_id(headers))
                .await,
        ),
        m::CREATE_PUSH_CONFIG => answer(id, h.create_push_config(service, params(raw)?).await),
        m::GET_PUSH_CONFIG => answer(id, h.get_push_config(service, params(raw)?).await),
        m::LIST_PUSH_CONFIGS => answer(id, h.list_push_configs(service, params(raw)?).await),
        m::DELETE_PUSH_CONFIG => answer(
            id,
            h.delete_push_config(service, params(raw)?)
                .await
                .map(|()| Value::Null),
        ),
        m::GET_EXTENDED_AGENT_CARD => {
            answer(id, h.get_extended_agent_card(service, params(raw)?).await)
        }
        other => return Ok(method_not_found(id.clone(), other)),
    })
}

async fn forward(rpc: &JsonRpc, request: Request) -> Response {
    match rpc.inner.clone().oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// Runs a 0.3 request as its 1.0 equivalent and translates the answer back.
async fn translate(
    rpc: &JsonRpc,
    mut parts: axum::http::request::Parts,
    request: Value,
    method: Method,
    id: JsonRpcId,
) -> Response {
    let (id_value, params) = match request {
        Value::Object(mut r) => (
            r.remove("id").unwrap_or(Value::Null),
            r.remove("params").unwrap_or(Value::Null),
        ),
        _ => (Value::Null, Value::Null),
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(A2A_VERSION_HEADER, HeaderValue::from_static("1.0"));
    let service = service_params(&parts.headers);
    let params = method.params_to_v1(params);
    let response = match call(rpc, &service, &parts.headers, method.v1(), params, &id).await {
        Ok(response) => response,
        Err(params) => {
            // Params the `a2a` types do not read: the official router, as for 1.0.
            let mut v1 = serde_json::json!({
                "jsonrpc": "2.0",
                "id": id_value,
                "method": method.v1(),
                "params": params,
            });
            let inbound = if matches!(method, Method::Send | Method::Stream) {
                exact::inbound(&mut v1, true, true)
            } else {
                None
            };
            let (message, body) = match inbound {
                Some((message, Some(body))) => (Some(message), body),
                _ => (None, serde_json::to_vec(&v1).unwrap_or_default()),
            };
            parts.uri = Uri::from_static("/");
            let request = Request::from_parts(parts, Body::from(body));
            exact::with_inbound(message, forward(rpc, request)).await
        }
    };
    if exact::is_event_stream(&response) && method.streams() {
        let (mut head, body) = response.into_parts();
        head.headers.remove(header::CONTENT_LENGTH);
        let frames = exact::frames(body, move |frame| {
            let decoded = exact::decode(frame);
            let frame = decoded.as_deref().unwrap_or(frame);
            frame_to_v0_3(frame.strip_suffix(b"\n\n").unwrap_or(frame), method)
        });
        return Response::from_parts(head, frames);
    }
    let (head, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_ANSWER_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return refuse(
                StatusCode::OK,
                id,
                error_code::INTERNAL_ERROR,
                "the answer could not be read",
            );
        }
    };
    let decoded = exact::decode(&bytes);
    match serde_json::from_slice::<Value>(decoded.as_deref().unwrap_or(&bytes)) {
        // A 0.3 client reads a streaming method's answer only as events: an error before the
        // stream is one event (as the official SDK's 0.3 layer sends it).
        Ok(answer) if method.streams() => one_event(&answer_to_v0_3(answer, method)),
        Ok(answer) => json_response(head.status, &answer_to_v0_3(answer, method)),
        Err(_) => Response::from_parts(head, Body::from(bytes)),
    }
}

/// An SSE answer of one event, `data`.
fn one_event(data: &Value) -> Response {
    let mut response = Response::new(Body::from(format!("data: {data}\n\n")));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A 1.0 JSON-RPC response as 0.3.
fn answer_to_v0_3(mut answer: Value, method: Method) -> Value {
    if let Value::Object(a) = &mut answer {
        if let Some(result) = a.remove("result") {
            a.insert("result".into(), method.result_to_v0_3(result));
        }
        if let Some(error) = a.remove("error") {
            a.insert("error".into(), v0_3::error_to_v0_3(error));
        }
    }
    answer
}

/// One SSE frame (without its blank line) with its `data` translated.
fn frame_to_v0_3(frame: &[u8], method: Method) -> Bytes {
    let text = String::from_utf8_lossy(frame);
    let mut out = String::with_capacity(text.len() + 32);
    let mut data = String::new();
    for line in text.split('\n') {
        match line.strip_prefix("data:") {
            Some(d) => {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(d.strip_prefix(' ').unwrap_or(d));
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    if !data.is_empty() {
        let translated = match serde_json::from_str::<Value>(&data) {
            Ok(answer) => answer_to_v0_3(answer, method).to_string(),
            Err(_) => data,
        };
        for line in translated.split('\n') {
            out.push_str("data: ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push('\n');
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types() {
        let mut h = HeaderMap::new();
        assert!(!is_json(&h));
        for (ct, ok) in [
            ("application/json", true),
            ("Application/JSON; charset=utf-8", true),
            ("application/a2a+json", true),
            ("text/plain", false),
            ("application/jsonx", false),
        ] {
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
            assert_eq!(is_json(&h), ok, "{ct}");
        }
    }

    #[test]
    fn the_version_header_says_0_3_when_absent() {
        let mut h = HeaderMap::new();
        assert!(asks_for_0_3(&h));
        h.insert(A2A_VERSION_HEADER, HeaderValue::from_static("0.3"));
        assert!(asks_for_0_3(&h));
        h.insert(A2A_VERSION_HEADER, HeaderValue::from_static("1.0"));
        assert!(!asks_for_0_3(&h));
    }

    #[test]
    fn sse_frames_are_translated_and_the_rest_kept() {
        let frame = b"id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"statusUpdate\":{\"taskId\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}";
        let out = frame_to_v0_3(frame, Method::Stream);
        let text = std::str::from_utf8(&out).unwrap_or_default();
        assert!(text.starts_with("id: 1\ndata: {"), "{text}");
        assert!(text.ends_with("}\n\n"), "{text}");
        assert!(text.contains("\"kind\":\"status-update\""), "{text}");
        assert!(text.contains("\"state\":\"working\""), "{text}");
        let comment = frame_to_v0_3(b":", Method::Stream);
        assert_eq!(&comment[..], b":\n\n");
    }
}
