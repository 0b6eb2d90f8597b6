//! Property tests that stand in for fuzzing the paths untrusted input takes: bytes through the
//! reader, JSON of any shape through the lenient reader, the linter and every profile's writer,
//! and the writer's output back through the reader.
//!
//! Each property runs a fixed number of cases (`config`; set `ROBUSTNESS_CASES=N` to run more
//! locally) and writes no regression files.

use a2a_card::lint::{Finding, Rule, Severity, lint_json};
use a2a_card::wire::{
    self, CardError, Profile, ReadLimits, RenderOptions, SchemaPlacement, pointer_push,
};
use a2a_card::{AgentCard, IO_SCHEMAS_EXTENSION_URI};
use proptest::prelude::*;
use proptest::test_runner::Config as ProptestConfig;
use serde_json::{Map, Value, json};

/// `cases` cases (or `ROBUSTNESS_CASES`), no regression files: `tests/` holds only sources.
fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("ROBUSTNESS_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(cases);
    ProptestConfig {
        cases,
        max_shrink_iters: 4096,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Strategies: bytes
// ---------------------------------------------------------------------------------------------

/// Pieces of JSON text, some broken, to glue together into near-JSON.
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\\",
    b":",
    b",",
    b" ",
    b"\n",
    b"\r\n",
    b"\t",
    b"0",
    b"-1.5e3",
    b"1e999",
    b"true",
    b"null",
    b"\"name\"",
    b"\"skills\"",
    b"\"a\\\"[\"",
    b"\"\\u00ff\"",
    b"\"\\ud800\"",
    b"\xff",
    b"\xc3",
    b"\xe2\x82",
    b"\xe2\x82\xac",
    b"\xf0\x9f\x98\x80",
    b"\xed\xa0\x80",
    b"\0",
    b"/*",
];

/// Openers of nesting, and strings that only look like them.
const OPENERS: &[&[u8]] = &[b"[", b"{\"a\":", b"[{\"k\":[", b"\"[", b"\\\"["];

fn bytes_input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        // Raw bytes, mostly invalid UTF-8.
        prop::collection::vec(any::<u8>(), 0..256),
        // Near-JSON token soup.
        prop::collection::vec(prop::sample::select(TOKENS), 0..64).prop_map(|t| t.concat()),
        // Deep nesting around the limit of 64, open or closed.
        (0usize..160, prop::sample::select(OPENERS), any::<bool>()).prop_map(|(n, open, close)| {
            let mut out = open.repeat(n);
            if close {
                out.extend(std::iter::repeat_n(b']', n));
            }
            out
        }),
        // A card-shaped document with a few bytes inserted, replaced or removed.
        (
            card_doc(Gen::ANY),
            prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<u8>()), 0..6)
        )
            .prop_map(|(value, edits)| {
                let mut bytes = serde_json::to_vec_pretty(&value).expect("a Value serialises");
                for (at, op, byte) in edits {
                    let i = at.index(bytes.len() + 1);
                    match op {
                        0 => bytes.insert(i, byte),
                        1 if i < bytes.len() => bytes[i] = byte,
                        _ if i < bytes.len() => {
                            bytes.remove(i);
                        }
                        _ => bytes.push(byte),
                    }
                }
                bytes
            }),
    ]
}

// ---------------------------------------------------------------------------------------------
// Strategies: JSON
// ---------------------------------------------------------------------------------------------

/// Strings that mean something to some part of the card, and some that break things.
const STRINGS: &[&str] = &[
    "",
    " ",
    "Echo Agent",
    "Agent",
    "Translates English text into French, keeping the formatting.",
    "1.0.0",
    "v1",
    "0.3",
    "0.3.0",
    "1.0",
    "1.0.0-rc.1+b5",
    "https://agent.example.com/a2a",
    "http://agent.example.com/a2a",
    "http://localhost:8080/a2a",
    "https://[::1]/a2a",
    "https://agent.example.com/.well-known/agent-card.json",
    "grpc://agent.example.com:50051",
    "ftp://files.example.com",
    "urn:isbn:0451450523",
    "mailto:",
    "not a url",
    "JSONRPC",
    "GRPC",
    "HTTP+JSON",
    "jsonrpc",
    "http_json",
    "text/plain",
    "text",
    "application/json",
    "application/json;schema=fightComparison",
    "Application/JSON ; Schema=\"fightComparison\"",
    "application/json;schema=missing",
    "application/json;schema=\"a b\"",
    "application/json;schema=",
    "a/b;c",
    "image/*",
    "bearer",
    "Basic",
    "header",
    "query",
    "COOKIE",
    "apiKey",
    "http",
    "oauth2",
    "openIdConnect",
    "mutualTLS",
    "schemes",
    "list",
    "code-review",
    "Code_Review",
    "Tag",
    "eyJhbGciOiJFUzI1NiJ9",
    "a==",
    "a/b~c",
    "~1",
    "/",
    "\u{0}",
    "ÿ\u{1F600}\u{200B}",
    IO_SCHEMAS_EXTENSION_URI,
];

fn text() -> BoxedStrategy<String> {
    prop_oneof![
        4 => prop::sample::select(STRINGS).prop_map(str::to_owned),
        1 => "\\PC{0,12}",
    ]
    .boxed()
}

fn string() -> BoxedStrategy<Value> {
    text().prop_map(Value::String).boxed()
}

fn strings() -> BoxedStrategy<Value> {
    prop::collection::vec(string(), 0..4)
        .prop_map(Value::Array)
        .boxed()
}

fn boolean() -> BoxedStrategy<Value> {
    any::<bool>().prop_map(Value::Bool).boxed()
}

fn scalar() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        boolean(),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        string(),
    ]
    .boxed()
}

fn map_of(kv: Vec<(String, Value)>) -> Value {
    Value::Object(kv.into_iter().collect())
}

/// Any JSON value, at most 4 levels deep.
fn any_json() -> BoxedStrategy<Value> {
    scalar()
        .prop_recursive(4, 32, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((text(), inner), 0..5).prop_map(map_of),
            ]
        })
        .boxed()
}

/// The shape of a generated card document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Every spelling the reader accepts: camelCase and snake_case keys, 1.0 and 0.3 forms mixed.
    Any,
    /// A consistent A2A 1.0 document, as a 1.0 card is written by hand.
    V1,
    /// A consistent A2A 0.3 document.
    V0_3,
    /// A consistent compat document: 1.0 fields with their 0.3 copies.
    Compat,
}

/// What to generate: a shape, and whether every value has the right type.
#[derive(Debug, Clone, Copy)]
struct Gen {
    shape: Shape,
    typed: bool,
}

impl Gen {
    /// Any spelling, some values of the wrong type.
    const ANY: Gen = Gen {
        shape: Shape::Any,
        typed: false,
    };
    /// Any spelling, every value of the right type.
    const TYPED: Gen = Gen {
        shape: Shape::Any,
        typed: true,
    };

    fn consistent(shape: Shape) -> Gen {
        Gen { shape, typed: true }
    }

    /// The keys a field may have: all its aliases, or (for a consistent shape) the camelCase one,
    /// which comes first.
    fn keys(self, aliases: &'static [&'static str]) -> &'static [&'static str] {
        if self.shape == Shape::Any {
            aliases
        } else {
            &aliases[..1]
        }
    }

    fn modern(self) -> bool {
        matches!(self.shape, Shape::V1 | Shape::Compat)
    }

    fn legacy(self) -> bool {
        matches!(self.shape, Shape::V0_3 | Shape::Compat)
    }

    /// `value`, or (unless typed) now and then any JSON value, most likely of the wrong type.
    fn maybe_wrong(self, value: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
        if self.typed {
            value
        } else {
            prop_oneof![6 => value, 1 => any_json()].boxed()
        }
    }
}

/// Keys that no object of the card knows.
const UNKNOWN_KEYS: &[&str] = &["contactEmail", "x-vendor", "", "a/b~c", "~0", "kind"];

/// One field of a generated object: its aliases, its value and how likely it is present.
struct Field {
    keys: &'static [&'static str],
    value: BoxedStrategy<Value>,
    presence: f64,
}

fn field(keys: &'static [&'static str], value: BoxedStrategy<Value>) -> Field {
    Field {
        keys,
        value,
        presence: 0.5,
    }
}

fn always(keys: &'static [&'static str], value: BoxedStrategy<Value>) -> Field {
    Field {
        keys,
        value,
        presence: 1.0,
    }
}

/// An object holding each field or not, under one of its keys, and perhaps an unknown key.
fn fields(g: Gen, fields: Vec<Field>) -> BoxedStrategy<Map<String, Value>> {
    let parts: Vec<_> = fields
        .into_iter()
        .map(|f| {
            let pair = (prop::sample::select(g.keys(f.keys)), g.maybe_wrong(f.value));
            if f.presence < 1.0 {
                prop::option::weighted(f.presence, pair).boxed()
            } else {
                pair.prop_map(Some).boxed()
            }
        })
        .collect();
    let unknown = prop::option::weighted(0.15, (prop::sample::select(UNKNOWN_KEYS), any_json()));
    (parts, unknown)
        .prop_map(|(parts, unknown)| {
            parts
                .into_iter()
                .flatten()
                .chain(unknown)
                .map(|(k, v)| (k.to_owned(), v))
                .collect()
        })
        .boxed()
}

fn object(g: Gen, f: Vec<Field>) -> BoxedStrategy<Value> {
    fields(g, f).prop_map(Value::Object).boxed()
}

/// An object with more pairs merged in (which win over the object's own keys).
fn with(
    object: BoxedStrategy<Map<String, Value>>,
    more: BoxedStrategy<Map<String, Value>>,
) -> BoxedStrategy<Value> {
    (object, more)
        .prop_map(|(mut o, more)| {
            o.extend(more);
            Value::Object(o)
        })
        .boxed()
}

fn list(g: Gen, item: BoxedStrategy<Value>, max: usize) -> BoxedStrategy<Value> {
    prop::collection::vec(g.maybe_wrong(item), 0..=max)
        .prop_map(Value::Array)
        .boxed()
}

fn interface(g: Gen) -> BoxedStrategy<Value> {
    let binding: &'static [&'static str] = match g.shape {
        Shape::Any => &["protocolBinding", "protocol_binding", "transport"],
        Shape::V0_3 => &["transport"],
        Shape::V1 | Shape::Compat => &["protocolBinding"],
    };
    let mut f = vec![
        field(&["url"], string()),
        field(binding, string()),
        field(&["tenant"], string()),
    ];
    if g.shape != Shape::V0_3 {
        f.push(field(&["protocolVersion", "protocol_version"], string()));
    }
    object(g, f)
}

fn extension(g: Gen) -> BoxedStrategy<Value> {
    // Schemas in the extension's params are the strict placement; consistent documents keep them
    // at the root (see `lint_pointers_resolve_with_schemas_in_extension_params`).
    let params = if g.shape == Shape::Any {
        object(
            g,
            vec![field(&["schemas"], schemas()), field(&["mode"], any_json())],
        )
    } else {
        object(g, vec![field(&["mode"], any_json())])
    };
    let uri = prop_oneof![3 => Just(json!(IO_SCHEMAS_EXTENSION_URI)), 1 => string()].boxed();
    object(
        g,
        vec![
            field(&["uri"], uri),
            field(&["description"], string()),
            field(&["required"], boolean()),
            field(&["params"], params),
        ],
    )
}

fn capabilities(g: Gen) -> BoxedStrategy<Value> {
    let mut f = vec![
        field(&["streaming"], boolean()),
        field(&["pushNotifications", "push_notifications"], boolean()),
        field(&["extensions"], list(g, extension(g), 2)),
    ];
    if g.shape != Shape::V1 {
        f.push(field(
            &["stateTransitionHistory", "state_transition_history"],
            boolean(),
        ));
    }
    if g.shape != Shape::V0_3 {
        f.push(field(
            &["extendedAgentCard", "extended_agent_card"],
            boolean(),
        ));
    }
    object(g, f)
}

const SCHEME_NAMES: &[&str] = &[
    "oauth",
    "bearer",
    "apiKey",
    "schemes",
    "list",
    "undeclared",
    "",
    "a/b",
];

fn scheme_name() -> BoxedStrategy<String> {
    prop::sample::select(SCHEME_NAMES)
        .prop_map(str::to_owned)
        .boxed()
}

/// One alternative of a security requirement, before it is written in some shape.
type Requirement = Vec<(String, Value)>;

fn requirement() -> BoxedStrategy<Requirement> {
    prop::collection::vec((scheme_name(), strings()), 0..3).boxed()
}

/// The 1.0 form `{schemes: {NAME: {list: [..]}}}`.
fn modern_requirement(r: Requirement) -> Value {
    let schemes = r.into_iter().map(|(k, v)| (k, json!({ "list": v })));
    json!({ "schemes": Value::Object(schemes.collect()) })
}

/// The 0.3 form `{NAME: [..]}`.
fn legacy_requirement(r: Requirement) -> Value {
    map_of(r)
}

/// The bare-array 1.0 form `{schemes: {NAME: [..]}}`.
fn bare_requirement(r: Requirement) -> Value {
    json!({ "schemes": map_of(r) })
}

/// A card's or skill's security requirements in `g`'s shape: any of the three forms under any of
/// the keys, or consistently 1.0 `securityRequirements`, 0.3 `security`, or both.
fn requirements(g: Gen) -> BoxedStrategy<Map<String, Value>> {
    let reqs = prop::collection::vec(requirement(), 0..3);
    let present = |s: BoxedStrategy<Map<String, Value>>| {
        prop::option::weighted(0.5, s)
            .prop_map(Option::unwrap_or_default)
            .boxed()
    };
    match g.shape {
        Shape::Any => {
            let any_form = prop_oneof![
                requirement().prop_map(modern_requirement),
                requirement().prop_map(legacy_requirement),
                requirement().prop_map(bare_requirement),
            ]
            .boxed();
            let entries = g.maybe_wrong(list(g, any_form, 2));
            let keys = prop::sample::subsequence(
                &["securityRequirements", "security_requirements", "security"][..],
                0..=2,
            );
            (keys, prop::collection::vec(entries, 2))
                .prop_map(|(keys, values)| {
                    keys.into_iter()
                        .zip(values)
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect()
                })
                .boxed()
        }
        shape => present(
            reqs.prop_map(move |reqs| {
                let mut out = Map::new();
                if matches!(shape, Shape::V1 | Shape::Compat) {
                    let modern = reqs.iter().cloned().map(modern_requirement).collect();
                    out.insert("securityRequirements".into(), Value::Array(modern));
                }
                if matches!(shape, Shape::V0_3 | Shape::Compat) {
                    let legacy = reqs.into_iter().map(legacy_requirement).collect();
                    out.insert("security".into(), Value::Array(legacy));
                }
                out
            })
            .boxed(),
        ),
    }
}

const FLOW_KEYS: &[&str] = &[
    "authorizationCode",
    "clientCredentials",
    "deviceCode",
    "implicit",
    "password",
    "authorization_code",
    "client_credentials",
    "device_code",
];

fn flows(g: Gen) -> BoxedStrategy<Value> {
    let scopes = prop::collection::vec((text(), string()), 0..3)
        .prop_map(map_of)
        .boxed();
    let flow = object(
        g,
        vec![
            field(&["authorizationUrl", "authorization_url"], string()),
            field(&["tokenUrl", "token_url"], string()),
            field(
                &["deviceAuthorizationUrl", "device_authorization_url"],
                string(),
            ),
            field(&["refreshUrl", "refresh_url"], string()),
            field(&["scopes"], scopes),
            field(&["pkceRequired", "pkce_required"], boolean()),
        ],
    );
    let keys = if g.shape == Shape::Any {
        FLOW_KEYS
    } else {
        &FLOW_KEYS[..5]
    };
    prop::collection::vec((prop::sample::select(keys), flow), 0..3)
        .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
        .boxed()
}

/// The fields of every kind of scheme; `legacy` for the 0.3 spelling (`in`, no metadata URL).
fn scheme_fields(g: Gen, legacy: bool) -> BoxedStrategy<Map<String, Value>> {
    let location: &'static [&'static str] = match (g.shape, legacy) {
        (Shape::Any, _) => &["location", "in"],
        (_, true) => &["in"],
        (_, false) => &["location"],
    };
    let mut f = vec![
        field(&["name"], string()),
        field(location, string()),
        field(&["scheme"], string()),
        field(&["bearerFormat", "bearer_format"], string()),
        field(&["flows"], flows(g)),
        field(&["openIdConnectUrl", "open_id_connect_url"], string()),
        field(&["description"], string()),
    ];
    if !legacy {
        f.push(field(
            &["oauth2MetadataUrl", "oauth2_metadata_url"],
            string(),
        ));
    }
    for f in &mut f {
        f.presence = 0.4;
    }
    fields(g, f)
}

const WRAPPERS: &[&str] = &[
    "apiKeySecurityScheme",
    "httpAuthSecurityScheme",
    "oauth2SecurityScheme",
    "openIdConnectSecurityScheme",
    "mtlsSecurityScheme",
    "api_key_security_scheme",
    "http_auth_security_scheme",
    "oauth2_security_scheme",
    "open_id_connect_security_scheme",
    "mtls_security_scheme",
];

const TYPES: &[&str] = &["apiKey", "http", "oauth2", "openIdConnect", "mutualTLS"];

/// A security scheme in `g`'s shape: the 1.0 wrapper form, the 0.3 `type` form, both at once
/// (compat) or, for `Shape::Any`, any of those or neither.
fn security_scheme(g: Gen) -> BoxedStrategy<Value> {
    let wrappers = if g.shape == Shape::Any {
        WRAPPERS
    } else {
        &WRAPPERS[..5]
    };
    let tag: BoxedStrategy<String> = match (g.shape, g.typed) {
        (Shape::Any, true) => prop_oneof![
            3 => prop::sample::select(TYPES).prop_map(str::to_owned),
            1 => prop::sample::select(TYPES).prop_map(str::to_ascii_uppercase),
        ]
        .boxed(),
        (Shape::Any, false) => prop_oneof![
            4 => prop::sample::select(TYPES).prop_map(str::to_owned),
            1 => text(),
        ]
        .boxed(),
        _ => prop::sample::select(TYPES).prop_map(str::to_owned).boxed(),
    };
    let modern = scheme_fields(g, false);
    let legacy = scheme_fields(g, true);
    let wrapped = (prop::sample::select(wrappers), modern.clone())
        .prop_map(|(w, inner)| json!({ w: inner }))
        .boxed();
    let tagged = (tag.clone(), legacy.clone())
        .prop_map(|(t, mut o)| {
            o.insert("type".into(), json!(t));
            Value::Object(o)
        })
        .boxed();
    let both = (prop::sample::select(wrappers), tag, modern, legacy.clone())
        .prop_map(|(w, t, inner, mut o)| {
            o.insert("type".into(), json!(t));
            o.insert(w.into(), Value::Object(inner));
            Value::Object(o)
        })
        .boxed();
    match g.shape {
        Shape::Any => g.maybe_wrong(
            prop_oneof![3 => wrapped, 3 => tagged, 2 => both, 1 => legacy.prop_map(Value::Object)]
                .boxed(),
        ),
        Shape::V1 => wrapped,
        Shape::V0_3 => tagged,
        Shape::Compat => both,
    }
}

fn security_schemes(g: Gen) -> BoxedStrategy<Value> {
    prop::collection::vec((scheme_name(), security_scheme(g)), 0..3)
        .prop_map(map_of)
        .boxed()
}

const SCHEMA_NAMES: &[&str] = &["fightComparison", "missing", "bad name", "", "x;y", "a/b"];

const SCHEMA_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "items",
    "$ref",
    "$id",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$defs",
    "$schema",
    "pattern",
    "format",
    "enum",
    "minimum",
    "allOf",
    "oneOf",
    "not",
    "if",
    "then",
    "additionalProperties",
    "patternProperties",
    "contentSchema",
    "unevaluatedProperties",
];

const SCHEMA_STRINGS: &[&str] = &[
    "#",
    "#/$defs/a",
    "#a",
    "urn:x",
    "a#b",
    "https://x.example.com/s#/x",
    "^a+$",
    "[",
    "object",
    "string",
];

/// Something like a JSON Schema: mostly keywords, with plausible or odd values.
fn schema_like() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(json!({"type": "object"})),
        Just(json!(true)),
        Just(json!({})),
        Just(json!({"type": 12})),
        Just(json!({"$ref": "#/$defs/missing"})),
        Just(json!({"$ref": "https://elsewhere.example.com/s.json"})),
        Just(json!({"$schema": "http://json-schema.org/draft-07/schema#"})),
        Just(json!({"pattern": "("})),
        string(),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        let value = prop_oneof![
            inner.clone(),
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec((text(), inner), 0..3).prop_map(map_of),
            prop::sample::select(SCHEMA_STRINGS).prop_map(|s| json!(s)),
            scalar(),
        ];
        prop::collection::vec((prop::sample::select(SCHEMA_KEYWORDS), value), 0..4)
            .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
    })
    .boxed()
}

fn schemas() -> BoxedStrategy<Value> {
    let name = prop_oneof![
        3 => prop::sample::select(SCHEMA_NAMES).prop_map(str::to_owned),
        1 => text(),
    ];
    prop::collection::vec((name, schema_like()), 0..3)
        .prop_map(map_of)
        .boxed()
}

fn skill(g: Gen) -> BoxedStrategy<Value> {
    let own = fields(
        g,
        vec![
            field(&["id"], string()),
            field(&["name"], string()),
            field(&["description"], string()),
            field(&["tags"], strings()),
            field(&["examples"], strings()),
            field(&["inputModes", "input_modes"], strings()),
            field(&["outputModes", "output_modes"], strings()),
        ],
    );
    with(own, requirements(g))
}

fn provider(g: Gen) -> BoxedStrategy<Value> {
    object(
        g,
        vec![
            field(&["organization"], string()),
            field(&["url"], string()),
        ],
    )
}

fn signature(g: Gen) -> BoxedStrategy<Value> {
    let header = prop::collection::vec((text(), scalar()), 0..2)
        .prop_map(map_of)
        .boxed();
    object(
        g,
        vec![
            field(&["protected"], string()),
            field(&["signature"], string()),
            field(&["header"], header),
        ],
    )
}

const LEGACY_AUTH_SCHEMES: &[&str] = &[
    "bearer",
    "Basic",
    "apiKey",
    "oauth2",
    "openIdConnect",
    "oidc",
    "mtls",
    "mutualTLS",
    "none",
    "digest",
];

/// The A2A 0.1 `authentication` object.
fn authentication(g: Gen) -> BoxedStrategy<Value> {
    let names = prop::collection::vec(
        prop::sample::select(LEGACY_AUTH_SCHEMES).prop_map(|s| json!(s)),
        0..3,
    )
    .prop_map(Value::Array)
    .boxed();
    object(
        g,
        vec![
            field(&["schemes"], names),
            field(&["credentials"], string()),
        ],
    )
}

/// A card document in `g`'s shape: the keys of every profile's card, with plausible values.
///
/// `Shape::Any` mixes every spelling the reader accepts (snake_case, 0.1 `authentication`,
/// schemas in the extension's params); the consistent shapes are what a person writing a card of
/// one version would write, always with `capabilities` (which both versions require) and, for
/// 1.0, `supportedInterfaces`.
fn card_doc(g: Gen) -> BoxedStrategy<Value> {
    let mut f = vec![
        field(&["name"], string()),
        field(&["description"], string()),
        field(&["version"], string()),
        field(&["provider"], provider(g)),
        field(&["iconUrl", "icon_url"], string()),
        field(&["documentationUrl", "documentation_url"], string()),
        field(
            &["securitySchemes", "security_schemes"],
            security_schemes(g),
        ),
        field(&["skills"], list(g, skill(g), 3)),
        field(&["defaultInputModes", "default_input_modes"], strings()),
        field(&["defaultOutputModes", "default_output_modes"], strings()),
        field(&["signatures"], list(g, signature(g), 2)),
        field(&["schemas"], schemas()),
    ];
    let interfaces = list(g, interface(g), 3);
    if g.shape == Shape::Any {
        f.push(field(&["capabilities"], capabilities(g)));
        f.push(field(&["authentication"], authentication(g)));
    } else {
        f.push(always(&["capabilities"], capabilities(g)));
    }
    if g.modern() {
        f.push(always(&["supportedInterfaces"], interfaces.clone()));
    } else if g.shape == Shape::Any {
        f.push(field(
            &["supportedInterfaces", "supported_interfaces"],
            interfaces.clone(),
        ));
    }
    if g.legacy() || g.shape == Shape::Any {
        let legacy_interface = interface(Gen {
            shape: if g.shape == Shape::Any {
                Shape::Any
            } else {
                Shape::V0_3
            },
            ..g
        });
        f.extend([
            field(&["url"], string()),
            field(&["protocolVersion", "protocol_version"], string()),
            field(&["preferredTransport", "preferred_transport"], string()),
            field(
                &["additionalInterfaces", "additional_interfaces"],
                list(g, legacy_interface, 3),
            ),
            field(
                &[
                    "supportsAuthenticatedExtendedCard",
                    "supports_authenticated_extended_card",
                ],
                boolean(),
            ),
        ]);
    }
    for f in &mut f {
        if f.presence < 1.0 {
            f.presence = 0.45;
        }
    }
    with(fields(g, f), requirements(g))
}

/// A document in one of the consistent shapes.
fn consistent_doc() -> BoxedStrategy<Value> {
    prop_oneof![
        card_doc(Gen::consistent(Shape::V1)),
        card_doc(Gen::consistent(Shape::V0_3)),
        card_doc(Gen::consistent(Shape::Compat)),
    ]
    .boxed()
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

/// The nesting depth of a value: 0 for a scalar, 1 for `[]`.
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn is_pointer(p: &str) -> bool {
    p.is_empty() || p.starts_with('/')
}

fn check_error(err: &CardError) -> Result<(), TestCaseError> {
    prop_assert!(
        !err.to_string().trim().is_empty(),
        "{err:?} displays as nothing"
    );
    match err {
        CardError::InvalidUtf8 { line, column } | CardError::TooDeep { line, column, .. } => {
            prop_assert!(*line >= 1 && *column >= 1, "{err:?}");
        }
        CardError::Syntax {
            line,
            column,
            message,
        } => {
            prop_assert!(*line >= 1 && *column >= 1, "{err:?}");
            prop_assert!(!message.trim().is_empty(), "{err:?}");
        }
        CardError::Invalid(issues) => {
            prop_assert!(!issues.is_empty());
            for issue in issues {
                prop_assert!(is_pointer(&issue.pointer), "{issue:?}");
                prop_assert!(!issue.message.trim().is_empty(), "{issue:?}");
                prop_assert!(!issue.to_string().trim().is_empty(), "{issue:?}");
            }
        }
        _ => {}
    }
    Ok(())
}

/// Property 4, the part that holds for every document: a finding has a pointer, a message and its
/// rule's severity, and a wrong type is reported exactly where the value is.
fn check_finding(doc: &Value, f: &Finding) -> Result<(), TestCaseError> {
    prop_assert!(is_pointer(&f.pointer), "bad pointer: {f:?}");
    prop_assert!(!f.message.trim().is_empty(), "empty message: {f:?}");
    if f.rule == Rule::UnknownField && f.severity == Severity::Error {
        // An unknown member of a 1.0 card, whose schema closes every object: an error that
        // says how to make it the rule's warning.
        prop_assert!(f.message.contains("--lenient"), "{:?}", f);
    } else {
        prop_assert_eq!(f.severity, f.rule.severity(), "{:?}", f);
    }
    prop_assert!(!f.to_string().trim().is_empty());
    prop_assert_eq!(&f.to_json()["code"], f.rule.code());
    if f.rule == Rule::WrongType {
        prop_assert!(doc.pointer(&f.pointer).is_some(), "{f:?} points nowhere");
    }
    Ok(())
}

/// Lints, reads and renders `doc` in every profile and placement; none of it may panic, every
/// finding and error must be well formed, and the strict reader must agree with the lenient one.
fn exercise(doc: &Value) -> Result<(), TestCaseError> {
    for f in &lint_json(doc) {
        check_finding(doc, f)?;
    }
    let (card, issues) = wire::from_value_lenient(doc);
    for p in Profile::ALL {
        let _ = card.to_json(p);
        let _ = card.to_json_with(&RenderOptions::new(p).schemas(SchemaPlacement::ExtensionParams));
    }
    match AgentCard::from_json(doc) {
        Ok(strict) => prop_assert!(issues.is_empty() && strict == card),
        Err(CardError::Invalid(reported)) => prop_assert_eq!(&reported, &issues),
        Err(other) => prop_assert!(false, "from_json failed with {:?}", other),
    }
    if !issues.is_empty() {
        check_error(&CardError::Invalid(issues))?;
    }
    Ok(())
}

/// Whether `pointer` is in `doc`, or names a missing member of an object that is.
fn resolves(doc: &Value, pointer: &str) -> bool {
    doc.pointer(pointer).is_some()
        || pointer
            .rfind('/')
            .and_then(|i| doc.pointer(&pointer[..i]))
            .is_some_and(Value::is_object)
}

/// Property 4, for documents whose pointers should resolve: every finding's pointer is in the
/// document, or names a missing member of an object in it.
fn check_pointers(doc: &Value) -> Result<(), TestCaseError> {
    for f in &lint_json(doc) {
        check_finding(doc, f)?;
        prop_assert!(
            resolves(doc, &f.pointer),
            "{} points at {}, which is not in the document (nor is its parent object):\n{:#}",
            f.rule,
            f.pointer,
            doc
        );
    }
    Ok(())
}

/// Renders `card` in `profile`, reads it back and renders again: reading must succeed and the
/// second rendering must be the first, key order included. Returns the card read back.
fn round_trip(card: &AgentCard, profile: Profile) -> Result<AgentCard, TestCaseError> {
    let first = card.to_json(profile);
    let back = match AgentCard::from_json(&first) {
        Ok(back) => back,
        Err(e) => {
            return Err(TestCaseError::fail(format!(
                "the {profile} rendering does not read back: {e}\n{first:#}"
            )));
        }
    };
    let second = back.to_json(profile);
    prop_assert_eq!(
        &second,
        &first,
        "the {} rendering is not a fixed point",
        profile
    );
    prop_assert_eq!(
        second.to_string(),
        first.to_string(),
        "the {} rendering changes its key order",
        profile
    );
    Ok(back)
}

// ---------------------------------------------------------------------------------------------
// Property 1: bytes
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(1024))]

    /// Any bytes through the reader and, when they are JSON, the linter and the writers. The
    /// reader accepts exactly what serde_json reads within the limits.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in bytes_input()) {
        let limits = ReadLimits::default();
        match wire::parse_document(&bytes, limits) {
            Ok(doc) => {
                prop_assert!(depth(&doc) <= limits.max_depth);
                prop_assert_eq!(serde_json::from_slice::<Value>(&bytes).ok(), Some(doc.clone()));
                exercise(&doc)?;
            }
            Err(err) => {
                check_error(&err)?;
                match &err {
                    CardError::InvalidUtf8 { .. } => {
                        prop_assert!(std::str::from_utf8(&bytes).is_err());
                    }
                    CardError::TooDeep { limit, .. } => prop_assert_eq!(*limit, limits.max_depth),
                    CardError::Syntax { .. } => {}
                    other => prop_assert!(false, "unexpected error {:?}", other),
                }
                if let Ok(doc) = serde_json::from_slice::<Value>(&bytes) {
                    prop_assert!(depth(&doc) > limits.max_depth, "rejected valid JSON: {}", err);
                }
            }
        }
    }
}

/// A 100 MiB document is refused by its size alone, before anything reads it.
#[test]
fn oversized_input_is_rejected_before_parsing() {
    let mut bytes = vec![b' '; 100 * 1024 * 1024];
    let limits = ReadLimits::default();
    let too_large = Err(CardError::TooLarge {
        size: bytes.len(),
        limit: limits.max_bytes,
    });
    let started = std::time::Instant::now();
    let result = wire::parse_document(&bytes, limits);
    let elapsed = started.elapsed();
    // All blanks would be a syntax error (no value) if anything parsed them.
    assert_eq!(result, too_large);
    // A size check takes no time; scanning 100 MiB in a debug build takes far longer.
    assert!(
        elapsed < std::time::Duration::from_millis(500),
        "took {elapsed:?}"
    );
    assert!(matches!(
        AgentCard::from_slice(&bytes),
        Err(CardError::TooLarge { .. })
    ));
    // Neither the UTF-8 check nor the depth check runs first.
    bytes.fill(0xff);
    assert_eq!(wire::parse_document(&bytes, limits), too_large);
    bytes.fill(b'[');
    assert_eq!(wire::parse_document(&bytes, limits), too_large);
}

/// 100 000 nested `[` are refused as too deep, at the first bracket past the limit, instead of
/// overflowing a recursive parser's stack.
#[test]
fn deeply_nested_input_is_rejected_not_overflowed() {
    let limits = ReadLimits::default();
    for open in [&b"["[..], b"{\"a\":", b"[{\"a\":"] {
        let bytes = open.repeat(100_000);
        match wire::parse_document(&bytes, limits) {
            Err(CardError::TooDeep {
                line: 1,
                column,
                limit,
            }) => {
                assert_eq!(limit, 64);
                assert!(column <= 65 * open.len(), "{column}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            AgentCard::from_slice(&bytes),
            Err(CardError::TooDeep { .. })
        ));
    }
    // Within the limit, the same nesting closed is a document.
    let mut ok = b"[".repeat(64);
    ok.extend(b"]".repeat(64));
    assert!(wire::parse_document(&ok, limits).is_ok());
}

// ---------------------------------------------------------------------------------------------
// Property 2: JSON
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(512))]

    /// Any JSON value through the reader, the linter and every profile's writer.
    #[test]
    fn arbitrary_json_never_panics(doc in any_json()) {
        exercise(&doc)?;
    }

    /// Card-shaped JSON (the keys of every profile's card in every spelling, plausible values,
    /// some of the wrong type) through the reader, the linter and every profile's writer.
    #[test]
    fn card_shaped_json_never_panics(doc in card_doc(Gen::ANY)) {
        exercise(&doc)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Property 3: round trips
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(384))]

    /// The 1.0 rendering reads back to the same card, but for `stateTransitionHistory`, which
    /// 1.0 dropped, and is a fixed point.
    #[test]
    fn round_trip_v1(doc in card_doc(Gen::TYPED)) {
        let Ok(card) = AgentCard::from_json(&doc) else { return Ok(()) };
        let mut back = round_trip(&card, Profile::V1)?;
        let mut expected = card;
        expected.capabilities.state_transition_history = None;
        back.capabilities.state_transition_history = None;
        prop_assert_eq!(back, expected);
    }

    /// The compat rendering reads back to the same card and is a fixed point.
    #[test]
    fn round_trip_compat(doc in card_doc(Gen::TYPED)) {
        let Ok(card) = AgentCard::from_json(&doc) else { return Ok(()) };
        let back = round_trip(&card, Profile::Compat)?;
        prop_assert_eq!(back, card);
    }

    /// The 0.3 rendering reads back and is a fixed point (0.3 cannot say everything 1.0 can, so
    /// the card read back may differ from the original).
    #[test]
    fn round_trip_v0_3(doc in card_doc(Gen::TYPED)) {
        let Ok(card) = AgentCard::from_json(&doc) else { return Ok(()) };
        round_trip(&card, Profile::V0_3)?;
    }

    /// Every consistent hand-written document reads without issues (so the round trips above
    /// see cards of every shape), and its card survives the round trips too.
    #[test]
    fn consistent_documents_read_and_round_trip(doc in consistent_doc()) {
        let card = match AgentCard::from_json(&doc) {
            Ok(card) => card,
            Err(e) => return Err(TestCaseError::fail(format!("{e}\n{doc:#}"))),
        };
        let back = round_trip(&card, Profile::Compat)?;
        prop_assert_eq!(back, card.clone());
        round_trip(&card, Profile::V1)?;
        round_trip(&card, Profile::V0_3)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Property 4: lint findings and their pointers
// ---------------------------------------------------------------------------------------------

/// Whether `Profile::detect` sees `doc`, rendered in `profile`, as a document of that version's
/// shape (a 1.0 rendering with no interfaces and no card-level requirements looks like 0.3).
fn detected_as_rendered(doc: &Value, profile: Profile) -> bool {
    (Profile::detect(doc) == Profile::V0_3) == (profile == Profile::V0_3)
}

proptest! {
    #![proptest_config(config(384))]

    /// In every document the crate renders, each finding points into the document (or at a
    /// missing member of an object in it). Renderings whose profile `Profile::detect` misreads
    /// are left to `lint_pointers_resolve_in_every_rendered_document`.
    #[test]
    fn lint_pointers_resolve_in_rendered_documents(doc in card_doc(Gen::ANY)) {
        let (card, _) = wire::from_value_lenient(&doc);
        for p in Profile::ALL {
            let rendered = card.to_json(p);
            if detected_as_rendered(&rendered, p) {
                check_pointers(&rendered)?;
            }
        }
    }

    /// In consistent hand-written 1.0, 0.3 and compat documents, each finding points into the
    /// document (or at a missing member of an object in it).
    #[test]
    fn lint_pointers_resolve_in_hand_written_documents(doc in consistent_doc()) {
        check_pointers(&doc)?;
    }
}

proptest! {
    #![proptest_config(config(384))]

    /// As `lint_pointers_resolve_in_rendered_documents`, without leaving any rendering out.
    #[test]
    fn lint_pointers_resolve_in_every_rendered_document(doc in card_doc(Gen::ANY)) {
        let (card, _) = wire::from_value_lenient(&doc);
        for p in Profile::ALL {
            check_pointers(&card.to_json(p))?;
        }
    }

    /// Renderings with the schemas in the extension's params (the strict placement) point into
    /// the document too.
    #[test]
    fn lint_pointers_resolve_with_schemas_in_extension_params(doc in card_doc(Gen::ANY)) {
        let (card, _) = wire::from_value_lenient(&doc);
        for p in Profile::ALL {
            let options = RenderOptions::new(p).schemas(SchemaPlacement::ExtensionParams);
            let rendered = card.to_json_with(&options);
            if detected_as_rendered(&rendered, p) {
                check_pointers(&rendered)?;
            }
        }
    }

    /// A list item of the wrong type (reported as such) does not move the pointers of the
    /// findings about the items after it.
    #[test]
    fn lint_pointers_survive_list_items_of_the_wrong_type(
        doc in consistent_doc(),
        which in any::<prop::sample::Index>(),
        junk in prop_oneof![Just(json!(7)), Just(json!("x")), Just(json!(null)), Just(json!([]))],
    ) {
        let mut doc = doc;
        let lists: Vec<String> = [
            "/skills", "/capabilities/extensions", "/signatures", "/securityRequirements",
            "/security", "/supportedInterfaces", "/additionalInterfaces",
        ]
        .iter()
        .filter(|p| doc.pointer(p).is_some_and(Value::is_array))
        .map(|p| (*p).to_owned())
        .collect();
        prop_assume!(!lists.is_empty());
        let at = which.get(&lists);
        doc.pointer_mut(at).and_then(Value::as_array_mut).expect("an array").insert(0, junk);
        check_pointers(&doc)?;
    }

    /// In a document of any spelling (snake_case keys, 1.0 and 0.3 forms mixed, the 0.1
    /// `authentication` object), every finding points into the document.
    #[test]
    fn lint_pointers_resolve_in_documents_of_any_spelling(doc in card_doc(Gen::TYPED)) {
        let mut doc = doc;
        // Missing `capabilities` leaves `/capabilities/streaming` without a parent; that is by
        // design, so give every document the object.
        doc.as_object_mut().expect("an object").entry("capabilities").or_insert(json!({}));
        check_pointers(&doc)?;
    }

    /// Each entry of `securitySchemes` becomes a scheme of the card or is reported.
    #[test]
    fn every_declared_security_scheme_is_read_or_reported(doc in card_doc(Gen::ANY)) {
        let (card, issues) = wire::from_value_lenient(&doc);
        let declared = ["securitySchemes", "security_schemes"]
            .iter()
            .find_map(|k| doc.get(*k).filter(|v| !v.is_null()).map(|v| (*k, v)));
        let Some((key, Value::Object(schemes))) = declared else { return Ok(()) };
        for name in schemes.keys() {
            let at = pointer_push(&format!("/{key}"), name);
            let reported = issues.iter().any(|i| i.pointer == at || i.pointer.starts_with(&format!("{at}/")));
            prop_assert!(
                card.security_schemes.contains_key(name) || reported,
                "scheme `{}` vanished without an issue:\n{:#}", name, doc
            );
        }
    }
}
