//! Postgres notifications: the ids of tasks that any replica changes, and the answers to
//! questions carried to the replica whose handler asked.

use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::PgListener;
use tokio::sync::broadcast;

use super::Feeds;
use super::sql::{ANSWERS, CHANGES, EVENTS, Others, REPLICAS};

/// Listens on the database at `url`, for as long as the process runs; each reader subscribes
/// to the returned senders. `None` when the database cannot be listened to. A replica other
/// than `replica` saying it opened is told to `others`.
pub(crate) async fn listen(url: &str, replica: &str, others: Arc<Others>) -> Option<Feeds> {
    let mut listener = match PgListener::connect(url).await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "task changes cannot be listened to");
            return None;
        }
    };
    if let Err(e) = listener
        .listen_all([CHANGES, ANSWERS, EVENTS, REPLICAS])
        .await
    {
        tracing::warn!(error = %e, "task changes cannot be listened to");
        return None;
    }
    let feeds = Feeds {
        changes: broadcast::channel(4096).0,
        answers: broadcast::channel(256).0,
        events: broadcast::channel(4096).0,
    };
    let (changes, answers, events) = (
        feeds.changes.clone(),
        feeds.answers.clone(),
        feeds.events.clone(),
    );
    let replica = replica.to_owned();
    tokio::spawn(async move {
        loop {
            // The listener reconnects by itself after a lost connection.
            match listener.recv().await {
                Ok(n) if n.channel() == REPLICAS => {
                    if n.payload() != replica {
                        others.heard();
                    }
                }
                Ok(n) => {
                    let feed = match n.channel() {
                        ANSWERS => &answers,
                        EVENTS => &events,
                        _ => &changes,
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
