//! Skills that do real agent work, end to end with the official Rust client over JSON-RPC and
//! HTTP+JSON (and 0.3 over raw HTTP): streamed chunks, progress, questions and answers,
//! non-blocking sends, subscriptions, cancellation, push notifications, files, and panics.

use crate::support;
use crate::trip_planner::agent;
use crate::trip_planner::server;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use a2a::{
    CancelTaskRequest, Part, PartContent, Role, SendMessageConfiguration, StreamResponse,
    SubscribeToTaskRequest, TaskPushNotificationConfig, TaskState, error_code,
};
use a2a_card::server::store::Tasks;
use a2a_card::server::{Server, Webhooks};
use a2a_card::{SkillContext, skill};
use futures::{Stream, StreamExt};
use serde_json::{Value, json};
use support::client::{
    Running, card, client, data_part, details, get, request, serve, status_text, task,
};

const BINDINGS: [&str; 2] = ["JSONRPC", "HTTP+JSON"];

/// The trip planner, planning a day every `pace`, posting webhooks to loopback.
async fn planner(pace: Duration) -> Running {
    serve(server::server(
        pace,
        Webhooks::default()
            .allow_loopback(true)
            .backoff(Duration::from_millis(20)),
    ))
    .await
}

fn trip(days: u8, start: Option<&str>) -> Part {
    let mut data = json!({"destination": "Lisbon", "days": days});
    if let Some(start) = start {
        data["start_date"] = json!(start);
    }
    data_part("tripRequest", data)
}

fn cancel(id: &str) -> CancelTaskRequest {
    CancelTaskRequest {
        id: id.to_owned(),
        metadata: None,
        tenant: None,
    }
}

fn state_of(event: &StreamResponse) -> Option<TaskState> {
    match event {
        StreamResponse::StatusUpdate(u) => Some(u.status.state.clone()),
        StreamResponse::Task(t) => Some(t.status.state.clone()),
        _ => None,
    }
}

fn data_of(part: &Part) -> &Value {
    match &part.content {
        PartContent::Data(d) => d,
        other => panic!("expected a data part, got {other:?}"),
    }
}

/// Waits (bounded) until `check` holds.
async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting until {what}");
}

mod streaming {
    //! Chunks arrive as they are made, in order, marked as the protocol says.
    use super::*;
    use tokio::sync::Semaphore;

    /// Counts to three, one number per permit the test gives.
    struct Gated {
        permits: Arc<Semaphore>,
    }

    /// Counts when told to.
    #[a2a_card::agent(url = "http://127.0.0.1:1")]
    impl Gated {
        /// Streams "1", "2", "3", waiting for a permit before each after the first.
        #[skill]
        fn count(&self, _start: String) -> impl Stream<Item = String> + Send {
            let permits = Arc::clone(&self.permits);
            futures::stream::unfold(1u32, move |n| {
                let permits = Arc::clone(&permits);
                async move {
                    if n > 3 {
                        return None;
                    }
                    if n > 1 {
                        permits.acquire().await.ok()?.forget();
                    }
                    Some((n.to_string(), n + 1))
                }
            })
        }
    }

    #[tokio::test]
    async fn chunks_arrive_in_order_before_the_handler_finishes() {
        for binding in BINDINGS {
            let permits = Arc::new(Semaphore::new(0));
            let running = serve(Server::new(Gated {
                permits: Arc::clone(&permits),
            }))
            .await;
            let card = card(&running.base).await;
            assert_eq!(
                card.capabilities.streaming,
                Some(true),
                "a streaming skill declares streaming"
            );
            let client = client(&card, binding).await;
            let mut events = client
                .send_streaming_message(&request(vec![Part::text("go")], None))
                .await
                .expect("a stream");
            let mut chunks = Vec::new();
            let mut closing = None;
            while let Some(event) = events.next().await {
                let event = event.expect("an event");
                if let StreamResponse::ArtifactUpdate(u) = &event {
                    let text = match &u.artifact.parts[..] {
                        [
                            Part {
                                content: PartContent::Text(t),
                                ..
                            },
                        ] => t.clone(),
                        parts => parts.len().to_string(),
                    };
                    if u.last_chunk == Some(true) {
                        closing = Some(u.clone());
                    } else {
                        chunks.push((
                            text,
                            u.append.unwrap_or(false),
                            u.artifact.artifact_id.clone(),
                        ));
                        // The handler waits for this permit: the chunk came before it finished.
                        permits.add_permits(1);
                    }
                }
                if state_of(&event).is_some_and(|s| s.is_terminal()) {
                    assert_eq!(state_of(&event), Some(TaskState::Completed), "{binding}");
                }
            }
            let texts: Vec<_> = chunks.iter().map(|c| c.0.as_str()).collect();
            assert_eq!(texts, ["1", "2", "3"], "{binding}: in order");
            assert_eq!(
                chunks.iter().map(|c| c.1).collect::<Vec<_>>(),
                [false, true, true],
                "{binding}: the first chunk creates the artifact, the next append"
            );
            assert!(
                chunks.iter().all(|c| c.2 == "count"),
                "{binding}: one artifact id"
            );
            let closing = closing.expect("a closing update");
            assert_eq!(
                closing.append, None,
                "the closing update carries the whole artifact"
            );
            assert_eq!(closing.artifact.parts.len(), 3);
        }
    }

    /// Streams a burst of chunks as fast as it can.
    struct Burst;

    /// Bursts.
    #[a2a_card::agent(url = "http://127.0.0.1:1")]
    impl Burst {
        /// Streams 600 chunks of 16 kB at once: more than a socket holds.
        #[skill]
        fn burst(&self, _start: String) -> impl Stream<Item = String> + Send {
            futures::stream::iter((0..600).map(|i| format!("{i:>16384}")))
        }
    }

    #[tokio::test]
    async fn a_reader_that_falls_behind_a_burst_catches_up_with_the_task() {
        let running = serve(Server::new(Burst)).await;
        let card = card(&running.base).await;
        for binding in BINDINGS {
            let client = client(&card, binding).await;
            let mut events = client
                .send_streaming_message(&request(vec![Part::text("go")], None))
                .await
                .expect("a stream");
            let first = events.next().await.expect("an event").expect("no error");
            assert!(
                matches!(first, StreamResponse::Task(_)),
                "{binding}: the stream begins with the task"
            );
            // Read nothing for a while: the burst fills the socket and the server's writer
            // waits; the reader is then served from the task's event log.
            tokio::time::sleep(Duration::from_millis(500)).await;
            let (mut last, mut chunks) = (state_of(&first), 0);
            while let Some(event) = events.next().await {
                let event = event.unwrap_or_else(|e| panic!("{binding}: the stream failed: {e:?}"));
                if let StreamResponse::ArtifactUpdate(update) = &event
                    && update.last_chunk != Some(true)
                {
                    chunks += 1;
                }
                last = state_of(&event).or(last);
            }
            assert_eq!(last, Some(TaskState::Completed), "{binding}");
            assert_eq!(chunks, 600, "{binding}: every chunk, none lost or repeated");
        }
    }

    #[tokio::test]
    async fn a_blocking_send_returns_the_assembled_artifact() {
        let running = planner(Duration::from_millis(1)).await;
        let card = card(&running.base).await;
        for binding in BINDINGS {
            let client = client(&card, binding).await;
            let done = task(
                client
                    .send_message(&request(vec![trip(3, Some("2026-12-30"))], None))
                    .await
                    .expect("the plan"),
            );
            assert_eq!(done.status.state, TaskState::Completed, "{binding}");
            let artifacts = done.artifacts.unwrap_or_default();
            assert_eq!(artifacts.len(), 1, "{binding}: one artifact, {artifacts:?}");
            let days: Vec<_> = artifacts[0]
                .parts
                .iter()
                .map(|p| data_of(p)["date"].clone())
                .collect();
            assert_eq!(
                days,
                [
                    json!("2026-12-30"),
                    json!("2026-12-31"),
                    json!("2027-01-01")
                ]
            );
            for part in &artifacts[0].parts {
                assert_eq!(
                    part.media_type.as_deref(),
                    Some("application/json;schema=itineraryDay")
                );
            }
        }
    }
}

mod long_running {
    //! Non-blocking sends, progress in `GetTask`, and subscriptions.
    use super::*;

    #[tokio::test]
    async fn a_non_blocking_send_returns_at_once_and_subscribe_streams_the_rest() {
        let running = planner(Duration::from_millis(150)).await;
        let card = card(&running.base).await;
        for binding in BINDINGS {
            let client = client(&card, binding).await;
            let mut req = request(vec![trip(4, Some("2026-12-01"))], None);
            req.configuration = Some(SendMessageConfiguration {
                accepted_output_modes: None,
                task_push_notification_config: None,
                history_length: None,
                return_immediately: Some(true),
            });
            let started = std::time::Instant::now();
            let submitted = task(client.send_message(&req).await.expect("an answer"));
            assert!(
                !submitted.status.state.is_terminal(),
                "{binding}: returned before the plan was done"
            );
            assert!(
                started.elapsed() < Duration::from_millis(500),
                "{binding}: at once"
            );
            // GetTask shows the progress message.
            eventually("GetTask shows progress", async || {
                let t = client
                    .get_task(&get(&submitted.id))
                    .await
                    .expect("the task");
                status_text(&t).contains("Planning 4 days in Lisbon") || t.artifacts.is_some()
            })
            .await;
            let mut events = client
                .subscribe_to_task(&SubscribeToTaskRequest {
                    id: submitted.id.clone(),
                    tenant: None,
                })
                .await
                .expect("a subscription");
            let mut last = None;
            let mut artifacts = 0;
            while let Some(event) = events.next().await {
                let event = event.expect("an event");
                if matches!(event, StreamResponse::ArtifactUpdate(_)) {
                    artifacts += 1;
                }
                last = state_of(&event).or(last);
            }
            assert_eq!(last, Some(TaskState::Completed), "{binding}");
            assert!(
                artifacts >= 1,
                "{binding}: the rest of the plan came on the subscription"
            );
            let done = client
                .get_task(&get(&submitted.id))
                .await
                .expect("the task");
            assert_eq!(done.artifacts.unwrap_or_default()[0].parts.len(), 4);
        }
    }

    #[tokio::test]
    async fn subscribing_to_an_unknown_or_finished_task_is_an_error() {
        let running = planner(Duration::from_millis(1)).await;
        let card = card(&running.base).await;
        for binding in BINDINGS {
            let client = client(&card, binding).await;
            let err = client
                .subscribe_to_task(&SubscribeToTaskRequest {
                    id: "no-such-task".into(),
                    tenant: None,
                })
                .await
                .err()
                .expect("no such task");
            assert_eq!(err.code, error_code::TASK_NOT_FOUND, "{binding}: {err:?}");
            let done = task(
                client
                    .send_message(&request(vec![trip(1, Some("2026-12-01"))], None))
                    .await
                    .expect("done"),
            );
            let err = client
                .subscribe_to_task(&SubscribeToTaskRequest {
                    id: done.id.clone(),
                    tenant: None,
                })
                .await
                .err()
                .expect("a finished task has nothing to stream");
            assert_eq!(
                err.code,
                error_code::UNSUPPORTED_OPERATION,
                "{binding}: {err:?}"
            );
        }
    }
}

mod multi_turn {
    //! A handler asks; the caller's next message on the task resumes it.
    use super::*;

    #[tokio::test]
    async fn input_required_then_resume() {
        let running = planner(Duration::from_millis(1)).await;
        let card = card(&running.base).await;
        for binding in BINDINGS {
            let client = client(&card, binding).await;
            let asked = task(
                client
                    .send_message(&request(vec![trip(2, None)], None))
                    .await
                    .expect("a question"),
            );
            assert_eq!(asked.status.state, TaskState::InputRequired, "{binding}");
            assert_eq!(status_text(&asked), "Which day do you leave? (YYYY-MM-DD)");
            // Structured input is refused on the waiting task (the extension's rule 5).
            let err = client
                .send_message(&request(
                    vec![trip(2, Some("2026-12-01"))],
                    Some(asked.id.clone()),
                ))
                .await
                .expect_err("structured input on an existing task");
            assert_eq!(err.code, error_code::INVALID_PARAMS, "{binding}");
            assert_eq!(details(&err)["reason"], "task-already-running");
            // Text answers.
            let done = task(
                client
                    .send_message(&request(
                        vec![Part::text("2026-02-28")],
                        Some(asked.id.clone()),
                    ))
                    .await
                    .expect("the plan"),
            );
            assert_eq!(done.id, asked.id, "{binding}: the same task");
            assert_eq!(done.status.state, TaskState::Completed, "{binding}");
            let parts = &done.artifacts.unwrap_or_default()[0].parts;
            assert_eq!(data_of(&parts[1])["date"], "2026-03-01");
            // The conversation, in order: the request, the agent's question, the answer.
            let history = done.history.unwrap_or_default();
            let roles: Vec<_> = history.iter().map(|m| m.role.clone()).collect();
            assert_eq!(
                roles,
                [Role::User, Role::Agent, Role::User],
                "{binding}: both turns and the question in the history"
            );
            assert_eq!(
                history[1].parts[0].as_text(),
                Some("Which day do you leave? (YYYY-MM-DD)"),
                "{binding}"
            );
            assert_eq!(
                history[2].parts[0].as_text(),
                Some("2026-02-28"),
                "{binding}"
            );
        }
    }

    #[tokio::test]
    async fn a_follow_up_to_a_finished_task_is_refused_and_changes_nothing() {
        let running = planner(Duration::from_millis(1)).await;
        let card = card(&running.base).await;
        let client = client(&card, "JSONRPC").await;
        let done = task(
            client
                .send_message(&request(vec![trip(1, Some("2026-12-01"))], None))
                .await
                .expect("done"),
        );
        let err = client
            .send_message(&request(
                vec![Part::text("one more day?")],
                Some(done.id.clone()),
            ))
            .await
            .expect_err("a finished task takes no more messages");
        assert_eq!(err.code, error_code::UNSUPPORTED_OPERATION, "{err:?}");
        let after = client.get_task(&get(&done.id)).await.expect("the task");
        assert_eq!(after.status.state, TaskState::Completed);
        assert_eq!(after.history.map(|h| h.len()), Some(1));
    }

    #[tokio::test]
    async fn an_answer_where_no_handler_waits_fails_the_task_saying_why() {
        // Two servers on one task store: the question is asked on A, answered on B, where no
        // handler waits (as after a restart).
        let store: Arc<dyn a2a_server::TaskStore> = Arc::new(a2a_server::InMemoryTaskStore::new());
        let a = serve(
            server::server(Duration::from_millis(1), Webhooks::default())
                .tasks(Tasks::custom(Arc::clone(&store))),
        )
        .await;
        let b = serve(
            server::server(Duration::from_millis(1), Webhooks::default())
                .tasks(Tasks::custom(store)),
        )
        .await;
        let on_a = client(&card(&a.base).await, "JSONRPC").await;
        let on_b = client(&card(&b.base).await, "JSONRPC").await;
        let asked = task(
            on_a.send_message(&request(vec![trip(2, None)], None))
                .await
                .expect("a question"),
        );
        assert_eq!(asked.status.state, TaskState::InputRequired);
        let answered = tokio::time::timeout(
            Duration::from_secs(10),
            on_b.send_message(&request(
                vec![Part::text("2026-12-01")],
                Some(asked.id.clone()),
            )),
        )
        .await
        .expect("an answer, not a hang")
        .expect("the task");
        let failed = task(answered);
        assert_eq!(failed.status.state, TaskState::Failed);
        assert!(
            status_text(&failed).contains("no longer running"),
            "{}",
            status_text(&failed)
        );
    }
}

mod input_timeout {
    //! A question left unanswered past the server's input timeout is withdrawn: the handler is
    //! dropped and the task fails, saying why; an answer in time disarms it.
    use super::*;

    struct Quiz;

    /// Asks two questions, one after the other.
    #[a2a_card::agent(url = "http://127.0.0.1:1")]
    impl Quiz {
        /// Asks for a first and a second word and says both.
        #[skill]
        async fn quiz(&self, _input: String, ctx: SkillContext) -> Result<String, String> {
            let first = ctx.ask("First word?").await?;
            let second = ctx.ask("Second word?").await?;
            Ok(format!("{} {}", first.text(), second.text()))
        }
    }

    async fn state_of(
        client: &a2a_client::A2AClient<Box<dyn a2a_client::Transport>>,
        id: &str,
    ) -> a2a::Task {
        client.get_task(&get(id)).await.expect("the task")
    }

    /// The trip planner, withdrawing its questions after `timeout`.
    fn withdrawing_after(timeout: Duration) -> Server<agent::TripPlanner> {
        server::server(Duration::from_millis(1), Webhooks::default()).input_timeout(timeout)
    }

    /// A trip without a start date: the planner asks for one.
    async fn ask(client: &a2a_client::A2AClient<Box<dyn a2a_client::Transport>>) -> a2a::Task {
        let asked = task(
            client
                .send_message(&request(vec![trip(2, None)], None))
                .await
                .expect("a question"),
        );
        assert_eq!(asked.status.state, TaskState::InputRequired);
        asked
    }

    #[tokio::test]
    async fn an_unanswered_question_fails_the_task_after_the_timeout() {
        let running = serve(withdrawing_after(Duration::from_millis(300))).await;
        let client = client(&card(&running.base).await, "JSONRPC").await;
        let asked = ask(&client).await;
        eventually("the unanswered task has failed", async || {
            state_of(&client, &asked.id).await.status.state == TaskState::Failed
        })
        .await;
        let failed = state_of(&client, &asked.id).await;
        assert!(
            status_text(&failed).contains("no answer came within 300 ms"),
            "{}",
            status_text(&failed)
        );
        // The handler is gone: a late answer is told so, and changes nothing.
        let late = client
            .send_message(&request(
                vec![Part::text("2026-12-01")],
                Some(asked.id.clone()),
            ))
            .await
            .expect_err("a finished task takes no more messages");
        assert_eq!(late.code, error_code::UNSUPPORTED_OPERATION, "{late:?}");
    }

    /// The states a subscription to `id` gives until it ends (within 5 s).
    async fn followed_states(
        client: &a2a_client::A2AClient<Box<dyn a2a_client::Transport>>,
        id: &str,
    ) -> impl std::future::Future<Output = Vec<TaskState>> + use<> {
        let mut events = client
            .subscribe_to_task(&SubscribeToTaskRequest {
                id: id.to_owned(),
                tenant: None,
            })
            .await
            .expect("a subscription to the waiting task");
        async move {
            let mut states = Vec::new();
            let follow = async {
                while let Some(event) = events.next().await {
                    match event.expect("an event") {
                        StreamResponse::Task(t) => states.push(t.status.state),
                        StreamResponse::StatusUpdate(u) => states.push(u.status.state),
                        _ => {}
                    }
                }
            };
            tokio::time::timeout(Duration::from_secs(5), follow)
                .await
                .expect("the subscription ends with the task");
            states
        }
    }

    #[tokio::test]
    async fn a_subscriber_to_a_waiting_task_follows_it_to_its_end() {
        let running = serve(withdrawing_after(Duration::from_millis(300))).await;
        let client = client(&card(&running.base).await, "JSONRPC").await;
        // Answered: the subscriber sees it complete.
        let asked = ask(&client).await;
        let states = followed_states(&client, &asked.id).await;
        let done = task(
            client
                .send_message(&request(
                    vec![Part::text("2026-12-01")],
                    Some(asked.id.clone()),
                ))
                .await
                .expect("the plan"),
        );
        assert_eq!(done.status.state, TaskState::Completed);
        let states = states.await;
        assert_eq!(
            states.first(),
            Some(&TaskState::InputRequired),
            "{states:?}"
        );
        assert_eq!(states.last(), Some(&TaskState::Completed), "{states:?}");

        // Not answered: the subscriber sees it fail when the question is withdrawn.
        let asked = ask(&client).await;
        let states = followed_states(&client, &asked.id).await.await;
        assert_eq!(states.last(), Some(&TaskState::Failed), "{states:?}");
    }

    #[tokio::test]
    async fn the_withdrawal_is_written_to_a_database_store() {
        // The store's writes wait on its writer: the withdrawal must not be cut off at them.
        let path =
            std::env::temp_dir().join(format!("a2a-card-input-timeout-{}.db", std::process::id()));
        let running =
            serve(withdrawing_after(Duration::from_millis(200)).tasks(Tasks::sqlite(&path))).await;
        let client = client(&card(&running.base).await, "JSONRPC").await;
        let asked = ask(&client).await;
        eventually(
            "the unanswered task has failed in the database",
            async || state_of(&client, &asked.id).await.status.state == TaskState::Failed,
        )
        .await;
        drop(running);
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }

    #[tokio::test]
    async fn an_answer_in_time_disarms_the_timeout_and_the_next_question_gets_its_own() {
        let timeout = Duration::from_millis(1000);
        let running = serve(Server::new(Quiz).input_timeout(timeout)).await;
        let client = client(&card(&running.base).await, "JSONRPC").await;
        let asked = task(
            client
                .send_message(&request(vec![Part::text("go")], None))
                .await
                .expect("the first question"),
        );
        assert_eq!(status_text(&asked), "First word?");
        let started = tokio::time::Instant::now();
        tokio::time::sleep(Duration::from_millis(600)).await;
        let second = task(
            client
                .send_message(&request(vec![Part::text("hello")], Some(asked.id.clone())))
                .await
                .expect("the second question"),
        );
        assert_eq!(status_text(&second), "Second word?");
        // Past the first question's deadline, before the second's.
        tokio::time::sleep_until(started + Duration::from_millis(1300)).await;
        let waiting = state_of(&client, &asked.id).await;
        assert_eq!(
            waiting.status.state,
            TaskState::InputRequired,
            "{}",
            status_text(&waiting)
        );
        eventually("the second question times out", async || {
            state_of(&client, &asked.id).await.status.state == TaskState::Failed
        })
        .await;
    }
}

mod cancellation {
    //! `CancelTask` reaches the running handler.
    use super::*;

    static DROPPED: AtomicBool = AtomicBool::new(false);

    struct Guard;
    impl Drop for Guard {
        fn drop(&mut self) {
            DROPPED.store(true, Ordering::SeqCst);
        }
    }

    struct Slow;

    /// Works forever, until cancelled.
    #[a2a_card::agent(url = "http://127.0.0.1:1")]
    impl Slow {
        /// Reports progress every few milliseconds and never finishes.
        #[skill]
        async fn forever(&self, _input: String, ctx: SkillContext) -> String {
            let _guard = Guard;
            loop {
                ctx.progress("still working").await;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }

    #[tokio::test]
    async fn cancel_mid_stream_drops_the_handler_and_ends_the_task_canceled() {
        let running = serve(Server::new(Slow)).await;
        let card = card(&running.base).await;
        for binding in BINDINGS {
            DROPPED.store(false, Ordering::SeqCst);
            let client = client(&card, binding).await;
            let mut events = client
                .send_streaming_message(&request(vec![Part::text("go")], None))
                .await
                .expect("a stream");
            let mut id = None;
            while let Some(event) = events.next().await {
                if let StreamResponse::StatusUpdate(u) = event.expect("an event")
                    && u.status.message.is_some()
                {
                    id = Some(u.task_id);
                    break;
                }
            }
            let id = id.expect("a progress update");
            let canceled = client.cancel_task(&cancel(&id)).await.expect("cancelled");
            assert_eq!(canceled.status.state, TaskState::Canceled, "{binding}");
            // The stream ends with the cancellation.
            let mut last = None;
            while let Some(Ok(event)) = events.next().await {
                last = state_of(&event).or(last);
            }
            assert_eq!(last, Some(TaskState::Canceled), "{binding}");
            eventually("the handler is dropped", async || {
                DROPPED.load(Ordering::SeqCst)
            })
            .await;
            // It stays cancelled: no late `completed`.
            tokio::time::sleep(Duration::from_millis(100)).await;
            let t = client.get_task(&get(&id)).await.expect("the task");
            assert_eq!(t.status.state, TaskState::Canceled, "{binding}");
        }
    }

    #[tokio::test]
    async fn cancel_of_unknown_and_finished_tasks_is_a_protocol_error() {
        let running = planner(Duration::from_millis(1)).await;
        let card = card(&running.base).await;
        for binding in BINDINGS {
            let client = client(&card, binding).await;
            let err = client
                .cancel_task(&cancel("no-such-task"))
                .await
                .expect_err("unknown");
            assert_eq!(err.code, error_code::TASK_NOT_FOUND, "{binding}");
            let done = task(
                client
                    .send_message(&request(vec![trip(1, Some("2026-12-01"))], None))
                    .await
                    .expect("done"),
            );
            let err = client
                .cancel_task(&cancel(&done.id))
                .await
                .expect_err("finished");
            assert_eq!(
                err.code,
                error_code::TASK_NOT_CANCELABLE,
                "{binding}: {err:?}"
            );
            // A task waiting for input can be cancelled.
            let asked = task(
                client
                    .send_message(&request(vec![trip(1, None)], None))
                    .await
                    .expect("a question"),
            );
            let canceled = client
                .cancel_task(&cancel(&asked.id))
                .await
                .expect("cancelled");
            assert_eq!(canceled.status.state, TaskState::Canceled, "{binding}");
        }
    }
}

mod push {
    //! Status and artifact updates POSTed to a webhook, retried after a failure.
    use super::*;
    use axum::extract::State;
    use axum::http::{HeaderMap, StatusCode};
    use std::sync::Mutex;

    #[derive(Default)]
    struct Hook {
        calls: AtomicUsize,
        received: Mutex<Vec<(Option<String>, Value)>>,
    }

    async fn hook(
        State(hook): State<Arc<Hook>>,
        headers: HeaderMap,
        body: axum::body::Bytes,
    ) -> StatusCode {
        // The first delivery fails: the agent must try again.
        if hook.calls.fetch_add(1, Ordering::SeqCst) == 0 {
            return StatusCode::SERVICE_UNAVAILABLE;
        }
        // The token in both spellings of the official SDKs (Rust and Go; Python and JS).
        let token = headers
            .get("A2A-Notification-Token")
            .and_then(|v| v.to_str().ok())
            .filter(|t| {
                headers
                    .get("X-A2A-Notification-Token")
                    .and_then(|v| v.to_str().ok())
                    == Some(*t)
            })
            .map(str::to_owned);
        let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
        hook.received.lock().unwrap().push((token, body));
        StatusCode::OK
    }

    /// A webhook on loopback that keeps what it receives; its state and URL.
    async fn webhook() -> (Arc<Hook>, String) {
        let hook_state = Arc::new(Hook::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
        let app = axum::Router::new()
            .route("/hook", axum::routing::post(hook))
            .with_state(Arc::clone(&hook_state));
        tokio::spawn(async move { axum::serve(listener, app).await });
        (hook_state, url)
    }

    fn config(url: &str) -> SendMessageConfiguration {
        SendMessageConfiguration {
            accepted_output_modes: None,
            task_push_notification_config: Some(TaskPushNotificationConfig {
                url: url.to_owned(),
                id: None,
                task_id: String::new(),
                token: Some("secret-token".into()),
                authentication: None,
                tenant: None,
            }),
            history_length: None,
            return_immediately: None,
        }
    }

    #[tokio::test]
    async fn updates_reach_a_loopback_webhook_with_retry() {
        let (hook_state, url) = webhook().await;

        let running = planner(Duration::from_millis(1)).await;
        let card = card(&running.base).await;
        assert_eq!(card.capabilities.push_notifications, Some(true));
        let client = client(&card, "JSONRPC").await;
        let mut req = request(vec![trip(2, Some("2026-12-01"))], None);
        req.configuration = Some(config(&url));
        let done = task(client.send_message(&req).await.expect("done"));
        assert_eq!(done.status.state, TaskState::Completed);
        eventually("the webhook has the completed update", async || {
            hook_state
                .received
                .lock()
                .unwrap()
                .iter()
                .any(|(_, b)| b["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED")
        })
        .await;
        let received = hook_state.received.lock().unwrap().clone();
        assert!(
            hook_state.calls.load(Ordering::SeqCst) > received.len(),
            "one delivery failed and was retried"
        );
        assert!(
            received
                .iter()
                .all(|(token, _)| token.as_deref() == Some("secret-token"))
        );
        // In order: working first, completed last, the days between.
        assert_eq!(
            received[0].1["statusUpdate"]["status"]["state"],
            "TASK_STATE_WORKING"
        );
        let artifacts = received
            .iter()
            .filter(|(_, b)| b.get("artifactUpdate").is_some())
            .count();
        assert!(artifacts >= 2, "{received:?}");
        assert_eq!(
            received
                .last()
                .map(|r| r.1["statusUpdate"]["taskId"].clone()),
            Some(json!(done.id))
        );
    }

    #[tokio::test]
    async fn a_question_withdrawn_after_the_input_timeout_is_pushed_as_failed() {
        let (hook_state, url) = webhook().await;

        let webhooks = Webhooks::default()
            .allow_loopback(true)
            .backoff(Duration::from_millis(20));
        let running = serve(
            server::server(Duration::from_millis(1), webhooks)
                .input_timeout(Duration::from_millis(200)),
        )
        .await;
        let client = client(&card(&running.base).await, "JSONRPC").await;
        let mut req = request(vec![trip(2, None)], None);
        req.configuration = Some(config(&url));
        let asked = task(client.send_message(&req).await.expect("a question"));
        assert_eq!(asked.status.state, TaskState::InputRequired);
        eventually("the webhook has the failed update", async || {
            hook_state.received.lock().unwrap().iter().any(|(_, b)| {
                b["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED"
                    && b["statusUpdate"]["taskId"] == json!(asked.id)
            })
        })
        .await;
    }

    #[tokio::test]
    async fn a_cancel_is_pushed_whether_the_task_ran_or_waited_for_input() {
        let (hook_state, url) = webhook().await;
        // Slow enough to be cancelled while it plans.
        let running = planner(Duration::from_millis(200)).await;
        let client = client(&card(&running.base).await, "JSONRPC").await;
        let mut ids = Vec::new();
        for (start, immediately) in [(None, false), (Some("2026-12-01"), true)] {
            let mut req = request(vec![trip(5, start)], None);
            let mut configuration = config(&url);
            configuration.return_immediately = Some(immediately);
            req.configuration = Some(configuration);
            let t = task(client.send_message(&req).await.expect("a task"));
            client.cancel_task(&cancel(&t.id)).await.expect("cancelled");
            ids.push(t.id);
        }
        for id in ids {
            eventually("the webhook has the canceled update", async || {
                hook_state.received.lock().unwrap().iter().any(|(_, b)| {
                    b["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED"
                        && b["statusUpdate"]["taskId"] == json!(id)
                })
            })
            .await;
        }
    }

    #[tokio::test]
    async fn private_and_loopback_webhooks_are_refused_by_default() {
        let running = serve(server::server(
            Duration::from_millis(1),
            Webhooks::default(),
        ))
        .await;
        let card = card(&running.base).await;
        for binding in BINDINGS {
            let client = client(&card, binding).await;
            for url in [
                "http://10.0.0.8/hook",
                "http://127.0.0.1:9/hook",
                "http://169.254.169.254/latest",
                "http://localhost/x",
                "https://hooks.example.com/x",
                "ftp://x.example/",
            ] {
                let mut req = request(vec![trip(1, Some("2026-12-01"))], None);
                req.configuration = Some(config(url));
                let err = client
                    .send_message(&req)
                    .await
                    .err()
                    .unwrap_or_else(|| panic!("{url} is refused"));
                assert_eq!(
                    err.code,
                    error_code::INVALID_PARAMS,
                    "{binding} {url}: {err:?}"
                );
                assert!(err.message.contains("refused"), "{}", err.message);
            }
            // No task was created by the refused sends.
            let listed = client
                .list_tasks(&support::client::every_task())
                .await
                .expect("the list");
            assert!(listed.tasks.is_empty(), "{binding}: {:?}", listed.tasks);
        }
    }
}

mod files {
    //! Files in and out; limits on inline bytes.
    use super::*;

    fn file_part(media_type: &str, name: &str, bytes: &[u8]) -> Part {
        let mut part = Part::raw(bytes.to_vec());
        part.media_type = Some(media_type.to_owned());
        part.filename = Some(name.to_owned());
        part
    }

    #[tokio::test]
    async fn a_file_round_trip() {
        let running = planner(Duration::from_millis(1)).await;
        let card = card(&running.base).await;
        for binding in BINDINGS {
            let client = client(&card, binding).await;
            // A file out: the calendar of a trip.
            let exported = task(
                client
                    .send_message(&request(
                        vec![data_part(
                            "calendarRequest",
                            json!({"destination": "Porto", "start_date": "2026-12-01", "days": 2}),
                        )],
                        None,
                    ))
                    .await
                    .expect("a calendar"),
            );
            let part = exported.artifacts.unwrap_or_default()[0].parts[0].clone();
            assert_eq!(
                part.media_type.as_deref(),
                Some("text/calendar"),
                "{binding}"
            );
            assert_eq!(part.filename.as_deref(), Some("trip.ics"));
            let PartContent::Raw(ics) = &part.content else {
                panic!("a file part: {part:?}")
            };
            assert!(String::from_utf8_lossy(ics).contains("DTSTART;VALUE=DATE:20261202"));
            // The same file in: its busy days are kept free.
            let planned = task(
                client
                    .send_message(&request(
                        vec![
                            trip(3, Some("2026-12-01")),
                            file_part("text/calendar", "busy.ics", ics),
                        ],
                        None,
                    ))
                    .await
                    .expect("a plan"),
            );
            let days = &planned.artifacts.unwrap_or_default()[0].parts;
            assert!(
                data_of(&days[0])["plan"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("Kept free"),
                "{binding}"
            );
            assert!(
                data_of(&days[2])["plan"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("Lisbon"),
                "{binding}"
            );
        }
    }

    #[tokio::test]
    async fn oversized_or_undeclared_files_are_refused_before_a_task_exists() {
        let running = serve(
            server::server(Duration::from_millis(1), Webhooks::default()).max_inline_file(1024),
        )
        .await;
        let card = card(&running.base).await;
        for binding in BINDINGS {
            let client = client(&card, binding).await;
            let big = vec![b'x'; 2048];
            let err = client
                .send_message(&request(
                    vec![
                        trip(1, Some("2026-12-01")),
                        file_part("text/calendar", "big.ics", &big),
                    ],
                    None,
                ))
                .await
                .expect_err("over the limit");
            assert_eq!(err.code, error_code::INVALID_PARAMS, "{binding}");
            assert!(
                err.message.contains("big.ics") && err.message.contains("1024"),
                "{}",
                err.message
            );
            let err = client
                .send_message(&request(
                    vec![
                        trip(1, Some("2026-12-01")),
                        file_part("image/png", "a.png", b"png"),
                    ],
                    None,
                ))
                .await
                .expect_err("a type the skill does not take");
            assert_eq!(
                err.code,
                error_code::CONTENT_TYPE_NOT_SUPPORTED,
                "{binding}: {err:?}"
            );
            assert_eq!(details(&err)["reason"], "unsupported-file");
        }
    }
}

mod failures {
    //! A panicking handler fails its task; the server keeps serving.
    use super::*;

    struct Fragile;

    /// Panics on demand.
    #[a2a_card::agent(url = "http://127.0.0.1:1")]
    impl Fragile {
        /// Panics when told "panic", echoes otherwise.
        #[skill]
        async fn fragile(&self, text: String) -> String {
            if text == "panic" {
                panic!("secret internal detail");
            }
            text
        }
    }

    #[tokio::test]
    async fn a_panicking_handler_fails_its_task_and_the_server_keeps_serving() {
        let running = serve(Server::new(Fragile)).await;
        let card = card(&running.base).await;
        for binding in BINDINGS {
            let client = client(&card, binding).await;
            let failed = task(
                client
                    .send_message(&request(vec![Part::text("panic")], None))
                    .await
                    .expect("a task"),
            );
            assert_eq!(failed.status.state, TaskState::Failed, "{binding}");
            let text = status_text(&failed);
            assert!(text.contains("failed unexpectedly"), "{text}");
            assert!(
                !text.contains("secret"),
                "the panic's text stays in the log: {text}"
            );
            let ok = task(
                client
                    .send_message(&request(vec![Part::text("still here")], None))
                    .await
                    .expect("served"),
            );
            assert_eq!(ok.status.state, TaskState::Completed, "{binding}");
        }
    }
}

mod v0_3 {
    //! The same over A2A 0.3 JSON-RPC, on raw HTTP.
    use super::*;

    async fn rpc(base: &str, method: &str, params: Value) -> Value {
        reqwest::Client::new()
            .post(base)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
            .send()
            .await
            .expect("a response")
            .json()
            .await
            .expect("JSON")
    }

    fn message(parts: Value, task: Option<&str>) -> Value {
        let mut m = json!({"kind": "message", "role": "user", "messageId": "m-03", "parts": parts});
        if let Some(task) = task {
            m["taskId"] = json!(task);
        }
        m
    }

    fn trip03(days: u8, start: Option<&str>) -> Value {
        let mut data = json!({"destination": "Lisbon", "days": days});
        if let Some(start) = start {
            data["start_date"] = json!(start);
        }
        json!([{"kind": "data", "data": data, "metadata": {"mimeType": "application/json;schema=tripRequest"}}])
    }

    #[tokio::test]
    async fn stream_ask_resume_and_cancel_in_0_3() {
        let running = planner(Duration::from_millis(100)).await;
        let base = &running.base;
        // message/stream: SSE of 0.3 events, artifact chunks among them.
        let body = reqwest::Client::new()
            .post(base)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": {"message": message(trip03(2, Some("2026-12-01")), None)}}))
            .send()
            .await
            .expect("a stream")
            .text()
            .await
            .expect("the events");
        let events: Vec<Value> = body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect();
        let kinds: Vec<_> = events
            .iter()
            .map(|e| e["result"]["kind"].as_str().unwrap_or("?").to_owned())
            .collect();
        assert!(
            kinds.iter().filter(|k| *k == "artifact-update").count() >= 2,
            "{kinds:?}"
        );
        assert_eq!(
            events
                .last()
                .map(|e| e["result"]["status"]["state"].clone()),
            Some(json!("completed")),
            "{kinds:?}"
        );

        // A question, answered on the task.
        let asked = rpc(
            base,
            "message/send",
            json!({"message": message(trip03(1, None), None)}),
        )
        .await;
        assert_eq!(
            asked["result"]["status"]["state"], "input-required",
            "{asked}"
        );
        let id = asked["result"]["id"]
            .as_str()
            .expect("a task id")
            .to_owned();
        let done = rpc(
            base,
            "message/send",
            json!({"message": message(json!([{"kind": "text", "text": "2026-12-01"}]), Some(&id))}),
        )
        .await;
        assert_eq!(done["result"]["status"]["state"], "completed", "{done}");

        // Non-blocking, then cancel.
        let started = rpc(base, "message/send", json!({"message": message(trip03(14, Some("2026-12-01")), None), "configuration": {"blocking": false}})).await;
        let id = started["result"]["id"]
            .as_str()
            .expect("a task id")
            .to_owned();
        assert_ne!(started["result"]["status"]["state"], "completed");
        let canceled = rpc(base, "tasks/cancel", json!({"id": id})).await;
        assert_eq!(
            canceled["result"]["status"]["state"], "canceled",
            "{canceled}"
        );
        let again = rpc(base, "tasks/get", json!({"id": id})).await;
        assert_eq!(again["result"]["status"]["state"], "canceled");
        let unknown = rpc(base, "tasks/cancel", json!({"id": "nope"})).await;
        assert_eq!(unknown["error"]["code"], -32001, "{unknown}");
    }
}

#[tokio::test]
async fn the_example_serves_where_it_says_and_prints_how_to_try_it() {
    use a2a_card::Agent;
    let declared = agent::TripPlanner::card().expect("the card");
    assert!(
        declared.interfaces[0]
            .url
            .ends_with(&format!(":{}", server::DEFAULT_PORT))
    );
    let listening = server::example(a2a_card::server::store::Tasks::memory())
        .bind(("127.0.0.1", 0))
        .await
        .expect("bind");
    let banner = server::banner(&listening);
    assert!(
        banner.contains(&listening.local_addr().to_string()),
        "{banner}"
    );
    assert!(
        banner.contains("schema=tripRequest") && banner.contains("SendStreamingMessage"),
        "{banner}"
    );
    assert!(
        server::PACE >= Duration::from_millis(100),
        "slow enough to watch, and to cancel"
    );
}

#[tokio::test]
async fn the_ag_ui_capabilities_tell_what_the_skills_do() {
    let running = planner(Duration::from_millis(1)).await;
    let caps: Value = reqwest::get(format!("{}/capabilities", running.base))
        .await
        .expect("capabilities")
        .json()
        .await
        .expect("JSON");
    assert_eq!(
        caps["transport"],
        json!({"streaming": true, "pushNotifications": true, "resumable": true})
    );
    assert_eq!(
        caps["humanInTheLoop"],
        json!({"supported": true}),
        "plan-trip asks for a date"
    );
    assert_eq!(caps["custom"]["a2a"]["cancellation"], true);
    assert_eq!(
        caps["output"]["supportedMimeTypes"],
        json!(["application/json", "text/calendar"])
    );
}

mod refused_input {
    //! A handler that cannot take its call's input (`SkillError::Input`: here a file the
    //! message does not carry) fails its task; the caller of that turn is answered `-32602`,
    //! saying why, instead of the task: a blocking send gets the error, a stream ends with
    //! it. A reader of the task finds it failed, saying the same.
    use super::*;
    use a2a_card::File;

    struct Reader;

    /// Reads files.
    #[a2a_card::agent(url = "http://127.0.0.1:1")]
    impl Reader {
        /// Names the CSV file attached, with a note.
        #[skill(input_modes("text/csv"))]
        fn read(&self, note: String, file: File) -> String {
            format!("{note}: {}", file.name.unwrap_or_default())
        }
    }

    #[tokio::test]
    async fn the_turns_caller_gets_the_refusal_and_the_task_fails_saying_why() {
        let running = serve(Server::new(Reader)).await;
        let card = card(&running.base).await;
        for binding in BINDINGS {
            let client = client(&card, binding).await;
            let refusal = client
                .send_message(&request(vec![Part::text("no file here")], None))
                .await
                .expect_err("a refusal, not the task");
            assert_eq!(
                refusal.code,
                error_code::INVALID_PARAMS,
                "{binding}: {refusal:?}"
            );
            assert_eq!(details(&refusal)["reason"], "invalid-input", "{binding}");
            assert!(
                refusal.message.contains("takes a file"),
                "{binding}: {refusal:?}"
            );

            let mut events = client
                .send_streaming_message(&request(vec![Part::text("still no file")], None))
                .await
                .expect("a stream");
            let mut id = None;
            let mut last = None;
            while let Some(item) = events.next().await {
                match item {
                    Ok(StreamResponse::Task(task)) => id = Some(task.id),
                    Ok(event) => assert_ne!(
                        state_of(&event),
                        Some(TaskState::Failed),
                        "{binding}: the failure is the caller's refusal"
                    ),
                    Err(e) => {
                        last = Some(e);
                        break;
                    }
                }
            }
            let refusal = last.unwrap_or_else(|| panic!("{binding}: the stream ends refused"));
            // The official client reads an HTTP+JSON stream's frames as events only, whatever
            // their type: the refusal's code and message reach it over JSON-RPC and gRPC (the
            // HTTP+JSON frame is checked below, as the official Python SDK reads it).
            if binding != "HTTP+JSON" {
                assert!(
                    refusal.message.contains("takes a file"),
                    "{binding}: {refusal:?}"
                );
            }
            if binding == "JSONRPC" {
                assert_eq!(refusal.code, error_code::INVALID_PARAMS, "{refusal:?}");
            }
            let id = id.unwrap_or_else(|| panic!("{binding}: the stream began with the task"));
            let failed = client.get_task(&get(&id)).await.expect("the task");
            assert_eq!(failed.status.state, TaskState::Failed, "{binding}");
            assert!(
                status_text(&failed).contains("takes a file"),
                "{binding}: {failed:?}"
            );
        }

        // Over HTTP+JSON, the stream ends with an `error` event holding the error as an
        // answer would: a `google.rpc.Status` (the official SDKs' shape).
        let stream = reqwest::Client::new()
            .post(format!("{}/message:stream", running.base))
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .body(
                json!({"message": {"messageId": "m-raw", "role": "ROLE_USER",
                    "parts": [{"text": "no file either"}]}})
                .to_string(),
            )
            .send()
            .await
            .expect("a stream")
            .text()
            .await
            .expect("its events");
        let last = stream
            .split("\n\n")
            .filter(|event| !event.trim().is_empty())
            .last()
            .expect("an event");
        assert!(last.starts_with("event: error\ndata: "), "{stream}");
        let error: Value = serde_json::from_str(&last["event: error\ndata: ".len()..])
            .unwrap_or_else(|e| panic!("{e}: {last}"));
        assert_eq!(error["error"]["code"], 400, "{error}");
        assert_eq!(error["error"]["status"], "INVALID_ARGUMENT", "{error}");
        let message = error["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("takes a file"), "{error}");
        assert!(
            error["error"]["details"]
                .as_array()
                .is_some_and(|d| d.iter().any(|d| d["reason"] == "INVALID_PARAMS")),
            "{error}"
        );
    }
}
