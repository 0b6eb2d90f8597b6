//! The official JSON schemas judge the shape of what the crate writes: `v1` output against the
//! A2A 1.0 conformance schema (apart from the extension's root `schemas` key), `v0.3` output
//! against the A2A 0.3 schema.

use crate::support;

use a2a_card::wire::{Profile, RenderOptions, SchemaPlacement};
use a2a_card::{AgentCard, AgentSkill, IO_SCHEMAS_EXTENSION_URI};
use serde_json::{Value, json};
use support::*;

use crate::card_example;

/// The cards the crate itself makes: the CodeAssist Pro example and a card using the schemas
/// extension.
fn built_cards() -> Vec<(&'static str, AgentCard)> {
    let fight = AgentCard::builder(
        "Fight Judge",
        "Decides who would win a hypothetical fight between two contestants, with a probability and reasons.",
        "1.0.0",
    )
    .jsonrpc("https://fights.example.com/a2a")
    .streaming(false)
    .push_notifications(false)
    .schema("fightComparison", json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}))
    .skill(
        AgentSkill::builder("fight-comparison", "Fight Comparison", "Compares two named contestants and names the likely winner.")
            .tags(["fight"])
            .example("{\"a\": \"Lion\", \"b\": \"Tiger\"}")
            .input_mode("text/plain")
            .input_schema("fightComparison"),
    )
    .build()
    .unwrap();
    vec![
        ("code-assist-pro", card_example::code_assist_pro()),
        ("fight-judge", fight),
    ]
}

fn without_root_schemas(mut doc: Value) -> Value {
    doc.as_object_mut().unwrap().remove("schemas");
    doc
}

#[test]
fn v1_output_validates_against_the_official_1_0_schema() {
    let validator = official_validator("a2a-v1.0.schema.json", "Agent Card");
    for (name, card) in built_cards() {
        let doc = without_root_schemas(card.to_json(Profile::V1));
        assert_eq!(violations(&validator, &doc), Vec::<String>::new(), "{name}");
        // The strict placement needs no stripping at all.
        let strict = card.to_json_with(
            &RenderOptions::new(Profile::V1).schemas(SchemaPlacement::ExtensionParams),
        );
        assert_eq!(
            violations(&validator, &strict),
            Vec::<String>::new(),
            "{name} (schemas in params)"
        );
    }
    for (name, doc) in card_fixtures() {
        let card = AgentCard::from_json(&doc).unwrap();
        let v1 = card.to_json(Profile::V1);
        assert_eq!(
            violations(&validator, &v1),
            Vec::<String>::new(),
            "{name} rendered as v1"
        );
    }
}

#[test]
fn the_1_0_schema_is_a_real_judge() {
    // The validator rejects what it should, so the passes above mean something.
    let validator = official_validator("a2a-v1.0.schema.json", "Agent Card");
    let (_, card) = built_cards().remove(1);
    assert!(
        !violations(&validator, &card.to_json(Profile::V1)).is_empty(),
        "root `schemas` is unknown to 1.0"
    );
    assert!(
        !violations(&validator, &card.to_json(Profile::V0_3)).is_empty(),
        "0.3 fields are unknown to 1.0"
    );
    let mut nested = without_root_schemas(card.to_json(Profile::V1));
    nested["skills"][0]["inputMode"] = json!("text/plain");
    let found = violations(&validator, &nested);
    assert!(
        found.iter().any(|v| v.starts_with("/skills/0")),
        "{found:?}"
    );
}

#[test]
fn v0_3_output_validates_against_the_official_0_3_schema() {
    let validator = official_validator("a2a-v0.3.0.schema.json", "AgentCard");
    for (name, card) in built_cards() {
        let doc = card.to_json(Profile::V0_3);
        assert_eq!(violations(&validator, &doc), Vec::<String>::new(), "{name}");
    }
    for (name, doc) in card_fixtures() {
        let card = AgentCard::from_json(&doc).unwrap();
        let v03 = card.to_json(Profile::V0_3);
        let found = violations(&validator, &v03);
        if name == "orchestrator-v0.2.json" {
            // A 0.2 card never says its protocol version; 0.3 requires it, and the crate does not
            // invent one. The linter reports the same thing.
            assert_eq!(found.len(), 1, "{found:?}");
            assert!(found[0].contains("protocolVersion"), "{found:?}");
        } else {
            assert_eq!(found, Vec::<String>::new(), "{name} rendered as v0.3");
        }
    }
}

#[test]
fn compat_output_carries_both_shapes() {
    let v1 = official_validator("a2a-v1.0.schema.json", "Agent Card");
    let v03 = official_validator("a2a-v0.3.0.schema.json", "AgentCard");
    for (name, card) in built_cards() {
        let compat = card.to_json(Profile::Compat);
        // Valid 0.3 as it stands (0.3 allows extra fields).
        assert_eq!(violations(&v03, &compat), Vec::<String>::new(), "{name}");
        // Its 1.0 half, alone, is valid 1.0.
        let mut modern = without_root_schemas(compat.clone());
        let obj = modern.as_object_mut().unwrap();
        for legacy in [
            "url",
            "preferredTransport",
            "protocolVersion",
            "additionalInterfaces",
            "security",
            "supportsAuthenticatedExtendedCard",
        ] {
            obj.remove(legacy);
        }
        obj["capabilities"]
            .as_object_mut()
            .unwrap()
            .remove("stateTransitionHistory");
        for scheme in obj
            .get_mut("securitySchemes")
            .and_then(Value::as_object_mut)
            .into_iter()
            .flat_map(|m| m.values_mut())
        {
            let s = scheme.as_object_mut().unwrap();
            s.retain(|k, _| k.ends_with("SecurityScheme"));
        }
        for skill in obj["skills"].as_array_mut().unwrap() {
            skill.as_object_mut().unwrap().remove("security");
        }
        assert_eq!(violations(&v1, &modern), Vec::<String>::new(), "{name}");
        assert_eq!(
            AgentCard::from_json(&compat).unwrap(),
            card,
            "{name}: compat reads back to the same card"
        );
    }
}

#[test]
fn the_extension_entry_is_declared_for_schema_modes() {
    let (_, card) = built_cards().remove(1);
    let doc = card.to_json(Profile::V1);
    assert_eq!(
        doc["capabilities"]["extensions"][0]["uri"],
        IO_SCHEMAS_EXTENSION_URI
    );
    assert_eq!(doc["schemas"]["fightComparison"]["type"], "object");
}
