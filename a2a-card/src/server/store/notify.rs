//! Postgres notifications: the ids of tasks that any replica changes, and the answers to
//! questions carried to the replica whose handler asked; the channels they travel on, and
//! whether another replica listens (so that a replica alone announces nothing).

#[cfg(feature = "postgres")]
use std::sync::Arc;
#[cfg(feature = "postgres")]
use std::time::Duration;

#[cfg(feature = "postgres")]
#[cfg(feature = "postgres")]
use super::{Change, ChangeFeed};
#[cfg(feature = "postgres")]
use sqlx::postgres::PgListener;

/// The Postgres channel on which every write announces the id of the task it changed.
pub(crate) const CHANGES: &str = "a2a_card_tasks";
/// The Postgres channel on which a cancel of a task announces its id (besides [`CHANGES`]): the
/// replica whose handler runs the task stops it. Its own writes, which it hears on
/// [`CHANGES`] too, do not make it read the task to see whether it was cancelled.
pub(crate) const CANCELS: &str = "a2a_card_cancels";
/// The Postgres channel on which an answer to a question travels to the replica whose handler
/// asked.
pub(crate) const ANSWERS: &str = "a2a_card_answers";

/// The Postgres channel on which every write of events announces the id of their task.
#[cfg(feature = "postgres")]
pub(crate) const EVENTS: &str = "a2a_card_events";

/// The Postgres channel on which a replica says it opened (its id), so that the others
/// announce their writes from then on (see [`Others`]).
pub(crate) const REPLICAS: &str = "a2a_card_replicas";

/// The Postgres channel on which a replica says it stopped (its id), having given up its
/// tasks: the others take them over at once instead of at their next lease renewal.
pub(crate) const GONE: &str = "a2a_card_gone";

/// Whether another replica may listen to this one's writes (Postgres), so that the writer
/// announces them (`NOTIFY`). A replica alone does not: each notification goes to every
/// connection listening on its channel, this replica's own too, which wakes to read it
/// (measured: a fifth of a blocking send's throughput). True until this replica listens (from
/// then on it hears a newcomer say it opened, on [`REPLICAS`]); then whether the table of
/// replicas holds another live one, read at each lease renewal, or one said it opened since
/// the read began.
#[derive(Debug, Default)]
pub(crate) struct Others {
    pub(crate) announce: std::sync::atomic::AtomicBool,
    /// How many newcomers were heard.
    pub(crate) heard: std::sync::atomic::AtomicU64,
    /// Woken when another replica says it stopped ([`GONE`]): its tasks are to be taken over.
    pub(crate) gone: tokio::sync::Notify,
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

/// Listens on the database at `url`, for as long as the process runs: the [`Change`]s every
/// replica announces, on the returned feed. `None` when the database cannot be listened to. A
/// replica other than `replica` saying it opened is told to `others`.
#[cfg(feature = "postgres")]
pub(crate) async fn listen(
    url: &str,
    replica: &str,
    others: Arc<Others>,
    db: sqlx::PgPool,
) -> Option<ChangeFeed> {
    let mut listener = match PgListener::connect(url).await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "task changes cannot be listened to");
            return None;
        }
    };
    if let Err(e) = listener
        .listen_all([CHANGES, CANCELS, ANSWERS, EVENTS, REPLICAS, GONE])
        .await
    {
        tracing::warn!(error = %e, "task changes cannot be listened to");
        return None;
    }
    let feed = ChangeFeed::new(4096);
    let changes = feed.clone();
    let replica = replica.to_owned();
    tokio::spawn(async move {
        loop {
            // The listener reconnects by itself after a lost connection; what was announced
            // meanwhile is lost, so whoever follows tasks reads them again.
            let n = match listener.recv().await {
                Ok(n) => n,
                Err(e) => {
                    tracing::warn!(error = %e, "task change notifications interrupted");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    changes.send(Change::Missed);
                    continue;
                }
            };
            let change = match n.channel() {
                REPLICAS => {
                    if n.payload() != replica {
                        others.heard();
                    }
                    continue;
                }
                GONE => {
                    if n.payload() != replica {
                        others.gone.notify_one();
                    }
                    continue;
                }
                ANSWERS => match answer(n.payload()) {
                    Some(Forwarded::Answer(change)) => change,
                    // An answer too large for a notification: read from the store, without
                    // holding back the notifications behind it.
                    Some(Forwarded::Kept { task, id }) => {
                        let (db, changes) = (db.clone(), changes.clone());
                        tokio::spawn(async move {
                            match kept_answer(&db, &id).await {
                                Ok(message) => {
                                    changes.send(Change::Answer { task, message });
                                }
                                Err(e) => {
                                    tracing::warn!(task = %task, error = %e, "a forwarded answer could not be read");
                                }
                            }
                        });
                        continue;
                    }
                    None => continue,
                },
                EVENTS => Change::Events(n.payload().to_owned()),
                CANCELS => Change::Canceled(n.payload().to_owned()),
                _ => Change::Task(n.payload().to_owned()),
            };
            changes.send(change);
        }
    });
    Some(feed)
}

/// The largest payload of a notification that carries an answer itself (Postgres takes up to
/// 8,000 bytes); a larger answer is kept in the store and the notification names it.
pub(crate) const CARRIED: usize = 7_900;

/// The payload of an answer forwarded on [`ANSWERS`]: `{"task": .., "message": ..}`.
pub(crate) fn answer_payload(task_id: &str, message: &a2a::Message) -> String {
    serde_json::json!({"task": task_id, "message": message}).to_string()
}

/// The payload of an answer kept in the store as row `id`: `{"task": .., "kept": ..}`.
pub(crate) fn kept_payload(task_id: &str, id: &str) -> String {
    serde_json::json!({"task": task_id, "kept": id}).to_string()
}

/// What a payload on [`ANSWERS`] carries.
#[cfg(feature = "postgres")]
enum Forwarded {
    /// The answer itself.
    Answer(Change),
    /// The id of the row of the store that keeps it.
    Kept { task: String, id: String },
}

/// The answer a payload on [`ANSWERS`] carries (`None`: not one).
#[cfg(feature = "postgres")]
fn answer(payload: &str) -> Option<Forwarded> {
    #[derive(serde::Deserialize)]
    struct Payload {
        task: String,
        message: Option<Box<a2a::Message>>,
        kept: Option<String>,
    }
    let Payload {
        task,
        message,
        kept,
    } = serde_json::from_str(payload).ok()?;
    match (message, kept) {
        (Some(message), _) => Some(Forwarded::Answer(Change::Answer { task, message })),
        (None, Some(id)) => Some(Forwarded::Kept { task, id }),
        (None, None) => None,
    }
}

/// The answer the store keeps as row `id`.
#[cfg(feature = "postgres")]
async fn kept_answer(db: &sqlx::PgPool, id: &str) -> Result<Box<a2a::Message>, String> {
    let body: String = sqlx::query_scalar("SELECT body FROM a2a_card_answers WHERE id = $1")
        .bind(id)
        .fetch_one(db)
        .await
        .map_err(|e| e.to_string())?;
    serde_json::from_str(&body).map_err(|e| e.to_string())
}
