//! `CreateTaskPushNotificationConfig`: a webhook for a task, its address checked against the
//! agent's webhook policy.

use a2a::*;

use super::{Asked, Called, Operation};
use crate::server::call::Context;
use crate::server::lifecycle::Lifecycle;

/// `CreateTaskPushNotificationConfig`.
pub(crate) struct CreatePushConfig(pub(crate) TaskPushNotificationConfig);

impl Operation for CreatePushConfig {
    type Answer = TaskPushNotificationConfig;
    const METHOD: Option<&'static str> = Some(a2a::methods::CREATE_PUSH_CONFIG);

    async fn answer(
        self,
        lifecycle: &Lifecycle,
        ctx: &Context,
    ) -> Called<TaskPushNotificationConfig> {
        let req = self.0;
        let scope = lifecycle
            .admit(ctx, Asked::task(&req.task_id, req.tenant.as_deref()))
            .await?;
        Ok(scope.answered(lifecycle.create_config(req).await?))
    }
}

// One of `Lifecycle`'s blocks (see the lifecycle's module docs): each operation's work is kept in its own module.
impl Lifecycle {
    async fn create_config(
        &self,
        mut req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        let Some((configs, policy)) = &self.configs else {
            return Err(A2AError::push_notification_not_supported());
        };
        // A task that does not exist is said so before anything of the webhook is.
        self.find(&req.task_id).await?;
        policy.check(&req.url).await?;
        req.id.get_or_insert_with(new_task_id);
        let saved = configs.save(req).await?;
        self.recorder.webhooks_changed(&saved.task_id, None);
        Ok(saved)
    }
}
