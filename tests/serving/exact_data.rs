//! Data arrives exactly as typed: arbitrary values of a skill's input and output types (integer
//! extremes, nested arrays, unicode, empty strings, floats) sent to the served agent come back
//! equal, over JSON-RPC 1.0, HTTP+JSON and JSON-RPC 0.3, in blocking answers, streams,
//! `GetTask`, `ListTasks` and the task's history.
//!
//! Two callers: raw HTTP with `serde_json` (any JSON client: every `i64`/`u64` is exact), and
//! the official Rust client (`a2a-client-lf`), which itself keeps a data part as a
//! `google.protobuf.Struct` (numbers as doubles) on both its sending and its reading side: it
//! can carry integers up to 2^53 only, and hands back whole numbers as doubles, so its values
//! are drawn within that range and read back with whole doubles as integers (as the server
//! reads what it sends).

use crate::fight_club::agent as fight_club;
use crate::support;

use std::sync::OnceLock;

use a2a::{PartContent, StreamResponse, Task, TaskState};
use a2a_card::server::Server;
use a2a_card::{Schema, agent, skill};
use futures::StreamExt;
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use support::client::{card, client, data_part, every_task, get, request, serve, task};

/// An entry of the ledger: every kind of value a schema types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Schema)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Any `i64`.
    pub signed: i64,
    /// Any `u64`.
    pub unsigned: u64,
    /// Any finite `f64`.
    pub ratio: f64,
    /// Any text, empty included.
    pub label: String,
    /// Nested arrays of integers.
    pub grid: Vec<Vec<i64>>,
    /// Texts.
    pub tags: Vec<String>,
}

/// What the ledger answers: the entry as the skill received it, and counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Schema)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// The entry, as received.
    pub entry: Entry,
    /// How many rows the grid has.
    pub rows: u64,
    /// How many cells it has.
    pub cells: u64,
}

fn receipt(entry: &Entry) -> Receipt {
    Receipt {
        entry: entry.clone(),
        rows: entry.grid.len() as u64,
        cells: entry.grid.iter().map(Vec::len).sum::<usize>() as u64,
    }
}

pub struct Ledger;
/// Keeps entries exactly as given.
#[agent(url = "http://127.0.0.1:9000")]
impl Ledger {
    /// Records an entry and answers with it and its counts.
    #[skill]
    fn record(&self, entry: Entry) -> Receipt {
        receipt(&entry)
    }
}

/// One runtime and one served ledger for every case.
fn ledger() -> &'static (tokio::runtime::Runtime, String) {
    static LEDGER: OnceLock<(tokio::runtime::Runtime, String)> = OnceLock::new();
    LEDGER.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let running = runtime.block_on(serve(Server::new(Ledger)));
        let base = running.base.clone();
        // Served for the whole test process.
        std::mem::forget(running);
        (runtime, base)
    })
}

const MODE: &str = "application/json;schema=entry";

/// A raw HTTP POST of `body`, its answer as JSON (or, for a stream, the `data` of each event).
async fn post(url: &str, version: Option<&str>, body: &Value) -> Vec<Value> {
    let mut request = reqwest::Client::new().post(url).json(body);
    if let Some(version) = version {
        request = request.header("A2A-Version", version);
    }
    let response = request.send().await.expect("an answer");
    let stream = response
        .headers()
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let text = response.text().await.expect("a body");
    if !stream {
        return vec![serde_json::from_str(&text).expect("a JSON answer")];
    }
    text.split("\n\n")
        .filter_map(|frame| {
            let data: String = frame
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            (!data.is_empty()).then(|| serde_json::from_str(&data).expect("a JSON event"))
        })
        .collect()
}

async fn get_json(url: &str) -> Value {
    let response = reqwest::Client::new()
        .get(url)
        .header("A2A-Version", "1.0")
        .send()
        .await
        .expect("an answer");
    serde_json::from_str(&response.text().await.expect("a body")).expect("a JSON answer")
}

/// The checks on a task (1.0 or 0.3 JSON): completed, its artifact is `receipt`, its history's
/// first message carries `entry`, each exactly as JSON (integers as integers).
fn check_task(task: &Value, entry: &Value, receipt: &Value) {
    let state = task["status"]["state"].as_str().unwrap_or_default();
    assert!(
        state == "TASK_STATE_COMPLETED" || state == "completed",
        "{task}"
    );
    assert_eq!(&task["artifacts"][0]["parts"][0]["data"], receipt, "{task}");
    assert_eq!(&task["history"][0]["parts"][0]["data"], entry, "{task}");
}

/// The artifact data of a stream's events (1.0 or 0.3 JSON-RPC, or HTTP+JSON).
fn streamed_artifacts(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .map(|e| e.get("result").unwrap_or(e))
        .filter_map(|e| e.get("artifactUpdate").or(Some(e)))
        .filter_map(|u| Some(u.get("artifact")?["parts"][0]["data"].clone()))
        .collect()
}

/// The round trips of `entry` over every binding, with raw HTTP.
async fn raw_round_trips(base: &str, entry: &Entry) {
    let sent = serde_json::to_value(entry).expect("an entry is JSON");
    let expected = serde_json::to_value(receipt(entry)).expect("a receipt is JSON");
    let message = json!({"messageId": "m", "role": "ROLE_USER",
        "parts": [{"data": sent, "mediaType": MODE}]});
    let rpc = |method: &str, params: Value| json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});

    // JSON-RPC 1.0: blocking, GetTask, ListTasks, stream.
    let answer = &post(
        base,
        Some("1.0"),
        &rpc("SendMessage", json!({"message": message})),
    )
    .await[0];
    let sent_task = &answer["result"]["task"];
    check_task(sent_task, &sent, &expected);
    let id = sent_task["id"].as_str().expect("a task id");
    let got = &post(base, Some("1.0"), &rpc("GetTask", json!({"id": id}))).await[0];
    check_task(&got["result"], &sent, &expected);
    let context = sent_task["contextId"].as_str().expect("a context id");
    let listed = &post(
        base,
        Some("1.0"),
        &rpc("ListTasks", json!({"contextId": context})),
    )
    .await[0];
    let found = listed["result"]["tasks"]
        .as_array()
        .and_then(|tasks| tasks.iter().find(|t| t["id"] == id))
        .unwrap_or_else(|| panic!("task {id} listed: {listed}"));
    assert_eq!(&found["artifacts"][0]["parts"][0]["data"], &expected);
    let events = post(
        base,
        Some("1.0"),
        &rpc("SendStreamingMessage", json!({"message": message})),
    )
    .await;
    assert!(
        streamed_artifacts(&events).contains(&expected),
        "{events:?}"
    );

    // HTTP+JSON.
    let answer = &post(
        &format!("{base}/message:send"),
        Some("1.0"),
        &json!({"message": message}),
    )
    .await[0];
    check_task(&answer["task"], &sent, &expected);
    let id = answer["task"]["id"].as_str().expect("a task id");
    check_task(
        &get_json(&format!("{base}/tasks/{id}")).await,
        &sent,
        &expected,
    );
    let context = answer["task"]["contextId"].as_str().expect("a context id");
    let listed = get_json(&format!("{base}/tasks?contextId={context}")).await;
    assert!(
        listed["tasks"].as_array().is_some_and(|tasks| tasks
            .iter()
            .any(|t| t["id"] == id && t["artifacts"][0]["parts"][0]["data"] == expected)),
        "{listed}"
    );
    let events = post(
        &format!("{base}/message:stream"),
        Some("1.0"),
        &json!({"message": message}),
    )
    .await;
    assert!(
        streamed_artifacts(&events).contains(&expected),
        "{events:?}"
    );

    // JSON-RPC 0.3: blocking, tasks/get, stream.
    let message = json!({"kind": "message", "messageId": "m", "role": "user",
        "parts": [{"kind": "data", "data": sent, "metadata": {"mimeType": MODE}}]});
    let answer = &post(
        base,
        None,
        &rpc("message/send", json!({"message": message})),
    )
    .await[0];
    check_task(&answer["result"], &sent, &expected);
    let id = answer["result"]["id"].as_str().expect("a task id");
    let got = &post(base, None, &rpc("tasks/get", json!({"id": id}))).await[0];
    check_task(&got["result"], &sent, &expected);
    let events = post(
        base,
        None,
        &rpc("message/stream", json!({"message": message})),
    )
    .await;
    assert!(
        streamed_artifacts(&events).contains(&expected),
        "{events:?}"
    );

    // The skill received the entry as sent: its answer echoes it, typed.
    let back: Receipt = serde_json::from_value(expected).expect("a receipt");
    assert_eq!(&back.entry, entry);
}

/// JSON with whole doubles as integers: how the server reads what the official client sends,
/// and how a reader of that client's answers gets integers back.
fn whole(value: Value) -> Value {
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 => {
                json!(f as i64)
            }
            _ => Value::Number(n),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(whole).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, whole(v))).collect()),
        other => other,
    }
}

/// The typed data of a task's artifact (`artifact`) or first history message (`history`).
fn typed<T: serde::de::DeserializeOwned>(task: &Task, from_history: bool) -> T {
    let parts = if from_history {
        &task.history.as_ref().expect("a history")[0].parts
    } else {
        &task.artifacts.as_ref().expect("artifacts")[0].parts
    };
    let PartContent::Data(data) = &parts[0].content else {
        panic!("a data part: {task:?}")
    };
    serde_json::from_value(whole(data.clone())).expect("the schema's type")
}

/// The round trips of `entry` over JSON-RPC 1.0 and HTTP+JSON with the official client.
async fn client_round_trips(base: &str, entry: &Entry) {
    let card = card(base).await;
    let sent = serde_json::to_value(entry).expect("an entry is JSON");
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let client = client(&card, binding).await;
        let send = request(vec![data_part("entry", sent.clone())], None);
        let answer = task(client.send_message(&send).await.expect("an answer"));
        assert_eq!(answer.status.state, TaskState::Completed, "{answer:?}");
        assert_eq!(
            typed::<Receipt>(&answer, false),
            receipt(entry),
            "{binding}"
        );
        assert_eq!(typed::<Entry>(&answer, true), *entry, "{binding}");
        let got = client.get_task(&get(&answer.id)).await.expect("the task");
        assert_eq!(typed::<Receipt>(&got, false), receipt(entry), "{binding}");
        assert_eq!(typed::<Entry>(&got, true), *entry, "{binding}");
        let mut only = every_task();
        only.context_id = Some(answer.context_id.clone());
        let listed = client.list_tasks(&only).await.expect("the tasks");
        let found = listed
            .tasks
            .iter()
            .find(|t| t.id == answer.id)
            .expect("the task listed");
        assert_eq!(typed::<Receipt>(found, false), receipt(entry), "{binding}");
        let mut events = client
            .send_streaming_message(&send)
            .await
            .expect("a stream");
        let mut streamed = None;
        while let Some(event) = events.next().await {
            if let Ok(StreamResponse::ArtifactUpdate(update)) = event
                && let PartContent::Data(data) = &update.artifact.parts[0].content
            {
                streamed = Some(serde_json::from_value::<Receipt>(whole(data.clone())));
            }
        }
        let streamed = streamed.expect("an artifact streamed").expect("a receipt");
        assert_eq!(streamed, receipt(entry), "{binding}");
    }
}

/// Integers at the edges of their types, and any.
fn i64s() -> impl Strategy<Value = i64> + Clone {
    prop_oneof![
        Just(i64::MIN),
        Just(i64::MAX),
        Just(0),
        Just(-1),
        Just((1 << 53) + 1),
        Just(1 << 60),
        any::<i64>(),
    ]
}

fn u64s() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(u64::MAX),
        Just(0),
        Just(1),
        Just((1 << 53) + 1),
        Just(1 << 60),
        any::<u64>(),
    ]
}

fn floats() -> impl Strategy<Value = f64> {
    use proptest::num::f64::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    prop_oneof![
        Just(1.0),
        Just(0.1),
        Just(f64::MAX),
        Just(f64::MIN_POSITIVE),
        POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO,
    ]
}

fn texts() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("é\"\\\n\u{1F600}\u{0}".to_owned()),
        any::<String>()
    ]
}

fn entries(
    signed: impl Strategy<Value = i64> + Clone,
    unsigned: impl Strategy<Value = u64>,
) -> impl Strategy<Value = Entry> {
    (
        signed.clone(),
        unsigned,
        floats(),
        texts(),
        prop::collection::vec(prop::collection::vec(signed, 0..4), 0..4),
        prop::collection::vec(texts(), 0..3),
    )
        .prop_map(|(signed, unsigned, ratio, label, grid, tags)| Entry {
            signed,
            unsigned,
            ratio,
            label,
            grid,
            tags,
        })
}

/// The largest integer a double holds exactly, and so the official client.
const EXACT: i64 = 1 << 53;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn any_entry_round_trips_exactly_over_every_binding(entry in entries(i64s(), u64s())) {
        let (runtime, base) = ledger();
        runtime.block_on(raw_round_trips(base, &entry));
    }

    #[test]
    fn the_official_client_round_trips_what_it_can_carry(
        entry in entries(-EXACT..=EXACT, 0..=EXACT as u64)
    ) {
        let (runtime, base) = ledger();
        runtime.block_on(client_round_trips(base, &entry));
    }

    #[test]
    fn the_example_s_fights_round_trip(a in texts(), b in texts()) {
        let (runtime, _) = ledger();
        runtime.block_on(fights(a, b));
    }
}

/// The example's own types: any two contestants (unicode, empty) over every binding, the
/// history echoing them and the artifact the example's verdict.
async fn fights(a: String, b: String) {
    static BASE: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
    let base = BASE
        .get_or_init(|| async {
            let running = serve(Server::new(fight_club::FightClub)).await;
            let base = running.base.clone();
            std::mem::forget(running);
            base
        })
        .await;
    let fight = fight_club::FightComparison { a, b };
    let sent = json!({"a": fight.a, "b": fight.b});
    let verdict = fight_club::judge(&fight);
    let expected = json!({"winner": verdict.winner, "probability": verdict.probability,
        "explanation": verdict.explanation});
    let message = json!({"messageId": "m", "role": "ROLE_USER",
        "parts": [{"data": sent, "mediaType": "application/json;schema=fightComparison"}]});
    let rpc =
        json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}});
    let answer = &post(base, Some("1.0"), &rpc).await[0];
    check_task(&answer["result"]["task"], &sent, &expected);
    let answer = &post(
        &format!("{base}/message:send"),
        Some("1.0"),
        &json!({"message": message}),
    )
    .await[0];
    check_task(&answer["task"], &sent, &expected);
    let message = json!({"kind": "message", "messageId": "m", "role": "user",
        "parts": [{"kind": "data", "data": sent,
            "metadata": {"mimeType": "application/json;schema=fightComparison"}}]});
    let rpc = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}});
    let answer = &post(base, None, &rpc).await[0];
    check_task(&answer["result"], &sent, &expected);
}

/// The issue's cases, by name: a whole number a skill returns is an integer on the wire, and
/// 2^60 in an `i64` field runs the skill instead of failing in the official parser.
#[test]
fn whole_numbers_stay_integers_and_big_ones_pass() {
    let (runtime, base) = ledger();
    runtime.block_on(async {
        let entry = json!({"signed": 1_152_921_504_606_846_976_i64, "unsigned": 9_007_199_254_740_993_u64,
            "ratio": 2.5, "label": "", "grid": [[7]], "tags": []});
        let rpc = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
            {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": entry, "mediaType": MODE}]}}});
        let response = reqwest::Client::new()
            .post(base.as_str())
            .header("A2A-Version", "1.0")
            .json(&rpc)
            .send()
            .await
            .expect("an answer");
        let text = response.text().await.expect("a body");
        assert!(text.contains(r#""rows":1,"cells":1"#), "{text}");
        assert!(text.contains(r#""signed":1152921504606846976,"#), "{text}");
        assert!(text.contains(r#""unsigned":9007199254740993,"#), "{text}");
        assert!(text.contains(r#""grid":[[7]]"#), "{text}");
        assert!(!text.contains("a2a-card.data."), "no marker leaks: {text}");
    });
}
