//! Postgres notifications: the ids of tasks that any replica changes.

use std::time::Duration;

use sqlx::postgres::PgListener;
use tokio::sync::broadcast;

use super::sql::CHANGES as CHANNEL;

/// Listens for changed task ids on the database at `url`, for as long as the process runs;
/// each reader subscribes to the returned sender. `None` when the database cannot be
/// listened to.
pub(crate) async fn listen(url: &str) -> Option<broadcast::Sender<String>> {
    let mut listener = match PgListener::connect(url).await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "task changes cannot be listened to");
            return None;
        }
    };
    if let Err(e) = listener.listen(CHANNEL).await {
        tracing::warn!(error = %e, "task changes cannot be listened to");
        return None;
    }
    let (sender, _) = broadcast::channel(4096);
    let out = sender.clone();
    tokio::spawn(async move {
        loop {
            // The listener reconnects by itself after a lost connection.
            match listener.recv().await {
                Ok(n) => {
                    let _ = sender.send(n.payload().to_owned());
                }
                Err(e) => {
                    tracing::warn!(error = %e, "task change notifications interrupted");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    });
    Some(out)
}
