//! The task lifecycle exact to A2A 1.0, over raw HTTP on JSON-RPC 1.0, HTTP+JSON and 0.3:
//! streams that begin with the task, subscriptions that send updates, cancel said once,
//! `ListTasks` newest first with a cursor, the request fields the protocol requires.

use crate::support;
use crate::trip_planner::server;

use std::time::Duration;

use a2a_card::server::Webhooks;
use serde_json::{Value, json};
use support::client::{Running, events_of, http_json, rpc_status as rpc, rpc_stream, serve};
use support::sse::Frames;

async fn planner(pace: Duration) -> Running {
    serve(server::server(pace, Webhooks::default())).await
}

fn trip(days: u8, start: Option<&str>) -> Value {
    let mut data = json!({"destination": "Lisbon", "days": days});
    if let Some(start) = start {
        data["start_date"] = json!(start);
    }
    json!({"messageId": a2a::new_message_id(), "role": "ROLE_USER",
           "parts": [{"data": data, "mediaType": "application/json;schema=tripRequest"}]})
}

fn text(task: Option<&str>, text: &str) -> Value {
    let mut message = json!({"messageId": a2a::new_message_id(),
                             "role": "ROLE_USER", "parts": [{"text": text}]});
    if let Some(task) = task {
        message["taskId"] = json!(task);
    }
    message
}

/// The kind of a 1.0 stream event (`task`, `statusUpdate`, `artifactUpdate`, `message`).
fn kind(event: &Value) -> &str {
    let result = event.get("result").unwrap_or(event);
    ["task", "statusUpdate", "artifactUpdate", "message"]
        .into_iter()
        .find(|k| result.get(*k).is_some())
        .unwrap_or("?")
}

fn state_of(event: &Value) -> Option<&str> {
    let result = event.get("result").unwrap_or(event);
    result
        .get("task")
        .or_else(|| result.get("statusUpdate"))
        .and_then(|e| e["status"]["state"].as_str())
}

/// Sends a blocking message; the task it answers with.
async fn send(base: &str, message: Value) -> Value {
    let (status, answer) = rpc(base, "SendMessage", json!({"message": message})).await;
    assert_eq!(status, 200, "{answer}");
    answer["result"]["task"].clone()
}

#[tokio::test]
async fn a_stream_begins_with_the_task_on_every_binding() {
    let running = planner(Duration::from_millis(1)).await;
    let base = &running.base;
    let params = json!({"message": trip(2, Some("2026-12-01"))});
    let events = rpc_stream(base, Some("1.0"), "SendStreamingMessage", params.clone()).await;
    assert_eq!(kind(&events[0]), "task", "{events:?}");
    assert_eq!(state_of(&events[0]), Some("TASK_STATE_SUBMITTED"));
    assert_eq!(state_of(&events[1]), Some("TASK_STATE_WORKING"));
    assert_eq!(
        state_of(&events[events.len() - 1]),
        Some("TASK_STATE_COMPLETED")
    );
    assert!(
        events[1..].iter().all(|e| kind(e) != "task"),
        "one task, then updates: {events:?}"
    );

    // HTTP+JSON.
    let response = reqwest::Client::new()
        .post(format!("{base}/message:stream"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(params.to_string())
        .send()
        .await
        .expect("a stream");
    let events = events_of(response).await;
    assert_eq!(kind(&events[0]), "task", "{events:?}");
    assert_eq!(
        state_of(&events[events.len() - 1]),
        Some("TASK_STATE_COMPLETED")
    );

    // 0.3.
    let message = json!({"kind": "message", "messageId": "m03", "role": "user", "parts": [
        {"kind": "data", "data": {"destination": "Lisbon", "days": 1, "start_date": "2026-12-01"},
         "metadata": {"mimeType": "application/json;schema=tripRequest"}}]});
    let events = rpc_stream(base, None, "message/stream", json!({"message": message})).await;
    assert_eq!(events[0]["result"]["kind"], "task", "{events:?}");
    assert!(
        events[1..]
            .iter()
            .all(|e| e["result"]["kind"] != "task" && e["result"]["kind"].is_string()),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_subscriber_to_a_waiting_task_gets_the_task_then_updates() {
    let running = planner(Duration::from_millis(1)).await;
    let base = running.base.clone();
    for version in [Some("1.0"), None] {
        let asked = send(&base, trip(2, None)).await;
        assert_eq!(asked["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        let id = asked["id"].as_str().expect("an id").to_owned();
        let (method, params) = match version {
            Some(_) => ("SubscribeToTask", json!({"id": id})),
            None => ("tasks/resubscribe", json!({"id": id})),
        };
        let watcher = {
            let base = base.clone();
            tokio::spawn(async move { rpc_stream(&base, version, method, params).await })
        };
        // The watcher is subscribed before the answer comes.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let done = send(&base, text(Some(&id), "2026-02-28")).await;
        assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
        let events = tokio::time::timeout(Duration::from_secs(10), watcher)
            .await
            .expect("the subscription ends with the task")
            .expect("the watcher");
        match version {
            Some(_) => {
                assert_eq!(kind(&events[0]), "task", "{events:?}");
                assert!(
                    events[1..]
                        .iter()
                        .all(|e| matches!(kind(e), "statusUpdate" | "artifactUpdate")),
                    "the task once, then updates: {events:?}"
                );
                assert_eq!(
                    state_of(&events[events.len() - 1]),
                    Some("TASK_STATE_COMPLETED")
                );
            }
            None => {
                // The official 0.3 Python client's tracker takes one task, then updates.
                let kinds: Vec<&str> = events
                    .iter()
                    .map(|e| e["result"]["kind"].as_str().unwrap_or("?"))
                    .collect();
                assert_eq!(kinds[0], "task", "{events:?}");
                assert!(
                    kinds[1..]
                        .iter()
                        .all(|k| matches!(*k, "status-update" | "artifact-update")),
                    "{kinds:?}"
                );
                let last = &events[events.len() - 1]["result"];
                assert_eq!(last["status"]["state"], "completed");
                assert_eq!(last["final"], true);
            }
        }
    }
}

#[tokio::test]
async fn cancel_is_idempotent_and_a_task_finished_otherwise_is_not_cancelable() {
    let running = planner(Duration::from_millis(1)).await;
    let base = &running.base;
    let asked = send(base, trip(2, None)).await;
    let id = asked["id"].as_str().expect("an id");
    for _ in 0..2 {
        let (status, answer) = rpc(base, "CancelTask", json!({"id": id})).await;
        assert_eq!(status, 200);
        assert_eq!(
            answer["result"]["status"]["state"], "TASK_STATE_CANCELED",
            "{answer}"
        );
    }
    // HTTP+JSON and 0.3 say the same of the canceled task.
    let rest = reqwest::Client::new()
        .post(format!("{base}/tasks/{id}:cancel"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body("{}")
        .send()
        .await
        .expect("an answer");
    assert_eq!(rest.status(), 200);
    let rest: Value = rest.json().await.expect("JSON");
    assert_eq!(rest["status"]["state"], "TASK_STATE_CANCELED", "{rest}");
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/cancel", "params": {"id": id}});
    let legacy: Value = reqwest::Client::new()
        .post(format!("{base}/"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON");
    assert_eq!(legacy["result"]["status"]["state"], "canceled", "{legacy}");

    // A completed task is not cancelable.
    let done = send(base, trip(1, Some("2026-12-01"))).await;
    let (status, answer) = rpc(base, "CancelTask", json!({"id": done["id"]})).await;
    assert_eq!(status, 200);
    assert_eq!(answer["error"]["code"], -32002, "{answer}");
}

#[tokio::test]
async fn list_tasks_is_newest_first_and_its_cursor_survives_new_tasks() {
    let running = planner(Duration::from_millis(1)).await;
    let base = &running.base;
    let mut made = Vec::new();
    for _ in 0..5 {
        let task = send(base, trip(1, Some("2026-12-01"))).await;
        made.push(task["id"].as_str().expect("an id").to_owned());
        // Distinct status times.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (_, first) = rpc(base, "ListTasks", json!({"pageSize": 2})).await;
    let first = &first["result"];
    let ids = |page: &Value| -> Vec<String> {
        page["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .map(|t| t["id"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(ids(first), [made[4].clone(), made[3].clone()], "{first}");
    assert_eq!(first["totalSize"], 5);
    let token = first["nextPageToken"]
        .as_str()
        .expect("a next page")
        .to_owned();
    // A task created meanwhile shifts nothing: the next page goes on where the first ended.
    send(base, trip(1, Some("2026-12-01"))).await;
    let (_, second) = rpc(
        base,
        "ListTasks",
        json!({"pageSize": 2, "pageToken": token}),
    )
    .await;
    assert_eq!(
        ids(&second["result"]),
        [made[2].clone(), made[1].clone()],
        "{second}"
    );
    // A token this agent did not give is refused, naming the field.
    let (status, bad) = rpc(base, "ListTasks", json!({"pageToken": "not-a-token"})).await;
    assert_eq!(status, 200);
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("pageToken")
    );
}

#[tokio::test]
async fn out_of_range_page_sizes_and_history_lengths_are_invalid_params_naming_the_field() {
    let running = planner(Duration::from_millis(1)).await;
    let base = &running.base;
    let done = send(base, trip(1, Some("2026-12-01"))).await;
    let cases = [
        ("ListTasks", json!({"pageSize": -1}), "pageSize"),
        ("ListTasks", json!({"pageSize": 0}), "pageSize"),
        ("ListTasks", json!({"pageSize": 101}), "pageSize"),
        ("ListTasks", json!({"historyLength": -1}), "historyLength"),
        (
            "GetTask",
            json!({"id": done["id"], "historyLength": -1}),
            "historyLength",
        ),
    ];
    for (method, params, field) in cases {
        let (status, answer) = rpc(base, method, params.clone()).await;
        assert_eq!(status, 200, "{method} {params}");
        assert_eq!(
            answer["error"]["code"], -32602,
            "{method} {params}: {answer}"
        );
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(field), "{method} {params}: {message}");
    }
    // In range, and an empty list still says so.
    let (_, answer) = rpc(
        base,
        "ListTasks",
        json!({"pageSize": 100, "contextId": "none"}),
    )
    .await;
    assert!(answer.get("result").is_some(), "{answer}");
}

#[tokio::test]
async fn a_message_without_its_required_fields_creates_no_task() {
    let running = planner(Duration::from_millis(1)).await;
    let base = &running.base;
    let part = json!({"text": "hello"});
    let cases = [
        (
            json!({"message": {"role": "ROLE_USER", "parts": [part]}}),
            "message.messageId",
        ),
        (
            json!({"message": {"messageId": "m", "parts": [part]}}),
            "message.role",
        ),
        (
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}}),
            "message.parts",
        ),
    ];
    for (params, field) in cases {
        let (status, answer) = rpc(base, "SendMessage", params.clone()).await;
        assert_eq!(status, 200, "{params}");
        assert_eq!(answer["error"]["code"], -32602, "{params}: {answer}");
        let details = answer["error"]["data"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let violation = details
            .iter()
            .find(|d| d["@type"] == "type.googleapis.com/google.rpc.BadRequest")
            .unwrap_or_else(|| panic!("a BadRequest detail: {answer}"));
        assert_eq!(violation["fieldViolations"][0]["field"], field, "{answer}");
    }
    let (_, listed) = rpc(base, "ListTasks", json!({})).await;
    assert_eq!(listed["result"]["totalSize"], 0, "no task: {listed}");
    // An empty list still says so, on HTTP+JSON too (tasks and totalSize always sent).
    assert_eq!(listed["result"]["tasks"], json!([]), "{listed}");
    let rest = http_json(reqwest::Client::new().get(format!("{base}/tasks"))).await;
    assert_eq!(rest["tasks"], json!([]), "{rest}");
    assert_eq!(rest["totalSize"], 0, "{rest}");
}

#[tokio::test]
async fn the_agents_question_is_in_the_history_between_the_turns() {
    let running = planner(Duration::from_millis(1)).await;
    let base = &running.base;
    let asked = send(base, trip(2, None)).await;
    let id = asked["id"].as_str().expect("an id");
    send(base, text(Some(id), "2026-02-28")).await;
    let (_, got) = rpc(base, "GetTask", json!({"id": id})).await;
    let history = got["result"]["history"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let roles: Vec<&str> = history
        .iter()
        .map(|m| m["role"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(roles, ["ROLE_USER", "ROLE_AGENT", "ROLE_USER"], "{got}");
    assert_eq!(history[2]["parts"][0]["text"], "2026-02-28");
    // historyLength keeps the newest.
    let (_, last) = rpc(base, "GetTask", json!({"id": id, "historyLength": 1})).await;
    assert_eq!(
        last["result"]["history"][0]["parts"][0]["text"],
        "2026-02-28"
    );
}

#[tokio::test]
async fn a_subscriber_that_reconnects_with_last_event_id_gets_exactly_the_events_after_it() {
    let running = planner(Duration::from_millis(40)).await;
    let base = &running.base;
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let params = json!({"message": trip(8, Some("2026-12-01")),
                        "configuration": {"returnImmediately": true}});
        let (_, started) = rpc(base, "SendMessage", params).await;
        let id = started["result"]["task"]["id"]
            .as_str()
            .expect("a task")
            .to_owned();

        // Three frames, then the connection drops.
        let mut first = Frames::open(base, binding, &id, None).await;
        let mut seen = Vec::new();
        while seen.len() < 3 {
            let (n, event) = first.next().await.expect("a frame");
            seen.push((n.expect("every event has an id"), event));
        }
        assert_eq!(
            kind(&seen[0].1),
            "task",
            "a subscription begins with the task"
        );
        drop(first);
        let last = seen[seen.len() - 1].0;

        // Reconnected: the events after the last one seen, none again, none missing.
        let mut again = Frames::open(base, binding, &id, Some(last)).await;
        let mut expected = last + 1;
        let mut end = None;
        while let Some((n, event)) = again.next().await {
            assert_eq!(n, Some(expected), "{event}");
            assert_ne!(
                kind(&event),
                "task",
                "no task again after Last-Event-ID: {event}"
            );
            expected += 1;
            end = state_of(&event).map(str::to_owned).or(end);
        }
        assert_eq!(end.as_deref(), Some("TASK_STATE_COMPLETED"));
        // Every day's chunk arrived across the two connections.
        let (_, task) = rpc(base, "GetTask", json!({"id": id})).await;
        assert_eq!(
            task["result"]["artifacts"][0]["parts"]
                .as_array()
                .map(Vec::len),
            Some(8),
            "{task}"
        );
    }
}

#[tokio::test]
async fn a_finished_tasks_stream_resumes_after_its_end_and_a_blocking_tasks_log_is_not_kept() {
    let running = planner(Duration::from_millis(5)).await;
    let base = &running.base;

    // A streamed task, read to its end: its log is kept for a reader that comes back.
    let mut frames = Frames::send(base, json!({"message": trip(3, Some("2026-12-01"))})).await;
    let mut seen = Vec::new();
    while let Some((n, event)) = frames.next().await {
        seen.push((n.expect("every event has an id"), event));
    }
    let id = seen[0].1["result"]["task"]["id"]
        .as_str()
        .expect("a stream begins with the task")
        .to_owned();
    let (first, rest) = (seen[0].0, &seen[1..]);
    let mut again = Frames::open(base, "JSONRPC", &id, Some(first)).await;
    for (n, event) in rest {
        let (m, resent) = again.next().await.expect("the events after the first");
        assert_eq!(m, Some(*n));
        assert_eq!(resent["result"], event["result"], "the same event");
    }
    assert!(again.next().await.is_none(), "nothing after the end");

    // A task a blocking call alone read: no stream can resume it, and nothing is kept.
    let params = json!({"message": trip(3, Some("2026-12-01"))});
    let (_, done) = rpc(base, "SendMessage", params).await;
    let id = done["result"]["task"]["id"].as_str().expect("a task");
    assert_eq!(
        done["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let gone = Frames::try_open(base, "HTTP+JSON", id, Some(1)).await;
    let why = gone.err().expect("no stream to resume");
    assert!(why.contains("are no longer kept"), "{why}");
}

/// Sends `method path` with `headers` and a small body in two writes (headers, then the body, as
/// httpx and most clients send them), then a good request on the same connection; what came
/// back on it.
async fn refused_then_good(addr: &str, method: &str, path: &str, headers: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut socket = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}).to_string();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\n{headers}a2a-version: 1.0\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await.expect("write");
    tokio::time::sleep(Duration::from_millis(50)).await;
    // The server may have answered and closed already: the writes that follow may fail.
    let _ = socket.write_all(body.as_bytes()).await;
    let good = format!(
        "POST / HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\na2a-version: 1.0\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    let _ = socket.write_all(good.as_bytes()).await;
    let mut answers = String::new();
    let mut buffer = [0u8; 8192];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while answers.matches("HTTP/1.1 ").count() < 2 && tokio::time::Instant::now() < deadline {
        match tokio::time::timeout(Duration::from_millis(500), socket.read(&mut buffer)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => answers.push_str(&String::from_utf8_lossy(&buffer[..n])),
            Err(_) => {}
        }
    }
    answers
}

#[tokio::test]
async fn an_early_refusal_leaves_the_connection_usable() {
    let running = planner(Duration::from_millis(1)).await;
    let addr = running.base.trim_start_matches("http://").to_owned();
    // Every kind of answer given before the body is read, on every binding's routes.
    let cases = [
        ("POST", "/", "content-type: text/plain\r\n", "415"),
        (
            "POST",
            "/message:send",
            "content-type: text/plain\r\n",
            "415",
        ),
        (
            "POST",
            "/tasks/x/cancel",
            "content-type: application/json\r\n",
            "404",
        ),
        (
            "POST",
            "/no/such/route",
            "content-type: application/json\r\n",
            "404",
        ),
        (
            "POST",
            "/.well-known/agent-card.json",
            "content-type: application/json\r\n",
            "405",
        ),
        ("PUT", "/", "content-type: application/json\r\n", "405"),
        (
            "DELETE",
            "/tasks/x:cancel",
            "content-type: application/json\r\n",
            "405",
        ),
        ("POST", "/mcp", "content-type: text/plain\r\n", "4"),
        (
            "POST",
            "/tasks/unknown:cancel",
            "content-type: application/json\r\n",
            "404",
        ),
    ];
    for (method, path, headers, status) in cases {
        let answers = refused_then_good(&addr, method, path, headers).await;
        assert!(
            answers.starts_with(&format!("HTTP/1.1 {status}")),
            "{method} {path}: {answers}"
        );
        assert!(
            answers.contains("HTTP/1.1 200") && answers.contains("\"totalSize\""),
            "{method} {path}: the next request is answered on the same connection: {answers}"
        );
    }
}

/// `value` with what differs between two runs of one request (ids, timestamps) masked.
fn masked(mut value: Value) -> Value {
    fn mask(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, value) in map.iter_mut() {
                    if matches!(
                        key.as_str(),
                        "id" | "taskId" | "contextId" | "messageId" | "artifactId" | "timestamp"
                    ) && value.is_string()
                    {
                        *value = json!("*");
                    } else {
                        mask(value);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(mask),
            _ => {}
        }
    }
    mask(&mut value);
    value
}

/// A message in ProtoJSON's other spelling: snake_case names, the role by its number.
fn snake_trip(days: u8) -> Value {
    json!({"message_id": a2a::new_message_id(), "role": 1,
           "parts": [{"data": {"destination": "Lisbon", "days": days, "start_date": "2026-12-01"},
                      "media_type": "application/json;schema=tripRequest"}]})
}

#[tokio::test]
async fn a_protojson_snake_case_request_answers_as_its_camel_case_twin_on_every_method() {
    let webhooks = Webhooks::default().allow_loopback(true);
    let running = serve(server::server(Duration::from_millis(1), webhooks)).await;
    let base = running.base.clone();
    // Sends: the same answer but for ids and timestamps; the data part's own snake_case key
    // (`start_date`) reaches the skill as sent.
    let camel =
        json!({"message": trip(2, Some("2026-12-01")), "configuration": {"historyLength": 1}});
    let snake = json!({"message": snake_trip(2), "configuration": {"history_length": 1}});
    let (_, a) = rpc(&base, "SendMessage", camel).await;
    let (_, b) = rpc(&base, "SendMessage", snake).await;
    assert_eq!(
        a["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{a}"
    );
    assert_eq!(masked(a.clone()), masked(b.clone()), "SendMessage");
    let streamed = |message: Value| {
        let base = base.clone();
        async move {
            let events = rpc_stream(
                &base,
                Some("1.0"),
                "SendStreamingMessage",
                json!({ "message": message }),
            )
            .await;
            masked(Value::Array(events))
        }
    };
    assert_eq!(
        streamed(trip(2, Some("2026-12-01"))).await,
        streamed(snake_trip(2)).await,
        "SendStreamingMessage"
    );
    let task = a["result"]["task"]["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    let context = a["result"]["task"]["contextId"]
        .as_str()
        .expect("a context");
    let url = format!("{base}/hook");
    // Every other method: the very same answer.
    let twins = [
        (
            "GetTask",
            json!({"id": task, "historyLength": 1}),
            json!({"id": task, "history_length": 1}),
        ),
        (
            "ListTasks",
            json!({"contextId": context, "pageSize": 1, "includeArtifacts": true}),
            json!({"context_id": context, "page_size": 1, "include_artifacts": true}),
        ),
        (
            "ListTasks",
            json!({"status": "TASK_STATE_COMPLETED", "pageSize": 1}),
            json!({"status": 3, "page_size": 1}),
        ),
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "id": "c1", "url": url}),
            json!({"task_id": task, "id": "c1", "url": url}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": task, "id": "c1"}),
            json!({"task_id": task, "id": "c1"}),
        ),
        (
            "ListTaskPushNotificationConfigs",
            json!({"taskId": task, "pageSize": 5}),
            json!({"task_id": task, "page_size": 5}),
        ),
        ("CancelTask", json!({"id": task}), json!({"id": task})),
        ("SubscribeToTask", json!({"id": task}), json!({"id": task})),
        ("GetExtendedAgentCard", json!({}), json!({})),
    ];
    for (method, camel, snake) in twins {
        let (_, a) = rpc(&base, method, camel).await;
        let (_, b) = rpc(&base, method, snake).await;
        assert_eq!(masked(a.clone()), masked(b), "{method}");
        assert!(
            a.get("result").is_some() || a["error"]["code"] != -32602,
            "{method} read its params: {a}"
        );
    }
    // HTTP+JSON: a body and a query string in either spelling.
    let http = reqwest::Client::new();
    let mut sent = Vec::new();
    for message in [trip(1, Some("2026-12-01")), snake_trip(1)] {
        let send = http.post(format!("{base}/message:send"));
        sent.push(masked(
            http_json(send.json(&json!({"message": message}))).await,
        ));
    }
    assert_eq!(sent[0], sent[1], "POST /message:send");
    let mut got = Vec::new();
    for query in ["historyLength=1", "history_length=1"] {
        got.push(http_json(http.get(format!("{base}/tasks/{task}?{query}"))).await);
    }
    assert_eq!(got[0], got[1], "GET /tasks/{{id}}");
    assert_eq!(got[0]["history"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn every_route_and_method_answered_before_its_body_is_read_keeps_the_connection_or_says_close()
 {
    let running = planner(Duration::from_millis(1)).await;
    let addr = running.base.trim_start_matches("http://").to_owned();
    let paths = [
        "/",
        "/message:send",
        "/message:stream",
        "/tasks",
        "/tasks/x",
        "/tasks/x:cancel",
        "/tasks/x:subscribe",
        "/tasks/x/pushNotificationConfigs",
        "/tasks/x/pushNotificationConfigs/c",
        "/extendedAgentCard",
        "/.well-known/agent-card.json",
        "/capabilities",
        "/mcp",
        "/ui",
        "/nowhere",
    ];
    // A body the route does not take as it is (not declared as JSON), or an `Expect` the
    // server does not meet: answered before the body is read, whatever the route.
    let headers = [
        "content-type: text/plain\r\n",
        "content-type: application/json\r\nexpect: 200-ok\r\n",
    ];
    for path in paths {
        for method in ["GET", "POST", "PUT", "DELETE", "PATCH"] {
            for header in headers {
                let answers = refused_then_good(&addr, method, path, header).await;
                let first = answers.split("\r\n\r\n").next().unwrap_or_default();
                assert!(first.starts_with("HTTP/1.1 "), "{method} {path}: {answers}");
                let closes = first.to_ascii_lowercase().contains("connection: close");
                assert!(
                    closes
                        || (answers.matches("HTTP/1.1 ").count() == 2
                            && answers.contains("\"totalSize\"")),
                    "{method} {path} {header:?}: neither Connection: close nor the next request answered: {answers}"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_task_failed_by_recovery_after_its_process_stopped_is_pushed() {
    use a2a_card::server::store::Tasks;
    use support::webhook::{Webhook, left_running};

    // A process left a task running, with a webhook on loopback, and stopped.
    let hook = Webhook::start().await;
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("lifecycle");
    std::fs::create_dir_all(&dir).expect("a directory");
    let path = dir.join(format!("recovered-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let lease = Duration::from_millis(300);
    left_running(&path, "left-running", &hook.url, lease).await;

    // The next server on the file fails it, and says so to the webhook.
    let _running = serve(
        server::server(
            Duration::from_millis(1),
            Webhooks::default()
                .allow_loopback(true)
                .backoff(Duration::from_millis(20)),
        )
        .tasks(Tasks::sqlite(&path).lease(lease)),
    )
    .await;
    hook.wait_for_failed("left-running").await;
}
