//! Stopping a served agent without losing work: SIGTERM to a real server process (this test
//! binary started again, serving a worker on a SQLite file) while requests, streams and
//! questions are under way (streams on every binding: JSON-RPC, HTTP+JSON, gRPC); the health
//! routes an orchestrator probes.

use crate::support;

use std::time::{Duration, Instant};

use a2a_card::server::store::Tasks;
use a2a_card::server::{SHUT_DOWN, Server};
use a2a_card::{Schema, SkillContext, SkillError, agent, skill};
use serde::Deserialize;
use serde_json::{Value, json};
use support::client::rpc;
use support::replica::Replica;
use support::sse::Frames;

/// Set in a worker process: where its tasks are.
const TASKS: &str = "A2A_SHUTDOWN_TASKS";
/// Set in a worker process: its drain timeout, in milliseconds.
const DRAIN: &str = "A2A_SHUTDOWN_DRAIN_MS";

/// How long to nap.
#[derive(Deserialize, schemars::JsonSchema, Schema)]
#[schema(name = "nap")]
struct Nap {
    /// Milliseconds.
    ms: u64,
}

/// What to ask.
#[derive(Deserialize, schemars::JsonSchema, Schema)]
#[schema(name = "question")]
struct Question {
    /// The question.
    text: String,
}

/// Naps and asks.
struct Worker;
/// Naps and asks questions.
#[agent(url = "http://127.0.0.1:1")]
impl Worker {
    /// Naps as long as asked, then says so.
    #[skill]
    async fn nap(&self, nap: Nap) -> String {
        tokio::time::sleep(Duration::from_millis(nap.ms)).await;
        format!("napped {} ms", nap.ms)
    }

    /// Asks the question, and says the answer back.
    #[skill]
    async fn ask(&self, q: Question, ctx: SkillContext) -> Result<String, SkillError> {
        let answer = ctx.ask(q.text).await?;
        Ok(answer.text().to_owned())
    }
}

/// Not a test of its own: the body of the worker processes the tests below start.
#[tokio::test]
async fn shutdown_process() {
    let Ok(url) = std::env::var(TASKS) else {
        return;
    };
    let drain = std::env::var(DRAIN)
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(Duration::from_secs(30), Duration::from_millis);
    let listening = Server::new(Worker)
        .grpc(true)
        .tasks(Tasks::from_url(&url).expect("a store URL"))
        .drain_timeout(drain)
        .bind("127.0.0.1:0")
        .await
        .expect("the worker serves");
    println!("LISTENING http://{}", listening.local_addr());
    listening.serve().await.expect("served");
}

/// A worker on a fresh SQLite file, with this drain timeout: the process and the file's URL.
fn worker(name: &str, drain: Duration) -> (Replica, String) {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("shutdown");
    std::fs::create_dir_all(&dir).expect("a directory");
    let db = dir.join(format!("{name}-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&db);
    let url = format!("sqlite://{}", db.display());
    let process = Replica::spawn(
        concat!(module_path!(), "::shutdown_process"),
        &[(TASKS, url.clone()), (DRAIN, drain.as_millis().to_string())],
    );
    (process, url)
}

fn message(schema: &str, data: Value) -> Value {
    json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
           "parts": [{"data": data, "mediaType": format!("application/json;schema={schema}")}]}})
}

/// Starts a blocking nap of `ms` on `base`, answered in the background.
fn nap(base: &str, ms: u64) -> tokio::task::JoinHandle<Value> {
    let base = base.to_owned();
    tokio::spawn(async move { rpc(&base, "SendMessage", message("nap", json!({"ms": ms}))).await })
}

/// Task `id` as the SQLite file of `url` holds it.
async fn stored(url: &str, id: &str) -> Value {
    use sqlx::Connection as _;
    let mut db = sqlx::SqliteConnection::connect(url)
        .await
        .expect("the store's file");
    let body: String = sqlx::query_scalar("SELECT body FROM a2a_card_tasks WHERE id = ?")
        .bind(id)
        .fetch_one(&mut db)
        .await
        .expect("the task");
    serde_json::from_str(&body).expect("a task")
}

#[tokio::test]
async fn sigterm_answers_every_request_under_way_then_exits_within_the_drain() {
    let (mut process, _) = worker("requests", Duration::from_secs(10));
    let naps: Vec<_> = (0..6).map(|_| nap(&process.base, 1500)).collect();
    // Under way: each has reached the handler by now.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let sent = Instant::now();
    process.terminate();
    for answer in naps {
        let answer = answer.await.expect("the request");
        let task = &answer["result"]["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
        assert_eq!(
            task["artifacts"][0]["parts"][0]["text"], "napped 1500 ms",
            "{answer}"
        );
    }
    let (status, _) = process
        .exited_within(Duration::from_secs(8))
        .await
        .expect("the worker exited");
    assert!(status.success(), "the worker exited cleanly: {status:?}");
    let took = sent.elapsed();
    println!("drained and exited {took:?} after SIGTERM");
    // The naps' remaining 1.1 s, not the drain timeout.
    assert!(
        took < Duration::from_secs(5),
        "exited {took:?} after SIGTERM"
    );
}

#[tokio::test]
async fn a_request_past_the_drain_timeout_does_not_hold_the_process() {
    let (mut process, url) = worker("deadline", Duration::from_millis(500));
    let long = nap(&process.base, 60_000);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = Instant::now();
    process.terminate();
    let (status, took) = process
        .exited_within(Duration::from_secs(5))
        .await
        .expect("the worker exited within its drain timeout and a moment");
    assert!(status.success(), "{status:?}");
    assert!(
        sent.elapsed() < Duration::from_secs(3),
        "exited {took:?} after SIGTERM"
    );
    // The caller is answered with the task as it ended, and so says the store.
    let answer = long.await.expect("an answer");
    let task = &answer["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{answer}");
    assert_eq!(task["status"]["message"]["parts"][0]["text"], SHUT_DOWN);
    use sqlx::Connection as _;
    let mut db = sqlx::SqliteConnection::connect(&url)
        .await
        .expect("the file");
    let bodies: Vec<String> = sqlx::query_scalar("SELECT body FROM a2a_card_tasks")
        .fetch_all(&mut db)
        .await
        .expect("the tasks");
    assert_eq!(bodies.len(), 1);
    let task: Value = serde_json::from_str(&bodies[0]).expect("a task");
    assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{task}");
    assert_eq!(
        task["status"]["message"]["parts"][0]["text"], SHUT_DOWN,
        "{task}"
    );
}

#[tokio::test]
async fn open_streams_end_at_sigterm_and_do_not_hold_the_process() {
    let (mut process, url) = worker("streams", Duration::from_secs(20));
    let asked = rpc(
        &process.base,
        "SendMessage",
        message("question", json!({"text": "Which day?"})),
    )
    .await;
    let task = &asked["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{asked}"
    );
    let id = task["id"].as_str().expect("an id").to_owned();
    let mut streams = Vec::new();
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let mut frames = Frames::open(&process.base, binding, &id, None).await;
        let (seq, first) = frames.next().await.expect("the task, first");
        assert!(seq.is_some(), "numbered, to resume from");
        assert!(first.to_string().contains("TASK_STATE_INPUT_REQUIRED"));
        streams.push(frames);
    }
    let mut grpc =
        a2a_pb::proto::a2a_service_client::A2aServiceClient::connect(process.base.clone())
            .await
            .expect("gRPC on the same listener");
    let mut updates = grpc
        .subscribe_to_task(a2a_pb::proto::SubscribeToTaskRequest {
            id: id.clone(),
            ..Default::default()
        })
        .await
        .expect("subscribed over gRPC")
        .into_inner();
    let first = updates.message().await.expect("the task, first");
    assert!(first.is_some(), "the task, first");
    // A request under way keeps the drain going (its answer is awaited): the streams end at
    // its start, not when the process stops.
    let napping = nap(&process.base, 1_500);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let sent = Instant::now();
    process.terminate();
    // The gRPC stream ends with UNAVAILABLE, the status a client retries elsewhere.
    let ended = tokio::time::timeout(Duration::from_secs(1), updates.message())
        .await
        .expect("the gRPC stream ended as the drain began");
    let status = ended.expect_err("ended by the drain, with a status");
    assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
    assert!(status.message().contains("shutting down"), "{status:?}");
    for mut frames in streams {
        // Ended by the server, cleanly (a cut connection would fail the read), as the drain
        // began: before the task failed at its end.
        let rest = tokio::time::timeout(Duration::from_secs(1), frames.next())
            .await
            .expect("the stream ended at SIGTERM");
        assert!(rest.is_none(), "nothing more: {rest:?}");
    }
    let napped = napping.await.expect("the nap's answer");
    assert_eq!(
        napped["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{napped}"
    );
    let (status, _) = process
        .exited_within(Duration::from_secs(5))
        .await
        .expect("the worker exited");
    assert!(status.success(), "{status:?}");
    let took = sent.elapsed();
    println!("streams ended and exited {took:?} after SIGTERM");
    assert!(
        took < Duration::from_secs(5),
        "exited {took:?} after SIGTERM"
    );
    // Its question can no longer be answered: the task says why it ended.
    let task = stored(&url, &id).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{task}");
    assert_eq!(
        task["status"]["message"]["parts"][0]["text"], SHUT_DOWN,
        "{task}"
    );
}

#[tokio::test]
async fn readiness_turns_503_during_the_drain_and_new_requests_are_refused() {
    let (mut process, _) = worker("ready", Duration::from_secs(20));
    let http = reqwest::Client::new();
    let probe = |path: &str| http.get(format!("{}{path}", process.base)).send();
    let live = probe("/healthz").await.expect("liveness");
    assert_eq!(live.status(), 200);
    let ready = probe("/readyz").await.expect("readiness");
    assert_eq!(ready.status(), 200);
    let under_way = nap(&process.base, 2000);
    tokio::time::sleep(Duration::from_millis(300)).await;
    process.terminate();
    let mut during = None;
    for _ in 0..100 {
        let ready = probe("/readyz").await.expect("readiness, during the drain");
        if ready.status() == 503 {
            during = Some(ready);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(during.is_some(), "/readyz said 503 once SIGTERM came");
    assert_eq!(probe("/healthz").await.expect("liveness").status(), 200);
    let late = http
        .post(format!("{}/", process.base))
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                     "params": message("nap", json!({"ms": 1}))})
            .to_string(),
        )
        .send()
        .await
        .expect("an answer");
    assert_eq!(late.status(), 503);
    assert_eq!(late.headers()["connection"], "close");
    assert!(late.headers().contains_key("retry-after"));
    // The card too (answered ahead of the router while the listener is not draining).
    let card = probe("/.well-known/agent-card.json")
        .await
        .expect("the card route, during the drain");
    assert_eq!(card.status(), 503);
    assert_eq!(card.headers()["connection"], "close");
    let answer = under_way.await.expect("the request under way");
    assert_eq!(
        answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answer}"
    );
    let (status, _) = process
        .exited_within(Duration::from_secs(5))
        .await
        .expect("the worker exited");
    assert!(status.success(), "{status:?}");
}

/// Set in a process serving the README's example (fight_club, as `cargo run --example
/// fight_club` serves it): where its tasks are.
const EXAMPLE_TASKS: &str = "A2A_SHUTDOWN_EXAMPLE_TASKS";

/// Not a test of its own: the body of the example processes the test below starts.
#[tokio::test]
async fn example_process() {
    let Ok(url) = std::env::var(EXAMPLE_TASKS) else {
        return;
    };
    let listening = crate::fight_club::server::example(Tasks::from_url(&url).expect("a store URL"))
        .bind("127.0.0.1:0")
        .await
        .expect("the example serves");
    println!("LISTENING http://{}", listening.local_addr());
    listening.serve().await.expect("served");
}

#[tokio::test]
async fn the_readme_example_under_load_answers_every_request_under_way_at_sigterm() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("shutdown");
    std::fs::create_dir_all(&dir).expect("a directory");
    let db = dir.join(format!("example-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&db);
    let url = format!("sqlite://{}", db.display());
    let example = || {
        Replica::spawn(
            concat!(module_path!(), "::example_process"),
            &[(EXAMPLE_TASKS, url.clone())],
        )
    };
    let mut process = example();
    // When SIGTERM was sent: a request begun after it may meet a connection the stopping
    // process closed (it never took that request); one begun before must be answered whole.
    let signalled: std::sync::Arc<std::sync::OnceLock<Instant>> = Default::default();
    // 16 callers sending blocking fights back to back, until the process is gone.
    let callers: Vec<_> = (0..16)
        .map(|_| {
            let base = process.base.clone();
            let signalled = signalled.clone();
            tokio::spawn(async move {
                let http = reqwest::Client::new();
                let (mut completed, mut refused) = (Vec::new(), 0);
                loop {
                    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                        "params": message("fightComparison", json!({"a": "Lion", "b": "Tiger"}))});
                    let began = Instant::now();
                    let sent = http
                        .post(&base)
                        .header("content-type", "application/json")
                        .header("A2A-Version", "1.0")
                        .body(body.to_string())
                        .send()
                        .await;
                    let answer = match sent {
                        Ok(answer) => answer,
                        // The listener closed: this request never reached the process.
                        Err(e) if e.is_connect() => break,
                        Err(_) if signalled.get().is_some_and(|at| began >= *at) => break,
                        Err(e) => panic!("a request under way at SIGTERM was cut: {e}"),
                    };
                    let status = answer.status();
                    let text = answer.text().await.expect("a whole answer");
                    if status == reqwest::StatusCode::SERVICE_UNAVAILABLE {
                        // Arrived during the drain: refused, to be sent elsewhere.
                        refused += 1;
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                    let answer: Value = serde_json::from_str(&text).expect("JSON");
                    let task = &answer["result"]["task"];
                    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
                    completed.push(task["id"].as_str().expect("an id").to_owned());
                }
                (completed, refused)
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(800)).await;
    let sent = Instant::now();
    let _ = signalled.set(sent);
    process.terminate();
    let (status, _) = process
        .exited_within(Duration::from_secs(30))
        .await
        .expect("the example exits within its drain");
    assert!(status.success(), "the example exited cleanly: {status:?}");
    let took = sent.elapsed();
    let (mut completed, mut refused) = (Vec::new(), 0);
    for caller in callers {
        let (done, no) = caller.await.expect("every answer was whole");
        completed.extend(done);
        refused += no;
    }
    println!(
        "the example under load: {} requests answered, {refused} refused during the drain, exited {took:?} after SIGTERM",
        completed.len()
    );
    assert!(completed.len() > 16, "the load ran: {}", completed.len());
    // The next process on the same file answers for every task the first one told of.
    let next = example();
    for id in &completed {
        let task = stored(&url, id).await;
        assert_eq!(
            task["status"]["state"], "TASK_STATE_COMPLETED",
            "{id}: {task}"
        );
    }
    let answer = rpc(&next.base, "GetTask", json!({"id": completed[0]})).await;
    assert_eq!(
        answer["result"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answer}"
    );
}

/// Every event of `frames` to the stream's end (20 s at most), with its number.
async fn to_the_end(mut frames: Frames) -> Vec<(u64, Value)> {
    let mut events = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), async {
        while let Some((n, event)) = frames.next().await {
            events.push((n.expect("every event has an id"), event));
        }
    })
    .await
    .expect("the stream ends with the task, not hangs");
    events
}

/// A subscriber to a durable task whose server gets SIGTERM: its stream ends cleanly as the
/// drain begins (after whole events, none an error, the task not ended), the process gives the
/// task up as it exits, and the subscriber reads on from the next process on the same SQLite
/// file with `Last-Event-ID`: exactly the events after the last one it read, to the task's end.
#[tokio::test]
async fn a_stream_ended_by_sigterm_reads_on_from_the_next_process_with_last_event_id() {
    use crate::replicas::{PROCESS, completed_with_days, fresh_file, start_plan};
    let path = fresh_file("sigterm-stream");
    let url = format!("sqlite://{}", path.display());
    let replica = || Replica::spawn(PROCESS, &[(crate::replicas::TASKS, url.clone())]);
    let mut first = replica();
    let on_first =
        support::client::client(&support::client::card(&first.base).await, "JSONRPC").await;
    // The trip planner's durable plan, a day every 150 ms; a subscriber reads its first events.
    let plan = start_plan(&on_first, 12).await;
    let mut frames = Frames::open(&first.base, "JSONRPC", &plan.id, None).await;
    let mut read: Vec<(u64, Value)> = Vec::new();
    while read.len() < 3 {
        let (n, event) = frames.next().await.expect("an event");
        read.push((n.expect("numbered, to resume from"), event));
    }
    let sent = Instant::now();
    first.terminate();
    // Ended by the server as the drain began, cleanly: a cut connection would fail the read.
    tokio::time::timeout(Duration::from_secs(2), async {
        while let Some((n, event)) = frames.next().await {
            read.push((n.expect("numbered"), event));
        }
    })
    .await
    .expect("the stream ended at SIGTERM");
    let ended = sent.elapsed();
    assert!(
        read.iter().all(|(_, e)| e.get("error").is_none()),
        "no error event: {read:?}"
    );
    let state = read
        .iter()
        .rev()
        .find_map(|(_, e)| {
            let result = &e["result"];
            result["statusUpdate"]["status"]["state"]
                .as_str()
                .or(result["task"]["status"]["state"].as_str())
        })
        .expect("a state read");
    assert!(
        !matches!(
            state,
            "TASK_STATE_COMPLETED" | "TASK_STATE_FAILED" | "TASK_STATE_CANCELED"
        ),
        "the task had not ended for the subscriber: {state}"
    );
    let (status, _) = first
        .exited_within(Duration::from_secs(10))
        .await
        .expect("the server exited within its drain");
    assert!(status.success(), "{status:?}");
    let exited = sent.elapsed();

    // The next process on the file, from the event after the last one read.
    let last = read.last().expect("events").0;
    let next = replica();
    let after = to_the_end(Frames::open(&next.base, "JSONRPC", &plan.id, Some(last)).await).await;
    let numbers: Vec<u64> = after.iter().map(|(n, _)| *n).collect();
    let expected: Vec<u64> = (last + 1..last + 1 + numbers.len() as u64).collect();
    assert_eq!(numbers, expected, "exactly the events after {last}");
    assert!(
        after.iter().all(|(_, e)| e["result"].get("task").is_none()),
        "no task again after Last-Event-ID"
    );
    let end = &after.last().expect("events after it").1;
    assert_eq!(
        end["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{end}"
    );
    // What the subscriber read, before SIGTERM and after, is the task's log from its first
    // event on, as the next process keeps it: nothing lost, nothing twice, each day once.
    let first_read = read[0].0;
    let log =
        to_the_end(Frames::open(&next.base, "JSONRPC", &plan.id, Some(first_read)).await).await;
    let resumed = after.len();
    let seen: Vec<(u64, Value)> = read[1..].iter().cloned().chain(after).collect();
    assert_eq!(seen, log, "the events read on either side of SIGTERM");
    let on_next =
        support::client::client(&support::client::card(&next.base).await, "JSONRPC").await;
    completed_with_days(&on_next, &plan.id, 12).await;
    println!(
        "the stream ended {ended:?} after SIGTERM, the process exited {exited:?} after it; {} events read before, {} after Last-Event-ID {last}",
        read.len(),
        resumed
    );
}
