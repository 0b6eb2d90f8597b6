//! The interfaces the served card advertises, and the path they are mounted at.

use std::net::{IpAddr, SocketAddr};

use axum::http::Uri;

use crate::card::{AgentCard, AgentInterface, ProtocolVersion};

use crate::server::server_error::ServerError;

/// The well-known path of the public Agent Card.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";
/// The path of the AG-UI capabilities snapshot.
pub const CAPABILITIES_PATH: &str = "/capabilities";
/// The path of the AI Catalog of the agents a listener serves (the catalog the A2A working
/// group prefers for discovery): one entry per agent, each pointing at the agent's card. A
/// [`Host`](crate::server::Host) lists every agent it mounts, its default agent first; a
/// [`Server`](crate::server::Server) alone lists its one agent.
///
/// ```
/// let catalog = format!("https://agents.example.com{}", a2a_card::server::AI_CATALOG_PATH);
/// assert_eq!(catalog, "https://agents.example.com/.well-known/ai-catalog.json");
/// ```
pub const AI_CATALOG_PATH: &str = "/.well-known/ai-catalog.json";

/// Where the agent is reached: the URL of its interfaces and the path they are mounted at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    /// The absolute URL every interface of the served card names.
    pub(crate) url: String,
    /// The URL's path: the JSON-RPC route, and the base of the HTTP+JSON routes.
    pub(crate) path: String,
    /// Whether the gRPC binding is mounted (at the URL's origin).
    pub(crate) grpc: bool,
    /// Whether the MCP endpoint is served (named on the card, at the URL's origin).
    pub(crate) mcp: bool,
    /// The bindings in the order the card lists them (those not named keep theirs, after).
    pub(crate) order: Vec<String>,
    /// The tenant the 1.0 interfaces name, if any.
    pub(crate) tenant: Option<String>,
    /// The path the agent's own routes are under on a listener it shares with other agents
    /// ([`Host`](crate::server::Host): `/planner`), empty where it is alone: MCP is at
    /// `{mount}/mcp`.
    pub(crate) mount: String,
}

impl Endpoint {
    /// The endpoint of `url`, checked: absolute http(s), a path the router can mount.
    pub(crate) fn parse(url: &str) -> Result<Endpoint, ServerError> {
        let bad = |reason: &str| ServerError::Url {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        let uri: Uri = url.parse().map_err(|_| bad("it is not an absolute URL"))?;
        match uri.scheme_str() {
            Some("http" | "https") => {}
            _ => return Err(bad("its scheme is not http or https")),
        }
        if uri.authority().is_none() {
            return Err(bad("it has no host"));
        }
        let path = match uri.path() {
            "" => "/",
            p => p,
        };
        if path.contains(['{', '}', '*']) || path.contains("//") {
            return Err(bad("its path has `{`, `}`, `*` or an empty segment"));
        }
        let reserved = |p: &str| path == p || path.starts_with(&format!("{p}/"));
        if reserved(CAPABILITIES_PATH) || reserved("/.well-known") || path == AGENT_CARD_PATH {
            return Err(bad(
                "its path is taken by the card or capabilities route; choose another, such as /a2a",
            ));
        }
        Ok(Endpoint {
            url: url.to_owned(),
            path: path.to_owned(),
            grpc: false,
            mcp: false,
            order: Vec::new(),
            tenant: None,
            mount: String::new(),
        })
    }

    /// The served card: `card` with exactly the interfaces that are mounted (JSON-RPC 1.0,
    /// HTTP+JSON 1.0, gRPC 1.0 at the URL's origin when it is mounted, and JSON-RPC 0.3 when
    /// 0.3 is translated), the others at this URL.
    pub(crate) fn card(&self, card: &AgentCard, v0_3: bool) -> AgentCard {
        let mut served = card.clone();
        served.interfaces = vec![
            AgentInterface::new(&self.url, AgentInterface::JSONRPC, ProtocolVersion::V1_0),
            AgentInterface::new(&self.url, AgentInterface::HTTP_JSON, ProtocolVersion::V1_0),
        ];
        if self.grpc {
            served.interfaces.push(AgentInterface::new(
                self.origin(),
                AgentInterface::GRPC,
                ProtocolVersion::V1_0,
            ));
        }
        // A2A 1.0 section 8.3.2: the tenant a client sends with every request (0.3 has none).
        for interface in &mut served.interfaces {
            interface.tenant.clone_from(&self.tenant);
        }
        if v0_3 {
            served.interfaces.push(AgentInterface::new(
                &self.url,
                AgentInterface::JSONRPC,
                ProtocolVersion::V0_3,
            ));
        }
        // The operator's order first (a stable sort: the 1.0 JSON-RPC interface stays before
        // the 0.3 one).
        let rank = |i: &AgentInterface| {
            self.order
                .iter()
                .position(|b| b.eq_ignore_ascii_case(&i.protocol_binding))
                .unwrap_or(self.order.len())
        };
        served.interfaces.sort_by_key(rank);
        // The extensions every agent of this crate offers: a caller may name the skill a new
        // task runs, make its sends idempotent by their messageId, and give a task a budget.
        for (uri, description) in [
            (
                crate::dispatch::SKILL_EXTENSION_URI,
                "Name the skill a new task runs: the message's metadata holds {\"skill\": ID} under this URI",
            ),
            (
                crate::idempotency::IDEMPOTENCY_EXTENSION_URI,
                "Idempotent sends: activated, a new task's messageId is its idempotency key (as the Idempotency-Key header is): sent again by the same caller, it reaches the task it made",
            ),
            (
                crate::budget::BUDGET_EXTENSION_URI,
                "Budgets: the message that makes a task may give it {\"ms\": N} under this URI, the milliseconds its caller waits at most; the skill reads it as its deadline and sends what is left on to the agents it calls",
            ),
        ] {
            let extensions = &mut served.capabilities.extensions;
            if !extensions.iter().any(|e| e.uri == uri) {
                extensions
                    .push(crate::card::AgentExtension::new(uri).with_description(description));
            }
        }
        #[cfg(feature = "mcp")]
        if self.mcp {
            served.capabilities.extensions.push(mcp_extension(&format!(
                "{}{}",
                self.origin(),
                self.mcp_path()
            )));
        }
        served
    }

    /// This endpoint's interfaces moved to `{origin}{mount}`, for an agent a
    /// [`Host`](crate::server::Host) mounts at `mount` (`/planner`): MCP goes under the mount too.
    pub(crate) fn placed(&self, origin: &str, mount: &str) -> Result<Endpoint, ServerError> {
        let at = Endpoint::parse(&format!("{}{mount}", origin.trim_end_matches('/')))?;
        Ok(Endpoint {
            url: at.url,
            path: at.path,
            mount: mount.to_owned(),
            ..self.clone()
        })
    }

    /// The host of the URL, without its port.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn host(&self) -> Option<&str> {
        let origin = self.origin();
        let authority = &origin[origin.find("://").map_or(0, |i| i + 3)..];
        let authority = authority.rsplit('@').next().unwrap_or(authority);
        if let Some(rest) = authority.strip_prefix('[') {
            return rest.split(']').next();
        }
        authority.split(':').next()
    }

    /// The path of the agent's MCP endpoint: [`MCP_PATH`] under its mount.
    #[cfg(feature = "mcp")]
    pub(crate) fn mcp_path(&self) -> String {
        format!("{}{MCP_PATH}", self.mount)
    }

    /// The URL's scheme and authority (`http://127.0.0.1:8080`): where a gRPC client connects
    /// (gRPC paths are the service's own).
    pub(crate) fn origin(&self) -> &str {
        let start = self.url.find("://").map_or(0, |i| i + 3);
        match self.url[start..].find('/') {
            Some(end) => &self.url[..start + end],
            None => &self.url,
        }
    }
}

/// The URL to serve at: `declared`, except that a loopback host (which can only mean this
/// machine) takes the address actually bound, so the card names where the agent listens.
pub(crate) fn bound_url(declared: &str, bound: SocketAddr) -> String {
    let Some(scheme_end) = declared.find("://") else {
        return declared.to_owned();
    };
    let start = scheme_end + 3;
    let end = declared[start..]
        .find(['/', '?', '#'])
        .map_or(declared.len(), |i| start + i);
    let authority = &declared[start..end];
    if authority.contains('@') {
        return declared.to_owned();
    }
    let host = match authority.rfind(':') {
        Some(i) if !authority[i..].contains(']') => &authority[..i],
        _ => authority,
    };
    if !a2a_card_rules::urls::is_loopback_host(host) {
        return declared.to_owned();
    }
    let ip = bound.ip();
    let new_host = if ip.is_unspecified() {
        host.to_owned()
    } else {
        match ip {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => format!("[{v6}]"),
        }
    };
    format!(
        "{}{new_host}:{}{}",
        &declared[..start],
        bound.port(),
        &declared[end..]
    )
}

/// The path of the agent's MCP endpoint (streamable HTTP), at the root of its origin.
#[cfg(feature = "mcp")]
pub(crate) const MCP_PATH: &str = "/mcp";

/// The URI of the card's extension entry that names the agent's MCP endpoint.
#[cfg(feature = "mcp")]
pub(crate) const MCP_EXTENSION_URI: &str = "https://github.com/a2a-card/a2a-card/extensions/mcp/v1";

/// The card's extension entry naming the MCP endpoint at `url`.
#[cfg(feature = "mcp")]
fn mcp_extension(url: &str) -> crate::card::AgentExtension {
    let mut params = serde_json::Map::new();
    params.insert("url".into(), serde_json::Value::String(url.to_owned()));
    params.insert(
        "transport".into(),
        serde_json::Value::String("streamable-http".into()),
    );
    let mut extension = crate::card::AgentExtension::new(MCP_EXTENSION_URI).with_description(
        "The agent's skills as MCP tools, with the same schemas, at params.url (MCP streamable HTTP)",
    );
    extension.params = Some(params);
    extension
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 1)))
    }

    #[test]
    fn a_loopback_url_takes_the_bound_address() {
        let bound = addr("127.0.0.1:9123");
        assert_eq!(
            bound_url("http://127.0.0.1:8080", bound),
            "http://127.0.0.1:9123"
        );
        assert_eq!(
            bound_url("http://localhost:8080/a2a?x=1", bound),
            "http://127.0.0.1:9123/a2a?x=1"
        );
        assert_eq!(
            bound_url("http://[::1]:8080/a2a", addr("[::1]:7000")),
            "http://[::1]:7000/a2a"
        );
        // Loopback as the linter sees it (a2a_card_rules::urls::is_loopback_host).
        assert_eq!(
            bound_url("http://agent.localhost:8080/a2a", bound),
            "http://127.0.0.1:9123/a2a"
        );
        assert_eq!(
            bound_url("http://0.0.0.0:8080", bound),
            "http://127.0.0.1:9123"
        );
        assert_eq!(
            bound_url("http://localhost/a2a", addr("0.0.0.0:7000")),
            "http://localhost:7000/a2a"
        );
        // Anything else is where the declaration says (behind a proxy, say).
        for url in [
            "https://fights.example.com/a2a",
            "http://10.0.0.1:8080",
            "nonsense",
        ] {
            assert_eq!(bound_url(url, bound), url);
        }
    }

    #[test]
    fn endpoints_are_checked() {
        let e = Endpoint::parse("http://127.0.0.1:8080").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(e.path, "/");
        let e =
            Endpoint::parse("https://a.example.com/agents/fx").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(e.path, "/agents/fx");
        for bad in [
            "/relative",
            "ftp://a.example.com/",
            "http://a.example.com/{id}",
            "http://a.example.com//x",
            "http://a.example.com/capabilities",
            "http://a.example.com/.well-known/agent-card.json",
        ] {
            assert!(Endpoint::parse(bad).is_err(), "{bad}");
        }
    }
}
