//! The targets, one per decoder that takes outside bytes, and what they share: one tokio
//! runtime per process, the agents they post to (each started once, on first use), and the
//! checks every answer of a served agent passes.

use std::sync::OnceLock;
use std::time::Duration;

use a2a_card::server::{Server, Webhooks};
use a2a_card::testing::TestAgent;
use axum::body::Body;
use axum::http::Request;
use serde_json::Value;

pub mod card;
pub mod journal;
pub mod jsonrpc;
pub mod mcp;
pub mod push;
pub mod rest;
pub mod signed;

/// A fuzz target.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// Its name (the corpus folder `corpus/NAME/`, the command line's `TARGET`).
    pub name: &'static str,
    /// What it feeds the bytes to, and what it checks.
    pub about: &'static str,
    /// The target: panics when an invariant breaks.
    pub run: fn(&[u8]),
    /// Seeds made at run time (a signed card, ...), beside the corpus folder's files.
    pub seeds: fn() -> Vec<Vec<u8>>,
    /// Checks that the target's agent still answers a valid request (panics if not).
    pub alive: Option<fn()>,
}

/// No seeds besides the corpus folder's.
fn no_seeds() -> Vec<Vec<u8>> {
    Vec::new()
}

/// Every target.
pub const TARGETS: &[Target] = &[
    Target {
        name: "jsonrpc",
        about: "JSON-RPC request bodies (A2A 1.0) posted to a served agent",
        run: jsonrpc::jsonrpc,
        seeds: no_seeds,
        alive: Some(jsonrpc::alive),
    },
    Target {
        name: "jsonrpc_v0_3",
        about: "JSON-RPC request bodies with `A2A-Version: 0.3` (the 0.3 translation)",
        run: jsonrpc::jsonrpc_v0_3,
        seeds: no_seeds,
        alive: Some(jsonrpc::alive),
    },
    Target {
        name: "rest",
        about: "HTTP+JSON request bodies (first line: the route, the rest: the body)",
        run: rest::rest,
        seeds: no_seeds,
        alive: Some(jsonrpc::alive),
    },
    Target {
        name: "card",
        about: "the card reader (`wire`) and the linter on any bytes",
        run: card::card,
        seeds: card::seeds,
        alive: None,
    },
    Target {
        name: "signed_card",
        about: "signed card verification (`sign::verify`), JWKS and PEM keys",
        run: signed::signed_card,
        seeds: signed::seeds,
        alive: None,
    },
    Target {
        name: "journal",
        about: "journal rows read back (`journal::Entry`) and journaled tasks replayed",
        run: journal::journal,
        seeds: no_seeds,
        alive: None,
    },
    Target {
        name: "mcp",
        about: "MCP requests posted to `/mcp` in an open session",
        run: mcp::mcp,
        seeds: no_seeds,
        alive: Some(mcp::alive),
    },
    Target {
        name: "push_config",
        about: "`CreateTaskPushNotificationConfig` with any params, then read back and deleted",
        run: push::push_config,
        seeds: no_seeds,
        alive: Some(push::alive),
    },
];

/// The target named `name`.
pub fn find(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// How long an answer (and its body, to a stream's end) may take.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// The largest answer body read.
const MAX_ANSWER: usize = 16 << 20;

/// The process's runtime (one thread: the agent's tasks run while a target waits on it).
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

/// Webhooks that give up at once: the targets create push configs with any URL, and those
/// that must be taken name a loopback port where nothing listens (`127.0.0.1:9`), so that no
/// delivery leaves the machine.
fn quiet_webhooks() -> Webhooks {
    Webhooks::default()
        .allow_loopback(true)
        .retries(0)
        .timeout(Duration::from_millis(200))
}

/// The trip planner (streaming, push notifications, files, questions, a durable skill),
/// planning at once, served in this process: one per process.
pub fn planner() -> &'static TestAgent {
    static AGENT: OnceLock<TestAgent> = OnceLock::new();
    AGENT.get_or_init(|| {
        let planner = examples::trip_planner::agent::TripPlanner {
            pace: Duration::ZERO,
        };
        let server = Server::new(planner).webhooks(quiet_webhooks()).mcp(true);
        runtime()
            .block_on(TestAgent::start(server))
            .expect("the trip planner starts")
    })
}

/// An answer of a served agent, read whole.
#[derive(Debug)]
pub struct Answer {
    /// Its status.
    pub status: u16,
    /// Its `Content-Type`, or empty.
    pub content_type: String,
    /// Its headers' `mcp-session-id`, if any.
    pub session: Option<String>,
    /// Its body.
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as JSON, if it is.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The JSON values of the body: the body itself, or each `data:` line of an event stream.
    pub fn messages(&self) -> Vec<Value> {
        if self.content_type.starts_with("text/event-stream") {
            String::from_utf8_lossy(&self.body)
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|l| serde_json::from_str(l.trim()).ok())
                .collect()
        } else {
            self.json().into_iter().collect()
        }
    }
}

/// Posts `body` to `path` of `agent` with `headers` (and a JSON content type), and reads the
/// answer whole. `None` when `path` or a header is not one a request can carry (an input's
/// route that no client could send). Panics when the agent does not answer within 10 s or its
/// body does not end within 10 s.
pub fn post(
    agent: &TestAgent,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Option<Answer> {
    let mut request = Request::post(path)
        .header("host", host(agent))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Body::from(body)).ok()?;
    let answer = runtime().block_on(async {
        let answer = tokio::time::timeout(ANSWER_WITHIN, agent.request(request))
            .await
            .unwrap_or_else(|_| panic!("POST {path}: no answer within {ANSWER_WITHIN:?}"));
        let status = answer.status().as_u16();
        let header = |name: &str| {
            answer
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let content_type = header("content-type").unwrap_or_default();
        let session = header("mcp-session-id");
        let body = tokio::time::timeout(
            ANSWER_WITHIN,
            axum::body::to_bytes(answer.into_body(), MAX_ANSWER),
        )
        .await
        .unwrap_or_else(|_| {
            panic!("POST {path}: the answer's body did not end within {ANSWER_WITHIN:?}")
        })
        .unwrap_or_else(|e| panic!("POST {path}: the answer's body failed: {e}"))
        .to_vec();
        Answer {
            status,
            content_type,
            session,
            body,
        }
    });
    if std::env::var_os("FUZZ_SHOW").is_some() {
        eprintln!(
            "POST {path} -> {} {}: {}",
            answer.status,
            answer.content_type,
            String::from_utf8_lossy(&answer.body)
        );
    }
    Some(answer)
}

/// The `Host` a client of `agent` sends: its card URL's authority.
fn host(agent: &TestAgent) -> &str {
    let url = agent.card_url();
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split('/').next().unwrap_or(rest)
}

/// The checks every answer passes: below 500, and JSON where it says so (every event of a
/// stream too).
pub fn check_answer(path: &str, answer: &Answer) {
    assert!(
        answer.status < 500,
        "POST {path}: status {}: {}",
        answer.status,
        String::from_utf8_lossy(&answer.body)
    );
    if answer.content_type.starts_with("application/json") && !answer.body.is_empty() {
        assert!(
            answer.json().is_some(),
            "POST {path}: an answer said to be JSON is not: {}",
            String::from_utf8_lossy(&answer.body)
        );
    }
    if answer.content_type.starts_with("text/event-stream") {
        for line in String::from_utf8_lossy(&answer.body).lines() {
            // An event without data (a stream's priming event) is not a message.
            if let Some(data) = line.strip_prefix("data:").filter(|d| !d.trim().is_empty()) {
                assert!(
                    serde_json::from_str::<Value>(data.trim()).is_ok(),
                    "POST {path}: an event's data is not JSON: {data}"
                );
            }
        }
    }
}

/// Feeds back a JSON-RPC answer's shape: its status, and each message's error code and the
/// first words of its message, or the kind of its result.
pub fn feedback_rpc(answer: &Answer) {
    crate::feedback(&answer.status.to_string());
    crate::feedback(&answer.content_type);
    for message in answer.messages() {
        if let Some(error) = message.get("error") {
            crate::feedback(&error["code"].to_string());
            let text = error["message"].as_str().unwrap_or_default();
            crate::feedback(&text.chars().take(40).collect::<String>());
        } else if let Some(result) = message.get("result") {
            let keys: Vec<&str> = result
                .as_object()
                .map(|m| m.keys().map(String::as_str).collect())
                .unwrap_or_default();
            crate::feedback(&keys.join(","));
            crate::feedback(
                result
                    .pointer("/task/status/state")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
            );
        }
    }
}
