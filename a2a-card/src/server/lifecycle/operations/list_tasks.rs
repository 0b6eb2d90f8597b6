//! `ListTasks`: a page of the tasks within the caller's reach, from the store's listing.

use a2a::*;

use super::{Asked, Called, Operation};
use crate::server::call::{Context, field_error};
use crate::server::lifecycle::Lifecycle;
use crate::server::lifecycle::request_checks::check_history_length;
use crate::server::store::reaches;

/// `ListTasks`.
pub(crate) struct ListTasks(pub(crate) ListTasksRequest);

impl Operation for ListTasks {
    type Answer = ListTasksResponse;
    const METHOD: Option<&'static str> = Some(a2a::methods::LIST_TASKS);

    async fn answer(self, lifecycle: &Lifecycle, ctx: &Context) -> Called<ListTasksResponse> {
        let mut req = self.0;
        let asked = Asked {
            tenant: req.tenant.as_deref(),
            ..Asked::default()
        };
        let scope = lifecycle.admit(ctx, asked).await?;
        // The store lists the tasks of the caller's reach.
        req.tenant = scope.place.listed();
        Ok(scope.answered(lifecycle.list(req).await?))
    }
}

// One of `Lifecycle`'s blocks (see the lifecycle's module docs): each operation's work is kept in its own module.
impl Lifecycle {
    /// `ListTasks` once admitted (`req.tenant`: the reach).
    pub(in crate::server::lifecycle) async fn list(
        &self,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2AError> {
        if let Some(size) = req.page_size
            && !(1..=100).contains(&size)
        {
            return Err(field_error(
                "pageSize",
                format!("is {size}; it is between 1 and 100 (omit it for 50)"),
            ));
        }
        check_history_length("historyLength", req.history_length)?;
        let mut list = self.tasks().list(&req).await?;
        // A store of one's own may not read the reach: nothing beyond it is answered.
        let reach = req.tenant.as_deref().unwrap_or("");
        list.tasks.retain(|task| reaches(reach, &task.id));
        Ok(list)
    }
}
