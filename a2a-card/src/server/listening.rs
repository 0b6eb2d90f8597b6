//! A server bound to its listener, ready to serve.

use std::fmt;
use std::future::Future;
use std::net::SocketAddr;

use axum::serve::ListenerExt;
use tokio::net::TcpListener;

use super::ServerError;
use super::interfaces::Endpoint;
use crate::card::AgentCard;

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
    pub(super) listener: TcpListener,
    pub(super) local_addr: SocketAddr,
    pub(super) app: axum::Router,
    pub(super) card: AgentCard,
    pub(super) endpoint: Endpoint,
    /// Every agent's card, where a [`Host`](super::Host) serves several (else the one).
    pub(super) cards: Vec<AgentCard>,
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

    /// The card as served (a [`Host`](super::Host)'s default agent's).
    pub fn card(&self) -> &AgentCard {
        &self.card
    }

    /// Every card served on the listener: the one agent's, or those of the agents a
    /// [`Host`](super::Host) serves, in the order they were mounted.
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

    /// Serves until the process ends.
    pub async fn serve(self) -> Result<(), ServerError> {
        self.serve_with_shutdown(std::future::pending()).await
    }

    /// Serves until `shutdown` completes, then finishes the requests under way.
    pub async fn serve_with_shutdown<F>(self, shutdown: F) -> Result<(), ServerError>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        // Answers go out whole: Nagle's algorithm would only hold back the last segment of
        // each (and stall pipelined requests behind delayed acknowledgements).
        let listener = self.listener.tap_io(|stream| {
            // A socket that refuses the option still works, only slower.
            let _ = stream.set_nodelay(true);
        });
        // Each request knows its connection's peer (the limits count anonymous callers by it).
        let app = self.app.into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(listener, app)
            .with_graceful_shutdown(shutdown)
            .await?;
        Ok(())
    }
}
