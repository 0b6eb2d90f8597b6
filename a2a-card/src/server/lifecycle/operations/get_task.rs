//! `GetTask`: a task as the caller may read it, its history cut to what it asks.

use a2a::*;

use super::{Asked, Called, Operation};
use crate::server::call::Context;
use crate::server::lifecycle::Lifecycle;
use crate::server::lifecycle::request_checks::{check_history_length, cut_history};

/// `GetTask`.
pub(crate) struct GetTask(pub(crate) GetTaskRequest);

impl Operation for GetTask {
    type Answer = Task;
    const METHOD: Option<&'static str> = Some(a2a::methods::GET_TASK);

    async fn answer(self, lifecycle: &Lifecycle, ctx: &Context) -> Called<Task> {
        let req = self.0;
        let scope = lifecycle
            .admit(ctx, Asked::task(&req.id, req.tenant.as_deref()))
            .await?;
        Ok(scope.answered(lifecycle.get(req).await?))
    }
}

// One of `Lifecycle`'s blocks (see the lifecycle's module docs): each operation's work is kept in its own module.
impl Lifecycle {
    /// `GetTask` once admitted.
    pub(in crate::server::lifecycle) async fn get(
        &self,
        req: GetTaskRequest,
    ) -> Result<Task, A2AError> {
        check_history_length("historyLength", req.history_length)?;
        let mut task = self.find(&req.id).await?;
        cut_history(&mut task, req.history_length);
        Ok(task)
    }
}
