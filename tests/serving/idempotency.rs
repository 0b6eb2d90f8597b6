//! Idempotent sends: a send made again with its idempotency key (the `Idempotency-Key` header,
//! gRPC metadata, or the `messageId` under the idempotency extension) by the same caller gets
//! the task the first one made, and the skill runs once: over JSON-RPC, HTTP+JSON, gRPC and MCP,
//! blocking and streaming, retries at once, on SQLite after a restart and on two Postgres
//! replicas (the retry reaching the other). The same key with another message is refused;
//! another caller's key makes its own task; a send without a key is a task of its own, as
//! ever.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use a2a_card::idempotency::IDEMPOTENCY_EXTENSION_URI;
use a2a_card::server::Server;
use a2a_card::server::auth::{Authentication, StaticApiKeys};
use a2a_card::server::store::Tasks;
use a2a_card::{Identity, agent, skill};
use a2a_pb::proto;
use a2a_pb::proto::a2a_service_client::A2aServiceClient;
use serde_json::{Value, json};

use crate::support::client::{Running, serve};

/// Counts the words it is given: how many times its skill ran.
#[derive(Clone, Default)]
struct Counter {
    runs: Arc<AtomicUsize>,
}

/// Counts words.
#[agent(url = "http://127.0.0.1:9000", streaming = true)]
impl Counter {
    /// Counts a word, slowly.
    #[skill]
    async fn count(&self, word: String) -> String {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        format!("{word} #{n}")
    }
}

/// The counter behind API keys of two owners.
#[derive(Clone, Default)]
struct Guarded {
    runs: Arc<AtomicUsize>,
}

/// Counts words for its callers.
#[agent(
    url = "http://127.0.0.1:9000",
    security_schemes(key = api_key(header = "X-API-Key")),
    security(key)
)]
impl Guarded {
    /// Counts a word.
    #[skill]
    async fn count(&self, word: String) -> String {
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        format!("{word} #{n}")
    }
}

fn message(id: &str, text: &str) -> Value {
    json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// A JSON-RPC 1.0 `method` with `message`, and `headers`.
async fn rpc(base: &str, method: &str, message: Value, headers: &[(&str, &str)]) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method,
        "params": {"message": message}});
    let mut request = reqwest::Client::new()
        .post(base)
        .header("A2A-Version", "1.0")
        .json(&body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("an answer");
    let text = response.text().await.expect("a body");
    // A stream: its first event.
    let json = text
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .map_or(text.as_str(), str::trim);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// A gRPC `SendMessage` of `text` (message `message_id`) with idempotency key `key`.
fn grpc_send(message_id: &str, text: &str, key: &str) -> tonic::Request<proto::SendMessageRequest> {
    let mut request = tonic::Request::new(proto::SendMessageRequest {
        message: Some(proto::Message {
            message_id: message_id.into(),
            role: proto::Role::User.into(),
            parts: vec![proto::Part {
                content: Some(proto::part::Content::Text(text.into())),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    });
    request
        .metadata_mut()
        .insert("idempotency-key", key.parse().expect("metadata"));
    request
}

fn task_id(answer: &Value) -> String {
    let task = &answer["result"]["task"];
    task["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {answer}"))
        .to_owned()
}

fn said(answer: &Value) -> String {
    answer["result"]["task"]["artifacts"][0]["parts"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("an answer: {answer}"))
        .to_owned()
}

async fn counter(tasks: Tasks) -> (Running, Arc<AtomicUsize>) {
    let agent = Counter::default();
    let runs = Arc::clone(&agent.runs);
    (
        serve(Server::new(agent).grpc(true).tasks(tasks)).await,
        runs,
    )
}

#[tokio::test]
async fn a_send_retried_with_its_key_gets_the_first_task_and_the_skill_runs_once() {
    let (running, runs) = counter(Tasks::memory()).await;
    let base = &running.base;
    let key = [("Idempotency-Key", "order-1")];
    let first = rpc(base, "SendMessage", message("m-1", "apples"), &key).await;
    let again = rpc(base, "SendMessage", message("m-1", "apples"), &key).await;
    assert_eq!(task_id(&again), task_id(&first));
    assert_eq!(said(&again), "apples #1", "{again}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // Under the header, a retry may give its message a new messageId.
    let renamed = rpc(base, "SendMessage", message("m-2", "apples"), &key).await;
    assert_eq!(task_id(&renamed), task_id(&first));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn retries_sent_at_once_make_one_task() {
    let (running, runs) = counter(Tasks::memory()).await;
    let base = &running.base;
    let key = [("Idempotency-Key", "burst")];
    let sends = (0..5).map(|_| rpc(base, "SendMessage", message("m-1", "pears"), &key));
    let answers = futures::future::join_all(sends).await;
    let first = task_id(&answers[0]);
    for answer in &answers {
        assert_eq!(task_id(answer), first, "{answer}");
        assert_eq!(said(answer), "pears #1", "{answer}");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_same_key_with_another_message_is_refused() {
    let (running, runs) = counter(Tasks::memory()).await;
    let base = &running.base;
    let key = [("Idempotency-Key", "order-2")];
    let first = rpc(base, "SendMessage", message("m-1", "plums"), &key).await;
    let other = rpc(base, "SendMessage", message("m-1", "figs"), &key).await;
    assert_eq!(other["error"]["code"], -32602, "{other}");
    let words = other["error"]["message"].as_str().expect("a message");
    assert!(words.contains("Idempotency-Key `order-2`"), "{words}");
    assert!(words.contains(&task_id(&first)), "{words}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn under_the_extension_the_message_id_is_the_key() {
    let (running, runs) = counter(Tasks::memory()).await;
    let base = &running.base;
    // The card declares the extension (as the official client reads it).
    let card = crate::support::client::card(base).await;
    assert!(
        card.capabilities
            .extensions
            .iter()
            .flatten()
            .any(|e| e.uri == IDEMPOTENCY_EXTENSION_URI),
        "{card:?}"
    );
    let active = [("A2A-Extensions", IDEMPOTENCY_EXTENSION_URI)];
    let first = rpc(base, "SendMessage", message("m-7", "kiwis"), &active).await;
    let again = rpc(base, "SendMessage", message("m-7", "kiwis"), &active).await;
    assert_eq!(task_id(&again), task_id(&first));
    let other = rpc(base, "SendMessage", message("m-8", "kiwis"), &active).await;
    assert_ne!(task_id(&other), task_id(&first));
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    // Without the extension (or a header), a send is a task of its own, as ever.
    let plain = rpc(base, "SendMessage", message("m-7", "kiwis"), &[]).await;
    assert_ne!(task_id(&plain), task_id(&first));
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_streamed_send_retried_gets_the_first_tasks_stream() {
    let (running, runs) = counter(Tasks::memory()).await;
    let base = &running.base;
    let key = [("Idempotency-Key", "stream-1")];
    let first = rpc(base, "SendStreamingMessage", message("m-1", "limes"), &key).await;
    let id = first["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_owned();
    // While it runs, and once it ended: the same task.
    let during = rpc(base, "SendStreamingMessage", message("m-1", "limes"), &key).await;
    assert_eq!(during["result"]["task"]["id"], id.as_str(), "{during}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = rpc(base, "SendStreamingMessage", message("m-1", "limes"), &key).await;
    assert_eq!(after["result"]["task"]["id"], id.as_str(), "{after}");
    assert_eq!(
        after["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{after}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn http_json_and_grpc_retries_get_the_first_task() {
    let (running, runs) = counter(Tasks::memory()).await;
    let base = &running.base;
    let send = || async {
        let body = json!({"message": message("m-1", "dates")});
        let answer: Value = reqwest::Client::new()
            .post(format!("{base}/message:send"))
            .header("A2A-Version", "1.0")
            .header("Idempotency-Key", "rest-1")
            .json(&body)
            .send()
            .await
            .expect("an answer")
            .json()
            .await
            .expect("JSON");
        answer["task"]["id"].as_str().expect("a task").to_owned()
    };
    let first = send().await;
    assert_eq!(send().await, first);
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    let mut grpc = A2aServiceClient::connect(base.clone())
        .await
        .expect("connected");
    let request = || grpc_send("m-1", "grapes", "grpc-1");
    let id = |response: proto::SendMessageResponse| match response.payload {
        Some(proto::send_message_response::Payload::Task(task)) => task.id,
        other => panic!("a task: {other:?}"),
    };
    let first = id(grpc
        .send_message(request())
        .await
        .expect("sent")
        .into_inner());
    let again = id(grpc
        .send_message(request())
        .await
        .expect("sent")
        .into_inner());
    assert_eq!(again, first);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn another_callers_key_makes_its_own_task() {
    let agent = Guarded::default();
    let runs = Arc::clone(&agent.runs);
    let keys = StaticApiKeys::new()
        .key("k-blue-0123456789abcdef", Identity::new("blue"))
        .key("k-red-0123456789abcdef", Identity::new("red"));
    let running =
        serve(Server::new(agent).authentication(Authentication::new().api_key("key", keys))).await;
    let base = &running.base;
    let as_ = |who: &'static str| [("X-API-Key", who), ("Idempotency-Key", "shared")];
    let blue = rpc(
        base,
        "SendMessage",
        message("m-1", "nuts"),
        &as_("k-blue-0123456789abcdef"),
    )
    .await;
    let red = rpc(
        base,
        "SendMessage",
        message("m-1", "nuts"),
        &as_("k-red-0123456789abcdef"),
    )
    .await;
    assert_ne!(task_id(&blue), task_id(&red));
    let blue_again = rpc(
        base,
        "SendMessage",
        message("m-1", "nuts"),
        &as_("k-blue-0123456789abcdef"),
    )
    .await;
    assert_eq!(task_id(&blue_again), task_id(&blue));
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_key_outlives_a_restart_on_sqlite() {
    let path = std::env::temp_dir().join(format!("a2a-keys-{}.db", std::process::id()));
    let agent = Counter::default();
    let runs = Arc::clone(&agent.runs);
    let key = [("Idempotency-Key", "restart-1")];
    let first = serve(Server::new(agent.clone()).tasks(Tasks::sqlite(&path))).await;
    let made = rpc(&first.base, "SendMessage", message("m-1", "olives"), &key).await;
    drop(first);
    let again = serve(Server::new(agent).tasks(Tasks::sqlite(&path))).await;
    let retried = rpc(&again.base, "SendMessage", message("m-1", "olives"), &key).await;
    assert_eq!(task_id(&retried), task_id(&made));
    assert_eq!(said(&retried), "olives #1");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    drop(again);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

#[tokio::test]
async fn a_retry_reaching_another_postgres_replica_gets_the_first_task() {
    let Some(url) = crate::support::postgres::database_or_skip("keys").await else {
        return;
    };
    let agent = Counter::default();
    let runs = Arc::clone(&agent.runs);
    let a = serve(Server::new(agent.clone()).tasks(Tasks::postgres(url.clone()))).await;
    let b = serve(Server::new(agent).tasks(Tasks::postgres(url))).await;
    let key = [("Idempotency-Key", "replicas-1")];
    // At once on both (the second while the first runs), then again once it ended.
    let (first, during) = futures::join!(
        rpc(&a.base, "SendMessage", message("m-1", "figs"), &key),
        async {
            tokio::time::sleep(Duration::from_millis(30)).await;
            rpc(&b.base, "SendMessage", message("m-1", "figs"), &key).await
        }
    );
    assert_eq!(task_id(&during), task_id(&first));
    assert_eq!(said(&during), "figs #1", "{during}");
    let after = rpc(&b.base, "SendMessage", message("m-1", "figs"), &key).await;
    assert_eq!(task_id(&after), task_id(&first));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_crates_client_makes_its_sends_idempotent_where_the_agent_offers_it() {
    use a2a_card::client::{Connect, Payload};
    let (running, runs) = counter(Tasks::memory()).await;
    let agent = Connect::new(running.base.clone())
        .discover()
        .await
        .expect("the agent");
    let message = agent
        .message("count", Payload::text("beans"))
        .expect("a message");
    // The same message sent again (as after a lost answer): the same task, run once.
    let first = agent
        .send_message(message.clone(), false)
        .await
        .expect("sent");
    let again = agent.send_message(message, false).await.expect("sent");
    assert_eq!(again.task_id(), first.task_id());
    assert!(first.task_id().is_some());
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // A new message is a new task.
    let other = agent
        .call("count", Payload::text("beans"))
        .await
        .expect("sent");
    assert_ne!(other.task_id(), first.task_id());
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_mcp_tool_call_retried_with_its_key_runs_the_skill_once() {
    let agent = Counter::default();
    let runs = Arc::clone(&agent.runs);
    let running = serve(Server::new(agent).mcp(true)).await;
    let call = |key: &'static str| {
        let base = running.base.clone();
        async move {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "count", "arguments": {"text": "pecans"},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {}}}});
            let response = reqwest::Client::new()
                .post(format!("{base}/mcp"))
                .header("content-type", "application/json")
                .header("accept", crate::support::mcp::ACCEPT)
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "count")
                .header("Idempotency-Key", key)
                .body(body.to_string())
                .send()
                .await
                .expect("an answer");
            crate::support::mcp::message(response).await
        }
    };
    let first = call("mcp-1").await;
    assert!(first.to_string().contains("pecans #1"), "{first}");
    let again = call("mcp-1").await;
    assert!(again.to_string().contains("pecans #1"), "{again}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let other = call("mcp-2").await;
    assert!(other.to_string().contains("pecans #2"), "{other}");
}

/// Sends `body` to `url` as a client would (with `headers`): its JSON answer, or why none came.
async fn post(url: &str, body: &Value, headers: &[(&str, &str)]) -> Result<Value, String> {
    let mut request = reqwest::Client::new().post(url).json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.map_err(|e| e.to_string())?;
    response.json().await.map_err(|e| e.to_string())
}

/// Where an answer of a binding says the task's id.
type IdOf = fn(&Value) -> Option<&str>;

/// The agent at `agent` behind a proxy that loses the answer to the first request of each
/// binding: the request is sent with its key, its answer lost (the connection closed as it
/// comes back), and sent again (through `retry`: the proxy, or another replica) with the same
/// key. Each binding gets the task its first send made, whose skill ran once.
async fn answers_lost_on_the_way_back(agent: &str, retry: &str, runs: &AtomicUsize) {
    use crate::support::proxy::Proxy;
    let address = agent
        .trim_start_matches("http://")
        .parse()
        .expect("an address");
    let proxy = Proxy::start(address).await;
    let front = format!("http://127.0.0.1:{}", proxy.port());
    let retry = if retry == agent {
        front.as_str()
    } else {
        retry
    };
    let before = runs.load(Ordering::SeqCst);
    // JSON-RPC 1.0, JSON-RPC 0.3 and HTTP+JSON: (path, body, version, the answer's task id).
    let v1 = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": message("lost-1", "pears")}});
    let v03 = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send",
        "params": {"message": {"kind": "message", "messageId": "lost-2", "role": "user",
                               "parts": [{"kind": "text", "text": "plums"}]}}});
    let rest = json!({"message": message("lost-3", "quinces")});
    let bindings: [(&str, &str, &Value, &str, IdOf); 3] = [
        ("JSON-RPC 1.0", "/", &v1, "1.0", |a| {
            a["result"]["task"]["id"].as_str()
        }),
        ("JSON-RPC 0.3", "/", &v03, "0.3", |a| {
            a["result"]["id"].as_str()
        }),
        ("HTTP+JSON", "/message:send", &rest, "1.0", |a| {
            a["task"]["id"].as_str()
        }),
    ];
    for (n, (binding, path, body, version, id_of)) in bindings.into_iter().enumerate() {
        let key = format!("lost-{n}");
        let headers = [("A2A-Version", version), ("Idempotency-Key", key.as_str())];
        proxy.lose_answers(1);
        let lost = post(&format!("{front}{path}"), body, &headers).await;
        assert!(
            lost.is_err(),
            "{binding}: the first answer is lost: {lost:?}"
        );
        // The skill ran for it (an answer is written once it did).
        assert_eq!(
            runs.load(Ordering::SeqCst),
            before + n + 1,
            "{binding}: ran"
        );
        let again = post(&format!("{retry}{path}"), body, &headers)
            .await
            .unwrap_or_else(|e| panic!("{binding}: the retry is answered: {e}"));
        let id = id_of(&again).unwrap_or_else(|| panic!("{binding}: a task: {again}"));
        let once = post(&format!("{retry}{path}"), body, &headers)
            .await
            .expect("answered");
        assert_eq!(id_of(&once), Some(id), "{binding}: the same task again");
        assert_eq!(
            runs.load(Ordering::SeqCst),
            before + n + 1,
            "{binding}: the skill ran once for the send and its retries"
        );
    }
    // gRPC: the answer lost, the connection with it; the retry on a new one. The
    // connection is set up first (HTTP/2's settings go both ways before any call).
    let request = || grpc_send("lost-4", "figs", "lost-grpc");
    let mut through = A2aServiceClient::connect(front.clone())
        .await
        .expect("connected");
    let unknown = proto::GetTaskRequest {
        id: "no-such-task".into(),
        ..Default::default()
    };
    assert!(through.get_task(unknown).await.is_err(), "no such task");
    proxy.lose_answers(1);
    assert!(
        through.send_message(request()).await.is_err(),
        "gRPC: the first answer is lost"
    );
    assert_eq!(runs.load(Ordering::SeqCst), before + 4, "gRPC: ran");
    let mut again = A2aServiceClient::connect(retry.to_owned())
        .await
        .expect("connected");
    let task = match again
        .send_message(request())
        .await
        .expect("the retry")
        .into_inner()
        .payload
    {
        Some(proto::send_message_response::Payload::Task(task)) => task,
        other => panic!("gRPC: a task: {other:?}"),
    };
    assert_eq!(
        task.status.map(|s| s.state),
        Some(proto::TaskState::Completed.into())
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        before + 4,
        "gRPC: the skill ran once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_whose_answer_was_lost_retried_runs_the_skill_once_on_sqlite() {
    let path = std::env::temp_dir().join(format!("lost-answers-{}.db", std::process::id()));
    let (running, runs) = counter(Tasks::sqlite(&path)).await;
    answers_lost_on_the_way_back(&running.base, &running.base, &runs).await;
    drop(running);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_whose_answer_was_lost_retried_on_another_postgres_replica_runs_the_skill_once() {
    let Some(url) = crate::support::postgres::database_or_skip("lost_answers").await else {
        return;
    };
    let agent = Counter::default();
    let runs = Arc::clone(&agent.runs);
    let a = serve(
        Server::new(agent.clone())
            .grpc(true)
            .tasks(Tasks::postgres(url.clone())),
    )
    .await;
    let b = serve(Server::new(agent).grpc(true).tasks(Tasks::postgres(url))).await;
    answers_lost_on_the_way_back(&a.base, &b.base, &runs).await;
}
