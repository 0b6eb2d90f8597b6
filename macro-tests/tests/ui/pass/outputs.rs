//! Every output shape: a schema type, `String`, `&'static str`, `Output<T>`, and `Result`s.

use a2a_card::{Agent, Output, Schema, agent, skill};
use schemars::JsonSchema;
use serde::Serialize;

/// Who won.
#[derive(Serialize, JsonSchema, Schema)]
pub struct Verdict {
    pub winner: String,
}

pub struct Judge;

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a")]
impl Judge {
    /// Answers with data.
    #[skill]
    fn data(&self, fight: String) -> Verdict {
        Verdict { winner: fight }
    }

    /// Answers with text.
    #[skill]
    fn text(&self, fight: String) -> String {
        fight
    }

    /// Answers with a fixed text.
    #[skill]
    fn fixed(&self, _fight: String) -> &'static str {
        "a draw"
    }

    /// Answers with text or data.
    #[skill]
    async fn either(&self, fight: String) -> Output<Verdict> {
        if fight.is_empty() {
            Output::Text("nobody".into())
        } else {
            Output::Data(Verdict { winner: fight })
        }
    }

    /// Answers with data, or fails.
    #[skill]
    fn data_or_error(&self, fight: String) -> Result<Verdict, String> {
        if fight.is_empty() {
            Err("no fight".into())
        } else {
            Ok(Verdict { winner: fight })
        }
    }

    /// Answers with text, or fails.
    #[skill]
    async fn text_or_error(&self, fight: String) -> Result<String, std::fmt::Error> {
        Ok(fight)
    }
}

fn main() {
    let card = Judge::card().unwrap();
    let modes = |i: usize| card.skills[i].output_modes.clone();
    assert_eq!(modes(0), ["application/json;schema=verdict"]);
    assert_eq!(modes(1), ["text/plain"]);
    assert_eq!(modes(2), ["text/plain"]);
    assert_eq!(modes(3), ["text/plain", "application/json;schema=verdict"]);
    assert_eq!(modes(4), ["application/json;schema=verdict"]);
    assert_eq!(modes(5), ["text/plain"]);
    assert_eq!(card.schemas.len(), 1);
    assert_eq!(
        card.schemas["verdict"]["properties"]["winner"]["type"],
        "string"
    );
}
