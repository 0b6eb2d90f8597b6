//! The linter and `convert` against the official judges, on a corpus of cards: the card fixtures
//! (official samples and third-party agents), the Agent Card examples of both specifications,
//! the input/output schemas extension's example, and `tests/conformance/*.json`, one or more
//! cards written for each rule.
//!
//! For each card, of the version its shape says (1.0, 0.3, or a compat document holding both):
//! - the official JSON schema of that version (the 1.0 conformance schema, the 0.3 schema; a
//!   compat document: the 0.3 schema on the whole, the 1.0 schema on its 1.0 half);
//! - the official Python SDK (`a2a-sdk`, see `tests/interop/a2a_py_cards.py`): its client's card
//!   parser, the REQUIRED fields it finds missing, its strict 1.0 parse and its 0.3 model.
//!
//! The test fails when an official parser fails on a card and the linter has no error, when the
//! schema or the SDK finds anything else and the linter has no finding at all, and when
//! `convert --to v1` or `--to v0.3` writes a document that any of them rejects. The one
//! documented exception is the extension's root `schemas` key, which the strict 1.0 schema does
//! not know (see the README's protocol notes): it is left out before judging 1.0 documents.
//!
//! The SDK comes from `$A2A_PY` (CI sets it, see `.ci/run`), else it is installed under the
//! target directory; the SDK half is skipped, with a printed reason, only when there is no
//! `python3` and `A2A_REQUIRE_SDKS` is unset (CI sets it, so there it fails).

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use a2a_card::IO_SCHEMAS_EXTENSION_URI;
use a2a_card::lint::{Finding, LintOptions, Rule, Severity, lint_document};
use a2a_card::wire::{self, Document, Profile, ReadLimits, RenderOptions};
use serde_json::{Value, json};
use support::*;

/// A card of the corpus: its name, its document as read (duplicates noted) and its profile.
struct Card {
    name: String,
    document: Document,
}

impl Card {
    fn profile(&self) -> Profile {
        Profile::detect(&self.document.value)
    }
}

fn read(name: String, bytes: &[u8]) -> Card {
    let document =
        Document::parse(bytes, ReadLimits::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    Card { name, document }
}

/// The JSON code blocks of a specification that are Agent Cards.
fn spec_examples(file: &str) -> Vec<Card> {
    let text = std::fs::read_to_string(shared(&format!("spec/a2a/{file}"))).unwrap();
    let mut cards = Vec::new();
    for (i, block) in text.split("```json").skip(1).enumerate() {
        let Some((body, _)) = block.split_once("```") else {
            continue;
        };
        let Ok(value) = serde_json::from_str::<Value>(body) else {
            continue;
        };
        if value.get("name").is_some() && value.get("skills").is_some() {
            cards.push(read(format!("{file} block {i}"), body.as_bytes()));
        }
    }
    cards
}

fn corpus() -> Vec<Card> {
    let mut cards: Vec<Card> = card_fixtures()
        .into_iter()
        .map(|(name, _)| {
            let bytes = std::fs::read(shared(&format!("fixtures/cards/{name}"))).unwrap();
            read(format!("fixtures/cards/{name}"), &bytes)
        })
        .collect();
    let partial = "fixtures/io-schemas-extension/agent-card-partial.json";
    cards.push(read(
        partial.into(),
        &std::fs::read(shared(partial)).unwrap(),
    ));
    let specs: Vec<Card> = ["specification-v0.3.0.md", "specification-v1.0.1.md"]
        .into_iter()
        .flat_map(spec_examples)
        .collect();
    assert!(
        specs.len() >= 4,
        "the specifications' card examples: {}",
        specs.len()
    );
    cards.extend(specs);
    cards.extend(own_cards());
    cards
}

fn own_cards() -> Vec<Card> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap();
            read(n.trim_end_matches(".json").to_owned(), &bytes)
        })
        .collect()
}

fn findings(card: &Card) -> Vec<Finding> {
    lint_document(&card.document, &LintOptions::default())
}

/// The 0.3 fields of a compat document, removed to leave its 1.0 half.
fn modern_half(doc: &Value) -> Value {
    let mut doc = doc.clone();
    let Some(obj) = doc.as_object_mut() else {
        return doc;
    };
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
    if let Some(caps) = obj.get_mut("capabilities").and_then(Value::as_object_mut) {
        caps.remove("stateTransitionHistory");
    }
    if let Some(schemes) = obj
        .get_mut("securitySchemes")
        .and_then(Value::as_object_mut)
    {
        for scheme in schemes.values_mut().filter_map(Value::as_object_mut) {
            scheme.retain(|k, _| k.ends_with("SecurityScheme"));
        }
    }
    if let Some(skills) = obj.get_mut("skills").and_then(Value::as_array_mut) {
        for skill in skills.iter_mut().filter_map(Value::as_object_mut) {
            skill.remove("security");
        }
    }
    doc
}

/// A 1.0 document without the extension's root `schemas` (the documented exception), when the
/// card declares the extension.
fn without_extension_schemas(doc: &Value) -> Value {
    let mut doc = doc.clone();
    let declared = doc
        .pointer("/capabilities/extensions")
        .and_then(Value::as_array)
        .is_some_and(|list| list.iter().any(|e| e["uri"] == IO_SCHEMAS_EXTENSION_URI));
    if declared && let Some(obj) = doc.as_object_mut() {
        obj.remove("schemas");
    }
    doc
}

/// What the official JSON schemas say of `doc`, judged as `profile`.
fn schema_violations(doc: &Value, profile: Profile) -> Vec<String> {
    let v1 = official_validator("a2a-v1.0.schema.json", "Agent Card");
    let v03 = official_validator("a2a-v0.3.0.schema.json", "AgentCard");
    match profile {
        Profile::V1 => violations(&v1, &without_extension_schemas(doc)),
        Profile::V0_3 => violations(&v03, doc),
        _ => {
            let mut out = violations(&v03, doc);
            out.extend(
                violations(&v1, &without_extension_schemas(&modern_half(doc)))
                    .into_iter()
                    .map(|v| format!("(1.0 half) {v}")),
            );
            out
        }
    }
}

/// The SDK's verdicts, by card name.
#[derive(Debug, Default)]
struct Sdk {
    client: Option<String>,
    required: Vec<String>,
    strict: Option<String>,
    v03: Option<String>,
}

/// Runs the SDK driver once over every `(name, document)`; `None` when the SDK half is skipped.
/// `label` names the input file (tests run in parallel).
fn sdk(label: &str, cards: &[(String, Value)]) -> Option<BTreeMap<String, Sdk>> {
    let py = a2a_python()?;
    let input = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("conformance-{label}.json"));
    let list: Vec<Value> = cards
        .iter()
        .map(|(name, card)| json!({"name": name, "card": card}))
        .collect();
    std::fs::write(&input, serde_json::to_vec(&list).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/a2a_py_cards.py");
    let out = Command::new(py)
        .arg(script)
        .arg(&input)
        .output()
        .expect("run the SDK driver");
    assert!(
        out.status.success(),
        "the SDK driver failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<Value> = serde_json::from_slice(&out.stdout).expect("the driver's JSON");
    assert_eq!(results.len(), cards.len());
    let text = |v: &Value| v.as_str().map(str::to_owned);
    Some(
        results
            .iter()
            .map(|r| {
                let verdict = Sdk {
                    client: text(&r["client"]),
                    required: r["required"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter_map(text)
                        .collect(),
                    strict: text(&r["strict"]),
                    v03: text(&r["v03"]),
                };
                (r["name"].as_str().unwrap().to_owned(), verdict)
            })
            .collect(),
    )
}

/// The SDK's objections to a document of `profile`: (fatal, everything else).
fn sdk_objections(verdict: &Sdk, profile: Profile) -> (Vec<String>, Vec<String>) {
    let mut fatal = Vec::new();
    let mut other = Vec::new();
    if let Some(e) = &verdict.client {
        fatal.push(format!("client parser: {e}"));
    }
    if profile != Profile::V1
        && let Some(e) = &verdict.v03
    {
        fatal.push(format!("0.3 model: {e}"));
    }
    if profile != Profile::V0_3 {
        other.extend(verdict.required.iter().map(|r| format!("REQUIRED {r}")));
    }
    if profile == Profile::V1
        && let Some(e) = &verdict.strict
    {
        other.push(format!("strict 1.0 parse: {e}"));
    }
    (fatal, other)
}

fn summary(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(|f| format!("\n    {f}"))
        .collect::<String>()
}

#[test]
fn the_linter_misses_nothing_the_official_side_rejects() {
    let cards = corpus();
    assert!(cards.len() >= 45, "corpus of {} cards", cards.len());
    let documents: Vec<(String, Value)> = cards
        .iter()
        .map(|c| {
            let doc = if c.profile() == Profile::V1 {
                without_extension_schemas(&c.document.value)
            } else {
                c.document.value.clone()
            };
            (c.name.clone(), doc)
        })
        .collect();
    let verdicts = sdk("cards", &documents);
    let mut failures = Vec::new();
    let (mut rejected, mut accepted) = (0, 0);
    for card in &cards {
        let profile = card.profile();
        let found = findings(card);
        let errors = found.iter().any(|f| f.severity == Severity::Error);
        let mut other = schema_violations(&card.document.value, profile);
        let mut fatal = Vec::new();
        if let Some(verdict) = verdicts.as_ref().map(|v| &v[&card.name]) {
            let (f, o) = sdk_objections(verdict, profile);
            fatal = f;
            other.extend(o);
        }
        if fatal.is_empty() && other.is_empty() {
            accepted += 1;
        } else {
            rejected += 1;
        }
        if !fatal.is_empty() && !errors {
            failures.push(format!(
                "{} ({profile}): an official parser fails, the linter has no error:\n  {}\n  findings:{}",
                card.name,
                fatal.join("\n  "),
                summary(&found)
            ));
        }
        if !other.is_empty() && found.is_empty() {
            failures.push(format!(
                "{} ({profile}): the official side objects, the linter says nothing:\n  {}",
                card.name,
                other.join("\n  ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The judges are real: the corpus has cards they reject and cards they accept.
    assert!(
        rejected >= 20 && accepted >= 3,
        "{rejected} rejected, {accepted} accepted"
    );
    if let Some(verdicts) = &verdicts {
        assert!(verdicts["v1-wrong-type"].client.is_some());
        assert!(verdicts["v1-valid"].client.is_none() && verdicts["v1-valid"].required.is_empty());
    }
}

#[test]
fn convert_writes_only_what_the_official_side_accepts() {
    let cards = corpus();
    let mut outputs: Vec<(String, Profile, Value)> = Vec::new();
    let mut refused = 0;
    for card in &cards {
        for target in [Profile::V1, Profile::V0_3] {
            match wire::convert(&card.document.value, &RenderOptions::new(target)) {
                Ok(done) => {
                    outputs.push((format!("{} -> {target}", card.name), target, done.document))
                }
                Err(e) => {
                    refused += 1;
                    assert!(!e.to_string().is_empty());
                }
            }
        }
    }
    assert!(
        outputs.len() >= 20 && refused >= 5,
        "{} converted, {refused} refused",
        outputs.len()
    );
    let documents: Vec<(String, Value)> = outputs
        .iter()
        .map(|(name, target, doc)| {
            let doc = if *target == Profile::V1 {
                without_extension_schemas(doc)
            } else {
                doc.clone()
            };
            (name.clone(), doc)
        })
        .collect();
    let verdicts = sdk("converted", &documents);
    let mut failures = Vec::new();
    for (name, target, doc) in &outputs {
        let mut objections = schema_violations(doc, *target);
        if let Some(verdict) = verdicts.as_ref().map(|v| &v[name]) {
            let (fatal, other) = sdk_objections(verdict, *target);
            objections.extend(fatal);
            objections.extend(other);
        }
        if !objections.is_empty() {
            failures.push(format!("{name}: {}", objections.join("\n  ")));
        }
        // And the linter agrees the output has no conformance error.
        let errors: Vec<_> = a2a_card::lint::lint_json(doc)
            .into_iter()
            .filter(|f| f.severity == Severity::Error && f.rule.is_conformance())
            .collect();
        assert!(errors.is_empty(), "{name}:{}", summary(&errors));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The finding each rule of the issue gives on its own card: (card, code, pointer, severity).
const EXPECTED: &[(&str, &str, &str, Severity)] = &[
    (
        "v1-requirement-bare-map",
        "security-requirement-shape",
        "/securityRequirements/0",
        Severity::Error,
    ),
    (
        "v1-requirement-bare-array",
        "security-requirement-shape",
        "/securityRequirements/0/schemes/bearer",
        Severity::Error,
    ),
    (
        "v1-root-protocol-version",
        "field-version-mismatch",
        "/protocolVersion",
        Severity::Error,
    ),
    (
        "v1-root-security",
        "field-version-mismatch",
        "/security",
        Severity::Error,
    ),
    (
        "v1-state-transition-history",
        "field-version-mismatch",
        "/capabilities/stateTransitionHistory",
        Severity::Error,
    ),
    (
        "v1-scheme-with-type",
        "field-version-mismatch",
        "/securitySchemes/bearer/type",
        Severity::Error,
    ),
    (
        "v1-skill-security",
        "field-version-mismatch",
        "/skills/0/security",
        Severity::Error,
    ),
    (
        "v1-no-capabilities",
        "capabilities-missing",
        "/capabilities",
        Severity::Error,
    ),
    (
        "v1-interface-without-version",
        "protocol-version-missing",
        "/supportedInterfaces/0/protocolVersion",
        Severity::Error,
    ),
    (
        "v1-skill-without-tags",
        "skill-tags-missing",
        "/skills/0/tags",
        Severity::Error,
    ),
    (
        "v1-skill-empty-tags",
        "skill-tags-empty",
        "/skills/0/tags",
        Severity::Warning,
    ),
    (
        "v1-oauth-without-scopes",
        "security-scheme-incomplete",
        "/securitySchemes/oauth/oauth2SecurityScheme/flows/clientCredentials/scopes",
        Severity::Error,
    ),
    (
        "v1-oauth-two-flows",
        "oauth-flow-count",
        "/securitySchemes/oauth/oauth2SecurityScheme/flows",
        Severity::Error,
    ),
    (
        "v1-unknown-field",
        "unknown-field",
        "/contactEmail",
        Severity::Error,
    ),
    (
        "v1-interface-unknown-member",
        "unknown-field",
        "/supportedInterfaces/0/pricing",
        Severity::Error,
    ),
    (
        "v1-mode-shorthands",
        "mode-shorthand",
        "/defaultInputModes/1",
        Severity::Warning,
    ),
    ("v1-wrong-type", "wrong-type", "/name", Severity::Error),
    (
        "v1-duplicate-key",
        "duplicate-key",
        "/name",
        Severity::Error,
    ),
    (
        "v0.3-without-tags",
        "skill-tags-missing",
        "/skills/0/tags",
        Severity::Error,
    ),
    (
        "v0.3-without-capabilities",
        "capabilities-missing",
        "/capabilities",
        Severity::Error,
    ),
    (
        "v0.3-without-protocol-version",
        "protocol-version-missing",
        "/protocolVersion",
        Severity::Error,
    ),
    (
        "v0.3-says-1.0",
        "protocol-version-mismatch",
        "/protocolVersion",
        Severity::Error,
    ),
    (
        "v0.3-wrapper-scheme",
        "field-version-mismatch",
        "/securitySchemes/bearer/httpAuthSecurityScheme",
        Severity::Error,
    ),
    (
        "v0.3-security-with-schemes-wrapper",
        "security-requirement-shape",
        "/security/0/schemes",
        Severity::Error,
    ),
    (
        "v0.3-skill-security-requirements",
        "field-version-mismatch",
        "/skills/0/securityRequirements",
        Severity::Error,
    ),
    (
        "v0.3-two-oauth-flows",
        "oauth-flow-count",
        "/securitySchemes/oauth/flows",
        Severity::Error,
    ),
    (
        "v0.3-flow-without-scopes",
        "security-scheme-incomplete",
        "/securitySchemes/oauth/flows/clientCredentials/scopes",
        Severity::Error,
    ),
    (
        "v0.3-oauth-without-flows",
        "security-scheme-incomplete",
        "/securitySchemes/oauth/flows",
        Severity::Error,
    ),
    (
        "v0.3-interface-protocol-binding",
        "field-version-mismatch",
        "/additionalInterfaces/1/protocolBinding",
        Severity::Error,
    ),
    (
        "v0.3-api-key-without-in",
        "security-scheme-incomplete",
        "/securitySchemes/key/in",
        Severity::Error,
    ),
    (
        "v0.3-mode-shorthands",
        "mode-shorthand",
        "/defaultOutputModes/2",
        Severity::Warning,
    ),
    (
        "v0.2-legacy-authentication",
        "legacy-authentication",
        "/authentication",
        Severity::Warning,
    ),
    (
        "compat-without-protocol-version",
        "protocol-version-missing",
        "/protocolVersion",
        Severity::Error,
    ),
    (
        "compat-wrapper-only-scheme",
        "field-version-mismatch",
        "/securitySchemes/bearer/httpAuthSecurityScheme",
        Severity::Error,
    ),
    (
        "compat-says-1.0",
        "protocol-version-mismatch",
        "/protocolVersion",
        Severity::Error,
    ),
    (
        "v1-scopes-on-api-key",
        "security-scopes-unsupported",
        "/securityRequirements/0/schemes/key",
        Severity::Warning,
    ),
    (
        "v1-two-skills-one-schema",
        "schema-input-shared",
        "/skills/1/inputModes/1",
        Severity::Error,
    ),
    (
        "v1-example-breaks-schema",
        "skill-example-invalid",
        "/skills/0/examples/1",
        Severity::Error,
    ),
    (
        "v0.3-snake-case",
        "field-snake-case",
        "/protocol_version",
        Severity::Error,
    ),
    (
        "v0.3-snake-case",
        "field-snake-case",
        "/capabilities/push_notifications",
        Severity::Error,
    ),
];

/// A 0.3 card in snake_case: `convert` writes it in camelCase, which the linter finds clean of
/// the rule (and of every error).
#[test]
fn convert_writes_a_snake_case_card_in_camel_case() {
    let cards = own_cards();
    let card = cards.iter().find(|c| c.name == "v0.3-snake-case").unwrap();
    let done = wire::convert(&card.document.value, &RenderOptions::new(Profile::V0_3))
        .expect("the snake_case card converts");
    let doc = &done.document;
    for (snake, camel) in [
        ("protocol_version", "protocolVersion"),
        ("default_input_modes", "defaultInputModes"),
        ("default_output_modes", "defaultOutputModes"),
        ("preferred_transport", "preferredTransport"),
        ("security_schemes", "securitySchemes"),
    ] {
        assert!(
            doc.get(snake).is_none() && doc.get(camel).is_some(),
            "{snake}: {doc:#}"
        );
    }
    assert_eq!(doc["capabilities"]["pushNotifications"], false, "{doc:#}");
    let errors: Vec<_> = a2a_card::lint::lint_json(doc)
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{}", summary(&errors));
}

#[test]
fn each_rule_fires_on_its_own_card_and_valid_cards_are_clean() {
    let cards = own_cards();
    let by_name: BTreeMap<_, _> = cards.iter().map(|c| (c.name.as_str(), c)).collect();
    for (name, code, pointer, severity) in EXPECTED {
        let card = by_name
            .get(name)
            .unwrap_or_else(|| panic!("no card {name}"));
        let found = findings(card);
        assert!(
            found.iter().any(|f| f.rule.code() == *code
                && f.pointer == *pointer
                && f.severity == *severity),
            "{name}: no {severity}[{code}] at {pointer}:{}",
            summary(&found)
        );
    }
    for name in ["v1-valid", "v0.3-valid", "compat-valid"] {
        let found = findings(by_name[name]);
        assert!(found.is_empty(), "{name}:{}", summary(&found));
    }
    // Rules of 1.0 are not applied to what a 0.2 `authentication` object cannot say.
    let legacy = findings(by_name["v0.2-legacy-authentication"]);
    assert!(
        !legacy.iter().any(|f| matches!(
            f.rule,
            Rule::OAuthFlowCount | Rule::SecuritySchemeIncomplete
        )),
        "{}",
        summary(&legacy)
    );
    // --lenient makes an unknown member of a 1.0 card a warning, and nothing else of the card
    // an error.
    for name in ["v1-unknown-field", "v1-interface-unknown-member"] {
        let lenient = lint_document(
            &by_name[name].document,
            &LintOptions::default().lenient(true),
        );
        assert!(
            lenient
                .iter()
                .any(|f| f.rule == Rule::UnknownField && f.severity == Severity::Warning),
            "{name}:{}",
            summary(&lenient)
        );
        assert!(
            !lenient.iter().any(|f| f.severity == Severity::Error),
            "{name}:{}",
            summary(&lenient)
        );
    }
    // --strict makes the shorthands and unknown fields errors.
    for (name, rule) in [
        ("v1-mode-shorthands", Rule::ModeShorthand),
        ("v1-unknown-field", Rule::UnknownField),
    ] {
        let strict = lint_document(
            &by_name[name].document,
            &LintOptions::default().strict(true),
        );
        assert!(
            strict
                .iter()
                .any(|f| f.rule == rule && f.severity == Severity::Error),
            "{name}:{}",
            summary(&strict)
        );
    }
}
