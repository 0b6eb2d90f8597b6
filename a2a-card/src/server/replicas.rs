//! What several replicas on one database do for each other, through the store's change feed
//! (Postgres `NOTIFY`): a cancel on one reaches the handler on another, and a subscription on a
//! replica that does not run the task follows it.

use std::sync::Arc;

use a2a::{A2AError, StreamResponse, TaskState};
use a2a_server::TaskStore;
use futures::stream::BoxStream;
use tokio::sync::broadcast;

use super::executor::Sessions;

/// Drops the handlers running here whose task another replica cancelled.
pub(crate) fn cancel_here(
    mut changes: broadcast::Receiver<String>,
    sessions: Arc<Sessions>,
    store: Arc<dyn TaskStore>,
) {
    tokio::spawn(async move {
        loop {
            let id = match changes.recv().await {
                Ok(id) => id,
                // Missed some: the handlers running here are few; check them all is not
                // possible without their ids, so go on with the next change.
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            };
            if !sessions.runs(&id) {
                continue;
            }
            if let Ok(Some(task)) = store.get(&id).await {
                if task.status.state == TaskState::Canceled {
                    sessions.cancel(&id);
                }
            }
        }
    });
}

/// The events of task `id`, running on another replica: the task as it is now, then the task
/// again each time it changes, until it ends.
pub(crate) fn follow(
    id: String,
    store: Arc<dyn TaskStore>,
    changes: broadcast::Receiver<String>,
) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
    struct Follow {
        id: String,
        store: Arc<dyn TaskStore>,
        changes: broadcast::Receiver<String>,
        first: bool,
        done: bool,
    }
    let state = Follow {
        id,
        store,
        changes,
        first: true,
        done: false,
    };
    Box::pin(futures::stream::unfold(state, |mut st| async move {
        if st.done {
            return None;
        }
        if !std::mem::take(&mut st.first) {
            loop {
                match st.changes.recv().await {
                    Ok(changed) if changed == st.id => break,
                    Ok(_) => {}
                    // Missed some changes: read the task again, it may be one of them.
                    Err(broadcast::error::RecvError::Lagged(_)) => break,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        }
        match st.store.get(&st.id).await {
            Ok(Some(task)) => {
                st.done = task.status.state.is_terminal();
                Some((Ok(StreamResponse::Task(task)), st))
            }
            Ok(None) => {
                st.done = true;
                Some((Err(A2AError::task_not_found(&st.id)), st))
            }
            Err(e) => {
                st.done = true;
                Some((Err(e), st))
            }
        }
    }))
}
