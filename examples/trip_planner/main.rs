//! The trip planner: an agent whose skills stream, report progress, ask for input, take and
//! return files, and can be cancelled; deterministic (no model, no network), on 127.0.0.1.
//!
//! ```text
//! cargo run --example trip_planner                     # serve on port $PORT, else 8081
//! cargo run --example trip_planner -- --port 0         # any free port
//! cargo run --example trip_planner -- --mcp-stdio      # serve MCP over stdin/stdout (desktop hosts)
//! cargo run --example trip_planner -- --print-card     # print the card (A2A 1.0) and exit
//! ```

use std::process::ExitCode;

use examples::cli;
use examples::trip_planner::{agent, server};

/// The allocator: mimalloc returns to the system what a long stream freed (glibc's malloc
/// keeps most of it in its threads' arenas; book/src/performance.md#memory).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cli::run::<agent::TripPlanner>(
        "trip_planner",
        server::DEFAULT_PORT,
        server::example,
        server::banner,
    )
}
