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

use examples::fight_club::agent as fight_club;
#[path = "support/load.rs"]
#[allow(dead_code)]
mod load;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use a2a_card::Agent;
use a2a_card::server::{AGENT_CARD_PATH, Server};
use a2a_card::wire::{Profile, RenderOptions, SchemaPlacement};
use a2a_server::agent_card::{StaticAgentCard, agent_card_router};
use criterion::{Criterion, Throughput};
use fight_club::FightClub;
use load::{BATCH, Client, rates, serve};
use tokio::runtime::Runtime;

/// Keep-alive connections of the client.
const CONNECTIONS: usize = 8;
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
    let runtime = load::server_runtime();
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
        let official_addr = serve(official).await;

        let body = axum::body::Bytes::from(v1.clone());
        let fixed = axum::Router::new().route(
            AGENT_CARD_PATH,
            axum::routing::get(move || {
                let body = body.clone();
                async move { ([("content-type", "application/json")], body) }
            }),
        );
        let fixed_addr = serve(fixed).await;
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

const NAMES: [&str; 3] = ["ours", "official", "fixed"];

fn criterion_benches(c: &mut Criterion, servers: &Servers) {
    let mut group = c.benchmark_group("card_route");
    group.throughput(Throughput::Elements(1));
    for (name, addr) in NAMES
        .into_iter()
        .zip([servers.ours, servers.official, servers.fixed])
    {
        let mut client = Client::new(addr, CONNECTIONS, REQUEST);
        group.bench_function(name, |b| b.iter_custom(|iters| client.run(iters)));
    }
    group.finish();
}

fn ratios(servers: &Servers) {
    let mut clients: Vec<Client> = [servers.ours, servers.official, servers.fixed]
        .into_iter()
        .map(|addr| Client::new(addr, CONNECTIONS, REQUEST))
        .collect();
    let [ours, official, fixed] = rates(&mut clients, ROUND, ROUNDS)[..] else {
        unreachable!("one rate per client")
    };
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
        let mut client = Client::new(addr, CONNECTIONS, REQUEST);
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
