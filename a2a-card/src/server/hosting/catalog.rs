//! The AI Catalog (`/.well-known/ai-catalog.json`): the agents served on a listener, each as
//! an entry that points at its card, in the shape of the AI Catalog draft the A2A working
//! group prefers for discovery (A2A pull request 2240; the catalog's own draft at
//! ai-catalog.io): `specVersion`, `host`, and `entries` of `identifier`, `displayName`,
//! `type` (`application/a2a-agent-card+json`) and `url` (the card's), with the descriptive
//! `description`, `version`, `capabilities` (the skill ids) and `tags`.

use serde_json::{Value, json};

use crate::card::AgentCard;
use crate::server::interfaces::{AGENT_CARD_PATH, Endpoint};

/// The version of the AI Catalog draft the document follows.
const SPEC_VERSION: &str = "1.0";

/// The media type of an entry that is an A2A agent card.
pub(crate) const AGENT_CARD_TYPE: &str = "application/a2a-agent-card+json";

/// One agent of a catalog: its card as served, where it is, and the name of its place
/// (a host's namespace for the agent, else none).
pub(crate) struct Listed<'a> {
    pub(crate) card: &'a AgentCard,
    pub(crate) endpoint: &'a Endpoint,
    pub(crate) namespace: Option<&'a str>,
}

/// The catalog of `agents`, in the order given (a host lists its default agent first).
pub(crate) fn catalog(agents: &[Listed<'_>]) -> Value {
    let host = agents
        .first()
        .map(|a| authority(a.endpoint.origin()))
        .unwrap_or_default();
    let entries: Vec<Value> = agents.iter().map(|a| entry(a, host)).collect();
    json!({
        "specVersion": SPEC_VERSION,
        "host": {"displayName": host},
        "entries": entries,
    })
}

/// The entry of one agent: its card by URL. An agent whose card names a tenant (A2A 1.0
/// section 8.3.2) has that tenant in its identifier and in `metadata.tenant`.
fn entry(agent: &Listed<'_>, host: &str) -> Value {
    let card = agent.card;
    let name = match agent.namespace {
        Some(namespace) => namespace.to_owned(),
        None => slug(&card.name),
    };
    let tenant = agent.endpoint.tenant.as_deref();
    let identifier = match tenant {
        Some(tenant) => format!("urn:air:{host}:a2a:{name}:{tenant}"),
        None => format!("urn:air:{host}:a2a:{name}"),
    };
    let mut tags: Vec<&str> = Vec::new();
    for tag in card.skills.iter().flat_map(|s| s.tags.iter()) {
        if !tags.contains(&tag.as_str()) {
            tags.push(tag);
        }
    }
    let mut entry = json!({
        "identifier": identifier,
        "displayName": card.name,
        "type": AGENT_CARD_TYPE,
        "url": format!("{}{AGENT_CARD_PATH}", agent.endpoint.url.trim_end_matches('/')),
        "description": card.description,
        "version": card.version,
        "capabilities": card.skills.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        "tags": tags,
    });
    if let (Some(tenant), Some(map)) = (tenant, entry.as_object_mut()) {
        map.insert("metadata".into(), json!({"tenant": tenant}));
    }
    entry
}

/// The host (and port) of an origin (`http://127.0.0.1:8080` is `127.0.0.1:8080`).
fn authority(origin: &str) -> &str {
    origin.split_once("://").map_or(origin, |(_, rest)| rest)
}

/// `name` as an identifier segment: lowercase letters and digits, runs of anything else one
/// `-` (`agent` when nothing is left).
fn slug(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "agent".to_owned()
    } else {
        out.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_identifier_segments() {
        assert_eq!(slug("Trip Planner"), "trip-planner");
        assert_eq!(slug("  Fight -- Club 2 "), "fight-club-2");
        assert_eq!(slug("??"), "agent");
        assert_eq!(
            authority("https://agents.example.com"),
            "agents.example.com"
        );
    }
}
