use a2a_card::{agent, skill};

pub struct Judge;

/// Judges fights, for known callers.
#[agent(url = "https://judge.example.com/a2a", security_schemes(token = jwt("RS256")))]
impl Judge {
    /// Names the winner.
    #[skill]
    fn winner(&self, fight: String) -> String {
        fight
    }
}

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
}
