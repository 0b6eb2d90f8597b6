//! `ListTaskPushNotificationConfigs`: a page of a task's webhooks, without their secrets.

use a2a::*;

use super::{Asked, Called, Operation, redacted};
use crate::server::call::{Context, field_error};
use crate::server::lifecycle::Lifecycle;

/// `ListTaskPushNotificationConfigs`.
pub(crate) struct ListPushConfigs(pub(crate) ListTaskPushNotificationConfigsRequest);

impl Operation for ListPushConfigs {
    type Answer = ListTaskPushNotificationConfigsResponse;
    const METHOD: Option<&'static str> = Some(a2a::methods::LIST_PUSH_CONFIGS);

    async fn answer(
        self,
        lifecycle: &Lifecycle,
        ctx: &Context,
    ) -> Called<ListTaskPushNotificationConfigsResponse> {
        let req = self.0;
        let scope = lifecycle
            .admit(ctx, Asked::task(&req.task_id, req.tenant.as_deref()))
            .await?;
        let mut list = lifecycle.list_configs(req).await?;
        list.configs = list.configs.into_iter().map(redacted).collect();
        Ok(scope.answered(list))
    }
}

// One of `Lifecycle`'s blocks (see the lifecycle's module docs): each operation's work is kept in its own module.
impl Lifecycle {
    async fn list_configs(
        &self,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2AError> {
        let configs = self.configs()?;
        self.find(&req.task_id).await?;
        let mut configs = configs.list(&req.task_id).await?;
        configs.sort_by(|a, b| a.id.cmp(&b.id));
        let size = a2a_server::pagination::resolve_page_size(req.page_size);
        let start = match &req.page_token {
            Some(token) if !token.is_empty() => token
                .parse::<usize>()
                .map_err(|_| field_error("pageToken", "is not a token this agent gave"))?,
            _ => 0,
        }
        .min(configs.len());
        let end = (start + size).min(configs.len());
        Ok(ListTaskPushNotificationConfigsResponse {
            next_page_token: (end < configs.len()).then(|| end.to_string()),
            configs: configs.drain(start..end).collect(),
        })
    }
}
