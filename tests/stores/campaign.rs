//! The seeded fault campaign: three replicas of the trip planner on a Postgres cluster of the
//! test's own, each reaching it through a proxy the campaign controls, a fourth agent on
//! SQLite, and a travel agent whose durable skill calls a hotel agent's (each a process on
//! SQLite), under clients that do what users do (plans begun and answered, plans cancelled,
//! blocking sends retried with the same `Idempotency-Key`, long plans streamed and resumed
//! with `Last-Event-ID`, trips booked), while a schedule of overlapping faults drawn from a seed runs: `kill -9`
//! and restart, SIGTERM and restart, SIGSTOP past the lease, a replica's database connections
//! cut, slowed or partitioned, Postgres stopped, a replica restarted with its clock an hour or
//! 90 s off (libfaketime), the SQLite agent's disk full.
//!
//! Every request and what it was told is recorded (a JSON line each, under
//! `target/tmp/campaign/`, beside each replica's and the SQLite agent's own log,
//! `seed-N-PID-log-K.log`); once the faults heal, a checker reads the whole history against
//! the final state: every acknowledged write is there, a task's state never leaves an end it
//! reached, each stream's events came once and in order, each day of a plan (a durable step)
//! was planned once, each booking made one task at the hotel (its call sent once) and its steps
//! ran once but where a kill fell inside one, retries with the same key got the first task, the
//! replicas agree
//! within [`AGREE_WITHIN`], and nothing is left running. A failure prints its seed, and the
//! same seed draws the same schedule and the same clients' choices:
//!
//! ```sh
//! A2A_CAMPAIGN_SEED=7 cargo test --all-features --test stores campaign -- --nocapture
//! A2A_CAMPAIGN_SECONDS=600 A2A_CAMPAIGN_SCHEDULES=6 cargo test --all-features --test stores campaign -- --nocapture
//! ```
//!
//! `A2A_CAMPAIGN_SECONDS` (20 by default) is how long each schedule's faults run;
//! `A2A_CAMPAIGN_SCHEDULES` (1) how many schedules run, seeds following one another from
//! `A2A_CAMPAIGN_SEED` (the time, by default).
//!
//! The checker's own test runs a 4 s schedule and tells its history of an answer acknowledged
//! that no agent stored: the checker must name that task.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::calls::{ADDR, LEDGER, PROCESS as CALL_PROCESS, ROLE, TASKS as CALL_TASKS, URL};
use crate::faults::{call, date, dated_plan, days, ends, long_plan, plan};
use crate::replicas::{KEEP_ALL, LEASE_MS, LOG, PROCESS, TASKS};
use crate::support::disk::SmallDisk;
use crate::support::postgres::OwnCluster;
use crate::support::proxy::{Proxy, postgres_address};
use crate::support::replica::{Replica, clock_offset_or_skip};

/// The seed of the first schedule.
const SEED: &str = "A2A_CAMPAIGN_SEED";
/// How long each schedule's faults run, in seconds.
const SECONDS: &str = "A2A_CAMPAIGN_SECONDS";
/// How many schedules run.
const SCHEDULES: &str = "A2A_CAMPAIGN_SCHEDULES";
/// The replicas on Postgres.
const REPLICAS: usize = 3;
/// How soon after the faults heal the replicas must list the same tasks in the same states.
const AGREE_WITHIN: Duration = Duration::from_secs(10);
/// How many clients send at once.
const CLIENTS: usize = 6;
/// The travel agent's process, by index (after the replicas and the SQLite agent).
const TRAVEL: usize = REPLICAS + 1;
/// The hotel's.
const HOTEL: usize = REPLICAS + 2;

/// A small seeded generator (SplitMix64): the same seed, the same draws.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// A duration between `from` and `to` milliseconds.
    fn millis(&mut self, from: u64, to: u64) -> Duration {
        Duration::from_millis(from + self.below(to.saturating_sub(from) + 1))
    }
}

/// A kind of fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// `kill -9`, and started again after a while.
    Kill,
    /// SIGTERM (it drains and exits), and started again after a while.
    Terminate,
    /// SIGSTOP past its lease, then SIGCONT.
    Pause,
    /// Its database connections closed, and each new one, for a while.
    Cut,
    /// Its database connections slowed (each read held 50 to 300 ms) for a while.
    Slow,
    /// Nothing passes between it and the database, connections left open, for a while.
    Partition,
    /// Postgres stopped, and started again after a while.
    DatabaseDown,
    /// Restarted with its wall clock off (libfaketime), then restarted right.
    Clock,
    /// The SQLite agent's disk full for a while.
    DiskFull,
}

/// Where a fault falls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    /// Replica `n` on Postgres.
    Replica(usize),
    /// The agent on SQLite.
    Sqlite,
    /// The travel agent (its durable skill calls the hotel's).
    Travel,
    /// The hotel agent.
    Hotel,
    /// The database.
    Database,
}

impl std::fmt::Display for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Node::Replica(n) => write!(f, "replica {}", ["A", "B", "C"][*n]),
            Node::Sqlite => f.write_str("the SQLite agent"),
            Node::Travel => f.write_str("the travel agent"),
            Node::Hotel => f.write_str("the hotel agent"),
            Node::Database => f.write_str("Postgres"),
        }
    }
}

/// One fault of a schedule.
#[derive(Debug, Clone)]
struct Fault {
    at: Duration,
    lasts: Duration,
    kind: Kind,
    node: Node,
    /// A clock's offset (libfaketime's form), a slowness in milliseconds.
    detail: String,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "at {:>6.1} s for {:>4.1} s: {:?} {}{}",
            self.at.as_secs_f64(),
            self.lasts.as_secs_f64(),
            self.kind,
            self.node,
            if self.detail.is_empty() {
                String::new()
            } else {
                format!(" ({})", self.detail)
            }
        )
    }
}

/// The faults seed `seed` draws for `seconds` of campaign: about one every two seconds, at
/// random moments, so that they overlap; those that need what this machine lacks (a clock
/// offset, a disk to fill) left out.
fn schedule(seed: u64, seconds: u64, clock: bool, disk: bool) -> Vec<Fault> {
    let mut rng = Rng(seed);
    let lease: u64 = LEASE_MS.parse().unwrap_or(600);
    let mut kinds = vec![
        Kind::Kill,
        Kind::Terminate,
        Kind::Pause,
        Kind::Cut,
        Kind::Slow,
        Kind::Partition,
        Kind::DatabaseDown,
    ];
    if clock {
        kinds.push(Kind::Clock);
    }
    if disk {
        kinds.push(Kind::DiskFull);
    }
    let span = (seconds * 1000).saturating_sub(2_500).max(1_000);
    let mut faults: Vec<Fault> = (0..(seconds / 2).max(3))
        .map(|_| {
            let at = rng.millis(500, span);
            let kind = kinds[rng.below(kinds.len() as u64) as usize];
            let replica = Node::Replica(rng.below(REPLICAS as u64) as usize);
            let mut detail = String::new();
            let (node, lasts) = match kind {
                Kind::Kill | Kind::Terminate => {
                    let node = match rng.below(6) {
                        0 => Node::Sqlite,
                        1 => Node::Travel,
                        2 => Node::Hotel,
                        _ => replica,
                    };
                    (node, rng.millis(200, 2_000))
                }
                Kind::Pause | Kind::Partition => (replica, rng.millis(lease * 2, lease * 4)),
                Kind::Cut => (replica, rng.millis(300, 3_000)),
                Kind::Slow => {
                    detail = format!("{} ms a read", 50 + rng.below(251));
                    (replica, rng.millis(500, 3_000))
                }
                Kind::DatabaseDown => (Node::Database, rng.millis(500, 2_500)),
                Kind::Clock => {
                    detail = ["+1h", "-1h", "+90s", "-90s"][rng.below(4) as usize].to_owned();
                    (replica, rng.millis(1_000, 4_000))
                }
                Kind::DiskFull => (Node::Sqlite, rng.millis(500, 2_500)),
            };
            Fault {
                at,
                lasts,
                kind,
                node,
                detail,
            }
        })
        .collect();
    faults.sort_by_key(|f| f.at);
    faults
}

/// Which store a task is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
enum Group {
    Postgres,
    Sqlite,
    Travel,
}

/// One request and what it was told.
#[derive(serde::Serialize)]
struct Record {
    client: usize,
    op: &'static str,
    method: &'static str,
    base: String,
    task: Option<String>,
    sent_ms: u128,
    took_ms: u128,
    /// Whether a fault was on when it was sent or answered.
    during_fault: bool,
    ok: bool,
    said: String,
}

/// A stream a client followed: its task and the events it read, numbered.
struct Followed {
    group: Group,
    task: String,
    read: Result<Vec<(u64, Value)>, String>,
    subscriptions: usize,
}

/// Everything the clients did and were told.
#[derive(Default)]
struct History {
    records: Vec<Record>,
    /// Tasks whose creation was acknowledged.
    made: BTreeMap<String, Group>,
    /// Tasks acknowledged completed, with the days their answer carried.
    completed: BTreeMap<String, Vec<u64>>,
    /// Tasks a client was told had failed (and may end so).
    failed: BTreeSet<String>,
    /// Tasks a cancel was sent for, and those whose cancel was acknowledged.
    cancel_sent: BTreeSet<String>,
    canceled: BTreeSet<String>,
    /// The tasks a first sending and its retry (the same `messageId`) were answered with.
    retried: Vec<(String, String)>,
    /// Each state a client read of a task, in the order read.
    observed: Vec<(String, Instant, String)>,
    streams: Vec<Followed>,
}

/// The processes of one schedule, and what the clients reach.
struct World {
    cluster: OwnCluster,
    url: String,
    proxies: Vec<Proxy>,
    /// The replicas on Postgres, then the SQLite agent, the travel agent and the hotel.
    processes: Vec<tokio::sync::Mutex<Option<Replica>>>,
    sqlite_url: String,
    /// The travel agent's and the hotel's addresses (the same after a restart), files, and
    /// the ledger their steps write.
    travel_addr: String,
    hotel_addr: String,
    travel_db: std::path::PathBuf,
    hotel_db: std::path::PathBuf,
    ledger: std::path::PathBuf,
    /// Where each replica and the SQLite agent write their logs: this path with `-N.log`
    /// after it, N the process's index (a restarted process appends to its file).
    logs: std::path::PathBuf,
    /// The kills and SIGTERMs each process had, by index.
    stops: Vec<AtomicUsize>,
    disk: Option<SmallDisk>,
    /// The replicas' addresses, by replica.
    postgres: Arc<Mutex<Vec<String>>>,
    /// The SQLite agent's address.
    sqlite: Arc<Mutex<Vec<String>>>,
    /// Faults on now.
    faults_on: AtomicUsize,
    database: tokio::sync::Mutex<()>,
    started: Instant,
}

impl World {
    /// The environment of process `n` (the SQLite agent past the replicas, then the travel
    /// agent and the hotel), its clock off by `offset` where given.
    fn env(&self, n: usize, offset: Option<&str>) -> Vec<(&'static str, String)> {
        if n > REPLICAS {
            let (role, addr, db) = if n == TRAVEL {
                ("travel", &self.travel_addr, &self.travel_db)
            } else {
                ("hotel", &self.hotel_addr, &self.hotel_db)
            };
            return vec![
                (ROLE, role.to_owned()),
                (CALL_TASKS, format!("sqlite://{}", db.display())),
                (ADDR, addr.clone()),
                (LEDGER, self.ledger.display().to_string()),
                (URL, format!("http://{}", self.hotel_addr)),
            ];
        }
        let tasks = if n < REPLICAS {
            self.proxies[n].postgres_url(&self.url)
        } else {
            self.sqlite_url.clone()
        };
        let mut env = vec![(TASKS, tasks)];
        if n < REPLICAS {
            // The checker reads every task made back: none may be removed by retention (a
            // run of an hour makes more than the 10,000 finished tasks kept by default, and
            // the replicas' stores then removed the oldest, which the checker counted as
            // lost). The SQLite agent keeps its default, within its disk.
            env.push((KEEP_ALL, "1".to_owned()));
        }
        let log = format!("{}-{n}.log", self.logs.display());
        env.push((LOG, log));
        if let Some(clock) = offset.and_then(clock_offset_or_skip) {
            env.extend(clock);
        }
        env
    }

    /// Starts process `n`, asking again while it cannot start (its database down), and
    /// notes its address.
    async fn start(&self, n: usize, offset: Option<&str>) -> Replica {
        let env = self.env(n, offset);
        let begun = Instant::now();
        loop {
            let env = env.clone();
            let process = if n > REPLICAS { CALL_PROCESS } else { PROCESS };
            let spawned = tokio::task::spawn_blocking(move || {
                let env: Vec<(&str, String)> = env.iter().map(|(k, v)| (*k, v.clone())).collect();
                Replica::try_spawn(process, &env)
            })
            .await
            .map_err(|e| e.to_string())
            .and_then(|started| started);
            match spawned {
                Ok(replica) if n > REPLICAS => return replica,
                Ok(replica) => {
                    let bases = if n < REPLICAS {
                        &self.postgres
                    } else {
                        &self.sqlite
                    };
                    let mut bases = bases.lock().expect("the bases");
                    let at = if n < REPLICAS { n } else { 0 };
                    if bases.len() <= at {
                        bases.push(replica.base.clone());
                    } else {
                        bases[at] = replica.base.clone();
                    }
                    return replica;
                }
                Err(_) if begun.elapsed() < Duration::from_secs(60) => {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                }
                Err(e) => panic!("process {n} did not start again within 60 s: {e}"),
            }
        }
    }

    /// The process a fault on `node` falls on.
    fn process(&self, node: Node) -> Option<usize> {
        match node {
            Node::Replica(n) => Some(n),
            Node::Sqlite => Some(REPLICAS),
            Node::Travel => Some(TRAVEL),
            Node::Hotel => Some(HOTEL),
            Node::Database => None,
        }
    }

    /// Runs `fault` at its moment, and heals it after it lasted (faults on one process one
    /// after another: a later one waits for the earlier to heal).
    async fn inject(self: Arc<World>, fault: Fault) {
        tokio::time::sleep_until((self.started + fault.at).into()).await;
        let process = self.process(fault.node);
        let mut held = match process {
            Some(n) => Some(self.processes[n].lock().await),
            None => None,
        };
        let _database = match fault.node {
            Node::Database => Some(self.database.lock().await),
            _ => None,
        };
        self.faults_on.fetch_add(1, Ordering::SeqCst);
        let lasts = tokio::time::sleep(fault.lasts);
        match (fault.kind, process) {
            (Kind::Kill, Some(n)) => {
                if let Some(mut replica) = held.as_mut().and_then(|h| h.take()) {
                    replica.kill();
                    self.stops[n].fetch_add(1, Ordering::SeqCst);
                }
                lasts.await;
                let replica = self.start(n, None).await;
                if let Some(slot) = held.as_mut() {
                    **slot = Some(replica);
                }
            }
            (Kind::Terminate, Some(n)) => {
                if let Some(mut replica) = held.as_mut().and_then(|h| h.take()) {
                    replica.terminate();
                    self.stops[n].fetch_add(1, Ordering::SeqCst);
                    if replica
                        .exited_within(Duration::from_secs(15))
                        .await
                        .is_none()
                    {
                        // Within its drain timeout (30 s by default: a blocking send of a
                        // task at work is answered first), but past the grace this
                        // schedule gives it: killed, as an orchestrator would.
                        eprintln!(
                            "campaign: {} was still draining 15 s after SIGTERM: killed",
                            fault.node
                        );
                    }
                }
                lasts.await;
                let replica = self.start(n, None).await;
                if let Some(slot) = held.as_mut() {
                    **slot = Some(replica);
                }
            }
            (Kind::Clock, Some(n)) => {
                if let Some(mut replica) = held.as_mut().and_then(|h| h.take()) {
                    replica.kill();
                }
                let off = self.start(n, Some(&fault.detail)).await;
                lasts.await;
                drop(off);
                let replica = self.start(n, None).await;
                if let Some(slot) = held.as_mut() {
                    **slot = Some(replica);
                }
            }
            (Kind::Pause, Some(_)) => {
                if let Some(replica) = held.as_ref().and_then(|h| h.as_ref()) {
                    replica.pause();
                    lasts.await;
                    replica.resume();
                }
            }
            (Kind::Cut, Some(n)) => {
                self.proxies[n].cut();
                lasts.await;
                self.proxies[n].heal();
            }
            (Kind::Partition, Some(n)) => {
                self.proxies[n].partition();
                lasts.await;
                self.proxies[n].heal();
            }
            (Kind::Slow, Some(n)) => {
                let ms: u64 = fault
                    .detail
                    .split(' ')
                    .next()
                    .and_then(|m| m.parse().ok())
                    .unwrap_or(100);
                self.proxies[n].slow(Duration::from_millis(ms));
                lasts.await;
                self.proxies[n].heal();
            }
            (Kind::DatabaseDown, None) => {
                self.cluster.down();
                lasts.await;
                let mut tries = 0;
                while let Err(e) = self.cluster.up() {
                    tries += 1;
                    assert!(tries < 20, "Postgres does not start again: {e}");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
            (Kind::DiskFull, Some(_)) => {
                if let Some(disk) = &self.disk {
                    disk.fill();
                    lasts.await;
                    disk.free();
                }
            }
            (kind, _) => panic!(
                "a fault the schedule cannot draw: {kind:?} on {}",
                fault.node
            ),
        }
        self.faults_on.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A client of the campaign: what it sends, and where it notes what it was told.
struct Client {
    n: usize,
    rng: Rng,
    http: reqwest::Client,
    world: Arc<World>,
    history: Arc<Mutex<History>>,
}

impl Client {
    /// A base of `group`, drawn.
    fn base(&mut self, group: Group) -> String {
        let bases = match group {
            Group::Postgres => &self.world.postgres,
            Group::Sqlite => &self.world.sqlite,
            Group::Travel => return format!("http://{}", self.world.travel_addr),
        };
        let bases = bases.lock().expect("the bases").clone();
        bases[self.rng.below(bases.len() as u64) as usize].clone()
    }

    /// One JSON-RPC call, recorded.
    async fn call(
        &mut self,
        op: &'static str,
        method: &'static str,
        base: &str,
        task: Option<&str>,
        params: Value,
    ) -> Result<Value, String> {
        self.call_keyed(op, method, base, task, params, None).await
    }

    /// One JSON-RPC call with `Idempotency-Key` `key` where given, recorded.
    async fn call_keyed(
        &mut self,
        op: &'static str,
        method: &'static str,
        base: &str,
        task: Option<&str>,
        params: Value,
        key: Option<&str>,
    ) -> Result<Value, String> {
        let on = |w: &World| w.faults_on.load(Ordering::SeqCst) > 0;
        let during = on(&self.world);
        let sent = Instant::now();
        let answer = match key {
            None => call(&self.http, base, method, params).await,
            Some(key) => keyed(&self.http, base, method, params, key).await,
        };
        let during = during || on(&self.world);
        let said = match &answer {
            Ok(v) => v["task"]["status"]["state"]
                .as_str()
                .or_else(|| v["status"]["state"].as_str())
                .unwrap_or("ok")
                .to_owned(),
            Err(e) => e.chars().take(200).collect(),
        };
        let task = task.map(str::to_owned).or_else(|| {
            answer
                .as_ref()
                .ok()
                .and_then(|v| v["task"]["id"].as_str().map(str::to_owned))
        });
        let mut history = self.history.lock().expect("the history");
        if let (Some(id), Ok(v)) = (&task, &answer) {
            let state = v["task"]["status"]["state"]
                .as_str()
                .or_else(|| v["status"]["state"].as_str());
            if let Some(state) = state {
                history
                    .observed
                    .push((id.clone(), Instant::now(), state.to_owned()));
            }
        }
        history.records.push(Record {
            client: self.n,
            op,
            method,
            base: base.to_owned(),
            task,
            sent_ms: sent.duration_since(self.world.started).as_millis(),
            took_ms: sent.elapsed().as_millis(),
            during_fault: during,
            ok: answer.is_ok(),
            said,
        });
        answer
    }

    /// Sends for as long as `running`, each time an operation drawn.
    async fn run(mut self, running: Arc<AtomicBool>) {
        while running.load(Ordering::SeqCst) {
            let group = if self.rng.below(4) == 0 {
                Group::Sqlite
            } else {
                Group::Postgres
            };
            match self.rng.below(12) {
                0..=4 => self.plan_and_answer(group).await,
                5..=7 => self.retried(group).await,
                8..=9 => self.streamed(group).await,
                _ => self.booked().await,
            }
        }
    }

    /// A plan begun without its date, then answered (or, one time in four, cancelled).
    async fn plan_and_answer(&mut self, group: Group) {
        let base = self.base(group);
        let Ok(made) = self.call("plan", "SendMessage", &base, None, plan()).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            return;
        };
        let id = made["task"]["id"].as_str().unwrap_or_default().to_owned();
        self.history
            .lock()
            .expect("the history")
            .made
            .insert(id.clone(), group);
        // Answered once it asks, as a client watching it would.
        for _ in 0..40 {
            let base = self.base(group);
            let read = self
                .call("plan", "GetTask", &base, Some(&id), json!({"id": id}))
                .await;
            if read.is_ok_and(|t| t["status"]["state"] == "TASK_STATE_INPUT_REQUIRED") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(75)).await;
        }
        let base = self.base(group);
        if self.rng.below(4) == 0 {
            self.history
                .lock()
                .expect("the history")
                .cancel_sent
                .insert(id.clone());
            let cancelled = self
                .call("cancel", "CancelTask", &base, Some(&id), json!({"id": id}))
                .await;
            if cancelled.is_ok_and(|t| t["status"]["state"] == "TASK_STATE_CANCELED") {
                self.history
                    .lock()
                    .expect("the history")
                    .canceled
                    .insert(id);
            }
            return;
        }
        let answered = self
            .call("plan", "SendMessage", &base, Some(&id), date(&id))
            .await;
        if let Ok(task) = answered
            && task["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        {
            self.history
                .lock()
                .expect("the history")
                .completed
                .insert(id, days(&task["task"]));
        }
    }

    /// A blocking plan with its date, sent with an `Idempotency-Key`, then sent again with the
    /// same key (as a client that did not hear the first answer does), to any replica.
    async fn retried(&mut self, group: Group) {
        let params = dated_plan();
        let key = format!("campaign-{}-{}", self.n, self.rng.next());
        let mut got = Vec::new();
        for _ in 0..2 {
            let base = self.base(group);
            if let Ok(task) = self
                .call_keyed(
                    "retry",
                    "SendMessage",
                    &base,
                    None,
                    params.clone(),
                    Some(&key),
                )
                .await
            {
                let id = task["task"]["id"].as_str().unwrap_or_default().to_owned();
                let mut history = self.history.lock().expect("the history");
                history.made.insert(id.clone(), group);
                match task["task"]["status"]["state"].as_str() {
                    Some("TASK_STATE_COMPLETED") => {
                        history.completed.insert(id.clone(), days(&task["task"]));
                    }
                    // The first send's run could not be stored (a full disk), and the store's
                    // recovery failed the task: the retry is told so, truly.
                    Some("TASK_STATE_FAILED") => {
                        history.failed.insert(id.clone());
                    }
                    _ => {}
                }
                got.push(id);
            }
        }
        if let [first, second] = &got[..] {
            self.history
                .lock()
                .expect("the history")
                .retried
                .push((first.clone(), second.clone()));
        }
    }

    /// A trip booked at the travel agent (a durable skill that calls the hotel's), blocking.
    async fn booked(&mut self) {
        let base = self.base(Group::Travel);
        let params = json!({"message": {"messageId": a2a::new_message_id(), "role": "ROLE_USER",
            "parts": [{"text": "Lisbon"}]}});
        match self.call("book", "SendMessage", &base, None, params).await {
            Ok(task) => {
                let id = task["task"]["id"].as_str().unwrap_or_default().to_owned();
                self.history
                    .lock()
                    .expect("the history")
                    .made
                    .insert(id, Group::Travel);
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }

    /// A long plan begun, its stream followed to the end through the faults.
    async fn streamed(&mut self, group: Group) {
        let base = self.base(group);
        let Ok(made) = self
            .call("stream", "SendMessage", &base, None, long_plan())
            .await
        else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            return;
        };
        let id = made["task"]["id"].as_str().unwrap_or_default().to_owned();
        self.history
            .lock()
            .expect("the history")
            .made
            .insert(id.clone(), group);
        let bases = match group {
            Group::Postgres => Arc::clone(&self.world.postgres),
            Group::Sqlite | Group::Travel => Arc::clone(&self.world.sqlite),
        };
        let (read, subscriptions) = follow(bases, &id).await;
        self.history
            .lock()
            .expect("the history")
            .streams
            .push(Followed {
                group,
                task: id,
                read,
                subscriptions,
            });
    }
}

/// One JSON-RPC call to `base` with `Idempotency-Key` `key`, within 20 s: its answer, or
/// why none came.
async fn keyed(
    http: &reqwest::Client,
    base: &str,
    method: &str,
    params: Value,
    key: &str,
) -> Result<Value, String> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let answer = http
        .post(base)
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0")
        .header("Idempotency-Key", key)
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

/// Follows task `id`'s events as a client that resumes does: subscribes on the addresses
/// `bases` names in turn, and after a stream that broke off subscribes again after the last
/// event it read (`Last-Event-ID`), until the task's end (90 s at most).
async fn follow(
    bases: Arc<Mutex<Vec<String>>>,
    id: &str,
) -> (Result<Vec<(u64, Value)>, String>, usize) {
    use crate::support::sse::Frames;
    let mut read: Vec<(u64, Value)> = Vec::new();
    let started = Instant::now();
    let mut turn = 0;
    // Why the last subscription gave no event, for the report.
    let mut refused = String::from("none");
    // By address: the subscriptions refused, and those that ended having read nothing.
    let mut by_base: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    while started.elapsed() < Duration::from_secs(90) {
        turn += 1;
        let base = {
            let bases = bases.lock().expect("the bases");
            bases[turn % bases.len()].clone()
        };
        let last = read.last().map(|(n, _)| *n);
        let mut frames = match Frames::try_open(&base, "JSONRPC", id, last).await {
            Ok(frames) => frames,
            Err(why) => {
                if read.is_empty() && already_ended(&why) && ended(&base, id).await {
                    return (Ok(read), turn);
                }
                refused = format!("{base}: {why}");
                by_base.entry(base).or_default().0 += 1;
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        let before = read.len();
        let mut was_refused = false;
        // A stream that stays open (its keep-alives coming) and never reaches the task's end
        // is read no longer than the bound.
        while let Ok(Ok(Some((number, frame)))) = tokio::time::timeout(
            Duration::from_secs(90).saturating_sub(started.elapsed()),
            frames.try_next(),
        )
        .await
        {
            let Some(number) = number.filter(|_| frame.get("error").is_none()) else {
                // A stream that reached the task only after it ended (its sender was
                // answered, then faults kept every subscription out until the end): the
                // task is read instead, and must have ended.
                if read.is_empty() && already_ended(&frame.to_string()) && ended(&base, id).await {
                    return (Ok(read), turn);
                }
                refused = format!("{base}: {frame}");
                was_refused = true;
                break;
            };
            let end = ends(&frame);
            read.push((number, frame));
            if end {
                return (Ok(read), turn);
            }
        }
        // No stream but a JSON-RPC error, answered as plain JSON with status 200.
        let unread = frames.unread().trim();
        if !unread.is_empty() {
            if read.is_empty() && already_ended(unread) && ended(&base, id).await {
                return (Ok(read), turn);
            }
            refused = format!("{base}: {unread}");
            was_refused = true;
        }
        let tally = by_base.entry(base).or_default();
        match (was_refused, read.len() == before) {
            (true, _) => tally.0 += 1,
            (false, true) => tally.1 += 1,
            (false, false) => {}
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let by_base: Vec<String> = by_base
        .iter()
        .map(|(base, (refused, empty))| {
            format!("{base} refused {refused}, ended with nothing read {empty}")
        })
        .collect();
    (
        Err(format!(
            "the stream did not reach the task's end within 90 s: {} events read in {turn} \
             subscriptions ({}); the last refusal: {refused}",
            read.len(),
            by_base.join("; ")
        )),
        turn,
    )
}

/// Whether a subscription's refusal says its task had already ended.
fn already_ended(refusal: &str) -> bool {
    refusal.contains("already reached a terminal state")
}

/// Whether task `id`, read from the agent at `base`, has ended.
async fn ended(base: &str, id: &str) -> bool {
    let http = reqwest::Client::new();
    call(&http, base, "GetTask", json!({"id": id}))
        .await
        .is_ok_and(|task| terminal(task["status"]["state"].as_str().unwrap_or_default()))
}

/// Every task the agent at `base` lists, with its state.
async fn listed(http: &reqwest::Client, base: &str) -> Result<BTreeMap<String, String>, String> {
    let mut all = BTreeMap::new();
    let mut token = String::new();
    loop {
        let page = call(
            http,
            base,
            "ListTasks",
            json!({"pageSize": 100, "pageToken": token}),
        )
        .await?;
        for task in page["tasks"].as_array().into_iter().flatten() {
            let id = task["id"].as_str().unwrap_or_default().to_owned();
            let state = task["status"]["state"].as_str().unwrap_or_default();
            all.insert(id, state.to_owned());
        }
        token = page["nextPageToken"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if token.is_empty() {
            return Ok(all);
        }
    }
}

/// How the replicas at `bases` disagree in their listings `lists` (in the same order): each
/// that could not list, and the first tasks whose states differ.
fn disagreement(bases: &[String], lists: &[Result<BTreeMap<String, String>, String>]) -> String {
    let mut said = Vec::new();
    for (base, list) in bases.iter().zip(lists) {
        match list {
            Err(e) => said.push(format!("{base} cannot list ({e})")),
            Ok(tasks) => said.push(format!("{base} lists {}", tasks.len())),
        }
    }
    let listed: Vec<(&String, &BTreeMap<String, String>)> = bases
        .iter()
        .zip(lists)
        .filter_map(|(base, list)| list.as_ref().ok().map(|l| (base, l)))
        .collect();
    let ids: BTreeSet<&String> = listed.iter().flat_map(|(_, l)| l.keys()).collect();
    let differ = ids.into_iter().filter(|id| {
        let states: BTreeSet<Option<&String>> = listed.iter().map(|(_, l)| l.get(*id)).collect();
        states.len() > 1
    });
    for id in differ.take(5) {
        let states: Vec<String> = listed
            .iter()
            .map(|(base, l)| format!("{base} {}", l.get(id).map_or("(none)", String::as_str)))
            .collect();
        said.push(format!("{id}: {}", states.join(", ")));
    }
    said.join("; ")
}

/// What one schedule showed.
#[derive(Default)]
struct Figures {
    faults: BTreeMap<Kind, usize>,
    requests: usize,
    refused: usize,
    refused_during_faults: usize,
    acknowledged: usize,
    streams: usize,
    subscriptions: usize,
    bookings: usize,
    /// When the listings that found the replicas agreeing began, after the faults healed.
    agreed_after: Duration,
    /// How long those listings took.
    listed_in: Duration,
    lost: Vec<String>,
}

/// Whether `state` ends a task.
fn terminal(state: &str) -> bool {
    matches!(
        state,
        "TASK_STATE_COMPLETED"
            | "TASK_STATE_FAILED"
            | "TASK_STATE_CANCELED"
            | "TASK_STATE_REJECTED"
    )
}

/// File `name` of schedule `seed` in `dir`, none there yet.
fn fresh(dir: &std::path::Path, seed: u64, name: &str) -> std::path::PathBuf {
    let path = dir.join(format!("seed-{seed}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// One schedule at a time in this process: two at once on the same cores would each run
/// slower than a schedule is meant to.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Runs the schedule of `seed` for `seconds`: its figures, and what the checker found wrong.
async fn campaign(seed: u64, seconds: u64) -> Option<Figures> {
    campaign_tampered(seed, seconds, |_| {}).await
}

/// [`campaign`], with the history changed by `tamper` before it is checked (the checker's
/// own test gives it an acknowledgment the agents never made).
async fn campaign_tampered(
    seed: u64,
    seconds: u64,
    tamper: impl FnOnce(&mut History),
) -> Option<Figures> {
    let _alone = ONE_AT_A_TIME.lock().await;
    let cluster = OwnCluster::start_or_skip(&format!("campaign-{seed}"))?;
    let url = cluster.url();
    let mut proxies = Vec::new();
    for _ in 0..REPLICAS {
        proxies.push(Proxy::start(postgres_address(&url)).await);
    }
    // Room for the SQLite agent's store at its retention bound (64 MiB by default) and its
    // write-ahead log: what fills this disk is the fault, never the load. (A 24 MiB disk was
    // filled by the tasks of a run's first half hour, and the agent could not start again.)
    let disk = SmallDisk::mount_or_skip(&format!("campaign-{seed}"), "96m");
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("campaign");
    std::fs::create_dir_all(&dir).expect("a directory");
    let sqlite_file = match &disk {
        Some(disk) => disk.path().join("tasks.db"),
        None => dir.join(format!("seed-{seed}-{}.db", std::process::id())),
    };
    let clock = clock_offset_or_skip("+1h").is_some();
    let faults = schedule(seed, seconds, clock, disk.is_some());
    eprintln!(
        "campaign seed {seed}: {} faults in {seconds} s{}{}",
        faults.len(),
        if clock {
            ""
        } else {
            " (no clock faults: libfaketime missing)"
        },
        if disk.is_some() {
            ""
        } else {
            " (no full disk: no tmpfs here)"
        }
    );
    for fault in &faults {
        eprintln!("  {fault}");
    }
    let world = Arc::new(World {
        cluster,
        url,
        proxies,
        processes: (0..=HOTEL).map(|_| tokio::sync::Mutex::new(None)).collect(),
        sqlite_url: format!("sqlite://{}", sqlite_file.display()),
        travel_addr: crate::calls::free_addr(),
        hotel_addr: crate::calls::free_addr(),
        travel_db: fresh(&dir, seed, "travel.db"),
        hotel_db: fresh(&dir, seed, "hotel.db"),
        ledger: fresh(&dir, seed, "ledger"),
        logs: fresh(&dir, seed, "log"),
        stops: (0..=HOTEL).map(|_| AtomicUsize::new(0)).collect(),
        disk,
        postgres: Arc::default(),
        sqlite: Arc::default(),
        faults_on: AtomicUsize::new(0),
        database: tokio::sync::Mutex::new(()),
        started: Instant::now(),
    });
    // The hotel before the travel agent, which reads its card as it starts.
    for n in [0, 1, 2, REPLICAS, HOTEL, TRAVEL] {
        let replica = world.start(n, None).await;
        *world.processes[n].lock().await = Some(replica);
    }
    // The clock of the schedule starts once every process serves.
    let world = Arc::new(World {
        started: Instant::now(),
        ..Arc::try_unwrap(world)
            .ok()
            .expect("no one else holds it yet")
    });

    let history = Arc::new(Mutex::new(History::default()));
    let running = Arc::new(AtomicBool::new(true));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|n| {
            let client = Client {
                n,
                rng: Rng(seed ^ (n as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407)),
                http: reqwest::Client::new(),
                world: Arc::clone(&world),
                history: Arc::clone(&history),
            };
            tokio::spawn(client.run(Arc::clone(&running)))
        })
        .collect();
    let mut figures = Figures::default();
    for fault in &faults {
        *figures.faults.entry(fault.kind).or_default() += 1;
    }
    let injected: Vec<_> = faults
        .iter()
        .cloned()
        .map(|fault| tokio::spawn(Arc::clone(&world).inject(fault)))
        .collect();
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    for fault in injected {
        fault.await.expect("a fault injected and healed");
    }
    let faults_healed = Instant::now();
    running.store(false, Ordering::SeqCst);
    for client in clients {
        client.await.expect("a client");
    }
    // Healed, and the load stopped (each client's last operation ended).
    let healed = Instant::now();

    let http = reqwest::Client::new();
    let postgres = world.postgres.lock().expect("the bases").clone();
    let sqlite = world.sqlite.lock().expect("the bases").clone();
    let travel = vec![format!("http://{}", world.travel_addr)];
    let hotel = format!("http://{}", world.hotel_addr);
    // The replicas agree: the same tasks, in the same states, in listings taken at once (a
    // round of listings begun within a minute, or the last disagreement is reported). When
    // they agreed is when the round that found them agreeing began: after an hour's load a
    // replica's listing is hundreds of pages, and the time it takes says nothing of when its
    // store agreed.
    // How they disagreed when the bound went by (or last, if they never agreed).
    let mut at_bound = None;
    let agreed = loop {
        let began = Instant::now();
        let lists =
            futures::future::join_all(postgres.iter().map(|base| listed(&http, base))).await;
        figures.agreed_after = began.duration_since(healed);
        if lists.iter().all(|l| l.is_ok()) && lists.windows(2).all(|w| w[0] == w[1]) {
            figures.listed_in = began.elapsed();
            break true;
        }
        if figures.agreed_after > AGREE_WITHIN && at_bound.is_none() {
            at_bound = Some(disagreement(&postgres, &lists));
        }
        if figures.agreed_after > Duration::from_secs(60) {
            at_bound = Some(disagreement(&postgres, &lists));
            break false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut lost = Vec::new();
    if !agreed || figures.agreed_after > AGREE_WITHIN {
        lost.push(format!(
            "the replicas did not agree within {AGREE_WITHIN:?} of the faults healing (in listings \
             begun {:?} after, {}; the load stopped {:?} after the last fault healed): {}",
            figures.agreed_after,
            match agreed {
                true => "they agreed",
                false => "they never agreed",
            },
            healed.duration_since(faults_healed),
            at_bound.unwrap_or_default()
        ));
    }

    // Every plan still waiting (its answer refused, or never sent) answered now, until it ends
    // (a booking, which asks nothing, waited for): eight at a time (after an hour, hundreds
    // wait), for ten minutes at most in all (a run with many plans that never end would
    // otherwise take hours to report; those not reached are reported as never ending).
    let answering_until = Instant::now() + Duration::from_secs(600);
    for (group, bases) in [
        (Group::Postgres, &postgres),
        (Group::Sqlite, &sqlite),
        (Group::Travel, &travel),
    ] {
        use futures::StreamExt as _;
        let Ok(every) = listed(&http, &bases[0]).await else {
            lost.push(format!("{group:?}: the tasks cannot be listed"));
            continue;
        };
        let waiting = every.into_iter().filter(|(_, state)| !terminal(state));
        let http = &http;
        let never: Vec<Option<String>> = futures::stream::iter(waiting)
            .map(|(id, state)| async move {
                for turn in 0..60 {
                    if Instant::now() > answering_until {
                        return Some(format!(
                            "{id} ({group:?}): left {state}, not ended when the checker's ten \
                             minutes of answering ran out"
                        ));
                    }
                    let base = &bases[turn % bases.len()];
                    if let Ok(task) = call(http, base, "GetTask", json!({"id": id})).await
                        && terminal(task["status"]["state"].as_str().unwrap_or_default())
                    {
                        return None;
                    }
                    if turn % 4 == 0 && group != Group::Travel {
                        let _ = call(http, base, "SendMessage", date(&id)).await;
                    }
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                Some(format!("{id} ({group:?}): left {state}, never ends"))
            })
            .buffer_unordered(8)
            .collect()
            .await;
        lost.extend(never.into_iter().flatten());
    }

    // The history, checked against the final state.
    let mut history = Arc::try_unwrap(history)
        .ok()
        .expect("the clients are done")
        .into_inner()
        .expect("the history");
    tamper(&mut history);
    let mut last = BTreeMap::new();
    for (group, bases) in [
        (Group::Postgres, &postgres),
        (Group::Sqlite, &sqlite),
        (Group::Travel, &travel),
    ] {
        for base in bases.iter() {
            match listed(&http, base).await {
                Ok(tasks) => {
                    last.insert((group, base.clone()), tasks);
                }
                Err(e) => lost.push(format!("{base} ({group:?}) cannot list its tasks: {e}")),
            }
        }
    }
    let lists: Vec<_> = last
        .iter()
        .filter(|((g, _), _)| *g == Group::Postgres)
        .map(|(_, l)| l)
        .collect();
    if lists.windows(2).any(|w| w[0] != w[1]) {
        lost.push("the replicas list different tasks or states at the end".to_owned());
    }
    let final_state = |group: Group, id: &str| -> Option<String> {
        last.iter()
            .find(|((g, _), _)| *g == group)
            .and_then(|(_, l)| l.get(id).cloned())
    };
    let read = async |group: Group, id: &str| -> Option<Value> {
        let bases = match group {
            Group::Postgres => &postgres,
            Group::Sqlite => &sqlite,
            Group::Travel => &travel,
        };
        call(&http, &bases[0], "GetTask", json!({"id": id}))
            .await
            .ok()
    };
    for (id, group) in &history.made {
        let state = final_state(*group, id);
        let cancelled = history.cancel_sent.contains(id);
        match state.as_deref() {
            None => lost.push(format!("{id} ({group:?}): acknowledged made, not stored")),
            Some("TASK_STATE_COMPLETED") if *group == Group::Travel => {}
            Some("TASK_STATE_COMPLETED") => {
                // Each day planned once (a durable step): the days 1..=N, once each.
                if let Some(task) = read(*group, id).await {
                    let got = days(&task);
                    let expected: Vec<u64> = (1..=got.len() as u64).collect();
                    if got.is_empty() || got != expected {
                        lost.push(format!("{id} ({group:?}): completed with days {got:?}"));
                    }
                }
            }
            Some("TASK_STATE_CANCELED") if cancelled => {}
            Some("TASK_STATE_FAILED") if history.failed.contains(id) => {}
            Some(other) => lost.push(format!(
                "{id} ({group:?}): acknowledged made{}, ended {other}",
                if cancelled { " and cancel sent" } else { "" }
            )),
        }
    }
    for (id, acknowledged) in &history.completed {
        let group = history.made.get(id).copied().unwrap_or(Group::Postgres);
        match read(group, id).await {
            Some(task)
                if task["status"]["state"] == "TASK_STATE_COMPLETED"
                    && days(&task) == *acknowledged => {}
            other => lost.push(format!(
                "{id} ({group:?}): acknowledged completed with {acknowledged:?}, reads {other:?}"
            )),
        }
    }
    for id in &history.canceled {
        let group = history.made.get(id).copied().unwrap_or(Group::Postgres);
        if final_state(group, id).as_deref() != Some("TASK_STATE_CANCELED") {
            lost.push(format!(
                "{id} ({group:?}): acknowledged cancelled, ends {:?}",
                final_state(group, id)
            ));
        }
    }
    for (first, second) in &history.retried {
        if first != second {
            lost.push(format!(
                "a retry with the same messageId made a second task: {first} then {second}"
            ));
        }
    }
    // A state read once a task ended is that end.
    let mut ends_read: BTreeMap<&str, (&str, Instant)> = BTreeMap::new();
    let mut observed: Vec<_> = history.observed.iter().collect();
    observed.sort_by_key(|(_, at, _)| *at);
    for (id, at, state) in observed {
        if let Some((end, when)) = ends_read.get(id.as_str()) {
            if end != state {
                lost.push(format!(
                    "{id}: read {state} {:?} after it was read {end}",
                    at.duration_since(*when)
                ));
            }
        } else if terminal(state) {
            ends_read.insert(id, (state, *at));
        }
    }
    // Each booking made one task at the hotel (its call sent once, or sent again with the same
    // key and answered with the first task), and its steps ran once, but where a kill or a
    // SIGTERM of their process fell inside one (the book's promise for a step).
    let bookings = last
        .iter()
        .find(|((g, _), _)| *g == Group::Travel)
        .map(|(_, l)| l.clone())
        .unwrap_or_default();
    match listed(&http, &hotel).await {
        Ok(held) if held.len() == bookings.len() => {}
        Ok(held) => lost.push(format!(
            "{} bookings made {} tasks at the hotel",
            bookings.len(),
            held.len()
        )),
        Err(e) => lost.push(format!("the hotel cannot list its tasks: {e}")),
    }
    let ledger = std::fs::read_to_string(&world.ledger).unwrap_or_default();
    let mut runs: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for line in ledger.lines() {
        let (Some(step), Some(task)) = (line.split(' ').next(), line.split(' ').next_back()) else {
            continue;
        };
        *runs.entry((step, task)).or_default() += 1;
    }
    let stopped = |n: usize| world.stops[n].load(Ordering::SeqCst);
    for ((step, task), n) in &runs {
        let stops = if *step == "hold" {
            stopped(HOTEL)
        } else {
            stopped(TRAVEL)
        };
        if *n > 1 + stops {
            lost.push(format!(
                "step `{step}` of {task} ran {n} times, with {stops} stops of its process"
            ));
        }
    }
    for (id, state) in &bookings {
        if state == "TASK_STATE_COMPLETED" && !runs.contains_key(&("use", id.as_str())) {
            lost.push(format!(
                "booking {id} completed without using the hotel's answer"
            ));
        }
    }
    figures.bookings = bookings.len();
    for followed in &history.streams {
        figures.subscriptions += followed.subscriptions;
        let read = match &followed.read {
            Ok(read) => read,
            Err(e) => {
                lost.push(format!("{} ({:?}): {e}", followed.task, followed.group));
                continue;
            }
        };
        let numbers: Vec<u64> = read.iter().map(|(n, _)| *n).collect();
        let first = numbers.first().copied().unwrap_or(0);
        let expected: Vec<u64> = (first..first + numbers.len() as u64).collect();
        if numbers != expected {
            lost.push(format!(
                "{} ({:?}): events read {numbers:?}, not each once in order",
                followed.task, followed.group
            ));
        }
        figures.streams += 1;
    }

    figures.requests = history.records.len();
    for record in &history.records {
        if record.ok {
            figures.acknowledged += 1;
        } else {
            figures.refused += 1;
            if record.during_fault {
                figures.refused_during_faults += 1;
            }
        }
    }
    // The history, kept for reading.
    let kept = dir.join(format!("seed-{seed}.jsonl"));
    let lines: Vec<String> = history
        .records
        .iter()
        .filter_map(|r| serde_json::to_string(r).ok())
        .collect();
    let _ = std::fs::write(&kept, lines.join("\n") + "\n");
    eprintln!(
        "campaign seed {seed}: {} requests ({} acknowledged, {} refused, {} of them during a fault); \
         {} tasks made, {} answers acknowledged completed, {} cancels acknowledged, {} retries; \
         {} streams followed ({} subscriptions); {} bookings; the replicas agreed {:?} after the \
         faults healed (their listings took {:?}); lost: {}; history in {}",
        figures.requests,
        figures.acknowledged,
        figures.refused,
        figures.refused_during_faults,
        history.made.len(),
        history.completed.len(),
        history.canceled.len(),
        history.retried.len(),
        figures.streams,
        figures.subscriptions,
        figures.bookings,
        figures.agreed_after,
        figures.listed_in,
        lost.len(),
        kept.display()
    );
    figures.lost = lost;
    Some(figures)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seeded_schedule_of_faults_loses_nothing_acknowledged() {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let first = var(SEED).unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_secs())
    });
    let seconds = var(SECONDS).unwrap_or(20);
    let schedules = var(SCHEDULES).unwrap_or(1);
    let mut agreed = Vec::new();
    let mut faults: BTreeMap<Kind, usize> = BTreeMap::new();
    let (mut requests, mut refused, mut during, mut acknowledged) = (0, 0, 0, 0);
    for seed in first..first + schedules {
        let Some(figures) = campaign(seed, seconds).await else {
            return;
        };
        assert!(
            figures.lost.is_empty(),
            "campaign seed {seed} (replay it: A2A_CAMPAIGN_SEED={seed} A2A_CAMPAIGN_SECONDS={seconds} \
             cargo test --all-features --test stores campaign -- --nocapture) found:\n{}",
            figures.lost.join("\n")
        );
        assert!(
            figures.acknowledged > 20,
            "seed {seed}: the load ran ({} acknowledged)",
            figures.acknowledged
        );
        agreed.push(figures.agreed_after);
        for (kind, n) in figures.faults {
            *faults.entry(kind).or_default() += n;
        }
        requests += figures.requests;
        refused += figures.refused;
        during += figures.refused_during_faults;
        acknowledged += figures.acknowledged;
    }
    agreed.sort();
    let at = |q: f64| agreed[((agreed.len() as f64 - 1.0) * q).round() as usize];
    eprintln!(
        "campaign: {schedules} schedule(s) of {seconds} s from seed {first}; faults {faults:?}; \
         {requests} requests, {acknowledged} acknowledged, {refused} refused ({during} during a fault), \
         0 lost; agreed after healing: p50 {:?}, p99 {:?}",
        at(0.5),
        at(0.99)
    );
}

/// The checker's own test: a short schedule whose history is told of an answer acknowledged
/// completed that no agent stored (a plan's days it never had) is reported lost, by task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_checker_catches_an_acknowledged_answer_that_was_not_stored() {
    let mut forged = None;
    let Some(figures) = campaign_tampered(7, 4, |history| {
        let id = history
            .made
            .iter()
            .find(|(_, group)| **group == Group::Postgres)
            .map(|(id, _)| id.clone())
            .expect("a task made on Postgres in 4 s");
        history.completed.insert(id.clone(), vec![99]);
        forged = Some(id);
    })
    .await
    else {
        return;
    };
    let forged = forged.expect("the history was tampered with");
    assert!(
        figures
            .lost
            .iter()
            .any(|lost| lost.starts_with(&forged)
                && lost.contains("acknowledged completed with [99]")),
        "the forged answer of {forged} is caught: {:#?}",
        figures.lost
    );
}
