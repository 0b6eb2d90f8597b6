//! A model in a loop with tools in a durable skill (`a2a_card::rig::ModelLoop`): the concierge
//! example, with a scripted model: stopped at every point of its journal (in the middle of a completion,
//! between a completion and its tool call, in the middle of a tool, waiting for an approval)
//! and taken over, it ends as the run nobody stopped did, each completion sent once and each
//! tool run once (twice only where the stop fell inside it); approvals that approve, deny and
//! edit; a token budget that stops the loop.

use std::sync::{Arc, Mutex};

use a2a::TaskState;
use a2a_card::client::Payload;
use a2a_card::server::Server;
use a2a_card::testing::{CrashPoints, ScriptedModel, ScriptedReply, TestAgent};
use serde_json::json;

use crate::concierge::Concierge;

/// The model's script: find hotels, book one, answer; each reply by its turn (a completion
/// sent again after a stop gets the same reply).
fn script() -> ScriptedModel {
    ScriptedModel::new()
        .by_turn()
        .reply(ScriptedReply::tool_call("find_hotels", json!({"city": "Lisbon"})).usage(50, 10))
        .reply(
            ScriptedReply::tool_call("book_hotel", json!({"hotel": "Alfama Rooms"})).usage(80, 10),
        )
        .reply(ScriptedReply::text("Booked as asked.").usage(100, 5))
}

/// The concierge example on `model`, its bookings kept in `ledger`.
fn booker(model: &ScriptedModel, ledger: &Arc<Mutex<Vec<String>>>) -> Server<Concierge> {
    let mut concierge = Concierge::new(model.clone());
    concierge.bookings = Arc::clone(ledger);
    Server::new(concierge)
}

#[tokio::test]
async fn a_model_loop_stopped_at_every_point_ends_as_if_never_stopped() {
    let (model, ledger) = (script(), Arc::new(Mutex::new(Vec::new())));
    let (m, l) = (model.clone(), Arc::clone(&ledger));
    let report = CrashPoints::new(
        move || booker(&m, &l),
        "book-stay",
        Payload::text("A hotel in Lisbon"),
    )
    .answer(Payload::text("yes"))
    .run()
    .await
    .expect("the loop nobody stopped ends");
    report.assert_survives();
    let said = &report.uninterrupted().artifacts[0]["parts"][0]["text"];
    assert_eq!(said, "Booked as asked.");
    let cuts: Vec<&str> = report.points().iter().map(|p| p.cut_before()).collect();
    assert_eq!(
        cuts,
        [
            "the start of step `model turn 1`",
            "the result of step `model turn 1`",
            "the start of step `tool find_hotels (turn 1, call call_1)`",
            "the result of step `tool find_hotels (turn 1, call call_1)`",
            "the start of step `model turn 2`",
            "the result of step `model turn 2`",
            "an answer",
            "the start of step `tool book_hotel (turn 2, call call_2)`",
            "the result of step `tool book_hotel (turn 2, call call_2)`",
            "the start of step `model turn 3`",
            "the result of step `model turn 3`",
            "the task's end",
        ],
        "{report}"
    );
    // Each completion sent once and each tool run once, at every point but the one inside
    // it: the model's requests and the hotel's ledger agree with the report.
    let points = report.points().len();
    let once_more = |step: &str| {
        report
            .points()
            .iter()
            .filter(|p| p.runs()[step] == 2)
            .count()
    };
    assert_eq!(once_more("model turn 2"), 1, "{report}");
    assert_eq!(
        once_more("tool book_hotel (turn 2, call call_2)"),
        1,
        "{report}"
    );
    let runs = 1 + points;
    assert_eq!(model.request_count(), 3 * runs + 3, "{report}");
    assert_eq!(ledger.lock().unwrap().len(), runs + 1, "{report}");
}

#[tokio::test]
async fn an_approval_denied_is_told_to_the_model_and_an_edited_one_runs_as_edited() {
    // Denied, across a stop at every point: the model reads why, and the hotel has nothing.
    let (model, ledger) = (script(), Arc::new(Mutex::new(Vec::new())));
    let (m, l) = (model.clone(), Arc::clone(&ledger));
    let report = CrashPoints::new(move || booker(&m, &l), "book-stay", Payload::text("Lisbon"))
        .answer(Payload::text("too expensive"))
        .run()
        .await
        .expect("ends");
    report.assert_survives();
    assert!(ledger.lock().unwrap().is_empty(), "never booked");
    let last = model.last_request().expect("asked");
    let told = serde_json::to_string(&last.chat_history).unwrap();
    assert!(
        told.contains("the caller did not approve this call of `book_hotel`: too expensive"),
        "{told}"
    );

    // Edited: the tool runs with the caller's arguments.
    let (model, ledger) = (script(), Arc::new(Mutex::new(Vec::new())));
    let (m, l) = (model.clone(), Arc::clone(&ledger));
    let report = CrashPoints::new(move || booker(&m, &l), "book-stay", Payload::text("Lisbon"))
        .answer(Payload::data(
            json!({"arguments": {"hotel": "Baixa House"}}),
        ))
        .run()
        .await
        .expect("ends");
    report.assert_survives();
    let ledger = ledger.lock().unwrap();
    assert!(
        !ledger.is_empty() && ledger.iter().all(|h| h == "Baixa House"),
        "{ledger:?}"
    );
}

#[tokio::test]
async fn a_token_budget_spent_stops_the_loop_and_says_so() {
    // The loop's own budget: no completion once 100 tokens are used (60, then 150).
    let model = script();
    let report = CrashPoints::new(
        move || Server::new(Concierge::new(model.clone()).max_tokens(100)),
        "book-stay",
        Payload::text("Lisbon"),
    )
    .answer(Payload::text("no"))
    .run()
    .await
    .expect("ends");
    report.assert_survives();
    let outcome = report.uninterrupted();
    assert_eq!(outcome.state, TaskState::Failed);
    let why = outcome.message.as_deref().unwrap_or_default();
    assert!(
        why.contains("the token budget is spent: 150 tokens used of 100, after 2 model turn(s)"),
        "{why}"
    );

    // The caller's budget of tokens (the budget extension), counted by the loop.
    let model = ScriptedModel::new()
        .by_turn()
        .reply(ScriptedReply::tool_call("find_hotels", json!({"city": "Paris"})).usage(50, 10))
        .reply(ScriptedReply::tool_call("weather", json!({"city": "Paris"})).usage(80, 10))
        .reply(ScriptedReply::text("Rive Gauche, and sunny.").usage(100, 5));
    let agent = TestAgent::on_sqlite(Server::new(Concierge::new(model.clone())))
        .await
        .expect("served");
    let remote = agent.remote().await.expect("the card");
    let send = |tokens: u64| {
        let mut message = remote.message("book-stay", Payload::text("Paris")).unwrap();
        a2a_card::budget::with_tokens(&mut message, tokens);
        agent.json_rpc("SendMessage", json!({"message": message}))
    };
    let spent = send(100).await.expect("answered");
    let status = &spent["result"]["task"]["status"];
    assert_eq!(status["state"], "TASK_STATE_FAILED", "{spent}");
    assert_eq!(
        status["message"]["parts"][0]["text"],
        "the task's token budget is spent: its caller gave 100 tokens, and 2 model turn(s) used them"
    );
    let used = &spent["result"]["task"]["metadata"][a2a_card::rig::USAGE_METADATA];
    assert_eq!(
        used["inputTokens"], 130,
        "a failed loop says what it used too: {spent}"
    );
    assert_eq!(
        (used["outputTokens"].clone(), used["turns"].clone()),
        (json!(20), json!(2))
    );
    let enough = send(1_000).await.expect("answered");
    assert_eq!(
        enough["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{enough}"
    );
}

/// An agent that says how many model tokens its task was given.
struct Counter;

/// Counts.
#[a2a_card::agent(url = "https://counter.example.com/a2a")]
impl Counter {
    /// Says what is left of the task's token budget.
    #[a2a_card::skill]
    fn left(&self, _ask: String, ctx: a2a_card::SkillContext) -> String {
        format!("{:?}", ctx.token_budget())
    }
}

/// An agent whose skill spends tokens, then calls the counter.
struct Spender {
    counter: a2a_card::client::RemoteAgent,
}

/// Spends.
#[a2a_card::agent(url = "https://spender.example.com/a2a")]
impl Spender {
    /// Spends 30 tokens, then asks the counter what it was given.
    #[a2a_card::skill]
    async fn spend(
        &self,
        _ask: String,
        ctx: a2a_card::SkillContext,
    ) -> Result<String, a2a_card::SkillError> {
        ctx.spend_tokens(30);
        let outcome = ctx
            .call(&self.counter, "left", Payload::text("?"))
            .await
            .map_err(|e| a2a_card::SkillError::Failed(e.to_string()))?;
        Ok(format!("{:?}", outcome.outputs()))
    }
}

#[tokio::test]
async fn an_agent_called_by_a_task_gets_what_is_left_of_its_token_budget() {
    let counter = TestAgent::start(Server::new(Counter))
        .await
        .expect("served");
    let spender = TestAgent::start(Server::new(Spender {
        counter: counter.remote().await.expect("the counter's card"),
    }))
    .await
    .expect("served");
    let remote = spender.remote().await.expect("the card");
    let mut message = remote.message("spend", Payload::text("go")).unwrap();
    a2a_card::budget::with_tokens(&mut message, 100);
    let answer = spender
        .json_rpc("SendMessage", json!({"message": message}))
        .await
        .expect("answered");
    let said = answer["result"]["task"]["artifacts"][0]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(said.contains("Some(70)"), "{answer}");
}

#[tokio::test]
async fn an_approval_question_carries_the_proposed_call_as_data() {
    let (model, ledger) = (script(), Arc::new(Mutex::new(Vec::new())));
    let agent = TestAgent::on_sqlite(booker(&model, &ledger))
        .await
        .expect("served");
    let remote = agent.remote().await.expect("the card");
    let message = remote
        .message("book-stay", Payload::text("Lisbon"))
        .unwrap();
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
    let context = sent["result"]["task"]["contextId"].clone();
    let asking = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            let task = agent.json_rpc("GetTask", json!({"id": id})).await.unwrap();
            if task["result"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED" {
                return task["result"]["status"]["message"].clone();
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("asks");
    let proposal = &asking["parts"][1]["data"];
    assert_eq!(proposal["tool"], "book_hotel", "{asking}");
    assert_eq!(proposal["arguments"], json!({"hotel": "Alfama Rooms"}));
    assert_eq!(proposal["answer"], a2a_card::rig::approval_schema());
    assert!(
        asking["parts"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Approve the call of tool `book_hotel`")
    );
    // Denied as data, with a reason the model reads.
    let answer = json!({"messageId": "a1", "role": "ROLE_USER", "taskId": id, "contextId": context,
        "parts": [{"data": {"approve": false, "reason": "over budget"}}]});
    let done = agent
        .json_rpc("SendMessage", json!({"message": answer}))
        .await
        .expect("answered");
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert!(ledger.lock().unwrap().is_empty());
    let told = serde_json::to_string(&model.last_request().unwrap().chat_history).unwrap();
    assert!(
        told.contains("did not approve this call of `book_hotel`: over budget"),
        "{told}"
    );
}

#[tokio::test]
async fn arguments_that_break_a_tools_schema_are_told_to_the_model_which_tries_again() {
    let model = ScriptedModel::new()
        .tool_call("find_hotels", json!({"town": "Lisbon"}))
        .tool_call("find_hotels", json!({"city": "Lisbon"}))
        .text("Alfama Rooms or Baixa House.");
    let agent = TestAgent::on_sqlite(Server::new(Concierge::new(model.clone())))
        .await
        .expect("served");
    let remote = agent.remote().await.expect("the card");
    let message = remote
        .message("book-stay", Payload::text("Lisbon?"))
        .unwrap();
    let answer = agent
        .json_rpc("SendMessage", json!({"message": message}))
        .await
        .expect("answered");
    assert_eq!(
        answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answer}"
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let told = serde_json::to_string(&requests[1].chat_history).unwrap();
    assert!(
        told.contains("the arguments of `find_hotels` do not follow its parameters' schema")
            && told.contains("city"),
        "{told}"
    );
    let found = serde_json::to_string(&requests[2].chat_history).unwrap();
    assert!(found.contains("Baixa House"), "{found}");
}

/// A hotel agent whose one skill holds a room: each hold counted, with the tokens its task was
/// given.
#[derive(Clone, Default)]
struct Hotels {
    holds: Arc<Mutex<Vec<Option<u64>>>>,
}

/// Holds rooms.
#[a2a_card::agent(url = "http://127.0.0.1:9000")]
impl Hotels {
    /// Holds a room in a city.
    #[a2a_card::skill(id = "hold-room")]
    fn hold_room(&self, city: String, ctx: a2a_card::SkillContext) -> String {
        self.holds.lock().unwrap().push(ctx.token_budget());
        format!("Room 12 held in {city}.")
    }
}

/// A planner whose model loop has the hotel agent's skills as tools.
struct Planner {
    model: ScriptedModel,
    hotels: a2a_card::client::RemoteAgent,
}

/// Plans stays.
#[a2a_card::agent(url = "https://planner.example.com/a2a")]
impl Planner {
    /// Plans a stay with the hotel agent.
    #[a2a_card::skill(durable)]
    async fn plan(
        &self,
        ask: String,
        ctx: a2a_card::SkillContext,
    ) -> Result<String, a2a_card::SkillError> {
        let done = a2a_card::rig::ModelLoop::new(self.model.model())
            .agent(&self.hotels)
            .stream_text("reply")
            .run(&ctx, ask)
            .await?;
        Ok(done.text)
    }
}

/// The planner's script: hold a room at the hotel agent, then say so.
fn planning() -> ScriptedModel {
    ScriptedModel::new()
        .by_turn()
        .reply(ScriptedReply::tool_call("hold-room", json!({"text": "Lisbon"})).usage(50, 10))
        .reply(ScriptedReply::text("Your room in Lisbon is held.").usage(90, 8))
}

#[tokio::test]
async fn another_agents_skill_is_called_once_however_the_loop_is_stopped() {
    let hotels = Hotels::default();
    let served = crate::support::client::serve(Server::new(hotels.clone())).await;
    let remote = a2a_card::client::RemoteAgent::discover(&served.base)
        .await
        .expect("the hotels' card");
    let model = planning();
    let (m, r) = (model.clone(), remote.clone());
    let report = CrashPoints::new(
        move || {
            Server::new(Planner {
                model: m.clone(),
                hotels: r.clone(),
            })
        },
        "plan",
        Payload::text("A room in Lisbon"),
    )
    .run()
    .await
    .expect("the loop nobody stopped ends");
    report.assert_survives();
    let cuts: Vec<&str> = report.points().iter().map(|p| p.cut_before()).collect();
    assert!(
        cuts.iter().any(|c| c.contains("call")),
        "the call is journaled as a call, not as a step: {report}"
    );
    assert!(
        !report
            .uninterrupted_runs()
            .keys()
            .any(|step| step.starts_with("tool ")),
        "{report}"
    );
    // The room held once per task: once by the run nobody stopped, once at each point (a
    // call sent again after a stop is answered with the task the first sending made).
    let holds = hotels.holds.lock().unwrap().len();
    assert_eq!(holds, 1 + report.points().len(), "{report}");
}

#[tokio::test]
async fn a_streaming_caller_reads_the_completion_as_it_is_written_and_a_called_agent_gets_the_tokens_left()
 {
    let hotels = Hotels::default();
    let served = crate::support::client::serve(Server::new(hotels.clone())).await;
    let remote = a2a_card::client::RemoteAgent::discover(&served.base)
        .await
        .expect("the hotels' card");
    let planner = TestAgent::on_sqlite(Server::new(Planner {
        model: planning(),
        hotels: remote,
    }))
    .await
    .expect("served");
    let client = planner.remote().await.expect("the card");
    let mut message = client
        .message("plan", Payload::text("A room in Lisbon"))
        .unwrap();
    a2a_card::budget::with_tokens(&mut message, 1_000);
    let mut run = client.stream_message(message).await.expect("streamed");
    let mut reply = Vec::new();
    let mut result = None;
    use futures::StreamExt as _;
    while let Some(event) = run.next().await {
        match event.expect("an event") {
            a2a_card::client::Event::Output(output)
                if output.artifact_name.as_deref() == Some("reply") =>
            {
                if let a2a_card::client::Content::Text(text) = output.content {
                    reply.push(text);
                }
            }
            a2a_card::client::Event::Output(output) => {
                if let a2a_card::client::Content::Text(text) = output.content {
                    result = Some(text);
                }
            }
            a2a_card::client::Event::Finished { state, text } => {
                assert_eq!(state, TaskState::Completed, "{text:?}");
            }
            _ => {}
        }
    }
    // Word by word, as the model wrote them.
    assert_eq!(
        reply,
        ["Your ", "room ", "in ", "Lisbon ", "is ", "held."],
        "{reply:?}"
    );
    assert_eq!(result.as_deref(), Some("Your room in Lisbon is held."));
    // The hotel's task was given what the first completion left (1,000 - 60).
    assert_eq!(*hotels.holds.lock().unwrap(), [Some(940)]);
}
