//! End to end: the fight_club example's server on a free loopback port, and the official Rust
//! client (`a2a-client-lf`) resolving its card and sending it messages; 0.3 clients over raw
//! HTTP.

use crate::fight_club::agent;
use crate::fight_club::server;
use crate::support;

use a2a::{Part, PartContent, Task, TaskState, error_code};
use a2a_client::{A2AClient, Transport};
use serde_json::{Value, json};
use support::client::{card, client, data_part, details, every_task, request, task};
use tokio::sync::oneshot;

/// The example's server, running until the guard is dropped.
struct Running {
    base: String,
    _stop: oneshot::Sender<()>,
}

async fn start() -> Running {
    let listening = server::example(a2a_card::server::store::Tasks::memory())
        .bind(("127.0.0.1", 0))
        .await
        .expect("bind a free loopback port");
    let base = server::base_url(&listening);
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(listening.serve_with_shutdown(async {
        let _ = stopped.await;
    }));
    Running { base, _stop: stop }
}

async fn structured_answer_is_a_completed_task(client: &A2AClient<Box<dyn Transport>>) -> Task {
    let answer = client
        .send_message(&request(
            vec![data_part(
                "fightComparison",
                json!({"a": "Godzilla", "b": "Mothra"}),
            )],
            None,
        ))
        .await
        .expect("a structured message runs the skill");
    let task = task(answer);
    assert_eq!(task.status.state, TaskState::Completed);
    let artifacts = task.artifacts.clone().unwrap_or_default();
    assert_eq!(artifacts.len(), 1, "{task:?}");
    let part = &artifacts[0].parts[0];
    assert_eq!(
        part.media_type.as_deref(),
        Some("application/json;schema=fightResponse")
    );
    assert_eq!(
        part.metadata.as_ref().and_then(|m| m.get("mimeType")),
        Some(&json!("application/json;schema=fightResponse"))
    );
    let PartContent::Data(data) = &part.content else {
        panic!("expected a data part, got {part:?}")
    };
    // The answer follows the schema the card publishes for it.
    let card = card_json();
    let validator = jsonschema::validator_for(&card["schemas"]["fightResponse"])
        .expect("the published schema compiles");
    assert!(validator.is_valid(data), "{data}");
    assert_eq!(data["winner"], "Godzilla");
    task
}

fn card_json() -> Value {
    use a2a_card::Agent;
    agent::FightClub::card()
        .expect("the card builds")
        .to_json(a2a_card::wire::Profile::V1)
}

#[tokio::test]
async fn the_official_client_resolves_the_card_at_the_served_url() {
    let server = start().await;
    let card = card(&server.base).await;
    assert_eq!(card.name, "Fight Club");
    let interfaces: Vec<_> = card
        .supported_interfaces
        .iter()
        .map(|i| {
            (
                i.url.as_str(),
                i.protocol_binding.as_str(),
                i.protocol_version.as_str(),
            )
        })
        .collect();
    let url = server.base.as_str();
    // gRPC at the URL's origin, which the official client reads as `host:port`.
    let grpc = url.trim_start_matches("http://");
    assert_eq!(
        interfaces,
        [
            (url, "JSONRPC", "1.0"),
            (url, "HTTP+JSON", "1.0"),
            (grpc, "GRPC", "1.0"),
            (url, "JSONRPC", "0.3")
        ]
    );
    assert_eq!(card.skills[0].id, "fight-comparison");
}

#[tokio::test]
async fn every_branch_of_the_flow_over_json_rpc_and_http_json() {
    let server = start().await;
    let card = card(&server.base).await;
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let client = client(&card, binding).await;

        // A structured message: a completed task with a structured artifact.
        let done = structured_answer_is_a_completed_task(&client).await;

        // Invalid data: -32602 with the violations, and no task.
        let err = client
            .send_message(&request(
                vec![data_part("fightComparison", json!({"a": "Lion", "c": 3}))],
                None,
            ))
            .await
            .expect_err("invalid data is refused");
        assert_eq!(err.code, error_code::INVALID_PARAMS, "{binding}: {err:?}");
        let data = details(&err);
        assert_eq!(data["reason"], "invalid-data");
        let violations = data["violations"].as_array().cloned().unwrap_or_default();
        assert!(
            violations
                .iter()
                .any(|v| v["message"].as_str().unwrap_or_default().contains("\"b\"")),
            "{binding}: {violations:?}"
        );
        assert!(err.message.contains("fightComparison"), "{}", err.message);

        // An undeclared schema: -32005 with the mode.
        let err = client
            .send_message(&request(
                vec![data_part("fightResponse", json!({"winner": "x"}))],
                None,
            ))
            .await
            .expect_err("an undeclared schema is refused");
        assert_eq!(
            err.code,
            error_code::CONTENT_TYPE_NOT_SUPPORTED,
            "{binding}: {err:?}"
        );
        assert_eq!(
            details(&err)["mode"],
            "application/json;schema=fightResponse"
        );

        // Structured input on an existing task: -32602, task already running.
        let err = client
            .send_message(&request(
                vec![data_part(
                    "fightComparison",
                    json!({"a": "Lion", "b": "Tiger"}),
                )],
                Some(done.id.clone()),
            ))
            .await
            .expect_err("structured input on an existing task is refused");
        assert_eq!(err.code, error_code::INVALID_PARAMS, "{binding}: {err:?}");
        let data = details(&err);
        assert_eq!(data["reason"], "task-already-running");
        assert_eq!(data["taskId"], json!(done.id));

        // Text takes the text path.
        let answer = client
            .send_message(&request(vec![Part::text("Lion vs Tiger?")], None))
            .await
            .expect("text runs the skill");
        let task = task(answer);
        assert_eq!(task.status.state, TaskState::Completed);
        let artifacts = task.artifacts.unwrap_or_default();
        assert_eq!(
            artifacts[0].parts[0].as_text(),
            Some("Tiger wins (56%): Tiger brings more to the fight than Lion.")
        );
    }

    // Refused messages left no task behind: only the four that ran are there.
    let client = client(&card, "JSONRPC").await;
    let list = client
        .list_tasks(&every_task())
        .await
        .expect("tasks are listed");
    assert_eq!(list.tasks.len(), 4, "{:?}", list.tasks);
    assert!(
        list.tasks
            .iter()
            .all(|t| t.status.state == TaskState::Completed)
    );
}

async fn post(base: &str, version: Option<&str>, body: Value) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/"))
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(version) = version {
        request = request.header("a2a-version", version);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let text = response.text().await.expect("a body");
    let json = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (status, json)
}

#[tokio::test]
async fn a_0_3_client_sends_message_send_with_kind_tagged_parts() {
    let server = start().await;
    let send = |id: u32, data: Value| {
        json!({
            "jsonrpc": "2.0", "id": id, "method": "message/send",
            "params": {"message": {
                "kind": "message", "messageId": format!("m{id}"), "role": "user",
                "parts": [{"kind": "data", "data": data,
                           "metadata": {"mimeType": "application/json;schema=fightComparison"}}]
            }}
        })
    };
    // 0.3 clients send no A2A-Version header.
    let (status, answer) = post(
        &server.base,
        None,
        send(1, json!({"a": "Lion", "b": "Tiger"})),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let task = &answer["result"];
    assert_eq!(task["kind"], "task", "{answer}");
    assert_eq!(task["status"]["state"], "completed");
    let part = &task["artifacts"][0]["parts"][0];
    assert_eq!(part["kind"], "data");
    assert_eq!(
        part["metadata"]["mimeType"],
        "application/json;schema=fightResponse"
    );
    assert_eq!(part["data"]["winner"], "Tiger");
    assert_eq!(task["history"][0]["role"], "user");

    // tasks/get finds it, in the 0.3 shape.
    let get =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": task["id"]}});
    let (_, got) = post(&server.base, Some("0.3"), get).await;
    assert_eq!(got["result"]["id"], task["id"]);
    assert_eq!(got["result"]["status"]["state"], "completed");

    // Invalid data: the 0.3 error carries the agent's details as its `data`.
    let (status, answer) = post(&server.base, None, send(3, json!({"a": "Lion"}))).await;
    assert_eq!(status, 200);
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["error"]["data"]["reason"], "invalid-data");

    // The extension's own example message (its messageId is a number).
    let example: Value = serde_json::from_str(include_str!(
        "../data/fixtures/io-schemas-extension/user-message.json"
    ))
    .expect("the fixture is JSON");
    let rpc = json!({"jsonrpc": "2.0", "id": 4, "method": "message/send", "params": {"message": example}});
    let (_, answer) = post(&server.base, None, rpc).await;
    assert_eq!(answer["result"]["status"]["state"], "completed", "{answer}");

    // A 0.3 method under a 1.0 header is unknown there, and the answer says why.
    let (status, answer) = post(&server.base, Some("1.0"), send(5, json!({}))).await;
    assert_eq!(status, 200);
    assert_eq!(answer["error"]["code"], -32601);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("0.3"),
        "{answer}"
    );
}

#[tokio::test]
async fn the_card_route_negotiates_caches_and_allows_any_origin() {
    let server = start().await;
    let http = reqwest::Client::new();
    let url = format!("{}/.well-known/agent-card.json", server.base);
    let get = |version: Option<&str>| {
        let mut r = http.get(&url);
        if let Some(v) = version {
            r = r.header("a2a-version", v);
        }
        r.send()
    };

    let compat = get(None).await.expect("compat card");
    assert_eq!(compat.status(), 200);
    let h = compat.headers().clone();
    assert_eq!(h["access-control-allow-origin"], "*");
    assert_eq!(h["cache-control"], "public, max-age=300");
    assert_eq!(h["vary"], "A2A-Version");
    assert_eq!(h["content-type"], "application/json");
    let etag = h["etag"].to_str().unwrap_or_default().to_owned();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
    let compat: Value = compat.json().await.expect("JSON");
    assert!(compat["supportedInterfaces"].is_array() && compat["url"].is_string());

    assert!(compat["schemas"]["fightComparison"].is_object());

    let v1: Value = get(Some("1.0"))
        .await
        .expect("v1")
        .json()
        .await
        .expect("JSON");
    assert!(v1.get("url").is_none() && v1["supportedInterfaces"].is_array());
    assert!(v1["schemas"]["fightResponse"].is_object());
    let v03: Value = get(Some("0.3"))
        .await
        .expect("v0.3")
        .json()
        .await
        .expect("JSON");
    assert!(v03.get("supportedInterfaces").is_none());
    assert_eq!(v03["url"], json!(server.base));
    assert_eq!(v03["protocolVersion"], "0.3");
    assert_eq!(v03["preferredTransport"], "JSONRPC");
    for doc in [&compat, &v1, &v03] {
        let errors: Vec<_> = a2a_card::lint::lint_json(doc)
            .into_iter()
            .filter(|f| f.severity == a2a_card::lint::Severity::Error)
            .collect();
        assert!(errors.is_empty(), "the served card lints clean: {errors:?}");
    }

    // Each profile has its own validator; a matching If-None-Match is a 304.
    let v1_etag = get(Some("1.0")).await.expect("v1").headers()["etag"].clone();
    assert_ne!(v1_etag.to_str().unwrap_or_default(), etag);
    let cached = http
        .get(&url)
        .header("if-none-match", &etag)
        .send()
        .await
        .expect("304");
    assert_eq!(cached.status(), 304);
    assert_eq!(cached.headers()["etag"].to_str().unwrap_or_default(), etag);
    assert!(cached.bytes().await.expect("empty").is_empty());
    let stale = http
        .get(&url)
        .header("if-none-match", "\"other\"")
        .send()
        .await
        .expect("200");
    assert_eq!(stale.status(), 200);

    let unknown = get(Some("2.0")).await.expect("400");
    assert_eq!(unknown.status(), 400);
    let body: Value = unknown.json().await.expect("JSON");
    assert!(
        body["error"].as_str().unwrap_or_default().contains("1.0"),
        "{body}"
    );

    let preflight = http
        .request(reqwest::Method::OPTIONS, &url)
        .header("origin", "https://app.example.com")
        .header("access-control-request-method", "GET")
        .header("access-control-request-headers", "a2a-version")
        .send()
        .await
        .expect("preflight");
    assert_eq!(preflight.status(), 204);
    let h = preflight.headers();
    assert_eq!(h["access-control-allow-origin"], "*");
    let allowed = h["access-control-allow-headers"]
        .to_str()
        .unwrap_or_default()
        .to_ascii_lowercase();
    assert!(allowed.contains("a2a-version"), "{allowed}");

    // The AG-UI capabilities of the same declaration.
    let caps = http
        .get(format!("{}/capabilities", server.base))
        .send()
        .await
        .expect("capabilities");
    assert_eq!(caps.status(), 200);
    assert_eq!(caps.headers()["access-control-allow-origin"], "*");
    let caps: Value = caps.json().await.expect("JSON");
    assert_eq!(caps["identity"]["name"], "Fight Club");
    assert_eq!(caps["tools"]["items"][0]["name"], "fight-comparison");
    // Its one skill takes no context, so it never asks; it can be cancelled all the same.
    assert!(caps.get("humanInTheLoop").is_none(), "{caps}");
    assert_eq!(caps["custom"]["a2a"]["cancellation"], true);
}

#[tokio::test]
async fn the_example_banner_says_where_and_its_curl_request_works() {
    // The README promises port 8080 when neither --port nor PORT says otherwise.
    assert_eq!(server::DEFAULT_PORT, 8080);
    let listening = server::example(a2a_card::server::store::Tasks::memory())
        .bind(("127.0.0.1", 0))
        .await
        .expect("bind a free loopback port");
    let base = server::base_url(&listening);
    let banner = server::banner(&listening);
    assert!(
        banner.contains(&format!("listening on {base}\n")),
        "{banner}"
    );
    assert!(
        banner.contains(&format!("{base}/.well-known/agent-card.json")),
        "{banner}"
    );
    assert!(banner.contains(&format!("curl -s {base}/ ")), "{banner}");
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(listening.serve_with_shutdown(async {
        let _ = stopped.await;
    }));
    let (status, answer) = post(
        &base,
        Some("1.0"),
        server::structured_request("Lion", "Tiger"),
    )
    .await;
    assert_eq!(status, 200);
    let task = &answer["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
    assert_eq!(task["artifacts"][0]["parts"][0]["data"]["winner"], "Tiger");
    drop(stop);
}

mod streaming {
    //! A streaming agent: the official client's stream, and a 0.3 `message/stream` translated
    //! event by event.
    use super::*;
    use futures::StreamExt;

    #[tokio::test]
    async fn the_count_example_streams_a_chunk_per_number_then_the_whole_artifact() {
        let running =
            support::client::serve(a2a_card::server::Server::new(crate::count::Counter)).await;
        let client = client(&card(&running.base).await, "JSONRPC").await;
        let mut events = client
            .send_streaming_message(&request(vec![Part::text("3")], None))
            .await
            .expect("a stream");
        let (mut updates, mut last) = (Vec::new(), None);
        while let Some(event) = events.next().await {
            match event.expect("an event") {
                a2a::StreamResponse::ArtifactUpdate(u) => updates.push(u),
                other => last = Some(other),
            }
        }
        let texts: Vec<Vec<&str>> = updates
            .iter()
            .map(|u| u.artifact.parts.iter().filter_map(Part::as_text).collect())
            .collect();
        assert_eq!(
            texts,
            [
                vec!["chunk 0"],
                vec!["chunk 1"],
                vec!["chunk 2"],
                vec!["chunk 0", "chunk 1", "chunk 2"]
            ]
        );
        assert_eq!(updates[3].last_chunk, Some(true));
        assert!(
            matches!(&last, Some(a2a::StreamResponse::StatusUpdate(u)) if u.status.state == TaskState::Completed),
            "{last:?}"
        );
    }

    struct Shouter;

    /// Shouts back what it is told.
    #[a2a_card::agent(url = "http://127.0.0.1:1/a2a", streaming)]
    impl Shouter {
        /// Says the text in capitals.
        #[a2a_card::skill]
        async fn shout(&self, text: String) -> String {
            text.to_uppercase()
        }
    }

    #[tokio::test]
    async fn events_stream_in_both_versions() {
        let listening = a2a_card::server::Server::new(Shouter)
            .bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listening.local_addr());
        // The declared loopback URL took the bound port, and kept its path.
        assert_eq!(listening.url(), format!("{base}/a2a"));
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(listening.serve_with_shutdown(async {
            let _ = stopped.await;
        }));

        let card = card(&base).await;
        assert!(card.supported_interfaces[0].url.ends_with("/a2a"));
        for binding in ["JSONRPC", "HTTP+JSON"] {
            let client = client(&card, binding).await;
            let mut events = client
                .send_streaming_message(&request(vec![Part::text("hey")], None))
                .await
                .expect("a stream");
            let mut seen = Vec::new();
            while let Some(event) = events.next().await {
                seen.push(event.expect("an event"));
            }
            let text = seen.iter().find_map(|e| match e {
                a2a::StreamResponse::ArtifactUpdate(u) => {
                    u.artifact.parts[0].as_text().map(str::to_owned)
                }
                _ => None,
            });
            assert_eq!(text.as_deref(), Some("HEY"), "{binding}: {seen:?}");
            let last = seen.last().expect("events");
            assert!(
                matches!(last, a2a::StreamResponse::StatusUpdate(u) if u.status.state == TaskState::Completed),
                "{binding}: {last:?}"
            );
        }

        let body = json!({
            "jsonrpc": "2.0", "id": "s", "method": "message/stream",
            "params": {"message": {"kind": "message", "messageId": "m", "role": "user",
                                   "parts": [{"kind": "text", "text": "hey"}]}}
        });
        let response = reqwest::Client::new()
            .post(format!("{base}/a2a"))
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .body(body.to_string())
            .send()
            .await
            .expect("a stream");
        assert_eq!(response.status(), 200);
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap_or_default()
                .starts_with("text/event-stream")
        );
        let text = response.text().await.expect("the events");
        let events: Vec<Value> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).expect("JSON-RPC responses"))
            .collect();
        let kinds: Vec<&str> = events
            .iter()
            .map(|e| e["result"]["kind"].as_str().unwrap_or_default())
            .collect();
        // The stream begins with the task (A2A 1.0 section 3.1.2; 0.3 clients take it too).
        assert_eq!(
            kinds,
            ["task", "status-update", "artifact-update", "status-update"],
            "{text}"
        );
        assert!(events.iter().all(|e| e["id"] == "s"));
        assert_eq!(events[0]["result"]["status"]["state"], "submitted");
        assert_eq!(events[2]["result"]["artifact"]["parts"][0]["kind"], "text");
        assert_eq!(events[2]["result"]["artifact"]["parts"][0]["text"], "HEY");
        assert_eq!(events[3]["result"]["status"]["state"], "completed");
        assert_eq!(events[3]["result"]["final"], true);
        assert_eq!(events[1]["result"]["final"], false);
        drop(stop);
    }
}

mod failures {
    //! A handler's error fails the task with its message; input the schema allows but the
    //! handler's type refuses is an invalid-params answer, and leaves no task half-done.
    use super::*;
    use serde::{Deserialize, Deserializer};

    /// A count the schema takes as any integer; the type takes only even ones.
    #[derive(Deserialize, schemars::JsonSchema, a2a_card::Schema)]
    struct Pairs {
        #[serde(deserialize_with = "even")]
        count: u32,
    }

    fn even<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        let n = u32::deserialize(d)?;
        if n % 2 == 0 {
            Ok(n)
        } else {
            Err(serde::de::Error::custom(format!("{n} is odd")))
        }
    }

    struct Counter;

    /// Counts pairs.
    #[a2a_card::agent(url = "http://127.0.0.1:1")]
    impl Counter {
        /// Halves an even count, and refuses zero.
        #[a2a_card::skill]
        fn halve(&self, pairs: Pairs) -> Result<String, String> {
            match pairs.count {
                0 => Err("nothing to halve".to_owned()),
                n => Ok((n / 2).to_string()),
            }
        }
    }

    #[tokio::test]
    async fn handler_errors_and_input_errors() {
        let listening = a2a_card::server::Server::new(Counter)
            .bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listening.local_addr());
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(listening.serve_with_shutdown(async {
            let _ = stopped.await;
        }));
        let client = client(&card(&base).await, "JSONRPC").await;
        let send = |count: u32| {
            let client = &client;
            async move {
                client
                    .send_message(&request(
                        vec![data_part("pairs", json!({"count": count}))],
                        None,
                    ))
                    .await
            }
        };

        // Whole numbers reach a u32 field (the official server carries them as doubles).
        let done = task(send(8).await.expect("8 is even"));
        assert_eq!(done.status.state, TaskState::Completed);
        let artifacts = done.artifacts.unwrap_or_default();
        assert_eq!(artifacts[0].parts[0].as_text(), Some("4"));

        // The handler's Err: a failed task with the message.
        let failed = task(send(0).await.expect("an answer"));
        assert_eq!(failed.status.state, TaskState::Failed);
        let why = failed
            .status
            .message
            .as_ref()
            .and_then(|m| m.text())
            .unwrap_or_default();
        assert_eq!(why, "nothing to halve");

        // Valid by the schema, refused by the type: invalid params, and the task is failed
        // rather than left submitted.
        let err = send(3).await.expect_err("3 is odd");
        assert_eq!(err.code, error_code::INVALID_PARAMS, "{err:?}");
        assert!(err.message.contains("3 is odd"), "{}", err.message);
        let list = client
            .list_tasks(&every_task())
            .await
            .expect("tasks are listed");
        let mut states: Vec<_> = list.tasks.iter().map(|t| t.status.state.clone()).collect();
        states.sort_by_key(|s| format!("{s:?}"));
        assert_eq!(
            states,
            [TaskState::Completed, TaskState::Failed, TaskState::Failed]
        );
        drop(stop);
    }
}

/// Every JSON pointer in `value`, its leaves with their JSON type (not their values).
fn shape(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                shape(v, format!("{at}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                shape(v, format!("{at}/{i}"), out);
            }
        }
        Value::String(_) => out.push(format!("{at}: string")),
        Value::Number(_) => out.push(format!("{at}: number")),
        Value::Bool(_) => out.push(format!("{at}: bool")),
        Value::Null => out.push(format!("{at}: null")),
    }
}

#[tokio::test]
async fn a_send_answered_by_the_endpoint_has_the_official_routers_shape() {
    // `SendMessage` in the 1.0 JSON, and the same message with ProtoJSON's snake_case names
    // (brought to the 1.0 spelling before it is read): both answers have one shape.
    let running = start().await;
    let message = |id_key: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
            id_key: "m1", "role": "ROLE_USER",
            "parts": [{"data": {"a": "Lion", "b": "Tiger"},
                       "mediaType": "application/json;schema=fightComparison"}]}}})
    };
    let http = reqwest::Client::new();
    let mut shapes = Vec::new();
    for id_key in ["messageId", "message_id"] {
        let answer: Value = http
            .post(&running.base)
            .header("A2A-Version", "1.0")
            .json(&message(id_key))
            .send()
            .await
            .expect("an answer")
            .json()
            .await
            .expect("JSON");
        let task = &answer["result"]["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
        assert_eq!(
            task["artifacts"][0]["parts"][0]["data"]["winner"], "Tiger",
            "{answer}"
        );
        let mut paths = Vec::new();
        shape(&answer, String::new(), &mut paths);
        paths.sort();
        shapes.push(paths);
    }
    assert_eq!(shapes[0], shapes[1]);
}
