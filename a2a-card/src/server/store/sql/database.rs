//! What a SQL store asks of its database ([`Database`]): each statement it runs, written once
//! for both databases on sqlx's generic types ([`Pools`] of a [`Backend`]), each answering
//! with plain values. The store's own rules (recovery, ownership, retention, what a read
//! answers) are `SqlTasks`'s, in `mod.rs` and `task_store.rs`.

use std::collections::HashSet;
use std::sync::Arc;

use a2a::{A2AError, ListTasksRequest, Task, TaskState};
use async_trait::async_trait;
use sqlx::{ColumnIndex, Decode, Encode, Executor, IntoArguments, Type};

use super::backend::{Backend, Pools};
use super::round::{Log, Row, Written};
use super::{db_error, decode, encode, millis, now_millis, state_name};
use crate::server::store::notify::{ANSWERS, CANCELS, CHANGES, GONE, REPLICAS};
use crate::server::store::{ChangeFeed, Cursor, Event, KeyClaim, Retention};

/// The terminal tasks a sweep removes in one transaction: the writer, which waits for the
/// file's write lock on SQLite, waits for one batch at most.
const SWEEP_BATCH: usize = 100;

/// A task's row, as stored.
pub(super) struct Stored {
    /// The task's JSON.
    pub(super) body: String,
    /// The number of the last event the row reflects (`None`: 0).
    pub(super) seq: Option<i64>,
    /// When the task ended (Unix milliseconds), if it did.
    pub(super) ended: Option<i64>,
}

/// A running task whose replica's lease ran out (or that has none).
pub(super) struct Orphan {
    pub(super) body: String,
    pub(super) seq: Option<i64>,
    /// The replica that ran it.
    pub(super) owner: Option<String>,
    /// Whether it has a journal (a durable skill's task): it runs again rather than fails.
    pub(super) journaled: bool,
}

/// What a SQL store asks of its database: each statement, on the database's own types.
/// Implemented once, for the [`Pools`] of either [`Backend`].
/// How many checkpoints in a row that find nothing new make a store idle (a second, at one
/// every [`CHECKPOINT_PERIOD`](super::CHECKPOINT_PERIOD)).
const QUIET_CHECKPOINTS: u32 = 10;

#[async_trait]
pub(super) trait Database: Send + Sync {
    /// The database's name in telemetry.
    fn system(&self) -> &'static str;
    /// How many rounds the writer may have in the database at once ([`Backend::ROUNDS`]).
    fn rounds(&self) -> usize;

    /// Renews this replica's lease, at the database's time (every time of the leases is the
    /// database's: the replicas' clocks need not agree).
    async fn renew(&self) -> Result<(), A2AError>;
    /// Whether another replica's lease was renewed within the last `within` milliseconds.
    async fn others_live(&self, within: i64) -> Result<bool, A2AError>;
    /// How many replicas (this one among them) renewed their lease within the last `within`
    /// milliseconds.
    async fn live_replicas(&self, within: i64) -> Result<usize, A2AError>;
    /// The replicas in the table: each one's id, how many milliseconds ago it renewed its
    /// lease (by the database's clock), and how many running tasks it owns.
    async fn replicas(&self) -> Result<Vec<(String, i64, i64)>, A2AError>;
    /// This replica's id.
    fn replica(&self) -> &str;
    /// Whether a round's log is fenced by its tasks' claims
    /// ([`Backend::FENCES`](super::backend::Backend::FENCES)): only then does the writer say
    /// which of the log's tasks this replica runs ([`Log::fenced`]).
    fn fences(&self) -> bool;
    /// Tells the replicas that listen that this one opened.
    async fn opened(&self) -> Result<(), A2AError>;
    /// Listens to what the replicas on the database at `url` tell each other.
    async fn listen(&self, url: &str) -> Option<ChangeFeed>;
    /// Takes this replica out of the table of replicas, and tells the others it went.
    async fn leave(&self) -> Result<(), A2AError>;
    /// Forgets the replicas last seen more than `older` milliseconds ago.
    async fn forget_replicas(&self, older: i64) -> Result<(), A2AError>;

    /// The running tasks whose replica was last seen more than `lease` milliseconds ago, or
    /// that have none.
    async fn orphans(&self, lease: i64) -> Result<Vec<Orphan>, A2AError>;
    /// The running tasks this replica owns.
    async fn owned(&self) -> Result<HashSet<String>, A2AError>;
    /// Gives up this replica's claim on running task `id` (its version moves on).
    async fn give_up(&self, id: &str) -> Result<(), A2AError>;
    /// Makes this replica the owner of running task `id`, which `was` owned, if `was`'s lease
    /// (`lease` milliseconds) has still run out: the task's version once claimed, if it did.
    async fn claim(&self, id: &str, was: Option<&str>, lease: i64)
    -> Result<Option<i64>, A2AError>;
    /// Removes the terminal tasks `retention` lets go (with all they keep), and the request
    /// counters, forwarded answers and idempotency keys past their time.
    async fn sweep(&self, retention: Retention) -> Result<(), A2AError>;

    /// The events of task `id` after event `after` that its log holds, in order.
    async fn tail(&self, id: &str, after: i64) -> Result<Vec<(u64, Arc<Event>)>, A2AError>;
    /// Task `id`'s row.
    async fn task(&self, id: &str) -> Result<Option<Stored>, A2AError>;
    /// The number of the tasks `req` lists, and the rows of its page of `size` (one more
    /// when another page follows).
    async fn list(
        &self,
        req: &ListTasksRequest,
        size: usize,
    ) -> Result<(i64, Vec<Stored>), A2AError>;
    /// Cancels running task `id` in one transaction, with what it logged since its row: the
    /// canceled task and its new version.
    async fn cancel(&self, id: &str) -> Result<(Task, i64), A2AError>;

    /// Whether entry `n` of task `id`'s journal is written.
    async fn journaled(&self, id: &str, n: i64) -> Result<bool, A2AError>;
    /// Task `id`'s journal, in order of number: each entry's number, its JSON, and when it was
    /// written (milliseconds since the Unix epoch; none for entries of releases before 8 of
    /// the schema).
    async fn journal(&self, id: &str) -> Result<Vec<(u64, String, Option<i64>)>, A2AError>;

    /// Counts a request of `key` in its window, for every replica (`None`: the database is
    /// one process's).
    async fn hit(&self, key: &str, start_ms: i64, window_ms: i64) -> Result<Option<u64>, A2AError>;
    /// Keeps idempotency key `key` for `task_id` and `digest`, unless it is kept already.
    async fn claim_key(&self, key: &str, task_id: &str, digest: &str)
    -> Result<KeyClaim, A2AError>;
    /// Sends the caller's answer to the replicas (`payload`, or for a large one, the answer
    /// `message` kept in the database and named by the payload `kept` makes).
    async fn forward(
        &self,
        task_id: &str,
        message: &a2a::Message,
        payload: String,
    ) -> Result<(), A2AError>;

    /// Keeps push config `id` of task `task_id` (its JSON `body`).
    async fn save_config(&self, task_id: &str, id: &str, body: String) -> Result<(), A2AError>;
    /// Push config `id` of task `task_id` (its JSON).
    async fn config(&self, task_id: &str, id: &str) -> Result<Option<String>, A2AError>;
    /// The push configs of task `task_id` (their JSON), in order of id.
    async fn configs(&self, task_id: &str) -> Result<Vec<String>, A2AError>;
    /// Removes push config `id` of task `task_id` (`None`: all of them).
    async fn delete_configs(&self, task_id: &str, id: Option<&str>) -> Result<(), A2AError>;

    /// Writes a round: `rows` and `log`, each row with its outcome, and whether the log was
    /// written.
    async fn round(&self, rows: Vec<Row>, log: &Log) -> Written;

    /// Whether this store runs the database's checkpoints ([`Backend::CHECKPOINTS`]).
    fn checkpoints(&self) -> bool;
    /// Moves what was written since the last time into the database, keeping its log within
    /// its bound ([`Backend::checkpoint`]); once the store has written nothing for
    /// [`QUIET_CHECKPOINTS`] checkpoints in a row, tells the database it is idle.
    async fn checkpoint(&self) -> Result<(), A2AError>;
}

#[async_trait]
impl<B: Backend> Database for Pools<B>
where
    // What sqlx's generic code asks of a database (true of both): its connections run
    // statements, its arguments bind, and it reads and writes text and integers.
    for<'c> &'c mut B::Connection: Executor<'c, Database = B>,
    for<'q> B::Arguments<'q>: IntoArguments<'q, B>,
    for<'q> String: Encode<'q, B> + Decode<'q, B> + Type<B>,
    for<'q> &'q str: Encode<'q, B> + Type<B>,
    for<'q> i64: Encode<'q, B> + Decode<'q, B> + Type<B>,
    for<'q> Option<String>: Encode<'q, B>,
    for<'q> Option<i64>: Encode<'q, B>,
    usize: ColumnIndex<B::Row>,
{
    fn system(&self) -> &'static str {
        B::SYSTEM
    }

    fn rounds(&self) -> usize {
        B::ROUNDS
    }

    async fn renew(&self) -> Result<(), A2AError> {
        // The lease's own writes (the renewal, and the sweep after it) are checkpointed too.
        self.writes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        sqlx::query(&format!(
            "INSERT INTO a2a_card_replicas (id, seen_at) VALUES ($1, {})
             ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at",
            B::NOW_MS
        ))
        .bind(&self.replica)
        .execute(&self.pool)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    async fn others_live(&self, within: i64) -> Result<bool, A2AError> {
        let live: Option<i64> = sqlx::query_scalar(&format!(
            "SELECT seen_at FROM a2a_card_replicas WHERE id <> $1 AND seen_at >= {} - $2 LIMIT 1",
            B::NOW_MS
        ))
        .bind(&self.replica)
        .bind(within)
        .fetch_optional(&self.pool)
        .await
        .map_err(db_error)?;
        Ok(live.is_some())
    }

    async fn live_replicas(&self, within: i64) -> Result<usize, A2AError> {
        let live: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM a2a_card_replicas WHERE seen_at >= {} - $1",
            B::NOW_MS
        ))
        .bind(within)
        .fetch_one(&self.reads)
        .await
        .map_err(db_error)?;
        Ok(usize::try_from(live).unwrap_or(1))
    }

    async fn replicas(&self) -> Result<Vec<(String, i64, i64)>, A2AError> {
        sqlx::query_as(&format!(
            "SELECT r.id, {} - r.seen_at,
                (SELECT COUNT(*) FROM a2a_card_tasks t WHERE t.owner = r.id AND t.ended_at IS NULL)
             FROM a2a_card_replicas r ORDER BY r.id",
            B::NOW_MS
        ))
        .fetch_all(&self.reads)
        .await
        .map_err(db_error)
    }

    fn replica(&self) -> &str {
        &self.replica
    }

    fn fences(&self) -> bool {
        B::FENCES
    }

    async fn opened(&self) -> Result<(), A2AError> {
        let mut conn = self.pool.acquire().await.map_err(db_error)?;
        B::notify(&mut conn, REPLICAS, &self.replica)
            .await
            .map_err(db_error)
    }

    async fn listen(&self, url: &str) -> Option<ChangeFeed> {
        B::listen(
            url,
            &self.replica,
            Arc::clone(&self.others),
            self.reads.clone(),
        )
        .await
    }

    async fn leave(&self) -> Result<(), A2AError> {
        sqlx::query("DELETE FROM a2a_card_replicas WHERE id = $1")
            .bind(&self.replica)
            .execute(&self.pool)
            .await
            .map_err(db_error)?;
        let mut conn = self.pool.acquire().await.map_err(db_error)?;
        B::notify(&mut conn, GONE, &self.replica)
            .await
            .map_err(db_error)
    }

    async fn forget_replicas(&self, older: i64) -> Result<(), A2AError> {
        sqlx::query(&format!(
            "DELETE FROM a2a_card_replicas WHERE seen_at < {} - $1",
            B::NOW_MS
        ))
        .bind(older)
        .execute(&self.pool)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    async fn orphans(&self, lease: i64) -> Result<Vec<Orphan>, A2AError> {
        // Entry 0 of a task's journal is what it runs: a task that has it runs again.
        let rows: Vec<(String, Option<i64>, Option<String>, Option<i64>)> =
            sqlx::query_as(&format!(
                "SELECT body, seq, owner,
                (SELECT j.n FROM a2a_card_journal j WHERE j.task_id = a2a_card_tasks.id AND j.n = 0)
             FROM a2a_card_tasks WHERE ended_at IS NULL AND (owner IS NULL OR owner NOT IN ({}))",
                live::<B>("$1")
            ))
            .bind(lease)
            .fetch_all(&self.pool)
            .await
            .map_err(db_error)?;
        Ok(rows
            .into_iter()
            .map(|(body, seq, owner, begun)| Orphan {
                body,
                seq,
                owner,
                journaled: begun.is_some(),
            })
            .collect())
    }

    async fn owned(&self) -> Result<HashSet<String>, A2AError> {
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT id FROM a2a_card_tasks WHERE owner = $1 AND ended_at IS NULL",
        )
        .bind(&self.replica)
        .fetch_all(&self.pool)
        .await
        .map_err(db_error)?;
        Ok(ids.into_iter().collect())
    }

    async fn give_up(&self, id: &str) -> Result<(), A2AError> {
        let mut conn = self.pool.acquire().await.map_err(db_error)?;
        let done = sqlx::query(
            "UPDATE a2a_card_tasks SET owner = NULL, version = version + 1
             WHERE id = $1 AND ended_at IS NULL AND owner = $2",
        )
        .bind(id)
        .bind(&self.replica)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
        // The replicas that listen take it over at once (as when a replica goes), not at their
        // next lease renewal.
        if B::rows_affected(&done) == 1 {
            B::notify(&mut conn, GONE, &self.replica)
                .await
                .map_err(db_error)?;
        }
        Ok(())
    }

    async fn claim(
        &self,
        id: &str,
        was: Option<&str>,
        lease: i64,
    ) -> Result<Option<i64>, A2AError> {
        // The owner's lease checked again here, not only when the orphans were read: a
        // recovery claims one task after another, and by the time it reaches this one its
        // owner may have renewed (it was slowed, or starved, not gone) and still run the task.
        let sql;
        let query = match was {
            Some(was) => {
                sql = format!(
                    "UPDATE a2a_card_tasks SET owner = $1, version = version + 1
                     WHERE id = $2 AND ended_at IS NULL AND owner = $3 AND owner NOT IN ({})
                     RETURNING version",
                    live::<B>("$4")
                );
                sqlx::query_scalar(&sql)
                    .bind(&self.replica)
                    .bind(id)
                    .bind(was.to_owned())
                    .bind(lease)
            }
            None => sqlx::query_scalar(
                "UPDATE a2a_card_tasks SET owner = $1, version = version + 1
                 WHERE id = $2 AND ended_at IS NULL AND owner IS NULL RETURNING version",
            )
            .bind(&self.replica)
            .bind(id),
        };
        query.fetch_optional(&self.pool).await.map_err(db_error)
    }

    async fn sweep(&self, retention: Retention) -> Result<(), A2AError> {
        // Request counters whose window has ended, answers forwarded an hour ago, and
        // idempotency keys past their retention.
        let now = now_millis();
        let mut tx = B::begin_writing(&self.pool).await.map_err(db_error)?;
        for (expired, before) in [
            ("a2a_card_hits WHERE ends_at", now),
            ("a2a_card_answers WHERE sent_at", now - 3_600_000),
            (
                "a2a_card_keys WHERE made_at",
                now.saturating_sub(millis(crate::idempotency::KEY_RETENTION)),
            ),
        ] {
            sqlx::query(&format!("DELETE FROM {expired} < {before}"))
                .execute(&mut *tx)
                .await
                .map_err(db_error)?;
        }
        tx.commit().await.map_err(db_error)?;

        // The terminal tasks past the retention: older than its age, or after the newest
        // `count_limit` by end, then id (the first of those is read once, beside the writes).
        let mut doomed = Vec::new();
        if let Some(age) = retention.age_limit() {
            doomed.push(format!("ended_at < {}", now - millis(age)));
        }
        let mut first_gone_id = None;
        if let Some(max) = retention.count_limit() {
            let first_gone: Option<(i64, String)> = sqlx::query_as(&format!(
                "SELECT ended_at, id FROM a2a_card_tasks WHERE ended_at IS NOT NULL
                 ORDER BY ended_at DESC, id DESC LIMIT 1 OFFSET {max}"
            ))
            .fetch_optional(&self.reads)
            .await
            .map_err(db_error)?;
            if let Some((ended, id)) = first_gone {
                doomed.push(format!(
                    "ended_at < {ended} OR (ended_at = {ended} AND id <= $1)"
                ));
                first_gone_id = Some(id);
            }
        }
        if doomed.is_empty() {
            return Ok(());
        }
        let select = format!(
            "SELECT id FROM a2a_card_tasks WHERE ended_at IS NOT NULL AND ({})
             ORDER BY ended_at LIMIT {SWEEP_BATCH}",
            doomed.join(" OR ")
        );
        // In batches, each a short transaction of its own: the writer (on SQLite, the one
        // writer of the file at a time) waits for one batch at most, not for the whole sweep.
        loop {
            let mut tx = B::begin_writing(&self.pool).await.map_err(db_error)?;
            let mut query = sqlx::query_scalar::<B, String>(&select);
            if let Some(id) = &first_gone_id {
                query = query.bind(id.as_str());
            }
            let ids = query.fetch_all(&mut *tx).await.map_err(db_error)?;
            if ids.is_empty() {
                return Ok(());
            }
            let list = (1..=ids.len())
                .map(|i| format!("${i}"))
                .collect::<Vec<_>>()
                .join(", ");
            for table in [
                "a2a_card_push_configs WHERE task_id",
                "a2a_card_events WHERE task_id",
                "a2a_card_journal WHERE task_id",
                "a2a_card_tasks WHERE id",
            ] {
                let delete = format!("DELETE FROM {table} IN ({list})");
                let mut query = sqlx::query(&delete);
                for id in &ids {
                    query = query.bind(id.as_str());
                }
                query.execute(&mut *tx).await.map_err(db_error)?;
            }
            tx.commit().await.map_err(db_error)?;
            if ids.len() < SWEEP_BATCH {
                return Ok(());
            }
            // The writer's turn between two batches.
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
    }

    async fn tail(&self, id: &str, after: i64) -> Result<Vec<(u64, Arc<Event>)>, A2AError> {
        self.tail_on(&self.reads, id, after).await
    }

    async fn task(&self, id: &str) -> Result<Option<Stored>, A2AError> {
        let row: Option<(String, Option<i64>, Option<i64>)> =
            sqlx::query_as("SELECT body, seq, ended_at FROM a2a_card_tasks WHERE id = $1")
                .bind(id)
                .fetch_optional(&self.reads)
                .await
                .map_err(db_error)?;
        Ok(row.map(|(body, seq, ended)| Stored { body, seq, ended }))
    }

    async fn list(
        &self,
        req: &ListTasksRequest,
        size: usize,
    ) -> Result<(i64, Vec<Stored>), A2AError> {
        let cursor = Cursor::parse(req.page_token.as_deref())?;
        let mut filter = String::from("1 = 1");
        let mut binds: Vec<String> = Vec::new();
        let param = |binds: &mut Vec<String>, value: String| {
            binds.push(value);
            format!("${}", binds.len())
        };
        // The tasks of the caller's reach only (see `Store`): a task's id begins with the
        // reach and has no `:` after it; without one, a task's id has no `:`. A reach is
        // letters, digits, `._~-` and `:`; `_` (and, for safety, `%` and `\`) are escaped.
        match &req.tenant {
            Some(reach) => {
                let reach = reach
                    .replace('\\', "\\\\")
                    .replace('_', "\\_")
                    .replace('%', "\\%");
                let begins = param(&mut binds, format!("{reach}%"));
                let deeper = param(&mut binds, format!("{reach}%:%"));
                filter.push_str(&format!(
                    " AND id LIKE {begins} ESCAPE '\\' AND id NOT LIKE {deeper} ESCAPE '\\'"
                ));
            }
            None => filter.push_str(" AND id NOT LIKE '%:%'"),
        }
        if let Some(c) = &req.context_id {
            let c = param(&mut binds, c.clone());
            filter.push_str(&format!(" AND context_id = {c}"));
        }
        if let Some(st) = &req.status {
            let st = param(&mut binds, state_name(st));
            filter.push_str(&format!(" AND state = {st}"));
        }
        if let Some(after) = req.status_timestamp_after {
            let after = param(&mut binds, after.to_rfc3339());
            filter.push_str(&format!(" AND status_at > {after}"));
        }
        let count = format!("SELECT COUNT(*) FROM a2a_card_tasks WHERE {filter}");
        let mut q = sqlx::query_scalar::<_, i64>(&count);
        for b in &binds {
            q = q.bind(b);
        }
        let total = q.fetch_one(&self.reads).await.map_err(db_error)?;
        // Newest status first, then id; one row past the page says whether another follows.
        let mut after = String::new();
        if let Some(cursor) = cursor {
            let at = param(&mut binds, cursor.at);
            let id = param(&mut binds, cursor.id);
            after.push_str(&format!(
                " AND (COALESCE(status_at, '') < {at} OR (COALESCE(status_at, '') = {at} AND id < {id}))"
            ));
        }
        let page = format!(
            "SELECT body, seq, ended_at FROM a2a_card_tasks WHERE {filter}{after}
             ORDER BY COALESCE(status_at, '') DESC, id DESC LIMIT {}",
            size + 1
        );
        let mut q = sqlx::query_as::<_, (String, Option<i64>, Option<i64>)>(&page);
        for b in &binds {
            q = q.bind(b);
        }
        let rows = q.fetch_all(&self.reads).await.map_err(db_error)?;
        let rows = rows
            .into_iter()
            .map(|(body, seq, ended)| Stored { body, seq, ended })
            .collect();
        Ok((total, rows))
    }

    async fn cancel(&self, id: &str) -> Result<(Task, i64), A2AError> {
        // One transaction: the check and the change cannot interleave with another writer.
        let mut tx = B::begin_writing(&self.pool).await.map_err(db_error)?;
        let row: Option<(String, i64, Option<i64>, Option<i64>)> = sqlx::query_as(B::LOCKED_TASK)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db_error)?;
        let Some((body, version, ended, seq)) = row else {
            return Err(A2AError::task_not_found(id));
        };
        if ended.is_some() {
            return Err(A2AError::task_not_cancelable(id));
        }
        // The canceled task keeps what it logged since its row (an artifact's chunks so far).
        let tail = self.tail_on(&mut *tx, id, seq.unwrap_or(0)).await?;
        let (mut task, _) = super::caught_up(decode(&body)?, seq, tail)?;
        task.status.state = TaskState::Canceled;
        task.status.timestamp = Some(chrono::Utc::now());
        let changed = sqlx::query(
            "UPDATE a2a_card_tasks SET state = $1, status_at = $2, version = $3, ended_at = $4,
                owner = NULL, body = $5
             WHERE id = $6 AND version = $7",
        )
        .bind(state_name(&task.status.state))
        .bind(task.status.timestamp.map(|t| t.to_rfc3339()))
        .bind(version + 1)
        .bind(now_millis())
        .bind(encode(&task)?)
        .bind(id)
        .bind(version)
        .execute(&mut *tx)
        .await
        .map_err(db_error)?;
        if B::rows_affected(&changed) != 1 {
            return Err(A2AError::task_not_cancelable(id));
        }
        B::notify(&mut tx, CHANGES, id).await.map_err(db_error)?;
        B::notify(&mut tx, CANCELS, id).await.map_err(db_error)?;
        tx.commit().await.map_err(db_error)?;
        Ok((task, version + 1))
    }

    async fn journaled(&self, id: &str, n: i64) -> Result<bool, A2AError> {
        let found: Option<i64> =
            sqlx::query_scalar("SELECT n FROM a2a_card_journal WHERE task_id = $1 AND n = $2")
                .bind(id)
                .bind(n)
                .fetch_optional(&self.pool)
                .await
                .map_err(db_error)?;
        Ok(found.is_some())
    }

    async fn journal(&self, id: &str) -> Result<Vec<(u64, String, Option<i64>)>, A2AError> {
        let rows: Vec<(i64, String, Option<i64>)> = sqlx::query_as(
            "SELECT n, body, at FROM a2a_card_journal WHERE task_id = $1 ORDER BY n",
        )
        .bind(id)
        .fetch_all(&self.reads)
        .await
        .map_err(db_error)?;
        rows.into_iter()
            .map(|(n, body, at)| match u64::try_from(n) {
                Ok(n) => Ok((n, body, at)),
                Err(_) => Err(A2AError::internal(format!(
                    "task {id}'s journal holds an entry numbered {n}: journals are numbered from 0"
                ))),
            })
            .collect()
    }

    async fn hit(&self, key: &str, start_ms: i64, window_ms: i64) -> Result<Option<u64>, A2AError> {
        if !B::SHARED {
            return Ok(None);
        }
        let hits: i64 = sqlx::query_scalar(
            "INSERT INTO a2a_card_hits (key, window_start, ends_at, hits) VALUES ($1, $2, $3, 1)
             ON CONFLICT (key, window_start) DO UPDATE SET hits = a2a_card_hits.hits + 1
             RETURNING hits",
        )
        .bind(key)
        .bind(start_ms)
        .bind(start_ms.saturating_add(window_ms))
        .fetch_one(&self.pool)
        .await
        .map_err(db_error)?;
        Ok(Some(u64::try_from(hits).unwrap_or(0)))
    }

    async fn claim_key(
        &self,
        key: &str,
        task_id: &str,
        digest: &str,
    ) -> Result<KeyClaim, A2AError> {
        // Twice at most: a key found taken may be pruned before it is read.
        for _ in 0..2 {
            let inserted = sqlx::query(
                "INSERT INTO a2a_card_keys (key, task_id, digest, made_at) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (key) DO NOTHING",
            )
            .bind(key)
            .bind(task_id)
            .bind(digest)
            .bind(now_millis())
            .execute(&self.pool)
            .await
            .map_err(db_error)?;
            if B::rows_affected(&inserted) == 1 {
                return Ok(KeyClaim::New);
            }
            let kept: Option<(String, String)> =
                sqlx::query_as("SELECT task_id, digest FROM a2a_card_keys WHERE key = $1")
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(db_error)?;
            if let Some((task_id, digest)) = kept {
                return Ok(KeyClaim::Taken { task_id, digest });
            }
        }
        Err(A2AError::internal("the idempotency key could not be kept"))
    }

    async fn forward(
        &self,
        task_id: &str,
        message: &a2a::Message,
        mut payload: String,
    ) -> Result<(), A2AError> {
        // A notification carries a payload up to 8000 bytes: a larger answer is kept in the
        // store, and the notification names it.
        if payload.len() > crate::server::store::notify::CARRIED {
            let id = a2a::new_task_id();
            let body = serde_json::to_string(message).map_err(|e| {
                A2AError::internal(format!("the answer could not be forwarded: {e}"))
            })?;
            sqlx::query(
                "INSERT INTO a2a_card_answers (id, task_id, body, sent_at) VALUES ($1, $2, $3, $4)",
            )
            .bind(&id)
            .bind(task_id)
            .bind(body)
            .bind(now_millis())
            .execute(&self.pool)
            .await
            .map_err(db_error)?;
            payload = crate::server::store::notify::kept_payload(task_id, &id);
        }
        let mut conn = self.pool.acquire().await.map_err(db_error)?;
        B::notify(&mut conn, ANSWERS, &payload)
            .await
            .map_err(db_error)
    }

    async fn save_config(&self, task_id: &str, id: &str, body: String) -> Result<(), A2AError> {
        sqlx::query(
            "INSERT INTO a2a_card_push_configs (task_id, id, body) VALUES ($1, $2, $3)
             ON CONFLICT (task_id, id) DO UPDATE SET body = excluded.body",
        )
        .bind(task_id)
        .bind(id)
        .bind(body)
        .execute(&self.pool)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    async fn config(&self, task_id: &str, id: &str) -> Result<Option<String>, A2AError> {
        sqlx::query_scalar("SELECT body FROM a2a_card_push_configs WHERE task_id = $1 AND id = $2")
            .bind(task_id)
            .bind(id)
            .fetch_optional(&self.reads)
            .await
            .map_err(db_error)
    }

    async fn configs(&self, task_id: &str) -> Result<Vec<String>, A2AError> {
        sqlx::query_scalar("SELECT body FROM a2a_card_push_configs WHERE task_id = $1 ORDER BY id")
            .bind(task_id)
            .fetch_all(&self.reads)
            .await
            .map_err(db_error)
    }

    async fn delete_configs(&self, task_id: &str, id: Option<&str>) -> Result<(), A2AError> {
        let query = match id {
            Some(id) => {
                sqlx::query("DELETE FROM a2a_card_push_configs WHERE task_id = $1 AND id = $2")
                    .bind(task_id)
                    .bind(id.to_owned())
            }
            None => {
                sqlx::query("DELETE FROM a2a_card_push_configs WHERE task_id = $1").bind(task_id)
            }
        };
        query.execute(&self.pool).await.map_err(db_error)?;
        Ok(())
    }

    async fn round(&self, rows: Vec<Row>, log: &Log) -> Written {
        self.writes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.round_in_span(rows, log).await
    }

    fn checkpoints(&self) -> bool {
        B::CHECKPOINTS
    }

    async fn checkpoint(&self) -> Result<(), A2AError> {
        use std::sync::atomic::Ordering::Relaxed;
        let writes = self.writes.load(Relaxed);
        if self.checkpointed.swap(writes, Relaxed) != writes {
            self.quiet.store(0, Relaxed);
            return B::checkpoint(self, false).await.map_err(db_error);
        }
        // Nothing new: the database is told once the store has been quiet for a while.
        match self.quiet.fetch_add(1, Relaxed) + 1 {
            QUIET_CHECKPOINTS => B::checkpoint(self, true).await.map_err(db_error),
            _ => Ok(()),
        }
    }
}

/// The replicas whose lease is live: renewed within the last `lease` milliseconds (a bound
/// parameter) by the database's clock. A task whose owner is not among them is an orphan,
/// for the recovery that lists them and again for the claim that takes one.
fn live<B: Backend>(lease: &str) -> String {
    format!(
        "SELECT id FROM a2a_card_replicas WHERE seen_at >= {} - {lease}",
        B::NOW_MS
    )
}
