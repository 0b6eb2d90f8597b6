//! Crash at every point ([`CrashPoints`]): a durable skill's task run once per point of its
//! journal, its process stopped there as `kill -9` stops it, and run again by a fresh agent on
//! the same SQLite file; what each run did, set beside the run nobody stopped.
//!
//! A point is a journal write: a step's start (written before its body runs), its result, a
//! sleep's deadline, an answer, a marker, a call of another agent and its answer; and, last,
//! the write that ends the task. Stopped at point `k`, the agent stored the `k` writes before
//! it and nothing after (no entry, no event, no status): its run is dropped at its next
//! `.await`, with its runtime, as a killed process's. The agent that takes the task over
//! replays the journal, asks again what was not answered, and ends the task.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a::{A2AError, ListTasksRequest, ListTasksResponse, Task, TaskState};
use a2a_server::TaskStore;
use a2a_server::task_store::TaskVersion;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::{TempDir, TestAgent, TestClock, TestError};
use crate::Agent;
use crate::client::Payload;
use crate::journal::{Entry, STARTS};
use crate::server::Server;
use crate::server::store::{
    ChangeFeed, DEFAULT_LEASE, Event, EventLog, KeyClaim, Logged, Recovery, Retention, SqlTasks,
    Store, Tasks,
};

/// A durable skill's task, stopped at each point of its journal as `kill -9` stops a process,
/// and run again by a fresh agent on the same SQLite file: [`run`](Self::run) reports, per
/// point, how often each step's body ran and whether the task ended as the run nobody
/// stopped ended. One call in a test:
///
/// ```
/// use a2a_card::client::Payload;
/// use a2a_card::server::Server;
/// use a2a_card::testing::CrashPoints;
/// use a2a_card::{SkillContext, SkillError, agent, skill};
///
/// struct Shop;
/// /// Sells.
/// #[agent(url = "https://shop.example.com/a2a")]
/// impl Shop {
///     /// Charges, waits a day, ships.
///     #[skill(durable)]
///     async fn order(&self, item: String, ctx: SkillContext) -> Result<String, SkillError> {
///         let receipt: u32 = ctx.step("charge", async { 7 }).await?;
///         ctx.sleep(std::time::Duration::from_secs(24 * 3600)).await?;
///         ctx.step("ship", async {}).await?;
///         Ok(format!("{item}: receipt {receipt}, shipped"))
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// let report = CrashPoints::new(|| Server::new(Shop), "order", Payload::text("a lamp"))
///     .run()
///     .await?;
/// report.assert_survives(); // each point: the same outcome, each body run once (twice where
///                           // the crash fell inside it)
/// assert_eq!(report.points().len(), 6); // charge begun, charge, sleep, ship begun, ship, end
/// assert_eq!(report.points()[1].runs()["charge"], 2, "stopped before its result was kept");
/// # Ok::<(), Box<dyn std::error::Error>>(()) })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// The server `make` builds is given a SQLite file and a [`TestClock`] of the run's own (what
/// it set for either is replaced); the clock is moved to each sleep's deadline as the handler
/// reaches it. Calls of other agents go where the skill sends them: an agent that must not be
/// called twice is not the harness's to stand in for.
pub struct CrashPoints<A: Agent> {
    make: Arc<dyn Fn() -> Server<A> + Send + Sync>,
    skill: String,
    input: Payload,
    answers: Vec<Payload>,
    timeout: Duration,
    /// The Postgres database the runs share, where one is named (else a SQLite file a run).
    postgres: Option<String>,
}

impl<A: Agent> fmt::Debug for CrashPoints<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CrashPoints")
            .field("skill", &self.skill)
            .field("answers", &self.answers.len())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl<A: Agent> CrashPoints<A> {
    /// Skill `skill` of the agent `make` serves, sent `input` (as
    /// [`RemoteAgent::message`](crate::client::RemoteAgent::message) sends it: checked against
    /// the skill's input schema). `make` is called for each agent the harness starts.
    pub fn new(
        make: impl Fn() -> Server<A> + Send + Sync + 'static,
        skill: impl Into<String>,
        input: Payload,
    ) -> CrashPoints<A> {
        CrashPoints {
            make: Arc::new(make),
            skill: skill.into(),
            input,
            answers: Vec::new(),
            timeout: Duration::from_secs(30),
            postgres: None,
        }
    }

    /// Each agent on the Postgres database at `url` instead of a SQLite file (feature
    /// `postgres`): the agent that takes a task over is another replica of the database, which
    /// finds it given up by the one that stopped. The runs share the database, one after the
    /// other (each task its own).
    #[cfg(feature = "postgres")]
    #[must_use]
    pub fn on_postgres(mut self, url: impl Into<String>) -> CrashPoints<A> {
        self.postgres = Some(url.into());
        self
    }

    /// The answer to the task's next question (each question the handler asks takes the next
    /// answer; a question asked again after a crash gets the same one again).
    #[must_use]
    pub fn answer(mut self, answer: Payload) -> CrashPoints<A> {
        self.answers.push(answer);
        self
    }

    /// How long one run may take before the harness gives up on it (30 s by default).
    #[must_use]
    pub fn timeout(mut self, per_run: Duration) -> CrashPoints<A> {
        self.timeout = per_run;
        self
    }

    /// Runs the task once without a crash, then once per point of its journal, each stopped
    /// there and taken over by a fresh agent. An error when the run nobody stopped does not
    /// end (within the timeout), or an agent cannot be started.
    pub async fn run(self) -> Result<CrashReport, TestError> {
        let dir = TempDir::new()
            .map_err(|e| TestError::Answer(format!("no temporary directory: {e}")))?;
        let plan = Arc::new(Plan {
            make: Arc::clone(&self.make),
            skill: self.skill.clone(),
            input: self.input,
            answers: self.answers,
            timeout: self.timeout,
        });
        let url = |name: &str| match &self.postgres {
            Some(url) => url.clone(),
            None => crate::server::store::sqlite_url(&dir.path.join(format!("{name}.db"))),
        };
        let whole = run_point(&plan, url("uninterrupted"), None).await;
        let whole = match whole {
            Ran {
                outcome: Ok(outcome),
                tally,
                ..
            } => Uninterrupted {
                outcome,
                runs: tally.runs,
                entries: tally.entries,
            },
            Ran {
                outcome: Err(why), ..
            } => {
                return Err(TestError::Answer(format!(
                    "skill `{}` did not end when nothing stopped it: {why}",
                    self.skill
                )));
            }
        };
        let mut points = Vec::with_capacity(whole.entries.len() + 1);
        for k in 0..=whole.entries.len() {
            let ran = run_point(&plan, url(&format!("point-{k}")), Some(k)).await;
            let cut_before = whole
                .entries
                .get(k)
                .map_or_else(|| "the task's end".to_owned(), describe);
            points.push(Point {
                index: k,
                cut_before,
                reached: ran.stopped,
                runs: ran.tally.runs,
                may_run_again: in_flight(&whole.entries[..k]),
                outcome: ran.outcome,
            });
        }
        Ok(CrashReport {
            skill: self.skill,
            uninterrupted: whole.outcome,
            runs: whole.runs,
            points,
        })
    }
}

/// What a run's agents are given.
struct Plan<A: Agent> {
    make: Arc<dyn Fn() -> Server<A> + Send + Sync>,
    skill: String,
    input: Payload,
    answers: Vec<Payload>,
    timeout: Duration,
}

/// The run nobody stopped.
struct Uninterrupted {
    outcome: Outcome,
    runs: BTreeMap<String, u32>,
    entries: Vec<Entry>,
}

/// How a task ended: its state, its artifacts (name and parts) and its status message's text.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Outcome {
    /// The task's last state.
    pub state: TaskState,
    /// Its artifacts, each `{"name": .., "parts": [..]}` (their ids left out).
    pub artifacts: Vec<Value>,
    /// The text of its last status message, if it has one.
    pub message: Option<String>,
}

impl Outcome {
    fn of(task: &Task) -> Outcome {
        let artifacts = task
            .artifacts
            .iter()
            .flatten()
            .map(|a| json!({"name": a.name, "parts": a.parts}))
            .collect();
        let message = task.status.message.as_ref().map(|m| {
            m.parts
                .iter()
                .filter_map(a2a::Part::as_text)
                .collect::<Vec<_>>()
                .join("\n")
        });
        Outcome {
            state: task.status.state.clone(),
            artifacts,
            message,
        }
    }
}

/// One point: the task stopped before a journal write, and taken over.
#[derive(Debug, Clone)]
pub struct Point {
    index: usize,
    cut_before: String,
    reached: bool,
    runs: BTreeMap<String, u32>,
    may_run_again: BTreeMap<String, u32>,
    outcome: Result<Outcome, String>,
}

impl Point {
    /// Its number: how many journal writes were stored before the stop.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The write the stop came before (not stored): `the start of step `charge``, `a sleep`,
    /// `the task's end`, ...
    pub fn cut_before(&self) -> &str {
        &self.cut_before
    }

    /// How often each step's body ran (began), over the run stopped and the run that took the
    /// task over.
    pub fn runs(&self) -> &BTreeMap<String, u32> {
        &self.runs
    }

    /// How the task ended after it was taken over, or why it did not.
    pub fn outcome(&self) -> Result<&Outcome, &str> {
        self.outcome.as_ref().map_err(String::as_str)
    }

    /// Whether the run reached the point (a handler that decides on something other than its
    /// input, answers and steps' results may not do the same writes twice).
    pub fn reached(&self) -> bool {
        self.reached
    }
}

/// What [`CrashPoints::run`] found: the run nobody stopped, and each point.
#[derive(Debug, Clone)]
pub struct CrashReport {
    skill: String,
    uninterrupted: Outcome,
    runs: BTreeMap<String, u32>,
    points: Vec<Point>,
}

impl CrashReport {
    /// How the run nobody stopped ended.
    pub fn uninterrupted(&self) -> &Outcome {
        &self.uninterrupted
    }

    /// How often each step's body ran in the run nobody stopped.
    pub fn uninterrupted_runs(&self) -> &BTreeMap<String, u32> {
        &self.runs
    }

    /// Each point, in order.
    pub fn points(&self) -> &[Point] {
        &self.points
    }

    /// What broke the durable promise, point by point: a task that did not end as the run
    /// nobody stopped did, a point the run did not reach, or a step's body that ran more often
    /// than once more than in that run (once more is the promise for a step the stop fell
    /// inside: begun, its result not stored; it runs again, with the same idempotency key).
    pub fn failures(&self) -> Vec<String> {
        let mut failures = Vec::new();
        for point in &self.points {
            let at = format!(
                "point {} (stopped before {})",
                point.index, point.cut_before
            );
            if !point.reached {
                failures.push(format!(
                    "{at}: the run did not get there again (the handler did other writes than in the run nobody stopped)"
                ));
                continue;
            }
            match &point.outcome {
                Err(why) => failures.push(format!("{at}: the task did not end: {why}")),
                Ok(outcome) if *outcome != self.uninterrupted => failures.push(format!(
                    "{at}: the task ended {outcome:?}, and the run nobody stopped ended {:?}",
                    self.uninterrupted
                )),
                Ok(_) => {}
            }
            let names = self.runs.keys().chain(point.runs.keys());
            let mut seen = Vec::new();
            for name in names {
                if seen.contains(&name) {
                    continue;
                }
                seen.push(name);
                let whole = self.runs.get(name).copied().unwrap_or(0);
                let ran = point.runs.get(name).copied().unwrap_or(0);
                let allowed = whole + point.may_run_again.get(name).copied().unwrap_or(0);
                if ran > allowed {
                    failures.push(format!(
                        "{at}: the body of step `{name}` ran {ran} time(s), {whole} without a crash, at most {allowed} promised"
                    ));
                }
            }
        }
        failures
    }

    /// Panics, with the report, unless every point kept the promise ([`failures`](Self::failures)
    /// is empty).
    #[track_caller]
    pub fn assert_survives(&self) {
        let failures = self.failures();
        assert!(
            failures.is_empty(),
            "skill `{}` does not survive a crash at every point:\n  {}\n\n{self}",
            self.skill,
            failures.join("\n  ")
        );
    }
}

impl fmt::Display for CrashReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "skill `{}`: {} point(s); without a crash it ended {:?}, step bodies run {:?}",
            self.skill,
            self.points.len(),
            self.uninterrupted.state,
            self.runs
        )?;
        for point in &self.points {
            let ended = match &point.outcome {
                Ok(o) if *o == self.uninterrupted => "the same outcome".to_owned(),
                Ok(o) => format!("another outcome ({:?})", o.state),
                Err(why) => format!("no outcome: {why}"),
            };
            writeln!(
                f,
                "  {:>3}  stopped before {:<40} bodies run {:?}; {ended}",
                point.index, point.cut_before, point.runs
            )?;
        }
        Ok(())
    }
}

/// The steps begun and not finished after `kept`, the writes stored: how many more times each
/// may run (their bodies may have run before the stop).
fn in_flight(kept: &[Entry]) -> BTreeMap<String, u32> {
    let mut open: BTreeMap<String, u32> = BTreeMap::new();
    for entry in kept {
        match entry {
            Entry::Started { started } => *open.entry(started.clone()).or_default() += 1,
            Entry::Step { name, .. } => {
                if let Some(n) = open.get_mut(name) {
                    *n = n.saturating_sub(1);
                }
            }
            _ => {}
        }
    }
    open.retain(|_, n| *n > 0);
    open
}

/// A journal write, for the report.
fn describe(entry: &Entry) -> String {
    match entry {
        Entry::Started { started } => format!("the start of step `{started}`"),
        Entry::Step { name, .. } => format!("the result of step `{name}`"),
        Entry::Sleep { .. } => "a sleep's deadline".to_owned(),
        Entry::Answer { .. } => "an answer".to_owned(),
        Entry::Patched { name, .. } => format!("marker `{name}`"),
        Entry::Call { call } => format!("a call of skill `{}`", call.skill),
        Entry::Returned { .. } => "the answer of a call".to_owned(),
        Entry::Begin { .. } => "the task's beginning".to_owned(),
    }
}

/// What one point's agents did, all lives together.
#[derive(Default)]
struct Tally {
    /// The journal writes stored, in order (entry 0 aside).
    entries: Vec<Entry>,
    /// How often each step's body began.
    runs: BTreeMap<String, u32>,
    /// Steps begun and not finished in a journal a resumed agent read (task, number): a result
    /// written there is their body run again.
    again: HashMap<(String, u64), String>,
    /// Answers stored: the next question takes the answer after them.
    answers: usize,
    /// The task the journal is written for (known before a send that is stopped returns).
    task: Option<String>,
}

/// Where one agent's writes stop: before journal write number `at`, or (`at` the count of
/// them all) before the write that ends the task. Past it the agent stores nothing: its
/// writes wait forever, as a stopped process's.
struct Cut {
    at: Option<usize>,
    tally: Arc<Mutex<Tally>>,
    dead: AtomicBool,
    stopped: watch::Sender<bool>,
}

impl Cut {
    fn alive(&self) -> bool {
        !self.dead.load(Ordering::SeqCst)
    }

    fn stop(&self) {
        self.dead.store(true, Ordering::SeqCst);
        self.stopped.send_replace(true);
    }

    fn tally(&self) -> std::sync::MutexGuard<'_, Tally> {
        self.tally.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether journal entry `n` of task `task` is stored (counted), or is where the agent stops.
    fn journal(&self, task: &str, n: u64, entry: &Entry) -> bool {
        if !self.alive() {
            return false;
        }
        let mut tally = self.tally();
        if tally.task.is_none() {
            tally.task = Some(task.to_owned());
        }
        if n == 0 {
            return true;
        }
        if Some(tally.entries.len()) == self.at {
            drop(tally);
            self.stop();
            return false;
        }
        tally.entries.push(entry.clone());
        match entry {
            Entry::Started { started } => *tally.runs.entry(started.clone()).or_default() += 1,
            Entry::Step { name, .. } if tally.again.remove(&(task.to_owned(), n)).is_some() => {
                *tally.runs.entry(name.clone()).or_default() += 1;
            }
            Entry::Answer { .. } => tally.answers += 1,
            _ => {}
        }
        true
    }

    /// Whether a write of `task` is stored, or is where the agent stops (the task's end, once
    /// every journal write before it was).
    fn write(&self, task: &Task) -> bool {
        if !self.alive() {
            return false;
        }
        if task.status.state.is_terminal() && Some(self.tally().entries.len()) == self.at {
            self.stop();
            return false;
        }
        true
    }

    /// A journal read by an agent that takes task `task` over: its steps begun and not finished
    /// run again.
    fn read(&self, task: &str, rows: &[(u64, Entry)]) {
        let mut tally = self.tally();
        for (n, entry) in rows {
            if let (Some(at), Entry::Started { started }) = (n.checked_sub(STARTS), entry)
                && !rows.iter().any(|(m, _)| *m == at)
            {
                tally.again.insert((task.to_owned(), at), started.clone());
            }
        }
    }
}

/// A write past the stop: it never ends (the process is gone).
async fn never<T>() -> T {
    std::future::pending().await
}

/// The SQLite store of one agent, its writes cut where [`Cut`] says.
struct Cutting {
    sql: SqlTasks,
    cut: Arc<Cut>,
}

struct CutTasks {
    inner: Arc<dyn TaskStore>,
    cut: Arc<Cut>,
}

struct CutLog {
    inner: Arc<dyn EventLog>,
    cut: Arc<Cut>,
}

#[async_trait::async_trait]
impl TaskStore for CutTasks {
    async fn create(&self, task: Task) -> Result<TaskVersion, A2AError> {
        if !self.cut.write(&task) {
            return never().await;
        }
        self.inner.create(task).await
    }

    async fn update(&self, task: Task) -> Result<TaskVersion, A2AError> {
        if !self.cut.write(&task) {
            return never().await;
        }
        self.inner.update(task).await
    }

    async fn get(&self, task_id: &str) -> Result<Option<Task>, A2AError> {
        self.inner.get(task_id).await
    }

    async fn list(&self, req: &ListTasksRequest) -> Result<ListTasksResponse, A2AError> {
        self.inner.list(req).await
    }

    async fn begin_cancel(&self, task_id: &str) -> Result<Task, A2AError> {
        if !self.cut.alive() {
            return never().await;
        }
        self.inner.begin_cancel(task_id).await
    }
}

#[async_trait::async_trait]
impl EventLog for CutLog {
    fn append(&self, task_id: &str, seq: u64, event: &Arc<Event>) {
        if self.cut.alive() {
            self.inner.append(task_id, seq, event);
        }
    }

    async fn update_at(&self, task: Task, seq: u64) -> Result<(), A2AError> {
        if !self.cut.write(&task) {
            return never().await;
        }
        self.inner.update_at(task, seq).await
    }

    async fn read(&self, task_id: &str, after: Option<u64>) -> Result<Option<Logged>, A2AError> {
        self.inner.read(task_id, after).await
    }

    fn keeps_journals(&self) -> bool {
        self.inner.keeps_journals()
    }

    fn journal(&self, task_id: &str, n: u64, entry: &Entry) {
        if self.cut.journal(task_id, n, entry) {
            self.inner.journal(task_id, n, entry);
        }
    }

    async fn journal_written(&self, task_id: &str, n: u64) -> Result<(), A2AError> {
        if !self.cut.alive() {
            return never().await;
        }
        self.inner.journal_written(task_id, n).await
    }

    async fn write_journal(&self, task_id: &str, n: u64, entry: &Entry) -> Result<(), A2AError> {
        if !self.cut.journal(task_id, n, entry) {
            return never().await;
        }
        self.inner.write_journal(task_id, n, entry).await
    }

    async fn read_journal(&self, task_id: &str) -> Result<Vec<(u64, Entry)>, A2AError> {
        let rows = self.inner.read_journal(task_id).await?;
        self.cut.read(task_id, &rows);
        Ok(rows)
    }

    async fn give_up(&self, task_id: &str) -> Result<(), A2AError> {
        if !self.cut.alive() {
            return never().await;
        }
        self.inner.give_up(task_id).await
    }
}

#[async_trait::async_trait]
impl Store for Cutting {
    fn tasks(&self) -> Arc<dyn TaskStore> {
        Arc::new(CutTasks {
            inner: Store::tasks(&self.sql),
            cut: Arc::clone(&self.cut),
        })
    }

    fn push_configs(&self) -> Option<Arc<dyn a2a_server::PushConfigStore>> {
        Store::push_configs(&self.sql)
    }

    fn events(&self) -> Option<Arc<dyn EventLog>> {
        let inner = Store::events(&self.sql)?;
        Some(Arc::new(CutLog {
            inner,
            cut: Arc::clone(&self.cut),
        }))
    }

    fn changes(&self) -> Option<ChangeFeed> {
        self.sql.changes()
    }

    async fn forward(&self, task_id: &str, message: &a2a::Message) -> Result<bool, A2AError> {
        self.sql.forward(task_id, message).await
    }

    async fn settle(&self, task_id: &str) -> Result<(), A2AError> {
        if !self.cut.alive() {
            return never().await;
        }
        self.sql.settle(task_id).await
    }

    fn recover_into(&self, recovery: Recovery) {
        self.sql.recover_into(recovery);
    }

    async fn hit(&self, key: &str, start_ms: i64, window_ms: i64) -> Result<Option<u64>, A2AError> {
        self.sql.hit(key, start_ms, window_ms).await
    }

    async fn claim_key(
        &self,
        key: &str,
        task_id: &str,
        digest: &str,
    ) -> Result<KeyClaim, A2AError> {
        if !self.cut.alive() {
            return never().await;
        }
        self.sql.claim_key(key, task_id, digest).await
    }

    async fn release(&self) -> Result<(), A2AError> {
        self.sql.release().await
    }

    fn reachable(&self) -> bool {
        self.sql.reachable()
    }
}

/// What one point's agents did.
struct Ran {
    /// Whether the first agent was stopped at the point.
    stopped: bool,
    outcome: Result<Outcome, String>,
    tally: Tally,
}

/// How one agent's life ended.
enum Life {
    /// Stopped at the point, the task running (its id).
    Stopped(String),
    /// The task ended.
    Ended(Outcome),
}

/// Runs the task on the database at `url`: its first agent stopped before journal write `at`
/// (none: never), then, when it was, a fresh agent that takes the task over.
async fn run_point<A: Agent>(plan: &Arc<Plan<A>>, url: String, at: Option<usize>) -> Ran {
    let tally = Arc::new(Mutex::new(Tally::default()));
    let clock = TestClock::new();
    let first = on_own_runtime(
        Arc::clone(plan),
        url.clone(),
        at,
        Arc::clone(&tally),
        clock.clone(),
        None,
    )
    .await;
    let (stopped, outcome) = match first {
        Err(why) => (false, Err(why)),
        Ok(Life::Ended(outcome)) => (false, Ok(outcome)),
        Ok(Life::Stopped(task)) => {
            let again = on_own_runtime(
                Arc::clone(plan),
                url,
                None,
                Arc::clone(&tally),
                clock,
                Some(task),
            )
            .await;
            match again {
                Ok(Life::Ended(outcome)) => (true, Ok(outcome)),
                Ok(Life::Stopped(_)) => (
                    true,
                    Err("the agent that took the task over stopped".to_owned()),
                ),
                Err(why) => (true, Err(why)),
            }
        }
    };
    let tally = std::mem::take(&mut *tally.lock().unwrap_or_else(|p| p.into_inner()));
    Ran {
        stopped,
        outcome,
        tally,
    }
}

/// One agent's life on a runtime (and a thread) of its own, which is dropped with everything
/// the agent spawned once the life ends: a stopped agent's handler and writer go with it.
async fn on_own_runtime<A: Agent>(
    plan: Arc<Plan<A>>,
    url: String,
    at: Option<usize>,
    tally: Arc<Mutex<Tally>>,
    clock: TestClock,
    task: Option<String>,
) -> Result<Life, String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("a2a-card-crash-point".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => {
                    let _ = tx.send(Err(format!("no runtime for an agent: {e}")));
                    return;
                }
            };
            let life: Pin<Box<dyn Future<Output = Result<Life, String>>>> =
                Box::pin(live(plan, url, at, tally, clock, task));
            let ended = runtime.block_on(life);
            // Whatever the agent still runs is dropped here, at its next `.await`.
            runtime.shutdown_background();
            let _ = tx.send(ended);
        });
    if let Err(e) = spawned {
        return Err(format!("no thread for an agent: {e}"));
    }
    rx.await
        .unwrap_or_else(|_| Err("an agent's thread ended without a word (it panicked?)".into()))
}

/// One agent: opens the store, serves the server `plan.make` builds on it, sends the task
/// (`task` none) or lets the store hand it over, and follows it until it ends or the agent is
/// stopped.
async fn live<A: Agent>(
    plan: Arc<Plan<A>>,
    url: String,
    at: Option<usize>,
    tally: Arc<Mutex<Tally>>,
    clock: TestClock,
    task: Option<String>,
) -> Result<Life, String> {
    let (stopped, mut stop) = watch::channel(false);
    let cut = Arc::new(Cut {
        at,
        tally: Arc::clone(&tally),
        dead: AtomicBool::new(false),
        stopped,
    });
    let sql = SqlTasks::open(&url, Retention::default(), DEFAULT_LEASE, true)
        .await
        .map_err(|e| e.to_string())?;
    // The tasks of an agent stopped before: taken over, to run again from their journals.
    sql.recover().await.map_err(|e| e.to_string())?;
    let store = Cutting {
        sql: sql.clone(),
        cut: Arc::clone(&cut),
    };
    let server = (plan.make)()
        .tasks(Tasks::custom(store))
        .clock(clock.clock());
    let agent = TestAgent::serve(server, None)
        .await
        .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + plan.timeout;
    let id = match task {
        Some(id) => id,
        None => {
            let remote = agent.remote().await.map_err(|e| e.to_string())?;
            let message = remote
                .message(&plan.skill, plan.input.clone())
                .map_err(|e| e.to_string())?;
            let sent = tokio::select! {
                sent = send(&agent, message) => sent?,
                _ = stop.wait_for(|s| *s) => {
                    let task = cut.tally().task.clone();
                    return stopped_now(&sql, task).await;
                }
            };
            sent.id
        }
    };
    let mut answered: Option<Option<String>> = None;
    loop {
        if *stop.borrow() {
            return stopped_now(&sql, Some(id)).await;
        }
        let task = tokio::select! {
            task = get(&agent, &id) => task?,
            _ = stop.wait_for(|s| *s) => return stopped_now(&sql, Some(id)).await,
        };
        match &task.status.state {
            state if state.is_terminal() => {
                let _ = sql.release().await;
                return Ok(Life::Ended(Outcome::of(&task)));
            }
            TaskState::InputRequired | TaskState::AuthRequired => {
                // Each question once: the one answered is known by its status's time.
                let asked = task.status.timestamp.map(|t| t.to_string());
                if answered.as_ref() != Some(&asked) {
                    answered = Some(asked);
                    let next = cut.tally().answers;
                    let payload = plan.answers.get(next).cloned().ok_or_else(|| {
                        format!(
                            "the task asked question {} and the harness has {} answer(s): give more with CrashPoints::answer",
                            next + 1,
                            plan.answers.len()
                        )
                    })?;
                    let message = answer_to(&task, payload);
                    tokio::select! {
                        sent = send(&agent, message) => drop(sent?),
                        _ = stop.wait_for(|s| *s) => return stopped_now(&sql, Some(id)).await,
                    }
                }
            }
            _ => {}
        }
        // A durable sleep waits on the clock: its deadline now.
        clock.advance_to_next_deadline();
        if Instant::now() > deadline {
            return Err(format!(
                "task {id} did not end within {:?}: it is {:?}",
                plan.timeout, task.status.state
            ));
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// The agent is stopped: what it stored before the point is written, and its replica leaves
/// the file's table (as a lease that ran out), so that the next agent takes the task over.
async fn stopped_now(sql: &SqlTasks, task: Option<String>) -> Result<Life, String> {
    sql.release().await.map_err(|e| e.message)?;
    task.map(Life::Stopped)
        .ok_or_else(|| "the agent stopped before it made the task".to_owned())
}

/// The caller's answer `payload` to task `task`'s question.
fn answer_to(task: &Task, payload: Payload) -> a2a::Message {
    let part = match payload {
        Payload::Text(text) => a2a::Part::text(text),
        Payload::Data(data) => a2a::Part::data(data),
    };
    let mut message = a2a::Message::new(a2a::Role::User, vec![part]);
    message.task_id = Some(task.id.clone());
    message.context_id = Some(task.context_id.clone());
    message
}

/// Sends `message` without waiting for the task: the task as it is made.
async fn send(agent: &TestAgent, message: a2a::Message) -> Result<Task, String> {
    let answer = agent
        .json_rpc(
            "SendMessage",
            json!({"message": message, "configuration": {"returnImmediately": true}}),
        )
        .await
        .map_err(|e| e.to_string())?;
    let task = answer
        .get("result")
        .and_then(|r| r.get("task"))
        .ok_or_else(|| format!("the agent did not make a task: {answer}"))?;
    serde_json::from_value(task.clone()).map_err(|e| format!("not a task ({e}): {task}"))
}

/// Task `id` as the agent has it.
async fn get(agent: &TestAgent, id: &str) -> Result<Task, String> {
    let answer = agent
        .json_rpc("GetTask", json!({"id": id}))
        .await
        .map_err(|e| e.to_string())?;
    let task = answer
        .get("result")
        .ok_or_else(|| format!("the agent did not give task {id}: {answer}"))?;
    serde_json::from_value(task.clone()).map_err(|e| format!("not a task ({e}): {task}"))
}
