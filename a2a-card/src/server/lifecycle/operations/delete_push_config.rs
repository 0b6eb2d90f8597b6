//! `DeleteTaskPushNotificationConfig`: a task's webhook removed.

use a2a::*;

use super::{Asked, Called, Operation};
use crate::server::call::Context;
use crate::server::lifecycle::Lifecycle;

/// `DeleteTaskPushNotificationConfig`.
pub(crate) struct DeletePushConfig(pub(crate) DeleteTaskPushNotificationConfigRequest);

impl Operation for DeletePushConfig {
    type Answer = ();
    const METHOD: Option<&'static str> = Some(a2a::methods::DELETE_PUSH_CONFIG);

    async fn answer(self, lifecycle: &Lifecycle, ctx: &Context) -> Called<()> {
        let req = self.0;
        let scope = lifecycle
            .admit(ctx, Asked::task(&req.task_id, req.tenant.as_deref()))
            .await?;
        let configs = lifecycle.configs_of(&req.task_id).await?;
        configs.delete(&req.task_id, &req.id).await?;
        lifecycle.recorder.webhooks_changed(&req.task_id, None);
        Ok(scope.answered(()))
    }
}
