//! How the builder's options become a served agent: the card as served, the request
//! handler and its store, and the router (each binding's routes, and the layers a request
//! meets, outermost first: the unread-body rule, telemetry, the body limit, authentication).

use std::net::SocketAddr;
use std::sync::Arc;

use a2a_server::{InMemoryPushConfigStore, PushConfigStore};
use axum::routing::post;

use super::documents::{self, Documents};
use super::interfaces::Endpoint;
use super::*;
use crate::agent::Agent;
use crate::builder::BuildError;
use crate::card::AgentCard;
use crate::dispatch::Dispatcher;

impl<A: Agent> Server<A> {
    /// The served card and where its interfaces are mounted.
    pub(super) fn served(
        &self,
        bound: Option<SocketAddr>,
    ) -> Result<(AgentCard, Endpoint), ServerError> {
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
            super::call::check_tenant(tenant).map_err(ServerError::Tenant)?;
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
        Ok((card, endpoint))
    }

    /// The lifecycle for `card` served at `endpoint`, and the guard of its security.
    pub(super) async fn handler_for(
        self,
        card: &AgentCard,
        endpoint: &Endpoint,
    ) -> Result<(Arc<lifecycle::Lifecycle<A>>, Option<Arc<auth::Guard>>), ServerError> {
        let dispatcher = Arc::new(Dispatcher::for_agent::<A>().map_err(ServerError::Schema)?);
        let guard = auth::Guard::new(card, A::SKILLS, self.authentication)
            .map_err(ServerError::Security)?
            .map(Arc::new);
        let store = self
            .tasks
            .open_store(true)
            .await
            .map_err(ServerError::Store)?;
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
            self.agent,
            dispatcher,
            lifecycle::Parts {
                store,
                push,
                guard: guard.clone(),
                extended: documents::extended_card::<A>(endpoint, self.v0_3)?,
                // On the memory store, no more logs than the store keeps tasks.
                finished_logs: match &self.tasks {
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
                extensions: crate::server::call::Extensions::of(card),
            },
        ));
        Ok((handler, guard))
    }

    pub(super) async fn router_for(
        self,
        card: AgentCard,
        endpoint: &Endpoint,
    ) -> Result<axum::Router, ServerError> {
        let (body_limit, v0_3, card_max_age) = (self.body_limit, self.v0_3, self.card_max_age);
        #[cfg(feature = "ui")]
        let ui = self.ui;
        #[cfg(feature = "otel")]
        let metrics_route = self.metrics_route.clone();
        let (handler, guard) = self.handler_for(&card, endpoint).await?;
        let calls: Arc<dyn lifecycle::Calls> = Arc::clone(&handler) as _;
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
            .then(|| authenticated(grpc::router(Arc::clone(&calls), body_limit)));
        #[cfg(feature = "mcp")]
        let mcp = match endpoint.mcp {
            true => Some(authenticated(mcp::router(
                Arc::clone(&handler),
                guard.clone(),
                &card,
                endpoint,
                body_limit,
            )?)),
            false => None,
        };
        let rpc = Arc::new(http::jsonrpc::JsonRpc {
            calls: Arc::clone(&calls),
            body_limit,
            v0_3,
        });
        let rest = Arc::new(http::rest::Rest { calls, body_limit });
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
        let capabilities = crate::ag_ui::Capabilities::for_agent::<A>(&card).to_json();
        #[cfg_attr(
            not(any(feature = "ui", feature = "grpc", feature = "mcp", feature = "otel")),
            allow(unused_mut)
        )]
        let mut documents = Arc::new(Documents::new(&card, &capabilities, card_max_age)).router();
        #[cfg(feature = "ui")]
        if ui {
            documents = documents.merge(ui::router());
        }
        #[cfg(feature = "otel")]
        if let Some(path) = metrics_route {
            documents = documents.route(
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
        // The MCP endpoint is at the root whatever the card's path.
        #[cfg(feature = "mcp")]
        if let Some(mcp) = mcp {
            documents = documents.merge(mcp);
        }
        // gRPC paths are the service's own, at the root whatever the card's path.
        #[cfg(feature = "grpc")]
        if let Some(grpc) = grpc {
            documents = documents.merge(grpc);
        }
        let base = endpoint.path.trim_end_matches('/');
        let app = if base.is_empty() {
            documents.merge(protocol)
        } else if endpoint.path.ends_with('/') {
            // `https://a.example.com/a2a/`: JSON-RPC clients post to the URL as written.
            let mut direct = post(http::jsonrpc::endpoint).with_state(rpc);
            if let Some(guard) = &guard {
                direct = direct.layer(axum::middleware::from_fn_with_state(
                    Arc::clone(guard),
                    auth::layer,
                ));
            }
            documents.nest(base, protocol).route(&endpoint.path, direct)
        } else {
            documents.nest(base, protocol)
        };
        // Every request in its span (and, with `otel`, its caller's trace), with its metrics;
        // outside it, the one rule for a body an answer left unread.
        Ok(app
            .layer(axum::middleware::from_fn(telemetry::layer))
            .layer(axum::middleware::from_fn_with_state(
                body_limit,
                http::body::keep_alive,
            )))
    }
}
