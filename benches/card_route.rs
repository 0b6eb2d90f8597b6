//! Card route throughput on loopback, three servers in one run:
//!
//! 1. `ours`: `GET /.well-known/agent-card.json` (with `A2A-Version: 1.0`) of the fight_club
//!    agent's full router (`a2a_card::server`): the 1.0 card, serialised once at start, with its
//!    headers (ETag, Cache-Control, Vary, CORS).
//! 2. `official`: the official server's `agent_card_router` over a `StaticAgentCard` of the same
//!    card (its schemas in the extension's `params`, since the official card type has no root
//!    `schemas` key), which clones and serialises the card on every request.
//! 3. `fixed`: an axum route answering the same bytes as `ours`, with only a content type: the
//!    floor of what any route costs on this stack (hyper, axum's router, the loopback socket).
//!
//! Targets: `ours` >= 3x `official`, and >= 0.9x `fixed` (requests per second).
//!
//! The servers run on a one-worker runtime; the client, on the bench thread, keeps
//! [`CONNECTIONS`] keep-alive connections busy with pipelined batches of [`BATCH`] requests
//! and reads the answers by their `Content-Length`, so that it does as little per request as a
//! client can. Criterion times each route; then the ratios are measured head to head in
//! interleaved rounds (ours, official, fixed, fixed, official, ours, ...) of [`ROUND`]
//! requests, and printed from the medians:
//!
//! ```text
//! cargo bench --bench card_route
//! ```
//!
//! Under `cargo test --benches` each route answers once, as a smoke test, and nothing is timed.

#[path = "../examples/fight_club/agent.rs"]
#[allow(dead_code)]
mod fight_club;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_card::server::a2a_server::agent_card::{StaticAgentCard, agent_card_router};
use a2a_card::server::axum;
use a2a_card::server::axum::serve::ListenerExt;
use a2a_card::server::{AGENT_CARD_PATH, Server};
use a2a_card::wire::{Profile, RenderOptions, SchemaPlacement};
use a2a_card::{Agent, server::a2a};
use criterion::{Criterion, Throughput};
use fight_club::FightClub;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

/// Keep-alive connections of the client.
const CONNECTIONS: usize = 8;
/// Requests written at once on a connection.
const BATCH: usize = 32;
/// Requests per timed round of the ratio measurement.
const ROUND: u64 = 20_000;
/// Rounds per route of the ratio measurement.
const ROUNDS: usize = 9;

const REQUEST: &[u8] =
    b"GET /.well-known/agent-card.json HTTP/1.1\r\nhost: 127.0.0.1\r\na2a-version: 1.0\r\n\r\n";

/// The three servers, on their own runtime.
struct Servers {
    _runtime: Runtime,
    ours: SocketAddr,
    official: SocketAddr,
    fixed: SocketAddr,
    /// The sizes of the three answers' bodies.
    sizes: [usize; 3],
}

fn servers() -> Servers {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let card = FightClub::card().expect("the card builds");
    let v1 = serde_json::to_vec(&card.to_json(Profile::V1)).expect("JSON");
    let in_params = RenderOptions::new(Profile::V1).schemas(SchemaPlacement::ExtensionParams);
    let official_card: a2a::AgentCard =
        serde_json::from_value(card.to_json_with(&in_params)).expect("the official type reads v1");
    let official_size = serde_json::to_vec(&official_card).expect("JSON").len();
    let (ours, official, fixed) = runtime.block_on(async {
        let ours = Server::new(FightClub)
            .bind("127.0.0.1:0")
            .await
            .expect("bind");
        let ours_addr = ours.local_addr();
        tokio::spawn(ours.serve());

        let official = agent_card_router(Arc::new(StaticAgentCard::new(official_card)));
        let official_addr = spawn(official).await;

        let body = axum::body::Bytes::from(v1.clone());
        let fixed = axum::Router::new().route(
            AGENT_CARD_PATH,
            axum::routing::get(move || {
                let body = body.clone();
                async move { ([("content-type", "application/json")], body) }
            }),
        );
        let fixed_addr = spawn(fixed).await;
        (ours_addr, official_addr, fixed_addr)
    });
    Servers {
        _runtime: runtime,
        ours,
        official,
        fixed,
        sizes: [v1.len(), official_size, v1.len()],
    }
}

async fn spawn(app: axum::Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("an address");
    // As `a2a_card::server` does: no Nagle delay on the answers.
    let listener = listener.tap_io(|stream| {
        let _ = stream.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// One keep-alive connection that sends pipelined requests and counts whole answers.
struct Connection {
    stream: TcpStream,
    buffer: Vec<u8>,
    batch: Vec<u8>,
}

impl Connection {
    async fn open(addr: SocketAddr) -> Connection {
        let stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Connection {
            stream,
            buffer: Vec::with_capacity(1 << 16),
            batch: REQUEST.repeat(BATCH),
        }
    }

    /// Sends `n` requests (in batches) and waits for their `200` answers.
    async fn requests(&mut self, mut n: u64) {
        while n > 0 {
            let k = n.min(BATCH as u64) as usize;
            self.stream
                .write_all(&self.batch[..k * REQUEST.len()])
                .await
                .expect("write");
            let mut answered = 0;
            while answered < k {
                match parse(&self.buffer) {
                    Some(len) => {
                        self.buffer.drain(..len);
                        answered += 1;
                    }
                    None => {
                        let mut chunk = [0u8; 1 << 16];
                        let read = self.stream.read(&mut chunk).await.expect("read");
                        assert!(read > 0, "the server closed the connection");
                        self.buffer.extend_from_slice(&chunk[..read]);
                    }
                }
            }
            n -= k as u64;
        }
    }
}

/// The length of the first whole `200` answer in `buffer`.
fn parse(buffer: &[u8]) -> Option<usize> {
    let head_end = buffer.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = &buffer[..head_end];
    assert!(
        head.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(head)
    );
    let length = head
        .split(|b| *b == b'\n')
        .find_map(|line| {
            let line = std::str::from_utf8(line).ok()?.trim();
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .expect("a content-length");
    let total = head_end + 4 + length;
    (buffer.len() >= total).then_some(total)
}

/// The client: connections to one server.
struct Client {
    runtime: Runtime,
    connections: Vec<Connection>,
}

impl Client {
    fn new(addr: SocketAddr) -> Client {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let connections = runtime.block_on(async {
            let mut all = Vec::new();
            for _ in 0..CONNECTIONS {
                all.push(Connection::open(addr).await);
            }
            all
        });
        Client {
            runtime,
            connections,
        }
    }

    /// Sends `n` requests spread over the connections; the time they took.
    fn run(&mut self, n: u64) -> Duration {
        let per = n / CONNECTIONS as u64;
        let extra = n % CONNECTIONS as u64;
        let start = Instant::now();
        self.runtime.block_on(async {
            let work = self
                .connections
                .iter_mut()
                .enumerate()
                .map(|(i, c)| c.requests(per + u64::from((i as u64) < extra)));
            futures::future::join_all(work).await;
        });
        start.elapsed()
    }
}

const NAMES: [&str; 3] = ["ours", "official", "fixed"];

fn criterion_benches(c: &mut Criterion, servers: &Servers) {
    let mut group = c.benchmark_group("card_route");
    group.throughput(Throughput::Elements(1));
    for (name, addr) in NAMES
        .into_iter()
        .zip([servers.ours, servers.official, servers.fixed])
    {
        let mut client = Client::new(addr);
        group.bench_function(name, |b| b.iter_custom(|iters| client.run(iters)));
    }
    group.finish();
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn ratios(servers: &Servers) {
    let mut clients: Vec<Client> = [servers.ours, servers.official, servers.fixed]
        .into_iter()
        .map(Client::new)
        .collect();
    for client in &mut clients {
        client.run(ROUND);
    }
    let mut rates = vec![Vec::new(); 3];
    for round in 0..ROUNDS {
        let order: [usize; 3] = if round % 2 == 0 { [0, 1, 2] } else { [2, 1, 0] };
        for i in order {
            let took = clients[i].run(ROUND);
            rates[i].push(ROUND as f64 / took.as_secs_f64());
        }
    }
    let [ours, official, fixed] = [0, 1, 2].map(|i| median(rates[i].clone()));
    println!();
    println!(
        "card route throughput, loopback, {CONNECTIONS} keep-alive connections, pipelined by {BATCH}, median of {ROUNDS} rounds of {ROUND} requests:"
    );
    for (i, (name, rate)) in NAMES.into_iter().zip([ours, official, fixed]).enumerate() {
        println!(
            "  {name:<9} {rate:>10.0} req/s  ({} byte body)",
            servers.sizes[i]
        );
    }
    println!("  ours / official = {:.2}x (target >= 3x)", ours / official);
    println!("  ours / fixed    = {:.2}x (target >= 0.9x)", ours / fixed);
}

/// Each route answers a request, as the bench sees it.
fn smoke(servers: &Servers) {
    for addr in [servers.ours, servers.official, servers.fixed] {
        let mut client = Client::new(addr);
        client.run(CONNECTIONS as u64 * 2);
    }
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let servers = servers();
    smoke(&servers);
    if !bench {
        return;
    }
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    criterion_benches(&mut c, &servers);
    c.final_summary();
    ratios(&servers);
}
