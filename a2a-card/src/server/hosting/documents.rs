//! The card route and the capabilities route: documents serialised once, answered with
//! validators, caching and CORS for public discovery.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
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

    /// The card route's answer: the card in the profile `A2A-Version` asks for (`304` when
    /// `If-None-Match` names it), or `400` for a version the card is not served in.
    fn card_answer(&self, headers: &HeaderMap) -> Response {
        let mut response = match profile_for(headers) {
            Ok(profile) => self.card(profile).answer(headers, &self.cache_control),
            Err(message) => {
                let body =
                    serde_json::json!({"error": message, "supportedVersions": ["1.0", "0.3"]});
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
}

/// `Cache-Control` of a public document clients may keep for `max_age`.
fn cache_control(max_age: Duration) -> HeaderValue {
    HeaderValue::from_str(&format!("public, max-age={}", max_age.as_secs()))
        .unwrap_or_else(|_| HeaderValue::from_static("public, max-age=300"))
}

/// One published path and what answers it.
#[derive(Debug, Clone)]
enum Page {
    /// An agent's card, in the profile the request asks for.
    Card(Arc<Documents>),
    /// An agent's capabilities.
    Capabilities(Arc<Documents>),
    /// A listener's AI Catalog, and its `Cache-Control`.
    Catalog(Arc<(Document, HeaderValue)>),
}

impl Page {
    fn answer(&self, headers: &HeaderMap) -> Response {
        match self {
            Page::Card(docs) => docs.card_answer(headers),
            Page::Capabilities(docs) => docs.capabilities.answer(headers, &docs.cache_control),
            Page::Catalog(catalog) => catalog.0.answer(headers, &catalog.1),
        }
    }
}

/// The documents a listener publishes (every agent's card and capabilities, the AI Catalog),
/// by path: [`router`](Self::router) serves them among the other routes, and the listener
/// answers a plain `GET` of one of them ahead of its router and layers
/// ([`answer`](Self::answer)), since nothing in the answer depends on them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Published {
    pages: Vec<(String, Page)>,
}

impl Published {
    /// An agent's card and capabilities under `prefix` (`""`, or a path such as `/a2a`).
    pub(crate) fn agent(&mut self, prefix: &str, docs: &Arc<Documents>) {
        let prefix = prefix.trim_end_matches('/');
        self.pages.push((
            format!("{prefix}{AGENT_CARD_PATH}"),
            Page::Card(Arc::clone(docs)),
        ));
        self.pages.push((
            format!("{prefix}{CAPABILITIES_PATH}"),
            Page::Capabilities(Arc::clone(docs)),
        ));
    }

    /// The AI Catalog of the agents a listener serves (`document`), answered as the cards are.
    pub(crate) fn catalog(&mut self, document: &Value, max_age: Duration) {
        let catalog = Arc::new((Document::new(document), cache_control(max_age)));
        self.pages
            .push((AI_CATALOG_PATH.to_owned(), Page::Catalog(catalog)));
    }

    /// The routes of the documents (`GET` and `HEAD`, and the CORS preflight).
    pub(crate) fn router(&self) -> axum::Router {
        self.pages
            .iter()
            .fold(axum::Router::new(), |router, (path, page)| {
                let page = page.clone();
                let get = get(move |request: Request| {
                    let page = page.clone();
                    // The request rather than a `HeaderMap`, which axum would clone.
                    async move { page.answer(request.headers()) }
                });
                router.route(path, get.options(preflight))
            })
    }

    /// The answer to `request` where it is a `GET` of a published document without a body;
    /// `None` for any other request.
    pub(crate) fn answer(&self, request: &Request) -> Option<Response> {
        if request.method() != Method::GET
            || request.headers().contains_key(header::TRANSFER_ENCODING)
            || request
                .headers()
                .get(header::CONTENT_LENGTH)
                .is_some_and(|length| length.as_bytes() != b"0")
        {
            return None;
        }
        let path = request.uri().path();
        let (_, page) = self.pages.iter().find(|(at, _)| at == path)?;
        Some(page.answer(request.headers()))
    }
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

    /// A `method` request of `path` with `headers`.
    fn request(method: Method, path: &str, headers: &[(&str, &str)]) -> Request {
        let mut request = Request::builder().method(method).uri(path);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(Body::empty()).expect("a request")
    }

    /// A `GET` of `path` with `headers`.
    fn get(path: &str, headers: &[(&str, &str)]) -> Request {
        request(Method::GET, path, headers)
    }

    async fn parts(response: Response) -> (StatusCode, HeaderMap, Bytes) {
        let (parts, body) = response.into_parts();
        let body = axum::body::to_bytes(body, usize::MAX)
            .await
            .expect("the body");
        (parts.status, parts.headers, body)
    }

    fn published() -> Published {
        let card: AgentCard = serde_json::from_value(serde_json::json!({
            "name": "Echo", "description": "Echoes.", "version": "1.0.0",
            "supportedInterfaces": [{"url": "http://127.0.0.1:9/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "echo", "name": "Echo", "description": "Echoes.", "tags": []}]
        }))
        .expect("a card");
        let docs = Arc::new(Documents::new(
            &card,
            &serde_json::json!({"streaming": true}),
            Duration::from_secs(60),
        ));
        let mut published = Published::default();
        published.agent("", &docs);
        published.agent("/a2a/", &docs);
        published.catalog(&serde_json::json!({"entries": []}), Duration::from_secs(60));
        published
    }

    #[tokio::test]
    async fn a_published_document_is_answered_ahead_as_its_route_answers_it() {
        use tower::ServiceExt as _;
        let published = published();
        let router = published.router();
        let etag = {
            let first = published
                .answer(&get(AGENT_CARD_PATH, &[("a2a-version", "1.0")]))
                .expect("the card is published");
            first.headers()[header::ETAG]
                .to_str()
                .expect("ASCII")
                .to_owned()
        };
        for (path, headers) in [
            (AGENT_CARD_PATH, vec![]),
            (AGENT_CARD_PATH, vec![("a2a-version", "1.0")]),
            (AGENT_CARD_PATH, vec![("a2a-version", "0.3")]),
            (AGENT_CARD_PATH, vec![("a2a-version", "7")]),
            (
                AGENT_CARD_PATH,
                vec![("a2a-version", "1.0"), ("if-none-match", etag.as_str())],
            ),
            (
                "/a2a/.well-known/agent-card.json",
                vec![("a2a-version", "1.0")],
            ),
            (CAPABILITIES_PATH, vec![]),
            ("/a2a/capabilities", vec![]),
            (AI_CATALOG_PATH, vec![]),
        ] {
            let ahead = published
                .answer(&get(path, &headers))
                .unwrap_or_else(|| panic!("{path} {headers:?} is answered ahead"));
            let routed = router
                .clone()
                .oneshot(get(path, &headers))
                .await
                .expect("the router answers");
            let (ahead, mut routed) = (parts(ahead).await, parts(routed).await);
            // Set by axum from the body's length; hyper sets it on the wire for both.
            routed.1.remove(header::CONTENT_LENGTH);
            assert_eq!(ahead, routed, "{path} {headers:?}");
        }
        let (status, headers, body) = parts(
            published
                .answer(&get(
                    AGENT_CARD_PATH,
                    &[("a2a-version", "1.0"), ("if-none-match", &etag)],
                ))
                .expect("answered"),
        )
        .await;
        assert_eq!((status, body.len()), (StatusCode::NOT_MODIFIED, 0));
        assert_eq!(headers[header::ETAG], etag.as_str());
    }

    #[test]
    fn only_a_plain_get_of_a_published_path_is_answered_ahead() {
        let published = published();
        let with =
            |method: Method, headers: &[(&str, &str)]| request(method, AGENT_CARD_PATH, headers);
        assert!(published.answer(&with(Method::GET, &[])).is_some());
        assert!(
            published
                .answer(&with(Method::GET, &[("content-length", "0")]))
                .is_some()
        );
        for (method, headers) in [
            (Method::HEAD, vec![]),
            (Method::OPTIONS, vec![]),
            (Method::POST, vec![]),
            (Method::GET, vec![("content-length", "3")]),
            (Method::GET, vec![("transfer-encoding", "chunked")]),
        ] {
            assert!(
                published.answer(&with(method.clone(), &headers)).is_none(),
                "{method} {headers:?}"
            );
        }
        for path in [
            "/",
            "/.well-known/agent-card.json/",
            "/a2a",
            "/b/capabilities",
        ] {
            assert!(published.answer(&get(path, &[])).is_none(), "{path}");
        }
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
