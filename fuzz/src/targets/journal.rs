//! Journal rows read back from a store: the bytes, and each of their lines, read as a
//! [`journal::Entry`](Entry) (an entry that reads writes and reads back the same), and each line
//! read as a journaled task ([`Journaled`], one line of what `Replay::save` writes); the
//! tasks that read are replayed against the trip planner ([`Replay::check`]), within 10 s.
//! Complements the proptest properties of `a2a-card/src/journal.rs` from raw bytes.

use std::time::Duration;

use a2a_card::journal::Entry;
use a2a_card::server::Server;
use a2a_card::testing::{Journaled, Replay, Verdict};

use super::runtime;

/// Bytes read as journal rows and journaled tasks, and replayed.
pub fn journal(data: &[u8]) {
    entry(data);
    let mut tasks = Vec::new();
    for line in data.split(|b| *b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        entry(line);
        match serde_json::from_slice::<Journaled>(line) {
            Ok(task) => tasks.push(task),
            Err(e) => crate::feedback(&e.to_string().chars().take(32).collect::<String>()),
        }
    }
    if tasks.is_empty() {
        return;
    }
    let planner = examples::trip_planner::agent::TripPlanner {
        pace: Duration::ZERO,
    };
    let report = runtime().block_on(async {
        tokio::time::timeout(
            Duration::from_secs(10),
            Replay::new(tasks).check(Server::new(planner)),
        )
        .await
        .unwrap_or_else(|_| panic!("a replay did not end within 10 s"))
    });
    let report = report.unwrap_or_else(|e| panic!("the replay checker did not start: {e}"));
    for task in report.tasks() {
        crate::feedback(&task.skill);
        match &task.verdict {
            Verdict::Replays { entries, next, .. } => {
                crate::feedback(&format!("replays {} {next:?}", entries.min(&4)));
            }
            Verdict::Diverges { why, .. } => {
                crate::feedback(&why.chars().take(32).collect::<String>());
            }
            Verdict::NotRun(why) => crate::feedback(&why.chars().take(32).collect::<String>()),
            _ => crate::feedback("another verdict"),
        }
    }
}

/// `row` read as an entry; one that reads writes and reads back the same.
fn entry(row: &[u8]) {
    let Ok(entry) = serde_json::from_slice::<Entry>(row) else {
        crate::feedback("no entry");
        return;
    };
    let written = serde_json::to_vec(&entry)
        .unwrap_or_else(|e| panic!("an entry read does not write: {e}: {entry:?}"));
    let again = serde_json::from_slice::<Entry>(&written).unwrap_or_else(|e| {
        panic!(
            "an entry written does not read back: {e}: {}",
            String::from_utf8_lossy(&written)
        )
    });
    assert_eq!(again, entry, "an entry read back differs");
    let kind = serde_json::to_value(&entry)
        .ok()
        .and_then(|v| v.as_object().and_then(|m| m.keys().next().cloned()))
        .unwrap_or_default();
    crate::feedback(&kind);
}
