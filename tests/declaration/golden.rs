//! The macros reproduce the input/output schemas extension's own example card: an agent written
//! from its fight-comparison example gives that card's extension entry, schemas and skill, key
//! for key.

use crate::support;

use crate::fight_club::agent as fight_club;

use a2a_card::wire::Profile;
use a2a_card::{Agent, NamedSchema};
use fight_club::{FightClub, FightComparison, FightResponse};
use serde_json::Value;

#[test]
fn the_fight_club_card_is_the_extension_example_key_for_key() {
    let expected = support::json("fixtures/io-schemas-extension/agent-card-partial.json");
    let card = FightClub::card().unwrap_or_else(|e| panic!("{e}"));
    for profile in Profile::ALL {
        let doc = card.to_json(profile);
        assert_eq!(
            doc["capabilities"]["extensions"], expected["capabilities"]["extensions"],
            "{profile}"
        );
        assert_eq!(doc["schemas"], expected["schemas"], "{profile}");
        assert_eq!(doc["skills"], expected["skills"], "{profile}");
    }
    // Keyword order too: the published schemas read like the extension's.
    let text = |v: &Value| serde_json::to_string_pretty(v).unwrap();
    assert_eq!(
        text(&card.to_json(Profile::V1)["schemas"]),
        text(&expected["schemas"])
    );
}

#[test]
fn schema_names_default_to_lower_camel_case() {
    assert_eq!(FightComparison::SCHEMA_NAME, "fightComparison");
    assert_eq!(FightResponse::SCHEMA_NAME, "fightResponse");
}

#[test]
fn the_card_is_built_once_and_passes_the_linter() {
    let first = FightClub::card().unwrap() as *const _;
    let second = FightClub::card().unwrap() as *const _;
    assert_eq!(first, second);
    let card = FightClub::card().unwrap();
    let errors: Vec<_> = a2a_card::lint::lint(card, Profile::V1)
        .into_iter()
        .filter(|f| f.severity == a2a_card::lint::Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(card.name, "Fight Club");
    assert!(card.description.starts_with("Judges hypothetical fights"));
    assert_eq!(card.version, "1.0.0");
    assert_eq!(card.interfaces[0].url, "http://127.0.0.1:8080");
    assert_eq!(
        card.to_json(Profile::V1)["skills"][0]["id"],
        Value::from("fight-comparison")
    );
}
