//! Replicas that add up: the fight example served by 1, 2 and 3 replicas on one Postgres (a
//! throwaway cluster under `target/`), each replica a process of its own (this binary started
//! again), under one client whose connections are spread evenly over them, each sending
//! blocking `SendMessage`s one after another (a task made, run and stored per request). Rounds
//! of 1, 2 and 3 replicas alternate, so that the machine's drift falls on each alike; printed:
//! tasks a second and p99 per count (medians over the rounds), and each count's throughput
//! against one replica's.
//!
//! ```sh
//! cargo bench --bench replicas
//! REPLICA_ROUNDS=5 REPLICA_SECONDS=10 cargo bench --bench replicas
//! ```
//!
//! On a machine whose cores the replicas and Postgres share, a second replica cannot add
//! throughput; what this shows there is that it costs none (no contention between replicas:
//! leases, notifications and locks that grow with tasks, not with replicas).

use examples::fight_club::agent::FightClub;
use process::Process;
#[path = "../tests/support/postgres.rs"]
#[allow(dead_code)]
mod postgres;
#[path = "support/process.rs"]
mod process;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use a2a_card::server::Server;
use a2a_card::server::store::Tasks;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Set in a replica process: where its tasks are.
const TASKS: &str = "REPLICAS_BENCH_TASKS";
/// The client's connections, spread over the replicas.
const CONNECTIONS: usize = 12;

/// The replica process: the fight example on the store at `url`, until killed.
async fn replica(url: &str) {
    let tasks = Tasks::from_url(url).expect("the store");
    let listening = Server::new(FightClub)
        .tasks(tasks)
        .bind("127.0.0.1:0")
        .await
        .expect("the replica binds");
    println!("LISTENING {}", listening.local_addr());
    let _ = listening.serve().await;
}

/// The fight example's `SendMessage`, a whole HTTP/1.1 request.
fn fight() -> Vec<u8> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "m", "role": "ROLE_USER",
            "parts": [{"data": {"a": "Lion", "b": "Tiger"},
                       "mediaType": "application/json;schema=fightComparison"}]}}})
    .to_string();
    format!(
        "POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\na2a-version: 1.0\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Reads one whole answer (by its `Content-Length`) from `stream`, `buffer` holding what was
/// read past the one before; whether it was a `200` naming a completed task.
async fn answer(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<bool> {
    loop {
        if let Some(head) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let text = String::from_utf8_lossy(&buffer[..head]).to_ascii_lowercase();
            let length: usize = text
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())?;
            if buffer.len() >= head + 4 + length {
                let body = &buffer[head + 4..head + 4 + length];
                let done = text.starts_with("http/1.1 200")
                    && body
                        .windows(b"TASK_STATE_COMPLETED".len())
                        .any(|w| w == b"TASK_STATE_COMPLETED");
                buffer.drain(..head + 4 + length);
                return Some(done);
            }
        }
        let mut chunk = [0u8; 16 * 1024];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Sends blocking fights over [`CONNECTIONS`] connections spread over `addrs` for `warm` then
/// `seconds`: the tasks completed a second in the measured stretch, and their p99.
async fn load(addrs: &[SocketAddr], warm: Duration, seconds: Duration) -> (f64, Duration) {
    let request = fight();
    let start = Instant::now();
    let (from, until) = (start + warm, start + warm + seconds);
    let work = (0..CONNECTIONS).map(|i| {
        let (addr, request) = (addrs[i % addrs.len()], request.clone());
        async move {
            let mut stream = TcpStream::connect(addr).await.expect("connect");
            stream.set_nodelay(true).expect("nodelay");
            let mut buffer = Vec::new();
            let mut took = Vec::new();
            loop {
                let sent = Instant::now();
                if sent >= until {
                    return took;
                }
                stream.write_all(&request).await.expect("write");
                let done = answer(&mut stream, &mut buffer).await;
                assert_eq!(done, Some(true), "a fight answered completed");
                if sent >= from {
                    took.push(sent.elapsed());
                }
            }
        }
    });
    let mut took: Vec<Duration> = futures::future::join_all(work)
        .await
        .into_iter()
        .flatten()
        .collect();
    took.sort();
    let p99 = took
        .get(((took.len().max(1) - 1) as f64 * 0.99).round() as usize)
        .copied()
        .unwrap_or_default();
    (took.len() as f64 / seconds.as_secs_f64(), p99)
}

/// The transactions the database has committed so far.
async fn commits(url: &str) -> i64 {
    use sqlx::{Connection as _, Row as _};
    let Ok(mut db) = sqlx::PgConnection::connect(url).await else {
        return 0;
    };
    sqlx::query("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
        .fetch_one(&mut db)
        .await
        .map_or(0, |row| row.get::<i64, _>(0))
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    if let Ok(url) = std::env::var(TASKS) {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(replica(&url));
        return;
    }
    let var = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    // `cargo test --benches` runs it too: one short round then.
    let quick = !std::env::args().any(|a| a == "--bench");
    let rounds = if quick { 1 } else { var("REPLICA_ROUNDS", 3) };
    let seconds = Duration::from_secs(if quick { 1 } else { var("REPLICA_SECONDS", 5) });
    let cluster = match postgres::OwnCluster::start("replicas-bench") {
        Ok(cluster) => cluster,
        Err(why) => {
            eprintln!("SKIPPED: no Postgres to run on: {why}");
            return;
        }
    };
    let url = cluster.url();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut rates: [Vec<f64>; 3] = Default::default();
    let mut p99s: [Vec<f64>; 3] = Default::default();
    let mut per_task: [Vec<f64>; 3] = Default::default();
    for round in 0..rounds {
        for count in 1..=3 {
            let replicas: Vec<Process> = (0..count)
                .map(|_| Process::start(&[(TASKS, url.as_str())]))
                .collect();
            let addrs: Vec<SocketAddr> = replicas.iter().map(|r| r.addr).collect();
            let before = runtime.block_on(commits(&url));
            let (rate, p99) = runtime.block_on(load(&addrs, Duration::from_secs(1), seconds));
            // Over the warm-up too: the tasks of both stretches, at the measured rate.
            let committed = (runtime.block_on(commits(&url)) - before) as f64;
            per_task[count - 1].push(committed / (rate * (seconds.as_secs_f64() + 1.0)));
            if !quick {
                eprintln!(
                    "round {}: {count} replica(s): {rate:.0} tasks/s, p99 {:.1} ms",
                    round + 1,
                    p99.as_secs_f64() * 1000.0
                );
            }
            rates[count - 1].push(rate);
            p99s[count - 1].push(p99.as_secs_f64() * 1000.0);
            drop(replicas);
        }
    }
    if quick {
        return;
    }
    let one = median(rates[0].clone());
    println!(
        "blocking sends of the fight example, {CONNECTIONS} connections spread over the replicas, one Postgres, {} cores, {rounds} rounds of {}s",
        std::thread::available_parallelism().map_or(1, |p| p.get()),
        seconds.as_secs()
    );
    println!(
        "{:<9} {:>9} {:>9} {:>9}",
        "replicas", "tasks/s", "p99 ms", "vs one"
    );
    for count in 0..3 {
        let rate = median(rates[count].clone());
        println!(
            "{:<9} {:>9.0} {:>9.1} {:>8.2}x {:>15.2}",
            count + 1,
            rate,
            median(p99s[count].clone()),
            rate / one,
            median(per_task[count].clone())
        );
    }
}
