//! A load generator for the benchmarks: keep-alive connections on loopback that send
//! pipelined batches of one request and read the answers by their `Content-Length` (or their
//! chunked framing: an event stream), so that the client does as little per request as a
//! client can.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::runtime::Runtime;

/// Requests written at once on a connection.
pub const BATCH: usize = 32;

/// One keep-alive connection that sends pipelined requests and counts whole answers.
struct Connection {
    stream: TcpStream,
    buffer: Vec<u8>,
    batch: Vec<u8>,
    request_len: usize,
}

impl Connection {
    async fn open(addr: SocketAddr, request: &[u8]) -> Connection {
        let stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Connection {
            stream,
            buffer: Vec::with_capacity(1 << 16),
            batch: request.repeat(BATCH),
            request_len: request.len(),
        }
    }

    /// Sends `n` requests (in batches) and waits for their `200` answers.
    async fn requests(&mut self, mut n: u64) {
        while n > 0 {
            let k = n.min(BATCH as u64) as usize;
            self.stream
                .write_all(&self.batch[..k * self.request_len])
                .await
                .expect("write");
            for _ in 0..k {
                self.answer().await;
            }
            n -= k as u64;
        }
    }

    /// Reads the next whole `200` answer (from what was read before, else from the stream).
    async fn answer(&mut self) {
        loop {
            if let Some(len) = parse(&self.buffer) {
                self.buffer.drain(..len);
                return;
            }
            let mut chunk = [0u8; 1 << 16];
            let read = self.stream.read(&mut chunk).await.expect("read");
            assert!(read > 0, "the server closed the connection");
            self.buffer.extend_from_slice(&chunk[..read]);
        }
    }

    /// Sends `n` requests one at a time (each after the answer to the one before); how long
    /// each took, from its first byte written to its answer's last byte read.
    async fn one_by_one(&mut self, n: u64, took: &mut Vec<Duration>) {
        for _ in 0..n {
            let start = Instant::now();
            self.stream
                .write_all(&self.batch[..self.request_len])
                .await
                .expect("write");
            self.answer().await;
            took.push(start.elapsed());
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
    let length = head.split(|b| *b == b'\n').find_map(|line| {
        let line = std::str::from_utf8(line).ok()?.trim();
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<usize>().ok())?
    });
    let body = head_end + 4;
    match length {
        Some(length) => (buffer.len() >= body + length).then_some(body + length),
        // Chunked (an event stream): up to the last, empty chunk.
        None => {
            const LAST: &[u8] = b"\r\n0\r\n\r\n";
            let end = buffer[body - 2..]
                .windows(LAST.len())
                .position(|w| w == LAST)?;
            Some(body - 2 + end + LAST.len())
        }
    }
}

/// The client: connections to one server, all sending the same request.
pub struct Client {
    runtime: Runtime,
    connections: Vec<Connection>,
}

impl Client {
    /// `connections` connections to `addr`, each sending `request` (a whole HTTP/1.1 request).
    pub fn new(addr: SocketAddr, connections: usize, request: &[u8]) -> Client {
        Client::each(addr, vec![request.to_vec(); connections])
    }

    /// One connection to `addr` per request of `requests`, each sending its own.
    pub fn each(addr: SocketAddr, requests: Vec<Vec<u8>>) -> Client {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let connections = runtime.block_on(async {
            let mut all = Vec::new();
            for request in &requests {
                all.push(Connection::open(addr, request).await);
            }
            all
        });
        Client {
            runtime,
            connections,
        }
    }

    /// How many of `n` requests each connection sends: `n` spread evenly over them.
    fn shares(&self, n: u64) -> Vec<u64> {
        let connections = self.connections.len() as u64;
        (0..connections)
            .map(|i| n / connections + u64::from(i < n % connections))
            .collect()
    }

    /// Sends `n` requests spread over the connections; the time they took.
    pub fn run(&mut self, n: u64) -> Duration {
        let shares = self.shares(n);
        let start = Instant::now();
        self.runtime.block_on(async {
            let work = self
                .connections
                .iter_mut()
                .zip(shares)
                .map(|(c, share)| c.requests(share));
            futures::future::join_all(work).await;
        });
        start.elapsed()
    }

    /// Sends `n` requests spread over the connections, each connection sending its next one
    /// once the one before is answered (no pipelining): each request's latency, and the time
    /// they all took.
    #[allow(dead_code)] // the benches that measure latency use it
    pub fn latencies(&mut self, n: u64) -> (Vec<Duration>, Duration) {
        let shares = self.shares(n);
        let mut took = vec![Vec::new(); self.connections.len()];
        let start = Instant::now();
        self.runtime.block_on(async {
            let work = self
                .connections
                .iter_mut()
                .zip(shares)
                .zip(took.iter_mut())
                .map(|((c, share), took)| c.one_by_one(share, took));
            futures::future::join_all(work).await;
        });
        let elapsed = start.elapsed();
        (took.concat(), elapsed)
    }
}

/// The `q` quantile (0 to 1) of some durations, by the nearest rank.
#[allow(dead_code)] // the benches that measure latency use it
pub fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// The median of some measurements.
pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// `SendMessage` of the fight example (a structured fight between a lion and a tiger), as a
/// whole HTTP/1.1 JSON-RPC request to `/`, with `headers` (each `name: value\r\n`) added.
pub fn fight_request(headers: &str) -> Vec<u8> {
    send_message(
        serde_json::json!({"messageId": "m1", "role": "ROLE_USER",
            "parts": [{"data": {"a": "Lion", "b": "Tiger"}, "mediaType": "application/json;schema=fightComparison"}]}),
        headers,
    )
}

/// `SendMessage` of `message` (A2A 1.0), as a whole HTTP/1.1 JSON-RPC request to `/`, with
/// `headers` (each `name: value\r\n`) added.
pub fn send_message(message: serde_json::Value, headers: &str) -> Vec<u8> {
    let body = serde_json::to_vec(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}))
    .expect("JSON");
    let mut request = format!(
        "POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\na2a-version: 1.0\r\n{headers}content-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    request
}

/// Serves `app` on a free loopback port (no Nagle delay on the answers, and each request
/// knowing its peer's address, as `a2a_card::server` does); its address.
pub async fn serve(app: axum::Router) -> SocketAddr {
    use axum::serve::ListenerExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("an address");
    let listener = listener.tap_io(|stream| {
        let _ = stream.set_nodelay(true);
    });
    let app = app.into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// Requests per second of each client in each of `rounds` rounds of `round` requests, after a
/// warm-up: `[round][client]`, the clients interleaved (forward, then backward).
fn sampled(clients: &mut [Client], round: u64, rounds: usize) -> Vec<Vec<f64>> {
    for c in clients.iter_mut() {
        c.run(round / 4);
    }
    (0..rounds)
        .map(|r| {
            let mut order: Vec<usize> = (0..clients.len()).collect();
            if r % 2 == 1 {
                order.reverse();
            }
            let mut rates = vec![0.0; clients.len()];
            for i in order {
                let took = clients[i].run(round);
                rates[i] = round as f64 / took.as_secs_f64();
            }
            rates
        })
        .collect()
}

/// Requests per second of each client: after a warm-up, `rounds` rounds of `round` requests,
/// the clients interleaved (forward, then backward), the median of each.
pub fn rates(clients: &mut [Client], round: u64, rounds: usize) -> Vec<f64> {
    let sampled = sampled(clients, round, rounds);
    (0..clients.len())
        .map(|i| median(sampled.iter().map(|r| r[i]).collect()))
        .collect()
}

/// The median over `rounds` of each round's ratio of the second client's rate to the
/// first's, the two run back to back in each round (as [`rates`] runs them): robust to a
/// noisy machine's slow drifts and bursts, which move both rates of a round together. Also
/// gives each client's median rate.
#[allow(dead_code)] // the benches that compare two servers by a few percent use it
pub fn paired_ratio(clients: &mut [Client; 2], round: u64, rounds: usize) -> (f64, [f64; 2]) {
    let sampled = sampled(clients, round, rounds);
    let ratio = median(sampled.iter().map(|r| r[1] / r[0]).collect());
    let each = |i: usize| median(sampled.iter().map(|r| r[i]).collect());
    (ratio, [each(0), each(1)])
}

/// The runtime the benchmarked servers run on: one worker, so that the client has the other
/// core.
pub fn server_runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime")
}
