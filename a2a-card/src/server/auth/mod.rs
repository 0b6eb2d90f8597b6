//! Enforcing the security the card declares: who may call, and which skills.
//!
//! The card's security schemes and requirements are the rules; [`Authentication`] says how to
//! check each scheme's credentials, and [`Server::authentication`](super::Server::authentication)
//! turns them on. Then, on every protocol route (JSON-RPC 1.0 and 0.3, HTTP+JSON, streaming
//! and subscribe, the push-config methods), before any task exists:
//!
//! 1. Each declared scheme with a verifier reads its credential where the scheme says
//!    (`Authorization: Bearer` for HTTP bearer, OAuth 2.0 and OpenID Connect; `Authorization:
//!    Basic` for HTTP basic; the header, query parameter or cookie an API key scheme names)
//!    and checks it. Each that verifies gives an [`Identity`].
//! 2. The agent's requirement is met when one of its alternatives is: every scheme of that
//!    alternative verified, holding every scope listed. No requirement: anyone may call.
//! 3. Dispatch picks the skill; the skill's own requirement is checked the same way (the
//!    agent's still applies), before the skill runs. A skill marked `extended` (listed only on
//!    the extended card) needs an authenticated caller.
//! 4. `GetExtendedAgentCard` (0.3 `agent/getAuthenticatedExtendedCard`) answers only
//!    authenticated callers. The public card route stays public.
//!
//! | refusal | HTTP | JSON-RPC error | HTTP+JSON `status` |
//! |---|---|---|---|
//! | no credentials, or none that verify | `401`, `WWW-Authenticate` naming the schemes | `-31401` | `UNAUTHENTICATED` |
//! | authenticated, lacking a scope | `403` (`WWW-Authenticate: Bearer error="insufficient_scope"` for token schemes) | `-31403` | `PERMISSION_DENIED` |
//! | the keys could not be had (JWKS down) | `503` | `-32603` | `UNAVAILABLE` |
//!
//! The answers say which schemes (and, for `403`, which scopes) the call needs, never which
//! check a credential failed; the reason goes to the server's log at `debug`, without the
//! credential. The codes `-31401`/`-31403` are those the official Go SDK uses (A2A leaves
//! JSON-RPC authentication codes to the implementation).
//!
//! Once the server authenticates callers, each task belongs to the owner of the caller that
//! made it ([`Ownership`], A2A 1.0.1 section 13.1): a task of another owner is not found by
//! any task method, and not listed.
//!
//! The handler sees the caller as [`SkillContext::principal`](crate::SkillContext::principal).
//! The authentication layer, one for every binding, puts what the credentials came to in the
//! request's extensions (never read from the request itself); each binding builds its call's
//! context from it, and the principal travels on with the call.
//!
//! Mutual TLS is not checked: the server speaks plain HTTP (put TLS in front). A requirement
//! alternative that names an mTLS scheme can never be met here, and the server warns at start.
//!
//! ```no_run
//! use a2a_card::server::Server;
//! use a2a_card::server::auth::{Algorithm, Authentication, JwtKeys, JwtVerifier, StaticApiKeys};
//! use a2a_card::{Identity, agent, skill};
//!
//! struct Judge;
//! /// Judges fights, for known callers.
//! #[agent(
//!     url = "http://127.0.0.1:9000",
//!     security_schemes(bearer = bearer("JWT"), key = api_key(header = "X-API-Key")),
//!     security(bearer),
//!     security(key)
//! )]
//! impl Judge {
//!     /// Names the winner.
//!     #[skill]
//!     fn winner(&self, fight: String) -> String { fight }
//! }
//!
//! # async fn run(jwks: &str) -> Result<(), Box<dyn std::error::Error>> {
//! let auth = Authentication::new()
//!     .token("bearer", JwtVerifier::new(JwtKeys::from_jwks(jwks)?, [Algorithm::EdDSA])
//!         .issuer("https://auth.example.com")
//!         .audience("http://127.0.0.1:9000"))
//!     .api_key("key", StaticApiKeys::new().key("s3cret-key-of-team-blue", Identity::new("team-blue")));
//! Server::new(Judge).authentication(auth).bind("127.0.0.1:9000").await?.serve().await?;
//! # Ok(()) }
//! ```

mod jwt;
mod layer;
mod ownership;
mod verifiers;

use std::collections::HashMap;
use std::fmt;

use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::agent::SkillDecl;
use crate::card::{AgentCard, SecurityRequirement, SecurityScheme};
use crate::principal::{Identity, Principal};

pub use jwt::{
    Algorithm, CachedJwks, DEFAULT_LEEWAY, HttpJwks, JwksFetcher, JwksResolver, JwtKey, JwtKeys,
    JwtVerifier, KeyError, VERIFIED_TOKEN_TTL,
};

pub(crate) use layer::{Admission, Refusal, layer};
pub use ownership::Ownership;
use verifiers::Verifier;
pub use verifiers::{
    ApiKeyVerifier, Authentication, BasicVerifier, Rejected, StaticApiKeys, TokenVerifier,
};

/// JSON-RPC error code of a refused authentication (as the official Go SDK).
pub const UNAUTHENTICATED: i32 = -31401;
/// JSON-RPC error code of a refused authorization (as the official Go SDK).
pub const UNAUTHORIZED: i32 = -31403;
/// JSON-RPC error code of a call over one of the agent's [limits](crate::server::Limits)
/// (answered with HTTP `429` and `Retry-After`; in the range of [`UNAUTHENTICATED`] and
/// [`UNAUTHORIZED`], as A2A leaves these codes to the implementation).
pub const RATE_LIMITED: i32 = -31429;

/// Where a scheme's credential is.
#[derive(Debug, Clone)]
enum Source {
    Bearer,
    Basic,
    ApiKey(Place, String),
    MutualTls,
}

/// Where an API key is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Header,
    Query,
    Cookie,
}

struct Scheme {
    name: String,
    source: Source,
    verifier: Option<Verifier>,
}

/// One alternative: every scheme (by index) with its scopes.
type Alternative = Vec<(usize, Vec<String>)>;

/// The security of one served agent: schemes, verifiers, requirements.
pub(crate) struct Guard {
    schemes: Vec<Scheme>,
    agent: Vec<Alternative>,
    skills: Vec<Vec<Alternative>>,
    extended: Vec<bool>,
    realm: String,
    /// Which tenants a caller may use, when the server says (see [`Authentication::tenants`]).
    tenants: Option<verifiers::TenantsOf>,
    /// Whose tasks a caller reaches.
    ownership: Ownership,
    /// Where failed logins are counted, where the server limits them.
    logins: Option<std::sync::Arc<crate::server::limits::Limiter>>,
}

impl fmt::Debug for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guard")
            .field(
                "schemes",
                &self.schemes.iter().map(|s| &s.name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// Why the security of a card cannot be enforced as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecurityConfigError(String);

impl fmt::Display for SecurityConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SecurityConfigError {}

impl Guard {
    /// The guard of `card` (as served) with these verifiers; `None` when the card declares no
    /// security at all and no verifier is given.
    pub(crate) fn new(
        card: &AgentCard,
        skills: &[SkillDecl],
        auth: Option<Authentication>,
    ) -> Result<Option<Guard>, SecurityConfigError> {
        let required = !card.security_requirements.is_empty()
            || card
                .skills
                .iter()
                .any(|s| !s.security_requirements.is_empty())
            || skills.iter().any(|s| !s.security.is_empty());
        let extended = skills.iter().any(|s| s.extended)
            || card.capabilities.extended_agent_card == Some(true);
        if !required && !extended && auth.is_none() {
            return Ok(None);
        }
        let guard = Guard::from_parts(card, skills, auth.unwrap_or_default())?;
        if extended && !guard.schemes.iter().any(|s| s.verifier.is_some()) {
            return Err(SecurityConfigError(
                "the card offers an extended card (or extended-only skills), which only authenticated callers may see, but the server has no way to authenticate them: declare a security scheme and give its verifier with Server::authentication".into(),
            ));
        }
        Ok(Some(guard))
    }

    fn from_parts(
        card: &AgentCard,
        skills: &[SkillDecl],
        auth: Authentication,
    ) -> Result<Guard, SecurityConfigError> {
        let mut schemes = Vec::new();
        let mut verifiers: HashMap<String, Verifier> = auth.verifiers.into_iter().collect();
        for (name, scheme) in &card.security_schemes {
            let source = match scheme {
                SecurityScheme::Http(h) if h.scheme.eq_ignore_ascii_case("bearer") => {
                    Source::Bearer
                }
                SecurityScheme::Http(h) if h.scheme.eq_ignore_ascii_case("basic") => Source::Basic,
                SecurityScheme::Http(h) => {
                    if verifiers.contains_key(name) || Guard::named(card, name) {
                        return Err(SecurityConfigError(format!(
                            "security scheme `{name}` is HTTP `{}`, which the server cannot check (bearer and basic are supported)",
                            h.scheme
                        )));
                    }
                    continue;
                }
                SecurityScheme::OAuth2(_) | SecurityScheme::OpenIdConnect(_) => Source::Bearer,
                SecurityScheme::ApiKey(k) => {
                    let place = match k.location.to_ascii_lowercase().as_str() {
                        "header" => Place::Header,
                        "query" => Place::Query,
                        "cookie" => Place::Cookie,
                        other => {
                            return Err(SecurityConfigError(format!(
                                "API key scheme `{name}` is sent in `{other}`, which is not a header, query or cookie"
                            )));
                        }
                    };
                    Source::ApiKey(place, k.name.clone())
                }
                SecurityScheme::MutualTls(_) => {
                    warn(&format!(
                        "security scheme `{name}` is mutual TLS, which this server (plain HTTP) cannot check: a requirement that names it is never met here; terminate TLS in front and use another scheme"
                    ));
                    Source::MutualTls
                }
            };
            let verifier = verifiers.remove(name);
            if let Some(v) = &verifier {
                let fits = matches!(
                    (&source, v),
                    (Source::Bearer, Verifier::Token(_))
                        | (Source::Basic, Verifier::Basic(_))
                        | (Source::ApiKey(..), Verifier::ApiKey(_))
                );
                if !fits {
                    return Err(SecurityConfigError(format!(
                        "security scheme `{name}` cannot be checked by {}",
                        v.kind()
                    )));
                }
            } else if Guard::named(card, name) && !matches!(source, Source::MutualTls) {
                return Err(SecurityConfigError(format!(
                    "the card requires security scheme `{name}` but the server has no verifier for it: give one with Server::authentication"
                )));
            }
            schemes.push(Scheme {
                name: name.clone(),
                source,
                verifier,
            });
        }
        if let Some(name) = verifiers.keys().next() {
            return Err(SecurityConfigError(format!(
                "a verifier is given for security scheme `{name}`, which the card does not declare"
            )));
        }
        let index =
            |reqs: &[SecurityRequirement]| -> Result<Vec<Alternative>, SecurityConfigError> {
                reqs.iter()
                .map(|r| {
                    r.schemes
                        .iter()
                        .map(|(name, scopes)| {
                            schemes
                                .iter()
                                .position(|s| s.name == *name)
                                .map(|i| (i, scopes.clone()))
                                .ok_or_else(|| {
                                    SecurityConfigError(format!(
                                        "a security requirement names scheme `{name}`, which the card does not declare (or the server cannot check)"
                                    ))
                                })
                        })
                        .collect()
                })
                .collect()
            };
        let agent = index(&card.security_requirements)?;
        let mut per_skill = Vec::with_capacity(skills.len());
        for decl in skills {
            // The served card may leave extended skills out: requirements come from the card
            // where the skill is listed, else from the declaration.
            let reqs = match card.skills.iter().find(|s| s.id == decl.id) {
                Some(s) => s.security_requirements.clone(),
                None => crate::agent::requirements(decl.security),
            };
            per_skill.push(index(&reqs)?);
        }
        let extended = skills.iter().map(|s| s.extended).collect();
        Ok(Guard {
            schemes,
            agent,
            skills: per_skill,
            extended,
            realm: auth.realm,
            tenants: auth.tenants,
            ownership: auth.ownership,
            logins: None,
        })
    }

    /// Whether any requirement of the card names scheme `name`.
    fn named(card: &AgentCard, name: &str) -> bool {
        card.security_requirements
            .iter()
            .chain(card.skills.iter().flat_map(|s| &s.security_requirements))
            .any(|r| r.schemes.contains_key(name))
    }

    /// Checks the request's credentials against the agent's requirement.
    pub(crate) async fn authenticate(&self, parts: &Parts) -> Result<Option<Principal>, Refusal> {
        let mut principal: Option<Principal> = None;
        let mut invalid = vec![false; self.schemes.len()];
        let mut unavailable = false;
        let authorization = authorization(&parts.headers);
        for (i, scheme) in self.schemes.iter().enumerate() {
            let Some(verifier) = &scheme.verifier else {
                continue;
            };
            let outcome = match (&scheme.source, verifier) {
                (Source::Bearer, Verifier::Token(v)) => match &authorization {
                    Credential::Bearer(token) => Some(v.verify(token).await),
                    Credential::Malformed => Some(Err(Rejected::invalid("malformed"))),
                    _ => None,
                },
                (Source::Basic, Verifier::Basic(v)) => match &authorization {
                    Credential::Basic(user, password) => Some(v.verify(user, password).await),
                    Credential::Malformed => Some(Err(Rejected::invalid("malformed"))),
                    _ => None,
                },
                (Source::ApiKey(location, name), Verifier::ApiKey(v)) => {
                    match api_key(parts, *location, name) {
                        Ok(Some(key)) => Some(v.verify(&key).await),
                        Ok(None) => None,
                        Err(()) => Some(Err(Rejected::invalid("ambiguous"))),
                    }
                }
                _ => None,
            };
            match outcome {
                None => {}
                Some(Ok(identity)) => {
                    principal = Some(match principal {
                        None => Principal::new(&scheme.name, identity),
                        Some(p) => p.with(&scheme.name, identity),
                    });
                }
                Some(Err(rejected)) => {
                    tracing::debug!(scheme = %scheme.name, reason = %rejected.reason(), "credentials refused");
                    unavailable |= rejected.is_unavailable();
                    invalid[i] = true;
                }
            }
        }
        match self.evaluate(&self.agent, principal.as_ref(), &invalid, unavailable) {
            Ok(Some(admitted)) => {
                if let Some(p) = principal.as_mut() {
                    p.promote(&self.schemes[admitted].name);
                }
                Ok(principal)
            }
            Ok(None) => Ok(principal),
            Err(refusal) => Err(refusal),
        }
    }

    /// Checks `principal` against the requirement of skill `skill` (an index into the agent's
    /// skills), and that an extended-only skill has an authenticated caller.
    pub(crate) fn authorize_skill(
        &self,
        skill: usize,
        principal: Option<&Principal>,
    ) -> Result<(), Refusal> {
        let Some(alternatives) = self.skills.get(skill) else {
            return Ok(());
        };
        let none = vec![false; self.schemes.len()];
        self.evaluate(alternatives, principal, &none, false)?;
        if self.extended.get(skill).copied().unwrap_or(false) && principal.is_none() {
            return Err(self.unauthenticated_any());
        }
        Ok(())
    }

    /// Checks that `principal` may use `tenant` (a call in the default tenant always may),
    /// where the server says who belongs to which tenant.
    pub(crate) fn authorize_tenant(
        &self,
        tenant: Option<&str>,
        principal: Option<&Principal>,
    ) -> Result<(), Refusal> {
        let (Some(tenants), Some(tenant)) = (&self.tenants, tenant) else {
            return Ok(());
        };
        if principal.is_some_and(|p| tenants(p).iter().any(|t| t == tenant)) {
            return Ok(());
        }
        Err(Refusal::Forbidden {
            challenges: Vec::new(),
            message: format!("the caller may not use tenant `{tenant}`"),
        })
    }

    /// Counts failed logins with `limiter`, and refuses the clients past its limit before
    /// their credentials are checked.
    pub(crate) fn limit_logins(&mut self, limiter: std::sync::Arc<crate::server::limits::Limiter>) {
        self.logins = Some(limiter);
    }

    /// Checks the credentials of a request from `peer`, unless that client failed too often
    /// (then refused before any verifier runs); a refused credential counts as a failure.
    pub(crate) async fn admit(
        &self,
        parts: &Parts,
        peer: Option<crate::server::limits::Peer>,
    ) -> Result<Option<Principal>, Refusal> {
        if let Some(logins) = &self.logins {
            logins.may_log_in(peer)?;
        }
        let admitted = self.authenticate(parts).await;
        if let (Err(Refusal::Unauthenticated { .. }), Some(logins)) = (&admitted, &self.logins) {
            logins.failed_login(peer);
        }
        admitted
    }

    /// Where the tasks of a call in the tenant whose task ids begin with `tenant` are, for
    /// `principal` (see [`Ownership`]).
    pub(crate) fn place(
        &self,
        tenant: String,
        principal: Option<&Principal>,
    ) -> Result<crate::server::store::Place, Refusal> {
        self.ownership.place(tenant, principal)
    }

    /// A refusal for a call that needs any authenticated caller (the extended card).
    pub(crate) fn unauthenticated_any(&self) -> Refusal {
        let all: Vec<usize> = (0..self.schemes.len()).collect();
        Refusal::Unauthenticated {
            challenges: self.challenges(all.iter().copied(), &[], None),
            message: format!(
                "authentication required: send credentials of {}",
                self.describe(all.iter().copied())
            ),
        }
    }

    /// `Ok(Some(i))`: met, by an alternative whose first scheme is `i`; `Ok(None)`: nothing
    /// required.
    fn evaluate(
        &self,
        alternatives: &[Alternative],
        principal: Option<&Principal>,
        invalid: &[bool],
        unavailable: bool,
    ) -> Result<Option<usize>, Refusal> {
        if alternatives.is_empty() {
            return Ok(None);
        }
        let mut lacking: Option<(usize, Vec<&str>)> = None;
        for alternative in alternatives {
            let mut authenticated = true;
            let mut missing = Vec::new();
            for (i, scopes) in alternative {
                let id = principal.and_then(|p| p.identity(&self.schemes[*i].name));
                match id {
                    None => authenticated = false,
                    Some(id) => missing.extend(
                        scopes
                            .iter()
                            .filter(|s| !id.has_scope(s))
                            .map(|s| (*i, s.as_str())),
                    ),
                }
            }
            if authenticated && missing.is_empty() {
                return Ok(alternative.first().map(|(i, _)| *i));
            }
            if authenticated && lacking.is_none() {
                let scheme = missing.first().map_or(0, |(i, _)| *i);
                lacking = Some((scheme, missing.into_iter().map(|(_, s)| s).collect()));
            }
        }
        if let Some((scheme, scopes)) = lacking {
            return Err(Refusal::Forbidden {
                challenges: self.challenges([scheme].into_iter(), invalid, Some(&scopes)),
                message: format!(
                    "the caller lacks the scope(s) this call requires: {}",
                    scopes.join(", ")
                ),
            });
        }
        if unavailable {
            return Err(Refusal::Unavailable);
        }
        let named: Vec<usize> = {
            let mut v: Vec<usize> = alternatives.iter().flatten().map(|(i, _)| *i).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let presented = named.iter().any(|i| invalid[*i]);
        Err(Refusal::Unauthenticated {
            challenges: self.challenges(named.iter().copied(), invalid, None),
            message: if presented {
                "the credentials are not valid".to_owned()
            } else {
                format!(
                    "authentication required: send credentials of {}",
                    self.describe_alternatives(alternatives)
                )
            },
        })
    }

    fn describe(&self, schemes: impl Iterator<Item = usize>) -> String {
        schemes
            .filter(|i| !matches!(self.schemes[*i].source, Source::MutualTls))
            .map(|i| self.describe_one(i))
            .collect::<Vec<_>>()
            .join(" or ")
    }

    fn describe_one(&self, i: usize) -> String {
        let s = &self.schemes[i];
        match &s.source {
            Source::Bearer => format!("`{}` (Authorization: Bearer <token>)", s.name),
            Source::Basic => format!("`{}` (Authorization: Basic)", s.name),
            Source::ApiKey(location, name) => {
                let place = match location {
                    Place::Header => "header",
                    Place::Query => "query parameter",
                    Place::Cookie => "cookie",
                };
                format!("`{}` (API key in the {place} `{name}`)", s.name)
            }
            Source::MutualTls => format!("`{}` (mutual TLS)", s.name),
        }
    }

    fn describe_alternatives(&self, alternatives: &[Alternative]) -> String {
        alternatives
            .iter()
            .map(|a| {
                a.iter()
                    .map(|(i, _)| self.describe_one(*i))
                    .collect::<Vec<_>>()
                    .join(" and ")
            })
            .collect::<Vec<_>>()
            .join("; or ")
    }

    fn challenges(
        &self,
        schemes: impl Iterator<Item = usize>,
        invalid: &[bool],
        insufficient: Option<&[&str]>,
    ) -> Vec<String> {
        let realm = quote(&self.realm);
        let mut out: Vec<String> = Vec::new();
        for i in schemes {
            let s = &self.schemes[i];
            let challenge = match &s.source {
                Source::Bearer => match insufficient {
                    Some(scopes) => format!(
                        "Bearer realm={realm}, error=\"insufficient_scope\", scope={}",
                        quote(&scopes.join(" "))
                    ),
                    None if invalid.get(i).copied().unwrap_or(false) => {
                        format!("Bearer realm={realm}, error=\"invalid_token\"")
                    }
                    None => format!("Bearer realm={realm}"),
                },
                Source::Basic => format!("Basic realm={realm}, charset=\"UTF-8\""),
                Source::ApiKey(location, name) => {
                    let place = match location {
                        Place::Header => "header",
                        Place::Query => "query",
                        Place::Cookie => "cookie",
                    };
                    format!("ApiKey realm={realm}, in=\"{place}\", name={}", quote(name))
                }
                Source::MutualTls => continue,
            };
            if !out.contains(&challenge) {
                out.push(challenge);
            }
        }
        out
    }

    /// Whether the agent-level requirement lets anonymous callers in.
    pub(crate) fn is_open(&self) -> bool {
        self.agent.is_empty()
    }
}

fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        if !c.is_control() {
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// What the `Authorization` header carries.
enum Credential {
    None,
    Bearer(String),
    Basic(String, String),
    /// Present, but not a bearer or basic credential that parses (or given twice).
    Malformed,
    /// Another scheme word.
    Other,
}

fn authorization(headers: &HeaderMap) -> Credential {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Credential::None;
    };
    if values.next().is_some() {
        return Credential::Malformed;
    }
    let Ok(value) = value.to_str() else {
        return Credential::Malformed;
    };
    let Some((word, rest)) = value.trim().split_once(' ') else {
        return Credential::Malformed;
    };
    let rest = rest.trim();
    if word.eq_ignore_ascii_case("bearer") {
        // RFC 6750's b64token.
        let ok = !rest.is_empty()
            && rest.bytes().all(|b| {
                b.is_ascii_alphanumeric()
                    || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
            });
        if ok {
            Credential::Bearer(rest.to_owned())
        } else {
            Credential::Malformed
        }
    } else if word.eq_ignore_ascii_case("basic") {
        let decoded = STANDARD
            .decode(rest)
            .ok()
            .and_then(|b| String::from_utf8(b).ok());
        match decoded.as_deref().and_then(|d| d.split_once(':')) {
            Some((user, password)) => Credential::Basic(user.to_owned(), password.to_owned()),
            None => Credential::Malformed,
        }
    } else {
        Credential::Other
    }
}

/// The API key at `location` under `name`; `Err` when it is given more than once.
fn api_key(parts: &Parts, location: Place, name: &str) -> Result<Option<String>, ()> {
    let mut found: Option<String> = None;
    let mut put = |v: String| {
        if found.is_some() {
            return Err(());
        }
        found = Some(v);
        Ok(())
    };
    match location {
        Place::Header => {
            for v in parts.headers.get_all(name) {
                put(v.to_str().map_err(|_| ())?.to_owned())?;
            }
        }
        Place::Query => {
            if let Some(query) = parts.uri.query() {
                for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
                    if k == name {
                        put(v.into_owned())?;
                    }
                }
            }
        }
        Place::Cookie => {
            for v in parts.headers.get_all(header::COOKIE) {
                let Ok(v) = v.to_str() else { continue };
                for pair in v.split(';') {
                    if let Some((k, val)) = pair.trim().split_once('=')
                        && k.trim() == name
                    {
                        put(val.trim().trim_matches('"').to_owned())?;
                    }
                }
            }
        }
    }
    Ok(found.filter(|v| !v.is_empty()))
}

fn warn(message: &str) {
    if tracing::dispatcher::has_been_set() {
        tracing::warn!("{message}");
    } else {
        eprintln!("a2a-card: warning: {message}");
    }
}
