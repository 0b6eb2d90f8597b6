//! The agents against the official SDKs and real clients, each run as a process: the A2A
//! Python and JS SDKs' clients and card parsers, the Python gRPC client, a 0.3-only agent of the
//! Python SDK, the MCP SDKs' clients, Chromium driving the form page, and a real model served by
//! llama.cpp. Each skips with its reason when its runtime is absent, unless CI's switch says it
//! must run.

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

/// The `model_agent` example's files, as its `main.rs` declares them.
#[allow(dead_code)]
#[path = "../../examples/model_agent"]
mod model_agent {
    pub mod agent;
    /// The fight club's agent, which the model agent calls (its `main.rs` includes it).
    pub use super::fight_club::agent as fight;
}

#[path = "../support/model_server.rs"]
mod model_server;

/// The `trip_planner` example's files, as its `main.rs` declares them.
#[allow(dead_code)]
#[path = "../../examples/trip_planner"]
mod trip_planner {
    pub mod agent;
    pub mod server;
}

mod conformance;
mod form_ui;
mod mcp_sdks;
mod model;
mod remote_0_3;
mod sdk_clients;
mod sdk_grpc;
mod sign_interop;
