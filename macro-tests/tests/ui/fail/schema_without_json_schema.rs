use a2a_card::{Schema, agent, skill};
use serde::Deserialize;

/// Two contestants.
#[derive(Deserialize, Schema)]
pub struct Pair {
    pub a: String,
    pub b: String,
}

pub struct Judge;

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a")]
impl Judge {
    /// Names the winner of a pair.
    #[skill]
    fn winner(&self, pair: Pair) -> String {
        pair.a
    }
}

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
}
