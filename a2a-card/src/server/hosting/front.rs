//! The service each connection of a listener gets: a plain `GET` of a published document (a
//! card, the capabilities, the AI Catalog) is answered at once from its bytes, ahead of the
//! router and its layers; every other request goes to the router, with its connection's peer
//! address (the limits count anonymous callers by it).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::{ConnectInfo, Request};
use axum::response::Response;
use axum::routing::future::RouteFuture;
use futures::future::{self, Either, Ready};
use tower::Service;

use crate::server::documents::Published;
use crate::server::drain::Drain;
use crate::server::telemetry;

/// What every connection's [`Front`] shares.
#[derive(Clone)]
pub(in crate::server) struct Fronts {
    app: axum::Router,
    published: Arc<Published>,
    drain: Arc<Drain>,
}

impl Fronts {
    /// The connections' services of `app`, which serves `published` among its routes.
    pub(in crate::server) fn new(
        app: axum::Router,
        published: Published,
        drain: Arc<Drain>,
    ) -> Self {
        Fronts {
            app,
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

impl Service<Request> for Front {
    type Response = Response;
    type Error = Infallible;
    type Future = Either<Ready<Result<Response, Infallible>>, RouteFuture<Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // The router is always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        // Once the drain begins, every request meets its rules (refused, `Connection: close`).
        if !self.shared.drain.draining()
            && let Some(answer) = self.shared.published.answer(&request)
        {
            telemetry::answered_ahead(&request, answer.status().as_u16());
            return Either::Left(future::ready(Ok(answer)));
        }
        request.extensions_mut().insert(ConnectInfo(self.peer));
        Either::Right(self.shared.app.call(request))
    }
}
