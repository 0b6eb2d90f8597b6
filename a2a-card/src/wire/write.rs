//! Rendering the model as the JSON of one profile.

use serde_json::{Map, Value, json};

use crate::card::*;

use super::{Profile, RenderOptions, SchemaPlacement, SchemeNames};

/// A JSON object under construction, in field order.
struct W(Map<String, Value>);

impl W {
    fn new() -> Self {
        W(Map::new())
    }
    fn put(&mut self, key: &str, value: Value) {
        self.0.insert(key.to_owned(), value);
    }
    fn string(&mut self, key: &str, value: &str) {
        self.put(key, Value::String(value.to_owned()));
    }
    fn opt(&mut self, key: &str, value: Option<&str>) {
        if let Some(v) = value {
            self.string(key, v);
        }
    }
    fn flag(&mut self, key: &str, value: Option<bool>) {
        if let Some(v) = value {
            self.put(key, Value::Bool(v));
        }
    }
    /// An array of strings; omitted when empty unless `always`.
    fn strings(&mut self, key: &str, values: &[String], always: bool) {
        if always || !values.is_empty() {
            self.put(key, json!(values));
        }
    }
    /// A list of objects; omitted when empty.
    fn list(&mut self, key: &str, values: Vec<Value>) {
        if !values.is_empty() {
            self.put(key, Value::Array(values));
        }
    }
    /// Unknown fields, after the known ones; a known field of the same name wins.
    fn extra(mut self, extra: &Extra) -> Value {
        for (k, v) in extra {
            if !self.0.contains_key(k) {
                self.0.insert(k.clone(), v.clone());
            }
        }
        Value::Object(self.0)
    }
}

pub(crate) fn render(card: &AgentCard, options: &RenderOptions) -> Value {
    let strict;
    let card = match options.schemas {
        SchemaPlacement::Root => card,
        SchemaPlacement::ExtensionParams => {
            let mut moved = card.clone();
            super::placement::move_to_params(&mut moved);
            strict = moved;
            &strict
        }
    };
    let profile = options.profile;
    let modern = profile != Profile::V0_3;
    let legacy = profile != Profile::V1;
    let legacy_ifaces = legacy_interfaces(card);
    let mut w = W::new();
    if legacy {
        w.opt(
            "protocolVersion",
            legacy_ifaces
                .first()
                .and_then(|i| i.protocol_version.as_deref()),
        );
    }
    w.string("name", &card.name);
    w.string("description", &card.description);
    if modern {
        w.list(
            "supportedInterfaces",
            card.interfaces.iter().map(interface).collect(),
        );
    }
    if legacy {
        if let Some(main) = legacy_ifaces.first() {
            w.string("url", &main.url);
            w.string("preferredTransport", &main.protocol_binding);
        }
        if legacy_ifaces.len() > 1 {
            let additional = legacy_ifaces.iter().map(|i| legacy_interface(i)).collect();
            w.list("additionalInterfaces", additional);
        }
    }
    if let Some(p) = &card.provider {
        let mut pw = W::new();
        pw.string("organization", &p.organization);
        pw.string("url", &p.url);
        w.put("provider", pw.extra(&p.extra));
    }
    w.opt("iconUrl", card.icon_url.as_deref());
    w.string("version", &card.version);
    w.opt("documentationUrl", card.documentation_url.as_deref());
    w.put("capabilities", capabilities(card, profile));
    if !card.security_schemes.is_empty() {
        let schemes = card
            .security_schemes
            .iter()
            .map(|(name, s)| (name.clone(), security_scheme(s, profile)))
            .collect();
        w.put("securitySchemes", Value::Object(schemes));
    }
    requirements(&mut w, &card.security_requirements, profile);
    w.strings("defaultInputModes", &card.default_input_modes, legacy);
    w.strings("defaultOutputModes", &card.default_output_modes, legacy);
    let skills = card.skills.iter().map(|s| skill(s, profile)).collect();
    w.put("skills", Value::Array(skills));
    if legacy {
        w.flag(
            "supportsAuthenticatedExtendedCard",
            card.capabilities.extended_agent_card,
        );
    }
    w.list(
        "signatures",
        card.signatures.iter().map(signature).collect(),
    );
    if !card.schemas.is_empty() {
        let schemas = card
            .schemas
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        w.put("schemas", Value::Object(schemas));
    }
    w.extra(&card.extra)
}

/// The interfaces a 0.3 client can use: those that speak 0.x, or, when none says so, all of them
/// (their own version strings then tell the client what it meets).
fn legacy_interfaces(card: &AgentCard) -> Vec<&AgentInterface> {
    let old: Vec<_> = card.interfaces.iter().filter(|i| i.is_pre_1_0()).collect();
    if old.is_empty() {
        card.interfaces.iter().collect()
    } else {
        old
    }
}

fn interface(i: &AgentInterface) -> Value {
    let mut w = W::new();
    w.string("url", &i.url);
    w.string("protocolBinding", &i.protocol_binding);
    w.opt("protocolVersion", i.protocol_version.as_deref());
    w.opt("tenant", i.tenant.as_deref());
    w.extra(&i.extra)
}

fn legacy_interface(i: &AgentInterface) -> Value {
    let mut w = W::new();
    w.string("url", &i.url);
    w.string("transport", &i.protocol_binding);
    w.extra(&i.extra)
}

fn capabilities(card: &AgentCard, profile: Profile) -> Value {
    let c = &card.capabilities;
    let mut w = W::new();
    w.flag("streaming", c.streaming);
    w.flag("pushNotifications", c.push_notifications);
    if profile != Profile::V1 {
        w.flag("stateTransitionHistory", c.state_transition_history);
    }
    if profile != Profile::V0_3 {
        w.flag("extendedAgentCard", c.extended_agent_card);
    }
    let extensions = c.extensions.iter().map(extension).collect();
    w.list("extensions", extensions);
    w.extra(&c.extra)
}

fn extension(e: &AgentExtension) -> Value {
    let mut w = W::new();
    w.string("uri", &e.uri);
    w.opt("description", e.description.as_deref());
    w.flag("required", e.required);
    if let Some(params) = &e.params {
        w.put("params", Value::Object(params.clone()));
    }
    w.extra(&e.extra)
}

fn skill(s: &AgentSkill, profile: Profile) -> Value {
    let mut w = W::new();
    w.string("id", &s.id);
    w.string("name", &s.name);
    w.string("description", &s.description);
    // 0.3 requires `tags`; 1.0 omits empty lists.
    w.strings("tags", &s.tags, profile != Profile::V1);
    w.strings("examples", &s.examples, false);
    w.strings("inputModes", &s.input_modes, false);
    w.strings("outputModes", &s.output_modes, false);
    requirements(&mut w, &s.security_requirements, profile);
    w.extra(&s.extra)
}

/// 1.0 `securityRequirements` and/or 0.3 `security`, as the profile wants.
fn requirements(w: &mut W, reqs: &[SecurityRequirement], profile: Profile) {
    if profile != Profile::V0_3 {
        let modern = reqs
            .iter()
            .map(|r| {
                let schemes: Map<_, _> = r
                    .schemes
                    .iter()
                    .map(|(name, scopes)| (name.clone(), json!({ "list": scopes })))
                    .collect();
                json!({ "schemes": schemes })
            })
            .collect();
        w.list("securityRequirements", modern);
    }
    if profile != Profile::V1 {
        let legacy = reqs
            .iter()
            .map(|r| {
                Value::Object(
                    r.schemes
                        .iter()
                        .map(|(n, s)| (n.clone(), json!(s)))
                        .collect(),
                )
            })
            .collect();
        w.list("security", legacy);
    }
}

/// 1.0: `{wrapperKey: {...}}`; 0.3: `{type, ...}` with `in` for the API key location; compat: both
/// in one object, so that either kind of client finds its own.
fn security_scheme(s: &SecurityScheme, profile: Profile) -> Value {
    let (fields, legacy_fields, extra) = scheme_fields(s);
    let names = SchemeNames::of(s);
    let mut out = W::new();
    if profile != Profile::V1 {
        out.string("type", names.tag);
        for (k, v) in &legacy_fields {
            out.put(k, v.clone());
        }
    }
    if profile == Profile::V0_3 {
        return out.extra(extra);
    }
    let mut inner = W::new();
    for (k, v) in fields {
        inner.put(k, v);
    }
    out.put(names.wrapper, inner.extra(extra));
    Value::Object(out.0)
}

type Fields = Vec<(&'static str, Value)>;

/// The 1.0 fields, 0.3 fields and extras of a scheme.
fn scheme_fields(s: &SecurityScheme) -> (Fields, Fields, &Extra) {
    fn common(description: &Option<String>) -> Fields {
        description
            .iter()
            .map(|d| ("description", Value::String(d.clone())))
            .collect()
    }
    let string = |v: &str| Value::String(v.to_owned());
    match s {
        SecurityScheme::ApiKey(k) => {
            let mut modern = vec![("location", string(&k.location)), ("name", string(&k.name))];
            let mut legacy = vec![("in", string(&k.location)), ("name", string(&k.name))];
            modern.extend(common(&k.description));
            legacy.extend(common(&k.description));
            (modern, legacy, &k.extra)
        }
        SecurityScheme::Http(h) => {
            let mut f = vec![("scheme", string(&h.scheme))];
            if let Some(b) = &h.bearer_format {
                f.push(("bearerFormat", string(b)));
            }
            f.extend(common(&h.description));
            (f.clone(), f, &h.extra)
        }
        SecurityScheme::OAuth2(o) => {
            let mut f = vec![("flows", flows(&o.flows))];
            if let Some(m) = &o.oauth2_metadata_url {
                f.push(("oauth2MetadataUrl", string(m)));
            }
            f.extend(common(&o.description));
            (f.clone(), f, &o.extra)
        }
        SecurityScheme::OpenIdConnect(c) => {
            let mut f = vec![("openIdConnectUrl", string(&c.open_id_connect_url))];
            f.extend(common(&c.description));
            (f.clone(), f, &c.extra)
        }
        SecurityScheme::MutualTls(m) => {
            let f = common(&m.description);
            (f.clone(), f, &m.extra)
        }
    }
}

fn flows(f: &OAuthFlows) -> Value {
    let mut w = W::new();
    for flow in f.iter() {
        let mut fw = W::new();
        fw.opt("authorizationUrl", flow.authorization_url.as_deref());
        fw.opt(
            "deviceAuthorizationUrl",
            flow.device_authorization_url.as_deref(),
        );
        fw.opt("tokenUrl", flow.token_url.as_deref());
        fw.opt("refreshUrl", flow.refresh_url.as_deref());
        let scopes: Map<_, _> = flow
            .scopes
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        fw.put("scopes", Value::Object(scopes));
        fw.flag("pkceRequired", flow.pkce_required);
        w.put(flow.kind.wire_name(), fw.extra(&flow.extra));
    }
    w.extra(&f.extra)
}

fn signature(s: &AgentCardSignature) -> Value {
    let mut w = W::new();
    w.string("protected", &s.protected);
    w.string("signature", &s.signature);
    if let Some(h) = &s.header {
        w.put("header", Value::Object(h.clone()));
    }
    w.extra(&s.extra)
}
