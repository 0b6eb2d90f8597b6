//! The service each connection of a listener gets, the one place a served request begins: a
//! plain `GET` of a published document (a card, the capabilities, the AI Catalog) is answered
//! at once from its bytes, ahead of the router; a health probe goes to its route alone; every
//! other request meets the rules every request meets (the drain's, the keep-alive body rule,
//! its span and metrics), in one future, then the router, with its connection's peer address
//! (the limits count anonymous callers by it).
//!
//! The same rules are layers of the router [`Server::router`](crate::server::Server::router)
//! gives, for an app of the user's own ([`Ruled::layered`]); here they are composed without
//! those layers' boxed services and futures.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::{ConnectInfo, Request};
use axum::response::Response;
use axum::routing::future::RouteFuture;
use futures::future::{self, Either, Ready};
use tower::Service;

use crate::server::bindings::http::body;
use crate::server::documents::Published;
use crate::server::drain::{self, Drain};
use crate::server::telemetry;
use crate::server::wiring::Ruled;

/// What every connection's [`Front`] shares.
#[derive(Clone)]
pub(in crate::server) struct Fronts {
    app: Ruled,
    health: axum::Router,
    published: Arc<Published>,
    drain: Arc<Drain>,
}

impl Fronts {
    /// The connections' services of `app`, which serves `published` among its routes,
    /// beside the `health` probes.
    pub(in crate::server) fn new(
        app: Ruled,
        health: axum::Router,
        published: Published,
        drain: Arc<Drain>,
    ) -> Self {
        Fronts {
            app,
            health,
            published: Arc::new(published),
            drain,
        }
    }
}

impl<'a, L> Service<axum::serve::IncomingStream<'a, L>> for Fronts
where
    L: axum::serve::Listener<Addr = SocketAddr>,
{
    type Response = Front;
    type Error = Infallible;
    type Future = Ready<Result<Front, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, incoming: axum::serve::IncomingStream<'a, L>) -> Self::Future {
        future::ready(Ok(Front {
            shared: self.clone(),
            peer: *incoming.remote_addr(),
        }))
    }
}

/// One connection's service.
#[derive(Clone)]
pub(in crate::server) struct Front {
    shared: Fronts,
    peer: SocketAddr,
}

/// The answer of a request that met the rules, then the router.
type Guarded = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl Service<Request> for Front {
    type Response = Response;
    type Error = Infallible;
    type Future =
        Either<Ready<Result<Response, Infallible>>, Either<RouteFuture<Infallible>, Guarded>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // The routers are always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let shared = &mut self.shared;
        // Once the drain begins, every request meets its rules (refused, `Connection: close`).
        if !shared.drain.draining()
            && let Some(answer) = shared.published.answer(&request)
        {
            telemetry::answered_ahead(&request, answer.status().as_u16());
            return Either::Left(future::ready(Ok(answer)));
        }
        if drain::is_probe(request.uri().path()) {
            return Either::Right(Either::Left(shared.health.call(request)));
        }
        request.extensions_mut().insert(ConnectInfo(self.peer));
        let (mut app, drain, limit) = (
            shared.app.app.clone(),
            Arc::clone(&shared.drain),
            shared.app.body_limit,
        );
        Either::Right(Either::Right(Box::pin(async move {
            let answer = drain::watched(&drain, request, |request| {
                body::kept_alive(limit, request, |request| {
                    telemetry::traced(request, |request| routed(app.call(request)))
                })
            });
            Ok(answer.await)
        })))
    }
}

/// The router's answer (it has no error).
async fn routed(answer: RouteFuture<Infallible>) -> Response {
    match answer.await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}
