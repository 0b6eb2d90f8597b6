//! An AI Catalog (`/.well-known/ai-catalog.json`, the agents a host serves): which of its
//! entries is the agent asked for, and where that entry's card is.

use a2a_card_rules::media::essence_is;
use serde_json::Value;

/// The media type of an AI Catalog entry that is an A2A agent card.
const AGENT_CARD_TYPE: &str = "application/a2a-agent-card+json";

/// Whether `document` is an AI Catalog (`{"entries": [...]}`, not a card).
pub(super) fn is_catalog(document: &Value) -> bool {
    document.as_object().is_some_and(|o| {
        o.get("entries").is_some_and(Value::is_array)
            && !o.contains_key("name")
            && !o.contains_key("supportedInterfaces")
    })
}

/// Where the card of a catalog entry is.
pub(super) enum Picked {
    /// At this URL (the entry's `url`).
    Url(String),
    /// In the entry (`data`).
    Inline(Value),
}

/// The agent card entry of `catalog` whose `identifier` or `displayName` is `wanted` (or the
/// first agent card entry); what is wrong otherwise.
pub(super) fn catalog_pick(catalog: &Value, wanted: Option<&str>) -> Result<Picked, String> {
    let cards: Vec<&Value> = catalog["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| {
            // An entry without a type is taken for a card; another type is not one.
            e.get("type")
                .or_else(|| e.get("mediaType"))
                .and_then(Value::as_str)
                .is_none_or(|t| essence_is(t, AGENT_CARD_TYPE))
        })
        .collect();
    let named = |e: &&Value, key: &str| wanted.is_some_and(|w| e[key].as_str() == Some(w));
    let entry = match wanted {
        None => cards.first(),
        Some(_) => cards
            .iter()
            .find(|e| named(e, "identifier"))
            .or_else(|| cards.iter().find(|e| named(e, "displayName"))),
    };
    let Some(entry) = entry else {
        let listed: Vec<String> = cards
            .iter()
            .map(|e| {
                format!(
                    "`{}` ({})",
                    e["displayName"].as_str().unwrap_or("?"),
                    e["identifier"].as_str().unwrap_or("?")
                )
            })
            .collect();
        // With nothing asked for, only an empty list leaves no entry.
        return Err(if listed.is_empty() {
            "the AI Catalog lists no A2A agent card (no entry of type application/a2a-agent-card+json)".to_owned()
        } else {
            format!(
                "the AI Catalog has no agent `{}` (by identifier or displayName); it lists {}",
                wanted.unwrap_or_default(),
                listed.join(", ")
            )
        });
    };
    if let Some(url) = entry.get("url").and_then(Value::as_str) {
        return Ok(Picked::Url(url.to_owned()));
    }
    match entry.get("data") {
        Some(card) if card.is_object() => Ok(Picked::Inline(card.clone())),
        _ => Err(format!(
            "the AI Catalog's entry `{}` has neither a `url` nor an inline card (`data`)",
            entry["identifier"].as_str().unwrap_or("?")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_catalog_gives_the_card_of_its_first_agent_or_of_the_one_named() {
        let catalog = json!({"specVersion": "1.0", "entries": [
            {"identifier": "urn:air:x:mcp:tools", "displayName": "Tools",
             "type": "application/mcp-server-card+json", "url": "https://x/mcp.json"},
            {"identifier": "urn:air:x:a2a:planner", "displayName": "Planner",
             "type": "application/a2a-agent-card+json", "url": "https://x/planner/card.json"},
            {"identifier": "urn:air:x:a2a:judge", "displayName": "Judge",
             "type": "application/a2a-agent-card+json", "data": {"name": "Judge"}},
        ]});
        assert!(is_catalog(&catalog));
        assert!(!is_catalog(&json!({"name": "A card", "entries": []})));
        // The first agent card: an MCP server is not one.
        assert!(
            matches!(catalog_pick(&catalog, None), Ok(Picked::Url(u)) if u == "https://x/planner/card.json")
        );
        // By identifier or name; inline.
        assert!(
            matches!(catalog_pick(&catalog, Some("urn:air:x:a2a:judge")), Ok(Picked::Inline(c)) if c["name"] == "Judge")
        );
        assert!(matches!(
            catalog_pick(&catalog, Some("Judge")),
            Ok(Picked::Inline(_))
        ));
        let Err(why) = catalog_pick(&catalog, Some("Tools")) else {
            panic!("an MCP server is not an agent")
        };
        assert!(
            why.contains("`Planner`") && why.contains("`Judge`"),
            "{why}"
        );
        let empty = json!({"entries": [{"identifier": "i", "type": "application/ai-skill+md", "url": "u"}]});
        let Err(why) = catalog_pick(&empty, None) else {
            panic!("no agent")
        };
        assert!(why.contains("no A2A agent card"), "{why}");
        let bare = json!({"entries": [{"identifier": "urn:a", "type": "application/a2a-agent-card+json"}]});
        let Err(why) = catalog_pick(&bare, None) else {
            panic!("no card")
        };
        assert!(why.contains("urn:a") && why.contains("neither"), "{why}");
    }
}
