//! Names and descriptions: `concat!`, a `const`, a `#[doc = concat!(..)]`, and doc comments
//! whose `# Heading` becomes the name.

use a2a_card::{Agent, agent, skill};

const RANK_DESCRIPTION: &str = "Ranks the contestants from strongest to weakest.";
const AGENT_NAME: &str = "The Judge";

pub struct Judge;

/// Judges fights.
///
/// Fairly.
#[agent(url = "https://judge.example.com/a2a", name = AGENT_NAME)]
impl Judge {
    /// # Who Wins
    ///
    /// Names the winner
    /// of a fight.
    ///
    /// Then explains why.
    #[skill]
    fn winner(&self, fight: String) -> String {
        fight
    }

    #[skill(description = concat!("Names the loser ", "of a fight."))]
    fn loser(&self, fight: String) -> String {
        fight
    }

    #[skill(description = RANK_DESCRIPTION, name = concat!("Rank", "ing"))]
    fn rank(&self, fight: String) -> String {
        fight
    }

    #[doc = concat!("Predicts ", "a draw.")]
    #[skill]
    fn draw(&self, fight: String) -> String {
        fight
    }
}

fn main() {
    let card = Judge::card().unwrap();
    assert_eq!(card.name, "The Judge");
    assert_eq!(card.description, "Judges fights.\n\nFairly.");
    let skill = |id: &str| card.skill(id).unwrap();
    assert_eq!(skill("winner").name, "Who Wins");
    assert_eq!(
        skill("winner").description,
        "Names the winner of a fight.\n\nThen explains why."
    );
    assert_eq!(skill("loser").name, "Loser");
    assert_eq!(skill("loser").description, "Names the loser of a fight.");
    assert_eq!(skill("rank").name, "Ranking");
    assert_eq!(skill("rank").description, RANK_DESCRIPTION);
    assert_eq!(skill("draw").name, "Draw");
    assert_eq!(skill("draw").description.trim(), "Predicts a draw.");
}
