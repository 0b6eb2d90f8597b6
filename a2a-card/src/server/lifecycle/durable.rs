//! Durable skills (`#[skill(durable)]`) on a store that keeps journals: a task's journal
//! opened where the task's log is kept, and the tasks a store takes over from a process that
//! stopped run again from their journals.

use std::sync::Arc;

use a2a::{A2AError, Role, Task, TaskState};
use tokio::sync::mpsc::UnboundedReceiver;

use super::Lifecycle;
use super::run::{self, LogItem};
use super::task::updates::status;
use super::task::{Ending, Happening};
use crate::context::Answer;
use crate::dispatch::Decision;
use crate::journal::{Begin, Entry, Journal, Recorded, Sink, Write};
use crate::server::message::{decide, dispatch_input};
use crate::server::store::{Claimed, EventLog};

/// How many tasks taken over a process reads back at once (see [`Lifecycle::take_up`]).
const TAKING_UP: usize = 4;

/// The journal of task `task_id` in `log`, its entries `recorded` (by number).
pub(super) fn open(
    log: Arc<dyn EventLog>,
    task_id: &str,
    recorded: Vec<(u64, Recorded<Answer>)>,
    clock: crate::server::Clock,
) -> Journal<Answer> {
    Journal::new(recorded, sink(log, task_id)).clocked(clock)
}

/// Where the new entries of task `task_id`'s journal go: `log`.
fn sink(log: Arc<dyn EventLog>, task_id: &str) -> Sink {
    let id = task_id.to_owned();
    Box::new(move |n, entry: Entry, write| {
        if write == Write::Queued {
            log.journal(&id, n, &entry);
            return Box::pin(std::future::ready(Ok(())));
        }
        let (log, id) = (Arc::clone(&log), id.clone());
        Box::pin(async move {
            log.write_journal(&id, n, &entry).await.map_err(|e| {
                tracing::warn!(task = %id, "a journal entry was not written: {}", e.message);
                e.message
            })
        })
    })
}

/// What a run of a task again needs (see [`Lifecycle::prepare`]).
struct Rerun {
    skill: usize,
    call: crate::arguments::SkillCall,
    journal: Journal<Answer>,
    /// The W3C trace context of its first run.
    trace: Vec<(String, String)>,
}

// One of `Lifecycle`'s blocks (see the lifecycle's module docs): durable skills' journals
// and takeovers, kept here with their concern; the next block exists only with the feature
// `testing`.
impl Lifecycle {
    /// The version of skill `skill`'s code its journals are kept for, when it is durable: the
    /// one `#[skill(durable = "..")]` names, else `None` (any version: a new version of the
    /// agent runs on the tasks an older one journaled).
    pub(super) fn durable_version(&self, skill: usize) -> Option<Option<&'static str>> {
        match self.agent.skills().get(skill)?.durable? {
            "" => Some(None),
            version => Some(Some(version)),
        }
    }

    /// Runs again each task `resumed` brings (a durable skill's, which the store took over
    /// from a process that stopped), for as long as the store lives.
    ///
    /// At most [`TAKING_UP`] tasks are read back at once: a replica that takes over hundreds
    /// (another stopped, or this one stepped back and claimed its own again) would otherwise
    /// read all their journals and logs at once, hold every connection of its pool, and starve
    /// its own lease renewal, which then fails and makes it step back and give them all up
    /// again (seen in an hour of the fault campaign, every few seconds).
    pub(crate) fn take_up(self: &Arc<Self>, mut resumed: UnboundedReceiver<Claimed>) {
        let lifecycle = Arc::clone(self);
        let reading = Arc::new(tokio::sync::Semaphore::new(TAKING_UP));
        tokio::spawn(async move {
            while let Some(claimed) = resumed.recv().await {
                let lifecycle = Arc::clone(&lifecycle);
                let reading = Arc::clone(&reading);
                // Each on its own: a database that does not answer holds back no other.
                tokio::spawn(async move { lifecycle.take_up_one(claimed, &reading).await });
            }
        });
    }

    /// Runs task `task` again; tried again a few times when the store fails, then failed (it
    /// is this process's now: no other would take it up).
    async fn take_up_one(&self, claimed: Claimed, reading: &tokio::sync::Semaphore) {
        let Claimed {
            task,
            fencing_token,
            ..
        } = claimed;
        let id = task.id.clone();
        if self
            .recorder
            .stopping
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            // Given up again, with this process's other tasks, at its drain's end.
            tracing::info!(task = %id, "a durable task taken over while shutting down is left for another process");
            return;
        }
        let mut why = A2AError::internal("");
        for wait in [1, 2, 4, 8] {
            let resumed = match reading.acquire().await {
                Ok(_permit) => self.resume_durable(task.clone(), fencing_token).await,
                // Never closed while the lifecycle lives.
                Err(_) => return,
            };
            match resumed {
                Ok(()) => return,
                Err(e) => why = e,
            }
            tracing::warn!(task = %id, "a durable task could not be taken up again yet: {}", why.message);
            tokio::time::sleep(std::time::Duration::from_secs(wait)).await;
        }
        // The store out of reach all along is no fault of the task's: it goes back to the
        // store's recovery, which takes it up again (here or elsewhere) once the store answers.
        if crate::server::store::unavailable(&why) {
            tracing::warn!(task = %id, "a durable task taken over is given back: the store did not answer");
            self.recorder.give_back(&id);
            return;
        }
        let why = why.message;
        let why = format!(
            "the agent stopped while this task ran, and it could not be run again from its journal ({why}); send the request again as a new task"
        );
        match self.track_stored(&id).await {
            Ok(tracked) => {
                let event = status(&tracked, TaskState::Failed, Some(why));
                let _ = self
                    .recorder
                    .end(&tracked, Happening::Fail, Ending::with(event))
                    .await;
            }
            Err(e) => {
                tracing::error!(task = %id, "a durable task could not be failed: {}", e.message)
            }
        }
    }

    /// Runs task `task` again from its journal, as the run of fencing token `token`, or fails
    /// it saying why it cannot be.
    async fn resume_durable(&self, task: Task, token: u64) -> Result<(), A2AError> {
        let Some(log) = self.recorder.log.clone() else {
            return Ok(());
        };
        let id = task.id.clone();
        // An answer another process handed over before it stopped is not kept for the replay.
        self.recorder.mailbox.forget_answered(&task);
        let rows = log.read_journal(&id).await?;
        // The whole log, once: the items the handler sent, and the task as it is now.
        let logged = log
            .read(&id, Some(0))
            .await?
            .ok_or_else(|| A2AError::task_not_found(&id))?;
        let events = logged
            .events
            .iter()
            .map(|(_, e)| e.event())
            .collect::<Result<Vec<_>, _>>()?;
        let replay = LogItem::from_log(events.iter().map(|e| &**e));
        let tracked = self.track_logged(logged)?;
        let (now, seq) = tracked.snapshot();
        if now.status.state.is_terminal() {
            // Its log holds its end and its row does not: the run that ended it could not
            // write the row (it had lost its claim), and no run is left to. Run again, the
            // handler would only replay to that end, which it cannot record twice: the row is
            // written as the log says instead, and the task is done.
            tracing::info!(task = %id, "a durable task taken over had ended in its log: its row is written as it ended");
            let written = self.recorder.store(Arc::new(now), seq).await;
            self.recorder.finish(&tracked);
            return written;
        }
        match self.prepare(&now, rows, sink(Arc::clone(&log), &id)) {
            Ok(Rerun {
                skill,
                call,
                journal,
                trace,
            }) => {
                let skill_id = self.agent.skills().get(skill).map_or("", |s| s.id);
                let span = crate::server::telemetry::resumed_task_span(
                    &tracked.id,
                    &tracked.context,
                    self.agent.decl().name,
                    skill_id,
                    &trace,
                );
                tracing::info!(parent: &span, replayed = replay.len(), "resumed");
                tracked.observe(super::task::Observed {
                    span,
                    skill: skill_id,
                    since: std::time::Instant::now(),
                });
                run::start(
                    Arc::clone(&self.agent),
                    Arc::clone(&self.recorder),
                    tracked,
                    skill,
                    call,
                    Some(run::Durable {
                        journal: Arc::new(journal.replaying(replay.len()).fenced(token)),
                        replay,
                    }),
                    // Taken up with no caller: a refusal is the task's failure alone.
                    None,
                );
            }
            Err(why) => {
                let event = status(&tracked, TaskState::Failed, Some(why));
                let _ = self
                    .recorder
                    .end(&tracked, Happening::Fail, Ending::with(event))
                    .await;
            }
        }
        Ok(())
    }

    /// What a run of `task` again needs: its skill, the call its first message makes, its
    /// journal with the entries recorded (`rows`, entry 0 first) and its new ones going to
    /// `sink`, and the trace its first run was in; why it cannot run again otherwise.
    fn prepare(&self, task: &Task, rows: Vec<(u64, Entry)>, sink: Sink) -> Result<Rerun, String> {
        // A task of an agent no longer mounted here (a host's: its id names its agent).
        let namespace = crate::server::store::namespace_of(&task.id);
        if namespace != self.namespace.as_deref() {
            return Err(format!(
                "the agent that ran this task (`{}`) is not served here any more; send the request again as a new task",
                namespace.unwrap_or("the agent alone")
            ));
        }
        let mut begin = None;
        let mut recorded = Vec::with_capacity(rows.len());
        for (n, entry) in rows {
            match entry {
                Entry::Begin { begin: b } if n == 0 => begin = Some(*b),
                Entry::Answer { message } => {
                    let answer = match decide(&self.dispatcher, self.max_inline_file, &message, Some(&task.id)) {
                        Ok(Decision::FollowUp(call)) => super::answer_of(call),
                        _ => return Err("an answer in the task's journal no longer reads as one; send the request again as a new task".into()),
                    };
                    recorded.push((n, Recorded::Answer(Box::new(answer))));
                }
                entry => recorded.push((n, Recorded::Entry(entry))),
            }
        }
        let Begin {
            skill: skill_id,
            version: journaled,
            principal,
            extensions,
            tenant,
            trace,
            deadline_ms,
            tokens,
        } = begin
            .ok_or("the task's journal has no beginning; send the request again as a new task")?;
        let skill = self.agent.skills()
            .iter()
            .position(|s| s.id == skill_id)
            .ok_or_else(|| format!("the task ran skill `{skill_id}`, which this agent no longer has; send the request again as a new task"))?;
        match self.durable_version(skill) {
            // No version named: the handler runs on whatever journaled the task.
            Some(None) => {}
            Some(Some(version)) if Some(version) == journaled.as_deref() => {}
            Some(Some(version)) => {
                let journaled = match journaled {
                    Some(journaled) => format!("version `{journaled}`"),
                    None => "a version that named none".to_owned(),
                };
                return Err(format!(
                    "the task was journaled by {journaled} of skill `{skill_id}`, and this agent runs version `{version}`, whose handler may not replay it: it was not run again; send the request again as a new task"
                ));
            }
            None => {
                return Err(format!(
                    "skill `{skill_id}` is no longer durable, so its task was not run again; send the request again as a new task"
                ));
            }
        }
        let first = task
            .history
            .iter()
            .flatten()
            .find(|m| m.role == Role::User)
            .ok_or("the task keeps no first message to run again from; send the request again as a new task")?;
        let (json, files) = dispatch_input(self.max_inline_file, first).map_err(|e| e.message)?;
        let mut call = match self.dispatcher.dispatch_to(skill, json, files) {
            Decision::Run { call, .. } => call,
            _ => return Err("the task's first message no longer reaches its skill; send the request again as a new task".into()),
        };
        call.context.set_principal(principal.map(Arc::new));
        call.context.set_extensions(extensions);
        call.context.set_tenant(tenant);
        call.context.set_deadline(deadline_ms, self.clock.clone());
        call.context.set_tokens(tokens);
        Ok(Rerun {
            skill,
            call,
            journal: Journal::new(recorded, sink).clocked(self.clock.clone()),
            trace,
        })
    }
}

/// What a replay check of a task found ([`Lifecycle::check_replay`]).
#[cfg(feature = "testing")]
pub(crate) enum Checked {
    /// The handler replayed what the journal holds (`found` says how far, and the markers it
    /// met), and its log's items.
    Replays(crate::journal::Found),
    /// It did not: what differed (the journal's entry, or an item of the log).
    Diverged {
        /// The journal's entry number, where an entry differed.
        entry: Option<u64>,
        /// What differed, as a run would fail saying.
        why: String,
    },
    /// The task would not run again at all (its skill gone, another version): why.
    NotRun(String),
}

#[cfg(feature = "testing")]
impl Lifecycle {
    /// Replays durable task `task` (its journal `rows`, entry 0 first, and its log's `events`)
    /// against this agent's handler without running a step's body, sleeping, asking, calling
    /// or storing anything: where the handler would do new work, the replay stops.
    pub(crate) async fn check_replay(
        &self,
        task: &Task,
        rows: Vec<(u64, Entry)>,
        events: &[a2a::StreamResponse],
    ) -> Checked {
        use futures::StreamExt as _;

        use super::run::{LogItem, LogReplay, chunk};
        use super::task::updates::reply_part;
        use crate::context::Signal;

        let nothing: Sink = Box::new(|_, _, _| {
            Box::pin(std::future::ready(Err(
                "a replay check writes nothing".to_owned()
            )))
        });
        let Rerun {
            skill,
            mut call,
            journal,
            ..
        } = match self.prepare(task, rows, nothing) {
            Ok(prepared) => prepared,
            Err(why) => return Checked::NotRun(why),
        };
        let items = LogItem::from_log(events);
        let dry = Arc::new(crate::journal::Dry::default());
        // Its sleeps end at once: the clock stands at the end of time.
        let end_of_time =
            crate::server::Clock::driven(Arc::new(crate::server::Driven::at_ms(i64::MAX)));
        let journal = Arc::new(
            journal
                .dry(Arc::clone(&dry))
                .replaying(items.len())
                .clocked(end_of_time),
        );
        call.context.task_id = Some(task.id.clone());
        call.context.context_id = Some(task.context_id.clone());
        let skill_id = self.agent.skills().get(skill).map_or("output", |s| s.id);
        let (link, mut events) = call.context.link(skill_id, 16, Some(journal));
        let run = std::panic::AssertUnwindSafe(self.agent.run_skill(skill, call));
        let mut replay = LogReplay::new(items);
        // The items the handler sends, beside what the log holds: the first that differs, or
        // the first past the log (new work: the replay stops there).
        let items = async {
            while let Some(event) = events.next().await {
                let met = match event {
                    Signal::Progress(text) => replay.meets(|| LogItem::Progress(text)),
                    Signal::Chunk {
                        id,
                        reply,
                        append,
                        last,
                        ..
                    } => match reply_part(reply) {
                        Some(part) => replay.meets(|| chunk(&id, &part, append, last)),
                        None => Ok(true),
                    },
                    Signal::Close { id } => replay.meets(|| LogItem::Close { id }),
                    Signal::Asked { auth, question } => {
                        replay.meets(|| LogItem::Ask { auth, question })
                    }
                    Signal::Ask { .. } | Signal::End { .. } => Ok(true),
                };
                match met {
                    Ok(true) => {}
                    Ok(false) => {
                        dry.stopped(|| "new items, past what the task's log holds".to_owned());
                        return None;
                    }
                    Err(why) => return Some(why),
                }
            }
            None
        };
        let handler = async {
            // A handler that goes on past the journal's end, errors and all, is stopped.
            let _ = tokio::time::timeout(
                std::time::Duration::from_secs(10),
                futures::FutureExt::catch_unwind(run),
            )
            .await;
        };
        let item_diverged = {
            let items = std::pin::pin!(items);
            let handler = std::pin::pin!(handler);
            match futures::future::select(items, handler).await {
                futures::future::Either::Left((why, _)) => why,
                // The handler ended: the items it sent before are in the channel still.
                futures::future::Either::Right(((), items)) => {
                    drop(link);
                    items.await
                }
            }
        };
        let found = dry.found();
        if let Some((n, entry, did)) = &found.diverged {
            let why = format!("entry {n} of the journal is {entry}, and the handler now did {did}");
            return Checked::Diverged {
                entry: Some(*n),
                why,
            };
        }
        match item_diverged {
            Some(why) => Checked::Diverged { entry: None, why },
            None => Checked::Replays(found),
        }
    }
}
