//! JSON-RPC request bodies posted to the trip planner's endpoint (`/`), as A2A 1.0 and, with
//! `A2A-Version: 0.3`, through the 0.3 translation. Each answer: within 10 s, below 500, JSON
//! where it says so, and every JSON-RPC response in it well formed (`jsonrpc: "2.0"`, one of
//! `result` and `error`, an integer error code).

use serde_json::{Value, json};

use super::{Answer, check_answer, feedback_rpc, planner, post};

/// A body posted as A2A 1.0.
pub fn jsonrpc(data: &[u8]) {
    send(data, "1.0");
}

/// A body posted with `A2A-Version: 0.3`.
pub fn jsonrpc_v0_3(data: &[u8]) {
    send(data, "0.3");
}

fn send(data: &[u8], version: &str) {
    let Some(answer) = post(planner(), "/", &[("a2a-version", version)], data.to_vec()) else {
        return;
    };
    check_answer("/", &answer);
    check_rpc(&answer);
    feedback_rpc(&answer);
}

/// Every JSON-RPC response in `answer` is well formed.
pub fn check_rpc(answer: &Answer) {
    for message in answer.messages() {
        let Value::Object(map) = &message else {
            continue;
        };
        assert_eq!(
            map.get("jsonrpc"),
            Some(&json!("2.0")),
            "a JSON-RPC answer without `jsonrpc: \"2.0\"`: {message}"
        );
        assert!(
            map.contains_key("result") != map.contains_key("error"),
            "a JSON-RPC answer needs exactly one of `result` and `error`: {message}"
        );
        if let Some(error) = map.get("error") {
            assert!(
                error.get("code").is_some_and(Value::is_i64),
                "a JSON-RPC error without an integer code: {message}"
            );
        }
    }
}

/// A valid `SendMessage` that plans a one-day trip.
pub const VALID_SEND: &str = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"alive","role":"ROLE_USER","parts":[{"data":{"destination":"Lisbon","days":1,"start_date":"2026-12-01"},"mediaType":"application/json;schema=tripRequest"}]}}}"#;

/// The trip planner still plans a trip asked for in a valid request.
pub fn alive() {
    let answer = post(planner(), "/", &[("a2a-version", "1.0")], VALID_SEND.into())
        .expect("a valid request");
    assert_eq!(
        answer.status,
        200,
        "a valid SendMessage after the inputs: {}",
        String::from_utf8_lossy(&answer.body)
    );
    let json = answer.json().expect("a JSON answer to a valid SendMessage");
    assert!(
        json.pointer("/result/task/id").is_some(),
        "a valid SendMessage after the inputs gets no task: {json}"
    );
}
