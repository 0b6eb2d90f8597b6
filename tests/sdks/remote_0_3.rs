//! The caller's side against an agent that speaks only A2A 0.3, on the official Python SDK
//! 0.3 (`tests/interop/a2a_py_0_3_agent.py`): its 0.3 card read, and its skill called blocking,
//! streamed, with data, with a question answered, and failing, through `a2a_card::client`.
//!
//! The SDK comes from `$A2A_PY_0_3` (CI sets it, see `.ci/run`), else it is installed under the
//! target directory. The tests skip, with a printed reason, only when there is no `python3` and
//! `A2A_REQUIRE_SDKS` is unset (CI sets it, so there they fail).

use crate::support;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use a2a_card::client::{ClientError, Connect, Content, Event, Payload, RemoteAgent};
use futures::StreamExt;
use serde_json::json;

/// The Python agent, killed when dropped.
struct PythonAgent {
    child: Child,
    base: String,
}

impl Drop for PythonAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the agent on a free port and waits for its card; `None` without Python (unless
/// `A2A_REQUIRE_SDKS` is set: then that fails).
async fn python_agent() -> Option<PythonAgent> {
    let py = support::a2a_python_0_3()?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/interop/a2a_py_0_3_agent.py"
    );
    let child = Command::new(py)
        .args([script, &port.to_string()])
        .stdout(Stdio::null())
        .spawn()
        .expect("the Python agent starts");
    let agent = PythonAgent {
        child,
        base: format!("http://127.0.0.1:{port}"),
    };
    for _ in 0..300 {
        if Connect::new(&agent.base).discover().await.is_ok() {
            return Some(agent);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the Python agent did not serve its card within 30 s");
}

fn texts(outputs: &[a2a_card::client::Output]) -> Vec<String> {
    outputs
        .iter()
        .filter_map(|o| match &o.content {
            Content::Text(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

async fn discover(agent: &PythonAgent) -> RemoteAgent {
    let remote = RemoteAgent::discover(agent.base.as_str())
        .await
        .expect("the 0.3 card");
    assert!(
        remote.card().interfaces.iter().all(|i| i.is_pre_1_0()),
        "{:?}",
        remote.card().interfaces
    );
    remote
}

#[tokio::test]
async fn a_python_0_3_agent_is_called_blocking_with_text_and_data() {
    let Some(agent) = python_agent().await else {
        return;
    };
    let remote = discover(&agent).await;
    let outcome = remote
        .call("echo", Payload::text("hello big world"))
        .await
        .expect("a completed task");
    assert_eq!(outcome.state(), Some(a2a::TaskState::Completed));
    assert_eq!(texts(&outcome.outputs()), ["hello", "big", "world"]);

    let outcome = remote
        .call(
            "echo",
            Payload::data(json!({"n": 9007199254740993_u64, "s": "ü"})),
        )
        .await
        .expect("a completed task");
    let data: Vec<_> = outcome
        .outputs()
        .into_iter()
        .filter_map(|o| match o.content {
            Content::Data { value, .. } => Some(value),
            _ => None,
        })
        .collect();
    assert_eq!(data.len(), 1, "{data:?}");
    assert_eq!(data[0]["echo"]["s"], "ü");
    assert_eq!(
        data[0]["echo"]["n"],
        json!(9007199254740993_u64),
        "exact, both ways"
    );

    // A task of the agent read back by id, through `tasks/get`.
    let handle = remote
        .send("echo", Payload::text("one two"))
        .await
        .expect("a task handle");
    let done = handle.wait().await.expect("the task ends");
    assert_eq!(done.state(), Some(a2a::TaskState::Completed));
}

#[tokio::test]
async fn a_python_0_3_stream_gives_progress_chunks_and_the_end() {
    let Some(agent) = python_agent().await else {
        return;
    };
    let remote = discover(&agent).await;
    let mut run = remote
        .stream("echo", Payload::text("one two three"))
        .await
        .expect("a stream");
    let (mut progress, mut chunks, mut end) = (Vec::new(), Vec::new(), None);
    while let Some(event) = run.next().await {
        match event.expect("no error") {
            Event::Status { text: Some(t), .. } => progress.push(t),
            Event::Output(o) => chunks.extend(texts(&[o])),
            Event::Finished { state, .. } => end = Some(state),
            _ => {}
        }
    }
    assert!(progress.iter().any(|p| p == "echoing"), "{progress:?}");
    assert_eq!(chunks, ["one", "two", "three"]);
    assert_eq!(end, Some(a2a::TaskState::Completed));
}

#[tokio::test]
async fn a_python_0_3_question_is_answered_and_a_failure_is_told() {
    let Some(agent) = python_agent().await else {
        return;
    };
    let remote = discover(&agent).await;
    let mut run = remote
        .stream("echo", Payload::text("ask"))
        .await
        .expect("a stream");
    let (mut questions, mut answers) = (Vec::new(), Vec::new());
    while let Some(event) = run.next().await {
        match event.expect("no error") {
            Event::Question { text, .. } => {
                questions.push(text);
                run.answer("tiger").await.expect("the answer is sent");
            }
            Event::Output(o) => answers.extend(texts(&[o])),
            _ => {}
        }
    }
    assert_eq!(questions, ["Which word?"]);
    assert_eq!(answers, ["tiger"]);

    let failed = remote
        .call("echo", Payload::text("fail"))
        .await
        .expect("an answer");
    match failed.into_result() {
        Err(ClientError::TaskFailed { state, message, .. }) => {
            assert_eq!(state, a2a::TaskState::Failed);
            assert_eq!(message.as_deref(), Some("asked to fail"));
        }
        other => panic!("a failed task, not {other:?}"),
    }
}
