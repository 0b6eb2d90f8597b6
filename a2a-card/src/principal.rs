//! Who called: the authenticated principal a handler sees on its [`SkillContext`].
//!
//! The server (feature `server`, [`server::auth`](crate::server)) checks the credentials a
//! request carries against the security schemes the card declares; each scheme that verifies
//! gives an [`Identity`] (subject, scopes, claims), and the [`Principal`] holds them all, the
//! scheme of the requirement that let the call in first.
//!
//! [`SkillContext`]: crate::SkillContext

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What one security scheme says about the caller: who it is, which scopes it holds, and the
/// claims of its token (empty for API keys and passwords, unless their verifier adds some).
///
/// ```
/// use a2a_card::Identity;
///
/// let id = Identity::new("alice").with_scopes(["fights:read"]);
/// assert_eq!(id.subject(), "alice");
/// assert!(id.has_scope("fights:read"));
/// assert!(!id.has_scope("fights:write"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Identity {
    subject: String,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    scopes: BTreeSet<String>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    claims: Map<String, Value>,
}

impl Identity {
    /// An identity of `subject`, with no scopes and no claims.
    pub fn new(subject: impl Into<String>) -> Self {
        Identity {
            subject: subject.into(),
            scopes: BTreeSet::new(),
            claims: Map::new(),
        }
    }

    /// With these scopes (added to those it has).
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// With these claims (replacing those it has).
    pub fn with_claims(mut self, claims: Map<String, Value>) -> Self {
        self.claims = claims;
        self
    }

    /// Who the caller is (a token's `sub`, an API key's owner, a user name).
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The scopes the caller holds under this scheme.
    pub fn scopes(&self) -> &BTreeSet<String> {
        &self.scopes
    }

    /// Whether the caller holds `scope` under this scheme.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }

    /// The claims of the caller's token (all of them, as verified).
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }
}

/// The authenticated caller of a request: one [`Identity`] per security scheme whose
/// credentials verified, the scheme of the requirement alternative that admitted the call
/// first.
///
/// ```
/// use a2a_card::{Identity, Principal};
///
/// let principal = Principal::new("bearer", Identity::new("alice").with_scopes(["read"]))
///     .with("apiKey", Identity::new("team-blue"));
/// assert_eq!(principal.subject(), "alice");
/// assert_eq!(principal.scheme(), "bearer");
/// assert!(principal.has_scope("read"));
/// assert_eq!(principal.identity("apiKey").map(|i| i.subject()), Some("team-blue"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Principal {
    /// Scheme name -> identity, in order; never empty.
    identities: Vec<(String, Identity)>,
}

impl Principal {
    /// A principal authenticated by `scheme` as `identity`.
    pub fn new(scheme: impl Into<String>, identity: Identity) -> Self {
        Principal {
            identities: vec![(scheme.into(), identity)],
        }
    }

    /// With one more scheme's identity (replacing what that scheme said before).
    pub fn with(mut self, scheme: impl Into<String>, identity: Identity) -> Self {
        let scheme = scheme.into();
        match self.identities.iter_mut().find(|(s, _)| *s == scheme) {
            Some((_, known)) => *known = identity,
            None => self.identities.push((scheme, identity)),
        }
        self
    }

    /// The first identity (of the scheme that admitted the call).
    fn primary(&self) -> &Identity {
        // `new` puts one in and nothing takes one out; a deserialised empty list has none.
        static NOBODY: std::sync::LazyLock<Identity> = std::sync::LazyLock::new(Identity::default);
        self.identities.first().map_or(&NOBODY, |(_, id)| id)
    }

    /// Who the caller is, by the scheme that admitted the call.
    pub fn subject(&self) -> &str {
        self.primary().subject()
    }

    /// The name of the scheme that admitted the call (a key of the card's security schemes).
    pub fn scheme(&self) -> &str {
        self.identities.first().map_or("", |(s, _)| s)
    }

    /// The scopes of the caller under the scheme that admitted the call.
    pub fn scopes(&self) -> &BTreeSet<String> {
        self.primary().scopes()
    }

    /// Whether the caller holds `scope` under the scheme that admitted the call.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.primary().has_scope(scope)
    }

    /// The claims of the token of the scheme that admitted the call.
    pub fn claims(&self) -> &Map<String, Value> {
        self.primary().claims()
    }

    /// What scheme `scheme` says about the caller, when its credentials verified.
    pub fn identity(&self, scheme: &str) -> Option<&Identity> {
        self.identities
            .iter()
            .find(|(s, _)| s == scheme)
            .map(|(_, id)| id)
    }

    /// Every scheme whose credentials verified, with what it says, the admitting one first.
    pub fn identities(&self) -> impl Iterator<Item = (&str, &Identity)> {
        self.identities.iter().map(|(s, id)| (s.as_str(), id))
    }

    /// Puts the identity of `scheme` first.
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    pub(crate) fn promote(&mut self, scheme: &str) {
        if let Some(i) = self.identities.iter().position(|(s, _)| s == scheme) {
            let id = self.identities.remove(i);
            self.identities.insert(0, id);
        }
    }
}
