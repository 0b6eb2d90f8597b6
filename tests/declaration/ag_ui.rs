//! The AG-UI capabilities projection (`GET /capabilities`): exact JSON for the fight-club agent
//! (declared with the macros) and the CodeAssist Pro card (built with the builder), each rule of
//! the projection on its own, and the shape of the output against AG-UI 1.0's field list.

use crate::fight_club::agent as fight_club;

use crate::card_example;

use a2a_card::ag_ui::{Capabilities, IDENTITY_TYPE, snapshot, text_parameters};
use a2a_card::wire::{Profile, RenderOptions, SchemaPlacement};
use a2a_card::{Agent, AgentCard, AgentExtension, AgentSkill, IO_SCHEMAS_EXTENSION_URI};
use fight_club::FightClub;
use serde_json::{Value, json};

/// A card with one skill per `(id, input modes, output modes)`, declaring no capability.
fn card_with(skills: &[(&str, &[&str], &[&str])]) -> AgentCard {
    let mut b = AgentCard::builder(
        "Probe",
        "Takes and gives whatever its skills list.",
        "0.1.0",
    )
    .jsonrpc("https://probe.example.com/a2a");
    for (id, inputs, outputs) in skills {
        let mut s = AgentSkill::builder(*id, "Probe Skill", "Does what its modes say.");
        for m in *inputs {
            s = s.input_mode(*m);
        }
        for m in *outputs {
            s = s.output_mode(*m);
        }
        b = b.skill(s);
    }
    b.build_unchecked()
}

#[test]
fn the_fight_club_agent_projects_exactly() {
    let card = FightClub::card().unwrap();
    // The URL may come from FIGHT_CLUB_URL; everything else is fixed by the declaration.
    let url = card.interfaces[0].url.clone();
    let expected = json!({
        "identity": {
            "name": "Fight Club",
            "type": "a2a",
            "description": "Judges hypothetical fights between any two contestants, in plain text or as structured data.",
            "version": "1.0.0"
        },
        "transport": {"streaming": false, "pushNotifications": false},
        "tools": {
            "supported": true,
            "items": [{
                "name": "fight-comparison",
                "description": "Determines who would win in a hypothetical fight between two contestants. Requires a data payload with two fields: \"a\" (first contestant) and \"b\" (second contestant). Returns the winner, probability of victory, and an explanation.",
                "parameters": {
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "properties": {
                        "a": {"description": "The name of the first contestant", "type": "string"},
                        "b": {"description": "The name of the second contestant", "type": "string"}
                    },
                    "required": ["a", "b"],
                    "additionalProperties": false
                }
            }]
        },
        "output": {
            "structuredOutput": true,
            "supportedMimeTypes": ["text/plain", "application/json"]
        },
        "custom": {
            "a2a": {
                "supportedInterfaces": [
                    {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
                ]
            }
        }
    });
    let actual = snapshot(card);
    assert_eq!(actual, expected);
    // Key order too: the answer reads in AG-UI's order.
    assert_eq!(
        serde_json::to_string(&actual).unwrap(),
        serde_json::to_string(&expected).unwrap()
    );
    // The tool's parameters are the card's published schema, verbatim.
    assert_eq!(
        actual["tools"]["items"][0]["parameters"],
        card.schemas["fightComparison"]
    );
}

#[test]
fn the_code_assist_card_projects_exactly() {
    let text = text_parameters();
    let expected = json!({
        "identity": {
            "name": "CodeAssist Pro",
            "type": "a2a",
            "description": "AI-powered code assistant for development teams",
            "version": "2.1.0",
            "provider": "DevTools Inc",
            "documentationUrl": "https://docs.codeassist.example.com",
            "metadata": {"providerUrl": "https://devtools.example.com"}
        },
        "transport": {"streaming": true, "pushNotifications": true},
        "tools": {
            "supported": true,
            "items": [
                {
                    "name": "code-review",
                    "description": "Reviews code for bugs, style issues, and security vulnerabilities",
                    "parameters": text
                },
                {
                    "name": "code-generation",
                    "description": "Generates code from natural language descriptions",
                    "parameters": text
                },
                {
                    "name": "documentation",
                    "description": "Generates documentation for code",
                    "parameters": text
                }
            ]
        },
        "output": {"supportedMimeTypes": ["text/plain", "application/octet-stream"]},
        "multimodal": {"input": {"file": true}},
        "custom": {
            "a2a": {
                "supportedInterfaces": [{
                    "url": "https://codeassist.example.com",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0"
                }]
            }
        }
    });
    assert_eq!(snapshot(&card_example::code_assist_pro()), expected);
    assert_eq!(
        text,
        json!({
            "type": "object",
            "properties": {"text": {"description": "The request, in plain text", "type": "string"}},
            "required": ["text"]
        })
    );
}

#[test]
fn what_the_card_does_not_say_is_left_out() {
    let card = card_with(&[("only-text", &["text/plain"], &["text/plain"])]);
    let caps = snapshot(&card);
    // No capability declared: no transport at all; no provider, links or icon: none of them.
    assert_eq!(caps.get("transport"), None);
    assert_eq!(
        caps["identity"],
        json!({"name": "Probe", "type": IDENTITY_TYPE, "description": "Takes and gives whatever its skills list.", "version": "0.1.0"})
    );
    // Text output only: no structured output claim, no modality.
    assert_eq!(
        caps["output"],
        json!({"supportedMimeTypes": ["text/plain"]})
    );
    assert_eq!(caps.get("multimodal"), None);
    // Nothing AG-UI asks about that a card cannot answer.
    for key in [
        "state",
        "multiAgent",
        "reasoning",
        "execution",
        "humanInTheLoop",
    ] {
        assert_eq!(caps.get(key), None, "{key}");
    }
    assert_eq!(caps["tools"].get("parallelCalls"), None);
    assert_eq!(caps["tools"].get("clientProvided"), None);
}

#[test]
fn a_declared_capability_is_projected_as_declared() {
    let card = AgentCard::builder(
        "Probe",
        "Streams, and says it sends no push notifications.",
        "1",
    )
    .jsonrpc("https://probe.example.com/a2a")
    .streaming(true)
    .push_notifications(false)
    .icon_url("https://probe.example.com/icon.png")
    .skill(AgentSkill::builder("s", "S", "Does things."))
    .build()
    .unwrap();
    let caps = snapshot(&card);
    assert_eq!(
        caps["transport"],
        json!({"streaming": true, "pushNotifications": false})
    );
    assert_eq!(
        caps["identity"]["metadata"],
        json!({"iconUrl": "https://probe.example.com/icon.png"})
    );
}

#[test]
fn modalities_come_from_the_modes_case_insensitively() {
    let card = card_with(&[
        ("see", &["IMAGE/PNG", "text/plain"], &["text/plain"]),
        ("hear", &["audio/*"], &["Audio/MPEG; rate=44100"]),
        ("watch", &["video/mp4"], &["image/svg+xml"]),
        (
            "read",
            &["application/pdf"],
            &["application/json;schema=summary"],
        ),
        ("take", &["*/*"], &["text/plain"]),
        // Not media types: they count for nothing.
        ("legacy", &["file", "image"], &["text"]),
    ]);
    let caps = snapshot(&card);
    assert_eq!(
        caps["multimodal"],
        json!({
            "input": {"image": true, "audio": true, "video": true, "pdf": true, "file": true},
            "output": {"image": true, "audio": true}
        })
    );
    assert_eq!(
        caps["output"],
        json!({
            "structuredOutput": true,
            "supportedMimeTypes": ["text/plain", "audio/mpeg", "image/svg+xml", "application/json"]
        })
    );
}

#[test]
fn an_image_is_not_an_arbitrary_file() {
    let caps = snapshot(&card_with(&[("see", &["image/jpeg"], &["text/plain"])]));
    assert_eq!(caps["multimodal"], json!({"input": {"image": true}}));
}

#[test]
fn parameters_follow_the_skills_input() {
    let card = AgentCard::builder("Probe", "Takes data, text or files.", "1")
        .jsonrpc("https://probe.example.com/a2a")
        .schema(
            "order",
            json!({"type": "object", "properties": {"item": {"type": "string"}}}),
        )
        .skill(
            AgentSkill::builder("data-and-text", "D", "Data first.")
                .input_mode("text/plain")
                .input_schema("order"),
        )
        .skill(
            AgentSkill::builder("undeclared-schema", "U", "Names a schema the card lacks.")
                .input_schema("missing")
                .input_mode("text/markdown"),
        )
        .skill(AgentSkill::builder("files", "F", "Only files.").input_mode("application/zip"))
        .build_unchecked();
    let caps = snapshot(&card);
    let params: Vec<&Value> = caps["tools"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["parameters"])
        .collect();
    assert_eq!(params[0], &card.schemas["order"]);
    assert_eq!(params[1], &text_parameters());
    assert_eq!(params[2], &json!({"type": "object"}));
}

#[test]
fn a_skill_without_modes_has_the_cards_defaults() {
    let card = AgentCard::builder("Probe", "Takes pictures by default.", "1")
        .jsonrpc("https://probe.example.com/a2a")
        .default_input_modes(["image/png"])
        .default_output_modes(["image/png"])
        .skill(AgentSkill::builder("s", "S", "Uses the defaults."))
        .build()
        .unwrap();
    let caps = snapshot(&card);
    assert_eq!(
        caps["multimodal"],
        json!({"input": {"image": true}, "output": {"image": true}})
    );
    assert_eq!(caps["output"]["supportedMimeTypes"], json!(["image/png"]));
    assert_eq!(
        caps["tools"]["items"][0]["parameters"],
        json!({"type": "object"})
    );
}

#[test]
fn schemas_in_the_extension_params_serve_as_well_as_root_schemas() {
    let card = FightClub::card().unwrap();
    let strict = card
        .to_json_with(&RenderOptions::new(Profile::V1).schemas(SchemaPlacement::ExtensionParams));
    assert_eq!(strict.get("schemas"), None);
    let parsed = AgentCard::from_json(&strict).unwrap();
    assert_eq!(snapshot(&parsed), snapshot(card));
    // A card made in code with its schemas only in the extension entry's params.
    let mut ext = AgentExtension::new(IO_SCHEMAS_EXTENSION_URI);
    let schema = json!({"type": "object", "required": ["q"]});
    ext.params = Some(
        json!({"schemas": {"query": schema}})
            .as_object()
            .unwrap()
            .clone(),
    );
    let card = AgentCard::builder("Probe", "Answers queries.", "1")
        .jsonrpc("https://probe.example.com/a2a")
        .extension(ext)
        .skill(AgentSkill::builder("ask", "Ask", "Answers a query.").input_schema("query"))
        .build_unchecked();
    assert!(card.schemas.is_empty());
    assert_eq!(snapshot(&card)["tools"]["items"][0]["parameters"], schema);
}

#[test]
fn the_typed_snapshot_is_the_json_and_takes_additions() {
    let card = card_example::code_assist_pro();
    let mut caps = Capabilities::from_card(&card);
    assert_eq!(caps.to_json(), snapshot(&card));
    assert_eq!(serde_json::to_value(&caps).unwrap(), caps.to_json());
    caps.custom
        .insert("rateLimit".into(), json!({"maxRequestsPerMinute": 60}));
    caps.transport.as_mut().unwrap().websocket = Some(false);
    let json = caps.to_json();
    assert_eq!(json["custom"]["rateLimit"]["maxRequestsPerMinute"], 60);
    assert_eq!(json["transport"]["websocket"], false);
    assert_eq!(Capabilities::from(&card), Capabilities::from_card(&card));
}

/// AG-UI 1.0's `AgentCapabilities`, as a JSON Schema transcribed from its field list, closed at
/// every level (the Python SDK rejects unknown keys).
fn ag_ui_schema() -> Value {
    let flags = |names: &[&str]| -> Value {
        let props: serde_json::Map<String, Value> = names
            .iter()
            .map(|n| ((*n).to_owned(), json!({"type": "boolean"})))
            .collect();
        json!({"type": "object", "properties": props, "additionalProperties": false})
    };
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "identity": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "name": {"type": "string"},
                    "type": {"type": "string"},
                    "description": {"type": "string"},
                    "version": {"type": "string"},
                    "provider": {"type": "string"},
                    "documentationUrl": {"type": "string"},
                    "metadata": {"type": "object"}
                }
            },
            "transport": flags(&["streaming", "websocket", "httpBinary", "pushNotifications", "resumable"]),
            "tools": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "supported": {"type": "boolean"},
                    "items": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "additionalProperties": false,
                            "required": ["name", "description", "parameters"],
                            "properties": {
                                "name": {"type": "string"},
                                "description": {"type": "string"},
                                "parameters": {"type": "object"}
                            }
                        }
                    },
                    "parallelCalls": {"type": "boolean"},
                    "clientProvided": {"type": "boolean"}
                }
            },
            "output": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "structuredOutput": {"type": "boolean"},
                    "supportedMimeTypes": {"type": "array", "items": {"type": "string"}}
                }
            },
            "multimodal": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "input": flags(&["image", "audio", "video", "pdf", "file"]),
                    "output": flags(&["image", "audio"])
                }
            },
            "custom": {"type": "object"}
        }
    })
}

#[test]
fn every_projection_has_ag_ui_1_0_shape() {
    let validator = jsonschema::validator_for(&ag_ui_schema()).unwrap();
    let cards = [
        FightClub::card().unwrap().clone(),
        card_example::code_assist_pro(),
        card_with(&[("see", &["image/png"], &["audio/wav"]), ("none", &[], &[])]),
    ];
    for card in &cards {
        let caps = snapshot(card);
        let errors: Vec<String> = validator
            .iter_errors(&caps)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", card.name);
    }
}
