//! The JSON-RPC binding: a request decoded into a [call](crate::server::call), answered, and its
//! answer written with the `a2a` types' serde; A2A 0.3 requests decoded from their 0.3 params
//! and answered in 0.3 shapes (the same call, translated value to value both ways); streams as
//! SSE whose event ids are the events' numbers in their task's log, so that a subscriber that
//! reconnects with `Last-Event-ID` gets exactly the events after it.

use std::collections::HashMap;
use std::sync::Arc;

use a2a::{A2AError, JsonRpcId, JsonRpcResponse, error_code};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::body::{self, BodyError};
use super::protojson::{normalize, read, read_text};
use crate::server::auth::Refusal;
use crate::server::call::NumberedStream;
use crate::server::call::{
    Answered, Binding, Bound, CallAnswer, Context, EXTENSIONS_HEADER, Failure, Incoming, Op, Used,
    Version, field_error, requested_version,
};
use crate::server::errors::json_response;
use crate::server::lifecycle::Lifecycle;
use crate::server::store::Event;
use crate::server::telemetry;
use crate::v0_3::{self, Method};

/// The JSON-RPC endpoint.
pub(crate) struct JsonRpc {
    /// What answers every call.
    pub(crate) lifecycle: Arc<Lifecycle>,
    /// The largest request body.
    pub(crate) body_limit: usize,
    /// Whether A2A 0.3 requests are translated.
    pub(crate) v0_3: bool,
}

/// An answer to a request that did not reach the lifecycle: a JSON-RPC error with an HTTP
/// status (`200` for every JSON-RPC error, as the official SDKs answer and their clients
/// expect; another status only where the transport refuses the body).
fn refuse(status: StatusCode, id: JsonRpcId, code: i32, message: impl Into<String>) -> Response {
    let error = A2AError::new(code, message).to_jsonrpc_error();
    let response = json_response(status, &JsonRpcResponse::error(id, error));
    telemetry::failed();
    response
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

/// The request's id, when it is a valid one.
fn id_of(id: &Value) -> Option<JsonRpcId> {
    match id {
        Value::String(s) => Some(JsonRpcId::String(s.clone())),
        Value::Number(n) => n.as_i64().map(JsonRpcId::Number),
        Value::Null => Some(JsonRpcId::Null),
        _ => None,
    }
}

/// Whether the `A2A-Version` header asks for 0.3 (absent means 0.3, A2A section 3.6).
fn asks_for_0_3(headers: &HeaderMap) -> bool {
    match requested_version(headers) {
        None => true,
        Some(v) => v.is_empty() || v == "0" || v.starts_with("0."),
    }
}

impl Bound for Arc<JsonRpc> {
    const BINDING: Binding = Binding::JsonRpc;
}

/// Handles `POST` on the JSON-RPC path.
pub(crate) async fn endpoint(
    State(rpc): State<Arc<JsonRpc>>,
    Incoming(ctx): Incoming,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    if !is_json(&parts.headers) {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            JsonRpcId::Null,
            error_code::INVALID_REQUEST,
            "a JSON-RPC request is sent with `Content-Type: application/json`",
        );
    }
    let bytes = match body::read(&parts.headers, body, rpc.body_limit).await {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge) => {
            return body::closing(refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                JsonRpcId::Null,
                error_code::INVALID_REQUEST,
                body::too_large_message(rpc.body_limit),
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
    let invalid = |id: JsonRpcId, why: &str| {
        refuse(
            StatusCode::OK,
            id,
            error_code::INVALID_REQUEST,
            format!("invalid request: {why}"),
        )
    };
    if std::str::from_utf8(&bytes).is_err() {
        return refuse(
            StatusCode::OK,
            JsonRpcId::Null,
            error_code::PARSE_ERROR,
            "parse error: the request body is not valid UTF-8",
        );
    }
    // The envelope's members, each as its JSON text: the params are read once, into their
    // types, with no JSON tree made on the way.
    let request: HashMap<String, Box<RawValue>> = match serde_json::from_slice(&bytes) {
        Ok(request) => request,
        Err(e) => {
            let why = match serde_json::from_slice::<Value>(&bytes) {
                Err(_) => {
                    return refuse(
                        StatusCode::OK,
                        JsonRpcId::Null,
                        error_code::PARSE_ERROR,
                        format!("parse error: {e}"),
                    );
                }
                Ok(Value::Array(_)) => "batch requests are not supported",
                Ok(_) => "a JSON-RPC request is a JSON object",
            };
            return invalid(JsonRpcId::Null, why);
        }
    };
    let member = |name: &str| -> Option<Value> {
        request
            .get(name)
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
    };
    let Some(id) = member("id").as_ref().and_then(id_of) else {
        return invalid(
            JsonRpcId::Null,
            "`id` is required, and is a string, an integer or null",
        );
    };
    if member("jsonrpc").as_ref().and_then(Value::as_str) != Some("2.0") {
        return invalid(id, "`jsonrpc` must be \"2.0\"");
    }
    let Some(Value::String(method)) = member("method") else {
        return invalid(id, "`method` is required, and is a string");
    };
    let params = request.get("params").map(|raw| raw.get());
    if params.is_some_and(|p| !p.starts_with('{') && p != "null") {
        return invalid(id, "`params` is an object");
    }
    let legacy = Method::parse(&method).filter(|_| rpc.v0_3 && asks_for_0_3(&parts.headers));
    if legacy.is_none() && !a2a::methods::is_valid(&method) {
        return method_not_found(id, &method);
    }
    // Before anything is done with the request: the card's requirement.
    let mut ctx = match ctx {
        Ok(ctx) => ctx,
        Err(refusal) => return refused(&refusal, id),
    };
    match legacy {
        Some(legacy) => {
            ctx.version = Version::V0_3;
            v0_3_call(&rpc.lifecycle, &ctx, legacy, params, id).await
        }
        None => match check_version(&parts.headers) {
            Ok(()) => call(&rpc.lifecycle, &ctx, &method, params, id).await,
            Err(e) => error_response(&id, e),
        },
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

/// The `A2A-Version` of a 1.0 request: `1.x` (A2A section 3.6.2: none means 0.3, which only
/// the 0.3 methods are).
fn check_version(headers: &HeaderMap) -> Result<(), A2AError> {
    let requested = requested_version(headers).unwrap_or("0.3");
    match requested.split('.').next() {
        Some("1") => Ok(()),
        _ => Err(A2AError::version_not_supported(requested)),
    }
}

/// A 1.0 request: decoded, called, its answer written with the `a2a` types' serde.
async fn call(
    lifecycle: &Lifecycle,
    ctx: &Context,
    method: &str,
    params: Option<&str>,
    id: JsonRpcId,
) -> Response {
    let op = match operation_of_text(method, params) {
        Ok(op) => op,
        Err(e) => return error_response(&id, e),
    };
    let Answered { answer, used } = match lifecycle.dispatch(ctx, op).await {
        Ok(answered) => answered,
        Err(failure) => return failure_response(&id, failure),
    };
    let response = match answer {
        CallAnswer::Stream(events) => {
            // Each event's JSON is made once, and shared with the log and the webhooks.
            let head = format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":"#,
                serde_json::to_string(&id).unwrap_or_default()
            );
            sse(events, move |data, event| match event {
                Ok(event) => {
                    data.push_str(&head);
                    data.push_str(event.json());
                    data.push('}');
                }
                Err(e) => data.push_str(&error_json(&id, e)),
            })
        }
        answer => json_response(StatusCode::OK, &Success::new(&id, &answer)),
    };
    used.name_in(response, EXTENSIONS_HEADER)
}

/// A 0.3 request: its params in 1.0 shape, the same call, its answer (each event of a stream)
/// in 0.3 shape.
async fn v0_3_call(
    lifecycle: &Lifecycle,
    ctx: &Context,
    method: Method,
    params: Option<&str>,
    id: JsonRpcId,
) -> Response {
    let params = params
        .and_then(|p| serde_json::from_str(p).ok())
        .unwrap_or(Value::Null);
    let answer = match operation(method.v1(), method.params_to_v1(params)) {
        Ok(op) => lifecycle.dispatch(ctx, op).await,
        Err(e) => Err(Failure::Error(e)),
    };
    let (answer, used) = match answer {
        Ok(Answered { answer, used }) => (Ok(answer), used),
        Err(failure) => (Err(failure), Used::default()),
    };
    let answered = match answer {
        Ok(CallAnswer::Stream(events)) => sse(events, move |data, event| {
            let written = match event {
                // The event's JSON, made once, read as the value the 0.3 shape is made of.
                Ok(event) => match serde_json::from_str(event.json()) {
                    Ok(event) => success(&id, &method.result_to_v0_3(event)),
                    Err(e) => error_json_v0_3(
                        &id,
                        A2AError::internal(format!("an event's JSON does not read back: {e}")),
                    ),
                },
                Err(e) => error_json_v0_3(&id, e),
            };
            data.push_str(&written);
        }),
        Ok(answer) => {
            let result = method.result_to_v0_3(to_value(&answer));
            json_response(StatusCode::OK, &Success::new(&id, &result))
        }
        Err(Failure::Refused(refusal)) => return refused(&refusal, id),
        Err(Failure::Error(e)) => {
            let body = error_json_v0_3(&id, e);
            let response = if method.streams() {
                // A 0.3 client reads a streaming method's answer only as events: an error
                // before the stream is one event (as the official SDK's 0.3 layer sends it).
                one_event(body)
            } else {
                let mut response = Response::new(Body::from(body));
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                response
            };
            telemetry::failed();
            return response;
        }
    };
    used.name_in(answered, "x-a2a-extensions")
}

/// A value of the `a2a` types as JSON (they always serialise).
fn to_value(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or_default()
}

/// A successful JSON-RPC answer, written straight from the `a2a` types.
#[derive(serde::Serialize)]
struct Success<'a, T: serde::Serialize> {
    jsonrpc: &'static str,
    id: &'a JsonRpcId,
    result: &'a T,
}

impl<'a, T: serde::Serialize> Success<'a, T> {
    fn new(id: &'a JsonRpcId, result: &'a T) -> Self {
        Success {
            jsonrpc: "2.0",
            id,
            result,
        }
    }
}

/// The JSON text of a successful answer to request `id`.
fn success(id: &JsonRpcId, result: &impl serde::Serialize) -> String {
    // The `a2a` types always serialise.
    serde_json::to_string(&Success::new(id, result)).unwrap_or_default()
}

/// The JSON text of an error answer to request `id`.
fn error_json(id: &JsonRpcId, e: A2AError) -> String {
    serde_json::to_string(&JsonRpcResponse::error(id.clone(), e.to_jsonrpc_error()))
        .unwrap_or_default()
}

/// The JSON text of a 0.3 error answer to request `id`.
fn error_json_v0_3(id: &JsonRpcId, e: A2AError) -> String {
    let error = v0_3::error_to_v0_3(to_value(&e.to_jsonrpc_error()));
    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error}).to_string()
}

fn error_response(id: &JsonRpcId, e: A2AError) -> Response {
    let response = json_response(
        StatusCode::OK,
        &JsonRpcResponse::error(id.clone(), e.to_jsonrpc_error()),
    );
    telemetry::failed();
    response
}

fn failure_response(id: &JsonRpcId, failure: Failure) -> Response {
    match failure {
        Failure::Error(e) => error_response(id, e),
        Failure::Refused(refusal) => refused(&refusal, id.clone()),
    }
}

/// A stream's events as SSE, each with its number in the task's log as its `id` (where it
/// has one), and a comment every 15 s while idle; `write` appends each event's `data` to the
/// frame it goes out in. The events ready at once (a handler that streams faster than its
/// reader reads) go out in one body frame: one write for many events.
pub(crate) fn sse<F>(events: NumberedStream, write: F) -> Response
where
    F: Fn(&mut String, Result<Arc<Event>, A2AError>) + Send + 'static,
{
    use futures::StreamExt;
    let frames = events.ready_chunks(EVENTS_PER_FRAME).map(move |ready| {
        let mut frame = String::new();
        for event in ready {
            match event {
                Ok((seq, event)) => sse_event(&mut frame, seq, None, |d| write(d, Ok(event))),
                Err(e) => sse_event(&mut frame, None, Some("error"), |d| write(d, Err(e))),
            }
        }
        Ok::<_, std::convert::Infallible>(axum::body::Bytes::from(frame))
    });
    event_stream(Body::from_stream(KeptAlive::new(frames)))
}

/// An SSE answer of `body` (its events, written).
fn event_stream(body: Body) -> Response {
    let mut response = Response::new(body);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The most events of one SSE body frame.
const EVENTS_PER_FRAME: usize = 64;

/// Appends to `frame` one SSE event: its `id` (where it has one), its type (`error` for an
/// error, as the official SDKs mark it; none for an event of the task), then what `data`
/// writes, a `data:` line each of its lines (written straight into the frame: JSON on one
/// line, as this crate writes it, is not copied again).
fn sse_event(
    frame: &mut String,
    seq: Option<u64>,
    kind: Option<&str>,
    data: impl FnOnce(&mut String),
) {
    use std::fmt::Write as _;
    if let Some(seq) = seq {
        let _ = writeln!(frame, "id: {seq}");
    }
    if let Some(kind) = kind {
        let _ = writeln!(frame, "event: {kind}");
    }
    frame.push_str("data: ");
    let start = frame.len();
    data(frame);
    if frame[start..].contains(['\n', '\r']) {
        let written = frame.split_off(start);
        for (i, line) in written.split('\n').enumerate() {
            if i > 0 {
                frame.push_str("data: ");
            }
            frame.push_str(line.strip_suffix('\r').unwrap_or(line));
            frame.push('\n');
        }
    } else {
        frame.push('\n');
    }
    frame.push('\n');
}

/// An SSE body that sends a comment every [`KEEP_ALIVE`] without an event, so that proxies
/// and clients do not take a quiet stream for a dead one.
struct KeptAlive<S> {
    frames: S,
    idle: std::pin::Pin<Box<tokio::time::Sleep>>,
}

/// How long an SSE stream stays quiet before a comment.
const KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(15);

impl<S> KeptAlive<S> {
    fn new(frames: S) -> Self {
        KeptAlive {
            frames,
            idle: Box::pin(tokio::time::sleep(KEEP_ALIVE)),
        }
    }
}

impl<S> futures::Stream for KeptAlive<S>
where
    S: futures::Stream<Item = Result<axum::body::Bytes, std::convert::Infallible>> + Unpin,
{
    type Item = Result<axum::body::Bytes, std::convert::Infallible>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let this = &mut *self;
        match std::pin::Pin::new(&mut this.frames).poll_next(cx) {
            Poll::Ready(frame) => {
                this.idle
                    .as_mut()
                    .reset(tokio::time::Instant::now() + KEEP_ALIVE);
                Poll::Ready(frame)
            }
            Poll::Pending => match this.idle.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    this.idle
                        .as_mut()
                        .reset(tokio::time::Instant::now() + KEEP_ALIVE);
                    Poll::Ready(Some(Ok(axum::body::Bytes::from_static(b":\n\n"))))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

/// An SSE answer of one event, `data`.
fn one_event(data: String) -> Response {
    let mut frame = String::new();
    sse_event(&mut frame, None, None, |d| d.push_str(&data));
    event_stream(Body::from(frame))
}

/// The JSON-RPC answer to request `id` that `refusal` refused.
pub(crate) fn refused(refusal: &Refusal, id: JsonRpcId) -> Response {
    // Made here rather than by `A2AError::to_jsonrpc_error`, which names the `ErrorInfo`
    // reason after the code and knows none for the authentication codes.
    let error = a2a::JsonRpcError {
        code: refusal.code(),
        message: refusal.message().to_owned(),
        data: serde_json::to_value(vec![refusal.error_info()]).ok(),
    };
    let answer = JsonRpcResponse::error(id, error);
    refusal.over_http(json_response(refusal.status(), &answer))
}

/// The operation of JSON-RPC method `method` with `params` (1.0 names; ProtoJSON spellings
/// accepted: see [`normalize`]); an unknown method is `-32601`, params these types do not read
/// `-32602` saying where.
fn operation(method: &str, params: Value) -> Result<Op, A2AError> {
    use a2a::methods as m;
    let mut params = match params {
        Value::Null => Value::Object(Map::new()),
        params => params,
    };
    normalize(&mut params);
    if matches!(method, m::SEND_MESSAGE | m::SEND_STREAMING_MESSAGE)
        && !params.get("message").is_some_and(Value::is_object)
    {
        return Err(field_error("message", "is required: the message to send"));
    }
    Ok(match method {
        m::SEND_MESSAGE => Op::Send(read(params)?),
        m::SEND_STREAMING_MESSAGE => Op::Stream(read(params)?),
        m::GET_TASK => Op::Get(read(params)?),
        m::LIST_TASKS => Op::List(read(params)?),
        m::CANCEL_TASK => Op::Cancel(read(params)?),
        m::SUBSCRIBE_TO_TASK => Op::Subscribe(read(params)?),
        m::CREATE_PUSH_CONFIG => Op::CreateConfig(read(params)?),
        m::GET_PUSH_CONFIG => Op::GetConfig(read(params)?),
        m::LIST_PUSH_CONFIGS => Op::ListConfigs(read(params)?),
        m::DELETE_PUSH_CONFIG => Op::DeleteConfig(read(params)?),
        m::GET_EXTENDED_AGENT_CARD => Op::ExtendedCard,
        other => {
            return Err(A2AError::method_not_found(
                &other.chars().take(64).collect::<String>(),
            ));
        }
    })
}

/// The operation of JSON-RPC method `method` with `params` as JSON text (none: `{}`). Params
/// in the 1.0 spelling are read straight from the text; any other (a ProtoJSON spelling: a
/// name with `_`, an enum by number), or params that do not read, go the way of
/// [`operation`], which says where they are wrong.
fn operation_of_text(method: &str, params: Option<&str>) -> Result<Op, A2AError> {
    use a2a::methods as m;
    let text = params.filter(|p| *p != "null").unwrap_or("{}");
    fn typed<T: serde::de::DeserializeOwned>(text: &str, op: fn(T) -> Op) -> Option<Op> {
        read_text(text).map(op)
    }
    let fast = match method {
        m::SEND_MESSAGE => typed(text, Op::Send),
        m::SEND_STREAMING_MESSAGE => typed(text, Op::Stream),
        m::GET_TASK => typed(text, Op::Get),
        m::LIST_TASKS => typed(text, Op::List),
        m::CANCEL_TASK => typed(text, Op::Cancel),
        m::SUBSCRIBE_TO_TASK => typed(text, Op::Subscribe),
        _ => None,
    };
    match fast {
        Some(op) => Ok(op),
        None => {
            let params = serde_json::from_str(text).map_err(|e| {
                A2AError::new(a2a::error_code::PARSE_ERROR, format!("parse error: {e}"))
            })?;
            operation(method, params)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sse_event_is_its_id_its_type_then_a_data_line_for_each_line() {
        let mut frame = String::new();
        sse_event(&mut frame, Some(3), None, |d| d.push_str(r#"{"a":1}"#));
        sse_event(&mut frame, None, None, |d| d.push_str("one\r\ntwo"));
        sse_event(&mut frame, None, Some("error"), |d| d.push_str("{}"));
        assert_eq!(
            frame,
            "id: 3\ndata: {\"a\":1}\n\ndata: one\ndata: two\n\nevent: error\ndata: {}\n\n"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_quiet_stream_gets_a_comment_every_fifteen_seconds() {
        use futures::StreamExt;
        let (send, frames) = futures::channel::mpsc::unbounded::<
            Result<axum::body::Bytes, std::convert::Infallible>,
        >();
        let mut body = KeptAlive::new(frames);
        let started = tokio::time::Instant::now();
        let Some(Ok(comment)) = body.next().await else {
            panic!("a comment")
        };
        assert_eq!(&comment[..], b":\n\n");
        assert_eq!(started.elapsed(), KEEP_ALIVE);
        send.unbounded_send(Ok(axum::body::Bytes::from_static(b"data: x\n\n")))
            .unwrap();
        let Some(Ok(event)) = body.next().await else {
            panic!("the event")
        };
        assert_eq!(&event[..], b"data: x\n\n");
        drop(send);
        assert!(body.next().await.is_none(), "ends with its events");
    }

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
        use crate::server::call::A2A_VERSION_HEADER;
        let mut h = HeaderMap::new();
        assert!(asks_for_0_3(&h));
        h.insert(A2A_VERSION_HEADER, HeaderValue::from_static("0.3"));
        assert!(asks_for_0_3(&h));
        h.insert(A2A_VERSION_HEADER, HeaderValue::from_static("1.0"));
        assert!(!asks_for_0_3(&h));
    }

    #[test]
    fn params_that_do_not_read_say_where() {
        let error = operation("GetTask", serde_json::json!({"id": 5})).unwrap_err();
        assert_eq!(error.code, a2a::error_code::INVALID_PARAMS);
        assert!(error.message.contains("`id`"), "{}", error.message);
        let error = operation("SendMessage", serde_json::json!({})).unwrap_err();
        assert!(error.message.contains("`message`"), "{}", error.message);
        let error = operation("Nope", serde_json::json!({})).unwrap_err();
        assert_eq!(error.code, a2a::error_code::METHOD_NOT_FOUND);
    }
}
