//! Data parts carried exactly, around the official server's ProtoJSON representation.
//!
//! The official server (`a2a-server-lf`, through `a2a-pb`) parses and writes a data part as a
//! `google.protobuf.Struct`, whose numbers are all doubles: a skill's `{"total": 1}` would go
//! out as `{"total": 1.0}`, 2^53 + 1 as 2^53, and an integer its parser cannot fit (2^60) is
//! refused with a ProtoJSON error before this crate sees the message. A data part is this
//! crate's to route (the input/output schemas extension), so it goes around that
//! representation, both ways:
//!
//! - **Neither**, for every request the bindings answer with the `a2a` types' serde (every
//!   JSON-RPC and HTTP+JSON method, and the 0.3 translation: [`plain`]): serde keeps every
//!   number as it is.
//! - **In**, where the official routers still parse the request (a body or params in a
//!   ProtoJSON spelling serde does not read): the HTTP layer reads the message of a
//!   `SendMessage` request from the request's own JSON, once, and hands it to the request
//!   handler for the time of the request ([`with_inbound`]); the body the official router
//!   parses carries `{}` in place of each data part's value, and the handler dispatches from
//!   that JSON and puts the values back, as sent, into the message it runs and stores.
//! - **Out**, likewise: the request handler replaces each data part's value, in every task,
//!   message and event it answers with, by a string: a per-process marker followed by the
//!   value's JSON text. A string passes the official serialisation untouched, and the HTTP
//!   layer splices the JSON text back in its place ([`decode`]), in every answer and every
//!   stream frame. The marker holds a random nonce: no caller can forge one.
//!
//! Tasks are stored with the exact values (the handler holds `serde_json::Value`s, and the
//! SQL stores write serde JSON), so `GetTask`, `ListTasks` and history agree with what
//! was sent and returned. Message and part `metadata` are not data parts: they stay the
//! official server's (numbers as doubles).

use std::cell::RefCell;
use std::convert::Infallible;
use std::future::Future;
use std::sync::OnceLock;

use a2a::{Message, Part, PartContent, StreamResponse, Task};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use serde_json::{Map, Value};

/// The largest answer body the HTTP layer reads back to splice data into.
pub(crate) const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;

tokio::task_local! {
    /// The message of the `SendMessage` request being served, from the request's own JSON.
    static INBOUND: RefCell<Option<Value>>;
    /// Set while the HTTP layer writes the answer itself with the `a2a` types' serde (data as
    /// it is, nothing to splice back): answers are not encoded.
    static PLAIN: ();
}

/// Runs `f` (a handler call whose answer the HTTP layer writes with serde) with answers left
/// unencoded.
pub(crate) async fn plain<F: Future>(f: F) -> F::Output {
    PLAIN.scope((), f).await
}

/// Whether the answer being made is written with serde (see [`plain`]).
pub(crate) fn is_plain() -> bool {
    PLAIN.try_with(|_| ()).is_ok()
}

/// Runs `f` (the official router serving one request) with `message`, the request's own
/// message JSON, for the structured input flow to [take](take_inbound).
pub(crate) async fn with_inbound<F: Future>(message: Option<Value>, f: F) -> F::Output {
    match message {
        Some(message) => INBOUND.scope(RefCell::new(Some(message)), f).await,
        None => f.await,
    }
}

/// The request's own message JSON, when the HTTP layer handed it over (taken: once).
pub(crate) fn take_inbound() -> Option<Value> {
    INBOUND.try_with(|m| m.borrow_mut().take()).ok().flatten()
}

/// Takes the message out of a `SendMessage` request (`request["params"]` for JSON-RPC,
/// `request` itself for HTTP+JSON), for the structured input flow. When the message has data
/// parts (or `always`), also the body for the official router: `request` with `{}` in place
/// of each data part's value (otherwise the body as received serves). `None` when there is no
/// message object: the official router answers that.
pub(crate) fn inbound(
    request: &mut Value,
    in_params: bool,
    always: bool,
) -> Option<(Value, Option<Vec<u8>>)> {
    let mut values = Vec::new();
    for data in data_slots(message_of(request, in_params)?) {
        values.push(std::mem::replace(data, Value::Object(Map::new())));
    }
    let body = if values.is_empty() && !always {
        None
    } else {
        // A `Value` always serialises.
        serde_json::to_vec(request).ok()
    };
    let message = message_of(request, in_params)?;
    for (slot, value) in data_slots(message).zip(values) {
        *slot = value;
    }
    Some((message.take(), body))
}

fn message_of(request: &mut Value, in_params: bool) -> Option<&mut Value> {
    let request = if in_params {
        request.get_mut("params")?
    } else {
        request
    };
    request.get_mut("message").filter(|m| m.is_object())
}

/// The values of a message's data parts, in order.
fn data_slots(message: &mut Value) -> impl Iterator<Item = &mut Value> {
    message
        .get_mut("parts")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(|part| part.get_mut("data"))
}

/// The string that starts an encoded data value: `a2a-card.data.NONCE.` (no character that
/// JSON escapes, so that it appears as is in a serialised answer).
fn marker() -> &'static str {
    static MARKER: OnceLock<String> = OnceLock::new();
    MARKER.get_or_init(|| {
        let mut bytes = [0u8; 16];
        // Without randomness, a marker no JSON text carries unescaped (a control character).
        if getrandom::fill(&mut bytes).is_err() {
            return "\u{1}a2a-card.data.".to_owned();
        }
        let nonce: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        format!("a2a-card.data.{nonce}.")
    })
}

/// A data value as the string that carries it through the official serialisation.
fn encode_value(value: &mut Value) {
    let text = value.to_string();
    let mut encoded = String::with_capacity(marker().len() + text.len());
    encoded.push_str(marker());
    encoded.push_str(&text);
    *value = Value::String(encoded);
}

/// Encodes every data part of `parts` (see the module docs).
pub(crate) fn encode_parts(parts: &mut [Part]) {
    for part in parts {
        if let PartContent::Data(value) = &mut part.content {
            encode_value(value);
        }
    }
}

/// Encodes the data parts of a message.
pub(crate) fn encode_message(message: &mut Message) {
    encode_parts(&mut message.parts);
}

/// Encodes the data parts of a task: artifacts, history and status message.
pub(crate) fn encode_task(task: &mut Task) {
    for artifact in task.artifacts.iter_mut().flatten() {
        encode_parts(&mut artifact.parts);
    }
    for message in task.history.iter_mut().flatten() {
        encode_message(message);
    }
    if let Some(message) = &mut task.status.message {
        encode_message(message);
    }
}

/// Encodes the data parts of a stream event.
pub(crate) fn encode_event(event: &mut StreamResponse) {
    match event {
        StreamResponse::Task(task) => encode_task(task),
        StreamResponse::Message(message) => encode_message(message),
        StreamResponse::StatusUpdate(update) => {
            if let Some(message) = &mut update.status.message {
                encode_message(message);
            }
        }
        StreamResponse::ArtifactUpdate(update) => encode_parts(&mut update.artifact.parts),
    }
}

/// `bytes` (a serialised answer, or one stream frame) with every encoded data value spliced
/// back as the JSON it carries; `None` when there is none.
pub(crate) fn decode(bytes: &[u8]) -> Option<Vec<u8>> {
    let opening = opening();
    let mut next = Some(opening.find(bytes)?);
    let mut out = Vec::with_capacity(bytes.len());
    let mut copied = 0;
    // Each string literal: from its opening quote to the closing one.
    while let Some(at) = next {
        let Some(end) = closing_quote(bytes, at + opening.needle().len()) else {
            break;
        };
        if let Ok(text) = serde_json::from_slice::<String>(&bytes[at..=end]) {
            out.extend_from_slice(&bytes[copied..at]);
            out.extend_from_slice(&text.as_bytes()[marker().len()..]);
            copied = end + 1;
        }
        next = opening.find(&bytes[end + 1..]).map(|at| at + end + 1);
    }
    out.extend_from_slice(&bytes[copied..]);
    Some(out)
}

/// Finds where an encoded value's string starts: its quote and the marker (made once).
fn opening() -> &'static memchr::memmem::Finder<'static> {
    static OPENING: OnceLock<memchr::memmem::Finder<'static>> = OnceLock::new();
    OPENING.get_or_init(|| {
        let mut needle = Vec::with_capacity(marker().len() + 1);
        needle.push(b'"');
        needle.extend_from_slice(marker().as_bytes());
        memchr::memmem::Finder::new(&needle).into_owned()
    })
}

/// Where the first server-sent event in `buffer` ends (its blank line), if it is whole.
fn frame_end(buffer: &[u8]) -> Option<usize> {
    static BLANK_LINE: OnceLock<memchr::memmem::Finder<'static>> = OnceLock::new();
    BLANK_LINE
        .get_or_init(|| memchr::memmem::Finder::new(b"\n\n"))
        .find(buffer)
}

/// The position of the quote that closes the JSON string whose content starts at `from`.
fn closing_quote(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// A JSON answer of the official router with its data spliced back (see [`decode`]); a
/// stream's frames likewise, each as it comes, after `frame` (which may translate it further).
pub(crate) async fn decode_response(response: Response) -> Response {
    if is_event_stream(&response) {
        let (mut head, body) = response.into_parts();
        head.headers.remove(header::CONTENT_LENGTH);
        return Response::from_parts(head, frames(body, |frame| decode_frame(frame.to_vec())));
    }
    let (mut head, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_ANSWER_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => {
            head.headers.remove(header::CONTENT_LENGTH);
            return Response::from_parts(head, Body::empty());
        }
    };
    match decode(&bytes) {
        Some(decoded) => {
            head.headers.remove(header::CONTENT_LENGTH);
            Response::from_parts(head, Body::from(decoded))
        }
        None => Response::from_parts(head, Body::from(bytes)),
    }
}

/// One frame with its data spliced back.
fn decode_frame(frame: Vec<u8>) -> Bytes {
    match decode(&frame) {
        Some(decoded) => Bytes::from(decoded),
        None => Bytes::from(frame),
    }
}

/// Whether an answer is a server-sent event stream.
pub(crate) fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"))
}

/// An SSE body, frame by frame (each frame with its blank line) through `frame`.
pub(crate) fn frames<F>(body: Body, frame: F) -> Body
where
    F: Fn(&[u8]) -> Bytes + Send + Sync + 'static,
{
    struct Frames<F> {
        inner: axum::body::BodyDataStream,
        buffer: Vec<u8>,
        done: bool,
        frame: F,
    }
    let state = Frames {
        inner: body.into_data_stream(),
        buffer: Vec::new(),
        done: false,
        frame,
    };
    let frames = futures::stream::unfold(state, |mut s| async move {
        loop {
            if let Some(end) = frame_end(&s.buffer) {
                let whole: Vec<u8> = s.buffer.drain(..end + 2).collect();
                let out = (s.frame)(&whole);
                return Some((Ok::<Bytes, Infallible>(out), s));
            }
            if s.done {
                if s.buffer.is_empty() {
                    return None;
                }
                let rest = std::mem::take(&mut s.buffer);
                let out = (s.frame)(&rest);
                return Some((Ok(out), s));
            }
            match s.inner.next().await {
                Some(Ok(chunk)) => s.buffer.extend_from_slice(&chunk),
                Some(Err(_)) | None => s.done = true,
            }
        }
    });
    Body::from_stream(frames)
}

/// The HTTP+JSON paths of `SendMessage` and `SendStreamingMessage` (and their legacy forms).
fn is_send_path(path: &str) -> bool {
    [
        "/message:send",
        "/message/send",
        "/message:stream",
        "/message/stream",
    ]
    .iter()
    .any(|p| path.ends_with(p))
}

/// The HTTP+JSON layer: a message sent is read once from the request's own JSON and handed to
/// the structured input flow, and every answer has its data spliced back (see the module
/// docs). `limit` is the request body limit (the body arrives capped at it).
pub(crate) async fn rest_layer(
    State(limit): State<usize>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST || !is_send_path(request.uri().path()) {
        return decode_response(next.run(request).await).await;
    }
    let (parts, body) = request.into_parts();
    // The body arrives capped at `limit` (`body_limit::limit_body` is the outer layer).
    let bytes = match super::body_limit::read(&parts.headers, body, limit).await {
        Ok(bytes) => bytes,
        Err(e @ super::body_limit::BodyError::TooLarge) => {
            return super::body_limit::closing(super::body_limit::rest_error(e, limit));
        }
        Err(e) => return super::body_limit::rest_error(e, limit),
    };
    let (message, body) = match serde_json::from_slice::<Value>(&bytes) {
        Ok(mut request) => match inbound(&mut request, false, false) {
            Some((message, Some(body))) => (Some(message), Body::from(body)),
            Some((message, None)) => (Some(message), Body::from(bytes)),
            None => (None, Body::from(bytes)),
        },
        // Not JSON: the official router says so.
        Err(_) => (None, Body::from(bytes)),
    };
    let mut parts = parts;
    parts.headers.remove(header::CONTENT_LENGTH);
    let request = Request::from_parts(parts, body);
    let response = with_inbound(message, next.run(request)).await;
    decode_response(response).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn data_values_survive_a_string_trip_through_a_serialised_answer() {
        let big = json!({"n": 1_152_921_504_606_846_977_i64, "u": u64::MAX, "f": 0.1, "s": "\"é\\\n", "w": 1});
        let mut part = Part::data(big.clone());
        encode_parts(std::slice::from_mut(&mut part));
        let PartContent::Data(Value::String(s)) = &part.content else {
            panic!("encoded as a string: {part:?}")
        };
        assert!(s.starts_with(marker()));
        let answer = json!({"result": {"parts": [{"data": s}, {"text": s[1..]}]}}).to_string();
        let decoded = decode(answer.as_bytes()).unwrap_or_default();
        let back: Value = serde_json::from_slice(&decoded).unwrap_or_default();
        assert_eq!(back["result"]["parts"][0]["data"], big);
        assert!(back["result"]["parts"][0]["data"]["w"].is_u64());
        // A string that does not start with the marker is left alone.
        assert_eq!(back["result"]["parts"][1]["text"], json!(s[1..]));
        assert!(decode(b"{\"data\": \"a2a-card.data.\"}").is_none());
    }

    #[test]
    fn the_body_for_the_official_router_holds_no_data_and_the_message_keeps_it() {
        let mut request = json!({"params": {"message": {"parts": [
            {"text": "hi"}, {"data": {"n": u64::MAX}}, {"data": [1, 2]}
        ]}}});
        let (message, body) = inbound(&mut request, true, false).unwrap_or_default();
        assert_eq!(message["parts"][1]["data"]["n"], json!(u64::MAX));
        assert_eq!(message["parts"][2]["data"], json!([1, 2]));
        let body: Value = serde_json::from_slice(&body.unwrap_or_default()).unwrap_or_default();
        assert_eq!(body["params"]["message"]["parts"][1]["data"], json!({}));
        assert_eq!(body["params"]["message"]["parts"][0]["text"], "hi");
        let mut text_only = json!({"message": {"parts": [{"text": "hi"}]}});
        let (_, body) = inbound(&mut text_only, false, false).unwrap_or_default();
        assert!(body.is_none());
        assert!(inbound(&mut json!({"params": {}}), true, false).is_none());
    }
}
