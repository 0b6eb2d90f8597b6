//! Why the agent cannot be served: the one error of building and binding a server.

use std::fmt;

use super::auth::SecurityConfigError;
use super::store::StoreError;
use crate::builder::BuildError;
use crate::dispatch::SchemaCompileError;

/// Why the agent cannot be served.
#[derive(Debug)]
#[non_exhaustive]
pub enum ServerError {
    /// The agent's card could not be built (a URL from the environment that is not valid, say).
    Card(BuildError),
    /// The card as it would be served (with the served URL put in, and signed) has errors: a
    /// plain-http [`Server::public_url`](crate::server::Server::public_url) to a host that is not loopback, say. Nothing is served.
    Served(BuildError),
    /// A named schema of the agent does not compile into a validator.
    Schema(SchemaCompileError),
    /// The URL to serve at cannot be mounted.
    Url {
        /// The URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// Binding or serving failed.
    Io(std::io::Error),
    /// The task store cannot be opened (see [`Server::tasks`](crate::server::Server::tasks)).
    Store(StoreError),
    /// The card could not be signed (see [`Server::sign_with`](crate::server::Server::sign_with)).
    #[cfg(feature = "sign")]
    Sign(crate::sign::SignError),
    /// The security the card declares cannot be enforced as configured (see
    /// [`Server::authentication`](crate::server::Server::authentication)).
    Security(SecurityConfigError),
    /// The push-notification client cannot be built as configured (see [`Server::webhooks`](crate::server::Server::webhooks)):
    /// root certificates that are not PEM, say.
    Webhooks(String),
    /// The agent's MCP face cannot be built or served (see [`Server::mcp`](crate::server::Server::mcp)).
    #[cfg(feature = "mcp")]
    Mcp(String),
    /// The tenant given to [`Server::tenant`](crate::server::Server::tenant) is not one.
    Tenant(String),
    /// The agents given to a [`Host`](crate::server::Host) cannot be mounted together: two at
    /// one path, a path that is not one, two serving gRPC, say.
    Host(String),
    /// The [limits](crate::server::Limits) given to [`Server::limits`](crate::server::Server::limits)
    /// name a skill the agent does not have.
    Limits(String),
    /// The [console](crate::server::Console) given to
    /// [`Server::console`](crate::server::Server::console) cannot be served as asked: it
    /// allows nobody, or allows a scope or role the server cannot check.
    #[cfg(feature = "console")]
    Console(String),
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerError::Card(e) => write!(f, "the agent's card cannot be built: {e}"),
            ServerError::Served(e) => write!(f, "the agent's card cannot be served: {e}"),
            ServerError::Schema(e) => write!(f, "{e}"),
            ServerError::Url { url, reason } => {
                write!(f, "the agent cannot be served at `{url}`: {reason}")
            }
            ServerError::Io(e) => write!(f, "{e}"),
            ServerError::Store(e) => write!(f, "{e}"),
            #[cfg(feature = "sign")]
            ServerError::Sign(e) => write!(f, "{e}"),
            ServerError::Security(e) => write!(f, "{e}"),
            ServerError::Webhooks(reason) => f.write_str(reason),
            #[cfg(feature = "mcp")]
            ServerError::Mcp(reason) => write!(f, "the agent cannot be served over MCP: {reason}"),
            ServerError::Tenant(reason) => f.write_str(reason),
            ServerError::Host(reason) => {
                write!(f, "the agents cannot be hosted together: {reason}")
            }
            ServerError::Limits(reason) => write!(f, "the limits cannot be kept: {reason}"),
            #[cfg(feature = "console")]
            ServerError::Console(reason) => write!(f, "the console cannot be served: {reason}"),
        }
    }
}

impl std::error::Error for ServerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServerError::Card(e) | ServerError::Served(e) => Some(e),
            ServerError::Schema(e) => Some(e),
            ServerError::Io(e) => Some(e),
            ServerError::Store(e) => Some(e),
            ServerError::Url { .. }
            | ServerError::Webhooks(_)
            | ServerError::Tenant(_)
            | ServerError::Host(_)
            | ServerError::Limits(_) => None,
            #[cfg(feature = "mcp")]
            ServerError::Mcp(_) => None,
            #[cfg(feature = "console")]
            ServerError::Console(_) => None,
            #[cfg(feature = "sign")]
            ServerError::Sign(e) => Some(e),
            ServerError::Security(e) => Some(e),
        }
    }
}

impl From<std::io::Error> for ServerError {
    fn from(e: std::io::Error) -> Self {
        ServerError::Io(e)
    }
}
