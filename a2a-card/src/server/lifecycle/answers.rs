//! Answers to a task's questions: the caller's message handed to the handler that asked, here
//! ([`hand_over`]); forwarded to the replica that runs it; or, for a durable task whose process
//! stopped, kept for the process that takes it over. Whichever it is, the caller's turn begins
//! at once, and the caller follows the task from there: no answer is held here waiting for a
//! takeover.

use std::sync::Arc;

use a2a::*;

use super::task::updates::status;
use super::task::{
    self, Ending, Found, Happening, Letter, Refused, Tracked, TurnOutcome, answer_of, asks,
    deliver, hand_over,
};
use super::{
    Lifecycle, Turn,
    cluster::{follow_log, mirror},
    request_checks::finished,
};
use crate::arguments::SkillCall;
use crate::dispatch::Decision;
use crate::server::errors::dispatch_error;
use crate::server::message::decide;

// One of `Lifecycle`'s blocks (see the lifecycle's module docs): answering a question is the lifecycle's work, kept here with its concern.
impl Lifecycle {
    /// The caller's answer to the question of task `id`, handed to the handler that asked;
    /// `resumable`: the caller reads the turn as a stream it may resume.
    pub(super) async fn resume(
        &self,
        req: SendMessageRequest,
        id: &str,
        config: Option<TaskPushNotificationConfig>,
        resumable: bool,
    ) -> Result<Turn, A2AError> {
        // Structured input on an existing task is refused whatever its state (the
        // extension's rule 5), before anything else is said of the task.
        let call = match decide(
            &self.dispatcher,
            self.max_inline_file,
            &req.message,
            Some(id),
        )? {
            Decision::FollowUp(call) => call,
            Decision::Reject(e) => return Err(dispatch_error(&e)),
            Decision::Run { .. } => {
                return Err(A2AError::internal("an answer was taken for a new message"));
            }
        };
        let tracked = match self.current(id) {
            Some(tracked) => tracked,
            None => {
                // A copy followed here may be behind the store: the task is read again.
                if let Some(stale) = self.recorder.registry.get(id) {
                    self.recorder.drop_stale(&stale);
                }
                self.track_stored(id).await?
            }
        };
        if tracked.state().is_terminal() {
            return Err(finished(id));
        }
        if resumable {
            tracked.resumable();
        }
        if let Some(requested) = req.message.context_id.as_deref()
            && requested != tracked.context
        {
            return Err(A2AError::invalid_params(format!(
                "contextId `{requested}` does not match task `{id}`, which belongs to context `{}`",
                tracked.context
            )));
        }
        let message = req.message;
        self.keep_webhook(id, config, false).await?;
        let (caller, outcome) = task::turn();
        let waiting = match tracked.take_waiting(&mut Some(caller)) {
            Ok(waiting) => waiting,
            // A durable task run again here, its handler replaying its way back to the
            // question: the answer waits for it.
            Err(Refused::Journaled) if asks(&tracked.state()) => {
                return self.keep_for_the_handler(tracked, message, call).await;
            }
            Err(Refused::Working | Refused::Journaled) => return Err(not_asked(id)),
            Err(Refused::Ended) => return Err(finished(id)),
            Err(Refused::Gone) => return self.answer_elsewhere(tracked, message, call).await,
        };
        let snapshot = hand_over(&self.recorder, &tracked, message, call, waiting).await?;
        Ok(Turn::taken(tracked, snapshot, outcome))
    }

    /// The caller's answer to the question of task `tracked`, whose handler does not run here:
    /// forwarded to the replica that runs it; for a durable task whose process stopped while it
    /// waited, kept for the process that takes it over; any other task fails, its handler gone
    /// with its process. The turn begins at once, with the task as it is: the caller follows
    /// it from there as any caller does.
    async fn answer_elsewhere(
        &self,
        tracked: Arc<Tracked>,
        message: Message,
        call: SkillCall,
    ) -> Result<Turn, A2AError> {
        let id = tracked.id.clone();
        if let Some(turn) = self.forward_answer(tracked.clone(), &message).await? {
            return Ok(turn);
        }
        if !self.durable(&id).await {
            self.recorder.join(&tracked, &message);
            let (task, seq) = tracked.snapshot();
            let why = format!(
                "task `{id}` was waiting for input, but the handler that asked is no longer running (the agent restarted since); start a new task"
            );
            let event = status(&tracked, TaskState::Failed, Some(why));
            // Refused when the task ended meanwhile: the caller follows it as it is.
            let _ = self
                .recorder
                .end(&tracked, Happening::Fail, Ending::with(event))
                .await;
            return Ok(Turn::followed(tracked, (task, seq)));
        }
        if !asks(&tracked.state()) {
            return Err(not_asked(&id));
        }
        self.keep_for_the_handler(tracked, message, call).await
    }

    /// The caller's answer to the question of durable task `tracked`, kept for its handler,
    /// which will ask (again) once its replay reaches the question: here, where it replays now
    /// or takes the task over once the lease of the process that stopped runs out. The turn
    /// begins at once with the task as it is (still asking); the answer begins the handler's
    /// turn, this caller's, once the handler takes it. A second answer to the question is
    /// refused.
    async fn keep_for_the_handler(
        &self,
        tracked: Arc<Tracked>,
        message: Message,
        call: SkillCall,
    ) -> Result<Turn, A2AError> {
        let (task, asked) = tracked.snapshot();
        let (caller, outcome) = task::turn();
        let letter = Letter {
            message,
            answer: answer_of(call),
            caller: Some(caller),
        };
        let asked_at = task.status.timestamp;
        let found =
            self.recorder
                .mailbox
                .keep(&self.recorder.registry, &tracked.id, letter, asked_at)?;
        let Some(Found {
            tracked,
            letter,
            waiting,
        }) = found
        else {
            return Ok(Turn::pending(tracked, (task, asked), outcome));
        };
        // Asking (again) meanwhile.
        let snapshot = deliver(
            &self.recorder,
            &tracked,
            letter.message,
            letter.answer,
            waiting,
        )
        .await?;
        Ok(Turn::taken(tracked, snapshot, outcome))
    }

    /// Sends the caller's answer to the replica whose handler asked (Postgres), and follows
    /// the task here through the store's log, as a mirror: this replica's readers see its
    /// events, with their numbers, as they are logged there. The turn begins with the task as
    /// it is (the handler taking the answer is the first event after it). `None` when the
    /// answer cannot go to another process (alone on the store, or a store that carries no
    /// answers or keeps no log).
    async fn forward_answer(
        &self,
        tracked: Arc<Tracked>,
        message: &Message,
    ) -> Result<Option<Turn>, A2AError> {
        let (Some(log), Some(wake)) = (&self.recorder.log, self.cluster.wake()) else {
            return Ok(None);
        };
        // Followed from before the answer goes, so that no event of the task is missed.
        let after = tracked.last();
        if !self.cluster.forward(&tracked.id, message).await? {
            return Ok(None);
        }
        // The question and the answer join the conversation here as on the replica that
        // asked (the log carries events, not the caller's messages).
        self.recorder.join(&tracked, message);
        let (log, cluster, id) = (
            Arc::clone(log),
            Arc::clone(&self.cluster),
            tracked.id.clone(),
        );
        let mut wake = Some(wake);
        mirror(
            Arc::clone(&self.recorder),
            Arc::clone(&tracked),
            move |after| {
                let wake = wake.take().or_else(|| cluster.wake());
                follow_log(Arc::clone(&log), wake, id.clone(), after, Vec::new())
            },
        );
        let (task, _) = tracked.snapshot();
        Ok(Some(Turn::pending(
            tracked,
            (task, after),
            TurnOutcome::none(),
        )))
    }

    /// Whether task `id` is a durable skill's, with a journal this process can run it again
    /// from.
    async fn durable(&self, id: &str) -> bool {
        let Some(log) = self.recorder.journals() else {
            return false;
        };
        log.read_journal(id).await.is_ok_and(|j| !j.is_empty())
    }
}

/// The refusal of an answer to task `id`, which has not asked.
fn not_asked(id: &str) -> A2AError {
    A2AError::invalid_request(format!(
        "task `{id}` is working and has not asked for input; wait for it to ask (input-required) before answering"
    ))
}
