//! The agents against the official SDKs and real clients, each run as a process: the A2A
//! Python and JS SDKs' clients and card parsers, the Python gRPC client, a 0.3-only agent of the
//! Python SDK, the MCP SDKs' clients, and Chromium driving the form page (the model's tests,
//! which load the machine, are a binary of their own: `tests/model`). Each skips with its
//! reason when its runtime is absent, unless CI's switch says it must run.

#[path = "../support/mod.rs"]
mod support;

/// The example agents, as their `main.rs` serve them.
use examples::{fight_club, guarded_judge, trip_planner};

mod conformance;
mod console_ui;
mod form_ui;
mod mcp_sdks;
mod remote_0_3;
mod sdk_clients;
mod sdk_grpc;
mod sign_interop;
