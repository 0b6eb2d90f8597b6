use a2a_card::{agent, skill};

pub struct Judge;

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a")]
impl Judge {
    /// Draws the winner of a fight.
    #[skill(output_modes("image/png", "image / svg xml"))]
    fn portrait(&self, fight: String) -> String {
        fight
    }
}

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
}
