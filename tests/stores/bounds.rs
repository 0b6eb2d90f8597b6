//! What a store keeps under sustained load stays bounded: the SQLite log (its `-wal` file) under
//! sustained writes, and what each store holds per request, counted by entries (tasks, logged
//! events, rows) after many times its retention went through it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use a2a::{
    Message, Part, Role, SendMessageRequest, SendMessageResponse, Task, TaskState, TaskStatus,
};
use a2a_card::server::Server;
use a2a_card::server::store::{Retention, SQLITE_LOG_LIMIT, Tasks};
use a2a_server::RequestHandler;

use crate::fight_club::agent::FightClub;

fn task(id: String, state: TaskState, text: &str) -> Task {
    Task {
        id,
        context_id: "c".to_owned(),
        status: TaskStatus {
            state,
            message: None,
            timestamp: Some(chrono::Utc::now()),
        },
        artifacts: None,
        history: Some(vec![Message::new(Role::User, vec![Part::text(text)])]),
        metadata: None,
    }
}

/// Sixteen writers create and finish tasks of 4 KiB each, one after the other, until eight
/// times [`SQLITE_LOG_LIMIT`] of tasks went to the database (the log holds more than that: a
/// write rewrites whole pages), while the `-wal` file's size is read every 2 ms. Before the
/// store restarted its log, this log only grew (by gigabytes a minute at full rate).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sqlite_log_stays_within_its_bound_under_sustained_writes() {
    let path = crate::stores::db_path("log");
    let store = Tasks::sqlite(&path).open().await.expect("opened");
    let wal = std::path::PathBuf::from(format!("{}-wal", path.display()));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut largest = 0;
            while !done.load(Ordering::Relaxed) {
                let size = std::fs::metadata(&wal).map_or(0, |m| m.len());
                largest = largest.max(size);
                std::thread::sleep(Duration::from_millis(2));
            }
            largest
        })
    };
    let text = "x".repeat(4096);
    const WRITERS: u64 = 16;
    // Each task written twice (created, then completed).
    let tasks = 8 * SQLITE_LOG_LIMIT / (2 * text.len() as u64);
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (store, text) = (Arc::clone(&store), text.clone());
            tokio::spawn(async move {
                for i in (w..tasks).step_by(WRITERS as usize) {
                    let id = format!("t{i}");
                    store
                        .create(task(id.clone(), TaskState::Working, &text))
                        .await
                        .expect("created");
                    store
                        .update(task(id, TaskState::Completed, &text))
                        .await
                        .expect("completed");
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.expect("a writer");
    }
    done.store(true, Ordering::Relaxed);
    let largest = sampler.join().expect("the sampler");
    eprintln!(
        "{tasks} tasks of 4 KiB written twice each: the log reached {:.1} MiB (its limit {} MiB)",
        largest as f64 / f64::from(1 << 20),
        SQLITE_LOG_LIMIT >> 20
    );
    assert!(largest > 0, "the log was never seen");
    assert!(
        largest <= 4 * SQLITE_LOG_LIMIT,
        "the log reached {largest} bytes, more than four times its limit of {SQLITE_LOG_LIMIT}"
    );
}

/// Retention in these tests: the last 40 finished tasks.
const KEPT: usize = 40;

/// Blocking sends of the fight comparison through the in-process handler of a server on
/// `tasks`: `n` of them, each answered with a completed task.
async fn send(handler: &Arc<dyn RequestHandler>, n: usize) {
    for i in 0..n {
        let mut message = Message::new(Role::User, vec![]);
        message.parts = vec![Part {
            content: a2a::PartContent::Data(
                serde_json::json!({"a": "Lion", "b": format!("Tiger {i}")}),
            ),
            filename: None,
            metadata: None,
            media_type: Some("application/json;schema=fightComparison".to_owned()),
        }];
        let request = SendMessageRequest {
            message,
            configuration: None,
            metadata: None,
            tenant: None,
        };
        let answer = handler
            .send_message(&Default::default(), request)
            .await
            .expect("answered");
        let SendMessageResponse::Task(task) = answer else {
            panic!("a skill's answer is a task")
        };
        assert_eq!(task.status.state, TaskState::Completed);
    }
}

/// The tasks the server lists (all of them: its caller is not scoped here).
async fn listed(handler: &Arc<dyn RequestHandler>) -> usize {
    let listed = handler
        .list_tasks(&Default::default(), crate::support::client::every_task())
        .await
        .expect("listed");
    usize::try_from(listed.total_size).unwrap_or(usize::MAX)
}

/// The rows of each of the SQL store's tables in the database at `url`.
async fn rows(url: &str) -> Vec<(String, i64)> {
    use sqlx::Row as _;
    let tables = [
        "a2a_card_tasks",
        "a2a_card_events",
        "a2a_card_journal",
        "a2a_card_keys",
        "a2a_card_answers",
        "a2a_card_hits",
        "a2a_card_push_configs",
    ];
    enum Pool {
        Sqlite(sqlx::SqlitePool),
        Postgres(sqlx::PgPool),
    }
    let db = match url.strip_prefix("sqlite://") {
        Some(path) => Pool::Sqlite(
            sqlx::SqlitePool::connect(&format!("sqlite://{path}"))
                .await
                .expect("the database"),
        ),
        None => Pool::Postgres(sqlx::PgPool::connect(url).await.expect("the database")),
    };
    let mut counts = Vec::new();
    for table in tables {
        let count = format!("SELECT COUNT(*) FROM {table}");
        let n: i64 = match &db {
            Pool::Sqlite(db) => sqlx::query(&count).fetch_one(db).await.map(|r| r.get(0)),
            Pool::Postgres(db) => sqlx::query(&count).fetch_one(db).await.map(|r| r.get(0)),
        }
        .expect("counted");
        counts.push((table.to_owned(), n));
    }
    counts
}

/// After many times its retention of blocking sends, each store holds at most its retention's
/// tasks, and the SQL stores' other tables hold rows for those tasks alone: nothing a store
/// keeps per request grows with the requests once they are done (counted by entries, not by
/// time or bytes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_store_keeps_per_request_is_bounded_by_its_retention() {
    let retention = Retention::default().max_terminal(KEPT);
    let lease = Duration::from_millis(300);
    let sqlite = format!(
        "sqlite://{}",
        crate::stores::db_path("per-request").display()
    );
    let mut stores = vec![("memory", "memory".to_owned()), ("sqlite", sqlite)];
    if let Some(url) = crate::support::postgres::database_or_skip("per_request").await {
        stores.push(("postgres", url));
    }
    for (name, url) in stores {
        let tasks = Tasks::from_url(&url)
            .expect("a store URL")
            .retention(retention)
            .lease(lease);
        let handler = Server::new(FightClub)
            .tasks(tasks)
            .request_handler()
            .await
            .expect("a handler");
        let mut counts = Vec::new();
        // Three rounds, each of many times the retention: what is kept after each is the same.
        for _ in 0..3 {
            send(&handler, 5 * KEPT).await;
            // The SQL stores apply retention at their lease's renewal.
            tokio::time::sleep(lease * 3).await;
            let kept = listed(&handler).await;
            assert!(
                kept <= KEPT,
                "{name}: {kept} tasks kept, retention keeps {KEPT}"
            );
            counts.push(kept);
            if name != "memory" {
                for (table, n) in rows(&url).await {
                    let most = match table.as_str() {
                        // Each finished fight task logs its few events.
                        "a2a_card_events" => 4 * KEPT as i64,
                        "a2a_card_tasks" => KEPT as i64,
                        // No journals, keys, answers, hits or webhooks in these sends.
                        _ => 0,
                    };
                    assert!(
                        n <= most,
                        "{name}: {n} rows in {table}, at most {most} expected"
                    );
                }
            }
        }
        eprintln!(
            "{name}: tasks kept after each round of {}: {counts:?}",
            5 * KEPT
        );
    }
}
