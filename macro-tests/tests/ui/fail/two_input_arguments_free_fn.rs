use a2a_card::agent;

mod judging {
    use a2a_card::{SkillContext, skill};

    /// Names the winner of a fight between two contestants.
    #[skill]
    pub fn winner(a: String, _context: SkillContext, b: String) -> String {
        a.max(b)
    }
}

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a", skills(judging::winner))]
pub struct Judge;

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
}
