//! Several agents on one listener ([`Host`]): each agent at its own path with its own card,
//! bindings (JSON-RPC, HTTP+JSON, MCP, gRPC for one), form page and authentication; the root
//! card is the default agent's and the AI Catalog lists them all (the default first, a
//! tenant in its entry); their tasks are apart in one store (a task of one is not found,
//! listed or cancellable through another), on SQLite across a restart; the official client
//! and this crate's client find each agent from its URL, its card's URL, the root or the
//! catalog (its first entry, or the one named); agents that cannot be mounted together are
//! refused, saying why.

use crate::fight_club::agent as fights;
use crate::support;
use crate::trip_planner::agent as trip;

use std::time::Duration;

use a2a_card::server::auth::{Authentication, StaticApiKeys};
use a2a_card::server::store::Tasks;
use a2a_card::server::{AI_CATALOG_PATH, Host, Server, ServerError};
use a2a_card::{ApiKeyLocation, Identity, SecurityScheme, agent, skill};
use a2a_pb::proto;
use a2a_pb::proto::a2a_service_client::A2aServiceClient;
use serde_json::{Value, json};
use support::client::rpc_to;
use tokio::sync::oneshot;

fn planner() -> Server<trip::TripPlanner> {
    Server::new(trip::TripPlanner {
        pace: Duration::from_millis(1),
    })
}

fn fight_club() -> Server<fights::FightClub> {
    Server::new(fights::FightClub)
}

fn schemes() -> Vec<(&'static str, SecurityScheme)> {
    vec![(
        "key",
        SecurityScheme::api_key(ApiKeyLocation::Header, "X-API-Key"),
    )]
}

/// An agent only known callers may use.
struct Vault;
/// Keeps secrets for known callers.
#[agent(url = "http://127.0.0.1:9000", security_schemes = schemes, security(key))]
impl Vault {
    /// Says who asked.
    #[skill]
    fn whoami(&self, text: String) -> String {
        format!("{text}: {}", "known")
    }
}

const KEY: &str = "k-0123456789abcdef";

fn vault() -> Server<Vault> {
    let keys = StaticApiKeys::new().key(KEY, Identity::new("team-blue"));
    Server::new(Vault).authentication(Authentication::new().api_key("key", keys))
}

/// A fresh database file under `target/`.
fn db_path(name: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hosting");
    std::fs::create_dir_all(&dir).expect("a directory");
    let path = dir.join(format!("{name}-{}.db", std::process::id()));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    path
}

/// A host serving until the guard is dropped: its base URL.
struct Hosted {
    base: String,
    _stop: oneshot::Sender<()>,
}

async fn serve(host: Host) -> Hosted {
    let listening = host.bind("127.0.0.1:0").await.expect("bind a free port");
    let base = format!("http://{}", listening.local_addr());
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(listening.serve_with_shutdown(async {
        let _ = stopped.await;
    }));
    Hosted { base, _stop: stop }
}

async fn get_json(url: &str) -> (u16, Value) {
    let response = reqwest::get(url).await.expect("an answer");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

fn fight(a: &str, b: &str) -> Value {
    json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
           "parts": [{"data": {"a": a, "b": b},
                      "mediaType": "application/json;schema=fightComparison"}]}})
}

/// A trip without a start date: the planner asks for one, and waits.
fn trip_asking() -> Value {
    json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
           "parts": [{"data": {"destination": "Lisbon", "days": 2},
                      "mediaType": "application/json;schema=tripRequest"}]}})
}

fn listed(answer: &Value) -> Vec<String> {
    answer["result"]["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {answer}"))
        .iter()
        .map(|t| t["id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

const NOT_FOUND: i64 = -32001;

/// Every task method of the agent at `url` against `id`, another agent's task: not found,
/// not listed.
async fn apart(url: &str, id: &str) {
    for (method, params) in [
        ("GetTask", json!({"id": id})),
        ("CancelTask", json!({"id": id})),
        ("SubscribeToTask", json!({"id": id})),
        ("ListTaskPushNotificationConfigs", json!({"taskId": id})),
    ] {
        let answer = rpc_to(url, method, params).await;
        assert_eq!(
            answer["error"]["code"], NOT_FOUND,
            "{method} of {id} at {url}: {answer}"
        );
    }
    let answer = json!({"message": {"messageId": "m-a", "role": "ROLE_USER",
                        "parts": [{"text": "2026-12-01"}], "taskId": id}});
    let answered = rpc_to(url, "SendMessage", answer).await;
    assert_eq!(answered["error"]["code"], NOT_FOUND, "{answered}");
    let all = rpc_to(url, "ListTasks", json!({})).await;
    assert!(!listed(&all).contains(&id.to_owned()), "{all}");
    let (status, _) = get_json(&format!("{url}/tasks/{id}")).await;
    assert_eq!(status, 404, "HTTP+JSON GetTask of {id} at {url}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_agents_on_one_port_each_with_its_card_bindings_and_tasks() {
    let tasks = Tasks::sqlite(db_path("two-agents"));
    let hosted = serve(
        Host::new()
            .agent("/planner", planner().mcp(true).grpc(true).ui(true))
            .agent("/fights", fight_club().mcp(true))
            .tasks(tasks),
    )
    .await;
    let base = &hosted.base;
    let (planner_url, fights_url) = (format!("{base}/planner"), format!("{base}/fights"));

    // Each card at its agent's path, naming its own interfaces and MCP endpoint.
    let (status, planner_card) =
        get_json(&format!("{planner_url}/.well-known/agent-card.json")).await;
    assert_eq!(status, 200);
    assert_eq!(planner_card["name"], "Trip Planner", "{planner_card}");
    assert_eq!(planner_card["supportedInterfaces"][0]["url"], planner_url);
    let (_, fights_card) = get_json(&format!("{fights_url}/.well-known/agent-card.json")).await;
    assert_eq!(fights_card["name"], "Fight Club", "{fights_card}");
    assert_eq!(fights_card["supportedInterfaces"][0]["url"], fights_url);
    let mcp_url = |card: &Value| {
        card["capabilities"]["extensions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["uri"] == a2a_card::server::mcp::EXTENSION_URI)
            .map(|e| e["params"]["url"].clone())
    };
    assert_eq!(
        mcp_url(&planner_card),
        Some(json!(format!("{planner_url}/mcp")))
    );
    assert_eq!(
        mcp_url(&fights_card),
        Some(json!(format!("{fights_url}/mcp")))
    );
    // gRPC is the planner's alone, at the origin.
    let grpc: Vec<&Value> = planner_card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["protocolBinding"] == "GRPC")
        .collect();
    assert_eq!(grpc.len(), 1, "{planner_card}");
    assert_eq!(grpc[0]["url"], *base);
    assert!(
        !fights_card["supportedInterfaces"]
            .to_string()
            .contains("GRPC"),
        "{fights_card}"
    );

    // The root card is the default (the first mounted); the catalog lists both, by their
    // cards' URLs, the default first.
    let (_, root) = get_json(&format!("{base}/.well-known/agent-card.json")).await;
    assert_eq!(root, planner_card);
    let (status, catalog) = get_json(&format!("{base}{AI_CATALOG_PATH}")).await;
    assert_eq!(status, 200);
    assert_eq!(catalog["specVersion"], "1.0", "{catalog}");
    let entries = catalog["entries"].as_array().expect("a catalog");
    assert_eq!(entries.len(), 2, "{catalog}");
    for entry in entries {
        assert_eq!(entry["type"], "application/a2a-agent-card+json", "{entry}");
    }
    assert_eq!(
        entries[0]["url"],
        format!("{planner_url}/.well-known/agent-card.json")
    );
    assert_eq!(entries[0]["displayName"], "Trip Planner");
    assert_eq!(
        entries[0]["capabilities"],
        json!(["plan-trip", "export-calendar"]),
        "{entries:?}"
    );
    assert_eq!(entries[1]["displayName"], "Fight Club");
    assert_ne!(entries[0]["identifier"], entries[1]["identifier"]);
    let (_, listed_card) = get_json(entries[1]["url"].as_str().unwrap()).await;
    assert_eq!(listed_card, fights_card);
    // The capabilities and the form page, per agent.
    let (status, caps) = get_json(&format!("{fights_url}/capabilities")).await;
    assert_eq!(status, 200, "{caps}");
    let page = reqwest::get(format!("{planner_url}/ui")).await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(
        reqwest::get(format!("{fights_url}/ui"))
            .await
            .unwrap()
            .status(),
        404,
        "the fight club's page is off"
    );

    // Each agent's calls: JSON-RPC at its URL, HTTP+JSON under it.
    let judged = rpc_to(&fights_url, "SendMessage", fight("Lion", "Tiger")).await;
    assert_eq!(
        judged["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{judged}"
    );
    let fight_id = judged["result"]["task"]["id"].as_str().unwrap().to_owned();
    let rest: Value = reqwest::Client::new()
        .post(format!("{fights_url}/message:send"))
        .header("A2A-Version", "1.0")
        .json(&fight("Superman", "Batman"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        rest["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{rest}"
    );
    let asked = rpc_to(&planner_url, "SendMessage", trip_asking()).await;
    assert_eq!(
        asked["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{asked}"
    );
    let trip_id = asked["result"]["task"]["id"].as_str().unwrap().to_owned();
    // The planner's skills are not the fight club's: a trip request sent there is refused.
    let wrong = rpc_to(&fights_url, "SendMessage", trip_asking()).await;
    assert!(wrong["error"]["code"].is_i64(), "{wrong}");

    // The official Rust client over gRPC reaches the planner (the one agent serving it).
    let mut grpc = A2aServiceClient::connect(base.clone()).await.unwrap();
    let got = grpc
        .get_task(proto::GetTaskRequest {
            id: trip_id.clone(),
            ..Default::default()
        })
        .await
        .expect("the planner's task over gRPC")
        .into_inner();
    assert_eq!(got.id, trip_id);

    // Tasks apart: neither agent finds, lists, answers or cancels the other's.
    apart(&planner_url, &fight_id).await;
    apart(&fights_url, &trip_id).await;
    let fights_tasks = listed(&rpc_to(&fights_url, "ListTasks", json!({})).await);
    assert_eq!(fights_tasks.len(), 2, "{fights_tasks:?}");
    assert!(fights_tasks.contains(&fight_id));
    assert_eq!(
        listed(&rpc_to(&planner_url, "ListTasks", json!({})).await),
        vec![trip_id.clone()]
    );
    // A tenant within an agent keeps its tasks apart as an agent alone does.
    let mut in_acme = fight("Cat", "Dog");
    in_acme["tenant"] = json!("acme");
    let acme = rpc_to(&fights_url, "SendMessage", in_acme).await;
    let acme_id = acme["result"]["task"]["id"].as_str().unwrap().to_owned();
    assert!(!listed(&rpc_to(&fights_url, "ListTasks", json!({})).await).contains(&acme_id));
    let acme_list = rpc_to(&fights_url, "ListTasks", json!({"tenant": "acme"})).await;
    assert_eq!(listed(&acme_list), vec![acme_id.clone()]);
    let planner_acme = rpc_to(&planner_url, "ListTasks", json!({"tenant": "acme"})).await;
    assert!(listed(&planner_acme).is_empty(), "{planner_acme}");

    // The answer reaches the planner's question through the planner.
    let answer = json!({"message": {"messageId": "m-date", "role": "ROLE_USER",
                        "parts": [{"text": "2026-12-01"}], "taskId": trip_id}});
    let done = rpc_to(&planner_url, "SendMessage", answer).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );

    // Each agent's MCP endpoint lists its own tools.
    for (url, has, lacks) in [
        (&planner_url, "plan-trip", "fight-comparison"),
        (&fights_url, "fight-comparison", "plan-trip"),
    ] {
        let tools = mcp_tools(url).await;
        assert!(tools.contains(&has.to_owned()), "{url}: {tools:?}");
        assert!(!tools.contains(&lacks.to_owned()), "{url}: {tools:?}");
    }
}

/// The names of the tools the MCP endpoint of the agent at `url` lists.
async fn mcp_tools(url: &str) -> Vec<String> {
    let session = support::mcp::session(url, None).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let answer = support::mcp::message(
        support::mcp::post(url, list.to_string(), Some(&session), None).await,
    )
    .await;
    answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("tools: {answer}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_agent_has_its_own_authentication() {
    let hosted = serve(
        Host::new()
            .agent("/vault", vault().tenant("team-a"))
            .agent("/fights", fight_club())
            .default_agent("/fights"),
    )
    .await;
    let base = &hosted.base;
    let whoami = json!({"message": {"messageId": "m1", "role": "ROLE_USER",
                        "parts": [{"text": "me"}]}});
    // The vault refuses a caller without its key, and answers one with it.
    let refused = reqwest::Client::new()
        .post(format!("{base}/vault"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": whoami})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let allowed: Value = reqwest::Client::new()
        .post(format!("{base}/vault"))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .header("X-API-Key", KEY)
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": whoami})
                .to_string(),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        allowed["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{allowed}"
    );
    // The fight club, on the same port, needs no key; the vault's card stays public.
    let judged = rpc_to(
        &format!("{base}/fights"),
        "SendMessage",
        fight("Lion", "Tiger"),
    )
    .await;
    assert_eq!(
        judged["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{judged}"
    );
    let (status, card) = get_json(&format!("{base}/vault/.well-known/agent-card.json")).await;
    assert_eq!(status, 200);
    assert_eq!(card["name"], "Vault");
    // The root card is the named default.
    let (_, root) = get_json(&format!("{base}/.well-known/agent-card.json")).await;
    assert_eq!(root["name"], "Fight Club");
    // The catalog lists the default first.
    let (_, catalog) = get_json(&format!("{base}{AI_CATALOG_PATH}")).await;
    assert_eq!(
        catalog["entries"][0]["displayName"], "Fight Club",
        "{catalog}"
    );
    assert_eq!(catalog["entries"][1]["displayName"], "Vault", "{catalog}");
    // The tenant the vault's card names, in its entry.
    assert_eq!(
        catalog["entries"][1]["metadata"]["tenant"], "team-a",
        "{catalog}"
    );
    assert!(
        catalog["entries"][1]["identifier"]
            .as_str()
            .is_some_and(|id| id.ends_with(":vault:team-a")),
        "{catalog}"
    );
    assert!(catalog["entries"][0].get("metadata").is_none(), "{catalog}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_find_each_agent_from_any_of_its_urls() {
    let hosted = serve(
        Host::new()
            .agent("/planner", planner())
            .agent("/fights", fight_club()),
    )
    .await;
    let base = &hosted.base;
    for (url, name) in [
        (format!("{base}/fights"), "Fight Club"),
        (format!("{base}/fights/"), "Fight Club"),
        (
            format!("{base}/fights/.well-known/agent-card.json"),
            "Fight Club",
        ),
        (base.clone(), "Trip Planner"),
        (format!("{base}{AI_CATALOG_PATH}"), "Trip Planner"),
    ] {
        let agent = a2a_card::client::Connect::new(&url)
            .discover()
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(agent.card().name, name, "{url}");
    }
    // An entry of the catalog by name or identifier, from the host's URL or the catalog's.
    let (_, catalog) = get_json(&format!("{base}{AI_CATALOG_PATH}")).await;
    let fights_id = catalog["entries"][1]["identifier"]
        .as_str()
        .unwrap()
        .to_owned();
    for (url, entry) in [
        (base.clone(), "Fight Club"),
        (format!("{base}{AI_CATALOG_PATH}"), fights_id.as_str()),
    ] {
        let agent = a2a_card::client::Connect::new(&url)
            .catalog_entry(entry)
            .discover()
            .await
            .unwrap_or_else(|e| panic!("{url} {entry}: {e}"));
        assert_eq!(agent.card().name, "Fight Club", "{url} {entry}");
        assert_eq!(
            agent.card_url(),
            format!("{base}/fights/.well-known/agent-card.json")
        );
    }
    let missing = a2a_card::client::Connect::new(base.as_str())
        .catalog_entry("Vault")
        .discover()
        .await
        .expect_err("no such agent");
    let said = missing.to_string();
    assert!(
        said.contains("`Vault`")
            && said.contains("`Fight Club`")
            && said.contains("`Trip Planner`"),
        "{said}"
    );
    // Calls through the client found from the fight club's URL reach the fight club.
    let agent = a2a_card::client::Connect::new(format!("{base}/fights"))
        .discover()
        .await
        .unwrap();
    let payload = a2a_card::client::Payload::data(json!({"a": "Lion", "b": "Tiger"}));
    agent
        .call("fight-comparison", payload)
        .await
        .expect("the fight club answers")
        .into_result()
        .expect("a completed task");
    // The official client resolves each agent's card from its URL.
    let card = support::client::card(&format!("{base}/fights")).await;
    assert_eq!(card.name, "Fight Club");
    let client = support::client::client(&card, "HTTP+JSON").await;
    let response = client
        .send_message(&support::client::request(
            vec![support::client::data_part(
                "fightComparison",
                json!({"a": "Lion", "b": "Tiger"}),
            )],
            None,
        ))
        .await
        .expect("the official client's call");
    assert_eq!(
        support::client::task(response).status.state,
        a2a::TaskState::Completed
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_stay_apart_and_kept_in_one_store_across_a_restart() {
    let file = db_path("restart");
    let host = || {
        Host::new()
            .agent("/a", fight_club())
            .agent("/b", fight_club())
            .tasks(Tasks::sqlite(&file))
    };
    let id = {
        let hosted = serve(host()).await;
        let judged = rpc_to(
            &format!("{}/a", hosted.base),
            "SendMessage",
            fight("Lion", "Tiger"),
        )
        .await;
        judged["result"]["task"]["id"].as_str().unwrap().to_owned()
    };
    // The same agent type at two paths: the task is `/a`'s only, after a restart too.
    let hosted = serve(host()).await;
    let got = rpc_to(&format!("{}/a", hosted.base), "GetTask", json!({"id": id})).await;
    assert_eq!(
        got["result"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{got}"
    );
    apart(&format!("{}/b", hosted.base), &id).await;
}

/// Recovery's failures of a host's tasks reach each task's own agent: its webhook, posted by
/// that agent's deliveries (here the only one that may call a loopback address).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_failed_by_recovery_is_pushed_by_its_own_agent() {
    use a2a_card::server::Webhooks;
    use support::webhook::{Webhook, left_running};

    // A process left a task of agent `/b` running, with a webhook on loopback, and stopped.
    let hook = Webhook::start().await;
    let file = db_path("recovered");
    let lease = Duration::from_millis(300);
    let id = "b::left-running";
    left_running(&file, id, &hook.url, lease).await;

    // The next host on the file fails it; `/b`, whose task it is, says so to the webhook
    // (`/a`, mounted first, may not call loopback addresses).
    let quick = || Webhooks::default().backoff(Duration::from_millis(20));
    let _hosted = serve(
        Host::new()
            .agent("/a", planner().webhooks(quick()))
            .agent("/b", planner().webhooks(quick().allow_loopback(true)))
            .tasks(Tasks::sqlite(&file).lease(lease)),
    )
    .await;
    hook.wait_for_failed(id).await;
}

#[tokio::test]
async fn agents_that_cannot_be_mounted_together_are_refused_saying_why() {
    let refused = |host: Host, says: &str| {
        let error = host.cards().expect_err(says);
        assert!(matches!(error, ServerError::Host(_)), "{error:?}");
        let text = error.to_string();
        assert!(text.contains(says), "{says}: {text}");
    };
    refused(Host::new(), "no agent is mounted");
    refused(
        Host::new().agent("/x", fight_club()).agent("/x", planner()),
        "one path to the task store",
    );
    refused(
        Host::new()
            .agent("/a.b", fight_club())
            .agent("/a/b", planner()),
        "one path to the task store",
    );
    refused(Host::new().agent("/", fight_club()), "the root serves");
    refused(
        Host::new()
            .agent("/team", fight_club())
            .agent("/team/planner", planner()),
        "nest one in the other",
    );
    refused(
        Host::new().agent("fights", fight_club()),
        "does not begin with `/`",
    );
    refused(Host::new().agent("/fights/", fight_club()), "trailing");
    refused(Host::new().agent("/.well-known", fight_club()), "taken");
    refused(
        Host::new()
            .agent("/a", fight_club().grpc(true))
            .agent("/b", planner().grpc(true)),
        "both serve gRPC",
    );
    refused(
        Host::new().agent("/a", fight_club().tasks(Tasks::memory())),
        "names a task store of its own",
    );
    refused(
        Host::new().agent("/a", fight_club()).default_agent("/b"),
        "the default agent `/b` is not mounted",
    );
    refused(
        Host::new()
            .agent("/a", fight_club())
            .public_url("https://agents.example.com/x"),
        "has a path",
    );
    // And a host that can be served names each agent at the public origin.
    let cards = Host::new()
        .agent("/a", fight_club())
        .public_url("https://agents.example.com")
        .cards()
        .unwrap();
    assert_eq!(cards[0].interfaces[0].url, "https://agents.example.com/a");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_alone_serves_a_catalog_of_its_one_agent() {
    let running = support::client::serve(fight_club()).await;
    let base = &running.base;
    let url = format!("{base}{AI_CATALOG_PATH}");
    let (status, catalog) = get_json(&url).await;
    assert_eq!(status, 200);
    let entries = catalog["entries"].as_array().expect("a catalog");
    assert_eq!(entries.len(), 1, "{catalog}");
    assert_eq!(entries[0]["displayName"], "Fight Club");
    assert_eq!(
        entries[0]["url"],
        format!("{base}/.well-known/agent-card.json")
    );
    let host = base.trim_start_matches("http://");
    assert_eq!(
        entries[0]["identifier"],
        format!("urn:air:{host}:a2a:fight-club"),
        "{catalog}"
    );
    let agent = a2a_card::client::Connect::new(&url)
        .discover()
        .await
        .expect("the agent, through the catalog");
    assert_eq!(agent.card().name, "Fight Club");
}
