//! `a2a-card inspect` and `a2a-card call`: a running agent from the command line, through
//! [`a2a_card::client`].

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use a2a_card::client::{
    ClientError, Connect, Content, Event, Output, Payload, RemoteAgent, RemoteSkill, TaskOutcome,
};
use a2a_card::lint::{Finding, Severity};
use a2a_card::sign::{self, Algorithm, Jwks};
use a2a_card::wire::Profile;
use a2a_card::{AgentCard, SecurityScheme};
use clap::Args;
use futures::StreamExt;
use serde_json::{Value, json};

use super::{AlgArg, Failure, Format, finish_output, read_text, sanitize};

/// Credentials and trust, shared by `inspect` and `call`.
#[derive(Args)]
pub struct Access {
    /// A header to send on every request, as `Name: value` (repeatable).
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// A bearer token, sent as `Authorization: Bearer TOKEN` (default: $A2A_TOKEN when set,
    /// which keeps the token out of the process list).
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// Trusted keys (a JWKS document or one JWK) to verify the card's signature with.
    #[arg(long, value_name = "FILE")]
    jwks: Option<PathBuf>,
    /// The signature algorithms to accept.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [AlgArg::EdDSA, AlgArg::ES256])]
    alg: Vec<AlgArg>,
    /// PEM certificates to trust beside the system's roots, for an https agent whose
    /// certificate a private CA signed (repeatable).
    #[arg(long = "ca-cert", value_name = "FILE")]
    ca_certs: Vec<PathBuf>,
    /// The protocol binding to call the agent over, among those its card offers (default:
    /// JSON-RPC, else HTTP+JSON, else gRPC).
    #[arg(long, value_enum)]
    binding: Option<Binding>,
    /// An extension to ask for, by its URI (repeatable): sent in the `A2A-Extensions` header,
    /// as an agent that requires one expects.
    #[arg(long = "extension", value_name = "URI")]
    extensions: Vec<String>,
}

/// A protocol binding, as `--binding` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Binding {
    /// JSON-RPC.
    Jsonrpc,
    /// HTTP+JSON.
    #[value(name = "http-json")]
    HttpJson,
    /// gRPC.
    Grpc,
}

impl Binding {
    /// The card's name for it.
    fn name(self) -> &'static str {
        match self {
            Binding::Jsonrpc => "JSONRPC",
            Binding::HttpJson => "HTTP+JSON",
            Binding::Grpc => "GRPC",
        }
    }
}

impl Access {
    fn connect(&self, url: &str) -> Result<Connect, Failure> {
        let mut connect = Connect::new(url);
        for header in &self.headers {
            let Some((name, value)) = header.split_once(':') else {
                return Err(Failure::from(format!(
                    "--header `{}`: write it as `Name: value`",
                    header.split(['=', ' ']).next().unwrap_or_default()
                )));
            };
            let name = name.trim();
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(Failure::from(format!(
                    "--header: `{name}` is not a header name"
                )));
            }
            connect = connect.header(name, value.trim());
        }
        let from_env = std::env::var("A2A_TOKEN")
            .ok()
            .filter(|t| !t.trim().is_empty());
        if let Some(token) = self.token.clone().or(from_env) {
            connect = connect.bearer_token(token.trim());
        }
        for path in &self.ca_certs {
            connect = connect.root_certificates_pem(read_text(path)?);
        }
        for uri in &self.extensions {
            if !a2a_card_rules::urls::is_absolute_uri(uri.trim()) {
                return Err(Failure::from(format!(
                    "--extension `{uri}`: an extension is named by its URI, e.g. https://example.com/ext/v1"
                )));
            }
            connect = connect.extension(uri.trim());
        }
        connect = connect.prefer_bindings(match self.binding {
            Some(binding) => vec![binding.name()],
            None => vec!["JSONRPC", "HTTP+JSON", "GRPC"],
        });
        Ok(connect)
    }

    /// Whether `card` offers the binding `--binding` asks for (when it asks).
    fn offered(&self, card: &a2a_card::AgentCard) -> Result<(), Failure> {
        let Some(binding) = self.binding else {
            return Ok(());
        };
        if card
            .interfaces
            .iter()
            .any(|i| i.protocol_binding.eq_ignore_ascii_case(binding.name()))
        {
            return Ok(());
        }
        let offered: Vec<&str> = card
            .interfaces
            .iter()
            .map(|i| i.protocol_binding.as_str())
            .collect();
        Err(Failure::from(format!(
            "--binding {}: the card offers no {} interface (it lists {})",
            binding.name().to_lowercase(),
            binding.name(),
            offered.join(", ")
        )))
    }

    fn keys(&self) -> Result<Option<(Jwks, Vec<Algorithm>)>, Failure> {
        let Some(path) = &self.jwks else {
            return Ok(None);
        };
        let jwks = Jwks::from_text(&read_text(path)?)
            .map_err(|e| Failure::from(format!("{}: {e}", path.display())))?;
        Ok(Some((jwks, self.alg.iter().map(|&a| a.into()).collect())))
    }
}

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

#[derive(Args)]
pub struct CallArgs {
    /// The agent's base URL, its card's URL, or an AI Catalog's URL (its first agent).
    #[arg(value_name = "URL")]
    url: String,
    /// The id of the skill to call.
    #[arg(long, value_name = "ID")]
    skill: String,
    /// The structured input: JSON, or `@FILE` to read it from a file (`@-`: standard input).
    #[arg(
        long,
        value_name = "JSON|@FILE",
        conflicts_with = "text",
        required_unless_present = "text"
    )]
    data: Option<String>,
    /// Text input, for a skill that takes `text/plain`.
    #[arg(long, value_name = "TEXT")]
    text: Option<String>,
    /// Follow the task: print progress and each output chunk as it arrives.
    #[arg(long, conflicts_with = "no_wait")]
    stream: bool,
    /// Do not wait: print the task's id and exit.
    #[arg(long)]
    no_wait: bool,
    /// An answer to a question the task asks (repeatable, used in order). Without one, a
    /// question is asked on the terminal, or ends the call (exit 1) when input is not a terminal.
    #[arg(long, value_name = "TEXT")]
    answer: Vec<String>,
    /// The message's id: a call made again with the id an earlier one printed reaches the task
    /// that one made, where the agent makes sends idempotent (its card declares the
    /// idempotency extension), rather than running the skill again. Default: a new id.
    #[arg(long, value_name = "ID")]
    message_id: Option<String>,
    /// How to print the result: human (outputs pretty-printed) or json (the task, or one event
    /// per line with --stream).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    #[command(flatten)]
    access: Access,
}

/// Runs `fut` on a runtime of its own (the command does nothing else).
fn block_on<F: std::future::Future>(fut: F) -> Result<F::Output, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map(|rt| rt.block_on(fut))
        .map_err(|e| Failure::from(format!("cannot start: {e}")))
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
        Format::Json => super::write_json(&mut out, &summary),
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

/// Reads `--data`: inline JSON, `@FILE` or `@-`.
fn read_data(data: &str) -> Result<Value, Failure> {
    let (origin, text) = match data.strip_prefix('@') {
        Some("-") => {
            let mut text = String::new();
            io::Read::read_to_string(&mut io::stdin().lock(), &mut text)
                .map_err(|e| Failure::from(format!("--data @-: cannot read: {e}")))?;
            ("<stdin>".to_owned(), text)
        }
        Some(path) => {
            let path = PathBuf::from(path);
            (path.display().to_string(), read_text(&path)?)
        }
        None => ("--data".to_owned(), data.to_owned()),
    };
    serde_json::from_str(&text).map_err(|e| {
        Failure::from(format!(
            "{origin}: not JSON: {e} (at line {}, column {})",
            e.line(),
            e.column()
        ))
    })
}

/// How progress is shown: a line rewritten in place on a terminal, plain lines otherwise.
struct Progress {
    live: bool,
    shown: bool,
    tick: usize,
}

impl Progress {
    fn new() -> Progress {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Progress {
            live: io::stderr().is_terminal() && !no_color,
            shown: false,
            tick: 0,
        }
    }

    fn say(&mut self, text: &str) {
        let mut err = io::stderr().lock();
        let text = sanitize(text);
        if self.live {
            const FRAMES: [char; 4] = ['|', '/', '-', '\\'];
            self.tick += 1;
            let _ = write!(err, "\r\x1b[2K{} {text}", FRAMES[self.tick % FRAMES.len()]);
            self.shown = true;
        } else {
            let _ = writeln!(err, "progress: {text}");
        }
        let _ = err.flush();
    }

    fn clear(&mut self) {
        if self.shown {
            let _ = write!(io::stderr().lock(), "\r\x1b[2K");
            self.shown = false;
        }
    }
}

/// A refusal the caller can fix (bad input, unknown skill, credentials) or a task that failed.
fn call_failure(e: &ClientError) -> ExitCode {
    let usage = match e {
        // Malformed or invalid input, content the agent does not take, missing or insufficient
        // credentials (the codes of the official Go SDK, which this crate's server uses too).
        ClientError::Rejected { code, reason, .. } => {
            matches!(
                *code,
                -32700 | -32600 | -32601 | -32602 | -32005 | -31401 | -31403
            ) || matches!(
                reason.as_deref(),
                Some(
                    "UNAUTHENTICATED"
                        | "PERMISSION_DENIED"
                        | "INVALID_PARAMS"
                        | "INVALID_REQUEST"
                        | "CONTENT_TYPE_NOT_SUPPORTED"
                )
            )
        }
        other => other.is_usage(),
    };
    let _ = writeln!(
        io::stderr().lock(),
        "a2a-card: {}",
        sanitize(&e.to_string())
    );
    ExitCode::from(if usage { 2 } else { 1 })
}

pub fn run_call(args: &CallArgs) -> Result<ExitCode, Failure> {
    let payload = match (&args.data, &args.text) {
        (Some(data), _) => Payload::data(read_data(data)?),
        (None, Some(text)) => Payload::text(text.clone()),
        (None, None) => return Err(Failure::from("give --data or --text".to_owned())),
    };
    let mut connect = args.access.connect(&args.url)?;
    if let Some((jwks, allowed)) = args.access.keys()? {
        connect = connect.verify_signature(jwks, &allowed);
    }
    block_on(call(args, connect, payload))
}

async fn call(args: &CallArgs, connect: Connect, payload: Payload) -> ExitCode {
    let agent = match connect.discover().await {
        Ok(a) => a,
        Err(e) => return call_failure(&e),
    };
    if let Err(Failure(lines)) = args.access.offered(agent.card()) {
        for line in lines {
            eprintln!("a2a-card: {}", sanitize(&line));
        }
        return ExitCode::from(2);
    }
    // Checked before anything is sent: errors name the field.
    let mut message = match agent.message(&args.skill, payload) {
        Ok(m) => m,
        Err(e) => return call_failure(&e),
    };
    if let Some(id) = &args.message_id {
        message.message_id.clone_from(id);
    }
    // Where the agent makes sends idempotent, the message's id is the call's key: shown, so
    // that a call whose answer was lost can be made again safely.
    if agent.idempotent_sends() {
        let _ = writeln!(
            io::stderr().lock(),
            "idempotency key: {} (to retry safely: --message-id {})",
            sanitize(&message.message_id),
            sanitize(&message.message_id)
        );
    }
    let mut answers = args.answer.iter();
    if args.no_wait {
        return match agent.send_message(message, true).await {
            Ok(outcome) => {
                let id = outcome.task_id().unwrap_or_default().to_owned();
                let written = match args.format {
                    Format::Json => super::write_json(
                        &mut io::stdout().lock(),
                        &json!({"taskId": id, "state": outcome.state().map(state_str)}),
                    ),
                    Format::Human => writeln!(io::stdout().lock(), "{}", sanitize(&id)),
                };
                exit_after(written, ExitCode::SUCCESS)
            }
            Err(e) => call_failure(&e),
        };
    }
    if args.stream {
        return stream(args, &agent, message, &mut answers).await;
    }
    let mut outcome = match agent.send_message(message, false).await {
        Ok(o) => o,
        Err(e) => return call_failure(&e),
    };
    // Questions: answered from --answer, else on the terminal.
    while let Some(state) = outcome.state().filter(is_question) {
        let question = outcome.status_text().unwrap_or_default();
        let Some(answer) = next_answer(&mut answers, &question, &state) else {
            return call_failure(&ClientError::InputRequired {
                task_id: outcome.task_id().unwrap_or_default().to_owned(),
                question: format!("{question} (answer with --answer TEXT)"),
                auth: state == a2a::TaskState::AuthRequired,
            });
        };
        let mut reply = a2a::Message::new(a2a::Role::User, vec![a2a::Part::text(answer)]);
        reply.task_id = outcome.task_id().map(str::to_owned);
        reply.context_id = outcome.task().map(|t| t.context_id.clone());
        outcome = match agent.send_message(reply, false).await {
            Ok(o) => o,
            Err(e) => return call_failure(&e),
        };
    }
    let written = match args.format {
        Format::Json => super::write_json(
            &mut io::stdout().lock(),
            &serde_json::to_value(outcome.response()).unwrap_or(Value::Null),
        ),
        Format::Human => print_outputs(&outcome),
    };
    let code = match outcome.clone().into_result() {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => call_failure(&e),
    };
    exit_after(written, code)
}

fn is_question(state: &a2a::TaskState) -> bool {
    matches!(
        state,
        a2a::TaskState::InputRequired | a2a::TaskState::AuthRequired
    )
}

fn state_str(state: a2a::TaskState) -> String {
    serde_json::to_value(&state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The next answer: from `--answer`, else asked on the terminal (when standard input is one).
fn next_answer<'a>(
    answers: &mut impl Iterator<Item = &'a String>,
    question: &str,
    state: &a2a::TaskState,
) -> Option<String> {
    if let Some(a) = answers.next() {
        let _ = writeln!(
            io::stderr().lock(),
            "question: {} -> answered `{}`",
            sanitize(question),
            sanitize(a)
        );
        return Some(a.clone());
    }
    if *state == a2a::TaskState::AuthRequired || !io::stdin().is_terminal() {
        return None;
    }
    let _ = write!(io::stderr().lock(), "{} > ", sanitize(question));
    let _ = io::stderr().flush();
    let mut line = String::new();
    io::stdin().lock().read_line(&mut line).ok()?;
    let line = line.trim_end_matches(['\r', '\n']).to_owned();
    (!line.is_empty()).then_some(line)
}

fn exit_after(written: io::Result<()>, code: ExitCode) -> ExitCode {
    match finish_output(written) {
        Ok(()) => code,
        Err(Failure(lines)) => {
            for l in lines {
                let _ = writeln!(io::stderr().lock(), "a2a-card: {}", sanitize(&l));
            }
            ExitCode::from(2)
        }
    }
}

fn print_outputs(outcome: &TaskOutcome) -> io::Result<()> {
    let mut out = io::stdout().lock();
    for o in outcome.outputs() {
        write_output(&mut out, &o, true)?;
    }
    if let (Some(state), Some(text)) = (outcome.state(), outcome.status_text())
        && state != a2a::TaskState::Completed
    {
        let _ = writeln!(io::stderr().lock(), "status: {}", sanitize(&text));
    }
    out.flush()
}

fn write_output(out: &mut impl Write, o: &Output, pretty: bool) -> io::Result<()> {
    write_content(out, &o.content, pretty)
}

fn write_content(out: &mut impl Write, content: &Content, pretty: bool) -> io::Result<()> {
    match content {
        Content::Text(t) => writeln!(out, "{}", sanitize(t)),
        Content::Data { value, .. } => {
            let text = if pretty {
                serde_json::to_string_pretty(value)
            } else {
                serde_json::to_string(value)
            };
            writeln!(out, "{}", text.unwrap_or_default())
        }
        Content::File {
            name,
            media_type,
            bytes,
            url,
        } => writeln!(
            out,
            "file {} ({}, {})",
            sanitize(name.as_deref().unwrap_or("(unnamed)")),
            sanitize(media_type.as_deref().unwrap_or("no media type")),
            match (bytes, url) {
                (Some(b), _) => format!("{} bytes", b.len()),
                (None, Some(u)) => format!("at {}", sanitize(u)),
                _ => "empty".to_owned(),
            }
        ),
        _ => Ok(()),
    }
}

fn event_json(event: &Event) -> Value {
    match event {
        Event::Status { state, text } => {
            json!({"event": "status", "state": state_str(state.clone()), "text": text})
        }
        Event::Output(o) => {
            let mut v = json!({"event": "output", "artifactId": o.artifact_id, "artifactName": o.artifact_name});
            match &o.content {
                Content::Text(t) => v["text"] = json!(t),
                Content::Data { schema, value } => {
                    v["schema"] = json!(schema);
                    v["data"] = value.clone();
                }
                Content::File {
                    name,
                    media_type,
                    url,
                    ..
                } => v["file"] = json!({"name": name, "mediaType": media_type, "url": url}),
                _ => {}
            }
            v
        }
        Event::Message(m) => {
            json!({"event": "message", "message": serde_json::to_value(m).unwrap_or(Value::Null)})
        }
        Event::Question { text, auth } => json!({"event": "question", "text": text, "auth": auth}),
        Event::Finished { state, text } => {
            json!({"event": "finished", "state": state_str(state.clone()), "text": text})
        }
        _ => json!({"event": "other"}),
    }
}

async fn stream<'a>(
    args: &CallArgs,
    agent: &RemoteAgent,
    message: a2a::Message,
    answers: &mut impl Iterator<Item = &'a String>,
) -> ExitCode {
    let mut run = match agent.stream_message(message).await {
        Ok(r) => r,
        Err(e) => return call_failure(&e),
    };
    let mut progress = Progress::new();
    let mut finished: Option<(a2a::TaskState, Option<String>)> = None;
    loop {
        let Some(event) = run.next().await else {
            break;
        };
        let event = match event {
            Ok(e) => e,
            Err(e) => {
                progress.clear();
                return call_failure(&e);
            }
        };
        let mut out = io::stdout().lock();
        let written = if let Format::Json = args.format {
            serde_json::to_writer(&mut out, &event_json(&event))
                .map_err(io::Error::from)
                .and_then(|()| writeln!(out))
                .and_then(|()| out.flush())
        } else {
            match &event {
                Event::Status { text: Some(t), .. } => {
                    progress.say(t);
                    Ok(())
                }
                Event::Output(o) => {
                    progress.clear();
                    write_output(&mut out, o, false).and_then(|()| out.flush())
                }
                Event::Message(m) => {
                    progress.clear();
                    m.parts
                        .iter()
                        .try_for_each(|p| write_content(&mut out, &Content::of_part(p), false))
                }
                _ => Ok(()),
            }
        };
        drop(out);
        if written.is_err() {
            progress.clear();
            return exit_after(written, ExitCode::from(2));
        }
        match event {
            Event::Question { text, auth } => {
                progress.clear();
                let state = if auth {
                    a2a::TaskState::AuthRequired
                } else {
                    a2a::TaskState::InputRequired
                };
                let Some(answer) = next_answer(answers, &text, &state) else {
                    return call_failure(&ClientError::InputRequired {
                        task_id: run.task_id().unwrap_or_default().to_owned(),
                        question: format!("{text} (answer with --answer TEXT)"),
                        auth,
                    });
                };
                if let Err(e) = run.answer(&answer).await {
                    return call_failure(&e);
                }
            }
            Event::Finished { state, text } => finished = Some((state, text)),
            _ => {}
        }
    }
    progress.clear();
    match finished {
        Some((a2a::TaskState::Completed, _)) | None => ExitCode::SUCCESS,
        Some((state, text)) => call_failure(&ClientError::TaskFailed {
            task_id: run.task_id().unwrap_or_default().to_owned(),
            state,
            message: text,
        }),
    }
}
