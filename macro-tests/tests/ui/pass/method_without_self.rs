//! An associated function without `self` inside the `#[agent]` block is a skill too.

use a2a_card::{Agent, agent, skill};

pub struct Shouter;

/// Shouts.
#[agent(url = "https://shout.example.com/a2a")]
impl Shouter {
    /// Repeats the text in capitals.
    #[skill]
    fn shout(text: String) -> String {
        text.to_uppercase()
    }

    /// Repeats the text in capitals, later.
    #[skill]
    async fn shout_later(text: String) -> String {
        Self::shout(text)
    }
}

fn main() {
    let card = Shouter::card().unwrap();
    assert_eq!(card.skills.len(), 2);
    assert_eq!(card.skills[0].id, "shout");
    assert_eq!(card.skills[1].id, "shout-later");
    assert_eq!(card.skills[0].input_modes, ["text/plain"]);
    assert_eq!(Shouter::shout("a".into()), "A");
}
