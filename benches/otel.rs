//! Blocking `SendMessage` of the fight example with OpenTelemetry export on (spans and
//! metrics over OTLP/HTTP to a receiver on loopback, the SDK's batching span processor) and
//! off (`a2a_card::otel::init` with no endpoint: metrics kept, no span made). The
//! subscriber is the process's, so each side runs in a process of its own (this bench started
//! again with `A2A_OTEL_BENCH=on|off`), alternately, three times each; the server on one
//! runtime worker, the raw load client of the other benches (8 keep-alive connections,
//! pipelined). Target: on >= 0.9x off.
//!
//! ```text
//! cargo bench --bench otel
//! ```
//!
//! Under `cargo test --benches` each side answers a few requests, as a smoke test.

use examples::fight_club::agent as fight_club;
// The interleaved `rates` of clients in one process go unused: here each side is a process.
#[path = "support/load.rs"]
#[allow(dead_code)]
mod load;

use std::process::Command;

use a2a_card::server::Server;
use load::{Client, fight_request, median, serve};

const CONNECTIONS: usize = 8;
const ROUND: u64 = 4_000;
const ROUNDS: usize = 5;
const RUNS: usize = 3;

/// One side, in this process: its requests per second (the median of its rounds).
fn side(on: bool, requests: u64, rounds: usize) -> f64 {
    let runtime = load::server_runtime();
    if on {
        // A receiver that takes every export and drops it, on a thread of its own (a
        // collector is not the agent's runtime's work).
        let (sender, address) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("the collector's runtime");
            runtime.block_on(async {
                let sink = axum::Router::new()
                    .route("/v1/traces", axum::routing::post(|| async { "" }))
                    .route("/v1/metrics", axum::routing::post(|| async { "" }));
                let _ = sender.send(serve(sink).await);
                std::future::pending::<()>().await
            })
        });
        let collector = address.recv().expect("the collector's address");
        // SAFETY-free: set before the exporters' threads start.
        unsafe { std::env::set_var("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{collector}")) };
    } else {
        unsafe {
            std::env::remove_var("OTEL_EXPORTER_OTLP_ENDPOINT");
            std::env::remove_var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
            std::env::remove_var("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
        }
    }
    let telemetry = a2a_card::otel::init().expect("telemetry set up");
    assert_eq!(telemetry.exports(), on);
    let addr = runtime.block_on(async {
        serve(
            Server::new(fight_club::FightClub)
                .router()
                .await
                .expect("the router"),
        )
        .await
    });
    let mut client = Client::new(addr, CONNECTIONS, &fight_request(""));
    client.run(requests / 4);
    let rates = (0..rounds)
        .map(|_| requests as f64 / client.run(requests).as_secs_f64())
        .collect();
    median(rates)
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    if let Ok(mode) = std::env::var("A2A_OTEL_BENCH") {
        let rate = side(mode == "on", ROUND, ROUNDS);
        println!("RATE {rate}");
        return;
    }
    let run = |mode: &str| -> f64 {
        let exe = std::env::current_exe().expect("this bench");
        let mut command = Command::new(exe);
        command.env("A2A_OTEL_BENCH", mode);
        if bench {
            command.arg("--bench");
        }
        let out = command.output().expect("the side runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{mode}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text.lines()
            .find_map(|l| l.strip_prefix("RATE "))
            .and_then(|r| r.trim().parse().ok())
            .expect("a rate")
    };
    if !bench {
        // A smoke test: each side answers, in-process sizes kept small.
        let (off, on) = (run("off"), run("on"));
        assert!(off > 0.0 && on > 0.0);
        return;
    }
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for r in 0..RUNS {
        if r % 2 == 0 {
            off.push(run("off"));
            on.push(run("on"));
        } else {
            on.push(run("on"));
            off.push(run("off"));
        }
    }
    let (on, off) = (median(on), median(off));
    println!(
        "blocking SendMessage of the fight example, loopback, {CONNECTIONS} connections, median of {RUNS} processes per side ({ROUNDS} rounds of {ROUND} each):"
    );
    println!("  export off (no endpoint: no span made)      {off:>8.0} req/s");
    println!("  export on (OTLP/HTTP, batching)             {on:>8.0} req/s");
    println!("  on / off = {:.2}x (target >= 0.9x)", on / off);
}
