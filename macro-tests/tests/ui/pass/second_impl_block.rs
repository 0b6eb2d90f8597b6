//! A method of another impl block, listed with `skills(Self::method)`.

use a2a_card::{Agent, agent, skill};

pub struct Judge;

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a", skills(Self::rematch))]
impl Judge {
    /// Names the winner of a fight.
    #[skill]
    fn winner(&self, fight: String) -> String {
        fight
    }
}

impl Judge {
    /// Orders a rematch.
    #[skill(id = "order-rematch")]
    async fn rematch(&self, fight: String) -> String {
        format!("rematch: {fight}")
    }
}

fn main() {
    let card = Judge::card().unwrap();
    let ids: Vec<&str> = card.skills.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["winner", "order-rematch"]);
    assert_eq!(card.skills[1].name, "Rematch");
    assert_eq!(card.skills[1].description, "Orders a rematch.");
}
