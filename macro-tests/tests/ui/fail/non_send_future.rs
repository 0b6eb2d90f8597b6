use std::rc::Rc;

use a2a_card::{agent, skill};

pub struct Judge;

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a")]
impl Judge {
    /// Names the winner of a fight.
    #[skill]
    async fn winner(&self, fight: String) -> String {
        let shared = Rc::new(fight.len());
        std::future::ready(()).await;
        shared.to_string()
    }
}

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
}
