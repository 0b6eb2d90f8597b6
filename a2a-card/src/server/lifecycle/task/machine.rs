//! The table of a task's changes: where a task followed here stands with its handler
//! ([`Phase`]), what can happen to it ([`Happening`]), and, for each pair, whether the change
//! is allowed and what it requires ([`Effect`]s, in the order they are carried out), or why
//! it is refused ([`Refused`]). The table holds nothing and runs nothing: [`next`] is a pure
//! function, tested as a table without a server (`tests.rs`, beside this), and the only way
//! the [stage](super::stage) of a task moves.
//!
//! ```text
//!                start                     ask
//!   Elsewhere ─────────▶ Running ◀──────────────────▶ Waiting
//!      ▲  │                 │          answer            │
//!      │  │                 │ return / cancel / fail     │ expire / cancel / fail
//!      │  │ cancel / fail   ▼                            ▼
//!      │  └────────────▶  Ended ◀─────────────────────────┘
//!      └───── stop / give up (from Running or Waiting) ──
//! ```
//!
//! - **Elsewhere**: no handler of the task runs here. The task was read from the store (its
//!   handler runs on another replica, or on none: a durable task whose process stopped).
//! - **Running**: its handler runs here, at work.
//! - **Waiting**: its handler runs here and waits for the caller's answer to its question
//!   (`input-required`, `auth-required`), with the timer that withdraws the question.
//! - **Ended**: the task ended here; no handler runs and none starts again.
//!
//! A handler is *journaled* when its skill is durable on a store that keeps journals: its
//! task can go on in another run (another process takes it over, or this one after a stop).
//!
//! What the task did (its status, artifacts and event log) is its log's
//! ([`Tracked`](super::Tracked)); an effect that records something says so, and the
//! [recorder](super::recorder) carries it out.

/// Where a task followed here stands with its handler (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// No handler of the task runs here.
    Elsewhere,
    /// Its handler runs here, at work; `journaled`: a durable skill's.
    Running { journaled: bool },
    /// Its handler runs here and waits for the caller's answer; `journaled`: a durable
    /// skill's.
    Waiting { journaled: bool },
    /// The task ended here.
    Ended,
}

/// What can happen to a task followed here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Happening {
    /// A handler of the task starts here (a new task, or one taken over); `journaled`: a
    /// durable skill's.
    Start { journaled: bool },
    /// The handler asks the caller a question (or waits on for an answer that was taken for
    /// it and could not be kept).
    Ask,
    /// The caller's answer is handed to the waiting handler.
    Answer,
    /// The handler returned: the task ends with what it returned.
    Return,
    /// No answer came in time: the question is withdrawn, the task fails.
    Expire,
    /// The task is canceled (here, or by another replica while its handler runs here).
    Cancel,
    /// The task fails without its handler: a replay that diverged, the agent shutting down, a
    /// task that cannot run again or whose handler is gone.
    Fail,
    /// The handler stops and the task goes on in another run: a durable task handed over or
    /// left at shutdown (what was stored is the task).
    Stop,
    /// The store refused a write of the task: its run here is given up, and the store's
    /// recovery has it.
    GiveUp,
}

/// What a change requires, in the order listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// The question's timer is disarmed.
    Disarm,
    /// The tasks other agents run for the handler's calls are canceled.
    CancelCalls,
    /// The handler is stopped: it reads as canceled, and its future is dropped.
    StopHandler,
    /// The caller of the handler's turn is told the handler refused its input.
    TellCaller,
    /// The answer is handed to the handler (journaled first, a durable one's), the task
    /// `working` again.
    Deliver,
    /// The task's end is recorded: its last events numbered, written to the store, told to
    /// its readers and webhooks, and to the telemetry. What follows is carried out only once
    /// the store kept it.
    Record,
    /// The task is finished here: its permits released, its log kept for resumable readers
    /// or dropped.
    Finish,
    /// The task is no longer followed here and nothing of it is kept (reads go to the store).
    Forget,
}

/// Why a change is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// No handler of the task runs here.
    Gone,
    /// The handler runs and has not asked.
    Working,
    /// The handler runs, keeps a journal, and has not asked: run again after its process
    /// stopped, it may be replaying its way back to the question its task asks.
    Journaled,
    /// The task ended here.
    Ended,
}

/// An allowed change: the phase it leads to, and what it requires, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Transition {
    pub(crate) to: Phase,
    pub(crate) effects: &'static [Effect],
}

const fn step(to: Phase, effects: &'static [Effect]) -> Result<Transition, Refused> {
    Ok(Transition { to, effects })
}

use Effect::*;
use Phase::*;

/// What an end requires once the handler is stopped (or none runs here).
const END: &[Effect] = &[Record, Finish];
/// An end while the handler runs: it and its calls are stopped first.
const END_RUNNING: &[Effect] = &[CancelCalls, StopHandler, Record, Finish];
/// An end while the handler waits: its question's timer disarmed, then as
/// [`END_RUNNING`].
const END_WAITING: &[Effect] = &[Disarm, CancelCalls, StopHandler, Record, Finish];

/// The change `happening` makes to a task in `phase`, or why it is refused.
pub(crate) fn next(phase: Phase, happening: Happening) -> Result<Transition, Refused> {
    match (phase, happening) {
        // A handler starts where none runs; a newer run replaces an older one (a task taken
        // over again), which is stopped.
        (Elsewhere, Happening::Start { journaled }) => step(Running { journaled }, &[]),
        (Running { .. }, Happening::Start { journaled }) => {
            step(Running { journaled }, &[StopHandler])
        }
        (Waiting { .. }, Happening::Start { journaled }) => {
            step(Running { journaled }, &[Disarm, StopHandler])
        }

        (Running { journaled }, Happening::Ask) => step(Waiting { journaled }, &[]),
        // A question asked again (a replay reaching it) replaces the one waited on.
        (Waiting { journaled }, Happening::Ask) => step(Waiting { journaled }, &[Disarm]),

        (Waiting { journaled }, Happening::Answer) => {
            step(Running { journaled }, &[Disarm, Deliver])
        }
        (Running { journaled: false }, Happening::Answer) => Err(Refused::Working),
        (Running { journaled: true }, Happening::Answer) => Err(Refused::Journaled),

        (Running { .. }, Happening::Return) => step(Ended, &[TellCaller, Record, Finish]),
        // The end a handler sent before it was stopped is what it did: it is recorded (the
        // store refuses it where another process has the task since).
        (Elsewhere, Happening::Return) => step(Ended, END),
        (Waiting { .. }, Happening::Return) => step(Ended, &[Disarm, TellCaller, Record, Finish]),

        (Waiting { .. }, Happening::Expire) => {
            step(Ended, &[CancelCalls, StopHandler, Record, Finish])
        }
        (Running { .. }, Happening::Expire) => Err(Refused::Working),

        (Running { .. }, Happening::Cancel | Happening::Fail) => step(Ended, END_RUNNING),
        (Waiting { .. }, Happening::Cancel | Happening::Fail) => step(Ended, END_WAITING),
        (Elsewhere, Happening::Cancel | Happening::Fail) => step(Ended, END),

        (Running { .. }, Happening::Stop) => step(Elsewhere, &[StopHandler]),
        (Waiting { .. }, Happening::Stop) => step(Elsewhere, &[Disarm, StopHandler]),
        (Elsewhere, Happening::Stop) => step(Elsewhere, &[]),

        // A durable task runs again from its journal: its calls are followed there. Any other
        // fails with its run, and the tasks its calls made end with it.
        (Running { journaled: true }, Happening::GiveUp) => step(Elsewhere, &[StopHandler, Forget]),
        (Waiting { journaled: true }, Happening::GiveUp) => {
            step(Elsewhere, &[Disarm, StopHandler, Forget])
        }
        (Running { journaled: false }, Happening::GiveUp) => {
            step(Elsewhere, &[CancelCalls, StopHandler, Forget])
        }
        (Waiting { journaled: false }, Happening::GiveUp) => {
            step(Elsewhere, &[Disarm, CancelCalls, StopHandler, Forget])
        }
        (Elsewhere, Happening::GiveUp) => step(Elsewhere, &[Forget]),
        // An end the store refused to keep.
        (Ended, Happening::GiveUp) => step(Ended, &[Forget]),

        (Elsewhere, Happening::Ask | Happening::Answer | Happening::Expire) => Err(Refused::Gone),
        (Ended, _) => Err(Refused::Ended),
    }
}

impl Phase {
    /// Every phase, for the table's test.
    #[cfg(test)]
    pub(crate) const ALL: [Phase; 6] = [
        Elsewhere,
        Running { journaled: false },
        Running { journaled: true },
        Waiting { journaled: false },
        Waiting { journaled: true },
        Ended,
    ];

    /// Whether a handler of the task runs here (at work or waiting).
    pub(crate) fn runs_here(self) -> bool {
        matches!(self, Running { .. } | Waiting { .. })
    }

    /// Whether the handler that runs here keeps a journal (`None`: none runs here).
    pub(crate) fn journaled(self) -> Option<bool> {
        match self {
            Running { journaled } | Waiting { journaled } => Some(journaled),
            Elsewhere | Ended => None,
        }
    }
}

impl Happening {
    /// Every happening, for the table's test.
    #[cfg(test)]
    pub(crate) const ALL: [Happening; 10] = [
        Happening::Start { journaled: false },
        Happening::Start { journaled: true },
        Happening::Ask,
        Happening::Answer,
        Happening::Return,
        Happening::Expire,
        Happening::Cancel,
        Happening::Fail,
        Happening::Stop,
        Happening::GiveUp,
    ];

    /// Whether the task ends with this change (its end recorded by the recorder).
    pub(crate) fn ends(self) -> bool {
        matches!(
            self,
            Happening::Return | Happening::Expire | Happening::Cancel | Happening::Fail
        )
    }
}

#[cfg(test)]
mod tests;
