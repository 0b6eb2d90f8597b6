//! Testing agents (feature `testing`): the agent under test served in this process, without a
//! listener, and (with `rig`) a completion model that answers from a script.
//!
//! A [`TestAgent`] is the agent's whole router (the card route, every binding, the
//! authentication and limits layers, the task lifecycle and its store) answering requests
//! handed to it directly: the same checks and the same answers as over the network, without a
//! port or a socket. Call it with the typed client `#[agent]` generates
//! ([`connect`](TestAgent::connect)), with the untyped [`RemoteAgent`], or with raw requests
//! ([`request`](TestAgent::request), [`json_rpc`](TestAgent::json_rpc)), as a caller whose
//! credentials you choose ([`with_header`](TestAgent::with_header),
//! [`bearer_token`](TestAgent::bearer_token)). A [`TestClock`] given to the server
//! ([`Server::clock`]) holds its durable sleeps until the test moves it.
//!
//! ```
//! use a2a_card::testing::TestAgent;
//! use a2a_card::server::Server;
//! use a2a_card::{agent, skill};
//!
//! struct Echo;
//! /// Says back what it is told.
//! #[agent(url = "https://echo.example.com/a2a")]
//! impl Echo {
//!     /// Echoes the text.
//!     #[skill]
//!     fn echo(&self, text: String) -> String { text }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! let agent = TestAgent::start(Server::new(Echo)).await?;
//! let echo = EchoClient::connect_with(agent.connect()).await?;
//! assert_eq!(echo.echo("hello".into()).await?, "hello");
//! # Ok::<(), Box<dyn std::error::Error>>(()) })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod clock;
#[cfg(feature = "sqlite")]
mod crash;
#[cfg(feature = "rig")]
mod model;
mod replay;

pub use clock::TestClock;
#[cfg(feature = "sqlite")]
pub use crash::{CrashPoints, CrashReport, Outcome, Point};
#[cfg(feature = "rig")]
pub use model::*;
pub use replay::{Journaled, Replay, ReplayReport, Replayed, Verdict};

use std::fmt;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, Response};
use serde_json::{Value, json};
use tower::ServiceExt as _;

use crate::Agent;
use crate::card::AgentCard;
use crate::client::{ClientError, Connect, Exchange, RemoteAgent, Verb, next_event};
use crate::server::{AGENT_CARD_PATH, Server, ServerError};

/// An agent under test, served in this process: its router answers each request handed to it,
/// through every layer it serves with, and no listener is bound.
///
/// Cheap to clone: clones share the agent (its tasks, its store); each keeps its own caller's
/// credentials.
#[derive(Clone)]
pub struct TestAgent {
    router: axum::Router,
    card: Arc<AgentCard>,
    /// The card's URL, as a client reads it.
    card_url: String,
    /// The caller's headers, sent with every request.
    headers: Vec<(String, String)>,
    /// The temporary directory of the agent's SQLite file, removed when the last clone goes.
    _files: Option<Arc<TempDir>>,
}

impl fmt::Debug for TestAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values are credentials: only their names are shown.
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("TestAgent")
            .field("name", &self.card.name)
            .field("card_url", &self.card_url)
            .field("headers", &names)
            .finish_non_exhaustive()
    }
}

impl TestAgent {
    /// The agent `server` serves, in this process, on the store it was given (the memory store
    /// unless [`Server::tasks`] chose another), with every option it was given.
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Says back what it is told.
    /// # #[agent(url = "https://echo.example.com/a2a")]
    /// # impl Echo {
    /// #     /// Echoes.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// use a2a_card::{server::Server, testing::TestAgent};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
    /// let agent = TestAgent::start(Server::new(Echo)).await?;
    /// assert_eq!(agent.card().skills[0].id, "echo");
    /// # Ok::<(), Box<dyn std::error::Error>>(()) })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn start<A: Agent>(server: Server<A>) -> Result<TestAgent, ServerError> {
        TestAgent::serve(server, None).await
    }

    /// The agent `server` serves, in this process, on a SQLite file of its own in a new
    /// temporary directory (removed when the last clone of this agent goes): tasks, event logs
    /// and journals as the SQLite store keeps them.
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Says back what it is told.
    /// # #[agent(url = "https://echo.example.com/a2a")]
    /// # impl Echo {
    /// #     /// Echoes.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// use a2a_card::{server::Server, testing::TestAgent};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
    /// let agent = TestAgent::on_sqlite(Server::new(Echo)).await?;
    /// let echo = EchoClient::connect_with(agent.connect()).await?;
    /// assert_eq!(echo.echo("kept".into()).await?, "kept");
    /// # Ok::<(), Box<dyn std::error::Error>>(()) })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "sqlite")]
    pub async fn on_sqlite<A: Agent>(server: Server<A>) -> Result<TestAgent, ServerError> {
        let dir = TempDir::new()?;
        let server = server.tasks(crate::server::store::Tasks::sqlite(
            dir.path.join("tasks.db"),
        ));
        TestAgent::serve(server, Some(Arc::new(dir))).await
    }

    async fn serve<A: Agent>(
        server: Server<A>,
        files: Option<Arc<TempDir>>,
    ) -> Result<TestAgent, ServerError> {
        let card = server.card()?;
        let card_url = card_url_of(&card)?;
        let router = server.router().await?;
        Ok(TestAgent {
            router,
            card: Arc::new(card),
            card_url,
            headers: Vec::new(),
            _files: files,
        })
    }

    /// The card the agent serves.
    pub fn card(&self) -> &AgentCard {
        &self.card
    }

    /// The URL the agent's card is read from (its host is never resolved: requests go to the
    /// router).
    pub fn card_url(&self) -> &str {
        &self.card_url
    }

    /// This agent, called as a caller that sends header `name: value` with every request (an
    /// API key, a tenant's header, ...). Clones share the agent.
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Says back what it is told.
    /// # #[agent(url = "https://echo.example.com/a2a")]
    /// # impl Echo {
    /// #     /// Echoes.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// use a2a_card::{server::Server, testing::TestAgent};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
    /// let agent = TestAgent::start(Server::new(Echo)).await?;
    /// let keyed = agent.with_header("X-API-Key", "k-1");
    /// assert!(!format!("{keyed:?}").contains("k-1"), "credentials are not shown");
    /// # Ok::<(), Box<dyn std::error::Error>>(()) })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_header(&self, name: impl Into<String>, value: impl Into<String>) -> TestAgent {
        let mut agent = self.clone();
        agent.headers.push((name.into(), value.into()));
        agent
    }

    /// This agent, called as a caller that sends `Authorization: Bearer TOKEN` with every
    /// request.
    #[must_use]
    pub fn bearer_token(&self, token: impl AsRef<str>) -> TestAgent {
        self.with_header("Authorization", format!("Bearer {}", token.as_ref()))
    }

    /// A connection to this agent, as this caller, for the typed client `#[agent]` generates
    /// (`EchoClient::connect_with(agent.connect())`) or [`Connect::discover`]: its requests go
    /// to the agent's router.
    pub fn connect(&self) -> Connect {
        let mut connect = Connect::new(self.card_url.clone()).in_process(self.router.clone());
        for (name, value) in &self.headers {
            connect = connect.header(name.clone(), value.clone());
        }
        connect
    }

    /// The agent as an untyped client sees it (its card read through the router).
    pub async fn remote(&self) -> Result<RemoteAgent, ClientError> {
        self.connect().discover().await
    }

    /// The agent's answer to `request`, as this caller (its headers added where the request
    /// does not set them). The URI's path is what routes it; its host is never resolved.
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Says back what it is told.
    /// # #[agent(url = "https://echo.example.com/a2a")]
    /// # impl Echo {
    /// #     /// Echoes.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// use a2a_card::{server::Server, testing::TestAgent};
    /// use axum::{body::Body, http::Request};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
    /// let agent = TestAgent::start(Server::new(Echo)).await?;
    /// let card = Request::get("/.well-known/agent-card.json").body(Body::empty())?;
    /// assert_eq!(agent.request(card).await.status(), 200);
    /// # Ok::<(), Box<dyn std::error::Error>>(()) })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn request(&self, mut request: Request<Body>) -> Response<Body> {
        for (name, value) in &self.headers {
            let (Ok(name), Ok(value)) = (
                axum::http::HeaderName::try_from(name.as_str()),
                axum::http::HeaderValue::try_from(value.as_str()),
            ) else {
                continue;
            };
            request.headers_mut().entry(name).or_insert(value);
        }
        match self.router.clone().oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }

    /// The agent's JSON-RPC answer to `method` with `params` (A2A 1.0, at the card's JSON-RPC
    /// interface), as this caller: the whole response object (`result` or `error`). A stream's
    /// answer is its events' responses, in an array.
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Says back what it is told.
    /// # #[agent(url = "https://echo.example.com/a2a")]
    /// # impl Echo {
    /// #     /// Echoes.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// use a2a_card::{server::Server, testing::TestAgent};
    /// use serde_json::json;
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
    /// let agent = TestAgent::start(Server::new(Echo)).await?;
    /// let answer = agent.json_rpc("GetTask", json!({"id": "nobody"})).await?;
    /// assert_eq!(answer["error"]["code"], -32001); // TaskNotFoundError
    /// # Ok::<(), Box<dyn std::error::Error>>(()) })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn json_rpc(&self, method: &str, params: Value) -> Result<Value, TestError> {
        let url = self
            .card
            .interfaces
            .iter()
            .find(|i| i.protocol_binding == crate::card::AgentInterface::JSONRPC)
            .map(|i| i.url.clone())
            .ok_or(TestError::NoJsonRpc)?;
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut headers = self.headers.clone();
        headers.push(("A2A-Version".to_owned(), "1.0".to_owned()));
        let reply = Exchange::InProcess(self.router.clone())
            .send(Verb::Post, &url, &headers, body.to_string().into_bytes())
            .await
            .map_err(TestError::Answer)?;
        let event_stream = reply.event_stream;
        let mut bytes = reply
            .bytes(usize::MAX)
            .await
            .map_err(|e| TestError::Answer(format!("the answer cannot be read: {e}")))?;
        if !event_stream {
            return serde_json::from_slice(&bytes).map_err(|e| {
                let text = String::from_utf8_lossy(&bytes);
                TestError::Answer(format!("the answer is not JSON ({e}): {text}"))
            });
        }
        // The last event may end without its blank line.
        bytes.extend_from_slice(b"\n\n");
        let mut events = Vec::new();
        while let Some(data) = next_event(&mut bytes) {
            events.push(
                serde_json::from_str(&data).map_err(|e| {
                    TestError::Answer(format!("an event is not JSON ({e}): {data}"))
                })?,
            );
        }
        Ok(Value::Array(events))
    }
}

/// The card's URL, on the host of its first interface.
fn card_url_of(card: &AgentCard) -> Result<String, ServerError> {
    let first = card.interfaces.first().ok_or_else(|| ServerError::Url {
        url: String::new(),
        reason: "the card has no interface to test; set a URL with Server::public_url".into(),
    })?;
    let url = url::Url::parse(&first.url).map_err(|e| ServerError::Url {
        url: first.url.clone(),
        reason: e.to_string(),
    })?;
    url.join(AGENT_CARD_PATH)
        .map(String::from)
        .map_err(|e| ServerError::Url {
            url: first.url.clone(),
            reason: e.to_string(),
        })
}

/// Why a test request got no answer to read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TestError {
    /// The card lists no JSON-RPC interface to send to.
    NoJsonRpc,
    /// The answer could not be read: why, and what came.
    Answer(String),
    /// Journals could not be read or written ([`Replay`]): why.
    Journals(String),
}

impl fmt::Display for TestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TestError::NoJsonRpc => f.write_str(
                "the agent's card lists no JSON-RPC interface (serve it with the JSONRPC binding, or send raw requests with TestAgent::request)",
            ),
            TestError::Answer(why) | TestError::Journals(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for TestError {}

/// A directory of its own under the system's temporary directory, removed on drop.
#[derive(Debug)]
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
struct TempDir {
    path: std::path::PathBuf,
}

#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
impl TempDir {
    fn new() -> std::io::Result<TempDir> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!(
            "a2a-card-test-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
        ));
        std::fs::create_dir_all(&path)?;
        Ok(TempDir { path })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
