//! Journals read back from a store are outside bytes: whatever rows a store holds, reading them
//! and replaying against them never panics (property tests standing in for fuzzing).

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn any_json() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-z]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("step".to_owned()),
                    Just("started".to_owned()),
                    Just("sleep".to_owned()),
                    Just("patched".to_owned()),
                    Just("value".to_owned()),
                    Just("call".to_owned()),
                    Just("returned".to_owned()),
                    Just("begin".to_owned()),
                    Just("answer".to_owned()),
                    "[a-z]{1,6}",
                ],
                inner,
                0..3
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
    .boxed()
}

/// A number as a store gives it back (a non-negative `i64`), near the places the journal
/// numbers from.
fn number() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..8,
        (0u64..8).prop_map(|n| MARKS + n),
        (0u64..8).prop_map(|n| STARTS + n),
        0..=i64::MAX as u64,
    ]
}

/// What a handler does on a replay.
#[derive(Debug, Clone)]
enum Did {
    Step(String),
    Sleep(i64),
    Patched(String),
    Answer,
    #[cfg(feature = "client")]
    Call(String),
}

fn did() -> impl Strategy<Value = Did> {
    let name = prop_oneof![Just("a".to_owned()), Just("b".to_owned()), "[a-z]{1,3}"];
    prop_oneof![
        name.clone().prop_map(Did::Step),
        any::<i64>().prop_map(Did::Sleep),
        name.clone().prop_map(Did::Patched),
        Just(Did::Answer),
        #[cfg(feature = "client")]
        name.prop_map(Did::Call),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_row_of_any_json_reads_as_an_entry_or_an_error_and_an_entry_reads_back_the_same(
        value in any_json()
    ) {
        if let Ok(entry) = serde_json::from_value::<Entry>(value) {
            let again = serde_json::to_value(&entry).unwrap();
            prop_assert_eq!(serde_json::from_value::<Entry>(again).unwrap(), entry);
        }
    }

    #[test]
    fn a_replay_against_any_journal_never_panics(
        rows in prop::collection::vec((number(), any_json()), 0..8),
        done in prop::collection::vec(did(), 0..12),
    ) {
        let recorded = rows
            .into_iter()
            .filter_map(|(n, v)| Some((n, Recorded::Entry(serde_json::from_value::<Entry>(v).ok()?))))
            .collect::<Vec<(u64, Recorded<String>)>>();
        let journal = Journal::new(recorded, Box::new(|_, _, _| Box::pin(async { Ok(()) })));
        for did in done {
            match did {
                Did::Step(name) => {
                    if let Ok(Slot::Free(n) | Slot::Again(n)) = journal.step(&name) {
                        journal.stepped(n, &name, Value::Null);
                    }
                }
                Did::Sleep(ms) => drop(journal.sleep(1_000, ms)),
                Did::Patched(name) => drop(journal.patched(&name)),
                Did::Answer => drop(journal.answer()),
                #[cfg(feature = "client")]
                Did::Call(skill) => drop(journal.call(&skill).map(|_| ())),
            }
        }
    }
}
