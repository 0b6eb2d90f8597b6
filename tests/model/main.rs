//! An agent that wraps a real language model (SmolLM2-135M served by llama.cpp's
//! OpenAI-compatible server), on every binding and MCP: a binary of its own, so that the
//! model's load on the machine does not run beside the other suites' timed checks. Skips with
//! its reason when the model server is absent, unless `A2A_REQUIRE_MODEL` is set (CI sets it).

#[path = "../support/mod.rs"]
mod support;

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
}

/// The `fight_club` example's files, as its `main.rs` declares them.
#[allow(dead_code)]
#[path = "../../examples/fight_club"]
mod fight_club {
    pub mod agent;
}

mod model;
