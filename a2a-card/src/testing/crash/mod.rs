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
//!
//! One file per part: `cut.rs` (the store whose writes stop at a point), `run.rs` (one
//! point's run, its agents each on a runtime of its own), `report.rs` (what the runs found);
//! this file holds the harness.

mod cut;
mod report;
mod run;

pub use report::{CrashReport, Outcome, Point};

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::{TempDir, TestError};
use crate::Agent;
use crate::client::Payload;
use crate::journal::Entry;
use crate::server::Server;
use run::{Ran, run_point};

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
///
/// [`TestClock`]: super::TestClock
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
