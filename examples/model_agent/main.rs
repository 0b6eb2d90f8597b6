//! An agent that wraps a language model (the `rig` feature), served on every binding and MCP:
//! `ask` streams the model's answer token by token; `fight-question` lets the model call the
//! Fight Club agent's `fight-comparison` skill through its typed tool.
//!
//! It talks to any OpenAI-compatible endpoint, configured as rig users configure one. Against a
//! local server (here llama-cpp-python's, serving SmolLM2-135M-Instruct):
//!
//! ```text
//! python -m llama_cpp.server --model SmolLM2-135M-Instruct.Q4_1.gguf --port 18080 --model_alias smollm2 &
//! cargo run --example fight_club &                     # the fight-question skill's tool
//! OPENAI_BASE_URL=http://127.0.0.1:18080/v1 OPENAI_MODEL=smollm2 \
//!   cargo run --example model_agent                    # serve on port $PORT, else 8082
//! cargo run --example model_agent -- --print-card      # print the card and exit
//! ```

use std::process::ExitCode;

use a2a_card::server::store::Tasks;
use a2a_card::server::{Listening, Server};

use examples::cli;
use examples::model_agent::agent::ModelAgent;

/// The port when neither `--port` nor `PORT` gives one.
const DEFAULT_PORT: u16 = 8082;

/// The agent, on every binding, with its tasks in `tasks`.
fn example(tasks: Tasks) -> Server<ModelAgent> {
    Server::new(ModelAgent::from_env())
        .grpc(true)
        .mcp(true)
        .tasks(tasks)
}

fn banner(listening: &Listening) -> String {
    let base = format!("http://{}", listening.local_addr());
    format!(
        "Model agent listening on {base}\n\
         card:          {base}/.well-known/agent-card.json\n\
         A2A endpoint:  {url} (JSON-RPC; HTTP+JSON under it; gRPC over HTTP/2)\n\
         MCP endpoint:  {base}/mcp\n\
         \n\
         Ask it something, streamed:\n\
         cargo run -p a2a-card --features cli -- call {base} --skill ask --text 'What is the capital of France?' --stream\n",
        url = listening.url(),
    )
}

/// The allocator: mimalloc returns to the system what a long stream freed (glibc's malloc
/// keeps most of it in its threads' arenas; book/src/performance.md#memory).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cli::run::<ModelAgent>("model_agent", DEFAULT_PORT, example, banner)
}
