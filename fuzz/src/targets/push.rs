//! Push notification configs with any params: `CreateTaskPushNotificationConfig` posted as
//! JSON-RPC to the trip planner (which declares push notifications), on a task it keeps waiting
//! for an answer. An input that is JSON is the params (its `TASK_ID` text replaced by that
//! task's id); other bytes are drawn into params with `arbitrary`. Each answer: within 10 s,
//! below 500, well formed; a config created reads back (`Get`, `List`) and deletes.

use std::sync::OnceLock;

use arbitrary::Unstructured;
use serde_json::{Map, Value, json};

use super::jsonrpc::check_rpc;
use super::{check_answer, feedback_rpc, planner, post};

/// The id of a task of the planner that waits for its start date (made once).
fn waiting_task() -> &'static str {
    static TASK: OnceLock<String> = OnceLock::new();
    TASK.get_or_init(|| {
        let ask = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
            "messageId": "push-task", "role": "ROLE_USER", "parts": [{
                "data": {"destination": "Porto", "days": 2},
                "mediaType": "application/json;schema=tripRequest"}]}}});
        let answer = rpc_answer(ask);
        answer
            .pointer("/result/task/id")
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("the planner made no task: {answer}"))
            .to_owned()
    })
}

/// The JSON answer to a JSON-RPC request made by the target (not by the input).
fn rpc_answer(request: Value) -> Value {
    let answer = post(
        planner(),
        "/",
        &[("a2a-version", "1.0")],
        request.to_string().into_bytes(),
    )
    .expect("a request");
    check_answer("/", &answer);
    check_rpc(&answer);
    answer
        .json()
        .unwrap_or_else(|| panic!("not JSON: {}", String::from_utf8_lossy(&answer.body)))
}

/// A JSON-RPC call the target makes.
fn call(method: &str, params: Value) -> Value {
    rpc_answer(json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params}))
}

/// Params made of any bytes, shaped like a push config more often than not.
fn drawn(u: &mut Unstructured<'_>, task: &str) -> arbitrary::Result<Value> {
    let mut params = Map::new();
    if u.ratio(4, 5)? {
        params.insert("taskId".into(), Value::String(task.to_owned()));
    }
    const URLS: [&str; 6] = [
        "https://hooks.example/a2a",
        "http://127.0.0.1:9/hook",
        "https://[::1]/",
        "https://user:pass@hooks.example:443/a?b#c",
        "file:///etc/passwd",
        "https://10.0.0.1/x",
    ];
    for key in ["id", "url", "token", "tenant"] {
        if u.ratio(2, 3)? {
            let value = if key == "url" && u.ratio(1, 2)? {
                Value::String((*u.choose(&URLS)?).to_owned())
            } else {
                any(u, 1)?
            };
            params.insert(key.into(), value);
        }
    }
    if u.ratio(1, 2)? {
        let mut auth = Map::new();
        for key in ["scheme", "schemes", "credentials"] {
            if u.ratio(1, 2)? {
                auth.insert(key.into(), any(u, 1)?);
            }
        }
        params.insert("authentication".into(), Value::Object(auth));
    }
    if u.ratio(1, 4)? {
        let key: String = u.arbitrary()?;
        params.insert(key, any(u, 2)?);
    }
    Ok(Value::Object(params))
}

/// Any JSON value, `depth` levels deep at most.
fn any(u: &mut Unstructured<'_>, depth: usize) -> arbitrary::Result<Value> {
    let kinds = if depth == 0 { 5 } else { 7 };
    Ok(match u.int_in_range(0..=kinds - 1)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::from(u.arbitrary::<i64>()?),
        3 => serde_json::Number::from_f64(u.arbitrary()?).map_or(Value::Null, Value::Number),
        4 => Value::String(u.arbitrary()?),
        5 => Value::Array(
            (0..u.int_in_range(0..=3)?)
                .map(|_| any(u, depth - 1))
                .collect::<arbitrary::Result<_>>()?,
        ),
        _ => {
            let mut map = Map::new();
            for _ in 0..u.int_in_range(0..=3)? {
                map.insert(u.arbitrary()?, any(u, depth - 1)?);
            }
            Value::Object(map)
        }
    })
}

/// Params of `CreateTaskPushNotificationConfig`: the input's JSON, or drawn from its bytes.
pub fn push_config(data: &[u8]) {
    let task = waiting_task();
    let params = match serde_json::from_slice::<Value>(data) {
        Ok(_) => {
            let text = String::from_utf8_lossy(data).replace("TASK_ID", task);
            serde_json::from_str(&text).unwrap_or(Value::Null)
        }
        Err(_) => drawn(&mut Unstructured::new(data), task).unwrap_or(Value::Null),
    };
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "CreateTaskPushNotificationConfig", "params": params});
    let answer = post(
        planner(),
        "/",
        &[("a2a-version", "1.0")],
        body.to_string().into_bytes(),
    )
    .expect("a request");
    check_answer("/", &answer);
    check_rpc(&answer);
    feedback_rpc(&answer);
    let Some(created) = answer.json().and_then(|j| j.get("result").cloned()) else {
        return;
    };
    // A config created reads back, in the task's list and by its id, and deletes.
    let (Some(task_id), Some(id)) = (
        created.get("taskId").and_then(Value::as_str),
        created.get("id").and_then(Value::as_str),
    ) else {
        panic!("a config created has no taskId or id: {created}");
    };
    let got = call(
        "GetTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": id}),
    );
    assert!(
        got.get("result").is_some(),
        "a config created does not read back: {created} -> {got}"
    );
    let listed = call(
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task_id}),
    );
    let found = listed
        .pointer("/result/configs")
        .and_then(Value::as_array)
        .is_some_and(|configs| configs.iter().any(|c| c["id"] == json!(id)));
    assert!(
        found,
        "a config created is not listed: {created} -> {listed}"
    );
    let deleted = call(
        "DeleteTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": id}),
    );
    assert!(
        deleted.get("error").is_none(),
        "a config created does not delete: {created} -> {deleted}"
    );
}

/// The planner still takes a valid push config.
pub fn alive() {
    let task = waiting_task();
    let created = call(
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task, "id": "alive", "url": "http://127.0.0.1:9/hook"}),
    );
    assert!(
        created.get("result").is_some(),
        "a valid push config is refused: {created}"
    );
    call(
        "DeleteTaskPushNotificationConfig",
        json!({"taskId": task, "id": "alive"}),
    );
}
