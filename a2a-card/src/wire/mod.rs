//! The card's JSON: three profiles to write, every known shape to read.
//!
//! | profile | shape |
//! |---|---|
//! | [`Profile::V1`] (default) | A2A 1.0 ProtoJSON: `supportedInterfaces`, `securityRequirements`, wrapper-keyed security schemes, `capabilities.extendedAgentCard` |
//! | [`Profile::V0_3`] | A2A 0.3: top-level `url`, `protocolVersion`, `preferredTransport`, `additionalInterfaces`, `security`, `type`-tagged schemes, `supportsAuthenticatedExtendedCard` |
//! | [`Profile::Compat`] | both in one document, for clients that send no `A2A-Version` header |
//!
//! Reading accepts all three, the proto's snake_case field names, the A2A 0.1 `authentication`
//! object and bare-array security requirements, and normalises them into one
//! [`AgentCard`]. Fields a profile does not define (0.3's `stateTransitionHistory` in `v1`) are
//! left out of that profile; fields the model does not know are kept and written back verbatim.
//!
//! ```
//! use a2a_card::{AgentCard, wire::Profile};
//! let json = serde_json::json!({
//!     "name": "Echo", "description": "Echoes text back.", "version": "1.0.0",
//!     "url": "https://echo.example.com/a2a", "protocolVersion": "0.3.0",
//!     "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
//!     "skills": [{"id": "echo", "name": "Echo", "description": "Echoes text.", "tags": []}]
//! });
//! assert_eq!(Profile::detect(&json), Profile::V0_3);
//! let card = AgentCard::from_json(&json).unwrap();
//! let v1 = card.to_json(Profile::V1);
//! assert_eq!(v1["supportedInterfaces"][0]["url"], "https://echo.example.com/a2a");
//! assert_eq!(AgentCard::from_json(&v1).unwrap(), card);
//! ```

mod convert;
mod placement;
pub(crate) mod quote;
mod read;
mod sources;
mod write;

pub use convert::{Conversion, ConvertError, DEFAULT_0_3_PROTOCOL_VERSION, convert};
pub use placement::SchemaPlacement;
pub(crate) use placement::schemas_in_params;
pub(crate) use read::snake_case;

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use crate::card::AgentCard;

/// How a kind of security scheme is named on the wire.
#[derive(Debug)]
pub(crate) struct SchemeNames {
    /// The 1.0 wrapper key (ProtoJSON camelCase).
    pub wrapper: &'static str,
    /// The same key as the proto spells it.
    pub wrapper_snake: &'static str,
    /// The 0.3 `type` tag.
    pub tag: &'static str,
}

/// The wire names of each kind of security scheme, in the order of [`SecurityScheme`]'s
/// variants: the one table the reader, the writer and the linter name schemes by.
///
/// [`SecurityScheme`]: crate::SecurityScheme
pub(crate) const SCHEME_NAMES: [SchemeNames; 5] = [
    SchemeNames {
        wrapper: "apiKeySecurityScheme",
        wrapper_snake: "api_key_security_scheme",
        tag: "apiKey",
    },
    SchemeNames {
        wrapper: "httpAuthSecurityScheme",
        wrapper_snake: "http_auth_security_scheme",
        tag: "http",
    },
    SchemeNames {
        wrapper: "oauth2SecurityScheme",
        wrapper_snake: "oauth2_security_scheme",
        tag: "oauth2",
    },
    SchemeNames {
        wrapper: "openIdConnectSecurityScheme",
        wrapper_snake: "open_id_connect_security_scheme",
        tag: "openIdConnect",
    },
    SchemeNames {
        wrapper: "mtlsSecurityScheme",
        wrapper_snake: "mtls_security_scheme",
        tag: "mutualTLS",
    },
];

impl SchemeNames {
    /// The names of `scheme`'s kind.
    pub(crate) fn of(scheme: &crate::SecurityScheme) -> &'static SchemeNames {
        use crate::SecurityScheme as S;
        let index = match scheme {
            S::ApiKey(_) => 0,
            S::Http(_) => 1,
            S::OAuth2(_) => 2,
            S::OpenIdConnect(_) => 3,
            S::MutualTls(_) => 4,
        };
        &SCHEME_NAMES[index]
    }
}

/// Which protocol version's JSON to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Profile {
    /// A2A 1.0 ProtoJSON.
    #[default]
    V1,
    /// A2A 0.3.
    V0_3,
    /// 1.0 and 0.3 fields in one document.
    Compat,
}

impl Profile {
    /// Every profile.
    pub const ALL: [Profile; 3] = [Profile::V1, Profile::V0_3, Profile::Compat];

    /// Guesses the profile a card was written in: `Compat` when it has both 1.0 interfaces and
    /// a 0.3 `url`, `V1` when it has any 1.0-only field, otherwise `V0_3` (which covers 0.1 and
    /// 0.2 cards too).
    pub fn detect(card: &Value) -> Profile {
        let has = |k: &str| card.get(k).is_some_and(|v| !v.is_null());
        let modern = has("supportedInterfaces")
            || has("supported_interfaces")
            || has("securityRequirements")
            || card.pointer("/capabilities/extendedAgentCard").is_some();
        match (modern, has("url")) {
            (true, true) => Profile::Compat,
            (true, false) => Profile::V1,
            (false, _) => Profile::V0_3,
        }
    }

    /// The name used on the command line and in `A2A-Version` negotiation: `v1`, `v0.3`,
    /// `compat`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Profile::V1 => "v1",
            Profile::V0_3 => "v0.3",
            Profile::Compat => "compat",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "v1" | "1" | "1.0" | "v1.0" => Ok(Profile::V1),
            "v0.3" | "0.3" | "0.3.0" | "v0.3.0" => Ok(Profile::V0_3),
            "compat" => Ok(Profile::Compat),
            other => Err(format!(
                "unknown profile `{other}`: expected v1, v0.3 or compat"
            )),
        }
    }
}

/// How to render a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct RenderOptions {
    /// The profile.
    pub profile: Profile,
    /// Where named schemas go.
    pub schemas: SchemaPlacement,
}

impl RenderOptions {
    /// Options for `profile` with the default schema placement.
    pub fn new(profile: Profile) -> Self {
        RenderOptions {
            profile,
            schemas: SchemaPlacement::Root,
        }
    }

    /// Sets where named schemas go.
    pub fn schemas(mut self, placement: SchemaPlacement) -> Self {
        self.schemas = placement;
        self
    }
}

/// A value of the wrong type in a card, at a JSON pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseIssue {
    /// Where, as a JSON pointer (RFC 6901); `""` is the whole document.
    pub pointer: String,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for ParseIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{at}: {}", self.message)
    }
}

/// Limits for reading untrusted card documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadLimits {
    /// The largest document, in bytes.
    pub max_bytes: usize,
    /// The deepest nesting of arrays and objects.
    pub max_depth: usize,
}

impl Default for ReadLimits {
    /// 4 MiB and 64 levels: far beyond any real card, far below what could hurt.
    fn default() -> Self {
        ReadLimits {
            max_bytes: 4 * 1024 * 1024,
            max_depth: 64,
        }
    }
}

impl ReadLimits {
    /// Sets the largest document, in bytes.
    pub fn max_bytes(mut self, n: usize) -> Self {
        self.max_bytes = n;
        self
    }

    /// Sets the deepest nesting.
    pub fn max_depth(mut self, n: usize) -> Self {
        self.max_depth = n;
        self
    }
}

/// Why a card could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CardError {
    /// The document is larger than [`ReadLimits::max_bytes`].
    TooLarge {
        /// Its size in bytes (or a lower bound, for a stream cut off at the limit).
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The bytes are not UTF-8.
    InvalidUtf8 {
        /// Line (1-based) of the first bad byte.
        line: usize,
        /// Column (1-based, in bytes) of the first bad byte.
        column: usize,
    },
    /// Arrays and objects nest deeper than [`ReadLimits::max_depth`].
    TooDeep {
        /// Line of the bracket that goes too deep.
        line: usize,
        /// Column of that bracket.
        column: usize,
        /// The limit.
        limit: usize,
    },
    /// The document is not JSON.
    Syntax {
        /// Line of the error.
        line: usize,
        /// Column of the error.
        column: usize,
        /// What the JSON parser said.
        message: String,
    },
    /// The document is JSON, but some values have the wrong type.
    Invalid(Vec<ParseIssue>),
}

impl fmt::Display for CardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CardError::TooLarge { size, limit } => write!(
                f,
                "the document is {size} bytes, more than the limit of {limit} bytes"
            ),
            CardError::InvalidUtf8 { line, column } => {
                write!(
                    f,
                    "invalid UTF-8 at line {line} column {column}: a card must be UTF-8 JSON"
                )
            }
            CardError::TooDeep {
                line,
                column,
                limit,
            } => write!(
                f,
                "nesting deeper than {limit} levels at line {line} column {column}"
            ),
            CardError::Syntax {
                line,
                column,
                message,
            } => {
                write!(
                    f,
                    "malformed JSON at line {line} column {column}: {message}"
                )
            }
            CardError::Invalid(issues) => {
                write!(f, "the card has {} invalid value(s):", issues.len())?;
                for issue in issues {
                    write!(f, "\n  {issue}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for CardError {}

/// Reads a card from a JSON value of any profile, skipping values of the wrong type and reporting
/// each.
pub fn from_value_lenient(value: &Value) -> (AgentCard, Vec<ParseIssue>) {
    let (card, issues, _) = read_with_sources(value);
    (card, issues)
}

pub(crate) use sources::Sources;

/// [`from_value_lenient`], with where the interfaces came from (for the linter's pointers).
pub(crate) fn read_with_sources(value: &Value) -> (AgentCard, Vec<ParseIssue>, Sources) {
    let (mut card, issues, mut sources) = read::read_card(value);
    if let Some(at) = placement::lift_from_params(&mut card)
        .and_then(|index| sources.extensions.get(index))
        .map(|entry| format!("{entry}/params/schemas"))
    {
        sources.schemas = at;
    }
    (card, issues, sources)
}

/// Parses bytes into JSON within the limits, with line and column for every error.
pub fn parse_document(bytes: &[u8], limits: ReadLimits) -> Result<Value, CardError> {
    Document::parse(bytes, limits).map(|d| d.value)
}

/// A card document as read from bytes: its JSON, and what only the text shows.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Document {
    /// The JSON. Where a key appears twice in one object, the last value is kept (as in most
    /// JSON parsers).
    pub value: Value,
    /// The JSON pointer of each key that appears more than once in its object, once each, in the
    /// order the parser finds them (a duplicate is found at the end of its second value).
    pub duplicate_keys: Vec<String>,
}

impl Document {
    /// Parses bytes into JSON within the limits (size, UTF-8, nesting depth), with line and
    /// column for every error, noting duplicate keys on the way (one pass).
    ///
    /// ```
    /// use a2a_card::wire::{Document, ReadLimits};
    /// let doc = Document::parse(br#"{"skills": [{"id": "a", "id": "b"}]}"#, ReadLimits::default()).unwrap();
    /// assert_eq!(doc.duplicate_keys, ["/skills/0/id"]);
    /// assert_eq!(doc.value["skills"][0]["id"], "b");
    /// ```
    pub fn parse(bytes: &[u8], limits: ReadLimits) -> Result<Document, CardError> {
        if bytes.len() > limits.max_bytes {
            return Err(CardError::TooLarge {
                size: bytes.len(),
                limit: limits.max_bytes,
            });
        }
        let text = std::str::from_utf8(bytes).map_err(|e| {
            let (line, column) = line_column(bytes, e.valid_up_to());
            CardError::InvalidUtf8 { line, column }
        })?;
        // The depth is checked first, so the recursive parse below is bounded by it.
        check_depth(text, limits.max_depth)?;
        let syntax = |e: serde_json::Error| {
            let (line, column) = syntax_position(text, e.line(), e.column());
            CardError::Syntax {
                line,
                column,
                message: strip_position(&e.to_string()),
            }
        };
        let mut tracker = dup::Tracker::default();
        let mut de = serde_json::Deserializer::from_str(text);
        let value = serde::de::DeserializeSeed::deserialize(dup::Node(&mut tracker), &mut de)
            .map_err(syntax)?;
        de.end().map_err(syntax)?;
        Ok(Document {
            value,
            duplicate_keys: tracker.duplicates,
        })
    }
}

/// Building a [`Value`] while noting duplicate keys, in serde_json's one pass.
mod dup {
    use std::fmt;

    use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
    use serde_json::{Map, Number, Value};

    #[derive(Default)]
    pub(super) struct Tracker {
        /// Reference tokens from the root to the value being read.
        path: Vec<String>,
        pub(super) duplicates: Vec<String>,
    }

    impl Tracker {
        fn duplicate(&mut self, key: &str) {
            let mut pointer = String::new();
            for token in &self.path {
                pointer = super::pointer_push(&pointer, token);
            }
            let pointer = super::pointer_push(&pointer, key);
            if !self.duplicates.contains(&pointer) {
                self.duplicates.push(pointer);
            }
        }
    }

    pub(super) struct Node<'t>(pub(super) &'t mut Tracker);

    impl<'de> DeserializeSeed<'de> for Node<'_> {
        type Value = Value;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Node<'_> {
        type Value = Value;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
            Ok(Value::Bool(b))
        }
        fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
            Ok(Value::from(n))
        }
        fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
            Ok(Value::from(n))
        }
        fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
            Ok(Number::from_f64(n).map_or(Value::Null, Value::Number))
        }
        fn visit_str<E>(self, s: &str) -> Result<Value, E> {
            Ok(Value::String(s.to_owned()))
        }
        fn visit_string<E>(self, s: String) -> Result<Value, E> {
            Ok(Value::String(s))
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_none<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            let mut items = Vec::new();
            loop {
                self.0.path.push(items.len().to_string());
                let next = seq.next_element_seed(Node(&mut *self.0));
                self.0.path.pop();
                match next? {
                    Some(item) => items.push(item),
                    None => return Ok(Value::Array(items)),
                }
            }
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            let mut object = Map::new();
            while let Some(key) = map.next_key::<String>()? {
                self.0.path.push(key);
                let value = map.next_value_seed(Node(&mut *self.0));
                let key = self.0.path.pop().unwrap_or_default();
                let value = value?;
                if object.contains_key(&key) {
                    self.0.duplicate(&key);
                }
                object.insert(key, value);
            }
            Ok(Value::Object(object))
        }
    }
}

/// serde_json gives column 0 for an error at a line break or at the end of input; point at the
/// end of the line before instead, so positions are always 1-based.
fn syntax_position(text: &str, line: usize, column: usize) -> (usize, usize) {
    if column > 0 || line <= 1 {
        return (line.max(1), column.max(1));
    }
    let previous = text.split('\n').nth(line - 2).unwrap_or_default();
    (line - 1, previous.trim_end_matches('\r').len() + 1)
}

/// serde_json appends " at line L column C"; the error carries those separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

fn line_column(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = offset
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1)
        + 1;
    (line, column)
}

/// Rejects nesting deeper than `max` before any recursive parser sees it.
fn check_depth(text: &str, max: usize) -> Result<(), CardError> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, b) in text.bytes().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    let (line, column) = line_column(text.as_bytes(), i);
                    return Err(CardError::TooDeep {
                        line,
                        column,
                        limit: max,
                    });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Appends a reference token to a JSON pointer, escaping `~` and `/` (RFC 6901).
pub fn pointer_push(pointer: &str, token: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + token.len() + 1);
    out.push_str(pointer);
    out.push('/');
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

// One of `AgentCard`'s blocks, each in the file of its concern: here, the card read from
// and written to its JSON profiles.
impl AgentCard {
    /// Reads a card from JSON of any profile. Fails, listing every value of the wrong type with
    /// its JSON pointer, when any value has the wrong type; missing fields are not an error here
    /// (the [linter](crate::lint) reports them).
    pub fn from_json(value: &Value) -> Result<AgentCard, CardError> {
        let (card, issues) = from_value_lenient(value);
        if issues.is_empty() {
            Ok(card)
        } else {
            Err(CardError::Invalid(issues))
        }
    }

    /// Reads a card from untrusted bytes within the default [`ReadLimits`].
    ///
    /// ```
    /// use a2a_card::{AgentCard, wire::CardError};
    /// let err = AgentCard::from_slice(b"{\"name\": 1,}").unwrap_err();
    /// assert!(matches!(err, CardError::Syntax { line: 1, .. }));
    /// ```
    pub fn from_slice(bytes: &[u8]) -> Result<AgentCard, CardError> {
        AgentCard::from_json(&parse_document(bytes, ReadLimits::default())?)
    }

    /// Renders the card as JSON in `profile`, with named schemas at the root.
    pub fn to_json(&self, profile: Profile) -> Value {
        write::render(self, &RenderOptions::new(profile))
    }

    /// Renders the card with explicit options.
    pub fn to_json_with(&self, options: &RenderOptions) -> Value {
        write::render(self, options)
    }
}

/// Serialises as the [`Profile::V1`] document.
impl serde::Serialize for AgentCard {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json(Profile::V1).serialize(serializer)
    }
}

/// Deserialises from any profile, as [`AgentCard::from_json`].
impl<'de> serde::Deserialize<'de> for AgentCard {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        AgentCard::from_json(&value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_enforced_with_positions() {
        let limits = ReadLimits::default().max_bytes(10).max_depth(3);
        assert_eq!(
            parse_document(b"[1,2,3,4,5,6]", limits),
            Err(CardError::TooLarge {
                size: 13,
                limit: 10
            })
        );
        let limits = ReadLimits::default().max_depth(3);
        assert_eq!(
            parse_document(b"{\"a\":\n [[[1]]]}", limits),
            Err(CardError::TooDeep {
                line: 2,
                column: 4,
                limit: 3
            })
        );
        // Brackets inside strings do not count.
        assert!(parse_document(br#"{"a": "[[[[[[\"[[["}"#, limits).is_ok());
        assert_eq!(
            parse_document(b"{\"a\":\n\"\xff\"}", limits),
            Err(CardError::InvalidUtf8 { line: 2, column: 2 })
        );
        assert_eq!(
            parse_document(b"{\"a\": 1,\n", limits),
            Err(CardError::Syntax {
                line: 1,
                column: 9,
                message: "EOF while parsing a value".into()
            })
        );
        match parse_document(b"{\n  \"a\": tru }", limits) {
            Err(CardError::Syntax {
                line: 2,
                column,
                message,
            }) => {
                assert!(column > 0);
                assert!(!message.contains("at line"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn duplicate_keys_are_noted_once_each_where_they_are() {
        let text = br#"{"a": 1, "b": [{"x/y": 1, "x/y": 2, "x/y": 3}, {"x/y": 4}], "a": {"c": 1, "c": 2}}"#;
        let doc = Document::parse(text, ReadLimits::default()).unwrap();
        assert_eq!(doc.duplicate_keys, ["/b/0/x~1y", "/a/c", "/a"]);
        // The value is what serde_json gives: the last one wins, in the first one's place.
        let plain: Value = serde_json::from_slice(text).unwrap();
        assert_eq!(doc.value, plain);
        assert_eq!(
            Document::parse(b"[1, 2]", ReadLimits::default())
                .unwrap()
                .duplicate_keys,
            Vec::<String>::new()
        );
        // Trailing garbage is still a syntax error.
        assert!(matches!(
            Document::parse(b"{} x", ReadLimits::default()),
            Err(CardError::Syntax { line: 1, .. })
        ));
    }

    #[test]
    fn quoted_values_are_capped() {
        let long = "é".repeat(5000);
        let quoted = quote::short(&long);
        assert!(quoted.chars().count() < 120, "{quoted}");
        assert!(quoted.contains("5000 characters"), "{quoted}");
        assert_eq!(quote::short("short"), "short");
        let card = serde_json::json!({"name": "Agent", "description": long});
        for f in crate::lint::lint_json(&card) {
            assert!(f.message.len() < 1000, "{f}");
        }
    }

    #[test]
    fn pointers_escape_tokens() {
        assert_eq!(pointer_push("/a", "b/c~d"), "/a/b~1c~0d");
    }

    #[test]
    fn profiles_parse_from_their_names() {
        for p in Profile::ALL {
            assert_eq!(p.as_str().parse::<Profile>(), Ok(p));
        }
        assert!("v2".parse::<Profile>().is_err());
    }
}
