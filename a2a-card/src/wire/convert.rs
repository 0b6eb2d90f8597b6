//! Converting a card document to another profile: a valid document of the target version, or a
//! refusal that says what is missing.

use std::fmt;

use serde_json::Value;

use super::{ParseIssue, Profile, RenderOptions, pointer_push};
use crate::card::{AgentCard, SecurityScheme};
use crate::lint::{self, Finding, Severity};

/// The A2A 0.3 schema's documented default for a card's `protocolVersion`.
pub const DEFAULT_0_3_PROTOCOL_VERSION: &str = "0.3.0";

/// A card converted to another profile.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Conversion {
    /// The document in the target profile.
    pub document: Value,
    /// What the conversion filled in (only where a specification defines the default) or left
    /// out (fields the target profile does not allow), one line each, with JSON pointers into
    /// the input.
    pub notes: Vec<String>,
}

/// Why a card was not converted.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConvertError {
    /// Values of the wrong type in the input.
    Invalid(Vec<ParseIssue>),
    /// The card lacks what the target version requires, or would break its official schema or
    /// SDK: each finding is an error of a [conformance](crate::lint::Rule::is_conformance) rule,
    /// with a JSON pointer into the output it would have been.
    Incomplete {
        /// The profile asked for.
        profile: Profile,
        /// What is wrong.
        findings: Vec<Finding>,
    },
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConvertError::Invalid(issues) => {
                write!(f, "{} value(s) of the wrong type:", issues.len())?;
                for issue in issues {
                    write!(f, "\n  {issue}")?;
                }
                Ok(())
            }
            ConvertError::Incomplete { profile, findings } => {
                write!(
                    f,
                    "a {profile} card made from it would be invalid ({} problem(s)):",
                    findings.len()
                )?;
                for finding in findings {
                    write!(f, "\n  {finding}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ConvertError {}

/// Converts a card document of any profile to `options.profile`.
///
/// The card is read strictly (a value of the wrong type is refused). Where the input lacks a
/// value the target requires, the conversion fills it only where a specification defines the
/// default (a 0.3 card's `protocolVersion`: `"0.3.0"`; its `preferredTransport`: `JSONRPC`) and
/// notes each fill. Fields the strict 1.0 profile does not allow (unknown fields, the 0.1
/// `authentication` object) are left out of `v1` output, each with a note; `v0.3` and `compat`
/// keep them, as 0.3 allows extra fields. Anything else the target requires and the card lacks
/// (a name, a skill's tags, an OAuth flow...) refuses the conversion, listing every problem.
///
/// ```
/// use a2a_card::wire::{convert, ConvertError, Profile, RenderOptions};
/// let card = serde_json::json!({
///     "name": "Echo", "description": "Echoes text back, word for word.", "version": "1.0.0",
///     "url": "https://echo.example.com/a2a", "capabilities": {},
///     "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
///     "skills": [{"id": "echo", "name": "Echo", "description": "Echoes text.", "tags": ["echo"]}]
/// });
/// let done = convert(&card, &RenderOptions::new(Profile::V1)).unwrap();
/// assert_eq!(done.document["supportedInterfaces"][0]["protocolVersion"], "0.3.0");
/// assert!(done.notes.iter().any(|n| n.contains("/protocolVersion")));
///
/// let mut no_tags = card.clone();
/// no_tags["skills"][0].as_object_mut().unwrap().remove("tags");
/// let err = convert(&no_tags, &RenderOptions::new(Profile::V1)).unwrap_err();
/// assert!(err.to_string().contains("skill-tags-missing"));
/// ```
pub fn convert(document: &Value, options: &RenderOptions) -> Result<Conversion, ConvertError> {
    let (mut card, issues) = super::from_value_lenient(document);
    if !issues.is_empty() {
        return Err(ConvertError::Invalid(issues));
    }
    let mut notes = Vec::new();
    let input = Profile::detect(document);
    let root = document.as_object();
    let has = |key: &str| root.is_some_and(|o| o.get(key).is_some_and(|v| !v.is_null()));
    if input == Profile::V0_3 && has("url") {
        if !has("protocolVersion") && !has("protocol_version") {
            for iface in &mut card.interfaces {
                if iface.protocol_version.is_none() {
                    iface.protocol_version = Some(DEFAULT_0_3_PROTOCOL_VERSION.to_owned());
                }
            }
            notes.push(format!("/protocolVersion: missing; filled with the A2A 0.3 schema's default \"{DEFAULT_0_3_PROTOCOL_VERSION}\""));
        }
        if !has("preferredTransport") && !has("preferred_transport") {
            notes.push(
                "/preferredTransport: missing; filled with the A2A 0.3 default \"JSONRPC\""
                    .to_owned(),
            );
        }
    }
    if options.profile == Profile::V1 {
        for dropped in strip_unknown_fields(&mut card, document) {
            notes.push(format!(
                "{dropped}: left out: not a field of A2A 1.0, whose strict schema rejects unknown fields"
            ));
        }
    }
    let output = card.to_json_with(options);
    let findings: Vec<Finding> = lint::lint_json(&output)
        .into_iter()
        .filter(|f| f.severity == Severity::Error && f.rule.is_conformance())
        .collect();
    if !findings.is_empty() {
        return Err(ConvertError::Incomplete {
            profile: options.profile,
            findings,
        });
    }
    Ok(Conversion {
        document: output,
        notes,
    })
}

/// Clears every field the model does not know, returning where each was in `document`.
fn strip_unknown_fields(card: &mut AgentCard, document: &Value) -> Vec<String> {
    let mut dropped: Vec<String> = lint::lint_json(document)
        .into_iter()
        .filter(|f| f.rule == lint::Rule::UnknownField)
        .map(|f| f.pointer)
        .collect();
    if card.extra.contains_key("authentication") && !dropped.iter().any(|p| p == "/authentication")
    {
        dropped.push(pointer_push("", "authentication"));
    }
    card.extra.clear();
    if let Some(p) = &mut card.provider {
        p.extra.clear();
    }
    for i in &mut card.interfaces {
        i.extra.clear();
    }
    card.capabilities.extra.clear();
    for e in &mut card.capabilities.extensions {
        e.extra.clear();
    }
    for s in &mut card.skills {
        s.extra.clear();
    }
    for scheme in card.security_schemes.values_mut() {
        match scheme {
            SecurityScheme::ApiKey(s) => s.extra.clear(),
            SecurityScheme::Http(s) => s.extra.clear(),
            SecurityScheme::OpenIdConnect(s) => s.extra.clear(),
            SecurityScheme::MutualTls(s) => s.extra.clear(),
            SecurityScheme::OAuth2(s) => {
                s.extra.clear();
                s.flows.extra.clear();
                let f = &mut s.flows;
                for flow in [
                    &mut f.authorization_code,
                    &mut f.client_credentials,
                    &mut f.device_code,
                    &mut f.implicit,
                    &mut f.password,
                ]
                .into_iter()
                .flatten()
                {
                    flow.extra.clear();
                }
            }
        }
    }
    for s in &mut card.signatures {
        s.extra.clear();
    }
    dropped
}
