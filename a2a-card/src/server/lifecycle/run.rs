//! Skill runs: each handler in its own task, what it does turned into task events, its
//! questions answered, cancelled and timed out.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tracing::Instrument as _;

use a2a::{Part, StreamResponse, TaskState};
use futures::channel::{mpsc, oneshot};
use futures::future::{self, Either};
use futures::{FutureExt, StreamExt};
use serde_json::Value;

use crate::agent::Declared;
use crate::arguments::SkillCall;
use crate::context::Signal;
use crate::skill::SkillError;

use super::task::Recorder;
use super::task::updates::{artifact, question_status, reply_part, status};
use super::task::{
    Caller, Ending, Handler, Happening, Journal, Record, Run, Tracked, Waiter, withdraw_unanswered,
};
use crate::server::errors::input_error;

/// How many events a handler may run ahead of the task before it waits.
const EVENT_BUFFER: usize = 16;

/// The status message of a task whose handler panicked (the panic's text goes to the log only).
pub(crate) const PANIC_MESSAGE: &str =
    "the skill failed unexpectedly; the agent's log has the details";

/// What a durable skill's run keeps: its journal, and (when it runs again after its process
/// stopped) the items its handler sent before, as the task's log holds them, which its replay
/// must send again, in order, and which are not recorded twice.
pub(crate) struct Durable {
    pub(crate) journal: Arc<Journal>,
    pub(crate) replay: VecDeque<LogItem>,
}

/// An item a handler sent, as its task's log holds it.
#[derive(Debug, PartialEq)]
pub(crate) enum LogItem {
    /// A `working` status with this text.
    Progress(String),
    /// A chunk of artifact `id`: its parts (as JSON) and flags.
    Chunk {
        id: String,
        parts: Value,
        append: bool,
        last: bool,
    },
    /// Artifact `id` closed (its whole content, once).
    Close { id: String },
    /// A question (`input-required` or `auth-required`) with this text.
    Ask { auth: bool, question: String },
}

impl LogItem {
    /// The items a handler sent, read from its task's events after the task (the server's own
    /// statuses left out).
    pub(crate) fn from_log<'a>(
        events: impl IntoIterator<Item = &'a StreamResponse>,
    ) -> VecDeque<LogItem> {
        let mut seen: Vec<&str> = Vec::new();
        let mut sent = VecDeque::new();
        for event in events {
            match event {
                StreamResponse::StatusUpdate(update) => {
                    let text = update
                        .status
                        .message
                        .as_ref()
                        .and_then(|m| m.parts.first())
                        .and_then(Part::as_text)
                        .map(str::to_owned);
                    match (&update.status.state, text) {
                        (TaskState::Working, Some(text)) => sent.push_back(LogItem::Progress(text)),
                        (TaskState::InputRequired, Some(question)) => {
                            sent.push_back(LogItem::Ask {
                                auth: false,
                                question,
                            })
                        }
                        (TaskState::AuthRequired, Some(question)) => {
                            sent.push_back(LogItem::Ask {
                                auth: true,
                                question,
                            });
                        }
                        _ => {}
                    }
                }
                StreamResponse::ArtifactUpdate(update) => {
                    let id = update.artifact.artifact_id.as_str();
                    let append = update.append == Some(true);
                    if seen.contains(&id) && !append {
                        sent.push_back(LogItem::Close { id: id.to_owned() });
                    } else {
                        if !seen.contains(&id) {
                            seen.push(id);
                        }
                        sent.push_back(LogItem::Chunk {
                            id: id.to_owned(),
                            parts: serde_json::to_value(&update.artifact.parts)
                                .unwrap_or(Value::Null),
                            append,
                            last: update.last_chunk == Some(true),
                        });
                    }
                }
                _ => {}
            }
        }
        sent
    }
}

/// Where a durable handler's replay is: the items still to meet, and how many it met.
#[derive(Default)]
pub(super) struct LogReplay {
    items: VecDeque<LogItem>,
    met: usize,
}

impl LogReplay {
    /// A replay that meets `items` (what the task's log holds), in order.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(super) fn new(items: VecDeque<LogItem>) -> LogReplay {
        LogReplay { items, met: 0 }
    }

    /// Whether the item `item` makes is the next one the log holds (then met, and not to be
    /// recorded again); `Err` (why) when the log holds another; `Ok(false)` once the log's
    /// items are all met (the item is then not made: a run that replays nothing does no more
    /// work per item than any other).
    pub(super) fn meets(&mut self, item: impl FnOnce() -> LogItem) -> Result<bool, String> {
        let Some(next) = self.items.front() else {
            return Ok(false);
        };
        self.met += 1;
        let item = item();
        if *next == item {
            self.items.pop_front();
            return Ok(true);
        }
        Err(format!(
            "the durable handler did not replay as its task's log says: its item {} was {}, and the handler now sent {}; a durable handler must send the same items in the same order (its code changed? branch on `ctx.patched(..)`, or give the skill a new `durable = \"VERSION\"`)",
            self.met,
            describe(next),
            describe(&item)
        ))
    }
}

fn describe(item: &LogItem) -> String {
    match item {
        LogItem::Progress(text) => format!("progress `{}`", clip(text)),
        LogItem::Chunk {
            id,
            parts,
            append,
            last,
        } => format!(
            "a chunk of artifact `{id}` (append {append}, last {last}: {})",
            clip(&parts.to_string())
        ),
        LogItem::Close { id } => format!("the close of artifact `{id}`"),
        LogItem::Ask { question, .. } => format!("the question `{}`", clip(question)),
    }
}

fn clip(text: &str) -> String {
    text.chars().take(60).collect()
}

/// Starts the handler of skill `skill` of `agent` for the task `tracked` follows, its first
/// turn `caller`'s (if a caller here waits for it): its events are recorded, in order, as they
/// come.
pub(crate) fn start(
    agent: Arc<dyn Declared>,
    recorder: Arc<Recorder>,
    tracked: Arc<Tracked>,
    skill: usize,
    mut call: SkillCall,
    durable: Option<Durable>,
    caller: Option<Caller>,
) {
    call.context.task_id = Some(tracked.id.clone());
    call.context.context_id = Some(tracked.context.clone());
    let skill_id = agent.skills().get(skill).map_or("output", |s| s.id);
    let (journal, replay) = match durable {
        Some(d) => (Some(d.journal), d.replay),
        None => (None, VecDeque::new()),
    };
    let (link, events) = call.context.link(skill_id, EVENT_BUFFER, journal.clone());
    let (abort, aborted) = oneshot::channel::<()>();
    let handler = Handler::new(abort, link.clone(), journal, caller);
    let run = handler.run();
    if !tracked.start(handler) {
        tracing::warn!(task = %tracked.id, "a handler was not started for a task that ended here");
        return;
    }
    let task = tracked.id.clone();
    let parent = tracked.span().unwrap_or_else(tracing::Span::current);
    let span = super::super::telemetry::skill_span(&parent, skill_id);
    let run_span = span.clone();
    let handler = async move {
        let run =
            AssertUnwindSafe(agent.run_skill(skill, call).instrument(run_span)).catch_unwind();
        // The abort first: a cancel also drops the answer a question waits for, which ends the
        // handler's `ask` with an error that must not be taken for its outcome.
        let outcome = match future::select(aborted, std::pin::pin!(run)).await {
            // Cancelled: the handler's future is dropped here, and nothing more is sent.
            Either::Left(_) => {
                span.record("a2a.skill.cancelled", true);
                return;
            }
            Either::Right((Ok(outcome), _)) => {
                span.record("a2a.skill.cancelled", false);
                span.record("a2a.skill.panicked", false);
                outcome
            }
            Either::Right((Err(panic), _)) => {
                let text = panicked(&span, &*panic);
                tracing::error!(task = %task, skill = skill_id, panic = %text, "a skill handler panicked");
                Err(SkillError::Failed(PANIC_MESSAGE.to_owned()))
            }
        };
        // Calls of other agents the handler did not wait for end with its task (unless it
        // returned because it was stopped: a task handed over goes on elsewhere).
        if !link.stopped() {
            link.cascade();
        }
        link.end(outcome).await;
    };
    let replay = LogReplay::new(replay);
    // The handler and the recording of its events in one task: each event is recorded
    // without waking another.
    tokio::spawn(future::join(
        handler,
        drive(recorder, tracked, run, events, replay),
    ));
}

/// A handler's `panic`, marked on its skill's `span`: what it said, for the log (its caller is
/// told [`PANIC_MESSAGE`] instead).
pub(super) fn panicked(span: &tracing::Span, panic: &(dyn std::any::Any + Send)) -> String {
    span.record("a2a.skill.panicked", true);
    span.record("otel.status_code", "ERROR");
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}

/// Records the events of `run`'s handler until it ends or is dropped, or a newer run of the
/// task replaces it here.
async fn drive(
    recorder: Arc<Recorder>,
    tracked: Arc<Tracked>,
    run: Run,
    mut events: mpsc::Receiver<Signal>,
    mut replay: LogReplay,
) {
    // Artifacts sent in chunks and not closed yet.
    let mut open: Vec<String> = Vec::new();
    // A replayed item is not recorded again; one that is not what the log holds ends the run.
    macro_rules! replayed {
        ($item:expr) => {
            match replay.meets(|| $item) {
                Ok(met) => met,
                Err(why) => {
                    diverged(&recorder, &tracked, why, Vec::new()).await;
                    break;
                }
            }
        };
    }
    while let Some(event) = events.next().await {
        // The task was taken up here again and a newer run replaced this one (its claim was
        // given back and claimed anew while this run went on): what this handler sent last
        // is not the task's (the newer run replays to it), and the task is the newer run's.
        if tracked.replaced(run) {
            break;
        }
        match event {
            Signal::Progress(text) => {
                if replayed!(LogItem::Progress(text.clone())) {
                    continue;
                }
                let event = status(&tracked, TaskState::Working, Some(text));
                recorder.record(&tracked, event).await;
            }
            Signal::Chunk {
                id,
                name,
                reply,
                append,
                last,
            } => {
                let Some(part) = reply_part(reply) else {
                    continue;
                };
                if last {
                    open.retain(|o| *o != id);
                } else if !open.contains(&id) {
                    open.push(id.clone());
                }
                if replayed!(chunk(&id, &part, append, last)) {
                    continue;
                }
                let event = artifact(&tracked, id, name, vec![part], append, last);
                recorder.record(&tracked, event).await;
            }
            Signal::Close { id } => {
                if let Some(i) = open.iter().position(|o| *o == id) {
                    open.swap_remove(i);
                    if replayed!(LogItem::Close { id: id.clone() }) {
                        continue;
                    }
                    recorder.record(&tracked, Record::Close(id)).await;
                }
            }
            Signal::Ask {
                auth,
                question,
                data,
                answer,
                entry,
            } => {
                if !tracked.ask(run, Waiter::new(answer, entry)) {
                    break;
                }
                // The question the task was waiting on when its process stopped: it waits on,
                // for what is left of its time.
                let pending = replayed!(LogItem::Ask {
                    auth,
                    question: question.clone()
                });
                let asked_at = pending
                    .then(|| tracked.snapshot().0.status.timestamp)
                    .flatten();
                withdraw_unanswered(&recorder, &tracked, asked_at);
                if pending {
                    // An answer that came while no process ran the handler.
                    // Its caller's turn begins with it.
                    if let Some(letter) = recorder.mailbox.take(&tracked.id, asked_at)
                        && let Ok(waiting) = tracked.take_waiting(&mut { letter.caller })
                        && let Err(e) = Box::pin(super::task::deliver(
                            &recorder,
                            &tracked,
                            letter.message,
                            letter.answer,
                            waiting,
                        ))
                        .await
                    {
                        tracing::warn!(task = %tracked.id, "a kept answer was not handed over: {}", e.message);
                    }
                    continue;
                }
                let state = if auth {
                    TaskState::AuthRequired
                } else {
                    TaskState::InputRequired
                };
                let event = question_status(&tracked, state, question, data);
                recorder.record(&tracked, event).await;
            }
            // A question answered before the process stopped: its answer came from the
            // journal, and the log holds the question.
            Signal::Asked { auth, question } => {
                replayed!(LogItem::Ask { auth, question });
            }
            Signal::End {
                outcome,
                artifact_id,
                metadata,
            } => {
                // The artifacts sent in chunks are closed with the end, in one change: one
                // write of the task, which is not copied in between.
                let mut ending: Vec<Record> = Vec::new();
                let mut diverged_at_end = None;
                for id in std::mem::take(&mut open) {
                    match replay.meets(|| LogItem::Close { id: id.clone() }) {
                        Ok(true) => {}
                        Ok(false) => ending.push(Record::Close(id)),
                        Err(why) => diverged_at_end = Some(why),
                    }
                }
                if let Some(why) = diverged_at_end {
                    diverged(&recorder, &tracked, why, ending).await;
                    break;
                }
                // The refusal of its input the caller of the handler's turn is told.
                let mut refusal = None;
                let end = match outcome {
                    Ok(reply) => {
                        // The reply's artifact, unless recorded already (the process stopped
                        // right after it).
                        let reply = reply_part(reply)
                            .filter(|part| {
                                !replay
                                    .meets(|| chunk(&artifact_id, part, false, true))
                                    .unwrap_or(false)
                            })
                            .map(|part| {
                                let name = artifact_id.clone();
                                artifact(&tracked, artifact_id, name, vec![part], false, true)
                            });
                        ending.extend(reply.map(Record::Event));
                        if let Some(left) = replay.items.front() {
                            let why = format!(
                                "the durable handler did not replay as its task's log says: it returned before sending {} again",
                                describe(left)
                            );
                            diverged(&recorder, &tracked, why, ending).await;
                            break;
                        }
                        status(&tracked, TaskState::Completed, None)
                    }
                    Err(e @ SkillError::Input(_)) => {
                        // The caller of the turn is answered with the refusal, the task fails.
                        let input = input_error(&e);
                        let why = input.message.clone();
                        refusal = Some(input);
                        status(&tracked, TaskState::Failed, Some(why))
                    }
                    Err(e) => status(&tracked, TaskState::Failed, Some(e.to_string())),
                };
                // What the handler put in the task's metadata goes with its end.
                let mut end = end;
                if let (false, StreamResponse::StatusUpdate(update)) =
                    (metadata.is_empty(), &mut end)
                {
                    update.metadata = Some(metadata);
                }
                // The closes, the reply and the end, written to the store at once.
                ending.push(Record::Event(end));
                let ending = Ending::of(ending).refusing(refusal);
                // Refused when the task ended meanwhile (canceled, handed over).
                let _ = recorder.end(&tracked, Happening::Return, ending).await;
                break;
            }
        }
    }
    // What followed the task here is over, unless a newer run of it goes on with what this
    // one followed: taken out of the registry, its answers would find no handler here and
    // wait for one forever (seen in the fault campaign: rows a live replica owned and renewed,
    // with no run there, the answers forwarded to it kept for a run that never came).
    if !tracked.replaced(run) {
        recorder.finish(&tracked);
    }
}

/// A chunk as its task's log holds it.
pub(super) fn chunk(id: &str, part: &Part, append: bool, last: bool) -> LogItem {
    LogItem::Chunk {
        id: id.to_owned(),
        parts: serde_json::to_value([part]).unwrap_or(Value::Null),
        append,
        last,
    }
}

/// Ends the run of a durable handler whose replay is not what its task's log holds: the task
/// fails saying why (after `ending`, the closes due before it), and the handler is dropped.
async fn diverged(recorder: &Recorder, tracked: &Arc<Tracked>, why: String, ending: Vec<Record>) {
    tracing::warn!(task = %tracked.id, "{why}");
    let failed = status(tracked, TaskState::Failed, Some(why));
    let ending = Ending::of(ending.into_iter().chain([Record::Event(failed)]));
    let _ = recorder.end(tracked, Happening::Fail, ending).await;
}
