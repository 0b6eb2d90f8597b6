//! The authentication layer, and refusals: what a request's credentials came to when they do
//! not let it in (found by the layer, or by the lifecycle for a skill's own requirement): its
//! status, code, message, challenges and when to try again, which each binding answers in its
//! own shape.

use std::sync::Arc;

use a2a::{A2AError, TypedDetail, errordetails};
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

    /// The HTTP status of the refusal on the HTTP bindings.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Refusal::Unauthenticated { .. } => StatusCode::UNAUTHORIZED,
            Refusal::Forbidden { .. } => StatusCode::FORBIDDEN,
            Refusal::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Refusal::Limited(_) => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    /// Its canonical status (`google.rpc.Code`), which a gRPC status and an HTTP+JSON
    /// `google.rpc.Status` both carry: the number and its name.
    pub(crate) fn canonical(&self) -> (i32, &'static str) {
        match self {
            Refusal::Unauthenticated { .. } => (16, "UNAUTHENTICATED"),
            Refusal::Forbidden { .. } => (7, "PERMISSION_DENIED"),
            Refusal::Unavailable => (14, "UNAVAILABLE"),
            Refusal::Limited(_) => (8, "RESOURCE_EXHAUSTED"),
        }
    }

    /// The A2A error code (JSON-RPC's).
    pub(crate) fn code(&self) -> i32 {
        match self {
            Refusal::Unauthenticated { .. } => UNAUTHENTICATED,
            Refusal::Forbidden { .. } => UNAUTHORIZED,
            Refusal::Unavailable => a2a::error_code::INTERNAL_ERROR,
            Refusal::Limited(_) => super::RATE_LIMITED,
        }
    }

    /// The reason its `ErrorInfo` detail names.
    pub(crate) fn error_reason(&self) -> &'static str {
        match self {
            Refusal::Unauthenticated { .. } => "UNAUTHENTICATED",
            Refusal::Forbidden { .. } => "UNAUTHORIZED",
            Refusal::Unavailable => "UNAVAILABLE",
            Refusal::Limited(_) => "RATE_LIMITED",
        }
    }

    /// What the caller is told.
    pub(crate) fn message(&self) -> &str {
        match self {
            Refusal::Unauthenticated { message, .. } | Refusal::Forbidden { message, .. } => {
                message
            }
            Refusal::Unavailable => "the credentials cannot be checked now; try again later",
            Refusal::Limited(Limited { message, .. }) => message,
        }
    }

    /// The challenges of the schemes that would let the caller in (`WWW-Authenticate`).
    pub(crate) fn challenges(&self) -> &[String] {
        match self {
            Refusal::Unauthenticated { challenges, .. } | Refusal::Forbidden { challenges, .. } => {
                challenges
            }
            Refusal::Unavailable | Refusal::Limited(_) => &[],
        }
    }

    /// In how many seconds the call may be tried again, where the refusal says.
    pub(crate) fn retry_after(&self) -> Option<u64> {
        match self {
            Refusal::Unavailable => Some(5),
            Refusal::Limited(Limited { retry_after, .. }) => Some(*retry_after),
            _ => None,
        }
    }

    /// As an A2A error (code, message, `ErrorInfo`).
    pub(crate) fn error(&self) -> A2AError {
        A2AError::new(self.code(), self.message()).with_details(vec![self.error_info()])
    }

    /// Its `ErrorInfo` detail.
    pub(crate) fn error_info(&self) -> TypedDetail {
        TypedDetail::error_info(self.error_reason(), errordetails::PROTOCOL_DOMAIN, None)
    }

    /// `response`, a binding's answer over HTTP, as the refusal's: its status, the
    /// challenges (`WWW-Authenticate`) and `Retry-After` where the refusal says when; counted.
    pub(crate) fn over_http(&self, mut response: Response) -> Response {
        crate::server::telemetry::refused(self.reason());
        *response.status_mut() = self.status();
        for c in self.challenges() {
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
}
