//! Several declared agents on one listener: each at a path of its own, with its own card,
//! bindings and security, their tasks apart in one store.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::time::Duration;

use tokio::net::{TcpListener, ToSocketAddrs};

use super::server::{DEFAULT_CARD_MAX_AGE, DEFAULT_DRAIN_TIMEOUT, Server};
use crate::agent::Agent;
use crate::card::AgentCard;
use crate::server::catalog::{Listed, catalog};
use crate::server::documents::Published;
use crate::server::interfaces::{AGENT_CARD_PATH, CAPABILITIES_PATH, Endpoint};
use crate::server::lifecycle::Halt;
use crate::server::listening::Listening;
use crate::server::server_error::ServerError;
use crate::server::store::{self, Recovered, Recovery};
use crate::server::wiring::{Routes, Ruled, Shared};

/// Several declared agents on one listener, each at a path of its own.
///
/// Each agent is a [`Server`] with its own options (authentication, webhooks, the form
/// page, MCP...), mounted at a path (`/planner`) that becomes its URL's path: there it
/// answers JSON-RPC (1.0 and 0.3) and HTTP+JSON, its card is at
/// `/planner/.well-known/agent-card.json` and its capabilities at `/planner/capabilities`,
/// its MCP endpoint (with [`Server::mcp`]) at `/planner/mcp`, its form page at
/// `/planner/ui`. gRPC names one service per listener, so one agent at most serves it.
///
/// At the root, `/.well-known/agent-card.json` (and `/capabilities`) is the default agent's
/// (the first mounted, or [`default_agent`](Self::default_agent)), and the AI Catalog,
/// [`AI_CATALOG_PATH`](crate::server::AI_CATALOG_PATH) (`/.well-known/ai-catalog.json`), lists
/// every agent, the default first, each by its card's URL (an agent whose card names a
/// tenant has it in its identifier and `metadata.tenant`):
///
/// ```json
/// {"specVersion": "1.0", "host": {"displayName": "127.0.0.1:8080"},
///  "entries": [{"identifier": "urn:air:127.0.0.1:8080:a2a:planner", "displayName": "Trip planner",
///               "type": "application/a2a-agent-card+json",
///               "url": "http://127.0.0.1:8080/planner/.well-known/agent-card.json",
///               "description": "...", "version": "1.0.0", "capabilities": ["plan-trip"], "tags": []}]}
/// ```
///
/// [`Connect`](crate::client::Connect) (and the CLI's `inspect` and `call`) finds an agent
/// from its URL, its card's URL, the root (the default agent) or the catalog (its first
/// entry, or the one [`Connect::catalog_entry`](crate::client::Connect::catalog_entry)
/// names).
///
/// The agents' tasks are kept in one store ([`tasks`](Self::tasks); a mounted server names
/// none of its own), each agent's apart from the others': a task of one is not found
/// through another, nor listed there. Each agent keeps its tenants apart within its own
/// tasks, as an agent alone does.
///
/// ```
/// use a2a_card::server::{Host, Server};
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
/// struct Shout;
/// /// Says it louder.
/// #[agent(url = "http://127.0.0.1:9000")]
/// impl Shout {
///     /// Shouts the text.
///     #[skill]
///     fn shout(&self, text: String) -> String { text.to_uppercase() }
/// }
///
/// let host = Host::new()
///     .agent("/echo", Server::new(Echo))
///     .agent("/shout", Server::new(Shout).mcp(true))
///     .default_agent("/shout")
///     .public_url("https://agents.example.com");
/// let cards = host.cards()?;
/// assert_eq!(cards[0].interfaces[0].url, "https://agents.example.com/echo");
/// assert_eq!(cards[1].interfaces[0].url, "https://agents.example.com/shout");
/// # futures::executor::block_on(async {
/// let app: axum::Router = host.router().await?;
/// # drop(app);
/// # Ok::<(), a2a_card::server::ServerError>(()) })?;
/// # Ok::<(), a2a_card::server::ServerError>(())
/// ```
pub struct Host {
    agents: Vec<(String, Box<dyn Mount>)>,
    default: Option<String>,
    tasks: store::Tasks,
    public_url: Option<String>,
    drain_timeout: Duration,
}

impl fmt::Debug for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let paths: Vec<&str> = self.agents.iter().map(|(p, _)| p.as_str()).collect();
        f.debug_struct("Host")
            .field("agents", &paths)
            .field("default", &self.default)
            .field("tasks", &self.tasks)
            .field("public_url", &self.public_url)
            .field("drain_timeout", &self.drain_timeout)
            .finish()
    }
}

impl Default for Host {
    fn default() -> Self {
        Host::new()
    }
}

impl Host {
    /// A host of no agent yet, keeping tasks in memory.
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # use a2a_card::server::{Host, Server};
    /// # struct Echo;
    /// # /// Echoes.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// let host = Host::new();
    /// assert!(host.cards().is_err()); // no agent mounted yet
    /// ```
    pub fn new() -> Host {
        Host {
            agents: Vec::new(),
            default: None,
            tasks: store::Tasks::memory(),
            public_url: None,
            drain_timeout: DEFAULT_DRAIN_TIMEOUT,
        }
    }

    /// Mounts `server`'s agent at `path` (`/planner`, or `/team/planner`): one or more
    /// segments of letters, digits, `.`, `_`, `~` or `-`, not `/.well-known` nor
    /// `/capabilities`. Its card's URL is the host's origin with this path.
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # use a2a_card::server::{Host, Server};
    /// # struct Echo;
    /// # /// Echoes.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// let host = Host::new().agent("/echo", Server::new(Echo).mcp(true));
    /// assert_eq!(host.cards()?[0].interfaces[0].url, "http://127.0.0.1:9000/echo");
    /// # Ok::<(), a2a_card::server::ServerError>(())
    /// ```
    pub fn agent<A: Agent>(mut self, path: impl Into<String>, server: Server<A>) -> Host {
        self.agents.push((path.into(), Box::new(server)));
        self
    }

    /// The agent whose card the root serves (`/.well-known/agent-card.json`), by its path
    /// (default: the first mounted).
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # use a2a_card::server::{Host, Server};
    /// # struct Echo;
    /// # /// Echoes.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// let host = Host::new()
    ///     .agent("/one", Server::new(Echo))
    ///     .agent("/two", Server::new(Echo))
    ///     .default_agent("/two");
    /// # drop(host);
    /// // A path no agent is mounted at is refused.
    /// let wrong = Host::new().agent("/one", Server::new(Echo)).default_agent("/three");
    /// assert!(wrong.cards().is_err());
    /// ```
    pub fn default_agent(mut self, path: impl Into<String>) -> Host {
        self.default = Some(path.into());
        self
    }

    /// Where every agent's tasks are kept ([`Tasks::memory`](store::Tasks::memory) by
    /// default), each agent's apart: one SQLite file or one Postgres database for all.
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # use a2a_card::server::{Host, Server};
    /// # struct Echo;
    /// # /// Echoes.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// use a2a_card::server::store::Tasks;
    /// let host = Host::new()
    ///     .agent("/one", Server::new(Echo))
    ///     .agent("/two", Server::new(Echo))
    ///     .tasks(Tasks::sqlite("agents.tasks.db"));
    /// # drop(host);
    /// ```
    pub fn tasks(mut self, tasks: store::Tasks) -> Host {
        self.tasks = tasks;
        self
    }

    /// The origin clients reach the host at (`https://agents.example.com`), behind a proxy:
    /// each agent's URL is this origin with its path. Without it, each agent's URL has the
    /// origin of its own URL (its [`Server::public_url`], else its declared one, a loopback
    /// one taking the address bound).
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # use a2a_card::server::{Host, Server};
    /// # struct Echo;
    /// # /// Echoes.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// let host = Host::new()
    ///     .agent("/echo", Server::new(Echo))
    ///     .public_url("https://agents.example.com");
    /// assert_eq!(host.cards()?[0].interfaces[0].url, "https://agents.example.com/echo");
    /// # Ok::<(), a2a_card::server::ServerError>(())
    /// ```
    pub fn public_url(mut self, origin: impl Into<String>) -> Host {
        self.public_url = Some(origin.into());
        self
    }

    /// How long the drain of [`Listening::serve`] lets the requests and tasks under way
    /// finish before it stops them, for every agent of the host
    /// ([`DEFAULT_DRAIN_TIMEOUT`](crate::server::DEFAULT_DRAIN_TIMEOUT): 30 s; a mounted server's own
    /// [`Server::drain_timeout`] is not used here). See [`Server::drain_timeout`].
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # use a2a_card::server::{Host, Server};
    /// # struct Echo;
    /// # /// Echoes.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// let host = Host::new()
    ///     .agent("/echo", Server::new(Echo))
    ///     .drain_timeout(std::time::Duration::from_secs(20));
    /// # drop(host);
    /// ```
    pub fn drain_timeout(mut self, timeout: Duration) -> Host {
        self.drain_timeout = timeout;
        self
    }

    /// The agents' cards as served, in the order they were mounted (before
    /// [`bind`](Self::bind) puts in a bound loopback address).
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # use a2a_card::server::{Host, Server};
    /// # struct Echo;
    /// # /// Echoes.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// let host = Host::new().agent("/a", Server::new(Echo)).agent("/b", Server::new(Echo));
    /// let urls: Vec<String> = host.cards()?.into_iter().map(|c| c.interfaces[0].url.clone()).collect();
    /// assert_eq!(urls, ["http://127.0.0.1:9000/a", "http://127.0.0.1:9000/b"]);
    /// # Ok::<(), a2a_card::server::ServerError>(())
    /// ```
    pub fn cards(&self) -> Result<Vec<AgentCard>, ServerError> {
        Ok(self.placed(None)?.into_iter().map(|p| p.card).collect())
    }

    /// The router: every agent's routes, the root card and the catalog. Nest it into an axum
    /// app, or serve it as it is.
    ///
    /// ```
    /// # use a2a_card::{agent, skill};
    /// # use a2a_card::server::{Host, Server};
    /// # struct Echo;
    /// # /// Echoes.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// # futures::executor::block_on(async {
    /// let app: axum::Router = Host::new().agent("/echo", Server::new(Echo)).router().await?;
    /// # drop(app);
    /// # Ok::<(), a2a_card::server::ServerError>(()) })?;
    /// # Ok::<(), a2a_card::server::ServerError>(())
    /// ```
    pub async fn router(self) -> Result<axum::Router, ServerError> {
        let placed = self.placed(None)?;
        Ok(self.router_for(placed).await?.app.layered())
    }

    /// Binds `addr`; [`Listening::serve`] then serves every agent there.
    ///
    /// ```no_run
    /// # use a2a_card::{agent, skill};
    /// # use a2a_card::server::{Host, Server};
    /// # struct Echo;
    /// # /// Echoes.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// # async fn run() -> Result<(), a2a_card::server::ServerError> {
    /// Host::new()
    ///     .agent("/one", Server::new(Echo))
    ///     .agent("/two", Server::new(Echo))
    ///     .bind("127.0.0.1:9000")
    ///     .await?
    ///     .serve()
    ///     .await
    /// # }
    /// ```
    pub async fn bind(self, addr: impl ToSocketAddrs) -> Result<Listening, ServerError> {
        let listener = TcpListener::bind(addr).await?;
        self.listen(listener).await
    }

    /// Builds the router for `listener`; [`Listening::serve`] then serves every agent there
    /// ([`Listening::card`] is the default agent's, [`Listening::cards`] all of them).
    ///
    /// ```no_run
    /// # use a2a_card::{agent, skill};
    /// # use a2a_card::server::{Host, Server};
    /// # struct Echo;
    /// # /// Echoes.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// let listening = Host::new().agent("/echo", Server::new(Echo)).listen(listener).await?;
    /// println!("{}", listening.cards()[0].interfaces[0].url);
    /// listening.serve().await?;
    /// # Ok(()) }
    /// ```
    pub async fn listen(self, listener: TcpListener) -> Result<Listening, ServerError> {
        let local_addr = listener.local_addr()?;
        let placed = self.placed(Some(local_addr))?;
        let drain_timeout = self.drain_timeout;
        let Hosted {
            app,
            published,
            served,
            first,
            halts,
        } = self.router_for(placed).await?;
        let (card, endpoint) = served[first].clone();
        Ok(Listening {
            listener,
            local_addr,
            app,
            published,
            card,
            endpoint,
            cards: served.into_iter().map(|(card, _)| card).collect(),
            halts,
            drain_timeout,
        })
    }

    /// Each agent's card and endpoint at its path, checked together.
    fn placed(&self, bound: Option<SocketAddr>) -> Result<Vec<Placed>, ServerError> {
        let bad = |reason: String| Err(ServerError::Host(reason));
        if self.agents.is_empty() {
            return bad("no agent is mounted; mount one with Host::agent".into());
        }
        let mut placed: Vec<Placed> = Vec::with_capacity(self.agents.len());
        for (path, server) in &self.agents {
            if [
                crate::server::drain::LIVE_PATH,
                crate::server::drain::READY_PATH,
            ]
            .contains(&path.as_str())
            {
                return bad(format!(
                    "`{path}` is the listener's health route; mount the agent elsewhere"
                ));
            }
            let namespace = namespace_of(path).map_err(ServerError::Host)?;
            let nested = |a: &str, b: &str| a.starts_with(&format!("{b}/"));
            if let Some(other) = placed
                .iter()
                .find(|p| nested(path, &p.path) || nested(&p.path, path))
            {
                return bad(format!(
                    "`{path}` and `{}` nest one in the other (a request under the longer would be the other's with a tenant); mount them side by side",
                    other.path
                ));
            }
            if let Some(other) = placed.iter().find(|p| p.namespace == namespace) {
                return bad(format!(
                    "`{path}` and `{}` are one path to the task store (`{namespace}`); mount one of them elsewhere",
                    other.path
                ));
            }
            if server.names_store() {
                return bad(format!(
                    "the server mounted at `{path}` names a task store of its own; the agents of a host share the host's: set it with Host::tasks"
                ));
            }
            let own = server.endpoint(bound)?;
            if own.grpc
                && let Some(other) = placed.iter().find(|p| p.endpoint.grpc)
            {
                return bad(format!(
                    "the agents at `{}` and `{path}` both serve gRPC, whose service has one name on a listener; turn it on for one of them",
                    other.path
                ));
            }
            let origin = self.public_url.as_deref().unwrap_or(own.origin());
            let endpoint = own.placed(origin, path)?;
            if endpoint.path != *path {
                return bad(format!(
                    "the public URL `{origin}` has a path; give the origin alone (`https://agents.example.com`)"
                ));
            }
            let card = server.card_at(&endpoint)?;
            placed.push(Placed {
                path: path.clone(),
                namespace,
                endpoint,
                card,
            });
        }
        if let Some(default) = &self.default
            && !placed.iter().any(|p| p.path == *default)
        {
            return bad(format!(
                "the default agent `{default}` is not mounted (mounted: {})",
                placed
                    .iter()
                    .map(|p| format!("`{}`", p.path))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(placed)
    }

    /// The router of the placed agents, their cards and endpoints, and which is the default.
    async fn router_for(self, placed: Vec<Placed>) -> Result<Hosted, ServerError> {
        let first = match &self.default {
            Some(default) => placed.iter().position(|p| p.path == *default).unwrap_or(0),
            None => 0,
        };
        let catalog = catalog_of(&placed, first);
        let store = self
            .tasks
            .open_store(true)
            .await
            .map_err(ServerError::Store)?;
        // The durable tasks the store takes over, each to the agent whose namespace its id
        // names.
        let (recovery, recovered) = Recovery::new();
        store.store.recover_into(recovery);
        let mut recovered = match recovered.kept() {
            Some(recovered) => route_recovered(recovered, &placed),
            None => HashMap::new(),
        };
        let mut app = axum::Router::new();
        let mut published = Published::default();
        published.catalog(&catalog, DEFAULT_CARD_MAX_AGE);
        let mut body_limit = 0;
        let mut served = Vec::with_capacity(placed.len());
        let mut halts = Vec::with_capacity(placed.len());
        for (i, ((_, server), at)) in self.agents.into_iter().zip(placed).enumerate() {
            let shared = Shared {
                store: store.clone(),
                tasks: self.tasks.clone(),
                recovered: recovered.remove(&at.namespace),
                namespace: at.namespace,
            };
            let routes = server
                .routes(at.card.clone(), at.endpoint.clone(), shared)
                .await?;
            body_limit = body_limit.max(routes.body_limit);
            halts.push(routes.halt.clone());
            if i == first {
                published.agent("", &routes.documents);
            }
            app = routes.mounted(app, &at.path, &mut published);
            served.push((at.card, at.endpoint));
        }
        Ok(Hosted {
            app: Ruled {
                app: app.merge(published.router()),
                body_limit,
            },
            published,
            served,
            first,
            halts,
        })
    }
}

/// The agents of a host put together: the router, each agent's card and endpoint (and which
/// is the default), and what the drain stops of each.
struct Hosted {
    app: Ruled,
    /// The documents the listener publishes (also among `app`'s routes).
    published: Published,
    served: Vec<(AgentCard, Endpoint)>,
    first: usize,
    halts: Vec<Halt>,
}

/// What the store's recovery tells (`all`), as each agent's share of it: the tasks by the
/// namespace their ids name, by namespace. A task of an agent not mounted here any more goes
/// to another (which fails it, saying so, where it was taken over).
fn route_recovered(all: Recovered, placed: &[Placed]) -> HashMap<String, Recovered> {
    let mut to = HashMap::new();
    let mut from = HashMap::new();
    for p in placed {
        let (recovery, recovered) = Recovery::new();
        to.insert(p.namespace.clone(), recovery);
        from.insert(p.namespace.clone(), recovered);
    }
    all.forward(move |id| {
        let namespace = crate::server::store::namespace_of(id).unwrap_or_default();
        to.get(namespace).or_else(|| to.values().next()).cloned()
    });
    from
}

/// An agent placed at its path: its card and endpoint there, and its tasks' namespace.
struct Placed {
    path: String,
    namespace: String,
    endpoint: Endpoint,
    card: AgentCard,
}

/// The namespace of the tasks of the agent mounted at `path`: its segments joined by `.`
/// (`/team/planner` is `team.planner`); why `path` cannot be mounted otherwise.
fn namespace_of(path: &str) -> Result<String, String> {
    let why = |reason: &str| {
        Err(format!(
            "`{}` cannot be an agent's path: {reason}",
            path.chars().take(80).collect::<String>()
        ))
    };
    let Some(rest) = path.strip_prefix('/') else {
        return why("it does not begin with `/`");
    };
    if rest.is_empty() {
        return why(
            "the root serves the default agent's card and the catalog; mount each agent at a path of its own, such as /planner",
        );
    }
    let segments: Vec<&str> = rest.split('/').collect();
    for segment in &segments {
        if crate::server::call::check_tenant(segment).is_err() {
            return why(
                "each segment is 1 to 64 letters, digits, `.`, `_`, `~` or `-` (no empty segment, no trailing `/`)",
            );
        }
    }
    let reserved = |p: &str| path == p || path.starts_with(&format!("{p}/"));
    let taken = [
        "/.well-known",
        CAPABILITIES_PATH,
        #[cfg(feature = "grpc")]
        crate::server::grpc::SERVICE_PATH,
    ];
    if taken.iter().any(|p| reserved(p)) || path == AGENT_CARD_PATH {
        return why(
            "it is taken by the root card, the capabilities, the catalog or gRPC; choose another",
        );
    }
    Ok(segments.join("."))
}

/// The AI Catalog of the placed agents: the default (`first`) first, then the others in the
/// order mounted.
fn catalog_of(placed: &[Placed], first: usize) -> serde_json::Value {
    let order = std::iter::once(first).chain((0..placed.len()).filter(|i| *i != first));
    let listed: Vec<Listed<'_>> = order
        .filter_map(|i| placed.get(i))
        .map(|p| Listed {
            card: &p.card,
            endpoint: &p.endpoint,
            namespace: Some(&p.namespace),
        })
        .collect();
    catalog(&listed)
}

/// A server a host mounts, whatever its agent's type.
trait Mount: Send {
    /// Where its interfaces are, before the host places them.
    fn endpoint(&self, bound: Option<SocketAddr>) -> Result<Endpoint, ServerError>;
    /// Its card as served at `endpoint`.
    fn card_at(&self, endpoint: &Endpoint) -> Result<AgentCard, ServerError>;
    /// Whether it names a task store of its own.
    fn names_store(&self) -> bool;
    /// Its routes, its tasks in `shared`.
    fn routes(
        self: Box<Self>,
        card: AgentCard,
        endpoint: Endpoint,
        shared: Shared,
    ) -> Pin<Box<dyn Future<Output = Result<Routes, ServerError>> + Send>>;
}

impl<A: Agent> Mount for Server<A> {
    fn endpoint(&self, bound: Option<SocketAddr>) -> Result<Endpoint, ServerError> {
        Server::endpoint(self, bound)
    }

    fn card_at(&self, endpoint: &Endpoint) -> Result<AgentCard, ServerError> {
        Server::card_at(self, endpoint)
    }

    fn names_store(&self) -> bool {
        self.tasks.is_some()
    }

    fn routes(
        self: Box<Self>,
        card: AgentCard,
        endpoint: Endpoint,
        shared: Shared,
    ) -> Pin<Box<dyn Future<Output = Result<Routes, ServerError>> + Send>> {
        Box::pin(async move { self.routes_for(card, &endpoint, Some(shared)).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_becomes_a_namespace_or_says_why_not() {
        assert_eq!(namespace_of("/planner").unwrap(), "planner");
        assert_eq!(namespace_of("/team/planner").unwrap(), "team.planner");
        for (path, says) in [
            ("planner", "begin with `/`"),
            ("/", "the root serves"),
            ("/planner/", "no trailing"),
            ("/a//b", "no empty segment"),
            ("/a:b", "letters, digits"),
            ("/.well-known/x", "taken"),
            ("/capabilities", "taken"),
        ] {
            let why = namespace_of(path).unwrap_err();
            assert!(why.contains(says), "{path}: {why}");
        }
    }
}
