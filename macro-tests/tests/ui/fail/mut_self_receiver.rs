use a2a_card::{agent, skill};

pub struct Judge {
    fights: usize,
}

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a")]
impl Judge {
    /// Names the winner of a fight, counting the fights.
    #[skill]
    fn winner(&mut self, fight: String) -> String {
        self.fights += 1;
        fight
    }
}

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
}
