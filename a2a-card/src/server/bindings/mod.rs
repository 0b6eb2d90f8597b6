//! The bindings: each turns its wire's requests into one call of the lifecycle and the call's
//! answer into its wire's response. JSON-RPC (1.0 and 0.3) and HTTP+JSON ([`http`]), gRPC
//! (`grpc`), MCP (`mcp`), and the form page (`ui`).

#[cfg(feature = "grpc")]
pub(crate) mod grpc;
pub(crate) mod http;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "ui")]
pub(crate) mod ui;

mod observed;

pub(crate) use observed::Observed;
