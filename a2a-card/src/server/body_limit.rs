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
        let body = serde_json::json!({"error": {
            "code": 413,
            "status": "INVALID_ARGUMENT",
            "message": format!("the request body is larger than this agent accepts ({limit} bytes)"),
        }});
        let mut response = Response::new(Body::from(body.to_string()));
        *response.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        return response;
    }
    let request = request.map(|body| Body::new(http_body_util::Limited::new(body, limit)));
    next.run(request).await
}
