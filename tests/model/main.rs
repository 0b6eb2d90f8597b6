//! An agent that wraps a real language model (SmolLM2-135M served by llama.cpp's
//! OpenAI-compatible server), on every binding and MCP: a binary of its own, so that the
//! model's load on the machine does not run beside the other suites' timed checks. Skips with
//! its reason when the model server is absent, unless `A2A_REQUIRE_MODEL` is set (CI sets it).

#[path = "../support/mod.rs"]
mod support;

/// The example agents, as their `main.rs` serve them.
use examples::{concierge::agent as concierge, fight_club, model_agent, trip_planner};

#[path = "../support/model_server.rs"]
mod model_server;

mod model;
mod tools;
