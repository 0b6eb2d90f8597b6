//! The request body limit of the HTTP+JSON routes.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

/// Refuses a body declared larger than the limit (`413`), and caps the others, so that the
/// extractors behind answer `413` when a body without a length grows past it.
pub(crate) async fn limit_body(
    State(limit): State<usize>,
    request: Request,
    next: Next,
) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large(limit);
    }
    let request = request.map(|body| Body::new(http_body_util::Limited::new(body, limit)));
    next.run(request).await
}

/// The `413` answer of the HTTP+JSON routes to a body over `limit` bytes.
pub(crate) fn too_large(limit: usize) -> Response {
    error(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the request body is larger than this agent accepts ({limit} bytes)"),
    )
}

/// A `400` answer of the HTTP+JSON routes.
pub(crate) fn bad_request(why: &str) -> Response {
    error(StatusCode::BAD_REQUEST, why.to_owned())
}

fn error(status: StatusCode, message: String) -> Response {
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

/// Whether a body error is the size limit.
pub(crate) fn is_length_limit(error: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = e.source();
    }
    false
}
