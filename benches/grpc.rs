//! Blocking `SendMessage` of the fight example over gRPC, three servers on one runtime worker
//! each, loaded by the same gRPC client (the generated `lf.a2a.v1.A2AService` client, 8
//! concurrent callers on one HTTP/2 connection):
//!
//! - **ours**: the example's agent with `Server::grpc(true)` (the official binding over this
//!   crate's request handler, on the server's own router);
//! - **official**: the official binding (`a2a-grpc`'s `GrpcHandler`) over the official
//!   `DefaultRequestHandler` with a hand-written executor emitting the same events. Target:
//!   ours >= 0.9x its requests per second;
//!
//! and, beside them, the same agent over JSON-RPC on HTTP/1.1 (8 keep-alive connections,
//! pipelined: the `agent_work` load), for the ratio of the two bindings. Ratios are of medians
//! of interleaved rounds:
//!
//! ```text
//! cargo bench --bench grpc
//! ```
//!
//! Under `cargo test --benches` each server answers a few requests, as a smoke test.

use examples::fight_club::agent as fight_club;
#[path = "support/hand.rs"]
mod hand;
#[path = "support/load.rs"]
#[allow(dead_code)] // the interleaved `rates` of HTTP clients: the rounds here mix both kinds
mod load;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use a2a::{Message, Role, SendMessageRequest};
use a2a_card::server::Server;
use a2a_pb::proto;
use a2a_pb::proto::a2a_service_client::A2aServiceClient;
use a2a_pb::proto::a2a_service_server::A2aServiceServer;
use a2a_server::{DefaultRequestHandler, InMemoryTaskStore};
use hand::HandJudge;
use load::{Client, fight_request, median, serve};
use tonic::transport::Channel;

/// Concurrent callers per gRPC client, and requests per round.
const CALLERS: usize = 8;
const ROUND: usize = 4_000;
const ROUNDS: usize = 7;

/// The fight request, in protobuf.
fn request() -> proto::SendMessageRequest {
    let part = a2a::Part::data(serde_json::json!({"a": "Lion", "b": "Tiger"}))
        .with_media_type("application/json;schema=fightComparison");
    let mut message = Message::new(Role::User, vec![part]);
    message.message_id = "m".to_owned();
    a2a_pb::pbconv::to_proto_send_message_request(&SendMessageRequest {
        message,
        configuration: None,
        metadata: None,
        tenant: None,
    })
}

/// Sends `n` requests from [`CALLERS`] concurrent callers on `channel`; the requests per second.
async fn round(channel: &Channel, n: usize) -> f64 {
    let started = Instant::now();
    let callers: Vec<_> = (0..CALLERS)
        .map(|_| {
            let mut client = A2aServiceClient::new(channel.clone());
            tokio::spawn(async move {
                for i in 0..n / CALLERS {
                    let mut req = request();
                    if let Some(m) = req.message.as_mut() {
                        m.message_id = uuid();
                    }
                    let answer = client.send_message(req).await.expect("an answer");
                    // The first answer of each caller is checked to be the verdict.
                    if i == 0 {
                        let shown = format!("{:?}", answer.get_ref());
                        assert!(shown.contains("Tiger"), "a verdict: {shown}");
                    }
                }
            })
        })
        .collect();
    for caller in callers {
        caller.await.expect("a caller");
    }
    n as f64 / started.elapsed().as_secs_f64()
}

/// A fresh message id.
fn uuid() -> String {
    a2a::new_message_id()
}

/// The servers: ours (gRPC and JSON-RPC on one router) and the official binding over the
/// hand-written executor, on a one-worker runtime.
fn servers() -> (tokio::runtime::Runtime, SocketAddr, SocketAddr) {
    let runtime = load::server_runtime();
    let (ours, official) = runtime.block_on(async {
        let ours = Server::new(fight_club::FightClub)
            .grpc(true)
            .router()
            .await
            .expect("the router");
        let handler = Arc::new(DefaultRequestHandler::new(
            HandJudge,
            InMemoryTaskStore::new(),
        ));
        let official = axum::Router::new().route_service(
            "/lf.a2a.v1.A2AService/{*method}",
            A2aServiceServer::new(a2a_grpc::GrpcHandler::new(handler)),
        );
        (serve(ours).await, serve(official).await)
    });
    (runtime, ours, official)
}

async fn channel(addr: SocketAddr) -> Channel {
    Channel::from_shared(format!("http://{addr}"))
        .expect("a URL")
        .connect()
        .await
        .expect("connected")
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let (_servers, ours, official) = servers();
    let client = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let (ours_grpc, official_grpc) =
        client.block_on(async { (channel(ours).await, channel(official).await) });
    let mut json_rpc = Client::new(ours, load_connections(), &fight_request(""));
    if !bench {
        client.block_on(async {
            round(&ours_grpc, CALLERS).await;
            round(&official_grpc, CALLERS).await;
        });
        json_rpc.run(4);
        return;
    }
    let (mut g, mut o, mut j) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        g.push(client.block_on(round(&ours_grpc, ROUND)));
        o.push(client.block_on(round(&official_grpc, ROUND)));
        j.push(ROUND as f64 / json_rpc.run(ROUND as u64).as_secs_f64());
    }
    let (g, o, j) = (median(g), median(o), median(j));
    println!(
        "blocking SendMessage of the fight example, loopback, median of {ROUNDS} rounds of {ROUND}:"
    );
    println!(
        "  ours over gRPC               {g:>8.0} req/s ({CALLERS} callers, one HTTP/2 connection)"
    );
    println!("  official binding, by hand    {o:>8.0} req/s");
    println!(
        "  ours over JSON-RPC           {j:>8.0} req/s ({} keep-alive HTTP/1.1 connections)",
        load_connections()
    );
    println!(
        "  ours / official over gRPC = {:.2}x (target >= 0.9x)",
        g / o
    );
    println!("  ours, gRPC / JSON-RPC      = {:.2}x", g / j);
}

/// Connections of the JSON-RPC load.
fn load_connections() -> usize {
    8
}
