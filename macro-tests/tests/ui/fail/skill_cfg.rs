use a2a_card::{agent, skill};

struct Judge;

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a")]
impl Judge {
    /// Picks the winner of a fight given in words.
    #[skill]
    fn winner(&self, fight: String) -> String {
        fight
    }

    /// Explains a verdict, in test builds.
    #[cfg(test)]
    #[skill]
    fn explain(&self, verdict: String) -> String {
        verdict
    }
}

fn main() {}
