//! The schema of the SQL stores and its migrations (sqlx's migrator over steps written in the
//! SQL both databases speak), refusing foreign and newer databases.

use std::borrow::Cow;

use sqlx::migrate::{Migrate, Migration, MigrationType, Migrator};
use sqlx::{Decode, Encode, Executor, IntoArguments, Pool, Type};

use super::backend::Backend;
use crate::server::store::StoreError;

/// The name the schema table gives this crate's databases.
const SCHEMA_NAME: &str = "a2a-card tasks";

/// The schema this release writes, and the steps that bring an older database to it (step
/// `i` takes version `i` to `i + 1`; sqlx's migrator runs them, see [`migrate`]). A later
/// release appends a step; it never edits one (sqlx refuses a database whose applied step
/// differs). Each with the description sqlx records. Written in the SQL both databases speak.
const MIGRATIONS: &[(&str, &str)] = &[
    // 0 -> 1: tasks, their push-notification configs, and the replicas that run them.
    (
        "tasks",
        "CREATE TABLE a2a_card_tasks (
        id TEXT PRIMARY KEY,
        context_id TEXT NOT NULL,
        state TEXT NOT NULL,
        status_at TEXT,
        version BIGINT NOT NULL,
        ended_at BIGINT,
        owner TEXT,
        body TEXT NOT NULL
    );
    CREATE INDEX a2a_card_tasks_context ON a2a_card_tasks (context_id, id);
    CREATE INDEX a2a_card_tasks_state ON a2a_card_tasks (state);
    CREATE INDEX a2a_card_tasks_ended ON a2a_card_tasks (ended_at);
    CREATE INDEX a2a_card_tasks_owner ON a2a_card_tasks (owner);
    CREATE TABLE a2a_card_push_configs (
        task_id TEXT NOT NULL,
        id TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (task_id, id)
    );
    CREATE TABLE a2a_card_replicas (
        id TEXT PRIMARY KEY,
        seen_at BIGINT NOT NULL
    );",
    ),
    // 1 -> 2: fewer index writes per task. Lists by state scan (retention bounds the table);
    // only running tasks are looked up by owner (recovery), only finished ones by end (retention).
    (
        "fewer indexes",
        "DROP INDEX a2a_card_tasks_state;
    DROP INDEX a2a_card_tasks_owner;
    DROP INDEX a2a_card_tasks_ended;
    CREATE INDEX a2a_card_tasks_running ON a2a_card_tasks (owner) WHERE ended_at IS NULL;
    CREATE INDEX a2a_card_tasks_ended ON a2a_card_tasks (ended_at) WHERE ended_at IS NOT NULL;",
    ),
    // 2 -> 3: each task's event log (numbered as the server numbers it: the task is 0), and
    // the number of the last event the stored task reflects (NULL: 0).
    (
        "event log",
        "CREATE TABLE a2a_card_events (
        task_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (task_id, seq)
    );
    ALTER TABLE a2a_card_tasks ADD COLUMN seq BIGINT;",
    ),
    // 3 -> 4: requests counted per key and window for every replica (the agent's limits),
    // each row kept until its window ends.
    (
        "request counters",
        "CREATE TABLE a2a_card_hits (
        key TEXT NOT NULL,
        window_start BIGINT NOT NULL,
        ends_at BIGINT NOT NULL,
        hits BIGINT NOT NULL,
        PRIMARY KEY (key, window_start)
    );
    CREATE INDEX a2a_card_hits_ends ON a2a_card_hits (ends_at);",
    ),
    // 4 -> 5: answers too large for a notification, kept for the replica whose handler asked
    // (an hour at most).
    (
        "forwarded answers",
        "CREATE TABLE a2a_card_answers (
        id TEXT PRIMARY KEY,
        task_id TEXT NOT NULL,
        body TEXT NOT NULL,
        sent_at BIGINT NOT NULL
    );
    CREATE INDEX a2a_card_answers_sent ON a2a_card_answers (sent_at);",
    ),
    // 5 -> 6: idempotency keys of sends, each with the task it made and its message's
    // digest (a day at most: `idempotency::KEY_RETENTION`).
    (
        "idempotency keys",
        "CREATE TABLE a2a_card_keys (
        key TEXT PRIMARY KEY,
        task_id TEXT NOT NULL,
        digest TEXT NOT NULL,
        made_at BIGINT NOT NULL
    );
    CREATE INDEX a2a_card_keys_made ON a2a_card_keys (made_at);",
    ),
    // 6 -> 7: the journals of durable skills' tasks in a table of their own (entry `n` of a
    // task's journal was row `-1 - n` of its event log).
    (
        "journals",
        "CREATE TABLE a2a_card_journal (
        task_id TEXT NOT NULL,
        n BIGINT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (task_id, n)
    );
    INSERT INTO a2a_card_journal (task_id, n, body)
        SELECT task_id, -1 - seq, body FROM a2a_card_events WHERE seq < 0;
    DELETE FROM a2a_card_events WHERE seq < 0;",
    ),
    // 7 -> 8: when each journal entry was written (milliseconds since the Unix epoch; none
    // for the entries written before), for the operators' console to show how long a step
    // took.
    (
        "journal times",
        "ALTER TABLE a2a_card_journal ADD COLUMN at BIGINT;",
    ),
];

/// The schema's steps as sqlx migrations: step `i` of [`MIGRATIONS`] is version `i + 1`.
#[derive(Debug)]
struct Steps;

impl sqlx::migrate::MigrationSource<'static> for Steps {
    fn resolve(
        self,
    ) -> futures::future::BoxFuture<'static, Result<Vec<Migration>, sqlx::error::BoxDynError>> {
        Box::pin(async { Ok(migrations()) })
    }
}

/// [`MIGRATIONS`], as sqlx runs them.
fn migrations() -> Vec<Migration> {
    MIGRATIONS
        .iter()
        .enumerate()
        .map(|(i, (name, sql))| {
            Migration::new(
                i as i64 + 1,
                Cow::Borrowed(name),
                MigrationType::Simple,
                Cow::Borrowed(sql),
                false,
            )
        })
        .collect()
}

/// Creates or migrates the schema, refusing foreign and newer databases: first checks that
/// the database is this crate's (or empty), then runs sqlx's migrator over [`MIGRATIONS`]
/// (its `_sqlx_migrations` table says which steps a database has had).
pub(super) async fn migrate<B: Backend>(pool: &Pool<B>) -> Result<(), StoreError>
where
    // What sqlx's generic code asks of a database, as `database.rs` says, and its migrator.
    B::Connection: Migrate,
    for<'c> &'c mut B::Connection: Executor<'c, Database = B>,
    for<'q> B::Arguments<'q>: IntoArguments<'q, B>,
    for<'q> String: Encode<'q, B> + Decode<'q, B> + Type<B>,
    for<'q> &'q str: Encode<'q, B> + Type<B>,
    for<'q> i64: Encode<'q, B> + Decode<'q, B> + Type<B>,
    for<'q> Vec<u8>: Encode<'q, B> + Type<B>,
    usize: sqlx::ColumnIndex<B::Row>,
{
    let unavailable = |e: sqlx::Error| StoreError::Unavailable(e.to_string());
    let known = MIGRATIONS.len() as i64;
    let mut tx = pool.begin().await.map_err(unavailable)?;
    B::lock_schema(&mut tx).await.map_err(unavailable)?;
    let tables: Vec<String> = sqlx::query_scalar(B::TABLES)
        .fetch_all(&mut *tx)
        .await
        .map_err(|e| StoreError::Foreign(format!("it cannot be read as a database: {e}")))?;
    let recorded = tables.iter().any(|t| t == "_sqlx_migrations");
    // The schema table names the database as this crate's (and, before sqlx's migrator kept
    // the steps, which steps it had).
    let before = if tables.iter().any(|t| t == "a2a_card_schema") {
        let row: Option<(String, i64)> =
            sqlx::query_as("SELECT name, version FROM a2a_card_schema")
                .fetch_optional(&mut *tx)
                .await
                .map_err(unavailable)?;
        match row {
            Some((name, version)) if name == SCHEMA_NAME => version,
            _ => {
                return Err(StoreError::Foreign(
                    "its schema table names another schema".into(),
                ));
            }
        }
    } else if tables.is_empty() {
        sqlx::query("CREATE TABLE a2a_card_schema (name TEXT NOT NULL, version BIGINT NOT NULL)")
            .execute(&mut *tx)
            .await
            .map_err(unavailable)?;
        sqlx::query("INSERT INTO a2a_card_schema (name, version) VALUES ($1, 0)")
            .bind(SCHEMA_NAME)
            .execute(&mut *tx)
            .await
            .map_err(unavailable)?;
        0
    } else {
        return Err(StoreError::Foreign(format!(
            "it has other tables: {}",
            tables.join(", ")
        )));
    };
    if before > known {
        return Err(StoreError::Newer {
            found: before,
            known,
        });
    }
    if !recorded && before > 0 {
        // A database the earlier runner migrated: its steps are recorded for sqlx's migrator,
        // as sqlx records them.
        tx.ensure_migrations_table()
            .await
            .map_err(|e| StoreError::Unavailable(e.to_string()))?;
        for step in migrations().into_iter().take(before as usize) {
            sqlx::query(
                "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
                 VALUES ($1, $2, TRUE, $3, 0)",
            )
            .bind(step.version)
            .bind(step.description.into_owned())
            .bind(step.checksum.into_owned())
            .execute(&mut *tx)
            .await
            .map_err(unavailable)?;
        }
    }
    tx.commit().await.map_err(unavailable)?;
    let migrator = Migrator::new(Steps)
        .await
        .map_err(|e| StoreError::Unavailable(e.to_string()))?;
    migrator.run(pool).await.map_err(|e| match e {
        // A step this release does not know: a newer release migrated the database.
        sqlx::migrate::MigrateError::VersionMissing(found) => StoreError::Newer { found, known },
        e => StoreError::Unavailable(format!("the schema cannot be migrated: {e}")),
    })?;
    sqlx::query(&format!("UPDATE a2a_card_schema SET version = {known}"))
        .execute(pool)
        .await
        .map_err(unavailable)?;
    Ok(())
}
