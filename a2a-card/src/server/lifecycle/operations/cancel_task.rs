//! `CancelTask`: the running handler stopped and the cancel recorded, here or on the replica
//! that runs the task; a canceled task answered as it is.

use a2a::*;

use super::{Asked, Called, Operation};
use crate::server::call::Context;
use crate::server::lifecycle::Lifecycle;
use crate::server::lifecycle::task::updates::{status, status_of};
use crate::server::lifecycle::task::{Ending, Happening};

/// `CancelTask`.
pub(crate) struct CancelTask(pub(crate) CancelTaskRequest);

impl Operation for CancelTask {
    type Answer = Task;
    const METHOD: Option<&'static str> = Some(a2a::methods::CANCEL_TASK);

    async fn answer(self, lifecycle: &Lifecycle, ctx: &Context) -> Called<Task> {
        let req = self.0;
        let scope = lifecycle
            .admit(ctx, Asked::task(&req.id, req.tenant.as_deref()))
            .await?;
        Ok(scope.answered(lifecycle.cancel(req.id).await?))
    }
}

// One of `Lifecycle`'s blocks (see the lifecycle's module docs): each operation's work is kept in its own module.
impl Lifecycle {
    /// `CancelTask` once admitted.
    pub(in crate::server::lifecycle) async fn cancel(&self, id: String) -> Result<Task, A2AError> {
        // Cancelling a canceled task answers it as it is (cancel is idempotent); a task that
        // ended otherwise cannot be canceled.
        let settled = |task: Task| {
            if task.status.state == TaskState::Canceled {
                Ok(task)
            } else {
                Err(A2AError::task_not_cancelable(&id))
            }
        };
        if let Some(tracked) = self.current(&id) {
            let event = status(&tracked, TaskState::Canceled, None);
            if let Ok(false) = self
                .recorder
                .end(&tracked, Happening::Cancel, Ending::with(event))
                .await
                && let Some(refused) = tracked.broken()
            {
                // The store refused the cancel (a full disk, a store out of reach): it is not
                // acknowledged, whatever the task here says; the store's recovery has the task.
                return Err(refused);
            }
            return settled(tracked.snapshot().0);
        }
        let task = self
            .tasks()
            .get(&id)
            .await?
            .ok_or_else(|| A2AError::task_not_found(&id))?;
        if task.status.state.is_terminal() {
            return settled(task);
        }
        match self.tasks().begin_cancel(&id).await {
            Ok(task) => {
                // Another replica runs it: its handler stops there, and it posts the update.
                // Here, nobody else would.
                if !self.cluster.is_shared()
                    && let Some(push) = &self.recorder.push
                {
                    let event = status_of(&id, &task.context_id, TaskState::Canceled, None);
                    push.deliver(&id, std::sync::Arc::new(event.into()));
                }
                Ok(task)
            }
            Err(e) if e.code == error_code::TASK_NOT_CANCELABLE => settled(self.find(&id).await?),
            Err(e) => Err(e),
        }
    }
}
