//! Every input shape: a schema type, `String`, `Input<T>`, each with or without a
//! `SkillContext`, and a context alone.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use a2a_card::__private::{CallInput, SkillCall};
use a2a_card::{Agent, Input, Reply, Schema, SkillContext, agent, skill};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::IntoDeserializer;
use serde::de::value::{Error, MapDeserializer};

/// Two contestants.
#[derive(Deserialize, JsonSchema, Schema)]
pub struct Fight {
    pub a: String,
    pub b: String,
}

/// Two contestants, again.
#[derive(Deserialize, JsonSchema, Schema)]
pub struct Rematch {
    pub a: String,
    pub b: String,
}

/// A fight with rounds.
#[derive(Deserialize, JsonSchema, Schema)]
#[schema(name = "bout")]
pub struct Bout {
    pub rounds: u8,
}

/// A fight already happened.
#[derive(Deserialize, JsonSchema, Schema)]
pub struct Replay {
    pub id: u32,
}

pub struct Judge;

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a")]
impl Judge {
    /// Takes data only.
    #[skill]
    fn schema_only(&self, fight: Fight) -> String {
        fight.a + &fight.b
    }

    /// Takes text only.
    #[skill]
    fn text_only(&self, text: String) -> String {
        text
    }

    /// Takes text or data.
    #[skill]
    fn either(&self, input: Input<Rematch>) -> String {
        match input {
            Input::Text(t) => t,
            Input::Data(r) => r.a + &r.b,
        }
    }

    /// Takes data, and where it is called.
    #[skill]
    async fn schema_with_context(&self, context: SkillContext, bout: Bout) -> String {
        format!("{:?}:{}", context.task_id, bout.rounds)
    }

    /// Takes text, and where it is called.
    #[skill]
    fn text_with_context(&self, text: String, context: SkillContext) -> String {
        format!("{:?}:{text}", context.context_id)
    }

    /// Takes either, and where it is called.
    #[skill]
    fn either_with_context(&self, input: Input<Replay>, _context: SkillContext) -> String {
        match input {
            Input::Text(t) => t,
            Input::Data(r) => r.id.to_string(),
        }
    }

    /// Takes nothing but where it is called.
    #[skill]
    fn context_only(&self, context: SkillContext) -> String {
        context.task_id.unwrap_or_default()
    }
}

fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

/// Structured input with these fields (built with serde alone).
fn data<V: IntoDeserializer<'static, Error>>(fields: Vec<(&'static str, V)>) -> CallInput {
    let fields = MapDeserializer::<_, Error>::new(fields.into_iter());
    CallInput::Data(Deserialize::deserialize(fields).unwrap())
}

fn call(index: usize, input: CallInput) -> Reply {
    let context = SkillContext::new(Some("t1".into()), Some("c1".into()), Default::default());
    block_on(Judge.call_skill(index, SkillCall::new(input, context))).unwrap()
}

fn main() {
    let card = Judge::card().unwrap();
    let modes = |i: usize| card.skills[i].input_modes.clone();
    assert_eq!(modes(0), ["application/json;schema=fight"]);
    assert_eq!(modes(1), ["text/plain"]);
    assert_eq!(modes(2), ["text/plain", "application/json;schema=rematch"]);
    assert_eq!(modes(3), ["application/json;schema=bout"]);
    assert_eq!(modes(4), ["text/plain"]);
    assert_eq!(modes(5), ["text/plain", "application/json;schema=replay"]);
    assert!(modes(6).is_empty());
    for skill in &card.skills {
        assert_eq!(skill.output_modes, ["text/plain"]);
    }
    let schemas: Vec<&str> = card.schemas.keys().map(String::as_str).collect();
    assert_eq!(schemas, ["fight", "rematch", "bout", "replay"]);

    let text = |t: &str| CallInput::Text(t.into());
    let reply = |t: &str| Reply::Text(t.into());
    assert_eq!(call(0, data(vec![("a", "x"), ("b", "y")])), reply("xy"));
    assert_eq!(call(1, text("hi")), reply("hi"));
    assert_eq!(call(2, text("hi")), reply("hi"));
    assert_eq!(
        call(3, data(vec![("rounds", 3u8)])),
        reply("Some(\"t1\"):3")
    );
    assert_eq!(call(4, text("hi")), reply("Some(\"c1\"):hi"));
    assert_eq!(call(5, data(vec![("id", 7u32)])), reply("7"));
    assert_eq!(call(6, CallInput::None), reply("t1"));
}
