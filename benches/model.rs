//! A model's answer through A2A against the same model called directly with rig, in one run:
//! tokens per second received and time to first token, on a real model (SmolLM2-135M-Instruct
//! on llama-cpp-python's server, greedy decoding; see `tests/support/model_server.rs`).
//!
//! ```text
//! cargo bench --bench model                  # 10 rounds of each, alternating
//! MODEL_BENCH_ROUNDS=20 cargo bench --bench model
//! ```
//!
//! Each round asks the same question for the same number of tokens (greedy: the same answer),
//! once straight from rig (`TextDeltas` over the model's stream) and once through the model
//! agent's `ask` skill, served on loopback and followed by `a2a_card::client` over JSON-RPC
//! (SSE), every delta a chunk of the task's artifact. The order alternates between rounds.
//! Printed: the median time to first token, the median rate of tokens after the first, and the
//! ratio and difference of the two paths; the bench says whether the agent stays within 0.95x
//! of the direct rate and 5 ms of its first token.

use examples::model_agent::agent;
#[path = "../tests/support/model_server.rs"]
mod model_server;

use std::time::{Duration, Instant};

use a2a_card::client::{Event, Payload, RemoteAgent};
use a2a_card::rig::TextDeltas;
use a2a_card::rig::rig_core::providers::openai::OpenAIConfig;
use a2a_card::server::Server;
use agent::ModelAgent;
use futures::StreamExt;

/// The question: its greedy answer runs past the token limit, so every round streams as many.
const QUESTION: &str =
    "Write a very long story about a dragon who learns to read. Make it at least 2000 words.";
/// The tokens of each answer.
const TOKENS: u64 = 128;

/// One answer as a client received it.
struct Received {
    /// From the request to the first token.
    first: Duration,
    /// From the request to the last token.
    last: Duration,
    /// The tokens (deltas, or chunks).
    tokens: usize,
}

impl Received {
    /// Tokens per second after the first (the streaming rate).
    fn rate(&self) -> f64 {
        (self.tokens.saturating_sub(1)) as f64 / (self.last - self.first).as_secs_f64()
    }
}

fn agent_on(base: &str) -> ModelAgent {
    ModelAgent {
        model: OpenAIConfig::new("")
            .with_base_url(format!("{base}/v1"))
            .client()
            .chat(model_server::MODEL),
        max_tokens: TOKENS,
        fight_club: "http://127.0.0.1:1".to_owned(),
    }
}

async fn direct(agent: &ModelAgent) -> Received {
    let started = Instant::now();
    let mut deltas = TextDeltas::new(agent.model.stream(agent.request(QUESTION.to_owned())));
    let (mut first, mut last, mut tokens) = (None, Duration::ZERO, 0);
    while let Some(delta) = deltas.next().await {
        if let Err(e) = delta {
            panic!("the model failed: {e}");
        }
        tokens += 1;
        last = started.elapsed();
        first.get_or_insert(last);
    }
    Received {
        first: first.unwrap_or(last),
        last,
        tokens,
    }
}

async fn through_a2a(remote: &RemoteAgent) -> Received {
    let started = Instant::now();
    let mut run = match remote.stream("ask", Payload::text(QUESTION)).await {
        Ok(run) => run,
        Err(e) => panic!("the agent refused: {e}"),
    };
    let (mut first, mut last, mut tokens) = (None, Duration::ZERO, 0);
    while let Some(event) = run.next().await {
        match event {
            Ok(Event::Output(_)) => {
                tokens += 1;
                last = started.elapsed();
                first.get_or_insert(last);
            }
            Ok(Event::Finished { state, text }) => {
                assert_eq!(state, a2a::TaskState::Completed, "{text:?}");
            }
            Ok(_) => {}
            Err(e) => panic!("the stream failed: {e}"),
        }
    }
    Received {
        first: first.unwrap_or(last),
        last,
        tokens,
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this with no such flag: then
    // there is nothing to measure.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let Some(server) = model_server::model_server() else {
        return;
    };
    let rounds: usize = std::env::var("MODEL_BENCH_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => panic!("no runtime: {e}"),
    };
    runtime.block_on(async {
        let listening = match Server::new(agent_on(&server.base))
            .bind("127.0.0.1:0")
            .await
        {
            Ok(listening) => listening,
            Err(e) => panic!("cannot bind: {e}"),
        };
        let base = format!("http://{}", listening.local_addr());
        tokio::spawn(listening.serve());
        let remote = match RemoteAgent::discover(base.as_str()).await {
            Ok(remote) => remote,
            Err(e) => panic!("cannot read the card: {e}"),
        };
        let model = agent_on(&server.base);
        // One of each to warm both paths (connections, the model's cache).
        direct(&model).await;
        through_a2a(&remote).await;
        let (mut straight, mut agent) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            if round % 2 == 0 {
                straight.push(direct(&model).await);
                agent.push(through_a2a(&remote).await);
            } else {
                agent.push(through_a2a(&remote).await);
                straight.push(direct(&model).await);
            }
        }
        for (name, runs) in [("direct", &straight), ("A2A", &agent)] {
            let tokens: Vec<usize> = runs.iter().map(|r| r.tokens).collect();
            assert!(
                tokens.iter().all(|&t| t == tokens[0]),
                "{name}: every answer the same length: {tokens:?}"
            );
        }
        let ttft = |runs: &[Received]| median(runs.iter().map(|r| r.first.as_secs_f64() * 1e3).collect());
        let rate = |runs: &[Received]| median(runs.iter().map(Received::rate).collect());
        let differences: Vec<f64> = straight
            .iter()
            .zip(&agent)
            .map(|(d, a)| (a.first.as_secs_f64() - d.first.as_secs_f64()) * 1e3)
            .collect();
        let (direct_rate, agent_rate) = (rate(&straight), rate(&agent));
        let ttft_difference = median(differences);
        println!(
            "{rounds} rounds of {} tokens each (SmolLM2-135M-Instruct Q4_1, llama-cpp-python, greedy)\n",
            straight[0].tokens
        );
        println!("| path | time to first token (median) | tokens/s after the first (median) |");
        println!("|---|---|---|");
        println!("| rig, direct | {:.1} ms | {direct_rate:.1} |", ttft(&straight));
        println!("| A2A (JSON-RPC SSE, a2a_card::client) | {:.1} ms | {agent_rate:.1} |", ttft(&agent));
        println!();
        let ratio = agent_rate / direct_rate;
        println!(
            "tokens/s through A2A / direct: {ratio:.3} ({})",
            if ratio >= 0.95 { "within 0.95x" } else { "below 0.95x" }
        );
        println!(
            "time to first token, A2A minus direct, median of the rounds: {ttft_difference:.2} ms ({})",
            if ttft_difference < 5.0 { "under 5 ms" } else { "5 ms or more" }
        );
    });
}
