use a2a_card::agent;

mod winner {
    /// Names the winner of a fight.
    #[a2a_card::skill]
    pub fn judge(fight: String) -> String {
        fight
    }
}

mod explanation {
    /// Explains who would win a fight.
    #[a2a_card::skill(id = "judge")]
    pub fn explain(fight: String) -> String {
        fight
    }
}

/// Judges fights.
#[agent(
    url = "https://judge.example.com/a2a",
    skills(winner::judge, explanation::explain)
)]
pub struct Judge;

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
}
