//! What the testing kit's in-process agent costs beside the network it stands in for: the same
//! blocking call of the fight_club agent's `fight-comparison` skill through its typed client,
//! (1) `in_process`: a `TestAgent` (the router answers the request handed to it, no socket), and
//! (2) `loopback`: the same server bound on 127.0.0.1 and called over HTTP/1.1 keep-alive. One
//! call at a time, on one runtime, as a test makes them. Criterion times each; then the ratio
//! is measured in interleaved rounds of [`ROUND`] calls (in-process, loopback, loopback,
//! in-process, ...) and printed from the medians:
//!
//! ```text
//! cargo bench --bench testing_kit
//! ```
//!
//! Under `cargo test --benches` each answers once, as a smoke test, and nothing is timed.

use std::time::{Duration, Instant};

use a2a_card::Input;
use a2a_card::server::Server;
use a2a_card::testing::TestAgent;
use criterion::Criterion;
use examples::fight_club::agent::{FightClub, FightClubClient, FightComparison};
use tokio::runtime::Runtime;

/// Calls per timed round of the ratio measurement.
const ROUND: u32 = 2_000;
/// Rounds per way of the ratio measurement.
const ROUNDS: usize = 7;

fn lion_tiger() -> Input<FightComparison> {
    Input::Data(FightComparison {
        a: "Lion".into(),
        b: "Tiger".into(),
    })
}

/// The two clients of the same agent.
fn clients(runtime: &Runtime) -> (FightClubClient, FightClubClient) {
    runtime.block_on(async {
        let agent = TestAgent::start(Server::new(FightClub))
            .await
            .expect("served in-process");
        let in_process = FightClubClient::connect_with(agent.connect())
            .await
            .expect("connected in-process");
        let listening = Server::new(FightClub)
            .bind("127.0.0.1:0")
            .await
            .expect("bound");
        let url = format!("http://{}", listening.local_addr());
        tokio::spawn(listening.serve());
        let loopback = FightClubClient::connect(url)
            .await
            .expect("connected over loopback");
        (in_process, loopback)
    })
}

async fn call(client: &FightClubClient) {
    client
        .fight_comparison(lion_tiger())
        .await
        .expect("a verdict");
}

fn round(runtime: &Runtime, client: &FightClubClient) -> Duration {
    runtime.block_on(async {
        let start = Instant::now();
        for _ in 0..ROUND {
            call(client).await;
        }
        start.elapsed()
    })
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let (in_process, loopback) = clients(&runtime);
    runtime.block_on(async {
        call(&in_process).await;
        call(&loopback).await;
    });
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let mut group = criterion.benchmark_group("typed blocking call");
    group.bench_function("in_process", |b| {
        b.iter(|| runtime.block_on(call(&in_process)))
    });
    group.bench_function("loopback", |b| b.iter(|| runtime.block_on(call(&loopback))));
    group.finish();
    criterion.final_summary();

    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    for i in 0..ROUNDS {
        if i % 2 == 0 {
            inside.push(round(&runtime, &in_process));
            outside.push(round(&runtime, &loopback));
        } else {
            outside.push(round(&runtime, &loopback));
            inside.push(round(&runtime, &in_process));
        }
    }
    let (inside, outside) = (median(inside), median(outside));
    let per = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(ROUND);
    println!(
        "testing_kit: in-process {:.1} us a call, loopback {:.1} us a call: in-process takes {:.2}x the loopback time ({ROUNDS} interleaved rounds of {ROUND} calls, medians)",
        per(inside),
        per(outside),
        inside.as_secs_f64() / outside.as_secs_f64(),
    );
}
