//! What a task followed here holds of its handler, by [phase](super::machine::Phase): nothing
//! (its handler runs elsewhere, or it ended), the handler at work, or the handler and the
//! question it waits on. The stage moves only by the [table](super::machine::next): each of
//! its changes is checked there, and the effects the table lists on the handler and its
//! question (disarm, cancel the calls, stop, hand the answer) are carried out here, under the
//! stage's lock, in the table's order; what is left (tell the caller, record, finish, forget)
//! is handed back for the [recorder](super::recorder).
//!
//! The handler's current turn has a caller: the send that made the task, or the one whose
//! answer the handler took. A handler that refuses its input (`SkillError::Input`) ends its
//! task failed, and that caller is answered with the refusal instead of the task: the
//! [`Caller`] end goes with the handler, the [`TurnOutcome`] end with the caller's [`Turn`]
//! (see [`turn`]).
//!
//! [`Turn`]: super::super::Turn

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::channel::oneshot;

use a2a::A2AError;

use super::machine::{self, Effect, Happening, Phase, Refused};

use crate::context::{Answer, LinkHandle};

/// A durable handler's journal.
pub(crate) type Journal = crate::journal::Journal<Answer>;

/// What a task followed here holds of its handler (see the [module docs](self)).
#[derive(Default)]
pub(crate) struct Stage(Mutex<Standing>);

/// What the stage holds in each phase.
#[derive(Default)]
enum Standing {
    /// No handler of the task runs here.
    #[default]
    Elsewhere,
    /// Its handler runs here, at work.
    Running(Handler),
    /// Its handler runs here and waits for the caller's answer.
    Waiting(Handler, Waiter),
    /// The task ended here.
    Ended,
}

/// The caller of a handler's current turn, as the handler holds it: told if the handler
/// refuses its input.
pub(crate) struct Caller(oneshot::Sender<A2AError>);

/// What a caller's turn came to, as the caller holds it: the handler's refusal of its input,
/// if it refused it (`None`: a turn no handler here answers).
pub(crate) struct TurnOutcome(Option<oneshot::Receiver<A2AError>>);

/// A turn's two ends: the handler's and its caller's.
pub(crate) fn turn() -> (Caller, TurnOutcome) {
    let (caller, outcome) = oneshot::channel();
    (Caller(caller), TurnOutcome(Some(outcome)))
}

impl Caller {
    /// Answers the caller with `refusal`, the handler's refusal of its input (before the
    /// task's failure is recorded, so that a caller that sees the failure finds it).
    pub(crate) fn refuse(self, refusal: A2AError) {
        let _ = self.0.send(refusal);
    }
}

impl TurnOutcome {
    /// The outcome of a turn whose caller no handler answers (a subscription, an answer
    /// kept or forwarded to another process).
    pub(crate) fn none() -> TurnOutcome {
        TurnOutcome(None)
    }

    /// The handler's refusal of the caller's input, if it refused it (and said so already).
    pub(crate) fn refused(&mut self) -> Option<A2AError> {
        self.0.as_mut()?.try_recv().ok().flatten()
    }
}

/// Which run of its task a handler is: a task taken up again here while a run of it still
/// goes on (its claim given back and taken again) has a newer run, which replaces the older
/// in the stage; what the older one's handler sent after that is not the task's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run(u64);

/// The number of the next run started in this process.
static NEXT_RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A handler running here: how it is stopped, its journal (a durable skill's), and the caller
/// of its current turn.
pub(crate) struct Handler {
    /// Which run of the task it is.
    run: Run,
    /// Drops the handler's future (cancellation).
    abort: oneshot::Sender<()>,
    link: LinkHandle,
    /// A durable skill's journal, where the answers to its questions are recorded.
    journal: Option<Arc<Journal>>,
    caller: Option<Caller>,
}

impl Handler {
    /// A handler stopped by `abort`, reached through `link`, keeping `journal`, its turn
    /// begun by `caller` (`None`: a task taken up again, which no caller here waits for).
    pub(crate) fn new(
        abort: oneshot::Sender<()>,
        link: LinkHandle,
        journal: Option<Arc<Journal>>,
        caller: Option<Caller>,
    ) -> Handler {
        Handler {
            run: Run(NEXT_RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed)),
            abort,
            link,
            journal,
            caller,
        }
    }

    /// Which run of the task it is.
    pub(crate) fn run(&self) -> Run {
        self.run
    }

    /// Stops the handler: it reads as cancelled, and its future is dropped.
    fn stop(self) {
        self.link.cancel();
        let _ = self.abort.send(());
    }
}

/// A question the handler waits on: where its answer goes, the number a durable handler's
/// answer is journaled at, and the timer that withdraws the question.
pub(crate) struct Waiter {
    answer: oneshot::Sender<Answer>,
    entry: Option<u64>,
    expiry: Option<tokio::task::AbortHandle>,
}

impl Waiter {
    /// A question whose answer goes to `answer` (journaled at `entry`, a durable handler's).
    pub(crate) fn new(answer: oneshot::Sender<Answer>, entry: Option<u64>) -> Waiter {
        Waiter {
            answer,
            entry,
            expiry: None,
        }
    }

    fn disarm(&mut self) {
        if let Some(expiry) = self.expiry.take() {
            expiry.abort();
        }
    }
}

/// A handler waiting for an answer, taken to be given one: where the answer goes, and (a
/// durable skill's) the journal that records it first.
pub(crate) struct Waiting {
    pub(crate) answer: oneshot::Sender<Answer>,
    /// A durable handler's journal, and the number its answer is written at.
    pub(crate) journal: Option<(Arc<Journal>, u64)>,
}

/// What a change hands back, once the effects on the handler and its question are carried out
/// under the stage's lock: the change's effects, of which the [recorder](super::recorder)
/// carries out those left (telling the caller, recording, finishing, forgetting), in order,
/// and what they need.
pub(crate) struct Carried {
    /// The change's effects, in the table's order (those on the handler and its question
    /// carried out already).
    pub(crate) effects: &'static [Effect],
    /// The caller of the handler's turn, for [`Effect::TellCaller`].
    pub(crate) caller: Option<Caller>,
    /// The handler that waited, for [`Effect::Deliver`].
    pub(crate) waiting: Option<Waiting>,
}

/// The handler and the question a standing held, taken out of it for a change.
struct Held {
    handler: Option<Handler>,
    waiter: Option<Waiter>,
}

impl Standing {
    fn phase(&self) -> Phase {
        let journaled = |h: &Handler| h.journal.is_some();
        match self {
            Standing::Elsewhere => Phase::Elsewhere,
            Standing::Running(h) => Phase::Running {
                journaled: journaled(h),
            },
            Standing::Waiting(h, _) => Phase::Waiting {
                journaled: journaled(h),
            },
            Standing::Ended => Phase::Ended,
        }
    }

    /// Whether a newer run than `run` runs here: `run`'s handler was replaced (stopped) by
    /// it.
    fn replaced(&self, run: Run) -> bool {
        match self {
            Standing::Running(h) | Standing::Waiting(h, _) => h.run != run,
            Standing::Elsewhere | Standing::Ended => false,
        }
    }

    fn held(self) -> Held {
        let (handler, waiter) = match self {
            Standing::Elsewhere | Standing::Ended => (None, None),
            Standing::Running(h) => (Some(h), None),
            Standing::Waiting(h, w) => (Some(h), Some(w)),
        };
        Held { handler, waiter }
    }
}

impl Stage {
    fn stage(&self) -> MutexGuard<'_, Standing> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The task's phase now.
    pub(crate) fn phase(&self) -> Phase {
        self.stage().phase()
    }

    /// Whether a newer run of the task than `run` runs here: `run`'s handler was replaced
    /// (stopped) by it.
    pub(crate) fn replaced(&self, run: Run) -> bool {
        self.stage().replaced(run)
    }

    /// The one way the stage moves: `happening` is checked against the table; allowed, the
    /// effects the table lists on the handler and its question are carried out in order, and
    /// `enter` makes the new standing (of the table's phase) from what is left of them. A
    /// question dropped in the change is dropped last, once its handler reads as stopped: a
    /// handler whose question fails first must not take itself for one that returned.
    ///
    /// `by`: the run whose handler makes the change itself, refused as [`Refused::Gone`]
    /// once a newer run replaced it.
    fn go(
        &self,
        happening: Happening,
        by: Option<Run>,
        enter: impl FnOnce(Phase, &mut Held) -> Standing,
    ) -> Result<Carried, Refused> {
        let mut stage = self.stage();
        if by.is_some_and(|by| stage.replaced(by)) {
            return Err(Refused::Gone);
        }
        let step = machine::next(stage.phase(), happening)?;
        let mut held = std::mem::take(&mut *stage).held();
        let mut carried = Carried {
            effects: step.effects,
            caller: None,
            waiting: None,
        };
        for effect in step.effects {
            match effect {
                Effect::Disarm => {
                    if let Some(waiter) = held.waiter.as_mut() {
                        waiter.disarm();
                    }
                }
                Effect::CancelCalls => {
                    if let Some(handler) = &held.handler {
                        handler.link.cascade();
                    }
                }
                Effect::StopHandler => {
                    if let Some(handler) = held.handler.take() {
                        handler.stop();
                    }
                }
                Effect::Deliver => {
                    let journal = held.handler.as_ref().and_then(|h| h.journal.clone());
                    carried.waiting = held.waiter.take().map(|waiter| Waiting {
                        journal: journal.zip(waiter.entry),
                        answer: waiter.answer,
                    });
                }
                Effect::TellCaller => {
                    carried.caller = held.handler.as_mut().and_then(|h| h.caller.take());
                }
                // The recorder's.
                Effect::Record | Effect::Finish | Effect::Forget => {}
            }
        }
        *stage = enter(step.to, &mut held);
        drop(stage);
        drop(held);
        Ok(carried)
    }

    /// The standing of `phase` for the handler left in `held` (none where the phase holds
    /// none).
    fn standing(phase: Phase, held: &mut Held, waiter: Option<Waiter>) -> Standing {
        match (phase, held.handler.take()) {
            (Phase::Running { .. }, Some(handler)) => Standing::Running(handler),
            (Phase::Waiting { .. }, Some(handler)) => match waiter.or_else(|| held.waiter.take()) {
                Some(waiter) => Standing::Waiting(handler, waiter),
                None => Standing::Running(handler),
            },
            (Phase::Ended, _) => Standing::Ended,
            _ => Standing::Elsewhere,
        }
    }

    /// A handler of the task starts here (an older one is stopped); `false` when the task
    /// ended here.
    pub(crate) fn start(&self, handler: Handler) -> bool {
        let journaled = handler.journal.is_some();
        let mut handler = Some(handler);
        self.go(Happening::Start { journaled }, None, |_, _| {
            handler
                .take()
                .map_or(Standing::Elsewhere, Standing::Running)
        })
        .is_ok()
    }

    /// The handler asks, and waits on `waiter`; `false` when it runs here no more. `by`: the
    /// run whose handler asks (`None`: a handler put back to wait on), refused once a newer
    /// run replaced it.
    pub(crate) fn ask(&self, by: Option<Run>, waiter: Waiter) -> bool {
        let mut waiter = Some(waiter);
        self.go(Happening::Ask, by, |to, held| {
            Stage::standing(to, held, waiter.take())
        })
        .is_ok()
    }

    /// Arms `expiry`, the timer that withdraws the question the handler waits on; aborted at
    /// once when it waits no more. (Not a change of phase: the question's own timer.)
    pub(crate) fn arm(&self, expiry: tokio::task::AbortHandle) {
        match &mut *self.stage() {
            Standing::Waiting(_, waiter) => {
                waiter.disarm();
                waiter.expiry = Some(expiry);
            }
            _ => expiry.abort(),
        }
    }

    /// Takes the way to the handler waiting for an answer, its question's timer disarmed;
    /// the answer begins a turn of `caller`, taken from it (`None`: of no caller here, an
    /// answer forwarded by another process), which is left where it is when the handler does
    /// not wait.
    pub(crate) fn take_waiting(&self, caller: &mut Option<Caller>) -> Result<Waiting, Refused> {
        let carried = self.go(Happening::Answer, None, |to, held| {
            if let Some(handler) = held.handler.as_mut() {
                handler.caller = caller.take();
            }
            Stage::standing(to, held, None)
        })?;
        carried.waiting.ok_or(Refused::Gone)
    }

    /// A change that ends the task, or gives up or stops its run here (see
    /// [`Happening`]): what is left for the recorder.
    pub(crate) fn change(&self, happening: Happening) -> Result<Carried, Refused> {
        self.go(happening, None, |to, held| Stage::standing(to, held, None))
    }
}
