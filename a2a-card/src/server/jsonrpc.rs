//! The JSON-RPC endpoint: request checks that answer a clean 4xx, the A2A 0.3 translation,
//! `SendMessage` answered here with the `a2a` types' own serde ([`send_here`]), and the
//! official JSON-RPC router behind them for the rest.

use std::sync::Arc;

use a2a::{A2AError, JsonRpcId, JsonRpcResponse, SendMessageRequest, error_code};
use a2a_server::{RequestHandler, ServiceParams};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::Response;
use serde::Deserialize as _;
use serde_json::Value;
use tower::ServiceExt;

use super::auth::{self, Guard};
use super::body_limit::{self, BodyError};
use super::documents::A2A_VERSION_HEADER;
use super::exact::{self, MAX_ANSWER_BYTES};
use crate::v0_3::{self, Method};

/// The JSON-RPC endpoint in front of the official router.
pub(crate) struct JsonRpc {
    /// The official JSON-RPC router (its one route is `/`).
    pub(crate) inner: axum::Router,
    /// The handler behind it, for the `SendMessage` this endpoint answers itself.
    pub(crate) handler: Arc<dyn RequestHandler>,
    /// The largest request body.
    pub(crate) body_limit: usize,
    /// Whether A2A 0.3 requests are translated.
    pub(crate) v0_3: bool,
    /// The security the card declares, when it declares any.
    pub(crate) guard: Option<Arc<Guard>>,
}

/// An answer to a request that did not reach the handler: a JSON-RPC error with an HTTP
/// status.
fn refuse(status: StatusCode, id: JsonRpcId, code: i32, message: impl Into<String>) -> Response {
    let error = A2AError::new(code, message).to_jsonrpc_error();
    json_response(status, &JsonRpcResponse::error(id, error))
}

fn json_response(status: StatusCode, body: &impl serde::Serialize) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Whether the request says its body is JSON (`application/json` or `application/*+json`,
/// with any parameters).
fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || essence
            .strip_prefix("application/")
            .is_some_and(|s| s.ends_with("+json"))
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
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            JsonRpcId::Null,
            error_code::INVALID_REQUEST,
            "a JSON-RPC request is sent with `Content-Type: application/json`",
        );
    }
    let bytes = match body_limit::read(&parts.headers, body, rpc.body_limit).await {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge) => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                JsonRpcId::Null,
                error_code::INVALID_REQUEST,
                body_limit::too_large_message(rpc.body_limit),
            );
        }
        Err(BodyError::Unreadable) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                JsonRpcId::Null,
                error_code::PARSE_ERROR,
                "the request body could not be read",
            );
        }
    };
    if std::str::from_utf8(&bytes).is_err() {
        return refuse(
            StatusCode::BAD_REQUEST,
            JsonRpcId::Null,
            error_code::PARSE_ERROR,
            "parse error: the request body is not valid UTF-8",
        );
    }
    let request: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                JsonRpcId::Null,
                error_code::PARSE_ERROR,
                format!("parse error: {e}"),
            );
        }
    };
    let invalid = |id: JsonRpcId, why: &str| {
        refuse(
            StatusCode::BAD_REQUEST,
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
    if let Some(params) = request.get("params") {
        if !params.is_object() && !params.is_null() {
            return invalid(id, "`params` is an object");
        }
    }
    let legacy = Method::parse(method).filter(|_| rpc.v0_3 && asks_for_0_3(&parts.headers));
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
        StatusCode::NOT_FOUND,
        id,
        error_code::METHOD_NOT_FOUND,
        format!(
            "method not found: {}{hint}",
            method.chars().take(64).collect::<String>()
        ),
    )
}

/// Runs a valid request: a 0.3 one translated, a 1.0 one as it is. A message sent is read
/// here, once, from the request's own JSON (see [`exact`]), and the answer's data parts are
/// spliced back exactly.
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
    parts.uri = Uri::from_static("/");
    let method = request.get("method").and_then(Value::as_str);
    let sends = matches!(
        method,
        Some(a2a::methods::SEND_MESSAGE | a2a::methods::SEND_STREAMING_MESSAGE)
    );
    if method == Some(a2a::methods::SEND_MESSAGE) {
        if let Some(answer) = send_here(rpc, &parts.headers, &mut request, &id).await {
            return answer;
        }
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
    let response = exact::with_inbound(message, forward(rpc, Request::from_parts(parts, body)));
    exact::decode_response(response.await).await
}

/// A successful JSON-RPC answer, written straight from the `a2a` types.
#[derive(serde::Serialize)]
struct Success<'a, T: serde::Serialize> {
    jsonrpc: &'static str,
    id: &'a JsonRpcId,
    result: &'a T,
}

/// `SendMessage`, answered here rather than by the official router: the request's own JSON is
/// read into the `a2a` types with their serde (the A2A 1.0 JSON), and the answer written the
/// same way. The official router would turn each through protobuf and ProtoJSON (a message
/// each way, its numbers as doubles); here the message is read once, its data parts reach
/// the skill as sent and the answer's data as the skill returned it. `None` when the official
/// router should answer after all: an `A2A-Version` other than 1.x (it says why), or params
/// these types do not read (it accepts every ProtoJSON spelling, snake_case names and enum
/// numbers among them).
async fn send_here(
    rpc: &JsonRpc,
    headers: &HeaderMap,
    request: &mut Value,
    id: &JsonRpcId,
) -> Option<Response> {
    let version = headers.get(A2A_VERSION_HEADER)?.to_str().ok()?;
    if version.trim().split('.').next() != Some("1") {
        return None;
    }
    let params = request.get_mut("params")?;
    let send = SendMessageRequest::deserialize(&*params).ok()?;
    let message = params.get_mut("message").map(Value::take);
    // What the official router hands its handler: the request's headers.
    let mut service = ServiceParams::new();
    for (name, value) in headers {
        if let Ok(value) = value.to_str() {
            service
                .entry(name.as_str().to_owned())
                .or_default()
                .push(value.to_owned());
        }
    }
    let answer = exact::plain(exact::with_inbound(
        message,
        rpc.handler.send_message(&service, send),
    ))
    .await;
    Some(match answer {
        Ok(result) => json_response(
            StatusCode::OK,
            &Success {
                jsonrpc: "2.0",
                id,
                result: &result,
            },
        ),
        Err(e) => json_response(
            StatusCode::OK,
            &JsonRpcResponse::error(id.clone(), e.to_jsonrpc_error()),
        ),
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
    let mut v1 = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id_value,
        "method": method.v1(),
        "params": method.params_to_v1(params),
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
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(A2A_VERSION_HEADER, HeaderValue::from_static("1.0"));
    let request = Request::from_parts(parts, Body::from(body));
    let response = exact::with_inbound(message, forward(rpc, request)).await;
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
        Ok(answer) => json_response(head.status, &answer_to_v0_3(answer, method)),
        Err(_) => Response::from_parts(head, Body::from(bytes)),
    }
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
