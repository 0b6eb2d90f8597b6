//! Push-notification configs in the database of a [`SqlTasks`](super::SqlTasks), removed with
//! their task.

use std::sync::Arc;

use a2a::A2AError;
use async_trait::async_trait;

use super::Shared;

/// Push-notification configs in the database of a [`SqlTasks`](super::SqlTasks), removed with
/// their task.
pub struct SqlPushConfigs {
    pub(super) inner: Arc<Shared>,
}

impl std::fmt::Debug for SqlPushConfigs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlPushConfigs").finish_non_exhaustive()
    }
}

#[async_trait]
impl a2a_server::PushConfigStore for SqlPushConfigs {
    async fn save(
        &self,
        mut config: a2a::TaskPushNotificationConfig,
    ) -> Result<a2a::TaskPushNotificationConfig, A2AError> {
        let s = &self.inner;
        let id = config.id.get_or_insert_with(a2a::new_task_id).clone();
        let body = serde_json::to_string(&config)
            .map_err(|e| A2AError::internal(format!("a push config could not be stored: {e}")))?;
        s.db.save_config(&config.task_id, &id, body).await?;
        Ok(config)
    }

    async fn get(
        &self,
        task_id: &str,
        config_id: &str,
    ) -> Result<a2a::TaskPushNotificationConfig, A2AError> {
        let body = self.inner.db.config(task_id, config_id).await?;
        let body = body.ok_or_else(|| {
            A2AError::invalid_params(format!(
                "task {task_id} has no push notification config {config_id}"
            ))
        })?;
        serde_json::from_str(&body)
            .map_err(|e| A2AError::internal(format!("a stored push config could not be read: {e}")))
    }

    async fn list(&self, task_id: &str) -> Result<Vec<a2a::TaskPushNotificationConfig>, A2AError> {
        let bodies = self.inner.db.configs(task_id).await?;
        bodies
            .iter()
            .map(|b| {
                serde_json::from_str(b).map_err(|e| {
                    A2AError::internal(format!("a stored push config could not be read: {e}"))
                })
            })
            .collect()
    }

    async fn delete(&self, task_id: &str, config_id: &str) -> Result<(), A2AError> {
        self.inner.db.delete_configs(task_id, Some(config_id)).await
    }

    async fn delete_all(&self, task_id: &str) -> Result<(), A2AError> {
        self.inner.db.delete_configs(task_id, None).await
    }
}
