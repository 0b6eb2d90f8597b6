//! The MCP face over raw HTTP: what `/mcp` answers to bad input (each a clear JSON-RPC error
//! with the right status, and the A2A side keeps serving), the shape of its security answers
//! (`401` naming the protected-resource metadata, `403 insufficient_scope` for a tool the
//! caller may not use, extended skills hidden from anonymous callers), and the card's entry
//! naming the endpoint. The official MCP SDK clients' view is tests/sdks/mcp_sdks.rs.

use crate::fight_club::agent as fight_club;
use crate::support;
use crate::trip_planner::agent as trip;

use a2a_card::server::Server;
use a2a_card::server::auth::{Algorithm, Authentication, JwtVerifier};
use a2a_card::{File, OAuthFlow, agent, skill};
use base64::Engine as _;
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::client::{Running, serve};
use support::mcp::{ACCEPT, message, post, session};
use support::tokens::{self, Pair};

/// An A2A JSON-RPC 1.0 call to the agent at `base`; its answer.
async fn a2a(base: &str, body: Value) -> Value {
    reqwest::Client::new()
        .post(format!("{base}/"))
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn a2a_still_answers(base: &str) {
    let request = json!({"jsonrpc": "2.0", "id": 9, "method": "SendMessage", "params": {
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{
            "data": {"a": "Lion", "b": "Tiger"},
            "mediaType": "application/json;schema=fightComparison"}]}}});
    let answer = a2a(base, request).await;
    assert_eq!(
        answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answer}"
    );
}

/// The trip planner with MCP, planning a day in `pace`.
async fn planner(pace: std::time::Duration) -> Running {
    serve(Server::new(trip::TripPlanner { pace }).mcp(true)).await
}

#[tokio::test]
async fn bad_input_on_mcp_gets_a_clear_error_and_a2a_keeps_serving() {
    let agent = serve(Server::new(fight_club::FightClub).mcp(true)).await;
    let base = &agent.base;

    // Not JSON: a parse error that says where.
    let response = post(base, "{not json", None, None).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let error = message(response).await;
    assert_eq!(error["error"]["code"], -32700, "{error}");
    let text = error["error"]["message"].as_str().unwrap();
    assert!(text.contains("line 1 column 2"), "{text}");

    // JSON, not a JSON-RPC message.
    for body in ["[]", "{}", r#"{"jsonrpc": "1.0", "method": "ping"}"#] {
        let response = post(base, body, None, None).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        let error = message(response).await;
        assert_eq!(error["error"]["code"], -32600, "{body}: {error}");
    }

    // Over the body limit: 413, before the SDK reads it.
    let big = vec![b' '; 2 * 1024 * 1024];
    let response = post(base, big, None, None).await;
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let error = message(response).await;
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than this agent accepts"),
        "{error}"
    );

    // A session the server never gave: 404, as MCP's transport says.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let response = post(base, list.to_string(), Some("no-such-session"), None).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);

    // An unknown tool, in a real session: invalid params, naming the tool and the known ones.
    let id = session(base, None).await;
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "no-such-tool", "arguments": {}}});
    let error = message(post(base, call.to_string(), Some(&id), None).await).await;
    assert_eq!(error["error"]["code"], -32602, "{error}");
    let text = error["error"]["message"].as_str().unwrap();
    assert!(
        text.contains("no-such-tool") && text.contains("fight-comparison"),
        "{text}"
    );

    // Invalid arguments: a tool error listing the violation, the field named.
    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "fight-comparison", "arguments": {"a": "Lion"}}});
    let result = message(post(base, call.to_string(), Some(&id), None).await).await;
    assert_eq!(result["result"]["isError"], true, "{result}");
    let text = result["result"]["content"].to_string();
    assert!(text.contains("\\\"b\\\" is a required property"), "{text}");

    // Ending the session: 204, then the session is gone.
    let response = reqwest::Client::new()
        .delete(format!("{base}/mcp"))
        .header("mcp-session-id", &id)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let response = post(base, list.to_string(), Some(&id), None).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);

    a2a_still_answers(base).await;
}

#[tokio::test]
async fn the_card_names_the_mcp_endpoint() {
    let agent = serve(Server::new(fight_club::FightClub).mcp(true)).await;
    let card: Value = reqwest::get(format!("{}/.well-known/agent-card.json", agent.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let entry = card["capabilities"]["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["uri"] == a2a_card::server::mcp::EXTENSION_URI)
        .expect("the MCP extension entry");
    assert_eq!(entry["params"]["url"], format!("{}/mcp", agent.base));
    assert_eq!(entry["params"]["transport"], "streamable-http");
    // Without `mcp(true)`, neither the entry nor the route.
    let plain = serve(Server::new(fight_club::FightClub)).await;
    let card = reqwest::get(format!("{}/.well-known/agent-card.json", plain.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!card.contains(a2a_card::server::mcp::EXTENSION_URI));
    let response = post(&plain.base, "{}", None, None).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

/// An agent whose card requires an OAuth token; `archive` needs the scope `vault:write`, and
/// `audit` is listed only to authenticated callers.
struct Vault;

/// Keeps records, for callers with a token.
#[agent(
    url = "http://127.0.0.1:9400",
    security_schemes(
        oauth = oauth2(OAuthFlow::client_credentials("https://auth.example.com/token")
            .scope("vault:read", "Read records")
            .scope("vault:write", "Write records"))
    ),
    security(oauth)
)]
impl Vault {
    /// Reads a record.
    #[skill]
    fn read(&self, key: String) -> String {
        format!("record {key}")
    }

    /// Archives a record; needs `vault:write`.
    #[skill(security(oauth = ["vault:write"]))]
    fn archive(&self, key: String) -> String {
        format!("archived {key}")
    }

    /// Audits the vault; listed only on the extended card.
    #[skill(extended)]
    fn audit(&self, scope: String) -> String {
        format!("audited {scope}")
    }
}

async fn vault(pair: &Pair) -> Running {
    let verifier = JwtVerifier::new(tokens::keys(&[pair]), [Algorithm::EdDSA])
        .issuer(tokens::ISSUER)
        .audience(tokens::AUDIENCE);
    let auth = Authentication::new().token("oauth", verifier);
    serve(Server::new(Vault).authentication(auth).mcp(true)).await
}

fn tool_names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a tool list: {list}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn mcp_answers_the_cards_security_as_mcps_authorization_spec_says() {
    let pair = Pair::ed25519("k1");
    let agent = vault(&pair).await;
    let base = &agent.base;
    let metadata_url = format!("{base}/.well-known/oauth-protected-resource/mcp");

    // No token: 401 before any MCP message is read, the challenge naming the metadata.
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let response = post(base, ping.to_string(), None, None).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let challenge = response
        .headers()
        .get("www-authenticate")
        .expect("a challenge")
        .to_str()
        .unwrap()
        .to_owned();
    assert!(challenge.starts_with("Bearer"), "{challenge}");
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );

    // The protected-resource metadata (RFC 9728), from the card's OAuth scheme.
    let metadata: Value = reqwest::get(&metadata_url)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["resource"], format!("{base}/mcp"));
    assert_eq!(
        metadata["authorization_servers"],
        json!(["https://auth.example.com"])
    );
    assert_eq!(
        metadata["scopes_supported"],
        json!(["vault:read", "vault:write"])
    );

    // A token without `vault:write`: `read` runs, `archive` is refused with 403.
    let reader = pair.sign(&tokens::claims("reader", "vault:read"));
    let id = session(base, Some(&reader)).await;
    let call = |name: &str| {
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": name, "arguments": {"text": "k-1"}}})
        .to_string()
    };
    let result = message(post(base, call("read"), Some(&id), Some(&reader)).await).await;
    assert_eq!(
        result["result"]["content"][0]["text"], "record k-1",
        "{result}"
    );
    let response = post(base, call("archive"), Some(&id), Some(&reader)).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let challenge = response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        challenge.contains("insufficient_scope") && challenge.contains("vault:write"),
        "{challenge}"
    );

    // An authenticated caller sees the extended skill; its tools are the card's skills.
    let list = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"});
    let tools = message(post(base, list.to_string(), Some(&id), Some(&reader)).await).await;
    assert_eq!(tool_names(&tools), ["read", "archive", "audit"]);

    // With the scope, `archive` runs.
    let writer = pair.sign(&tokens::claims("writer", "vault:read vault:write"));
    let id = session(base, Some(&writer)).await;
    let result = message(post(base, call("archive"), Some(&id), Some(&writer)).await).await;
    assert_eq!(
        result["result"]["content"][0]["text"], "archived k-1",
        "{result}"
    );
}

/// An agent open to anyone, with one skill listed only to authenticated callers.
struct Desk;

/// Answers questions; audits for known callers.
#[agent(
    url = "http://127.0.0.1:9401",
    security_schemes(oauth = oauth2(OAuthFlow::client_credentials("https://auth.example.com/token")
        .scope("desk:audit", "Audit"))),
)]
impl Desk {
    /// Answers a question.
    #[skill]
    fn ask(&self, question: String) -> String {
        format!("answer to {question}")
    }

    /// Audits the desk; listed only on the extended card.
    #[skill(extended)]
    fn audit(&self, scope: String) -> String {
        format!("audited {scope}")
    }
}

#[tokio::test]
async fn extended_skills_are_tools_only_for_authenticated_callers() {
    let pair = Pair::ed25519("k1");
    let verifier = JwtVerifier::new(tokens::keys(&[&pair]), [Algorithm::EdDSA])
        .issuer(tokens::ISSUER)
        .audience(tokens::AUDIENCE);
    let auth = Authentication::new().token("oauth", verifier);
    let agent = serve(Server::new(Desk).authentication(auth).mcp(true)).await;
    let base = &agent.base;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "audit", "arguments": {"text": "all"}}})
    .to_string();

    let anonymous = session(base, None).await;
    let tools = message(post(base, list.clone(), Some(&anonymous), None).await).await;
    assert_eq!(tool_names(&tools), ["ask"]);
    // Calling it anyway: 401, as for any call that needs a caller.
    let response = post(base, call.clone(), Some(&anonymous), None).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);

    let token = pair.sign(&tokens::claims("auditor", ""));
    let known = session(base, Some(&token)).await;
    let tools = message(post(base, list, Some(&known), Some(&token)).await).await;
    assert_eq!(tool_names(&tools), ["ask", "audit"]);
    let result = message(post(base, call, Some(&known), Some(&token)).await).await;
    assert_eq!(
        result["result"]["content"][0]["text"], "audited all",
        "{result}"
    );
}

/// An agent with a skill that takes only files.
struct Counter;

/// Counts lines.
#[agent(url = "http://127.0.0.1:9402")]
impl Counter {
    /// Counts the lines of a CSV file.
    #[skill(input_modes("text/csv"))]
    fn count_lines(&self, file: File) -> String {
        let text = String::from_utf8_lossy(file.bytes().unwrap_or_default()).into_owned();
        format!(
            "{} lines in {}",
            text.lines().count(),
            file.name.unwrap_or_default()
        )
    }
}

#[tokio::test]
async fn files_go_in_as_resource_contents_and_come_out_as_embedded_resources() {
    // Out: the trip planner's calendar export, an embedded resource with the file's bytes.
    let planner = planner(std::time::Duration::from_millis(1)).await;
    let id = session(&planner.base, None).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "export-calendar",
        "arguments": {"destination": "Lisbon", "start_date": "2026-12-01", "days": 2}}});
    let result = message(post(&planner.base, call.to_string(), Some(&id), None).await).await;
    let resource = result["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "resource")
        .unwrap_or_else(|| panic!("an embedded resource: {result}"));
    assert_eq!(resource["resource"]["mimeType"], "text/calendar");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(resource["resource"]["blob"].as_str().unwrap())
        .unwrap();
    let ics = String::from_utf8(bytes).unwrap();
    assert!(
        ics.starts_with("BEGIN:VCALENDAR") && ics.contains("DTSTART;VALUE=DATE:20261202"),
        "{ics}"
    );

    // In: a files-only skill's tool takes `{"files": [...]}`.
    let counter = serve(Server::new(Counter).mcp(true)).await;
    let id = session(&counter.base, None).await;
    let list = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list"});
    let tools = message(post(&counter.base, list.to_string(), Some(&id), None).await).await;
    assert_eq!(
        tools["result"]["tools"][0]["inputSchema"]["required"],
        json!(["files"]),
        "{tools}"
    );
    let blob = base64::engine::general_purpose::STANDARD.encode("one\ntwo\nthree\n");
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "count-lines",
        "arguments": {"files": [{"mimeType": "text/csv", "blob": blob, "name": "notes.csv"}]}}});
    let result = message(post(&counter.base, call.to_string(), Some(&id), None).await).await;
    assert_eq!(
        result["result"]["content"][0]["text"], "3 lines in notes.csv",
        "{result}"
    );
    // A file of a type the skill does not take: a tool error naming it.
    let call = json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {
        "name": "count-lines",
        "arguments": {"files": [{"mimeType": "image/png", "blob": blob}]}}});
    let result = message(post(&counter.base, call.to_string(), Some(&id), None).await).await;
    assert_eq!(result["result"]["isError"], true, "{result}");
    assert!(
        result["result"]["content"]
            .to_string()
            .contains("image/png"),
        "{result}"
    );
}

#[tokio::test]
async fn a_retry_naming_a_task_that_does_not_wait_cancels_nothing() {
    let planner = planner(std::time::Duration::from_secs(1)).await;
    // A long plan, working (it has its date: it asks nothing).
    let started = a2a(
        &planner.base,
        json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{
            "data": {"destination": "Rome", "days": 14, "start_date": "2026-12-01"},
            "mediaType": "application/json;schema=tripRequest"}]},
        "configuration": {"returnImmediately": true}}}),
    )
    .await;
    let task = started["result"]["task"]["id"].as_str().unwrap().to_owned();
    // A 2026-07-28 retry that names it as its state, declining: a tool error, nothing canceled.
    let retry = json!({
        "name": "plan-trip", "arguments": {"destination": "Rome", "days": 14},
        "inputResponses": {"answer": {"action": "decline"}},
        "requestState": task});
    let result = modern(&planner.base, 2, "tools/call", retry).await;
    assert_eq!(result["result"]["isError"], true, "{result}");
    let now = a2a(
        &planner.base,
        json!({"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": task}}),
    )
    .await;
    assert_eq!(
        now["result"]["status"]["state"], "TASK_STATE_WORKING",
        "{now}"
    );
}

/// A self-contained MCP 2026-07-28 request of a client that takes MCP tasks and elicitation.
async fn modern(base: &str, id: u32, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}});
    let mut request = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", ACCEPT)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    // The name the request is routed by: the tool's, or the task's.
    if let Some(name) = params["name"].as_str().or(params["taskId"].as_str()) {
        request = request.header("mcp-name", name);
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    message(request.body(body.to_string()).send().await.unwrap()).await
}

/// Polls `tasks/get` until the task's status is `status`.
async fn until(base: &str, task: &str, status: &str) -> Value {
    for i in 0..200 {
        let got = modern(base, 100 + i, "tasks/get", json!({"taskId": task})).await;
        if got["result"]["status"] == status {
            return got["result"].clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    let last = modern(base, 99, "tasks/get", json!({"taskId": task})).await;
    panic!("task {task} never reached {status}: {last}");
}

#[tokio::test]
async fn a_long_running_tool_call_is_an_mcp_task_backed_by_the_a2a_task() {
    let planner = planner(std::time::Duration::from_millis(10)).await;
    let base = &planner.base;
    let call = json!({"name": "plan-trip", "arguments": {"destination": "Lisbon", "days": 2}});
    let created = modern(base, 1, "tools/call", call.clone()).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();

    // The question, as an input request; the answer by `tasks/update`.
    let asked = until(base, &task, "input_required").await;
    let question = &asked["inputRequests"]["answer"]["params"]["message"];
    assert!(question.as_str().unwrap().contains("Which day"), "{asked}");
    let answer = json!({"taskId": task, "inputResponses": {
        "answer": {"action": "accept", "content": {"answer": "2026-12-01"}}}});
    let updated = modern(base, 2, "tasks/update", answer).await;
    assert!(updated.get("error").is_none(), "{updated}");
    let done = until(base, &task, "completed").await;
    let items = &done["result"]["structuredContent"]["items"];
    assert_eq!(items.as_array().map(Vec::len), Some(2), "{done}");
    assert_eq!(items[0]["date"], "2026-12-01");

    // The same task over A2A: same store, same id.
    let a2a = a2a(
        base,
        json!({"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": task}}),
    )
    .await;
    assert_eq!(
        a2a["result"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{a2a}"
    );

    // Cancelled while it waits: `tasks/cancel`, then `cancelled`.
    let created = modern(base, 4, "tools/call", call).await;
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    until(base, &task, "input_required").await;
    let canceled = modern(base, 5, "tasks/cancel", json!({"taskId": task})).await;
    assert!(canceled.get("error").is_none(), "{canceled}");
    until(base, &task, "cancelled").await;

    // A task id no tool call made: an error naming it.
    let unknown = modern(base, 6, "tasks/get", json!({"taskId": "no-such-task"})).await;
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no-such-task"),
        "{unknown}"
    );
}

/// Skills that only return: none streams or takes a context.
struct Returns;

/// Answers at once.
#[agent(url = "http://127.0.0.1:9400")]
impl Returns {
    /// Shouts the text.
    #[skill]
    fn shout(&self, text: String) -> String {
        text.to_uppercase()
    }

    /// Fails, saying why.
    #[skill]
    fn refuse(&self, text: String) -> Result<String, String> {
        Err(format!("no {text} today"))
    }

    /// Panics.
    #[skill]
    fn crash(&self, text: String) -> String {
        panic!("the crash skill always panics ({text})")
    }
}

/// The ids of the tasks the agent at `base` lists.
async fn task_ids(base: &str) -> Vec<String> {
    let list = a2a(
        base,
        json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}),
    )
    .await;
    let tasks = list["result"]["tasks"].as_array().cloned();
    let tasks = tasks.unwrap_or_else(|| panic!("not a list of tasks: {list}"));
    tasks
        .iter()
        .map(|t| t["id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn a_tool_call_of_a_skill_that_only_returns_is_answered_without_a_task() {
    let agent = serve(Server::new(Returns).mcp(true)).await;
    let base = &agent.base;
    let call = |name: &str, text: &str| json!({"name": name, "arguments": {"text": text}});

    // The result, and no task made for it.
    let shouted = modern(base, 1, "tools/call", call("shout", "hello")).await;
    assert_eq!(
        shouted["result"]["content"][0]["text"], "HELLO",
        "{shouted}"
    );
    assert_ne!(shouted["result"]["isError"], true, "{shouted}");
    assert_eq!(task_ids(base).await, Vec::<String>::new());

    // A skill's failure is the tool's error, in its words.
    let refused = modern(base, 2, "tools/call", call("refuse", "beans")).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"].as_str();
    assert!(
        text.unwrap_or_default().contains("no beans today"),
        "{refused}"
    );

    // A panic is a tool error that says nothing of the panic, and the agent keeps serving.
    let crashed = modern(base, 3, "tools/call", call("crash", "now")).await;
    assert_eq!(crashed["result"]["isError"], true, "{crashed}");
    let text = crashed["result"]["content"][0]["text"].to_string();
    assert!(text.contains("failed unexpectedly"), "{crashed}");
    assert!(!text.contains("always panics"), "{crashed}");
    let again = modern(base, 4, "tools/call", call("shout", "still here")).await;
    assert_eq!(
        again["result"]["content"][0]["text"], "STILL HERE",
        "{again}"
    );

    // Arguments the skill's schema refuses: a tool error naming the field, no task.
    let bad = modern(
        base,
        5,
        "tools/call",
        json!({"name": "shout", "arguments": {"text": 7}}),
    )
    .await;
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert!(bad.to_string().contains("text"), "{bad}");
    assert_eq!(task_ids(base).await, Vec::<String>::new());
}
