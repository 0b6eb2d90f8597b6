//! The caller's side (feature `client`): discover an agent, call its skills with input checked
//! locally against the card's schemas, follow streams, answer questions, and the typed client
//! that `#[agent]` generates.
//!
//! Everything goes through the official A2A Rust client (`a2a-client-lf`, on the official
//! types, `a2a-lf`): this module adds what a caller needs from the card around it.
//!
//! - [`RemoteAgent::discover`] (or [`Connect`] with credentials and signature checks) reads the
//!   card of any agent, declared with this crate or not, in any profile and version (1.0, 0.3,
//!   compat, 0.2), lints it ([`RemoteAgent::findings`]) and lists its skills with their input
//!   and output schemas ([`RemoteAgent::skills`]).
//! - [`RemoteAgent::call`] sends a skill's input and waits for the task; data is validated
//!   against the skill's input schema *before* anything is sent, and a violation names its JSON
//!   pointer. [`RemoteAgent::stream`] gives a [`Run`]: a `Stream` of [`Event`]s (progress,
//!   output chunks, questions, the end), which can [`answer`](Run::answer) a question.
//!   [`RemoteAgent::send`] returns at once with a [`TaskHandle`] to poll, follow or cancel.
//! - `#[agent]` generates `NameClient` for a declared agent `Name`, with one method per skill
//!   that takes the skill's input type and gives its output type (see [`Call`]). It refuses
//!   to connect to an agent whose card lacks one of its skills or publishes a different schema
//!   (by digest), and validates every output against its schema before deserialising it.
//!
//! Credentials ([`Connect::bearer_token`], [`Connect::api_key`], [`Connect::header`]) go on
//! every request, the card's included, and never into an error or `Debug` output.
//!
//! Calls go through the official client, over the card's A2A 1.0 JSON-RPC or HTTP+JSON
//! interface; an agent that offers only A2A 0.3 (the installed base of the 0.3 SDKs) is called
//! over its 0.3 JSON-RPC interface, its requests and answers mapped both ways by the same
//! mapping the server uses for its own 0.3 interface, with data numbers kept exact. Agents are
//! reached over `http` or `https` (rustls, with the platform's certificate roots and any given
//! to [`Connect::root_certificates_pem`]); one HTTP client carries the card request and every
//! call of a [`RemoteAgent`].
//!
//! ```no_run
//! use a2a_card::client::{Event, Payload, RemoteAgent};
//! use futures::StreamExt;
//! use serde_json::json;
//!
//! # async fn run() -> Result<(), a2a_card::client::ClientError> {
//! let agent = RemoteAgent::discover("http://127.0.0.1:8080").await?;
//! for skill in agent.skills() {
//!     println!("{}: takes {:?}", skill.id(), skill.input_schema_name());
//! }
//! // Checked against `fightComparison` here, then sent:
//! let task = agent.call("fight-comparison", Payload::data(json!({"a": "Lion", "b": "Tiger"}))).await?;
//! println!("{:?}", task.outputs());
//!
//! let mut run = agent.stream("fight-comparison", Payload::text("Lion or Tiger?")).await?;
//! while let Some(event) = run.next().await {
//!     if let Event::Question { text, .. } = event? {
//!         run.answer(&format!("answer to {text}")).await?;
//!     }
//! }
//! # Ok(()) }
//! ```

mod error;
mod run;
mod typed;
mod v0_3;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use a2a_card_rules::media::essence_is;
use a2a_client::auth::AuthInterceptor;
use a2a_client::jsonrpc::JsonRpcTransportFactory;
use a2a_client::middleware::CallInterceptor;
use a2a_client::rest::RestTransportFactory;
use a2a_client::{A2AClient, A2AClientFactory, Transport};
use serde_json::Value;

use crate::card::{AgentCard, AgentInterface, AgentSkill};
use crate::dispatch::Violation;
use crate::lint::{self, Finding, LintOptions};
use crate::outbound::{ExtraRoots, error_chain};
use crate::schema::SchemaMode;
use crate::sign::{self, Algorithm, Jwks, VerifiedSignature};
use crate::wire::{self, Document, ReadLimits};

pub use error::ClientError;
pub use run::{Content, Event, Output, Run, TaskHandle, TaskOutcome};
pub use typed::{
    Call, ClientReturn, FromContent, IntoPayload, Pending, Streaming, TypedEvent, TypedRun,
    connect_checked,
};

/// The media type of text input and output.
const TEXT_PLAIN: &str = "text/plain";

/// What to send to a skill: structured data (checked against the skill's input schema) or
/// text.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Payload {
    /// Data for the skill's `application/json;schema=NAME` input mode.
    Data(Value),
    /// Text, for a skill that takes `text/plain`.
    Text(String),
}

impl Payload {
    /// Structured data.
    ///
    /// ```
    /// use a2a_card::client::Payload;
    /// assert!(matches!(Payload::data(serde_json::json!({"a": 1})), Payload::Data(_)));
    /// ```
    pub fn data(value: Value) -> Payload {
        Payload::Data(value)
    }

    /// Text.
    ///
    /// ```
    /// use a2a_card::client::Payload;
    /// assert_eq!(Payload::text("hi"), Payload::Text("hi".into()));
    /// ```
    pub fn text(text: impl Into<String>) -> Payload {
        Payload::Text(text.into())
    }
}

/// How to reach an agent: its URL, credentials, signature checks. [`discover`](Self::discover)
/// reads the card and gives a [`RemoteAgent`].
///
/// ```no_run
/// use a2a_card::client::Connect;
/// # async fn run() -> Result<(), a2a_card::client::ClientError> {
/// let agent = Connect::new("http://127.0.0.1:8080")
///     .bearer_token(std::env::var("AGENT_TOKEN").unwrap_or_default())
///     .header("X-Request-Source", "nightly-report")
///     .discover()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
#[must_use = "a `Connect` does nothing until `discover` is called"]
pub struct Connect {
    url: String,
    headers: Vec<(String, String)>,
    verify: Option<(Jwks, Vec<Algorithm>)>,
    max_card_bytes: usize,
    bindings: Vec<String>,
    roots: ExtraRoots,
    /// The catalog entry to take, by identifier or name.
    entry: Option<String>,
}

impl fmt::Debug for Connect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values are credentials: only their names are shown.
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Connect")
            .field("url", &self.url)
            .field("headers", &names)
            .field("verify", &self.verify.is_some())
            .field("max_card_bytes", &self.max_card_bytes)
            .field("bindings", &self.bindings)
            .field("extra_roots", &self.roots)
            .field("catalog_entry", &self.entry)
            .finish()
    }
}

impl Connect {
    /// An agent at `url`: its base URL (the card is then at
    /// `URL/.well-known/agent-card.json`) or the URL of its card (ending in `.json`).
    ///
    /// ```
    /// let c = a2a_card::client::Connect::new("http://127.0.0.1:8080");
    /// assert_eq!(c.card_url(), "http://127.0.0.1:8080/.well-known/agent-card.json");
    /// ```
    pub fn new(url: impl Into<String>) -> Connect {
        Connect {
            url: url.into(),
            headers: Vec::new(),
            verify: None,
            max_card_bytes: ReadLimits::default().max_bytes,
            bindings: vec!["JSONRPC".to_owned(), "HTTP+JSON".to_owned()],
            roots: ExtraRoots::default(),
            entry: None,
        }
    }

    /// The URL the card is read from (or, with [`catalog_entry`](Self::catalog_entry), the
    /// catalog).
    ///
    /// ```
    /// let c = a2a_card::client::Connect::new("https://a.example.com/agents/x.json");
    /// assert_eq!(c.card_url(), "https://a.example.com/agents/x.json");
    /// ```
    pub fn card_url(&self) -> String {
        let url = self.url.trim();
        let path = url.split(['?', '#']).next().unwrap_or(url);
        let document = match self.entry {
            Some(_) => "/.well-known/ai-catalog.json",
            None => "/.well-known/agent-card.json",
        };
        if path.ends_with(".json") {
            url.to_owned()
        } else {
            format!("{}{document}", url.trim_end_matches('/'))
        }
    }

    /// Takes the agent of the AI Catalog entry whose `identifier` or `displayName` is `entry`
    /// (rather than the catalog's first agent): the URL is then the host's (its catalog is at
    /// `URL/.well-known/ai-catalog.json`) or the catalog's. A catalog without such an entry
    /// is [`ClientError::NotACard`], listing the entries it has.
    ///
    /// ```
    /// let c = a2a_card::client::Connect::new("https://agents.example.com").catalog_entry("Fight Club");
    /// assert_eq!(c.card_url(), "https://agents.example.com/.well-known/ai-catalog.json");
    /// ```
    pub fn catalog_entry(mut self, entry: impl Into<String>) -> Connect {
        self.entry = Some(entry.into());
        self
    }

    /// Sends `Authorization: Bearer TOKEN` on every request.
    ///
    /// ```
    /// let c = a2a_card::client::Connect::new("http://127.0.0.1:8080").bearer_token("t0ken");
    /// assert!(!format!("{c:?}").contains("t0ken"));
    /// ```
    pub fn bearer_token(self, token: impl AsRef<str>) -> Connect {
        let value = format!("Bearer {}", token.as_ref());
        self.header("Authorization", value)
    }

    /// Sends an API key in the header `name` on every request (the card's `apiKey` scheme with
    /// `location: header` names it).
    ///
    /// ```
    /// let c = a2a_card::client::Connect::new("http://127.0.0.1:8080").api_key("X-API-Key", "k");
    /// assert!(format!("{c:?}").contains("X-API-Key"));
    /// ```
    pub fn api_key(self, name: impl Into<String>, key: impl Into<String>) -> Connect {
        self.header(name, key)
    }

    /// Sends the header `name: value` on every request.
    ///
    /// ```
    /// let c = a2a_card::client::Connect::new("http://127.0.0.1:8080").header("X-Trace", "1");
    /// ```
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Connect {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Asks for the extension `uri` on every request (the `A2A-Extensions` header, A2A 1.0
    /// section 4.6): an agent that declares it lets its skills use it, and names it in its
    /// answer; one that requires it refuses a request without it (`-32008`).
    ///
    /// ```
    /// let c = a2a_card::client::Connect::new("http://127.0.0.1:8080")
    ///     .extension("https://example.com/ext/rhyme/v1")
    ///     .extension("urn:example:audit");
    /// assert!(format!("{c:?}").contains("A2A-Extensions"));
    /// ```
    pub fn extension(mut self, uri: impl Into<String>) -> Connect {
        ask_for(&mut self.headers, uri.into());
        self
    }

    /// Refuses the agent unless one of its card's signatures verifies with a key of `keys`,
    /// by an algorithm of `allowed` (see [`sign::verify`]).
    ///
    /// ```
    /// use a2a_card::sign::{Algorithm, Jwks};
    /// let c = a2a_card::client::Connect::new("http://127.0.0.1:8080")
    ///     .verify_signature(Jwks::new(), &[Algorithm::EdDSA]);
    /// ```
    pub fn verify_signature(mut self, keys: Jwks, allowed: &[Algorithm]) -> Connect {
        self.verify = Some((keys, allowed.to_vec()));
        self
    }

    /// The largest card to read, in bytes (default: 4 MiB).
    ///
    /// ```
    /// let c = a2a_card::client::Connect::new("http://127.0.0.1:8080").max_card_bytes(65_536);
    /// ```
    pub fn max_card_bytes(mut self, n: usize) -> Connect {
        self.max_card_bytes = n;
        self
    }

    /// The protocol bindings to prefer, best first (default: `JSONRPC`, then `HTTP+JSON`;
    /// `GRPC` with the `grpc` feature).
    ///
    /// ```
    /// let c = a2a_card::client::Connect::new("http://127.0.0.1:8080").prefer_bindings(["HTTP+JSON"]);
    /// ```
    pub fn prefer_bindings<I, S>(mut self, bindings: I) -> Connect
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.bindings = bindings.into_iter().map(Into::into).collect();
        self
    }

    /// Trusts the certificates of a PEM bundle beside the platform's roots, for an agent whose
    /// certificate a private CA signed (call again to add more). A bundle that holds no
    /// certificate makes [`discover`](Self::discover) fail with
    /// [`ClientError::Certificates`].
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let ca = std::fs::read("internal-ca.pem")?;
    /// let agent = a2a_card::client::Connect::new("https://agents.internal.example/fx")
    ///     .root_certificates_pem(&ca)
    ///     .discover()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn root_certificates_pem(mut self, pem: impl AsRef<[u8]>) -> Connect {
        self.roots.add(pem.as_ref());
        self
    }

    /// The one HTTP client of the agent: the card request and every call.
    fn http_client(&self) -> Result<reqwest::Client, ClientError> {
        let builder =
            reqwest::Client::builder().connect_timeout(std::time::Duration::from_secs(10));
        let builder = self
            .roots
            .apply(builder)
            .map_err(ClientError::Certificates)?;
        builder.build().map_err(|e| ClientError::Unreachable {
            url: self.card_url(),
            message: format!("the HTTP client cannot be built: {}", error_chain(&e)),
        })
    }

    /// Reads the agent's card (with the credentials), lints it, verifies its signature when
    /// asked, and prepares the official client for its preferred 1.0 interface. Where the
    /// URL gives an AI Catalog (`/.well-known/ai-catalog.json`, the agents a host serves),
    /// the agent is its first entry's, or the one [`catalog_entry`](Self::catalog_entry)
    /// names.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), a2a_card::client::ClientError> {
    /// let agent = a2a_card::client::Connect::new("http://127.0.0.1:8080").discover().await?;
    /// println!("{} {}", agent.card().name, agent.card().version);
    /// # Ok(()) }
    /// ```
    pub async fn discover(self) -> Result<RemoteAgent, ClientError> {
        let mut card_url = self.card_url();
        let http = self.http_client()?;
        let limits = ReadLimits::default().max_bytes(self.max_card_bytes);
        let read = |url: String| {
            let (http, headers, max) = (&http, &self.headers, self.max_card_bytes);
            async move {
                let bytes = fetch_card(http, &url, headers, max).await?;
                Document::parse(&bytes, limits).map_err(|e| ClientError::NotACard {
                    url,
                    message: e.to_string(),
                })
            }
        };
        let mut document = read(card_url.clone()).await?;
        // An AI Catalog (`/.well-known/ai-catalog.json`): the agent of its first entry, or of
        // the one asked for; its card by URL, or inline.
        if is_catalog(&document.value) {
            match catalog_pick(&document.value, self.entry.as_deref()).map_err(|message| {
                ClientError::NotACard {
                    url: card_url.clone(),
                    message,
                }
            })? {
                Picked::Url(url) => {
                    card_url = url;
                    document = read(card_url.clone()).await?;
                }
                Picked::Inline(card) => {
                    let bytes = serde_json::to_vec(&card).unwrap_or_default();
                    document =
                        Document::parse(&bytes, limits).map_err(|e| ClientError::NotACard {
                            url: card_url.clone(),
                            message: format!("the catalog's inline card: {e}"),
                        })?;
                }
            }
        } else if let Some(entry) = &self.entry {
            return Err(ClientError::NotACard {
                url: card_url,
                message: format!(
                    "the catalog entry `{entry}` was asked for, and the document is not an AI Catalog (no `entries`)"
                ),
            });
        }
        if !document.value.is_object() {
            return Err(ClientError::NotACard {
                url: card_url,
                message: "the document is not a JSON object".to_owned(),
            });
        }
        let findings = lint::lint_document(&document, &LintOptions::default());
        let (card, _issues) = wire::from_value_lenient(&document.value);
        let signature = match &self.verify {
            None => SignatureStatus::NotChecked {
                signatures: card.signatures.len(),
            },
            Some((keys, allowed)) => match sign::verify(&card, keys, allowed) {
                Ok(v) => SignatureStatus::Verified(v),
                Err(e) => return Err(ClientError::Signature(e)),
            },
        };
        let validators = card
            .schemas
            .iter()
            .map(|(name, schema)| {
                let compiled = jsonschema::validator_for(schema)
                    .map(Arc::new)
                    .map_err(|e| e.to_string());
                (name.clone(), compiled)
            })
            .collect();
        // Where the agent makes sends idempotent by their messageId, every send is: a retry
        // of the same message reaches the task the first one made.
        let mut headers = self.headers.clone();
        if declares(&card, crate::idempotency::IDEMPOTENCY_EXTENSION_URI) {
            ask_for(
                &mut headers,
                crate::idempotency::IDEMPOTENCY_EXTENSION_URI.to_owned(),
            );
        }
        let client = official_client(&card, http, &headers, &self.bindings).await;
        Ok(RemoteAgent {
            inner: Arc::new(Inner {
                card_url,
                document: document.value,
                card,
                findings,
                signature,
                validators,
                client,
            }),
        })
    }
}

/// The media type of an AI Catalog entry that is an A2A agent card.
const AGENT_CARD_TYPE: &str = "application/a2a-agent-card+json";

/// Whether `document` is an AI Catalog (`{"entries": [...]}`, not a card).
fn is_catalog(document: &Value) -> bool {
    document.as_object().is_some_and(|o| {
        o.get("entries").is_some_and(Value::is_array)
            && !o.contains_key("name")
            && !o.contains_key("supportedInterfaces")
    })
}

/// Where the card of a catalog entry is.
enum Picked {
    /// At this URL (the entry's `url`).
    Url(String),
    /// In the entry (`data`).
    Inline(Value),
}

/// The agent card entry of `catalog` whose `identifier` or `displayName` is `wanted` (or the
/// first agent card entry); what is wrong otherwise.
fn catalog_pick(catalog: &Value, wanted: Option<&str>) -> Result<Picked, String> {
    let cards: Vec<&Value> = catalog["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| {
            // An entry without a type is taken for a card; another type is not one.
            e.get("type")
                .or_else(|| e.get("mediaType"))
                .and_then(Value::as_str)
                .is_none_or(|t| essence_is(t, AGENT_CARD_TYPE))
        })
        .collect();
    let named = |e: &&Value, key: &str| wanted.is_some_and(|w| e[key].as_str() == Some(w));
    let entry = match wanted {
        None => cards.first(),
        Some(_) => cards
            .iter()
            .find(|e| named(e, "identifier"))
            .or_else(|| cards.iter().find(|e| named(e, "displayName"))),
    };
    let Some(entry) = entry else {
        let listed: Vec<String> = cards
            .iter()
            .map(|e| {
                format!(
                    "`{}` ({})",
                    e["displayName"].as_str().unwrap_or("?"),
                    e["identifier"].as_str().unwrap_or("?")
                )
            })
            .collect();
        // With nothing asked for, only an empty list leaves no entry.
        return Err(if listed.is_empty() {
            "the AI Catalog lists no A2A agent card (no entry of type application/a2a-agent-card+json)".to_owned()
        } else {
            format!(
                "the AI Catalog has no agent `{}` (by identifier or displayName); it lists {}",
                wanted.unwrap_or_default(),
                listed.join(", ")
            )
        });
    };
    if let Some(url) = entry.get("url").and_then(Value::as_str) {
        return Ok(Picked::Url(url.to_owned()));
    }
    match entry.get("data") {
        Some(card) if card.is_object() => Ok(Picked::Inline(card.clone())),
        _ => Err(format!(
            "the AI Catalog's entry `{}` has neither a `url` nor an inline card (`data`)",
            entry["identifier"].as_str().unwrap_or("?")
        )),
    }
}

/// Reads at most `max` bytes (plus one, to tell a larger document) of the card.
async fn fetch_card(
    http: &reqwest::Client,
    url: &str,
    headers: &[(String, String)],
    max: usize,
) -> Result<Vec<u8>, ClientError> {
    let unreachable = |message: String| ClientError::Unreachable {
        url: url.to_owned(),
        message,
    };
    let mut request = http.get(url).header("Accept", "application/json");
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let mut response = request
        .send()
        .await
        .map_err(|e| unreachable(error_chain(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(unreachable(format!(
            "the card request was answered with HTTP {status}"
        )));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| unreachable(error_chain(&e)))?
    {
        bytes.extend_from_slice(&chunk);
        if bytes.len() > max {
            break;
        }
    }
    Ok(bytes)
}

type Official = A2AClient<Box<dyn Transport>>;

/// Sends the current span's W3C trace context with each call (feature `otel`).
#[cfg(feature = "otel")]
struct TraceContext;

#[cfg(feature = "otel")]
#[async_trait::async_trait]
impl CallInterceptor for TraceContext {
    async fn before(
        &self,
        _method: &str,
        params: &mut a2a_client::ServiceParams,
    ) -> Result<(), a2a::A2AError> {
        for (name, value) in crate::otel::headers_of(&tracing::Span::current()) {
            params.entry(name).or_default().push(value);
        }
        Ok(())
    }
}

/// `call` in a client span named `method` (feature `otel`), whose context the call sends.
#[cfg(feature = "otel")]
pub(crate) fn traced<F: std::future::Future>(
    method: &'static str,
    call: F,
) -> impl std::future::Future<Output = F::Output> {
    use tracing::Instrument as _;
    call.instrument(tracing::info_span!(
        "a2a.client",
        otel.kind = "client",
        rpc.method = method,
    ))
}

/// `call` as it is (without the feature `otel`).
#[cfg(not(feature = "otel"))]
pub(crate) fn traced<F: std::future::Future>(_method: &'static str, call: F) -> F {
    call
}

/// Whether `card` declares extension `uri`.
fn declares(card: &AgentCard, uri: &str) -> bool {
    card.capabilities.extensions.iter().any(|e| e.uri == uri)
}

/// `headers` with extension `uri` asked for (`A2A-Extensions`), once.
fn ask_for(headers: &mut Vec<(String, String)>, uri: String) {
    match headers
        .iter_mut()
        .find(|(name, _)| name.eq_ignore_ascii_case("A2A-Extensions"))
    {
        Some((_, value)) if value.split(',').any(|v| v.trim() == uri) => {}
        Some((_, value)) => {
            value.push_str(", ");
            value.push_str(&uri);
        }
        None => headers.push(("A2A-Extensions".to_owned(), uri)),
    }
}

/// The official client for the card's best 1.0 interface, or why there is none.
async fn official_client(
    card: &AgentCard,
    http: reqwest::Client,
    headers: &[(String, String)],
    bindings: &[String],
) -> Result<Official, String> {
    #[cfg_attr(not(feature = "otel"), allow(unused_mut))]
    let mut interceptors: Vec<Arc<dyn CallInterceptor>> = headers
        .iter()
        .map(|(name, value)| {
            Arc::new(AuthInterceptor::custom(name.clone(), value.clone()))
                as Arc<dyn CallInterceptor>
        })
        .collect();
    #[cfg(feature = "otel")]
    interceptors.push(Arc::new(TraceContext));
    let mut v1 = card.clone();
    // Only interfaces the official client can speak, so that its choice is among them.
    v1.interfaces.retain(|i| !i.is_pre_1_0());
    if v1.interfaces.is_empty() {
        // An agent of 0.3 only: its JSON-RPC interface, through the 0.3 mapping.
        let Some(old) = card.interfaces.iter().find(|i| {
            i.protocol_binding
                .eq_ignore_ascii_case(AgentInterface::JSONRPC)
        }) else {
            return Err(format!(
                "the card offers no A2A 1.0 interface and no 0.3 JSON-RPC one (it lists {})",
                describe_interfaces(card)
            ));
        };
        let transport: Box<dyn Transport> =
            Box::new(v0_3::V03Transport::new(http, old.url.clone()));
        return Ok(A2AClient::new(transport).with_interceptors(interceptors));
    }
    let mut json = v1.to_json(wire::Profile::V1);
    // Fields the official card type requires but a card may leave out (a skill without
    // tags, which the linter reports): empty, as the official parsers of other languages read
    // them. Only what the client needs to pick a transport depends on the rest.
    for (key, empty) in [
        ("capabilities", Value::Object(Default::default())),
        ("defaultInputModes", Value::Array(Vec::new())),
        ("defaultOutputModes", Value::Array(Vec::new())),
        ("skills", Value::Array(Vec::new())),
    ] {
        if let Some(map) = json.as_object_mut() {
            map.entry(key).or_insert(empty);
        }
    }
    for skill in json["skills"].as_array_mut().into_iter().flatten() {
        if let Some(map) = skill.as_object_mut() {
            map.entry("tags").or_insert(Value::Array(Vec::new()));
        }
    }
    let official: a2a::AgentCard = serde_json::from_value(json)
        .map_err(|e| format!("the official client cannot read the card: {e}"))?;
    let mut factory = A2AClientFactory::builder()
        .preferred_bindings(bindings.to_vec())
        .register(Arc::new(JsonRpcTransportFactory::new(Some(http.clone()))))
        .register(Arc::new(RestTransportFactory::new(Some(http))));
    // gRPC over plain HTTP/2 (an https agent's gRPC goes through a terminating proxy too).
    #[cfg(feature = "grpc")]
    {
        factory = factory.register(Arc::new(a2a_grpc::GrpcTransportFactory::new()));
    }
    for interceptor in interceptors {
        factory = factory.with_interceptor(interceptor);
    }
    factory
        .build()
        .create_from_card(&official)
        .await
        .map_err(|e| format!("no usable interface on the card: {}", e.message))
}

/// Whether a mode is JSON: `application/json`, or a `+json` type (parameters aside).
fn is_json(mode: &str) -> bool {
    crate::MediaType::parse(mode)
        .is_ok_and(|m| m.essence() == "application/json" || m.subtype().ends_with("+json"))
}

fn describe_interfaces(card: &AgentCard) -> String {
    if card.interfaces.is_empty() {
        return "none".to_owned();
    }
    card.interfaces
        .iter()
        .map(|i| {
            format!(
                "{} {} at {}",
                i.protocol_binding,
                i.protocol_version.as_deref().unwrap_or("(no version)"),
                i.url
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether the card's signature was checked, and how it went.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SignatureStatus {
    /// Not asked for ([`Connect::verify_signature`]); the card carries this many signatures.
    NotChecked {
        /// How many signatures the card carries.
        signatures: usize,
    },
    /// A signature verified.
    Verified(VerifiedSignature),
}

struct Inner {
    card_url: String,
    document: Value,
    card: AgentCard,
    findings: Vec<Finding>,
    signature: SignatureStatus,
    validators: HashMap<String, Result<Arc<jsonschema::Validator>, String>>,
    client: Result<Official, String>,
}

/// An agent whose card was read: its skills and schemas, and the official client to call it.
///
/// Cheap to clone (clones share the connection).
#[derive(Clone)]
pub struct RemoteAgent {
    inner: Arc<Inner>,
}

impl fmt::Debug for RemoteAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteAgent")
            .field("card_url", &self.inner.card_url)
            .field("name", &self.inner.card.name)
            .field("skills", &self.inner.card.skills.len())
            .finish_non_exhaustive()
    }
}

/// One skill of a [`RemoteAgent`], with its schemas resolved from the card.
#[derive(Debug, Clone, Copy)]
pub struct RemoteSkill<'a> {
    card: &'a AgentCard,
    skill: &'a AgentSkill,
}

impl<'a> RemoteSkill<'a> {
    /// The skill's id.
    ///
    /// ```no_run
    /// # async fn run(agent: a2a_card::client::RemoteAgent) {
    /// let ids: Vec<&str> = agent.skills().map(|s| s.id()).collect();
    /// # }
    /// ```
    pub fn id(&self) -> &'a str {
        &self.skill.id
    }

    /// The skill as the card declares it.
    pub fn declaration(&self) -> &'a AgentSkill {
        self.skill
    }

    /// Its input modes (the agent's defaults when it lists none).
    pub fn input_modes(&self) -> &'a [String] {
        self.card.input_modes_of(self.skill)
    }

    /// Its output modes (the agent's defaults when it lists none).
    pub fn output_modes(&self) -> &'a [String] {
        self.card.output_modes_of(self.skill)
    }

    /// Whether it takes text.
    pub fn takes_text(&self) -> bool {
        self.input_modes().iter().any(|m| is_text_mode(m))
    }

    /// The name of its input schema (its first `application/json;schema=NAME` input mode).
    pub fn input_schema_name(&self) -> Option<String> {
        schema_name(self.input_modes())
    }

    /// The name of its output schema.
    pub fn output_schema_name(&self) -> Option<String> {
        schema_name(self.output_modes())
    }

    /// Its input schema, from the card's `schemas`.
    pub fn input_schema(&self) -> Option<&'a Value> {
        self.card.schemas.get(&self.input_schema_name()?)
    }

    /// Its output schema, from the card's `schemas`.
    pub fn output_schema(&self) -> Option<&'a Value> {
        self.card.schemas.get(&self.output_schema_name()?)
    }
}

fn is_text_mode(mode: &str) -> bool {
    essence_is(mode, TEXT_PLAIN) || essence_is(mode, "text")
}

fn schema_name(modes: &[String]) -> Option<String> {
    modes
        .iter()
        .find_map(|m| SchemaMode::parse(m).map(|s| s.name().to_owned()))
}

impl RemoteAgent {
    /// Reads the card of the agent at `url` (no credentials, no signature check): see
    /// [`Connect`] for those.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), a2a_card::client::ClientError> {
    /// let agent = a2a_card::client::RemoteAgent::discover("http://127.0.0.1:8080").await?;
    /// # Ok(()) }
    /// ```
    pub async fn discover(url: impl Into<String>) -> Result<RemoteAgent, ClientError> {
        Connect::new(url).discover().await
    }

    /// The card, as read (normalised from whatever profile the agent served).
    pub fn card(&self) -> &AgentCard {
        &self.inner.card
    }

    /// The card document as served.
    pub fn document(&self) -> &Value {
        &self.inner.document
    }

    /// Where the card was read.
    pub fn card_url(&self) -> &str {
        &self.inner.card_url
    }

    /// The linter's findings on the card (see [`lint`]).
    pub fn findings(&self) -> &[Finding] {
        &self.inner.findings
    }

    /// Whether the card's signature was checked, and how it went.
    pub fn signature(&self) -> &SignatureStatus {
        &self.inner.signature
    }

    /// The skills, in the card's order.
    pub fn skills(&self) -> impl Iterator<Item = RemoteSkill<'_>> {
        let card = &self.inner.card;
        card.skills
            .iter()
            .map(move |skill| RemoteSkill { card, skill })
    }

    /// The skill `id`, or [`ClientError::UnknownSkill`] listing the card's skills.
    pub fn skill(&self, id: &str) -> Result<RemoteSkill<'_>, ClientError> {
        self.skills()
            .find(|s| s.id() == id)
            .ok_or_else(|| ClientError::UnknownSkill {
                skill: id.to_owned(),
                available: self.skills().map(|s| s.id().to_owned()).collect(),
            })
    }

    /// Checks `data` against the card's schema `schema`: every violation, with its JSON
    /// pointer.
    pub fn validate(&self, schema: &str, data: &Value) -> Result<(), ClientError> {
        let validator = self.validator(schema)?;
        let violations: Vec<Violation> = validator
            .iter_errors(data)
            .take(crate::dispatch::MAX_VIOLATIONS)
            .map(|e| Violation {
                instance_path: e.instance_path().to_string(),
                schema_path: e.schema_path().to_string(),
                message: e.to_string(),
            })
            .collect();
        if violations.is_empty() {
            Ok(())
        } else {
            Err(ClientError::InvalidInput {
                schema: schema.to_owned(),
                violations,
            })
        }
    }

    fn validator(&self, schema: &str) -> Result<&jsonschema::Validator, ClientError> {
        match self.inner.validators.get(schema) {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(ClientError::Transport(format!(
                "the card's schema `{schema}` does not compile: {e}"
            ))),
            None => Err(ClientError::Transport(format!(
                "the card publishes no schema `{schema}` (no entry under `schemas`)"
            ))),
        }
    }

    /// The message that sends `payload` to skill `skill`, after checking it locally: the skill
    /// exists, takes this kind of input, and data follows its input schema (data to a skill
    /// that takes `application/json` without a schema goes as it is, with that mode). Where
    /// the card declares [`SKILL_EXTENSION_URI`](crate::dispatch::SKILL_EXTENSION_URI), the
    /// message names the skill in its metadata, and the agent runs that one.
    ///
    /// ```no_run
    /// # async fn run(agent: a2a_card::client::RemoteAgent) -> Result<(), a2a_card::client::ClientError> {
    /// use a2a_card::client::Payload;
    /// let m = agent.message("fight-comparison", Payload::data(serde_json::json!({"a": "x", "b": "y"})))?;
    /// assert_eq!(m.parts[0].media_type.as_deref(), Some("application/json;schema=fightComparison"));
    /// # Ok(()) }
    /// ```
    pub fn message(&self, skill: &str, payload: Payload) -> Result<a2a::Message, ClientError> {
        let remote = self.skill(skill)?;
        let part = match payload {
            Payload::Data(data) => match remote.input_schema_name() {
                Some(name) => {
                    self.validate(&name, &data)?;
                    let mode = SchemaMode::new(name.as_str())
                        .map(|m| m.to_string())
                        .unwrap_or_else(|| format!("application/json;schema={name}"));
                    a2a::Part::data(data).with_media_type(mode)
                }
                // A skill that takes JSON without naming a schema: the data as it is.
                None => match remote.input_modes().iter().find(|m| is_json(m)) {
                    Some(mode) => a2a::Part::data(data).with_media_type(mode.clone()),
                    None => {
                        return Err(ClientError::UnsupportedInput {
                            skill: skill.to_owned(),
                            given: "structured data",
                            modes: remote.input_modes().to_vec(),
                        });
                    }
                },
            },
            Payload::Text(text) => {
                if !remote.takes_text() {
                    return Err(ClientError::UnsupportedInput {
                        skill: skill.to_owned(),
                        given: "text",
                        modes: remote.input_modes().to_vec(),
                    });
                }
                a2a::Part::text(text)
            }
        };
        let mut message = a2a::Message::new(a2a::Role::User, vec![part]);
        // Where the agent lets its caller name the skill, it is named: the agent runs that
        // skill rather than the one its own routing would pick.
        if self.names_skills() {
            let named = serde_json::json!({ "skill": skill });
            message.metadata = Some(HashMap::from([(
                crate::dispatch::SKILL_EXTENSION_URI.to_owned(),
                named,
            )]));
        }
        Ok(message)
    }

    /// Whether the card declares the extension by which a caller names the skill a new task
    /// runs ([`SKILL_EXTENSION_URI`](crate::dispatch::SKILL_EXTENSION_URI)), so that
    /// [`message`](Self::message) names it.
    ///
    /// ```no_run
    /// # async fn run(agent: a2a_card::client::RemoteAgent) -> Result<(), a2a_card::client::ClientError> {
    /// use a2a_card::client::Payload;
    /// let m = agent.message("plan-trip", Payload::text("Lisbon, 2 days"))?;
    /// if agent.names_skills() {
    ///     let named = &m.metadata.as_ref().unwrap()[a2a_card::dispatch::SKILL_EXTENSION_URI];
    ///     assert_eq!(named["skill"], "plan-trip");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn names_skills(&self) -> bool {
        declares(&self.inner.card, crate::dispatch::SKILL_EXTENSION_URI)
    }

    /// Whether the agent makes sends idempotent by their message's id (its card declares
    /// [`IDEMPOTENCY_EXTENSION_URI`](crate::idempotency::IDEMPOTENCY_EXTENSION_URI)): then
    /// this client asks for it on every request, and a message sent again (the same
    /// `messageId`) reaches the task the first sending made instead of making another.
    ///
    /// ```no_run
    /// # async fn run(agent: a2a_card::client::RemoteAgent) -> Result<(), a2a_card::client::ClientError> {
    /// use a2a_card::client::Payload;
    /// let message = agent.message("plan-trip", Payload::text("Lisbon, 2 days"))?;
    /// let first = agent.send_message(message.clone(), false).await;
    /// if first.is_err() && agent.idempotent_sends() {
    ///     // The answer was lost: sending the same message again is safe.
    ///     agent.send_message(message, false).await?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn idempotent_sends(&self) -> bool {
        declares(
            &self.inner.card,
            crate::idempotency::IDEMPOTENCY_EXTENSION_URI,
        )
    }

    pub(crate) fn client(&self) -> Result<&Official, ClientError> {
        self.inner
            .client
            .as_ref()
            .map_err(|e| ClientError::Transport(e.clone()))
    }

    /// Sends `payload` to skill `skill` and waits for the task to finish or to ask something.
    /// The outcome's state says which ([`TaskOutcome::into_result`] turns a failed task into
    /// an error).
    ///
    /// ```no_run
    /// # async fn run(agent: a2a_card::client::RemoteAgent) -> Result<(), a2a_card::client::ClientError> {
    /// use a2a_card::client::{Content, Payload};
    /// let done = agent.call("fight-comparison", Payload::text("Lion or Tiger?")).await?.into_result()?;
    /// for output in done.outputs() {
    ///     if let Content::Text(t) = &output.content { println!("{t}"); }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn call(&self, skill: &str, payload: Payload) -> Result<TaskOutcome, ClientError> {
        let message = self.message(skill, payload)?;
        self.send_message(message, false).await
    }

    /// Sends `payload` to skill `skill` without waiting: the task as it was created.
    ///
    /// ```no_run
    /// # async fn run(agent: a2a_card::client::RemoteAgent) -> Result<(), a2a_card::client::ClientError> {
    /// use a2a_card::client::Payload;
    /// let handle = agent.send("fight-comparison", Payload::text("Lion or Tiger?")).await?;
    /// println!("task {}", handle.task_id());
    /// let done = handle.wait().await?;
    /// # Ok(()) }
    /// ```
    pub async fn send(&self, skill: &str, payload: Payload) -> Result<TaskHandle, ClientError> {
        let message = self.message(skill, payload)?;
        let outcome = self.send_message(message, true).await?;
        TaskHandle::from_outcome(self.clone(), outcome)
    }

    /// Sends `payload` to skill `skill` and follows the task as it runs.
    ///
    /// ```no_run
    /// # async fn run(agent: a2a_card::client::RemoteAgent) -> Result<(), a2a_card::client::ClientError> {
    /// use a2a_card::client::{Event, Payload};
    /// use futures::StreamExt;
    /// let mut run = agent.stream("plan-trip", Payload::data(serde_json::json!({"destination": "Lisbon", "days": 2}))).await?;
    /// while let Some(event) = run.next().await {
    ///     match event? {
    ///         Event::Question { .. } => run.answer("2026-12-01").await?,
    ///         other => println!("{other:?}"),
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn stream(&self, skill: &str, payload: Payload) -> Result<Run, ClientError> {
        let message = self.message(skill, payload)?;
        Run::start(self.clone(), message).await
    }

    /// Sends a prepared message (see [`message`](Self::message)) and follows the task.
    pub async fn stream_message(&self, message: a2a::Message) -> Result<Run, ClientError> {
        Run::start(self.clone(), message).await
    }

    /// Sends a prepared message (see [`message`](Self::message)) and waits, or not
    /// (`return_immediately`).
    pub async fn send_message(
        &self,
        message: a2a::Message,
        return_immediately: bool,
    ) -> Result<TaskOutcome, ClientError> {
        let request = a2a::SendMessageRequest {
            message,
            configuration: Some(a2a::SendMessageConfiguration {
                accepted_output_modes: None,
                task_push_notification_config: None,
                history_length: None,
                return_immediately: Some(return_immediately),
            }),
            metadata: None,
            tenant: None,
        };
        let client = self.client()?;
        let response = traced("SendMessage", client.send_message(&request))
            .await
            .map_err(ClientError::from_a2a)?;
        Ok(TaskOutcome::from_response(response))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_catalog_gives_the_card_of_its_first_agent_or_of_the_one_named() {
        let catalog = json!({"specVersion": "1.0", "entries": [
            {"identifier": "urn:air:x:mcp:tools", "displayName": "Tools",
             "type": "application/mcp-server-card+json", "url": "https://x/mcp.json"},
            {"identifier": "urn:air:x:a2a:planner", "displayName": "Planner",
             "type": "application/a2a-agent-card+json", "url": "https://x/planner/card.json"},
            {"identifier": "urn:air:x:a2a:judge", "displayName": "Judge",
             "type": "application/a2a-agent-card+json", "data": {"name": "Judge"}},
        ]});
        assert!(is_catalog(&catalog));
        assert!(!is_catalog(&json!({"name": "A card", "entries": []})));
        // The first agent card: an MCP server is not one.
        assert!(
            matches!(catalog_pick(&catalog, None), Ok(Picked::Url(u)) if u == "https://x/planner/card.json")
        );
        // By identifier or name; inline.
        assert!(
            matches!(catalog_pick(&catalog, Some("urn:air:x:a2a:judge")), Ok(Picked::Inline(c)) if c["name"] == "Judge")
        );
        assert!(matches!(
            catalog_pick(&catalog, Some("Judge")),
            Ok(Picked::Inline(_))
        ));
        let Err(why) = catalog_pick(&catalog, Some("Tools")) else {
            panic!("an MCP server is not an agent")
        };
        assert!(
            why.contains("`Planner`") && why.contains("`Judge`"),
            "{why}"
        );
        let empty = json!({"entries": [{"identifier": "i", "type": "application/ai-skill+md", "url": "u"}]});
        let Err(why) = catalog_pick(&empty, None) else {
            panic!("no agent")
        };
        assert!(why.contains("no A2A agent card"), "{why}");
        let bare = json!({"entries": [{"identifier": "urn:a", "type": "application/a2a-agent-card+json"}]});
        let Err(why) = catalog_pick(&bare, None) else {
            panic!("no card")
        };
        assert!(why.contains("urn:a") && why.contains("neither"), "{why}");
    }
}
