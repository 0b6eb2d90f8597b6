//! How the builder's options become a served agent: the card as served, the request
//! handler and its store, and the router (each binding's routes, and the layers a request
//! meets, outermost first: the unread-body rule, telemetry, the body limit, authentication).

use std::net::SocketAddr;
use std::sync::Arc;

use a2a_server::{InMemoryPushConfigStore, PushConfigStore};
use axum::routing::post;

use crate::agent::Agent;
use crate::builder::BuildError;
use crate::card::AgentCard;
use crate::dispatch::Dispatcher;
use crate::server::documents::{self, Documents, Published};
use crate::server::interfaces::Endpoint;
use crate::server::*;

impl<A: Agent> Server<A> {
    /// The served card and where its interfaces are mounted.
    pub(in crate::server) fn served(
        &self,
        bound: Option<SocketAddr>,
    ) -> Result<(AgentCard, Endpoint), ServerError> {
        let endpoint = self.endpoint(bound)?;
        Ok((self.card_at(&endpoint)?, endpoint))
    }

    /// Where the agent's interfaces are: its public URL, else its declared one (with the
    /// address bound for a loopback host), with this server's options.
    pub(in crate::server) fn endpoint(
        &self,
        bound: Option<SocketAddr>,
    ) -> Result<Endpoint, ServerError> {
        let card = A::card().map_err(|e| ServerError::Card(e.clone()))?;
        let url = match (&self.public_url, card.interfaces.first()) {
            (Some(url), _) => url.clone(),
            (None, Some(declared)) => match bound {
                Some(bound) => interfaces::bound_url(&declared.url, bound),
                None => declared.url.clone(),
            },
            (None, None) => {
                return Err(ServerError::Url {
                    url: String::new(),
                    reason: "the card has no URL; set one with Server::public_url".into(),
                });
            }
        };
        let mut endpoint = Endpoint::parse(&url)?;
        endpoint.order = self.interface_order.clone();
        if let Some(tenant) = &self.tenant {
            crate::server::call::check_tenant(tenant).map_err(ServerError::Tenant)?;
            endpoint.tenant = Some(tenant.clone());
        }
        #[cfg(feature = "grpc")]
        {
            endpoint.grpc = self.grpc;
        }
        #[cfg(feature = "mcp")]
        {
            endpoint.mcp = self.mcp;
        }
        Ok(endpoint)
    }

    /// The card as served at `endpoint`: its interfaces, signed where asked, linted.
    pub(in crate::server) fn card_at(&self, endpoint: &Endpoint) -> Result<AgentCard, ServerError> {
        let card = A::card().map_err(|e| ServerError::Card(e.clone()))?;
        let card = endpoint.card(card, self.v0_3);
        #[cfg(feature = "sign")]
        let card = match &self.signer {
            Some((key, options)) => {
                crate::sign::sign(&card, key, options.clone()).map_err(ServerError::Sign)?
            }
            None => card,
        };
        // The card served is linted as any other: a URL put in above, or a signature, must
        // not make it one the builder would have refused.
        let findings = crate::lint::lint(&card, crate::wire::Profile::V1);
        if crate::lint::has_errors(&findings) {
            return Err(ServerError::Served(BuildError { findings }));
        }
        Ok(card)
    }

    /// The lifecycle for `card` served at `endpoint`, and the guard of its security; its
    /// tasks in `shared` where a host keeps several agents' tasks in one store, else in the
    /// store this server names.
    pub(in crate::server) async fn handler_for(
        self,
        card: &AgentCard,
        endpoint: &Endpoint,
        shared: Option<Shared>,
    ) -> Result<(Arc<lifecycle::Lifecycle>, Option<Arc<auth::Guard>>), ServerError> {
        let dispatcher = Arc::new(Dispatcher::for_agent::<A>().map_err(ServerError::Schema)?);
        let skills: Vec<&str> = A::SKILLS.iter().map(|s| s.id).collect();
        if let Some(unknown) = self.limits.unknown_skills(&skills).first() {
            return Err(ServerError::Limits(format!(
                "a limit names skill `{unknown}`, which the agent does not have (its skills: {})",
                skills.join(", ")
            )));
        }
        let mut guard = auth::Guard::new(card, A::SKILLS, self.authentication)
            .map_err(ServerError::Security)?;
        let (store::Opened { store, memory }, tasks, namespace, recovered) = match shared {
            Some(shared) => (
                shared.store,
                shared.tasks,
                Some(shared.namespace),
                shared.recovered,
            ),
            None => {
                let tasks = self.tasks.unwrap_or_else(store::Tasks::memory);
                let opened = tasks.open_store(true).await.map_err(ServerError::Store)?;
                let (recovery, recovered) = store::Recovery::new();
                opened.store.recover_into(recovery);
                (opened, tasks, None, recovered.kept())
            }
        };
        let (recovered, resumed) = match recovered {
            Some(store::Recovered { failed, resumed }) => (Some(failed), Some(resumed)),
            None => (None, None),
        };
        let durable: Vec<&str> = A::SKILLS
            .iter()
            .filter(|s| s.durable.is_some())
            .map(|s| s.id)
            .collect();
        if !durable.is_empty() && !store.events().is_some_and(|log| log.keeps_journals()) {
            tracing::info!(
                skills = ?durable,
                "durable skills run as any other here: the task store keeps no journal (nothing outlives the process on the memory store); use Tasks::sqlite or Tasks::postgres for their tasks to resume after a restart"
            );
        }
        // Requests per window are counted by the store where it counts for every replica
        // (a store shared with other processes), else here.
        let counter = store.changes().is_some().then(|| Arc::clone(&store));
        let limits = self.limits.with_declared(A::SKILLS);
        let limiter = Arc::new(limits::Limiter::new(limits, counter).clocked(self.clock.clone()));
        if let Some(guard) = guard.as_mut() {
            guard.limit_logins(Arc::clone(&limiter));
        }
        let guard = guard.map(Arc::new);
        let caps = &card.capabilities;
        let push = if caps.push_notifications == Some(true) {
            let configs: Arc<dyn PushConfigStore> = store
                .push_configs()
                .unwrap_or_else(|| Arc::new(InMemoryPushConfigStore::new()));
            let delivery = push::Delivery::new(self.webhooks.clone(), Arc::clone(&configs))
                .map_err(ServerError::Webhooks)?;
            Some((configs, Arc::new(delivery), self.webhooks.clone()))
        } else {
            None
        };
        let handler = Arc::new(lifecycle::Lifecycle::new(
            Arc::new(self.agent),
            dispatcher,
            lifecycle::Parts {
                store,
                memory,
                push,
                guard: guard.clone(),
                limiter,
                extended: documents::extended_card::<A>(endpoint, self.v0_3)?,
                // On the memory store, no more logs than the store keeps tasks.
                finished_logs: match &tasks {
                    store::Tasks::Memory(retention) => {
                        let kept = retention.count_limit().unwrap_or(usize::MAX);
                        self.finished_logs
                            .max_entries(self.finished_logs.entries().min(kept))
                    }
                    _ => self.finished_logs,
                },
                streaming: caps.streaming != Some(false),
                max_inline_file: self.max_inline_file,
                input_timeout: self.input_timeout,
                clock: self.clock.clone(),
                extensions: crate::server::call::Extensions::of(card),
                namespace,
                recovered,
            },
        ));
        if let Some(resumed) = resumed {
            handler.take_up(resumed);
        }
        Ok((handler, guard))
    }

    /// The routes of the agent, apart, for [`Routes::alone`] or a host to put together.
    pub(in crate::server) async fn routes_for(
        self,
        card: AgentCard,
        endpoint: &Endpoint,
        shared: Option<Shared>,
    ) -> Result<Routes, ServerError> {
        let (body_limit, v0_3, card_max_age) = (self.body_limit, self.v0_3, self.card_max_age);
        #[cfg(feature = "ui")]
        let ui = self.ui;
        #[cfg(feature = "otel")]
        let metrics_route = self.metrics_route.clone();
        #[cfg(feature = "console")]
        let console = self.console.clone().map(|console| {
            let limits = self.limits.clone().with_declared(A::SKILLS);
            (console, limits)
        });
        let (handler, guard) = self.handler_for(&card, endpoint, shared).await?;
        let halt = handler.halt();
        // The one authentication layer of every binding (where the card declares security).
        let authenticated = |router: axum::Router| match &guard {
            Some(guard) => router.layer(axum::middleware::from_fn_with_state(
                Arc::clone(guard),
                auth::layer,
            )),
            None => router,
        };

        #[cfg(feature = "grpc")]
        let grpc = endpoint
            .grpc
            .then(|| authenticated(grpc::router(Arc::clone(&handler), body_limit)));
        #[cfg(not(feature = "grpc"))]
        let grpc = None;
        #[cfg(feature = "mcp")]
        let mcp = match endpoint.mcp {
            true => Some(authenticated(mcp::router(
                Arc::clone(&handler),
                handler.agent(),
                guard.clone(),
                &card,
                endpoint,
                body_limit,
            )?)),
            false => None,
        };
        #[cfg(not(feature = "mcp"))]
        let mcp = None;
        let rpc = Arc::new(http::jsonrpc::JsonRpc {
            lifecycle: Arc::clone(&handler),
            body_limit,
            v0_3,
        });
        let rest = Arc::new(http::rest::Rest {
            lifecycle: Arc::clone(&handler),
            body_limit,
        });
        // JSON-RPC at the base path; every other path under it is HTTP+JSON's.
        let protocol = authenticated(
            axum::Router::new()
                .route(
                    "/",
                    post(http::jsonrpc::endpoint).with_state(Arc::clone(&rpc)),
                )
                .fallback(http::rest::endpoint)
                .with_state(rest),
        );
        // `https://a.example.com/a2a/`: JSON-RPC clients post to the URL as written.
        let direct = (endpoint.path.len() > 1 && endpoint.path.ends_with('/')).then(|| {
            let direct = post(http::jsonrpc::endpoint).with_state(rpc);
            match &guard {
                Some(guard) => direct.layer(axum::middleware::from_fn_with_state(
                    Arc::clone(guard),
                    auth::layer,
                )),
                None => direct,
            }
        });
        let capabilities = crate::ag_ui::Capabilities::for_agent::<A>(&card).to_json();
        let documents = Arc::new(Documents::new(&card, &capabilities, card_max_age));
        #[cfg_attr(
            not(any(feature = "ui", feature = "otel", feature = "console")),
            allow(unused_mut)
        )]
        let mut pages = axum::Router::new();
        #[cfg(feature = "console")]
        if let Some((console, limits)) = console {
            pages = pages.merge(crate::server::console::router(
                console,
                Arc::clone(&handler),
                guard.clone(),
                limits,
                card.name.clone(),
                endpoint.tenant.clone(),
            )?);
        }
        #[cfg(feature = "ui")]
        if ui {
            pages = pages.merge(ui::router());
        }
        #[cfg(feature = "otel")]
        if let Some(path) = metrics_route {
            pages = pages.route(
                &path,
                axum::routing::get(|| async {
                    (
                        [(
                            axum::http::header::CONTENT_TYPE,
                            "text/plain; version=0.0.4; charset=utf-8",
                        )],
                        crate::otel::prometheus_text(),
                    )
                }),
            );
        }
        Ok(Routes {
            documents,
            pages,
            protocol,
            direct,
            mcp,
            grpc,
            body_limit,
            halt,
        })
    }

    /// The router of the agent alone, what its drain stops, and the documents it publishes.
    pub(in crate::server) async fn router_for(
        self,
        card: AgentCard,
        endpoint: &Endpoint,
    ) -> Result<(Ruled, lifecycle::Halt, Published), ServerError> {
        // The agent alone on its listener: a catalog of one entry.
        let catalog = crate::server::catalog::catalog(&[crate::server::catalog::Listed {
            card: &card,
            endpoint,
            namespace: None,
        }]);
        let mut published = Published::default();
        published.catalog(&catalog, self.card_max_age);
        let routes = self.routes_for(card, endpoint, None).await?;
        let (body_limit, halt) = (routes.body_limit, routes.halt.clone());
        let app = routes.alone(endpoint, &mut published);
        let app = Ruled {
            app: app.merge(published.router()),
            body_limit,
        };
        Ok((app, halt, published))
    }
}

/// Where an agent's tasks are kept when a host keeps several agents' tasks in one store: the
/// store, as the host's [`Tasks`](store::Tasks) opened it, and the agent's namespace in it.
pub(in crate::server) struct Shared {
    pub(in crate::server) store: store::Opened,
    pub(in crate::server) tasks: store::Tasks,
    pub(in crate::server) namespace: String,
    /// What the store's recovery does with the agent's tasks of a process that stopped.
    pub(in crate::server) recovered: Option<store::Recovered>,
}

/// An agent's routes, apart: the paths of `pages` and `protocol` are from the agent's own
/// root; `mcp` and `grpc` are at their paths on the listener; `documents` are published where
/// [`alone`](Self::alone) or [`mounted`](Self::mounted) places the agent.
pub(in crate::server) struct Routes {
    /// The card and the capabilities.
    pub(in crate::server) documents: Arc<Documents>,
    /// The form page and the metrics, where they are on.
    pub(in crate::server) pages: axum::Router,
    /// JSON-RPC at `/` and HTTP+JSON under it, behind the card's security.
    protocol: axum::Router,
    /// JSON-RPC at the URL as written, where it ends in `/`.
    direct: Option<axum::routing::MethodRouter>,
    pub(in crate::server) mcp: Option<axum::Router>,
    pub(in crate::server) grpc: Option<axum::Router>,
    /// The largest request body of the protocol routes.
    pub(in crate::server) body_limit: usize,
    /// What the listener's drain stops of the agent.
    pub(in crate::server) halt: lifecycle::Halt,
}

impl Routes {
    /// The agent alone on its listener: the card, capabilities, page and metrics at the root;
    /// the protocol routes at the URL's path, with the card and capabilities there too
    /// (`/a2a/.well-known/agent-card.json`, for clients that look for it beside the URL);
    /// MCP at `/mcp` and gRPC at the service's paths. The card and capabilities are added to
    /// `published`, whose routes the caller merges.
    pub(in crate::server) fn alone(
        self,
        endpoint: &Endpoint,
        published: &mut Published,
    ) -> axum::Router {
        let base = endpoint.path.trim_end_matches('/');
        published.agent("", &self.documents);
        let mut app = if base.is_empty() {
            self.pages.merge(self.protocol)
        } else {
            published.agent(base, &self.documents);
            self.pages.nest(base, self.protocol)
        };
        if let Some(direct) = self.direct {
            app = app.route(&endpoint.path, direct);
        }
        self.mcp
            .into_iter()
            .chain(self.grpc)
            .fold(app, axum::Router::merge)
    }

    /// The agent's own routes under its mount path (`/planner`): the protocol, its card and
    /// capabilities (added to `published`), its page and metrics; MCP at its path; gRPC.
    pub(in crate::server) fn mounted(
        self,
        app: axum::Router,
        mount: &str,
        published: &mut Published,
    ) -> axum::Router {
        published.agent(mount, &self.documents);
        let own = self.protocol.merge(self.pages);
        let app = app.nest(mount, own);
        self.mcp
            .into_iter()
            .chain(self.grpc)
            .fold(app, axum::Router::merge)
    }
}

/// Routes that have yet to meet the rules every request meets: as layers of the router
/// ([`layered`](Self::layered)), or in a served listener's [`Front`](super::front::Front).
#[derive(Clone)]
pub(in crate::server) struct Ruled {
    pub(in crate::server) app: axum::Router,
    /// The largest request body the routes take, in bytes.
    pub(in crate::server) body_limit: usize,
}

impl Ruled {
    /// The routes in the layers of every request, outermost last: its span (and, with `otel`,
    /// its caller's trace) and metrics; outside them, the one rule for a body an answer left
    /// unread.
    pub(in crate::server) fn layered(self) -> axum::Router {
        self.app
            .layer(axum::middleware::from_fn(telemetry::layer))
            .layer(axum::middleware::from_fn_with_state(
                self.body_limit,
                http::body::keep_alive,
            ))
    }
}
