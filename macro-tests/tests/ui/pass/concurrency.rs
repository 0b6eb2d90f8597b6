//! `concurrency = N` on a skill: in its declaration (the server limits it), not on the card.
use a2a_card::{Agent, agent, skill};

pub struct Kitchen;

/// Cooks.
#[agent(url = "https://kitchen.example.com/a2a")]
impl Kitchen {
    /// Bakes a cake, two at a time.
    #[skill(concurrency = 2)]
    fn bake(&self, cake: String) -> String {
        cake
    }

    /// Pours tea, as many as asked.
    #[skill]
    fn pour(&self, tea: String) -> String {
        tea
    }
}

fn main() {
    assert_eq!(Kitchen::SKILLS[0].concurrency, Some(2));
    assert_eq!(Kitchen::SKILLS[1].concurrency, None);
    let card = serde_json::to_value(Kitchen::card().unwrap()).unwrap();
    assert!(!card.to_string().contains("concurrency"), "{card}");
}
