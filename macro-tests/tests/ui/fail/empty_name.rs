use a2a_card::{agent, skill};

pub struct Judge;

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a")]
impl Judge {
    /// Names the winner of a fight.
    #[skill(name = " ")]
    fn winner(&self, fight: String) -> String {
        fight
    }
}

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
}
