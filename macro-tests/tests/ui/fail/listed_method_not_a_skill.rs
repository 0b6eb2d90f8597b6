use a2a_card::{agent, skill};

pub struct Judge;

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a", skills(Self::rematch))]
impl Judge {
    /// Names the winner of a fight.
    #[skill]
    fn winner(&self, fight: String) -> String {
        fight
    }
}

impl Judge {
    /// Orders a rematch (but is not marked as a skill).
    fn rematch(&self, fight: String) -> String {
        fight
    }
}

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
}
