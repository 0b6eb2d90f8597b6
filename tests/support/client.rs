//! The official Rust client (`a2a-client-lf`) against a server of this crate, on a free
//! loopback port.

use std::collections::HashMap;

use a2a::{
    A2AError, AgentCard, GetTaskRequest, ListTasksRequest, Message, Part, PartContent, Role,
    SendMessageRequest, SendMessageResponse, Task,
};
use a2a_card::Agent;
use a2a_card::server::Server;
use a2a_client::agent_card::AgentCardResolver;
use a2a_client::{A2AClient, A2AClientFactory, Transport};
use serde_json::Value;
use tokio::sync::oneshot;

/// A server running until the guard is dropped.
pub struct Running {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    _stop: oneshot::Sender<()>,
}

/// Serves `server` on a free loopback port.
pub async fn serve<A: Agent>(server: Server<A>) -> Running {
    let listening = server
        .bind("127.0.0.1:0")
        .await
        .expect("bind a free loopback port");
    let base = format!("http://{}", listening.local_addr());
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(listening.serve_with_shutdown(async {
        let _ = stopped.await;
    }));
    Running { base, _stop: stop }
}

/// The served card, as the official client resolves it.
pub async fn card(base: &str) -> AgentCard {
    AgentCardResolver::new(None)
        .resolve(base)
        .await
        .expect("the official client reads the served card")
}

/// A client speaking `binding` (`JSONRPC`, `HTTP+JSON`).
pub async fn client(card: &AgentCard, binding: &str) -> A2AClient<Box<dyn Transport>> {
    A2AClientFactory::builder()
        .preferred_bindings(vec![binding.to_owned()])
        .build()
        .create_from_card(card)
        .await
        .expect("a transport for the card's interfaces")
}

/// A data part of schema `schema`.
pub fn data_part(schema: &str, data: Value) -> Part {
    Part::data(data).with_media_type(format!("application/json;schema={schema}"))
}

/// A `SendMessage` request of these parts, on task `task_id` when given.
pub fn request(parts: Vec<Part>, task_id: Option<String>) -> SendMessageRequest {
    let mut message = Message::new(Role::User, parts);
    message.task_id = task_id;
    SendMessageRequest {
        message,
        configuration: None,
        metadata: None,
        tenant: None,
    }
}

/// The task of an answer.
pub fn task(response: SendMessageResponse) -> Task {
    match response {
        SendMessageResponse::Task(task) => task,
        SendMessageResponse::Message(m) => panic!("expected a task, got a message: {m:?}"),
    }
}

/// The struct detail (`DispatchError::data`) of an error.
pub fn details(error: &A2AError) -> HashMap<String, Value> {
    error
        .details
        .iter()
        .flatten()
        .find(|d| d.type_url == "type.googleapis.com/google.protobuf.Struct")
        .map(|d| d.value.clone())
        .unwrap_or_else(|| panic!("no struct detail in {error:?}"))
}

/// A `ListTasks` request for every task, unfiltered.
pub fn every_task() -> ListTasksRequest {
    ListTasksRequest {
        context_id: None,
        status: None,
        page_size: None,
        page_token: None,
        history_length: None,
        status_timestamp_after: None,
        include_artifacts: None,
        tenant: None,
    }
}

/// A `GetTask` request for task `id`, with its whole history.
pub fn get(id: &str) -> GetTaskRequest {
    GetTaskRequest {
        id: id.to_owned(),
        history_length: None,
        tenant: None,
    }
}

/// The text of a task's status message.
pub fn status_text(task: &Task) -> String {
    task.status
        .message
        .iter()
        .flat_map(|m| &m.parts)
        .filter_map(|p| match &p.content {
            PartContent::Text(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

/// A JSON-RPC 1.0 call (raw HTTP) to the agent at `base`: the HTTP status and the answer.
pub async fn rpc_status(base: &str, method: &str, params: Value) -> (u16, Value) {
    rpc_status_to(&format!("{base}/"), method, params).await
}

/// A JSON-RPC 1.0 call (raw HTTP) to the agent at `base`: its answer.
pub async fn rpc(base: &str, method: &str, params: Value) -> Value {
    rpc_status(base, method, params).await.1
}

/// A JSON-RPC 1.0 call posted to `url` as written (an agent's interface URL, which may have
/// a path): its answer.
pub async fn rpc_to(url: &str, method: &str, params: Value) -> Value {
    rpc_status_to(url, method, params).await.1
}

/// A JSON-RPC 1.0 call posted to `url` as written: the HTTP status and the answer.
async fn rpc_status_to(url: &str, method: &str, params: Value) -> (u16, Value) {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(body.to_string())
        .send()
        .await
        .expect("an answer");
    let status = response.status().as_u16();
    (status, response.json().await.expect("JSON"))
}

/// The `data` of each event of an SSE answer, read to its end.
pub async fn events_of(response: reqwest::Response) -> Vec<Value> {
    assert_eq!(response.status(), 200);
    let text = response.text().await.expect("the events");
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()).expect("JSON events"))
        .collect()
}

/// A streaming JSON-RPC call (`version`: the `A2A-Version` header), read to its end.
pub async fn rpc_stream(
    base: &str,
    version: Option<&str>,
    method: &str,
    params: Value,
) -> Vec<Value> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": "s", "method": method, "params": params});
    let mut request = reqwest::Client::new()
        .post(format!("{base}/"))
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .body(body.to_string());
    if let Some(version) = version {
        request = request.header("A2A-Version", version);
    }
    events_of(request.send().await.expect("a stream")).await
}

/// An HTTP+JSON 1.0 request's JSON answer.
pub async fn http_json(request: reqwest::RequestBuilder) -> Value {
    request
        .header("A2A-Version", "1.0")
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON")
}
