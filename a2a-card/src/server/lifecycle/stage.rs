//! Where a task followed here stands with its handler: the one place that says whether its
//! handler runs in this process, waits there for the caller's answer, or does not run here,
//! and every way from one to another ([`Stage`]'s methods, each one step below).
//!
//! ```text
//!              start                      ask
//!   Followed ─────────▶ Running ◀──────────────────▶ Waiting
//!      ▲                   │       take_waiting /         │
//!      │                   │        wait_again            │
//!      └── stop / end ─────┴──────── stop / withdraw ─────┘
//! ```
//!
//! - **Followed**: no handler of the task runs here. The task was read from the store (its
//!   handler runs on another replica, or on none: a durable task whose process stopped), or it
//!   ended here.
//! - **Running**: its handler runs here, at work.
//! - **Waiting**: its handler runs here and waits for the caller's answer to its question
//!   (`input-required`, `auth-required`), with the timer that withdraws the question if no
//!   answer comes in time.
//!
//! Whether the task ended is its state; what it did is its log (both in `log`, beside this).
//!
//! The handler's current turn has a caller: the send that made the task, or the one whose
//! answer the handler took. A handler that refuses its input (`SkillError::Input`) ends its
//! task failed, and that caller is answered with the refusal instead of the task: the
//! [`Caller`] end goes with the handler, the [`Outcome`] end with the caller's [`Turn`]
//! (see [`turn`]).
//!
//! [`Turn`]: super::Turn

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::channel::oneshot;

use a2a::A2AError;

use crate::context::{Answer, LinkHandle};

/// A durable handler's journal.
pub(crate) type Journal = crate::journal::Journal<Answer>;

/// Where a task followed here stands with its handler (see the [module docs](self)), and the
/// way from one stage to another.
#[derive(Default)]
pub(crate) struct Stage(Mutex<Standing>);

/// The stages.
#[derive(Default)]
enum Standing {
    /// No handler of the task runs here.
    #[default]
    Followed,
    /// Its handler runs here, at work.
    Running(Handler),
    /// Its handler runs here and waits for the caller's answer.
    Waiting(Handler, Waiter),
}

/// The caller of a handler's current turn, as the handler holds it: told if the handler
/// refuses its input.
pub(crate) struct Caller(oneshot::Sender<A2AError>);

/// What a caller's turn came to, as the caller holds it: the handler's refusal of its input,
/// if it refused it (`None`: a turn no handler here answers).
pub(crate) struct Outcome(Option<oneshot::Receiver<A2AError>>);

/// A turn's two ends: the handler's and its caller's.
pub(crate) fn turn() -> (Caller, Outcome) {
    let (caller, outcome) = oneshot::channel();
    (Caller(caller), Outcome(Some(outcome)))
}

impl Caller {
    /// Answers the caller with `refusal`, the handler's refusal of its input (before the
    /// task's failure is recorded, so that a caller that sees the failure finds it).
    pub(crate) fn refuse(self, refusal: A2AError) {
        let _ = self.0.send(refusal);
    }
}

impl Outcome {
    /// The outcome of a turn whose caller no handler answers (a subscription, an answer
    /// kept or forwarded to another process).
    pub(crate) fn none() -> Outcome {
        Outcome(None)
    }

    /// The handler's refusal of the caller's input, if it refused it (and said so already).
    pub(crate) fn refused(&mut self) -> Option<A2AError> {
        self.0.as_mut()?.try_recv().ok().flatten()
    }
}

/// A handler running here: how it is stopped, its journal (a durable skill's), and the caller
/// of its current turn.
pub(crate) struct Handler {
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
            abort,
            link,
            journal,
            caller,
        }
    }

    /// Stops the handler: it reads as cancelled, and its future is dropped.
    fn stop(self) {
        self.link.cancel();
        let _ = self.abort.send(());
    }

    /// Stops the handler of a task that ends here: as [`stop`](Self::stop), and the tasks
    /// other agents run for its calls are cancelled.
    fn end(self) {
        self.link.cascade();
        self.stop();
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

/// Why an answer could not be handed to a waiting handler.
pub(crate) enum NotWaiting {
    /// No handler of the task runs here.
    Gone,
    /// The handler runs, and has not asked.
    Working,
    /// The handler runs and keeps a journal, and has not asked: run again after its process
    /// stopped, it may be replaying its way back to the question its task asks.
    Journaled,
}

impl Stage {
    fn stage(&self) -> MutexGuard<'_, Standing> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The handler of the task runs here from now on (`Followed` → `Running`).
    pub(crate) fn start(&self, handler: Handler) {
        if let Standing::Running(old) | Standing::Waiting(old, _) =
            std::mem::replace(&mut *self.stage(), Standing::Running(handler))
        {
            old.stop();
        }
    }

    /// Whether a handler of the task runs here (at work or waiting).
    pub(crate) fn runs_here(&self) -> bool {
        !matches!(*self.stage(), Standing::Followed)
    }

    /// Whether a handler runs here and, if so, whether it keeps a journal (a durable skill's,
    /// which another process can take over).
    pub(crate) fn handler(&self) -> Option<bool> {
        match &*self.stage() {
            Standing::Followed => None,
            Standing::Running(h) | Standing::Waiting(h, _) => Some(h.journal.is_some()),
        }
    }

    /// Whether a handler whose task no other process can take over (one that keeps no
    /// journal) is at work here: not waiting for an answer.
    pub(crate) fn busy(&self) -> bool {
        matches!(&*self.stage(), Standing::Running(h) if h.journal.is_none())
    }

    /// The handler asks (`Running` → `Waiting`); `false` when it runs here no more.
    pub(crate) fn ask(&self, waiter: Waiter) -> bool {
        let mut stage = self.stage();
        match std::mem::take(&mut *stage) {
            Standing::Running(handler) => {
                *stage = Standing::Waiting(handler, waiter);
                true
            }
            Standing::Waiting(handler, mut old) => {
                old.disarm();
                *stage = Standing::Waiting(handler, waiter);
                true
            }
            Standing::Followed => false,
        }
    }

    /// Arms `expiry`, the timer that withdraws the question the handler waits on; aborted at
    /// once when it waits no more.
    pub(crate) fn arm(&self, expiry: tokio::task::AbortHandle) {
        match &mut *self.stage() {
            Standing::Waiting(_, waiter) => {
                waiter.disarm();
                waiter.expiry = Some(expiry);
            }
            _ => expiry.abort(),
        }
    }

    /// Takes the way to the handler waiting for an answer, its question's timer disarmed
    /// (`Waiting` → `Running`); the answer begins a turn of `caller`, taken from it (`None`: of
    /// no caller here, an answer forwarded by another process), which is left where it is
    /// when the handler does not wait.
    pub(crate) fn take_waiting(&self, caller: &mut Option<Caller>) -> Result<Waiting, NotWaiting> {
        let mut stage = self.stage();
        match std::mem::take(&mut *stage) {
            Standing::Waiting(mut handler, mut waiter) => {
                waiter.disarm();
                handler.caller = caller.take();
                let journal = handler.journal.clone().zip(waiter.entry);
                *stage = Standing::Running(handler);
                Ok(Waiting {
                    answer: waiter.answer,
                    journal,
                })
            }
            Standing::Running(handler) => {
                let why = match handler.journal {
                    Some(_) => NotWaiting::Journaled,
                    None => NotWaiting::Working,
                };
                *stage = Standing::Running(handler);
                Err(why)
            }
            Standing::Followed => Err(NotWaiting::Gone),
        }
    }

    /// Puts `waiting` back (`Running` → `Waiting`): the handler waits on for an answer (one
    /// taken for it could not be kept). Its question's timer is armed again by the caller.
    pub(crate) fn wait_again(&self, waiting: Waiting) -> bool {
        let entry = waiting.journal.map(|(_, n)| n);
        self.ask(Waiter::new(waiting.answer, entry))
    }

    /// Withdraws the question the handler waits on, and stops the handler (`Waiting` →
    /// `Followed`); `false` when it no longer waits (answered or stopped meanwhile). The
    /// question's timer, which calls this, is not aborted.
    pub(crate) fn withdraw(&self) -> bool {
        let mut stage = self.stage();
        match std::mem::take(&mut *stage) {
            Standing::Waiting(handler, _) => {
                handler.end();
                true
            }
            other => {
                *stage = other;
                false
            }
        }
    }

    /// Stops the handler of the task, if it runs here (→ `Followed`): the task goes on in
    /// another run (a durable task handed over), or ends without it.
    pub(crate) fn stop(&self) {
        if let Some((handler, waiter)) = self.take_handler() {
            handler.stop();
            drop(waiter);
        }
    }

    /// Stops the handler of the task, if it runs here (→ `Followed`), because the task ends
    /// (cancelled, failed): the tasks other agents run for its calls are cancelled too.
    pub(crate) fn end_run(&self) {
        if let Some((handler, waiter)) = self.take_handler() {
            handler.end();
            drop(waiter);
        }
    }

    /// The handler, and the question it waits on (its timer disarmed), to be dropped once
    /// the handler reads as stopped: a handler whose question fails first must not take
    /// itself for one that returned.
    fn take_handler(&self) -> Option<(Handler, Option<Waiter>)> {
        match std::mem::take(&mut *self.stage()) {
            Standing::Followed => None,
            Standing::Running(handler) => Some((handler, None)),
            Standing::Waiting(handler, mut waiter) => {
                waiter.disarm();
                Some((handler, Some(waiter)))
            }
        }
    }

    /// The handler returned (→ `Followed`): nothing of it is left to stop. The caller of its
    /// last turn, to be told if it refused the input.
    pub(crate) fn ended(&self) -> Option<Caller> {
        match std::mem::take(&mut *self.stage()) {
            Standing::Followed => None,
            Standing::Running(handler) => handler.caller,
            Standing::Waiting(handler, mut waiter) => {
                waiter.disarm();
                handler.caller
            }
        }
    }
}
