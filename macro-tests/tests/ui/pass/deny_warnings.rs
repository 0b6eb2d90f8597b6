#![deny(warnings)]
#![deny(unused_qualifications, unreachable_pub, missing_docs, unsafe_code)]
//! The generated code raises no warning, even under strict lints.

use a2a_card::{Agent, Input, Output, Schema, SkillContext, agent, skill};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Two contestants.
#[derive(Deserialize, JsonSchema, Schema)]
struct Fight {
    a: String,
    b: String,
}

/// Who won.
#[derive(Serialize, JsonSchema, Schema)]
#[schema(inline)]
struct Verdict {
    winner: String,
}

mod extra {
    use a2a_card::skill;

    /// Predicts a draw.
    #[skill]
    pub(crate) fn draw(fight: String) -> &'static str {
        let _ = fight;
        "draw"
    }
}

fn schemes() -> Vec<(&'static str, a2a_card::SecurityScheme)> {
    vec![("bearer", a2a_card::SecurityScheme::bearer(None))]
}

/// The judge.
struct Judge;

/// Judges fights.
#[agent(
    url(env = "A2A_CARD_UI_TEST_UNSET_URL", default = "http://127.0.0.1:8080"),
    security_schemes = schemes,
    security(bearer),
    skills(extra::draw, Self::rematch),
    default_input_modes("text/plain"),
    provider(organization = "Example", url = "https://example.com"),
    documentation_url = "https://example.com/docs",
    streaming = false
)]
impl Judge {
    /// Names the winner of a fight.
    #[skill(tags("fight"), examples("Lion vs Tiger"))]
    async fn winner(&self, fight: Input<Fight>, _context: SkillContext) -> Output<Verdict> {
        match fight {
            Input::Text(t) => Output::Text(t),
            Input::Data(f) => Output::Data(Verdict {
                winner: f.a.max(f.b),
            }),
        }
    }

    /// Explains the last fight.
    #[skill]
    fn explain(text: String) -> Result<String, String> {
        Ok(text)
    }
}

impl Judge {
    /// Orders a rematch.
    #[skill]
    fn rematch(&self, text: String) -> String {
        text
    }
}

fn main() {
    let card = Judge::card().unwrap();
    assert_eq!(card.skills.len(), 4);
    assert_eq!(
        card.skills[0].output_modes,
        ["text/plain", "application/json;schema=verdict"]
    );
}
