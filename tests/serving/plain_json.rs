//! Plain JSON in: a data part without a schema media type (plain `application/json`, or none)
//! reaches a skill that takes plain JSON (a `serde_json::Value` argument, or a schema type with
//! `input_modes("application/json")`), validated against its schema when it has one; the card
//! shows `application/json`; and the caller's side (`a2a_card::client`) sends data to such a
//! skill in the shape the server routes.

use crate::fight_club::agent as fight_club;
use crate::support;

use a2a_card::__private::CallInput;
use a2a_card::client::{Content, Payload, RemoteAgent};
use a2a_card::dispatch::{Decision, DispatchError, Dispatcher};
use a2a_card::server::Server;
use a2a_card::{Agent, Schema, agent, skill};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// A note.
#[derive(Deserialize, JsonSchema, Schema)]
#[serde(deny_unknown_fields)]
pub struct Note {
    /// Its title.
    pub title: String,
}

pub struct Store;

/// Stores JSON documents of any shape and answers questions about what it stores.
#[agent(url = "http://127.0.0.1:9000/a2a")]
impl Store {
    /// Answers a question about the stored documents, in plain text.
    #[skill]
    fn ask(&self, question: String) -> String {
        format!("asked: {question}")
    }

    /// Stores a JSON document of any shape and says which keys it has, sorted.
    #[skill]
    fn store(&self, document: Value) -> String {
        // Sorted: a client may carry an object as a map of its own (the official one does).
        let mut keys: Vec<&str> = document
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        keys.sort_unstable();
        format!("stored: {}", keys.join(","))
    }
}

pub struct Notes;

/// Keeps notes with a title, sent as schema-flagged data or as plain JSON.
#[agent(url = "http://127.0.0.1:9000/a2a")]
impl Notes {
    /// Keeps a note and answers with its title.
    #[skill(input_modes("application/json"))]
    fn keep(&self, note: Note) -> String {
        format!("kept: {}", note.title)
    }
}

fn message(parts: Value) -> Value {
    json!({"role": "ROLE_USER", "messageId": "m1", "parts": parts})
}

fn run(decision: Decision) -> (usize, CallInput) {
    match decision {
        Decision::Run { skill, call } => (skill, call.input),
        other => panic!("expected a run, got: {other:?}"),
    }
}

#[test]
fn the_card_shows_plain_json() {
    let card = Store::card().unwrap();
    assert_eq!(card.skills[1].input_modes, ["application/json"]);
    assert!(card.schemas.is_empty());
    let card = Notes::card().unwrap();
    assert_eq!(
        card.skills[0].input_modes,
        ["application/json;schema=note", "application/json"]
    );
}

#[test]
fn plain_data_reaches_the_skill_that_takes_plain_json() {
    let d = Dispatcher::for_agent::<Store>().unwrap();
    assert_eq!((d.json_skill(), d.text_skill()), (Some(1), Some(0)));
    let data = json!({"any": [1, "shape"]});
    for part in [
        json!({"data": data, "mediaType": "application/json"}),
        json!({"data": data, "mediaType": "Application/JSON; charset=utf-8"}),
        json!({"data": data}),
        // 0.3: `kind: "data"`, the media type (if any) in `metadata.mimeType`.
        json!({"kind": "data", "data": data, "metadata": {"mimeType": "application/json"}}),
        json!({"kind": "data", "data": data}),
    ] {
        assert_eq!(
            run(d.dispatch(message(json!([part])), None)),
            (1, CallInput::Data(data.clone())),
            "{part}"
        );
    }
    // Beside text, the data is the input; text alone goes to the text skill.
    let both = message(json!([{"text": "store this"}, {"data": data}]));
    assert_eq!(run(d.dispatch(both, None)).0, 1);
    let text = message(json!([{"text": "what is stored?"}]));
    assert_eq!(run(d.dispatch(text, None)).0, 0);
    // Data of another media type is not plain JSON: no input for this agent.
    let csv = message(json!([{"data": data, "mediaType": "text/csv"}]));
    assert_eq!(
        d.dispatch(csv, None),
        Decision::Reject(DispatchError::NoInput)
    );
}

#[test]
fn plain_data_is_validated_against_the_schema_of_the_skill_that_takes_it() {
    let d = Dispatcher::for_agent::<Notes>().unwrap();
    assert_eq!(d.json_skill(), Some(0));
    let note = json!({"title": "groceries"});
    for part in [
        json!({"data": note, "mediaType": "application/json"}),
        json!({"data": note}),
        json!({"data": note, "mediaType": "application/json;schema=note"}),
    ] {
        assert_eq!(
            run(d.dispatch(message(json!([part])), None)),
            (0, CallInput::Data(note.clone()))
        );
    }
    let Decision::Reject(DispatchError::InvalidData {
        schema, violations, ..
    }) = d.dispatch(message(json!([{"data": {"titel": "x"}}])), None)
    else {
        panic!("plain data that breaks the schema is invalid data");
    };
    assert_eq!(schema, "note");
    assert!(
        violations.iter().any(|v| v.message.contains("title")),
        "{violations:?}"
    );
}

#[test]
fn an_agent_without_a_plain_json_skill_keeps_the_old_rules() {
    // Plain data is no input for the fight club: the text goes to its text skill.
    let d = Dispatcher::for_agent::<fight_club::FightClub>().unwrap();
    assert_eq!(d.json_skill(), None);
    let m = message(json!([{"data": {"a": "Lion", "b": "Tiger"}}, {"text": "Lion vs Tiger"}]));
    assert_eq!(
        run(d.dispatch(m, None)),
        (0, CallInput::Text("Lion vs Tiger".into()))
    );
}

/// Served, and called with `a2a_card::client`: the client sends the data as plain
/// `application/json` (the skill names no schema), and the server routes it to the skill.
#[tokio::test]
async fn the_client_and_the_server_agree_on_plain_json() {
    let store = support::client::serve(Server::new(Store)).await;
    let remote = RemoteAgent::discover(store.base.as_str()).await.unwrap();
    let document = json!({"b": 1, "a": {"nested": [true]}});
    let sent = remote
        .message("store", Payload::data(document.clone()))
        .unwrap();
    assert_eq!(
        sent.parts[0].media_type.as_deref(),
        Some("application/json")
    );
    let outcome = remote
        .call("store", Payload::data(document))
        .await
        .unwrap()
        .into_result()
        .unwrap();
    let texts: Vec<String> = outcome
        .outputs()
        .into_iter()
        .filter_map(|o| match o.content {
            Content::Text(t) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["stored: a,b"]);

    let notes = support::client::serve(Server::new(Notes)).await;
    let remote = RemoteAgent::discover(notes.base.as_str()).await.unwrap();
    let outcome = remote
        .call("keep", Payload::data(json!({"title": "groceries"})))
        .await
        .unwrap()
        .into_result()
        .unwrap();
    assert!(
        matches!(&outcome.outputs()[0].content, Content::Text(t) if t == "kept: groceries"),
        "{:?}",
        outcome.outputs()
    );
}
