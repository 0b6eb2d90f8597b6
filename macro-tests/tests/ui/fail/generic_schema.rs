use a2a_card::{Schema, agent, skill};
use schemars::JsonSchema;
use serde::Deserialize;

/// Two contestants of any kind.
#[derive(Deserialize, JsonSchema, Schema)]
pub struct Fight<T> {
    pub a: T,
    pub b: T,
}

pub struct Judge;

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a")]
impl Judge {
    /// Names the winner of a fight.
    #[skill]
    fn winner(&self, fight: Fight<String>) -> String {
        fight.a
    }
}

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
}
