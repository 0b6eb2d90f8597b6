//! Deploys: replicas of the trip planner stopped with SIGTERM while they work and replaced by
//! the agent's next version (a step added behind a marker), on Postgres and on SQLite. Nothing
//! is lost: every call under way is answered, every plan completes once with each of its days
//! once, each step body runs once (a ledger the steps write), a durable sleep keeps its deadline.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use a2a::Task;
use a2a_card::server::store::Tasks;
use a2a_card::server::{Listening, Server, ServerError};
use a2a_card::{File, Schema, SkillContext, SkillError};
use futures::{Stream, StreamExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::replicas::{
    AgentClient, LEASE, TASKS, completed_with_days, fresh_file, owner, parts_at_least, postgres,
    start_plan, start_waiting, taken_over,
};
use crate::support::client::{card, client, every_task, get, rpc};
use crate::support::replica::Replica;
use crate::trip_planner::agent::{ItineraryDay, TripPlanner, TripRequest};

/// Set in a replica process that serves a version of the planner below: the ledger file each
/// step body writes a line to (`STEP TASK_ID`).
const LEDGER: &str = "A2A_REPLICA_LEDGER";
/// Set (with [`LEDGER`]) in a replica process that serves the next version ([`NextPlanner`]).
const NEXT: &str = "A2A_REPLICA_NEXT";

/// How long a day takes to plan.
const PACE: Duration = Duration::from_millis(150);
/// A plan to this destination sleeps (durably) this long after its hold, before it plans.
const LATER: &str = "Sintra";
const NAP: Duration = Duration::from_millis(1500);

/// Which planner a replica process of a deploy test serves.
pub(crate) enum Version {
    /// Version 1.0.0 ([`Planner`]).
    First,
    /// Version 2.0.0 ([`NextPlanner`]).
    Next,
}

impl Version {
    /// The version the environment of this process names, if it is a deploy test's replica.
    pub(crate) fn served() -> Option<Version> {
        std::env::var_os(LEDGER)?;
        Some(match std::env::var_os(NEXT) {
            Some(_) => Version::Next,
            None => Version::First,
        })
    }

    /// Binds it, keeping its tasks in `tasks`.
    pub(crate) async fn bind(self, tasks: Tasks) -> Result<Listening, ServerError> {
        let planner = TripPlanner { pace: PACE };
        match self {
            Version::First => {
                Server::new(Planner(planner))
                    .tasks(tasks)
                    .bind("127.0.0.1:0")
                    .await
            }
            Version::Next => {
                Server::new(NextPlanner(planner))
                    .tasks(tasks)
                    .bind("127.0.0.1:0")
                    .await
            }
        }
    }
}

/// What to pack: a skill that is not durable, taking 100 ms an item.
#[derive(Debug, Deserialize, JsonSchema, Schema)]
#[serde(deny_unknown_fields)]
pub struct PackingList {
    /// How many items
    pub items: u8,
}

/// Packs `list`, 100 ms an item.
async fn pack(list: PackingList) -> String {
    tokio::time::sleep(Duration::from_millis(100) * u32::from(list.items)).await;
    format!("packed {}", list.items)
}

/// Writes `step TASK_ID` to the ledger file [`LEDGER`] names, as a step body's side effect that
/// the test counts.
fn ledger(step: &str, ctx: &SkillContext) {
    write_ledger(
        std::env::var_os(LEDGER).as_deref().map(Path::new),
        step,
        ctx,
    );
}

/// Appends `step TASK_ID` to the ledger file `path`, if there is one (each line one append, so
/// processes writing at once do not mix their lines).
pub(crate) fn write_ledger(path: Option<&Path>, step: &str, ctx: &SkillContext) {
    use std::io::Write;
    if let Some(path) = path {
        let line = format!("{step} {}\n", ctx.task_id.as_deref().unwrap_or("-"));
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        written.expect("the ledger is written");
    }
}

/// What each version does before it plans: a hotel held (a step); in version 2, the hold
/// confirmed (a step added behind marker `confirm`); for a trip [`LATER`], a durable sleep.
async fn prepare(ctx: &SkillContext, trip: &TripRequest, next: bool) -> Result<(), SkillError> {
    ctx.step("hold", async { ledger("hold", ctx) }).await?;
    if next && ctx.patched("confirm") {
        ctx.step("confirm", async { ledger("confirm", ctx) })
            .await?;
    }
    if trip.destination == LATER {
        ctx.sleep(NAP).await?;
    }
    Ok(())
}

/// Prepares (see [`prepare`]), then plans as the trip planner does.
async fn plan(
    planner: &TripPlanner,
    trip: TripRequest,
    calendar: Option<File>,
    ctx: SkillContext,
    next: bool,
) -> impl Stream<Item = Result<ItineraryDay, String>> + Send {
    match prepare(&ctx, &trip, next).await {
        Ok(()) => planner.plan_trip(trip, calendar, ctx).await.left_stream(),
        Err(e) => futures::stream::once(async move { Err(e.to_string()) }).right_stream(),
    }
}

/// The trip planner as the deploy tests run its version 1.0.0.
struct Planner(TripPlanner);

/// Plans trips day by day (version 1).
#[a2a_card::agent(url = "http://127.0.0.1:1", version = "1.0.0")]
impl Planner {
    /// # Plan Trip
    /// Holds a hotel, then plans a trip day by day and streams the itinerary.
    #[a2a_card::skill(durable, input_modes("text/calendar"))]
    async fn plan_trip(
        &self,
        trip: TripRequest,
        calendar: Option<File>,
        ctx: SkillContext,
    ) -> impl Stream<Item = Result<ItineraryDay, String>> + Send {
        plan(&self.0, trip, calendar, ctx, false).await
    }

    /// # Pack
    /// Packs for a trip.
    #[a2a_card::skill]
    async fn pack(&self, list: PackingList) -> String {
        pack(list).await
    }
}

/// The trip planner's next version: another card version (2.0.0), the same skills, their code
/// reached through other functions, and one step added on purpose behind a marker.
struct NextPlanner(TripPlanner);

/// Plans trips day by day (version 2).
#[a2a_card::agent(url = "http://127.0.0.1:1", version = "2.0.0")]
impl NextPlanner {
    /// # Plan Trip
    /// Holds a hotel and confirms it, then plans a trip day by day and streams the itinerary.
    #[a2a_card::skill(durable, input_modes("text/calendar"))]
    async fn plan_trip(
        &self,
        trip: TripRequest,
        calendar: Option<File>,
        ctx: SkillContext,
    ) -> impl Stream<Item = Result<ItineraryDay, String>> + Send {
        plan(&self.0, trip, calendar, ctx, true).await
    }

    /// # Pack
    /// Packs for a trip.
    #[a2a_card::skill]
    async fn pack(&self, list: PackingList) -> String {
        pack(list).await
    }
}

/// A replica of the planner on `url`, with a lease of 10 s, its step bodies writing to
/// `ledger`: version 1, or with `next` version 2.
fn deployed(url: &str, ledger: &Path, next: bool) -> Replica {
    let mut env = vec![
        (TASKS, url.to_owned()),
        (LEASE, "10000".to_owned()),
        (LEDGER, ledger.display().to_string()),
    ];
    if next {
        env.push((NEXT, "1".to_owned()));
    }
    Replica::spawn(crate::replicas::PROCESS, &env)
}

/// Where a client's retry goes: the address a load balancer would send it to now (empty
/// while no process serves, as when the one process on a SQLite file restarts).
type Fallback = std::sync::Arc<std::sync::Mutex<String>>;

/// Sends a blocking `SendMessage` of `data` (of schema `schema`) to `base` as a client that
/// may retry does: with an idempotency key, sent again to `fallback` (every 100 ms, for 30 s
/// at most) while the answer is that the agent is shutting down or nothing listens. Its
/// answer, in the background.
fn blocking(
    base: &str,
    fallback: &Fallback,
    schema: &str,
    data: Value,
) -> tokio::task::JoinHandle<Value> {
    let (mut url, fallback) = (base.to_owned(), fallback.clone());
    let message = json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
        "parts": [{"data": data, "mediaType": format!("application/json;schema={schema}")}]}});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": message});
    tokio::spawn(async move {
        let key = a2a::new_message_id();
        let mut last = Value::Null;
        for _ in 0..300 {
            let sent = reqwest::Client::new()
                .post(&url)
                .header("content-type", "application/json")
                .header("A2A-Version", "1.0")
                .header("Idempotency-Key", &key)
                .body(body.to_string())
                .send()
                .await;
            if let Ok(answer) = sent {
                let status = answer.status();
                let text = answer.text().await.unwrap_or_default();
                last = serde_json::from_str(&text)
                    .unwrap_or_else(|_| json!({"status": status.as_u16(), "body": text}));
                if status != reqwest::StatusCode::SERVICE_UNAVAILABLE {
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            let now = fallback.lock().expect("the fallback").clone();
            if !now.is_empty() {
                url = now;
            }
        }
        last
    })
}

/// A blocking plan of `days` from 2026-12-01 (see [`blocking`]).
fn blocking_plan(base: &str, fallback: &Fallback, days: u8) -> tokio::task::JoinHandle<Value> {
    let trip = json!({"destination": "Porto", "days": days, "start_date": "2026-12-01"});
    blocking(base, fallback, "tripRequest", trip)
}

/// A blocking call of the skill that is not durable, packing `items` (see [`blocking`]).
fn blocking_pack(base: &str, fallback: &Fallback, items: u8) -> tokio::task::JoinHandle<Value> {
    blocking(base, fallback, "packingList", json!({"items": items}))
}

/// Starts a two-day plan [`LATER`], which sleeps before it plans; its task.
async fn start_sleeping(on: &AgentClient) -> Task {
    let mut req = crate::support::client::request(
        vec![crate::support::client::data_part(
            "tripRequest",
            json!({"destination": LATER, "days": 2, "start_date": "2026-12-01"}),
        )],
        None,
    );
    req.configuration = Some(a2a::SendMessageConfiguration {
        accepted_output_modes: None,
        task_push_notification_config: None,
        history_length: None,
        return_immediately: Some(true),
    });
    crate::support::client::task(on.send_message(&req).await.expect("a task"))
}

/// What a deploy test started, to check once it is over.
#[derive(Default)]
struct Started {
    /// Plans running mid-stream, with their number of days.
    streaming: Vec<(Task, u64)>,
    /// Plans waiting for their date.
    waiting: Vec<Task>,
    /// Plans sleeping before they plan.
    sleeping: Vec<Task>,
    /// Blocking plans, answered in the background.
    plans: Vec<tokio::task::JoinHandle<Value>>,
    /// Blocking calls of the skill that is not durable, with their number of items.
    packs: Vec<(tokio::task::JoinHandle<Value>, u8)>,
}

impl Started {
    /// How many tasks these are.
    fn len(&self) -> usize {
        self.streaming.len()
            + self.waiting.len()
            + self.sleeping.len()
            + self.plans.len()
            + self.packs.len()
    }

    /// Starts `streaming` plans mid-stream, `sleeping` plans, `plans` blocking plans and
    /// `packs` blocking packs on the replica at `base`, and returns once they are all under
    /// way (the agent keeps `self.len()` tasks: the store keeps no other).
    async fn on(
        &mut self,
        base: &str,
        fallback: &Fallback,
        [streaming, sleeping, plans, packs]: [usize; 4],
    ) {
        // The blocking calls first (each its own client, in the background), then the plans
        // that run on after their call, all at once: all of it under way together.
        for i in 0..plans {
            self.plans
                .push(blocking_plan(base, fallback, 4 + (i % 5) as u8));
        }
        for i in 0..packs {
            let items = 5 + (i % 10) as u8;
            self.packs
                .push((blocking_pack(base, fallback, items), items));
        }
        let on = client(&card(base).await, "JSONRPC").await;
        let days: Vec<u8> = (0..streaming).map(|i| 10 + (i % 5) as u8).collect();
        let plans = futures::future::join_all(days.iter().map(|d| start_plan(&on, *d))).await;
        let naps = futures::future::join_all((0..sleeping).map(|_| start_sleeping(&on))).await;
        self.streaming
            .extend(plans.into_iter().zip(days.into_iter().map(u64::from)));
        self.sleeping.extend(naps);
        made(&on, self.len()).await;
    }

    /// Checks it all once the deploy is over, through `on` (its replica at `base`): every
    /// blocking call answered (none cut), the waiting plans answered, every plan completed
    /// once with each day once, each sleeping plan not before its deadline; no task left
    /// running. The ids of every plan.
    async fn check(self, on: &AgentClient, base: &str) -> Vec<String> {
        let mut every = Vec::new();
        for (i, answer) in self.plans.into_iter().enumerate() {
            let answer = answer.await.expect("the request ran");
            assert_eq!(
                answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
                "blocking plan {i}: {answer}"
            );
            let id = answer["result"]["task"]["id"]
                .as_str()
                .expect("the task's id");
            every.push(id.to_owned());
        }
        for (answer, items) in self.packs {
            let answer = answer.await.expect("the request ran");
            let task = &answer["result"]["task"];
            assert_eq!(
                task["status"]["state"], "TASK_STATE_COMPLETED",
                "a pack of {items}: {answer}"
            );
            let text = task["artifacts"][0]["parts"][0]["text"].as_str();
            assert_eq!(text, Some(format!("packed {items}").as_str()), "{answer}");
        }
        for t in &self.waiting {
            let answer = json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
                                "parts": [{"text": "2026-12-01"}], "taskId": t.id},
                                "configuration": {"returnImmediately": true}});
            let answered = rpc(base, "SendMessage", answer).await;
            assert!(answered["result"]["task"].is_object(), "{answered}");
        }
        for (plan, days) in &self.streaming {
            completed_with_days(on, &plan.id, *days).await;
        }
        for t in &self.waiting {
            completed_with_days(on, &t.id, 2).await;
        }
        for t in &self.sleeping {
            let done = completed_with_days(on, &t.id, 2).await;
            let began = made_at(&t.id);
            let ended = done.status.timestamp.expect("a status time");
            let took = Duration::from_millis((ended.timestamp_millis() - began).max(0) as u64);
            assert!(
                took >= NAP + PACE * 2,
                "{}: planned {took:?} after it began, before its sleep was over",
                t.id
            );
        }
        let running = on
            .list_tasks(&every_task())
            .await
            .expect("a list")
            .tasks
            .into_iter()
            .filter(|t| !t.status.state.is_terminal())
            .count();
        assert_eq!(running, 0, "no task left running");
        every.extend(self.streaming.into_iter().map(|(t, _)| t.id));
        every.extend(self.waiting.into_iter().map(|t| t.id));
        every.extend(self.sleeping.into_iter().map(|t| t.id));
        every
    }
}

/// When task `id` was made (milliseconds since the epoch): its id is a UUID v7.
fn made_at(id: &str) -> i64 {
    let hex: String = id.chars().filter(|c| *c != '-').take(12).collect();
    i64::from_str_radix(&hex, 16).expect("a UUID v7")
}

/// Waits (10 s at most) until the agent `on` reaches keeps `n` tasks: the calls sent to it
/// are under way.
async fn made(on: &AgentClient, n: usize) {
    for _ in 0..1000 {
        let listed = on.list_tasks(&every_task()).await.expect("a list");
        if usize::try_from(listed.total_size).is_ok_and(|made| made >= n) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the agent did not make {n} tasks within 10 s");
}

#[tokio::test]
async fn a_rolling_deploy_to_a_new_version_loses_nothing() {
    let Some(url) = postgres("rolling").await else {
        return;
    };
    let ledger = fresh_file("rolling").with_extension("ledger");
    let _ = std::fs::remove_file(&ledger);
    // Version 1 on two replicas, each with plans waiting for their date, then, as it gets
    // SIGTERM, plans mid-stream and asleep, blocking plans and blocking calls of a skill that
    // is not durable under way: 100 durable plans and 100 other calls in all.
    let mut old = [
        deployed(&url, &ledger, false),
        deployed(&url, &ledger, false),
    ];
    let mut started = Started::default();
    for replica in &old {
        let on = client(&card(&replica.base).await, "JSONRPC").await;
        for _ in 0..10 {
            started.waiting.push(start_waiting(&on).await);
        }
    }
    // Each replica in turn: SIGTERM while they run, replaced by version 2.
    let mut new: Vec<Replica> = Vec::new();
    let mut handovers = Vec::new();
    let mut replayed = Vec::new();
    for n in 0..old.len() {
        // Where a retry goes: the other replica of version 1, then the first of version 2.
        let fallback: Fallback = std::sync::Arc::new(std::sync::Mutex::new(match n {
            0 => old[1].base.clone(),
            _ => new[0].base.clone(),
        }));
        let replica = &mut old[n];
        let first = started.streaming.len();
        started.on(&replica.base, &fallback, [20, 15, 5, 50]).await;
        // One plan mid-stream: it streamed a day, so version 2 replays past the marker.
        let on = client(&card(&replica.base).await, "JSONRPC").await;
        let moving = started.streaming[first].0.clone();
        parts_at_least(&on, &moving.id, 1).await;
        replayed.push(moving.id.clone());
        let replacement = deployed(&url, &ledger, true);
        let owner_before = owner(&url, &moving.id).await;
        assert!(
            owner_before.is_some(),
            "a running plan has an owner: {:?}",
            on.get_task(&get(&moving.id)).await.map(|t| t.status)
        );
        let stopped = std::time::Instant::now();
        replica.terminate();
        // Its running plans that no call there waits for are handed over at once, not left to
        // the lease (10 s) nor to the drain (its blocking calls): another replica owns one
        // within a second of the SIGTERM, and it moves on.
        let taken = taken_over(
            &url,
            &moving.id,
            &owner_before,
            stopped,
            Duration::from_secs(5),
        )
        .await
        .expect("another replica took the plan over");
        assert!(
            taken < Duration::from_secs(1),
            "{taken:?}: not handed over at once"
        );
        let (status, _) = replica
            .exited_within(Duration::from_secs(30))
            .await
            .expect("the replica exits within its drain");
        let took = stopped.elapsed();
        assert!(status.success(), "replica {n} exited with {status}");
        let on = client(&card(&replacement.base).await, "JSONRPC").await;
        let before =
            crate::replicas::parts(&on.get_task(&get(&moving.id)).await.expect("the task"));
        let exited = std::time::Instant::now();
        let mut moved = None;
        while exited.elapsed() < Duration::from_secs(5) {
            let now = on.get_task(&get(&moving.id)).await.expect("the task");
            if crate::replicas::parts(&now) > before || now.status.state.is_terminal() {
                moved = Some(exited.elapsed());
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let moved = moved.expect("a plan of the stopped replica moved on");
        eprintln!(
            "replica {n}: its plan taken over {taken:?} after SIGTERM, on its next day {moved:?} after the exit, which was {took:?} after SIGTERM"
        );
        handovers.push(taken);
        new.push(replacement);
    }
    // Plans begun on version 2 take its new step.
    let on = client(&card(&new[0].base).await, "JSONRPC").await;
    let begun_new = vec![start_plan(&on, 2).await.id, start_plan(&on, 3).await.id];
    let durable = started.len() - started.packs.len();
    let every = started.check(&on, &new[1].base).await;
    assert_eq!(every.len(), durable);
    for id in &begun_new {
        completed_with_days(&on, id, if id == &begun_new[0] { 2 } else { 3 }).await;
    }
    let every: Vec<String> = every.into_iter().chain(begun_new.iter().cloned()).collect();
    steps_once(&ledger, &every, &begun_new, &replayed);
    eprintln!(
        "{durable} durable plans and 100 blocking calls of a skill that is not durable; handovers after each SIGTERM: {handovers:?}"
    );
}

#[tokio::test]
async fn a_restart_on_sqlite_to_a_new_version_loses_nothing() {
    // One process on the file at a time: the next version starts once the first has exited.
    let file = fresh_file("restart-deploy");
    let url = format!("sqlite://{}", file.display());
    let ledger = file.with_extension("ledger");
    let _ = std::fs::remove_file(&ledger);
    let mut first = deployed(&url, &ledger, false);
    let on = client(&card(&first.base).await, "JSONRPC").await;
    let mut started = Started::default();
    for _ in 0..5 {
        started.waiting.push(start_waiting(&on).await);
    }
    let fallback: Fallback = Default::default();
    started.on(&first.base, &fallback, [5, 3, 3, 10]).await;
    let moving = started.streaming[0].0.id.clone();
    parts_at_least(&on, &moving, 1).await;
    let stopped = std::time::Instant::now();
    first.terminate();
    first
        .exited_within(Duration::from_secs(30))
        .await
        .expect("the process exits within its drain");
    let exited = stopped.elapsed();
    let next = deployed(&url, &ledger, true);
    *fallback.lock().expect("the fallback") = next.base.clone();
    let on = client(&card(&next.base).await, "JSONRPC").await;
    let serving = stopped.elapsed();
    eprintln!(
        "SQLite restart: exited {exited:?} after SIGTERM, the next version served {serving:?} after it"
    );
    let begun_new = start_plan(&on, 2).await.id;
    let every = started.check(&on, &next.base).await;
    completed_with_days(&on, &begun_new, 2).await;
    let every: Vec<String> = every.into_iter().chain([begun_new.clone()]).collect();
    steps_once(&ledger, &every, &[begun_new], &[moving]);
}

/// Checks the ledger at `path` after a deploy: the step of version 1 (`hold`) ran once for
/// every plan of `every`, and for nothing else; the step version 2 added behind its marker
/// (`confirm`) ran at most once for any, once for each plan `begun_new` on version 2, and not
/// for a plan of version 1 `replayed` past the marker's place (it had streamed a day before it
/// was taken over).
fn steps_once(path: &Path, every: &[String], begun_new: &[String], replayed: &[String]) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut counts: HashMap<(&str, &str), usize> = HashMap::new();
    for line in text.lines() {
        let (step, task) = line.split_once(' ').expect("a ledger line: STEP TASK_ID");
        *counts.entry((step, task)).or_default() += 1;
    }
    let ran = |step: &str, id: &str| counts.get(&(step, id)).copied().unwrap_or(0);
    for id in every {
        assert_eq!(ran("hold", id), 1, "{id}: held {} times", ran("hold", id));
        let confirmed = ran("confirm", id);
        assert!(confirmed <= 1, "{id}: confirmed {confirmed} times");
    }
    for id in begun_new {
        let confirmed = ran("confirm", id);
        assert_eq!(
            confirmed, 1,
            "{id}, begun on version 2: confirmed {confirmed} times"
        );
    }
    for id in replayed {
        assert_eq!(
            ran("confirm", id),
            0,
            "{id}, replayed from version 1: confirmed"
        );
    }
    let strangers: Vec<_> = counts
        .keys()
        .filter(|(_, id)| !every.iter().any(|e| e == id))
        .collect();
    assert!(strangers.is_empty(), "steps of no plan: {strangers:?}");
    let total = |step: &str| -> usize {
        counts
            .iter()
            .filter(|((s, _), _)| *s == step)
            .map(|(_, n)| n)
            .sum()
    };
    eprintln!(
        "steps: {} holds, {} confirmations, for {} plans",
        total("hold"),
        total("confirm"),
        every.len()
    );
}
