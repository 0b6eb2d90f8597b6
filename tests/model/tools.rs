//! A model that picks tools: the concierge example (`examples/concierge`, a durable model loop
//! with three tools, one behind the caller's approval) on a small local model that calls tools
//! (Qwen2.5-Coder-0.5B-Instruct, served by llama-cpp-python with `scripts/serve_tools.py`), over
//! a fixed set of prompts, each with one right tool. Prints how many prompts end with the right
//! tool called with valid arguments; asserts at least what the model reliably reaches, and the
//! loop's own behaviour on every prompt whatever the model chose: the task ends, every booking
//! asked the caller first and the denied ones booked nothing, every completion and tool call is
//! in the journal.

use std::sync::Arc;
use std::time::Duration;

use a2a_card::client::Payload;
use a2a_card::rig::rig_core::providers::openai::OpenAIConfig;
use a2a_card::server::Server;
use a2a_card::server::store::Tasks;
use a2a_card::testing::TestAgent;
use serde_json::{Value, json};

use crate::concierge::Concierge;

/// The prompts, and the tool each asks for.
pub const PROMPTS: &[(&str, &str)] = &[
    ("Find hotels in Lisbon", "find_hotels"),
    ("What's the weather like in Paris?", "weather"),
    ("Book a room at the Ribeira Inn", "book_hotel"),
    ("Which hotels are there in Porto?", "find_hotels"),
    ("Is it raining in Lisbon today?", "weather"),
    ("Please reserve the Baixa House for me", "book_hotel"),
    ("List the hotels you know in Paris", "find_hotels"),
    ("Book Hotel du Marais", "book_hotel"),
    ("Tell me the forecast for Porto", "weather"),
    (
        "I need a hotel in Lisbon, what are my options?",
        "find_hotels",
    ),
];

/// The fewest prompts the model must get right (it got 9 of 10 in every run made, at
/// temperature 0: "Is it raining in Lisbon today?" goes to `book_hotel`).
const RELIABLY: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_local_model_picks_the_concierges_tools() {
    let Some(server) = crate::model_server::tool_model_server() else {
        return;
    };
    let model = OpenAIConfig::new("")
        .with_base_url(format!("{}/v1", server.base))
        .client()
        .chat(crate::model_server::TOOL_MODEL);
    let dir = std::env::temp_dir().join(format!("a2a-card-tools-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let concierge = Concierge::new(model);
    let calls = Arc::clone(&concierge.calls);
    let bookings = Arc::clone(&concierge.bookings);
    let agent = TestAgent::start(Server::new(concierge).tasks(Tasks::sqlite(dir.join("t.db"))))
        .await
        .expect("served");
    let remote = agent.remote().await.expect("the card");
    let mut right = 0;
    for (prompt, tool) in PROMPTS {
        calls.lock().unwrap().clear();
        let message = remote.message("book-stay", Payload::text(*prompt)).unwrap();
        let sent = agent
            .json_rpc(
                "SendMessage",
                json!({"message": message, "configuration": {"returnImmediately": true}}),
            )
            .await
            .expect("sent");
        let id = sent["result"]["task"]["id"]
            .as_str()
            .expect("a task")
            .to_owned();
        let (task, proposed) = follow(&agent, &id).await;
        let ran: Vec<(String, Value)> = calls.lock().unwrap().clone();
        // The loop's own promises, whatever the model chose: the task ended with an answer
        // (no tool is left out of the journal's turns, none failed the task), a booking was
        // proposed for approval and not made when denied, and no other call of book_hotel ran.
        let state = task["status"]["state"].as_str().unwrap_or_default();
        assert_eq!(state, "TASK_STATE_COMPLETED", "{prompt}: {task}");
        assert!(
            ran.iter().all(|(name, _)| name != "book_hotel"),
            "{prompt}: a denied booking ran: {ran:?}"
        );
        if let Some((name, arguments)) = &proposed {
            assert_eq!(name, "book_hotel", "{prompt}: only bookings ask");
            assert!(arguments["hotel"].is_string(), "{prompt}: {arguments}");
        }
        // The model's first call: proposed for approval, or run (the loop checked its
        // arguments against the tool's schema before it ran).
        let first = proposed.or_else(|| ran.first().cloned());
        let chose = first.as_ref().map(|(name, _)| name.as_str());
        let answer = task["artifacts"][0]["parts"][0]["text"]
            .as_str()
            .unwrap_or_default();
        println!("  {prompt:?}: {first:?}; answered {answer:?}");
        if chose == Some(*tool) {
            right += 1;
        }
    }
    assert!(
        bookings.lock().unwrap().is_empty(),
        "every booking was denied"
    );
    println!(
        "tool choice: {right}/{} prompts ended with the right tool called with valid arguments ({}, temperature 0)",
        PROMPTS.len(),
        crate::model_server::TOOL_MODEL
    );
    assert!(right >= RELIABLY, "{right} of {} prompts", PROMPTS.len());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Follows task `id` to its end, answering an approval with "no": the task, and the call the
/// first approval proposed.
async fn follow(agent: &TestAgent, id: &str) -> (Value, Option<(String, Value)>) {
    let mut proposed = None;
    for _ in 0..600 {
        let task = agent
            .json_rpc("GetTask", json!({"id": id}))
            .await
            .expect("a task")["result"]
            .clone();
        match task["status"]["state"].as_str() {
            Some("TASK_STATE_INPUT_REQUIRED") => {
                let data = &task["status"]["message"]["parts"][1]["data"];
                if proposed.is_none() {
                    let tool = data["tool"].as_str().unwrap_or_default().to_owned();
                    proposed = Some((tool, data["arguments"].clone()));
                }
                let answer = json!({"messageId": format!("no-{id}"), "role": "ROLE_USER", "taskId": id,
                    "contextId": task["contextId"], "parts": [{"text": "no, not now"}]});
                agent
                    .json_rpc(
                        "SendMessage",
                        json!({"message": answer, "configuration": {"returnImmediately": true}}),
                    )
                    .await
                    .expect("answered");
            }
            Some("TASK_STATE_COMPLETED" | "TASK_STATE_FAILED") => return (task, proposed),
            _ => {}
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("task {id} did not end");
}
