//! The authentication layer, and refusals: what a request's credentials came to when they do
//! not let it in (found by the layer, or by the lifecycle for a skill's own requirement),
//! answered by each binding in its own shape with the status and challenges.

use std::sync::Arc;

use a2a::{A2AError, TypedDetail, errordetails};
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use super::{Guard, UNAUTHENTICATED, UNAUTHORIZED};
use crate::principal::Principal;
use crate::server::limits::Limited;

/// What the authentication layer found for a request: put in the request's extensions for
/// the binding, which builds its call's context from it.
#[derive(Debug, Clone)]
pub(crate) enum Admission {
    /// Let in: the caller, or `None` for an anonymous caller the card lets in.
    Caller(Option<Arc<Principal>>),
    /// Refused, before anything else is done with the request.
    Refused(Arc<Refusal>),
}

/// The authentication layer of every binding: the request's credentials checked against the
/// card's requirement, and what they came to put in its extensions ([`Admission`]). Whatever
/// a client sends cannot set it: it is not read from the request.
pub(crate) async fn layer(
    axum::extract::State(guard): axum::extract::State<Arc<Guard>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let peer = crate::server::limits::Peer::of(parts.extensions.get());
    let admission = match guard.admit(&parts, peer).await {
        Ok(principal) => Admission::Caller(principal.map(Arc::new)),
        Err(refusal) => Admission::Refused(Arc::new(refusal)),
    };
    parts.extensions.insert(admission);
    next.run(axum::extract::Request::from_parts(parts, body))
        .await
}

/// What a request's credentials came to.
#[derive(Debug, Clone)]
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
    /// Over one of the agent's [limits](crate::server::Limits) (`429`): try again in
    /// `retry_after` seconds.
    Limited(Limited),
}

impl From<Limited> for Refusal {
    fn from(limited: Limited) -> Self {
        Refusal::Limited(limited)
    }
}

impl Refusal {
    /// Why, in a word (for telemetry).
    pub(crate) fn reason(&self) -> &'static str {
        match self {
            Refusal::Unauthenticated { .. } => "unauthenticated",
            Refusal::Forbidden { .. } => "forbidden",
            Refusal::Unavailable => "unavailable",
            Refusal::Limited(_) => "rate_limited",
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            Refusal::Unauthenticated { .. } => StatusCode::UNAUTHORIZED,
            Refusal::Forbidden { .. } => StatusCode::FORBIDDEN,
            Refusal::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Refusal::Limited(_) => StatusCode::TOO_MANY_REQUESTS,
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
            Refusal::Limited(Limited { message, .. }) => (
                super::RATE_LIMITED,
                "RATE_LIMITED",
                "RESOURCE_EXHAUSTED",
                message,
                &[],
            ),
        }
    }

    /// In how many seconds the call may be tried again, where the refusal says.
    fn retry_after(&self) -> Option<u64> {
        match self {
            Refusal::Unavailable => Some(5),
            Refusal::Limited(Limited { retry_after, .. }) => Some(*retry_after),
            _ => None,
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
        if let Some(seconds) = self.retry_after() {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
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

    /// The HTTP+JSON answer (a `google.rpc.Status`, as every HTTP+JSON error).
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
    /// The gRPC status: `UNAUTHENTICATED`, `PERMISSION_DENIED`, `UNAVAILABLE` or
    /// `RESOURCE_EXHAUSTED`, the message, the challenges as `www-authenticate` metadata and
    /// `retry-after` where the refusal says when to try again.
    #[cfg(feature = "grpc")]
    pub(crate) fn grpc(&self) -> tonic::Status {
        crate::server::telemetry::refused(self.reason());
        let code = match self {
            Refusal::Unauthenticated { .. } => tonic::Code::Unauthenticated,
            Refusal::Forbidden { .. } => tonic::Code::PermissionDenied,
            Refusal::Unavailable => tonic::Code::Unavailable,
            Refusal::Limited(_) => tonic::Code::ResourceExhausted,
        };
        let (.., message, challenges) = self.parts();
        let mut metadata = tonic::metadata::MetadataMap::new();
        if let Some(seconds) = self.retry_after() {
            metadata.insert("retry-after", seconds.into());
        }
        for c in challenges {
            if let Ok(v) = c.parse() {
                metadata.append("www-authenticate", v);
            }
        }
        tonic::Status::with_metadata(code, message, metadata)
    }
}
