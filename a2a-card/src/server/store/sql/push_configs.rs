//! Push-notification configs in the database of a [`SqlTasks`](super::SqlTasks), removed with
//! their task.

use std::sync::Arc;

use a2a::A2AError;
use async_trait::async_trait;

use super::{Shared, db_error};

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
        let sql = s.sql(
            "INSERT INTO a2a_card_push_configs (task_id, id, body) VALUES (?, ?, ?)
             ON CONFLICT (task_id, id) DO UPDATE SET body = excluded.body",
        );
        sqlx::query(&sql)
            .bind(&config.task_id)
            .bind(&id)
            .bind(body)
            .execute(&s.pool)
            .await
            .map_err(db_error)?;
        Ok(config)
    }

    async fn get(
        &self,
        task_id: &str,
        config_id: &str,
    ) -> Result<a2a::TaskPushNotificationConfig, A2AError> {
        let s = &self.inner;
        let body: Option<String> = sqlx::query_scalar(
            &s.sql("SELECT body FROM a2a_card_push_configs WHERE task_id = ? AND id = ?"),
        )
        .bind(task_id)
        .bind(config_id)
        .fetch_optional(&s.reads)
        .await
        .map_err(db_error)?;
        let body = body.ok_or_else(|| {
            A2AError::invalid_params(format!(
                "task {task_id} has no push notification config {config_id}"
            ))
        })?;
        serde_json::from_str(&body)
            .map_err(|e| A2AError::internal(format!("a stored push config could not be read: {e}")))
    }

    async fn list(&self, task_id: &str) -> Result<Vec<a2a::TaskPushNotificationConfig>, A2AError> {
        let s = &self.inner;
        let bodies: Vec<String> = sqlx::query_scalar(
            &s.sql("SELECT body FROM a2a_card_push_configs WHERE task_id = ? ORDER BY id"),
        )
        .bind(task_id)
        .fetch_all(&s.reads)
        .await
        .map_err(db_error)?;
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
        let s = &self.inner;
        sqlx::query(&s.sql("DELETE FROM a2a_card_push_configs WHERE task_id = ? AND id = ?"))
            .bind(task_id)
            .bind(config_id)
            .execute(&s.pool)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn delete_all(&self, task_id: &str) -> Result<(), A2AError> {
        let s = &self.inner;
        sqlx::query(&s.sql("DELETE FROM a2a_card_push_configs WHERE task_id = ?"))
            .bind(task_id)
            .execute(&s.pool)
            .await
            .map_err(db_error)?;
        Ok(())
    }
}
