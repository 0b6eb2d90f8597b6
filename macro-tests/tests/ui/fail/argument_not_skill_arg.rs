use a2a_card::{SkillContext, agent, skill};

pub struct Judge;

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a")]
impl Judge {
    /// Names the winner of fight number `round`.
    #[skill]
    fn winner(&self, round: u32, _context: SkillContext) -> String {
        round.to_string()
    }
}

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
}
