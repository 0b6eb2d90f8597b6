//! Every target fuzzed for a short bound (`A2A_FUZZ_SECONDS`, 3 s by default; CI's run), from a
//! seed printed first (`A2A_FUZZ_SEED` replays it): a crash fails the test, its input written
//! under `fuzz/crashes/` with the command that reproduces it.

use std::time::Duration;

use a2a_card_fuzz::campaign::fuzz;
use a2a_card_fuzz::targets::TARGETS;

#[test]
fn every_target_fuzzed_for_a_short_bound_does_not_crash() {
    let seconds = std::env::var("A2A_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let seed = std::env::var("A2A_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    println!("fuzz seed {seed} (A2A_FUZZ_SEED={seed} replays it), {seconds} s a target");
    let mut crashed = Vec::new();
    for target in TARGETS {
        let summary = fuzz(target, Duration::from_secs(seconds), seed);
        println!(
            "  {:<14} {:>8} execs {:>6.0}/s, corpus {}",
            summary.target,
            summary.execs,
            summary.execs as f64 / summary.seconds.max(1e-9),
            summary.corpus
        );
        if let Some(crash) = summary.crash {
            crashed.push(format!("{}: {}", summary.target, crash.display()));
        }
    }
    assert!(crashed.is_empty(), "seed {seed}: crashes {crashed:#?}");
}
