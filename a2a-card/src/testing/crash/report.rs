//! What a crash at every point found ([`CrashReport`]): how the run nobody stopped ended
//! ([`Outcome`]), and each [`Point`], with what broke the durable promise.

use std::collections::BTreeMap;
use std::fmt;

use a2a::{Task, TaskState};
use serde_json::{Value, json};

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
    pub(super) fn of(task: &Task) -> Outcome {
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
    pub(super) index: usize,
    pub(super) cut_before: String,
    pub(super) reached: bool,
    pub(super) runs: BTreeMap<String, u32>,
    pub(super) may_run_again: BTreeMap<String, u32>,
    pub(super) outcome: Result<Outcome, String>,
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
///
/// [`CrashPoints::run`]: super::CrashPoints::run
#[derive(Debug, Clone)]
pub struct CrashReport {
    pub(super) skill: String,
    pub(super) uninterrupted: Outcome,
    pub(super) runs: BTreeMap<String, u32>,
    pub(super) points: Vec<Point>,
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
