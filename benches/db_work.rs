//! What one task costs Postgres: for each kind of work a user does (a blocking send that
//! completes, a streamed task of 100 chunks, a durable skill of 3 steps, an answer to a waiting
//! task, a cancel), the statements the server runs (each its own transaction, unless wrapped
//! in an explicit `BEGIN`/`COMMIT`, counted apart), the WAL it writes and the notifications it
//! sends, per task, read from the database itself
//! (`pg_stat_statements`, and the WAL position before and after). The agent is served in
//! process on a throwaway cluster under `target/` (one replica, a sequential client); each kind
//! runs [`TASKS`] tasks, the statistics reset before, and the statements that cost most are
//! listed, to show where the work goes.
//!
//! ```text
//! cargo bench --bench db_work
//! ```
//!
//! Under `cargo test --benches` each kind runs one task, and nothing is printed.

use examples::count::agent::Counter;
use examples::fight_club::agent::{FightClub, FightClubClient, FightComparison};
#[path = "../tests/support/postgres.rs"]
#[allow(dead_code)]
mod postgres;

use std::time::Duration;

use a2a_card::Input;
use a2a_card::server::Server;
use a2a_card::server::store::Tasks;
use a2a_card::testing::TestAgent;
use a2a_card::{SkillContext, SkillError, agent, skill};
use serde_json::{Value, json};
use sqlx::{Connection, PgConnection, Row};

/// Tasks per kind of work.
const TASKS: u32 = 200;

/// Skills for the kinds of work the examples do not have: steps, a question, a long wait.
struct Work;

/// Works.
#[agent(url = "http://127.0.0.1:9700")]
impl Work {
    /// Three journaled steps.
    #[skill(durable)]
    async fn steps(&self, _go: String, ctx: SkillContext) -> Result<String, SkillError> {
        let mut total = 0u32;
        for i in 0..3u32 {
            total += ctx.step(&format!("step {i}"), async move { i }).await?;
        }
        Ok(total.to_string())
    }

    /// Asks once, then answers.
    #[skill(durable)]
    async fn ask(&self, _go: String, ctx: SkillContext) -> Result<String, SkillError> {
        let answer = ctx.ask("Which one?").await?;
        Ok(answer.text().to_owned())
    }

    /// Waits until cancelled.
    #[skill]
    async fn wait(&self, _go: String) -> String {
        std::future::pending::<()>().await;
        String::new()
    }
}

/// What the database did over a stretch of work.
struct Work0 {
    statements: i64,
    commits: i64,
    notifies: i64,
    wal: i64,
    top: Vec<(i64, String)>,
}

/// Resets the statistics; the WAL position now.
async fn reset(db: &mut PgConnection) -> String {
    sqlx::query("SELECT pg_stat_statements_reset()")
        .execute(&mut *db)
        .await
        .expect("reset");
    sqlx::query("SELECT pg_current_wal_lsn()::text")
        .fetch_one(&mut *db)
        .await
        .expect("the WAL position")
        .get(0)
}

/// What the database did since `lsn` (the statistics' reset), this connection's own queries
/// left out (the agents' databases are `tasks_*`).
async fn read(db: &mut PgConnection, lsn: &str) -> Work0 {
    let own = "dbid IN (SELECT oid FROM pg_database WHERE datname IN ('tasks_fights', 'tasks_counter', 'tasks_work'))";
    let row = sqlx::query(&format!(
        "SELECT COALESCE(SUM(calls), 0)::bigint, \
                COALESCE(SUM(calls) FILTER (WHERE query ILIKE 'COMMIT%'), 0)::bigint, \
                COALESCE(SUM(calls) FILTER (WHERE query ILIKE '%pg_notify%' OR query ILIKE 'NOTIFY%'), 0)::bigint \
         FROM pg_stat_statements WHERE {own}"
    ))
    .fetch_one(&mut *db)
    .await
    .expect("the statements");
    let wal: i64 = sqlx::query("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint")
        .bind(lsn)
        .fetch_one(&mut *db)
        .await
        .expect("the WAL")
        .get(0);
    let top = sqlx::query(&format!(
        "SELECT calls::bigint, regexp_replace(query, '\\s+', ' ', 'g') FROM pg_stat_statements \
         WHERE {own} ORDER BY calls DESC LIMIT 6"
    ))
    .fetch_all(&mut *db)
    .await
    .expect("the top statements")
    .into_iter()
    .map(|r| (r.get::<i64, _>(0), r.get::<String, _>(1)))
    .collect();
    Work0 {
        statements: row.get(0),
        commits: row.get(1),
        notifies: row.get(2),
        wal,
        top,
    }
}

/// The result of a JSON-RPC answer, or a panic that shows it.
fn result(answer: &Value) -> &Value {
    answer
        .get("result")
        .unwrap_or_else(|| panic!("no result: {answer}"))
}

async fn send(agent: &TestAgent, skill: &str, text: &str, immediately: bool) -> Value {
    let remote = agent.remote().await.expect("the card");
    let message = remote
        .message(skill, a2a_card::client::Payload::text(text))
        .expect("a message");
    let answer = agent
        .json_rpc(
            "SendMessage",
            json!({"message": message, "configuration": {"returnImmediately": immediately}}),
        )
        .await
        .expect("an answer");
    result(&answer)["task"].clone()
}

/// Waits until task `id` is in `state`.
async fn until(agent: &TestAgent, id: &str, state: &str) {
    for _ in 0..5_000 {
        let task = agent
            .json_rpc("GetTask", json!({"id": id}))
            .await
            .expect("a task");
        if result(&task)["status"]["state"] == state {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("task {id} never reached {state}");
}

fn main() {
    let timed = std::env::args().any(|a| a == "--bench");
    let tasks = if timed { TASKS } else { 1 };
    let Some(cluster) = postgres::OwnCluster::start_or_skip("db-work") else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async move {
        let url = cluster.url();
        // pg_stat_statements is loaded at the server's start.
        {
            let mut db = PgConnection::connect(&url).await.expect("connected");
            sqlx::query("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
                .execute(&mut db)
                .await
                .expect("configured");
        }
        cluster.down();
        cluster.up().expect("started again");
        // The statistics are read from the `postgres` database; the agent's tables are in a
        // database of their own (a store refuses a database with tables not its own).
        let mut db = PgConnection::connect(&url).await.expect("connected");
        sqlx::query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            .execute(&mut db)
            .await
            .expect("pg_stat_statements");
        // Each agent on a database of its own: a store that finds another live on its database
        // takes it for a replica of its agent and announces its writes.
        for name in ["fights", "counter", "work"] {
            sqlx::query(&format!("CREATE DATABASE tasks_{name}"))
                .execute(&mut db)
                .await
                .expect("a database");
        }
        let base = url.trim_end_matches("/postgres").to_owned();
        let store = move |name: &str| Tasks::postgres(format!("{base}/tasks_{name}"));
        let fights = TestAgent::start(Server::new(FightClub).tasks(store("fights")))
            .await
            .expect("served");
        let counter = TestAgent::start(Server::new(Counter).tasks(store("counter")))
            .await
            .expect("served");
        let work = TestAgent::start(Server::new(Work).tasks(store("work")))
            .await
            .expect("served");
        let agents = Agents {
            fights: &fights,
            counter: &counter,
            work: &work,
        };
        let alone = kinds(&agents, &mut db, tasks).await;
        // The same again with a second replica of each agent live on its database (idle: the
        // client sends to the first): the first announces each write, and hears its own.
        let _second = (
            TestAgent::start(Server::new(FightClub).tasks(store("fights")))
                .await
                .expect("served"),
            TestAgent::start(Server::new(Counter).tasks(store("counter")))
                .await
                .expect("served"),
            TestAgent::start(Server::new(Work).tasks(store("work")))
                .await
                .expect("served"),
        );
        // A replica learns of another at its next lease renewal, or when one says it opened.
        tokio::time::sleep(Duration::from_secs(1)).await;
        let replicated = kinds(&agents, &mut db, tasks).await;

        if !timed {
            return;
        }
        for (replicas, report) in [("one replica", alone), ("two replicas", replicated)] {
            print_report(replicas, tasks, &report);
        }
    });
}

/// The agents the client sends to.
struct Agents<'a> {
    fights: &'a TestAgent,
    counter: &'a TestAgent,
    work: &'a TestAgent,
}

/// Runs `tasks` tasks of each kind of work, and what the database did for each kind.
async fn kinds(
    agents: &Agents<'_>,
    db: &mut PgConnection,
    tasks: u32,
) -> Vec<(&'static str, Work0)> {
    let Agents {
        fights,
        counter,
        work,
    } = *agents;
    let fight_club = FightClubClient::connect_with(fights.connect())
        .await
        .expect("connected");
    let remote = counter.remote().await.expect("the card");
    let mut report = Vec::new();
    // A blocking send that completes.
    let lsn = reset(db).await;
    for _ in 0..tasks {
        fight_club
            .fight_comparison(Input::Data(FightComparison {
                a: "Lion".into(),
                b: "Tiger".into(),
            }))
            .await
            .expect("a verdict");
    }
    report.push(("blocking send", read(db, &lsn).await));
    // A streamed task of 100 chunks.
    let lsn = reset(db).await;
    for _ in 0..tasks {
        let message = remote
            .message("count", a2a_card::client::Payload::text("100"))
            .expect("a message");
        let events = counter
            .json_rpc("SendStreamingMessage", json!({"message": message}))
            .await
            .expect("a stream");
        assert!(events.as_array().is_some_and(|e| e.len() > 100), "{events}");
    }
    report.push(("stream of 100 chunks", read(db, &lsn).await));
    // A durable skill of 3 steps.
    let lsn = reset(db).await;
    for _ in 0..tasks {
        let task = send(work, "steps", "go", false).await;
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    }
    report.push(("durable, 3 steps", read(db, &lsn).await));
    // An answer to a waiting task (the task made and waiting before the count starts).
    let mut waiting = Vec::new();
    for _ in 0..tasks {
        let task = send(work, "ask", "go", true).await;
        let id = task["id"].as_str().expect("an id").to_owned();
        until(work, &id, "TASK_STATE_INPUT_REQUIRED").await;
        waiting.push((id, task["contextId"].clone()));
    }
    let lsn = reset(db).await;
    for (id, context) in &waiting {
        let answer = json!({"messageId": format!("a-{id}"), "role": "ROLE_USER", "taskId": id,
            "contextId": context, "parts": [{"text": "this one"}]});
        let done = work
            .json_rpc("SendMessage", json!({"message": answer}))
            .await
            .expect("answered");
        assert_eq!(
            result(&done)["task"]["status"]["state"],
            "TASK_STATE_COMPLETED",
            "{done}"
        );
    }
    report.push(("answer to a waiting task", read(db, &lsn).await));
    // A cancel (the task made and running before the count starts).
    let mut running = Vec::new();
    for _ in 0..tasks {
        let task = send(work, "wait", "go", true).await;
        running.push(task["id"].as_str().expect("an id").to_owned());
    }
    let lsn = reset(db).await;
    for id in &running {
        let canceled = work
            .json_rpc("CancelTask", json!({"id": id}))
            .await
            .expect("cancelled");
        assert_eq!(
            result(&canceled)["status"]["state"],
            "TASK_STATE_CANCELED",
            "{canceled}"
        );
    }
    report.push(("cancel", read(db, &lsn).await));
    report
}

/// Prints what the database did per task for each kind of work, with `replicas` of each agent.
fn print_report(replicas: &str, tasks: u32, report: &[(&str, Work0)]) {
    let per = |n: i64| n as f64 / f64::from(tasks);
    println!(
        "db_work: per task on Postgres 15 ({replicas}, a sequential client, {tasks} tasks a kind):"
    );
    println!(
        "  {:<26} {:>10} {:>16} {:>10} {:>10}",
        "work", "statements", "explicit COMMIT", "WAL bytes", "notifies"
    );
    for (name, work) in report {
        println!(
            "  {name:<26} {:>10.2} {:>16.2} {:>10.0} {:>10.2}",
            per(work.statements),
            per(work.commits),
            per(work.wal),
            per(work.notifies),
        );
    }
    for (name, work) in report {
        println!("  {name}: the statements run most");
        for (calls, query) in &work.top {
            let query: String = query.chars().take(110).collect();
            println!("    {:>8.2} a task  {query}", per(*calls));
        }
    }
}
