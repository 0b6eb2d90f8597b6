//! The *Input/output schemas* extension: named JSON Schemas on the card, referenced by
//! `application/json;schema=NAME` modes.

use std::fmt;

use a2a_card_rules::media::{MediaType, write_param_value};
pub use a2a_card_rules::names::check_schema_name;

/// The URI of the input/output schemas extension (v1), as listed in `capabilities.extensions`.
pub const IO_SCHEMAS_EXTENSION_URI: &str =
    "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/main/v1";

/// The JSON Schema dialect of named schemas.
pub const JSON_SCHEMA_DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// A mode that names a declared schema: `application/json;schema=NAME`.
///
/// [`parse`](Self::parse) is lenient (case, spaces, a quoted name); [`Display`](fmt::Display)
/// prints the canonical form.
///
/// ```
/// use a2a_card::SchemaMode;
/// let mode = SchemaMode::parse(r#" Application/Json; Schema="fightComparison" "#).unwrap();
/// assert_eq!(mode.name(), "fightComparison");
/// assert_eq!(mode.to_string(), "application/json;schema=fightComparison");
/// assert!(SchemaMode::parse("application/json").is_none());
/// assert!(SchemaMode::parse("text/plain;schema=x").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SchemaMode {
    name: String,
}

impl SchemaMode {
    /// The mode for a schema name. Returns `None` for an empty name.
    pub fn new(name: impl Into<String>) -> Option<SchemaMode> {
        let name = name.into();
        (!name.is_empty()).then_some(SchemaMode { name })
    }

    /// Reads a mode string; `None` unless it is `application/json` with a non-empty `schema`
    /// parameter.
    pub fn parse(mode: &str) -> Option<SchemaMode> {
        let media = MediaType::parse(mode).ok()?;
        if media.type_() != "application" || media.subtype() != "json" {
            return None;
        }
        SchemaMode::new(media.param("schema")?)
    }

    /// The schema name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for SchemaMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("application/json;schema=")?;
        write_param_value(f, &self.name)
    }
}
