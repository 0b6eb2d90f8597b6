//! A durable skill's journal (`#[skill(durable)]`): what its handler already did (its steps'
//! results, its timers' deadlines, the answers to its questions), kept with its task's event
//! log, so that a run of the handler after its process stopped replays what is recorded
//! instead of doing it again.
//!
//! The server writes entry 0 (what the task runs: the skill, its version, the caller); each
//! later entry is one the handler made, in the order it made them. On a replay the handler
//! meets its recorded entries in that order: a step of another name, or a sleep where a step
//! was recorded, means the handler does not do what it did (its code changed, or it decided on
//! something that is not its input, its answers or its steps' results), and the run fails
//! saying which entry differed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The message an answer entry holds: the protocol's (as JSON in a build without the
/// protocol's types, which writes no journal).
#[cfg(any(feature = "client", feature = "server"))]
type Message = a2a::Message;
#[cfg(not(any(feature = "client", feature = "server")))]
type Message = Value;

/// One entry of a durable task's journal, as a store keeps it (see
/// [`EventLog::journal`](crate::server::store::EventLog::journal)): the only form a journal
/// is written and read in.
///
/// Kept as JSON objects a store need not understand, one key naming the kind: `{"begin":
/// {..}}`, `{"started": NAME}`, `{"step": NAME, "value": ..}`, `{"sleep": UNTIL_MS}`,
/// `{"answer": MESSAGE}`, `{"patched": NAME, "value": BOOL}`, `{"call": {..}}`,
/// `{"returned": RESPONSE}`.
///
/// ```
/// use a2a_card::journal::Entry;
///
/// let entry: Entry = serde_json::from_str(r#"{"step": "charge", "value": {"receipt": 7}}"#)?;
/// assert_eq!(
///     entry,
///     Entry::Step { name: "charge".into(), value: serde_json::json!({"receipt": 7}) }
/// );
/// assert_eq!(serde_json::to_string(&Entry::Sleep { until_ms: 5 })?, r#"{"sleep":5}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Entry {
    /// Entry 0, the server's: what the task runs.
    Begin {
        /// The skill, its version and its caller.
        begin: Box<Begin>,
    },
    /// A question was answered with this message (the caller's, as it came).
    Answer {
        /// The message that answered.
        #[serde(rename = "answer")]
        message: Box<Message>,
    },
    /// Marker `name` was met, and said `value` (`ctx.patched(..)`).
    Patched {
        /// The marker's name.
        #[serde(rename = "patched")]
        name: String,
        /// What it said.
        #[serde(default)]
        value: bool,
    },
    /// Step `name` began: written before its body runs (numbered 2^41 above the number its
    /// result is written at, apart from the results), so that a run after its process
    /// stopped knows the body may have run although no result is journaled.
    Started {
        /// The step's name.
        started: String,
    },
    /// Step `name` returned `value`.
    Step {
        /// The step's name.
        #[serde(rename = "step")]
        name: String,
        /// Its result, as JSON.
        #[serde(default)]
        value: Value,
    },
    /// A durable sleep until this time (milliseconds since the Unix epoch).
    Sleep {
        /// The deadline.
        #[serde(rename = "sleep")]
        until_ms: i64,
    },
    /// A call of another agent's skill (`ctx.call(..)`) made this task there: written before
    /// the call goes on, so that a run after a takeover follows that task instead of sending
    /// again.
    Call {
        /// The call.
        call: Box<RemoteCall>,
    },
    /// The call journaled at the number before this one ended with this: the other agent's
    /// `SendMessageResponse`, as JSON (its task once it ended or asked, or its message), or
    /// `{"error": {..}}`, why the call has no answer (a replay gets the same error).
    Returned {
        /// The answer.
        returned: Value,
    },
}

/// A task another agent runs for a durable handler's call ([`Entry::Call`]).
///
/// ```
/// use a2a_card::journal::Entry;
///
/// let entry: Entry = serde_json::from_str(
///     r#"{"call": {"agent": "https://hotels.example/.well-known/agent-card.json",
///                  "skill": "hold-room", "task": "t-7", "context": "c-7"}}"#,
/// )?;
/// let Entry::Call { call } = entry else { panic!("a call") };
/// assert_eq!((call.skill.as_str(), call.task.as_str()), ("hold-room", "t-7"));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RemoteCall {
    /// The card URL of the agent called.
    pub agent: String,
    /// The skill called.
    pub skill: String,
    /// The task the call made there.
    pub task: String,
    /// That task's context.
    pub context: String,
}

impl RemoteCall {
    /// The call of `skill` at the agent whose card is at `agent`, which made task `task` (in
    /// context `context`).
    pub fn new(
        agent: impl Into<String>,
        skill: impl Into<String>,
        task: impl Into<String>,
        context: impl Into<String>,
    ) -> RemoteCall {
        RemoteCall {
            agent: agent.into(),
            skill: skill.into(),
            task: task.into(),
            context: context.into(),
        }
    }
}

/// What a durable task runs, written as its journal's entry 0 when the task is made: what a
/// run of it after its process stopped starts from.
///
/// ```
/// use a2a_card::journal::{Begin, Entry};
///
/// // Written by an earlier release: what it did not write takes its default.
/// let entry: Entry = serde_json::from_str(r#"{"begin": {"skill": "plan-trip", "version": "2"}}"#)?;
/// let Entry::Begin { begin } = entry else { panic!("entry 0 is the beginning") };
/// assert_eq!((begin.skill.as_str(), begin.version.as_deref()), ("plan-trip", Some("2")));
/// assert_eq!(*begin, {
///     let mut expected = Begin::default();
///     expected.skill = "plan-trip".into();
///     expected.version = Some("2".into());
///     expected
/// });
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Begin {
    /// The skill's id.
    pub skill: String,
    /// The version of the skill's code (`#[skill(durable = "..")]`), if it names one.
    #[serde(default)]
    pub version: Option<String>,
    /// The caller that made the task, if authenticated.
    #[serde(default)]
    pub principal: Option<crate::Principal>,
    /// The extensions the task's call used.
    #[serde(default)]
    pub extensions: Vec<String>,
    /// The tenant the task was made in.
    #[serde(default)]
    pub tenant: Option<String>,
    /// The W3C trace context of its first run (header name, value).
    #[serde(default)]
    pub trace: Vec<(String, String)>,
    /// The task's deadline (milliseconds since the Unix epoch), where its first message gave
    /// it a budget ([`budget`](crate::budget)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<i64>,
    /// The model tokens its first message gave it ([`budget`](crate::budget)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
}

impl Entry {
    /// What the entry is, for messages.
    fn describe(&self) -> String {
        match self {
            Entry::Begin { .. } => "the task's beginning".to_owned(),
            Entry::Step { name, .. } => format!("step `{name}`"),
            Entry::Started { started } => {
                format!("step `{started}`, begun and not finished (its body may have run)")
            }
            Entry::Sleep { .. } => "a sleep".to_owned(),
            Entry::Answer { .. } => "an answer to a question".to_owned(),
            Entry::Patched { name, .. } => format!("marker `{name}`"),
            Entry::Call { call } => format!("a call of skill `{}`", call.skill),
            Entry::Returned { .. } => "the answer of a call".to_owned(),
        }
    }
}

/// One recorded entry a handler meets again on a replay: an [`Entry`], its answer (`A`, the
/// handler's answer type) read from the message that answered.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(not(feature = "server"), allow(dead_code))]
pub(crate) enum Recorded<A> {
    /// An entry as it was written.
    Entry(Entry),
    /// A question was answered with this.
    Answer(Box<A>),
}

impl<A> Recorded<A> {
    fn describe(&self) -> String {
        match self {
            Recorded::Entry(entry) => entry.describe(),
            Recorded::Answer(_) => "an answer to a question".to_owned(),
        }
    }
}

/// A replay that does not do what its journal says: which entry differed, and how.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Diverged(pub(crate) String);

/// Where a journal's new entries go: entry `n`, queued with the task's events for a round of
/// the writer soon ([`Write::Queued`]: a step's result, a sleep's deadline, a marker), or
/// written by the future returned, which resolves once it is or says why it was not
/// ([`Write::Awaited`]: a step's start, an answer, a call's task).
pub(crate) type Sink = Box<
    dyn Fn(u64, Entry, Write) -> futures::future::BoxFuture<'static, Result<(), String>>
        + Send
        + Sync,
>;

/// How a [`Sink`] writes an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Write {
    /// Queued at once, for the writer's next round (its future is dropped).
    Queued,
    /// Written by the future, which resolves once it is.
    Awaited,
}

/// A durable handler's journal: the entries recorded (by number), and where new ones go. `A`
/// is the answer a question gets ([`Answer`](crate::Answer) in a skill).
///
/// Each step, sleep and question takes the next number when it begins, whether it is
/// recorded or new, and a new one is written at that number when it is done: steps the
/// handler runs at the same time (`join_all`) keep the numbers they began with, and a replay
/// that begins them in the same order finds each its own result. A number that was taken and
/// never written (a step the process stopped in) is a step that runs again.
pub(crate) struct Journal<A> {
    recorded: Mutex<HashMap<u64, Recorded<A>>>,
    /// The number the next step, sleep or question takes (1 first: entry 0 is the server's).
    next: AtomicU64,
    /// The markers met ([`Journal::patched`]), by name: what each said.
    marks: Mutex<HashMap<String, bool>>,
    /// The number the next marker is written at (from [`MARKS`] up).
    next_mark: AtomicU64,
    /// How many items (progress, chunks, questions) the handler sent before its process
    /// stopped, which its replay sends again ([`Journal::replaying`]).
    items: usize,
    /// How many items the handler sent in this run ([`Journal::sent`]).
    sent: AtomicUsize,
    /// The fencing token of this run ([`Journal::fenced`]).
    token: u64,
    /// The clock its sleeps read.
    #[cfg(feature = "server")]
    clock: crate::clock::Clock,
    sink: Sink,
    /// Where a replay that only reads ([`Journal::dry`]) tells what it met.
    dry: Option<Arc<Dry>>,
}

/// What a replay that only reads ([`Journal::dry`]) met: a handler run against its journal
/// without running a step's body, sleeping, asking or calling, to learn whether it replays.
#[derive(Debug, Default)]
pub(crate) struct Dry {
    found: Mutex<Found>,
}

/// What a [`Dry`] replay met.
#[derive(Debug, Default, Clone)]
pub(crate) struct Found {
    /// The entries it met again, as journaled.
    pub(crate) replayed: usize,
    /// Where the journal ended: the number, and what the handler was to do there (new work,
    /// which the replay did not do).
    pub(crate) end: Option<(u64, String)>,
    /// Where it differed first: the entry's number, what the entry is, what the handler did.
    pub(crate) diverged: Option<(u64, String, String)>,
    /// The markers it met that the journal does not hold, and what each said.
    pub(crate) markers: Vec<(String, bool)>,
}

#[cfg_attr(not(feature = "testing"), allow(dead_code))]
impl Dry {
    /// What it met so far.
    pub(crate) fn found(&self) -> Found {
        self.lock().clone()
    }

    /// The replay stopped at `what` (new work past what the task's log holds), unless it
    /// stopped before.
    pub(crate) fn stopped(&self, what: impl FnOnce() -> String) {
        let mut found = self.lock();
        if found.end.is_none() && found.diverged.is_none() {
            found.end = Some((0, what()));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Found> {
        self.found.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Where markers are numbered from: apart from the steps, sleeps and questions, whose
/// numbers a replay meets in order (code that adds a marker does not shift them).
pub(crate) const MARKS: u64 = 1 << 40;

/// Where the starts of steps are numbered from ([`Entry::Started`]): the start of the step
/// whose result is written at `n` is written at `STARTS + n`, apart from the results (a
/// journal written before starts were does not shift).
pub(crate) const STARTS: u64 = 1 << 41;

impl<A> std::fmt::Debug for Journal<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("next", &self.next.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// A call of another agent as its journal has it.
#[cfg(feature = "client")]
pub(crate) enum CallSlot {
    /// Answered: the answer recorded.
    Returned(Value),
    /// Made, not answered: the task it made there, and the number its answer is written at.
    Made(RemoteCall, u64),
    /// Not made: make it, record the task at the first number, its answer at the second.
    Free(u64, u64),
}

/// A step as its journal has it: its recorded result, or the number its result is written at.
#[derive(Debug)]
pub(crate) enum Slot<T> {
    /// Recorded: the value.
    Recorded(T),
    /// Not recorded: run it, and write it at this number.
    Free(u64),
    /// Begun by an earlier run, not finished (its process stopped while the body ran, or
    /// before its result was written): the body may have run; run it again (with the same
    /// idempotency key), and write its result at this number.
    Again(u64),
}

#[cfg_attr(not(feature = "server"), allow(dead_code))]
impl<A> Journal<A> {
    /// A journal whose entries `recorded` were written (by number; entry 0, the server's,
    /// not among them).
    pub(crate) fn new(recorded: Vec<(u64, Recorded<A>)>, sink: Sink) -> Journal<A> {
        let mut marks = HashMap::new();
        let mut last_mark = None;
        let mut entries = HashMap::new();
        for (n, entry) in recorded {
            match entry {
                Recorded::Entry(Entry::Patched { name, value }) => {
                    last_mark = last_mark.max(Some(n));
                    marks.entry(name).or_insert(value);
                }
                // A step begun: its result, where written, stands for it.
                Recorded::Entry(started @ Entry::Started { .. }) if n >= STARTS => {
                    entries
                        .entry(n - STARTS)
                        .or_insert(Recorded::Entry(started));
                }
                entry => {
                    entries.insert(n, entry);
                }
            }
        }
        Journal {
            recorded: Mutex::new(entries),
            next: AtomicU64::new(1),
            marks: Mutex::new(marks),
            next_mark: AtomicU64::new(last_mark.map_or(MARKS, |n| n.max(MARKS) + 1)),
            items: 0,
            sent: AtomicUsize::new(0),
            token: 1,
            #[cfg(feature = "server")]
            clock: crate::clock::Clock::system(),
            sink,
            dry: None,
        }
    }

    /// This journal, for a replay that only reads: the handler meets its entries, and where it
    /// would do new work (a step, a sleep, a question or a call past the journal, a step
    /// begun and not finished) it gets an error instead, which ends the replay; what it met
    /// goes to `dry`.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) fn dry(mut self, dry: Arc<Dry>) -> Journal<A> {
        self.dry = Some(dry);
        self
    }

    /// New work at number `n` (what the handler does there: `did`): in a replay that only
    /// reads, where it stops (an error for the handler); else nothing.
    fn fresh(&self, n: u64, did: impl FnOnce() -> String) -> Result<(), Diverged> {
        let Some(dry) = &self.dry else {
            return Ok(());
        };
        let mut found = dry.lock();
        if found.end.is_none() {
            found.end = Some((n, did()));
        }
        Err(Diverged(
            "a replay check stops where the journal ends (nothing new is done)".to_owned(),
        ))
    }

    /// The failure of a replay that met `recorded` at number `n` where the handler did `did`,
    /// kept by a replay that only reads.
    fn differs(&self, n: u64, recorded: &Recorded<A>, did: &str) -> Diverged {
        if let Some(dry) = &self.dry {
            let mut found = dry.lock();
            if found.diverged.is_none() && found.end.is_none() {
                found.diverged = Some((n, recorded.describe(), did.to_owned()));
            }
        }
        Self::diverged(n, recorded, did)
    }

    /// This journal, for a run of the handler that sends again the `items` it sent before its
    /// process stopped (the task's log holds them, apart from the journal): a marker met
    /// before the replay sent them all is met in the middle of what the old code did.
    pub(crate) fn replaying(mut self, items: usize) -> Journal<A> {
        self.items = items;
        self
    }

    /// This journal, for the run of fencing token `token` (a run after a takeover: the
    /// claim's; the task's first run has 1, which every claim's is above).
    pub(crate) fn fenced(mut self, token: u64) -> Journal<A> {
        self.token = token;
        self
    }

    /// This journal, its sleeps reading `clock`.
    #[cfg(feature = "server")]
    pub(crate) fn clocked(mut self, clock: crate::clock::Clock) -> Journal<A> {
        self.clock = clock;
        self
    }

    /// The clock its sleeps read.
    #[cfg(feature = "server")]
    pub(crate) fn clock(&self) -> &crate::clock::Clock {
        &self.clock
    }

    /// The fencing token of this run.
    pub(crate) fn token(&self) -> u64 {
        self.token
    }

    /// Counts one item the handler sent (progress, a chunk, an artifact closed, a question),
    /// as it sends it: the point its replay is at.
    pub(crate) fn sent(&self) {
        self.sent.fetch_add(1, Ordering::Relaxed);
    }

    /// What marker `name` says: what it said when this task first met it; else, met now for
    /// the first time, `false` while the handler replays what it did before (the journal
    /// holds an entry further on, a step begun among them, or the task's log an item it has
    /// not sent again: the code that ran the task before did not have the marker there),
    /// `true` once it does new work.
    /// Written in the store's next round, beside the task's other writes.
    pub(crate) fn patched(&self, name: &str) -> bool {
        let mut marks = self.marks.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(value) = marks.get(name) {
            return *value;
        }
        let next = self.next.load(Ordering::Relaxed);
        let replaying = self.sent.load(Ordering::Relaxed) < self.items
            || self
                .recorded
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .keys()
                .any(|n| *n >= next);
        let value = !replaying;
        marks.insert(name.to_owned(), value);
        if let Some(dry) = &self.dry {
            dry.lock().markers.push((name.to_owned(), value));
        }
        let n = self.next_mark.fetch_add(1, Ordering::Relaxed);
        self.queue_at(
            n,
            Entry::Patched {
                name: name.to_owned(),
                value,
            },
        );
        value
    }

    /// The next number, and the entry recorded at it, if any.
    fn take(&self) -> (u64, Option<Recorded<A>>) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let entry = self
            .recorded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&n);
        if let (Some(dry), Some(met)) = (&self.dry, &entry)
            && !matches!(met, Recorded::Entry(Entry::Started { .. }))
        {
            dry.lock().replayed += 1;
        }
        (n, entry)
    }

    /// The next two numbers (a call's: the task it made, its answer), and the entries recorded
    /// at them.
    #[cfg(feature = "client")]
    fn take_two(&self) -> (u64, Option<Recorded<A>>, Option<Recorded<A>>) {
        let n = self.next.fetch_add(2, Ordering::Relaxed);
        let mut recorded = self.recorded.lock().unwrap_or_else(|p| p.into_inner());
        (n, recorded.remove(&n), recorded.remove(&(n + 1)))
    }

    /// Writes `entry` at number `n`, and returns once it is written (an answer: kept before
    /// the handler has it, so that it is never asked again); why not, when the store did not
    /// keep it.
    pub(crate) async fn write_at(&self, n: u64, entry: Entry) -> Result<(), String> {
        (self.sink)(n, entry, Write::Awaited).await
    }

    /// Queues `entry` at number `n`, written in the store's next round (a step's result or a
    /// sleep's deadline: a crash before that round runs the step again, as a crash in its body
    /// does).
    fn queue_at(&self, n: u64, entry: Entry) {
        drop((self.sink)(n, entry, Write::Queued));
    }

    /// The failure of a replay that met `recorded` at number `n` where the handler did `did`.
    fn diverged(n: u64, recorded: &Recorded<A>, did: &str) -> Diverged {
        Diverged(format!(
            "the durable handler did not replay as its journal says: its entry {n} is {}, and the handler now did {did}; a durable handler must do the same steps, sleeps and questions in the same order (its code changed? branch on `ctx.patched(..)`, or give the skill a new `durable = \"VERSION\"`)",
            recorded.describe(),
        ))
    }

    /// Step `name`: its recorded result, or the number to write its result at (write its
    /// start with [`start`](Self::start) where it is new, run it, then
    /// [`stepped`](Self::stepped)).
    pub(crate) fn step(&self, name: &str) -> Result<Slot<Value>, Diverged> {
        match self.take() {
            (n, None) => {
                self.fresh(n, || format!("step `{name}`"))?;
                Ok(Slot::Free(n))
            }
            (_, Some(Recorded::Entry(Entry::Step { name: s, value }))) if s == name => {
                Ok(Slot::Recorded(value))
            }
            (n, Some(Recorded::Entry(Entry::Started { started }))) if started == name => {
                self.fresh(n, || {
                    format!("step `{name}` again (begun, its result not journaled: its body may have run, and runs again)")
                })?;
                Ok(Slot::Again(n))
            }
            (n, Some(other)) => Err(self.differs(n, &other, &format!("step `{name}`"))),
        }
    }

    /// Writes that step `name`, whose result is written at `n`, begins, and returns once it
    /// is written (before its body runs); why not, when the store did not keep it.
    pub(crate) async fn start(&self, n: u64, name: &str) -> Result<(), String> {
        let started = Entry::Started {
            started: name.to_owned(),
        };
        self.write_at(STARTS + n, started).await
    }

    /// Records the result of step `name`, at the number it began with.
    pub(crate) fn stepped(&self, n: u64, name: &str, value: Value) {
        self.queue_at(
            n,
            Entry::Step {
                name: name.to_owned(),
                value,
            },
        );
    }

    /// The deadline of a sleep of `ms` milliseconds from `now_ms`: the recorded one, or a
    /// new one, recorded.
    pub(crate) fn sleep(&self, now_ms: i64, ms: i64) -> Result<i64, Diverged> {
        match self.take() {
            (_, Some(Recorded::Entry(Entry::Sleep { until_ms }))) => Ok(until_ms),
            (n, Some(other)) => Err(self.differs(n, &other, "a sleep")),
            (n, None) => {
                self.fresh(n, || "a sleep".to_owned())?;
                let until_ms = now_ms.saturating_add(ms);
                self.queue_at(n, Entry::Sleep { until_ms });
                Ok(until_ms)
            }
        }
    }

    /// A call of skill `skill` of another agent: its recorded answer, the task it made there
    /// (follow it, then [`returned`](Self::returned)), or the numbers to record it at (make it,
    /// then [`write_at`](Self::write_at) the first an [`Entry::Call`] before going on).
    #[cfg(feature = "client")]
    pub(crate) fn call(&self, skill: &str) -> Result<CallSlot, Diverged> {
        let did = || format!("a call of skill `{skill}`");
        match self.take_two() {
            // Answered at once (no task to follow), or its task's entry not kept.
            (_, None, Some(Recorded::Entry(Entry::Returned { returned }))) => {
                Ok(CallSlot::Returned(returned))
            }
            (n, None, _) => {
                self.fresh(n, did)?;
                Ok(CallSlot::Free(n, n + 1))
            }
            (n, Some(Recorded::Entry(Entry::Call { call })), answer) if call.skill == skill => {
                match answer {
                    Some(Recorded::Entry(Entry::Returned { returned })) => {
                        Ok(CallSlot::Returned(returned))
                    }
                    None => {
                        self.fresh(n + 1, || {
                            format!(
                                "{}, made, its answer not journaled (the task it made is followed)",
                                did()
                            )
                        })?;
                        Ok(CallSlot::Made(*call, n + 1))
                    }
                    Some(other) => Err(self.differs(n + 1, &other, &did())),
                }
            }
            (n, Some(other), _) => Err(self.differs(n, &other, &did())),
        }
    }

    /// Records the answer of the call whose answer is written at `n`.
    #[cfg(feature = "client")]
    pub(crate) fn returned(&self, n: u64, returned: Value) {
        self.queue_at(n, Entry::Returned { returned });
    }

    /// The recorded answer of the next question, or the number its answer is written at (ask
    /// it: the server writes the answer there as it hands it over).
    pub(crate) fn answer(&self) -> Result<Slot<A>, Diverged> {
        match self.take() {
            (n, None) => {
                self.fresh(n, || "a question".to_owned())?;
                Ok(Slot::Free(n))
            }
            (_, Some(Recorded::Answer(answer))) => Ok(Slot::Recorded(*answer)),
            (n, Some(other)) => Err(self.differs(n, &other, "a question")),
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod read_back;
