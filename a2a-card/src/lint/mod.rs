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

use std::borrow::Cow;
use std::fmt;

use serde_json::Value;

pub use rules::{Rule, Severity};

use crate::card::AgentCard;
use crate::wire::{self, Document, Profile};

/// The most characters of a value a message quotes; longer values are cut, with their length.
pub const MAX_QUOTED: usize = 80;

/// `value` as a message quotes it: whole when short, else its first [`MAX_QUOTED`] characters,
/// an ellipsis and its length.
pub(crate) fn short(value: &str) -> Cow<'_, str> {
    match value.char_indices().nth(MAX_QUOTED) {
        None => Cow::Borrowed(value),
        Some((cut, _)) => Cow::Owned(format!(
            "{}… ({} characters)",
            &value[..cut],
            value.chars().count()
        )),
    }
}

/// How to lint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct LintOptions {
    /// Judge as a strict consumer does: the warnings of rules for which
    /// [`Rule::is_strict_error`] holds (unknown fields, the `text`/`file`/`data` mode shorthands)
    /// become errors.
    pub strict: bool,
}

impl LintOptions {
    /// Sets [`strict`](Self::strict).
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
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
    // Pointers come from where the reader finds each value in the card's own document.
    let (_, _, sources) = wire::read_with_sources(&card.to_json(profile));
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
    findings.extend(check::unknown_fields(&card, &sources));
    findings.extend(document::document(document, Profile::detect(document)));
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
