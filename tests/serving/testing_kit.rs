//! The testing kit (`a2a_card::testing`) as an agent author uses it: the examples' agents served
//! in-process, called with their typed clients and raw JSON-RPC, as callers with and without
//! credentials, on the memory store and a temporary SQLite file, under tokio's paused clock (a
//! plan of fourteen hours) and a clock the test moves (a durable sleep of three days).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a::TaskState;
use a2a_card::client::{Payload, TypedEvent};
use a2a_card::server::auth::{Authentication, StaticApiKeys};
use a2a_card::server::store::Tasks;
use a2a_card::server::{Limits, Rate, Server};
use a2a_card::testing::{CrashPoints, Replay, ReplayReport, TestAgent, TestClock, Verdict};
use a2a_card::{Identity, SkillContext, SkillError, agent, skill};
use futures::StreamExt;
use serde_json::json;

use crate::trip_planner::agent::{ItineraryDay, TripPlanner, TripPlannerClient, TripRequest};

fn planner(pace: Duration) -> Server<TripPlanner> {
    Server::new(TripPlanner { pace })
}

fn lisbon(days: u8, start_date: Option<&str>) -> TripRequest {
    TripRequest {
        destination: "Lisbon".into(),
        days,
        start_date: start_date.map(str::to_owned),
    }
}

#[tokio::test]
async fn an_agent_in_process_streams_asks_and_takes_the_answer_through_its_typed_client() {
    let agent = TestAgent::start(planner(Duration::from_millis(1)))
        .await
        .expect("served");
    let client = TripPlannerClient::connect_with(agent.connect())
        .await
        .expect("the card read through the router");
    let mut run = client.plan_trip(lisbon(3, None)).await.expect("a stream");
    let (mut items, mut questions) = (Vec::new(), Vec::new());
    while let Some(event) = run.next().await {
        match event.expect("no error") {
            TypedEvent::Item(day) => items.push(day),
            TypedEvent::Question { text, .. } => {
                questions.push(text);
                run.answer("2026-12-30").await.expect("the answer is sent");
            }
            _ => {}
        }
    }
    assert_eq!(questions, ["Which day do you leave? (YYYY-MM-DD)"]);
    let dates: Vec<&str> = items.iter().map(|d| d.date.as_str()).collect();
    assert_eq!(dates, ["2026-12-30", "2026-12-31", "2027-01-01"]);

    // Waiting for a handle, and cancelling one, go through the same router.
    let mut pending = client
        .plan_trip(lisbon(14, Some("2026-12-01")))
        .no_wait()
        .await
        .expect("a task");
    pending.cancel().await.expect("cancelled");
    let state = pending.handle().poll().await.expect("read").state();
    assert_eq!(state, Some(a2a::TaskState::Canceled));
}

#[tokio::test]
async fn raw_json_rpc_reaches_the_same_tasks_and_the_same_checks() {
    let agent = TestAgent::start(planner(Duration::from_millis(1)))
        .await
        .expect("served");
    let send = json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{
        "data": {"destination": "Lisbon", "days": 2, "start_date": "2026-12-01"},
        "mediaType": "application/json;schema=tripRequest"}]}});
    let events = agent
        .json_rpc("SendStreamingMessage", send)
        .await
        .expect("an answer");
    let events = events.as_array().expect("a stream's events");
    let last = &events.last().expect("events")["result"];
    assert_eq!(
        last["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let task_id = last["statusUpdate"]["taskId"].as_str().expect("a task id");
    let task = agent
        .json_rpc("GetTask", json!({"id": task_id}))
        .await
        .expect("an answer");
    assert_eq!(task["result"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        task["result"]["artifacts"].as_array().map(Vec::len),
        Some(1)
    );

    // Input the skill's schema refuses is refused as over the network: invalid params, with
    // where and why.
    let bad = json!({"message": {"messageId": "m2", "role": "ROLE_USER", "parts": [{
        "data": {"destination": "Lisbon", "days": 40},
        "mediaType": "application/json;schema=tripRequest"}]}});
    let refused = agent.json_rpc("SendMessage", bad).await.expect("an answer");
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused.to_string().contains("/days"),
        "the refusal says where: {refused}"
    );
}

struct Vault;

/// Keeps secrets for known callers.
#[agent(
    url = "https://vault.example.com/a2a",
    security_schemes(key = api_key(header = "X-API-Key")),
    security(key)
)]
impl Vault {
    /// Says who asks.
    #[skill]
    fn whoami(&self, _text: String, ctx: SkillContext) -> String {
        ctx.principal()
            .map(|c| c.subject().to_owned())
            .unwrap_or_else(|| "nobody".to_owned())
    }
}

#[tokio::test]
async fn a_caller_is_let_in_by_its_credentials_and_refused_without() {
    let keys = StaticApiKeys::new().key("k-blue", Identity::new("team-blue"));
    let server = Server::new(Vault).authentication(Authentication::new().api_key("key", keys));
    let agent = TestAgent::start(server).await.expect("served");

    let blue = VaultClient::connect_with(agent.with_header("X-API-Key", "k-blue").connect())
        .await
        .expect("connected");
    assert_eq!(blue.whoami("hi".into()).await.expect("let in"), "team-blue");

    let anonymous = VaultClient::connect_with(agent.connect())
        .await
        .expect("the card is public");
    let refused = anonymous.whoami("hi".into()).await.expect_err("refused");
    assert!(
        refused.to_string().to_lowercase().contains("authenticat"),
        "unauthenticated: {refused}"
    );
    let raw = agent
        .with_header("X-API-Key", "wrong")
        .json_rpc("GetTask", json!({"id": "t"}))
        .await
        .expect("an answer");
    assert!(raw["error"].is_object(), "a wrong key is refused: {raw}");
}

#[tokio::test]
async fn an_agent_on_a_temporary_sqlite_file_keeps_its_tasks_there() {
    let agent = TestAgent::on_sqlite(planner(Duration::from_millis(1)))
        .await
        .expect("served");
    let client = TripPlannerClient::connect_with(agent.connect())
        .await
        .expect("connected");
    let day: ItineraryDay = client
        .plan_trip(lisbon(1, Some("2026-12-01")))
        .no_wait()
        .await
        .expect("a task")
        .wait()
        .await
        .expect("the plan");
    assert_eq!(day.date, "2026-12-01");
    let listed = agent
        .json_rpc("ListTasks", json!({}))
        .await
        .expect("an answer");
    assert_eq!(
        listed["result"]["tasks"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
}

struct Reminder;

/// Reminds, later.
#[agent(url = "https://reminder.example.com/a2a")]
impl Reminder {
    /// Waits three days (durably), then reminds.
    #[skill(durable)]
    async fn remind(&self, text: String, ctx: SkillContext) -> Result<String, String> {
        ctx.sleep(Duration::from_secs(3 * 24 * 3600))
            .await
            .map_err(|e| e.to_string())?;
        Ok(format!("reminder: {text}"))
    }
}

/// With tokio's clock paused (`start_paused`), the runtime skips ahead to the next timer
/// whenever the agent has nothing else to do: fourteen days planned an hour each (plain
/// `tokio::time::sleep`s, on the memory store) run at once.
#[tokio::test(start_paused = true)]
async fn a_paused_runtime_clock_runs_hours_of_pacing_at_once() {
    let wall = std::time::Instant::now();
    let start = tokio::time::Instant::now();
    let agent = TestAgent::start(planner(Duration::from_secs(3600)))
        .await
        .expect("served");
    let client = TripPlannerClient::connect_with(agent.connect())
        .await
        .expect("connected");
    let mut run = client
        .plan_trip(lisbon(14, Some("2026-12-01")))
        .await
        .expect("a stream");
    let mut days = 0;
    while let Some(event) = run.next().await {
        if let TypedEvent::Item(_) = event.expect("no error") {
            days += 1;
        }
    }
    assert_eq!(days, 14);
    assert!(start.elapsed() >= Duration::from_secs(14 * 3600));
    // Fourteen hours of the test's time, in (far) less than one of the machine's.
    assert!(wall.elapsed() < Duration::from_secs(3600));
}

/// A durable sleep of three days waits on the server's clock: on a test's clock, the task
/// sleeps (journaled, on SQLite) until the test moves the clock three days on, and not before.
#[tokio::test]
async fn a_durable_sleep_of_three_days_ends_when_the_test_clock_moves_three_days() {
    let clock = TestClock::at_ms(1_800_000_000_000);
    let agent = TestAgent::on_sqlite(Server::new(Reminder).clock(clock.clock()))
        .await
        .expect("served");
    let client = ReminderClient::connect_with(agent.connect())
        .await
        .expect("connected");
    let pending = client
        .remind("pay rent".into())
        .no_wait()
        .await
        .expect("a task");
    // Bounded waits: a server that ignored its clock would sleep three real days.
    let bounded = Duration::from_secs(60);
    tokio::time::timeout(bounded, clock.sleeping(1))
        .await
        .expect("the handler sleeps on the test's clock");
    let task_id = pending.task_id().to_owned();
    let read = |agent: TestAgent, id: String| async move {
        agent
            .json_rpc("GetTask", json!({"id": id}))
            .await
            .expect("an answer")["result"]["status"]["state"]
            .clone()
    };
    clock.advance(Duration::from_secs(3 * 24 * 3600 - 1));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        clock.sleepers(),
        1,
        "a second short of its deadline, it sleeps"
    );
    assert_eq!(
        read(agent.clone(), task_id.clone()).await,
        "TASK_STATE_WORKING"
    );
    clock.advance(Duration::from_secs(1));
    let reminded = tokio::time::timeout(bounded, pending.wait())
        .await
        .expect("woken by the clock")
        .expect("reminded");
    assert_eq!(reminded, "reminder: pay rent");
    assert_eq!(clock.sleepers(), 0);
    assert_eq!(read(agent, task_id).await, "TASK_STATE_COMPLETED");
}

/// A checkout: a step, a question, a marker, a durable sleep, another step; and a ledger of
/// what the step bodies did, as a payment provider would keep it.
struct Checkout {
    ledger: Arc<Mutex<Vec<String>>>,
}

/// Sells, and asks before shipping.
#[agent(url = "https://checkout.example.com/a2a")]
impl Checkout {
    /// Charges, asks where to ship, waits a day, ships.
    #[skill(durable)]
    async fn buy(&self, item: String, ctx: SkillContext) -> Result<String, SkillError> {
        let ledger = Arc::clone(&self.ledger);
        let key = ctx.task_id.clone().unwrap_or_default();
        let receipt: String = ctx
            .step("charge", async move {
                ledger.lock().unwrap().push(format!("charge {key}"));
                format!("r-{item}")
            })
            .await?;
        let address = ctx.ask("Ship where?").await?.text().trim().to_owned();
        let gift = ctx.patched("gift-wrap");
        ctx.sleep(Duration::from_secs(24 * 3600)).await?;
        let ledger = Arc::clone(&self.ledger);
        let shipped: String = ctx
            .step("ship", async move {
                ledger.lock().unwrap().push("ship".into());
                format!("to {address}")
            })
            .await?;
        Ok(format!("{receipt} shipped {shipped} (wrapped: {gift})"))
    }
}

#[tokio::test]
async fn a_durable_skill_stopped_at_every_point_of_its_journal_ends_as_if_never_stopped() {
    let ledger = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&ledger);
    let report = CrashPoints::new(
        move || {
            Server::new(Checkout {
                ledger: Arc::clone(&kept),
            })
        },
        "buy",
        Payload::text("lamp"),
    )
    .answer(Payload::text("12 Rua Augusta"))
    .run()
    .await
    .expect("the run nobody stopped ends");
    report.assert_survives();
    let said = &report.uninterrupted().artifacts[0]["parts"][0]["text"];
    assert_eq!(said, "r-lamp shipped to 12 Rua Augusta (wrapped: true)");
    let cuts: Vec<&str> = report.points().iter().map(|p| p.cut_before()).collect();
    assert_eq!(
        cuts,
        [
            "the start of step `charge`",
            "the result of step `charge`",
            "an answer",
            "marker `gift-wrap`",
            "a sleep's deadline",
            "the start of step `ship`",
            "the result of step `ship`",
            "the task's end",
        ]
    );
    // Stopped inside a step (begun, its result not stored), its body runs once more; at
    // every other point each body ran once.
    for point in report.points() {
        let charge = if point.index() == 1 { 2 } else { 1 };
        let ship = if point.index() == 6 { 2 } else { 1 };
        assert_eq!(point.runs()["charge"], charge, "{report}");
        assert_eq!(point.runs()["ship"], ship, "{report}");
    }
    // The ledger agrees with the report: the uninterrupted run and 8 points.
    let ledger = ledger.lock().unwrap();
    let charges = ledger.iter().filter(|l| l.starts_with("charge")).count();
    assert_eq!(charges, 1 + 8 + 1, "{ledger:?}");
}

/// A handler that decides on something outside its journal: a counter of its runs.
struct Fickle {
    runs: Arc<AtomicU32>,
}

/// Changes its mind.
#[agent(url = "https://fickle.example.com/a2a")]
impl Fickle {
    /// Names its first step by how often it ran.
    #[skill(durable)]
    async fn pick(&self, text: String, ctx: SkillContext) -> Result<String, SkillError> {
        let run = self.runs.fetch_add(1, Ordering::SeqCst);
        ctx.step(&format!("step-{run}"), async {}).await?;
        ctx.step("last", async {}).await?;
        Ok(text)
    }
}

#[tokio::test]
async fn a_handler_that_does_not_replay_its_journal_is_reported_point_by_point() {
    let report = CrashPoints::new(
        // One counter for every agent the harness starts: a run taken over names its step
        // otherwise than the run its journal is from.
        {
            let runs = Arc::new(AtomicU32::new(0));
            move || {
                Server::new(Fickle {
                    runs: Arc::clone(&runs),
                })
            }
        },
        "pick",
        Payload::text("x"),
    )
    .run()
    .await;
    // The run nobody stopped ends; a run taken over past its first step diverges from its
    // journal and fails, and one taken over before it runs a step the first run did not.
    let report = report.expect("the first run ends");
    let failures = report.failures();
    assert!(!failures.is_empty(), "{report}");
    assert!(
        failures
            .iter()
            .any(|f| f.contains("point 2 (stopped before the start of step `last`)")),
        "{failures:#?}"
    );
    let point = &report.points()[2];
    assert_eq!(
        point.outcome().map(|o| o.state.clone()),
        Ok(TaskState::Failed)
    );
}

#[tokio::test]
async fn the_trip_planner_survives_a_crash_at_every_point_of_a_plan_that_asks() {
    let report = CrashPoints::new(
        || planner(Duration::from_millis(1)),
        "plan-trip",
        Payload::data(json!({"destination": "Lisbon", "days": 3})),
    )
    .answer(Payload::text("2026-12-30"))
    .run()
    .await
    .expect("the plan ends");
    report.assert_survives();
    let cuts: Vec<&str> = report.points().iter().map(|p| p.cut_before()).collect();
    assert_eq!(cuts, ["an answer", "the task's end"]);
    let days = &report.uninterrupted().artifacts;
    assert_eq!(days.len(), 1, "one itinerary: {days:?}");
    assert_eq!(days[0]["parts"].as_array().map(Vec::len), Some(3));
}

/// A till whose code changes between versions: 1 charges, asks, ships; 2 renames its charge
/// step; 3 adds a marker and a step before the charge; 4 says its result otherwise.
struct Till {
    version: u8,
}

/// Sells.
#[agent(url = "https://till.example.com/a2a")]
impl Till {
    /// Charges, asks where to ship, ships. An item called `slow` is charged for ever.
    #[skill(durable)]
    async fn sell(&self, item: String, ctx: SkillContext) -> Result<String, SkillError> {
        if self.version == 3 && ctx.patched("wrap") {
            ctx.step("wrap", async {}).await?;
        }
        let charge = if self.version == 2 { "pay" } else { "charge" };
        let slow = item == "slow";
        ctx.step(charge, async move {
            if slow {
                std::future::pending::<()>().await;
            }
        })
        .await?;
        let address = ctx.ask("Ship where?").await?.text().trim().to_owned();
        ctx.step("ship", async {}).await?;
        Ok(match self.version {
            4 => format!("{item}, shipped to {address}"),
            _ => format!("{item} to {address}"),
        })
    }
}

#[tokio::test]
async fn a_replay_check_names_the_entry_and_step_a_new_version_diverges_at() {
    let dir = std::env::temp_dir().join(format!("a2a-card-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tasks.db");
    let _ = std::fs::remove_file(&file);
    let tasks = Tasks::sqlite(&file);
    // Version 1 leaves two tasks running: one asking (its charge done), one inside its charge.
    let v1 = TestAgent::start(Server::new(Till { version: 1 }).tasks(tasks.clone()))
        .await
        .expect("served");
    let remote = v1.remote().await.expect("the card");
    for item in ["lamp", "slow"] {
        let message = remote.message("sell", Payload::text(item)).unwrap();
        let sent = v1
            .json_rpc(
                "SendMessage",
                json!({"message": message, "configuration": {"returnImmediately": true}}),
            )
            .await
            .expect("sent");
        assert!(sent["result"]["task"]["id"].is_string(), "{sent}");
    }
    let running = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let running = Replay::from_store(&tasks).await.expect("read");
            let journals: Vec<usize> = running.tasks().iter().map(|t| t.journal.len()).collect();
            // Begin and charge begun for both, charge's result for the one that asks.
            if journals.len() == 2 && journals.iter().sum::<usize>() == 5 {
                let asking = running
                    .tasks()
                    .iter()
                    .filter(|t| t.task.status.state == TaskState::InputRequired)
                    .count();
                if asking == 1 {
                    return running;
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("both tasks under way");
    // Kept in a file, read back the same.
    let saved = dir.join("running.jsonl");
    running.save(&saved).expect("written");
    let running = Replay::from_file(&saved).expect("read back");
    assert_eq!(running, Replay::from_file(&saved).unwrap());
    let by_item = |report: &ReplayReport| -> Vec<(String, Verdict)> {
        let mut verdicts: Vec<(String, Verdict)> = report
            .tasks()
            .iter()
            .map(|t| {
                let task = running
                    .tasks()
                    .iter()
                    .find(|r| r.task.id == t.task_id)
                    .unwrap();
                let item = task.task.history.as_ref().unwrap()[0].parts[0]
                    .as_text()
                    .unwrap()
                    .to_owned();
                (item, t.verdict.clone())
            })
            .collect();
        verdicts.sort_by(|a, b| a.0.cmp(&b.0));
        verdicts
    };

    // The same code: both replay, and the report says where each goes on.
    let same = running
        .check(Server::new(Till { version: 1 }))
        .await
        .unwrap();
    same.assert_compatible();
    let verdicts = by_item(&same);
    let Verdict::Replays {
        entries,
        next,
        markers,
    } = &verdicts[0].1
    else {
        panic!("{same}")
    };
    assert_eq!((verdicts[0].0.as_str(), *entries), ("lamp", 1));
    assert_eq!(next.as_deref(), Some("a question"));
    assert!(markers.is_empty());
    let Verdict::Replays { next, .. } = &verdicts[1].1 else {
        panic!("{same}")
    };
    assert!(
        next.as_deref()
            .unwrap()
            .starts_with("step `charge` again (begun, its result not journaled"),
        "{same}"
    );

    // A step renamed: both diverge at entry 1, which names the old step and the new one.
    let renamed = running
        .check(Server::new(Till { version: 2 }))
        .await
        .unwrap();
    assert!(!renamed.is_compatible());
    assert_eq!(renamed.failing().count(), 2, "{renamed}");
    for (item, verdict) in by_item(&renamed) {
        let Verdict::Diverges { entry, why } = verdict else {
            panic!("{renamed}")
        };
        assert_eq!(entry, Some(1), "{item}: {why}");
        assert!(
            why.contains("step `charge`") && why.contains("step `pay`"),
            "{why}"
        );
    }
    assert!(renamed.to_string().contains("DIVERGES"), "{renamed}");
    assert_eq!(renamed.exit_code(), std::process::ExitCode::from(1));

    // A marker added before an existing step: both replay, crossing it on the old path (the
    // task inside its charge too: the charge begun is the old code's work).
    let marked = running
        .check(Server::new(Till { version: 3 }))
        .await
        .unwrap();
    marked.assert_compatible();
    assert_eq!(marked.crossing_markers().count(), 2, "{marked}");
    for (_, verdict) in by_item(&marked) {
        let Verdict::Replays { markers, .. } = verdict else {
            panic!("{marked}")
        };
        assert_eq!(markers, [("wrap".to_owned(), false)]);
    }
    assert!(
        marked
            .to_string()
            .contains("crosses marker `wrap` (the old code's path)")
    );

    // A compatible change (what the handler returns): nothing to report.
    let reworded = running
        .check(Server::new(Till { version: 4 }))
        .await
        .unwrap();
    reworded.assert_compatible();
    assert_eq!(reworded.crossing_markers().count(), 0);
    drop(v1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The plans an earlier build of the trip planner left running, as `Replay::save` wrote them: one
/// asking for its start date, one mid-stream. `A2A_BLESS=1` writes them again from this build
/// (which a later build then replays).
#[tokio::test]
async fn the_trip_planner_replays_the_plans_an_earlier_build_left_running() {
    let saved = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/journals/trip_planner.jsonl");
    if std::env::var_os("A2A_BLESS").is_some() {
        leave_plans_running(&saved).await;
    }
    let running = Replay::from_file(&saved).expect("the saved journals");
    assert_eq!(running.tasks().len(), 2);
    let report = running
        .check(planner(Duration::from_millis(1)))
        .await
        .expect("checked");
    report.assert_compatible();
    let mut next: Vec<String> = report
        .tasks()
        .iter()
        .map(|t| match &t.verdict {
            Verdict::Replays { next, .. } => next.clone().unwrap_or_default(),
            other => panic!("{other:?}"),
        })
        .collect();
    next.sort();
    assert_eq!(
        next,
        ["a question", "new items, past what the task's log holds"],
        "{report}"
    );
    // A log whose first day says otherwise than this build plans it: the plan mid-stream
    // diverges at that item (no entry of its journal differs).
    let mut tasks = running.tasks().to_vec();
    let streaming = tasks
        .iter_mut()
        .find(|t| t.task.status.state == TaskState::Working)
        .expect("the plan mid-stream");
    let day = streaming
        .events
        .iter_mut()
        .find_map(|e| match e {
            a2a::StreamResponse::ArtifactUpdate(update) => Some(update),
            _ => None,
        })
        .expect("a day streamed");
    day.artifact.parts = vec![a2a::Part::text("a day another build planned")];
    let report = Replay::new(tasks)
        .check(planner(Duration::from_millis(1)))
        .await
        .expect("checked");
    let failing: Vec<&Verdict> = report.failing().map(|t| &t.verdict).collect();
    let [Verdict::Diverges { entry: None, why }] = failing[..] else {
        panic!("{report}")
    };
    assert!(why.contains("a chunk of artifact"), "{why}");
}

/// Runs this build's trip planner on a SQLite file until one plan asks and another has streamed
/// two days, and saves their journals to `saved`.
async fn leave_plans_running(saved: &std::path::Path) {
    let dir = std::env::temp_dir().join(format!("a2a-card-bless-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tasks = Tasks::sqlite(dir.join("tasks.db"));
    let agent = TestAgent::start(planner(Duration::from_millis(300)).tasks(tasks.clone()))
        .await
        .expect("served");
    let remote = agent.remote().await.expect("the card");
    for trip in [
        json!({"destination": "Lisbon", "days": 3}),
        json!({"destination": "Porto", "days": 14, "start_date": "2026-12-01"}),
    ] {
        let message = remote.message("plan-trip", Payload::data(trip)).unwrap();
        agent
            .json_rpc(
                "SendMessage",
                json!({"message": message, "configuration": {"returnImmediately": true}}),
            )
            .await
            .expect("sent");
    }
    let running = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let running = Replay::from_store(&tasks).await.expect("read");
            let streamed = running.tasks().iter().any(|t| {
                t.events
                    .iter()
                    .filter(|e| matches!(e, a2a::StreamResponse::ArtifactUpdate(_)))
                    .count()
                    >= 2
            });
            let asking = running
                .tasks()
                .iter()
                .any(|t| t.task.status.state == TaskState::InputRequired);
            if streamed && asking {
                return running;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("one plan asks, one streams");
    std::fs::create_dir_all(saved.parent().unwrap()).unwrap();
    running.save(saved).expect("saved");
    drop(agent);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_limit_per_hour_opens_again_when_the_test_clock_moves_an_hour() {
    let clock = TestClock::at_ms(1_800_000_000_000);
    let server = Server::new(Checkout {
        ledger: Arc::default(),
    })
    .limits(Limits::new().per_tenant(Rate::per_hour(1)))
    .clock(clock.clock());
    let agent = TestAgent::start(server).await.expect("served");
    let get = || agent.json_rpc("GetTask", json!({"id": "nobody"}));
    let first = get().await.expect("an answer");
    assert_eq!(first["error"]["code"], -32001, "{first}");
    let second = get().await.expect("an answer");
    assert!(
        second["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("too many requests")),
        "{second}"
    );
    clock.advance(Duration::from_secs(3600));
    let later = get().await.expect("an answer");
    assert_eq!(later["error"]["code"], -32001, "a new window: {later}");
}

/// Says what is left of its budget once answered.
struct Stopwatch;

/// Keeps time.
#[agent(url = "http://127.0.0.1:9000")]
impl Stopwatch {
    /// Asks to go on, then says how many seconds of its budget are left.
    #[skill]
    async fn left(&self, _ask: String, ctx: SkillContext) -> Result<String, SkillError> {
        ctx.ask("Go on?")
            .await
            .map_err(|e| SkillError::Failed(e.to_string()))?;
        let left = ctx.budget().map(|left| left.as_secs());
        Ok(format!("{left:?}"))
    }
}

#[tokio::test]
async fn a_budget_is_spent_on_the_test_clock() {
    let clock = TestClock::at_ms(1_800_000_000_000);
    let agent = TestAgent::start(Server::new(Stopwatch).clock(clock.clock()))
        .await
        .expect("served");
    let budget = a2a_card::budget::BUDGET_EXTENSION_URI;
    let asked = agent
        .json_rpc(
            "SendMessage",
            json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "time"}],
                   "metadata": {budget: {"ms": 60_000}}}}),
        )
        .await
        .expect("an answer");
    let id = asked["result"]["task"]["id"].as_str().expect("a task");
    assert_eq!(
        asked["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{asked}"
    );
    // Three quarters of a minute go by on the test's clock, none on the system's.
    clock.advance(Duration::from_secs(45));
    let done = agent
        .json_rpc(
            "SendMessage",
            json!({"message": {"messageId": "m-2", "role": "ROLE_USER", "parts": [{"text": "yes"}],
                   "taskId": id}}),
        )
        .await
        .expect("an answer");
    let said = done["result"]["task"]["artifacts"][0]["parts"][0]["text"].clone();
    assert!(
        said == "Some(15)" || said == "Some(14)",
        "15 s of the minute left: {done}"
    );
}

#[tokio::test]
async fn a_question_unanswered_past_the_input_timeout_on_the_test_clock_is_withdrawn() {
    let clock = TestClock::at_ms(1_800_000_000_000);
    let server = Server::new(Stopwatch)
        .input_timeout(Duration::from_secs(15 * 60))
        .clock(clock.clock());
    let agent = TestAgent::start(server).await.expect("served");
    let asked = agent
        .json_rpc(
            "SendMessage",
            json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "time"}]}}),
        )
        .await
        .expect("an answer");
    let id = asked["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_owned();
    let state = |agent: TestAgent, id: String| async move {
        agent
            .json_rpc("GetTask", json!({"id": id}))
            .await
            .expect("an answer")["result"]["status"]
            .clone()
    };
    // A second short of the timeout on the test's clock: the question still waits.
    clock.advance(Duration::from_secs(15 * 60 - 1));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let waiting = state(agent.clone(), id.clone()).await;
    assert_eq!(waiting["state"], "TASK_STATE_INPUT_REQUIRED", "{waiting}");
    // The timer is not a durable sleep: a test that runs what is due next is not stopped by it.
    assert_eq!(clock.sleepers(), 0);
    assert_eq!(clock.advance_to_next_deadline(), None);
    clock.advance(Duration::from_secs(1));
    let failed = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let status = state(agent.clone(), id.clone()).await;
            if status["state"] == "TASK_STATE_FAILED" {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("withdrawn once the test's clock passed the timeout");
    let why = failed["message"]["parts"][0]["text"].as_str().unwrap_or("");
    assert!(why.contains("15 min"), "says the timeout: {failed}");
}
