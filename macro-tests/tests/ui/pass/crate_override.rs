//! `crate = "..."`: the macros reach the runtime through a re-exporting module.

mod reexport {
    pub use a2a_card::*;
}

mod judge {
    use crate::reexport::{Input, Schema, agent, skill};
    use schemars::JsonSchema;
    use serde::Deserialize;

    /// Two contestants.
    #[derive(Deserialize, JsonSchema, Schema)]
    #[schema(crate = "crate::reexport")]
    pub struct Fight {
        pub a: String,
        pub b: String,
    }

    /// Predicts a draw.
    #[skill(crate = "crate::reexport")]
    pub fn draw(fight: String) -> String {
        fight
    }

    pub struct Judge;

    /// Judges fights.
    #[agent(
        crate = "crate::reexport",
        url = "https://judge.example.com/a2a",
        skills(draw)
    )]
    impl Judge {
        /// Names the winner of a fight.
        #[skill]
        fn winner(&self, fight: Input<Fight>) -> String {
            match fight {
                Input::Text(t) => t,
                Input::Data(f) => f.a,
            }
        }
    }
}

fn main() {
    use reexport::{Agent, NamedSchema};
    let card = judge::Judge::card().unwrap();
    assert_eq!(judge::Fight::SCHEMA_NAME, "fight");
    assert_eq!(card.skills[0].id, "winner");
    assert_eq!(
        card.skills[0].input_modes,
        ["text/plain", "application/json;schema=fight"]
    );
    assert_eq!(card.skills[1].id, "draw");
}
