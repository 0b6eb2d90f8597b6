//! OpenTelemetry export, received for real: an OTLP/HTTP receiver here (protobuf, decoded with
//! the OpenTelemetry proto definitions) gets what `a2a_card::otel::init` exports from the
//! example agent and from an agent whose skill calls it through `a2a_card::client`: the spans
//! of a blocking send, a stream with a question and a cancel, with their parent links and
//! attributes, no message text and no token in any attribute, one trace across both agents
//! (the called server's request span a child of the caller's client span), and the metrics,
//! over OTLP and as Prometheus text.
//!
//! One test: `init` installs the process's subscriber once.

mod support;

use examples::fight_club::agent as fight_club;
use examples::trip_planner::agent as trip;

use std::time::Duration;

use a2a_card::client::{Payload, RemoteAgent};
use a2a_card::server::Server;
use a2a_card::{SkillContext, agent, skill};
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::Span;
use serde_json::{Value, json};
use support::otlp::{attribute, receiver};

/// An agent whose skill is a model in a loop with a tool (a scripted model).
struct Forecaster {
    model: a2a_card::testing::ScriptedModel,
}

/// Forecasts.
#[agent(url = "http://127.0.0.1:9501")]
impl Forecaster {
    /// Answers a question about the weather.
    #[skill(durable)]
    async fn forecast(
        &self,
        question: String,
        ctx: SkillContext,
    ) -> Result<String, a2a_card::SkillError> {
        use a2a_card::rig::rig_core::{message::ToolName, tool::ToolOutput};
        let name = ToolName::new("sky").map_err(|e| a2a_card::SkillError::Failed(e.to_string()))?;
        let sky =
            a2a_card::rig::DynamicTool::new(name, "The sky", json!({"type": "object"}), |_| {
                Box::pin(async { Ok(ToolOutput::text("blue")) })
            });
        let done = a2a_card::rig::ModelLoop::new(self.model.clone())
            .tool(sky)
            .run(&ctx, question)
            .await?;
        Ok(done.text)
    }
}

/// The first string value of `key` in the JSON text `answer`.
fn first_string(answer: &str, key: &str) -> String {
    answer
        .split(&format!("\"{key}\":\""))
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("no `{key}` in {answer}"))
        .to_owned()
}

/// An agent whose skill asks the fight club (at `FIGHTS`) through the client.
struct Referee;

static FIGHTS: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Asks the fight club who wins.
#[agent(url = "http://127.0.0.1:9500")]
impl Referee {
    /// Asks the fight club about a fight written "A vs B".
    #[skill]
    async fn referee(&self, fight: String, _ctx: SkillContext) -> Result<String, String> {
        let (a, b) = fight.split_once(" vs ").ok_or("write `A vs B`")?;
        let club = RemoteAgent::discover(FIGHTS.get().ok_or("no fight club")?.clone())
            .await
            .map_err(|e| e.to_string())?;
        let outcome = club
            .call("fight-comparison", Payload::data(json!({"a": a, "b": b})))
            .await
            .map_err(|e| e.to_string())?;
        Ok(format!("{outcome:?}"))
    }
}

async fn serve<A: a2a_card::Agent>(server: Server<A>) -> String {
    let listening = server.bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listening.local_addr());
    tokio::spawn(listening.serve());
    base
}

async fn rpc(base: &str, body: Value, token: Option<&str>) -> String {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/"))
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .body(body.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.unwrap().text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_and_metrics_reach_an_otlp_receiver_and_one_trace_spans_two_agents() {
    let (collector, received) = receiver().await;
    // SAFETY-free: set before any thread reads them (the runtime's workers do not).
    unsafe {
        std::env::set_var("OTEL_EXPORTER_OTLP_ENDPOINT", &collector);
        std::env::set_var("OTEL_SERVICE_NAME", "otel-test");
        std::env::set_var("OTEL_METRIC_EXPORT_INTERVAL", "200");
    }
    let telemetry = a2a_card::otel::init().expect("telemetry set up");
    assert!(telemetry.exports());

    let fights = serve(Server::new(fight_club::FightClub).metrics_route("/metrics")).await;
    FIGHTS.set(fights.clone()).unwrap();
    let planner = serve(
        Server::new(trip::TripPlanner {
            pace: Duration::from_millis(300),
        })
        .webhooks(a2a_card::server::Webhooks::default().allow_loopback(true)),
    )
    .await;
    let referee = serve(Server::new(Referee)).await;
    let model = a2a_card::testing::ScriptedModel::new()
        .reply(a2a_card::testing::ScriptedReply::tool_call("sky", json!({})).usage(40, 3))
        .reply(a2a_card::testing::ScriptedReply::text("Blue skies.").usage(52, 4));
    let forecaster = serve(Server::new(Forecaster { model })).await;

    // A blocking send, with a secret-looking text that must not appear in any span.
    let secret = "Lion-7f3a-secret";
    let answer = rpc(
        &fights,
        json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
            "messageId": "m1", "role": "ROLE_USER",
            "parts": [{"data": {"a": secret, "b": "Tiger"}, "mediaType": "application/json;schema=fightComparison"}]}}}),
        Some("token-must-not-appear"),
    )
    .await;
    assert!(answer.contains("TASK_STATE_COMPLETED"), "{answer}");

    // A stream with a question, then the answer; and a cancel of a long plan.
    let stream = rpc(
        &planner,
        json!({"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage", "params": {
            "message": {"messageId": "m2", "role": "ROLE_USER",
                "parts": [{"data": {"destination": "Lisbon", "days": 1}, "mediaType": "application/json;schema=tripRequest"}]},
            "configuration": {"taskPushNotificationConfig": {"url": format!("{collector}/hook")}}}}),
        None,
    )
    .await;
    let task = first_string(&stream, "taskId");
    let answered = rpc(
        &planner,
        json!({"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": {"message": {
            "messageId": "m3", "role": "ROLE_USER", "taskId": task, "parts": [{"text": "2026-12-01"}]}}}),
        None,
    )
    .await;
    assert!(answered.contains("TASK_STATE_COMPLETED"), "{answered}");
    let long = rpc(
        &planner,
        json!({"jsonrpc": "2.0", "id": 4, "method": "SendMessage", "params": {
            "message": {"messageId": "m4", "role": "ROLE_USER",
                "parts": [{"data": {"destination": "Rome", "days": 14, "start_date": "2026-12-01"}, "mediaType": "application/json;schema=tripRequest"}]},
            "configuration": {"returnImmediately": true}}}),
        None,
    )
    .await;
    let long_task = first_string(&long, "id");
    let canceled = rpc(
        &planner,
        json!({"jsonrpc": "2.0", "id": 5, "method": "CancelTask", "params": {"id": long_task}}),
        None,
    )
    .await;
    assert!(canceled.contains("TASK_STATE_CANCELED"), "{canceled}");

    // An agent that calls another.
    let refereed = rpc(
        &referee,
        json!({"jsonrpc": "2.0", "id": 6, "method": "SendMessage", "params": {"message": {
            "messageId": "m6", "role": "ROLE_USER", "parts": [{"text": "Bear vs Wolf"}]}}}),
        None,
    )
    .await;
    assert!(refereed.contains("TASK_STATE_COMPLETED"), "{refereed}");

    // A model in a loop: its completions and its tool call are spans of the GenAI conventions.
    let forecast = rpc(
        &forecaster,
        json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {"message": {
            "messageId": "m7", "role": "ROLE_USER", "parts": [{"text": "Sky?"}]}}}),
        None,
    )
    .await;
    assert!(forecast.contains("Blue skies."), "{forecast}");

    // A call that fails, over HTTP+JSON: counted as an error of its method.
    let missing = reqwest::get(format!("{fights}/tasks/no-such-task"))
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);

    // Prometheus text, before the export is flushed.
    let text = reqwest::get(format!("{fights}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // Plausible values: the tasks by skill and final state, and none left running.
    let value = |name: &str, labels: &[&str]| -> f64 {
        text.lines()
            .filter(|l| l.starts_with(&format!("{name}{{")))
            .filter(|l| labels.iter().all(|label| l.contains(label)))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    let fights = [
        "gen_ai_tool_name=\"fight-comparison\"",
        "a2a_task_state=\"completed\"",
    ];
    assert_eq!(value("a2a_tasks_total", &fights), 2.0, "{text}"); // asked directly, and by the referee
    let planned = ["gen_ai_tool_name=\"plan-trip\""];
    assert_eq!(value("a2a_tasks_total", &planned), 2.0, "{text}"); // completed, canceled
    assert_eq!(value("a2a_tasks_active", &planned), 0.0, "{text}");
    let sends = ["rpc_method=\"SendMessage\"", "a2a_outcome=\"ok\""];
    assert!(value("a2a_server_requests_total", &sends) >= 4.0, "{text}");
    let failed = ["rpc_method=\"GetTask\"", "a2a_outcome=\"error\""];
    assert_eq!(value("a2a_server_requests_total", &failed), 1.0, "{text}");
    assert!(value("a2a_stream_chunks_total", &[]) >= 1.0, "{text}");

    tokio::time::sleep(Duration::from_millis(500)).await;
    telemetry.flush();
    let got = {
        let mut got = None;
        for _ in 0..50 {
            {
                let r = received.lock().unwrap();
                let has = |m: &str| r.metrics.iter().any(|n| n == m);
                if r.spans
                    .iter()
                    .any(|s| attribute(s, "a2a.task.state").as_deref() == Some("canceled"))
                    && has("a2a.tasks")
                {
                    got = Some((r.spans.clone(), r.metrics.clone()));
                    break;
                }
            }
            telemetry.flush();
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        got.expect("spans and metrics received")
    };
    let (spans, metrics) = got;
    let pushes = received.lock().unwrap().pushes.clone();

    // No message content and no credential in any attribute.
    for span in &spans {
        for a in &span.attributes {
            let shown = format!("{:?}", a.value);
            assert!(
                !shown.contains(secret)
                    && !shown.contains("token-must-not-appear")
                    && !shown.contains("Bear"),
                "span {} attribute {} holds {shown}",
                span.name,
                a.key
            );
        }
    }

    let by_id = |id: &[u8]| spans.iter().find(|s| s.span_id == id);
    let named = |name: &'static str| spans.iter().filter(move |s| s.name == name);
    // The blocking send: request span (SendMessage) -> task -> skill.
    let calls = |method: &'static str| {
        named("a2a.request").filter(move |s| attribute(s, "rpc.method").as_deref() == Some(method))
    };
    let request = calls("SendMessage")
        .find(|s| attribute(s, "a2a.binding").as_deref() == Some("JSONRPC"))
        .expect("the SendMessage request span");
    assert_eq!(
        attribute(request, "http.response.status_code").as_deref(),
        Some("200")
    );
    let missing = calls("GetTask")
        .find(|s| attribute(s, "a2a.binding").as_deref() == Some("HTTP+JSON"))
        .expect("the GetTask request span");
    assert_eq!(
        attribute(missing, "http.response.status_code").as_deref(),
        Some("404")
    );
    let task_span = named("a2a.task")
        .find(|s| attribute(s, "gen_ai.tool.name").as_deref() == Some("fight-comparison"))
        .expect("the fight's task span");
    assert_eq!(
        task_span.parent_span_id, request.span_id,
        "task under its request"
    );
    assert_eq!(
        attribute(task_span, "a2a.task.state").as_deref(),
        Some("completed")
    );
    assert!(
        task_span.events.iter().any(|e| e.name == "task state"),
        "state events"
    );
    let skill_span = spans
        .iter()
        .find(|s| s.name == "a2a.skill" && s.parent_span_id == task_span.span_id)
        .expect("the skill's span");
    assert_eq!(
        skill_span.parent_span_id, task_span.span_id,
        "skill under its task"
    );
    assert_eq!(
        attribute(skill_span, "a2a.skill.panicked").as_deref(),
        Some("false")
    );

    // The question: the plan's task went through input-required to completed; the cancel.
    let plan = named("a2a.task")
        .find(|s| attribute(s, "a2a.task.id").as_deref() == Some(task.as_str()))
        .expect("the plan's task span");
    let states: Vec<String> = plan
        .events
        .iter()
        .filter_map(|e| e.attributes.iter().find(|a| a.key == "a2a.task.state"))
        .filter_map(|a| match a.value.as_ref().and_then(|v| v.value.as_ref()) {
            Some(Any::StringValue(s)) => Some(s.clone()),
            _ => None,
        })
        .collect();
    assert!(
        states.contains(&"input-required".to_owned())
            && states.last().map(String::as_str) == Some("completed"),
        "{states:?}"
    );
    // Its webhook deliveries carried the task's trace, each from its attempt's span.
    let attempts: Vec<&Span> = named("a2a.push").collect();
    assert!(!attempts.is_empty() && attempts.iter().all(|a| a.trace_id == plan.trace_id));
    let trace: String = plan.trace_id.iter().map(|b| format!("{b:02x}")).collect();
    assert!(!pushes.is_empty(), "the webhook was posted to");
    assert!(
        pushes
            .iter()
            .all(|p| p.split('-').nth(1) == Some(trace.as_str())),
        "{pushes:?} in trace {trace}"
    );
    let cancel = named("a2a.task")
        .find(|s| attribute(s, "a2a.task.id").as_deref() == Some(long_task.as_str()))
        .expect("the canceled task's span");
    assert_eq!(
        attribute(cancel, "a2a.task.state").as_deref(),
        Some("canceled")
    );
    assert!(
        calls("CancelTask").next().is_some(),
        "the CancelTask request span"
    );

    // One trace across two agents: referee request -> task -> skill -> client span -> the
    // fight club's request span.
    let client = named("a2a.client").next().expect("the client span");
    assert_eq!(
        attribute(client, "rpc.method").as_deref(),
        Some("SendMessage")
    );
    let called = spans
        .iter()
        .find(|s| s.parent_span_id == client.span_id)
        .expect("the called server's request span, a child of the client span");
    assert_eq!(called.trace_id, client.trace_id);
    assert_eq!(attribute(called, "a2a.binding").as_deref(), Some("JSONRPC"));
    let mut top = client;
    while let Some(parent) = by_id(&top.parent_span_id) {
        top = parent;
    }
    assert_eq!(attribute(top, "rpc.method").as_deref(), Some("SendMessage"));
    assert_eq!(
        top.trace_id, called.trace_id,
        "one trace from the first request"
    );

    // The model loop's spans, under its skill's: two completions with their usage, one tool.
    let chats: Vec<&Span> = named("chat scripted-model").collect();
    assert_eq!(chats.len(), 2, "two completions");
    let usage: Vec<(Option<String>, Option<String>)> = chats
        .iter()
        .map(|s| {
            (
                attribute(s, "gen_ai.usage.input_tokens"),
                attribute(s, "gen_ai.usage.output_tokens"),
            )
        })
        .collect();
    assert!(
        usage.contains(&(Some("40".into()), Some("3".into()))),
        "{usage:?}"
    );
    assert!(
        usage.contains(&(Some("52".into()), Some("4".into()))),
        "{usage:?}"
    );
    for chat in &chats {
        assert_eq!(
            attribute(chat, "gen_ai.operation.name").as_deref(),
            Some("chat")
        );
        assert_eq!(
            attribute(chat, "gen_ai.provider.name").as_deref(),
            Some("scripted")
        );
        let parent = by_id(&chat.parent_span_id).expect("a parent");
        assert_eq!(
            parent.name, "a2a.skill",
            "a completion under its skill's span"
        );
    }
    let tool = named("execute_tool sky").next().expect("the tool's span");
    assert_eq!(attribute(tool, "gen_ai.tool.name").as_deref(), Some("sky"));

    for metric in [
        "a2a.server.requests",
        "a2a.server.request.duration",
        "a2a.tasks",
        "a2a.task.duration",
        "a2a.tasks.active",
        "a2a.stream.chunks",
    ] {
        assert!(
            metrics.iter().any(|m| m == metric),
            "metric {metric} in {metrics:?}"
        );
    }
}
