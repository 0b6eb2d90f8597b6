//! The card linter: every finding of a card, each with a severity, a stable rule code, a JSON
//! pointer into the document and a message that says how to fix it.
//!
//! The rules are listed in one place, [`Rule`]. [`lint`] checks a card from the model;
//! [`lint_json`] checks a JSON document, adding what only the document shows (values of the
//! wrong type, unknown fields) and pointing into the document's own shape.
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
//! let mode = findings.iter().find(|f| f.rule == Rule::ModeInvalid).unwrap();
//! assert_eq!(mode.pointer, "/defaultInputModes/0");
//! assert!(mode.message.contains("text/plain"));
//! assert!(findings.iter().any(|f| f.rule == Rule::SkillIdNotKebabCase && f.pointer == "/skills/0/id"));
//! ```

mod check;
mod rules;

use std::fmt;

use serde_json::Value;

pub use rules::{Rule, Severity};

use crate::card::AgentCard;
use crate::wire::{self, Profile};

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
    // Pointers come from where the reader finds each value in the card's own document.
    let (_, _, sources) = wire::read_with_sources(&card.to_json(profile));
    let mut findings = check::card(card, &sources);
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    findings
}

/// Lints a card document of any profile: values of the wrong type, unknown fields, then every
/// rule of [`lint`], with pointers into this document.
pub fn lint_json(document: &Value) -> Vec<Finding> {
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
    findings.extend(check::unknown_fields(&card, &sources));
    findings.extend(check::card(&card, &sources));
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    findings
}

/// Whether any finding is an error.
pub fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
}

pub use a2a_card_rules::names::{is_kebab_case, is_semver};
