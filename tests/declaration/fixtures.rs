//! Real cards and the extension's example: every one parses, re-renders in its own profile
//! without losing a field, and the linter finds what is wrong with it and nothing that is right.

use crate::support;

use a2a_card::lint::{Rule, lint_json};
use a2a_card::wire::Profile;
use a2a_card::{AgentCard, IO_SCHEMAS_EXTENSION_URI, SecurityScheme};
use serde_json::Value;
use support::*;

#[test]
fn every_fixture_parses_strictly() {
    for (name, doc) in card_fixtures() {
        if let Err(e) = AgentCard::from_json(&doc) {
            panic!("{name}: {e}");
        }
    }
}

#[test]
fn re_rendering_in_the_own_profile_loses_no_field() {
    for (name, doc) in card_fixtures() {
        let profile = Profile::detect(&doc);
        let card = AgentCard::from_json(&doc).unwrap();
        let out = card.to_json(profile);
        assert_eq!(
            missing_from(&doc, &out, ""),
            Vec::<String>::new(),
            "{name} ({profile})"
        );
        // Cards already in a canonical profile come back key for key; the 0.2 card gains only
        // the 0.3 default transport.
        if name == "orchestrator-v0.2.json" {
            let mut expected = doc.clone();
            expected["preferredTransport"] = "JSONRPC".into();
            assert_eq!(out, expected, "{name}");
        } else {
            assert_eq!(out, doc, "{name} ({profile})");
        }
    }
}

#[test]
fn fixtures_survive_every_profile() {
    for (name, doc) in card_fixtures() {
        let card = AgentCard::from_json(&doc).unwrap();
        for profile in [Profile::V1, Profile::Compat] {
            let mut back = AgentCard::from_json(&card.to_json(profile)).unwrap();
            // 1.0 has no stateTransitionHistory.
            if profile == Profile::V1 {
                back.capabilities.state_transition_history =
                    card.capabilities.state_transition_history;
            }
            assert_eq!(back, card, "{name} through {profile}");
        }
    }
}

#[test]
fn the_0_3_sample_maps_onto_1_0_like_the_1_0_sample() {
    // The spec's 0.3 and 1.0 samples describe the same agent; read into the model they agree
    // on everything but the protocol version of the interfaces, the transport of the first
    // interface and the 0.3-only stateTransitionHistory.
    let old = AgentCard::from_json(&json("fixtures/cards/spec-v0.3-sample.json")).unwrap();
    let new = AgentCard::from_json(&json("fixtures/cards/spec-v1.0-sample.json")).unwrap();
    assert_eq!(old.skills, new.skills);
    assert_eq!(old.security_requirements, new.security_requirements);
    assert_eq!(old.security_schemes, new.security_schemes);
    assert!(matches!(
        new.security_schemes["google"],
        SecurityScheme::OpenIdConnect(_)
    ));
    assert_eq!(old.capabilities.extended_agent_card, Some(true));
    assert_eq!(old.signatures, new.signatures);
    let urls = |c: &AgentCard| {
        c.interfaces
            .iter()
            .map(|i| (i.url.clone(), i.protocol_binding.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(urls(&old), urls(&new));
    assert_eq!(old.interfaces[0].protocol_version.as_deref(), Some("0.2.9"));
}

#[test]
fn the_extension_example_round_trips_with_its_schemas() {
    let doc = json("fixtures/io-schemas-extension/agent-card-partial.json");
    let card = AgentCard::from_json(&doc).unwrap();
    assert_eq!(card.schemas.len(), 2);
    assert_eq!(
        Value::Object(card.schemas.clone().into_iter().collect()),
        doc["schemas"]
    );
    assert!(
        card.capabilities
            .extension(IO_SCHEMAS_EXTENSION_URI)
            .is_some()
    );
    for profile in Profile::ALL {
        let out = card.to_json(profile);
        assert_eq!(out["schemas"], doc["schemas"], "{profile}");
        assert_eq!(
            out["capabilities"]["extensions"], doc["capabilities"]["extensions"],
            "{profile}"
        );
        assert_eq!(out["skills"], doc["skills"], "{profile}");
        assert_eq!(AgentCard::from_json(&out).unwrap(), card, "{profile}");
    }
}

/// `(code, pointer)` of every finding.
fn findings(doc: &Value) -> Vec<(&'static str, String)> {
    let mut out: Vec<_> = lint_json(doc)
        .into_iter()
        .map(|f| (f.rule.code(), f.pointer))
        .collect();
    out.sort();
    out
}

fn expect(list: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    let mut out: Vec<_> = list.iter().map(|(c, p)| (*c, p.to_string())).collect();
    out.sort();
    out
}

#[test]
fn the_linter_finds_what_is_wrong_with_the_fixtures_and_nothing_that_is_right() {
    // The official samples follow every rule.
    assert_eq!(
        findings(&json("fixtures/cards/spec-v0.3-sample.json")),
        vec![]
    );
    assert_eq!(
        findings(&json("fixtures/cards/spec-v1.0-sample.json")),
        vec![]
    );
    // The currency agent: 0.2-era `text` modes (a warning: official schemas accept them), a snake_case id, localhost, an http provider
    // link, vague descriptions and an undeclared pushNotifications.
    assert_eq!(
        findings(&json("fixtures/cards/currency-agent-v0.3.json")),
        expect(&[
            ("mode-shorthand", "/defaultInputModes/0"),
            ("mode-shorthand", "/defaultOutputModes/0"),
            ("description-vague", "/description"),
            ("link-insecure", "/provider/url"),
            ("url-localhost", "/url"),
            ("capability-undeclared", "/capabilities/pushNotifications"),
            ("skill-id-not-kebab-case", "/skills/0/id"),
            ("skill-description-vague", "/skills/0/description"),
        ])
    );
    // The same agent as a 1.0 card: the same mistakes, at 1.0 pointers.
    assert_eq!(
        findings(&json("fixtures/cards/skills-agent-v1.0.json")),
        expect(&[
            ("mode-shorthand", "/defaultInputModes/0"),
            ("mode-shorthand", "/defaultOutputModes/0"),
            ("description-vague", "/description"),
            ("link-insecure", "/provider/url"),
            ("url-localhost", "/supportedInterfaces/0/url"),
            ("url-localhost", "/supportedInterfaces/1/url"),
            ("capability-undeclared", "/capabilities/pushNotifications"),
            ("skill-id-not-kebab-case", "/skills/0/id"),
            ("skill-description-vague", "/skills/0/description"),
        ])
    );
    // The 0.2 orchestrator: `text` modes, localhost, and no protocol version.
    assert_eq!(
        findings(&json("fixtures/cards/orchestrator-v0.2.json")),
        expect(&[
            ("mode-shorthand", "/defaultInputModes/0"),
            ("mode-shorthand", "/defaultOutputModes/0"),
            ("url-localhost", "/url"),
            ("protocol-version-missing", "/protocolVersion"),
        ])
    );
    // The extension's partial card has only what the extension is about; everything it leaves
    // out is reported, and nothing about its schemas, modes or extension entry.
    let partial = findings(&json(
        "fixtures/io-schemas-extension/agent-card-partial.json",
    ));
    assert!(
        partial
            .iter()
            .all(|(code, _)| !code.starts_with("schema") && *code != "mode-invalid"),
        "{partial:?}"
    );
    for code in [
        "name-missing",
        "description-missing",
        "version-missing",
        "interface-missing",
        "default-modes-missing",
    ] {
        assert!(
            partial.iter().any(|(c, _)| *c == code),
            "{code} in {partial:?}"
        );
    }
}

#[test]
fn schema_rules_fire_on_a_broken_extension_card() {
    let mut doc = json("fixtures/io-schemas-extension/agent-card-partial.json");
    doc["capabilities"]["extensions"] = Value::Array(vec![]);
    doc["skills"][0]["inputModes"] = serde_json::json!(["application/json;schema=fightComparisn"]);
    doc["schemas"]["fightResponse"]["type"] = serde_json::json!(42);
    let got = lint_json(&doc);
    let has =
        |rule: Rule, pointer: &str| got.iter().any(|f| f.rule == rule && f.pointer == pointer);
    assert!(
        has(Rule::SchemaExtensionMissing, "/capabilities/extensions"),
        "{got:#?}"
    );
    assert!(
        has(Rule::SchemaUndeclared, "/skills/0/inputModes/0"),
        "{got:#?}"
    );
    assert!(
        has(Rule::SchemaInvalid, "/schemas/fightResponse"),
        "{got:#?}"
    );
    assert!(
        has(Rule::SchemaUnused, "/schemas/fightComparison"),
        "{got:#?}"
    );
    assert!(
        has(Rule::SchemaTextFallback, "/skills/0/inputModes"),
        "{got:#?}"
    );
}

#[test]
fn pointers_follow_the_document_not_the_model() {
    // The main interface is not repeated in additionalInterfaces, so the model's index 1 is the
    // document's index 0.
    let mut doc = json("fixtures/cards/currency-agent-v0.3.json");
    doc["additionalInterfaces"] =
        serde_json::json!([{"url": "http://fx.example.com/grpc", "transport": "GRPCC", "x": 1}]);
    let got = findings(&doc);
    assert!(
        got.contains(&("url-insecure", "/additionalInterfaces/0/url".into())),
        "{got:?}"
    );
    assert!(
        got.contains(&(
            "interface-binding-unknown",
            "/additionalInterfaces/0/transport".into()
        )),
        "{got:?}"
    );
    assert!(
        got.contains(&("unknown-field", "/additionalInterfaces/0/x".into())),
        "{got:?}"
    );
    // Unknown fields of the main interface's repetition are reported there.
    let mut repeated = doc.clone();
    repeated["additionalInterfaces"] =
        serde_json::json!([{"url": "http://localhost:10999", "transport": "JSONRPC", "y": 2}]);
    assert!(findings(&repeated).contains(&("unknown-field", "/additionalInterfaces/0/y".into())));
    // With no top-level url, the first interface is additionalInterfaces/0, not /url.
    doc.as_object_mut().unwrap().remove("url");
    let got = findings(&doc);
    assert!(
        got.contains(&("url-insecure", "/additionalInterfaces/0/url".into())),
        "{got:?}"
    );
    assert!(!got.iter().any(|(_, p)| p == "/url"), "{got:?}");
}
