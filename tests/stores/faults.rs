//! The fault suite: two replicas of the trip planner on a Postgres cluster of the test's own,
//! each reaching it through a TCP proxy, under a steady load of durable plans begun and
//! answered on both, while faults are injected one after another: a replica paused past its
//! lease, one replica's connections cut, the other partitioned, the database restarted, a
//! replica killed and replaced. Every acknowledgement is recorded; once the faults heal, an
//! invariant checker reads every task back from both replicas.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::replicas::{LEASE_MS, PROCESS, TASKS};
use crate::support::postgres::OwnCluster;
use crate::support::proxy::{Proxy, postgres_address};
use crate::support::replica::Replica;

/// What the callers were told, by task.
#[derive(Default)]
struct Told {
    /// Tasks whose creation was acknowledged (the task, waiting for its date).
    made: Vec<String>,
    /// Tasks acknowledged completed, with the days their answer carried.
    completed: BTreeMap<String, Vec<u64>>,
    /// Requests sent, and answered with an error (acknowledging nothing).
    sent: usize,
    refused: usize,
    /// The refusals by what they said (its first words).
    why: BTreeMap<String, usize>,
}

impl Told {
    fn refused(&mut self, why: &str) {
        self.refused += 1;
        // What it said, a task's id (between backticks) left out.
        let said = serde_json::from_str::<Value>(why)
            .ok()
            .and_then(|e| e["message"].as_str().map(str::to_owned))
            .unwrap_or_else(|| why.to_owned());
        let words: String = said
            .split('`')
            .enumerate()
            .map(|(i, part)| if i % 2 == 1 { "`…`" } else { part })
            .collect::<String>()
            .chars()
            .take(100)
            .collect();
        *self.why.entry(words).or_default() += 1;
    }
}

/// One JSON-RPC call to `base`, within 20 s: its answer, or why none came.
pub(crate) async fn call(
    http: &reqwest::Client,
    base: &str,
    method: &str,
    params: Value,
) -> Result<Value, String> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let answer = http
        .post(base)
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .timeout(Duration::from_secs(20))
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let value: Value = answer.json().await.map_err(|e| e.to_string())?;
    match value.get("error") {
        Some(error) => Err(error.to_string()),
        None => Ok(value["result"].clone()),
    }
}

/// A two-day plan without its date: the task.
pub(crate) fn plan() -> Value {
    json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
        "parts": [{"data": {"destination": "Porto", "days": 2},
                   "mediaType": "application/json;schema=tripRequest"}]},
        "configuration": {"returnImmediately": true}})
}

/// The date, answering task `id`'s question; blocking.
pub(crate) fn date(id: &str) -> Value {
    json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
        "parts": [{"text": "2026-12-01"}], "taskId": id}})
}

/// The days of an answered plan.
pub(crate) fn days(task: &Value) -> Vec<u64> {
    task["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|a| a["parts"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p["data"]["day"].as_f64())
        .map(|d| d as u64)
        .collect()
}

/// A caller, for as long as `running`: begins a plan on the replica `bases` names first (then
/// the other, in turn), answers it, and notes what it was told in `told`.
async fn caller(
    bases: Arc<Mutex<Vec<String>>>,
    n: usize,
    told: Arc<Mutex<Told>>,
    running: Arc<std::sync::atomic::AtomicBool>,
) {
    let http = reqwest::Client::new();
    let mut turn = n;
    while running.load(std::sync::atomic::Ordering::SeqCst) {
        turn += 1;
        let base = {
            let bases = bases.lock().expect("the bases");
            bases[turn % bases.len()].clone()
        };
        let made = call(&http, &base, "SendMessage", plan()).await;
        let id = {
            let mut told = told.lock().expect("told");
            told.sent += 1;
            match made {
                Ok(task) => {
                    let id = task["task"]["id"].as_str().unwrap_or_default().to_owned();
                    told.made.push(id.clone());
                    Some(id)
                }
                Err(why) => {
                    told.refused(&why);
                    None
                }
            }
        };
        let Some(id) = id else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        // Answered once it asks (the handler runs first), as a client watching it would.
        for _ in 0..60 {
            let read = call(&http, &base, "GetTask", json!({"id": id})).await;
            if read.is_ok_and(|t| t["status"]["state"] == "TASK_STATE_INPUT_REQUIRED") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let answered = call(&http, &base, "SendMessage", date(&id)).await;
        let mut told = told.lock().expect("told");
        told.sent += 1;
        match answered {
            Ok(task) if task["task"]["status"]["state"] == "TASK_STATE_COMPLETED" => {
                told.completed.insert(id, days(&task["task"]));
            }
            Ok(_) => {}
            Err(why) => told.refused(&why),
        }
    }
}

/// A plan of 14 days with its date, run on after its call (about 2 s at 150 ms a day).
pub(crate) fn long_plan() -> Value {
    json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
        "parts": [{"data": {"destination": "Porto", "days": 14, "start_date": "2026-12-01"},
                   "mediaType": "application/json;schema=tripRequest"}]},
        "configuration": {"returnImmediately": true}})
}

/// Whether `frame` ends its task's stream: the task or a status in a terminal state.
pub(crate) fn ends(frame: &Value) -> bool {
    let result = &frame["result"];
    let state = result["statusUpdate"]["status"]["state"]
        .as_str()
        .or_else(|| result["task"]["status"]["state"].as_str())
        .unwrap_or_default();
    matches!(
        state,
        "TASK_STATE_COMPLETED"
            | "TASK_STATE_FAILED"
            | "TASK_STATE_CANCELED"
            | "TASK_STATE_REJECTED"
    )
}

/// Follows task `id`'s events as a client that resumes does, through the faults: subscribes
/// on the replicas `bases` name in turn, and after a stream that broke off (an error, a lost
/// connection, a replica gone) subscribes again after the last event it read
/// (`Last-Event-ID`), until the task's end (60 s at most). The events read, with their
/// numbers, and how many times it subscribed.
async fn follow(bases: Arc<Mutex<Vec<String>>>, id: String) -> (Vec<(u64, Value)>, usize) {
    use crate::support::sse::Frames;
    let mut read: Vec<(u64, Value)> = Vec::new();
    let started = Instant::now();
    let mut turn = 0;
    while started.elapsed() < Duration::from_secs(60) {
        turn += 1;
        let base = {
            let bases = bases.lock().expect("the bases");
            bases[turn % bases.len()].clone()
        };
        let last = read.last().map(|(n, _)| *n);
        let Ok(mut frames) = Frames::try_open(&base, "JSONRPC", &id, last).await else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        while let Ok(Some((number, frame))) = frames.try_next().await {
            // An error ends this stream (the client subscribes again); a frame has a number.
            let Some(number) = number.filter(|_| frame.get("error").is_none()) else {
                break;
            };
            let end = ends(&frame);
            read.push((number, frame));
            if end {
                return (read, turn);
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "task {id}'s stream did not reach its end within 60 s: {} events read",
        read.len()
    );
}

/// A replica of the trip planner reaching the database at `url`.
fn replica(url: &str) -> Replica {
    Replica::spawn(PROCESS, &[(TASKS, url.to_owned())])
}

// Two workers: the proxies forward while the test waits for a replica to start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_load_every_fault_loses_no_acknowledged_answer_and_the_replicas_agree() {
    let Some(cluster) = OwnCluster::start_or_skip("faults") else {
        return;
    };
    let url = cluster.url();
    let (to_a, to_b) = (
        Proxy::start(postgres_address(&url)).await,
        Proxy::start(postgres_address(&url)).await,
    );
    let mut a = replica(&to_a.postgres_url(&url));
    let b = replica(&to_b.postgres_url(&url));
    let bases = Arc::new(Mutex::new(vec![a.base.clone(), b.base.clone()]));
    let told = Arc::new(Mutex::new(Told::default()));
    let running = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let callers: Vec<_> = (0..6)
        .map(|n| {
            tokio::spawn(caller(
                Arc::clone(&bases),
                n,
                Arc::clone(&told),
                Arc::clone(&running),
            ))
        })
        .collect();
    let lease = Duration::from_millis(LEASE_MS.parse().expect("a lease"));
    let calm = || tokio::time::sleep(Duration::from_secs(1));
    let mut faults = Vec::new();
    // Before each fault, a long plan begins, and a client follows its stream through it.
    let mut followed = Vec::new();
    let http = reqwest::Client::new();
    let mut stream = async |n: usize| {
        let base = bases.lock().expect("the bases")[n % 2].clone();
        let Ok(task) = call(&http, &base, "SendMessage", long_plan()).await else {
            return;
        };
        let id = task["task"]["id"].as_str().unwrap_or_default().to_owned();
        followed.push((id.clone(), tokio::spawn(follow(Arc::clone(&bases), id))));
    };
    calm().await;
    stream(0).await;

    // A paused (SIGSTOP) past its lease, then resumed.
    a.pause();
    tokio::time::sleep(lease * 3).await;
    a.resume();
    faults.push("replica A paused for three leases");
    calm().await;
    // A's connections to the database cut for three leases.
    stream(1).await;
    to_a.cut();
    tokio::time::sleep(lease * 3).await;
    to_a.heal();
    faults.push("replica A's database connections cut for three leases");
    calm().await;
    // B partitioned from the database (nothing passes, connections open) for three leases.
    stream(2).await;
    to_b.partition();
    tokio::time::sleep(lease * 3).await;
    to_b.heal();
    faults.push("replica B partitioned from the database for three leases");
    calm().await;
    // The database stopped for two seconds, and started again.
    stream(3).await;
    cluster.down();
    tokio::time::sleep(Duration::from_secs(2)).await;
    cluster.up().expect("the database starts again");
    faults.push("the database stopped for 2 s and started again");
    calm().await;
    // A killed (kill -9) and replaced.
    stream(4).await;
    a.kill();
    let started = Instant::now();
    a = replica(&to_a.postgres_url(&url));
    bases.lock().expect("the bases")[0] = a.base.clone();
    faults.push("replica A killed (kill -9) and replaced");
    eprintln!("replica A replaced in {:?}", started.elapsed());
    calm().await;
    calm().await;

    running.store(false, std::sync::atomic::Ordering::SeqCst);
    for c in callers {
        c.await.expect("a caller");
    }
    let told = Arc::try_unwrap(told)
        .ok()
        .expect("the callers are done")
        .into_inner()
        .expect("told");

    // Every followed stream read to its end, each event once, in order, without a gap.
    let (mut streamed, mut subscriptions) = (0, 0);
    for (id, follower) in followed {
        let (read, subscribed) = follower.await.expect("a follower");
        subscriptions += subscribed;
        let numbers: Vec<u64> = read.iter().map(|(n, _)| *n).collect();
        let first = numbers[0];
        let expected: Vec<u64> = (first..first + numbers.len() as u64).collect();
        assert_eq!(
            numbers, expected,
            "{id}: each event once, in order, without a gap"
        );
        let (_, last) = read.last().expect("an event");
        assert!(
            last["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
                || last["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED",
            "{id} ends completed: {last}"
        );
        let task = call(&http, &b.base, "GetTask", json!({"id": id}))
            .await
            .expect("the plan");
        assert_eq!(
            days(&task),
            (1..=14).collect::<Vec<_>>(),
            "{id}: each day once"
        );
        streamed += 1;
    }

    // Every plan still waiting (its answer refused, or never sent) answered now, on either
    // replica, until it completes.
    let every = all_tasks(&http, &b.base).await;
    for (id, state) in &every {
        if state == "TASK_STATE_INPUT_REQUIRED" || state == "TASK_STATE_WORKING" {
            answer_until_done(&http, [&a.base, &b.base], id).await;
        }
    }

    // The invariants, read on both replicas.
    let mut lost = Vec::new();
    let on_a = all_tasks(&http, &a.base).await;
    let on_b = all_tasks(&http, &b.base).await;
    assert_eq!(
        on_a, on_b,
        "both replicas list the same tasks, in the same states"
    );
    for id in &told.made {
        match on_b.get(id) {
            None => lost.push(format!("{id}: acknowledged made, not stored")),
            Some(state) if state != "TASK_STATE_COMPLETED" => {
                lost.push(format!("{id}: acknowledged made, left {state}"))
            }
            Some(_) => {}
        }
    }
    for (id, acknowledged) in &told.completed {
        for base in [&a.base, &b.base] {
            let task = call(&http, base, "GetTask", json!({"id": id})).await;
            match task {
                Ok(task)
                    if task["status"]["state"] == "TASK_STATE_COMPLETED"
                        && days(&task) == *acknowledged => {}
                other => lost.push(format!(
                    "{id}: acknowledged completed with {acknowledged:?}, {base} reads {other:?}"
                )),
            }
        }
    }
    let left: Vec<_> = on_b
        .iter()
        .filter(|(_, s)| *s != "TASK_STATE_COMPLETED" && *s != "TASK_STATE_FAILED")
        .collect();
    eprintln!(
        "faults injected: {}; streams followed through them: {streamed} ({subscriptions} subscriptions), gapless; requests: {}; refused: {}; tasks made: {} (acknowledged {}); answers acknowledged completed: {}; lost: {}",
        faults.len(),
        told.sent,
        told.refused,
        on_b.len(),
        told.made.len(),
        told.completed.len(),
        lost.len()
    );
    for fault in &faults {
        eprintln!("  - {fault}");
    }
    for (why, n) in &told.why {
        eprintln!("  refused {n} times: {why}");
    }
    assert!(lost.is_empty(), "acknowledged and lost: {lost:#?}");
    assert!(left.is_empty(), "tasks left running: {left:?}");
    assert!(
        told.completed.len() >= 20,
        "the load ran: {} completed",
        told.completed.len()
    );
}

/// Every task the replica at `base` lists, with its state.
async fn all_tasks(http: &reqwest::Client, base: &str) -> BTreeMap<String, String> {
    let mut all = BTreeMap::new();
    let mut token = String::new();
    loop {
        let page = call(
            http,
            base,
            "ListTasks",
            json!({"pageSize": 100, "pageToken": token}),
        )
        .await
        .expect("a list");
        for task in page["tasks"].as_array().into_iter().flatten() {
            let id = task["id"].as_str().unwrap_or_default().to_owned();
            let state = task["status"]["state"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            all.insert(id, state);
        }
        token = page["nextPageToken"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if token.is_empty() {
            return all;
        }
    }
}

/// Answers plan `id` on the replicas `bases` in turn until it completes (30 s at most).
async fn answer_until_done(http: &reqwest::Client, bases: [&str; 2], id: &str) {
    for turn in 0..60 {
        let base = bases[turn % 2];
        if let Ok(task) = call(http, base, "GetTask", json!({"id": id})).await
            && task["status"]["state"] == "TASK_STATE_COMPLETED"
        {
            return;
        }
        let _ = call(http, base, "SendMessage", date(id)).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("plan {id} never completed");
}

/// A plan of two days with its date, blocking: the answer's task, or the error.
pub(crate) fn dated_plan() -> Value {
    json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
        "parts": [{"data": {"destination": "Porto", "days": 2, "start_date": "2026-12-01"},
                   "mediaType": "application/json;schema=tripRequest"}]}})
}

/// A cancel the store cannot keep (the disk full) is refused, never acknowledged: each
/// cancel of a waiting plan is answered `CANCELED` and then read so by the next process on
/// the file, or refused. (Found by the fault campaign: a cancel answered `CANCELED` whose
/// write the store had refused.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_acknowledged_on_a_full_disk_is_one_the_store_kept() {
    let Some(disk) = crate::support::disk::SmallDisk::mount_or_skip("full-disk-cancel", "16m")
    else {
        return;
    };
    let url = format!("sqlite://{}", disk.path().join("tasks.db").display());
    let agent = replica(&url);
    let http = reqwest::Client::new();
    // Plans that ask for their start date, then wait.
    let mut waiting = Vec::new();
    for _ in 0..20 {
        let made = call(&http, &agent.base, "SendMessage", plan())
            .await
            .expect("a plan");
        let id = made["task"]["id"].as_str().expect("an id").to_owned();
        for _ in 0..100 {
            let task = call(&http, &agent.base, "GetTask", json!({"id": id}))
                .await
                .expect("the task");
            if task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        waiting.push(id);
    }
    disk.fill();
    let (mut acknowledged, mut refused) = (Vec::new(), 0);
    for id in &waiting {
        match call(&http, &agent.base, "CancelTask", json!({"id": id})).await {
            Ok(task) => {
                assert_eq!(task["status"]["state"], "TASK_STATE_CANCELED", "{task}");
                acknowledged.push(id.clone());
            }
            Err(why) => {
                assert!(why.contains("-32603"), "{why}");
                refused += 1;
            }
        }
    }
    // Every acknowledged cancel is in the file: read by the next process on it.
    drop(agent);
    disk.free();
    let next = replica(&url);
    for id in &acknowledged {
        let task = call(&http, &next.base, "GetTask", json!({"id": id}))
            .await
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(
            task["status"]["state"], "TASK_STATE_CANCELED",
            "{id}, its cancel acknowledged on a full disk: {task}"
        );
    }
    eprintln!(
        "cancels on a full disk: {} acknowledged and kept, {refused} refused",
        acknowledged.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_is_refused_clearly_and_the_agent_serves_again_once_space_returns() {
    let Some(disk) = crate::support::disk::SmallDisk::mount_or_skip("full-disk", "16m") else {
        return;
    };
    let url = format!("sqlite://{}", disk.path().join("tasks.db").display());
    let agent = replica(&url);
    let http = reqwest::Client::new();
    let mut kept = Vec::new();
    for _ in 0..5 {
        let done = call(&http, &agent.base, "SendMessage", dated_plan())
            .await
            .expect("a plan");
        assert_eq!(
            done["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{done}"
        );
        kept.push(done["task"]["id"].as_str().expect("an id").to_owned());
    }

    // The disk full: each plan is refused, at once and clearly, or (while the database's
    // files still have room they took before) acknowledged, and then kept.
    disk.fill();
    let (mut refused, mut acknowledged) = (0, 0);
    for _ in 0..40 {
        let asked = Instant::now();
        match call(&http, &agent.base, "SendMessage", dated_plan()).await {
            Ok(done) => {
                assert_eq!(
                    done["task"]["status"]["state"], "TASK_STATE_COMPLETED",
                    "{done}"
                );
                kept.push(done["task"]["id"].as_str().expect("an id").to_owned());
                acknowledged += 1;
            }
            Err(why) => {
                assert!(why.contains("-32603"), "{why}");
                assert!(
                    asked.elapsed() < Duration::from_secs(6),
                    "{:?}",
                    asked.elapsed()
                );
                refused += 1;
                if refused == 5 {
                    break;
                }
            }
        }
    }
    assert_eq!(refused, 5, "the disk is full: plans are refused");
    // The agent keeps serving: its card, and the tasks kept before.
    let card = http
        .get(format!("{}/.well-known/agent-card.json", agent.base))
        .send()
        .await
        .expect("the card");
    assert_eq!(card.status(), 200);
    for id in &kept {
        let task = call(&http, &agent.base, "GetTask", json!({"id": id}))
            .await
            .expect("a task kept");
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    }

    // Space back: plans are made and completed again, within a few tries.
    disk.free();
    let mut again = None;
    for _ in 0..50 {
        if let Ok(done) = call(&http, &agent.base, "SendMessage", dated_plan()).await {
            again = Some(done);
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let again = again.expect("a plan once space returned");
    assert_eq!(
        again["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{again}"
    );
    kept.push(again["task"]["id"].as_str().expect("an id").to_owned());
    // Every task acknowledged, before, during and after, is in the file: read by the next
    // process on it, after this one is killed.
    drop(agent);
    let next = replica(&url);
    for id in &kept {
        let task = call(&http, &next.base, "GetTask", json!({"id": id}))
            .await
            .unwrap_or_else(|e| panic!("{id}, acknowledged, is kept: {e}"));
        assert_eq!(days(&task), vec![1, 2], "{task}");
    }
    eprintln!(
        "a full disk: {refused} plans refused with -32603 and {acknowledged} acknowledged while it was full, the agent serving on; space back, plans completed again; all {} acknowledged read back by the next process",
        kept.len()
    );
    drop(next);
}
