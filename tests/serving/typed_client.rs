//! The typed clients `#[agent]` generates (`FightClubClient`, `TripPlannerClient`) against the
//! examples' agents served on free loopback ports: blocking calls, streams, questions,
//! handles, failures, output validation, and the refusal of an agent that no longer matches.

use crate::fight_club::agent as fight;
use crate::support;
use crate::trip_planner::agent as trip;

use std::time::Duration;

use a2a_card::client::{ClientError, Connect, RemoteAgent, TypedEvent};
use a2a_card::server::Server;
use a2a_card::{File, Input, Output, Schema, agent, skill};
use fight::{FightClub, FightClubClient, FightComparison, FightResponse};
use futures::StreamExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use support::client::serve;
use trip::{CalendarRequest, ItineraryDay, TripPlanner, TripPlannerClient, TripRequest};

fn planner(pace_ms: u64) -> Server<TripPlanner> {
    Server::new(TripPlanner {
        pace: Duration::from_millis(pace_ms),
    })
}

fn lion_tiger() -> FightComparison {
    FightComparison {
        a: "Lion".into(),
        b: "Tiger".into(),
    }
}

#[tokio::test]
async fn a_blocking_call_gives_the_typed_output() {
    let server = serve(Server::new(FightClub)).await;
    let client = FightClubClient::connect(server.base.as_str())
        .await
        .expect("the served agent matches its declaration");
    let answer = client
        .fight_comparison(Input::Data(lion_tiger()))
        .await
        .expect("a verdict");
    let Output::Data(verdict) = answer else {
        panic!("data in, data out: {answer:?}")
    };
    assert_eq!(verdict.winner, "Tiger");
    assert_eq!(verdict.probability, 0.56);

    // The same skill takes text, and answers text.
    let answer = client
        .fight_comparison(Input::Text("Lion or Tiger?".into()))
        .await
        .expect("a verdict in words");
    assert!(
        matches!(&answer, Output::Text(t) if t.contains("Tiger")),
        "{answer:?}"
    );
}

#[tokio::test]
async fn a_stream_gives_typed_items_and_surfaces_the_question() {
    let server = serve(planner(5)).await;
    let client = TripPlannerClient::connect(server.base.as_str())
        .await
        .expect("connect");
    let mut run = client
        .plan_trip(TripRequest {
            destination: "Lisbon".into(),
            days: 3,
            start_date: None,
        })
        .await
        .expect("a stream");
    let (mut items, mut progress, mut questions) = (Vec::new(), Vec::new(), Vec::new());
    while let Some(event) = run.next().await {
        match event.expect("no error") {
            TypedEvent::Item(day) => items.push(day),
            TypedEvent::Progress(p) => progress.push(p),
            TypedEvent::Question { text, auth, .. } => {
                assert!(!auth);
                questions.push(text);
                run.answer("2026-12-30").await.expect("the answer is sent");
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(questions, ["Which day do you leave? (YYYY-MM-DD)"]);
    assert!(
        progress.iter().any(|p| p == "Planning 3 days in Lisbon"),
        "{progress:?}"
    );
    let dates: Vec<&str> = items.iter().map(|d| d.date.as_str()).collect();
    assert_eq!(dates, ["2026-12-30", "2026-12-31", "2027-01-01"]);
    assert_eq!(items[0].day, 1);
    assert!(items[2].plan.starts_with("Lisbon: "), "{:?}", items[2]);
}

#[tokio::test]
async fn a_failed_task_ends_the_stream_with_its_reason() {
    let server = serve(planner(5)).await;
    let client = TripPlannerClient::connect(server.base.as_str())
        .await
        .expect("connect");
    let mut run = client
        .plan_trip(TripRequest {
            destination: "Lisbon".into(),
            days: 2,
            start_date: None,
        })
        .await
        .expect("a stream");
    let mut failure = None;
    while let Some(event) = run.next().await {
        match event {
            Ok(TypedEvent::Question { .. }) => run.answer("someday").await.expect("sent"),
            Ok(_) => {}
            Err(e) => failure = Some(e),
        }
    }
    match failure {
        Some(ClientError::TaskFailed { state, message, .. }) => {
            assert_eq!(state, a2a::TaskState::Failed);
            assert_eq!(
                message.as_deref(),
                Some("`someday` is not a date of the form YYYY-MM-DD")
            );
        }
        other => panic!("expected a failed task, got {other:?}"),
    }

    // A blocking call of a skill that fails: the error says why.
    let error = client
        .export_calendar(CalendarRequest {
            destination: "Lisbon".into(),
            start_date: "tomorrow".into(),
            days: 2,
        })
        .await
        .expect_err("not a date");
    assert!(
        error
            .to_string()
            .ends_with("ended failed: `tomorrow` is not a date of the form YYYY-MM-DD"),
        "{error}"
    );
}

#[tokio::test]
async fn a_blocking_call_that_is_asked_something_says_so() {
    let server = serve(planner(5)).await;
    let client = TripPlannerClient::connect(server.base.as_str())
        .await
        .expect("connect");
    // Taken without waiting: waiting on the handle stops at the question, which it answers.
    let mut pending = client
        .plan_trip(TripRequest {
            destination: "Porto".into(),
            days: 1,
            start_date: None,
        })
        .no_wait()
        .await
        .expect("a task");
    let asked = pending.handle().clone().wait().await.expect("settled");
    assert_eq!(asked.state(), Some(a2a::TaskState::InputRequired));
    assert_eq!(
        asked.status_text().as_deref(),
        Some("Which day do you leave? (YYYY-MM-DD)")
    );
    match asked.into_result() {
        Err(ClientError::InputRequired { question, auth, .. }) => {
            assert_eq!(question, "Which day do you leave? (YYYY-MM-DD)");
            assert!(!auth);
        }
        other => panic!("expected a question, got {other:?}"),
    }
    let day: ItineraryDay = pending.answer("2026-05-01").await.expect("the plan");
    assert_eq!(day.date, "2026-05-01");
    assert!(day.plan.starts_with("Porto: "), "{day:?}");
}

#[tokio::test]
async fn no_wait_gives_a_handle_to_wait_for_or_cancel() {
    let server = serve(planner(200)).await;
    let client = TripPlannerClient::connect(server.base.as_str())
        .await
        .expect("connect");
    let file: File = client
        .export_calendar(CalendarRequest {
            destination: "Lisbon".into(),
            start_date: "2026-12-01".into(),
            days: 2,
        })
        .no_wait()
        .await
        .expect("a task")
        .wait()
        .await
        .expect("the calendar");
    assert_eq!(file.media_type.as_deref(), Some("text/calendar"));
    let ics = String::from_utf8_lossy(file.bytes().expect("inline bytes")).into_owned();
    assert!(ics.contains("DTSTART;VALUE=DATE:20261202"), "{ics}");

    let mut pending = client
        .plan_trip(TripRequest {
            destination: "Lisbon".into(),
            days: 14,
            start_date: Some("2026-12-01".into()),
        })
        .no_wait()
        .await
        .expect("a task");
    assert_eq!(
        pending.poll().await.expect("polled"),
        None,
        "still planning"
    );
    pending.cancel().await.expect("canceled");
    let state = pending.handle().poll().await.expect("read").state();
    assert_eq!(state, Some(a2a::TaskState::Canceled));
}

#[tokio::test]
async fn input_that_breaks_the_schema_is_refused_before_sending() {
    let server = serve(planner(5)).await;
    let client = TripPlannerClient::connect(server.base.as_str())
        .await
        .expect("connect");
    let error = client
        .plan_trip(TripRequest {
            destination: "Lisbon".into(),
            days: 30,
            start_date: None,
        })
        .await
        .expect_err("days is at most 14");
    match &error {
        ClientError::InvalidInput { schema, violations } => {
            assert_eq!(schema, "tripRequest");
            assert_eq!(violations[0].instance_path, "/days");
        }
        other => panic!("expected invalid input, got {other:?}"),
    }
    // Nothing reached the agent.
    let tasks = support::client::client(&support::client::card(&server.base).await, "JSONRPC")
        .await
        .list_tasks(&support::client::every_task())
        .await
        .expect("list");
    assert!(tasks.tasks.is_empty(), "{tasks:?}");
}

/// A skill `fight-comparison` whose input schema has the same name and other fields.
#[derive(Serialize, Deserialize, JsonSchema, Schema)]
#[schema(name = "fightComparison")]
struct Contestants {
    /// Both names, comma-separated
    names: String,
}

struct Impostor;
/// Pretends to be the fight club.
#[agent(url = "http://127.0.0.1:9")]
impl Impostor {
    /// Judges with another input.
    #[skill(id = "fight-comparison")]
    fn judge(&self, c: Contestants) -> FightResponse {
        FightResponse {
            winner: c.names,
            probability: 0.5,
            explanation: String::new(),
        }
    }
}

struct Liar;
/// Declares the fight club's skill exactly, and answers out of range.
#[agent(url = "http://127.0.0.1:9")]
impl Liar {
    /// Judges, badly.
    #[skill(id = "fight-comparison")]
    fn judge(&self, f: Input<FightComparison>) -> Output<FightResponse> {
        let winner = match f {
            Input::Data(f) => f.a,
            Input::Text(t) => t,
        };
        Output::Data(FightResponse {
            winner,
            probability: 3.0,
            explanation: "surely".into(),
        })
    }
}

#[tokio::test]
async fn a_client_refuses_an_agent_that_does_not_match_its_declaration() {
    let impostor = serve(Server::new(Impostor)).await;
    let error = FightClubClient::connect(impostor.base.as_str())
        .await
        .expect_err("the schema differs");
    match &error {
        ClientError::Stale { skill, reason } => {
            assert_eq!(skill, "fight-comparison");
            assert!(
                reason.starts_with("its input schema `fightComparison` differs: compiled sha-256:"),
                "{reason}"
            );
        }
        other => panic!("expected a stale client, got {other:?}"),
    }

    let planner = serve(planner(5)).await;
    let error = FightClubClient::connect(planner.base.as_str())
        .await
        .expect_err("no such skill there");
    assert!(
        error.to_string().contains("skill `fight-comparison`")
            && error.to_string().contains("does not list it"),
        "{error}"
    );

    // The dynamic client still talks to the impostor, on its own terms.
    let remote = RemoteAgent::discover(impostor.base.as_str())
        .await
        .expect("any agent");
    assert!(remote.check_declaration::<FightClub>().is_err());
    assert!(remote.check_declaration::<Impostor>().is_ok());
}

#[tokio::test]
async fn an_output_that_breaks_its_schema_is_refused() {
    let liar = serve(Server::new(Liar)).await;
    let client = FightClubClient::connect_with(Connect::new(liar.base.as_str()))
        .await
        .expect("the declaration matches");
    let error = client
        .fight_comparison(Input::Data(lion_tiger()))
        .await
        .expect_err("probability 3 is out of range");
    match &error {
        ClientError::InvalidOutput { expected, message } => {
            assert_eq!(expected, "`fightResponse`");
            assert!(message.starts_with("/probability: 3"), "{message}");
        }
        other => panic!("expected an invalid output, got {other:?}"),
    }
}

/// The agents above, as a client that reads their 0.3 card sees them: one JSON-RPC 0.3
/// interface, called through the 0.3 mapping (`message/send`, `message/stream`, `tasks/get`).
mod v0_3_only {
    use super::*;

    fn as_0_3(base: &str) -> Connect {
        // With `A2A-Version: 0.3` the server gives its 0.3 card, which lists the 0.3 interface
        // alone.
        Connect::new(base).header("A2A-Version", "0.3")
    }

    #[tokio::test]
    async fn a_0_3_agent_answers_a_blocking_call_and_refuses_bad_input_with_pointers() {
        let server = serve(Server::new(FightClub)).await;
        let agent = as_0_3(&server.base).discover().await.expect("the 0.3 card");
        assert!(
            agent.card().interfaces.iter().all(|i| i.is_pre_1_0()),
            "{:?}",
            agent.card().interfaces
        );
        let client = FightClubClient::connect_with(as_0_3(&server.base))
            .await
            .expect("the 0.3 card declares the skill with the same schema");
        let answer = client
            .fight_comparison(Input::Data(lion_tiger()))
            .await
            .expect("a verdict over 0.3");
        let Output::Data(verdict) = answer else {
            panic!("data in, data out: {answer:?}")
        };
        assert_eq!(verdict.winner, "Tiger");
        assert_eq!(verdict.probability, 0.56);

        // The agent's own refusal of data that breaks the schema (sent without the local
        // check), with its JSON pointer, comes back through the 0.3 error.
        let part = a2a::Part::data(serde_json::json!({"a": "Lion", "b": 7}))
            .with_media_type("application/json;schema=fightComparison");
        let message = a2a::Message::new(a2a::Role::User, vec![part]);
        match agent.send_message(message, false).await {
            Err(ClientError::Rejected {
                code, violations, ..
            }) => {
                assert_eq!(code, -32602);
                assert_eq!(violations[0].instance_path, "/b", "{violations:?}");
            }
            other => panic!("the agent's refusal, not {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_0_3_stream_gives_typed_items_and_takes_the_answer() {
        let server = serve(planner(5)).await;
        let client = TripPlannerClient::connect_with(as_0_3(&server.base))
            .await
            .expect("connect over 0.3");
        let mut run = client
            .plan_trip(TripRequest {
                destination: "Lisbon".into(),
                days: 2,
                start_date: None,
            })
            .await
            .expect("a stream");
        let (mut items, mut questions) = (Vec::new(), Vec::new());
        while let Some(event) = run.next().await {
            match event.expect("no error") {
                TypedEvent::Item(day) => items.push(day),
                TypedEvent::Question { text, .. } => {
                    questions.push(text);
                    run.answer("2026-12-30").await.expect("the answer is sent");
                }
                _ => {}
            }
        }
        assert_eq!(questions, ["Which day do you leave? (YYYY-MM-DD)"]);
        let dates: Vec<&str> = items.iter().map(|d| d.date.as_str()).collect();
        assert_eq!(dates, ["2026-12-30", "2026-12-31"]);
    }
}

#[tokio::test]
async fn the_typed_client_works_over_grpc_with_integers_read_back_from_doubles() {
    // Protobuf carries data as `Struct`s (numbers are doubles): `day` (an integer) comes back
    // as a whole double and is read into its integer field.
    let server = serve(planner(5).grpc(true)).await;
    let client = TripPlannerClient::connect_with(
        Connect::new(server.base.as_str()).prefer_bindings(["GRPC"]),
    )
    .await
    .expect("connect over gRPC");
    let mut run = client
        .plan_trip(TripRequest {
            destination: "Lisbon".into(),
            days: 2,
            start_date: Some("2026-12-01".into()),
        })
        .await
        .expect("a stream over gRPC");
    let mut items = Vec::new();
    while let Some(event) = run.next().await {
        if let TypedEvent::Item(day) = event.expect("no error") {
            items.push(day);
        }
    }
    let days: Vec<u8> = items.iter().map(|d| d.day).collect();
    assert_eq!(days, [1, 2]);

    let fights = serve(Server::new(FightClub).grpc(true)).await;
    let client =
        FightClubClient::connect_with(Connect::new(fights.base.as_str()).prefer_bindings(["GRPC"]))
            .await
            .expect("connect over gRPC");
    let Output::Data(verdict) = client
        .fight_comparison(Input::Data(lion_tiger()))
        .await
        .expect("a verdict over gRPC")
    else {
        panic!("data in, data out")
    };
    assert_eq!(verdict.winner, "Tiger");
}
