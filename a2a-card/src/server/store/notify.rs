//! Postgres notifications: the ids of tasks that any replica changes, and the answers to
//! questions carried to the replica whose handler asked; the channels they travel on, and
//! whether another replica listens (so that a replica alone announces nothing).

#[cfg(feature = "postgres")]
use std::sync::Arc;
#[cfg(feature = "postgres")]
use std::time::Duration;

#[cfg(feature = "postgres")]
use sqlx::postgres::PgListener;
#[cfg(feature = "postgres")]
use tokio::sync::broadcast;

#[cfg(feature = "postgres")]
use super::Feeds;

/// The Postgres channel on which every write announces the id of the task it changed.
pub(crate) const CHANGES: &str = "a2a_card_tasks";
/// The Postgres channel on which an answer to a question travels to the replica whose handler
/// asked.
pub(crate) const ANSWERS: &str = "a2a_card_answers";

/// The Postgres channel on which every write of events announces the id of their task.
pub(crate) const EVENTS: &str = "a2a_card_events";

/// The Postgres channel on which a replica says it opened (its id), so that the others
/// announce their writes from then on (see [`Others`]).
pub(crate) const REPLICAS: &str = "a2a_card_replicas";

/// Whether another replica may listen to this one's writes (Postgres), so that the writer
/// announces them (`NOTIFY`). A replica alone does not: each notification goes to every
/// connection listening on its channel, this replica's own too, which wakes to read it
/// (measured: a fifth of a blocking send's throughput). True until this replica listens (from
/// then on it hears a newcomer say it opened, on [`REPLICAS`]); then whether the table of
/// replicas holds another live one, read at each lease renewal, or one said it opened since
/// the read began.
#[derive(Debug)]
pub(crate) struct Others {
    pub(crate) announce: std::sync::atomic::AtomicBool,
    /// How many newcomers were heard.
    pub(crate) heard: std::sync::atomic::AtomicU64,
}

impl Others {
    /// Whether the writer announces its writes.
    pub(crate) fn announce(&self) -> bool {
        self.announce.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Another replica said it opened.
    #[cfg(feature = "postgres")]
    pub(crate) fn heard(&self) {
        use std::sync::atomic::Ordering::SeqCst;
        self.heard.fetch_add(1, SeqCst);
        self.announce.store(true, SeqCst);
    }
}

/// Listens on the database at `url`, for as long as the process runs; each reader subscribes
/// to the returned senders. `None` when the database cannot be listened to. A replica other
/// than `replica` saying it opened is told to `others`.
#[cfg(feature = "postgres")]
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
