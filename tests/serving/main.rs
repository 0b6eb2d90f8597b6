//! The agents served in this process over every binding (JSON-RPC 1.0 and 0.3, HTTP+JSON,
//! gRPC, MCP, plain JSON) and called as a client would: the task lifecycle, streams and
//! questions, authentication and each caller's tasks and limits, extensions, tenants, several
//! agents on one listener, TLS and the typed client. One test binary, so the server stack links
//! once for all of them.

#[path = "../support/mod.rs"]
mod support;

/// The `fight_club` example's files, as its `main.rs` declares them.
#[allow(dead_code)]
#[path = "../../examples/fight_club"]
mod fight_club {
    pub mod agent;
    pub mod server;
}

/// The `guarded_judge` example's files, as its `main.rs` declares them.
#[allow(dead_code)]
#[path = "../../examples/guarded_judge"]
mod guarded_judge {
    pub mod agent;
}

/// The `trip_planner` example's files, as its `main.rs` declares them.
#[allow(dead_code)]
#[path = "../../examples/trip_planner"]
mod trip_planner {
    pub mod agent;
    pub mod server;
}

/// The `count` example's agent.
#[path = "../../examples/count/agent.rs"]
mod count;

mod agent_work;
mod auth;
mod callers;
mod e2e;
mod exact_data;
mod extensions;
mod grpc;
mod hosting;
mod idempotency;
mod lifecycle;
mod mcp;
mod plain_json;
mod tenants;
mod tls;
mod typed_client;
