//! `SendMessage` and `SendStreamingMessage`: a message that starts a task or answers one, its
//! turn waited for or followed as a stream.

use std::sync::Arc;

use a2a::*;
use futures::StreamExt;

use super::{Asked, Called, Operation};
use crate::server::call::{Context, Failure, NumberedStream};
use crate::server::idempotency::Key;
use crate::server::lifecycle::request_checks::{
    check_history_length, cut_history, cut_shared_history,
};
use crate::server::lifecycle::task::Until;
use crate::server::lifecycle::{Lifecycle, Scope, Start};
use crate::server::limits::Permits;
use crate::server::store::KeyClaim;

/// `SendMessage`: the task once its turn ends or asks (at once with `returnImmediately`).
pub(crate) struct SendMessage(pub(crate) SendMessageRequest);

impl Operation for SendMessage {
    type Answer = Arc<Task>;
    const METHOD: Option<&'static str> = Some(a2a::methods::SEND_MESSAGE);

    async fn answer(self, lifecycle: &Lifecycle, ctx: &Context) -> Called<Arc<Task>> {
        let req = self.0;
        let scope = lifecycle.admit(ctx, Asked::send(&req)).await?;
        let task = lifecycle.send(ctx, req, &scope).await?;
        Ok(scope.answered(task))
    }
}

/// `SendStreamingMessage`: the turn followed as a stream (the task, then its events until it
/// ends or asks), counted as an open stream until it closes.
pub(crate) struct SendStreamingMessage(pub(crate) SendMessageRequest);

impl Operation for SendStreamingMessage {
    type Answer = NumberedStream;
    const METHOD: Option<&'static str> = Some(a2a::methods::SEND_STREAMING_MESSAGE);

    async fn answer(self, lifecycle: &Lifecycle, ctx: &Context) -> Called<NumberedStream> {
        let req = self.0;
        let scope = lifecycle.admit(ctx, Asked::send(&req)).await?;
        if !lifecycle.streaming {
            return Err(not_streaming().into());
        }
        let open = lifecycle
            .limiter
            .stream(ctx.principal.as_deref(), ctx.peer)?;
        let events = lifecycle.turn(ctx, req, None, &scope, true).await?;
        Ok(scope.answered(held_open(events, open)))
    }
}

/// What a send's idempotency key comes to.
enum Keyed {
    /// A new task: under this id (the key's), or a new one (no key).
    Fresh(Option<String>),
    /// The task an earlier send with the same key made.
    Retry(String),
}

/// `events`, counted as an open stream (by `open`) until it is dropped.
pub(super) fn held_open(events: NumberedStream, open: Permits) -> NumberedStream {
    Box::pin(events.map(move |event| {
        let _counted = &open;
        event
    }))
}

pub(super) fn not_streaming() -> A2AError {
    A2AError::unsupported_operation("the agent card does not declare streaming")
}

// One of `Lifecycle`'s blocks (see the lifecycle's module docs): each operation's work is kept in its own module.
impl Lifecycle {
    /// `SendMessage`: the task when its turn ends or asks (or at once, when the caller says
    /// `returnImmediately`).
    async fn send(
        &self,
        ctx: &Context,
        req: SendMessageRequest,
        scope: &Scope,
    ) -> Result<Arc<Task>, Failure> {
        let config = req.configuration.as_ref();
        let history_length = config.and_then(|c| c.history_length);
        check_history_length("configuration.historyLength", history_length)?;
        let immediately = config.and_then(|c| c.return_immediately) == Some(true);
        let id = match self.keyed(ctx, &req.message, scope).await? {
            Keyed::Fresh(id) => id,
            Keyed::Retry(id) => {
                let mut task = if immediately {
                    self.find(&id).await?
                } else {
                    self.retried(&id).await?
                };
                cut_history(&mut task, history_length);
                return Ok(Arc::new(task));
            }
        };
        let start = Start {
            skill: None,
            id,
            snapshot: immediately,
            resumable: false,
        };
        let mut turn = self.begin(ctx, req, scope, start).await?;
        let mut task = if let (true, Some(task)) = (immediately, turn.task) {
            Arc::new(task)
        } else {
            // A turn not begun yet ends beyond the state it began from (which still asks).
            let from = if turn.begun { turn.seq } else { turn.seq + 1 };
            turn.tracked.wait(from, Until::Interrupted).await;
            if let Some(refusal) = turn.outcome.refused() {
                return Err(refusal.into());
            }
            // The store refused to keep what the turn came to: the caller is not told of it.
            if let Some(broken) = turn.tracked.broken() {
                return Err(broken.into());
            }
            // The task as it ended (or asks), shared with its log here rather than copied.
            turn.tracked.shared().0
        };
        self.settle(&turn.tracked.id).await?;
        cut_shared_history(&mut task, history_length);
        Ok(task)
    }

    /// One turn of a message, followed as a stream (the task, then its events until it ends or
    /// asks). `skill`: the skill a new task runs, named by the caller, else dispatch picks.
    /// `resumable`: whether the stream's reader may resume it with `Last-Event-ID` (its log
    /// is kept once the task ends).
    pub(super) async fn turn(
        &self,
        ctx: &Context,
        req: SendMessageRequest,
        skill: Option<usize>,
        scope: &Scope,
        resumable: bool,
    ) -> Result<NumberedStream, Failure> {
        let id = match self.keyed(ctx, &req.message, scope).await? {
            Keyed::Fresh(id) => id,
            Keyed::Retry(id) => return self.retried_stream(&id, ctx.after).await,
        };
        let start = Start {
            skill,
            id,
            snapshot: true,
            resumable,
        };
        let turn = self.begin(ctx, req, scope, start).await?;
        Ok(self.stream(turn, Until::Interrupted))
    }

    /// What a send's idempotency key (if any) comes to: the id the new task takes, or the
    /// task an earlier send with the same key and message made; `-32602` for the same key
    /// with another message.
    async fn keyed(
        &self,
        ctx: &Context,
        message: &Message,
        scope: &Scope,
    ) -> Result<Keyed, Failure> {
        let Some(key) = Key::of(ctx, message)? else {
            return Ok(Keyed::Fresh(None));
        };
        let id = scope.place.new_id();
        let scoped = key.scoped(&scope.place.make);
        let digest = key.digest(message);
        let claim = match self.store.claim_key(&scoped, &id, &digest).await? {
            KeyClaim::NotKept => self.keys.claim(&scoped, &id, &digest),
            claim => claim,
        };
        let KeyClaim::Taken {
            task_id,
            digest: kept,
        } = claim
        else {
            return Ok(Keyed::Fresh(Some(id)));
        };
        if kept != digest {
            return Err(key.conflict(&task_id).into());
        }
        // The first send may still be making its task (for a moment), or have made none (it
        // was refused): then this one makes it, under the id the key was kept for.
        for _ in 0..20 {
            if self.current(&task_id).is_some() || self.tasks().get(&task_id).await?.is_some() {
                return Ok(Keyed::Retry(task_id));
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        Ok(Keyed::Fresh(Some(task_id)))
    }

    /// The task `id` a retried blocking send answers: as the first send would have, once its
    /// turn ends or asks.
    async fn retried(&self, id: &str) -> Result<Task, Failure> {
        let mut pause = std::time::Duration::from_millis(10);
        loop {
            if let Some(tracked) = self.current(id) {
                tracked.wait(0, Until::Interrupted).await;
                if let Some(broken) = tracked.broken() {
                    return Err(broken.into());
                }
                return Ok(tracked.snapshot().0);
            }
            // Another process runs it: read until it ends or asks.
            let task = self.find(id).await?;
            if Until::Interrupted.stops_at(&task.status.state) {
                return Ok(task);
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(std::time::Duration::from_millis(250));
        }
    }

    /// The stream a retried streaming send answers: the task's events (from the start, or
    /// after the caller's `Last-Event-ID`), or the task alone once it ended.
    async fn retried_stream(
        &self,
        id: &str,
        after: Option<u64>,
    ) -> Result<NumberedStream, Failure> {
        let task = self.find(id).await?;
        if task.status.state.is_terminal() {
            let event =
                std::sync::Arc::new(crate::server::store::Event::new(StreamResponse::Task(task)));
            return Ok(Box::pin(futures::stream::once(
                async move { Ok((None, event)) },
            )));
        }
        Ok(self.subscription(id, after).await?)
    }
}
