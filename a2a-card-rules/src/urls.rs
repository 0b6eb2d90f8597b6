//! What a URL in a card is: absolute or not, https or not, loopback or not.

use url::{Host, Url};

/// The kind of a URL string, as the card's rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlKind {
    /// Not an absolute URL; the message says why and how to fix it.
    Invalid(String),
    /// `https://`.
    Https {
        /// Whether the host is loopback (`localhost`, `127.0.0.0/8`, `::1`) or unspecified.
        loopback: bool,
    },
    /// Plain `http://`.
    Http {
        /// Whether the host is loopback or unspecified.
        loopback: bool,
    },
    /// Another scheme with a host (`grpc://`, `wss://`, ...).
    Other(String),
}

/// Classifies a URL string, returning the parsed URL when it parses.
///
/// ```
/// use a2a_card_rules::urls::{classify, UrlKind};
/// assert_eq!(classify("https://a.example.com").0, UrlKind::Https { loopback: false });
/// assert_eq!(classify("http://127.0.0.1:8080").0, UrlKind::Http { loopback: true });
/// assert_eq!(classify("http://localhost.:8080").0, UrlKind::Http { loopback: true });
/// assert!(matches!(classify("/a2a").0, UrlKind::Invalid(_)));
/// ```
pub fn classify(raw: &str) -> (UrlKind, Option<Url>) {
    let url = match Url::parse(raw.trim()) {
        Ok(url) => url,
        Err(url::ParseError::RelativeUrlWithoutBase) => {
            return (
                UrlKind::Invalid(format!(
                    "`{raw}` is not an absolute URL; write it with its scheme and host, e.g. https://agent.example.com/a2a"
                )),
                None,
            );
        }
        Err(e) => {
            return (
                UrlKind::Invalid(format!("`{raw}` is not a valid URL ({e})")),
                None,
            );
        }
    };
    let loopback = url.host().is_some_and(|h| host_is_loopback(&h));
    let kind = match url.scheme() {
        "https" => UrlKind::Https { loopback },
        "http" => UrlKind::Http { loopback },
        other if url.host().is_none() => {
            UrlKind::Invalid(format!("`{raw}` has no host (scheme `{other}`)"))
        }
        other => UrlKind::Other(other.to_owned()),
    };
    (kind, Some(url))
}

/// Whether a URL's host (`localhost`, `a.localhost`, `127.0.0.1`, `[::1]`...) is loopback or
/// unspecified (`0.0.0.0`, `[::]`): this machine, where plain http is acceptable.
///
/// ```
/// use a2a_card_rules::urls::is_loopback_host;
/// for host in ["localhost", "LOCALHOST", "localhost.", "agent.localhost", "127.0.0.2", "[::1]", "0.0.0.0", "[::]"] {
///     assert!(is_loopback_host(host), "{host}");
/// }
/// for host in ["example.com", "10.0.0.1", "[2001:db8::1]", "localhost.example.com", ""] {
///     assert!(!is_loopback_host(host), "{host}");
/// }
/// ```
pub fn is_loopback_host(host: &str) -> bool {
    Host::parse(host).is_ok_and(|h| host_is_loopback(&h))
}

/// Whether a host *name* is loopback: `localhost` or a name under it (RFC 6761 §6.3), in any
/// case, with or without the trailing dot of a fully qualified name (`localhost.`). The card's
/// URL rules and the push guard of the server decide with this one function.
///
/// ```
/// use a2a_card_rules::urls::is_loopback_name;
/// for name in ["localhost", "LocalHost", "localhost.", "agent.localhost", "agent.localhost."] {
///     assert!(is_loopback_name(name), "{name}");
/// }
/// for name in ["localhost.example.com", "notlocalhost", "localhost..", ""] {
///     assert!(!is_loopback_name(name), "{name}");
/// }
/// ```
pub fn is_loopback_name(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost")
}

fn host_is_loopback<S: AsRef<str>>(host: &Host<S>) -> bool {
    match host {
        Host::Domain(d) => is_loopback_name(d.as_ref()),
        Host::Ipv4(ip) => ip.is_loopback() || ip.is_unspecified(),
        Host::Ipv6(ip) => ip.is_loopback() || ip.is_unspecified(),
    }
}

/// The rule for an agent's endpoint URL: absolute, and https unless the host is loopback.
/// Returns the message that says what is wrong and how to fix it.
///
/// ```
/// use a2a_card_rules::urls::check_endpoint_url;
/// assert!(check_endpoint_url("https://agent.example.com/a2a").is_ok());
/// assert!(check_endpoint_url("http://localhost:8080").is_ok());
/// assert!(check_endpoint_url("http://agent.example.com").unwrap_err().contains("https"));
/// assert!(check_endpoint_url("agent.example.com").unwrap_err().contains("absolute"));
/// ```
pub fn check_endpoint_url(raw: &str) -> Result<(), String> {
    match classify(raw).0 {
        UrlKind::Invalid(m) => Err(m),
        UrlKind::Http { loopback: false } => Err(format!(
            "`{raw}` uses plain http; endpoints must use https (http is only acceptable on loopback)"
        )),
        UrlKind::Other(s) => Err(format!(
            "`{raw}` uses the `{s}` scheme; endpoints must use https"
        )),
        UrlKind::Https { .. } | UrlKind::Http { loopback: true } => Ok(()),
    }
}

/// The URI of the input/output schemas extension (v1), as listed in `capabilities.extensions`.
pub const IO_SCHEMAS_EXTENSION_URI: &str =
    "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/main/v1";

/// Whether `raw` is an absolute URI (RFC 3986: a scheme, `:`, then something, and no
/// whitespace), as an extension's URI is: `https://...`, `urn:...`.
///
/// ```
/// use a2a_card_rules::urls::is_absolute_uri;
/// for uri in ["https://a2a-protocol.org/ext/x/v1", "urn:example:ext", "tag:a.org,2026:x"] {
///     assert!(is_absolute_uri(uri), "{uri}");
/// }
/// for not in ["", "x", "/ext/v1", "https://a b", ":x", "1a:x", "https:"] {
///     assert!(!is_absolute_uri(not), "{not}");
/// }
/// ```
pub fn is_absolute_uri(raw: &str) -> bool {
    let Some((scheme, rest)) = raw.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !rest.is_empty()
        && !raw.chars().any(|c| c.is_whitespace() || c.is_control())
}
