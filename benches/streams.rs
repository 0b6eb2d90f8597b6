//! Many open streams on one process: `STREAMS` (10,000 by default) `SendStreamingMessage`
//! streams held open on an agent whose streaming skill sends a chunk at once and the next
//! when the bench says (`agent`), as many `SubscribeToTask` streams spread over 100 such tasks
//! (`subscribe`), beside the same number of SSE connections on a bare axum (hyper) handler
//! that does the same (`bare`: the floor, what any server on hyper pays per connection).
//! Each server is a process of its own (this binary started again), so that its resident
//! memory is its own. Printed for each: the time to open them all (each answered with its
//! first event), resident memory per open stream, CPU while they idle, and the delay from the
//! moment the next event is due on all of them at once to its arrival on each (p50, p99).
//!
//! ```sh
//! cargo bench --bench streams                  # 10,000 streams
//! STREAMS=2000 cargo bench --bench streams     # fewer
//! ```
//!
//! Beside them, the same `SendStreamingMessage` streams on the peer, `a2a-protocol-server`
//! (`peer`: the counting agent of `benches/peers/count`, whose `tick` does what this bench's
//! agent does), when its binary is built:
//!
//! ```sh
//! CARGO_TARGET_DIR=target/peer-target cargo build --release --locked \
//!   --manifest-path benches/peers/count/Cargo.toml
//! ```
//!
//! (`STREAMS_PEER` names another path to it.)
//!
//! The open files a process may hold must allow it (`ulimit -n`: the client holds one per
//! stream, and each server one per stream).

#[path = "support/process.rs"]
mod process;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a_card::server::Server;
use futures::{Stream, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use process::Process;

/// Set in a server process: `agent` or `bare`.
const ROLE: &str = "STREAMS_ROLE";
/// Set in a server process: the file whose appearance makes the next event due.
const TRIGGER: &str = "STREAMS_TRIGGER";

/// Says `ready` at once and `go` when the trigger comes.
struct Ticker {
    go: watch::Receiver<bool>,
}

/// Ticks once.
#[a2a_card::agent(url = "http://127.0.0.1:1", streaming)]
impl Ticker {
    /// Streams `ready`, then `go` once the bench triggers it.
    #[a2a_card::skill]
    fn tick(&self, _ask: String) -> impl Stream<Item = String> + Send {
        let mut go = self.go.clone();
        futures::stream::once(async { "ready".to_owned() }).chain(futures::stream::once(
            async move {
                let _ = go.wait_for(|g| *g).await;
                "go".to_owned()
            },
        ))
    }
}

/// A watch that turns true once `file` exists (looked for every 5 ms by one task).
fn trigger(file: PathBuf) -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        while !file.exists() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let _ = tx.send(true);
    });
    rx
}

/// The server process: serves its role until killed.
async fn serve(role: &str, file: PathBuf) {
    let go = trigger(file);
    if role == "agent" {
        let listening = Server::new(Ticker { go })
            .bind("127.0.0.1:0")
            .await
            .expect("the agent binds");
        println!("LISTENING {}", listening.local_addr());
        let _ = listening.serve().await;
    } else {
        use axum::body::{Body, Bytes};
        let app = axum::Router::new().route(
            "/sse",
            axum::routing::get(move || {
                let mut go = go.clone();
                async move {
                    let events = futures::stream::once(async {
                        Ok::<_, std::convert::Infallible>(Bytes::from_static(b"data: ready\n\n"))
                    })
                    .chain(futures::stream::once(async move {
                        let _ = go.wait_for(|g| *g).await;
                        Ok(Bytes::from_static(b"data: go\n\n"))
                    }));
                    axum::response::Response::builder()
                        .header("content-type", "text/event-stream")
                        .body(Body::from_stream(events))
                        .expect("a response")
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("the bare server binds");
        println!("LISTENING {}", listener.local_addr().expect("its address"));
        let _ = axum::serve(listener, app).await;
    }
}

/// What the bench reads of a server process.
impl Process {
    /// Its resident memory, in bytes.
    fn rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    }

    /// The CPU time it has used (user and system), in clock ticks.
    fn cpu_ticks(&self) -> u64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // Past the command's name (in parentheses), fields 14 and 15 of the line.
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let at = |n: usize| {
            fields
                .get(n)
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0)
        };
        at(11) + at(12)
    }
}

/// Tasks the `subscribe` streams are spread over.
const SUBSCRIBED_TASKS: usize = 100;

/// The requests that open the `n` streams on `role`'s server at `addr` (for `subscribe`, the
/// tasks are made first).
async fn requests(role: &str, addr: SocketAddr, n: usize) -> Vec<Arc<Vec<u8>>> {
    if role != "subscribe" {
        let one = Arc::new(request(role));
        return vec![one; n];
    }
    let http = reqwest::Client::new();
    let mut tasks = Vec::new();
    for _ in 0..SUBSCRIBED_TASKS {
        let body = serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
                "parts": [{"text": "tick"}]}, "configuration": {"returnImmediately": true}}
        });
        let answer: serde_json::Value = http
            .post(format!("http://{addr}/"))
            .header("content-type", "application/json")
            .header("a2a-version", "1.0")
            .body(body.to_string())
            .send()
            .await
            .expect("a task made")
            .json()
            .await
            .expect("JSON");
        let id = answer["result"]["task"]["id"]
            .as_str()
            .expect("its id")
            .to_owned();
        tasks.push(id);
    }
    (0..n)
        .map(|i| {
            let body = serde_json::json!({
                "jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
                "params": {"id": tasks[i % tasks.len()]}
            })
            .to_string();
            Arc::new(
                format!(
                    "POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\na2a-version: 1.0\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                )
                .into_bytes(),
            )
        })
        .collect()
}

/// The peer's binary (see the module's docs), if it is built.
fn peer() -> Option<PathBuf> {
    let path = std::env::var_os("STREAMS_PEER")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/peer-target/release/count_peer")
        });
    path.exists().then_some(path)
}

/// The request that opens one stream on `role`'s server.
fn request(role: &str) -> Vec<u8> {
    if role == "agent" || role == "peer" {
        let body = serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
            "params": {"message": {"messageId": "m", "role": "ROLE_USER",
                "parts": [{"text": "tick"}]}}
        })
        .to_string();
        format!(
            "POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\na2a-version: 1.0\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    } else {
        b"GET /sse HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n".to_vec()
    }
}

/// Reads from `stream` until `buffer` holds `needle` past `from`; where it ends.
async fn read_until(
    stream: &mut TcpStream,
    buffer: &mut Vec<u8>,
    from: usize,
    needle: &[u8],
) -> Option<usize> {
    loop {
        if let Some(at) = buffer[from..]
            .windows(needle.len())
            .position(|w| w == needle)
        {
            return Some(from + at + needle.len());
        }
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
}

/// What one role showed.
struct Figures {
    opened: usize,
    open_time: Duration,
    rss_per_stream: f64,
    idle_cpu: f64,
    delivered: usize,
    p50: Duration,
    p99: Duration,
}

/// Opens `n` streams on `role`'s server, measures, triggers the next event, and measures its
/// delivery.
async fn measure(role: &str, n: usize) -> Figures {
    let dir = std::env::temp_dir().join(format!("streams-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let file = dir.join(format!("{role}-go"));
    let _ = std::fs::remove_file(&file);
    let served = if role == "bare" { "bare" } else { "agent" };
    let trigger = file.to_string_lossy();
    let server = match role {
        "peer" => {
            // A free port, given to the peer (it does not say which one it took).
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port()
                .to_string();
            Process::program(
                &peer().expect("the peer's binary"),
                &["--port", &port],
                &[(TRIGGER, &trigger)],
            )
        }
        _ => Process::start(&[(ROLE, served), (TRIGGER, &trigger)]),
    };
    let mut all = requests(role, server.addr, n + 1).await;
    let request = all.pop().expect("a request");
    // The first event (`ready`), as each stream writes it, and the next (`go`).
    let (first, second): (&'static [u8], &'static [u8]) = if role == "bare" {
        (b"data: ready", b"data: go")
    } else {
        (b"ready", b"\"go\"")
    };
    // One stream first, so that what every server allocates once is not counted per stream.
    let (warm_tx, warm_rx) = tokio::sync::oneshot::channel::<()>();
    {
        let (addr, request) = (server.addr, Arc::clone(&request));
        tokio::spawn(async move {
            let mut stream = TcpStream::connect(addr).await.expect("connect");
            stream.write_all(&request).await.expect("write");
            let mut buffer = Vec::new();
            read_until(&mut stream, &mut buffer, 0, first).await;
            let _ = warm_tx.send(());
            // Held open until the process ends.
            let _ = read_until(&mut stream, &mut buffer, 0, b"never").await;
        });
    }
    let _ = warm_rx.await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = server.rss();

    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::unbounded_channel::<bool>();
    let (go_tx, go_rx) = watch::channel::<Option<Instant>>(None);
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<Option<Duration>>();
    let started = Instant::now();
    // A server that holds connections without answering them (past what it takes) does not
    // hold the bench: what is not open a minute from now counts as not opened.
    let open_by = tokio::time::Instant::now() + Duration::from_secs(60);
    let gate = Arc::new(tokio::sync::Semaphore::new(256));
    for request in all {
        let (addr, ready_tx, done_tx) = (server.addr, ready_tx.clone(), done_tx.clone());
        let mut go_rx = go_rx.clone();
        let gate = Arc::clone(&gate);
        tokio::spawn(async move {
            // At most 256 connecting at once (the listener's backlog).
            let Ok(Ok(permit)) = tokio::time::timeout_at(open_by, gate.acquire_owned()).await
            else {
                let _ = ready_tx.send(false);
                return;
            };
            let connecting = TcpStream::connect(addr);
            let Ok(Ok(mut stream)) = tokio::time::timeout_at(open_by, connecting).await else {
                let _ = ready_tx.send(false);
                return;
            };
            if stream.write_all(&request).await.is_err() {
                let _ = ready_tx.send(false);
                return;
            }
            let mut buffer = Vec::with_capacity(1024);
            let opening = read_until(&mut stream, &mut buffer, 0, first);
            let Ok(Some(end)) = tokio::time::timeout_at(open_by, opening).await else {
                let _ = ready_tx.send(false);
                return;
            };
            drop(permit);
            let _ = ready_tx.send(true);
            let next = read_until(&mut stream, &mut buffer, end, second);
            let got = tokio::time::timeout(Duration::from_secs(60), next)
                .await
                .ok()
                .flatten();
            let due = go_rx.wait_for(Option::is_some).await.ok().and_then(|d| *d);
            let _ = done_tx.send(got.and(due).map(|due| due.elapsed()));
            drop(stream);
        });
    }
    drop((ready_tx, done_tx));
    let mut opened = 0;
    for _ in 0..n {
        if ready_rx.recv().await == Some(true) {
            opened += 1;
        }
    }
    let open_time = started.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = server.rss();
    // CPU while every stream idles, over 3 s.
    let cpu_before = server.cpu_ticks();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let ticks = server.cpu_ticks() - cpu_before;
    let per_second = 100.0; // USER_HZ on Linux
    let idle_cpu = ticks as f64 / per_second / 3.0 * 100.0;

    // The next event due on all of them at once.
    let due = Instant::now();
    let _ = go_tx.send(Some(due));
    std::fs::write(&file, "go").expect("the trigger");
    let mut took = Vec::with_capacity(n);
    while let Some(one) = done_rx.recv().await {
        if let Some(one) = one {
            took.push(one);
        }
    }
    took.sort();
    let at = |q: f64| {
        took.get(((took.len().max(1) - 1) as f64 * q).round() as usize)
            .copied()
            .unwrap_or_default()
    };
    let _ = std::fs::remove_dir_all(&dir);
    Figures {
        opened,
        open_time,
        rss_per_stream: after.saturating_sub(before) as f64 / opened.max(1) as f64,
        idle_cpu,
        delivered: took.len(),
        p50: at(0.5),
        p99: at(0.99),
    }
}

fn main() {
    if let Ok(role) = std::env::var(ROLE) {
        let file = PathBuf::from(std::env::var(TRIGGER).expect("a trigger file"));
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(serve(&role, file));
        return;
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: both run it.
    let n: usize = std::env::var("STREAMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    println!(
        "{n} open streams, each server a process of its own, on {} cores",
        std::thread::available_parallelism().map_or(1, |p| p.get())
    );
    println!(
        "{:<6} {:>7} {:>9} {:>12} {:>9} {:>10} {:>9} {:>9}",
        "server", "opened", "open in", "kB a stream", "idle CPU", "delivered", "p50", "p99"
    );
    let mut memory = Vec::new();
    for role in ["bare", "agent", "subscribe", "peer"] {
        if role == "peer" && peer().is_none() {
            println!("peer   not built (see `benches/streams.rs`)");
            continue;
        }
        let f = runtime.block_on(measure(role, n));
        println!(
            "{:<6} {:>7} {:>8.2}s {:>12.1} {:>8.1}% {:>10} {:>7.1}ms {:>7.1}ms",
            role,
            f.opened,
            f.open_time.as_secs_f64(),
            f.rss_per_stream / 1024.0,
            f.idle_cpu,
            f.delivered,
            f.p50.as_secs_f64() * 1000.0,
            f.p99.as_secs_f64() * 1000.0,
        );
        memory.push(f.rss_per_stream);
    }
    if let [bare, agent, subscribe, ..] = memory[..] {
        println!(
            "memory a stream against the bare SSE handler's: SendStreamingMessage {:.2}x, SubscribeToTask {:.2}x",
            agent / bare.max(1.0),
            subscribe / bare.max(1.0)
        );
        if let Some(peer) = memory.get(3) {
            println!(
                "the peer's SendStreamingMessage: {:.2}x the bare handler's, {:.2}x ours",
                peer / bare.max(1.0),
                peer / agent.max(1.0)
            );
        }
    }
}
