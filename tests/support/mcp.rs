//! MCP over raw HTTP: posts to an agent's `/mcp`, its answers read, a session opened.

use reqwest::StatusCode;
use serde_json::{Value, json};

/// What an MCP client accepts.
pub const ACCEPT: &str = "application/json, text/event-stream";

/// Posts `body` (raw bytes) to `{base}/mcp` (`base`: an agent's URL), with a session id and a token when given.
pub async fn post(
    base: &str,
    body: impl Into<reqwest::Body>,
    session: Option<&str>,
    token: Option<&str>,
) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", ACCEPT)
        .body(body);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.expect("the server answers")
}

/// The JSON-RPC message of an answer, whether sent as JSON or as one SSE event.
pub async fn message(response: reqwest::Response) -> Value {
    let text = response.text().await.expect("a body");
    let json = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or(&text)
        .to_owned();
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// Opens an MCP session (the initialize handshake) and gives its id.
pub async fn session(base: &str, token: Option<&str>) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let response = post(base, init.to_string(), None, token).await;
    assert_eq!(response.status(), StatusCode::OK);
    let id = response
        .headers()
        .get("mcp-session-id")
        .expect("a session id")
        .to_str()
        .unwrap()
        .to_owned();
    let ready = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = post(base, ready.to_string(), Some(&id), token).await;
    assert!(response.status().is_success(), "{}", response.status());
    id
}
