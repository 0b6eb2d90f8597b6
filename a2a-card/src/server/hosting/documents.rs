//! The card route and the capabilities route: documents serialised once, answered with
//! validators, caching and CORS for public discovery.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use axum::routing::get;
use serde_json::Value;

use crate::card::AgentCard;
use crate::server::call::A2A_VERSION_HEADER;
use crate::server::interfaces::{AGENT_CARD_PATH, AI_CATALOG_PATH, CAPABILITIES_PATH};
use crate::wire::Profile;

const JSON: HeaderValue = HeaderValue::from_static("application/json");
const ANY_ORIGIN: HeaderValue = HeaderValue::from_static("*");
const VARY_VERSION: HeaderValue = HeaderValue::from_static("A2A-Version");
const EXPOSE: HeaderValue = HeaderValue::from_static("ETag");
const METHODS: HeaderValue = HeaderValue::from_static("GET, HEAD, OPTIONS");
const ALLOW_HEADERS: HeaderValue = HeaderValue::from_static("A2A-Version, If-None-Match");
const PREFLIGHT_MAX_AGE: HeaderValue = HeaderValue::from_static("86400");

/// One JSON document, serialised once, with its strong validator.
#[derive(Debug, Clone)]
pub(crate) struct Document {
    body: Bytes,
    etag: HeaderValue,
}

impl Document {
    pub(crate) fn new(value: &Value) -> Document {
        // Serialising a `Value` cannot fail (its keys are strings).
        let body = Bytes::from(serde_json::to_vec(value).unwrap_or_default());
        let etag = HeaderValue::from_str(&format!("\"{:016x}\"", fnv1a(&body)))
            .unwrap_or_else(|_| HeaderValue::from_static("\"0\""));
        Document { body, etag }
    }

    /// The serialised bytes.
    #[cfg(test)]
    pub(crate) fn body(&self) -> &Bytes {
        &self.body
    }

    /// `200` with the body, or `304` when the request's `If-None-Match` names the document.
    fn answer(&self, request: &HeaderMap, cache_control: &HeaderValue) -> Response {
        let fresh = request
            .get_all(header::IF_NONE_MATCH)
            .iter()
            .any(|v| matches_etag(v.as_bytes(), self.etag.as_bytes()));
        let mut h = HeaderMap::with_capacity(8);
        let (status, body) = if fresh {
            (StatusCode::NOT_MODIFIED, Body::empty())
        } else {
            h.insert(header::CONTENT_TYPE, JSON);
            (StatusCode::OK, Body::from(self.body.clone()))
        };
        h.insert(header::ETAG, self.etag.clone());
        h.insert(header::CACHE_CONTROL, cache_control.clone());
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, ANY_ORIGIN);
        h.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, EXPOSE);
        let mut response = Response::new(body);
        *response.status_mut() = status;
        *response.headers_mut() = h;
        response
    }
}

/// Whether an `If-None-Match` value (`*`, or a list of entity tags) names `etag`, with the weak
/// comparison RFC 9110 section 13.1.2 asks for.
fn matches_etag(header: &[u8], etag: &[u8]) -> bool {
    let Ok(header) = std::str::from_utf8(header) else {
        return false;
    };
    let Ok(etag) = std::str::from_utf8(etag) else {
        return false;
    };
    header
        .split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

/// 64-bit FNV-1a: a stable hash of the bytes, for the validator (not a security measure).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The card without its signatures, for the 0.3 document: a card signature covers the 1.0
/// fields, which the 0.3 document does not all hold (it lists only the 0.3 interfaces), so it
/// would not verify there.
fn unsigned(card: &AgentCard) -> std::borrow::Cow<'_, AgentCard> {
    if card.signatures.is_empty() {
        return std::borrow::Cow::Borrowed(card);
    }
    let mut card = card.clone();
    card.signatures.clear();
    std::borrow::Cow::Owned(card)
}

/// The card in every profile and the capabilities snapshot, serialised once.
#[derive(Debug)]
pub(crate) struct Documents {
    v1: Document,
    v0_3: Document,
    compat: Document,
    capabilities: Document,
    cache_control: HeaderValue,
}

impl Documents {
    pub(crate) fn new(card: &AgentCard, capabilities: &Value, max_age: Duration) -> Documents {
        let cache_control = cache_control(max_age);
        Documents {
            v1: Document::new(&card.to_json(Profile::V1)),
            v0_3: Document::new(&unsigned(card).to_json(Profile::V0_3)),
            compat: Document::new(&card.to_json(Profile::Compat)),
            capabilities: Document::new(capabilities),
            cache_control,
        }
    }

    /// The card for a profile.
    pub(crate) fn card(&self, profile: Profile) -> &Document {
        match profile {
            Profile::V1 => &self.v1,
            Profile::V0_3 => &self.v0_3,
            _ => &self.compat,
        }
    }

    /// The routes: the card and the capabilities, with `OPTIONS` preflight.
    pub(crate) fn router(self: Arc<Self>) -> axum::Router {
        axum::Router::new()
            .route(AGENT_CARD_PATH, get(card_route).options(preflight))
            .route(
                CAPABILITIES_PATH,
                get(capabilities_route).options(preflight),
            )
            .with_state(self)
    }
}

/// `Cache-Control` of a public document clients may keep for `max_age`.
fn cache_control(max_age: Duration) -> HeaderValue {
    HeaderValue::from_str(&format!("public, max-age={}", max_age.as_secs()))
        .unwrap_or_else(|_| HeaderValue::from_static("public, max-age=300"))
}

/// The route of the AI Catalog of the agents a listener serves (`document`), answered as the
/// cards are.
pub(crate) fn catalog_router(document: &Value, max_age: Duration) -> axum::Router {
    let catalog = Arc::new((Document::new(document), cache_control(max_age)));
    axum::Router::new().route(
        AI_CATALOG_PATH,
        get(move |request: Request| {
            let catalog = Arc::clone(&catalog);
            async move { catalog.0.answer(request.headers(), &catalog.1) }
        })
        .options(preflight),
    )
}

/// The profile an `A2A-Version` header asks for: none (or empty) is the compat document, a 1.x
/// version is 1.0, 0.3 (with any patch) is 0.3; anything else is an error message.
pub(crate) fn profile_for(headers: &HeaderMap) -> Result<Profile, String> {
    let Some(value) = headers.get(A2A_VERSION_HEADER) else {
        return Ok(Profile::Compat);
    };
    let text = value.to_str().unwrap_or("\u{fffd}").trim();
    if text.is_empty() {
        return Ok(Profile::Compat);
    }
    let mut parts = text.split('.');
    let major = parts.next().unwrap_or_default();
    let minor = parts.next();
    let numeric = text
        .split('.')
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    match (numeric, major, minor) {
        (true, "1", _) => Ok(Profile::V1),
        (true, "0", Some("3")) => Ok(Profile::V0_3),
        _ => Err(format!(
            "A2A-Version `{}` is not supported: this agent card is served as 1.0 (`A2A-Version: 1.0`), 0.3 (`A2A-Version: 0.3`), or, with no header, as one document holding both",
            text.chars().take(32).collect::<String>()
        )),
    }
}

// The handlers take the request rather than a `HeaderMap`, which axum would clone.
async fn card_route(State(docs): State<Arc<Documents>>, request: Request) -> Response {
    let headers = request.headers();
    let mut response = match profile_for(headers) {
        Ok(profile) => docs.card(profile).answer(headers, &docs.cache_control),
        Err(message) => {
            let body = serde_json::json!({"error": message, "supportedVersions": ["1.0", "0.3"]});
            let mut r = Response::new(Body::from(body.to_string()));
            *r.status_mut() = StatusCode::BAD_REQUEST;
            r.headers_mut().insert(header::CONTENT_TYPE, JSON);
            r.headers_mut()
                .insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, ANY_ORIGIN);
            r
        }
    };
    response.headers_mut().insert(header::VARY, VARY_VERSION);
    response
}

async fn capabilities_route(State(docs): State<Arc<Documents>>, request: Request) -> Response {
    docs.capabilities
        .answer(request.headers(), &docs.cache_control)
}

/// The CORS preflight of the discovery routes.
async fn preflight(method: Method) -> Response {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = if method == Method::OPTIONS {
        StatusCode::NO_CONTENT
    } else {
        StatusCode::METHOD_NOT_ALLOWED
    };
    let h = r.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, ANY_ORIGIN);
    h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, METHODS);
    h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, ALLOW_HEADERS);
    h.insert(header::ACCESS_CONTROL_MAX_AGE, PREFLIGHT_MAX_AGE);
    h.insert(header::ALLOW, METHODS);
    r
}

/// The extended card of agent `A` as the official type serves it (`GetExtendedAgentCard`), with
/// the interfaces of `endpoint`; `None` when the card offers none.
pub(crate) fn extended_card<A: crate::Agent>(
    endpoint: &crate::server::interfaces::Endpoint,
    v0_3: bool,
) -> Result<Option<a2a::AgentCard>, crate::server::ServerError> {
    let card = A::card().map_err(|e| crate::server::ServerError::Card(e.clone()))?;
    if card.capabilities.extended_agent_card != Some(true) {
        return Ok(None);
    }
    let extended = crate::agent::build_extended_card(&A::DECL, A::SKILLS)
        .map_err(crate::server::ServerError::Card)?;
    let extended = endpoint.card(&extended, v0_3);
    let options = crate::wire::RenderOptions::new(crate::wire::Profile::V1)
        .schemas(crate::wire::SchemaPlacement::ExtensionParams);
    let mut json = extended.to_json_with(&options);
    // The official type requires `tags` on every skill; a skill declared without any has none
    // in the JSON.
    for skill in json
        .get_mut("skills")
        .and_then(serde_json::Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(skill) = skill.as_object_mut() {
            skill
                .entry("tags")
                .or_insert_with(|| serde_json::Value::Array(Vec::new()));
        }
    }
    serde_json::from_value(json)
        .map(Some)
        .map_err(|e| crate::server::ServerError::Url {
            url: endpoint.url.clone(),
            reason: format!("the extended card cannot be served: {e}"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(version: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            A2A_VERSION_HEADER,
            HeaderValue::from_str(version).unwrap_or(JSON),
        );
        h
    }

    #[test]
    fn the_version_header_picks_the_profile() {
        assert_eq!(profile_for(&HeaderMap::new()), Ok(Profile::Compat));
        assert_eq!(profile_for(&headers(" ")), Ok(Profile::Compat));
        for v in ["1.0", "1", "1.1", " 1.0 "] {
            assert_eq!(profile_for(&headers(v)), Ok(Profile::V1), "{v}");
        }
        for v in ["0.3", "0.3.0"] {
            assert_eq!(profile_for(&headers(v)), Ok(Profile::V0_3), "{v}");
        }
        for v in ["2.0", "0.2", "latest", "1.x", "v1", "0", ".3"] {
            let err = profile_for(&headers(v)).unwrap_err();
            assert!(err.contains("not supported"), "{v}: {err}");
        }
    }

    #[test]
    fn if_none_match_uses_the_weak_comparison() {
        assert!(matches_etag(b"\"abc\"", b"\"abc\""));
        assert!(matches_etag(b"W/\"abc\"", b"\"abc\""));
        assert!(matches_etag(b"\"x\", \"abc\"", b"\"abc\""));
        assert!(matches_etag(b"*", b"\"abc\""));
        assert!(!matches_etag(b"\"abd\"", b"\"abc\""));
        assert!(!matches_etag(b"\xff", b"\"abc\""));
    }

    #[test]
    fn the_validator_follows_the_bytes() {
        let a = Document::new(&serde_json::json!({"a": 1}));
        let b = Document::new(&serde_json::json!({"a": 2}));
        assert_ne!(a.etag, b.etag);
        assert_eq!(a.etag, Document::new(&serde_json::json!({"a": 1})).etag);
        assert_eq!(a.body().as_ref(), br#"{"a":1}"#);
    }
}
