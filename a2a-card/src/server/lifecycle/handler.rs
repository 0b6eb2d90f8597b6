//! The official request handler trait, method by method, on the [`Lifecycle`].

use a2a::*;
use a2a_server::{RequestHandler, ServiceParams};
use async_trait::async_trait;
use futures::stream::BoxStream;

use super::checks::{check_history_length, cut_history, field_error};
use super::log::Until;
use super::run::{status, status_of};
use super::{Lifecycle, Numbered, new_task_id, unnumbered};
use crate::agent::Agent;
use crate::server::auth;
use crate::server::exact;

#[async_trait]
impl<A: Agent> RequestHandler for Lifecycle<A> {
    async fn send_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2AError> {
        self.authorize(params)?;
        let config = req.configuration.as_ref();
        let history_length = config.and_then(|c| c.history_length);
        check_history_length("configuration.historyLength", history_length)?;
        let immediately = config.and_then(|c| c.return_immediately) == Some(true);
        let turn = self.begin(params, req).await?;
        let task = if immediately {
            turn.task
        } else {
            turn.tracked.wait(turn.seq, Until::Interrupted).await;
            if let Some(error) = turn.tracked.error_after(turn.seq) {
                return Err(error);
            }
            turn.tracked.snapshot().0
        };
        self.settle(&turn.tracked.id).await?;
        let mut task = task;
        cut_history(&mut task, history_length);
        Ok(SendMessageResponse::Task(self.out_task(task)))
    }

    async fn send_streaming_message(
        &self,
        params: &ServiceParams,
        req: SendMessageRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let events = self.send_streaming_numbered(params, req).await?;
        Ok(self.out_events(unnumbered(events)))
    }

    async fn get_task(
        &self,
        params: &ServiceParams,
        req: GetTaskRequest,
    ) -> Result<Task, A2AError> {
        self.authorize(params)?;
        check_history_length("historyLength", req.history_length)?;
        let mut task = self.find(&req.id).await?;
        cut_history(&mut task, req.history_length);
        Ok(self.out_task(task))
    }

    async fn list_tasks(
        &self,
        params: &ServiceParams,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2AError> {
        self.authorize(params)?;
        if let Some(size) = req.page_size
            && !(1..=100).contains(&size)
        {
            return Err(field_error(
                "pageSize",
                format!("is {size}; it is between 1 and 100 (omit it for 50)"),
            ));
        }
        check_history_length("historyLength", req.history_length)?;
        let mut list = self.store().list(&req).await?;
        if self.exact && !exact::is_plain() {
            list.tasks.iter_mut().for_each(exact::encode_task);
        }
        Ok(list)
    }

    async fn cancel_task(
        &self,
        params: &ServiceParams,
        req: CancelTaskRequest,
    ) -> Result<Task, A2AError> {
        self.authorize(params)?;
        let id = req.id;
        // Cancelling a canceled task answers it as it is (cancel is idempotent); a task that
        // ended otherwise cannot be canceled.
        let settled = |task: Task| {
            if task.status.state == TaskState::Canceled {
                Ok(self.out_task(task))
            } else {
                Err(A2AError::task_not_cancelable(&id))
            }
        };
        if let Some(tracked) = self.recorder.live.get(&id) {
            let event = status(&tracked, TaskState::Canceled, None);
            if self.recorder.record(&tracked, event).await {
                self.recorder.sessions.cancel(&id);
                self.recorder.live.finished(&tracked);
            }
            return settled(tracked.snapshot().0);
        }
        let task = self
            .store()
            .get(&id)
            .await?
            .ok_or_else(|| A2AError::task_not_found(&id))?;
        if task.status.state.is_terminal() {
            return settled(task);
        }
        match self.store().begin_cancel(&id).await {
            Ok(task) => {
                // Another replica runs it: its handler stops there, and it posts the update.
                // Here, nobody else would.
                if self.changes.is_none()
                    && let Some(push) = &self.recorder.push
                {
                    let event = status_of(&id, &task.context_id, TaskState::Canceled, None);
                    push.deliver(&id, event);
                }
                Ok(self.out_task(task))
            }
            Err(e) if e.code == error_code::TASK_NOT_CANCELABLE => settled(self.find(&id).await?),
            Err(e) => Err(e),
        }
    }

    async fn subscribe_to_task(
        &self,
        params: &ServiceParams,
        req: SubscribeToTaskRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let events = self.subscribe_numbered(params, req, None).await?;
        Ok(self.out_events(unnumbered(events)))
    }

    async fn create_push_config(
        &self,
        params: &ServiceParams,
        mut req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        self.authorize(params)?;
        let Some((configs, policy)) = &self.configs else {
            return Err(A2AError::push_notification_not_supported());
        };
        policy.check(&req.url).await?;
        self.find(&req.task_id).await?;
        req.id.get_or_insert_with(new_task_id);
        let saved = configs.save(req).await?;
        self.recorder.webhooks_changed(&saved.task_id, None);
        Ok(saved)
    }

    async fn get_push_config(
        &self,
        params: &ServiceParams,
        req: GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        self.authorize(params)?;
        let configs = self.configs()?;
        configs.get(&req.task_id, &req.id).await
    }

    async fn list_push_configs(
        &self,
        params: &ServiceParams,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2AError> {
        self.authorize(params)?;
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

    async fn delete_push_config(
        &self,
        params: &ServiceParams,
        req: DeleteTaskPushNotificationConfigRequest,
    ) -> Result<(), A2AError> {
        self.authorize(params)?;
        let configs = self.configs()?;
        configs.delete(&req.task_id, &req.id).await?;
        self.recorder.webhooks_changed(&req.task_id, None);
        Ok(())
    }

    async fn get_extended_agent_card(
        &self,
        params: &ServiceParams,
        _req: GetExtendedAgentCardRequest,
    ) -> Result<a2a::AgentCard, A2AError> {
        // Only for authenticated callers, whatever the card requires of other calls.
        if let Some(guard) = &self.guard
            && !auth::is_authenticated(params)
        {
            return Err(auth::report(guard.unauthenticated_any()));
        }
        self.extended
            .clone()
            .ok_or_else(A2AError::extended_card_not_configured)
    }
}
