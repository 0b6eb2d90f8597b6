//! Rules that only the document shows: which fields are present (the model cannot tell an absent
//! list from an empty one), which A2A version each field belongs to, and the shape of security
//! requirements. Each card is judged by its own version: a 1.0 card by the 1.0 schema and proto,
//! a 0.3 (or 0.2) card by the 0.3 schema, and a compat document by both halves.

use serde_json::{Map, Value};

use super::{Finding, Rule};
use crate::wire::quote::short;
use crate::wire::{Profile, SCHEME_NAMES, pointer_push, snake_case};

/// Root fields of A2A 0.3 (and earlier) that A2A 1.0 does not have, in both spellings.
const LEGACY_ROOT: &[&str] = &[
    "protocolVersion",
    "protocol_version",
    "preferredTransport",
    "preferred_transport",
    "additionalInterfaces",
    "additional_interfaces",
    "security",
    "supportsAuthenticatedExtendedCard",
    "supports_authenticated_extended_card",
];

fn present<'a>(o: &'a Map<String, Value>, keys: &[&str]) -> Option<(&'a str, &'a Value)> {
    keys.iter().find_map(|k| {
        o.get_key_value(*k)
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.as_str(), v))
    })
}

/// Every finding that only the document `doc`, of shape `profile`, shows.
pub(super) fn document(doc: &Value, profile: Profile) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(root) = doc.as_object() else {
        return out;
    };
    presence(root, profile, &mut out);
    versions(root, profile, &mut out);
    requirement_shapes(root, "", profile, &mut out);
    if let Some(skills) = root.get("skills").and_then(Value::as_array) {
        for (i, skill) in skills.iter().enumerate() {
            if let Some(s) = skill.as_object() {
                requirement_shapes(s, &format!("/skills/{i}"), profile, &mut out);
            }
        }
    }
    protocol_version(root, profile, &mut out);
    if profile != Profile::V1 {
        snake_case_fields(root, &mut out);
    }
    out
}

/// The camelCase fields of A2A 0.3 objects whose names have more than one word: a 0.3 card that
/// spells one of them in snake_case (the proto's name) has, for the 0.3 schema and for every
/// client but the Python SDK (which also accepts the proto's names), no such field.
const CAMEL_FIELDS_0_3: &[&str] = &[
    "protocolVersion",
    "preferredTransport",
    "additionalInterfaces",
    "defaultInputModes",
    "defaultOutputModes",
    "documentationUrl",
    "iconUrl",
    "securitySchemes",
    "supportsAuthenticatedExtendedCard",
    "pushNotifications",
    "stateTransitionHistory",
    "inputModes",
    "outputModes",
    "bearerFormat",
    "openIdConnectUrl",
    "oauth2MetadataUrl",
    "authorizationCode",
    "clientCredentials",
    "authorizationUrl",
    "tokenUrl",
    "refreshUrl",
];

/// Snake_case spellings of 0.3 fields, in the objects of the card (not in maps whose keys are
/// names the author chose: schemes, scopes, schemas, metadata, params).
fn snake_case_fields(root: &Map<String, Value>, out: &mut Vec<Finding>) {
    fn object<'a>(
        o: &'a Map<String, Value>,
        keys: &[&str],
    ) -> Option<(&'a str, &'a Map<String, Value>)> {
        present(o, keys).and_then(|(k, v)| Some((k, v.as_object()?)))
    }
    fn list<'a>(
        o: &'a Map<String, Value>,
        keys: &[&str],
    ) -> impl Iterator<Item = (String, &'a Map<String, Value>)> {
        present(o, keys)
            .and_then(|(k, v)| Some((k, v.as_array()?)))
            .into_iter()
            .flat_map(|(k, items)| {
                items
                    .iter()
                    .enumerate()
                    .filter_map(move |(i, item)| Some((format!("/{k}/{i}"), item.as_object()?)))
            })
    }
    let mut objects: Vec<(String, &Map<String, Value>)> = vec![(String::new(), root)];
    for key in ["capabilities", "provider"] {
        if let Some((k, o)) = object(root, &[key]) {
            objects.push((pointer_push("", k), o));
        }
    }
    objects.extend(list(root, &["skills"]));
    objects.extend(list(
        root,
        &["additionalInterfaces", "additional_interfaces"],
    ));
    for (at, _, scheme) in schemes(root) {
        if let Some((k, flows)) = object(scheme, &["flows"]) {
            let flows_at = pointer_push(&at, k);
            for (kind, flow) in flows {
                if let Some(flow) = flow.as_object() {
                    objects.push((pointer_push(&flows_at, kind), flow));
                }
            }
            objects.push((flows_at, flows));
        }
        objects.push((at, scheme));
    }
    for (at, o) in objects {
        for key in o.keys().filter(|k| k.contains('_')) {
            let Some(camel) = CAMEL_FIELDS_0_3.iter().find(|c| snake_case(c) == *key) else {
                continue;
            };
            out.push(Finding::new(
                Rule::FieldSnakeCase,
                pointer_push(&at, key),
                format!(
                    "`{key}` is snake_case; A2A 0.3 JSON names it `{camel}`, and the official 0.3 schema and every client but the Python SDK find no `{camel}` here: rename it, or write the camelCase card with `a2a-card convert --to v0.3`"
                ),
            ));
        }
    }
}

/// Fields A2A 0.3 and 1.0 require that the model cannot see are missing.
fn presence(root: &Map<String, Value>, profile: Profile, out: &mut Vec<Finding>) {
    if present(root, &["capabilities"]).is_none() {
        out.push(Finding::new(
            Rule::CapabilitiesMissing,
            "/capabilities",
            "the card has no `capabilities` object, which A2A 0.3 and 1.0 require; add one, e.g. {\"streaming\": false, \"pushNotifications\": false}",
        ));
    }
    if let Some(skills) = root.get("skills").and_then(Value::as_array) {
        for (i, skill) in skills.iter().enumerate() {
            if skill
                .as_object()
                .is_some_and(|s| present(s, &["tags"]).is_none())
            {
                out.push(Finding::new(
                    Rule::SkillTagsMissing,
                    format!("/skills/{i}/tags"),
                    "the skill has no `tags` field, which A2A 0.3 and 1.0 require; add a few lowercase keywords for discovery",
                ));
            }
        }
    }
    if profile == Profile::Compat && present(root, &["protocolVersion"]).is_none() {
        out.push(Finding::new(
            Rule::ProtocolVersionMissing,
            "/protocolVersion",
            "this compat document has a 0.3 `url` but no `protocolVersion`, which 0.3 requires; add \"protocolVersion\": \"0.3.0\"",
        ));
    }
    if profile == Profile::V0_3 {
        // 0.3 requires `scopes` in every flow (it may be empty there).
        for (at, name, scheme) in schemes(root) {
            if scheme.get("type").and_then(Value::as_str) == Some("oauth2")
                && !scheme.contains_key("flows")
            {
                out.push(Finding::new(
                    Rule::SecuritySchemeIncomplete,
                    pointer_push(&at, "flows"),
                    format!(
                        "OAuth 2.0 scheme `{}` has no `flows`, which A2A 0.3 requires",
                        short(name)
                    ),
                ));
            }
            let Some(flows) = scheme.get("flows").and_then(Value::as_object) else {
                continue;
            };
            for (kind, flow) in flows {
                if flow.as_object().is_some_and(|f| !f.contains_key("scopes")) {
                    let at =
                        pointer_push(&pointer_push(&pointer_push(&at, "flows"), kind), "scopes");
                    out.push(Finding::new(
                        Rule::SecuritySchemeIncomplete,
                        at,
                        format!(
                            "the `{}` flow of `{}` has no `scopes`, which A2A 0.3 requires (an empty object if there are none)",
                            short(kind),
                            short(name)
                        ),
                    ));
                }
            }
        }
    }
}

/// Each security scheme object: its pointer, name and fields.
fn schemes(
    root: &Map<String, Value>,
) -> impl Iterator<Item = (String, &String, &Map<String, Value>)> {
    present(root, &["securitySchemes", "security_schemes"])
        .and_then(|(key, v)| Some((pointer_push("", key), v.as_object()?)))
        .into_iter()
        .flat_map(|(base, map)| {
            map.iter().filter_map(move |(name, v)| {
                Some((pointer_push(&base, name), name, v.as_object()?))
            })
        })
}

fn mismatch(out: &mut Vec<Finding>, pointer: String, message: String) {
    out.push(Finding::new(Rule::FieldVersionMismatch, pointer, message));
}

/// Fields of another version than the card's.
fn versions(root: &Map<String, Value>, profile: Profile, out: &mut Vec<Finding>) {
    match profile {
        Profile::V1 => {
            for key in LEGACY_ROOT {
                if root.contains_key(*key) {
                    mismatch(
                        out,
                        pointer_push("", key),
                        format!(
                            "`{key}` is an A2A 0.3 field; this is a 1.0 card (it has 1.0 fields such as `supportedInterfaces`), and the official 1.0 schema and SDK reject or drop it; remove it, or serve a complete compat document (`a2a-card convert --to compat`)"
                        ),
                    );
                }
            }
            if root.contains_key("authentication") {
                mismatch(out, "/authentication".into(), "`authentication` is the A2A 0.1/0.2 way to name security schemes; a 1.0 card declares them in `securitySchemes` and requires them in `securityRequirements`".into());
            }
            if let Some(caps) = root.get("capabilities").and_then(Value::as_object) {
                for key in ["stateTransitionHistory", "state_transition_history"] {
                    if caps.contains_key(key) {
                        mismatch(
                            out,
                            pointer_push("/capabilities", key),
                            format!(
                                "`capabilities.{key}` is an A2A 0.3 field that 1.0 removed; the official 1.0 schema rejects it, so remove it"
                            ),
                        );
                    }
                }
            }
            for (i, skill) in skill_objects(root) {
                if skill.contains_key("security") {
                    mismatch(out, format!("/skills/{i}/security"), "a skill's `security` is the A2A 0.3 field; in a 1.0 card it is `securityRequirements` ([{\"schemes\": {NAME: {\"list\": [..]}}}]), and 1.0 clients ignore `security`, dropping the requirement".into());
                }
            }
            for (at, name, scheme) in schemes(root) {
                if scheme.contains_key("type") {
                    mismatch(
                        out,
                        pointer_push(&at, "type"),
                        format!(
                            "security scheme `{}` has the 0.3 `type` tag; a 1.0 scheme is exactly one wrapper key such as `httpAuthSecurityScheme`, and the official 1.0 schema rejects `type`",
                            short(name)
                        ),
                    );
                }
            }
        }
        Profile::V0_3 | Profile::Compat => {
            for (at, name, scheme) in schemes(root) {
                if !scheme.contains_key("type")
                    && let Some(wrapper) = SCHEME_NAMES
                        .iter()
                        .flat_map(|n| [n.wrapper, n.wrapper_snake])
                        .find(|w| scheme.contains_key(*w))
                {
                    let why = if profile == Profile::Compat {
                        "a compat document needs each scheme in both shapes, and 0.3 clients (the official 0.3 schema and SDK) cannot read one without `type`"
                    } else {
                        "this is a 0.3 card, whose schemes carry a `type` tag (`apiKey`, `http`, `oauth2`, `openIdConnect`, `mutualTLS`) and their fields directly; the official 0.3 schema and SDK reject the wrapper"
                    };
                    mismatch(
                        out,
                        pointer_push(&at, wrapper),
                        format!(
                            "security scheme `{}` has only the 1.0 wrapper `{wrapper}`: {why}",
                            short(name)
                        ),
                    );
                }
            }
            if let Some(Value::Object(auth)) = root.get("authentication") {
                let names: Vec<_> = auth
                    .get("schemes")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .filter(|n| !n.eq_ignore_ascii_case("none"))
                    .map(|n| format!("`{}`", short(n)))
                    .collect();
                if !names.is_empty() {
                    out.push(Finding::new(Rule::LegacyAuthentication, "/authentication", format!("`authentication` is the A2A 0.1/0.2 way to name schemes ({}) without their details; 0.3 and 1.0 clients ignore it (the official SDK drops it), so they will not know how to authenticate: declare each scheme in `securitySchemes` and require it in `security`", names.join(", "))));
                }
            }
            if profile == Profile::V0_3 {
                for (i, skill) in skill_objects(root) {
                    for key in ["securityRequirements", "security_requirements"] {
                        if skill.contains_key(key) && !skill.contains_key("security") {
                            mismatch(
                                out,
                                format!("/skills/{i}/{key}"),
                                format!(
                                    "`{key}` is the A2A 1.0 field; this 0.3 card's clients read a skill's requirements from `security` ([{{NAME: [scopes]}}]) and ignore it, dropping the requirement"
                                ),
                            );
                        }
                    }
                }
                let additional = present(root, &["additionalInterfaces", "additional_interfaces"]);
                if let Some((key, Value::Array(list))) = additional {
                    for (i, iface) in list.iter().enumerate() {
                        let Some(iface) = iface.as_object() else {
                            continue;
                        };
                        if !iface.contains_key("transport")
                            && let Some((k, _)) =
                                present(iface, &["protocolBinding", "protocol_binding"])
                        {
                            mismatch(
                                out,
                                format!("/{key}/{i}/{k}"),
                                format!(
                                    "`{k}` is the A2A 1.0 name; a 0.3 interface names its binding `transport`, which the official 0.3 schema and SDK require"
                                ),
                            );
                        }
                    }
                }
            }
        }
    }
}

fn skill_objects(root: &Map<String, Value>) -> impl Iterator<Item = (usize, &Map<String, Value>)> {
    root.get("skills")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, s)| Some((i, s.as_object()?)))
}

/// 1.0 `securityRequirements` are `{"schemes": {NAME: {"list": [..]}}}`; 0.3 `security` entries
/// are `{NAME: [..]}`.
fn requirement_shapes(
    o: &Map<String, Value>,
    base: &str,
    profile: Profile,
    out: &mut Vec<Finding>,
) {
    if let Some((key, Value::Array(list))) =
        present(o, &["securityRequirements", "security_requirements"])
    {
        let field = pointer_push(base, key);
        for (j, entry) in list.iter().enumerate() {
            let Some(entry) = entry.as_object() else {
                continue;
            };
            let at = pointer_push(&field, &j.to_string());
            match entry.get("schemes") {
                Some(Value::Object(schemes)) => {
                    for (name, scopes) in schemes {
                        if scopes.is_array() {
                            out.push(Finding::new(Rule::SecurityRequirementShape, pointer_push(&pointer_push(&at, "schemes"), name), format!("the scopes of `{}` are a bare array; in 1.0 they are {{\"list\": [..]}}, and the official SDK's parser silently drops a bare array's scopes", short(name))));
                        }
                    }
                }
                Some(_) => {}
                None if entry.is_empty() => {}
                None => {
                    let names: Vec<_> = entry.keys().map(|k| short(k).into_owned()).collect();
                    out.push(Finding::new(Rule::SecurityRequirementShape, at, format!("this requirement is a bare map of scheme to scopes (the 0.3 shape); 1.0 wants {{\"schemes\": {{NAME: {{\"list\": [..]}}}}}}, and the official SDK reads this one as no requirement at all, dropping authentication ({})", names.join(", "))));
                }
            }
        }
    }
    if profile == Profile::V1 {
        return; // `security` itself is the finding there.
    }
    if let Some(Value::Array(list)) = o.get("security") {
        for (j, entry) in list.iter().enumerate() {
            if let Some(Value::Object(_)) = entry.as_object().and_then(|e| e.get("schemes")) {
                let at = pointer_push(&pointer_push(base, "security"), &j.to_string());
                out.push(Finding::new(Rule::SecurityRequirementShape, pointer_push(&at, "schemes"), "this 0.3 `security` entry has the 1.0 `schemes` wrapper; a 0.3 entry maps each scheme name to its scopes ({NAME: [..]}), and the official 0.3 schema and SDK reject the wrapper"));
            }
        }
    }
}

/// The major version of a version string (`"0.3.0"` -> 0), if it has one.
fn major(version: &str) -> Option<u64> {
    version
        .trim()
        .trim_start_matches(['v', 'V'])
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// A 0.3-shaped card (or a compat document's 0.3 half) that says it is 1.0 or later.
fn protocol_version(root: &Map<String, Value>, profile: Profile, out: &mut Vec<Finding>) {
    if profile == Profile::V1 {
        return;
    }
    let Some((key, Value::String(v))) = present(root, &["protocolVersion", "protocol_version"])
    else {
        return;
    };
    if major(v).is_some_and(|m| m >= 1) {
        let message = if profile == Profile::Compat {
            format!(
                "a compat document's top-level `{key}` speaks for its 0.3 half (`url`, `preferredTransport`), but it says `{}`; write the 0.3 version there (\"0.3.0\") and list 1.0 endpoints in `supportedInterfaces`",
                short(v)
            )
        } else {
            format!(
                "the card says it is A2A `{}` but has the 0.3 shape (a top-level `url`, no `supportedInterfaces`); a 1.0 client finds no interface in it: convert it (`a2a-card convert --to v1`) or declare the 0.3 version it follows",
                short(v)
            )
        };
        out.push(Finding::new(
            Rule::ProtocolVersionMismatch,
            pointer_push("", key),
            message,
        ));
    }
}
