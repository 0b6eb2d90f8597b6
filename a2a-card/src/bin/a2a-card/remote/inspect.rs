//! `a2a-card inspect`: a summary of a running agent (its card, interfaces, capabilities,
//! security, signature, lint findings, and each skill with an outline of its input schema),
//! for a person or as JSON.

use std::io::{self, Write};
use std::process::ExitCode;

use a2a_card::client::{RemoteAgent, RemoteSkill};
use a2a_card::lint::{Finding, Severity};
use a2a_card::sign;
use a2a_card::wire::Profile;
use a2a_card::{AgentCard, SecurityScheme};
use clap::Args;
use serde_json::{Value, json};

use super::{Access, block_on};
use crate::{Failure, Format, finish_output, sanitize};

#[derive(Args)]
pub struct InspectArgs {
    /// The agent's base URL (its card is at URL/.well-known/agent-card.json), its card's URL,
    /// or an AI Catalog's URL (its first agent).
    #[arg(value_name = "URL")]
    url: String,
    /// How to print the summary.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    #[command(flatten)]
    access: Access,
}

pub fn run_inspect(args: &InspectArgs) -> Result<ExitCode, Failure> {
    let connect = args.access.connect(&args.url)?;
    let keys = args.access.keys()?;
    let agent = block_on(connect.discover())?.map_err(|e| Failure::from(e.to_string()))?;
    let signature = match (&keys, agent.card().signatures.len()) {
        (_, 0) => json!({"status": "unsigned"}),
        (None, n) => json!({"status": "not-checked", "signatures": n}),
        (Some((jwks, allowed)), _) => match sign::verify(agent.card(), jwks, allowed) {
            Ok(v) => {
                json!({"status": "verified", "index": v.index, "alg": v.algorithm.as_str(), "kid": v.kid})
            }
            Err(e) => json!({"status": "rejected", "reason": e.to_string()}),
        },
    };
    let summary = summary(&agent, signature);
    let mut out = io::stdout().lock();
    let written = match args.format {
        Format::Json => crate::write_json(&mut out, &summary),
        Format::Human => write_summary(&mut out, &agent, &summary),
    };
    finish_output(written)?;
    Ok(ExitCode::SUCCESS)
}

fn summary(agent: &RemoteAgent, signature: Value) -> Value {
    let card = agent.card();
    let count = |s| agent.findings().iter().filter(|f| f.severity == s).count();
    json!({
        "cardUrl": agent.card_url(),
        "profile": Profile::detect(agent.document()).as_str(),
        "name": card.name,
        "version": card.version,
        "description": card.description,
        "provider": card.provider.as_ref().map(|p| json!({"organization": p.organization, "url": p.url})),
        "interfaces": card.interfaces.iter().map(|i| json!({
            "url": i.url,
            "protocolBinding": i.protocol_binding,
            "protocolVersion": i.protocol_version,
        })).collect::<Vec<_>>(),
        "capabilities": {
            "streaming": card.capabilities.streaming,
            "pushNotifications": card.capabilities.push_notifications,
            "extendedAgentCard": card.capabilities.extended_agent_card,
            "extensions": card.capabilities.extensions.iter().map(|e| e.uri.clone()).collect::<Vec<_>>(),
        },
        "security": {
            "schemes": card.security_schemes.iter().map(|(name, s)| (name.clone(), json!(scheme_kind(s)))).collect::<serde_json::Map<_, _>>(),
            "requirements": card.security_requirements.iter().map(|r| json!(r.schemes)).collect::<Vec<_>>(),
        },
        "signature": signature,
        "lint": {
            "errors": count(Severity::Error),
            "warnings": count(Severity::Warning),
            "findings": agent.findings().iter().map(Finding::to_json).collect::<Vec<_>>(),
        },
        "skills": agent.skills().map(|s| skill_json(card, &s)).collect::<Vec<_>>(),
    })
}

fn scheme_kind(s: &SecurityScheme) -> String {
    match s {
        SecurityScheme::ApiKey(k) => format!("API key in {} `{}`", k.location, k.name),
        SecurityScheme::Http(h) => match &h.bearer_format {
            Some(f) => format!("HTTP {} ({f})", h.scheme),
            None => format!("HTTP {}", h.scheme),
        },
        SecurityScheme::OAuth2(_) => "OAuth 2.0".to_owned(),
        SecurityScheme::OpenIdConnect(o) => format!("OpenID Connect ({})", o.open_id_connect_url),
        SecurityScheme::MutualTls(_) => "mutual TLS".to_owned(),
        _ => "other".to_owned(),
    }
}

fn skill_json(card: &AgentCard, s: &RemoteSkill<'_>) -> Value {
    let d = s.declaration();
    let schema = |name: Option<String>| {
        name.map(|n| {
            let schema = card.schemas.get(&n).cloned();
            let outline = schema.as_ref().map(|v| outline(v, v, 0));
            json!({"name": n, "schema": schema, "fields": outline})
        })
    };
    json!({
        "id": d.id,
        "name": d.name,
        "description": d.description,
        "tags": d.tags,
        "examples": d.examples,
        "inputModes": s.input_modes(),
        "outputModes": s.output_modes(),
        "inputSchema": schema(s.input_schema_name()),
        "outputSchema": schema(s.output_schema_name()),
    })
}

/// How deep the outline of a schema goes.
const OUTLINE_DEPTH: usize = 4;

/// The fields of an object schema: name, type, required, description, nested fields.
fn outline(root: &Value, schema: &Value, depth: usize) -> Vec<Value> {
    let schema = resolve(root, schema);
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    props
        .iter()
        .map(|(name, prop)| {
            let prop = resolve(root, prop);
            let mut field = json!({
                "name": name,
                "type": type_of(root, prop),
                "required": required.contains(&name.as_str()),
            });
            if let Some(d) = prop.get("description").and_then(Value::as_str) {
                field["description"] = json!(d);
            }
            if depth + 1 < OUTLINE_DEPTH {
                let inner = match prop.get("items") {
                    Some(items) => outline(root, items, depth + 1),
                    None => outline(root, prop, depth + 1),
                };
                if !inner.is_empty() {
                    field["fields"] = json!(inner);
                }
            }
            field
        })
        .collect()
}

/// A local `$ref` (`#/$defs/X`) followed, up to a few hops.
fn resolve<'a>(root: &'a Value, mut schema: &'a Value) -> &'a Value {
    for _ in 0..8 {
        let Some(r) = schema.get("$ref").and_then(Value::as_str) else {
            break;
        };
        match r.strip_prefix('#').and_then(|p| root.pointer(p)) {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}

/// A short type: `string`, `integer 1..14`, `one of "a", "b"`, `array of string`, `string or null`.
fn type_of(root: &Value, schema: &Value) -> String {
    let schema = resolve(root, schema);
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let listed: Vec<String> = values.iter().map(Value::to_string).collect();
        return format!("one of {}", listed.join(", "));
    }
    if let Some(c) = schema.get("const") {
        return format!("exactly {c}");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = schema.get(key).and_then(Value::as_array) {
            let listed: Vec<String> = alts.iter().map(|a| type_of(root, a)).collect();
            return listed.join(" or ");
        }
    }
    let base = match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ if schema.get("properties").is_some() => "object".to_owned(),
        _ => "any".to_owned(),
    };
    if base.starts_with("array")
        && let Some(items) = schema.get("items")
    {
        return format!("array of {}", type_of(root, items));
    }
    let (min, max) = (schema.get("minimum"), schema.get("maximum"));
    match (min, max) {
        (Some(a), Some(b)) => format!("{base} {a}..{b}"),
        (Some(a), None) => format!("{base} >= {a}"),
        (None, Some(b)) => format!("{base} <= {b}"),
        (None, None) => base,
    }
}

fn write_summary(out: &mut impl Write, agent: &RemoteAgent, s: &Value) -> io::Result<()> {
    let text = |v: &Value| sanitize(v.as_str().unwrap_or_default()).into_owned();
    writeln!(out, "{} {}", text(&s["name"]), text(&s["version"]))?;
    writeln!(out, "{}", text(&s["description"]))?;
    writeln!(
        out,
        "card:          {} (profile {})",
        text(&s["cardUrl"]),
        text(&s["profile"])
    )?;
    let interfaces: Vec<String> = s["interfaces"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| {
            format!(
                "{} {} at {}",
                text(&i["protocolBinding"]),
                i["protocolVersion"].as_str().unwrap_or("(no version)"),
                text(&i["url"])
            )
        })
        .collect();
    writeln!(out, "interfaces:    {}", or_none(&interfaces.join("; ")))?;
    let caps = &s["capabilities"];
    let flag = |v: &Value| match v.as_bool() {
        Some(true) => "yes",
        Some(false) => "no",
        None => "not said",
    };
    writeln!(
        out,
        "capabilities:  streaming {}, push notifications {}, extended card {}",
        flag(&caps["streaming"]),
        flag(&caps["pushNotifications"]),
        flag(&caps["extendedAgentCard"])
    )?;
    for e in caps["extensions"].as_array().into_iter().flatten() {
        writeln!(out, "extension:     {}", text(e))?;
    }
    let schemes: Vec<String> = s["security"]["schemes"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(n, k)| format!("{} ({})", sanitize(n), text(k)))
        .collect();
    writeln!(out, "security:      {}", or_none(&schemes.join(", ")))?;
    let sig = &s["signature"];
    let sig_line = match sig["status"].as_str() {
        Some("verified") => format!(
            "verified (signature #{}, {}, kid {})",
            sig["index"],
            text(&sig["alg"]),
            text(&sig["kid"])
        ),
        Some("rejected") => format!("REJECTED: {}", text(&sig["reason"])),
        Some("not-checked") => format!(
            "{} signature(s), not checked (pass --jwks to verify)",
            sig["signatures"]
        ),
        _ => "unsigned".to_owned(),
    };
    writeln!(out, "signature:     {sig_line}")?;
    writeln!(
        out,
        "lint:          {} error(s), {} warning(s)",
        s["lint"]["errors"], s["lint"]["warnings"]
    )?;
    for f in agent.findings() {
        writeln!(out, "  {}", sanitize(&f.to_string()))?;
    }
    writeln!(out, "skills:")?;
    for skill in s["skills"].as_array().into_iter().flatten() {
        writeln!(out)?;
        writeln!(out, "  {} ({})", text(&skill["id"]), text(&skill["name"]))?;
        for line in text(&skill["description"]).lines() {
            writeln!(out, "    {line}")?;
        }
        let modes = |v: &Value| -> String {
            v.as_array()
                .into_iter()
                .flatten()
                .map(&text)
                .collect::<Vec<_>>()
                .join(", ")
        };
        writeln!(out, "    in:  {}", modes(&skill["inputModes"]))?;
        writeln!(out, "    out: {}", modes(&skill["outputModes"]))?;
        for example in skill["examples"].as_array().into_iter().flatten() {
            writeln!(out, "    example: {}", text(example))?;
        }
        if let Some(schema) = skill["inputSchema"].as_object() {
            writeln!(
                out,
                "    input `{}`:",
                text(schema.get("name").unwrap_or(&Value::Null))
            )?;
            match schema.get("fields").and_then(Value::as_array) {
                Some(fields) if !fields.is_empty() => write_fields(out, fields, 3)?,
                _ if schema.get("schema").is_some_and(Value::is_null) => {
                    writeln!(out, "      (not published under the card's `schemas`)")?
                }
                _ => writeln!(out, "      (no named fields)")?,
            }
        }
    }
    out.flush()
}

fn write_fields(out: &mut impl Write, fields: &[Value], indent: usize) -> io::Result<()> {
    for f in fields {
        let pad = "  ".repeat(indent);
        let required = if f["required"].as_bool() == Some(true) {
            "required"
        } else {
            "optional"
        };
        write!(
            out,
            "{pad}{}: {}, {required}",
            sanitize(f["name"].as_str().unwrap_or_default()),
            sanitize(f["type"].as_str().unwrap_or_default())
        )?;
        match f["description"].as_str() {
            Some(d) => writeln!(out, " - {}", sanitize(d))?,
            None => writeln!(out)?,
        }
        if let Some(inner) = f["fields"].as_array() {
            write_fields(out, inner, indent + 1)?;
        }
    }
    Ok(())
}

fn or_none(s: &str) -> &str {
    if s.is_empty() { "none" } else { s }
}
