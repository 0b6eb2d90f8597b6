use a2a_card::{agent, skill};

const DESCRIPTION: &str = "  ";

pub struct Judge;

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a")]
impl Judge {
    #[skill(description = DESCRIPTION)]
    fn winner(&self, fight: String) -> String {
        fight
    }
}

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
}
