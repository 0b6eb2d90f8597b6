use a2a_card::agent;

pub struct Judge;

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a")]
impl Judge {
    /// Names the winner of a fight (but is not marked as a skill).
    pub fn winner(&self, fight: String) -> String {
        fight
    }
}

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
    let _ = Judge.winner(String::new());
}
