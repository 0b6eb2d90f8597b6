//! The bytes a signature covers: the card's canonical form, and the digest binding its schemas.
//!
//! The payload is what the official SDKs compute for the card they parse, so that a signature
//! made here verifies there and the other way round:
//!
//! 1. the card in the A2A 1.0 profile ([`Profile::V1`]);
//! 2. without `signatures`, and keeping only the fields of the 1.0 protobuf `AgentCard`: a
//!    parser of the official SDKs drops any other key (the root `schemas` key, fields this crate
//!    keeps in an `extra` map), so those keys are outside the signature;
//! 3. the protobuf presence rules of A2A 1.0 section 5.7: a bool without presence
//!    (`AgentExtension.required`, `pkceRequired`) is omitted when `false`;
//! 4. empty values removed, recursively, as the official Python SDK does before canonicalising:
//!    `null`, `""`, `[]` and `{}` (an object or list left empty by the removal goes too);
//! 5. RFC 8785 (JCS).
//!
//! The root `schemas` object is bound through [`schemas_digest`], stored in the input/output
//! schemas extension entry's `params.schemasDigest`, which step 2 keeps.

use base64::Engine as _;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::card::AgentCard;
use crate::wire::Profile;

/// The deepest nesting of objects and arrays accepted in a card to sign or verify (the root
/// object counts as 1).
pub const MAX_DEPTH: usize = 64;

/// The `params` key of the input/output schemas extension entry that holds [`schemas_digest`].
pub const SCHEMAS_DIGEST_PARAM: &str = "schemasDigest";

/// Why a card has no canonical form.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CanonicalError {
    /// Objects and arrays nest deeper than [`MAX_DEPTH`].
    TooDeep {
        /// The limit.
        max: usize,
    },
    /// The JSON could not be canonicalised (a number with no RFC 8785 form).
    Jcs(String),
}

impl std::fmt::Display for CanonicalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CanonicalError::TooDeep { max } => {
                write!(
                    f,
                    "the card nests objects and arrays deeper than {max} levels"
                )
            }
            CanonicalError::Jcs(e) => write!(f, "the card has no RFC 8785 canonical form: {e}"),
        }
    }
}

impl std::error::Error for CanonicalError {}

/// How the 1.0 protobuf shapes a JSON value: which keys it knows.
enum Shape {
    /// A scalar or a list of scalars, kept as it is.
    Leaf,
    /// A bool without presence: `false` is its default and is omitted.
    Flag,
    /// A `google.protobuf.Struct`: any JSON, kept as it is.
    Any,
    /// A message with these fields.
    Message(&'static [(&'static str, Shape)]),
    /// A repeated message.
    List(&'static Shape),
    /// A map from string keys to this shape.
    Map(&'static Shape),
}

use Shape::{Any, Flag, Leaf, List, Map as MapOf, Message};

const REQUIREMENT: Shape = Message(&[("schemes", MapOf(&Message(&[("list", Leaf)])))]);

const FLOWS: Shape = Message(&[
    (
        "authorizationCode",
        Message(&[
            ("authorizationUrl", Leaf),
            ("tokenUrl", Leaf),
            ("refreshUrl", Leaf),
            ("scopes", Leaf),
            ("pkceRequired", Flag),
        ]),
    ),
    (
        "clientCredentials",
        Message(&[("tokenUrl", Leaf), ("refreshUrl", Leaf), ("scopes", Leaf)]),
    ),
    (
        "implicit",
        Message(&[
            ("authorizationUrl", Leaf),
            ("refreshUrl", Leaf),
            ("scopes", Leaf),
        ]),
    ),
    (
        "password",
        Message(&[("tokenUrl", Leaf), ("refreshUrl", Leaf), ("scopes", Leaf)]),
    ),
    (
        "deviceCode",
        Message(&[
            ("deviceAuthorizationUrl", Leaf),
            ("tokenUrl", Leaf),
            ("refreshUrl", Leaf),
            ("scopes", Leaf),
        ]),
    ),
]);

const SCHEME: Shape = Message(&[
    (
        "apiKeySecurityScheme",
        Message(&[("description", Leaf), ("location", Leaf), ("name", Leaf)]),
    ),
    (
        "httpAuthSecurityScheme",
        Message(&[
            ("description", Leaf),
            ("scheme", Leaf),
            ("bearerFormat", Leaf),
        ]),
    ),
    (
        "oauth2SecurityScheme",
        Message(&[
            ("description", Leaf),
            ("flows", FLOWS),
            ("oauth2MetadataUrl", Leaf),
        ]),
    ),
    (
        "openIdConnectSecurityScheme",
        Message(&[("description", Leaf), ("openIdConnectUrl", Leaf)]),
    ),
    ("mtlsSecurityScheme", Message(&[("description", Leaf)])),
]);

const CARD: Shape = Message(&[
    ("name", Leaf),
    ("description", Leaf),
    (
        "supportedInterfaces",
        List(&Message(&[
            ("url", Leaf),
            ("protocolBinding", Leaf),
            ("tenant", Leaf),
            ("protocolVersion", Leaf),
        ])),
    ),
    (
        "provider",
        Message(&[("url", Leaf), ("organization", Leaf)]),
    ),
    ("version", Leaf),
    ("documentationUrl", Leaf),
    (
        "capabilities",
        Message(&[
            ("streaming", Leaf),
            ("pushNotifications", Leaf),
            (
                "extensions",
                List(&Message(&[
                    ("uri", Leaf),
                    ("description", Leaf),
                    ("required", Flag),
                    ("params", Any),
                ])),
            ),
            ("extendedAgentCard", Leaf),
        ]),
    ),
    ("securitySchemes", MapOf(&SCHEME)),
    ("securityRequirements", List(&REQUIREMENT)),
    ("defaultInputModes", Leaf),
    ("defaultOutputModes", Leaf),
    (
        "skills",
        List(&Message(&[
            ("id", Leaf),
            ("name", Leaf),
            ("description", Leaf),
            ("tags", Leaf),
            ("examples", Leaf),
            ("inputModes", Leaf),
            ("outputModes", Leaf),
            ("securityRequirements", List(&REQUIREMENT)),
        ])),
    ),
    ("iconUrl", Leaf),
]);

/// The canonical bytes a card signature covers: the 1.0 rendering without `signatures`, kept
/// to the protobuf's fields, `false` dropped for bools without presence, `null`/`""`/`[]`/`{}`
/// removed recursively, in RFC 8785 form (see [`sign`](crate::sign)).
///
/// ```
/// use a2a_card::{AgentCard, AgentSkill};
/// let card = AgentCard::builder("Echo", "Repeats every message back.", "1.0.0")
///     .jsonrpc("https://echo.example.com/a2a")
///     .skill(AgentSkill::builder("echo", "Echo", "Returns the input unchanged."))
///     .build()
///     .unwrap();
/// let payload = a2a_card::sign::canonical_payload(&card).unwrap();
/// assert!(payload.starts_with(br#"{"defaultInputModes":"#));
/// ```
pub fn canonical_payload(card: &AgentCard) -> Result<Vec<u8>, CanonicalError> {
    let json = card.to_json(Profile::V1);
    check_depth(&json, 1)?;
    let known = keep_known(&json, &CARD).unwrap_or(Value::Object(Map::new()));
    let cleaned = clean_empty(known).unwrap_or(Value::Object(Map::new()));
    jcs(&cleaned)
}

/// The digest of a card's root `schemas` object: `sha-256:` and the unpadded base64url of the
/// SHA-256 of its RFC 8785 form (an empty object when the card has no schemas).
pub fn schemas_digest(card: &AgentCard) -> Result<String, CanonicalError> {
    let schemas: Map<String, Value> = card
        .schemas
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let schemas = Value::Object(schemas);
    check_depth(&schemas, 1)?;
    let bytes = jcs(&schemas)?;
    let digest = Sha256::digest(&bytes);
    Ok(format!(
        "sha-256:{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest)
    ))
}

/// The digest of one JSON value (a schema): `sha-256:` and the unpadded base64url of the
/// SHA-256 of its RFC 8785 form, so that key order and number spelling do not matter.
///
/// ```
/// use a2a_card::sign::value_digest;
/// let a = serde_json::json!({"type": "object", "required": ["a"]});
/// let b: serde_json::Value = serde_json::from_str(r#"{"required":["a"],"type":"object"}"#).unwrap();
/// assert_eq!(value_digest(&a).unwrap(), value_digest(&b).unwrap());
/// assert!(value_digest(&a).unwrap().starts_with("sha-256:"));
/// ```
pub fn value_digest(value: &Value) -> Result<String, CanonicalError> {
    check_depth(value, 1)?;
    let digest = Sha256::digest(jcs(value)?);
    Ok(format!(
        "sha-256:{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest)
    ))
}

/// RFC 8785 of a value whose depth was checked.
pub(crate) fn jcs(value: &Value) -> Result<Vec<u8>, CanonicalError> {
    serde_json_canonicalizer::to_vec(value).map_err(|e| CanonicalError::Jcs(e.to_string()))
}

/// Rejects objects and arrays nested deeper than [`MAX_DEPTH`]; `depth` is that of `value`.
pub(crate) fn check_depth(value: &Value, depth: usize) -> Result<(), CanonicalError> {
    let children: Box<dyn Iterator<Item = &Value>> = match value {
        Value::Array(items) => Box::new(items.iter()),
        Value::Object(map) => Box::new(map.values()),
        _ => return Ok(()),
    };
    if depth > MAX_DEPTH {
        return Err(CanonicalError::TooDeep { max: MAX_DEPTH });
    }
    for child in children {
        check_depth(child, depth + 1)?;
    }
    Ok(())
}

/// The parts of `value` the protobuf shape knows; `None` for a value to omit.
fn keep_known(value: &Value, shape: &Shape) -> Option<Value> {
    match (shape, value) {
        (Leaf | Any, v) => Some(v.clone()),
        (Flag, Value::Bool(false)) => None,
        (Flag, v) => Some(v.clone()),
        (Message(fields), Value::Object(map)) => {
            let kept = fields
                .iter()
                .filter_map(|(key, shape)| {
                    let v = map.get(*key)?;
                    Some(((*key).to_owned(), keep_known(v, shape)?))
                })
                .collect();
            Some(Value::Object(kept))
        }
        (List(shape), Value::Array(items)) => Some(Value::Array(
            items.iter().filter_map(|v| keep_known(v, shape)).collect(),
        )),
        (MapOf(shape), Value::Object(map)) => Some(Value::Object(
            map.iter()
                .filter_map(|(k, v)| Some((k.clone(), keep_known(v, shape)?)))
                .collect(),
        )),
        // A value of the wrong JSON type: the official parsers reject such a card; keep it so
        // that the signature still covers it.
        (_, v) => Some(v.clone()),
    }
}

/// Removes `null`, `""`, `[]` and `{}` recursively; `None` when `value` itself is removed.
fn clean_empty(value: Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::Array(items) => {
            let items: Vec<Value> = items.into_iter().filter_map(clean_empty).collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        Value::Object(map) => {
            let map: Map<String, Value> = map
                .into_iter()
                .filter_map(|(k, v)| Some((k, clean_empty(v)?)))
                .collect();
            (!map.is_empty()).then_some(Value::Object(map))
        }
        v => Some(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_values_go_recursively() {
        let v = json!({"a": "", "b": [], "c": {"d": null, "e": [{}]}, "f": false, "g": 0});
        assert_eq!(clean_empty(v), Some(json!({"f": false, "g": 0})));
    }

    #[test]
    fn unknown_keys_and_default_flags_go() {
        let v = json!({"name": "n", "schemas": {}, "capabilities": {"extensions": [
            {"uri": "u", "required": false, "x": 1, "params": {"deep": {"y": 1}}}
        ]}});
        assert_eq!(
            keep_known(&v, &CARD),
            Some(json!({"name": "n", "capabilities": {"extensions": [
                {"uri": "u", "params": {"deep": {"y": 1}}}
            ]}}))
        );
    }

    #[test]
    fn depth_is_bounded() {
        let mut v = json!(1);
        for _ in 0..MAX_DEPTH {
            v = json!([v]);
        }
        assert_eq!(check_depth(&v, 1), Ok(()));
        assert_eq!(
            check_depth(&json!([v]), 1),
            Err(CanonicalError::TooDeep { max: MAX_DEPTH })
        );
    }
}
