//! Postgres notifications: the ids of tasks that any replica changes, and the answers to
//! questions carried to the replica whose handler asked.

use std::time::Duration;

use sqlx::postgres::PgListener;
use tokio::sync::broadcast;

use super::sql::{ANSWERS, CHANGES};

/// What the replicas tell each other.
pub(crate) struct Feeds {
    /// The ids of tasks written.
    pub(crate) changes: broadcast::Sender<String>,
    /// Answers to questions (`{"task": .., "message": ..}`), for the replica that runs the
    /// handler that asked.
    pub(crate) answers: broadcast::Sender<String>,
}

/// Listens on the database at `url`, for as long as the process runs; each reader subscribes
/// to the returned senders. `None` when the database cannot be listened to.
pub(crate) async fn listen(url: &str) -> Option<Feeds> {
    let mut listener = match PgListener::connect(url).await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "task changes cannot be listened to");
            return None;
        }
    };
    if let Err(e) = listener.listen_all([CHANGES, ANSWERS]).await {
        tracing::warn!(error = %e, "task changes cannot be listened to");
        return None;
    }
    let feeds = Feeds {
        changes: broadcast::channel(4096).0,
        answers: broadcast::channel(256).0,
    };
    let (changes, answers) = (feeds.changes.clone(), feeds.answers.clone());
    tokio::spawn(async move {
        loop {
            // The listener reconnects by itself after a lost connection.
            match listener.recv().await {
                Ok(n) => {
                    let feed = if n.channel() == ANSWERS {
                        &answers
                    } else {
                        &changes
                    };
                    let _ = feed.send(n.payload().to_owned());
                }
                Err(e) => {
                    tracing::warn!(error = %e, "task change notifications interrupted");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    });
    Some(feeds)
}
