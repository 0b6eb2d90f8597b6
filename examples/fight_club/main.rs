//! The fight-comparison agent of the input/output schemas extension, served on the official
//! A2A server: JSON-RPC (1.0, and 0.3 translated), HTTP+JSON, the card and the AG-UI
//! capabilities, on 127.0.0.1.
//!
//! ```text
//! cargo run --example fight_club                       # serve on port $PORT, else 8080
//! cargo run --example fight_club -- --port 9000        # serve on port 9000 (0: any free port)
//! cargo run --example fight_club -- --mcp-stdio      # serve MCP over stdin/stdout (desktop hosts)
//! cargo run --example fight_club -- --print-card       # print the card (A2A 1.0) and exit
//! cargo run --example fight_club -- --print-card compat  # or v0.3
//! ```

use std::process::ExitCode;

use examples::cli;
use examples::fight_club::{agent, server};

/// The allocator: mimalloc returns to the system what a long stream freed (glibc's malloc
/// keeps most of it in its threads' arenas; book/src/performance.md#memory).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cli::run::<agent::FightClub>(
        "fight_club",
        server::DEFAULT_PORT,
        server::example,
        server::banner,
    )
}
