//! `a2a-card inspect` and `a2a-card call` against the examples' agents, served in this process
//! on free loopback ports: exit codes, output formats, streaming, questions, credentials.
#![cfg(all(feature = "cli", feature = "server"))]

#[path = "../../../examples/fight_club/agent.rs"]
#[allow(dead_code)]
mod agent;
#[path = "../../../examples/trip_planner/agent.rs"]
#[allow(dead_code)]
mod trip;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use a2a_card::server::Server;
use a2a_card::server::auth::{Authentication, StaticApiKeys};
use a2a_card::{Agent, Identity, agent as declare_agent, skill};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_a2a-card");

/// Serves `server` on a free loopback port in the background; the base URL.
async fn serve<A: Agent>(server: Server<A>) -> String {
    let listening = server
        .bind("127.0.0.1:0")
        .await
        .expect("bind a free loopback port");
    let base = format!("http://{}", listening.local_addr());
    tokio::spawn(listening.serve());
    base
}

async fn fight_club() -> String {
    serve(Server::new(agent::FightClub)).await
}

async fn trip_planner() -> String {
    serve(Server::new(trip::TripPlanner {
        pace: Duration::from_millis(5),
    }))
    .await
}

/// Runs the binary (off the runtime's threads) and checks it did not panic.
async fn run(args: &[&str]) -> Output {
    let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(BIN)
            .args(&args)
            .env("NO_COLOR", "1")
            .env_remove("A2A_TOKEN")
            .stdin(Stdio::null())
            .output()
            .expect("run a2a-card")
    })
    .await
    .expect("the command's thread");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    output
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited, not killed")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspect_summarises_the_card_and_outlines_each_input_schema() {
    let base = fight_club().await;
    let out = run(&["inspect", &base]).await;
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    for line in [
        "Fight Club 1.0.0",
        "(profile compat)",
        &format!("JSONRPC 1.0 at {base}"),
        &format!("HTTP+JSON 1.0 at {base}"),
        &format!("JSONRPC 0.3 at {base}"),
        "streaming no, push notifications no",
        "security:      none",
        "signature:     unsigned",
        "lint:          0 error(s)",
        "fight-comparison (Fight Comparison)",
        "in:  text/plain, application/json;schema=fightComparison",
        "out: text/plain, application/json;schema=fightResponse",
        "input `fightComparison`:",
        "a: string, required - The name of the first contestant",
        "b: string, required - The name of the second contestant",
    ] {
        assert!(text.contains(line), "no `{line}` in:\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspect_as_json_has_the_skills_schemas_and_findings() {
    let base = trip_planner().await;
    let out = run(&["inspect", &base, "--format", "json"]).await;
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let summary: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(summary["name"], "Trip Planner");
    assert_eq!(summary["capabilities"]["streaming"], true);
    assert_eq!(summary["lint"]["errors"], 0);
    let plan = &summary["skills"][0];
    assert_eq!(plan["id"], "plan-trip");
    assert_eq!(plan["inputSchema"]["name"], "tripRequest");
    assert_eq!(plan["outputSchema"]["name"], "itineraryDay");
    let fields = plan["inputSchema"]["fields"].as_array().expect("fields");
    let days = fields.iter().find(|f| f["name"] == "days").expect("days");
    assert_eq!(days["required"], true);
    assert_eq!(days["type"], "integer 1..14");
    let start = fields
        .iter()
        .find(|f| f["name"] == "start_date")
        .expect("start_date");
    assert_eq!(start["required"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspect_and_call_find_an_agent_of_a_host_from_its_url_the_root_or_the_catalog() {
    let listening = a2a_card::server::Host::new()
        .agent(
            "/planner",
            Server::new(trip::TripPlanner {
                pace: Duration::from_millis(5),
            }),
        )
        .agent("/fights", Server::new(agent::FightClub))
        .bind("127.0.0.1:0")
        .await
        .expect("bind a free loopback port");
    let base = format!("http://{}", listening.local_addr());
    tokio::spawn(listening.serve());
    let catalog = format!("{base}{}", a2a_card::server::AI_CATALOG_PATH);
    let fights = format!("{base}/fights");
    for (url, name, at) in [
        (&fights, "Fight Club 1.0.0", &fights),
        (&base, "Trip Planner", &format!("{base}/planner")),
        (&catalog, "Trip Planner", &format!("{base}/planner")),
    ] {
        let out = run(&["inspect", url]).await;
        assert_eq!(code(&out), 0, "{url}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains(name), "{url}: no `{name}` in:\n{text}");
        let interface = format!("JSONRPC 1.0 at {at};");
        assert!(
            text.contains(&interface),
            "{url}: no `{interface}` in:\n{text}"
        );
    }
    let out = run(&[
        "call",
        &fights,
        "--skill",
        "fight-comparison",
        "--data",
        r#"{"a": "Lion", "b": "Tiger"}"#,
    ])
    .await;
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("the output, as JSON");
    assert_eq!(answer["winner"], "Tiger");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_prints_the_typed_output() {
    let base = fight_club().await;
    let out = run(&[
        "call",
        &base,
        "--skill",
        "fight-comparison",
        "--data",
        r#"{"a": "Lion", "b": "Tiger"}"#,
    ])
    .await;
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("the output, as JSON");
    assert_eq!(answer["winner"], "Tiger");
    assert_eq!(answer["probability"], 0.56);

    let out = run(&[
        "call",
        &base,
        "--skill",
        "fight-comparison",
        "--text",
        "Lion vs Tiger",
    ])
    .await;
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("Tiger"), "{}", stdout(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspect_and_call_reach_an_agent_through_its_0_3_card() {
    // `A2A-Version: 0.3` on every request: the agent's 0.3 card, which lists its 0.3
    // interface alone, so the call goes over 0.3 JSON-RPC.
    let base = fight_club().await;
    let out = run(&["inspect", &base, "-H", "A2A-Version: 0.3"]).await;
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("(profile v0.3)"), "{}", stdout(&out));
    let out = run(&[
        "call",
        &base,
        "-H",
        "A2A-Version: 0.3",
        "--skill",
        "fight-comparison",
        "--data",
        r#"{"a": "Lion", "b": "Tiger"}"#,
    ])
    .await;
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("the output, as JSON");
    assert_eq!(answer["winner"], "Tiger");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_reads_data_from_a_file() {
    let base = fight_club().await;
    let path = std::env::temp_dir().join(format!("a2a-card-call-{}.json", std::process::id()));
    std::fs::write(&path, br#"{"a": "Godzilla", "b": "Mothra"}"#).expect("write");
    let arg = format!("@{}", path.display());
    let out = run(&["call", &base, "--skill", "fight-comparison", "--data", &arg]).await;
    let _ = std::fs::remove_file(&path);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("\"winner\": \"Godzilla\""),
        "{}",
        stdout(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_data_is_refused_before_sending_naming_the_field() {
    let base = fight_club().await;
    let out = run(&[
        "call",
        &base,
        "--skill",
        "fight-comparison",
        "--data",
        r#"{"a": "Lion", "b": 3}"#,
    ])
    .await;
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains("schema `fightComparison`"), "{err}");
    assert!(err.contains("/b: 3 is not of type \"string\""), "{err}");
    assert!(stdout(&out).is_empty());

    let out = run(&[
        "call",
        &base,
        "--skill",
        "fight-comparison",
        "--data",
        "{nope",
    ])
    .await;
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("--data: not JSON"),
        "{}",
        stderr(&out)
    );

    let out = run(&["call", &base, "--skill", "no-such-skill", "--text", "hi"]).await;
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("no skill `no-such-skill`; its skills: fight-comparison"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_agent_is_exit_2() {
    // A port that was free a moment ago: nothing listens there now.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let url = format!("http://127.0.0.1:{port}");
    for args in [
        vec!["inspect", &url],
        vec!["call", &url, "--skill", "x", "--text", "hi"],
    ] {
        let out = run(&args).await;
        assert_eq!(code(&out), 2, "{args:?}");
        assert!(
            stderr(&out).contains("cannot reach the agent at"),
            "{}",
            stderr(&out)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_task_is_exit_1_with_its_reason() {
    let base = trip_planner().await;
    let out = run(&[
        "call",
        &base,
        "--skill",
        "plan-trip",
        "--data",
        r#"{"destination": "Lisbon", "days": 2}"#,
        "--answer",
        "someday",
    ])
    .await;
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("Which day do you leave?"), "{err}");
    assert!(
        err.contains("ended failed: `someday` is not a date of the form YYYY-MM-DD"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_question_is_exit_1_and_says_how_to_answer() {
    let base = trip_planner().await;
    let out = run(&[
        "call",
        &base,
        "--skill",
        "plan-trip",
        "--data",
        r#"{"destination": "Lisbon", "days": 2}"#,
    ])
    .await;
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("waits for input: Which day do you leave?"),
        "{err}"
    );
    assert!(err.contains("--answer"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_prints_chunks_and_plain_progress_when_piped() {
    let base = trip_planner().await;
    let out = run(&[
        "call",
        &base,
        "--skill",
        "plan-trip",
        "--stream",
        "--data",
        r#"{"destination": "Lisbon", "days": 3}"#,
        "--answer",
        "2026-12-30",
    ])
    .await;
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let days: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON chunk per line"))
        .collect();
    assert_eq!(days.len(), 3, "{days:?}");
    assert_eq!(days[0]["day"], 1, "integers stay integers: {}", days[0]);
    assert_eq!(days[2]["date"], "2027-01-01");
    let err = stderr(&out);
    assert!(err.contains("progress: Planning 3 days in Lisbon"), "{err}");
    assert!(
        !err.contains('\r'),
        "no terminal control when piped: {err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_format_gives_the_task_or_one_event_per_line() {
    let base = fight_club().await;
    let out = run(&[
        "call",
        &base,
        "--skill",
        "fight-comparison",
        "--format",
        "json",
        "--data",
        r#"{"a": "Lion", "b": "Tiger"}"#,
    ])
    .await;
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(answer["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        answer["task"]["artifacts"][0]["parts"][0]["mediaType"],
        "application/json;schema=fightResponse"
    );

    let base = trip_planner().await;
    let out = run(&[
        "call",
        &base,
        "--skill",
        "plan-trip",
        "--stream",
        "--format",
        "json",
        "--data",
        r#"{"destination": "Lisbon", "days": 2, "start_date": "2026-12-01"}"#,
    ])
    .await;
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one event per line"))
        .collect();
    let outputs: Vec<&Value> = events.iter().filter(|e| e["event"] == "output").collect();
    assert_eq!(outputs.len(), 2, "{events:?}");
    assert_eq!(outputs[0]["schema"], "itineraryDay");
    assert_eq!(outputs[1]["data"]["date"], "2026-12-02");
    assert_eq!(
        events.last().map(|e| e["state"].clone()),
        Some(Value::from("TASK_STATE_COMPLETED"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_wait_prints_the_task_id() {
    let base = trip_planner().await;
    let out = run(&[
        "call",
        &base,
        "--skill",
        "plan-trip",
        "--no-wait",
        "--format",
        "json",
        "--data",
        r#"{"destination": "Lisbon", "days": 2, "start_date": "2026-12-01"}"#,
    ])
    .await;
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let id = answer["taskId"].as_str().expect("a task id");
    assert!(id.len() >= 32, "{answer}");
    assert_ne!(answer["state"], "TASK_STATE_COMPLETED", "not waited for");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_made_again_with_its_message_id_reaches_the_same_task() {
    let base = trip_planner().await;
    let call = |id: &'static str| {
        let base = base.clone();
        async move {
            let out = run(&[
                "call",
                &base,
                "--skill",
                "plan-trip",
                "--no-wait",
                "--message-id",
                id,
                "--format",
                "json",
                "--data",
                r#"{"destination": "Lisbon", "days": 2, "start_date": "2026-12-01"}"#,
            ])
            .await;
            assert_eq!(code(&out), 0, "{}", stderr(&out));
            // The key it used, said.
            assert!(
                stderr(&out).contains(&format!(
                    "idempotency key: {id} (to retry safely: --message-id {id})"
                )),
                "{}",
                stderr(&out)
            );
            let answer: Value = serde_json::from_slice(&out.stdout).expect("JSON");
            answer["taskId"].as_str().expect("a task id").to_owned()
        }
    };
    let first = call("retry-me-1").await;
    assert_eq!(call("retry-me-1").await, first);
    assert_ne!(call("retry-me-2").await, first);
}

/// An agent that says the budget its task was given.
struct Clock;

/// Tells the time left.
#[declare_agent(url = "http://127.0.0.1:9")]
impl Clock {
    /// Says how many whole seconds of its budget are left, or `none`.
    #[skill]
    fn left(&self, _question: String, ctx: a2a_card::SkillContext) -> String {
        ctx.budget()
            .map_or("none".to_owned(), |b| format!("{} s", b.as_secs()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_goes_with_the_call_and_a_bad_one_is_refused() {
    let base = serve(Server::new(Clock)).await;
    let ask = |budget: Option<&'static str>| {
        let base = base.clone();
        async move {
            let mut args = vec!["call", &base, "--skill", "left", "--text", "now?"];
            if let Some(budget) = budget {
                args.extend(["--budget", budget]);
            }
            run(&args).await
        }
    };
    let out = ask(Some("90s")).await;
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let left = stdout(&out);
    assert!(["89 s", "90 s"].contains(&left.trim()), "{left}");
    let out = ask(None).await;
    assert_eq!(stdout(&out).trim(), "none");
    let out = ask(Some("2h")).await;
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("`h`"), "{}", stderr(&out));
}

/// An agent that takes an API key in `X-API-Key`.
struct Vault;

/// Opens for callers with a key.
#[declare_agent(
    url = "http://127.0.0.1:9",
    security_schemes(key = api_key(header = "X-API-Key")),
    security(key)
)]
impl Vault {
    /// Says who opened it.
    #[skill]
    fn open(&self, _please: String, ctx: a2a_card::SkillContext) -> String {
        format!("opened by {}", ctx.principal().map_or("?", |p| p.subject()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_go_on_every_request_and_are_never_printed() {
    let keys = StaticApiKeys::new().key("s3cret-key-of-team-blue", Identity::new("team-blue"));
    let base =
        serve(Server::new(Vault).authentication(Authentication::new().api_key("key", keys))).await;
    // Refused without the key: unusable input (exit 2), the refusal told apart from a failure
    // by its `ErrorInfo` reason `UNAUTHENTICATED`.
    let out = run(&["call", &base, "--skill", "open", "--text", "please"]).await;
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("authentication required"),
        "{}",
        stderr(&out)
    );

    let out = run(&[
        "call",
        &base,
        "--skill",
        "open",
        "--text",
        "please",
        "--header",
        "X-API-Key: s3cret-key-of-team-blue",
    ])
    .await;
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "opened by team-blue");

    let out = run(&[
        "call",
        &base,
        "--skill",
        "open",
        "--text",
        "please",
        "-H",
        "X-API-Key: wrong-key-0123456789",
    ])
    .await;
    assert_ne!(code(&out), 0);
    assert!(
        !stderr(&out).contains("wrong-key-0123456789"),
        "{}",
        stderr(&out)
    );

    let out = run(&["inspect", &base]).await;
    assert!(
        stdout(&out).contains("security:      key (API key in header `X-API-Key`)"),
        "{}",
        stdout(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ca_cert_names_a_file_it_cannot_read_or_that_holds_no_certificate() {
    let base = fight_club().await;
    let missing = std::env::temp_dir().join("a2a-card-no-such-ca.pem");
    let not_pem = std::env::temp_dir().join(format!("a2a-card-not-pem-{}.pem", std::process::id()));
    std::fs::write(&not_pem, "not a certificate").expect("a temporary file");
    for (file, says) in [
        (&missing, "a2a-card-no-such-ca.pem"),
        (&not_pem, "BEGIN CERTIFICATE"),
    ] {
        let out = run(&["inspect", &base, "--ca-cert", &file.display().to_string()]).await;
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
    }
    let _ = std::fs::remove_file(&not_pem);
}

#[cfg(feature = "grpc")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_over_grpc_when_asked() {
    let base = serve(Server::new(agent::FightClub).grpc(true)).await;
    let out = run(&[
        "call",
        &base,
        "--binding",
        "grpc",
        "--skill",
        "fight-comparison",
        "--data",
        r#"{"a": "Lion", "b": "Tiger"}"#,
    ])
    .await;
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("the output, as JSON");
    assert_eq!(answer["winner"], "Tiger");

    // An agent whose card offers no gRPC: exit 2, saying what the card offers.
    let plain = fight_club().await;
    let out = run(&[
        "call",
        &plain,
        "--binding",
        "grpc",
        "--skill",
        "fight-comparison",
        "--data",
        r#"{"a": "Lion", "b": "Tiger"}"#,
    ])
    .await;
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("interface"), "{}", stderr(&out));
}

/// Two skills that take text: routing alone takes text to the first.
struct Twins;
/// Says text back, as it is or backwards.
#[declare_agent(url = "http://127.0.0.1:9000")]
impl Twins {
    /// Says the text back.
    #[skill]
    fn echo(&self, text: String) -> String {
        format!("echo: {text}")
    }

    /// Says the text backwards.
    #[skill]
    fn reverse(&self, text: String) -> String {
        format!("reverse: {}", text.chars().rev().collect::<String>())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_runs_the_skill_it_names_where_routing_would_pick_another() {
    let base = serve(Server::new(Twins)).await;
    for (skill, said) in [("reverse", "reverse: cba"), ("echo", "echo: abc")] {
        let out = run(&["call", &base, "--skill", skill, "--text", "abc"]).await;
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert!(stdout(&out).contains(said), "{skill}: {}", stdout(&out));
    }
}
