//! A server bound to its listener, ready to serve.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::serve::ListenerExt;
use futures::future::{self, Either};
use tokio::net::TcpListener;

use crate::card::AgentCard;
use crate::server::ServerError;
use crate::server::documents::Published;
use crate::server::drain::{self, Drain};
use crate::server::front::Fronts;
use crate::server::interfaces::Endpoint;
use crate::server::lifecycle::Halt;
use crate::server::store::Store;
use crate::server::wiring::Ruled;

/// A bound server, about to serve: where it listens, and the card it serves.
///
/// ```no_run
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
/// let listening = a2a_card::server::Server::new(Echo).bind("127.0.0.1:0").await?;
/// println!("card: http://{}/.well-known/agent-card.json", listening.local_addr());
/// assert_eq!(listening.card().interfaces[0].url, listening.url());
/// listening.serve().await
/// # }
/// ```
pub struct Listening {
    pub(in crate::server) listener: TcpListener,
    pub(in crate::server) local_addr: SocketAddr,
    /// The agents' routes, without the rules every request meets (the listener's
    /// [`Front`](super::front::Front) applies them).
    pub(in crate::server) app: Ruled,
    /// The documents `app` serves, answered ahead of it.
    pub(in crate::server) published: Published,
    pub(in crate::server) card: AgentCard,
    pub(in crate::server) endpoint: Endpoint,
    /// Every agent's card, where a [`Host`](crate::server::Host) serves several (else the one).
    pub(in crate::server) cards: Vec<AgentCard>,
    /// What the drain stops of each agent.
    pub(in crate::server) halts: Vec<Halt>,
    /// How long the drain lets the requests and tasks under way finish.
    pub(in crate::server) drain_timeout: Duration,
}

impl fmt::Debug for Listening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listening")
            .field("local_addr", &self.local_addr)
            .field("url", &self.endpoint.url)
            .finish_non_exhaustive()
    }
}

impl Listening {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The URL the card names for the protocol interfaces.
    pub fn url(&self) -> &str {
        &self.endpoint.url
    }

    /// The path the protocol routes are mounted at (the path of [`url`](Self::url)).
    pub fn path(&self) -> &str {
        &self.endpoint.path
    }

    /// The card as served (a [`Host`](crate::server::Host)'s default agent's).
    pub fn card(&self) -> &AgentCard {
        &self.card
    }

    /// Every card served on the listener: the one agent's, or those of the agents a
    /// [`Host`](crate::server::Host) serves, in the order they were mounted.
    ///
    /// ```no_run
    /// # use a2a_card::{agent, skill};
    /// # struct Echo;
    /// # /// Says back what it is told.
    /// # #[agent(url = "http://127.0.0.1:0")]
    /// # impl Echo {
    /// #     /// Echoes the text.
    /// #     #[skill]
    /// #     fn echo(&self, text: String) -> String { text }
    /// # }
    /// # async fn run() -> Result<(), a2a_card::server::ServerError> {
    /// use a2a_card::server::{Host, Server};
    /// let listening = Host::new()
    ///     .agent("/one", Server::new(Echo))
    ///     .agent("/two", Server::new(Echo))
    ///     .bind("127.0.0.1:0")
    ///     .await?;
    /// for card in listening.cards() {
    ///     println!("{} at {}", card.name, card.interfaces[0].url);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn cards(&self) -> &[AgentCard] {
        &self.cards
    }

    /// Serves until the process gets SIGTERM (on Unix) or Ctrl-C, then drains and returns:
    /// see [`serve_with_shutdown`](Self::serve_with_shutdown), of which this is the usual
    /// case (what orchestrators send: Kubernetes sends SIGTERM, waits its grace period, 30 s
    /// by default, then kills the process).
    ///
    /// ```no_run
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
    /// use std::time::Duration;
    /// use a2a_card::server::Server;
    /// // Within the orchestrator's grace period, with room for the process to exit.
    /// let server = Server::new(Echo).drain_timeout(Duration::from_secs(25));
    /// server.bind("127.0.0.1:9000").await?.serve().await // returns once drained
    /// # }
    /// ```
    pub async fn serve(self) -> Result<(), ServerError> {
        self.serve_with_shutdown(drain::signal()).await
    }

    /// Serves until `shutdown` completes, then drains, and returns once drained: for a
    /// program that owns the signals (or stops the server for reasons of its own).
    ///
    /// Beside the agents' routes, the listener answers two health routes, for probes
    /// (unauthenticated, untraced): `GET /healthz` (liveness: `200` while the process serves)
    /// and `GET /readyz` (readiness: `200`; `503` from the drain's beginning, and while the
    /// task store was not reached at its last check, see
    /// [`Store::reachable`](crate::server::store::Store::reachable)).
    ///
    /// The drain, once `shutdown` completes:
    ///
    /// 1. `/readyz` answers `503`; a request that arrives is refused with `503`,
    ///    `Retry-After: 1` and `Connection: close`, for its caller to send it again to another
    ///    replica (or to this agent once restarted); every answer says `Connection: close`.
    /// 2. Each open event stream (`SendStreamingMessage`, `SubscribeToTask`, on JSON-RPC and
    ///    HTTP+JSON; MCP's) ends between two events: the caller resubscribes elsewhere with
    ///    `Last-Event-ID`, the number of the last event it read. A gRPC stream ends between
    ///    two messages with `UNAVAILABLE`, the status gRPC clients retry.
    /// 3. Each durable skill's task that no caller here reads (waiting for an answer, or
    ///    running for a caller that did not wait) is handed over at once: its handler is
    ///    dropped, its writes stored and its claim given up, for another replica to take it
    ///    over now. The requests under way are answered, and the tasks only this process can finish
    ///    (of skills that are not durable, at work) run on, until both are done or the drain
    ///    timeout passes ([`Server::drain_timeout`](crate::server::Server::drain_timeout),
    ///    [`DEFAULT_DRAIN_TIMEOUT`](crate::server::DEFAULT_DRAIN_TIMEOUT): 30 s).
    /// 4. Then every handler still running is stopped. A durable skill's task
    ///    (`#[skill(durable)]`, on SQLite or Postgres) is not failed: it stays as its journal
    ///    has it, and the store gives it up at once, so that another replica (Postgres) or the
    ///    next process on the file (SQLite) takes it over without waiting for this one's
    ///    lease. Any other task still running, or waiting for an answer, fails with the
    ///    status message [`SHUT_DOWN`](crate::server::SHUT_DOWN).
    /// 5. The listener closes; the connections still open are given a moment to finish
    ///    writing, then left to the process's end.
    ///
    /// ```no_run
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
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let listening = a2a_card::server::Server::new(Echo).bind("127.0.0.1:0").await?;
    /// let served = tokio::spawn(listening.serve_with_shutdown(async {
    ///     let _ = stopped.await;
    /// }));
    /// // ... later: drain and stop.
    /// let _ = stop.send(());
    /// served.await.expect("the server ran")?;
    /// # Ok(()) }
    /// ```
    pub async fn serve_with_shutdown<F>(self, shutdown: F) -> Result<(), ServerError>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let drain = Drain::new();
        // Each store once (a host's agents share one).
        let mut stores: Vec<Arc<dyn Store>> = Vec::new();
        for halt in &self.halts {
            if !stores.iter().any(|s| Arc::ptr_eq(s, &halt.store)) {
                stores.push(Arc::clone(&halt.store));
            }
        }
        let health = drain::health(&drain, stores.clone());
        // Answers go out whole: Nagle's algorithm would only hold back the last segment of
        // each (and stall pipelined requests behind delayed acknowledgements).
        let listener = self.listener.tap_io(|stream| {
            // A socket that refuses the option still works, only slower.
            let _ = stream.set_nodelay(true);
        });
        let (close, closed) = tokio::sync::oneshot::channel::<()>();
        let fronts = Fronts::new(self.app, health, self.published, Arc::clone(&drain));
        let served = axum::serve(listener, fronts).with_graceful_shutdown(async {
            let _ = closed.await;
        });
        let mut served = std::pin::pin!(served.into_future());
        if let Either::Left((result, _)) =
            future::select(&mut served, std::pin::pin!(shutdown)).await
        {
            return result.map_err(ServerError::from);
        }
        let began = Instant::now();
        drain.begin();
        for halt in &self.halts {
            halt.begin();
        }
        tracing::info!(
            timeout = ?self.drain_timeout,
            "shutting down: draining the requests and tasks under way"
        );
        let halts = &self.halts;
        // Each time the drain looks (at once, then every 20 ms): the durable tasks no caller
        // here reads are handed over (at once those none read as the drain began; a stream the
        // drain ends lets go of its task a moment later, a blocking call once it is answered),
        // then whether work only this process can finish is left.
        let busy = move || async move {
            for halt in halts {
                halt.hand_over().await;
            }
            halts.iter().any(Halt::busy)
        };
        let settled = std::pin::pin!(drain.settle(self.drain_timeout, busy));
        let drained = match future::select(settled, &mut served).await {
            Either::Left((drained, _)) => drained,
            Either::Right((result, _)) => return result.map_err(ServerError::from),
        };
        if !drained {
            tracing::warn!(
                timeout = ?self.drain_timeout,
                "the drain timeout passed with requests or tasks under way; stopping them"
            );
        }
        for halt in halts {
            halt.stop().await;
        }
        for store in &stores {
            if let Err(e) = store.release().await {
                tracing::warn!(error = %e.message, "the task store could not give up this process's tasks; another process takes them over once its lease runs out");
            }
        }
        let _ = close.send(());
        // The answers given: a moment to write them out, no more.
        let _ = tokio::time::timeout(Duration::from_secs(1), &mut served).await;
        tracing::info!(took = ?began.elapsed(), "shut down");
        Ok(())
    }
}
