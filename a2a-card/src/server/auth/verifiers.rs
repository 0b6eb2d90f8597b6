//! How the credentials of each scheme are checked: the verifier traits (async closures are
//! verifiers), a fixed list of API keys, and [`Authentication`], which names a verifier per
//! scheme of the card.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::principal::{Identity, Principal};

/// Why a verifier did not accept a credential. The reason is for the server's log (at
/// `debug`); the caller is only told that the credential is not valid.
///
/// ```
/// use a2a_card::server::auth::Rejected;
/// let no = Rejected::invalid("unknown key");
/// assert!(!no.is_unavailable());
/// assert!(Rejected::unavailable("the user store is down").is_unavailable());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    unavailable: bool,
    reason: String,
}

impl Rejected {
    /// The credential is not valid (`401`).
    pub fn invalid(reason: impl Into<String>) -> Self {
        Rejected {
            unavailable: false,
            reason: reason.into(),
        }
    }

    /// The credential could not be checked now (keys or user store unreachable: `503`).
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Rejected {
            unavailable: true,
            reason: reason.into(),
        }
    }

    /// Whether the check could not be made (rather than failed).
    pub fn is_unavailable(&self) -> bool {
        self.unavailable
    }

    /// The reason, for logs.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for Rejected {}

/// Checks a bearer token (HTTP bearer, OAuth 2.0, OpenID Connect): [`JwtVerifier`](super::JwtVerifier) for JWTs,
/// your own for opaque tokens (introspection, a session store). An async closure taking the
/// token as a `String` is one.
///
/// ```
/// use a2a_card::server::auth::{Authentication, Rejected};
/// use a2a_card::Identity;
///
/// let auth = Authentication::new().token("oauth", |token: String| async move {
///     // Look the opaque token up where your issuer keeps them.
///     if token == "tok-of-alice-0123456789" {
///         Ok(Identity::new("alice").with_scopes(["fights:read"]))
///     } else {
///         Err(Rejected::invalid("unknown token"))
///     }
/// });
/// # drop(auth);
/// ```
#[async_trait]
pub trait TokenVerifier: Send + Sync + 'static {
    /// Who `token` belongs to, or why it is refused.
    async fn verify(&self, token: &str) -> Result<Identity, Rejected>;
}

#[async_trait]
impl<F, Fut> TokenVerifier for F
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Identity, Rejected>> + Send + 'static,
{
    async fn verify(&self, token: &str) -> Result<Identity, Rejected> {
        self(token.to_owned()).await
    }
}

/// Checks an API key: [`StaticApiKeys`] for a fixed list, your own (or an async closure
/// taking the key as a `String`) for a key store.
///
/// ```
/// use a2a_card::server::auth::{Authentication, Rejected};
/// use a2a_card::Identity;
///
/// let auth = Authentication::new().api_key("key", |key: String| async move {
///     Err::<Identity, _>(Rejected::invalid("no key store configured yet"))
/// });
/// # drop(auth);
/// ```
#[async_trait]
pub trait ApiKeyVerifier: Send + Sync + 'static {
    /// Who `key` belongs to, or why it is refused.
    async fn verify(&self, key: &str) -> Result<Identity, Rejected>;
}

#[async_trait]
impl<F, Fut> ApiKeyVerifier for F
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Identity, Rejected>> + Send + 'static,
{
    async fn verify(&self, key: &str) -> Result<Identity, Rejected> {
        self(key.to_owned()).await
    }
}

/// Checks an HTTP basic user name and password (an async closure taking both as `String`s is
/// one). Compare passwords against stored hashes, in constant time.
///
/// ```
/// use a2a_card::server::auth::{Authentication, Rejected};
/// use a2a_card::Identity;
///
/// let auth = Authentication::new().basic("basic", |user: String, password: String| async move {
///     let _ = password; // check it against the stored hash of `user`'s password
///     Err::<Identity, _>(Rejected::invalid(format!("no password store for {user}")))
/// });
/// # drop(auth);
/// ```
#[async_trait]
pub trait BasicVerifier: Send + Sync + 'static {
    /// Who `user` is, when `password` is theirs, or why not.
    async fn verify(&self, user: &str, password: &str) -> Result<Identity, Rejected>;
}

#[async_trait]
impl<F, Fut> BasicVerifier for F
where
    F: Fn(String, String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Identity, Rejected>> + Send + 'static,
{
    async fn verify(&self, user: &str, password: &str) -> Result<Identity, Rejected> {
        self(user.to_owned(), password.to_owned()).await
    }
}

/// A fixed list of API keys, each with the identity it stands for. Keys are kept as SHA-256
/// digests and every key is compared, in constant time, on every check.
///
/// ```
/// use a2a_card::server::auth::{ApiKeyVerifier, StaticApiKeys};
/// use a2a_card::Identity;
///
/// let keys = StaticApiKeys::new().key("k-0123456789abcdef", Identity::new("team-blue"));
/// # tokio_test(async {
/// assert_eq!(keys.verify("k-0123456789abcdef").await.unwrap().subject(), "team-blue");
/// assert!(keys.verify("k-0123456789abcdeF").await.is_err());
/// # });
/// # fn tokio_test(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Default)]
pub struct StaticApiKeys {
    keys: Vec<([u8; 32], Identity)>,
}

impl fmt::Debug for StaticApiKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticApiKeys")
            .field("keys", &self.keys.len())
            .finish()
    }
}

impl StaticApiKeys {
    /// No keys yet.
    pub fn new() -> Self {
        StaticApiKeys::default()
    }

    /// Accepts `key`, as `identity`.
    pub fn key(mut self, key: impl AsRef<[u8]>, identity: Identity) -> Self {
        self.keys
            .push((Sha256::digest(key.as_ref()).into(), identity));
        self
    }
}

#[async_trait]
impl ApiKeyVerifier for StaticApiKeys {
    async fn verify(&self, key: &str) -> Result<Identity, Rejected> {
        let digest: [u8; 32] = Sha256::digest(key.as_bytes()).into();
        let mut found: Option<&Identity> = None;
        for (known, identity) in &self.keys {
            if bool::from(known.ct_eq(&digest)) && found.is_none() {
                found = Some(identity);
            }
        }
        found
            .cloned()
            .ok_or_else(|| Rejected::invalid("unknown API key"))
    }
}

#[derive(Clone)]
pub(super) enum Verifier {
    Token(Arc<dyn TokenVerifier>),
    ApiKey(Arc<dyn ApiKeyVerifier>),
    Basic(Arc<dyn BasicVerifier>),
}

impl Verifier {
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Verifier::Token(_) => "a token verifier (Authentication::token)",
            Verifier::ApiKey(_) => "an API key verifier (Authentication::api_key)",
            Verifier::Basic(_) => "a basic verifier (Authentication::basic)",
        }
    }
}

/// How to check the credentials of each security scheme the card declares, by scheme name.
/// Give it to [`Server::authentication`](crate::server::Server::authentication).
///
/// Which verifier fits which scheme: [`token`](Self::token) for HTTP bearer, OAuth 2.0 and
/// OpenID Connect; [`api_key`](Self::api_key) for API keys; [`basic`](Self::basic) for HTTP
/// basic. The server refuses to start when a scheme the card requires has no verifier, or one
/// of the wrong kind.
///
/// ```
/// use a2a_card::server::auth::{Authentication, StaticApiKeys};
/// use a2a_card::Identity;
///
/// let auth = Authentication::new()
///     .api_key("key", StaticApiKeys::new().key("k-0123456789abcdef", Identity::new("team-blue")))
///     .realm("fights");
/// # drop(auth);
/// ```
#[derive(Clone)]
pub struct Authentication {
    pub(super) verifiers: Vec<(String, Verifier)>,
    pub(super) realm: String,
    pub(super) tenants: Option<TenantsOf>,
    pub(super) ownership: super::Ownership,
}

/// Which tenants a principal may use (see [`Authentication::tenants`]).
pub(crate) type TenantsOf = Arc<dyn Fn(&Principal) -> Vec<String> + Send + Sync>;

impl Default for Authentication {
    fn default() -> Self {
        Authentication {
            verifiers: Vec::new(),
            realm: "a2a".into(),
            tenants: None,
            ownership: super::Ownership::default(),
        }
    }
}

impl fmt::Debug for Authentication {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authentication")
            .field(
                "schemes",
                &self.verifiers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("tenants", &self.tenants.is_some())
            .field("ownership", &self.ownership)
            .field("realm", &self.realm)
            .finish()
    }
}

impl Authentication {
    /// No verifiers yet.
    pub fn new() -> Self {
        Authentication::default()
    }

    fn with(mut self, scheme: impl Into<String>, verifier: Verifier) -> Self {
        let scheme = scheme.into();
        self.verifiers.retain(|(n, _)| *n != scheme);
        self.verifiers.push((scheme, verifier));
        self
    }

    /// Checks the bearer tokens of scheme `scheme` (HTTP bearer, OAuth 2.0 or OpenID Connect)
    /// with `verifier`.
    pub fn token(self, scheme: impl Into<String>, verifier: impl TokenVerifier) -> Self {
        self.with(scheme, Verifier::Token(Arc::new(verifier)))
    }

    /// Checks the API keys of scheme `scheme` with `verifier`.
    pub fn api_key(self, scheme: impl Into<String>, verifier: impl ApiKeyVerifier) -> Self {
        self.with(scheme, Verifier::ApiKey(Arc::new(verifier)))
    }

    /// Checks the user names and passwords of HTTP basic scheme `scheme` with `verifier`.
    pub fn basic(self, scheme: impl Into<String>, verifier: impl BasicVerifier) -> Self {
        self.with(scheme, Verifier::Basic(Arc::new(verifier)))
    }

    /// The `realm` of the `WWW-Authenticate` challenges (default `a2a`).
    pub fn realm(mut self, realm: impl Into<String>) -> Self {
        self.realm = realm.into();
        self
    }

    /// Who may use which tenant: `tenants` names the tenants a caller belongs to (from a
    /// token's claim, an API key's owner...). A call made in a tenant the caller does not
    /// belong to, or by an anonymous caller, is refused with `403` before anything else is
    /// done; a call in the default tenant (none named) is let through as without tenants.
    /// Without this, tenants are namespaces only: any caller may name any tenant, and finds
    /// that tenant's tasks alone (A2A leaves it so).
    ///
    /// ```
    /// use a2a_card::server::auth::Authentication;
    ///
    /// // A token's `tenant` claim names its tenant.
    /// let auth = Authentication::new().tenants(|caller| {
    ///     caller.claims().get("tenant").and_then(|t| t.as_str()).map(str::to_owned).into_iter().collect()
    /// });
    /// # drop(auth);
    /// ```
    pub fn tenants<F>(mut self, tenants: F) -> Self
    where
        F: Fn(&Principal) -> Vec<String> + Send + Sync + 'static,
    {
        self.tenants = Some(Arc::new(tenants));
        self
    }

    /// Whose tasks a caller reaches (see [`Ownership`](super::Ownership)): by default each
    /// caller its own ([`Ownership::subject`](super::Ownership::subject)).
    ///
    /// ```
    /// use a2a_card::server::auth::{Authentication, Ownership};
    ///
    /// let auth = Authentication::new().ownership(Ownership::subject().admin_scope("tasks:admin"));
    /// # drop(auth);
    /// ```
    pub fn ownership(mut self, ownership: super::Ownership) -> Self {
        self.ownership = ownership;
        self
    }
}
