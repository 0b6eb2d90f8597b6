//! A durable task's journal, as its task's page shows it: each entry in the order the handler
//! made it (steps with how long they took, sleeps with their deadlines, answers, calls of
//! other agents with what they returned), steps begun and not finished, markers, and the
//! entry a replay diverged at.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use a2a::{Message, PartContent};
use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{cut, esc, when};
use crate::journal::{Entry, MARKS, STARTS};

/// `ms` milliseconds as an operator reads them: `840 ms`, `2.4 s`, `3 min 5 s`, `2 h 10 min`.
pub(super) fn duration(ms: i64) -> String {
    match ms {
        ..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", ms as f64 / 1_000.0),
        60_000..3_600_000 => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1_000),
        _ => format!("{} h {} min", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

/// A durable task's journal: its entries in the order the handler made them, steps begun
/// and not finished among them, markers after; how long each step took, where the store
/// kept when its start and its result were `written` (entry number to milliseconds since the
/// Unix epoch).
pub(super) fn journal_section(
    out: &mut String,
    journal: &[(u64, Entry)],
    written: &BTreeMap<u64, i64>,
    diverged: Option<u64>,
    now: DateTime<Utc>,
) {
    let entries: BTreeMap<u64, &Entry> = journal.iter().map(|(n, e)| (*n, e)).collect();
    // The steps begun, by the number their result is written at.
    let started: BTreeMap<u64, &str> = entries
        .range(STARTS..)
        .filter_map(|(n, e)| match e {
            Entry::Started { started } => Some((n - STARTS, started.as_str())),
            _ => None,
        })
        .collect();
    let mut rows: Vec<(u64, String, String, &'static str)> = Vec::new();
    for (n, entry) in entries.range(..MARKS) {
        let (what, detail, class) = match entry {
            Entry::Begin { begin } => {
                let mut d = format!("skill <code>{}</code>", esc(&begin.skill));
                if let Some(v) = &begin.version {
                    let _ = write!(d, ", version <code>{}</code>", esc(v));
                }
                if let Some(p) = &begin.principal {
                    let _ = write!(d, ", caller <code>{}</code>", esc(p.subject()));
                }
                if let Some(t) = &begin.tenant {
                    let _ = write!(d, ", tenant <code>{}</code>", esc(t));
                }
                if let Some(ms) = begin.deadline_ms
                    && let Some(at) = DateTime::<Utc>::from_timestamp_millis(ms)
                {
                    let _ = write!(d, ", deadline {}", when(at, now));
                }
                if let Some(tokens) = begin.tokens {
                    let _ = write!(d, ", {tokens} model tokens");
                }
                ("began".to_owned(), d, "begin")
            }
            Entry::Step { name, value } => {
                let begun = if started.contains_key(n) {
                    "begun, then finished"
                } else {
                    "finished"
                };
                // From the start's write (before the body ran; the first run's, when a stop
                // made it run again) to the result's.
                let took = match (written.get(&(n + STARTS)), written.get(n)) {
                    (Some(start), Some(end)) if end >= start => {
                        format!(" in <span class=\"took\">{}</span>", duration(end - start))
                    }
                    _ => String::new(),
                };
                (
                    format!("step <code>{}</code>", esc(name)),
                    format!(
                        "{begun}{took}; result <code class=\"json\">{}</code>",
                        esc(&cut(&value.to_string(), 200))
                    ),
                    "step",
                )
            }
            Entry::Sleep { until_ms } => {
                let at = DateTime::<Utc>::from_timestamp_millis(*until_ms);
                let passed = at.is_some_and(|at| at <= now);
                (
                    "sleep".to_owned(),
                    format!(
                        "until {}{}",
                        at.map(|at| when(at, now))
                            .unwrap_or_else(|| until_ms.to_string()),
                        if passed { " (passed)" } else { " (ahead)" }
                    ),
                    "sleep",
                )
            }
            Entry::Answer { message } => (
                "answer".to_owned(),
                esc(&cut(&answer_text(message), 200)),
                "answer",
            ),
            Entry::Call { call } => (
                format!("call of <code>{}</code>", esc(&call.skill)),
                format!(
                    "at <code>{}</code>; remote task <code class=\"remote-task\">{}</code> (context <code>{}</code>)",
                    esc(&call.agent),
                    esc(&call.task),
                    esc(&call.context)
                ),
                "call",
            ),
            Entry::Returned { returned } => (
                "call returned".to_owned(),
                esc(&returned_text(returned)),
                "returned",
            ),
            Entry::Patched { name, value } => (
                format!("marker <code>{}</code>", esc(name)),
                format!("said {value}"),
                "marker",
            ),
            Entry::Started { started } => (
                format!("step <code>{}</code>", esc(started)),
                "begun".to_owned(),
                "started",
            ),
        };
        rows.push((*n, what, detail, class));
    }
    for (n, name) in &started {
        if !entries.contains_key(n) {
            rows.push((
                *n,
                format!("step <code>{}</code>", esc(name)),
                "begun, not finished: its body may have run, and runs again on the task's next run"
                    .to_owned(),
                "unfinished",
            ));
        }
    }
    rows.sort_by_key(|(n, ..)| *n);
    for (n, entry) in entries.range(MARKS..STARTS) {
        if let Entry::Patched { name, value } = entry {
            rows.push((
                *n,
                format!("marker <code>{}</code>", esc(name)),
                format!(
                    "said {value} (code after it runs {})",
                    if *value { "the new way" } else { "the old way" }
                ),
                "marker",
            ));
        }
    }
    out.push_str(
        "<section aria-labelledby=\"journal\"><h2 id=\"journal\">Journal</h2>\
         <p class=\"hint\">What the durable handler did, as its journal keeps it: a run after a stop replays these instead of doing them again.</p>\
         <table class=\"journal\"><thead><tr><th scope=\"col\">#</th><th scope=\"col\">Entry</th><th scope=\"col\">Detail</th></tr></thead><tbody>",
    );
    for (n, what, detail, class) in rows {
        let shown = if n >= MARKS {
            "marker".to_owned()
        } else {
            n.to_string()
        };
        let here = diverged == Some(n);
        let _ = write!(
            out,
            "<tr class=\"entry {class}{}\" data-entry=\"{n}\"><td>{shown}</td><td>{what}</td><td>{detail}{}</td></tr>",
            if here { " diverged" } else { "" },
            if here {
                " <strong class=\"flag\">⟵ the replay diverged here</strong>"
            } else {
                ""
            }
        );
    }
    out.push_str("</tbody></table></section>");
}

/// The text of an answer entry's message.
fn answer_text(message: &Message) -> String {
    let mut parts = Vec::new();
    for p in &message.parts {
        match &p.content {
            PartContent::Text(t) => parts.push(t.clone()),
            PartContent::Data(d) => parts.push(d.to_string()),
            _ => parts.push("(a file)".to_owned()),
        }
    }
    parts.join(" ")
}

/// What a call's answer says: the state of the task it made, its message, or why it failed.
pub(super) fn returned_text(returned: &Value) -> String {
    if let Some(error) = returned.get("error") {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("no message");
        return format!("failed: {message}");
    }
    if let Some(task) = returned.get("task") {
        let state = task
            .pointer("/status/state")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .trim_start_matches("TASK_STATE_")
            .to_lowercase()
            .replace('_', "-");
        return format!("its task is {state}");
    }
    if returned.get("message").is_some() {
        return "a message".to_owned();
    }
    cut(&returned.to_string(), 200)
}
