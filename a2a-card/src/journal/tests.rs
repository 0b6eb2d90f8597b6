//! Tests of the journal: recorded steps returned and new ones written at their numbers, steps
//! begun and not finished run again, markers, sleeps' deadlines, and a replay that differs.

use std::sync::{Arc, Mutex};

use serde_json::json;

use super::*;

/// The entries a test's journal wrote.
type Written = Arc<Mutex<Vec<(u64, Entry)>>>;

fn journal_of(recorded: Vec<(u64, Entry)>) -> (Journal<String>, Written) {
    let written = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&written);
    let journal = Journal::new(
        recorded
            .into_iter()
            .map(|(n, e)| (n, Recorded::Entry(e)))
            .collect(),
        Box::new(move |n, v, _| {
            sink.lock().unwrap().push((n, v));
            Box::pin(async { Ok(()) })
        }),
    );
    (journal, written)
}

fn step(name: &str, value: Value) -> Entry {
    Entry::Step {
        name: name.into(),
        value,
    }
}

fn patched(name: &str, value: bool) -> Entry {
    Entry::Patched {
        name: name.into(),
        value,
    }
}

#[test]
#[cfg(feature = "server")]
fn each_kind_of_entry_is_kept_as_the_json_object_its_key_names() {
    let message = a2a::Message::new(a2a::Role::User, vec![a2a::Part::text("12 May")]);
    let begin = Begin {
        skill: "plan".into(),
        version: Some("2".into()),
        tenant: Some("acme".into()),
        ..Begin::default()
    };
    let cases = [
        (
            Entry::Begin {
                begin: Box::new(begin),
            },
            "begin",
        ),
        (step("charge", json!({"receipt": 7})), "step"),
        (Entry::Sleep { until_ms: 5 }, "sleep"),
        (
            Entry::Answer {
                message: Box::new(message),
            },
            "answer",
        ),
        (patched("tax", true), "patched"),
        (
            Entry::Started {
                started: "charge".into(),
            },
            "started",
        ),
    ];
    for (entry, key) in cases {
        let json = serde_json::to_value(&entry).unwrap();
        assert!(json.get(key).is_some(), "{key}: {json}");
        assert_eq!(serde_json::from_value::<Entry>(json).unwrap(), entry);
    }
    // Written by earlier releases: fields they did not write take their defaults.
    let old: Entry = serde_json::from_str(r#"{"begin": {"skill": "plan"}}"#).unwrap();
    assert!(
        matches!(old, Entry::Begin { begin } if begin.skill == "plan" && begin.trace.is_empty())
    );
    assert!(serde_json::from_str::<Entry>(r#"{"nap": 5}"#).is_err());
}

#[test]
fn a_recorded_step_is_returned_and_a_new_one_written_at_its_number() {
    let (journal, written) = journal_of(vec![(1, step("charge", json!({"receipt": 7})))]);
    let Ok(Slot::Recorded(value)) = journal.step("charge") else {
        panic!("recorded")
    };
    assert_eq!(value, json!({"receipt": 7}));
    let Ok(Slot::Free(n)) = journal.step("ship") else {
        panic!("new")
    };
    journal.stepped(n, "ship", json!("done"));
    assert_eq!(
        *written.lock().unwrap(),
        vec![(2, step("ship", json!("done")))]
    );
    assert_eq!(
        serde_json::from_value::<Entry>(json!({"step": "ship", "value": "done"})).unwrap(),
        step("ship", json!("done"))
    );
}

#[test]
fn steps_run_at_once_keep_the_numbers_they_began_with() {
    // Begun a, b; b finished first: each is written at its own number.
    let (journal, written) = journal_of(Vec::new());
    let (Ok(Slot::Free(a)), Ok(Slot::Free(b))) = (journal.step("a"), journal.step("b")) else {
        panic!("new")
    };
    journal.stepped(b, "b", json!(2));
    journal.stepped(a, "a", json!(1));
    let written = written.lock().unwrap().clone();
    assert_eq!(
        written,
        vec![(2, step("b", json!(2))), (1, step("a", json!(1)))]
    );
    // Replayed, begun in the same order: each gets its own result back.
    let (again, _) = journal_of(written);
    let (Ok(Slot::Recorded(x)), Ok(Slot::Recorded(y))) = (again.step("a"), again.step("b")) else {
        panic!("recorded")
    };
    assert_eq!((x, y), (json!(1), json!(2)));
}

#[test]
fn a_number_taken_and_never_written_is_a_step_that_runs_again() {
    let (journal, _) = journal_of(vec![(2, step("b", json!(2)))]);
    assert!(matches!(journal.step("a"), Ok(Slot::Free(1))));
    assert!(matches!(journal.step("b"), Ok(Slot::Recorded(_))));
}

fn started(name: &str) -> Entry {
    Entry::Started {
        started: name.into(),
    }
}

#[test]
fn a_new_step_writes_its_start_before_its_body_apart_from_the_results() {
    let (journal, written) = journal_of(Vec::new());
    let Ok(Slot::Free(n)) = journal.step("charge") else {
        panic!("new")
    };
    let start = futures::FutureExt::now_or_never(journal.start(n, "charge"));
    assert_eq!(start, Some(Ok(())), "written at once by the test's sink");
    journal.stepped(n, "charge", json!(7));
    let written = written.lock().unwrap().clone();
    assert_eq!(
        written,
        vec![
            (STARTS + 1, started("charge")),
            (1, step("charge", json!(7)))
        ]
    );
    // Replayed: the result stands for the start.
    let (again, _) = journal_of(written);
    assert!(matches!(again.step("charge"), Ok(Slot::Recorded(_))));
    assert!(
        again.patched("tax"),
        "past what the journal holds: new work"
    );
}

#[test]
fn a_step_begun_and_not_finished_runs_again_and_a_marker_before_it_is_old_work() {
    let recorded = vec![(1, step("charge", json!(1))), (STARTS + 2, started("ship"))];
    let (old, written) = journal_of(recorded.clone());
    assert!(matches!(old.step("charge"), Ok(Slot::Recorded(_))));
    // The old code was inside `ship`: a marker put before it says so.
    assert!(!old.patched("faster"));
    assert!(matches!(old.step("ship"), Ok(Slot::Again(2))));
    assert_eq!(
        *written.lock().unwrap(),
        vec![(MARKS, patched("faster", false))]
    );
    // Another step where the old code began `ship`: the replay diverged, and says that
    // `ship`'s body may have run.
    let (changed, _) = journal_of(recorded);
    assert!(matches!(changed.step("charge"), Ok(Slot::Recorded(_))));
    let Err(Diverged(why)) = changed.step("ship-v2") else {
        panic!("diverged")
    };
    assert!(
        why.contains("entry 2 is step `ship`, begun and not finished")
            && why.contains("step `ship-v2`"),
        "{why}"
    );
    // A sleep there is no step either.
    let (slept, _) = journal_of(vec![(STARTS + 1, started("ship"))]);
    assert!(slept.sleep(0, 5).is_err());
}

#[test]
fn a_replay_that_differs_says_which_entry_and_what_it_was() {
    let (journal, _) = journal_of(vec![(1, Entry::Sleep { until_ms: 5 })]);
    let Err(Diverged(why)) = journal.step("charge") else {
        panic!("a failure")
    };
    assert!(why.contains("entry 1 is a sleep"), "{why}");
    assert!(why.contains("step `charge`"), "{why}");
    let (journal, _) = journal_of(vec![(1, step("charge", Value::Null))]);
    let Err(Diverged(why)) = journal.step("refund") else {
        panic!("a failure")
    };
    assert!(
        why.contains("step `charge`") && why.contains("step `refund`"),
        "{why}"
    );
}

#[test]
fn a_marker_is_true_for_new_work_false_in_a_replay_and_kept() {
    // A task begun with the marker: true, written apart from the steps' numbers.
    let (journal, written) = journal_of(Vec::new());
    assert!(journal.patched("tax"));
    assert!(matches!(journal.step("charge"), Ok(Slot::Free(1))));
    let written = written.lock().unwrap().clone();
    assert_eq!(written, vec![(MARKS, patched("tax", true))]);
    // Run again after its process stopped: the recorded answer, whatever the replay.
    let recorded = vec![(1, step("charge", json!(1))), written[0].clone()];
    let (again, more) = journal_of(recorded);
    assert!(again.patched("tax"));
    assert!(more.lock().unwrap().is_empty(), "nothing written again");
    // A task begun before the marker, replayed: false, and so it stays; a marker met
    // past what the journal holds: true.
    let (old, written) = journal_of(vec![(1, step("charge", json!(1)))]);
    assert!(!old.patched("tax"));
    assert!(!old.patched("tax"));
    assert!(matches!(old.step("charge"), Ok(Slot::Recorded(_))));
    assert!(old.patched("ship"));
    assert_eq!(
        *written.lock().unwrap(),
        vec![
            (MARKS, patched("tax", false)),
            (MARKS + 1, patched("ship", true))
        ]
    );
}

#[test]
fn a_marker_met_before_the_replay_sent_its_items_again_is_in_the_replay() {
    // A streaming task begun before the marker: its journal ends at its step, but its log
    // holds two items it sent after it. Met before they are sent again: false.
    let (old, _) = journal_of(vec![(1, step("hold", json!(null)))]);
    let old = old.replaying(2);
    assert!(matches!(old.step("hold"), Ok(Slot::Recorded(_))));
    old.sent();
    assert!(!old.patched("confirm"), "one item of two sent again");
    // Met once both are sent again: the old code did nothing more there, new work.
    let (old, _) = journal_of(vec![(1, step("hold", json!(null)))]);
    let old = old.replaying(2);
    assert!(matches!(old.step("hold"), Ok(Slot::Recorded(_))));
    old.sent();
    old.sent();
    assert!(old.patched("confirm"));
}

#[test]
#[cfg(feature = "client")]
fn a_call_takes_two_numbers_the_task_it_made_and_its_answer() {
    let made = || RemoteCall::new("http://hotels/card", "hold", "t-1", "c-1");
    // New: numbers 1 and 2; a step after it takes 3.
    let (journal, _) = journal_of(Vec::new());
    assert!(matches!(journal.call("hold"), Ok(CallSlot::Free(1, 2))));
    assert!(matches!(journal.step("pay"), Ok(Slot::Free(3))));
    // The task recorded, not its answer: followed, its answer written at the second.
    let call = Entry::Call {
        call: Box::new(made()),
    };
    let (journal, written) = journal_of(vec![(1, call.clone())]);
    let Ok(CallSlot::Made(task, 2)) = journal.call("hold") else {
        panic!("made")
    };
    assert_eq!(task, made());
    journal.returned(2, json!({"task": {"id": "t-1"}}));
    let returned = Entry::Returned {
        returned: json!({"task": {"id": "t-1"}}),
    };
    assert_eq!(*written.lock().unwrap(), vec![(2, returned.clone())]);
    // Answered at once (no task to follow), or the task's entry not kept: the answer.
    let (journal, _) = journal_of(vec![(2, returned.clone())]);
    assert!(matches!(journal.call("hold"), Ok(CallSlot::Returned(_))));
    // Both recorded: the answer, nothing sent.
    let (journal, _) = journal_of(vec![(1, call.clone()), (2, returned)]);
    assert!(matches!(journal.call("hold"), Ok(CallSlot::Returned(_))));
    // Another skill called where the journal has this one: the replay diverged.
    let (journal, _) = journal_of(vec![(1, call)]);
    let Err(Diverged(why)) = journal.call("cancel") else {
        panic!("diverged")
    };
    assert!(
        why.contains("a call of skill `hold`") && why.contains("a call of skill `cancel`"),
        "{why}"
    );
    // The entries read back as they were written.
    let json = json!({"call": {"agent": "http://hotels/card", "skill": "hold", "task": "t-1", "context": "c-1"}});
    assert_eq!(
        serde_json::from_value::<Entry>(json).unwrap(),
        Entry::Call {
            call: Box::new(made())
        }
    );
}

#[test]
fn a_sleep_keeps_its_recorded_deadline() {
    let (journal, written) = journal_of(vec![(1, Entry::Sleep { until_ms: 1_000 })]);
    assert_eq!(journal.sleep(5_000, 60_000).unwrap(), 1_000);
    assert_eq!(journal.sleep(5_000, 60_000).unwrap(), 65_000);
    assert_eq!(
        *written.lock().unwrap(),
        vec![(2, Entry::Sleep { until_ms: 65_000 })]
    );
}
