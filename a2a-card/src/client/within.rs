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

use super::run::{Event, TaskHandle, TaskOutcome, cancel};
use super::{ClientError, Payload, RemoteAgent};
use crate::SkillContext;
use crate::journal::{CallSlot, Entry, RemoteCall};

/// How long a call made with [`SkillContext::call`] keeps asking an agent that does not
/// answer (connection refused or cut, or `-32603`: an agent restarting, a network that drops
/// for a while), from the first failure in a row, before the call fails with the last error.
///
/// ```
/// assert_eq!(a2a_card::client::REACH_FOR, std::time::Duration::from_secs(60));
/// ```
pub const REACH_FOR: Duration = Duration::from_secs(60);

// Another block of `SkillContext`: calls of other agents, which need the feature `client`,
// kept with the client.
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
    ///   ([`ClientError::OutOfTime`], the task made there cancelled); so does what is left of
    ///   its model tokens ([`token_budget`](Self::token_budget));
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
    let Some(journal) = ctx.journal() else {
        return made(ctx, agent, skill, payload, None).await;
    };
    let (n, at) = match journal.call(skill).map_err(|d| ClientError::Journal(d.0))? {
        CallSlot::Returned(recorded) => return replayed(skill, recorded),
        CallSlot::Made(call, at) => (Err(call), at),
        CallSlot::Free(n, at) => (Ok(n), at),
    };
    let ended = match n {
        Ok(n) => made(ctx, agent, skill, payload, Some((journal, n))).await,
        Err(call) => followed(ctx, agent, &call.task).await,
    };
    // Written in the store's next round (a run after a stop before it follows the task
    // again, which answers the same), the answer or why there is none: a replay gets the same.
    journal.returned(at, record(&ended));
    ended
}

/// Makes the call, and follows the task it made (recorded at number `n` of `journal` before
/// it is followed, in a durable skill).
async fn made(
    ctx: &SkillContext,
    agent: &RemoteAgent,
    skill: &str,
    payload: Payload,
    journal: Option<(&std::sync::Arc<crate::journal::Journal<crate::Answer>>, u64)>,
) -> Result<TaskOutcome, ClientError> {
    // The same key on every run of the task: a sending that reached the agent before the task
    // it made was recorded is answered with that task.
    let key = journal.map(|(_, n)| key_of(ctx.task_id.as_deref().unwrap_or_default(), n));
    let mut handle = match send(
        agent,
        skill,
        payload,
        key,
        ctx.deadline(),
        ctx.token_budget(),
    )
    .await?
    {
        Gave::Answered(outcome) => return Ok(outcome),
        Gave::Task(handle) => handle,
    };
    let kept = ctx.remote_task(canceller(agent, handle.task_id()));
    if let Some((journal, n)) = journal {
        let call = RemoteCall::new(
            agent.card_url(),
            skill,
            handle.task_id(),
            handle.context_id(),
        );
        // Not kept (the store failing): a run after this one sends again with the same key,
        // and is answered with the same task.
        let _ = journal
            .write_at(
                n,
                Entry::Call {
                    call: Box::new(call),
                },
            )
            .await;
    }
    within(ctx, agent, &mut handle, kept).await
}

/// Follows task `id` of `agent`, which a call made before its process stopped.
async fn followed(
    ctx: &SkillContext,
    agent: &RemoteAgent,
    id: &str,
) -> Result<TaskOutcome, ClientError> {
    let kept = ctx.remote_task(canceller(agent, id));
    let mut handle = reach(agent, id).await?;
    within(ctx, agent, &mut handle, kept).await
}

/// Follows the task of `handle` to its answer within the budget of `ctx`; spent, the task is
/// cancelled.
async fn within(
    ctx: &SkillContext,
    agent: &RemoteAgent,
    handle: &mut TaskHandle,
    kept: Option<crate::context::RemoteTask>,
) -> Result<TaskOutcome, ClientError> {
    let followed = match left(ctx.deadline()) {
        Some(left) => match tokio::time::timeout(left, follow(handle)).await {
            Ok(followed) => followed,
            Err(_) => {
                canceller(agent, handle.task_id())();
                Err(ClientError::OutOfTime {
                    task_id: Some(handle.task_id().to_owned()),
                })
            }
        },
        None => follow(handle).await,
    };
    // Answered, or cancelled above, or the agent not reached (nothing more to do there):
    // nothing is left for the task's end to cancel.
    if let Some(kept) = kept {
        kept.answered();
    }
    followed
}

/// The idempotency key of the call at number `n` of task `task`'s journal: the task's id and
/// the number, or, for an id too long for a key, its digest.
fn key_of(task: &str, n: u64) -> String {
    let key = format!("{task}-call-{n}");
    if key.len() <= crate::idempotency::MAX_KEY_LEN {
        return key;
    }
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(task.as_bytes());
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("{hex}-call-{n}")
}

/// What a sending gave: the answer (a message, or a task that ended at once), or a task to
/// follow.
enum Gave {
    Answered(TaskOutcome),
    Task(TaskHandle),
}

/// What the journal keeps of a call's end: the other agent's answer, or `{"error": ..}`.
fn record(ended: &Result<TaskOutcome, ClientError>) -> serde_json::Value {
    match ended {
        Ok(outcome) => serde_json::to_value(outcome.response()).unwrap_or_default(),
        Err(e) => {
            let mut error = serde_json::json!({ "message": e.to_string() });
            match e {
                ClientError::OutOfTime { task_id } => {
                    error["outOfTime"] = serde_json::json!(task_id)
                }
                ClientError::Rejected {
                    code,
                    message,
                    reason,
                    ..
                } => {
                    error["code"] = serde_json::json!(code);
                    error["message"] = serde_json::json!(message);
                    error["reason"] = serde_json::json!(reason);
                }
                _ => {}
            }
            serde_json::json!({ "error": error })
        }
    }
}

/// What the journal recorded of the end of a call of `skill`, as the call gave it.
fn replayed(skill: &str, recorded: serde_json::Value) -> Result<TaskOutcome, ClientError> {
    if let Some(error) = recorded.get("error") {
        let text = |key: &str| error.get(key).and_then(|v| v.as_str()).map(str::to_owned);
        let message = text("message").unwrap_or_default();
        return Err(if let Some(task) = error.get("outOfTime") {
            ClientError::OutOfTime {
                task_id: task.as_str().map(str::to_owned),
            }
        } else if let Some(code) = error.get("code").and_then(|c| c.as_i64()) {
            ClientError::Rejected {
                code: i32::try_from(code).unwrap_or(a2a::error_code::INTERNAL_ERROR),
                message,
                reason: text("reason"),
                violations: Vec::new(),
            }
        } else {
            ClientError::Transport(message)
        });
    }
    serde_json::from_value::<a2a::SendMessageResponse>(recorded)
        .map(TaskOutcome::from_response)
        .map_err(|e| {
            ClientError::Journal(format!(
                "the journaled answer of the call of skill `{skill}` does not read as an A2A answer: {e}"
            ))
        })
}

/// Sends `payload` to `skill` of `agent` without waiting (`messageId` `key`, where given),
/// with what is left until `deadline`, asking again while the agent cannot be reached (where
/// it makes sends idempotent).
async fn send(
    agent: &RemoteAgent,
    skill: &str,
    payload: Payload,
    key: Option<String>,
    deadline: Option<SystemTime>,
    tokens: Option<u64>,
) -> Result<Gave, ClientError> {
    let mut message = agent.message(skill, payload)?;
    if let Some(key) = key {
        message.message_id = key;
    }
    // What is left of the task's model tokens goes with the call.
    if let Some(tokens) = tokens {
        crate::budget::with_tokens(&mut message, tokens);
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
            // Sent again only where that cannot make a second task (the same key reaches the
            // first): a send whose answer was lost may have made one.
            Err(e) if agent.idempotent_sends() => patience.wait(e).await?,
            Err(e) => return Err(e),
        }
    };
    Ok(match outcome.task() {
        Some(_) if !outcome.settled() => {
            Gave::Task(TaskHandle::from_outcome(agent.clone(), outcome)?)
        }
        _ => Gave::Answered(outcome),
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
        if handle.last().settled() {
            return Ok(handle.last().clone());
        }
        // Events beyond the first (the task as it is): the stream followed the task.
        let mut events = 0;
        if let Ok(mut run) = handle.subscribe().await {
            while let Some(Ok(event)) = run.next().await {
                events += 1;
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
        if events > 1 {
            quiet = Duration::from_millis(20);
        } else if !handle.last().settled() {
            tokio::time::sleep(quiet).await;
            quiet = (quiet * 2).min(Duration::from_secs(1));
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_without_an_answer_is_replayed_with_the_same_error() {
        let cases = [
            ClientError::OutOfTime {
                task_id: Some("t-1".into()),
            },
            ClientError::OutOfTime { task_id: None },
            ClientError::Rejected {
                code: -32602,
                message: "no such skill".into(),
                reason: Some("INVALID_PARAMS".into()),
                violations: Vec::new(),
            },
            ClientError::Transport("the agent was not reached for 60 s".into()),
        ];
        for error in cases {
            let recorded = record(&Err(error.clone()));
            let again = replayed("hold", recorded).unwrap_err();
            assert_eq!(again.to_string(), error.to_string());
            assert_eq!(
                std::mem::discriminant(&again),
                std::mem::discriminant(&error)
            );
        }
    }

    #[test]
    fn an_answer_is_replayed_as_it_came() {
        let task = a2a::Task {
            id: "t-1".into(),
            context_id: "c-1".into(),
            status: a2a::TaskStatus {
                state: a2a::TaskState::Completed,
                message: None,
                timestamp: None,
            },
            artifacts: None,
            history: None,
            metadata: None,
        };
        let outcome = TaskOutcome::from_task(task);
        let again = replayed("hold", record(&Ok(outcome.clone()))).unwrap();
        assert_eq!(again, outcome);
        let message = a2a::Message::new(a2a::Role::Agent, vec![a2a::Part::text("held")]);
        let outcome = TaskOutcome::from_response(a2a::SendMessageResponse::Message(message));
        assert_eq!(
            replayed("hold", record(&Ok(outcome.clone()))).unwrap(),
            outcome
        );
        let Err(ClientError::Journal(why)) = replayed("hold", serde_json::json!({"nap": 1})) else {
            panic!("not an answer")
        };
        assert!(why.contains("skill `hold`"), "{why}");
    }

    #[test]
    fn a_key_is_the_task_and_the_call_or_a_digest_of_a_long_task_id() {
        assert_eq!(key_of("t-1", 2), "t-1-call-2");
        let long = "ns/".repeat(100) + "t-1";
        let key = key_of(&long, 2);
        assert!(key.len() <= crate::idempotency::MAX_KEY_LEN, "{key}");
        assert!(key.ends_with("-call-2"));
        assert_ne!(key, key_of(&format!("{long}x"), 2));
        assert_eq!(key, key_of(&long, 2));
    }
}
