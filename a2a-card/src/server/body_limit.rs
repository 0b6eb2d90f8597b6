//! The request body limit, for both protocol bindings: one rule (a body declared larger than
//! the limit is refused before it is read, and one that grows past it while read is refused
//! too), answered in each binding's own error shape.

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

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

/// The HTTP+JSON routes' layer: refuses a body declared larger than the limit (`413`), and caps
/// the others, so that the extractors behind answer `413` when a body without a length grows
/// past it.
pub(crate) async fn limit_body(
    State(limit): State<usize>,
    request: Request,
    next: Next,
) -> Response {
    if declared_too_large(request.headers(), limit) {
        return closing(rest_error(BodyError::TooLarge, limit));
    }
    let request = request.map(|body| Body::new(http_body_util::Limited::new(body, limit)));
    next.run(request).await
}

/// The HTTP+JSON routes' answer to a body not read: `413` when over `limit` bytes, else `400`.
pub(crate) fn rest_error(error: BodyError, limit: usize) -> Response {
    let status = match error {
        BodyError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        BodyError::Unreadable => StatusCode::BAD_REQUEST,
    };
    let message = error.message(limit);
    let body = serde_json::json!({"error": {
        "code": status.as_u16(),
        "status": "INVALID_ARGUMENT",
        "message": message,
    }});
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
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

/// `response`, given before the request's body was read, once the body is read and dropped
/// (at most `limit` bytes) so that the connection can carry the client's next request; said
/// with `Connection: close` when the body cannot be read within the limit.
pub(crate) async fn after_draining(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
    response: Response,
) -> Response {
    match read(headers, body, limit).await {
        Ok(_) => response,
        Err(_) => closing(response),
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
