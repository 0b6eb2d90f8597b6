//! The request body limit, for both protocol bindings: one rule (a body declared larger than
//! the limit is refused before it is read, and one that grows past it while read is refused
//! too), answered in each binding's own error shape; and the HTTP layer's one rule for an
//! answer given before the body was read ([`keep_alive`]).

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Version, header};
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};

/// Why a request body was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyError {
    /// It is larger than the limit (declared so, or found so while read).
    TooLarge,
    /// It could not be read.
    Unreadable,
}

impl BodyError {
    /// What the answer says of the body, under a limit of `limit` bytes.
    pub(crate) fn message(self, limit: usize) -> String {
        match self {
            BodyError::TooLarge => too_large_message(limit),
            BodyError::Unreadable => "the request body could not be read".to_owned(),
        }
    }
}

/// What a client is told when its body is over `limit` bytes.
pub(crate) fn too_large_message(limit: usize) -> String {
    format!("the request body is larger than this agent accepts ({limit} bytes)")
}

/// Whether the request declares a body larger than `limit` bytes.
fn declared_too_large(headers: &HeaderMap, limit: usize) -> bool {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|n| n > limit as u64)
}

/// Reads a request body of at most `limit` bytes.
pub(crate) async fn read(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
) -> Result<Bytes, BodyError> {
    if declared_too_large(headers, limit) {
        return Err(BodyError::TooLarge);
    }
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        if is_length_limit(&e) {
            BodyError::TooLarge
        } else {
            BodyError::Unreadable
        }
    })
}

/// The HTTP+JSON routes' answer to a body not read: `413` when over `limit` bytes, else `400`.
pub(crate) fn rest_error(error: BodyError, limit: usize) -> Response {
    let (status, code) = match error {
        BodyError::TooLarge => (
            StatusCode::PAYLOAD_TOO_LARGE,
            a2a::error_code::INVALID_REQUEST,
        ),
        BodyError::Unreadable => (StatusCode::BAD_REQUEST, a2a::error_code::PARSE_ERROR),
    };
    crate::server::errors::rest_status(status, a2a::A2AError::new(code, error.message(limit)))
}

/// `response` saying `Connection: close`: for an answer given without reading the whole body
/// (over the limit), after which the connection cannot carry another request. The client then
/// opens a new one, rather than finding the old one closed under its next request.
pub(crate) fn closing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// How long the rest of a body left unread may take to arrive before the connection is closed
/// instead (see [`keep_alive`]).
const DRAIN_FOR: Duration = Duration::from_secs(5);

/// The HTTP layer's one rule for every route and every answer (a refusal of any kind, a `404`,
/// a `405`, an answer that did not need the body): an HTTP/1 connection carries the client's
/// next request only once this one's body is read, so a body the answer left unread is read
/// and dropped (at most `limit` bytes, within [`DRAIN_FOR`]) before the answer goes; one that
/// cannot be (larger, or too slow) is answered with `Connection: close`, so that the client
/// opens a new connection rather than finding this one closed under its next request.
pub(crate) async fn keep_alive(
    State(limit): State<usize>,
    request: Request,
    next: Next,
) -> Response {
    kept_alive(limit, request, |request| next.run(request)).await
}

/// [`keep_alive`]'s rule for `request`, answered by `next`, under a body limit of `limit`.
pub(crate) async fn kept_alive<F>(
    limit: usize,
    request: Request,
    next: impl FnOnce(Request) -> F,
) -> Response
where
    F: std::future::Future<Output = Response>,
{
    if request.version() > Version::HTTP_11 || !has_body(request.headers()) {
        return next(request).await;
    }
    let declared_too_large = declared_too_large(request.headers(), limit);
    let left = Arc::new(Mutex::new(None));
    let request = request.map(|body| {
        Body::new(Unread {
            body: Some(body),
            left: Arc::clone(&left),
        })
    });
    let response = next(request).await;
    let unread = left.lock().unwrap_or_else(|p| p.into_inner()).take();
    let Some(unread) = unread else {
        return response;
    };
    let said_close = response
        .headers()
        .get(header::CONNECTION)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"close"));
    if said_close || declared_too_large {
        return closing(response);
    }
    match tokio::time::timeout(DRAIN_FOR, axum::body::to_bytes(unread, limit)).await {
        Ok(Ok(_)) => response,
        _ => closing(response),
    }
}

/// Whether the request has a body: chunks, or a length above zero (an HTTP/1 request with
/// neither header has none).
fn has_body(headers: &HeaderMap) -> bool {
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0")
}

/// A request body that, dropped before its end, leaves what is unread in `left` (see
/// [`keep_alive`]).
struct Unread {
    body: Option<Body>,
    left: Arc<Mutex<Option<Body>>>,
}

impl HttpBody for Unread {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let Some(body) = self.body.as_mut() else {
            return Poll::Ready(None);
        };
        let frame = Pin::new(body).poll_frame(cx);
        if let Poll::Ready(None) = frame {
            // Read to its end: nothing is left.
            self.body = None;
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.as_ref().is_none_or(HttpBody::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.body
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), HttpBody::size_hint)
    }
}

impl Drop for Unread {
    fn drop(&mut self) {
        if let Some(body) = self.body.take().filter(|b| !b.is_end_stream()) {
            *self.left.lock().unwrap_or_else(|p| p.into_inner()) = Some(body);
        }
    }
}

/// Whether a body error is the size limit.
fn is_length_limit(error: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(header::HeaderName, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| (k.clone(), HeaderValue::from_static(v)))
            .collect()
    }

    #[test]
    fn a_request_has_a_body_when_it_declares_one() {
        assert!(!has_body(&headers(&[])), "neither header: no body");
        assert!(!has_body(&headers(&[(header::CONTENT_LENGTH, "0")])));
        assert!(has_body(&headers(&[(header::CONTENT_LENGTH, "12")])));
        assert!(has_body(&headers(&[(
            header::TRANSFER_ENCODING,
            "chunked"
        )])));
    }
}
