//! `GetTaskPushNotificationConfig`: a task's webhook, without its secrets.

use a2a::*;

use super::{Asked, Called, Operation, redacted};
use crate::server::call::Context;
use crate::server::lifecycle::Lifecycle;

/// `GetTaskPushNotificationConfig`.
pub(crate) struct GetPushConfig(pub(crate) GetTaskPushNotificationConfigRequest);

impl Operation for GetPushConfig {
    type Answer = TaskPushNotificationConfig;
    const METHOD: Option<&'static str> = Some(a2a::methods::GET_PUSH_CONFIG);

    async fn answer(
        self,
        lifecycle: &Lifecycle,
        ctx: &Context,
    ) -> Called<TaskPushNotificationConfig> {
        let req = self.0;
        let scope = lifecycle
            .admit(ctx, Asked::task(&req.task_id, req.tenant.as_deref()))
            .await?;
        let configs = lifecycle.configs_of(&req.task_id).await?;
        let config = configs.get(&req.task_id, &req.id).await?;
        Ok(scope.answered(redacted(config)))
    }
}
