//! HTTP+JSON (REST) request bodies posted to the trip planner's routes. An input is a route
//! on its first line (`/message:send`, `/message:stream`, `/tasks/ID/pushNotificationConfigs`,
//! `/tasks/ID:cancel`, ...; `/message:send` when the input has no newline) and the body after
//! it. Each answer: within 10 s, below 500, JSON where it says so.

use serde_json::Value;

use super::{check_answer, planner, post};

/// A route and a body, posted.
pub fn rest(data: &[u8]) {
    let (path, body) = match data.iter().position(|b| *b == b'\n') {
        Some(nl) => (
            String::from_utf8_lossy(&data[..nl]).into_owned(),
            &data[nl + 1..],
        ),
        None => ("/message:send".to_owned(), data),
    };
    // Only routes a client could send: an absolute path.
    if !path.starts_with('/') {
        return;
    }
    let Some(answer) = post(planner(), &path, &[("a2a-version", "1.0")], body.to_vec()) else {
        return;
    };
    check_answer(&path, &answer);
    crate::feedback(&answer.status.to_string());
    if let Some(json) = answer.json() {
        // A `google.rpc.Status`: its status and the reason of its first detail.
        let error = &json["error"];
        crate::feedback(error["status"].as_str().unwrap_or_default());
        crate::feedback(error["message"].as_str().unwrap_or_default());
        crate::feedback(&error["details"][0]["reason"].to_string());
        crate::feedback(
            json.pointer("/task/status/state")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        );
    }
}
