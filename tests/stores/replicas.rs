//! Several server processes on one database, and processes that die: real replicas of the trip
//! planner (this test binary, started again as a server), on a throwaway Postgres cluster or a
//! SQLite file.

use crate::support;
use crate::trip_planner::server;

use std::time::Duration;

use a2a::{
    CancelTaskRequest, Part, SendMessageConfiguration, StreamResponse, SubscribeToTaskRequest,
    Task, TaskState,
};
use a2a_card::server::store::{INTERRUPTED, Tasks};
use a2a_card::server::{FinishedLogs, Webhooks};
use futures::StreamExt;
use serde_json::{Value, json};
use support::client::{
    card, client, data_part, every_task, get, request, rpc, serve, status_text, task,
};
use support::replica::Replica;
use support::sse::Frames;

/// Set in a replica process: where its tasks are.
pub(crate) const TASKS: &str = "A2A_REPLICA_TASKS";
/// The replicas' lease, short so that a dead one is noticed quickly.
pub(crate) const LEASE_MS: &str = "600";

/// Set in a replica process that serves the [`Ticker`] instead of the trip planner.
const TICKER: &str = "A2A_REPLICA_TICKER";
/// Set: the replica keeps every task (`Retention::forever`), for a history checked against
/// all of them (a long campaign makes more tasks than the default retention keeps).
pub(crate) const KEEP_ALL: &str = "A2A_REPLICA_KEEP_ALL";
/// Set: the file the replica writes its log to (appended; info and above), as an operator's
/// would be kept: what a campaign's finding is looked for in.
pub(crate) const LOG: &str = "A2A_REPLICA_LOG";
/// Set in a replica process: its lease in milliseconds, instead of [`LEASE_MS`].
pub(crate) const LEASE: &str = "A2A_REPLICA_LEASE_MS";

/// Ticks into a file for as long as its handler runs: what a process does, seen from outside.
struct Ticker;

/// Ticks.
#[a2a_card::agent(url = "http://127.0.0.1:1")]
impl Ticker {
    /// Appends a line to the file the text names every 50 ms, until cancelled.
    #[a2a_card::skill]
    async fn tick(&self, file: String) -> String {
        loop {
            use std::io::Write;
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&file)
            {
                let _ = writeln!(f, "tick");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The test a replica process runs: [`replica_process`].
pub(crate) const PROCESS: &str = concat!(module_path!(), "::replica_process");

/// Not a test of its own: the body of the replica processes the tests below start (it serves
/// only when they set `A2A_REPLICA_TASKS`, and returns at once otherwise).
#[tokio::test]
async fn replica_process() {
    let Ok(url) = std::env::var(TASKS) else {
        return;
    };
    if let Some(path) = std::env::var_os(LOG)
        && let Ok(file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
    {
        let _ = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing_subscriber::filter::LevelFilter::INFO)
            .with_writer(std::sync::Mutex::new(file))
            .try_init();
    }
    let lease = std::env::var(LEASE).unwrap_or_else(|_| LEASE_MS.to_owned());
    let lease = Duration::from_millis(lease.parse().unwrap_or(600));
    let tasks = match Tasks::from_url(&url) {
        Ok(t) if std::env::var_os(KEEP_ALL).is_some() => t
            .lease(lease)
            .retention(a2a_card::server::store::Retention::forever()),
        Ok(t) => t.lease(lease),
        Err(e) => {
            eprintln!("replica: {e}");
            std::process::exit(2);
        }
    };
    let listening = if let Some(version) = crate::deploy::Version::served() {
        version.bind(tasks).await
    } else if std::env::var_os(TICKER).is_some() {
        a2a_card::server::Server::new(Ticker)
            .tasks(tasks)
            .bind("127.0.0.1:0")
            .await
    } else {
        server::server(Duration::from_millis(150), Webhooks::default())
            .tasks(tasks)
            .bind("127.0.0.1:0")
            .await
    };
    match listening {
        Ok(listening) => {
            println!("LISTENING http://{}", listening.local_addr());
            let _ = listening.serve().await;
        }
        Err(e) => {
            eprintln!("replica: {e}");
            std::process::exit(3);
        }
    }
}

/// A replica of the trip planner (`ticker`: of the [`Ticker`]) keeping its tasks in `tasks`.
fn replica(tasks: &str, ticker: bool) -> Replica {
    let mut env = vec![(TASKS, tasks.to_owned())];
    if ticker {
        env.push((TICKER, "1".to_owned()));
    }
    Replica::spawn(PROCESS, &env)
}

struct Replicas;

impl Replicas {
    fn start(tasks: &str) -> Replica {
        replica(tasks, false)
    }

    fn ticker(tasks: &str) -> Replica {
        replica(tasks, true)
    }
}

pub(crate) async fn postgres(name: &str) -> Option<String> {
    match support::postgres::database(name).await {
        Ok(url) => Some(url),
        Err(why) => {
            if std::env::var_os("A2A_REQUIRE_POSTGRES").is_some() {
                panic!("Postgres is required (A2A_REQUIRE_POSTGRES) but: {why}");
            }
            eprintln!("SKIPPED: {why}");
            None
        }
    }
}

/// A fresh SQLite file for a test, under the test's temporary folder (`name`, this process's
/// id): its path.
pub(crate) fn fresh_file(name: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("replicas");
    std::fs::create_dir_all(&dir).expect("a directory");
    let path = dir.join(format!("{name}-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// A client of an agent, over the binding it was made for.
pub(crate) type AgentClient = a2a_client::A2AClient<Box<dyn a2a_client::Transport>>;

/// Two replicas of the trip planner on the Postgres database `name`, and a client of each (of
/// A over JSON-RPC, of B over `b_binding`), with the database's URL; `None` where Postgres
/// cannot run here (and is not required).
async fn two_replicas(
    name: &str,
    b_binding: &str,
) -> Option<(String, Replica, Replica, AgentClient, AgentClient)> {
    let url = postgres(name).await?;
    let (a, b) = (Replicas::start(&url), Replicas::start(&url));
    let on_a = client(&card(&a.base).await, "JSONRPC").await;
    let on_b = client(&card(&b.base).await, b_binding).await;
    Some((url, a, b, on_a, on_b))
}

fn trip(days: u8, start: Option<&str>) -> Part {
    let mut data = json!({"destination": "Porto", "days": days});
    if let Some(start) = start {
        data["start_date"] = json!(start);
    }
    data_part("tripRequest", data)
}

pub(crate) fn parts(task: &Task) -> usize {
    task.artifacts.iter().flatten().map(|a| a.parts.len()).sum()
}

/// Sends a plan that runs on in the background; its task.
pub(crate) async fn start_plan(
    client: &a2a_client::A2AClient<Box<dyn a2a_client::Transport>>,
    days: u8,
) -> Task {
    let mut req = request(vec![trip(days, Some("2026-12-01"))], None);
    req.configuration = Some(SendMessageConfiguration {
        accepted_output_modes: None,
        task_push_notification_config: None,
        history_length: None,
        return_immediately: Some(true),
    });
    task(client.send_message(&req).await.expect("a task"))
}

#[tokio::test]
async fn a_task_on_one_replica_is_seen_followed_and_cancelled_on_another() {
    let Some((_url, _a, _b, on_a, on_b)) = two_replicas("replicas", "HTTP+JSON").await else {
        return;
    };

    // Seen on B: GetTask and ListTasks.
    let running = start_plan(&on_a, 3).await;
    let seen = on_b
        .get_task(&get(&running.id))
        .await
        .expect("B has A's task");
    assert_eq!(seen.context_id, running.context_id);
    let listed = on_b.list_tasks(&every_task()).await.expect("a list");
    assert!(listed.tasks.iter().any(|t| t.id == running.id));

    // Followed on B until it completes on A.
    let mut events = on_b
        .subscribe_to_task(&SubscribeToTaskRequest {
            id: running.id.clone(),
            tenant: None,
        })
        .await
        .expect("B follows A's task");
    // The task first, then its updates (A2A 1.0 section 3.1.6), applied here.
    let mut last = match events.next().await.map(|e| e.expect("an event")) {
        Some(StreamResponse::Task(t)) => t,
        other => panic!("the subscription begins with the task: {other:?}"),
    };
    while let Some(event) = events.next().await {
        match event.expect("an event") {
            StreamResponse::StatusUpdate(u) => last.status = u.status,
            StreamResponse::ArtifactUpdate(u) => {
                let artifacts = last.artifacts.get_or_insert_with(Vec::new);
                artifacts.retain(|a| a.artifact_id != u.artifact.artifact_id);
                artifacts.push(u.artifact);
            }
            other => panic!("only updates follow the task: {other:?}"),
        }
    }
    assert_eq!(last.status.state, TaskState::Completed);
    assert_eq!(parts(&last), 3, "the whole plan, as A made it");
}

#[tokio::test]
async fn a_cancel_on_one_replica_stops_the_handler_running_on_another() {
    let Some(url) = postgres("cancels").await else {
        return;
    };
    let (a, b) = (Replicas::ticker(&url), Replicas::ticker(&url));
    let on_a = client(&card(&a.base).await, "JSONRPC").await;
    let on_b = client(&card(&b.base).await, "JSONRPC").await;
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("replicas");
    std::fs::create_dir_all(&dir).expect("a directory");
    let ticks = dir.join(format!("ticks-{}", std::process::id()));
    let _ = std::fs::remove_file(&ticks);
    let mut req = request(vec![Part::text(ticks.to_string_lossy())], None);
    req.configuration = Some(SendMessageConfiguration {
        accepted_output_modes: None,
        task_push_notification_config: None,
        history_length: None,
        return_immediately: Some(true),
    });
    let running = task(on_a.send_message(&req).await.expect("a task"));
    let count = || {
        std::fs::read_to_string(&ticks)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(count() > 0, "the handler runs on A");
    // A watcher on A, subscribed before the cancel on B.
    let mut watching = on_a
        .subscribe_to_task(&SubscribeToTaskRequest {
            id: running.id.clone(),
            tenant: None,
        })
        .await
        .expect("A follows its task");
    let canceled = on_b
        .cancel_task(&CancelTaskRequest {
            id: running.id.clone(),
            metadata: None,
            tenant: None,
        })
        .await
        .expect("cancelled on B");
    assert_eq!(canceled.status.state, TaskState::Canceled);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let then = count();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        count(),
        then,
        "A's handler stopped ticking after the cancel on B"
    );
    let on_a_now = on_a.get_task(&get(&running.id)).await.expect("the task");
    assert_eq!(on_a_now.status.state, TaskState::Canceled);
    // The watcher's stream on A ends with the cancel made on B.
    let last = tokio::time::timeout(Duration::from_secs(5), async {
        let mut last = None;
        while let Some(event) = watching.next().await {
            if let StreamResponse::StatusUpdate(u) = event.expect("an event") {
                last = Some(u.status.state);
            }
        }
        last
    })
    .await
    .expect("the stream on A ends");
    assert_eq!(last, Some(TaskState::Canceled));
    // And A takes no new subscription to the finished task.
    assert!(
        on_a.subscribe_to_task(&SubscribeToTaskRequest {
            id: running.id.clone(),
            tenant: None,
        })
        .await
        .is_err(),
        "a finished task is not subscribed to"
    );
}

#[tokio::test]
async fn an_answer_sent_to_another_replica_reaches_the_handler_that_asked() {
    let Some((_url, _a, _b, on_a, on_b)) = two_replicas("answers", "JSONRPC").await else {
        return;
    };
    for streaming in [false, true] {
        let asked = task(
            on_a.send_message(&request(vec![trip(2, None)], None))
                .await
                .expect("a question"),
        );
        assert_eq!(asked.status.state, TaskState::InputRequired);
        // The answer goes to B; the handler waits on A.
        let answer = request(vec![Part::text("2026-12-01")], Some(asked.id.clone()));
        let done = if streaming {
            let mut events = on_b
                .send_streaming_message(&answer)
                .await
                .expect("a stream on B");
            let mut last = None;
            let read = tokio::time::timeout(Duration::from_secs(10), async {
                while let Some(event) = events.next().await {
                    if let StreamResponse::StatusUpdate(u) = event.expect("an event") {
                        last = Some(u.status.state);
                    }
                }
            });
            read.await.expect("the stream on B ends, not hangs");
            assert_eq!(
                last,
                Some(TaskState::Completed),
                "the stream on B follows A"
            );
            on_b.get_task(&get(&asked.id)).await.expect("the task")
        } else {
            task(
                tokio::time::timeout(Duration::from_secs(10), on_b.send_message(&answer))
                    .await
                    .expect("an answer, not a hang")
                    .expect("a task"),
            )
        };
        assert_eq!(
            done.status.state,
            TaskState::Completed,
            "{}",
            status_text(&done)
        );
        assert_eq!(
            parts(&done),
            2,
            "the plan A's handler made with the date given to B"
        );
        // The conversation, as B answers it: the question, then the answer given to B.
        let said: Vec<String> = done
            .history
            .iter()
            .flatten()
            .flat_map(|m| &m.parts)
            .filter_map(|p| match &p.content {
                a2a::PartContent::Text(t) => Some(t.clone()),
                _ => None,
            })
            .collect();
        assert!(
            said.iter().any(|t| t.starts_with("Which day"))
                && said.last().map(String::as_str) == Some("2026-12-01"),
            "{said:?}"
        );
        let on_a_now = on_a.get_task(&get(&asked.id)).await.expect("the task");
        assert_eq!(on_a_now.status.state, TaskState::Completed);
    }
}

/// The days of a plan as its task holds them: each day's number, in order.
fn days_of(task: &Task) -> Vec<u64> {
    task.artifacts
        .iter()
        .flatten()
        .flat_map(|a| a.parts.iter())
        .filter_map(|p| match &p.content {
            // Numbers come through `google.protobuf.Value`-shaped JSON as floats.
            a2a::PartContent::Data(d) => d["day"].as_f64().map(|d| d as u64),
            _ => None,
        })
        .collect()
}

/// Task `id` as `on` sees it once it ended (within 20 s).
async fn ended(on: &AgentClient, id: &str) -> Task {
    for _ in 0..200 {
        let t = on.get_task(&get(id)).await.expect("the task");
        if t.status.state.is_terminal() {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("task {id} did not end");
}

#[tokio::test]
async fn a_killed_replicas_durable_plan_is_taken_over_and_completed_by_another() {
    let Some(url) = postgres("crash").await else {
        return;
    };
    let (mut a, b) = (Replicas::start(&url), Replicas::start(&url));
    let on_a = client(&card(&a.base).await, "JSONRPC").await;
    let on_b = client(&card(&b.base).await, "JSONRPC").await;
    let running = start_plan(&on_a, 14).await;
    let before = parts_at_least(&on_a, &running.id, 2).await;
    a.kill();
    // B takes it over once A's lease ran out, and plans on from A's last day: every day
    // once, in order.
    let done = completed_with_days(&on_b, &running.id, 14).await;
    assert!(parts(&done) >= parts(&before));
}

/// `kill -9` of the replica that runs 100 durable plans, half waiting for their start date,
/// half planning day by day: the other replica takes every one over within the lease and
/// completes it with exactly the days an uninterrupted run gives (those waiting once their
/// answer, sent to it, comes), each day planned once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_durable_tasks_of_a_killed_replica_all_complete_on_another() {
    let Some(url) = postgres("hundred").await else {
        return;
    };
    let (mut a, b) = (Replicas::start(&url), Replicas::start(&url));
    let on_a = client(&card(&a.base).await, "JSONRPC").await;
    let on_b = client(&card(&b.base).await, "JSONRPC").await;
    let mut waiting = Vec::new();
    let mut planning = Vec::new();
    for i in 0..50u8 {
        planning.push(start_plan(&on_a, 10 + i % 5).await);
        waiting.push(start_waiting(&on_a).await);
    }
    until_asking(&on_a, &waiting).await;
    // Mid-stream: some days planned, not all.
    parts_at_least(&on_a, &planning[49].id, 1).await;
    a.kill();
    let killed = std::time::Instant::now();
    // Once B took them over (A's lease is 600 ms; B looks every 200 ms), the answers go to B.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    for t in &waiting {
        let answer = json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
                            "parts": [{"text": "2026-12-01"}], "taskId": t.id},
                            "configuration": {"returnImmediately": true}});
        let answered = rpc(&b.base, "SendMessage", answer).await;
        assert!(answered["result"]["task"].is_object(), "{answered}");
    }
    for (i, t) in planning.iter().enumerate() {
        let done = ended(&on_b, &t.id).await;
        assert_eq!(
            done.status.state,
            TaskState::Completed,
            "{}",
            status_text(&done)
        );
        let days = u64::from(10 + (i as u8) % 5);
        assert_eq!(days_of(&done), (1..=days).collect::<Vec<_>>(), "{}", t.id);
    }
    for t in &waiting {
        let done = ended(&on_b, &t.id).await;
        assert_eq!(
            done.status.state,
            TaskState::Completed,
            "{}",
            status_text(&done)
        );
        assert_eq!(days_of(&done), vec![1, 2], "{}", t.id);
    }
    // The longest plan left (14 days at 150 ms, from its first) takes 2 s after the lease:
    // none waited for anything else (a second lease, a store deadline). Generous, for a
    // loaded machine running the other tests beside it.
    let took = killed.elapsed();
    eprintln!("all 100 completed {took:?} after the kill");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

/// `kill -9` of one of three replicas, which runs 20 durable plans waiting for their start
/// date: the two others take them over between them (each its share, not all of them taken by
/// whichever recovers first), and every one is taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_replicas_durable_tasks_are_taken_over_spread_across_the_others() {
    let Some(url) = postgres("spread").await else {
        return;
    };
    let mut a = Replicas::start(&url);
    let (_b, _c) = (Replicas::start(&url), Replicas::start(&url));
    let on_a = client(&card(&a.base).await, "JSONRPC").await;
    let mut waiting = Vec::new();
    for _ in 0..20 {
        waiting.push(start_waiting(&on_a).await);
    }
    until_asking(&on_a, &waiting).await;
    let killed = owner(&url, &waiting[0].id).await.expect("A owns its tasks");
    a.kill();
    let started = std::time::Instant::now();
    let owners = loop {
        let mut owners = std::collections::BTreeMap::<String, usize>::new();
        for t in &waiting {
            if let Some(o) = owner(&url, &t.id).await.filter(|o| *o != killed) {
                *owners.entry(o).or_default() += 1;
            }
        }
        if owners.values().sum::<usize>() == waiting.len() {
            break owners;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "not all taken over: {owners:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    eprintln!("20 tasks of a killed replica taken over as {owners:?}");
    assert_eq!(
        owners.len(),
        2,
        "each of the two others took its share: {owners:?}"
    );
}

#[tokio::test]
async fn a_killed_replicas_task_of_a_skill_that_is_not_durable_is_failed() {
    let Some(url) = postgres("crash-ticker").await else {
        return;
    };
    let (mut a, b) = (Replicas::ticker(&url), Replicas::ticker(&url));
    let on_b = client(&card(&b.base).await, "JSONRPC").await;
    let file = fresh_file("ticks").with_extension("log");
    let started = rpc(
        &a.base,
        "SendMessage",
        json!({"message": {"messageId": "m1", "role": "ROLE_USER",
               "parts": [{"text": file.display().to_string()}]},
               "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = started["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_owned();
    a.kill();
    let failed = ended(&on_b, &id).await;
    assert_eq!(failed.status.state, TaskState::Failed);
    assert!(
        status_text(&failed).contains(INTERRUPTED),
        "{}",
        status_text(&failed)
    );
}

#[tokio::test]
async fn kill_9_under_load_loses_no_acknowledged_task() {
    let url = format!("sqlite://{}", fresh_file("crash").display());
    let mut first = Replicas::start(&url);
    let on_first = client(&card(&first.base).await, "JSONRPC").await;
    let on_first = std::sync::Arc::new(on_first);
    // Eight senders, each sending plans until the process dies; every task id the server
    // acknowledged is recorded.
    let acknowledged = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut senders = Vec::new();
    for _ in 0..8 {
        let (client, acknowledged) = (
            std::sync::Arc::clone(&on_first),
            std::sync::Arc::clone(&acknowledged),
        );
        senders.push(tokio::spawn(async move {
            for _ in 0..200 {
                match client
                    .send_message(&request(vec![trip(1, Some("2026-12-01"))], None))
                    .await
                {
                    Ok(answer) => acknowledged.lock().unwrap().push(task(answer).id),
                    Err(_) => return,
                }
            }
        }));
    }
    while acknowledged.lock().unwrap().len() < 20 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    first.kill();
    for s in senders {
        let _ = s.await;
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    let second = Replicas::start(&url);
    let on_second = client(&card(&second.base).await, "JSONRPC").await;
    for id in &acknowledged {
        let t = on_second
            .get_task(&get(id))
            .await
            .unwrap_or_else(|e| panic!("task {id} was acknowledged, then lost: {e:?}"));
        assert!(
            t.status.state.is_terminal() || t.status.state == TaskState::Working,
            "{id}: {:?}",
            t.status.state
        );
    }
    assert!(acknowledged.len() >= 20);
}

#[tokio::test]
async fn an_unreachable_database_at_start_is_a_clear_error() {
    let out = support::replica::test_process(concat!(module_path!(), "::replica_process"))
        .env(TASKS, "postgres://nobody@127.0.0.1:1/nothing")
        .output()
        .expect("a replica process");
    assert_eq!(out.status.code(), Some(3), "a non-zero exit");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the task store cannot be opened"), "{err}");
}

#[tokio::test]
async fn a_database_lost_while_serving_gives_clear_errors_and_the_server_recovers() {
    let Some(cluster) = support::postgres::OwnCluster::start_or_skip("lost") else {
        return;
    };
    let running = support::client::serve(
        server::server(Duration::from_millis(1), Webhooks::default())
            .tasks(Tasks::postgres(cluster.url())),
    )
    .await;
    let on = client(&card(&running.base).await, "JSONRPC").await;
    let plan = || request(vec![trip(1, Some("2026-12-01"))], None);
    let done = task(on.send_message(&plan()).await.expect("served"));
    assert_eq!(done.status.state, TaskState::Completed);

    cluster.down();
    let refused = tokio::time::timeout(Duration::from_secs(30), on.send_message(&plan()))
        .await
        .expect("an answer, not a hang")
        .expect_err("no database, no task");
    assert_eq!(refused.code, -32603, "an internal error: {refused:?}");
    assert!(
        !refused.message.contains("127.0.0.1"),
        "no connection details leak: {}",
        refused.message
    );
    // Nor is a task handed out without waiting for it: the caller is not told of a task that
    // was never written.
    let mut at_once = plan();
    at_once.configuration = Some(a2a::SendMessageConfiguration {
        accepted_output_modes: None,
        task_push_notification_config: None,
        history_length: None,
        return_immediately: Some(true),
    });
    let refused = tokio::time::timeout(Duration::from_secs(30), on.send_message(&at_once))
        .await
        .expect("an answer, not a hang")
        .expect_err("no database, no task, even at once");
    assert_eq!(refused.code, -32603, "an internal error: {refused:?}");
    // The server itself still answers what needs no database.
    assert_eq!(card(&running.base).await.name, "Trip Planner");

    cluster.up().expect("the database is back");
    let mut back = None;
    for _ in 0..50 {
        if let Ok(answer) = on.send_message(&plan()).await {
            back = Some(task(answer));
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let back = back.expect("served again once the database returned");
    assert_eq!(back.status.state, TaskState::Completed);
    let old = on
        .get_task(&get(&done.id))
        .await
        .expect("the task from before");
    assert_eq!(old.status.state, TaskState::Completed);
}

/// An answer of any size crosses replicas: one of over 64 KB (far past what a Postgres
/// notification carries) sent to the replica that does not run the task reaches the handler
/// that asked, and both replicas then answer the task as completed.
#[tokio::test]
async fn an_answer_over_64_kb_reaches_the_handler_on_another_replica() {
    let Some((_url, _a, _b, on_a, on_b)) = two_replicas("large", "JSONRPC").await else {
        return;
    };
    let asked = task(
        on_a.send_message(&request(vec![trip(1, None)], None))
            .await
            .expect("a question"),
    );
    assert_eq!(asked.status.state, TaskState::InputRequired);
    let mut answer = request(vec![Part::text("2026-12-01")], Some(asked.id.clone()));
    let mut note = std::collections::HashMap::new();
    note.insert("note".to_owned(), json!("x".repeat(70_000)));
    answer.message.metadata = Some(note);
    let done = task(
        tokio::time::timeout(Duration::from_secs(20), on_b.send_message(&answer))
            .await
            .expect("an answer, not a hang")
            .expect("taken by B, handed to A"),
    );
    assert_eq!(
        done.status.state,
        TaskState::Completed,
        "{}",
        status_text(&done)
    );
    for on in [&on_a, &on_b] {
        let stored = on.get_task(&get(&asked.id)).await.expect("the task");
        assert_eq!(stored.status.state, TaskState::Completed);
    }
}

/// The outage, by fault injection: a durable plan waits for its start date; the
/// database stops; the answer sent meanwhile is refused (`-32603`), never acknowledged as
/// done; once the database is back the task still waits for its answer in the store, and the
/// answer sent again completes it, once.
#[tokio::test]
async fn an_answer_the_store_did_not_keep_is_never_acknowledged() {
    let Some(cluster) = support::postgres::OwnCluster::start_or_skip("unkept") else {
        return;
    };
    let running = support::client::serve(
        server::server(Duration::from_millis(1), Webhooks::default())
            .tasks(Tasks::postgres(cluster.url())),
    )
    .await;
    let on = client(&card(&running.base).await, "JSONRPC").await;
    let asked = task(
        on.send_message(&request(vec![trip(1, None)], None))
            .await
            .expect("a plan"),
    );
    assert_eq!(asked.status.state, TaskState::InputRequired);
    let answer = || request(vec![Part::text("2026-12-01")], Some(asked.id.clone()));

    cluster.down();
    let refused = tokio::time::timeout(Duration::from_secs(60), on.send_message(&answer()))
        .await
        .expect("an answer, not a hang");
    match refused {
        Err(e) => assert_eq!(e.code, -32603, "an internal error: {e:?}"),
        Ok(told) => panic!(
            "the caller was told {:?} while the store kept nothing",
            task(told).status.state
        ),
    }

    cluster.up().expect("the database is back");
    // The store still has the question, and the task goes on from it.
    let mut completed = None;
    for _ in 0..100 {
        if let Ok(stored) = on.get_task(&get(&asked.id)).await {
            assert!(
                matches!(
                    stored.status.state,
                    TaskState::InputRequired | TaskState::Working | TaskState::Completed
                ),
                "the task as stored: {:?}",
                stored.status
            );
            if stored.status.state == TaskState::InputRequired
                && let Ok(done) = on.send_message(&answer()).await
            {
                completed = Some(task(done));
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let completed = completed.expect("the answer sent again is taken");
    assert_eq!(
        completed.status.state,
        TaskState::Completed,
        "{completed:?}"
    );
    let stored = on.get_task(&get(&asked.id)).await.expect("the task");
    assert_eq!(stored.status.state, TaskState::Completed);
}

#[tokio::test]
async fn a_replica_that_cannot_renew_its_lease_stops_its_tasks_before_the_lease_runs_out() {
    let Some(cluster) = support::postgres::OwnCluster::start_or_skip("fenced") else {
        return;
    };
    let lease = Duration::from_secs(4);
    let running = support::client::serve(
        server::server(Duration::from_millis(1), Webhooks::default())
            .tasks(Tasks::postgres(cluster.url()).lease(lease)),
    )
    .await;
    let on = client(&card(&running.base).await, "JSONRPC").await;
    // A durable task waiting for its answer, its handler held here, and a subscriber.
    let asked = task(
        on.send_message(&request(vec![trip(1, None)], None))
            .await
            .expect("a plan"),
    );
    assert_eq!(asked.status.state, TaskState::InputRequired);
    let mut frames = Frames::open(&running.base, "JSONRPC", &asked.id, None).await;
    let (_, first) = frames.next().await.expect("the task, first");
    assert!(first.to_string().contains(&asked.id), "{first}");

    // The database goes away: before the lease runs out (another replica may take the task
    // over then), this one stops the task here, and its subscriber learns it.
    cluster.down();
    let lost = std::time::Instant::now();
    let ended = tokio::time::timeout(lease, frames.last())
        .await
        .expect("the stream ends before the lease runs out");
    let said = ended.map(|f| f.to_string()).unwrap_or_default();
    assert!(
        said.contains("could not be stored"),
        "the stream's last word: {said}"
    );
    // Not at the first failed renewal: once half the lease went by since the last one (made
    // at most a third of the lease before the database went away).
    assert!(
        lost.elapsed() >= lease / 6,
        "too soon: {:?}",
        lost.elapsed()
    );

    // The database back: the task, given back to the store, is taken over and goes on.
    cluster.up().expect("the database is back");
    let answer = || request(vec![Part::text("2026-12-01")], Some(asked.id.clone()));
    let back = std::time::Instant::now();
    let mut completed = None;
    for _ in 0..60 {
        if let Ok(Ok(done)) =
            tokio::time::timeout(Duration::from_secs(5), on.send_message(&answer())).await
        {
            completed = Some(task(done));
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let completed = completed.expect("the answer is taken once the database is back");
    // Taken over here once given back (a lease renewal or two). (The first answer sent right
    // after the database came back is still held up to the takeover wait; a later one goes.)
    assert!(back.elapsed() < lease * 5, "{:?}", back.elapsed());
    assert_eq!(
        completed.status.state,
        TaskState::Completed,
        "{completed:?}"
    );
}

/// Every event of task `id` on the agent at `base` after event `after` (`Last-Event-ID`), to
/// the end of the stream, with its number.
async fn events_after(base: &str, binding: &str, id: &str, after: u64) -> Vec<(u64, Value)> {
    let mut frames = Frames::open(base, binding, id, Some(after)).await;
    let mut events = Vec::new();
    let read = async {
        while let Some((n, event)) = frames.next().await {
            events.push((n.expect("every event has an id"), event));
        }
    };
    tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .expect("the stream ends with the task, not hangs");
    events
}

/// The first `n` frames of a subscription to task `id` (the connection then drops): their
/// numbers, the task's first.
async fn first_frames(base: &str, id: &str, n: usize) -> Vec<(u64, Value)> {
    let mut frames = Frames::open(base, "JSONRPC", id, None).await;
    let mut seen = Vec::new();
    while seen.len() < n {
        let (number, event) = frames.next().await.expect("a frame");
        seen.push((number.expect("every event has an id"), event));
    }
    assert!(
        seen[0].1["result"].get("task").is_some(),
        "a subscription begins with the task: {}",
        seen[0].1
    );
    seen
}

/// The numbers of `events` run on from `after + 1` without a gap, and the last one ends the
/// task as completed.
fn assert_resumed(events: &[(u64, Value)], after: u64) {
    let numbers: Vec<u64> = events.iter().map(|(n, _)| *n).collect();
    let expected: Vec<u64> = (after + 1..after + 1 + numbers.len() as u64).collect();
    assert_eq!(numbers, expected, "exactly the events after {after}");
    assert!(
        events
            .iter()
            .all(|(_, e)| e["result"].get("task").is_none()),
        "no task again after Last-Event-ID"
    );
    let last = &events.last().expect("events after it").1;
    assert_eq!(
        last["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{last}"
    );
}

#[tokio::test]
async fn a_stream_resumes_from_the_sqlite_log_after_the_process_restarts() {
    let path = fresh_file("resume");
    let url = format!("sqlite://{}", path.display());

    let mut first = Replicas::start(&url);
    let on_first = client(&card(&first.base).await, "JSONRPC").await;
    let running = start_plan(&on_first, 4).await;
    // A subscriber sees three frames, and its connection drops.
    let seen = first_frames(&first.base, &running.id, 3).await;
    let last = seen[2].0;
    // Every event, as the process that ran the task numbered them.
    let all = events_after(&first.base, "JSONRPC", &running.id, 0).await;
    assert_resumed(&all, 0);
    first.kill();

    // The next process on the file resumes the stream from its log: the same events, with the
    // same numbers, after the last one seen.
    let next = Replicas::start(&url);
    let resumed = events_after(&next.base, "JSONRPC", &running.id, last).await;
    assert_resumed(&resumed, last);
    assert_eq!(
        resumed,
        all[last as usize..],
        "the events as they were sent"
    );
    let from_start = events_after(&next.base, "HTTP+JSON", &running.id, 0).await;
    assert_eq!(from_start.len(), all.len(), "the whole log is kept");
}

#[tokio::test]
async fn a_stream_resumes_on_another_replica_with_the_same_events() {
    let Some(url) = postgres("resume").await else {
        return;
    };
    let (a, b) = (Replicas::start(&url), Replicas::start(&url));
    let on_a = client(&card(&a.base).await, "JSONRPC").await;
    let running = start_plan(&on_a, 5).await;
    // A reference subscriber on A, from its first event, while a second one sees three frames
    // on A and then reconnects to B with the last number it saw.
    let reference = tokio::spawn({
        let (base, id) = (a.base.clone(), running.id.clone());
        async move { events_after(&base, "JSONRPC", &id, 0).await }
    });
    let seen = first_frames(&a.base, &running.id, 3).await;
    let last = seen[2].0;
    let resumed = events_after(&b.base, "JSONRPC", &running.id, last).await;
    assert_resumed(&resumed, last);
    let all = reference.await.expect("the reference subscriber");
    assert_resumed(&all, 0);
    assert_eq!(
        resumed,
        all[last as usize..],
        "B sends A's events, live, with A's numbers"
    );

    // A fresh subscriber on B, to a task A runs: the task, then A's events, numbered as A
    // numbers them.
    let running = start_plan(&on_a, 5).await;
    let mut frames = Frames::open(&b.base, "JSONRPC", &running.id, None).await;
    let (at, first) = frames.next().await.expect("the task");
    assert!(first["result"].get("task").is_some(), "{first}");
    let at = at.expect("the task's number");
    let mut rest = Vec::new();
    while let Some((n, event)) = frames.next().await {
        rest.push((n.expect("an id"), event));
    }
    assert_resumed(&rest, at);
}

/// The task ids announced on the replicas' channels of writes, as a listener hears them
/// within `within`.
async fn announced(listener: &mut sqlx::postgres::PgListener, within: Duration) -> Vec<String> {
    let mut heard = Vec::new();
    let deadline = tokio::time::Instant::now() + within;
    while let Ok(Ok(n)) = tokio::time::timeout_at(deadline, listener.recv()).await {
        heard.push(n.payload().to_owned());
    }
    heard
}

/// A one-day plan, sent blocking: its finished task.
async fn plan_day(client: &a2a_client::A2AClient<Box<dyn a2a_client::Transport>>) -> Task {
    let req = request(vec![trip(1, Some("2026-12-01"))], None);
    task(client.send_message(&req).await.expect("a plan"))
}

#[tokio::test]
async fn a_replica_alone_announces_no_write_and_announces_them_once_another_opens() {
    let Some(url) = postgres("announce").await else {
        return;
    };
    let mut listener = sqlx::postgres::PgListener::connect(&url)
        .await
        .expect("a listener");
    listener
        .listen_all(["a2a_card_tasks", "a2a_card_events"])
        .await
        .expect("listening");
    let a = Replicas::start(&url);
    let on_a = client(&card(&a.base).await, "JSONRPC").await;

    // Alone: its writes wake no one (no replica could read them but itself).
    let alone = plan_day(&on_a).await;
    assert_eq!(alone.status.state, TaskState::Completed);
    let heard = announced(&mut listener, Duration::from_millis(500)).await;
    assert!(heard.is_empty(), "a replica alone announced {heard:?}");

    // Another opens: A announces its writes from then on, so B's readers wake.
    let b = Replicas::start(&url);
    let on_b = client(&card(&b.base).await, "JSONRPC").await;
    let shared = plan_day(&on_a).await;
    let heard = announced(&mut listener, Duration::from_millis(500)).await;
    assert!(
        heard.contains(&shared.id),
        "A did not announce its task {} with B open: heard {heard:?}",
        shared.id
    );
    let seen = on_b.get_task(&get(&shared.id)).await.expect("B has it");
    assert_eq!(seen.status.state, TaskState::Completed);
}

/// The artifacts of `task`: each one's id and its parts' text, in order.
fn artifacts(task: &Task) -> Vec<(String, Vec<String>)> {
    task.artifacts
        .iter()
        .flatten()
        .map(|a| {
            let texts = a
                .parts
                .iter()
                .map(|p| p.as_text().map_or_else(|| format!("{p:?}"), str::to_owned))
                .collect();
            (a.artifact_id.clone(), texts)
        })
        .collect()
}

/// Waits until task `id` on `on` has at least `n` parts in its artifacts; the task then.
pub(crate) async fn parts_at_least(
    on: &a2a_client::A2AClient<Box<dyn a2a_client::Transport>>,
    id: &str,
    n: usize,
) -> Task {
    for _ in 0..200 {
        let task = on.get_task(&get(id)).await.expect("the task");
        if parts(&task) >= n {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("task {id} never had {n} parts");
}

#[tokio::test]
async fn get_task_on_another_replica_shows_the_chunks_so_far_and_a_cancel_keeps_them() {
    let Some((url, a, b, on_a, on_b)) = two_replicas("partial", "HTTP+JSON").await else {
        return;
    };

    // A plan of 14 days, a day every 150 ms, runs on A: B reads the days planned so far (the
    // task's row and the chunks logged since), not a task without artifacts.
    let running = start_plan(&on_a, 14).await;
    let on_b_now = parts_at_least(&on_b, &running.id, 2).await;
    assert_eq!(on_b_now.status.state, TaskState::Working);
    let on_a_now = on_a.get_task(&get(&running.id)).await.expect("the task");
    assert!(
        parts(&on_a_now) >= parts(&on_b_now),
        "A is ahead of or level with what B read: {} vs {}",
        parts(&on_a_now),
        parts(&on_b_now)
    );
    let b_days = artifacts(&on_b_now);
    let a_days = artifacts(&on_a_now);
    assert_eq!(
        b_days[0].1[..],
        a_days[0].1[..b_days[0].1.len()],
        "B's days are A's first days"
    );

    // Cancelled mid-stream on B: the canceled task keeps the days planned, the same on both
    // replicas.
    let canceled = on_b
        .cancel_task(&CancelTaskRequest {
            id: running.id.clone(),
            metadata: None,
            tenant: None,
        })
        .await
        .expect("cancelled on B");
    assert_eq!(canceled.status.state, TaskState::Canceled);
    assert!(parts(&canceled) >= 2, "the canceled task keeps its chunks");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let on_a_then = on_a.get_task(&get(&running.id)).await.expect("the task");
    let on_b_then = on_b.get_task(&get(&running.id)).await.expect("the task");
    assert_eq!(on_a_then.status.state, TaskState::Canceled);
    assert_eq!(artifacts(&on_a_then), artifacts(&on_b_then), "one truth");
    assert_eq!(artifacts(&on_b_then), artifacts(&canceled));
    let listed = on_a.list_tasks(&every_task()).await.expect("a list");
    let in_list = listed
        .tasks
        .iter()
        .find(|t| t.id == running.id)
        .expect("listed");
    assert_eq!(artifacts(in_list), artifacts(&canceled), "ListTasks agrees");

    // After both stop, a new replica reads the same task.
    drop((a, b));
    let c = Replicas::start(&url);
    let on_c = client(&card(&c.base).await, "JSONRPC").await;
    let on_c_now = on_c.get_task(&get(&running.id)).await.expect("the task");
    assert_eq!(
        artifacts(&on_c_now),
        artifacts(&canceled),
        "after a restart"
    );
}

#[tokio::test]
async fn a_durable_plan_continues_after_a_crash_and_its_stream_reads_on() {
    let path = fresh_file("crash-chunks");
    let url = format!("sqlite://{}", path.display());
    let mut first = Replicas::start(&url);
    let on_first = client(&card(&first.base).await, "JSONRPC").await;
    let running = start_plan(&on_first, 14).await;
    // A subscriber sees the task and its first events, then its connection drops with the
    // process.
    let seen = first_frames(&first.base, &running.id, 4).await;
    let before = parts_at_least(&on_first, &running.id, 3).await;
    // Written by the group commit within milliseconds of being planned.
    tokio::time::sleep(Duration::from_millis(100)).await;
    first.kill();
    let next = Replicas::start(&url);
    let on_next = client(&card(&next.base).await, "JSONRPC").await;
    // The restarted process runs it again from its journal once the killed one's lease ran
    // out: the days planned before the crash are not planned again.
    let after = seen.last().expect("frames").0;
    let resumed = events_after(&next.base, "JSONRPC", &running.id, after).await;
    assert_resumed(&resumed, after);
    let done = on_next.get_task(&get(&running.id)).await.expect("the task");
    assert_eq!(
        done.status.state,
        TaskState::Completed,
        "{}",
        status_text(&done)
    );
    assert_eq!(days_of(&done), (1..=14).collect::<Vec<_>>());
    assert!(parts(&done) >= parts(&before));
}

/// The official Python SDK 1.3 client following a durable plan across the kill: it subscribes
/// again, on the restarted process, with `Last-Event-ID`, and reads on to COMPLETED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_follows_a_durable_plan_across_the_kill_with_last_event_id() {
    let Some(python) = support::a2a_python() else {
        return;
    };
    let path = fresh_file("crash-sdk");
    let url = format!("sqlite://{}", path.display());
    let mut first = Replicas::start(&url);
    let on_first = client(&card(&first.base).await, "JSONRPC").await;
    let running = start_plan(&on_first, 12).await;
    parts_at_least(&on_first, &running.id, 2).await;
    // What a subscriber saw before the process died: the last event's number, the days.
    let seen = first_frames(&first.base, &running.id, 3).await;
    let last = seen.last().expect("frames").0;
    let in_task: usize = seen[0].1["result"]["task"]["artifacts"]
        .as_array()
        .map_or(0, |a| {
            a.iter()
                .map(|a| a["parts"].as_array().map_or(0, Vec::len))
                .sum()
        });
    let updates = seen[1..]
        .iter()
        .filter(|(_, e)| e["result"].get("artifactUpdate").is_some())
        .count();
    let days_to_last = (in_task + updates) as u64;
    tokio::time::sleep(Duration::from_millis(50)).await;
    first.kill();
    let next = Replicas::start(&url);
    let argv = vec![
        support::driver::path("durable_py.py").into_os_string(),
        next.base.clone().into(),
        running.id.clone().into(),
        last.to_string().into(),
        (days_to_last + 1).to_string().into(),
        "12".into(),
    ];
    let out = support::driver::run(python.into_os_string(), argv, Vec::new()).await;
    support::driver::assert_checks("Python SDK 1.3 across a kill", out, 1);
}

#[tokio::test]
async fn a_reconnect_after_the_task_ended_reads_the_sqlite_log() {
    let path = fresh_file("ended");
    let running = serve(
        server::server(Duration::from_millis(20), Webhooks::default()).tasks(Tasks::sqlite(&path)),
    )
    .await;
    let on = client(&card(&running.base).await, "JSONRPC").await;
    let plan = start_plan(&on, 3).await;
    let all = events_after(&running.base, "JSONRPC", &plan.id, 0).await;
    assert_resumed(&all, 0);
    // The task ended: this process keeps nothing of it, and a subscriber that reconnects
    // reads exactly the events after the last it saw from the database.
    for after in [1, 3] {
        let resumed = events_after(&running.base, "JSONRPC", &plan.id, after).await;
        assert_resumed(&resumed, after);
        assert_eq!(resumed, all[after as usize..]);
    }
}

#[tokio::test]
async fn a_reconnect_to_a_task_whose_log_the_memory_store_let_go_is_told_so() {
    let running = serve(
        server::server(Duration::from_millis(20), Webhooks::default())
            .finished_logs(FinishedLogs::default().max_entries(1)),
    )
    .await;
    let on = client(&card(&running.base).await, "JSONRPC").await;
    let first = start_plan(&on, 2).await;
    let all = events_after(&running.base, "JSONRPC", &first.id, 0).await;
    assert_resumed(&all, 0);
    // Kept while it is the latest finished task.
    let again = events_after(&running.base, "JSONRPC", &first.id, 1).await;
    assert_eq!(again, all[1..]);
    // Another task ends: the first one's log goes (one is kept), its task stays.
    let second = start_plan(&on, 2).await;
    assert_resumed(
        &events_after(&running.base, "JSONRPC", &second.id, 0).await,
        0,
    );
    let answer = reqwest::Client::new()
        .post(format!("{}/", running.base))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .header("Last-Event-ID", "1")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
                   "params": {"id": first.id}})
            .to_string(),
        )
        .send()
        .await
        .expect("an answer")
        .text()
        .await
        .expect("its body");
    assert!(
        answer.contains("are no longer kept") && answer.contains(&first.id),
        "{answer}"
    );
    let task = on.get_task(&get(&first.id)).await.expect("the task stays");
    assert_eq!(task.status.state, TaskState::Completed);
}

#[tokio::test]
async fn tenants_are_kept_apart_across_replicas() {
    let Some(url) = postgres("tenants").await else {
        return;
    };
    let (a, b) = (Replicas::start(&url), Replicas::start(&url));
    // On A, in tenant `acme`: a plan that runs on.
    let message = json!({"messageId": "m1", "role": "ROLE_USER", "parts": [{
        "data": {"destination": "Porto", "days": 4, "start_date": "2026-12-01"},
        "mediaType": "application/json;schema=tripRequest"}]});
    let made = rpc(
        &a.base,
        "SendMessage",
        json!({"tenant": "acme", "message": message,
               "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = made["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {made}"))
        .to_owned();
    // On B: the task is acme's, found and listed there alone.
    let found = rpc(&b.base, "GetTask", json!({"id": id, "tenant": "acme"})).await;
    assert_eq!(found["result"]["id"], json!(id), "{found}");
    for other in [json!({"tenant": "beta"}), json!({})] {
        for method in ["GetTask", "CancelTask", "SubscribeToTask"] {
            let mut params = other.clone();
            params["id"] = json!(id);
            let answer = rpc(&b.base, method, params).await;
            assert_eq!(
                answer["error"]["code"], -32001,
                "{method} {other}: {answer}"
            );
        }
        let listed = rpc(&b.base, "ListTasks", other.clone()).await;
        assert_eq!(listed["result"]["totalSize"], 0, "{other}: {listed}");
    }
    let listed = rpc(&b.base, "ListTasks", json!({"tenant": "acme"})).await;
    assert_eq!(listed["result"]["totalSize"], 1, "{listed}");
    // Resumed with Last-Event-ID on B: in acme, the events after the first; elsewhere, none.
    let refused = reqwest::Client::new()
        .get(format!("{}/beta/tasks/{id}:subscribe", b.base))
        .header("a2a-version", "1.0")
        .header("last-event-id", "1")
        .send()
        .await
        .expect("an answer");
    assert_eq!(refused.status(), 404);
    let resumed = reqwest::Client::new()
        .get(format!("{}/acme/tasks/{id}:subscribe", b.base))
        .header("a2a-version", "1.0")
        .header("last-event-id", "1")
        .send()
        .await
        .expect("an answer");
    assert_eq!(resumed.status(), 200);
    let text = tokio::time::timeout(Duration::from_secs(20), resumed.text())
        .await
        .expect("the stream ends with the task")
        .expect("the events");
    assert!(text.contains("TASK_STATE_COMPLETED"), "{text}");
}

/// Waits (2 s at most each) until each of `tasks` asks for its start date.
async fn until_asking(on: &AgentClient, tasks: &[Task]) {
    for t in tasks {
        for _ in 0..100 {
            let now = on.get_task(&get(&t.id)).await.expect("the task");
            if now.status.state == TaskState::InputRequired {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Starts a two-day plan without its date, which waits for it; its task.
pub(crate) async fn start_waiting(on: &AgentClient) -> Task {
    let mut req = request(vec![trip(2, None)], None);
    req.configuration = Some(SendMessageConfiguration {
        accepted_output_modes: None,
        task_push_notification_config: None,
        history_length: None,
        return_immediately: Some(true),
    });
    task(on.send_message(&req).await.expect("a task"))
}

/// Plan `id` once it ended, read through `on`: checked completed with days 1 to `days`, each
/// once and in order.
pub(crate) async fn completed_with_days(on: &AgentClient, id: &str, days: u64) -> Task {
    let done = ended(on, id).await;
    assert_eq!(
        done.status.state,
        TaskState::Completed,
        "{id}: {}",
        status_text(&done)
    );
    assert_eq!(
        days_of(&done),
        (1..=days).collect::<Vec<_>>(),
        "{id}: {:?}",
        done.artifacts
    );
    done
}

/// Sends waiting plan `id` its date through `on`, blocking: the task, checked completed.
async fn dated(on: &AgentClient, id: &str) -> Task {
    let answer = request(vec![Part::text("2026-12-01")], Some(id.to_owned()));
    let done = task(on.send_message(&answer).await.expect("the answer is taken"));
    assert_eq!(
        done.status.state,
        TaskState::Completed,
        "{id}: {}",
        status_text(&done)
    );
    done
}

/// How long after `since` the Postgres database at `url` names an owner of task `id` other
/// than `before` (looked at every 10 ms, until `within` after `since`); `None` if it did not.
pub(crate) async fn taken_over(
    url: &str,
    id: &str,
    before: &Option<String>,
    since: std::time::Instant,
    within: Duration,
) -> Option<Duration> {
    while since.elapsed() < within {
        let now = owner(url, id).await;
        if now.is_some() && now != *before {
            return Some(since.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}

/// The replica that owns task `id` in the Postgres database at `url`, if any.
pub(crate) async fn owner(url: &str, id: &str) -> Option<String> {
    use sqlx::Connection as _;
    let mut db = sqlx::PgConnection::connect(url)
        .await
        .expect("the database");
    sqlx::query_scalar("SELECT owner FROM a2a_card_tasks WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut db)
        .await
        .expect("the task's row")
        .flatten()
}

#[tokio::test]
async fn replicas_whose_clocks_are_an_hour_apart_take_over_only_a_dead_ones_tasks() {
    let Some(url) = postgres("clocks").await else {
        return;
    };
    let (Some(ahead), Some(behind)) = (
        support::replica::clock_offset_or_skip("+1h"),
        support::replica::clock_offset_or_skip("-1h"),
    ) else {
        return;
    };
    let with = |clock: Vec<(&'static str, String)>| {
        let mut env = vec![(TASKS, url.clone())];
        env.extend(clock);
        Replica::spawn(PROCESS, &env)
    };
    // A on the right time, B an hour ahead, C an hour behind.
    let mut a = Replicas::start(&url);
    let mut b = with(ahead);
    let c = with(behind);
    // Their clocks, as their answers' `Date` headers tell.
    let mut clocks = Vec::new();
    for replica in [&a, &b, &c] {
        let answer = reqwest::get(format!("{}/.well-known/agent-card.json", replica.base))
            .await
            .expect("the card");
        let date = answer.headers()["date"]
            .to_str()
            .expect("a date")
            .to_owned();
        let date = chrono::DateTime::parse_from_rfc2822(&date).expect("an HTTP date");
        let off = date.timestamp() - chrono::Utc::now().timestamp();
        clocks.push((off as f64 / 60.0).round() as i64);
    }
    assert_eq!(clocks, [0, 60, -60], "the replicas' clocks, in minutes off");
    let on_a = client(&card(&a.base).await, "JSONRPC").await;
    let waiting = start_waiting(&on_a).await;
    let owner_a = owner(&url, &waiting.id).await;
    assert!(owner_a.is_some(), "a waiting plan has an owner");
    // For five leases, A's plan stays A's: by B's clock A's lease ran out an hour ago, but the
    // leases are the database's time.
    let lease = Duration::from_millis(LEASE_MS.parse().expect("a lease"));
    tokio::time::sleep(lease * 5).await;
    assert_eq!(
        owner(&url, &waiting.id).await,
        owner_a,
        "taken over from a live replica"
    );
    // A and B die (kill -9): C, whose clock is an hour behind, takes the plan over once A's
    // lease ran out by the database's clock, not an hour later.
    a.kill();
    b.kill();
    let killed = std::time::Instant::now();
    let taken = taken_over(&url, &waiting.id, &owner_a, killed, Duration::from_secs(10))
        .await
        .expect("the replica an hour behind takes the dead one's plan over");
    assert!(taken < lease * 4, "{taken:?}");
    // And it plans on there.
    let on_c = client(&card(&c.base).await, "JSONRPC").await;
    dated(&on_c, &waiting.id).await;
    eprintln!("taken over {taken:?} after the kill, by the replica an hour behind");
}

// Two workers: the proxy forwards while the test waits for a replica to start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_of_an_answer_forwarded_to_another_replica_is_answered_when_the_store_is_lost() {
    use support::proxy::{Proxy, postgres_address};
    let Some(url) = postgres("mirror_outage").await else {
        return;
    };
    // A runs the plan; B, through a proxy the test cuts, takes its answer and forwards it.
    let proxy = Proxy::start(postgres_address(&url)).await;
    let a = Replicas::start(&url);
    let b = Replicas::start(&proxy.postgres_url(&url));
    let on_a = client(&card(&a.base).await, "JSONRPC").await;
    let on_b = client(&card(&b.base).await, "JSONRPC").await;
    let waiting = start_waiting(&on_a).await.id;
    let answered = {
        let id = waiting.clone();
        let caller = client(&card(&b.base).await, "JSONRPC").await;
        tokio::spawn(async move {
            let answer = request(vec![Part::text("2026-12-01")], Some(id));
            tokio::time::timeout(Duration::from_secs(30), caller.send_message(&answer)).await
        })
    };
    // Once A's handler took the answer (B forwarded it, and follows the task), B loses the
    // database for longer than a reader waits between reads of the log: the plan completes
    // on A meanwhile, and B's reads of its log fail.
    let took = std::time::Instant::now();
    loop {
        let t = on_a.get_task(&get(&waiting)).await.expect("the plan on A");
        if t.status.state != TaskState::InputRequired {
            break;
        }
        assert!(
            took.elapsed() < Duration::from_secs(10),
            "A never took the answer"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    proxy.cut();
    let cut = std::time::Instant::now();
    // B's caller is answered in bounded time, not left waiting: B, cut off past its lease,
    // acknowledges nothing it cannot read back, and says so.
    let refused = tokio::time::timeout(Duration::from_secs(10), answered)
        .await
        .expect("B's caller is answered while B has no database")
        .expect("the caller")
        .expect("within the client's own time");
    let refused_after = cut.elapsed();
    match refused {
        Ok(acknowledged) => panic!(
            "acknowledged while cut off from the database: {:?}",
            task(acknowledged).status
        ),
        Err(e) => assert!(e.message.contains("store"), "{e:?}"),
    }
    eprintln!("B's caller refused {refused_after:?} after the cut");
    // Healed: B reads the plan A completed meanwhile.
    tokio::time::sleep(Duration::from_secs(1)).await;
    proxy.heal();
    let healed = std::time::Instant::now();
    let mut read = None;
    while healed.elapsed() < Duration::from_secs(10) {
        if let Ok(t) = on_b.get_task(&get(&waiting)).await
            && t.status.state == TaskState::Completed
        {
            read = Some(t);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    read.expect("B reads the plan completed once healed");
}

// Two workers: the proxy forwards while the test waits for a replica to start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_cut_off_from_the_database_acknowledges_nothing_and_agrees_once_healed() {
    cut_off(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_partitioned_from_the_database_acknowledges_nothing_and_agrees_once_healed() {
    cut_off(true).await;
}

/// Replica A cut off from the database for five leases while B is not: its connections
/// closed (each new one too), or with `partition` left open with nothing passing either way.
async fn cut_off(partition: bool) {
    use support::proxy::{Proxy, postgres_address};
    let Some(url) = postgres(if partition { "partition" } else { "cut" }).await else {
        return;
    };
    // A reaches the database through a proxy the test cuts; B directly.
    let proxy = Proxy::start(postgres_address(&url)).await;
    let a = Replicas::start(&proxy.postgres_url(&url));
    let b = Replicas::start(&url);
    let on_a = client(&card(&a.base).await, "JSONRPC").await;
    let on_b = client(&card(&b.base).await, "JSONRPC").await;
    let mut waiting = Vec::new();
    for _ in 0..4 {
        waiting.push(start_waiting(&on_a).await.id);
    }
    let owner_a = owner(&url, &waiting[0]).await;
    let answer = |id: &str| request(vec![Part::text("2026-12-01")], Some(id.to_owned()));

    // The cut: every connection of A's closed, and each new one, for five leases (or,
    // partitioned, nothing passing).
    if partition {
        proxy.partition();
    } else {
        proxy.cut();
    }
    let cut = std::time::Instant::now();
    // An answer sent to A meanwhile is not acknowledged: a clear error, in bounded time.
    let sent = std::time::Instant::now();
    let refused = tokio::time::timeout(
        Duration::from_secs(15),
        on_a.send_message(&answer(&waiting[0])),
    )
    .await
    .expect("an answer while cut off, in time");
    let refused_after = sent.elapsed();
    match refused {
        Ok(acknowledged) => panic!(
            "acknowledged while cut off from the database: {:?}",
            task(acknowledged).status
        ),
        Err(e) => eprintln!("while cut off, after {refused_after:?}: {e}"),
    }
    assert!(refused_after < Duration::from_secs(8), "{refused_after:?}");
    // B takes A's plans over once A's lease ran out, and completes one it is answered.
    let taken = taken_over(&url, &waiting[1], &owner_a, cut, Duration::from_secs(10))
        .await
        .expect("B took A's plans over");
    dated(&on_b, &waiting[1]).await;

    // Healed after 3 s: A reads the store again, within a bounded delay.
    let lease = Duration::from_millis(LEASE_MS.parse().expect("a lease"));
    tokio::time::sleep((lease * 5).saturating_sub(cut.elapsed())).await;
    proxy.heal();
    let healed = std::time::Instant::now();
    let mut agreed = None;
    while healed.elapsed() < Duration::from_secs(10) {
        if let Ok(t) = on_a.get_task(&get(&waiting[1])).await
            && t.status.state == TaskState::Completed
        {
            agreed = Some(healed.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let agreed = agreed.expect("A reads the plan completed on B");
    // A subscriber on A to a plan B runs now ends with its completion, answered on B.
    let mut frames = Frames::open(&a.base, "JSONRPC", &waiting[3], None).await;
    let (_, first) = frames.next().await.expect("the task, first");
    assert!(first.to_string().contains(&waiting[3]), "{first}");
    dated(&on_b, &waiting[3]).await;
    let last = tokio::time::timeout(Duration::from_secs(10), frames.last())
        .await
        .expect("the stream on A ends with the task");
    let last = last.map(|f| f.to_string()).unwrap_or_default();
    assert!(last.contains("TASK_STATE_COMPLETED"), "{last}");
    // Answers sent to A complete the plans B runs (the one refused during the cut, again).
    for id in [&waiting[2], &waiting[0]] {
        let mut completed = None;
        for _ in 0..50 {
            if let Ok(done) = on_a.send_message(&answer(id)).await {
                completed = Some(task(done));
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let completed = completed.expect("an answer sent to A is taken once healed");
        assert_eq!(
            completed.status.state,
            TaskState::Completed,
            "{}",
            status_text(&completed)
        );
    }
    // Both replicas agree on every plan: completed, each day once.
    for id in &waiting {
        completed_with_days(&on_a, id, 2).await;
        completed_with_days(&on_b, id, 2).await;
    }
    eprintln!(
        "cut off: an answer refused after {refused_after:?}, the plans taken over {taken:?} after the cut; healed: A read the store {agreed:?} after"
    );
}
