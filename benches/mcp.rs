//! A tool call over MCP against the same skill over A2A: the fight example's
//! `fight-comparison`, served by one server (`Server::mcp(true)`) on one runtime worker, loaded
//! by the same raw client (8 keep-alive HTTP/1.1 connections sending pipelined batches, the
//! `agent_work` load):
//!
//! - **MCP 2026-07-28**: `tools/call`, each request self-contained (no session), answered
//!   with JSON;
//! - **MCP 2025-06-18**: `tools/call` in a session per connection (the initialize handshake
//!   once, then every call with its `Mcp-Session-Id`), answered as an event stream;
//! - **A2A**: blocking `SendMessage` over JSON-RPC with the same data.
//!
//! Target: MCP >= 0.8x A2A's requests per second. Ratios are of medians of interleaved
//! rounds:
//!
//! ```text
//! cargo bench --bench mcp
//! cargo bench --bench mcp -- --only stateless   # one way alone (stateless, session, a2a), to profile
//! ```
//!
//! Under `cargo test --benches` each side answers a few requests, as a smoke test.

use examples::fight_club::agent as fight_club;
#[path = "support/load.rs"]
mod load;

use std::net::SocketAddr;

use a2a_card::server::Server;
use load::{Client, fight_request, rates, serve};
use serde_json::{Value, json};

/// Connections, requests per round, rounds.
const CONNECTIONS: usize = 8;
const ROUND: u64 = 4_000;
const ROUNDS: usize = 7;

/// A whole HTTP/1.1 `POST /mcp` of `body`, with `headers` (each `name: value\r\n`).
fn mcp_request(body: &Value, headers: &str) -> Vec<u8> {
    let body = body.to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n{headers}content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The tool call, with `meta` in its `_meta` when given.
fn call(meta: Option<Value>) -> Value {
    let mut params = json!({"name": "fight-comparison", "arguments": {"a": "Lion", "b": "Tiger"}});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
}

/// A self-contained 2026-07-28 call.
fn stateless() -> Vec<u8> {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}});
    mcp_request(
        &call(Some(meta)),
        "mcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: fight-comparison\r\n",
    )
}

/// Opens an MCP session at `addr` (2025-06-18); its id.
async fn session(http: &reqwest::Client, addr: SocketAddr) -> String {
    let url = format!("http://{addr}/mcp");
    let post = |body: Value, session: Option<&str>| {
        let mut request = http
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}});
    let answer = post(init, None).await.expect("initialized");
    let id = answer.headers()["mcp-session-id"]
        .to_str()
        .expect("a session id")
        .to_owned();
    drop(answer.text().await);
    let ready = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    drop(post(ready, Some(&id)).await.expect("ready"));
    id
}

/// Checks that each way answers the verdict, once.
async fn check(addr: SocketAddr, sessioned: &[u8]) {
    let raw = |request: Vec<u8>| async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let mut request = String::from_utf8(request).expect("text");
        request = request.replacen(
            "host: 127.0.0.1\r\n",
            "host: 127.0.0.1\r\nconnection: close\r\n",
            1,
        );
        stream.write_all(request.as_bytes()).await.expect("write");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.expect("read");
        assert!(answer.contains("Tiger brings more"), "a verdict: {answer}");
    };
    raw(stateless()).await;
    raw(sessioned.to_vec()).await;
    raw(fight_request("")).await;
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let runtime = load::server_runtime();
    let addr = runtime.block_on(async {
        let app = Server::new(fight_club::FightClub)
            .mcp(true)
            .router()
            .await
            .expect("the router");
        serve(app).await
    });
    let sessioned: Vec<Vec<u8>> = runtime.block_on(async {
        let http = reqwest::Client::new();
        let mut requests = Vec::new();
        for _ in 0..CONNECTIONS {
            let id = session(&http, addr).await;
            requests.push(mcp_request(
                &call(None),
                &format!("mcp-session-id: {id}\r\n"),
            ));
        }
        check(addr, &requests[0]).await;
        requests
    });
    let mut clients = [
        Client::new(addr, CONNECTIONS, &stateless()),
        Client::each(addr, sessioned),
        Client::new(addr, CONNECTIONS, &fight_request("")),
    ];
    if !bench {
        for client in &mut clients {
            client.run(CONNECTIONS as u64);
        }
        return;
    }
    let args: Vec<String> = std::env::args().collect();
    if let Some(only) = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
    {
        let i = ["stateless", "session", "a2a"]
            .iter()
            .position(|w| w == only)
            .expect("--only stateless, session or a2a");
        let rate = rates(&mut clients[i..=i], ROUND, ROUNDS)[0];
        println!("  {only}: {rate:.0} calls/s");
        return;
    }
    let [s, m, a] = rates(&mut clients, ROUND, ROUNDS)[..] else {
        unreachable!("three clients")
    };
    println!(
        "the fight skill, loopback, {CONNECTIONS} keep-alive connections, median of {ROUNDS} rounds of {ROUND}:"
    );
    println!("  MCP 2026-07-28 tools/call (stateless, JSON)      {s:>8.0} calls/s");
    println!("  MCP 2025-06-18 tools/call (a session, SSE)       {m:>8.0} calls/s");
    println!("  A2A SendMessage (JSON-RPC)                       {a:>8.0} calls/s");
    println!(
        "  MCP / A2A = {:.2}x stateless, {:.2}x in a session (target >= 0.8x)",
        s / a,
        m / a
    );
}
