//! One point's run ([`run_point`]): the task's first agent, stopped at the point, then a fresh
//! agent that takes the task over, each on a runtime and a thread of its own, answering the
//! task's questions and moving the clock to its sleeps' deadlines.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a::{Task, TaskState};
use serde_json::json;
use tokio::sync::watch;

use super::Plan;
use super::cut::{Cut, Cutting, Tally};
use super::report::Outcome;
use crate::Agent;
use crate::client::Payload;
use crate::server::store::{DEFAULT_LEASE, Retention, SqlTasks, Store, Tasks};
use crate::testing::{TestAgent, TestClock};

/// What one point's agents did.
pub(super) struct Ran {
    /// Whether the first agent was stopped at the point.
    pub(super) stopped: bool,
    pub(super) outcome: Result<Outcome, String>,
    pub(super) tally: Tally,
}

/// How one agent's life ended.
enum Life {
    /// Stopped at the point, the task running (its id).
    Stopped(String),
    /// The task ended.
    Ended(Outcome),
}

/// Runs the task on the database at `url`: its first agent stopped before journal write `at`
/// (none: never), then, when it was, a fresh agent that takes the task over.
pub(super) async fn run_point<A: Agent>(
    plan: &Arc<Plan<A>>,
    url: String,
    at: Option<usize>,
) -> Ran {
    let tally = Arc::new(Mutex::new(Tally::default()));
    let clock = TestClock::new();
    let first = on_own_runtime(
        Arc::clone(plan),
        url.clone(),
        at,
        Arc::clone(&tally),
        clock.clone(),
        None,
    )
    .await;
    let (stopped, outcome) = match first {
        Err(why) => (false, Err(why)),
        Ok(Life::Ended(outcome)) => (false, Ok(outcome)),
        Ok(Life::Stopped(task)) => {
            let again = on_own_runtime(
                Arc::clone(plan),
                url,
                None,
                Arc::clone(&tally),
                clock,
                Some(task),
            )
            .await;
            match again {
                Ok(Life::Ended(outcome)) => (true, Ok(outcome)),
                Ok(Life::Stopped(_)) => (
                    true,
                    Err("the agent that took the task over stopped".to_owned()),
                ),
                Err(why) => (true, Err(why)),
            }
        }
    };
    let tally = std::mem::take(&mut *tally.lock().unwrap_or_else(|p| p.into_inner()));
    Ran {
        stopped,
        outcome,
        tally,
    }
}

/// One agent's life on a runtime (and a thread) of its own, which is dropped with everything
/// the agent spawned once the life ends: a stopped agent's handler and writer go with it.
async fn on_own_runtime<A: Agent>(
    plan: Arc<Plan<A>>,
    url: String,
    at: Option<usize>,
    tally: Arc<Mutex<Tally>>,
    clock: TestClock,
    task: Option<String>,
) -> Result<Life, String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("a2a-card-crash-point".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => {
                    let _ = tx.send(Err(format!("no runtime for an agent: {e}")));
                    return;
                }
            };
            let life: Pin<Box<dyn Future<Output = Result<Life, String>>>> =
                Box::pin(live(plan, url, at, tally, clock, task));
            let ended = runtime.block_on(life);
            // Whatever the agent still runs is dropped here, at its next `.await`.
            runtime.shutdown_background();
            let _ = tx.send(ended);
        });
    if let Err(e) = spawned {
        return Err(format!("no thread for an agent: {e}"));
    }
    rx.await
        .unwrap_or_else(|_| Err("an agent's thread ended without a word (it panicked?)".into()))
}

/// One agent: opens the store, serves the server `plan.make` builds on it, sends the task
/// (`task` none) or lets the store hand it over, and follows it until it ends or the agent is
/// stopped.
async fn live<A: Agent>(
    plan: Arc<Plan<A>>,
    url: String,
    at: Option<usize>,
    tally: Arc<Mutex<Tally>>,
    clock: TestClock,
    task: Option<String>,
) -> Result<Life, String> {
    let (stopped, mut stop) = watch::channel(false);
    let cut = Arc::new(Cut {
        at,
        tally: Arc::clone(&tally),
        dead: AtomicBool::new(false),
        stopped,
    });
    let sql = SqlTasks::open(&url, Retention::default(), DEFAULT_LEASE, true)
        .await
        .map_err(|e| e.to_string())?;
    // The tasks of an agent stopped before: taken over, to run again from their journals.
    sql.recover().await.map_err(|e| e.to_string())?;
    let store = Cutting {
        sql: sql.clone(),
        cut: Arc::clone(&cut),
    };
    let server = (plan.make)()
        .tasks(Tasks::custom(store))
        .clock(clock.clock());
    let agent = TestAgent::serve(server, None)
        .await
        .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + plan.timeout;
    let id = match task {
        Some(id) => id,
        None => {
            let remote = agent.remote().await.map_err(|e| e.to_string())?;
            let message = remote
                .message(&plan.skill, plan.input.clone())
                .map_err(|e| e.to_string())?;
            let sent = tokio::select! {
                sent = send(&agent, message) => sent?,
                _ = stop.wait_for(|s| *s) => {
                    let task = cut.tally().task.clone();
                    return stopped_now(&sql, task).await;
                }
            };
            sent.id
        }
    };
    let mut answered: Option<Option<String>> = None;
    loop {
        if *stop.borrow() {
            return stopped_now(&sql, Some(id)).await;
        }
        let task = tokio::select! {
            task = get(&agent, &id) => task?,
            _ = stop.wait_for(|s| *s) => return stopped_now(&sql, Some(id)).await,
        };
        match &task.status.state {
            state if state.is_terminal() => {
                let _ = sql.release().await;
                return Ok(Life::Ended(Outcome::of(&task)));
            }
            TaskState::InputRequired | TaskState::AuthRequired => {
                // Each question once: the one answered is known by its status's time.
                let asked = task.status.timestamp.map(|t| t.to_string());
                if answered.as_ref() != Some(&asked) {
                    answered = Some(asked);
                    let next = cut.tally().answers;
                    let payload = plan.answers.get(next).cloned().ok_or_else(|| {
                        format!(
                            "the task asked question {} and the harness has {} answer(s): give more with CrashPoints::answer",
                            next + 1,
                            plan.answers.len()
                        )
                    })?;
                    let message = answer_to(&task, payload);
                    tokio::select! {
                        sent = send(&agent, message) => drop(sent?),
                        _ = stop.wait_for(|s| *s) => return stopped_now(&sql, Some(id)).await,
                    }
                }
            }
            _ => {}
        }
        // A durable sleep waits on the clock: its deadline now.
        clock.advance_to_next_deadline();
        if Instant::now() > deadline {
            return Err(format!(
                "task {id} did not end within {:?}: it is {:?}",
                plan.timeout, task.status.state
            ));
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// The agent is stopped: what it stored before the point is written, and its replica leaves
/// the file's table (as a lease that ran out), so that the next agent takes the task over.
async fn stopped_now(sql: &SqlTasks, task: Option<String>) -> Result<Life, String> {
    sql.release().await.map_err(|e| e.message)?;
    task.map(Life::Stopped)
        .ok_or_else(|| "the agent stopped before it made the task".to_owned())
}

/// The caller's answer `payload` to task `task`'s question.
fn answer_to(task: &Task, payload: Payload) -> a2a::Message {
    let part = match payload {
        Payload::Text(text) => a2a::Part::text(text),
        Payload::Data(data) => a2a::Part::data(data),
    };
    let mut message = a2a::Message::new(a2a::Role::User, vec![part]);
    message.task_id = Some(task.id.clone());
    message.context_id = Some(task.context_id.clone());
    message
}

/// Sends `message` without waiting for the task: the task as it is made.
async fn send(agent: &TestAgent, message: a2a::Message) -> Result<Task, String> {
    let answer = agent
        .json_rpc(
            "SendMessage",
            json!({"message": message, "configuration": {"returnImmediately": true}}),
        )
        .await
        .map_err(|e| e.to_string())?;
    let task = answer
        .get("result")
        .and_then(|r| r.get("task"))
        .ok_or_else(|| format!("the agent did not make a task: {answer}"))?;
    serde_json::from_value(task.clone()).map_err(|e| format!("not a task ({e}): {task}"))
}

/// Task `id` as the agent has it.
async fn get(agent: &TestAgent, id: &str) -> Result<Task, String> {
    let answer = agent
        .json_rpc("GetTask", json!({"id": id}))
        .await
        .map_err(|e| e.to_string())?;
    let task = answer
        .get("result")
        .ok_or_else(|| format!("the agent did not give task {id}: {answer}"))?;
    serde_json::from_value(task.clone()).map_err(|e| format!("not a task ({e}): {task}"))
}
