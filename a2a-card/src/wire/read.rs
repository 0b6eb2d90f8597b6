//! Reading a card from JSON of any protocol version into the model.
//!
//! The reader is one pass that accepts every spelling a card meets in the wild: A2A 1.0
//! ProtoJSON (camelCase and the proto's snake_case names), 0.3 (top-level `url`, `type`-tagged
//! security schemes), the compat document that holds both, the 0.1 `authentication` object and
//! the bare-array security requirements some SDKs emit. A value of the wrong type is an issue with
//! its JSON pointer; reading goes on so that every issue is reported at once.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::card::*;

use super::quote::short;
use super::sources::{InterfaceSource, SchemeSource, SkillSource, Sources};
use super::{ParseIssue, Profile, SCHEME_NAMES, pointer_push};

/// Reads `value` into a card, collecting every issue.
pub(crate) fn read_card(value: &Value) -> (AgentCard, Vec<ParseIssue>, Sources) {
    let mut cx = Cx::default();
    cx.sources.modern = Profile::detect(value) != Profile::V0_3;
    let card = match cx.object(value, "") {
        Some(mut o) => card(&mut cx, &mut o),
        None => AgentCard::default(),
    };
    (card, cx.issues, cx.sources)
}

/// Where a scheme's fields are in `o`.
fn scheme_source(o: &Obj<'_>, fields: &[(&'static str, &[&str])]) -> SchemeSource {
    SchemeSource {
        fields: o.pointer.clone(),
        at: fields
            .iter()
            .map(|(name, keys)| (*name, o.at(keys)))
            .collect(),
        flows: HashMap::new(),
        legacy: false,
    }
}

/// Every field of a security scheme or flow: its 1.0 name, and the keys it is read from.
const SCHEME_FIELDS: &[(&str, &[&str])] = &[
    ("name", &["name"]),
    ("location", &["location", "in"]),
    ("scheme", &["scheme"]),
    ("bearerFormat", &["bearerFormat", "bearer_format"]),
    ("flows", &["flows"]),
    (
        "oauth2MetadataUrl",
        &["oauth2MetadataUrl", "oauth2_metadata_url"],
    ),
    (
        "openIdConnectUrl",
        &["openIdConnectUrl", "open_id_connect_url"],
    ),
];
const FLOW_FIELDS: &[(&str, &[&str])] = &[
    (
        "authorizationUrl",
        &["authorizationUrl", "authorization_url"],
    ),
    ("tokenUrl", &["tokenUrl", "token_url"]),
    (
        "deviceAuthorizationUrl",
        &["deviceAuthorizationUrl", "device_authorization_url"],
    ),
    ("refreshUrl", &["refreshUrl", "refresh_url"]),
    ("pkceRequired", &["pkceRequired", "pkce_required"]),
];

#[derive(Default)]
struct Cx {
    issues: Vec<ParseIssue>,
    sources: Sources,
}

impl Cx {
    fn issue(&mut self, pointer: &str, message: impl Into<String>) {
        self.issues.push(ParseIssue {
            pointer: pointer.to_owned(),
            message: message.into(),
        });
    }

    fn object<'a>(&mut self, value: &'a Value, pointer: &str) -> Option<Obj<'a>> {
        match value {
            Value::Object(map) => Some(Obj {
                map,
                pointer: pointer.to_owned(),
                used: Vec::new(),
            }),
            other => {
                self.issue(
                    pointer,
                    format!("expected an object, found {}", kind(other)),
                );
                None
            }
        }
    }

    fn string(&mut self, value: &Value, pointer: &str) -> Option<String> {
        match value {
            Value::String(s) => Some(s.clone()),
            other => {
                self.issue(pointer, format!("expected a string, found {}", kind(other)));
                None
            }
        }
    }

    fn strings(&mut self, value: &Value, pointer: &str) -> Vec<String> {
        match value {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .filter_map(|(i, v)| self.string(v, &pointer_push(pointer, &i.to_string())))
                .collect(),
            other => {
                self.issue(
                    pointer,
                    format!("expected an array of strings, found {}", kind(other)),
                );
                Vec::new()
            }
        }
    }

    fn array<'a>(&mut self, value: &'a Value, pointer: &str) -> &'a [Value] {
        match value {
            Value::Array(items) => items,
            other => {
                self.issue(pointer, format!("expected an array, found {}", kind(other)));
                &[]
            }
        }
    }
}

/// Names a JSON value's type for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An object being read: remembers which keys were consumed, so the rest become `extra`.
struct Obj<'a> {
    map: &'a Map<String, Value>,
    pointer: String,
    used: Vec<&'a str>,
}

impl<'a> Obj<'a> {
    /// The first present, non-null value among `keys` (aliases of one field), with its pointer.
    /// Every alias counts as consumed.
    fn get(&mut self, keys: &[&str]) -> Option<(&'a Value, String)> {
        let mut found = None;
        for key in keys {
            if let Some((k, v)) = self.map.get_key_value(*key) {
                self.used.push(k.as_str());
                if found.is_none() && !v.is_null() {
                    found = Some((v, pointer_push(&self.pointer, k)));
                }
            }
        }
        found
    }

    /// The pointer of the first present alias among `keys`, or where the first would be.
    fn at(&self, keys: &[&str]) -> String {
        let key = keys
            .iter()
            .find(|k| self.map.contains_key(**k))
            .unwrap_or(&keys[0]);
        pointer_push(&self.pointer, key)
    }

    fn has(&self, key: &str) -> bool {
        self.map.get(key).is_some_and(|v| !v.is_null())
    }

    fn string(&mut self, cx: &mut Cx, keys: &[&str]) -> Option<String> {
        let (v, p) = self.get(keys)?;
        cx.string(v, &p)
    }

    fn bool(&mut self, cx: &mut Cx, keys: &[&str]) -> Option<bool> {
        let (v, p) = self.get(keys)?;
        match v {
            Value::Bool(b) => Some(*b),
            other => {
                cx.issue(&p, format!("expected a boolean, found {}", kind(other)));
                None
            }
        }
    }

    fn strings(&mut self, cx: &mut Cx, keys: &[&str]) -> Vec<String> {
        match self.get(keys) {
            Some((v, p)) => cx.strings(v, &p),
            None => Vec::new(),
        }
    }

    fn object(&mut self, cx: &mut Cx, keys: &[&str]) -> Option<Obj<'a>> {
        let (v, p) = self.get(keys)?;
        cx.object(v, &p)
    }

    /// A JSON object field kept as a map (params, headers).
    fn map(&mut self, cx: &mut Cx, keys: &[&str]) -> Option<Map<String, Value>> {
        let (v, p) = self.get(keys)?;
        match v {
            Value::Object(m) => Some(m.clone()),
            other => {
                cx.issue(&p, format!("expected an object, found {}", kind(other)));
                None
            }
        }
    }

    /// Each element of an array field, with its pointer.
    fn each(&mut self, cx: &mut Cx, keys: &[&str]) -> Vec<(&'a Value, String)> {
        match self.get(keys) {
            Some((v, p)) => cx
                .array(v, &p)
                .iter()
                .enumerate()
                .map(|(i, item)| (item, pointer_push(&p, &i.to_string())))
                .collect(),
            None => Vec::new(),
        }
    }

    /// The keys nobody consumed, verbatim.
    fn finish(&self) -> Extra {
        self.map
            .iter()
            .filter(|(k, _)| !self.used.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

fn card(cx: &mut Cx, o: &mut Obj<'_>) -> AgentCard {
    let mut card = AgentCard {
        name: o.string(cx, &["name"]).unwrap_or_default(),
        description: o.string(cx, &["description"]).unwrap_or_default(),
        version: o.string(cx, &["version"]).unwrap_or_default(),
        ..AgentCard::default()
    };
    card.provider = o
        .object(cx, &["provider"])
        .map(|mut p| provider(cx, &mut p));
    card.icon_url = o.string(cx, &["iconUrl", "icon_url"]);
    card.documentation_url = o.string(cx, &["documentationUrl", "documentation_url"]);
    card.interfaces = interfaces(cx, o);
    const EXTENDED: [&str; 2] = ["extendedAgentCard", "extended_agent_card"];
    const LEGACY_EXTENDED: [&str; 2] = [
        "supportsAuthenticatedExtendedCard",
        "supports_authenticated_extended_card",
    ];
    let caps = o.map.get("capabilities").and_then(Value::as_object);
    let in_caps = EXTENDED
        .iter()
        .find(|k| caps.is_some_and(|c| c.contains_key(**k)));
    cx.sources.extended_card = match in_caps {
        Some(key) => pointer_push(&o.at(&["capabilities"]), key),
        None if LEGACY_EXTENDED.iter().any(|k| o.has(k)) || !cx.sources.modern => {
            o.at(&LEGACY_EXTENDED)
        }
        None => pointer_push(&o.at(&["capabilities"]), EXTENDED[0]),
    };
    card.capabilities = match o.object(cx, &["capabilities"]) {
        Some(mut c) => capabilities(cx, &mut c),
        None => AgentCapabilities::default(),
    };
    let legacy_extended = o.bool(
        cx,
        &[
            "supportsAuthenticatedExtendedCard",
            "supports_authenticated_extended_card",
        ],
    );
    if card.capabilities.extended_agent_card.is_none() {
        card.capabilities.extended_agent_card = legacy_extended;
    }
    const INPUTS: [&str; 2] = ["defaultInputModes", "default_input_modes"];
    const OUTPUTS: [&str; 2] = ["defaultOutputModes", "default_output_modes"];
    cx.sources.default_input_modes = o.at(&INPUTS);
    cx.sources.default_output_modes = o.at(&OUTPUTS);
    card.default_input_modes = o.strings(cx, &INPUTS);
    card.default_output_modes = o.strings(cx, &OUTPUTS);
    for (v, p) in o.each(cx, &["skills"]) {
        if let Some(mut s) = cx.object(v, &p) {
            card.skills.push(skill(cx, &mut s));
        }
    }
    if let Some(schemes) = o.object(cx, &["securitySchemes", "security_schemes"]) {
        for (name, value) in schemes.map {
            let pointer = pointer_push(&schemes.pointer, name);
            if let Some((scheme, source)) = security_scheme(cx, value, &pointer) {
                card.security_schemes.insert(name.clone(), scheme);
                cx.sources.schemes.insert(name.clone(), source);
            }
        }
    }
    let (requirements, pointers) = requirements(cx, o);
    card.security_requirements = requirements;
    cx.sources.requirements = pointers;
    let legacy_auth = o
        .object(cx, &["authentication"])
        .and_then(|mut auth| legacy_authentication(cx, &mut auth, &mut card));
    for (v, p) in o.each(cx, &["signatures"]) {
        if let Some(mut s) = cx.object(v, &p) {
            card.signatures.push(signature(cx, &mut s));
            cx.sources.signatures.push(p);
        }
    }
    cx.sources.schemas = o.at(&["schemas"]);
    if let Some(schemas) = o.map(cx, &["schemas"]) {
        card.schemas = schemas.into_iter().collect();
    }
    card.extra = o.finish();
    if let Some(rest) = legacy_auth {
        card.extra.insert("authentication".into(), rest);
    }
    card
}

fn provider(cx: &mut Cx, o: &mut Obj<'_>) -> AgentProvider {
    AgentProvider {
        organization: o.string(cx, &["organization"]).unwrap_or_default(),
        url: o.string(cx, &["url"]).unwrap_or_default(),
        extra: o.finish(),
    }
}

/// 1.0 `supportedInterfaces`, or 0.3's `url` + `preferredTransport` + `protocolVersion` +
/// `additionalInterfaces`. A compat document has both; the 1.0 list wins and the 0.3 fields, which
/// repeat it, are consumed.
fn interfaces(cx: &mut Cx, o: &mut Obj<'_>) -> Vec<AgentInterface> {
    let supported = o.each(cx, &["supportedInterfaces", "supported_interfaces"]);
    // An empty 1.0 list beside 0.3 fields does not hide them.
    let has_supported = !supported.is_empty();
    const TRANSPORT: [&str; 2] = ["preferredTransport", "preferred_transport"];
    const VERSION: [&str; 2] = ["protocolVersion", "protocol_version"];
    let main = InterfaceSource {
        base: None,
        url: o.at(&["url"]),
        binding: o.at(&TRANSPORT),
        version: o.at(&VERSION),
    };
    let url = o.string(cx, &["url"]);
    let transport = o.string(cx, &TRANSPORT);
    let version = o.string(cx, &VERSION);
    let additional = o.each(cx, &["additionalInterfaces", "additional_interfaces"]);
    let mut list = Vec::new();
    if has_supported {
        for (v, p) in supported {
            if let Some(mut i) = cx.object(v, &p) {
                let source = interface_source(&i, None);
                list.push(interface(cx, &mut i, None));
                cx.sources.interfaces.push(source);
            }
        }
        return list;
    }
    if let Some(url) = url {
        list.push(AgentInterface {
            url,
            protocol_binding: transport.unwrap_or_else(|| AgentInterface::JSONRPC.to_owned()),
            protocol_version: version.clone(),
            ..AgentInterface::default()
        });
        cx.sources.interfaces.push(main.clone());
    }
    // 0.3 asks that additionalInterfaces repeat the main interface; that one repetition is not a
    // second interface.
    let mut main_repeated = false;
    for (v, p) in additional {
        if let Some(mut i) = cx.object(v, &p) {
            let source = interface_source(&i, Some(&main.version));
            let iface = interface(cx, &mut i, version.as_deref());
            let repeats_main = !main_repeated
                && list.first().is_some_and(|main: &AgentInterface| {
                    main.url == iface.url && main.protocol_binding == iface.protocol_binding
                });
            main_repeated |= repeats_main;
            if repeats_main {
                // The top level has no room for the main interface's own unknown fields; they
                // live in its repetition.
                list[0].extra = iface.extra;
                cx.sources.main_repetition = Some(p);
            } else {
                list.push(iface);
                cx.sources.interfaces.push(source);
            }
        }
    }
    list
}

/// Where an interface object's fields are; a 0.3 entry's version is the card's.
fn interface_source(o: &Obj<'_>, card_version: Option<&String>) -> InterfaceSource {
    InterfaceSource {
        base: Some(o.pointer.clone()),
        url: o.at(&["url"]),
        binding: o.at(&["protocolBinding", "protocol_binding", "transport"]),
        version: match card_version {
            Some(v) if !o.has("protocolVersion") && !o.has("protocol_version") => v.clone(),
            _ => o.at(&["protocolVersion", "protocol_version"]),
        },
    }
}

fn interface(cx: &mut Cx, o: &mut Obj<'_>, card_version: Option<&str>) -> AgentInterface {
    AgentInterface {
        url: o.string(cx, &["url"]).unwrap_or_default(),
        protocol_binding: o
            .string(cx, &["protocolBinding", "protocol_binding", "transport"])
            .unwrap_or_default(),
        protocol_version: o
            .string(cx, &["protocolVersion", "protocol_version"])
            .or_else(|| card_version.map(str::to_owned)),
        tenant: o.string(cx, &["tenant"]),
        extra: o.finish(),
    }
}

fn capabilities(cx: &mut Cx, o: &mut Obj<'_>) -> AgentCapabilities {
    AgentCapabilities {
        streaming: o.bool(cx, &["streaming"]),
        push_notifications: o.bool(cx, &["pushNotifications", "push_notifications"]),
        state_transition_history: o
            .bool(cx, &["stateTransitionHistory", "state_transition_history"]),
        extended_agent_card: o.bool(cx, &["extendedAgentCard", "extended_agent_card"]),
        extensions: o
            .each(cx, &["extensions"])
            .into_iter()
            .filter_map(|(v, p)| {
                let ext = cx.object(v, &p).map(|mut e| extension(cx, &mut e))?;
                cx.sources.extensions.push(p);
                Some(ext)
            })
            .collect(),
        extra: o.finish(),
    }
}

fn extension(cx: &mut Cx, o: &mut Obj<'_>) -> AgentExtension {
    AgentExtension {
        uri: o.string(cx, &["uri"]).unwrap_or_default(),
        description: o.string(cx, &["description"]),
        required: o.bool(cx, &["required"]),
        params: o.map(cx, &["params"]),
        extra: o.finish(),
    }
}

fn skill(cx: &mut Cx, o: &mut Obj<'_>) -> AgentSkill {
    let mut source = SkillSource {
        base: o.pointer.clone(),
        input_modes: o.at(&["inputModes", "input_modes"]),
        output_modes: o.at(&["outputModes", "output_modes"]),
        requirements: Vec::new(),
    };
    let (security_requirements, pointers) = requirements(cx, o);
    source.requirements = pointers;
    cx.sources.skills.push(source);
    AgentSkill {
        id: o.string(cx, &["id"]).unwrap_or_default(),
        name: o.string(cx, &["name"]).unwrap_or_default(),
        description: o.string(cx, &["description"]).unwrap_or_default(),
        tags: o.strings(cx, &["tags"]),
        examples: o.strings(cx, &["examples"]),
        input_modes: o.strings(cx, &["inputModes", "input_modes"]),
        output_modes: o.strings(cx, &["outputModes", "output_modes"]),
        security_requirements,
        extra: o.finish(),
    }
}

/// 1.0 `securityRequirements` (`[{schemes: {NAME: {list: [..]}}}]`, also with bare arrays), or
/// 0.3 `security` (`[{NAME: [..]}]`); with, for each, the object whose keys are scheme names.
fn requirements(cx: &mut Cx, o: &mut Obj<'_>) -> (Vec<SecurityRequirement>, Vec<String>) {
    let modern = o.each(cx, &["securityRequirements", "security_requirements"]);
    let legacy = o.each(cx, &["security"]);
    let entries = if modern.is_empty() { legacy } else { modern };
    entries
        .into_iter()
        .filter_map(|(v, p)| {
            let mut entry = cx.object(v, &p)?;
            let (map, pointer) = match entry.map.get("schemes") {
                Some(Value::Object(inner)) if entry.map.len() == 1 => {
                    (inner, pointer_push(&p, "schemes"))
                }
                _ => (entry.map, p.clone()),
            };
            let mut req = SecurityRequirement::default();
            for (name, scopes) in map {
                let sp = pointer_push(&pointer, name);
                let list = match scopes {
                    Value::Object(l) => {
                        for key in l.keys().filter(|k| *k != "list") {
                            cx.issue(
                                &pointer_push(&sp, key),
                                format!(
                                    "unknown key `{}` in a scope list; the scopes go in `list`",
                                    short(key)
                                ),
                            );
                        }
                        match l.get("list") {
                            Some(list) => cx.strings(list, &pointer_push(&sp, "list")),
                            None => Vec::new(),
                        }
                    }
                    other => cx.strings(other, &sp),
                };
                req.schemes.insert(name.clone(), list);
            }
            entry.used.extend(entry.map.keys().map(String::as_str));
            Some((req, pointer))
        })
        .unzip()
}

/// A 1.0 scheme (one wrapper key) or a 0.3 scheme (`type` tag); a compat scheme carries both, and
/// the wrapper wins.
fn security_scheme(
    cx: &mut Cx,
    value: &Value,
    pointer: &str,
) -> Option<(SecurityScheme, SchemeSource)> {
    let mut outer = cx.object(value, pointer)?;
    for (index, names) in SCHEME_NAMES.iter().enumerate() {
        if let Some(mut inner) = outer.object(cx, &[names.wrapper, names.wrapper_snake]) {
            let mut source = scheme_source(&inner, SCHEME_FIELDS);
            let scheme = scheme_of_kind(cx, index, &mut inner, &mut source);
            if outer.map.contains_key("type") {
                // The compat document's 0.3 copy of the same scheme.
                outer.used.extend(outer.map.keys().map(String::as_str));
            } else {
                for key in outer.finish().keys() {
                    cx.issue(&pointer_push(pointer, key), format!("`{}` beside the wrapper key `{}`: a 1.0 security scheme is exactly one wrapper key", short(key), names.wrapper));
                }
            }
            return Some((scheme, source));
        }
    }
    let Some((tag, tag_pointer)) = outer.get(&["type"]) else {
        let wrappers: Vec<_> = SCHEME_NAMES.iter().map(|n| n.wrapper).collect();
        cx.issue(
            pointer,
            format!(
                "a security scheme needs a wrapper key ({}) or, in 0.3, a `type`",
                wrappers.join(", ")
            ),
        );
        return None;
    };
    let tag = cx.string(tag, &tag_pointer)?;
    let mut source = scheme_source(&outer, SCHEME_FIELDS);
    if !outer.map.contains_key("location") {
        // A 0.3 scheme names the API key's location `in`.
        source
            .at
            .insert("location", pointer_push(&outer.pointer, "in"));
    }
    match SCHEME_NAMES
        .iter()
        .position(|n| n.tag.eq_ignore_ascii_case(&tag))
    {
        Some(index) => Some((scheme_of_kind(cx, index, &mut outer, &mut source), source)),
        None => {
            cx.issue(
                &tag_pointer,
                format!(
                    "unknown security scheme type `{}` (expected one of {})",
                    short(&tag),
                    SCHEME_NAMES.map(|n| n.tag).join(", ")
                ),
            );
            None
        }
    }
}

fn scheme_of_kind(
    cx: &mut Cx,
    index: usize,
    o: &mut Obj<'_>,
    source: &mut SchemeSource,
) -> SecurityScheme {
    let description = o.string(cx, &["description"]);
    let scheme = match index {
        0 => SecurityScheme::ApiKey(ApiKeyScheme {
            name: o.string(cx, &["name"]).unwrap_or_default(),
            location: o.string(cx, &["location", "in"]).unwrap_or_default(),
            description,
            extra: Extra::new(),
        }),
        1 => SecurityScheme::Http(HttpAuthScheme {
            scheme: o.string(cx, &["scheme"]).unwrap_or_default(),
            bearer_format: o.string(cx, &["bearerFormat", "bearer_format"]),
            description,
            extra: Extra::new(),
        }),
        2 => SecurityScheme::OAuth2(OAuth2Scheme {
            flows: o
                .object(cx, &["flows"])
                .map(|mut f| flows(cx, &mut f, source))
                .unwrap_or_default(),
            oauth2_metadata_url: o.string(cx, &["oauth2MetadataUrl", "oauth2_metadata_url"]),
            description,
            extra: Extra::new(),
        }),
        3 => SecurityScheme::OpenIdConnect(OpenIdConnectScheme {
            open_id_connect_url: o
                .string(cx, &["openIdConnectUrl", "open_id_connect_url"])
                .unwrap_or_default(),
            description,
            extra: Extra::new(),
        }),
        _ => SecurityScheme::MutualTls(MutualTlsScheme {
            description,
            extra: Extra::new(),
        }),
    };
    o.get(&["type"]);
    let extra = o.finish();
    with_extra(scheme, extra)
}

fn with_extra(mut scheme: SecurityScheme, extra: Extra) -> SecurityScheme {
    match &mut scheme {
        SecurityScheme::ApiKey(s) => s.extra = extra,
        SecurityScheme::Http(s) => s.extra = extra,
        SecurityScheme::OAuth2(s) => s.extra = extra,
        SecurityScheme::OpenIdConnect(s) => s.extra = extra,
        SecurityScheme::MutualTls(s) => s.extra = extra,
    }
    scheme
}

fn flows(cx: &mut Cx, o: &mut Obj<'_>, source: &mut SchemeSource) -> OAuthFlows {
    let mut flows = OAuthFlows::default();
    for kind in OAuthFlowKind::ALL {
        let snake = snake_case(kind.wire_name());
        if let Some(mut f) = o.object(cx, &[kind.wire_name(), &snake]) {
            let at = FLOW_FIELDS
                .iter()
                .map(|(name, keys)| (*name, f.at(keys)))
                .collect();
            source
                .flows
                .insert(kind.wire_name(), (f.pointer.clone(), at));
            let mut flow = OAuthFlow::of_kind(kind);
            flow.authorization_url = f.string(cx, &["authorizationUrl", "authorization_url"]);
            flow.token_url = f.string(cx, &["tokenUrl", "token_url"]);
            flow.device_authorization_url =
                f.string(cx, &["deviceAuthorizationUrl", "device_authorization_url"]);
            flow.refresh_url = f.string(cx, &["refreshUrl", "refresh_url"]);
            if let Some(scopes) = f.object(cx, &["scopes"]) {
                for (scope, text) in scopes.map {
                    let p = pointer_push(&scopes.pointer, scope);
                    if let Some(text) = cx.string(text, &p) {
                        flow.scopes.insert(scope.clone(), text);
                    }
                }
            }
            flow.pkce_required = f.bool(cx, &["pkceRequired", "pkce_required"]);
            flow.extra = f.finish();
            flows = flows.with(flow);
        }
    }
    flows.extra = o.finish();
    flows
}

/// The snake_case form of a camelCase field name (`oauth2MetadataUrl` -> `oauth2_metadata_url`):
/// the proto's name, which ProtoJSON readers also accept.
pub(crate) fn snake_case(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for c in camel.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn signature(cx: &mut Cx, o: &mut Obj<'_>) -> AgentCardSignature {
    AgentCardSignature {
        protected: o.string(cx, &["protected"]).unwrap_or_default(),
        signature: o.string(cx, &["signature"]).unwrap_or_default(),
        header: o.map(cx, &["header"]),
        extra: o.finish(),
    }
}

/// The A2A 0.1 `authentication: {schemes: [..], credentials}` object: each scheme name becomes a
/// security scheme of that name (bearer/basic/digest as HTTP schemes, `apiKey`, `oauth2`,
/// `openIdConnect`, `mutualTLS`) and one requirement alternative, unless the card also declares
/// them the modern way.
/// Returns what the object held beyond `schemes` and `credentials`, to be kept.
fn legacy_authentication(cx: &mut Cx, o: &mut Obj<'_>, card: &mut AgentCard) -> Option<Value> {
    let names = o.strings(cx, &["schemes"]);
    let names_at = o.at(&["schemes"]);
    let credentials = o.string(cx, &["credentials"]);
    let add_requirements = card.security_requirements.is_empty();
    for (i, name) in names.into_iter().enumerate() {
        let at = pointer_push(&names_at, &i.to_string());
        let scheme = match name.to_ascii_lowercase().as_str() {
            "none" => continue,
            "apikey" => SecurityScheme::ApiKey(ApiKeyScheme {
                location: credentials
                    .as_deref()
                    .and_then(ApiKeyLocation::parse)
                    .map_or_else(String::new, |l| l.as_str().to_owned()),
                ..ApiKeyScheme::default()
            }),
            "oauth2" => SecurityScheme::OAuth2(OAuth2Scheme::default()),
            "openidconnect" | "oidc" => {
                SecurityScheme::OpenIdConnect(OpenIdConnectScheme::default())
            }
            "mutualtls" | "mtls" => SecurityScheme::mutual_tls(),
            http => SecurityScheme::Http(HttpAuthScheme {
                scheme: http.to_owned(),
                ..HttpAuthScheme::default()
            }),
        };
        if !card.security_schemes.contains_key(&name) {
            card.security_schemes.insert(name.clone(), scheme);
            let fields = SCHEME_FIELDS
                .iter()
                .map(|(f, _)| (*f, at.clone()))
                .collect();
            cx.sources.schemes.insert(
                name.clone(),
                SchemeSource {
                    fields: at.clone(),
                    at: fields,
                    flows: HashMap::new(),
                    legacy: true,
                },
            );
        }
        if add_requirements {
            card.security_requirements
                .push(SecurityRequirement::scheme(name, Vec::<String>::new()));
            cx.sources.requirements.push(names_at.clone());
        }
    }
    let rest = o.finish();
    (!rest.is_empty()).then_some(Value::Object(rest))
}
