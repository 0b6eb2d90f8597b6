//! Durable tasks: what a real database costs.
//!
//! 1. **throughput**: blocking `SendMessage` of the fight example over HTTP under load (8
//!    keep-alive connections, pipelined), the same server with its tasks in memory, in a
//!    SQLite file, and in Postgres (a throwaway cluster under `target/`). Targets: SQLite and
//!    Postgres >= 0.5x the in-memory store (ratios of medians of interleaved rounds).
//! 2. **streams**: a skill that streams 10,000 text chunks, through `SendStreamingMessage`
//!    in-process (`Server::request_handler`), on each store: chunks per second, median of 3
//!    rounds, and the ratio to memory (chunks are logged, not written one by one: a store
//!    writes the task when its status changes or an artifact is complete).
//! 3. **steps** (`-- --steps`): a durable skill that runs k journaled steps (`ctx.step`; k = 0,
//!    1, 3, 10) beside the same skill not durable, on SQLite and on Postgres: the p50 and p99 of
//!    a blocking `SendMessage`'s latency alone (one connection) and under load (8 connections,
//!    each sending once answered), tasks/s and steps/s under load, and the ratio to the skill
//!    not durable. A step's result is one more row in the writer's group commit, stored before
//!    the handler goes on.
//!
//! Whether memory and the files on disk stay flat under load is measured as an operator sees
//! it, on the example agents' processes: `scripts/soak.sh`.
//!
//! ```text
//! cargo bench --bench stores                 # throughput
//! cargo bench --bench stores -- --only sqlite # one store beside the in-memory baseline
//! cargo bench --bench stores -- --steps      # durable steps' latency, on SQLite and Postgres
//! ```
//!
//! Under `cargo test --benches` each store answers a few requests, and nothing is timed.

use examples::fight_club::agent as fight_club;
#[path = "support/load.rs"]
mod load;
#[path = "../tests/support/postgres.rs"]
#[allow(dead_code)]
mod postgres;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use std::collections::HashMap;
use std::sync::Arc;

use a2a::{Message, Part, Role, SendMessageRequest, StreamResponse, TaskState};
use a2a_card::server::Server;
use a2a_card::server::store::Tasks;
use a2a_card::skill;
use a2a_server::RequestHandler;
use futures::{Stream, StreamExt};
use load::{Client, fight_request, rates, serve};
use tokio::runtime::Runtime;

const CONNECTIONS: usize = 8;
const ROUND: u64 = 3_000;
const ROUNDS: usize = 7;
/// Requests under load a round of the steps bench (a quarter of that alone), and its rounds.
const STEP_ROUND: u64 = 2_000;
const STEP_ROUNDS: usize = 5;

/// The fight example's server on each store, on a one-worker runtime: (name, address).
fn servers(with_postgres: bool) -> (Runtime, Vec<(&'static str, SocketAddr)>) {
    let runtime = load::server_runtime();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-stores");
    std::fs::create_dir_all(&dir).expect("a directory");
    let file = dir.join(format!("tasks-{}.db", std::process::id()));
    let addrs = runtime.block_on(async {
        let mut stores = vec![
            ("memory", Tasks::memory()),
            ("sqlite", Tasks::sqlite(&file)),
        ];
        if with_postgres {
            match postgres::database("bench").await {
                Ok(url) => stores.push(("postgres", Tasks::postgres(url))),
                Err(why) => eprintln!("no Postgres measurement: {why}"),
            }
        }
        let mut addrs = Vec::new();
        for (name, tasks) in stores {
            let app = Server::new(fight_club::FightClub)
                .tasks(tasks)
                .router()
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            addrs.push((name, serve(app).await));
        }
        addrs
    });
    (runtime, addrs)
}

fn throughput(only: Option<&str>) {
    let (_runtime, mut addrs) = servers(only.is_none_or(|o| o == "postgres"));
    if let Some(only) = only {
        addrs.retain(|(name, _)| *name == "memory" || *name == only);
    }
    let request = fight_request("");
    let mut clients: Vec<Client> = addrs
        .iter()
        .map(|(_, a)| Client::new(*a, CONNECTIONS, &request))
        .collect();
    let rates = rates(&mut clients, ROUND, ROUNDS);
    println!(
        "blocking SendMessage of the fight example, loopback, {CONNECTIONS} connections, median of {ROUNDS} rounds of {ROUND}:"
    );
    for ((name, _), rate) in addrs.iter().zip(&rates) {
        println!(
            "  {name:<9} {rate:>8.0} req/s  ({:.2}x memory)",
            rate / rates[0]
        );
    }
    println!("  targets: sqlite and postgres >= 0.5x");
}

/// The steps a durable task of the steps bench runs, beside none.
const STEP_COUNTS: [usize; 4] = [0, 1, 3, 10];

/// The number of steps a message's text asks for.
fn steps_of(text: &str) -> Result<usize, a2a_card::SkillError> {
    text.trim()
        .parse()
        .map_err(|_| a2a_card::SkillError::Input(format!("`{text}` is not a number of steps")))
}

/// A durable skill that runs as many journaled steps as its text says.
struct Stepper;

/// Runs journaled steps.
#[a2a_card::agent(url = "http://127.0.0.1:1")]
impl Stepper {
    /// Runs `k` journaled steps (`k` given as the message's text) and answers their sum.
    #[skill(durable)]
    async fn stepped(
        &self,
        text: String,
        ctx: a2a_card::SkillContext,
    ) -> Result<String, a2a_card::SkillError> {
        let k = steps_of(&text)?;
        let mut sum = 0;
        for i in 0..k {
            sum += ctx.step(&format!("step {i}"), async move { i }).await?;
        }
        Ok(format!("{k} steps: {sum}"))
    }
}

/// The same skill, not durable: its steps are plain code.
struct Plain;

/// Runs steps.
#[a2a_card::agent(url = "http://127.0.0.1:1")]
impl Plain {
    /// Runs `k` steps (`k` given as the message's text) and answers their sum.
    #[skill]
    async fn plain(&self, text: String) -> Result<String, a2a_card::SkillError> {
        let k = steps_of(&text)?;
        Ok(format!("{k} steps: {}", (0..k).sum::<usize>()))
    }
}

/// A text `SendMessage`, as a whole HTTP/1.1 JSON-RPC request to `/`.
fn text_request(text: &str) -> Vec<u8> {
    load::send_message(
        serde_json::json!({"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}),
        "",
    )
}

/// One case of the steps bench: a client of one server sending one request, and what its
/// rounds measured.
struct StepCase {
    name: String,
    steps: usize,
    alone: Client,
    loaded: Client,
    alone_took: Vec<Duration>,
    loaded_took: Vec<Duration>,
    loaded_rates: Vec<f64>,
}

/// The latency of a durable task with 0, 1, 3 and 10 journaled steps beside the same skill not
/// durable, on SQLite and on Postgres (when it can run here): blocking `SendMessage` sent alone
/// (one connection, each request once the one before is answered) and under load
/// ([`CONNECTIONS`] connections doing the same), `round` requests a round, the cases
/// interleaved.
fn steps(round: u64, rounds: usize, with_postgres: bool) {
    let runtime = load::server_runtime();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-stores");
    std::fs::create_dir_all(&dir).expect("a directory");
    let file = |name: &str| dir.join(format!("{name}-{}.db", std::process::id()));
    let stores = runtime.block_on(async {
        let mut stores = vec![(
            "SQLite",
            Tasks::sqlite(file("plain")),
            Tasks::sqlite(file("stepped")),
        )];
        if with_postgres {
            match (
                postgres::database("bench_plain").await,
                postgres::database("bench_stepped").await,
            ) {
                (Ok(plain), Ok(stepped)) => {
                    stores.push(("Postgres", Tasks::postgres(plain), Tasks::postgres(stepped)))
                }
                (Err(why), _) | (_, Err(why)) => eprintln!("no Postgres measurement: {why}"),
            }
        }
        let mut served = Vec::new();
        for (name, plain, stepped) in stores {
            let plain = Server::new(Plain).tasks(plain).router().await;
            let stepped = Server::new(Stepper).tasks(stepped).router().await;
            let plain = serve(plain.expect("the plain agent")).await;
            let stepped = serve(stepped.expect("the stepped agent")).await;
            served.push((name, plain, stepped));
        }
        served
    });
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for (store, plain, stepped) in stores {
        let case = |name: String, addr: SocketAddr, steps: usize| {
            let request = text_request(&steps.to_string());
            StepCase {
                name,
                steps,
                alone: Client::new(addr, 1, &request),
                loaded: Client::new(addr, CONNECTIONS, &request),
                alone_took: Vec::new(),
                loaded_took: Vec::new(),
                loaded_rates: Vec::new(),
            }
        };
        let mut cases = vec![case("not durable".into(), plain, 0)];
        cases.extend(STEP_COUNTS.iter().map(|&k| {
            let name = match k {
                1 => "durable, 1 step".to_string(),
                k => format!("durable, {k} steps"),
            };
            case(name, stepped, k)
        }));
        for case in &mut cases {
            case.alone.latencies(round / 8);
            case.loaded.latencies(round / 4);
        }
        for r in 0..rounds {
            let mut order: Vec<usize> = (0..cases.len()).collect();
            if r % 2 == 1 {
                order.reverse();
            }
            for i in order {
                let case = &mut cases[i];
                case.alone_took.extend(case.alone.latencies(round / 4).0);
                let (took, elapsed) = case.loaded.latencies(round);
                case.loaded_took.extend(took);
                case.loaded_rates.push(round as f64 / elapsed.as_secs_f64());
            }
        }
        println!(
            "durable steps on {store}: blocking SendMessage alone (1 connection) and under load ({CONNECTIONS} connections), each request once the one before is answered; {rounds} interleaved rounds of {} and {round}:",
            round / 4
        );
        println!(
            "  {:<20} {:>9} {:>9}  {:>9} {:>9} {:>9} {:>9} {:>8}",
            "skill", "alone p50", "p99", "load p50", "p99", "tasks/s", "steps/s", "tasks/s"
        );
        let base = load::median(cases[0].loaded_rates.clone());
        for case in &mut cases {
            case.alone_took.sort();
            case.loaded_took.sort();
            let rate = load::median(case.loaded_rates.clone());
            println!(
                "  {:<20} {:>6.2} ms {:>6.2} ms  {:>6.2} ms {:>6.2} ms {:>9.0} {:>9.0} {:>7.2}x",
                case.name,
                ms(load::quantile(&case.alone_took, 0.5)),
                ms(load::quantile(&case.alone_took, 0.99)),
                ms(load::quantile(&case.loaded_took, 0.5)),
                ms(load::quantile(&case.loaded_took, 0.99)),
                rate,
                rate * case.steps as f64,
                rate / base,
            );
        }
    }
}

/// Chunks per streamed task.
const CHUNKS: usize = 10_000;

/// Streams as many chunks as its text says.
struct Streamer;

/// Streams numbered chunks.
#[a2a_card::agent(url = "http://127.0.0.1:1")]
impl Streamer {
    /// Streams `n` chunks of text, `n` given as the message's text.
    #[skill]
    fn chunks(&self, n: String) -> impl Stream<Item = String> + Send {
        let n: usize = n.trim().parse().unwrap_or(0);
        futures::stream::iter((0..n).map(|i| format!("chunk {i}")))
    }
}

/// The streaming agent's request handler on each store: (name, handler).
async fn stream_handlers(with_postgres: bool) -> Vec<(&'static str, Arc<dyn RequestHandler>)> {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-stores");
    std::fs::create_dir_all(&dir).expect("a directory");
    let file = dir.join(format!("streams-{}.db", std::process::id()));
    let mut stores = vec![
        ("memory", Tasks::memory()),
        ("sqlite", Tasks::sqlite(&file)),
    ];
    if with_postgres {
        match postgres::database("bench_streams").await {
            Ok(url) => stores.push(("postgres", Tasks::postgres(url))),
            Err(why) => eprintln!("no Postgres measurement: {why}"),
        }
    }
    let mut handlers = Vec::new();
    for (name, tasks) in stores {
        let handler = Server::new(Streamer)
            .tasks(tasks)
            .request_handler()
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        handlers.push((name, handler));
    }
    handlers
}

/// Streams one task of `n` chunks; the time it took, checking that every chunk came.
async fn stream_once(handler: &dyn RequestHandler, n: usize) -> Duration {
    let request = SendMessageRequest {
        message: Message::new(Role::User, vec![Part::text(n.to_string())]),
        configuration: None,
        metadata: None,
        tenant: None,
    };
    let start = Instant::now();
    let mut events = handler
        .send_streaming_message(&HashMap::new(), request)
        .await
        .expect("a stream");
    let (mut chunks, mut done) = (0, false);
    while let Some(event) = events.next().await {
        match event.expect("an event") {
            StreamResponse::ArtifactUpdate(u) if u.last_chunk != Some(true) => chunks += 1,
            StreamResponse::StatusUpdate(u) => done |= u.status.state == TaskState::Completed,
            _ => {}
        }
    }
    assert!(
        done && chunks == n,
        "{chunks} of {n} chunks, completed: {done}"
    );
    start.elapsed()
}

fn streams(n: usize, rounds: usize) {
    let runtime = load::server_runtime();
    runtime.block_on(async {
        let handlers = stream_handlers(true).await;
        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); handlers.len()];
        for _ in 0..rounds {
            for (i, (_, handler)) in handlers.iter().enumerate() {
                let took = stream_once(&**handler, n).await;
                rates[i].push(n as f64 / took.as_secs_f64());
            }
        }
        let rates: Vec<f64> = rates.into_iter().map(load::median).collect();
        println!("streams: {n} chunks per task, in-process, median of {rounds} rounds:");
        for ((name, _), rate) in handlers.iter().zip(&rates) {
            println!(
                "  {name:<9} {rate:>10.0} chunks/s  ({:.2}x memory)",
                rate / rates[0]
            );
        }
    });
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        // Smoke: every store answers.
        let (_runtime, addrs) = servers(std::env::var_os("A2A_REQUIRE_POSTGRES").is_some());
        for (_, a) in addrs {
            Client::new(a, 2, &fight_request("")).run(4);
        }
        streams(20, 1);
        steps(8, 1, std::env::var_os("A2A_REQUIRE_POSTGRES").is_some());
        return;
    }
    if args.iter().any(|a| a == "--steps") {
        steps(STEP_ROUND, STEP_ROUNDS, true);
        return;
    }
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1));
    throughput(only.map(String::as_str));
    if only.is_none() {
        streams(CHUNKS, 3);
    }
}
