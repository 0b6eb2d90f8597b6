//! Tenants kept apart (A2A 1.0 section 8.3.2, the `tenant` of every request): a task made in
//! one tenant is not found, listed, cancelled, subscribed to, answered or given push configs in
//! another (or in none), over JSON-RPC (the params' `tenant`), HTTP+JSON (`/{tenant}/...`) and
//! gRPC (the request's `tenant`), on the memory store and on SQLite; a tenant that is not a
//! path segment is refused, and nothing is stored.

use crate::support;
use crate::trip_planner::server;

use std::time::Duration;

use a2a_card::server::Webhooks;
use a2a_card::server::store::Tasks;
use a2a_pb::proto;
use a2a_pb::proto::a2a_service_client::A2aServiceClient;
use serde_json::{Value, json};
use support::client::{Running, http_json, rpc, serve};

async fn planner(tasks: Tasks) -> Running {
    let webhooks = Webhooks::default().allow_loopback(true);
    serve(server::server(Duration::from_millis(1), webhooks).tasks(tasks)).await
}

/// A trip without a start date: the skill asks for one, and waits.
fn asks() -> Value {
    json!({"messageId": a2a::new_message_id(), "role": "ROLE_USER",
           "parts": [{"data": {"destination": "Lisbon", "days": 2},
                      "mediaType": "application/json;schema=tripRequest"}]})
}

fn with_tenant(mut params: Value, tenant: Option<&str>) -> Value {
    if let Some(tenant) = tenant {
        params["tenant"] = json!(tenant);
    }
    params
}

const NOT_FOUND: i64 = -32001;

/// Every task method of `other` (a tenant, or none) against task `id`: not found, not listed.
async fn apart(base: &str, id: &str, other: Option<&str>) {
    let who = format!("{other:?} on {id}");
    for (method, params) in [
        ("GetTask", json!({"id": id})),
        ("CancelTask", json!({"id": id})),
        ("SubscribeToTask", json!({"id": id})),
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": id, "id": "c1", "url": format!("{base}/hook")}),
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
        let answer = rpc(base, method, with_tenant(params, other)).await;
        assert_eq!(
            answer["error"]["code"], NOT_FOUND,
            "{method} {who}: {answer}"
        );
    }
    // An answer to its question, from another tenant.
    let mut answer = json!({"messageId": "m-a", "role": "ROLE_USER",
                            "parts": [{"text": "2026-12-01"}], "taskId": id});
    answer = json!({"message": answer});
    let answered = rpc(base, "SendMessage", with_tenant(answer, other)).await;
    assert_eq!(
        answered["error"]["code"], NOT_FOUND,
        "answer {who}: {answered}"
    );
    // Not listed.
    let listed = rpc(base, "ListTasks", with_tenant(json!({}), other)).await;
    let ids: Vec<&str> = listed["result"]["tasks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert!(!ids.contains(&id), "listed {who}: {listed}");
}

async fn tenants_are_kept_apart(tasks: Tasks) {
    let running = planner(tasks).await;
    let base = &running.base;
    // Made in tenant `acme` over JSON-RPC.
    let made = rpc(
        base,
        "SendMessage",
        json!({"message": asks(), "tenant": "acme"}),
    )
    .await;
    let task = &made["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{made}"
    );
    let id = task["id"].as_str().expect("an id").to_owned();
    assert!(id.starts_with("acme:"), "{id}");
    // Seen in its own tenant...
    let got = rpc(base, "GetTask", json!({"id": id, "tenant": "acme"})).await;
    assert_eq!(got["result"]["id"], json!(id), "{got}");
    let listed = rpc(base, "ListTasks", json!({"tenant": "acme"})).await;
    assert_eq!(listed["result"]["totalSize"], 1, "{listed}");
    // ... and nowhere else.
    apart(base, &id, Some("beta")).await;
    apart(base, &id, None).await;
    // A task of the default tenant is not another tenant's either.
    let plain = rpc(base, "SendMessage", json!({"message": asks()})).await;
    let plain = plain["result"]["task"]["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    assert!(!plain.contains(':'), "{plain}");
    apart(base, &plain, Some("acme")).await;
    let listed = rpc(base, "ListTasks", json!({})).await;
    assert_eq!(
        listed["result"]["totalSize"], 1,
        "the default tenant's: {listed}"
    );

    // HTTP+JSON: the tenant is the path's first segment.
    let http = reqwest::Client::new();
    let get = |path: String| {
        let http = http.clone();
        async move {
            let response = http
                .get(path)
                .header("a2a-version", "1.0")
                .send()
                .await
                .expect("an answer");
            (
                response.status().as_u16(),
                response.json::<Value>().await.expect("JSON"),
            )
        }
    };
    let (status, body) = get(format!("{base}/acme/tasks/{id}")).await;
    assert_eq!((status, &body["id"]), (200, &json!(id)), "{body}");
    for path in [
        format!("{base}/beta/tasks/{id}"),
        format!("{base}/tasks/{id}"),
    ] {
        let (status, body) = get(path.clone()).await;
        assert_eq!(status, 404, "{path}: {body}");
    }
    let (_, listed) = get(format!("{base}/beta/tasks")).await;
    assert_eq!(listed["totalSize"], 0, "{listed}");
    let made = http_json(
        http.post(format!("{base}/beta/message:send"))
            .json(&json!({"message": asks()})),
    )
    .await;
    let beta = made["task"]["id"].as_str().expect("an id").to_owned();
    assert!(beta.starts_with("beta:"), "{made}");
    apart(base, &beta, Some("acme")).await;
    // The path and the body must name the same tenant.
    let clash = http
        .post(format!("{base}/beta/message:send"))
        .header("a2a-version", "1.0")
        .json(&json!({"message": asks(), "tenant": "acme"}))
        .send()
        .await
        .expect("an answer");
    assert_eq!(clash.status(), 400);

    // gRPC: the request's tenant.
    let mut grpc = A2aServiceClient::connect(base.clone())
        .await
        .expect("connected");
    let get = |tenant: &str| proto::GetTaskRequest {
        id: id.clone(),
        tenant: tenant.to_owned(),
        ..Default::default()
    };
    let found = grpc
        .get_task(get("acme"))
        .await
        .expect("found in its tenant");
    assert_eq!(found.into_inner().id, id);
    let missing = grpc
        .get_task(get("beta"))
        .await
        .expect_err("not in another");
    assert_eq!(missing.code(), tonic::Code::NotFound);
    let missing = grpc.get_task(get("")).await.expect_err("nor in none");
    assert_eq!(missing.code(), tonic::Code::NotFound);
}

#[tokio::test]
async fn tenants_are_kept_apart_in_memory() {
    tenants_are_kept_apart(Tasks::memory()).await;
}

#[tokio::test]
async fn tenants_are_kept_apart_in_sqlite() {
    let path = std::env::temp_dir().join(format!("a2a-tenants-{}.db", std::process::id()));
    tenants_are_kept_apart(Tasks::sqlite(&path)).await;
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

#[tokio::test]
async fn a_tenant_that_is_not_a_path_segment_is_refused_and_nothing_is_stored() {
    let running = planner(Tasks::memory()).await;
    let base = &running.base;
    for tenant in ["a/b", "", &"x".repeat(65), "a b", ".."] {
        let answer = rpc(
            base,
            "SendMessage",
            json!({"message": asks(), "tenant": tenant}),
        )
        .await;
        assert_eq!(answer["error"]["code"], -32602, "{tenant:?}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("tenant"), "{tenant:?}: {message}");
    }
    let response = reqwest::Client::new()
        .post(format!("{base}/a%20b/message:send"))
        .header("a2a-version", "1.0")
        .json(&json!({"message": asks()}))
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), 400);
    let listed = rpc(base, "ListTasks", json!({})).await;
    assert_eq!(listed["result"]["totalSize"], 0, "{listed}");
}

/// The tenant a skill was called in, as the agents below say it.
fn tenant_of(ctx: &a2a_card::SkillContext) -> String {
    ctx.tenant().unwrap_or("(default)").to_owned()
}

struct Where;

/// Says where it was called.
#[a2a_card::agent(url = "http://127.0.0.1:9000")]
impl Where {
    /// Names the tenant.
    #[a2a_card::skill]
    fn here(&self, _text: String, ctx: a2a_card::SkillContext) -> String {
        tenant_of(&ctx)
    }
}

#[tokio::test]
async fn a_skill_sees_the_tenant_it_was_called_in() {
    let running = serve(a2a_card::server::Server::new(Where)).await;
    let text = json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "?"}]});
    for (tenant, said) in [(Some("acme"), "acme"), (None, "(default)")] {
        let answer = rpc(
            &running.base,
            "SendMessage",
            with_tenant(json!({"message": text}), tenant),
        )
        .await;
        assert_eq!(
            answer["result"]["task"]["artifacts"][0]["parts"][0]["text"], said,
            "{answer}"
        );
    }
}

#[tokio::test]
async fn the_client_sends_the_tenant_its_card_names_on_every_binding() {
    use a2a_card::client::{Connect, Payload};
    let running = serve(
        a2a_card::server::Server::new(Where)
            .tenant("acme")
            .grpc(true),
    )
    .await;
    let url = format!("{}/.well-known/agent-card.json", running.base);
    for binding in ["JSONRPC", "HTTP+JSON", "GRPC"] {
        let agent = Connect::new(&url)
            .prefer_bindings([binding])
            .discover()
            .await
            .expect("the card");
        let outcome = agent
            .call("here", Payload::text("?"))
            .await
            .unwrap_or_else(|e| panic!("{binding}: {e}"));
        let id = outcome.task_id().unwrap_or_default().to_owned();
        assert!(id.starts_with("acme:"), "{binding}: {id}");
        let outputs = format!("{:?}", outcome.outputs());
        assert!(outputs.contains("acme"), "{binding}: {outputs}");
    }
}

struct Guarded;

/// Says where it was called, to known callers.
#[a2a_card::agent(
    url = "http://127.0.0.1:9000",
    security_schemes(key = api_key(header = "X-API-Key")),
    security(key)
)]
impl Guarded {
    /// Names the tenant.
    #[a2a_card::skill]
    fn here(&self, _text: String, ctx: a2a_card::SkillContext) -> String {
        tenant_of(&ctx)
    }
}

#[tokio::test]
async fn a_caller_may_use_only_the_tenants_it_belongs_to_when_the_server_says_which() {
    use a2a_card::Identity;
    use a2a_card::server::auth::{Authentication, StaticApiKeys};
    let member = |tenant: &str| {
        let mut claims = serde_json::Map::new();
        claims.insert("tenant".into(), json!(tenant));
        Identity::new(format!("{tenant}-user")).with_claims(claims)
    };
    let keys = StaticApiKeys::new()
        .key("k-acme-0123456789", member("acme"))
        .key("k-beta-0123456789", member("beta"));
    let auth = Authentication::new()
        .api_key("key", keys)
        .tenants(|caller| {
            let tenant = caller.claims().get("tenant").and_then(Value::as_str);
            tenant.map(str::to_owned).into_iter().collect()
        });
    let running = serve(a2a_card::server::Server::new(Guarded).authentication(auth)).await;
    let base = &running.base;
    let text = json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "?"}]});
    let call = |key: &'static str, tenant: Option<&'static str>| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                          "params": with_tenant(json!({"message": text}), tenant)});
        let base = base.clone();
        async move {
            let response = reqwest::Client::new()
                .post(format!("{base}/"))
                .header("content-type", "application/json")
                .header("a2a-version", "1.0")
                .header("x-api-key", key)
                .body(body.to_string())
                .send()
                .await
                .expect("an answer");
            (
                response.status().as_u16(),
                response.json::<Value>().await.expect("JSON"),
            )
        }
    };
    // Its own tenant, and the default one.
    let (status, answer) = call("k-acme-0123456789", Some("acme")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["result"]["task"]["artifacts"][0]["parts"][0]["text"],
        "acme"
    );
    let (status, answer) = call("k-acme-0123456789", None).await;
    assert_eq!(status, 200, "{answer}");
    // Another's: 403, and no task.
    let (status, answer) = call("k-beta-0123456789", Some("acme")).await;
    assert_eq!(status, 403, "{answer}");
    assert_eq!(answer["error"]["code"], -31403, "{answer}");
    let refused = reqwest::Client::new()
        .post(format!("{base}/acme/message:send"))
        .header("a2a-version", "1.0")
        .header("x-api-key", "k-beta-0123456789")
        .json(&json!({"message": text}))
        .send()
        .await
        .expect("an answer");
    assert_eq!(refused.status(), 403);
    let listed = http_json(
        reqwest::Client::new()
            .get(format!("{base}/acme/tasks"))
            .header("x-api-key", "k-acme-0123456789"),
    )
    .await;
    assert_eq!(
        listed["totalSize"], 1,
        "only the one its member made: {listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_1_3_client_sends_the_tenant_its_card_names_on_every_binding() {
    let Some(python) = support::a2a_python() else {
        return;
    };
    let running = serve(
        a2a_card::server::Server::new(Where)
            .tenant("acme")
            .grpc(true),
    )
    .await;
    let argv = vec![
        support::driver::path("tenant_py.py").into_os_string(),
        running.base.clone().into(),
        "acme".into(),
    ];
    let out = support::driver::run(python.into_os_string(), argv, Vec::new()).await;
    support::driver::assert_checks("Python SDK 1.3 with a tenant", out, 3);
}

#[tokio::test]
async fn an_mcp_call_names_its_tenant_in_a_header() {
    let running = serve(a2a_card::server::Server::new(Where).mcp(true)).await;
    let base = &running.base;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "here", "arguments": {"text": "?"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let answer: Value = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "here")
        .header(a2a_card::server::mcp::TENANT_HEADER, "acme")
        .body(body.to_string())
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON");
    assert_eq!(answer["result"]["content"][0]["text"], "acme", "{answer}");
    let listed = rpc(base, "ListTasks", json!({"tenant": "acme"})).await;
    assert_eq!(listed["result"]["totalSize"], 1, "{listed}");
    let listed = rpc(base, "ListTasks", json!({})).await;
    assert_eq!(listed["result"]["totalSize"], 0, "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_js_sdk_client_sends_the_tenant_its_card_names() {
    let Some(dir) = support::a2a_js_dir() else {
        return;
    };
    let running = serve(a2a_card::server::Server::new(Where).tenant("acme")).await;
    let argv = vec![
        support::driver::path("tenant_js.mjs").into_os_string(),
        running.base.clone().into(),
        "acme".into(),
    ];
    let out = support::driver::run("node".into(), argv, vec![("A2A_JS_DIR", dir.into())]).await;
    support::driver::assert_checks("JS SDK 1.3 with a tenant", out, 2);
}
