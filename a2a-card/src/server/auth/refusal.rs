//! Refusals: what a request's credentials came to when they do not let it in, found by the
//! layer or inside the handler, and carried out to the HTTP layer, which answers them in each
//! binding's shape with the status and challenges.

use std::future::Future;
use std::sync::{Arc, Mutex};

use a2a::{A2AError, TypedDetail, errordetails};
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use super::{Guard, UNAUTHENTICATED, UNAUTHORIZED, seal};

/// What a request's credentials came to.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// No credentials that meet the requirement (`401`).
    Unauthenticated {
        challenges: Vec<String>,
        message: String,
    },
    /// Authenticated, lacking scopes (`403`).
    Forbidden {
        challenges: Vec<String>,
        message: String,
    },
    /// The credentials could not be checked now (`503`).
    Unavailable,
}

tokio::task_local! {
    static REFUSED: Arc<Mutex<Option<Refusal>>>;
}

/// Runs `f` (a request going to the handler), and returns what it answered with the refusal
/// the handler reported, if any.
pub(crate) async fn scoped<F: Future>(f: F) -> (F::Output, Option<Refusal>) {
    let slot = Arc::new(Mutex::new(None));
    let out = REFUSED.scope(Arc::clone(&slot), f).await;
    let refusal = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
    (out, refusal)
}

/// The handler's answer for `refusal`, which the HTTP layer (when there is one) turns into
/// the right status and headers.
pub(crate) fn report(refusal: Refusal) -> A2AError {
    let error = refusal.error();
    let _ = REFUSED.try_with(|slot| {
        *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(refusal);
    });
    error
}

impl Refusal {
    /// Why, in a word (for telemetry).
    pub(crate) fn reason(&self) -> &'static str {
        match self {
            Refusal::Unauthenticated { .. } => "unauthenticated",
            Refusal::Forbidden { .. } => "forbidden",
            Refusal::Unavailable => "unavailable",
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            Refusal::Unauthenticated { .. } => StatusCode::UNAUTHORIZED,
            Refusal::Forbidden { .. } => StatusCode::FORBIDDEN,
            Refusal::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    fn parts(&self) -> (i32, &'static str, &'static str, &str, &[String]) {
        match self {
            Refusal::Unauthenticated {
                challenges,
                message,
            } => (
                UNAUTHENTICATED,
                "UNAUTHENTICATED",
                "UNAUTHENTICATED",
                message,
                challenges,
            ),
            Refusal::Forbidden {
                challenges,
                message,
            } => (
                UNAUTHORIZED,
                "UNAUTHORIZED",
                "PERMISSION_DENIED",
                message,
                challenges,
            ),
            Refusal::Unavailable => (
                a2a::error_code::INTERNAL_ERROR,
                "UNAVAILABLE",
                "UNAVAILABLE",
                "the credentials cannot be checked now; try again later",
                &[],
            ),
        }
    }

    /// As an A2A error (JSON-RPC code, message, `ErrorInfo`).
    pub(crate) fn error(&self) -> A2AError {
        let (code, reason, _, message, _) = self.parts();
        A2AError::new(code, message).with_details(vec![TypedDetail::error_info(
            reason,
            errordetails::PROTOCOL_DOMAIN,
            None,
        )])
    }

    fn with_headers(&self, mut response: Response) -> Response {
        crate::server::telemetry::refused(self.reason());
        *response.status_mut() = self.status();
        let (.., challenges) = self.parts();
        for c in challenges {
            if let Ok(v) = HeaderValue::from_str(c) {
                response.headers_mut().append(header::WWW_AUTHENTICATE, v);
            }
        }
        if matches!(self, Refusal::Unavailable) {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        }
        response
    }

    /// The JSON-RPC answer to request `id`.
    pub(crate) fn jsonrpc(&self, id: a2a::JsonRpcId) -> Response {
        // Made here rather than by `A2AError::to_jsonrpc_error`, which names the `ErrorInfo`
        // reason after the code and knows none for the authentication codes.
        let (code, reason, _, message, _) = self.parts();
        let info = TypedDetail::error_info(reason, errordetails::PROTOCOL_DOMAIN, None);
        let error = a2a::JsonRpcError {
            code,
            message: message.to_owned(),
            data: serde_json::to_value(vec![info]).ok(),
        };
        let answer = a2a::JsonRpcResponse::error(id, error);
        self.with_headers(crate::server::errors::json_response(self.status(), &answer))
    }

    /// The HTTP+JSON answer (`google.rpc.Status`, as the official router writes errors).
    pub(crate) fn rest(&self) -> Response {
        let (_, reason, status, message, _) = self.parts();
        let body = serde_json::json!({"error": {
            "code": self.status().as_u16(),
            "status": status,
            "message": message,
            "details": [{
                "@type": errordetails::ERROR_INFO_TYPE,
                "reason": reason,
                "domain": errordetails::PROTOCOL_DOMAIN,
            }],
        }});
        let mut response = Response::new(Body::from(body.to_string()));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        self.with_headers(response)
    }
}

impl Refusal {
    /// The gRPC answer: a trailers-only response with the status (`UNAUTHENTICATED`,
    /// `PERMISSION_DENIED`, `UNAVAILABLE`), the message, and the challenges as metadata.
    #[cfg(feature = "grpc")]
    pub(crate) fn grpc(&self) -> Response {
        crate::server::telemetry::refused(self.reason());
        let code = match self {
            Refusal::Unauthenticated { .. } => "16",
            Refusal::Forbidden { .. } => "7",
            Refusal::Unavailable => "14",
        };
        let (.., message, challenges) = self.parts();
        let mut response = Response::new(Body::empty());
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/grpc"),
        );
        headers.insert("grpc-status", HeaderValue::from_static(code));
        if let Ok(v) = HeaderValue::from_str(&percent_encode(message)) {
            headers.insert("grpc-message", v);
        }
        for c in challenges {
            if let Ok(v) = HeaderValue::from_str(c) {
                headers.append(header::WWW_AUTHENTICATE, v);
            }
        }
        response
    }
}

/// `message` as the `grpc-message` header spells it (percent-encoded outside printable ASCII).
#[cfg(feature = "grpc")]
fn percent_encode(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for b in message.bytes() {
        if (0x20..0x7f).contains(&b) && b != b'%' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The authentication layer of the gRPC binding: the credentials from the request's metadata,
/// refusals as gRPC statuses.
#[cfg(feature = "grpc")]
pub(crate) async fn grpc_layer(
    axum::extract::State(guard): axum::extract::State<Arc<Guard>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    guarded(&guard, request, next, Refusal::grpc).await
}

/// The authentication layer of the HTTP+JSON routes.
pub(crate) async fn rest_layer(
    axum::extract::State(guard): axum::extract::State<Arc<Guard>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    guarded(&guard, request, next, Refusal::rest).await
}

/// `request` let through to `next` with its principal sealed in, or refused as `render`
/// writes a refusal (one found by the guard, or reported by the handler). A refusal made
/// before the body was read leaves the connection usable by the HTTP layer's one rule
/// ([`keep_alive`](crate::server::body_limit::keep_alive)).
async fn guarded(
    guard: &Guard,
    request: axum::extract::Request,
    next: axum::middleware::Next,
    render: fn(&Refusal) -> Response,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let principal = match guard.authenticate(&parts).await {
        Ok(p) => p,
        Err(refusal) => return render(&refusal),
    };
    seal(&mut parts.headers, principal.as_ref());
    let (response, refusal) =
        scoped(next.run(axum::extract::Request::from_parts(parts, body))).await;
    match refusal {
        Some(refusal) => render(&refusal),
        None => response,
    }
}
