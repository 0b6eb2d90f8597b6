//! The calls a running skill makes to other agents ([`SkillContext::call`]): journaled in a
//! durable skill, cancelled with the task that made them, within its budget, and patient with
//! an agent that cannot be reached for a while.
//!
//! A call of a durable handler takes two journal numbers: at the first, the task the call made
//! at the other agent (written before the call goes on); at the second, its answer. A run
//! after the process stopped meets them in order:
//!
//! | journal holds | the call |
//! |---|---|
//! | the answer | returns it; nothing is sent |
//! | the task, no answer | follows that task (its events, then `GetTask`) to its answer |
//! | nothing | sends again, with the same `messageId` (the idempotency key), which reaches the task an earlier sending made, if it made one |

use std::time::{Duration, SystemTime};

use futures::StreamExt;

use super::run::{Event, TaskHandle, TaskOutcome, cancel, is_interrupted};
use super::{ClientError, Payload, RemoteAgent};
use crate::SkillContext;
use crate::journal::{CallSlot, Entry, RemoteCall};

/// How long a call made with [`SkillContext::call`] keeps asking an agent that does not
/// answer (connection refused or cut, or `-32603`: an agent restarting, a network that drops
/// for a while), from the first failure in a row, before the call fails with the last error.
pub const REACH_FOR: Duration = Duration::from_secs(60);

/// Calls made from a running skill (feature `client`).
impl SkillContext {
    /// Calls skill `skill` of another agent with `payload` (feature `client`), and waits until
    /// the task it makes there ends or asks: as [`RemoteAgent::call`], and also
    ///
    /// - **durable**: in a durable skill, the task made there is journaled before the call
    ///   goes on, and its answer once it comes. A run of the handler after its process stopped
    ///   gets the recorded answer back, or follows the recorded task to its answer, instead of
    ///   sending again; a call whose process stopped before the task was recorded is sent
    ///   again with the same `messageId`, which an agent that makes sends idempotent
    ///   (`RemoteAgent::idempotent_sends`, every agent of this crate) answers with the task the
    ///   first sending made;
    /// - **cancelled with its task**: a task made there that has not answered when this task
    ///   ends (cancelled, failed, or the handler returned without waiting) is cancelled;
    /// - **within the budget**: what is left of this task's [`budget`](Self::budget) goes with
    ///   the message, and the call stops waiting once it is spent
    ///   ([`ClientError::OutOfTime`], the task made there cancelled);
    /// - **patient**: an agent that cannot be reached for a while (restarting, a connection
    ///   cut) is asked again, for up to [`REACH_FOR`](crate::client::REACH_FOR) without an
    ///   answer.
    ///
    /// Outside a task (a handler called directly) it is a plain call.
    ///
    /// ```no_run
    /// use a2a_card::client::{ClientError, Payload, RemoteAgent};
    /// use a2a_card::{SkillContext, SkillError, agent, skill};
    ///
    /// struct Travel { hotels: RemoteAgent }
    /// /// Books trips.
    /// #[agent(url = "http://127.0.0.1:9000")]
    /// impl Travel {
    ///     /// Books a trip: a room from the hotel agent, once, whatever happens to this process.
    ///     #[skill(durable)]
    ///     async fn book(&self, city: String, ctx: SkillContext) -> Result<String, SkillError> {
    ///         let room = ctx
    ///             .call(&self.hotels, "hold-room", Payload::text(city.clone()))
    ///             .await?
    ///             .into_result()?;
    ///         Ok(format!("{city}: {}", room.status_text().unwrap_or_default()))
    ///     }
    /// }
    /// ```
    ///
    /// [`RemoteAgent::call`]: crate::client::RemoteAgent::call
    /// [`ClientError::OutOfTime`]: crate::client::ClientError::OutOfTime
    pub async fn call(
        &self,
        agent: &RemoteAgent,
        skill: &str,
        payload: Payload,
    ) -> Result<TaskOutcome, ClientError> {
        call(self, agent, skill, payload).await
    }
}

/// Calls `skill` of `agent` with `payload` from the running skill of `ctx` (see
/// [`SkillContext::call`]).
async fn call(
    ctx: &SkillContext,
    agent: &RemoteAgent,
    skill: &str,
    payload: Payload,
) -> Result<TaskOutcome, ClientError> {
    // An agent whose card offers no interface this client speaks: said at once.
    agent.client()?;
    let journal = ctx.journal();
    let slot = match journal {
        Some(journal) => Some(journal.call(skill).map_err(|d| ClientError::Journal(d.0))?),
        None => None,
    };
    let deadline = ctx.deadline();
    let (sent, answer_at) = match slot {
        Some(CallSlot::Returned(answer)) => return recorded(skill, answer),
        Some(CallSlot::Made(call, at)) => (Sent::Task(reach(agent, &call.task).await?), Some(at)),
        Some(CallSlot::Free(n, at)) => {
            // The same key on every run of the task: a sending that reached the agent before
            // the task it made was recorded is answered with that task.
            let key = format!("{}-call-{n}", ctx.task_id.as_deref().unwrap_or_default());
            let sent = send(agent, skill, payload, Some(key), deadline).await?;
            if let (Sent::Task(handle), Some(journal)) = (&sent, journal) {
                let call = RemoteCall::new(
                    agent.card_url(),
                    skill,
                    handle.task_id(),
                    handle.context_id(),
                );
                // Not kept (the store failing): a run after this one sends again with the
                // same key, and is answered with the same task.
                let _ = journal
                    .write_at(
                        n,
                        Entry::Call {
                            call: Box::new(call),
                        },
                    )
                    .await;
            }
            (sent, Some(at))
        }
        None => (send(agent, skill, payload, None, deadline).await?, None),
    };
    let outcome = match sent {
        Sent::Answered(outcome) => outcome,
        Sent::Task(mut handle) => {
            let _kept = ctx.remote_task(canceller(agent, handle.task_id()));
            let followed = match left(deadline) {
                Some(left) => tokio::time::timeout(left, follow(&mut handle))
                    .await
                    .unwrap_or_else(|_| Err(out_of_time(agent, handle.task_id()))),
                None => follow(&mut handle).await,
            };
            followed?
        }
    };
    if let (Some(journal), Some(at)) = (journal, answer_at) {
        // Written in the store's next round: a run after a stop before it follows the task
        // again, which answers the same.
        let answer = serde_json::to_value(outcome.response()).unwrap_or_default();
        journal.returned(at, answer);
    }
    Ok(outcome)
}

/// What a sending gave: the answer (a message, or a task that ended at once), or a task to
/// follow.
enum Sent {
    Answered(TaskOutcome),
    Task(TaskHandle),
}

/// The answer the journal recorded for a call of `skill`.
fn recorded(skill: &str, answer: serde_json::Value) -> Result<TaskOutcome, ClientError> {
    serde_json::from_value::<a2a::SendMessageResponse>(answer)
        .map(TaskOutcome::from_response)
        .map_err(|e| {
            ClientError::Journal(format!(
                "the journaled answer of the call of skill `{skill}` does not read as an A2A answer: {e}"
            ))
        })
}

/// Sends `payload` to `skill` of `agent` without waiting (`messageId` `key`, where given),
/// with what is left until `deadline`, asking again while the agent cannot be reached.
async fn send(
    agent: &RemoteAgent,
    skill: &str,
    payload: Payload,
    key: Option<String>,
    deadline: Option<SystemTime>,
) -> Result<Sent, ClientError> {
    let mut message = agent.message(skill, payload)?;
    if let Some(key) = key {
        message.message_id = key;
    }
    let mut patience = Patience::default();
    let outcome = loop {
        if let Some(left) = left(deadline) {
            if left.is_zero() {
                return Err(ClientError::OutOfTime { task_id: None });
            }
            crate::budget::with_budget(&mut message, left);
        }
        match agent.send_message(message.clone(), true).await {
            Ok(outcome) => break outcome,
            Err(e) => patience.wait(e).await?,
        }
    };
    Ok(match outcome.task() {
        Some(_) if !settled(&outcome) => {
            Sent::Task(TaskHandle::from_outcome(agent.clone(), outcome)?)
        }
        _ => Sent::Answered(outcome),
    })
}

/// Task `id` of `agent`, as it is now (asked again while the agent cannot be reached).
async fn reach(agent: &RemoteAgent, id: &str) -> Result<TaskHandle, ClientError> {
    let mut patience = Patience::default();
    loop {
        match TaskHandle::get(agent.clone(), id).await {
            Ok(handle) => return Ok(handle),
            Err(e) => patience.wait(e).await?,
        }
    }
}

/// Follows the task of `handle` until it ends or asks: its events while the agent streams
/// them, then `GetTask`; an agent that stops answering (restarted, taken over by another
/// replica) is asked again.
async fn follow(handle: &mut TaskHandle) -> Result<TaskOutcome, ClientError> {
    let mut patience = Patience::default();
    let mut quiet = Duration::from_millis(20);
    loop {
        if settled(handle.last()) {
            return Ok(handle.last().clone());
        }
        let mut heard = false;
        if let Ok(mut run) = handle.subscribe().await {
            while let Some(Ok(event)) = run.next().await {
                heard = true;
                if matches!(event, Event::Question { .. } | Event::Finished { .. }) {
                    break;
                }
            }
        }
        if let Err(e) = handle.poll().await {
            patience.wait(e).await?;
            continue;
        }
        patience = Patience::default();
        // A stream that ended at once, its task still running: asked again, briefly apart.
        if heard {
            quiet = Duration::from_millis(20);
        } else if !settled(handle.last()) {
            tokio::time::sleep(quiet).await;
            quiet = (quiet * 2).min(Duration::from_secs(1));
        }
    }
}

/// Whether the task of `outcome` ended or asks its caller (or the answer is a message).
fn settled(outcome: &TaskOutcome) -> bool {
    outcome
        .state()
        .is_none_or(|s| s.is_terminal() || is_interrupted(&s))
}

/// What is left until `deadline`, if there is one (zero once it passed).
fn left(deadline: Option<SystemTime>) -> Option<Duration> {
    let deadline = deadline?;
    Some(
        deadline
            .duration_since(SystemTime::now())
            .unwrap_or_default(),
    )
}

/// The budget was spent while task `id` of `agent` ran: it is cancelled, and the call says so.
fn out_of_time(agent: &RemoteAgent, id: &str) -> ClientError {
    canceller(agent, id)();
    ClientError::OutOfTime {
        task_id: Some(id.to_owned()),
    }
}

/// What cancels task `id` of `agent`, in the background (asked again while the agent cannot be
/// reached).
fn canceller(agent: &RemoteAgent, id: &str) -> crate::context::Canceller {
    let agent = agent.clone();
    let id = id.to_owned();
    Box::new(move || {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let mut patience = Patience::default();
            while let Err(e) = cancel(&agent, &id).await {
                if patience.wait(e).await.is_err() {
                    return;
                }
            }
        });
    })
}

/// Asking again an agent that does not answer: for up to [`REACH_FOR`] from the first failure
/// in a row, further apart each time.
struct Patience {
    since: Option<tokio::time::Instant>,
    wait: Duration,
}

impl Default for Patience {
    fn default() -> Self {
        Patience {
            since: None,
            wait: Duration::from_millis(100),
        }
    }
}

impl Patience {
    /// Waits before the next attempt after `e`, or gives `e` back: an error that asking again
    /// does not mend, or the agent not answering for [`REACH_FOR`].
    async fn wait(&mut self, e: ClientError) -> Result<(), ClientError> {
        let transient = matches!(
            e,
            ClientError::Unreachable { .. }
                | ClientError::Transport(_)
                | ClientError::Rejected { code: -32603, .. }
        );
        let since = *self.since.get_or_insert_with(tokio::time::Instant::now);
        if !transient || since.elapsed() >= REACH_FOR {
            return Err(e);
        }
        tokio::time::sleep(self.wait).await;
        self.wait = (self.wait * 2).min(Duration::from_secs(2));
        Ok(())
    }
}
