//! `#[schema(inline)]` inlines subschemas instead of referencing `$defs`.

use a2a_card::{Agent, NamedSchema, Schema, agent, skill};
use schemars::JsonSchema;
use serde::Deserialize;

/// A contestant.
#[derive(Deserialize, JsonSchema)]
pub struct Contestant {
    pub name: String,
}

/// Two contestants, inlined.
#[derive(Deserialize, JsonSchema, Schema)]
#[schema(inline, name = "fightInline")]
pub struct Fight {
    pub a: Contestant,
    pub b: Contestant,
}

/// Two contestants, by reference.
#[derive(Deserialize, JsonSchema, Schema)]
pub struct Rematch {
    pub a: Contestant,
    pub b: Contestant,
}

pub struct Judge;

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a")]
impl Judge {
    /// Names the winner of a fight.
    #[skill]
    fn winner(&self, fight: Fight) -> String {
        fight.a.name
    }

    /// Names the winner of a rematch.
    #[skill]
    fn rematch(&self, fight: Rematch) -> String {
        fight.b.name
    }
}

fn main() {
    assert_eq!(Fight::SCHEMA_NAME, "fightInline");
    let card = Judge::card().unwrap();
    let inline = &card.schemas["fightInline"];
    assert!(inline.get("$defs").is_none());
    assert_eq!(inline["properties"]["a"]["type"], "object");
    let by_ref = &card.schemas["rematch"];
    assert!(by_ref["$defs"].get("Contestant").is_some());
    assert_eq!(by_ref["properties"]["a"]["$ref"], "#/$defs/Contestant");
}
