//! Property tests that stand in for fuzzing the decoders a peer's bytes reach on a served
//! agent: the JSON-RPC endpoint (1.0 and 0.3), HTTP+JSON's send and push-config routes, and the
//! MCP endpoint, each given valid requests with one part of them replaced by any JSON, and
//! bytes of any kind. Every request is answered (no panic, no hang), with a status below 500
//! and, where the answer is JSON, JSON; and the agent keeps serving a valid request after.
//!
//! Each property runs a fixed number of cases (`DECODER_CASES=N` runs more) through the
//! router in this process (`tower::ServiceExt::oneshot`, no socket), and writes no regression
//! files.

use std::time::Duration;

use a2a_card::server::Server;
use axum::body::Body;
use axum::http::Request;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};
use tower::ServiceExt as _;

use crate::fight_club::agent as fight_club;

const MESSAGE: &str = r#"{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"a":"Lion","b":"Tiger"},"mediaType":"application/json;schema=fightComparison"}]}"#;

/// The valid requests mutated: (path, A2A version header, body).
fn seeds() -> Vec<(&'static str, &'static str, Value)> {
    let message: Value = serde_json::from_str(MESSAGE).expect("the message");
    let rpc = |method: &str, params: Value| json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    vec![
        ("/", "1.0", rpc("SendMessage", json!({"message": message}))),
        (
            "/",
            "1.0",
            rpc("SendStreamingMessage", json!({"message": message})),
        ),
        (
            "/",
            "1.0",
            rpc("GetTask", json!({"id": "t-1", "historyLength": 2})),
        ),
        (
            "/",
            "1.0",
            rpc(
                "ListTasks",
                json!({"pageSize": 5, "status": "TASK_STATE_WORKING"}),
            ),
        ),
        ("/", "1.0", rpc("CancelTask", json!({"id": "t-1"}))),
        (
            "/",
            "1.0",
            rpc(
                "CreateTaskPushNotificationConfig",
                json!({"taskId": "t-1", "id": "c-1", "url": "https://hooks.example/a2a"}),
            ),
        ),
        (
            "/",
            "0.3",
            json!({"jsonrpc": "2.0", "id": "x", "method": "message/send",
                   "params": {"message": {"kind": "message", "messageId": "m1", "role": "user",
                              "parts": [{"kind": "data", "data": {"a": "Lion", "b": "Tiger"},
                                         "metadata": {"mediaType": "application/json;schema=fightComparison"}}]}}}),
        ),
        ("/message:send", "1.0", json!({"message": message})),
        (
            "/tasks/t-1/pushNotificationConfigs",
            "1.0",
            json!({"taskId": "t-1", "id": "c-1", "url": "https://hooks.example/a2a"}),
        ),
        (
            "/mcp",
            "1.0",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "fight-comparison", "arguments": {"a": "Lion", "b": "Tiger"}}}),
        ),
        (
            "/mcp",
            "1.0",
            json!({"jsonrpc": "2.0", "id": 2, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "t", "version": "1"}}}),
        ),
    ]
}

/// Any JSON value, a few levels deep.
fn any_json() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-zA-Z0-9_:/;=.-]{0,12}".prop_map(Value::String),
        "\\PC{0,16}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z]{1,10}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
    .boxed()
}

/// Every place in `value` (a pointer to it), the root first.
fn places(value: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                places(
                    v,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                places(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// A body: seed `seed` with the part at its `place`-th pointer (modulo their count) replaced
/// by `with`, or that part removed (`remove`).
fn mutated(seed: &Value, place: usize, with: Value, remove: bool) -> Vec<u8> {
    let mut all = Vec::new();
    places(seed, String::new(), &mut all);
    let pointer = &all[place % all.len()];
    let mut body = seed.clone();
    if pointer.is_empty() {
        body = with;
    } else if remove {
        let (parent, key) = pointer.rsplit_once('/').expect("a child");
        match body.pointer_mut(parent) {
            Some(Value::Object(map)) => {
                map.remove(&key.replace("~1", "/").replace("~0", "~"));
            }
            Some(Value::Array(items)) => {
                if let Ok(i) = key.parse::<usize>() {
                    items.remove(i);
                }
            }
            _ => {}
        }
    } else if let Some(slot) = body.pointer_mut(pointer) {
        *slot = with;
    }
    serde_json::to_vec(&body).expect("JSON")
}

/// Sends `body` to `path` of `app` and checks the answer: given within 10 s, below 500, JSON
/// where it says so, and read whole (a stream to its end) within 10 s.
async fn answered(
    app: &axum::Router,
    path: &str,
    version: &str,
    body: Vec<u8>,
) -> Result<(), TestCaseError> {
    let request = Request::post(path)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("a2a-version", version)
        .header("content-length", body.len())
        .body(Body::from(body))
        .expect("a request");
    let answer = tokio::time::timeout(Duration::from_secs(10), app.clone().oneshot(request))
        .await
        .map_err(|_| TestCaseError::fail(format!("{path}: no answer within 10 s")))?
        .expect("the router answers");
    let status = answer.status();
    let json = answer
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let bytes = tokio::time::timeout(
        Duration::from_secs(10),
        axum::body::to_bytes(answer.into_body(), 1 << 24),
    )
    .await
    .map_err(|_| TestCaseError::fail(format!("{path}: the answer's body did not end")))?
    .map_err(|e| TestCaseError::fail(format!("{path}: the body: {e}")))?;
    prop_assert!(
        status.as_u16() < 500,
        "{path}: {status}: {}",
        String::from_utf8_lossy(&bytes)
    );
    if json && !bytes.is_empty() {
        prop_assert!(
            serde_json::from_slice::<Value>(&bytes).is_ok(),
            "{path}: an answer said to be JSON is not: {}",
            String::from_utf8_lossy(&bytes)
        );
    }
    Ok(())
}

fn cases(default: u32) -> u32 {
    std::env::var("DECODER_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// Runs `strategy`'s cases through `check` on a runtime of their own (proptest's runner is
/// synchronous; the router's futures run on it).
fn run<S: Strategy>(
    n: u32,
    strategy: S,
    check: impl Fn(&tokio::runtime::Runtime, &axum::Router, S::Value) -> Result<(), TestCaseError>,
) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let app = runtime.block_on(async {
        Server::new(fight_club::FightClub)
            .mcp(true)
            .router()
            .await
            .expect("the router")
    });
    let mut runner = TestRunner::new(Config {
        cases: cases(n),
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&strategy, |value| check(&runtime, &app, value))
        .unwrap_or_else(|e| panic!("{e}"));
    // Still serving: a valid send is answered with its task.
    let (path, version, seed) = seeds().remove(0);
    let body = serde_json::to_vec(&seed).expect("JSON");
    runtime
        .block_on(answered(&app, path, version, body))
        .expect("a valid send after the cases");
}

#[test]
fn valid_requests_with_one_part_replaced_or_removed_are_answered_below_500() {
    let seeds = seeds();
    let strategy = (0..seeds.len(), any::<usize>(), any_json(), any::<bool>());
    run(
        512,
        strategy,
        |runtime, app, (seed, place, with, remove)| {
            let (path, version, value) = &seeds[seed];
            let body = mutated(value, place, with, remove);
            runtime.block_on(answered(app, path, version, body))
        },
    );
}

#[test]
fn bytes_of_any_kind_are_answered_below_500() {
    let paths = [
        "/",
        "/message:send",
        "/tasks/t-1/pushNotificationConfigs",
        "/mcp",
    ];
    let strategy = (
        0..paths.len(),
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..256),
            "\\PC{0,128}".prop_map(String::into_bytes),
        ],
    );
    run(256, strategy, |runtime, app, (path, bytes)| {
        runtime.block_on(answered(app, paths[path], "1.0", bytes))
    });
}
