//! Tasks belong to their caller (A2A 1.0.1 section 13.1): on an agent that authenticates its
//! callers, a task of another owner is answered exactly as a task that does not exist, by
//! every task method (get, cancel, subscribe, an answer, the four push-config methods), on
//! every binding (JSON-RPC 1.0 and 0.3, HTTP+JSON, gRPC, and MCP's task methods), and is
//! never listed; its owner
//! reaches all of its own and an administrator reaches both. Two kinds of principals (JWT
//! subjects, API keys of two owners), on the memory store, SQLite and two replicas on
//! Postgres; a task made before the agent authenticated is an administrator's alone; the
//! read methods of push configs never echo the webhook's secrets. Tokens are real JWTs.

use std::time::Duration;

use crate::support::client::{Running, serve};
use crate::support::tokens::{self, AUDIENCE, ISSUER, Pair, claims};
use a2a_card::server::auth::{Algorithm, Authentication, JwtVerifier, Ownership, StaticApiKeys};
use a2a_card::server::store::Tasks;
use a2a_card::server::{Server, Webhooks};
use a2a_card::{Identity, SkillContext, agent, skill};
use a2a_pb::proto;
use a2a_pb::proto::a2a_service_client::A2aServiceClient;
use serde_json::{Value, json};

pub(crate) const BLUE_KEY: &str = "k-team-blue-0123456789abcdef";
pub(crate) const RED_KEY: &str = "k-team-red-0123456789abcdef";
pub(crate) const NOT_FOUND: i64 = -32001;

pub(crate) struct Notes;

/// Keeps notes for its callers.
#[agent(
    url = "http://127.0.0.1:9000",
    security_schemes(bearer = bearer("JWT"), key = api_key(header = "X-API-Key")),
    security(bearer),
    security(key),
    streaming = true,
    push_notifications = true
)]
impl Notes {
    /// Takes a note; asks what it says when told `ask`.
    #[skill]
    pub(crate) async fn note(&self, text: String, ctx: SkillContext) -> Result<String, String> {
        let who = ctx.principal().map(|p| p.subject().to_owned());
        let text = match text.as_str() {
            "ask" => ctx.ask("What does the note say?").await?.text().to_owned(),
            _ => text,
        };
        Ok(format!("subject={} note={text}", who.unwrap_or_default()))
    }
}

/// The agent as an anonymous one (no authentication): tasks by tenant alone.
struct Open;

/// Keeps notes for anyone.
#[agent(url = "http://127.0.0.1:9000", streaming = true)]
impl Open {
    /// Takes a note.
    #[skill]
    fn note(&self, text: String) -> String {
        text
    }
}

/// A caller: the headers its credentials go in.
#[derive(Clone)]
pub(crate) struct Caller {
    pub(crate) name: &'static str,
    pub(crate) header: (&'static str, String),
}

struct Callers {
    alice: Caller,
    bob: Caller,
    admin: Caller,
    blue: Caller,
    red: Caller,
}

pub(crate) fn bearer(name: &'static str, pair: &Pair, scope: &str) -> Caller {
    Caller {
        name,
        header: (
            "authorization",
            format!("Bearer {}", pair.sign(&claims(name, scope))),
        ),
    }
}

pub(crate) fn key(name: &'static str, key: &str) -> Caller {
    Caller {
        name,
        header: ("x-api-key", key.to_owned()),
    }
}

pub(crate) fn auth(pair: &Pair) -> Authentication {
    Authentication::new()
        .token(
            "bearer",
            JwtVerifier::new(tokens::keys(&[pair]), [Algorithm::EdDSA])
                .issuer(ISSUER)
                .audience(AUDIENCE),
        )
        .api_key(
            "key",
            StaticApiKeys::new()
                .key(BLUE_KEY, Identity::new("team-blue"))
                .key(RED_KEY, Identity::new("team-red")),
        )
        .ownership(Ownership::subject().admin_scope("tasks:admin"))
}

fn callers(pair: &Pair) -> Callers {
    Callers {
        alice: bearer("alice", pair, "notes"),
        bob: bearer("bob", pair, "notes"),
        admin: bearer("root", pair, "notes tasks:admin"),
        blue: key("team-blue", BLUE_KEY),
        red: key("team-red", RED_KEY),
    }
}

/// The agent, its webhooks allowed on loopback (none is ever reached: the tasks' webhooks
/// point at a closed port).
pub(crate) fn server(pair: &Pair) -> Server<Notes> {
    Server::new(Notes)
        .authentication(auth(pair))
        .webhooks(Webhooks::default().allow_loopback(true))
}

pub(crate) async fn notes(pair: &Pair, tasks: Tasks) -> Running {
    serve(server(pair).tasks(tasks)).await
}

pub(crate) fn text(text: &str, task: Option<&str>) -> Value {
    let mut message = json!({"messageId": a2a::new_message_id(), "role": "ROLE_USER",
                             "parts": [{"text": text}]});
    if let Some(task) = task {
        message["taskId"] = json!(task);
    }
    message
}

/// A JSON-RPC call by `caller` (`version`: `1.0` or `0.3`): its answer.
pub(crate) async fn rpc(
    base: &str,
    caller: &Caller,
    version: &str,
    method: &str,
    params: Value,
) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    reqwest::Client::new()
        .post(format!("{base}/"))
        .header("content-type", "application/json")
        .header("a2a-version", version)
        .header(caller.header.0, &caller.header.1)
        .body(body.to_string())
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON")
}

/// An HTTP+JSON request by `caller`: its status and body (the first bytes of a stream).
pub(crate) async fn http(
    base: &str,
    caller: &Caller,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, String) {
    let mut request = reqwest::Client::new()
        .request(method, format!("{base}{path}"))
        .header("a2a-version", "1.0")
        .header(caller.header.0, &caller.header.1)
        .timeout(Duration::from_secs(10));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("an answer");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// What `caller` may reach of task `id` (another owner's): nothing, in exactly the words a
/// task of its own that does not exist gets (`own`: the id of a task of the caller's, whose
/// prefix says where its tasks are).
async fn out_of_reach(base: &str, caller: &Caller, id: &str, own: &str) {
    let who = format!("{} on {id}", caller.name);
    // An id in the caller's own reach that names no task: the answers must not differ but for
    // the id.
    let none = format!("{}{}", &own[..own.len() - 36], a2a::new_task_id());
    for (method, params) in [
        ("GetTask", json!({"id": id})),
        ("CancelTask", json!({"id": id})),
        ("SubscribeToTask", json!({"id": id})),
        (
            "SendMessage",
            json!({"message": text("it says hi", Some(id))}),
        ),
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": id, "id": "c9", "url": "http://127.0.0.1:9/hook"}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": id, "id": "c1"}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"taskId": id})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": id, "id": "c1"}),
        ),
    ] {
        let answer = rpc(base, caller, "1.0", method, params.clone()).await;
        assert_eq!(
            answer["error"]["code"], NOT_FOUND,
            "{method} by {who}: {answer}"
        );
        let text = serde_json::to_string(&params)
            .expect("JSON")
            .replace(id, &none);
        let missing = rpc(
            base,
            caller,
            "1.0",
            method,
            serde_json::from_str(&text).expect("JSON"),
        )
        .await;
        assert_eq!(
            answer["error"]["message"]
                .as_str()
                .map(|m| m.replace(id, &none)),
            missing["error"]["message"].as_str().map(str::to_owned),
            "{method} by {who}: as a task that does not exist"
        );
    }
    let listed = rpc(base, caller, "1.0", "ListTasks", json!({})).await;
    assert!(
        !listed.to_string().contains(id),
        "listed to {who}: {listed}"
    );
    // JSON-RPC 0.3.
    for (method, params) in [
        ("tasks/get", json!({"id": id})),
        ("tasks/cancel", json!({"id": id})),
        ("tasks/pushNotificationConfig/list", json!({"id": id})),
    ] {
        let answer = rpc(base, caller, "0.3", method, params).await;
        assert_eq!(
            answer["error"]["code"], NOT_FOUND,
            "0.3 {method} by {who}: {answer}"
        );
    }
    // HTTP+JSON.
    use reqwest::Method;
    for (method, path, body) in [
        (Method::GET, format!("/tasks/{id}"), None),
        (Method::POST, format!("/tasks/{id}:cancel"), None),
        (Method::GET, format!("/tasks/{id}:subscribe"), None),
        (
            Method::GET,
            format!("/tasks/{id}/pushNotificationConfigs"),
            None,
        ),
        (
            Method::GET,
            format!("/tasks/{id}/pushNotificationConfigs/c1"),
            None,
        ),
        (
            Method::DELETE,
            format!("/tasks/{id}/pushNotificationConfigs/c1"),
            None,
        ),
        (
            Method::POST,
            "/message:send".to_owned(),
            Some(json!({"message": text("it says hi", Some(id))})),
        ),
    ] {
        let (status, body) = http(base, caller, method.clone(), &path, body).await;
        assert_eq!(status, 404, "{method} {path} by {who}: {body}");
    }
    let (status, listed) = http(base, caller, Method::GET, "/tasks", None).await;
    assert_eq!(status, 200, "{listed}");
    assert!(!listed.contains(id), "listed over HTTP+JSON to {who}");
}

/// Ids of the tasks `caller` lists.
async fn listed(base: &str, caller: &Caller) -> Vec<String> {
    let listed = rpc(base, caller, "1.0", "ListTasks", json!({})).await;
    listed["result"]["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {listed}"))
        .iter()
        .filter_map(|t| t["id"].as_str().map(str::to_owned))
        .collect()
}

/// A task `caller` makes: completed at once, or (`"ask"`) waiting for its answer.
pub(crate) async fn make(base: &str, caller: &Caller, what: &str) -> String {
    let made = rpc(
        base,
        caller,
        "1.0",
        "SendMessage",
        json!({"message": text(what, None)}),
    )
    .await;
    made["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {made}"))
        .to_owned()
}

/// Alice's and team-blue's tasks out of reach of bob and team-red (`other`: the base URL of
/// another replica on the same store, or the same), in reach of their owners and the admin.
async fn apart(base: &str, other: &str, c: &Callers) {
    let mut mine = Vec::new();
    for (owner, intruder) in [(&c.alice, &c.bob), (&c.blue, &c.red)] {
        let done = make(base, owner, "milk").await;
        let waiting = make(base, owner, "ask").await;
        let config = json!({"taskId": waiting, "id": "c1", "url": "http://127.0.0.1:9/hook",
                            "token": "secret-token-of-the-owner",
                            "authentication": {"scheme": "Bearer", "credentials": "secret-credentials"}});
        let saved = rpc(
            base,
            owner,
            "1.0",
            "CreateTaskPushNotificationConfig",
            config,
        )
        .await;
        assert!(saved["result"].is_object(), "{saved}");
        // The intruder's own tasks are its own.
        let theirs = make(other, intruder, "eggs").await;
        assert_eq!(listed(other, intruder).await, vec![theirs.clone()]);
        for id in [&done, &waiting] {
            out_of_reach(other, intruder, id, &theirs).await;
        }
        out_of_reach(base, owner, &theirs, &done).await;
        // The owner reaches its own, on either replica; its push configs without secrets.
        for at in [base, other] {
            let mut own = listed(at, owner).await;
            own.sort();
            let mut expected = vec![done.clone(), waiting.clone()];
            expected.sort();
            assert_eq!(own, expected, "{} lists its own", owner.name);
            let got = rpc(at, owner, "1.0", "GetTask", json!({"id": done})).await;
            assert_eq!(
                got["result"]["status"]["state"], "TASK_STATE_COMPLETED",
                "{got}"
            );
            let configs = rpc(
                at,
                owner,
                "1.0",
                "ListTaskPushNotificationConfigs",
                json!({"taskId": waiting}),
            )
            .await;
            let config = rpc(
                at,
                owner,
                "1.0",
                "GetTaskPushNotificationConfig",
                json!({"taskId": waiting, "id": "c1"}),
            )
            .await;
            for answer in [&configs, &config] {
                let text = answer.to_string();
                assert!(text.contains("127.0.0.1:9/hook"), "{text}");
                assert!(!text.contains("secret-"), "a secret echoed: {text}");
            }
        }
        // The owner answers its own question, and the skill saw who asked.
        let answered = rpc(
            other,
            owner,
            "1.0",
            "SendMessage",
            json!({"message": text("it says hi", Some(&waiting))}),
        )
        .await;
        let state = &answered["result"]["task"]["status"]["state"];
        assert!(
            state == "TASK_STATE_COMPLETED" || state == "TASK_STATE_WORKING",
            "{answered}"
        );
        mine.extend([done, waiting, theirs]);
    }
    // The administrator reaches every task of the tenant.
    let all = listed(other, &c.admin).await;
    for id in &mine {
        assert!(all.contains(id), "the admin lists {id}: {all:?}");
        let got = rpc(other, &c.admin, "1.0", "GetTask", json!({"id": id})).await;
        assert_eq!(got["result"]["id"], json!(id), "{got}");
    }
    // ... and its own tasks are its own, out of the others' reach.
    let its = make(base, &c.admin, "audit").await;
    out_of_reach(other, &c.alice, &its, &mine[0]).await;
}

/// gRPC: the same refusals, on the request's metadata.
async fn apart_over_grpc(base: &str, c: &Callers) {
    let id = make(base, &c.alice, "milk").await;
    let mut grpc = A2aServiceClient::connect(base.to_owned())
        .await
        .expect("connected");
    let by = |caller: &Caller| {
        let mut request = tonic::Request::new(proto::GetTaskRequest {
            id: id.clone(),
            ..Default::default()
        });
        request
            .metadata_mut()
            .insert(caller.header.0, caller.header.1.parse().expect("metadata"));
        request
    };
    let found = grpc.get_task(by(&c.alice)).await.expect("her own");
    assert_eq!(found.into_inner().id, id);
    let missing = grpc.get_task(by(&c.bob)).await.expect_err("not bob's");
    assert_eq!(missing.code(), tonic::Code::NotFound, "{missing:?}");
    let mut list = tonic::Request::new(proto::ListTasksRequest::default());
    list.metadata_mut()
        .insert(c.bob.header.0, c.bob.header.1.parse().expect("metadata"));
    let listed = grpc.list_tasks(list).await.expect("a list").into_inner();
    assert!(listed.tasks.iter().all(|t| t.id != id), "listed to bob");
    let mut cancel = tonic::Request::new(proto::CancelTaskRequest {
        id: id.clone(),
        ..Default::default()
    });
    cancel
        .metadata_mut()
        .insert(c.red.header.0, c.red.header.1.parse().expect("metadata"));
    let refused = grpc.cancel_task(cancel).await.expect_err("not cancelled");
    assert_eq!(refused.code(), tonic::Code::NotFound, "{refused:?}");
}

#[tokio::test]
async fn tasks_are_their_callers_in_memory() {
    let pair = Pair::ed25519("ed-1");
    let c = callers(&pair);
    let running = serve(server(&pair).grpc(true).tasks(Tasks::memory())).await;
    apart(&running.base, &running.base, &c).await;
    apart_over_grpc(&running.base, &c).await;
}

pub(crate) fn db(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("a2a-owners-{name}-{}.db", std::process::id()))
}

pub(crate) fn remove(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

#[tokio::test]
async fn tasks_are_their_callers_in_sqlite_and_after_a_restart() {
    let pair = Pair::ed25519("ed-1");
    let c = callers(&pair);
    let path = db("sqlite");
    let first = notes(&pair, Tasks::sqlite(&path)).await;
    apart(&first.base, &first.base, &c).await;
    let theirs = listed(&first.base, &c.alice).await;
    drop(first);
    // Another process on the same file: the same owners.
    let again = notes(&pair, Tasks::sqlite(&path)).await;
    let mut after = listed(&again.base, &c.alice).await;
    after.sort();
    let mut before = theirs.clone();
    before.sort();
    assert_eq!(after, before);
    let bobs = make(&again.base, &c.bob, "eggs").await;
    for id in &theirs {
        out_of_reach(&again.base, &c.bob, id, &bobs).await;
    }
    drop(again);
    remove(&path);
}

#[tokio::test]
async fn tasks_are_their_callers_across_postgres_replicas() {
    let Some(url) = crate::support::postgres::database_or_skip("owners").await else {
        return;
    };
    let pair = Pair::ed25519("ed-1");
    let c = callers(&pair);
    let a = notes(&pair, Tasks::postgres(url.clone())).await;
    let b = notes(&pair, Tasks::postgres(url)).await;
    apart(&a.base, &b.base, &c).await;
}

#[tokio::test]
async fn a_task_made_before_the_agent_authenticated_is_an_administrators_alone() {
    let pair = Pair::ed25519("ed-1");
    let c = callers(&pair);
    let path = db("legacy");
    // Made while the agent authenticated nobody.
    let open = serve(Server::new(Open).tasks(Tasks::sqlite(&path))).await;
    let nobody = Caller {
        name: "nobody",
        header: ("x-nobody", String::new()),
    };
    let old = make(&open.base, &nobody, "from before").await;
    // Anyone reaches it there, as today.
    let got = rpc(&open.base, &nobody, "1.0", "GetTask", json!({"id": old})).await;
    assert_eq!(got["result"]["id"], json!(old), "{got}");
    drop(open);
    let guarded = notes(&pair, Tasks::sqlite(&path)).await;
    for caller in [&c.alice, &c.blue] {
        let own = make(&guarded.base, caller, "now").await;
        out_of_reach(&guarded.base, caller, &old, &own).await;
    }
    let got = rpc(
        &guarded.base,
        &c.admin,
        "1.0",
        "GetTask",
        json!({"id": old}),
    )
    .await;
    assert_eq!(
        got["result"]["id"],
        json!(old),
        "the admin reaches it: {got}"
    );
    assert!(listed(&guarded.base, &c.admin).await.contains(&old));
    drop(guarded);
    remove(&path);
}

#[tokio::test]
async fn tasks_of_a_tenant_are_shared_under_the_tenant_model() {
    let pair = Pair::ed25519("ed-1");
    let c = callers(&pair);
    let running =
        serve(server(&pair).authentication(auth(&pair).ownership(Ownership::tenant()))).await;
    let hers = make(&running.base, &c.alice, "milk").await;
    let got = rpc(&running.base, &c.bob, "1.0", "GetTask", json!({"id": hers})).await;
    assert_eq!(got["result"]["id"], json!(hers), "{got}");
    assert!(listed(&running.base, &c.red).await.contains(&hers));
}

#[tokio::test]
async fn callers_of_one_organisation_share_their_tasks() {
    let pair = Pair::ed25519("ed-1");
    let member = |sub: &'static str, org: Option<&str>| {
        let mut claims = claims(sub, "notes");
        if let Some(org) = org {
            claims["org"] = json!(org);
        }
        Caller {
            name: sub,
            header: ("authorization", format!("Bearer {}", pair.sign(&claims))),
        }
    };
    let running =
        serve(server(&pair).authentication(auth(&pair).ownership(Ownership::claim("org")))).await;
    let (ann, ben, cid) = (
        member("ann", Some("blue")),
        member("ben", Some("blue")),
        member("cid", Some("red")),
    );
    let anns = make(&running.base, &ann, "milk").await;
    assert_eq!(listed(&running.base, &ben).await, vec![anns.clone()]);
    let cids = make(&running.base, &cid, "eggs").await;
    out_of_reach(&running.base, &cid, &anns, &cids).await;
    // A caller without the claim is refused, and makes nothing.
    let stranger = member("dan", None);
    let refused = rpc(
        &running.base,
        &stranger,
        "1.0",
        "SendMessage",
        json!({"message": text("milk", None)}),
    )
    .await;
    assert_eq!(refused["error"]["code"], -31403, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("`org`"), "{message}");
}

/// An MCP request of the tasks extension's protocol (2026-07-28) by `caller`.
async fn mcp(base: &str, caller: &Caller, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": caller.name, "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}}});
    let name = params["name"].as_str().or(params["taskId"].as_str());
    let mut request = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", crate::support::mcp::ACCEPT)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header(caller.header.0, &caller.header.1);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    crate::support::mcp::message(
        request
            .body(body.to_string())
            .send()
            .await
            .expect("an answer"),
    )
    .await
}

/// The error of an MCP answer, with `id` written as `ID` (to compare two answers' words).
fn mcp_error(answer: &Value, id: &str) -> String {
    let message = answer["error"]["message"].as_str();
    let message = message.unwrap_or_else(|| panic!("an error: {answer}"));
    message.replace(id, "ID")
}

#[tokio::test]
async fn tasks_are_their_callers_over_mcp() {
    let pair = Pair::ed25519("owners-mcp");
    let running = serve(server(&pair).mcp(true).tasks(Tasks::memory())).await;
    let base = &running.base;
    let c = callers(&pair);
    // Alice's tool call waits on a question: an MCP task backed by her A2A task.
    let call = json!({"name": "note", "arguments": {"text": "ask"}});
    let made = mcp(base, &c.alice, "tools/call", call).await;
    let task = made["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {made}"))
        .to_owned();
    let mut state = Value::Null;
    for _ in 0..200 {
        state = mcp(base, &c.alice, "tasks/get", json!({"taskId": task})).await;
        if state["result"]["status"] == "input_required" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(state["result"]["status"], "input_required", "{state}");

    // Bob reaches none of it, in the words of a task that does not exist.
    let (alices, _) = task.rsplit_once('.').unwrap_or(("", &task));
    let missing = task.replace(alices, "00000000-0000-4000-8000-000000000000");
    let unknown = mcp(base, &c.bob, "tasks/get", json!({"taskId": missing})).await;
    let unknown = mcp_error(&unknown, &missing);
    let got = mcp(base, &c.bob, "tasks/get", json!({"taskId": task})).await;
    assert_eq!(mcp_error(&got, &task), unknown, "{got}");
    let answer = json!({"taskId": task, "inputResponses": {
        "answer": {"action": "accept", "content": {"answer": "bob was here"}}}});
    let updated = mcp(base, &c.bob, "tasks/update", answer).await;
    assert_eq!(mcp_error(&updated, &task), unknown, "{updated}");
    let canceled = mcp(base, &c.bob, "tasks/cancel", json!({"taskId": task})).await;
    assert_eq!(mcp_error(&canceled, &task), unknown, "{canceled}");

    // Alice's task is as she left it, and hers to answer; the administrator sees it.
    let still = mcp(base, &c.alice, "tasks/get", json!({"taskId": task})).await;
    assert_eq!(still["result"]["status"], "input_required", "{still}");
    let seen = mcp(base, &c.admin, "tasks/get", json!({"taskId": task})).await;
    assert_eq!(seen["result"]["status"], "input_required", "{seen}");
    let answer = json!({"taskId": task, "inputResponses": {
        "answer": {"action": "accept", "content": {"answer": "milk"}}}});
    let updated = mcp(base, &c.alice, "tasks/update", answer).await;
    assert!(updated.get("error").is_none(), "{updated}");
    for _ in 0..200 {
        state = mcp(base, &c.alice, "tasks/get", json!({"taskId": task})).await;
        if state["result"]["status"] == "completed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(state["result"]["status"], "completed", "{state}");
    assert!(
        state.to_string().contains("subject=alice note=milk"),
        "{state}"
    );
}
