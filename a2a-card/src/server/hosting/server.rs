//! A declared agent, ready to serve: the server's options, and how it starts (a router, a
//! listener, MCP over standard input and output).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, ToSocketAddrs};

use crate::agent::Agent;
use crate::card::AgentCard;
use crate::server::lifecycle::FinishedLogs;
use crate::server::limits::Limits;
use crate::server::listening::Listening;
#[cfg(feature = "mcp")]
use crate::server::mcp;
use crate::server::push::Webhooks;
use crate::server::{ServerError, auth, store};

/// The default largest request body of the protocol routes: 1 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 1024 * 1024;
/// The default largest file a message may carry inline (base64 bytes in a file part): 512 KiB.
/// Larger files come by URL.
pub const DEFAULT_MAX_INLINE_FILE: usize = 512 * 1024;
/// How long a question a handler asks may stay unanswered before its task fails, by default:
/// 24 hours (see [`Server::input_timeout`]).
pub const DEFAULT_INPUT_TIMEOUT: Duration = Duration::from_secs(24 * 3600);
/// The default `max-age` of the card and capabilities documents: 5 minutes.
pub const DEFAULT_CARD_MAX_AGE: Duration = Duration::from_secs(300);
/// How long a served listener's drain lets the requests and tasks under way finish, by
/// default: 30 s (see [`Server::drain_timeout`]).
pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// A declared agent, ready to serve; the options have defaults.
///
/// ```
/// use std::time::Duration;
/// use a2a_card::server::Server;
/// use a2a_card::{agent, skill};
///
/// struct Echo;
/// /// Says back what it is told.
/// #[agent(url = "http://127.0.0.1:9000")]
/// impl Echo {
///     /// Echoes the text.
///     #[skill]
///     fn echo(&self, text: String) -> String { text }
/// }
///
/// let server = Server::new(Echo)
///     .public_url("https://echo.example.com/a2a")
///     .body_limit(64 * 1024)
///     .card_max_age(Duration::from_secs(60));
/// let card = server.card()?;
/// assert_eq!(card.interfaces[0].url, "https://echo.example.com/a2a");
/// assert_eq!(card.interfaces.len(), 3); // JSON-RPC 1.0, HTTP+JSON 1.0, JSON-RPC 0.3
/// # futures::executor::block_on(async {
/// let app: axum::Router = server.router().await?; // routes under /a2a, the card at the root
/// # drop(app);
/// # Ok::<(), a2a_card::server::ServerError>(()) })?;
/// # Ok::<(), a2a_card::server::ServerError>(())
/// ```
pub struct Server<A: Agent> {
    pub(in crate::server) agent: A,
    pub(in crate::server) public_url: Option<String>,
    pub(in crate::server) body_limit: usize,
    pub(in crate::server) card_max_age: Duration,
    pub(in crate::server) v0_3: bool,
    #[cfg(feature = "grpc")]
    pub(in crate::server) grpc: bool,
    #[cfg(feature = "mcp")]
    pub(in crate::server) mcp: bool,
    #[cfg(feature = "otel")]
    pub(in crate::server) metrics_route: Option<String>,
    pub(in crate::server) interface_order: Vec<String>,
    pub(in crate::server) tenant: Option<String>,
    pub(in crate::server) max_inline_file: usize,
    pub(in crate::server) input_timeout: Option<Duration>,
    pub(in crate::server) drain_timeout: Duration,
    pub(in crate::server) webhooks: Webhooks,
    /// Where tasks are kept, where the server names a store (memory otherwise).
    pub(in crate::server) tasks: Option<store::Tasks>,
    pub(in crate::server) finished_logs: FinishedLogs,
    /// The clock durable sleeps read.
    pub(in crate::server) clock: crate::server::Clock,
    #[cfg(feature = "sign")]
    pub(in crate::server) signer: Option<(crate::sign::SigningKey, crate::sign::SignOptions)>,
    pub(in crate::server) authentication: Option<auth::Authentication>,
    pub(in crate::server) limits: Limits,
    #[cfg(feature = "ui")]
    pub(in crate::server) ui: bool,
    #[cfg(feature = "console")]
    pub(in crate::server) console: Option<crate::server::Console>,
}

impl<A: Agent> fmt::Debug for Server<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Server");
        d.field("agent", &A::DECL.source)
            .field("public_url", &self.public_url)
            .field("body_limit", &self.body_limit)
            .field("card_max_age", &self.card_max_age)
            .field("a2a_0_3", &self.v0_3)
            .field("max_inline_file", &self.max_inline_file)
            .field("input_timeout", &self.input_timeout)
            .field("drain_timeout", &self.drain_timeout)
            .field("webhooks", &self.webhooks)
            .field("finished_logs", &self.finished_logs)
            .field("clock", &self.clock);
        #[cfg(feature = "ui")]
        d.field("ui", &self.ui);
        #[cfg(feature = "console")]
        d.field("console", &self.console);
        d.finish_non_exhaustive()
    }
}

impl<A: Agent> Server<A> {
    /// Serves `agent` with the default options.
    pub fn new(agent: A) -> Self {
        Server {
            agent,
            public_url: None,
            body_limit: DEFAULT_BODY_LIMIT,
            card_max_age: DEFAULT_CARD_MAX_AGE,
            v0_3: true,
            #[cfg(feature = "grpc")]
            grpc: false,
            #[cfg(feature = "mcp")]
            mcp: false,
            #[cfg(feature = "otel")]
            metrics_route: None,
            interface_order: Vec::new(),
            tenant: None,
            max_inline_file: DEFAULT_MAX_INLINE_FILE,
            input_timeout: Some(DEFAULT_INPUT_TIMEOUT),
            drain_timeout: DEFAULT_DRAIN_TIMEOUT,
            webhooks: Webhooks::default(),
            tasks: None,
            finished_logs: FinishedLogs::default(),
            clock: crate::server::Clock::system(),
            #[cfg(feature = "sign")]
            signer: None,
            authentication: None,
            limits: Limits::default(),
            #[cfg(feature = "ui")]
            ui: false,
            #[cfg(feature = "console")]
            console: None,
        }
    }

    /// How to check the credentials of the security schemes the card declares: see
    /// [`auth`]. Every protocol call must then meet the card's requirement (and the skill's,
    /// once dispatch picks one) before a task exists; the card route stays public. A card that
    /// requires a scheme with no verifier here does not serve ([`ServerError::Security`]).
    ///
    /// ```
    /// use a2a_card::server::Server;
    /// use a2a_card::server::auth::{Authentication, StaticApiKeys};
    /// use a2a_card::{ApiKeyLocation, Identity, SecurityScheme, agent, skill};
    ///
    /// fn schemes() -> Vec<(&'static str, SecurityScheme)> {
    ///     vec![("key", SecurityScheme::api_key(ApiKeyLocation::Header, "X-API-Key"))]
    /// }
    /// struct Echo;
    /// /// Says back what it is told, to known callers.
    /// #[agent(url = "http://127.0.0.1:9000", security_schemes = schemes, security(key))]
    /// impl Echo {
    ///     /// Echoes the text.
    ///     #[skill]
    ///     fn echo(&self, text: String) -> String { text }
    /// }
    ///
    /// // Without a verifier for `key`, the server refuses to serve the card's promise.
    /// # futures::executor::block_on(async {
    /// assert!(Server::new(Echo).router().await.is_err());
    /// let keys = StaticApiKeys::new().key("k-0123456789abcdef", Identity::new("team-blue"));
    /// let app = Server::new(Echo).authentication(Authentication::new().api_key("key", keys)).router().await?;
    /// # drop(app);
    /// # Ok::<(), a2a_card::server::ServerError>(()) })?;
    /// # Ok::<(), a2a_card::server::ServerError>(())
    /// ```
    pub fn authentication(mut self, authentication: auth::Authentication) -> Self {
        self.authentication = Some(authentication);
        self
    }

    /// Limits that keep one caller from taking the whole agent (see [`Limits`]): requests per
    /// window per caller and per tenant, tasks running at once per caller, per tenant and per
    /// skill, failed logins per client. A call over a limit is refused with `429` and
    /// `Retry-After` before anything is done with it. None by default. A limit that names a
    /// skill the agent does not have does not serve ([`ServerError::Limits`]).
    ///
    /// ```
    /// use a2a_card::server::{Limits, Rate, Server};
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Says back what it is told.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// let server = Server::new(Echo)
    ///     .limits(Limits::new().per_caller(Rate::per_minute(600)).skill("echo", 8));
    /// # drop(server);
    /// ```
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The largest file a message may carry inline, in bytes ([`DEFAULT_MAX_INLINE_FILE`]); a
    /// larger one is refused (`-32602`) before a task exists. The request body limit
    /// ([`body_limit`](Self::body_limit)) bounds it too.
    pub fn max_inline_file(mut self, bytes: usize) -> Self {
        self.max_inline_file = bytes;
        self
    }

    /// How long a question a handler asks ([`SkillContext::ask`](crate::SkillContext::ask),
    /// `ask_auth`) may stay unanswered ([`DEFAULT_INPUT_TIMEOUT`]: 24 hours). Past it the
    /// question is withdrawn: the handler is dropped at its `.await`, as on cancel, and the
    /// task fails saying that no answer came in time (in `GetTask` and push notifications).
    /// `None` keeps every question, and its handler's memory, for as long as the process runs.
    ///
    /// ```
    /// use std::time::Duration;
    /// use a2a_card::server::Server;
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Says back what it is told.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// let server = Server::new(Echo).input_timeout(Duration::from_secs(15 * 60));
    /// let patient = Server::new(Echo).input_timeout(None);
    /// # drop((server, patient));
    /// ```
    pub fn input_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.input_timeout = timeout.into();
        self
    }

    /// How long the drain of [`Listening::serve`] (at SIGTERM or Ctrl-C) lets the requests
    /// under way, and the tasks only this process can finish, run before it stops them
    /// ([`DEFAULT_DRAIN_TIMEOUT`]: 30 s). Keep it under the orchestrator's grace period
    /// (Kubernetes: `terminationGracePeriodSeconds`, 30 s by default), which then kills the
    /// process. A task of a skill that is not durable still running at the deadline fails
    /// with the status message [`SHUT_DOWN`](crate::server::SHUT_DOWN); a durable skill's task is
    /// taken over by another process.
    ///
    /// ```
    /// use std::time::Duration;
    /// use a2a_card::server::Server;
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Says back what it is told.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// let server = Server::new(Echo).drain_timeout(Duration::from_secs(20));
    /// # drop(server);
    /// ```
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// Which push-notification webhooks the agent posts to, and its retries (when the card
    /// declares push notifications). See [`Webhooks`]: by default no loopback or private
    /// address.
    pub fn webhooks(mut self, webhooks: Webhooks) -> Self {
        self.webhooks = webhooks;
        self
    }

    /// Where tasks are kept ([`Tasks::memory`](store::Tasks::memory) by default: bounded,
    /// lost on restart). [`Tasks::sqlite`](store::Tasks::sqlite) keeps them in a file, so a
    /// restarted agent still answers `GetTask` for them; tasks a previous run left running are
    /// failed at start, saying why. `Tasks::postgres` shares one database between replicas
    /// (an answer sent to any of them reaches the handler that asked).
    /// [`Tasks::custom`](store::Tasks::custom) takes a store of your own
    /// ([`Store`](store::Store)): servers on one store see each other's tasks, and a question a
    /// handler asks is answered only in the process where that handler runs (elsewhere the
    /// answer fails the task, saying why).
    pub fn tasks(mut self, tasks: store::Tasks) -> Self {
        self.tasks = Some(tasks);
        self
    }

    /// The clock the agent's durable sleeps, its tasks' budgets (`ctx.deadline()`,
    /// `ctx.budget()`) and its limits' request windows read
    /// ([`Clock::system`](crate::server::Clock::system) by default): a test gives one it moves
    /// (`a2a_card::testing::TestClock`, feature `testing`), so that a durable skill that sleeps
    /// for days, a budget spent, or a limit per hour, is tested in milliseconds.
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Says back what it is told.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// use a2a_card::server::{Clock, Server};
    /// let server = Server::new(Echo).clock(Clock::system());
    /// # drop(server);
    /// ```
    pub fn clock(mut self, clock: crate::server::Clock) -> Self {
        self.clock = clock;
        self
    }

    /// How much of finished tasks' event logs stays in memory, for subscribers that reconnect
    /// (`Last-Event-ID`) after a task ended ([`FinishedLogs::default`]: at most 10,000 logs
    /// and 32 MiB), of the tasks a stream read (a task read by a blocking send or an MCP call
    /// alone has no stream to resume). Only where the store keeps no log: on SQLite and
    /// Postgres nothing of a finished task stays in memory, and a reconnecting subscriber
    /// reads the database.
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Says back what it is told.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// use a2a_card::server::{FinishedLogs, Server};
    ///
    /// let server = Server::new(Echo).finished_logs(FinishedLogs::default().max_entries(1_000));
    /// # drop(server);
    /// ```
    pub fn finished_logs(mut self, logs: FinishedLogs) -> Self {
        self.finished_logs = logs;
        self
    }

    /// Signs the served card with `key` ([`a2a_card::sign`](crate::sign), A2A 1.0 section
    /// 8.4). The card is signed once, when the router is built (after the served URL is put
    /// in). The 1.0 and compat documents of the card route carry the signature (it covers the
    /// 1.0 fields, which both hold); the 0.3 document, which lists only the 0.3 interfaces and
    /// so could not match it, is served unsigned.
    #[cfg(feature = "sign")]
    pub fn sign_with(
        mut self,
        key: crate::sign::SigningKey,
        options: crate::sign::SignOptions,
    ) -> Self {
        self.signer = Some((key, options));
        self
    }

    /// The URL clients reach the agent at, instead of the declared one (`#[agent(url = ..)]`):
    /// behind a proxy, or on an address chosen at run time. The card names it, and the
    /// protocol routes are mounted at its path. The card with it is linted like any other:
    /// plain `http://` to a host that is not loopback is refused ([`ServerError::Served`]).
    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        self.public_url = Some(url.into());
        self
    }

    /// The largest request body of the protocol routes, in bytes ([`DEFAULT_BODY_LIMIT`]).
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Whether to serve the form page at `GET /ui` (feature `ui`; default: off): each skill of
    /// the card as a form generated from its input schema (required fields, enums as selects, nested objects
    /// and arrays, descriptions as help, examples as one-click fills), submitted as a
    /// structured message (streamed when the agent streams), the answer shown with the output
    /// schema's titles, and the agent's validation errors next to the fields at fault. The
    /// page talks to the agent's JSON-RPC 1.0 endpoint from the browser, so it works only where
    /// that endpoint needs no credentials.
    ///
    /// ```no_run
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Echoes.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo { /// Echoes text.
    /// # #[skill] fn echo(&self, t: String) -> String { t } }
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// a2a_card::server::Server::new(Echo).ui(true).bind("127.0.0.1:9000").await?.serve().await?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "ui")]
    pub fn ui(mut self, on: bool) -> Self {
        self.ui = on;
        self
    }

    /// Serves the operators' [`Console`](crate::server::Console) (feature `console`; default:
    /// off): the tasks across skills, states, tenants and callers, each task's history and
    /// durable journal, cancel, the replicas and the limits, as plain HTML pages under the
    /// console's path, for the callers it allows alone (everyone else is refused as any
    /// protected route). A console that allows nobody, or a scope or role on an agent that
    /// authenticates nobody, does not serve ([`ServerError::Console`]).
    ///
    /// ```no_run
    /// use a2a_card::server::{Console, Server};
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Says back what it is told.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// # async fn run() -> Result<(), a2a_card::server::ServerError> {
    /// let token = std::env::var("CONSOLE_TOKEN").expect("set CONSOLE_TOKEN");
    /// Server::new(Echo)
    ///     .console(Console::at("/console").allow_token(token))
    ///     .bind("127.0.0.1:9000").await?.serve().await
    /// # }
    /// ```
    #[cfg(feature = "console")]
    pub fn console(mut self, console: crate::server::Console) -> Self {
        self.console = Some(console);
        self
    }

    /// How long clients may cache the card and the capabilities ([`DEFAULT_CARD_MAX_AGE`]).
    pub fn card_max_age(mut self, max_age: Duration) -> Self {
        self.card_max_age = max_age;
        self
    }

    /// Whether A2A 0.3 JSON-RPC requests are translated onto the 1.0 handler, and the card
    /// advertises a 0.3 JSON-RPC interface (default: yes).
    pub fn a2a_0_3(mut self, yes: bool) -> Self {
        self.v0_3 = yes;
        self
    }

    /// Whether the gRPC binding is served (feature `grpc`; default: no): the canonical
    /// `lf.a2a.v1.A2AService` on the same listener (HTTP/2 requests to
    /// `/lf.a2a.v1.A2AService/*`), through the official binding over the same request handler,
    /// and a `GRPC` interface (protocol 1.0, at the URL's origin) on the card.
    ///
    /// Protobuf carries data parts as `google.protobuf.Struct`, whose numbers are doubles:
    /// integers beyond 2^53 are not exact over gRPC (they are over JSON-RPC and HTTP+JSON).
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Echoes what it is told.
    /// # #[agent(url = "https://echo.example.com/a2a")]
    /// # impl Echo {
    /// #     /// Echoes.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// use a2a_card::server::Server;
    /// let card = Server::new(Echo).grpc(true).card().unwrap();
    /// let grpc = card.interfaces.iter().find(|i| i.protocol_binding == "GRPC").unwrap();
    /// assert_eq!(grpc.url, "https://echo.example.com"); // the URL's origin
    /// ```
    #[cfg(feature = "grpc")]
    pub fn grpc(mut self, yes: bool) -> Self {
        self.grpc = yes;
        self
    }

    /// Whether the agent is also served as an MCP server (feature `mcp`; default: no): each
    /// skill one tool with its real schemas, at `/mcp` on the same listener (MCP's streamable
    /// HTTP transport), behind the same security; the card names it in an extension entry.
    /// See [`mcp`] for how calls, progress, questions and cancellation map.
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Echoes what it is told.
    /// # #[agent(url = "https://echo.example.com/a2a")]
    /// # impl Echo {
    /// #     /// Echoes.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// use a2a_card::server::Server;
    /// let card = Server::new(Echo).mcp(true).card().unwrap();
    /// let mcp = card.capabilities.extensions.iter().find(|e| e.uri == a2a_card::server::mcp::EXTENSION_URI).unwrap();
    /// assert_eq!(mcp.params.as_ref().unwrap()["url"], "https://echo.example.com/mcp");
    /// ```
    #[cfg(feature = "mcp")]
    pub fn mcp(mut self, yes: bool) -> Self {
        self.mcp = yes;
        self
    }

    /// Serves the server's metrics in the Prometheus text format at `path` (feature `otel`;
    /// e.g. `/metrics`), on the same listener, unauthenticated like the card (put it behind
    /// your network's rules). The metrics are those [`crate::otel::init`] sets up; without it
    /// the page is empty. What the server measures and traces:
    ///
    /// | span | when | fields |
    /// |---|---|---|
    /// | `a2a.request` | each HTTP request (every binding, MCP, the card) | `http.request.method`, `url.path`, `rpc.system`, `rpc.method`, `a2a.binding`, `a2a.version`, `http.response.status_code`, `otel.status_code` |
    /// | `a2a.task` | a task, from its creation to its final state (an event per state change) | `a2a.task.id`, `a2a.context.id`, `gen_ai.agent.name`, `gen_ai.tool.name` (the skill), `a2a.task.state` |
    /// | `a2a.skill` | one run of a skill's handler | `gen_ai.operation.name`, `gen_ai.tool.name`, `a2a.skill.cancelled`, `a2a.skill.panicked` |
    /// | `a2a.store.round` | one round of the SQL stores' writer | `db.system.name`, `a2a.store.statements`, `a2a.store.rows`, `a2a.store.events` |
    /// | `a2a.push` | one webhook delivery attempt | `a2a.task.id`, `a2a.push.attempt`, `http.response.status_code` |
    /// | `a2a.client` | a call of `a2a_card::client` | `rpc.method` |
    ///
    /// | metric | kind | attributes |
    /// |---|---|---|
    /// | `a2a.server.requests` | counter of protocol calls (requests read into an A2A method, or an MCP one; not those refused before) | `rpc.method`, `a2a.outcome` (`ok`, `error`: a JSON-RPC error counts as one) |
    /// | `a2a.server.request.duration` | histogram, s (to the answer, or a stream's start) | `rpc.method` |
    /// | `a2a.tasks` | counter of ended tasks | `gen_ai.tool.name`, `a2a.task.state` |
    /// | `a2a.task.duration` | histogram, s | `gen_ai.tool.name`, `a2a.task.state` |
    /// | `a2a.tasks.active` | up-down counter | `gen_ai.tool.name` |
    /// | `a2a.stream.chunks` | counter of artifact updates | |
    /// | `a2a.store.round.duration`, `a2a.store.round.size` | histograms (s, rows and events) | `db.system.name` |
    /// | `a2a.push.deliveries` | counter | `a2a.outcome` (`delivered`, `failed`), `a2a.push.retried` |
    /// | `a2a.auth.refusals` | counter | `a2a.reason` (`unauthenticated`, `forbidden`, `unavailable`) |
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Echoes what it is told.
    /// # #[agent(url = "https://echo.example.com/a2a")]
    /// # impl Echo {
    /// #     /// Echoes.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// use a2a_card::server::Server;
    /// let server = Server::new(Echo).metrics_route("/metrics");
    /// # drop(server);
    /// ```
    #[cfg(feature = "otel")]
    pub fn metrics_route(mut self, path: impl Into<String>) -> Self {
        self.metrics_route = Some(path.into());
        self
    }

    /// Serves the agent as an MCP server over standard input and output, with this server's
    /// options (tasks, input timeout...), until the host closes them (feature `mcp`): the
    /// transport desktop hosts use when they start the agent. The caller is anonymous there:
    /// a skill that needs credentials is refused. [`mcp::serve_stdio`] does the same with the
    /// default options.
    ///
    /// ```no_run
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Echoes what it is told.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// use a2a_card::server::Server;
    /// # async fn run() -> Result<(), a2a_card::server::ServerError> {
    /// // A host's user may take their time to answer a question.
    /// let server = Server::new(Echo).input_timeout(std::time::Duration::from_secs(3600));
    /// server.serve_mcp_stdio().await
    /// # }
    /// ```
    #[cfg(feature = "mcp")]
    pub async fn serve_mcp_stdio(self) -> Result<(), ServerError> {
        use rmcp::ServiceExt as _;
        let (card, endpoint) = self.served(None)?;
        let (handler, _) = self.handler_for(&card, &endpoint, None).await?;
        let bridge = mcp::Bridge::new(Arc::clone(&handler) as _, handler.agent())?;
        let running = bridge
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| ServerError::Mcp(format!("the MCP session did not start: {e}")))?;
        running
            .waiting()
            .await
            .map_err(|e| ServerError::Mcp(format!("the MCP session failed: {e}")))?;
        Ok(())
    }

    /// The tenant the served card's 1.0 interfaces name (A2A 1.0 section 8.3.2): clients send
    /// it with every request (JSON-RPC and gRPC in the request's `tenant`, HTTP+JSON as the
    /// path's first segment), and the agent's tasks are those of that tenant. The server
    /// serves every tenant all the same, each apart from the others (a task of one is not
    /// found in another); this names the one the card points clients at. A tenant is 1 to 64
    /// letters, digits, `.`, `_`, `~` or `-` ([`ServerError::Tenant`] otherwise).
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Echoes what it is told.
    /// # #[agent(url = "https://echo.example.com/a2a")]
    /// # impl Echo {
    /// #     /// Echoes.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// use a2a_card::server::Server;
    /// let card = Server::new(Echo).tenant("acme").card().unwrap();
    /// assert_eq!(card.interfaces[0].tenant.as_deref(), Some("acme"));
    /// assert!(Server::new(Echo).tenant("a/b").card().is_err());
    /// ```
    pub fn tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }

    /// The order in which the served card lists its interfaces, by binding (`JSONRPC`,
    /// `HTTP+JSON`, `GRPC`): clients take the first they speak. Bindings not named follow in
    /// their usual order (JSON-RPC, HTTP+JSON, gRPC; the 0.3 interface after the 1.0 one).
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Echoes what it is told.
    /// # #[agent(url = "https://echo.example.com/a2a")]
    /// # impl Echo {
    /// #     /// Echoes.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// use a2a_card::server::Server;
    /// let card = Server::new(Echo).interface_order(["HTTP+JSON"]).card().unwrap();
    /// assert_eq!(card.interfaces[0].protocol_binding, "HTTP+JSON");
    /// ```
    pub fn interface_order<I, S>(mut self, bindings: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.interface_order = bindings.into_iter().map(Into::into).collect();
        self
    }

    /// The card as it is served (before [`bind`](Self::bind) puts in a bound loopback
    /// address).
    pub fn card(&self) -> Result<AgentCard, ServerError> {
        let (card, _) = self.served(None)?;
        Ok(card)
    }

    /// The router: protocol routes, card and capabilities. Nest it into an axum app, or serve
    /// it as it is.
    pub async fn router(self) -> Result<axum::Router, ServerError> {
        let (card, endpoint) = self.served(None)?;
        Ok(self.router_for(card, &endpoint).await?.0.layered())
    }

    /// The agent's request handler alone, behind the official
    /// [`RequestHandler`](a2a_server::RequestHandler) trait: the task lifecycle the routers
    /// serve (dispatch, tasks, event log, subscriptions, push), for a binding of your own or an
    /// in-process caller. Credentials are checked by the HTTP layers of [`router`](Self::router),
    /// so a handler alone serves only what needs none.
    ///
    /// ```
    /// use a2a_card::server::Server;
    /// use a2a::{Message, Part, Role, SendMessageRequest, SendMessageResponse};
    /// use a2a_card::{agent, skill};
    ///
    /// struct Echo;
    /// /// Says back what it is told.
    /// #[agent(url = "http://127.0.0.1:9000")]
    /// impl Echo {
    ///     /// Echoes the text.
    ///     #[skill]
    ///     fn echo(&self, text: String) -> String { text }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let handler = Server::new(Echo).request_handler().await?;
    /// let message = Message::new(Role::User, vec![Part::text("hello")]);
    /// let request = SendMessageRequest { message, configuration: None, metadata: None, tenant: None };
    /// let SendMessageResponse::Task(task) = handler.send_message(&Default::default(), request).await? else {
    ///     unreachable!("a skill's answer is a task")
    /// };
    /// assert_eq!(task.artifacts.unwrap()[0].parts[0].as_text(), Some("hello"));
    /// # Ok::<(), Box<dyn std::error::Error>>(()) })?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn request_handler(self) -> Result<Arc<dyn a2a_server::RequestHandler>, ServerError> {
        let (card, endpoint) = self.served(None)?;
        let (handler, _) = self.handler_for(&card, &endpoint, None).await?;
        Ok(handler)
    }

    /// The agent's task lifecycle alone, on the memory store (nothing served, nothing
    /// recovered), for the replay check of durable tasks (`testing::Replay`).
    #[cfg(feature = "testing")]
    pub(crate) async fn replay_checker(self) -> Result<Arc<crate::server::Lifecycle>, ServerError> {
        let server = self.tasks(store::Tasks::memory());
        let (card, endpoint) = server.served(None)?;
        let (lifecycle, _) = server.handler_for(&card, &endpoint, None).await?;
        Ok(lifecycle)
    }

    /// Binds `addr`; [`Listening::serve`] then serves there. A loopback URL in the declaration
    /// takes the address bound.
    pub async fn bind(self, addr: impl ToSocketAddrs) -> Result<Listening, ServerError> {
        let listener = TcpListener::bind(addr).await?;
        self.listen(listener).await
    }

    /// Builds the router for `listener`; [`Listening::serve`] then serves there. A loopback URL
    /// in the declaration takes the listener's address.
    pub async fn listen(self, listener: TcpListener) -> Result<Listening, ServerError> {
        let local_addr = listener.local_addr()?;
        let (card, endpoint) = self.served(Some(local_addr))?;
        let drain_timeout = self.drain_timeout;
        let (app, halt, published) = self.router_for(card.clone(), &endpoint).await?;
        Ok(Listening {
            listener,
            local_addr,
            app,
            published,
            cards: vec![card.clone()],
            card,
            endpoint,
            halts: vec![halt],
            drain_timeout,
        })
    }
}
