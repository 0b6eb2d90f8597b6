//! MCP requests posted to `/mcp` of the Fight Club agent served with `.mcp(true)`, in a
//! session opened once (the `initialize` handshake; opened again if the server drops it). Each
//! answer: within 10 s, below 500, JSON where it says so (each event of a stream too), and each
//! JSON-RPC message in it says `jsonrpc: "2.0"`.

use std::sync::{Mutex, OnceLock};

use a2a_card::server::Server;
use a2a_card::testing::TestAgent;
use serde_json::{Value, json};

use super::{Answer, check_answer, post, runtime};

/// The MCP protocol version the session speaks.
const PROTOCOL: &str = "2025-06-18";

/// The Fight Club agent with its MCP endpoint, served in this process: one per process.
fn fight_club() -> &'static TestAgent {
    static AGENT: OnceLock<TestAgent> = OnceLock::new();
    AGENT.get_or_init(|| {
        let server = Server::new(examples::fight_club::agent::FightClub).mcp(true);
        runtime()
            .block_on(TestAgent::start(server))
            .expect("the Fight Club agent starts")
    })
}

/// The open session's id.
static SESSION: Mutex<Option<String>> = Mutex::new(None);

/// A session's id: the one open, or a new one.
fn session() -> String {
    let mut open = SESSION.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(id) = open.as_ref() {
        return id.clone();
    }
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "a2a-card-fuzz", "version": "0"}}});
    let answer = post(fight_club(), "/mcp", &[], init.to_string().into_bytes())
        .expect("an initialize request");
    let id = answer.session.unwrap_or_else(|| {
        panic!(
            "initialize opened no session: {} {}",
            answer.status,
            String::from_utf8_lossy(&answer.body)
        )
    });
    let ready = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = post(
        fight_club(),
        "/mcp",
        &[("mcp-session-id", &id), ("mcp-protocol-version", PROTOCOL)],
        ready.to_string().into_bytes(),
    )
    .expect("an initialized notification");
    assert!(
        answer.status < 300,
        "notifications/initialized: {}",
        answer.status
    );
    *open = Some(id.clone());
    id
}

/// `body` posted in the session.
fn in_session(body: Vec<u8>) -> Answer {
    let id = session();
    let headers = [
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", PROTOCOL),
    ];
    post(fight_club(), "/mcp", &headers, body).expect("a request in the session")
}

/// An MCP request body, posted in the session.
pub fn mcp(data: &[u8]) {
    let answer = in_session(data.to_vec());
    check_answer("/mcp", &answer);
    if answer.status == 404 {
        // The session is gone (closed by a request, or evicted): the next input opens one.
        *SESSION.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
    crate::feedback(&answer.status.to_string());
    for message in answer.messages() {
        if let Value::Object(map) = &message {
            assert_eq!(
                map.get("jsonrpc"),
                Some(&json!("2.0")),
                "an MCP message without `jsonrpc: \"2.0\"`: {message}"
            );
            crate::feedback(&message["error"]["code"].to_string());
            crate::feedback(
                &message["error"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .chars()
                    .take(32)
                    .collect::<String>(),
            );
            crate::feedback(&message["result"]["isError"].to_string());
        }
    }
}

/// The endpoint still calls a tool in the session.
pub fn alive() {
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "fight-comparison", "arguments": {"a": "Lion", "b": "Tiger"}}});
    let answer = in_session(call.to_string().into_bytes());
    assert_eq!(
        answer.status,
        200,
        "a valid tools/call: {}",
        String::from_utf8_lossy(&answer.body)
    );
    assert!(
        answer.messages().iter().any(|m| m.get("result").is_some()),
        "a valid tools/call has no result: {}",
        String::from_utf8_lossy(&answer.body)
    );
}
