//! How long a SQL store waits for its database: every statement (its wait for a connection
//! included) answers within [`DEADLINE`], or its caller is told that the store did not answer.
//! A database that went away without a word (a network partition: no reset, no error) would
//! otherwise hold a statement for as long as TCP retries, minutes, and every caller with it.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use a2a::{A2AError, ListTasksRequest, Task};
use async_trait::async_trait;

use super::database::{Database, Orphan, Stored};
use super::round::{Log, Row, Written};
use crate::server::store::{ChangeFeed, Event, KeyClaim, Retention};

/// How long a statement may take, its wait for a connection included (the pools' own
/// acquire timeout is the same).
pub(super) const DEADLINE: Duration = Duration::from_secs(5);

/// The error of a statement the database did not answer within [`DEADLINE`].
fn unanswered() -> A2AError {
    tracing::error!("the task store did not answer within {DEADLINE:?}");
    A2AError::internal(format!(
        "{}: it did not answer within {} s",
        crate::server::store::contract::UNAVAILABLE,
        DEADLINE.as_secs()
    ))
}

/// `statement` (or any wait on the database), or [`unanswered`] once [`DEADLINE`] went by.
pub(super) async fn within<T>(
    statement: impl Future<Output = Result<T, A2AError>>,
) -> Result<T, A2AError> {
    tokio::time::timeout(DEADLINE, statement)
        .await
        .unwrap_or_else(|_| Err(unanswered()))
}

/// A [`Database`] whose statements answer within [`DEADLINE`]. Two are left alone: the
/// writer's rounds (their writers wait for them within the deadline instead, see
/// `Writer::wait`: a round given up halfway could have committed) and the listener, which
/// lives as long as the store.
pub(super) struct Deadline<D>(pub(super) D);

#[async_trait]
impl<D: Database> Database for Deadline<D> {
    fn system(&self) -> &'static str {
        self.0.system()
    }
    fn rounds(&self) -> usize {
        self.0.rounds()
    }
    async fn renew(&self) -> Result<(), A2AError> {
        within(self.0.renew()).await
    }
    async fn others_live(&self, within_ms: i64) -> Result<bool, A2AError> {
        within(self.0.others_live(within_ms)).await
    }
    async fn live_replicas(&self, within_ms: i64) -> Result<usize, A2AError> {
        within(self.0.live_replicas(within_ms)).await
    }
    async fn replicas(&self) -> Result<Vec<(String, i64, i64)>, A2AError> {
        within(self.0.replicas()).await
    }
    fn replica(&self) -> &str {
        self.0.replica()
    }
    fn fences(&self) -> bool {
        self.0.fences()
    }
    async fn opened(&self) -> Result<(), A2AError> {
        within(self.0.opened()).await
    }
    async fn listen(&self, url: &str) -> Option<ChangeFeed> {
        self.0.listen(url).await
    }
    async fn leave(&self) -> Result<(), A2AError> {
        within(self.0.leave()).await
    }
    async fn forget_replicas(&self, older: i64) -> Result<(), A2AError> {
        within(self.0.forget_replicas(older)).await
    }
    async fn orphans(&self, lease: i64) -> Result<Vec<Orphan>, A2AError> {
        within(self.0.orphans(lease)).await
    }
    async fn owned(&self) -> Result<HashSet<String>, A2AError> {
        within(self.0.owned()).await
    }
    async fn give_up(&self, id: &str) -> Result<(), A2AError> {
        within(self.0.give_up(id)).await
    }
    async fn claim(
        &self,
        id: &str,
        was: Option<&str>,
        lease: i64,
    ) -> Result<Option<i64>, A2AError> {
        within(self.0.claim(id, was, lease)).await
    }
    async fn sweep(&self, retention: Retention) -> Result<(), A2AError> {
        within(self.0.sweep(retention)).await
    }
    async fn tail(&self, id: &str, after: i64) -> Result<Vec<(u64, Arc<Event>)>, A2AError> {
        within(self.0.tail(id, after)).await
    }
    async fn task(&self, id: &str) -> Result<Option<Stored>, A2AError> {
        within(self.0.task(id)).await
    }
    async fn list(
        &self,
        req: &ListTasksRequest,
        size: usize,
    ) -> Result<(i64, Vec<Stored>), A2AError> {
        within(self.0.list(req, size)).await
    }
    async fn cancel(&self, id: &str) -> Result<(Task, i64), A2AError> {
        within(self.0.cancel(id)).await
    }
    async fn journaled(&self, id: &str, n: i64) -> Result<bool, A2AError> {
        within(self.0.journaled(id, n)).await
    }
    async fn journal(&self, id: &str) -> Result<Vec<(u64, String, Option<i64>)>, A2AError> {
        within(self.0.journal(id)).await
    }
    async fn hit(&self, key: &str, start_ms: i64, window_ms: i64) -> Result<Option<u64>, A2AError> {
        within(self.0.hit(key, start_ms, window_ms)).await
    }
    async fn claim_key(
        &self,
        key: &str,
        task_id: &str,
        digest: &str,
    ) -> Result<KeyClaim, A2AError> {
        within(self.0.claim_key(key, task_id, digest)).await
    }
    async fn forward(
        &self,
        task_id: &str,
        message: &a2a::Message,
        payload: String,
    ) -> Result<(), A2AError> {
        within(self.0.forward(task_id, message, payload)).await
    }
    async fn save_config(&self, task_id: &str, id: &str, body: String) -> Result<(), A2AError> {
        within(self.0.save_config(task_id, id, body)).await
    }
    async fn config(&self, task_id: &str, id: &str) -> Result<Option<String>, A2AError> {
        within(self.0.config(task_id, id)).await
    }
    async fn configs(&self, task_id: &str) -> Result<Vec<String>, A2AError> {
        within(self.0.configs(task_id)).await
    }
    async fn delete_configs(&self, task_id: &str, id: Option<&str>) -> Result<(), A2AError> {
        within(self.0.delete_configs(task_id, id)).await
    }
    async fn round(&self, rows: Vec<Row>, log: &Log) -> Written {
        self.0.round(rows, log).await
    }

    fn checkpoints(&self) -> bool {
        self.0.checkpoints()
    }
    async fn checkpoint(&self) -> Result<(), A2AError> {
        within(self.0.checkpoint()).await
    }
}
