//! The checks behind each [`Rule`], over the model, with pointers to where the document has
//! each value (as the reader recorded it); those of the card's security and signatures are in
//! `security.rs`.

use std::collections::HashMap;

use a2a_card_rules::media::{mode_hint, shorthand};
use a2a_card_rules::names::{KEBAB_CASE_EXAMPLE, suggest_kebab_case};
use a2a_card_rules::skills::{DUPLICATE_ID, NOT_KEBAB_CASE, SHARED_INPUT_SCHEMA};
use a2a_card_rules::text::is_blank;
use a2a_card_rules::urls::{UrlKind, check_endpoint_url, classify};
use serde_json::Value;

use super::security::{requirements, security, signatures};
use super::{Finding, Rule, Severity, is_kebab_case, is_semver};
use crate::MediaType;
use crate::card::*;
use crate::schema::{
    IO_SCHEMAS_EXTENSION_URI, JSON_SCHEMA_DRAFT_2020_12, SchemaMode, check_schema_name,
};
use crate::wire::quote::short;
use crate::wire::{Sources, pointer_push};

/// Every rule of the model on `card`, pointing where `paths` says each value sits in the
/// document reported on.
pub(super) fn card(card: &AgentCard, paths: &Sources) -> Vec<Finding> {
    let mut out = Vec::new();
    identity(card, &mut out);
    interfaces(card, paths, &mut out);
    capabilities(card, paths, &mut out);
    modes(card, paths, &mut out);
    skills(card, paths, &mut out);
    security(card, paths, &mut out);
    signatures(card, paths, &mut out);
    schemas(card, paths, &mut out);
    out
}

const GENERIC_NAMES: &[&str] = &[
    "agent",
    "assistant",
    "bot",
    "chatbot",
    "helper",
    "my agent",
    "ai agent",
    "ai assistant",
    "test agent",
    "a2a agent",
    "my assistant",
];

const VAGUE_PHRASES: &[&str] = &[
    "a helpful agent",
    "a helpful assistant",
    "a helpful ai assistant",
    "handles code stuff",
    "does stuff",
    "does things",
    "an agent",
    "an ai agent",
    "todo",
    "tbd",
];

/// Fewer words than this reads as vague.
const MIN_DESCRIPTION_WORDS: usize = 5;

fn vague(text: &str) -> bool {
    let normalized = text.trim().trim_end_matches('.').to_lowercase();
    normalized.split_whitespace().count() < MIN_DESCRIPTION_WORDS
        || VAGUE_PHRASES.contains(&normalized.as_str())
}

fn identity(card: &AgentCard, out: &mut Vec<Finding>) {
    if is_blank(&card.name) {
        out.push(Finding::new(
            Rule::NameMissing,
            "/name",
            "the card has no name; set `name` to a human-readable name such as \"Recipe Agent\"",
        ));
    } else if GENERIC_NAMES.contains(&card.name.trim().to_lowercase().as_str()) {
        out.push(Finding::new(Rule::NameGeneric, "/name", format!("`{}` is too generic to tell agents apart; name what this agent does (and who provides it)", short(&card.name))));
    }
    if is_blank(&card.description) {
        out.push(Finding::new(Rule::DescriptionMissing, "/description", "the card has no description; say what the agent does, what it takes and what it returns"));
    } else if vague(&card.description) {
        out.push(Finding::new(Rule::DescriptionVague, "/description", format!("\"{}\" is too vague for an orchestrator to route on; name the inputs, outputs and specific capabilities", short(card.description.trim()))));
    }
    if is_blank(&card.version) {
        out.push(Finding::new(
            Rule::VersionMissing,
            "/version",
            "the card has no version; set `version`, e.g. \"1.0.0\"",
        ));
    } else if !is_semver(card.version.trim()) {
        out.push(Finding::new(
            Rule::VersionNotSemver,
            "/version",
            format!(
                "`{}` is not a semantic version; use MAJOR.MINOR.PATCH such as \"1.0.0\"",
                short(&card.version)
            ),
        ));
    }
    if let Some(p) = &card.provider {
        for (field, value) in [("organization", &p.organization), ("url", &p.url)] {
            if is_blank(value) {
                out.push(Finding::new(Rule::ProviderIncomplete, format!("/provider/{field}"), format!("the provider has no `{field}`; a provider needs both `organization` and `url`")));
            }
        }
        if !is_blank(&p.url) {
            link(&p.url, "/provider/url", out);
        }
    }
    if let Some(u) = &card.documentation_url {
        link(u, "/documentationUrl", out);
    }
    if let Some(u) = &card.icon_url {
        link(u, "/iconUrl", out);
    }
}

/// A provider, documentation or icon link.
fn link(raw: &str, pointer: &str, out: &mut Vec<Finding>) {
    match classify(raw).0 {
        UrlKind::Invalid(m) => out.push(Finding::new(Rule::UrlInvalid, pointer, m)),
        UrlKind::Http { loopback: false } | UrlKind::Other(_) => out.push(Finding::new(
            Rule::LinkInsecure,
            pointer,
            format!("`{}` is not https; serve it over https", short(raw)),
        )),
        _ => {}
    }
}

const CORE_BINDINGS: [&str; 3] = [
    AgentInterface::JSONRPC,
    AgentInterface::GRPC,
    AgentInterface::HTTP_JSON,
];

fn interfaces(card: &AgentCard, paths: &Sources, out: &mut Vec<Finding>) {
    if card.interfaces.is_empty() {
        let pointer = if paths.modern {
            "/supportedInterfaces"
        } else {
            "/url"
        };
        let pointer = pointer.to_owned();
        out.push(Finding::new(Rule::InterfaceMissing, pointer, "the card does not say where to reach the agent; add an interface with its URL, protocol binding and version (0.3: `url`)"));
    }
    for (i, iface) in card.interfaces.iter().enumerate() {
        let at = |field| paths.interface(i, field);
        endpoint_url(iface, at("url"), out);
        let binding = iface.protocol_binding.trim();
        if binding.is_empty() {
            out.push(Finding::new(
                Rule::InterfaceBindingMissing,
                at("protocolBinding"),
                "the interface has no protocol binding; use JSONRPC, GRPC or HTTP+JSON",
            ));
        } else if !CORE_BINDINGS.contains(&binding) {
            let hint = CORE_BINDINGS.iter().find(|b| {
                b.eq_ignore_ascii_case(binding)
                    || b.replace('+', "")
                        .eq_ignore_ascii_case(&binding.replace(['+', '_', '-', '/'], ""))
            });
            let message = match hint {
                Some(b) => format!(
                    "`{}` is not a core binding; did you mean `{b}`?",
                    short(binding)
                ),
                None => format!(
                    "`{}` is not a core binding (JSONRPC, GRPC, HTTP+JSON); make sure clients know it",
                    short(binding)
                ),
            };
            out.push(Finding::new(
                Rule::InterfaceBindingUnknown,
                at("protocolBinding"),
                message,
            ));
        }
        match iface.protocol_version.as_deref().map(str::trim) {
            None | Some("") => out.push(Finding::new(Rule::ProtocolVersionMissing, at("protocolVersion"), "the interface does not say which A2A version it speaks; set protocolVersion to \"1.0\" or \"0.3\"")),
            Some(v) if !v.starts_with("0.") && v.split('.').count() != 2 => out.push(Finding::new(
                Rule::ProtocolVersionFormat,
                at("protocolVersion"),
                format!("`{}` is not `major.minor`; write \"{}\"", short(v), short(&v.split('.').take(2).collect::<Vec<_>>().join("."))),
            )),
            _ => {}
        }
    }
}

fn endpoint_url(iface: &AgentInterface, pointer: String, out: &mut Vec<Finding>) {
    let raw = iface.url.as_str();
    if is_blank(raw) {
        out.push(Finding::new(
            Rule::UrlInvalid,
            pointer,
            "the interface URL is empty; set it to the endpoint where requests go",
        ));
        return;
    }
    let (kind, url) = classify(raw);
    match (kind, check_endpoint_url(raw)) {
        (UrlKind::Invalid(m), _) => return out.push(Finding::new(Rule::UrlInvalid, pointer, m)),
        // gRPC endpoints may use their own scheme.
        (UrlKind::Other(_), _) if iface.protocol_binding == AgentInterface::GRPC => {}
        (_, Err(m)) => out.push(Finding::new(Rule::UrlInsecure, pointer.clone(), m)),
        (UrlKind::Http { loopback: true } | UrlKind::Https { loopback: true }, Ok(())) => out.push(Finding::new(
            Rule::UrlLocalhost,
            pointer.clone(),
            format!("`{}` is a hard-coded loopback address that clients elsewhere cannot reach; take the public URL from the environment in production", short(raw)),
        )),
        _ => {}
    }
    if let Some(url) = url {
        let path = url.path().to_ascii_lowercase();
        if path.contains("/.well-known/")
            || path.ends_with("agent-card.json")
            || path.ends_with("/agent.json")
        {
            out.push(Finding::new(Rule::UrlIsCardPath, pointer, format!("`{}` points at the agent card; the URL must be the endpoint where requests go (e.g. {}://{}/a2a)", short(raw), url.scheme(), short(url.host_str().unwrap_or("agent.example.com")))));
        }
    }
}

fn capabilities(card: &AgentCard, paths: &Sources, out: &mut Vec<Finding>) {
    let c = &card.capabilities;
    for (name, value) in [
        ("streaming", c.streaming),
        ("pushNotifications", c.push_notifications),
    ] {
        if value.is_none() {
            out.push(Finding::new(Rule::CapabilityUndeclared, format!("/capabilities/{name}"), format!("`capabilities.{name}` is not declared; set it to true or false so clients need not guess (only true if the agent really supports it)")));
        }
    }
    if c.extended_agent_card == Some(true) && card.security_schemes.is_empty() {
        out.push(Finding::new(Rule::ExtendedCardWithoutAuth, paths.extended_card.clone(), "an extended card is served to authenticated callers, but the card declares no security scheme; declare how callers authenticate or drop the claim"));
    }
    for (i, ext) in c.extensions.iter().enumerate() {
        if is_blank(&ext.uri) {
            out.push(Finding::new(
                Rule::ExtensionUriMissing,
                pointer_push(&paths.extension(i), "uri"),
                "the extension has no `uri`; set the URI that identifies it",
            ));
        }
    }
}

fn check_modes(modes: &[String], pointer: &str, out: &mut Vec<Finding>) {
    for (i, mode) in modes.iter().enumerate() {
        if let Some(media_type) = shorthand(mode) {
            out.push(Finding::new(
                Rule::ModeShorthand,
                format!("{pointer}/{i}"),
                format!("`{}` is a 0.2-era shorthand, not a media type; clients that match media types will not recognise it: use `{media_type}`", mode.trim()),
            ));
        } else if let Err(e) = MediaType::parse(mode) {
            out.push(Finding::new(
                Rule::ModeInvalid,
                format!("{pointer}/{i}"),
                format!(
                    "`{}` is not a media type: {}{}",
                    short(mode),
                    short(&e.to_string()),
                    mode_hint(mode).map_or_else(String::new, |h| format!("; {}", h.render('`')))
                ),
            ));
        }
    }
}

fn modes(card: &AgentCard, paths: &Sources, out: &mut Vec<Finding>) {
    for (field, modes, verb) in [
        ("defaultInputModes", &card.default_input_modes, "takes"),
        ("defaultOutputModes", &card.default_output_modes, "produces"),
    ] {
        if modes.is_empty() {
            out.push(Finding::new(Rule::DefaultModesMissing, paths.modes(None, field == "defaultInputModes"), format!("`{field}` is empty; list the media types the agent {verb} by default, e.g. [\"text/plain\"]")));
        }
        check_modes(modes, &paths.modes(None, field == "defaultInputModes"), out);
    }
}

fn skills(card: &AgentCard, paths: &Sources, out: &mut Vec<Finding>) {
    if card.skills.is_empty() {
        out.push(Finding::new(
            Rule::SkillsEmpty,
            "/skills",
            "the card has no skills, so nobody can discover what it does; add at least one",
        ));
    }
    let mut first_seen: HashMap<&str, usize> = HashMap::new();
    let mut first_taker: Vec<(String, usize)> = Vec::new();
    for (i, skill) in card.skills.iter().enumerate() {
        let base = paths.skill_base(i);
        let at = |field: &str| pointer_push(&base, field);
        let id = skill.id.trim();
        if id.is_empty() {
            out.push(Finding::new(
                Rule::SkillIdMissing,
                at("id"),
                format!("the skill has no id; set a unique kebab-case id such as \"{KEBAB_CASE_EXAMPLE}\""),
            ));
        } else {
            if let Some(first) = first_seen.get(id) {
                out.push(Finding::new(
                    Rule::SkillIdDuplicate,
                    at("id"),
                    DUPLICATE_ID.render(&[&short(id), &base, &paths.skill_base(*first)]),
                ));
            } else {
                first_seen.insert(id, i);
            }
            if !is_kebab_case(id) {
                out.push(Finding::new(
                    Rule::SkillIdNotKebabCase,
                    at("id"),
                    NOT_KEBAB_CASE.render(&[&short(id), &short(&suggest_kebab_case(id))]),
                ));
            }
        }
        if is_blank(&skill.name) {
            out.push(Finding::new(
                Rule::SkillNameMissing,
                at("name"),
                "the skill has no name; set a human-readable name such as \"Code Review\"",
            ));
        }
        if is_blank(&skill.description) {
            out.push(Finding::new(
                Rule::SkillDescriptionMissing,
                at("description"),
                "the skill has no description; say what it takes and what it returns",
            ));
        } else if vague(&skill.description) {
            out.push(Finding::new(
                Rule::SkillDescriptionVague,
                at("description"),
                format!(
                    "\"{}\" is too vague to route on; say what the skill takes and returns",
                    short(skill.description.trim())
                ),
            ));
        }
        if skill.examples.is_empty() {
            out.push(Finding::new(Rule::SkillExamplesMissing, base.clone(), "the skill has no examples; add 2-3 sample prompts or payloads so clients and LLMs know what to send"));
        }
        if skill.tags.is_empty() {
            out.push(Finding::new(
                Rule::SkillTagsEmpty,
                at("tags"),
                "the skill has no tags; add a few lowercase keywords for discovery (A2A 1.0 requires at least one)",
            ));
        }
        for (t, tag) in skill.tags.iter().enumerate() {
            if tag.chars().any(char::is_uppercase) {
                out.push(Finding::new(
                    Rule::SkillTagNotLowercase,
                    format!("{}/{t}", at("tags")),
                    format!(
                        "tag `{}` is not lowercase; use `{}`",
                        short(tag),
                        short(&tag.to_lowercase())
                    ),
                ));
            }
        }
        check_modes(&skill.input_modes, &paths.modes(Some(i), true), out);
        check_modes(&skill.output_modes, &paths.modes(Some(i), false), out);
        let takes_schema = card
            .input_modes_of(skill)
            .iter()
            .any(|m| SchemaMode::parse(m).is_some());
        let takes_text = card
            .input_modes_of(skill)
            .iter()
            .any(|m| MediaType::parse(m).is_ok_and(|t| t.essence() == "text/plain"));
        if takes_schema && !takes_text {
            out.push(Finding::new(Rule::SchemaTextFallback, at("inputModes"), "the skill takes structured input only; also accept `text/plain` so clients that cannot fill the schema can still talk to it"));
        }
        // Each schema to the first skill that lists it among its own input modes.
        let modes = paths.modes(Some(i), true);
        for (m, mode) in skill.input_modes.iter().enumerate() {
            let Some(name) = SchemaMode::parse(mode) else {
                continue;
            };
            match first_taker.iter().find(|(n, _)| *n == name.name()) {
                Some((_, first)) => out.push(Finding::new(
                    Rule::SchemaInputShared,
                    format!("{modes}/{m}"),
                    SHARED_INPUT_SCHEMA.render(&[
                        &paths.skill_base(*first),
                        &base,
                        &short(name.name()),
                    ]),
                )),
                None => first_taker.push((name.name().to_owned(), i)),
            }
        }
        examples(card, skill, &at("examples"), out);
        requirements(card, &skill.security_requirements, Some(i), paths, out);
    }
}

/// The examples of a skill that takes named schemas, in a card that carries the extension and
/// declares them: an example that is JSON data (an object or an array) follows one of them.
/// Text examples, and schemas that do not compile (`schema-invalid` says so), are left alone.
fn examples(card: &AgentCard, skill: &AgentSkill, pointer: &str, out: &mut Vec<Finding>) {
    if card
        .capabilities
        .extension(IO_SCHEMAS_EXTENSION_URI)
        .is_none()
    {
        return;
    }
    let schemas: Vec<(String, jsonschema::Validator)> = card
        .input_modes_of(skill)
        .iter()
        .filter_map(|m| SchemaMode::parse(m))
        .filter_map(|m| {
            let schema = card.schemas.get(m.name())?;
            let validator = jsonschema::draft202012::new(schema).ok()?;
            Some((m.name().to_owned(), validator))
        })
        .collect();
    if schemas.is_empty() {
        return;
    }
    for (k, example) in skill.examples.iter().enumerate() {
        let Some(data) = json_data(example) else {
            continue;
        };
        if schemas.iter().any(|(_, v)| v.is_valid(&data)) {
            continue;
        }
        let why = schemas[0]
            .1
            .iter_errors(&data)
            .next()
            .map_or_else(String::new, |e| {
                let at = e.instance_path().to_string();
                let at = if at.is_empty() {
                    "(root)".to_owned()
                } else {
                    at
                };
                format!(" ({}: {})", short(&at), short(&e.to_string()))
            });
        let names: Vec<String> = schemas
            .iter()
            .map(|(n, _)| format!("`{}`", short(n)))
            .collect();
        out.push(Finding::new(
            Rule::SkillExampleInvalid,
            format!("{pointer}/{k}"),
            format!(
                "example `{}` is JSON data but does not follow the skill's input schema {}{why}; callers and models copy examples, so make it follow the schema",
                short(example.trim()),
                names.join(" or "),
            ),
        ));
    }
}

/// An example that is JSON data: an object or an array that parses.
fn json_data(example: &str) -> Option<Value> {
    let text = example.trim();
    if !(text.starts_with('{') || text.starts_with('[')) {
        return None;
    }
    serde_json::from_str(text).ok()
}

fn schemas(card: &AgentCard, paths: &Sources, out: &mut Vec<Finding>) {
    let mut used: Vec<(String, String)> = Vec::new(); // (name, pointer)
    let mut collect = |modes: &[String], pointer: String| {
        for (i, mode) in modes.iter().enumerate() {
            if let Some(m) = SchemaMode::parse(mode) {
                used.push((m.name().to_owned(), format!("{pointer}/{i}")));
            }
        }
    };
    collect(&card.default_input_modes, paths.modes(None, true));
    collect(&card.default_output_modes, paths.modes(None, false));
    for (i, s) in card.skills.iter().enumerate() {
        collect(&s.input_modes, paths.modes(Some(i), true));
        collect(&s.output_modes, paths.modes(Some(i), false));
    }
    for (name, pointer) in &used {
        if !card.schemas.contains_key(name) {
            let declared: Vec<_> = card.schemas.keys().map(|k| short(k)).collect();
            let known = if declared.is_empty() {
                "the card declares no `schemas`".to_owned()
            } else {
                format!("declared: {}", declared.join(", "))
            };
            out.push(Finding::new(Rule::SchemaUndeclared, pointer.clone(), format!("mode names schema `{}`, which is not declared ({known}); add it to the card's `schemas` or fix the name", short(name))));
        }
    }
    let uses_extension = !used.is_empty() || !card.schemas.is_empty();
    if uses_extension
        && card
            .capabilities
            .extension(IO_SCHEMAS_EXTENSION_URI)
            .is_none()
    {
        out.push(Finding::new(Rule::SchemaExtensionMissing, "/capabilities/extensions", format!("the card uses named schemas but does not declare the input/output schemas extension; add {{\"uri\": \"{IO_SCHEMAS_EXTENSION_URI}\"}} to `capabilities.extensions`")));
    }
    for (name, schema) in &card.schemas {
        let pointer = paths.schema(name);
        if let Err(m) = check_schema_name(name) {
            out.push(Finding::new(Rule::SchemaNameInvalid, pointer.clone(), m));
        }
        if let Some(problem) = schema_problem(schema) {
            out.push(Finding::new(
                Rule::SchemaInvalid,
                pointer.clone(),
                format!("schema `{}` {problem}", short(name)),
            ));
        }
        if !used.iter().any(|(n, _)| n == name) {
            out.push(Finding::new(Rule::SchemaUnused, pointer, format!("schema `{}` is used by no mode; reference it as `{}` in a skill's modes, or remove it", short(name), short(&SchemaMode::new(name.clone()).map(|m| m.to_string()).unwrap_or_default()))));
        }
    }
}

/// Why a named schema is not a valid, self-contained draft 2020-12 schema.
pub(crate) fn schema_problem(schema: &Value) -> Option<String> {
    if !schema.is_object() && !schema.is_boolean() {
        return Some("must be a JSON object (or a boolean schema)".to_owned());
    }
    if let Some(dialect) = schema.get("$schema") {
        let ok = dialect
            .as_str()
            .is_some_and(|d| d.trim_end_matches('#') == JSON_SCHEMA_DRAFT_2020_12);
        if !ok {
            return Some(format!(
                "declares `$schema: {}`; named schemas are JSON Schema draft 2020-12 (`{JSON_SCHEMA_DRAFT_2020_12}`)",
                short(&dialect.to_string())
            ));
        }
    }
    if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
        let at = e.instance_path().to_string();
        let at = if at.is_empty() {
            String::new()
        } else {
            format!(" at {at}")
        };
        return Some(format!(
            "is not a valid draft 2020-12 schema{}: {}",
            short(&at),
            short(&e.to_string())
        ));
    }
    if let Err(e) = jsonschema::draft202012::new(schema) {
        return Some(format!(
            "cannot be compiled (a schema must be self-contained, with its own `$defs`): {}",
            short(&e.to_string())
        ));
    }
    None
}

/// Unknown fields anywhere in the card, where the document has them. `closed`: the document is
/// judged by a schema that allows no other member in the card's objects (A2A 1.0), so each is
/// an error.
pub(super) fn unknown_fields(card: &AgentCard, paths: &Sources, closed: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut report = |base: String, extra: &Extra| {
        for key in extra.keys() {
            let pointer = pointer_push(&base, key);
            let finding = if closed {
                let mut finding = Finding::new(
                    Rule::UnknownField,
                    pointer,
                    format!(
                        "`{}` is not a member of this object in A2A 1.0, whose schema allows no other member here: the official schema rejects the card, so remove it or check its spelling (`--lenient` makes this a warning)",
                        short(key)
                    ),
                );
                finding.severity = Severity::Error;
                finding
            } else {
                Finding::new(
                    Rule::UnknownField,
                    pointer,
                    format!(
                        "`{}` is not an Agent Card field of A2A 0.3 or 1.0; strict clients reject unknown fields, so remove it or check its spelling",
                        short(key)
                    ),
                )
            };
            out.push(finding);
        }
    };
    report(String::new(), &card.extra);
    if let Some(p) = &card.provider {
        report("/provider".into(), &p.extra);
    }
    for (i, iface) in card.interfaces.iter().enumerate() {
        let repetition = if i == 0 {
            paths.main_repetition.clone()
        } else {
            None
        };
        if let Some(base) = paths.interface_base(i).or(repetition) {
            report(base, &iface.extra);
        }
    }
    report("/capabilities".into(), &card.capabilities.extra);
    for (i, e) in card.capabilities.extensions.iter().enumerate() {
        report(paths.extension(i), &e.extra);
    }
    for (i, s) in card.skills.iter().enumerate() {
        report(paths.skill_base(i), &s.extra);
    }
    for (name, scheme) in &card.security_schemes {
        let extra = match scheme {
            SecurityScheme::ApiKey(s) => &s.extra,
            SecurityScheme::Http(s) => &s.extra,
            SecurityScheme::OAuth2(s) => &s.extra,
            SecurityScheme::OpenIdConnect(s) => &s.extra,
            SecurityScheme::MutualTls(s) => &s.extra,
        };
        report(paths.scheme_base(name), extra);
        if let SecurityScheme::OAuth2(o) = scheme {
            report(paths.scheme(name, "flows"), &o.flows.extra);
            for flow in o.flows.iter() {
                report(paths.flow_base(name, flow.kind.wire_name()), &flow.extra);
            }
        }
    }
    for (i, s) in card.signatures.iter().enumerate() {
        report(paths.signature(i), &s.extra);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_problems_are_named() {
        assert!(schema_problem(&serde_json::json!({"type": "object"})).is_none());
        assert!(
            schema_problem(&serde_json::json!({"type": 12}))
                .unwrap()
                .contains("not a valid")
        );
        assert!(
            schema_problem(&serde_json::json!({"$ref": "https://elsewhere.example.com/s.json"}))
                .unwrap()
                .contains("self-contained")
        );
        assert!(
            schema_problem(
                &serde_json::json!({"$schema": "http://json-schema.org/draft-07/schema#"})
            )
            .unwrap()
            .contains("2020-12")
        );
        assert!(schema_problem(&serde_json::json!("x")).is_some());
    }
}
