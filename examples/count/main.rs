//! The counting agent: a skill that streams as many chunks as the message's text says, served
//! on 127.0.0.1 (JSON-RPC, HTTP+JSON, gRPC). `scripts/bench-peers.sh` streams it against the
//! same agent on another framework.
//!
//! ```text
//! cargo run --example count -- --port 9000 --tasks memory
//! curl -sN http://127.0.0.1:9000/ -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
//!   -d '{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"3"}]}}}'
//! ```

use std::process::ExitCode;

use examples::cli;
use examples::count::agent;

use a2a_card::server::store::Tasks;
use a2a_card::server::{Listening, Server};

/// The allocator: mimalloc returns to the system what a long stream freed (glibc's malloc
/// keeps most of it in its threads' arenas; book/src/performance.md#memory).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cli::run::<agent::Counter>("count", 8080, server, banner)
}

/// The example's server, keeping tasks in `tasks`.
fn server(tasks: Tasks) -> Server<agent::Counter> {
    Server::new(agent::Counter).grpc(true).tasks(tasks)
}

/// Where the agent is, and a `curl` line that streams three chunks.
fn banner(listening: &Listening) -> String {
    let base = format!("http://{}", listening.local_addr());
    format!(
        "Counting agent listening on {base}\n\
         card: {base}/.well-known/agent-card.json\n\
         \n\
         Stream three chunks:\n\
         curl -sN {url} -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \\\n  \
         -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendStreamingMessage\",\"params\":{{\"message\":{{\"messageId\":\"m1\",\"role\":\"ROLE_USER\",\"parts\":[{{\"text\":\"3\"}}]}}}}}}'\n",
        url = listening.url(),
    )
}
