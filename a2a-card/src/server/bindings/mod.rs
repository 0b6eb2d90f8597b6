//! The bindings: each turns its wire's requests into one call of the lifecycle and the call's
//! answer into its wire's response. JSON-RPC (1.0 and 0.3) and HTTP+JSON ([`http`]), gRPC
//! (`grpc`), MCP (`mcp`), callers in the same process (the official request handler trait),
//! and the form page (`ui`). Each calls the lifecycle's one way in,
//! [`Lifecycle::call`](crate::server::Lifecycle::call), which records the A2A bindings' calls
//! once.

#[cfg(feature = "grpc")]
pub(crate) mod grpc;
pub(crate) mod http;
mod in_process;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "ui")]
pub(crate) mod ui;
