//! Every branch of the input/output schemas extension's flow (section 3), for 1.0 and 0.3
//! messages.

use crate::fight_club::agent as fight_club;

use a2a_card::__private::CallInput;
use a2a_card::dispatch::{Decision, DispatchError, Dispatcher, MAX_DETAIL_LEN, MAX_VIOLATIONS};
use a2a_card::{Schema, agent, skill};
use fight_club::FightClub;
use proptest::prelude::*;
use serde_json::{Value, json};

fn dispatcher() -> Dispatcher {
    Dispatcher::for_agent::<FightClub>().unwrap()
}

/// A 1.0 message with these parts.
fn v1(parts: Value) -> Value {
    json!({"role": "ROLE_USER", "messageId": "m1", "contextId": "c1", "parts": parts})
}

/// A 0.3 message with these parts.
fn v03(parts: Value) -> Value {
    json!({"kind": "message", "role": "user", "messageId": "m1", "parts": parts})
}

fn fight(a: &str, b: &str) -> Value {
    json!({"a": a, "b": b})
}

fn run(decision: Decision) -> (usize, CallInput) {
    match decision {
        Decision::Run { skill, call } => (skill, call.input),
        other => panic!("expected a run, got: {other:?}"),
    }
}

fn reject(decision: Decision) -> DispatchError {
    match decision {
        Decision::Reject(e) => e,
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[test]
fn valid_data_runs_the_skill_that_takes_its_schema_in_both_shapes() {
    let d = dispatcher();
    let modern = v1(
        json!([{"data": fight("Lion", "Tiger"), "mediaType": "application/json;schema=fightComparison"}]),
    );
    let legacy = v03(
        json!([{"kind": "data", "data": fight("Lion", "Tiger"), "metadata": {"mimeType": "application/json;schema=fightComparison"}}]),
    );
    for message in [modern, legacy] {
        assert_eq!(
            run(d.dispatch(message, None)),
            (0, CallInput::Data(fight("Lion", "Tiger")))
        );
    }
    // The extension's own example message (its messageId is a number there).
    let example: Value = serde_json::from_str(include_str!(
        "../data/fixtures/io-schemas-extension/user-message.json"
    ))
    .unwrap();
    assert_eq!(run(d.dispatch(example, None)).0, 0);
}

#[test]
fn the_mode_is_read_leniently_and_metadata_is_accepted_in_1_0() {
    let d = dispatcher();
    for mode in [
        r#"Application/JSON ; Schema="fightComparison""#,
        "application/json; schema=fightComparison",
    ] {
        let message = v1(json!([{"data": fight("a", "b"), "metadata": {"mimeType": mode}}]));
        assert_eq!(run(d.dispatch(message, None)).0, 0, "{mode}");
    }
}

#[test]
fn only_the_first_candidate_counts() {
    let d = dispatcher();
    let message = v1(json!([
        {"text": "Who wins?"},
        {"data": fight("Lion", "Tiger"), "mediaType": "application/json;schema=fightComparison"},
        {"data": {"nonsense": true}, "mediaType": "application/json;schema=fightComparison"},
        {"data": {}, "mediaType": "application/json;schema=unknown"}
    ]));
    assert_eq!(
        run(d.dispatch(message, None)),
        (0, CallInput::Data(fight("Lion", "Tiger")))
    );
    // And a first candidate that fails is not rescued by a later valid one.
    let message = v1(json!([
        {"data": {"a": 1}, "mediaType": "application/json;schema=fightComparison"},
        {"data": fight("Lion", "Tiger"), "mediaType": "application/json;schema=fightComparison"}
    ]));
    assert!(matches!(
        reject(d.dispatch(message, None)),
        DispatchError::InvalidData { .. }
    ));
}

#[test]
fn an_undeclared_schema_is_a_structured_input_error() {
    let d = dispatcher();
    for name in ["fightComparisn", "fightResponse"] {
        let mode = format!("application/json;schema={name}");
        let message = v03(json!([{"kind": "data", "data": {}, "metadata": {"mimeType": mode}}]));
        let err = reject(d.dispatch(message, None));
        assert_eq!(
            err,
            DispatchError::UndeclaredSchema {
                mode: mode.clone(),
                name: name.into()
            }
        );
        assert_eq!(err.code(), -32005);
        assert_eq!(err.data()["mode"], mode);
        assert!(err.to_string().contains(name));
    }
}

#[test]
fn invalid_data_lists_every_violation_with_paths() {
    let d = dispatcher();
    let message = v1(
        json!([{"data": {"a": 7, "c": true}, "mediaType": "application/json;schema=fightComparison"}]),
    );
    let err = reject(d.dispatch(message, None));
    assert_eq!(err.code(), -32602);
    let DispatchError::InvalidData {
        schema,
        violations,
        truncated,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(schema, "fightComparison");
    assert!(!truncated);
    let found: Vec<(&str, &str)> = violations
        .iter()
        .map(|v| (v.instance_path.as_str(), v.schema_path.as_str()))
        .collect();
    assert!(found.contains(&("/a", "/properties/a/type")), "{found:?}");
    assert!(found.contains(&("", "/required")), "{found:?}");
    assert!(found.contains(&("", "/additionalProperties")), "{found:?}");
    let data = err.data();
    assert_eq!(
        data["violations"].as_array().unwrap().len(),
        violations.len()
    );
    assert_eq!(
        data["violations"][0]["instancePath"],
        violations[0].instance_path.as_str()
    );
}

mod many {
    use super::*;

    #[derive(serde::Deserialize, schemars::JsonSchema, Schema)]
    pub struct Numbers {
        pub values: Vec<u8>,
    }

    pub struct Counter;

    /// Counts numbers; takes no text.
    #[agent(url = "https://count.example.com/a2a")]
    impl Counter {
        /// Counts a list of small numbers.
        #[skill]
        fn count(&self, numbers: Numbers) -> String {
            numbers.values.len().to_string()
        }
    }
}

#[test]
fn a_hostile_payload_cannot_make_the_error_huge() {
    let d = Dispatcher::for_agent::<many::Counter>().unwrap();
    let values: Vec<i64> = (0..10_000).map(|_| -1).collect();
    let message =
        v1(json!([{"data": {"values": values}, "mediaType": "application/json;schema=numbers"}]));
    let DispatchError::InvalidData {
        violations,
        truncated,
        ..
    } = reject(d.dispatch(message, None))
    else {
        panic!()
    };
    assert_eq!(violations.len(), MAX_VIOLATIONS);
    assert!(truncated);
    // A long message is cut too.
    let long = "k".repeat(10_000);
    let message =
        v1(json!([{"data": {"values": [long]}, "mediaType": "application/json;schema=numbers"}]));
    let err = reject(d.dispatch(message, None));
    let DispatchError::InvalidData { violations, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        violations
            .iter()
            .all(|v| v.message.len() <= MAX_DETAIL_LEN + '…'.len_utf8()),
        "{err:?}"
    );
}

#[test]
fn structured_input_on_an_existing_task_is_rejected() {
    let d = dispatcher();
    let message = v1(
        json!([{"data": fight("Lion", "Tiger"), "mediaType": "application/json;schema=fightComparison"}]),
    );
    let err = reject(d.dispatch(message, Some("task-7")));
    assert_eq!(
        err,
        DispatchError::TaskAlreadyRunning {
            task_id: "task-7".into(),
            schema: "fightComparison".into()
        }
    );
    assert_eq!(err.code(), -32602);
    assert!(err.to_string().contains("already running"));
    // Even invalid or undeclared structured input: the task is what rejects it.
    let message = v1(json!([{"data": 1, "mediaType": "application/json;schema=nope"}]));
    assert!(matches!(
        reject(d.dispatch(message, Some("t"))),
        DispatchError::TaskAlreadyRunning { .. }
    ));
}

#[test]
fn without_a_candidate_text_goes_to_the_text_skill() {
    let d = dispatcher();
    let (skill, input) = run(d.dispatch(v1(json!([{"text": "Lion vs"}, {"text": "Tiger"}])), None));
    assert_eq!(
        (skill, input),
        (0, CallInput::Text("Lion vs\nTiger".into()))
    );
    let (_, input) = run(d.dispatch(
        v03(json!([{"kind": "text", "text": "Lion vs Tiger"}])),
        None,
    ));
    assert_eq!(input, CallInput::Text("Lion vs Tiger".into()));
    // On an existing task, text is the answer to the task's question (rule 8), with the task
    // in the context.
    match d.dispatch(v1(json!([{"text": "and now?"}])), Some("t9")) {
        Decision::FollowUp(call) => {
            assert_eq!(call.context.task_id.as_deref(), Some("t9"));
            assert_eq!(call.input, CallInput::Text("and now?".into()));
        }
        other => panic!("{other:?}"),
    }
    // So is data without a schema mode.
    match d.dispatch(v1(json!([{"data": {"day": 3}}])), Some("t9")) {
        Decision::FollowUp(call) => assert_eq!(call.input, CallInput::Data(json!({"day": 3}))),
        other => panic!("{other:?}"),
    }
    // Data without a schema mode, or a text part with one, is no candidate.
    let message = v1(
        json!([{"data": fight("a", "b")}, {"text": "hi", "mediaType": "application/json;schema=fightComparison"}]),
    );
    assert_eq!(
        run(d.dispatch(message, None)).1,
        CallInput::Text("hi".into())
    );
}

#[test]
fn without_a_candidate_or_a_text_skill_the_error_is_clear() {
    let d = Dispatcher::for_agent::<many::Counter>().unwrap();
    let err = reject(d.dispatch(v1(json!([{"text": "count these"}])), None));
    assert_eq!(err, DispatchError::NoTextSkill);
    assert!(err.to_string().contains("application/json;schema=NAME"));
    let err = reject(dispatcher().dispatch(
        v1(json!([{"url": "https://x.example.com/f.pdf", "mediaType": "application/pdf"}])),
        None,
    ));
    assert_eq!(err, DispatchError::NoInput);
    assert!(matches!(
        reject(dispatcher().dispatch(json!([1]), None)),
        DispatchError::Malformed(_)
    ));
    assert!(matches!(
        reject(dispatcher().dispatch(json!({"parts": {}}), None)),
        DispatchError::Malformed(_)
    ));
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-zA-Z/;=\" ]{0,24}".prop_map(Value::from),
        Just(Value::from("application/json;schema=fightComparison")),
        Just(Value::from("data")),
        Just(Value::from("text")),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("parts".to_owned()),
                        Just("data".to_owned()),
                        Just("kind".to_owned()),
                        Just("mediaType".to_owned()),
                        Just("metadata".to_owned()),
                        Just("mimeType".to_owned()),
                        Just("text".to_owned()),
                        Just("a".to_owned()),
                        Just("b".to_owned()),
                        "[a-z]{1,6}"
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn no_message_makes_the_dispatcher_panic(message in json_value(), task in proptest::option::of("[a-z]{1,4}")) {
        let d = dispatcher();
        let decision = d.dispatch(message.clone(), task.as_deref());
        if let Decision::Reject(e) = &decision {
            prop_assert!(!e.to_string().is_empty());
            prop_assert!(e.data().is_object());
        }
        // Wrapped as a message's parts, too.
        let _ = d.dispatch(json!({"parts": [message]}), task.as_deref());
    }
}
