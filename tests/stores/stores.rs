//! The task stores (`a2a_card::server::store`): one conformance suite run against each, and
//! what only a durable store does (survive a restart, recover tasks left running, refuse a
//! database that is not its own, detect a second writer).

use std::sync::Arc;
use std::time::Duration;

use a2a::{
    A2AError, ListTasksRequest, Message, Part, Role, Task, TaskState, TaskStatus, error_code,
};
use a2a_card::server::store::{INTERRUPTED, Retention, StoreError, Tasks};
use a2a_server::TaskStore;
use support::client::every_task;

fn task(id: &str, context: &str, state: TaskState) -> Task {
    Task {
        id: id.to_owned(),
        context_id: context.to_owned(),
        status: TaskStatus {
            state,
            message: None,
            timestamp: Some(chrono::Utc::now()),
        },
        artifacts: None,
        history: Some(vec![Message::new(
            Role::User,
            vec![Part::text(format!("hello {id}"))],
        )]),
        metadata: None,
    }
}

/// A fresh database file under `target/`.
pub(crate) fn db_path(name: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stores");
    std::fs::create_dir_all(&dir).expect("a directory");
    let path = dir.join(format!("{name}-{}.db", std::process::id()));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    path
}

/// The SQL stores' lease in the suite: short, so that retention (applied at each renewal) is
/// seen quickly.
const LEASE: Duration = Duration::from_millis(300);

/// Every store under test, with a retention: in memory, SQLite, and Postgres (a throwaway
/// cluster the tests start).
async fn stores(name: &str, retention: Retention) -> Vec<(&'static str, Arc<dyn TaskStore>)> {
    let mut all = vec![
        (
            "memory",
            Tasks::memory()
                .retention(retention)
                .open()
                .await
                .expect("memory"),
        ),
        (
            "sqlite",
            Tasks::sqlite(db_path(name))
                .retention(retention)
                .lease(LEASE)
                .open()
                .await
                .expect("sqlite"),
        ),
    ];
    match support::postgres::database(name).await {
        Ok(url) => all.push((
            "postgres",
            Tasks::postgres(url)
                .retention(retention)
                .lease(LEASE)
                .open()
                .await
                .expect("postgres"),
        )),
        Err(why) => skip_postgres(&why),
    }
    all
}

/// Postgres tests run wherever a cluster can be started (CI installs it); elsewhere they say
/// why they did not run, unless `A2A_REQUIRE_POSTGRES` is set (CI sets it), which fails.
fn skip_postgres(why: &str) {
    if std::env::var_os("A2A_REQUIRE_POSTGRES").is_some() {
        panic!("Postgres is required (A2A_REQUIRE_POSTGRES) but: {why}");
    }
    eprintln!("SKIPPED the Postgres store: {why}");
}

#[tokio::test]
async fn create_get_update_and_terminal_states_are_final() {
    for (name, store) in stores("basics", Retention::forever()).await {
        assert_eq!(
            store
                .create(task("t1", "c1", TaskState::Submitted))
                .await
                .expect("created"),
            1,
            "{name}"
        );
        let err = store
            .create(task("t1", "c1", TaskState::Submitted))
            .await
            .expect_err("a second create");
        assert_eq!(err.code, error_code::INVALID_REQUEST, "{name}: {err:?}");
        let got = store.get("t1").await.expect("read").expect("there");
        assert_eq!(
            got.history.as_ref().map(Vec::len),
            Some(1),
            "{name}: the whole task comes back"
        );
        assert!(store.get("nope").await.expect("read").is_none(), "{name}");
        let v2 = store
            .update(task("t1", "c1", TaskState::Working))
            .await
            .expect("updated");
        let v3 = store
            .update(task("t1", "c1", TaskState::Completed))
            .await
            .expect("updated");
        assert!(v3 > v2 && v2 > 1, "{name}: versions grow ({v2}, {v3})");
        let err = store
            .update(task("t1", "c1", TaskState::Working))
            .await
            .expect_err("terminal is final");
        assert_eq!(err.code, error_code::INVALID_REQUEST, "{name}");
        store
            .update(task("t1", "c1", TaskState::Completed))
            .await
            .expect("the same terminal state again");
        let err = store
            .update(task("ghost", "c1", TaskState::Working))
            .await
            .expect_err("unknown");
        assert_eq!(err.code, error_code::TASK_NOT_FOUND, "{name}");
    }
}

#[tokio::test]
async fn begin_cancel_checks_and_cancels_in_one_step() {
    for (name, store) in stores("cancel", Retention::forever()).await {
        store
            .create(task("run", "c", TaskState::Working))
            .await
            .expect("created");
        store
            .create(task("done", "c", TaskState::Completed))
            .await
            .expect("created");
        let canceled = store.begin_cancel("run").await.expect("cancelable");
        assert_eq!(canceled.status.state, TaskState::Canceled, "{name}");
        assert_eq!(
            store
                .get("run")
                .await
                .expect("read")
                .expect("there")
                .status
                .state,
            TaskState::Canceled
        );
        let err = store.begin_cancel("done").await.expect_err("finished");
        assert_eq!(err.code, error_code::TASK_NOT_CANCELABLE, "{name}");
        let err = store
            .begin_cancel("run")
            .await
            .expect_err("already canceled");
        assert_eq!(err.code, error_code::TASK_NOT_CANCELABLE, "{name}");
        let err = store.begin_cancel("nope").await.expect_err("unknown");
        assert_eq!(err.code, error_code::TASK_NOT_FOUND, "{name}");
    }
}

#[tokio::test]
async fn list_filters_and_pages() {
    for (name, store) in stores("list", Retention::forever()).await {
        let before = chrono::Utc::now() - chrono::Duration::seconds(1);
        for (id, ctx, state) in [
            ("a", "x", TaskState::Working),
            ("b", "x", TaskState::Completed),
            ("c", "y", TaskState::Working),
            ("d", "x", TaskState::Working),
            ("e", "x", TaskState::Working),
        ] {
            store.create(task(id, ctx, state)).await.expect("created");
        }
        // Newest status first (A2A 1.0 section 3.1.4), then id.
        let all = store.list(&every_task()).await.expect("a list");
        assert_eq!(
            all.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
            ["e", "d", "c", "b", "a"],
            "{name}"
        );
        assert_eq!(all.total_size, 5);
        let in_x = store
            .list(&ListTasksRequest {
                context_id: Some("x".into()),
                ..every_task()
            })
            .await
            .expect("a list");
        assert_eq!(in_x.total_size, 4, "{name}");
        let working_x = store
            .list(&ListTasksRequest {
                context_id: Some("x".into()),
                status: Some(TaskState::Working),
                ..every_task()
            })
            .await
            .expect("a list");
        assert_eq!(
            working_x
                .tasks
                .iter()
                .map(|t| t.id.as_str())
                .collect::<Vec<_>>(),
            ["e", "d", "a"],
            "{name}"
        );
        let recent = store
            .list(&ListTasksRequest {
                status_timestamp_after: Some(before),
                ..every_task()
            })
            .await
            .expect("a list");
        assert_eq!(recent.total_size, 5, "{name}");
        let later = store
            .list(&ListTasksRequest {
                status_timestamp_after: Some(chrono::Utc::now() + chrono::Duration::seconds(60)),
                ..every_task()
            })
            .await
            .expect("a list");
        assert_eq!(later.total_size, 0, "{name}");
        // Paging: 2, 2, 1.
        let mut seen = Vec::new();
        let mut token = None;
        loop {
            let page = store
                .list(&ListTasksRequest {
                    page_size: Some(2),
                    page_token: token.clone(),
                    history_length: Some(0),
                    ..every_task()
                })
                .await
                .expect("a page");
            assert!(page.tasks.len() <= 2, "{name}");
            assert!(
                page.tasks
                    .iter()
                    .all(|t| t.history.as_ref().is_none_or(Vec::is_empty)),
                "{name}: historyLength 0"
            );
            seen.extend(page.tasks.into_iter().map(|t| t.id));
            if page.next_page_token.is_empty() {
                break;
            }
            token = Some(page.next_page_token);
        }
        assert_eq!(seen, ["e", "d", "c", "b", "a"], "{name}");
        let err = store
            .list(&ListTasksRequest {
                page_token: Some("garbage".into()),
                ..every_task()
            })
            .await
            .expect_err("a bad token");
        assert_eq!(err.code, error_code::INVALID_PARAMS, "{name}");
    }
}

/// A task's id says whose it is (`[TENANT:][OWNER.]ID`): a list names the prefix of the ids it
/// reaches and holds the tasks whose id begins with it and has no `:` after it, and a list
/// that names none the default tenant's (ids without `:`), on every store; `_` in a prefix is
/// no wildcard.
#[tokio::test]
async fn a_list_holds_the_tasks_of_its_reach_alone() {
    for (name, store) in stores("tenants", Retention::forever()).await {
        for id in [
            "acme:1",
            "acme:2",
            "ac_e:3",
            "acxe:4",
            "beta:5",
            "6",
            "acme:k1.7",
            "acme:k2.8",
            "k1.9",
        ] {
            store
                .create(task(id, "x", TaskState::Working))
                .await
                .expect("created");
        }
        for (reach, expected) in [
            (
                Some("acme:"),
                vec!["acme:1", "acme:2", "acme:k1.7", "acme:k2.8"],
            ),
            (Some("acme:k1."), vec!["acme:k1.7"]),
            (Some("ac_e:"), vec!["ac_e:3"]),
            (Some("beta:"), vec!["beta:5"]),
            (Some("nobody:"), vec![]),
            (Some("k1."), vec!["k1.9"]),
            (None, vec!["6", "k1.9"]),
        ] {
            let list = store
                .list(&ListTasksRequest {
                    tenant: reach.map(str::to_owned),
                    ..every_task()
                })
                .await
                .expect("a list");
            let mut ids: Vec<&str> = list.tasks.iter().map(|t| t.id.as_str()).collect();
            ids.sort_unstable();
            assert_eq!(ids, expected, "{name} {reach:?}");
            assert_eq!(list.total_size as usize, expected.len(), "{name} {reach:?}");
        }
    }
}

#[tokio::test]
async fn retention_removes_the_oldest_terminal_tasks_and_never_running_ones() {
    for (name, store) in stores("retention", Retention::forever().max_terminal(2)).await {
        store
            .create(task("running", "c", TaskState::Working))
            .await
            .expect("created");
        for id in ["t1", "t2", "t3"] {
            store
                .create(task(id, "c", TaskState::Working))
                .await
                .expect("created");
            tokio::time::sleep(Duration::from_millis(5)).await;
            store
                .update(task(id, "c", TaskState::Completed))
                .await
                .expect("done");
        }
        // In memory when a task ends; in a database at the next lease renewal.
        let mut gone = false;
        for _ in 0..100 {
            if store.get("t1").await.expect("read").is_none() {
                gone = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(gone, "{name}: the oldest went");
        assert!(store.get("t2").await.expect("read").is_some(), "{name}");
        assert!(store.get("t3").await.expect("read").is_some(), "{name}");
        assert!(
            store.get("running").await.expect("read").is_some(),
            "{name}: running tasks stay"
        );
    }
    // More than a sweep removes in one transaction, most ending in the same millisecond as
    // others: exactly the newest stay, whatever the batches.
    for (name, store) in stores("retention-batches", Retention::forever().max_terminal(10)).await {
        for i in 0..250 {
            let id = format!("t{i:03}");
            store
                .create(task(&id, "c", TaskState::Working))
                .await
                .expect("created");
            store
                .update(task(&id, "c", TaskState::Completed))
                .await
                .expect("done");
        }
        let mut left = 0;
        for _ in 0..100 {
            left = store.list(&every_task()).await.expect("a list").total_size;
            if left == 10 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(left, 10, "{name}: the newest ten stay");
        assert!(
            store.get("t249").await.expect("read").is_some(),
            "{name}: the last one to end stays"
        );
    }
    for (name, store) in stores(
        "retention-age",
        Retention::forever().max_age(Duration::from_millis(400)),
    )
    .await
    {
        store
            .create(task("old", "c", TaskState::Working))
            .await
            .expect("created");
        store
            .update(task("old", "c", TaskState::Failed))
            .await
            .expect("done");
        tokio::time::sleep(Duration::from_millis(500)).await;
        store
            .create(task("new", "c", TaskState::Working))
            .await
            .expect("created");
        store
            .update(task("new", "c", TaskState::Completed))
            .await
            .expect("done");
        for _ in 0..100 {
            if store.get("old").await.expect("read").is_none() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            store.get("old").await.expect("read").is_none(),
            "{name}: older than the age limit"
        );
        assert!(store.get("new").await.expect("read").is_some(), "{name}");
    }
}

#[tokio::test]
async fn a_sqlite_store_survives_a_restart_and_fails_what_was_left_running() {
    let path = db_path("restart");
    let lease = Duration::from_millis(300);
    {
        let store = Tasks::sqlite(&path)
            .lease(lease)
            .open()
            .await
            .expect("opened");
        store
            .create(task("done", "c", TaskState::Completed))
            .await
            .expect("created");
        store
            .create(task("busy", "c", TaskState::Working))
            .await
            .expect("created");
        store
            .create(task("asking", "c", TaskState::InputRequired))
            .await
            .expect("created");
    }
    // The first process's lease runs out: it renews no more (it stopped).
    tokio::time::sleep(lease * 2).await;
    let store = Tasks::sqlite(&path)
        .lease(lease)
        .open()
        .await
        .expect("opened again");
    assert_eq!(
        store
            .get("done")
            .await
            .expect("read")
            .expect("kept")
            .status
            .state,
        TaskState::Completed
    );
    for id in ["busy", "asking"] {
        let t = store.get(id).await.expect("read").expect("kept");
        assert_eq!(
            t.status.state,
            TaskState::Failed,
            "{id}: no handler runs it any more"
        );
        let text = format!("{:?}", t.status.message);
        assert!(text.contains(INTERRUPTED), "{text}");
    }
}

#[tokio::test]
async fn a_create_refused_for_an_existing_id_leaves_that_task_to_its_writers() {
    let path = db_path("refused-create");
    let a = Tasks::sqlite(&path).open().await.expect("opened");
    a.create(task("t", "c", TaskState::Working))
        .await
        .expect("created");
    // A second process on the file makes the same id: refused, and nothing of it stays behind.
    let b = Tasks::sqlite(&path).open().await.expect("opened");
    let err = b
        .create(task("t", "c", TaskState::Submitted))
        .await
        .expect_err("the id exists");
    assert!(err.message.contains("already exists"), "{err:?}");
    b.update(task("t", "c", TaskState::Completed))
        .await
        .expect("B writes the stored task as any writer may");
    assert_eq!(
        b.get("t").await.expect("read").expect("there").status.state,
        TaskState::Completed
    );
}

#[tokio::test]
async fn two_writers_on_one_file_never_silently_overwrite_each_other() {
    let path = db_path("writers");
    let a = Tasks::sqlite(&path).open().await.expect("opened");
    a.create(task("t", "c", TaskState::Working))
        .await
        .expect("created");
    // A second process on the file, alive: it does not take A's running tasks.
    let b = Tasks::sqlite(&path).open().await.expect("opened");
    // B cancels; A, which last wrote version 1, must not overwrite that. A's intermediate
    // write is queued (it returns at once); the database refuses it, and A's next write says so.
    b.begin_cancel("t").await.expect("canceled");
    a.update(task("t", "c", TaskState::Working))
        .await
        .expect("queued");
    let err = a
        .update(task("t", "c", TaskState::Completed))
        .await
        .expect_err("a stale writer");
    assert_eq!(err.code, error_code::INVALID_REQUEST, "{err:?}");
    assert_eq!(
        a.get("t").await.expect("read").expect("there").status.state,
        TaskState::Canceled
    );
}

#[tokio::test]
async fn a_round_whose_creates_are_refused_keeps_its_updates_and_the_other_creates() {
    // SQLite writes a round in one call (updates, then creates): the creates' statement
    // refused for one id another process made, the round's update stays written and the
    // other creates are stored one by one.
    let path = db_path("round-refused-create");
    let a = Tasks::sqlite(&path).open().await.expect("opened");
    a.create(task("taken", "c", TaskState::Working))
        .await
        .expect("created");
    let b = Tasks::sqlite(&path).open().await.expect("opened");
    b.create(task("mine", "c", TaskState::Working))
        .await
        .expect("created");
    // One round: the test's runtime has one thread, so every write below is queued before
    // the writer runs.
    let update = b.update(task("mine", "c", TaskState::Completed));
    let creates = futures::future::join_all(
        ["n1", "taken", "n2"].map(|id| b.create(task(id, "c", TaskState::Submitted))),
    );
    let (updated, created) = futures::future::join(update, creates).await;
    updated.expect("the update is written");
    let [n1, taken, n2] = <[_; 3]>::try_from(created).expect("three outcomes");
    n1.expect("n1 is stored");
    n2.expect("n2 is stored");
    let err = taken.expect_err("the id exists");
    assert!(err.message.contains("already exists"), "{err:?}");
    // As another process reads the file.
    let c = Tasks::sqlite(&path).open().await.expect("opened");
    let state = |t: Option<a2a::Task>| t.expect("stored").status.state;
    assert_eq!(
        state(c.get("mine").await.expect("read")),
        TaskState::Completed
    );
    assert_eq!(
        state(c.get("n1").await.expect("read")),
        TaskState::Submitted
    );
    assert_eq!(
        state(c.get("n2").await.expect("read")),
        TaskState::Submitted
    );
    assert_eq!(
        state(c.get("taken").await.expect("read")),
        TaskState::Working
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancels_succeed_while_the_writer_commits_other_tasks() {
    // A cancel reads and then writes in one transaction, on another connection than the
    // writer's: the writer committing in between must not fail it (SQLite).
    let path = db_path("cancel-beside-writer");
    let store = Tasks::sqlite(&path).open().await.expect("opened");
    for i in 0..40 {
        for prefix in ["busy", "cancel"] {
            store
                .create(task(&format!("{prefix}{i}"), "c", TaskState::Working))
                .await
                .expect("created");
        }
    }
    let writes = (0..40).map(|i| {
        let store = Arc::clone(&store);
        tokio::spawn(async move {
            for _ in 0..5 {
                store
                    .update(task(&format!("busy{i}"), "c", TaskState::Working))
                    .await
                    .expect("a write");
            }
        })
    });
    let cancels = (0..40).map(|i| {
        let store = Arc::clone(&store);
        tokio::spawn(async move { store.begin_cancel(&format!("cancel{i}")).await })
    });
    let (writes, cancels): (Vec<_>, Vec<_>) = (writes.collect(), cancels.collect());
    for (i, cancel) in futures::future::join_all(cancels)
        .await
        .into_iter()
        .enumerate()
    {
        let task = cancel
            .expect("joined")
            .unwrap_or_else(|e| panic!("cancel{i}: {e:?}"));
        assert_eq!(task.status.state, TaskState::Canceled);
    }
    for write in futures::future::join_all(writes).await {
        write.expect("joined");
    }
}

#[tokio::test]
async fn concurrent_writes_are_committed_together_and_each_caller_learns_its_own_outcome() {
    for (name, store) in stores("together", Retention::forever()).await {
        // Fifty-one creates at once, one of them an id that exists: the others are all stored.
        store
            .create(task("dup", "c", TaskState::Working))
            .await
            .expect("created");
        let ids = (0..50).map(|i| format!("t{i}"));
        let ids = ids
            .take(25)
            .chain(["dup".to_owned()])
            .chain((25..50).map(|i| format!("t{i}")));
        let creates = ids.map(|id| {
            let store = Arc::clone(&store);
            async move {
                (
                    id.clone(),
                    store.create(task(&id, "c", TaskState::Submitted)).await,
                )
            }
        });
        for (id, outcome) in futures::future::join_all(creates).await {
            match id.as_str() {
                "dup" => {
                    let err = outcome.expect_err("the id exists");
                    assert!(err.message.contains("already exists"), "{name}: {err:?}");
                }
                _ => {
                    outcome.unwrap_or_else(|e| panic!("{name}: {id}: {e:?}"));
                }
            }
        }
        // Each task's writes, several in flight at once: every one lands, in order.
        let writes = (0..50).map(|i| {
            let store = Arc::clone(&store);
            async move {
                let id = format!("t{i}");
                for step in 0..3 {
                    let mut t = task(&id, "c", TaskState::Working);
                    t.metadata = Some(
                        [("step".to_owned(), serde_json::json!(step))]
                            .into_iter()
                            .collect(),
                    );
                    store.update(t).await.expect("an intermediate write");
                }
                store
                    .update(task(&id, "c", TaskState::Completed))
                    .await
                    .expect("the last write")
            }
        });
        let versions = futures::future::join_all(writes).await;
        assert!(
            versions.windows(2).all(|w| w[0] == w[1]),
            "{name}: every task went through as many versions: {versions:?}"
        );
        for i in 0..50 {
            let t = store
                .get(&format!("t{i}"))
                .await
                .expect("read")
                .expect("stored");
            assert_eq!(t.status.state, TaskState::Completed, "{name}: t{i}");
        }
        let all = store.list(&every_task()).await.expect("a list");
        assert_eq!(all.total_size, 51, "{name}");
    }
}

#[tokio::test]
async fn a_database_that_is_not_ours_or_is_newer_is_refused_and_left_untouched() {
    // Another application's database.
    let path = db_path("foreign");
    {
        use sqlx_probe::*;
        create_foreign(&path).await;
    }
    let before = std::fs::read(&path).expect("the file");
    match Tasks::sqlite(&path).open().await {
        Err(StoreError::Foreign(why)) => assert!(why.contains("recipes"), "{why}"),
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }
    assert!(
        std::fs::read(&path).expect("the file") == before,
        "the foreign file was changed"
    );

    // Ours, from a newer release.
    let path = db_path("newer");
    drop(Tasks::sqlite(&path).open().await.expect("created"));
    sqlx_probe::set_version(&path, 99).await;
    match Tasks::sqlite(&path).open().await {
        Err(e @ StoreError::Newer { found: 99, .. }) => {
            assert!(e.to_string().contains("newer"), "{e}")
        }
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }

    // Ours, with a step of a newer release recorded by sqlx's migrator.
    let path = db_path("newer-step");
    drop(Tasks::sqlite(&path).open().await.expect("created"));
    sqlx_probe::run(
        &path,
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
         VALUES (9, 'a later step', TRUE, x'00', 0);",
    )
    .await;
    match Tasks::sqlite(&path).open().await {
        Err(StoreError::Newer { found: 9, known: 8 }) => {}
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }

    // Not a database at all.
    let path = db_path("garbage");
    std::fs::write(
        &path,
        b"these are not the tables you are looking for, at all, no",
    )
    .expect("written");
    assert!(Tasks::sqlite(&path).open().await.is_err());
}

#[tokio::test]
async fn a_database_of_the_first_schema_is_migrated_with_its_tasks() {
    // A file as the first release left it: schema version 1, one finished task.
    let path = db_path("v1");
    let body = serde_json::to_string(&task("old", "c", TaskState::Completed)).expect("json");
    sqlx_probe::run(
        &path,
        &format!(
            "CREATE TABLE a2a_card_schema (name TEXT NOT NULL, version BIGINT NOT NULL);
            INSERT INTO a2a_card_schema VALUES ('a2a-card tasks', 1);
            CREATE TABLE a2a_card_tasks (id TEXT PRIMARY KEY, context_id TEXT NOT NULL,
                state TEXT NOT NULL, status_at TEXT, version BIGINT NOT NULL, ended_at BIGINT,
                owner TEXT, body TEXT NOT NULL);
            CREATE INDEX a2a_card_tasks_context ON a2a_card_tasks (context_id, id);
            CREATE INDEX a2a_card_tasks_state ON a2a_card_tasks (state);
            CREATE INDEX a2a_card_tasks_ended ON a2a_card_tasks (ended_at);
            CREATE INDEX a2a_card_tasks_owner ON a2a_card_tasks (owner);
            CREATE TABLE a2a_card_push_configs (task_id TEXT NOT NULL, id TEXT NOT NULL,
                body TEXT NOT NULL, PRIMARY KEY (task_id, id));
            CREATE TABLE a2a_card_replicas (id TEXT PRIMARY KEY, seen_at BIGINT NOT NULL);
            INSERT INTO a2a_card_tasks VALUES ('old', 'c', 'TASK_STATE_COMPLETED', NULL, 3, 1, NULL, '{}');",
            body.replace('\'', "''")
        ),
    )
    .await;
    let store = Tasks::sqlite(&path).open().await.expect("migrated");
    let old = store.get("old").await.expect("read").expect("kept");
    assert_eq!(old.status.state, TaskState::Completed);
    assert_eq!(sqlx_probe::version(&path).await, 8);
    // sqlx's migrator keeps the steps, those the earlier runner applied recorded as its own.
    assert_eq!(
        sqlx_probe::applied(&path).await,
        vec![1, 2, 3, 4, 5, 6, 7, 8]
    );
    let indexes = sqlx_probe::indexes(&path).await;
    assert!(
        indexes.contains(&"a2a_card_tasks_running".to_owned())
            && !indexes.contains(&"a2a_card_tasks_state".to_owned()),
        "{indexes:?}"
    );
    // And it works as a fresh one does.
    store
        .create(task("new", "c", TaskState::Working))
        .await
        .expect("created");
    store
        .update(task("new", "c", TaskState::Completed))
        .await
        .expect("finished");
    assert_eq!(
        store.list(&every_task()).await.expect("a list").total_size,
        2
    );
}

#[tokio::test]
async fn a_journal_kept_in_the_event_log_moves_to_a_table_of_its_own() {
    use a2a_card::server::store::{EventLog, SqlTasks};
    // A file as schema 6 left it: a durable skill's task, its journal as rows below its events
    // (entry `n` is row `-1 - n`), beside its event 1.
    let path = db_path("v6-journal");
    let body = serde_json::to_string(&task("durable", "c", TaskState::Working)).expect("json");
    sqlx_probe::run(
        &path,
        &format!(
            "CREATE TABLE a2a_card_schema (name TEXT NOT NULL, version BIGINT NOT NULL);
            INSERT INTO a2a_card_schema VALUES ('a2a-card tasks', 6);
            CREATE TABLE a2a_card_tasks (id TEXT PRIMARY KEY, context_id TEXT NOT NULL,
                state TEXT NOT NULL, status_at TEXT, version BIGINT NOT NULL, ended_at BIGINT,
                owner TEXT, body TEXT NOT NULL, seq BIGINT);
            CREATE INDEX a2a_card_tasks_context ON a2a_card_tasks (context_id, id);
            CREATE INDEX a2a_card_tasks_running ON a2a_card_tasks (owner) WHERE ended_at IS NULL;
            CREATE INDEX a2a_card_tasks_ended ON a2a_card_tasks (ended_at) WHERE ended_at IS NOT NULL;
            CREATE TABLE a2a_card_push_configs (task_id TEXT NOT NULL, id TEXT NOT NULL,
                body TEXT NOT NULL, PRIMARY KEY (task_id, id));
            CREATE TABLE a2a_card_replicas (id TEXT PRIMARY KEY, seen_at BIGINT NOT NULL);
            CREATE TABLE a2a_card_events (task_id TEXT NOT NULL, seq BIGINT NOT NULL,
                body TEXT NOT NULL, PRIMARY KEY (task_id, seq));
            CREATE TABLE a2a_card_hits (key TEXT NOT NULL, window_start BIGINT NOT NULL,
                ends_at BIGINT NOT NULL, hits BIGINT NOT NULL, PRIMARY KEY (key, window_start));
            CREATE TABLE a2a_card_answers (id TEXT PRIMARY KEY, task_id TEXT NOT NULL,
                body TEXT NOT NULL, sent_at BIGINT NOT NULL);
            CREATE TABLE a2a_card_keys (key TEXT PRIMARY KEY, task_id TEXT NOT NULL,
                digest TEXT NOT NULL, made_at BIGINT NOT NULL);
            INSERT INTO a2a_card_tasks VALUES ('durable', 'c', 'TASK_STATE_WORKING', NULL, 2, NULL, NULL, '{}', 0);
            INSERT INTO a2a_card_events VALUES ('durable', -1, '{{\"begin\":{{\"skill\":\"plan\"}}}}');
            INSERT INTO a2a_card_events VALUES ('durable', -2, '{{\"step\":\"charge\",\"value\":1}}');
            INSERT INTO a2a_card_events VALUES ('durable', 1, '{{\"statusUpdate\":{{\"taskId\":\"durable\",\"contextId\":\"c\",\"status\":{{\"state\":\"TASK_STATE_WORKING\"}}}}}}');",
            body.replace('\'', "''")
        ),
    )
    .await;
    let store = SqlTasks::sqlite(&path, Retention::default())
        .await
        .expect("migrated");
    assert_eq!(sqlx_probe::version(&path).await, 8);
    let mut begin = a2a_card::journal::Begin::default();
    begin.skill = "plan".into();
    assert_eq!(
        store.read_journal("durable").await.expect("the journal"),
        vec![
            (
                0,
                a2a_card::journal::Entry::Begin {
                    begin: Box::new(begin)
                }
            ),
            (
                1,
                a2a_card::journal::Entry::Step {
                    name: "charge".into(),
                    value: serde_json::json!(1)
                }
            )
        ],
        "the entries, in order, as they were"
    );
    assert_eq!(
        sqlx_probe::events(&path, "durable").await,
        vec![1],
        "only the events stay in the log"
    );
    let logged = store
        .read("durable", Some(0))
        .await
        .expect("read")
        .expect("kept");
    assert_eq!(logged.events.len(), 1, "{:?}", logged.events);
}

#[tokio::test]
async fn a_task_whose_events_could_not_be_logged_is_written_no_further_leaving_no_gap() {
    use a2a_card::server::store::{Event, EventLog, SqlTasks};
    let path = db_path("log-gap");
    let store = SqlTasks::sqlite(&path, Retention::default())
        .await
        .expect("opened");
    store
        .create(task("gap", "c", TaskState::Working))
        .await
        .expect("created");
    // The database refuses the task's third event (as a full disk refuses a write), and only
    // that one.
    sqlx_probe::run(
        &path,
        "CREATE TRIGGER no_room BEFORE INSERT ON a2a_card_events
            WHEN NEW.task_id = 'gap' AND NEW.seq = 3
            BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;",
    )
    .await;
    let event = |n: u64| {
        Arc::new(Event::from(a2a::StreamResponse::StatusUpdate(
            a2a::TaskStatusUpdateEvent {
                task_id: "gap".into(),
                context_id: "c".into(),
                status: TaskStatus {
                    state: TaskState::InputRequired,
                    message: Some(Message::new(Role::Agent, vec![Part::text(format!("{n}?"))])),
                    timestamp: None,
                },
                metadata: None,
            },
        )))
    };
    // Each write of the task is one a caller waits for (a question): one round each.
    let mut outcomes = Vec::new();
    for n in 1..=4 {
        store.append("gap", n, &event(n));
        outcomes.push(
            store
                .update_at(task("gap", "c", TaskState::InputRequired), n)
                .await
                .is_ok(),
        );
    }
    assert_eq!(
        outcomes,
        [true, true, false, false],
        "the write whose events were not logged is refused, and every write after it"
    );
    assert_eq!(
        sqlx_probe::events(&path, "gap").await,
        vec![1, 2],
        "the log ends where it failed: an event written after a lost one would leave a gap"
    );
}

#[tokio::test]
async fn a_run_whose_task_another_replica_claimed_logs_nothing_more_and_stops() {
    use a2a_card::journal::Entry;
    use a2a_card::server::store::{Event, EventLog, SqlTasks};
    use sqlx::Connection as _;
    let Some(url) = crate::replicas::postgres("fenced").await else {
        return;
    };
    let store = SqlTasks::postgres(&url, Retention::default())
        .await
        .expect("opened");
    let mut db = sqlx::PgConnection::connect(&url)
        .await
        .expect("the database");
    store
        .create(task("fenced", "c", TaskState::Working))
        .await
        .expect("created");
    let event = |n: u64| {
        Arc::new(Event::from(a2a::StreamResponse::StatusUpdate(
            a2a::TaskStatusUpdateEvent {
                task_id: "fenced".into(),
                context_id: "c".into(),
                status: TaskStatus {
                    state: TaskState::Working,
                    message: Some(Message::new(Role::Agent, vec![Part::text(format!("{n}"))])),
                    timestamp: None,
                },
                metadata: None,
            },
        )))
    };
    let logged = async |db: &mut sqlx::PgConnection| -> Vec<i64> {
        sqlx::query_scalar("SELECT seq FROM a2a_card_events WHERE task_id = 'fenced' ORDER BY seq")
            .fetch_all(db)
            .await
            .expect("the log")
    };
    store.append("fenced", 1, &event(1));
    store.journal("fenced", 0, &Entry::Sleep { until_ms: 0 });
    store
        .journal_written("fenced", 0)
        .await
        .expect("logged while the task is this store's");
    let mine = crate::replicas::owner(&url, "fenced")
        .await
        .expect("the task is this replica's");
    // Another replica claims the task, as a takeover does when this one's lease ran out: the
    // row's owner and version move on.
    sqlx::query(
        "UPDATE a2a_card_tasks SET owner = 'another-replica', version = version + 1
            WHERE id = 'fenced'",
    )
    .execute(&mut db)
    .await
    .expect("claimed");
    // The run here, not told yet, logs on: none of it is kept, and it learns so.
    store.append("fenced", 2, &event(2));
    store.journal("fenced", 1, &Entry::Sleep { until_ms: 0 });
    assert!(
        store.journal_written("fenced", 1).await.is_err(),
        "a journal entry of a run that lost its task is not written, and its waiter is told"
    );
    assert_eq!(
        logged(&mut db).await,
        vec![1],
        "an event of a run that lost its task is not logged"
    );
    let refused = store
        .update_at(task("fenced", "c", TaskState::InputRequired), 2)
        .await
        .expect_err("its next row write is refused");
    assert!(
        refused.message.contains("no longer this process's"),
        "{}",
        refused.message
    );
    // Should the task be this replica's again (given back, claimed once more), what the old run
    // still logs stays out: its run stopped at the item the fence refused, with no gap after.
    sqlx::query("UPDATE a2a_card_tasks SET owner = $1 WHERE id = 'fenced'")
        .bind(&mine)
        .execute(&mut db)
        .await
        .expect("given back");
    store.append("fenced", 3, &event(3));
    // Written in order: once an entry of another task queued after it is written, so would
    // the event be.
    store
        .create(task("after", "c", TaskState::Working))
        .await
        .expect("created");
    store.journal("after", 0, &Entry::Sleep { until_ms: 0 });
    store
        .journal_written("after", 0)
        .await
        .expect("another task's entry is written");
    assert_eq!(logged(&mut db).await, vec![1], "nothing after the gap");
    // A process that does not run the task (one that cancels it, say) logs as it writes.
    let other = SqlTasks::postgres(&url, Retention::default())
        .await
        .expect("opened again");
    other.append("fenced", 2, &event(2));
    other
        .update_at(task("fenced", "c", TaskState::Canceled), 2)
        .await
        .expect("written by a process that does not run the task");
    assert_eq!(logged(&mut db).await, vec![1, 2]);
}

#[tokio::test]
async fn retention_removes_a_finished_tasks_journal_with_it() {
    use a2a_card::server::store::{DEFAULT_LEASE, EventLog, SqlTasks};
    let path = db_path("journal-sweep");
    let retention = Retention::default().max_age(Duration::from_millis(1));
    let store = SqlTasks::sqlite(&path, retention).await.expect("opened");
    store
        .create(task("gone", "c", TaskState::Working))
        .await
        .expect("created");
    store.journal("gone", 0, &a2a_card::journal::Entry::Sleep { until_ms: 0 });
    store.journal_written("gone", 0).await.expect("written");
    store
        .update(task("gone", "c", TaskState::Completed))
        .await
        .expect("finished");
    // Retention is applied with each lease renewal, every third of the lease.
    let started = std::time::Instant::now();
    while store.get("gone").await.expect("read").is_some() {
        assert!(
            started.elapsed() < DEFAULT_LEASE,
            "the task was never removed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        store.read_journal("gone").await.expect("read").is_empty(),
        "its journal went with it"
    );
}

#[tokio::test]
async fn a_restarted_server_still_answers_for_its_tasks() {
    use a2a_card::server::Server;
    let path = db_path("server");
    let id = {
        let running =
            support::client::serve(Server::new(fight_club::FightClub).tasks(Tasks::sqlite(&path)))
                .await;
        let client =
            support::client::client(&support::client::card(&running.base).await, "JSONRPC").await;
        let done = support::client::task(
            client
                .send_message(&support::client::request(
                    vec![support::client::data_part(
                        "fightComparison",
                        serde_json::json!({"a": "Lion", "b": "Tiger"}),
                    )],
                    None,
                ))
                .await
                .expect("a verdict"),
        );
        done.id
    };
    let running =
        support::client::serve(Server::new(fight_club::FightClub).tasks(Tasks::sqlite(&path)))
            .await;
    let client =
        support::client::client(&support::client::card(&running.base).await, "HTTP+JSON").await;
    let again = client
        .get_task(&a2a::GetTaskRequest {
            id: id.clone(),
            history_length: None,
            tenant: None,
        })
        .await
        .expect("the task from before the restart");
    assert_eq!(again.status.state, TaskState::Completed);
    assert_eq!(again.artifacts.map(|a| a.len()), Some(1));
}

/// A store that records which task ids it was asked for, around the in-memory one.
struct Recording {
    inner: Arc<dyn TaskStore>,
    calls: std::sync::Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl TaskStore for Recording {
    async fn create(&self, task: Task) -> Result<a2a_server::task_store::TaskVersion, A2AError> {
        self.record(format!("create {}", task.id));
        self.inner.create(task).await
    }
    async fn update(&self, task: Task) -> Result<a2a_server::task_store::TaskVersion, A2AError> {
        self.inner.update(task).await
    }
    async fn get(&self, id: &str) -> Result<Option<Task>, A2AError> {
        self.record(format!("get {id}"));
        self.inner.get(id).await
    }
    async fn list(&self, req: &ListTasksRequest) -> Result<a2a::ListTasksResponse, A2AError> {
        self.inner.list(req).await
    }
    async fn begin_cancel(&self, id: &str) -> Result<Task, A2AError> {
        self.inner.begin_cancel(id).await
    }
}

impl Recording {
    fn record(&self, call: String) {
        self.calls.lock().expect("not poisoned").push(call);
    }
}

#[tokio::test]
async fn a_new_task_is_not_looked_up_before_it_is_created() {
    use a2a_card::server::Server;
    let store = Arc::new(Recording {
        inner: Tasks::memory().open().await.expect("memory"),
        calls: std::sync::Mutex::new(Vec::new()),
    });
    let running = support::client::serve(Server::new(fight_club::FightClub).tasks(Tasks::custom(
        store.clone() as Arc<dyn a2a_server::TaskStore>,
    )))
    .await;
    let client =
        support::client::client(&support::client::card(&running.base).await, "JSONRPC").await;
    let done = support::client::task(
        client
            .send_message(&support::client::request(
                vec![support::client::data_part(
                    "fightComparison",
                    serde_json::json!({"a": "Lion", "b": "Tiger"}),
                )],
                None,
            ))
            .await
            .expect("a verdict"),
    );
    let calls = store.calls.lock().expect("not poisoned").clone();
    let created = calls
        .iter()
        .position(|c| *c == format!("create {}", done.id))
        .unwrap_or_else(|| panic!("the task was created: {calls:?}"));
    assert!(
        !calls[..created].contains(&format!("get {}", done.id)),
        "the id the server made for the new task was looked up before it was created: {calls:?}"
    );
    // A follow-up names its task, which the server still follows: it is refused as finished.
    let err = client
        .send_message(&support::client::request(
            vec![a2a::Part::text("and now?")],
            Some(done.id.clone()),
        ))
        .await
        .expect_err("a finished task takes no more messages");
    assert_eq!(err.code, a2a::error_code::UNSUPPORTED_OPERATION, "{err:?}");
}

use crate::fight_club::agent as fight_club;
use crate::support;

/// A second SQLite client for the tests, to make files this crate did not make.
mod sqlx_probe {
    use std::path::Path;

    pub async fn create_foreign(path: &Path) {
        run(
            path,
            "CREATE TABLE recipes (name TEXT); INSERT INTO recipes VALUES ('soup');",
        )
        .await;
    }

    pub async fn set_version(path: &Path, version: i64) {
        run(
            path,
            &format!("UPDATE a2a_card_schema SET version = {version};"),
        )
        .await;
    }

    pub async fn version(path: &Path) -> i64 {
        use sqlx::Connection;
        let mut db = connect(path).await;
        let v = sqlx::query_scalar("SELECT version FROM a2a_card_schema")
            .fetch_one(&mut db)
            .await
            .expect("a version");
        db.close().await.expect("closed");
        v
    }

    /// The steps sqlx's migrator has recorded as applied, in order.
    pub async fn applied(path: &Path) -> Vec<i64> {
        use sqlx::Connection;
        let mut db = connect(path).await;
        let steps = sqlx::query_scalar(
            "SELECT version FROM _sqlx_migrations WHERE success ORDER BY version",
        )
        .fetch_all(&mut db)
        .await
        .expect("the applied steps");
        db.close().await.expect("closed");
        steps
    }

    /// The numbers of task `id`'s rows in the event log, in order.
    pub async fn events(path: &Path, id: &str) -> Vec<i64> {
        use sqlx::Connection;
        let mut db = connect(path).await;
        let rows =
            sqlx::query_scalar("SELECT seq FROM a2a_card_events WHERE task_id = ? ORDER BY seq")
                .bind(id)
                .fetch_all(&mut db)
                .await
                .expect("the events");
        db.close().await.expect("closed");
        rows
    }

    pub async fn indexes(path: &Path) -> Vec<String> {
        use sqlx::Connection;
        let mut db = connect(path).await;
        let names = sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'index'")
            .fetch_all(&mut db)
            .await
            .expect("the indexes");
        db.close().await.expect("closed");
        names
    }

    async fn connect(path: &Path) -> sqlx::SqliteConnection {
        use sqlx::Connection;
        let options = sqlx::sqlite::SqliteConnectOptions::new().filename(path);
        sqlx::SqliteConnection::connect_with(&options)
            .await
            .expect("a SQLite connection")
    }

    pub async fn run(path: &Path, sql: &str) {
        use sqlx::Connection;
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true);
        let mut db = sqlx::SqliteConnection::connect_with(&options)
            .await
            .expect("a SQLite connection");
        sqlx::raw_sql(sql)
            .execute(&mut db)
            .await
            .expect("the statements run");
        db.close().await.expect("closed");
    }
}

#[tokio::test]
async fn a_sqlite_files_log_is_moved_into_it_beside_the_writes() {
    // SQLite's own checkpoint is off (it ran in the commit of whichever round passed 1,000
    // pages, and that round's callers waited for the disk); the store checkpoints instead.
    // Once a checkpoint has moved the whole log into the file, the next write goes over the log
    // from its start, and SQLite counts that restart in the log's header (its checkpoint
    // sequence number, bytes 12..16). Two bursts of writes a quiet second apart: the second
    // begins over a log the first was moved out of. Unchecked, the log would never restart,
    // and would hold both bursts (about 27 MB each here). (How long the log grows within a
    // burst depends on how busy the machine is, so its size is not what is asserted.)
    let path = db_path("checkpoints");
    let store = Tasks::sqlite(&path)
        .lease(LEASE)
        .open()
        .await
        .expect("sqlite");
    let page = "x".repeat(4_000);
    let restarts = || {
        let log = std::fs::read(format!("{}-wal", path.display())).unwrap_or_default();
        log.get(12..16)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            .unwrap_or(0)
    };
    let mut counts = Vec::new();
    for burst in 0..2 {
        for i in 0..1_000 {
            let mut t = task(&format!("t{burst}-{i}"), "c", TaskState::Completed);
            t.history = Some(vec![Message::new(Role::User, vec![Part::text(&page)])]);
            store.create(t).await.expect("created");
        }
        counts.push(restarts());
        tokio::time::sleep(Duration::from_millis(1_000)).await;
    }
    assert!(
        counts[1] > counts[0],
        "the log did not start over after the quiet second between the bursts (restarts {counts:?}): it is not checkpointed"
    );
    assert!(store.get("t0-0").await.expect("read").is_some());
    assert!(store.get("t1-999").await.expect("read").is_some());
}
