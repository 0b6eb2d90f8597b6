//! Every rule of the card, in one table: its stable code, its severity and what it asks.
//!
//! Sources: the A2A 1.0 and 0.3 specifications and their JSON schemas, the Agent Card schema
//! reference's *Validation Rules* and *Best Practices*, the field reference's *Common mistakes*,
//! and the input/output schemas extension.

use std::fmt;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// A best practice is not followed; the card still works.
    Warning,
    /// The card breaks a rule of the protocol or of the extension; clients may fail on it.
    Error,
}

impl Severity {
    /// `"error"` or `"warning"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! rules {
    ($( $(#[doc = $doc:literal])* $variant:ident = $code:literal, $severity:ident $(, $flag:ident)*; )*) => {
        /// A rule of the card. [`code`](Rule::code) is stable and safe to match on in tools.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Rule {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl Rule {
            /// Every rule, in table order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant),*];

            /// The stable kebab-case code.
            pub const fn code(self) -> &'static str {
                match self { $(Rule::$variant => $code,)* }
            }

            /// How bad breaking it is.
            pub const fn severity(self) -> Severity {
                match self { $(Rule::$variant => Severity::$severity,)* }
            }

            /// What the rule asks, in one line.
            pub fn summary(self) -> &'static str {
                match self { $(Rule::$variant => concat!($($doc),*).trim_ascii(),)* }
            }

            /// The rule with this code.
            pub fn from_code(code: &str) -> Option<Rule> {
                Rule::ALL.iter().copied().find(|r| r.code() == code)
            }

            /// Whether [`LintOptions::strict`](super::LintOptions::strict) makes this warning an
            /// error: what official parsers tolerate but a strict consumer rejects.
            pub fn is_strict_error(self) -> bool {
                match self { $(Rule::$variant => [$(stringify!($flag)),*].contains(&"strict"),)* }
            }

            /// Whether a card that breaks this rule is one the official JSON schema or SDK of its
            /// A2A version rejects, or one whose required fields the SDK finds missing (the rules
            /// `a2a-card convert` refuses to write a card against).
            pub fn is_conformance(self) -> bool {
                match self { $(Rule::$variant => [$(stringify!($flag)),*].contains(&"conformance"),)* }
            }
        }
    };
}

rules! {
    /// A value has the wrong JSON type (e.g. a number where a string belongs).
    WrongType = "wrong-type", Error, conformance;
    /// A key appears twice in one JSON object; parsers disagree on which value counts (most keep the last, silently), and signatures over the card become ambiguous.
    DuplicateKey = "duplicate-key", Error;
    /// A field this crate does not know. In a 1.0 card it is an error: the 1.0 JSON schema allows no other member in any object of the card (a warning with `--lenient`). In 0.3 and compat documents, whose schema allows other members, a warning (an error with `--strict`).
    UnknownField = "unknown-field", Warning, strict;
    /// A field or shape of another A2A version than the card's (0.3's `protocolVersion`, `security` or `stateTransitionHistory` in a 1.0 card; a 1.0 security scheme in a 0.3 card; a compat document without the 0.3 half of a scheme): the official schema and SDK of the card's version reject or ignore it.
    FieldVersionMismatch = "field-version-mismatch", Error, conformance;
    /// A 0.3 card spells a field in snake_case (`protocol_version`, `default_input_modes`): A2A 0.3 JSON is camelCase, so the official 0.3 schema and every client but the Python SDK find no such field (`a2a-card convert` writes the camelCase card).
    FieldSnakeCase = "field-snake-case", Error, conformance;
    /// The protocol version the card declares contradicts its shape (it says 1.0 but is shaped as 0.3).
    ProtocolVersionMismatch = "protocol-version-mismatch", Error, conformance;

    /// `name` must be a non-empty string.
    NameMissing = "name-missing", Error, conformance;
    /// Avoid generic names like "Agent" or "Assistant"; orchestrators must tell agents apart.
    NameGeneric = "name-generic", Warning;
    /// `description` must be a non-empty string.
    DescriptionMissing = "description-missing", Error, conformance;
    /// Say what the agent does (inputs, outputs, languages); a few vague words do not route.
    DescriptionVague = "description-vague", Warning;
    /// `version` must be a non-empty string.
    VersionMissing = "version-missing", Error, conformance;
    /// Use semantic versioning for `version` so clients know when to re-fetch.
    VersionNotSemver = "version-not-semver", Warning;
    /// A provider needs both `organization` and `url`.
    ProviderIncomplete = "provider-incomplete", Error, conformance;

    /// The card must say where to reach the agent (1.0 `supportedInterfaces`, 0.3 `url`).
    InterfaceMissing = "interface-missing", Error, conformance;
    /// Each interface needs a protocol binding (`JSONRPC`, `GRPC`, `HTTP+JSON`).
    InterfaceBindingMissing = "interface-binding-missing", Error, conformance;
    /// The protocol binding is not one of the core bindings; check the spelling.
    InterfaceBindingUnknown = "interface-binding-unknown", Warning;
    /// Each interface must say which A2A version it speaks (1.0: the interface's `protocolVersion`; 0.3: the card's `protocolVersion`); both versions require it.
    ProtocolVersionMissing = "protocol-version-missing", Error, conformance;
    /// Protocol versions are `major.minor` (`"1.0"`), without a patch number (A2A 1.0 §3.6).
    ProtocolVersionFormat = "protocol-version-format", Warning;
    /// A URL must be absolute and parse.
    UrlInvalid = "url-invalid", Error, conformance;
    /// Endpoint and authentication URLs must use https (plain http only for loopback).
    UrlInsecure = "url-insecure", Error;
    /// Provider, documentation and icon links should use https.
    LinkInsecure = "link-insecure", Warning;
    /// A hard-coded localhost URL breaks in production; take it from the environment.
    UrlLocalhost = "url-localhost", Warning;
    /// The endpoint URL points at the card itself; it must be where requests go.
    UrlIsCardPath = "url-is-card-path", Error;

    /// The card must have a `capabilities` object (required by A2A 0.3 and 1.0), even an empty one.
    CapabilitiesMissing = "capabilities-missing", Error, conformance;
    /// Declare `capabilities.streaming` and `capabilities.pushNotifications` explicitly.
    CapabilityUndeclared = "capability-undeclared", Warning;
    /// An extended card is for authenticated callers, but the card declares no security scheme.
    ExtendedCardWithoutAuth = "extended-card-without-auth", Warning;
    /// Each extension needs a `uri`.
    ExtensionUriMissing = "extension-uri-missing", Error, conformance;

    /// `defaultInputModes` and `defaultOutputModes` must be non-empty.
    DefaultModesMissing = "default-modes-missing", Error, conformance;
    /// A mode must be a media type (`text/plain`, not `text/`).
    ModeInvalid = "mode-invalid", Error;
    /// The 0.2-era shorthands `text`, `file` and `data` are not media types; write `text/plain`, `application/octet-stream`, `application/json` (an error with `--strict`).
    ModeShorthand = "mode-shorthand", Warning, strict;

    /// A card needs at least one skill.
    SkillsEmpty = "skills-empty", Error, conformance;
    /// Each skill needs a non-empty `id`.
    SkillIdMissing = "skill-id-missing", Error, conformance;
    /// Skill ids must be unique.
    SkillIdDuplicate = "skill-id-duplicate", Error;
    /// Skill ids should be kebab-case (`code-review`, not `CodeReview` or `code_review`).
    SkillIdNotKebabCase = "skill-id-not-kebab-case", Warning;
    /// Each skill needs a non-empty `name`.
    SkillNameMissing = "skill-name-missing", Error, conformance;
    /// Each skill needs a non-empty `description`.
    SkillDescriptionMissing = "skill-description-missing", Error, conformance;
    /// Say what the skill takes and returns; orchestrators route on it.
    SkillDescriptionVague = "skill-description-vague", Warning;
    /// A skill's example that is JSON data for a skill taking a named schema must follow that schema (in a card that carries the input/output schemas extension); callers and models copy examples.
    SkillExampleInvalid = "skill-example-invalid", Error;
    /// Give each skill examples (2-3) so clients and LLMs know what to send.
    SkillExamplesMissing = "skill-examples-missing", Warning;
    /// A skill document has no `tags` field, which A2A 0.3 and 1.0 require.
    SkillTagsMissing = "skill-tags-missing", Error, conformance;
    /// A skill's `tags` are empty; give it keywords for discovery (A2A 1.0 requires at least one).
    SkillTagsEmpty = "skill-tags-empty", Warning;
    /// Tags should be lowercase keywords.
    SkillTagNotLowercase = "skill-tag-not-lowercase", Warning;

    /// A security requirement names a scheme that `securitySchemes` does not declare.
    SecuritySchemeUndeclared = "security-scheme-undeclared", Error;
    /// A security requirement is not in its field's shape (1.0 `securityRequirements`: `{"schemes": {NAME: {"list": [..]}}}`; 0.3 `security`: `{NAME: [..]}`); official parsers misread it (the 1.0 SDK reads a bare map as no requirement at all, and drops the scopes of bare arrays).
    SecurityRequirementShape = "security-requirement-shape", Error, conformance;
    /// A requirement lists scopes for a scheme whose kind has none (API key, HTTP, mutual TLS); scopes belong to OAuth 2.0 and OpenID Connect schemes, and clients ignore them elsewhere.
    SecurityScopesUnsupported = "security-scopes-unsupported", Warning;
    /// A security scheme lacks a field it needs (API key name/location, HTTP scheme, OIDC URL, flow URLs, flow scopes).
    SecuritySchemeIncomplete = "security-scheme-incomplete", Error, conformance;
    /// An OAuth 2.0 scheme must have exactly one flow in A2A 1.0.
    OAuthFlowCount = "oauth-flow-count", Error, conformance;
    /// The implicit and password flows are deprecated; use authorization code with PKCE or device code.
    OAuthFlowDeprecated = "oauth-flow-deprecated", Warning;
    /// Set `pkceRequired: true` on the authorization code flow.
    OAuthPkceMissing = "oauth-pkce-missing", Warning;
    /// The A2A 0.1/0.2 `authentication` object names schemes without their details; 0.3 and 1.0 clients ignore it.
    LegacyAuthentication = "legacy-authentication", Warning;

    /// A signature needs base64url `protected` and `signature` values.
    SignatureMalformed = "signature-malformed", Error, conformance;
    /// The card is signed and has root `schemas`, but no `params.schemasDigest` in the input/output schemas extension entry binds them: no signature covers the schemas.
    SignatureSchemasUnbound = "signature-schemas-unbound", Warning;

    /// A schema mode names a schema the card's `schemas` does not declare.
    SchemaUndeclared = "schema-undeclared", Error;
    /// Schemas are used but the input/output schemas extension is not in `capabilities.extensions`.
    SchemaExtensionMissing = "schema-extension-missing", Error;
    /// A declared schema is not a valid, self-contained JSON Schema (draft 2020-12).
    SchemaInvalid = "schema-invalid", Error;
    /// A schema name must be usable unquoted in a media type parameter (letters, digits, `-_.`).
    SchemaNameInvalid = "schema-name-invalid", Error;
    /// A declared schema is used by no mode.
    SchemaUnused = "schema-unused", Warning;
    /// Two different types publish a schema under one name (found when a declared agent's card is built).
    SchemaNameConflict = "schema-name-conflict", Error;
    /// Two skills take one input schema: structured input is routed by its schema name alone (the extension's section 3), so a message naming it reaches only the first skill.
    SchemaInputShared = "schema-input-shared", Error;
    /// A skill that takes a schema input should also take `text/plain` (the extension highly recommends it).
    SchemaTextFallback = "schema-text-fallback", Warning;
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_kebab_case_and_documented() {
        let mut seen = std::collections::HashSet::new();
        for rule in Rule::ALL {
            assert!(seen.insert(rule.code()), "duplicate code {}", rule.code());
            assert!(crate::lint::is_kebab_case(rule.code()), "{}", rule.code());
            assert!(!rule.summary().is_empty());
            assert_eq!(Rule::from_code(rule.code()), Some(*rule));
        }
    }
}
