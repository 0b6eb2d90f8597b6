//! Durable skills (`#[skill(durable)]`) across `kill -9`: a ledger whose handler charges (a
//! step), runs a slow step, sleeps durably, then asks for a confirmation, served by processes
//! of this test binary on SQLite (a restart) and Postgres (another replica takes over). Each
//! step's body writes a line to a file the test reads: what ran, and how many times.

use crate::support;

use std::time::{Duration, Instant};

use a2a_card::server::store::Tasks;
use a2a_card::server::{Server, Webhooks};
use a2a_card::{Schema, SkillContext, SkillError, agent, skill};
use serde::Deserialize;
use serde_json::{Value, json};
use support::client::{rpc, rpc_stream, rpc_to};
use support::replica::Replica;
use support::sse::Frames;

/// Set in a ledger process: where its tasks are.
const TASKS: &str = "A2A_DURABLE_TASKS";
/// Set in a ledger process: `2` serves the ledger whose skill is durable version 2.
const VERSION: &str = "A2A_DURABLE_VERSION";
/// Set in a ledger process: the name the charge step has (a handler that does not replay).
const STEP: &str = "A2A_DURABLE_STEP";
/// Set in a ledger process: its input timeout, in milliseconds.
const TIMEOUT: &str = "A2A_DURABLE_TIMEOUT_MS";
/// Set in a ledger process: the ledger is served by a host, at `/ledger`, beside another
/// agent at `/vault`.
const HOST: &str = "A2A_DURABLE_HOST";
/// Set in a ledger process: its lease, in milliseconds (600 otherwise).
const LEASE: &str = "A2A_DURABLE_LEASE_MS";

/// What to settle, and how slowly.
#[derive(Deserialize, schemars::JsonSchema, Schema)]
#[schema(name = "settlement")]
struct Settlement {
    /// Where each step notes that it ran.
    file: String,
    /// How long the slow step takes, in milliseconds.
    slow_ms: u64,
    /// How long the durable sleep is, in milliseconds.
    sleep_ms: u64,
    /// How long the step after the answer takes, in milliseconds.
    #[serde(default)]
    after_ms: u64,
}

fn note(file: &str, line: &str) {
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
    {
        let _ = writeln!(f, "{line}");
    }
}

async fn settle(s: Settlement, ctx: SkillContext) -> Result<String, SkillError> {
    settle_as(s, ctx, false).await
}

/// The settlement; with `faster`, as a deployment changed it: a marker before the slow step
/// and a new step behind it for the tasks begun on that code (the book's `tax` shape).
async fn settle_as(s: Settlement, ctx: SkillContext, faster: bool) -> Result<String, SkillError> {
    let file = s.file.clone();
    // Not a step: each run notes its fencing token as it begins.
    let token = ctx.fencing_token().unwrap_or_default();
    note(&file, &format!("run {token}"));
    let name = std::env::var(STEP).unwrap_or_else(|_| "charge".to_owned());
    let charged: u32 = ctx
        .step(&name, async {
            note(&file, "charge");
            42
        })
        .await?;
    let slow = if faster && ctx.patched("faster") {
        "slow-v2"
    } else {
        "slow"
    };
    ctx.step(slow, async {
        note(&file, &format!("{slow}-start"));
        tokio::time::sleep(Duration::from_millis(s.slow_ms)).await;
        note(&file, &format!("{slow}-end"));
        // What another system would get from the step: its side effect, with the run's token.
        note(&file, &format!("effect {token}"));
    })
    .await?;
    // Not a step: runs again on a replay.
    note(&file, "sleeping");
    ctx.sleep(Duration::from_millis(s.sleep_ms)).await?;
    note(&file, "woke");
    let answer = ctx.ask("Confirm the payment?").await?;
    note(&file, "answered");
    ctx.step("receipt", async {
        note(&file, "receipt-start");
        tokio::time::sleep(Duration::from_millis(s.after_ms)).await;
        note(&file, "receipt-end");
    })
    .await?;
    Ok(format!("{charged}: {}", answer.text()))
}

/// Settles payments.
struct Ledger;
/// Settles payments, durably.
#[agent(url = "http://127.0.0.1:1", push_notifications, streaming)]
impl Ledger {
    /// Charges, waits, and asks for a confirmation.
    #[skill(durable, id = "settle")]
    async fn settle(&self, s: Settlement, ctx: SkillContext) -> Result<String, SkillError> {
        settle(s, ctx).await
    }
}

/// The ledger after a deployment that changed its handler.
struct LedgerV2;
/// Settles payments, durably.
#[agent(url = "http://127.0.0.1:1", push_notifications)]
impl LedgerV2 {
    /// Charges, waits, and asks for a confirmation.
    #[skill(durable = "2", id = "settle")]
    async fn settle(&self, s: Settlement, ctx: SkillContext) -> Result<String, SkillError> {
        settle(s, ctx).await
    }
}

/// The ledger after a deployment of a new version of the agent, whose handler notes what a
/// marker says before it settles as before.
struct LedgerNext;
/// Settles payments, durably.
#[agent(url = "http://127.0.0.1:1", push_notifications, version = "2.0.0")]
impl LedgerNext {
    /// Charges, waits, and asks for a confirmation.
    #[skill(durable, id = "settle")]
    async fn settle(&self, s: Settlement, ctx: SkillContext) -> Result<String, SkillError> {
        let line = if ctx.patched("receipt-v2") {
            "patched"
        } else {
            "unpatched"
        };
        note(&s.file, line);
        settle(s, ctx).await
    }
}

/// The ledger after a deployment that put a marker before its slow step.
struct LedgerFaster;
/// Settles payments, durably.
#[agent(url = "http://127.0.0.1:1", push_notifications)]
impl LedgerFaster {
    /// Charges, waits, and asks for a confirmation.
    #[skill(durable, id = "settle")]
    async fn settle(&self, s: Settlement, ctx: SkillContext) -> Result<String, SkillError> {
        settle_as(s, ctx, true).await
    }
}

/// Not a test of its own: the body of the ledger processes the tests below start.
#[tokio::test]
async fn durable_process() {
    let Ok(url) = std::env::var(TASKS) else {
        return;
    };
    let lease = std::env::var(LEASE)
        .ok()
        .and_then(|ms| ms.parse().ok())
        .unwrap_or(600);
    let tasks = Tasks::from_url(&url)
        .expect("a store URL")
        .lease(Duration::from_millis(lease));
    let timeout = std::env::var(TIMEOUT)
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(Duration::from_secs(3600), Duration::from_millis);
    let webhooks = Webhooks::default().allow_loopback(true);
    if std::env::var_os(HOST).is_some() {
        // The ledger beside another agent, on one listener and one store.
        let listening = a2a_card::server::Host::new()
            .agent("/vault", Server::new(LedgerV2).input_timeout(timeout))
            .agent("/ledger", Server::new(Ledger).input_timeout(timeout))
            .tasks(tasks)
            .bind("127.0.0.1:0")
            .await
            .expect("the host serves");
        println!("LISTENING http://{}", listening.local_addr());
        let _ = listening.serve().await;
        return;
    }
    /// The ledger `agent` on `tasks`, bound to a free port.
    async fn bound<A: a2a_card::Agent>(
        agent: A,
        webhooks: Webhooks,
        tasks: Tasks,
        timeout: Duration,
    ) -> Result<a2a_card::server::Listening, a2a_card::server::ServerError> {
        Server::new(agent)
            .webhooks(webhooks)
            .tasks(tasks)
            .input_timeout(timeout)
            .bind("127.0.0.1:0")
            .await
    }
    let listening = match std::env::var(VERSION).as_deref() {
        Ok("next") => bound(LedgerNext, webhooks, tasks, timeout).await,
        Ok("faster") => bound(LedgerFaster, webhooks, tasks, timeout).await,
        Ok("2") => bound(LedgerV2, webhooks, tasks, timeout).await,
        _ => bound(Ledger, webhooks, tasks, timeout).await,
    };
    let listening = listening.expect("the ledger serves");
    // Exported where the test's receiver says (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    let _telemetry = a2a_card::otel::init().expect("telemetry");
    println!("LISTENING http://{}", listening.local_addr());
    let _ = listening.serve().await;
}

fn ledger(tasks: &str, env: &[(&str, &str)]) -> Replica {
    let mut all = vec![(TASKS, tasks.to_owned())];
    all.extend(env.iter().map(|(k, v)| (*k, (*v).to_owned())));
    Replica::spawn(concat!(module_path!(), "::durable_process"), &all)
}

/// A fresh SQLite store and notes file for a test: the store's URL, the file's path.
fn fresh(name: &str) -> (String, String) {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("durable");
    std::fs::create_dir_all(&dir).expect("a directory");
    let db = dir.join(format!("{name}-{}.db", std::process::id()));
    let notes = dir.join(format!("{name}-{}.log", std::process::id()));
    for path in [&db, &notes] {
        let _ = std::fs::remove_file(path);
    }
    (
        format!("sqlite://{}", db.display()),
        notes.display().to_string(),
    )
}

/// Starts a settlement on `base`: its task id.
async fn start(base: &str, notes: &str, slow_ms: u64, sleep_ms: u64) -> String {
    start_with(base, notes, slow_ms, sleep_ms, 0).await
}

/// Starts a settlement whose step after the answer takes `after_ms`: its task id.
async fn start_with(base: &str, notes: &str, slow_ms: u64, sleep_ms: u64, after_ms: u64) -> String {
    let answer = rpc(
        base,
        "SendMessage",
        json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
               "parts": [{"data": {"file": notes, "slow_ms": slow_ms, "sleep_ms": sleep_ms,
                                   "after_ms": after_ms},
                          "mediaType": "application/json;schema=settlement"}]},
               "configuration": {"returnImmediately": true}}),
    )
    .await;
    answer["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {answer}"))
        .to_owned()
}

/// Waits (10 s at most) until task `id`'s journal in the store at `url` (a SQLite file or
/// Postgres) holds `n` entries (the first is what the task runs).
async fn journaled(url: &str, id: &str, n: i64) {
    use sqlx::Connection as _;
    const COUNT: &str = "SELECT COUNT(*) FROM a2a_card_journal WHERE task_id = $1";
    enum Db {
        Postgres(sqlx::PgConnection),
        Sqlite(sqlx::SqliteConnection),
    }
    let mut db = if url.starts_with("postgres") {
        Db::Postgres(
            sqlx::PgConnection::connect(url)
                .await
                .expect("the database"),
        )
    } else {
        Db::Sqlite(
            sqlx::SqliteConnection::connect(url)
                .await
                .expect("the file"),
        )
    };
    for _ in 0..1000 {
        let count: i64 = match &mut db {
            Db::Postgres(db) => sqlx::query_scalar(COUNT).bind(id).fetch_one(db).await,
            Db::Sqlite(db) => sqlx::query_scalar(COUNT).bind(id).fetch_one(db).await,
        }
        .expect("the journal");
        if count >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id}'s journal never held {n} entries");
}

/// The lines of the notes file.
fn lines(notes: &str) -> Vec<String> {
    std::fs::read_to_string(notes)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn count(notes: &str, line: &str) -> usize {
    lines(notes).iter().filter(|l| *l == line).count()
}

/// Waits (20 s at most) until the notes hold `line` `n` times.
async fn noted(notes: &str, line: &str, n: usize) {
    for _ in 0..400 {
        if count(notes, line) >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("`{line}` was not noted {n} times: {:?}", lines(notes));
}

async fn get(base: &str, id: &str) -> Value {
    rpc(base, "GetTask", json!({"id": id})).await["result"].clone()
}

/// Waits (20 s at most) until task `id` is in `state` on `base`.
async fn in_state(base: &str, id: &str, state: &str) -> Value {
    let mut task = Value::Null;
    for _ in 0..200 {
        task = get(base, id).await;
        if task["status"]["state"] == state {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("task {id} did not reach {state}: {task}");
}

async fn confirm(base: &str, id: &str) -> Value {
    rpc(
        base,
        "SendMessage",
        json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
               "parts": [{"text": "yes"}], "taskId": id}}),
    )
    .await
}

/// A settlement started on a ledger of `url`, asking for its confirmation, and that ledger
/// killed (its question written, within milliseconds, before): the task's id, and the task as
/// it asked.
async fn asked_then_killed(url: &str, notes: &str, env: &[(&str, &str)]) -> (String, Value) {
    let mut first = ledger(url, env);
    let id = start(&first.base, notes, 0, 0).await;
    let asked = in_state(&first.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    first.kill();
    (id, asked)
}

fn text_of(task: &Value) -> String {
    task.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_cut_off_runs_again_and_a_step_done_does_not() {
    let (url, notes) = fresh("mid-step");
    let mut first = ledger(&url, &[]);
    let id = start(&first.base, &notes, 4_000, 0).await;
    noted(&notes, "slow-start", 1).await;
    // The charge's result is written (the store's next round, milliseconds after it).
    journaled(&url, &id, 2).await;
    first.kill();
    let next = ledger(&url, &[]);
    // Taken up again once the killed process's lease ran out: the charge, done, is not run
    // again; the slow step, cut off, is.
    in_state(&next.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    assert_eq!(count(&notes, "charge"), 1, "{:?}", lines(&notes));
    assert_eq!(count(&notes, "slow-start"), 2, "{:?}", lines(&notes));
    assert_eq!(count(&notes, "slow-end"), 1, "{:?}", lines(&notes));
    let done = confirm(&next.base, &id).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert!(text_of(&done).contains("42: yes"), "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_marker_put_before_the_step_the_old_code_was_killed_in_keeps_the_old_path() {
    let (url, notes) = fresh("marker-mid-step");
    let mut first = ledger(&url, &[]);
    let id = start(&first.base, &notes, 4_000, 0).await;
    // Killed inside the slow step: its start journaled, its result not.
    noted(&notes, "slow-start", 1).await;
    first.kill();
    // The new code meets its marker before that step: the old work was there, so the marker
    // says `false` and the old step runs again under its own name (its body may have run:
    // the same idempotency key), not the new step beside it.
    let next = ledger(&url, &[(VERSION, "faster")]);
    in_state(&next.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    assert_eq!(count(&notes, "charge"), 1, "{:?}", lines(&notes));
    assert_eq!(count(&notes, "slow-start"), 2, "{:?}", lines(&notes));
    assert_eq!(count(&notes, "slow-v2-start"), 0, "{:?}", lines(&notes));
    let done = confirm(&next.base, &id).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    // A task begun on the new code takes the new step.
    let begun = start(&next.base, &notes, 0, 0).await;
    in_state(&next.base, &begun, "TASK_STATE_INPUT_REQUIRED").await;
    assert_eq!(count(&notes, "slow-v2-start"), 1, "{:?}", lines(&notes));
    assert_eq!(count(&notes, "slow-start"), 2, "{:?}", lines(&notes));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_waits_across_a_restart_and_its_answer_completes_the_task() {
    let (url, notes) = fresh("waiting");
    let (id, asked) = asked_then_killed(&url, &notes, &[]).await;
    let next = ledger(&url, &[]);
    // Still waiting, for the same question (not asked again), once the handler replayed.
    noted(&notes, "woke", 2).await;
    let waiting = in_state(&next.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    assert_eq!(
        waiting["status"], asked["status"],
        "the question is not asked again"
    );
    let done = confirm(&next.base, &id).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert!(text_of(&done).contains("42: yes"), "{done}");
    assert_eq!(count(&notes, "charge"), 1, "{:?}", lines(&notes));
    assert_eq!(count(&notes, "slow-end"), 1, "{:?}", lines(&notes));
    assert_eq!(count(&notes, "answered"), 1, "{:?}", lines(&notes));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_given_before_a_crash_is_replayed_not_asked_again() {
    let (url, notes) = fresh("answered");
    let mut first = ledger(&url, &[]);
    let id = start_with(&first.base, &notes, 0, 0, 4_000).await;
    in_state(&first.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    let answer = rpc(
        &first.base,
        "SendMessage",
        json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
               "parts": [{"text": "yes"}], "taskId": id},
               "configuration": {"returnImmediately": true}}),
    )
    .await;
    assert!(answer["result"]["task"].is_object(), "{answer}");
    // Killed in the step after the answer.
    noted(&notes, "receipt-start", 1).await;
    first.kill();
    let next = ledger(&url, &[]);
    let done = in_state(&next.base, &id, "TASK_STATE_COMPLETED").await;
    assert!(text_of(&done).contains("42: yes"), "{done}");
    // The answer came from the journal: the question was not asked again.
    let asked = done["history"]
        .as_array()
        .expect("a history")
        .iter()
        .filter(|m| m.to_string().contains("Confirm the payment?"))
        .count();
    assert_eq!(asked, 1, "{done}");
    assert_eq!(count(&notes, "answered"), 2, "{:?}", lines(&notes));
    assert_eq!(count(&notes, "receipt-start"), 2, "{:?}", lines(&notes));
    assert_eq!(count(&notes, "receipt-end"), 1, "{:?}", lines(&notes));
    assert_eq!(count(&notes, "charge"), 1, "{:?}", lines(&notes));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_durable_sleep_wakes_at_its_recorded_deadline() {
    let (url, notes) = fresh("sleep");
    let mut first = ledger(&url, &[]);
    let id = start(&first.base, &notes, 0, 4_000).await;
    noted(&notes, "sleeping", 1).await;
    let asleep = Instant::now();
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    first.kill();
    let next = ledger(&url, &[]);
    in_state(&next.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    let slept = asleep.elapsed();
    // Woken at the deadline recorded before the crash (4 s after it began), not 4 s after the
    // replay began (which comes a second and a lease later).
    assert!(slept >= Duration::from_millis(3_900), "{slept:?}");
    assert!(slept < Duration::from_millis(5_400), "{slept:?}");
    assert_eq!(count(&notes, "woke"), 1, "{:?}", lines(&notes));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_that_does_not_replay_fails_its_task_saying_where() {
    let (url, notes) = fresh("diverged");
    let (id, _) = asked_then_killed(&url, &notes, &[]).await;
    // The restarted handler names its first step otherwise.
    let next = ledger(&url, &[(STEP, "charge-card")]);
    let failed = in_state(&next.base, &id, "TASK_STATE_FAILED").await;
    let why = text_of(&failed["status"]);
    assert!(why.contains("did not replay"), "{why}");
    assert!(
        why.contains("step `charge`") && why.contains("step `charge-card`"),
        "{why}"
    );
    assert_eq!(count(&notes, "charge"), 1, "{:?}", lines(&notes));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_journaled_by_another_version_fails_clearly() {
    let (url, notes) = fresh("version");
    let (id, _) = asked_then_killed(&url, &notes, &[]).await;
    let next = ledger(&url, &[(VERSION, "2")]);
    let failed = in_state(&next.base, &id, "TASK_STATE_FAILED").await;
    let why = text_of(&failed["status"]);
    assert!(
        why.contains("journaled by a version that named none"),
        "{why}"
    );
    assert!(why.contains("`2`"), "{why}");
    assert_eq!(
        count(&notes, "woke"),
        1,
        "not replayed: {:?}",
        lines(&notes)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_replica_takes_over_and_the_answer_reaches_it() {
    let url = match support::postgres::database("durable").await {
        Ok(url) => url,
        Err(why) => {
            assert!(
                std::env::var_os("A2A_REQUIRE_POSTGRES").is_none(),
                "Postgres is required (A2A_REQUIRE_POSTGRES) but: {why}"
            );
            eprintln!("SKIPPED: {why}");
            return;
        }
    };
    let (_, notes) = fresh("replicas");
    let (mut a, b) = (ledger(&url, &[]), ledger(&url, &[]));
    let id = start(&a.base, &notes, 0, 0).await;
    in_state(&a.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    a.kill();
    // B takes it over within the lease (and a few seconds), and waits on for the answer.
    let taken = Instant::now();
    noted(&notes, "woke", 2).await;
    assert!(
        taken.elapsed() < Duration::from_secs(6),
        "{:?}",
        taken.elapsed()
    );
    let done = confirm(&b.base, &id).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert_eq!(count(&notes, "charge"), 1, "{:?}", lines(&notes));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_task_continues_its_trace_with_a_resumed_event() {
    let (url, notes) = fresh("trace");
    let (otlp, received) = support::otlp::receiver().await;
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.as_str()),
        ("OTEL_BSP_SCHEDULE_DELAY", "50"),
    ];
    let mut first = ledger(&url, &env);
    // The caller's trace.
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let started: Value = reqwest::Client::new()
        .post(format!("{}/", first.base))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .header("traceparent", format!("00-{trace_id}-00f067aa0ba902b7-01"))
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
                "message": {"messageId": "m-trace", "role": "ROLE_USER",
                    "parts": [{"data": {"file": notes, "slow_ms": 0, "sleep_ms": 0},
                               "mediaType": "application/json;schema=settlement"}]}}})
            .to_string(),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = started["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_owned();
    tokio::time::sleep(Duration::from_millis(100)).await;
    first.kill();
    let next = ledger(&url, &env);
    noted(&notes, "woke", 2).await;
    let done = confirm(&next.base, &id).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    // The task's span on the process that took it over, exported when the task ended: in the
    // caller's trace, with a `resumed` event.
    let mut resumed = None;
    for _ in 0..100 {
        resumed = received
            .lock()
            .unwrap()
            .spans
            .iter()
            .find(|s| {
                s.name == "a2a.task"
                    && support::otlp::attribute(s, "a2a.task.id").as_deref() == Some(id.as_str())
                    && s.events.iter().any(|e| e.name == "resumed")
            })
            .cloned();
        if resumed.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let resumed = resumed.expect("the resumed task's span, with a `resumed` event");
    let hex: String = resumed
        .trace_id
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(hex, trace_id, "the resumed task is in the caller's trace");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_left_unanswered_times_out_at_its_first_deadline_after_a_restart() {
    let (url, notes) = fresh("timeout");
    let env = [(TIMEOUT, "4000")];
    let mut first = ledger(&url, &env);
    let id = start(&first.base, &notes, 0, 0).await;
    in_state(&first.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    let asked = Instant::now();
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    first.kill();
    let next = ledger(&url, &env);
    let failed = in_state(&next.base, &id, "TASK_STATE_FAILED").await;
    let waited = asked.elapsed();
    assert!(
        text_of(&failed).contains("no answer came within 4 s"),
        "{failed}"
    );
    // Withdrawn 4 s after it was asked, not 4 s after the restart.
    assert!(waited >= Duration::from_millis(3_800), "{waited:?}");
    assert!(waited < Duration::from_millis(5_400), "{waited:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_notifications_continue_after_the_task_is_taken_up_again() {
    let (url, notes) = fresh("push");
    // A webhook that keeps the states it is told.
    let states = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let kept = std::sync::Arc::clone(&states);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: axum::body::Bytes| {
            let kept = std::sync::Arc::clone(&kept);
            async move {
                let event: Value = serde_json::from_slice(&body).unwrap_or_default();
                if let Some(state) = event["statusUpdate"]["status"]["state"].as_str() {
                    kept.lock().unwrap().push(state.to_owned());
                }
                ""
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let mut first = ledger(&url, &[]);
    let started = rpc(
        &first.base,
        "SendMessage",
        json!({"message": {"messageId": "m-push", "role": "ROLE_USER",
               "parts": [{"data": {"file": notes, "slow_ms": 0, "sleep_ms": 0},
                          "mediaType": "application/json;schema=settlement"}]},
               "configuration": {"returnImmediately": true,
                                 "taskPushNotificationConfig": {"url": hook}}}),
    )
    .await;
    let id = started["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_owned();
    in_state(&first.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    first.kill();
    let next = ledger(&url, &[]);
    noted(&notes, "woke", 2).await;
    let done = confirm(&next.base, &id).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    for _ in 0..100 {
        if states
            .lock()
            .unwrap()
            .iter()
            .any(|s| s == "TASK_STATE_COMPLETED")
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "the webhook was not told of the completion: {:?}",
        states.lock().unwrap()
    );
}

/// An answer sent while the task's process is gone and its lease not yet run out: kept, and
/// handed to the handler once the task is taken over.
async fn answered_before_the_takeover(url: &str, replicas: bool) {
    let (_, notes) = fresh(if replicas { "early-pg" } else { "early" });
    let env = [(LEASE, "3000")];
    let mut first = ledger(url, &env);
    let second = replicas.then(|| ledger(url, &env));
    let id = start(&first.base, &notes, 0, 0).await;
    in_state(&first.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    first.kill();
    let next = match second {
        Some(second) => second,
        None => ledger(url, &env),
    };
    let answered = Instant::now();
    let done = confirm(&next.base, &id).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert!(text_of(&done).contains("42: yes"), "{done}");
    // Within the lease (the old one's, which the answer came inside of) and a margin.
    assert!(
        answered.elapsed() < Duration::from_secs(6),
        "{:?}",
        answered.elapsed()
    );
    assert_eq!(count(&notes, "answered"), 1, "{:?}", lines(&notes));
    assert_eq!(count(&notes, "charge"), 1, "{:?}", lines(&notes));
    drop(next);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_sent_right_after_a_restart_waits_for_the_takeover() {
    let (url, _) = fresh("early");
    answered_before_the_takeover(&url, false).await;
}

/// An answer kept for the takeover begins its caller's turn at once (here, asked to return
/// at once: the task as it is, still asking); a second answer to the same question meanwhile is
/// refused at once, and the task goes on with the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_answer_to_a_question_kept_for_the_takeover_is_refused_at_once() {
    let (url, notes) = fresh("twice");
    let env = [(LEASE, "3000")];
    let (id, _) = asked_then_killed(&url, &notes, &env).await;
    let next = ledger(&url, &env);
    let kept = rpc(
        &next.base,
        "SendMessage",
        json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
               "parts": [{"text": "yes"}], "taskId": id},
               "configuration": {"returnImmediately": true}}),
    )
    .await;
    assert_eq!(
        kept["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{kept}"
    );
    let sent = Instant::now();
    let second = rpc(
        &next.base,
        "SendMessage",
        json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
               "parts": [{"text": "no"}], "taskId": id}}),
    )
    .await;
    assert_eq!(second["error"]["code"], -32600, "{second}");
    assert!(
        second["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("already has an answer")),
        "{second}"
    );
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "{:?}",
        sent.elapsed()
    );
    let done = in_state(&next.base, &id, "TASK_STATE_COMPLETED").await;
    assert!(text_of(&done).contains("42: yes"), "{done}");
    assert!(!text_of(&done).contains("42: no"), "{done}");
    assert_eq!(count(&notes, "answered"), 1, "{:?}", lines(&notes));
    drop(next);
}

/// An answer streamed before the takeover: the stream begins once the handler takes it, with
/// the task working again (not still asking, which would read as the question asked again),
/// and follows it to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_streamed_before_the_takeover_streams_the_task_once_the_handler_takes_it() {
    let (url, notes) = fresh("streamed");
    let env = [(LEASE, "3000")];
    let (id, _) = asked_then_killed(&url, &notes, &env).await;
    let next = ledger(&url, &env);
    let params = json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
                                    "parts": [{"text": "yes"}], "taskId": id}});
    let events = rpc_stream(&next.base, Some("1.0"), "SendStreamingMessage", params).await;
    let text = Value::Array(events.clone()).to_string();
    let first = &events
        .first()
        .unwrap_or_else(|| panic!("no events: {text}"))["result"];
    assert_eq!(first["task"]["id"], id.as_str(), "{text}");
    assert_ne!(
        first["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{text}"
    );
    let last = &events[events.len() - 1]["result"];
    assert_eq!(
        last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{text}"
    );
    assert!(text.contains("42: yes"), "{text}");
    assert_eq!(count(&notes, "answered"), 1, "{:?}", lines(&notes));
    drop(next);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_sent_to_another_replica_before_it_takes_over_reaches_the_handler() {
    let Some(url) = support::postgres::database_or_skip("durable_early").await else {
        return;
    };
    answered_before_the_takeover(&url, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosts_durable_task_is_taken_up_again_by_its_own_agent() {
    let (url, notes) = fresh("host");
    let env = [(HOST, "1")];
    let mut first = ledger(&url, &env);
    let ledger_url = format!("{}/ledger", first.base);
    let id = start_at(&ledger_url, &notes).await;
    in_state_at(&ledger_url, &id, "TASK_STATE_INPUT_REQUIRED").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    first.kill();
    let next = ledger(&url, &env);
    let (ledger_url, vault_url) = (
        format!("{}/ledger", next.base),
        format!("{}/vault", next.base),
    );
    // Run again by the ledger (the vault, another version of it, would refuse the journal).
    noted(&notes, "woke", 2).await;
    let done = rpc_to(
        &ledger_url,
        "SendMessage",
        json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
               "parts": [{"text": "yes"}], "taskId": id}}),
    )
    .await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    let elsewhere = rpc_to(&vault_url, "GetTask", json!({"id": id})).await;
    assert_eq!(elsewhere["error"]["code"], -32001, "{elsewhere}");
}

async fn start_at(url: &str, notes: &str) -> String {
    let answer = rpc_to(
        url,
        "SendMessage",
        json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
               "parts": [{"data": {"file": notes, "slow_ms": 0, "sleep_ms": 0},
                          "mediaType": "application/json;schema=settlement"}]},
               "configuration": {"returnImmediately": true}}),
    )
    .await;
    answer["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {answer}"))
        .to_owned()
}

async fn in_state_at(url: &str, id: &str, state: &str) {
    for _ in 0..200 {
        let task = rpc_to(url, "GetTask", json!({"id": id})).await;
        if task["result"]["status"]["state"] == state {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("task {id} did not reach {state}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_to_a_task_that_was_working_is_refused_not_kept() {
    let (url, notes) = fresh("working");
    let env = [(LEASE, "3000")];
    let mut first = ledger(&url, &env);
    let id = start(&first.base, &notes, 4_000, 0).await;
    noted(&notes, "slow-start", 1).await;
    first.kill();
    let next = ledger(&url, &env);
    // Before the takeover: the task was working, not asking.
    let refused = confirm(&next.base, &id).await;
    let why = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(why.contains("is working and has not asked"), "{refused}");
    // Taken over, it asks, and the answer then completes it.
    in_state(&next.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    let done = confirm(&next.base, &id).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert_eq!(count(&notes, "answered"), 1, "{:?}", lines(&notes));
}

/// A settlement waiting for its confirmation when its ledger gets SIGTERM: the ledger exits
/// cleanly and at once, the task is not failed, and the next ledger on the store (started
/// after it on a SQLite file; already running beside it on Postgres) takes it over at once,
/// well within the lease (10 s, the default) a killed ledger would hold it for; answered,
/// it completes. How long the takeover took, from SIGTERM.
async fn taken_over_after_sigterm(url: &str, replicas: bool) -> Duration {
    let (_, notes) = fresh(if replicas { "sigterm-pg" } else { "sigterm" });
    let env = [(LEASE, "10000")];
    let mut first = ledger(url, &env);
    let second = replicas.then(|| ledger(url, &env));
    let id = start(&first.base, &notes, 0, 0).await;
    in_state(&first.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    // A subscriber, which the shutdown cuts off cleanly after what it read.
    let mut frames = Frames::open(&first.base, "JSONRPC", &id, None).await;
    let (last, _) = frames.next().await.expect("the task, first");
    let last = last.expect("a numbered event");
    let sent = Instant::now();
    first.terminate();
    assert!(frames.next().await.is_none(), "the stream ended");
    let (status, _) = first
        .exited_within(Duration::from_secs(5))
        .await
        .expect("the ledger exited at SIGTERM");
    assert!(status.success(), "the ledger exited cleanly: {status:?}");
    let exited = sent.elapsed();
    let next = match second {
        Some(second) => second,
        None => ledger(url, &env),
    };
    // Run again from its journal: its handler wakes a second time.
    noted(&notes, "woke", 2).await;
    let took = sent.elapsed();
    println!("exited {exited:?} after SIGTERM; the task was taken over {took:?} after it");
    assert!(
        took < Duration::from_secs(3),
        "taken over {took:?} after SIGTERM"
    );
    let waiting = in_state(&next.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    assert!(
        text_of(&waiting).contains("Confirm the payment?"),
        "{waiting}"
    );
    // The subscriber resumes on the next process from the last event it read: what follows,
    // numbered on, nothing twice.
    let mut resumed = Frames::open(&next.base, "JSONRPC", &id, Some(last)).await;
    let done = confirm(&next.base, &id).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert!(text_of(&done).contains("42: yes"), "{done}");
    let mut seen = last;
    let mut states = Vec::new();
    while let Some((n, event)) = resumed.next().await {
        let n = n.expect("a numbered event");
        assert_eq!(n, seen + 1, "event {n} follows {seen}: {event}");
        seen = n;
        if let Some(state) = event.pointer("/result/statusUpdate/status/state") {
            states.push(state.as_str().unwrap_or_default().to_owned());
        }
    }
    assert_eq!(
        states.last().map(String::as_str),
        Some("TASK_STATE_COMPLETED"),
        "{states:?}"
    );
    assert_eq!(count(&notes, "charge"), 1, "{:?}", lines(&notes));
    took
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_waiting_at_sigterm_is_taken_over_by_the_next_process_at_once() {
    let (url, _) = fresh("sigterm");
    taken_over_after_sigterm(&url, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_waiting_at_sigterm_is_taken_over_by_another_replica_at_once() {
    let Some(url) = support::postgres::database_or_skip("durable_sigterm").await else {
        return;
    };
    taken_over_after_sigterm(&url, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_version_of_the_agent_runs_on_the_tasks_an_older_one_began() {
    let (url, notes) = fresh("next");
    let (id, _) = asked_then_killed(&url, &notes, &[]).await;
    // Another card version, the skill's durable version left out: the task is run again,
    // and the marker its handler meets in the replay says the task is not the new code's.
    let next = ledger(&url, &[(VERSION, "next")]);
    noted(&notes, "unpatched", 1).await;
    in_state(&next.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    let done = confirm(&next.base, &id).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert!(text_of(&done).contains("42: yes"), "{done}");
    assert_eq!(count(&notes, "charge"), 1, "{:?}", lines(&notes));
    // A task begun on the new code: the marker says so.
    let begun = start(&next.base, &notes, 0, 0).await;
    in_state(&next.base, &begun, "TASK_STATE_INPUT_REQUIRED").await;
    assert_eq!(count(&notes, "patched"), 1, "{:?}", lines(&notes));
    assert_eq!(count(&notes, "unpatched"), 1, "{:?}", lines(&notes));
    let done = confirm(&next.base, &begun).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
}

/// The numbers the notes hold after `prefix` (`run N`, `effect N`), in order.
fn tokens(notes: &str, prefix: &str) -> Vec<u64> {
    lines(notes)
        .iter()
        .filter_map(|l| l.strip_prefix(prefix)?.parse().ok())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_run_of_a_durable_task_has_a_larger_fencing_token() {
    let (url, notes) = fresh("fenced");
    // Its first run, killed (kill -9) while it asks; the next process takes it over once the
    // lease ran out, and is stopped (SIGTERM): the one after takes it over at once.
    let (id, _) = asked_then_killed(&url, &notes, &[]).await;
    let mut next = ledger(&url, &[]);
    noted(&notes, "woke", 2).await;
    in_state(&next.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    next.terminate();
    next.exited_within(Duration::from_secs(10))
        .await
        .expect("the process exits");
    let last = ledger(&url, &[]);
    noted(&notes, "woke", 3).await;
    let done = confirm(&last.base, &id).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    let runs = tokens(&notes, "run ");
    assert_eq!(runs.len(), 3, "{:?}", lines(&notes));
    assert_eq!(runs[0], 1, "the first run's token");
    assert!(
        runs.windows(2).all(|w| w[0] < w[1]),
        "each run's token above the one before: {runs:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_paused_past_its_lease_is_fenced_off_by_the_one_that_took_over() {
    let Some(url) = support::postgres::database_or_skip("durable_paused").await else {
        return;
    };
    let (_, notes) = fresh("paused");
    let a = ledger(&url, &[]);
    let b = ledger(&url, &[]);
    // A runs a slow step (3 s); it is paused (SIGSTOP) in the middle of it, past its lease.
    let id = start(&a.base, &notes, 3_000, 0).await;
    noted(&notes, "slow-start", 1).await;
    // The charge's result written (the store's next round, milliseconds after it).
    journaled(&url, &id, 2).await;
    a.pause();
    // B takes the task over once A's lease ran out, and runs the step again, with its own
    // token; A wakes (SIGCONT) while it runs.
    noted(&notes, "slow-start", 2).await;
    a.resume();
    // A learns, as it wakes, that its lease ran out, and stops its run there, before its
    // step's end (2 s later). B's step ends, and the task asks on B.
    in_state(&b.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    let runs = tokens(&notes, "run ");
    let effects = tokens(&notes, "effect ");
    assert_eq!(runs.len(), 2, "{:?}", lines(&notes));
    assert!(
        runs[0] < runs[1],
        "the takeover's token is larger: {runs:?}"
    );
    // One side effect, made with B's token: A's run made none after it woke.
    assert_eq!(effects, vec![runs[1]], "{:?}", lines(&notes));
    // Both replicas read the store's task (A's own copy dropped), and the answer sent to
    // either completes it, once.
    in_state(&a.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    let done = confirm(&a.base, &id).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    in_state(&b.base, &id, "TASK_STATE_COMPLETED").await;
    assert_eq!(count(&notes, "charge"), 1, "{:?}", lines(&notes));
    assert_eq!(count(&notes, "receipt-start"), 1, "{:?}", lines(&notes));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_paused_past_its_lease_that_no_one_took_over_goes_on_without_running_again() {
    let Some(url) = support::postgres::database_or_skip("durable_paused_alone").await else {
        return;
    };
    let (_, notes) = fresh("paused-alone");
    let a = ledger(&url, &[]);
    // A runs a slow step (3 s) alone on the database; it is paused (SIGSTOP) in the middle
    // of it for three leases, and no other replica is there to take its task over.
    let id = start(&a.base, &notes, 3_000, 0).await;
    noted(&notes, "slow-start", 1).await;
    journaled(&url, &id, 2).await;
    a.pause();
    tokio::time::sleep(Duration::from_millis(1_800)).await;
    a.resume();
    // A renews as it wakes and finds the task still its own: the step goes on to its end,
    // not run again from the journal, and the task asks.
    in_state(&a.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    assert_eq!(count(&notes, "slow-start"), 1, "{:?}", lines(&notes));
    let runs = tokens(&notes, "run ");
    assert_eq!(runs.len(), 1, "one run: {:?}", lines(&notes));
    assert_eq!(tokens(&notes, "effect "), runs, "{:?}", lines(&notes));
    let done = confirm(&a.base, &id).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert_eq!(count(&notes, "charge"), 1, "{:?}", lines(&notes));
}

/// The concierge example's model loop (a scripted model) on Postgres: stopped at every point of
/// its journal, its task is taken over by another replica of the database, and ends as the run
/// nobody stopped did; each completion sent once and each booking made once but where the stop
/// fell inside it.
#[tokio::test]
async fn a_model_loop_on_postgres_is_taken_over_by_another_replica_at_every_point() {
    use a2a_card::client::Payload;
    use a2a_card::testing::{CrashPoints, ScriptedModel, ScriptedReply};
    use examples::concierge::agent::Concierge;
    use std::sync::{Arc, Mutex};

    let Some(url) = support::postgres::database_or_skip("model_loop").await else {
        return;
    };
    let model = ScriptedModel::new()
        .by_turn()
        .reply(ScriptedReply::tool_call(
            "find_hotels",
            json!({"city": "Porto"}),
        ))
        .reply(ScriptedReply::tool_call(
            "book_hotel",
            json!({"hotel": "Ribeira Inn"}),
        ))
        .text("Booked the Ribeira Inn.");
    let ledger = Arc::new(Mutex::new(Vec::new()));
    let (m, l) = (model.clone(), Arc::clone(&ledger));
    let report = CrashPoints::new(
        move || {
            let mut concierge = Concierge::new(m.clone());
            concierge.bookings = Arc::clone(&l);
            Server::new(concierge)
        },
        "book-stay",
        Payload::text("A room in Porto"),
    )
    .on_postgres(url)
    .answer(Payload::text("yes"))
    .run()
    .await
    .expect("the loop nobody stopped ends");
    report.assert_survives();
    let points = report.points().len();
    assert_eq!(points, 12, "{report}");
    assert_eq!(model.request_count(), 3 * (1 + points) + 3, "{report}");
    assert_eq!(ledger.lock().unwrap().len(), 1 + points + 1, "{report}");
}

/// A task whose log holds its end while its row does not (the run that ended it had lost its
/// claim when it wrote the row: the log went in, the row was refused) is taken over once and
/// its row written as the log says: the task is done, and no run of it is left behind. Before,
/// each recovery took it over and ran its handler again, which replayed to the end it could not
/// record twice and left the row running (53 such tasks in an hour of the fault campaign, one
/// of them taken over hundreds of times).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_log_ended_before_its_row_is_ended_by_the_takeover_not_run_again() {
    use sqlx::Connection as _;
    let (url, notes) = fresh("log-ended");
    let mut first = ledger(&url, &[]);
    let id = start(&first.base, &notes, 0, 0).await;
    in_state(&first.base, &id, "TASK_STATE_INPUT_REQUIRED").await;
    let done = confirm(&first.base, &id).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    first.kill();

    // The row set back to where it was before the end, owned by a process that is gone, as
    // a run that lost its claim leaves it: its log holds every event, the end among them.
    let mut db = sqlx::SqliteConnection::connect(&url)
        .await
        .expect("the file");
    let (body, events): (String, i64) = sqlx::query_as(
        "SELECT body, (SELECT COUNT(*) FROM a2a_card_events WHERE task_id = $1)
         FROM a2a_card_tasks WHERE id = $1",
    )
    .bind(&id)
    .fetch_one(&mut db)
    .await
    .expect("the task's row");
    assert!(events >= 3, "the task logged its events: {events}");
    let mut running: Value = serde_json::from_str(&body).expect("a task");
    running["status"]["state"] = json!("TASK_STATE_WORKING");
    sqlx::query(
        "UPDATE a2a_card_tasks SET state = 'TASK_STATE_WORKING', ended_at = NULL,
         owner = 'a-replica-that-is-gone', seq = 1, body = $2 WHERE id = $1",
    )
    .bind(&id)
    .bind(running.to_string())
    .execute(&mut db)
    .await
    .expect("the row set back");
    let charged = count(&notes, "charge");

    let next = ledger(&url, &[]);
    // Taken over, and ended as its log says.
    let mut ended = None;
    for _ in 0..200 {
        ended = sqlx::query_scalar::<_, Option<i64>>(
            "SELECT ended_at FROM a2a_card_tasks WHERE id = $1",
        )
        .bind(&id)
        .fetch_one(&mut db)
        .await
        .expect("the task's row");
        if ended.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ended.is_some(), "the task's row was never ended");
    let task = get(&next.base, &id).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    assert!(text_of(&task).contains("42: yes"), "{task}");
    let (state, owner): (String, Option<String>) =
        sqlx::query_as("SELECT state, owner FROM a2a_card_tasks WHERE id = $1")
            .bind(&id)
            .fetch_one(&mut db)
            .await
            .expect("the task's row");
    assert_eq!(state, "TASK_STATE_COMPLETED");
    assert_eq!(owner, None, "no process holds the task");
    assert_eq!(count(&notes, "charge"), charged, "{:?}", lines(&notes));
}

/// Asks for a word and says the text back with it, durably; counts its runs.
struct Repeater {
    runs: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

/// Repeats, durably.
#[agent(url = "http://127.0.0.1:1")]
impl Repeater {
    /// Asks for a word, then says the text with it.
    #[skill(durable)]
    async fn repeat(&self, text: String, ctx: SkillContext) -> Result<String, SkillError> {
        self.runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let word = ctx.ask("Which word?").await?;
        Ok(format!("{text} {}", word.text()))
    }
}

/// A SQLite store that keeps the server's recovery, for the test to take a task up again
/// through it as the store's own recovery would (a claim given back and claimed anew).
struct KeptRecovery {
    sql: a2a_card::server::store::SqlTasks,
    recovery: std::sync::Arc<std::sync::Mutex<Option<a2a_card::server::store::Recovery>>>,
}

#[async_trait::async_trait]
impl a2a_card::server::store::Store for KeptRecovery {
    fn tasks(&self) -> std::sync::Arc<dyn a2a_server::TaskStore> {
        a2a_card::server::store::Store::tasks(&self.sql)
    }
    fn push_configs(&self) -> Option<std::sync::Arc<dyn a2a_server::PushConfigStore>> {
        a2a_card::server::store::Store::push_configs(&self.sql)
    }
    fn events(&self) -> Option<std::sync::Arc<dyn a2a_card::server::store::EventLog>> {
        a2a_card::server::store::Store::events(&self.sql)
    }
    async fn settle(&self, task_id: &str) -> Result<(), a2a::A2AError> {
        a2a_card::server::store::Store::settle(&self.sql, task_id).await
    }
    fn recover_into(&self, recovery: a2a_card::server::store::Recovery) {
        *self.recovery.lock().expect("not poisoned") = Some(recovery.clone());
        a2a_card::server::store::Store::recover_into(&self.sql, recovery);
    }
    async fn release(&self) -> Result<(), a2a::A2AError> {
        a2a_card::server::store::Store::release(&self.sql).await
    }
}

/// A task taken up again on the replica whose run of it still goes on (its claim given back
/// by a late hand-back, then claimed anew by the same replica: seen in the fault campaign)
/// goes on in the newer run, which takes the answer. The older run's end once dropped the
/// task from those followed here while the newer one ran it: the answer then waited for a
/// handler forever, on a row its live replica kept owning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_taken_up_again_where_it_runs_goes_on_in_the_newer_run_and_takes_the_answer() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    let (url, _) = fresh("again");
    let path = url.strip_prefix("sqlite://").expect("a SQLite URL");
    let sql = a2a_card::server::store::SqlTasks::sqlite(
        path,
        a2a_card::server::store::Retention::default(),
    )
    .await
    .expect("opened");
    let recovery = Arc::new(Mutex::new(None));
    let runs = Arc::new(AtomicUsize::new(0));
    let server = Server::new(Repeater {
        runs: Arc::clone(&runs),
    })
    .tasks(Tasks::custom(KeptRecovery {
        sql,
        recovery: Arc::clone(&recovery),
    }));
    let agent = a2a_card::testing::TestAgent::start(server)
        .await
        .expect("served");

    let asked = agent
        .json_rpc(
            "SendMessage",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER",
                "parts": [{"text": "hello"}]}}),
        )
        .await
        .expect("an answer");
    let task: a2a::Task = serde_json::from_value(asked["result"]["task"].clone())
        .unwrap_or_else(|e| panic!("a task ({e}): {asked}"));
    assert_eq!(task.status.state, a2a::TaskState::InputRequired, "{asked}");

    // Taken up again here while its first run waits for the answer.
    let kept = recovery.lock().expect("not poisoned").clone();
    kept.expect("the server handed the store its recovery")
        .resumed(a2a_card::server::store::Claimed::new(task.clone(), 2));
    let since = Instant::now();
    while runs.load(Ordering::SeqCst) < 2 {
        assert!(
            since.elapsed() < Duration::from_secs(10),
            "the task was not run again"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The first run, stopped by the second, has ended by now.
    tokio::time::sleep(Duration::from_millis(300)).await;

    let answer = json!({"message": {"messageId": "m2", "role": "ROLE_USER",
        "taskId": task.id, "parts": [{"text": "world"}]}});
    let _ = tokio::time::timeout(
        Duration::from_secs(10),
        agent.json_rpc("SendMessage", answer),
    )
    .await;
    let since = Instant::now();
    let done = loop {
        let read = agent
            .json_rpc("GetTask", json!({"id": task.id}))
            .await
            .expect("an answer");
        if read["result"]["status"]["state"] == "TASK_STATE_COMPLETED" {
            break read;
        }
        assert!(
            since.elapsed() < Duration::from_secs(10),
            "the answer did not reach the newer run: {read}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(done.to_string().contains("hello world"), "{done}");
    assert_eq!(runs.load(Ordering::SeqCst), 2, "run once more, not again");
}
