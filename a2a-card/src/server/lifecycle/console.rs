//! What the operators' console reads of the lifecycle (feature `console`): the store, the
//! agent's namespace, and which skill a task runs. Its reads and its cancel go through the
//! lifecycle's own `get`, `list` and `cancel`, the paths every binding's calls take once
//! admitted.

use std::sync::Arc;

use a2a::Task;

use super::Lifecycle;
use crate::dispatch::Decision;
use crate::server::store::Store;

// One of `Lifecycle`'s blocks (see the lifecycle's module docs): what the console reads of the lifecycle, kept with the console (feature `console`).
impl Lifecycle {
    /// The store, opened.
    pub(crate) fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The agent's namespace in a store a host shares among several agents.
    pub(crate) fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The skills, in declaration order.
    pub(crate) fn skill_ids(&self) -> Vec<&'static str> {
        self.agent.skills().iter().map(|s| s.id).collect()
    }

    /// The skill task `task` runs, as dispatch decides it from the task's first message (the
    /// skill it names, else the schema its data follows, else the skill that takes text).
    pub(crate) fn skill_of(&self, task: &Task) -> Option<&'static str> {
        let first = task.history.as_ref()?.first()?;
        let json = serde_json::to_value(first).ok()?;
        match self.dispatcher.dispatch(json, None) {
            Decision::Run { skill, .. } => self.agent.skills().get(skill).map(|s| s.id),
            _ => None,
        }
    }

    /// `GetTask` as answered once admitted.
    pub(crate) async fn read_task(&self, id: &str) -> Result<Task, a2a::A2AError> {
        self.get(a2a::GetTaskRequest {
            id: id.to_owned(),
            history_length: None,
            tenant: None,
        })
        .await
    }

    /// `ListTasks` as answered once admitted (`req.tenant`: the reach).
    pub(crate) async fn list_tasks_admitted(
        &self,
        req: a2a::ListTasksRequest,
    ) -> Result<a2a::ListTasksResponse, a2a::A2AError> {
        self.list(req).await
    }

    /// `CancelTask` as answered once admitted: the running handler stopped, the cancel
    /// recorded and posted, here or on the replica that runs it.
    pub(crate) async fn cancel_admitted(&self, id: &str) -> Result<Task, a2a::A2AError> {
        self.cancel(id.to_owned()).await
    }
}
