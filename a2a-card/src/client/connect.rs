//! How to reach an agent ([`Connect`]: its URL, credentials, signature checks, bindings) and
//! the reading of its card, directly or through an AI Catalog, into a [`RemoteAgent`].

use std::fmt;
use std::sync::Arc;

use crate::lint::{self, LintOptions};
use crate::outbound::{ExtraRoots, error_chain};
use crate::sign::{self, Algorithm, Jwks};
use crate::wire::{self, Document, ReadLimits};

use super::ClientError;
use super::catalog::{Picked, catalog_pick, is_catalog};
use super::exchange::{Exchange, Verb};
use super::official::{ask_for, official_client};
use super::remote::{Inner, RemoteAgent, SignatureStatus, declares};

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
    /// The agent's router, where it runs in this process (`a2a_card::testing`).
    #[cfg(feature = "testing")]
    in_process: Option<axum::Router>,
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
            #[cfg(feature = "testing")]
            in_process: None,
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
    /// Where the requests go: the agent's router where it runs in this process, else the
    /// network.
    fn exchange(&self) -> Result<Exchange, ClientError> {
        #[cfg(feature = "testing")]
        if let Some(router) = &self.in_process {
            return Ok(Exchange::InProcess(router.clone()));
        }
        self.http_client().map(Exchange::Http)
    }

    /// This connection, to the agent `router` serves in this process (its requests answered
    /// by the router, no socket).
    #[cfg(feature = "testing")]
    pub(crate) fn in_process(mut self, router: axum::Router) -> Connect {
        self.in_process = Some(router);
        self
    }

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
        let exchange = self.exchange()?;
        let limits = ReadLimits::default().max_bytes(self.max_card_bytes);
        let read = |url: String| {
            let (exchange, headers, max) = (&exchange, &self.headers, self.max_card_bytes);
            async move {
                let bytes = fetch_card(exchange, &url, headers, max).await?;
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
        let client = official_client(&card, exchange, &headers, &self.bindings).await;
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

/// Reads at most `max` bytes (plus one, to tell a larger document) of the card.
async fn fetch_card(
    exchange: &Exchange,
    url: &str,
    headers: &[(String, String)],
    max: usize,
) -> Result<Vec<u8>, ClientError> {
    let unreachable = |message: String| ClientError::Unreachable {
        url: url.to_owned(),
        message,
    };
    let mut headers = headers.to_vec();
    headers.push(("Accept".to_owned(), "application/json".to_owned()));
    let reply = exchange
        .send(Verb::Get, url, &headers, Vec::new())
        .await
        .map_err(unreachable)?;
    let status = reply.status;
    if !(200..300).contains(&status) {
        return Err(unreachable(format!(
            "the card request was answered with HTTP {status}"
        )));
    }
    reply.bytes(max).await.map_err(unreachable)
}

// One of `RemoteAgent`'s blocks, each in the file of its concern: here, reaching an agent
// (its card read and checked, its endpoint chosen).
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
}
