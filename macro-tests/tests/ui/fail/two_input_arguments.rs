use a2a_card::{agent, skill};

pub struct Judge;

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a")]
impl Judge {
    /// Names the winner of a fight between two contestants.
    #[skill]
    fn winner(&self, a: String, b: String) -> String {
        a.max(b)
    }
}

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
}
