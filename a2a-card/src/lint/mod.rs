//! The card linter: every finding of a card, each with a severity, a stable rule code, a JSON
//! pointer into the document and a message that says how to fix it.
//!
//! The rules are listed in one place, [`Rule`]. [`lint`] checks a card from the model;
//! [`lint_json`] checks a JSON document, adding what only the document shows (values of the
//! wrong type, unknown fields, missing required fields, fields of another A2A version, the shape
//! of security requirements) and pointing into the document's own shape; [`lint_document`] also
//! reports duplicate keys, which only the raw text shows. Each card is judged by its own version:
//! a 1.0 card by the 1.0 schema and proto, a 0.3 (or 0.2) card by the 0.3 schema, a compat
//! document by both halves.
//!
//! Messages quote values only up to [`MAX_QUOTED`] characters.
//!
//! ```
//! use a2a_card::lint::{lint_json, Rule};
//! let card = serde_json::json!({
//!     "name": "Currency Agent", "description": "Converts currencies.", "version": "1.0.0",
//!     "url": "https://fx.example.com/a2a", "protocolVersion": "0.3.0",
//!     "capabilities": {"streaming": false, "pushNotifications": false},
//!     "defaultInputModes": ["text"], "defaultOutputModes": ["text/plain"],
//!     "skills": [{"id": "currency_conversion", "name": "Convert", "tags": ["fx"],
//!                 "description": "Converts an amount between two ISO 4217 currencies."}]
//! });
//! let findings = lint_json(&card);
//! let mode = findings.iter().find(|f| f.rule == Rule::ModeShorthand).unwrap();
//! assert_eq!(mode.pointer, "/defaultInputModes/0");
//! assert!(mode.message.contains("text/plain"));
//! assert!(findings.iter().any(|f| f.rule == Rule::SkillIdNotKebabCase && f.pointer == "/skills/0/id"));
//! ```

mod check;
mod document;
mod rules;
mod security;

use std::fmt;

use serde_json::Value;

pub use crate::wire::quote::MAX_QUOTED;
pub use rules::{Rule, Severity};

use crate::card::AgentCard;
use crate::wire::{self, Document, Profile, Sources};

/// How to lint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct LintOptions {
    /// Judge as a strict consumer does: the warnings of rules for which
    /// [`Rule::is_strict_error`] holds (unknown fields, the `text`/`file`/`data` mode shorthands)
    /// become errors.
    pub strict: bool,
    /// Judge unknown members leniently: in a 1.0 card, whose official JSON schema allows no
    /// member it does not define in any of the card's objects, an unknown member is an error
    /// ([`Rule::UnknownField`]); lenient, it is a warning, as it is in 0.3 and compat
    /// documents, whose schema allows other members. [`strict`](Self::strict) wins over this.
    pub lenient: bool,
}

impl LintOptions {
    /// Sets [`strict`](Self::strict).
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Sets [`lenient`](Self::lenient).
    pub fn lenient(mut self, lenient: bool) -> Self {
        self.lenient = lenient;
        self
    }
}

/// One thing wrong with a card.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finding {
    /// The rule broken.
    pub rule: Rule,
    /// How bad it is (the rule's severity).
    pub severity: Severity,
    /// Where, as a JSON pointer into the card document.
    pub pointer: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl Finding {
    pub(crate) fn new(rule: Rule, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Finding {
            rule,
            severity: rule.severity(),
            pointer: pointer.into(),
            message: message.into(),
        }
    }

    /// The finding as JSON: `{severity, code, pointer, message}`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "severity": self.severity.as_str(),
            "code": self.rule.code(),
            "pointer": self.pointer,
            "message": self.message,
        })
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(
            f,
            "{}[{}] {at}: {}",
            self.severity,
            self.rule.code(),
            self.message
        )
    }
}

/// Lints a card, with pointers in the shape of `profile`'s document.
pub fn lint(card: &AgentCard, profile: Profile) -> Vec<Finding> {
    let sources = match profile {
        Profile::V1 => Sources::of_v1(card),
        // Another profile moves values around (0.3's top-level URL, `security`, tagged
        // schemes): the pointers are where the reader finds each value in that document.
        _ => wire::read_with_sources(&card.to_json(profile)).2,
    };
    let mut findings = check::card(card, &sources);
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    findings
}

/// Lints a card document of any profile: values of the wrong type, unknown fields, what only
/// the document shows, then every rule of [`lint`], with pointers into this document.
pub fn lint_json(document: &Value) -> Vec<Finding> {
    lint_json_with(document, &LintOptions::default())
}

/// [`lint_json`] with options.
pub fn lint_json_with(document: &Value, options: &LintOptions) -> Vec<Finding> {
    let (card, issues, sources) = wire::read_with_sources(document);
    let mut findings: Vec<Finding> = issues
        .into_iter()
        .map(|i| {
            Finding::new(
                Rule::WrongType,
                i.pointer,
                format!("{}; fix the value's type", i.message),
            )
        })
        .collect();
    let profile = Profile::detect(document);
    // The 1.0 schema closes every object of the card (`additionalProperties: false`); the 0.3
    // schema closes none, and a compat document carries 0.3's members by design.
    let closed = profile == Profile::V1 && !options.lenient;
    findings.extend(check::unknown_fields(&card, &sources, closed));
    findings.extend(document::document(document, profile));
    findings.extend(check::card(&card, &sources));
    finish(findings, options)
}

/// Lints a parsed document ([`Document::parse`]): every finding of [`lint_json_with`], and each
/// key that appears twice in one object.
///
/// ```
/// use a2a_card::lint::{lint_document, LintOptions, Rule};
/// use a2a_card::wire::{Document, ReadLimits};
/// let doc = Document::parse(br#"{"name": "A", "name": "B"}"#, ReadLimits::default()).unwrap();
/// let findings = lint_document(&doc, &LintOptions::default());
/// assert!(findings.iter().any(|f| f.rule == Rule::DuplicateKey && f.pointer == "/name"));
/// ```
pub fn lint_document(document: &Document, options: &LintOptions) -> Vec<Finding> {
    let mut findings = lint_json_with(&document.value, options);
    findings.extend(document.duplicate_keys.iter().map(|pointer| {
        Finding::new(
            Rule::DuplicateKey,
            pointer.clone(),
            "this key appears more than once in its object; parsers disagree on which value counts (most keep the last one, silently), so keep one",
        )
    }));
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    findings
}

/// Drops findings another one says better, applies the options and puts errors first.
fn finish(mut findings: Vec<Finding>, options: &LintOptions) -> Vec<Finding> {
    // A missing `tags` field is the better finding than empty tags at the same place; the same
    // rule at the same pointer twice (from the model and from the document) is one finding.
    let missing: Vec<String> = findings
        .iter()
        .filter(|f| f.rule == Rule::SkillTagsMissing)
        .map(|f| f.pointer.clone())
        .collect();
    findings.retain(|f| !(f.rule == Rule::SkillTagsEmpty && missing.contains(&f.pointer)));
    let mut seen = std::collections::HashSet::new();
    findings.retain(|f| seen.insert((f.rule, f.pointer.clone())));
    if options.strict {
        for f in &mut findings {
            if f.rule.is_strict_error() {
                f.severity = Severity::Error;
            }
        }
    }
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    findings
}

/// Whether any finding is an error.
pub fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
}

pub use a2a_card_rules::names::{is_kebab_case, is_semver};

#[cfg(test)]
mod tests {
    use super::*;

    /// The findings of `card` with the pointer map of the model against those with the map read
    /// back from the rendered 1.0 document (what `lint` did before it stopped rendering).
    fn both_ways(card: &AgentCard) -> (Vec<Finding>, Vec<Finding>) {
        let direct = check::card(card, &Sources::of_v1(card));
        let (_, _, read) = wire::read_with_sources(&card.to_json(Profile::V1));
        (direct, check::card(card, &read))
    }

    /// A card breaking a rule at every kind of place a pointer can go.
    fn broken_everywhere() -> Value {
        serde_json::json!({
            "name": " ", "description": "", "version": "one",
            "supportedInterfaces": [
                {"url": "http://agent.example.com/a2a", "protocolBinding": "", "protocolVersion": "1.0"},
                {"url": "not a url", "protocolBinding": "SOAP", "protocolVersion": "x"}
            ],
            "capabilities": {"extendedAgentCard": true, "extensions": [{"uri": " "}]},
            "securitySchemes": {
                "key": {"apiKeySecurityScheme": {"name": "", "location": "body"}},
                "basic": {"httpAuthSecurityScheme": {"scheme": ""}},
                "oauth": {"oauth2SecuritySchemeX": {}},
                "oauth2": {"oauth2SecurityScheme": {"flows": {
                    "implicit": {"authorizationUrl": "http://auth.example.com", "scopes": {}},
                    "clientCredentials": {"tokenUrl": "", "scopes": {}}
                }}},
                "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "nope"}},
                "mtls": {"mtlsSecurityScheme": {}}
            },
            "securityRequirements": [{"schemes": {"missing": {"list": []}, "oauth2": {"list": ["unknown"]}}}],
            "defaultInputModes": ["text"], "defaultOutputModes": [],
            "skills": [
                {"id": "Not Kebab", "name": "", "description": "", "tags": [],
                 "inputModes": ["application/json;schema=absent"], "outputModes": ["data"],
                 "securityRequirements": [{"schemes": {"nowhere": {"list": []}}}]},
                {"id": "not kebab", "name": "Second", "description": "Twice the id.", "tags": ["x"]}
            ],
            "signatures": [{"protected": "", "signature": ""}],
            "schemas": {"bad name!": {"type": 12}}
        })
    }

    #[test]
    fn v1_pointers_without_rendering_are_those_of_the_rendered_document() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests");
        let mut extended_without_auth = broken_everywhere();
        extended_without_auth["securitySchemes"] = serde_json::json!({});
        let mut documents = vec![
            ("broken_everywhere".to_owned(), broken_everywhere()),
            ("extended_without_auth".to_owned(), extended_without_auth),
        ];
        for dir in ["conformance", "data/fixtures/cards"] {
            let dir = format!("{root}/{dir}");
            for entry in std::fs::read_dir(&dir).expect("the test corpus is in the repository") {
                let path = entry.expect("a readable directory").path();
                let text = std::fs::read(&path).expect("a readable card");
                let document = serde_json::from_slice(&text).expect("the corpus is JSON");
                documents.push((path.display().to_string(), document));
            }
        }
        let mut pointers = std::collections::BTreeSet::new();
        for (name, document) in &documents {
            let (card, _) = wire::from_value_lenient(document);
            let (direct, rendered) = both_ways(&card);
            assert_eq!(direct, rendered, "{name}");
            pointers.extend(direct.into_iter().map(|f| f.pointer));
        }
        assert!(documents.len() > 40, "{} documents", documents.len());
        // The corpus reaches every kind of place, so the comparison above covers each.
        for expected in [
            "/supportedInterfaces/1/url",
            "/supportedInterfaces/0/protocolBinding",
            "/capabilities/extendedAgentCard",
            "/capabilities/extensions/0/uri",
            "/securitySchemes/key/apiKeySecurityScheme/name",
            "/securitySchemes/basic/httpAuthSecurityScheme/scheme",
            "/securitySchemes/oauth2/oauth2SecurityScheme/flows/implicit",
            "/securitySchemes/oauth2/oauth2SecurityScheme/flows/clientCredentials/tokenUrl",
            "/securitySchemes/oidc/openIdConnectSecurityScheme/openIdConnectUrl",
            "/securityRequirements/0/schemes/missing",
            "/defaultInputModes/0",
            "/defaultOutputModes",
            "/skills/0/id",
            "/skills/0/inputModes/0",
            "/skills/0/outputModes/0",
            "/skills/0/securityRequirements/0/schemes/nowhere",
            "/signatures/0",
            "/schemas/bad name!",
        ] {
            assert!(
                pointers.contains(expected),
                "no finding at {expected}: {pointers:#?}"
            );
        }
    }

    fn unknown_members(document: &Value, options: &LintOptions) -> Vec<(Severity, String)> {
        lint_json_with(document, options)
            .into_iter()
            .filter(|f| f.rule == Rule::UnknownField)
            .map(|f| (f.severity, f.pointer))
            .collect()
    }

    fn v1_with_unknown_members() -> Value {
        serde_json::json!({
            "name": "Quotes", "version": "1.0.0",
            "description": "Quotes the price of a product in a currency, from its SKU and the quantity asked for.",
            "supportedInterfaces": [{"url": "https://quotes.example.com/a2a",
                "protocolBinding": "JSONRPC", "protocolVersion": "1.0",
                "pricing": {"perCall": "0.01"}}],
            "capabilities": {"streaming": false, "pushNotifications": false, "beta": true},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "quote", "name": "Quote", "tags": ["price"], "cost": 3,
                        "examples": ["12 of SKU-1234"],
                        "description": "Takes a SKU and a quantity, and returns the total price in euros."}]
        })
    }

    #[test]
    fn an_unknown_member_of_a_1_0_card_is_an_error_where_the_schema_closes_the_object() {
        let card = v1_with_unknown_members();
        assert_eq!(
            unknown_members(&card, &LintOptions::default()),
            [
                (Severity::Error, "/supportedInterfaces/0/pricing".to_owned()),
                (Severity::Error, "/capabilities/beta".to_owned()),
                (Severity::Error, "/skills/0/cost".to_owned()),
            ]
        );
        let finding = lint_json(&card)
            .into_iter()
            .find(|f| f.pointer == "/supportedInterfaces/0/pricing")
            .unwrap();
        assert!(
            finding.message.contains("allows no other member"),
            "{finding}"
        );
        assert!(has_errors(&lint_json(&card)));
        // Without the unknown members the same card is clean: the error is theirs alone.
        let mut clean = card.clone();
        clean["supportedInterfaces"][0]
            .as_object_mut()
            .unwrap()
            .remove("pricing");
        clean["capabilities"]
            .as_object_mut()
            .unwrap()
            .remove("beta");
        clean["skills"][0].as_object_mut().unwrap().remove("cost");
        assert_eq!(lint_json(&clean), []);
    }

    #[test]
    fn lenient_makes_an_unknown_member_of_a_1_0_card_a_warning() {
        let card = v1_with_unknown_members();
        let lenient = LintOptions::default().lenient(true);
        assert!(
            unknown_members(&card, &lenient)
                .iter()
                .all(|(severity, _)| *severity == Severity::Warning)
        );
        assert_eq!(unknown_members(&card, &lenient).len(), 3);
        assert!(!has_errors(&lint_json_with(&card, &lenient)));
        // Strict wins over lenient.
        let both = LintOptions::default().lenient(true).strict(true);
        assert!(
            unknown_members(&card, &both)
                .iter()
                .all(|(severity, _)| *severity == Severity::Error)
        );
    }

    #[test]
    fn an_unknown_member_of_a_0_3_or_compat_document_stays_a_warning() {
        // The 0.3 schema allows other members; a compat document carries 0.3's by design.
        let mut v0_3 = v1_with_unknown_members();
        let v0_3_card = v0_3.as_object_mut().unwrap();
        v0_3_card.remove("supportedInterfaces");
        v0_3_card["capabilities"]
            .as_object_mut()
            .unwrap()
            .remove("beta");
        v0_3_card.insert("url".into(), "https://quotes.example.com/a2a".into());
        v0_3_card.insert("protocolVersion".into(), "0.3.0".into());
        assert_eq!(Profile::detect(&v0_3), Profile::V0_3);
        assert_eq!(
            unknown_members(&v0_3, &LintOptions::default()),
            [(Severity::Warning, "/skills/0/cost".to_owned())]
        );
        let mut compat = v1_with_unknown_members();
        compat["url"] = serde_json::json!("https://quotes.example.com/a2a");
        compat["protocolVersion"] = serde_json::json!("0.3.0");
        assert_eq!(Profile::detect(&compat), Profile::Compat);
        assert!(
            unknown_members(&compat, &LintOptions::default())
                .iter()
                .all(|(severity, _)| *severity == Severity::Warning)
        );
    }
}
