//! The HTTP gate in front of `/mcp`: the body limit, the caller's credentials, a tool the
//! caller may not use refused as MCP's authorization spec says, and the protected-resource
//! metadata (RFC 9728).

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

use crate::card::{AgentCard, SecurityScheme};

use crate::server::auth::{Admission, Guard, Refusal};
use crate::server::call::Binding;
use crate::server::interfaces::Endpoint;
use crate::server::telemetry::CallRecord;

/// What the `/mcp` layer checks: the card's security, and which skill each tool runs.
pub(super) struct Gate {
    pub(super) guard: Option<Arc<Guard>>,
    pub(super) tools: Vec<(String, usize)>,
    /// The protected-resource metadata and its URL, where the card declares OAuth.
    pub(super) metadata: Option<(Value, String)>,
    pub(super) body_limit: usize,
}

/// The header that names the MCP protocol version of a request (on each call's record).
const PROTOCOL_VERSION: axum::http::HeaderName =
    axum::http::HeaderName::from_static("mcp-protocol-version");

/// The skill of a `tools/call` whose requirement the gate checked for the caller (in the
/// request's extensions, for the call's [context](crate::server::call::Context)).
#[derive(Debug, Clone, Copy)]
pub(super) struct Admitted(pub(super) usize);

/// `request` through the gate in front of the MCP endpoint, then to `next` (the SDK): the body
/// limit, the caller's credentials refused (as the authentication layer found them), and a
/// `tools/call` of a skill the caller may not use refused as MCP's authorization spec says
/// (`403`, `insufficient_scope`), before the SDK reads the call.
pub(super) async fn gated<F>(
    gate: &Gate,
    request: axum::extract::Request,
    next: impl FnOnce(axum::extract::Request) -> F,
) -> Response
where
    F: std::future::Future<Output = Response>,
{
    use crate::server::http::body::{self as body_limit, BodyError};
    let (mut parts, body) = request.into_parts();
    let refuse = |refusal: &Refusal| gate.refusal(refusal);
    let principal = match parts.extensions.get::<Admission>() {
        Some(Admission::Refused(refusal)) => return refuse(refusal),
        Some(Admission::Caller(principal)) => principal.clone(),
        None => None,
    };
    let bytes = match body_limit::read(&parts.headers, body, gate.body_limit).await {
        Ok(bytes) => bytes,
        Err(error) => {
            let message = error.message(gate.body_limit);
            return match error {
                BodyError::TooLarge => {
                    body_limit::closing(rpc_error(StatusCode::PAYLOAD_TOO_LARGE, -32600, message))
                }
                BodyError::Unreadable => rpc_error(StatusCode::BAD_REQUEST, -32600, message),
            };
        }
    };
    let delete = parts.method == axum::http::Method::DELETE;
    let mut record = None;
    if parts.method == axum::http::Method::POST {
        let called = match gate.called(&bytes) {
            Ok((name, called)) => {
                let version = parts
                    .headers
                    .get(PROTOCOL_VERSION)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default();
                record = Some(CallRecord::begin(Binding::Mcp.names(), name, version));
                called
            }
            Err((code, message)) => return rpc_error(StatusCode::BAD_REQUEST, code, message),
        };
        if let (Some(guard), Some(skill)) = (&gate.guard, called) {
            if let Err(refusal) = guard.authorize_skill(skill, principal.as_deref()) {
                return refuse(&refusal);
            }
            parts.extensions.insert(Admitted(skill));
        }
    }
    let mut response = next(axum::extract::Request::from_parts(parts, Body::from(bytes))).await;
    if let Some(record) = record {
        record.end(response.status().as_u16() < 400);
    }
    // A session ended (`DELETE`) is answered `202` by the SDK; MCP clients expect `200` or
    // `204` (the Python SDK warns of a failed termination otherwise): nothing is pending.
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

/// A JSON-RPC error with its HTTP status, for a request refused before the SDK read it.
pub(super) fn rpc_error(status: StatusCode, code: i32, message: String) -> Response {
    let error = a2a::JsonRpcError {
        code,
        message,
        data: None,
    };
    let answer = a2a::JsonRpcResponse::error(a2a::JsonRpcId::Null, error);
    let response = crate::server::errors::json_response(status, &answer);
    crate::server::telemetry::failed();
    response
}

impl Gate {
    /// The skill a posted message calls (a `tools/call` of a known tool), read once from the
    /// body; a body that is not one JSON-RPC 2.0 message is a JSON-RPC error's code and
    /// message (`-32700`: not JSON, with the line and column; `-32600`: not a message).
    pub(super) fn called(&self, body: &[u8]) -> Result<(String, Option<usize>), (i32, String)> {
        use std::borrow::Cow;
        #[derive(serde::Deserialize)]
        struct Envelope<'a> {
            #[serde(borrow)]
            jsonrpc: Option<Cow<'a, str>>,
            #[serde(borrow)]
            method: Option<Cow<'a, str>>,
            #[serde(borrow)]
            params: Option<Params<'a>>,
            result: Option<serde::de::IgnoredAny>,
            error: Option<serde::de::IgnoredAny>,
        }
        #[derive(serde::Deserialize)]
        struct Params<'a> {
            #[serde(borrow)]
            name: Option<Cow<'a, str>>,
        }
        let envelope: Envelope<'_> = serde_json::from_slice(body).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => (
                -32600,
                format!("the body is not a JSON-RPC 2.0 message (an object with `jsonrpc`, and `method`, `result` or `error`): {e}"),
            ),
            _ => (-32700, format!("the body is not JSON: {e}")),
        })?;
        let shaped =
            envelope.method.is_some() || envelope.result.is_some() || envelope.error.is_some();
        if envelope.jsonrpc.as_deref() != Some("2.0") || !shaped {
            return Err((
                -32600,
                "the body is not a JSON-RPC 2.0 message: it needs `\"jsonrpc\": \"2.0\"` and a `method` (or `result` or `error`)".to_owned(),
            ));
        }
        let method = envelope
            .method
            .as_deref()
            .unwrap_or("(a response)")
            .to_owned();
        if method != "tools/call" {
            return Ok((method, None));
        }
        let name = envelope.params.and_then(|p| p.name);
        let skill =
            name.and_then(|name| self.tools.iter().find(|(n, _)| *n == name).map(|(_, s)| *s));
        Ok((method, skill))
    }

    /// The answer to a refused request: a JSON-RPC error with the HTTP status and challenges,
    /// the bearer challenges naming the protected-resource metadata where there is some.
    pub(super) fn refusal(&self, refusal: &Refusal) -> Response {
        let mut response =
            crate::server::bindings::http::jsonrpc::refused(refusal, a2a::JsonRpcId::Null);
        let Some((_, url)) = &self.metadata else {
            return response;
        };
        let headers = response.headers_mut();
        let challenges: Vec<HeaderValue> = headers
            .get_all(header::WWW_AUTHENTICATE)
            .iter()
            .map(|value| {
                let text = value.to_str().unwrap_or_default();
                if text.starts_with("Bearer") {
                    let joined = if text == "Bearer" {
                        format!("Bearer resource_metadata=\"{url}\"")
                    } else {
                        format!("{text}, resource_metadata=\"{url}\"")
                    };
                    HeaderValue::from_str(&joined).unwrap_or_else(|_| value.clone())
                } else {
                    value.clone()
                }
            })
            .collect();
        headers.remove(header::WWW_AUTHENTICATE);
        for challenge in challenges {
            headers.append(header::WWW_AUTHENTICATE, challenge);
        }
        response
    }
}

/// The protected-resource metadata (RFC 9728) of the MCP endpoint and its URL, where the card
/// declares OAuth 2.0 or OpenID Connect: the authorization servers its schemes name, and
/// their scopes.
pub(super) fn resource_metadata(card: &AgentCard, endpoint: &Endpoint) -> Option<(Value, String)> {
    let mut servers: Vec<String> = Vec::new();
    let mut scopes: Vec<String> = Vec::new();
    for scheme in card.security_schemes.values() {
        match scheme {
            SecurityScheme::OAuth2(oauth) => {
                let issuer = oauth
                    .oauth2_metadata_url
                    .as_deref()
                    .map(issuer_of)
                    .or_else(|| {
                        oauth.flows.iter().find_map(|flow| {
                            flow.authorization_url
                                .as_deref()
                                .or(flow.token_url.as_deref())
                                .map(origin_of)
                        })
                    });
                servers.extend(issuer);
                for flow in oauth.flows.iter() {
                    scopes.extend(flow.scopes.keys().cloned());
                }
            }
            SecurityScheme::OpenIdConnect(oidc) => {
                servers.push(issuer_of(&oidc.open_id_connect_url))
            }
            _ => {}
        }
    }
    if servers.is_empty() {
        return None;
    }
    servers.dedup();
    scopes.sort();
    scopes.dedup();
    let origin = endpoint.origin();
    let document = json!({
        "resource": format!("{origin}{}", endpoint.mcp_path()),
        "authorization_servers": servers,
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": card.name,
    });
    Some((document, format!("{origin}{}", metadata_path(endpoint))))
}

/// The issuer of an authorization server's metadata URL (RFC 8414, OpenID Connect
/// discovery): the URL without its well-known suffix.
pub(super) fn issuer_of(url: &str) -> String {
    for suffix in [
        "/.well-known/openid-configuration",
        "/.well-known/oauth-authorization-server",
    ] {
        if let Some(issuer) = url.strip_suffix(suffix) {
            return issuer.to_owned();
        }
    }
    origin_of(url)
}

/// `scheme://authority` of `url`.
pub(super) fn origin_of(url: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    match url[start..].find('/') {
        Some(end) => url[..start + end].to_owned(),
        None => url.to_owned(),
    }
}

/// Where the protected-resource metadata (RFC 9728) of the MCP endpoint is served, for agents
/// whose card declares OAuth 2.0 or OpenID Connect.
///
/// ```
/// // What a `401` from `/mcp` names in its `WWW-Authenticate: Bearer resource_metadata="..."`.
/// assert!(a2a_card::server::mcp::RESOURCE_METADATA_PATH.starts_with("/.well-known/oauth-protected-resource"));
/// ```
pub const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// Where the protected-resource metadata of the MCP endpoint of `endpoint` is (RFC 9728
/// section 3.1: the well-known prefix, then the resource's path): [`RESOURCE_METADATA_PATH`]
/// for an agent alone on its listener, `/.well-known/oauth-protected-resource/planner/mcp`
/// for one a [`Host`](crate::server::Host) mounts at `/planner`.
pub(super) fn metadata_path(endpoint: &Endpoint) -> String {
    format!(
        "/.well-known/oauth-protected-resource{}",
        endpoint.mcp_path()
    )
}
