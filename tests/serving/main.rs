//! The agents served in this process over every binding (JSON-RPC 1.0 and 0.3, HTTP+JSON,
//! gRPC, MCP, plain JSON) and called as a client would: the task lifecycle, streams and
//! questions, authentication and each caller's tasks and limits, extensions, tenants, several
//! agents on one listener, TLS and the typed client. One test binary, so the server stack links
//! once for all of them.

#[path = "../support/mod.rs"]
mod support;

/// The `concierge` example's agent.
use examples::concierge::agent as concierge;
/// The `count` example's agent.
use examples::count::agent as count;
/// The example agents, as their `main.rs` serve them.
use examples::{fight_club, guarded_judge, trip_planner};

mod agent_work;
mod auth;
mod callers;
mod console;
mod decoders;
mod e2e;
mod exact_data;
mod extensions;
mod grpc;
mod hosting;
mod idempotency;
mod lifecycle;
mod mcp;
mod model_loop;
mod plain_json;
mod tenants;
mod testing_kit;
mod tls;
mod typed_client;
