//! The typed client has a method for each skill of the public card, and none for a skill only
//! on the extended card (a client checks the public card, where that skill is not).

use a2a_card::{agent, skill};

pub struct Judge;

/// Judges fights.
#[agent(
    url = "https://judge.example.com/a2a",
    security_schemes(bearer = bearer("JWT")),
    security(bearer),
    extended_agent_card
)]
impl Judge {
    /// Names the winner.
    #[skill]
    fn winner(&self, fight: String) -> String {
        fight
    }

    /// Tells the house odds; only on the extended card.
    #[skill(extended)]
    fn odds(&self, fight: String) -> String {
        fight
    }
}

fn main() {
    let _public = JudgeClient::winner;
    let _extended = JudgeClient::odds;
}
