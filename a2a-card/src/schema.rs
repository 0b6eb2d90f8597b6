//! The *Input/output schemas* extension: named JSON Schemas on the card, referenced by
//! `application/json;schema=NAME` modes (the user guide is on `NamedSchema`).

use std::fmt;

use serde_json::Value;

use std::borrow::Cow;

use a2a_card_rules::media::{MediaType, essence_is, is_token, write_param_value};
pub(crate) use a2a_card_rules::names::check_schema_name;

pub use a2a_card_rules::urls::IO_SCHEMAS_EXTENSION_URI;

/// The JSON Schema dialect of named schemas.
pub(crate) const JSON_SCHEMA_DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// The media type of plain JSON input, without a schema: what a skill that takes a
/// `serde_json::Value` lists, and what a data part may carry (or no media type at all) to reach
/// a skill that takes plain JSON (rule 6 of [`dispatch`](crate::dispatch)).
pub const PLAIN_JSON: &str = "application/json";

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
        SchemaMode::name_in(mode).and_then(SchemaMode::new)
    }

    /// The schema name a mode string names, borrowed from the string unless it had to be
    /// unquoted: what [`parse`](Self::parse) reads, without allocating on the dispatch path.
    ///
    /// ```
    /// use a2a_card::SchemaMode;
    /// assert_eq!(SchemaMode::name_in("application/json;schema=fightComparison").as_deref(), Some("fightComparison"));
    /// assert_eq!(SchemaMode::name_in(r#"Application/JSON; schema="a b""#).as_deref(), Some("a b"));
    /// assert_eq!(SchemaMode::name_in("application/json;schema=a;x"), None);
    /// ```
    pub fn name_in(mode: &str) -> Option<Cow<'_, str>> {
        // The canonical form, as the extension and this crate write it.
        if let Some(name) = mode.strip_prefix("application/json;schema=")
            && is_token(name)
        {
            return Some(Cow::Borrowed(name));
        }
        // Quoted values need unquoting: the full parser.
        if mode.contains('"') {
            let media = MediaType::parse(mode).ok()?;
            if media.type_() != "application" || media.subtype() != "json" {
                return None;
            }
            let name = media.param("schema")?;
            return (!name.is_empty()).then(|| Cow::Owned(name.to_owned()));
        }
        // Unquoted: the same rules as `MediaType::parse`, on slices.
        if !essence_is(mode, "application/json") {
            return None;
        }
        let mut pieces = mode.split(';');
        pieces.next();
        let mut found = None;
        for piece in pieces.map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = piece.split_once('=')?;
            let (name, value) = (name.trim(), value.trim());
            if !is_token(name) || !is_token(value) {
                return None;
            }
            if found.is_none() && name.eq_ignore_ascii_case("schema") {
                found = Some(value);
            }
        }
        found.map(Cow::Borrowed)
    }

    /// The schema name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The mode string for schema `name` (as [`Display`](fmt::Display) prints it), made in one
    /// allocation where the name needs no quoting; `None` for an empty name.
    #[cfg(feature = "server")]
    pub(crate) fn mode_of(name: &str) -> Option<String> {
        const PREFIX: &str = "application/json;schema=";
        if !is_token(name) {
            return SchemaMode::new(name).map(|mode| mode.to_string());
        }
        let mut mode = String::with_capacity(PREFIX.len() + name.len());
        mode.push_str(PREFIX);
        mode.push_str(name);
        Some(mode)
    }
}

impl fmt::Display for SchemaMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("application/json;schema=")?;
        write_param_value(f, &self.name)
    }
}

/// The description the crate gives the extension's entry in `capabilities.extensions` (the
/// extension's own wording).
pub const IO_SCHEMAS_EXTENSION_DESCRIPTION: &str = "Allow more deterministic invoking of tasks by providing JSON input corresponding to a provided schema";

/// The extension's entry in `capabilities.extensions`, as every card this crate makes lists it:
/// the URI, not required (the extension is data-only), with [`IO_SCHEMAS_EXTENSION_DESCRIPTION`].
pub(crate) fn io_schemas_extension() -> crate::card::AgentExtension {
    crate::card::AgentExtension::new(IO_SCHEMAS_EXTENSION_URI)
        .with_description(IO_SCHEMAS_EXTENSION_DESCRIPTION)
}

/// The types that generate a JSON Schema: those implementing `schemars::JsonSchema`. A
/// [`NamedSchema`] names such a schema; this trait stands between them so that a type deriving
/// `Schema` without `JsonSchema` is told how to fix it, rather than that a trait it cannot see
/// is sealed.
///
/// ```
/// use a2a_card::DerivesJsonSchema;
///
/// #[derive(schemars::JsonSchema)]
/// struct Pair { a: String }
///
/// let schema = Pair::generated_json_schema(a2a_card::SchemaOptions::DEFAULT);
/// assert_eq!(schema["properties"]["a"]["type"], "string");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` derives `a2a_card::Schema` but not `schemars::JsonSchema`",
    label = "add `schemars::JsonSchema` to the derives of `{Self}`",
    note = "`Schema` names the schema that `JsonSchema` generates: write `#[derive(serde::Deserialize, schemars::JsonSchema, a2a_card::Schema)]` (schemars 1.x; `Serialize` for an output)"
)]
pub trait DerivesJsonSchema {
    /// The type's self-contained draft 2020-12 schema (see [`schema_for`]).
    fn generated_json_schema(options: SchemaOptions) -> Value;
}

#[diagnostic::do_not_recommend]
impl<T: schemars::JsonSchema + ?Sized> DerivesJsonSchema for T {
    fn generated_json_schema(options: SchemaOptions) -> Value {
        schema_for::<T>(options)
    }
}

/// A Rust type whose JSON Schema the card publishes under a name, for
/// `application/json;schema=NAME` modes.
///
/// This is the *Input/output schemas* extension ([`IO_SCHEMAS_EXTENSION_URI`]): named JSON
/// Schemas on the card, which those modes reference.
///
/// Derive it with [`#[derive(Schema)]`](macro@crate::Schema) next to `schemars::JsonSchema` and
/// serde; the name defaults to the type name in lowerCamelCase.
///
/// ```
/// use a2a_card::{NamedSchema, Schema};
/// use schemars::JsonSchema;
///
/// /// Two contestants.
/// #[derive(serde::Deserialize, JsonSchema, Schema)]
/// #[serde(deny_unknown_fields)]
/// struct FightComparison {
///     /// The name of the first contestant
///     a: String,
///     /// The name of the second contestant
///     b: String,
/// }
///
/// assert_eq!(FightComparison::SCHEMA_NAME, "fightComparison");
/// let schema = FightComparison::json_schema_value();
/// assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
/// assert_eq!(schema["additionalProperties"], false);
/// ```
pub trait NamedSchema: DerivesJsonSchema {
    /// The schema's name on the card (a media-type token).
    const SCHEMA_NAME: &'static str;

    /// How to generate the schema.
    const SCHEMA_OPTIONS: SchemaOptions = SchemaOptions::DEFAULT;

    /// The self-contained draft 2020-12 schema of the type.
    fn json_schema_value() -> Value {
        Self::generated_json_schema(Self::SCHEMA_OPTIONS)
    }
}

/// How a named schema is generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SchemaOptions {
    /// Inline every subschema instead of referencing `$defs`, for clients that do not resolve
    /// `$ref` (recursive types keep their references).
    pub inline: bool,
}

impl SchemaOptions {
    /// Subschemas in `$defs`, referenced with `$ref`.
    pub const DEFAULT: SchemaOptions = SchemaOptions { inline: false };
    /// Every subschema inlined.
    pub const INLINE: SchemaOptions = SchemaOptions { inline: true };
}

impl Default for SchemaOptions {
    fn default() -> Self {
        SchemaOptions::DEFAULT
    }
}

/// The named schema of `T`: self-contained (nested types in its own `$defs`), JSON Schema
/// draft 2020-12, doc comments as descriptions, serde attributes honoured.
///
/// Two adjustments make it portable: the root `title` that schemars derives from the Rust type
/// name is dropped (the card names the schema), and OpenAPI's numeric `format`s (`int32`,
/// `uint8`, `double`, ...), which draft 2020-12 does not define, become the `minimum` and
/// `maximum` they imply. `Option<T>` fields are `anyOf: [T, {"type": "null"}]` (or
/// `type: [T, "null"]` for simple types) and are left out of `required`.
///
/// For a card built by hand, it gives [`AgentCardBuilder::schema`](crate::AgentCardBuilder::schema)
/// the schema that `#[derive(Schema)]` would publish:
///
/// ```
/// use a2a_card::{AgentCard, AgentSkill, SchemaOptions, schema_for};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Order {
///     item: String,
/// }
///
/// let card = AgentCard::builder("Shop", "Takes orders.", "1.0.0")
///     .jsonrpc("https://shop.example.com/a2a")
///     .skill(AgentSkill::builder("order", "Order", "Places an order.").tags(["orders"]).input_schema("order"))
///     .schema("order", schema_for::<Order>(SchemaOptions::DEFAULT))
///     .build()?;
/// assert_eq!(card.schemas["order"]["properties"]["item"]["type"], "string");
/// # Ok::<(), a2a_card::BuildError>(())
/// ```
pub fn schema_for<T: schemars::JsonSchema + ?Sized>(options: SchemaOptions) -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.inline_subschemas = options.inline;
    let root = settings.into_generator().into_root_schema_for::<T>();
    let mut value = root.to_value();
    if let Value::Object(map) = &mut value
        && map.get("title").and_then(Value::as_str) == Some(T::schema_name().as_ref())
    {
        map.shift_remove("title");
    }
    portable_formats(&mut value);
    tidy(&mut value);
    value
}

/// Keywords in the order a reader expects them; others follow in the order they came, and
/// `$defs` ends the schema.
const KEYWORD_ORDER: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "title",
    "description",
    "type",
    "const",
    "enum",
    "format",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "default",
    "examples",
];

/// Keywords whose value is a map from names to subschemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "$defs",
    "definitions",
    "patternProperties",
    "dependentSchemas",
];
/// Keywords whose value is data, not a schema.
const DATA: &[&str] = &["const", "enum", "default", "examples", "required"];

/// Orders a schema's keywords (see [`KEYWORD_ORDER`]), and those of its subschemas.
fn tidy(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    let rank = |k: &str| match KEYWORD_ORDER.iter().position(|o| *o == k) {
        Some(i) => i,
        None if k == "$defs" || k == "definitions" => usize::MAX,
        None => KEYWORD_ORDER.len(),
    };
    // A stable sort: unknown keywords keep their relative order.
    let mut entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
    entries.sort_by_key(|(k, _)| rank(k));
    for (key, value) in &mut entries {
        if SCHEMA_MAPS.contains(&key.as_str()) {
            if let Value::Object(subs) = value {
                subs.values_mut().for_each(tidy);
            }
        } else if !DATA.contains(&key.as_str()) {
            match value {
                Value::Array(items) => items.iter_mut().for_each(tidy),
                other => tidy(other),
            }
        }
    }
    map.extend(entries);
}

/// Replaces OpenAPI numeric formats with the bounds they imply, everywhere in a schema.
fn portable_formats(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let bounds: Option<(Option<i128>, Option<i128>)> =
                match map.get("format").and_then(Value::as_str) {
                    Some("int8") => Some((Some(i8::MIN.into()), Some(i8::MAX.into()))),
                    Some("int16") => Some((Some(i16::MIN.into()), Some(i16::MAX.into()))),
                    Some("int32") => Some((Some(i32::MIN.into()), Some(i32::MAX.into()))),
                    Some("int64") => Some((Some(i64::MIN.into()), Some(i64::MAX.into()))),
                    Some("uint8") => Some((Some(0), Some(u8::MAX.into()))),
                    Some("uint16") => Some((Some(0), Some(u16::MAX.into()))),
                    Some("uint32") => Some((Some(0), Some(u32::MAX.into()))),
                    Some("uint64") => Some((Some(0), Some(u64::MAX.into()))),
                    Some("uint") => Some((Some(0), None)),
                    Some("int" | "float" | "double" | "int128" | "uint128") => Some((None, None)),
                    _ => None,
                };
            if let Some((min, max)) = bounds {
                map.shift_remove("format");
                for (key, bound) in [("minimum", min), ("maximum", max)] {
                    if let Some(b) = bound
                        && !map.contains_key(key)
                    {
                        let n = i64::try_from(b)
                            .map(Value::from)
                            .unwrap_or_else(|_| Value::from(u64::try_from(b).unwrap_or(u64::MAX)));
                        map.insert(key.to_owned(), n);
                    }
                }
            }
            map.values_mut().for_each(portable_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(portable_formats),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[cfg(feature = "server")]
    #[test]
    fn a_mode_made_at_once_is_the_mode_printed() {
        for name in ["fightComparison", "a b", "x\"y", "ü"] {
            assert_eq!(
                SchemaMode::mode_of(name),
                SchemaMode::new(name).map(|m| m.to_string()),
                "{name}"
            );
        }
        assert_eq!(SchemaMode::mode_of(""), None);
    }

    /// The reading `name_in` must agree with: the full media-type parser.
    fn reference(mode: &str) -> Option<String> {
        let media = MediaType::parse(mode).ok()?;
        if media.type_() != "application" || media.subtype() != "json" {
            return None;
        }
        media
            .param("schema")
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn name_in_agrees_with_the_media_type_parser(
            mode in r#"( ?[aA]pplication ?/ ?[jJ][sS][oO][nN] ?| ?text/plain)(( ?; ?)([sS]chema|x|q)( ?= ?)([a-zA-Z0-9._-]{0,6}|"[a-z \\"]{0,5}")){0,3};?"#
        ) {
            prop_assert_eq!(SchemaMode::name_in(&mode).map(Cow::into_owned), reference(&mode), "{}", mode);
        }

        #[test]
        fn name_in_agrees_on_any_text(mode in ".{0,40}") {
            prop_assert_eq!(SchemaMode::name_in(&mode).map(Cow::into_owned), reference(&mode));
        }
    }
}
