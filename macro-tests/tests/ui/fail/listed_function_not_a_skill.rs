use a2a_card::agent;

mod judging {
    /// Names the winner of a fight (but is not marked as a skill).
    pub fn winner(fight: String) -> String {
        fight
    }
}

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a", skills(judging::winner))]
pub struct Judge;

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
    let _ = judging::winner(String::new());
}
