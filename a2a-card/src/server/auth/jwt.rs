//! JWT access tokens (HTTP bearer, OAuth 2.0, OpenID Connect), checked with `jsonwebtoken`.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, JwkSet, PublicKeyUse};
use jsonwebtoken::{DecodingKey, Validation};
use serde_json::{Map, Value};

use super::{Identity, Rejected, TokenVerifier};
use crate::outbound::error_chain;

/// The JWS algorithms a [`JwtVerifier`] can accept (`none` is not one of them).
pub use jsonwebtoken::Algorithm;

/// The default leeway on `exp` and `nbf`: 30 seconds of clock skew.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);

/// A key that cannot be used to check tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError(String);

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KeyError {}

/// One verification key, pinned to exactly one algorithm: a token is checked with it only when
/// its header names that algorithm (and the verifier's allow-list has it), so the token's own
/// `alg` never chooses how it is checked.
///
/// ```
/// use a2a_card::server::auth::{Algorithm, JwtKey};
/// use jsonwebtoken::DecodingKey;
///
/// let public = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n";
/// let key = JwtKey::new(DecodingKey::from_ed_pem(public.as_bytes())?, Algorithm::EdDSA)?
///     .with_kid("2026-01");
/// assert_eq!(key.kid(), Some("2026-01"));
/// // An Ed25519 key cannot be pinned to HS256 (nor RS256, nor ES256).
/// assert!(JwtKey::new(DecodingKey::from_ed_pem(public.as_bytes())?, Algorithm::HS256).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct JwtKey {
    kid: Option<String>,
    algorithm: Algorithm,
    key: DecodingKey,
}

impl fmt::Debug for JwtKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtKey")
            .field("kid", &self.kid)
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

impl JwtKey {
    /// `key`, used only for tokens signed with `algorithm`. An asymmetric key pinned to an HMAC
    /// algorithm (or any key to an algorithm of another family) is refused: that is the
    /// algorithm-confusion attack.
    pub fn new(key: DecodingKey, algorithm: Algorithm) -> Result<Self, KeyError> {
        if !key.family().algorithms().contains(&algorithm) {
            return Err(KeyError(format!(
                "a {:?} key cannot check {algorithm:?} signatures",
                key.family()
            )));
        }
        Ok(JwtKey {
            kid: None,
            algorithm,
            key,
        })
    }

    /// A shared HMAC secret for `algorithm` (`HS256`, `HS384` or `HS512`). Use this only with
    /// an issuer that shares the secret with you; never with a public key's bytes.
    pub fn hmac(secret: &[u8], algorithm: Algorithm) -> Result<Self, KeyError> {
        if secret.len() < 32 {
            return Err(KeyError(
                "an HMAC secret has at least 32 bytes (RFC 7518 section 3.2)".into(),
            ));
        }
        JwtKey::new(DecodingKey::from_secret(secret), algorithm)
    }

    /// The key id tokens name in their `kid` header.
    pub fn with_kid(mut self, kid: impl Into<String>) -> Self {
        self.kid = Some(kid.into());
        self
    }

    /// The key id, if any.
    pub fn kid(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    /// The one algorithm this key checks.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
}

/// A set of verification keys: static ones, or those of a JWKS document.
///
/// ```
/// use a2a_card::server::auth::JwtKeys;
///
/// let jwks = r#"{"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "k1", "use": "sig",
///                           "x": "Gb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE"}]}"#;
/// let keys = JwtKeys::from_jwks(jwks)?;
/// assert_eq!(keys.len(), 1);
/// # Ok::<(), a2a_card::server::auth::KeyError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct JwtKeys {
    keys: Vec<JwtKey>,
}

impl JwtKeys {
    /// These keys.
    pub fn new(keys: impl IntoIterator<Item = JwtKey>) -> Self {
        JwtKeys {
            keys: keys.into_iter().collect(),
        }
    }

    /// The signature keys of a JWKS document (RFC 7517). Each key's algorithm is its `alg`, or
    /// follows from its type (`EC` P-256: ES256, P-384: ES384; `OKP` Ed25519: EdDSA; `RSA`:
    /// RS256). Symmetric (`oct`) keys, encryption keys (`use: enc`) and keys of unknown types
    /// are left out: a JWKS publishes public keys.
    pub fn from_jwks(json: &str) -> Result<Self, KeyError> {
        let set: JwkSet = serde_json::from_str(json)
            .map_err(|e| KeyError(format!("not a JWKS document: {e}")))?;
        let mut keys = Vec::new();
        for jwk in &set.keys {
            if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
                continue;
            }
            let algorithm = match jwk.common.key_algorithm {
                Some(alg) => match Algorithm::from_str(&format!("{alg:?}")) {
                    Ok(alg) => alg,
                    Err(_) => continue,
                },
                None => match &jwk.algorithm {
                    AlgorithmParameters::EllipticCurve(p) => match p.curve {
                        EllipticCurve::P256 => Algorithm::ES256,
                        EllipticCurve::P384 => Algorithm::ES384,
                        _ => continue,
                    },
                    AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => {
                        Algorithm::EdDSA
                    }
                    AlgorithmParameters::RSA(_) => Algorithm::RS256,
                    _ => continue,
                },
            };
            if matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)) {
                continue;
            }
            let Ok(key) = DecodingKey::from_jwk(jwk) else {
                continue;
            };
            let Ok(mut key) = JwtKey::new(key, algorithm) else {
                continue;
            };
            key.kid = jwk.common.key_id.clone();
            keys.push(key);
        }
        Ok(JwtKeys { keys })
    }

    /// How many keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The keys a token with this header may be checked with.
    fn candidates<'a>(
        &'a self,
        kid: Option<&'a str>,
        alg: Algorithm,
    ) -> impl Iterator<Item = &'a JwtKey> + 'a {
        self.keys.iter().filter(move |k| {
            k.algorithm == alg
                && match kid {
                    Some(kid) => k.kid.as_deref() == Some(kid),
                    None => true,
                }
        })
    }
}

/// Where a [`JwtVerifier`] gets the JWKS document of a URL: fetches it (the caching is
/// [`CachedJwks`]'s).
///
/// ```
/// use a2a_card::server::auth::JwksFetcher;
///
/// struct Fixed(&'static str);
/// #[async_trait::async_trait]
/// impl JwksFetcher for Fixed {
///     async fn fetch(&self, _url: &str) -> Result<String, String> {
///         Ok(self.0.to_owned())
///     }
/// }
/// ```
#[async_trait]
pub trait JwksFetcher: Send + Sync + 'static {
    /// The JWKS document at `url`, or why it could not be had.
    async fn fetch(&self, url: &str) -> Result<String, String>;
}

/// Resolves the keys of a JWKS URL for a [`JwtVerifier`].
#[async_trait]
pub trait JwksResolver: Send + Sync + 'static {
    /// The keys at `url`. `refresh` asks for a fresh copy: a token named a key id the cached
    /// copy does not have (the issuer may have rotated its keys).
    async fn keys(&self, url: &str, refresh: bool) -> Result<Arc<JwtKeys>, Rejected>;
}

/// Fetches JWKS documents over `http` or `https` (rustls, with the platform's certificate
/// roots, and any given to [`HttpJwks::with_root_certificates_pem`]).
///
/// ```
/// use a2a_card::server::auth::{CachedJwks, HttpJwks};
/// let jwks = CachedJwks::new(HttpJwks::default());
/// # drop(jwks);
/// ```
#[derive(Debug, Clone, Default)]
pub struct HttpJwks {
    client: reqwest::Client,
}

impl HttpJwks {
    /// A fetcher that trusts the certificates of a PEM bundle beside the platform's roots, for
    /// an issuer whose certificate a private CA signed; an error says what is wrong with the
    /// bundle.
    ///
    /// ```no_run
    /// use a2a_card::server::auth::{CachedJwks, HttpJwks};
    /// let ca = std::fs::read("internal-ca.pem").unwrap();
    /// let jwks = CachedJwks::new(HttpJwks::with_root_certificates_pem(&ca).unwrap());
    /// # drop(jwks);
    /// ```
    pub fn with_root_certificates_pem(pem: impl AsRef<[u8]>) -> Result<HttpJwks, String> {
        let mut roots = crate::outbound::ExtraRoots::default();
        roots.add(pem.as_ref());
        let client = roots
            .apply(reqwest::Client::builder())?
            .build()
            .map_err(|e| format!("the JWKS client cannot be built: {e}"))?;
        Ok(HttpJwks { client })
    }
}

#[async_trait]
impl JwksFetcher for HttpJwks {
    async fn fetch(&self, url: &str) -> Result<String, String> {
        let response = self
            .client
            .get(url)
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .map_err(|e| format!("fetching the JWKS failed: {}", error_chain(&e)))?;
        if !response.status().is_success() {
            return Err(format!("the JWKS URL answered {}", response.status()));
        }
        response
            .text()
            .await
            .map_err(|e| format!("reading the JWKS failed: {}", error_chain(&e)))
    }
}

/// A [`JwksResolver`] that caches each URL's keys for a while ([`CachedJwks::ttl`], default 10
/// minutes), and fetches again at most once a [`min_refresh`](CachedJwks::min_refresh)
/// (default 30 seconds) when a token names a key id it does not know.
///
/// ```
/// use std::time::Duration;
/// use a2a_card::server::auth::{CachedJwks, HttpJwks};
/// let jwks = CachedJwks::new(HttpJwks::default())
///     .ttl(Duration::from_secs(300))
///     .min_refresh(Duration::from_secs(10));
/// # drop(jwks);
/// ```
pub struct CachedJwks<F> {
    fetcher: F,
    ttl: Duration,
    min_refresh: Duration,
    cache: RwLock<HashMap<String, (Instant, Arc<JwtKeys>)>>,
}

impl<F> fmt::Debug for CachedJwks<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachedJwks")
            .field("ttl", &self.ttl)
            .field("min_refresh", &self.min_refresh)
            .finish_non_exhaustive()
    }
}

impl<F: JwksFetcher> CachedJwks<F> {
    /// Caches what `fetcher` fetches.
    pub fn new(fetcher: F) -> Self {
        CachedJwks {
            fetcher,
            ttl: Duration::from_secs(600),
            min_refresh: Duration::from_secs(30),
            cache: RwLock::new(HashMap::new()),
        }
    }

    /// How long keys are kept before they are fetched again.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The shortest time between two fetches of one URL forced by unknown key ids.
    pub fn min_refresh(mut self, min_refresh: Duration) -> Self {
        self.min_refresh = min_refresh;
        self
    }
}

#[async_trait]
impl<F: JwksFetcher> JwksResolver for CachedJwks<F> {
    async fn keys(&self, url: &str, refresh: bool) -> Result<Arc<JwtKeys>, Rejected> {
        let cached = self
            .cache
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(url)
            .cloned();
        if let Some((at, keys)) = &cached {
            let age = at.elapsed();
            if age < self.ttl && (!refresh || age < self.min_refresh) {
                return Ok(Arc::clone(keys));
            }
        }
        match self.fetcher.fetch(url).await {
            Ok(json) => {
                let keys = Arc::new(JwtKeys::from_jwks(&json).map_err(|e| {
                    Rejected::unavailable(format!("the JWKS at {url} is not usable: {e}"))
                })?);
                self.cache
                    .write()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(url.to_owned(), (Instant::now(), Arc::clone(&keys)));
                Ok(keys)
            }
            // Keys that are still there serve until the issuer answers again.
            Err(why) => match cached {
                Some((_, keys)) => Ok(keys),
                None => Err(Rejected::unavailable(why)),
            },
        }
    }
}

enum KeySource {
    Static(Arc<JwtKeys>),
    Url {
        url: String,
        resolver: Arc<dyn JwksResolver>,
    },
}

/// Checks JWT access tokens: the signature against configured keys (static, or a JWKS URL),
/// the algorithm against an explicit allow-list and the key's own algorithm, `exp` (required)
/// and `nbf` with a small leeway, `iss` and `aud` when configured. The identity is the token's
/// `sub` (or `client_id`), its scopes those of `scope` (space-separated) or `scp`, its claims
/// all of them.
///
/// ```
/// use a2a_card::server::auth::{Algorithm, Authentication, JwtKeys, JwtVerifier};
///
/// let jwks = r#"{"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "k1",
///                           "x": "Gb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE"}]}"#;
/// let verifier = JwtVerifier::new(JwtKeys::from_jwks(jwks)?, [Algorithm::EdDSA])
///     .issuer("https://auth.example.com")
///     .audience("https://fights.example.com");
/// let auth = Authentication::new().token("bearer", verifier);
/// # drop(auth);
/// # Ok::<(), a2a_card::server::auth::KeyError>(())
/// ```
pub struct JwtVerifier {
    keys: KeySource,
    algorithms: Vec<Algorithm>,
    issuers: Vec<String>,
    audiences: Vec<String>,
    leeway: Duration,
    /// Tokens already verified (by SHA-256), with their identity and until when to trust them.
    verified: Option<Verified>,
}

/// How long a verified token is trusted without being checked again, at most (its own `exp`
/// comes first): a key removed from the key set stops being honoured within this time.
pub const VERIFIED_TOKEN_TTL: Duration = Duration::from_secs(60);
/// How many verified tokens are remembered at most (the memory is dropped when full).
const VERIFIED_TOKENS: usize = 10_000;

/// Verified tokens, by the SHA-256 of the token.
struct Verified(RwLock<HashMap<[u8; 32], (Identity, Instant)>>);

impl Verified {
    fn digest(token: &str) -> [u8; 32] {
        use sha2::Digest;
        sha2::Sha256::digest(token.as_bytes()).into()
    }

    fn get(&self, token: &str) -> Option<Identity> {
        let map = self.0.read().unwrap_or_else(|p| p.into_inner());
        match map.get(&Self::digest(token)) {
            Some((identity, until)) if Instant::now() < *until => Some(identity.clone()),
            _ => None,
        }
    }

    fn put(&self, token: &str, identity: &Identity, exp: Option<i64>) {
        let now = chrono::Utc::now().timestamp();
        let left = exp.map_or(Duration::ZERO, |exp| {
            Duration::from_secs(u64::try_from(exp - now).unwrap_or(0))
        });
        let ttl = left.min(VERIFIED_TOKEN_TTL);
        if ttl.is_zero() {
            return;
        }
        let mut map = self.0.write().unwrap_or_else(|p| p.into_inner());
        if map.len() >= VERIFIED_TOKENS {
            map.clear();
        }
        map.insert(
            Self::digest(token),
            (identity.clone(), Instant::now() + ttl),
        );
    }
}

impl fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("algorithms", &self.algorithms)
            .field("issuers", &self.issuers)
            .field("audiences", &self.audiences)
            .field("leeway", &self.leeway)
            .finish_non_exhaustive()
    }
}

impl JwtVerifier {
    /// Checks tokens with `keys`, accepting only `algorithms`.
    pub fn new(keys: JwtKeys, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        JwtVerifier::with_source(KeySource::Static(Arc::new(keys)), algorithms)
    }

    /// Checks tokens with the keys of the JWKS document at `url`, as `resolver` gets them
    /// (e.g. [`CachedJwks`]), accepting only `algorithms`.
    pub fn from_jwks_url(
        url: impl Into<String>,
        resolver: impl JwksResolver,
        algorithms: impl IntoIterator<Item = Algorithm>,
    ) -> Self {
        JwtVerifier::with_source(
            KeySource::Url {
                url: url.into(),
                resolver: Arc::new(resolver),
            },
            algorithms,
        )
    }

    fn with_source(keys: KeySource, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        JwtVerifier {
            keys,
            algorithms: algorithms.into_iter().collect(),
            issuers: Vec::new(),
            audiences: Vec::new(),
            leeway: DEFAULT_LEEWAY,
            verified: Some(Verified(RwLock::new(HashMap::new()))),
        }
    }

    /// Checks every token in full on every request, remembering none. By default a token that
    /// verified is trusted again, without its signature being checked, for at most
    /// [`VERIFIED_TOKEN_TTL`] and never past its own `exp` (the same token bytes only; any
    /// other token is checked in full).
    pub fn without_cache(mut self) -> Self {
        self.verified = None;
        self
    }

    /// Requires `iss` to be `issuer` (call again to accept several).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuers.push(issuer.into());
        self
    }

    /// Requires `aud` to name `audience` (call again to accept several). Without one, `aud` is
    /// not checked: set it, so that a token minted for another service is refused.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// The clock skew allowed on `exp` and `nbf` ([`DEFAULT_LEEWAY`]).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    fn validation(&self, algorithm: Algorithm) -> Validation {
        let mut v = Validation::new(algorithm);
        v.leeway = self.leeway.as_secs();
        v.validate_nbf = true;
        v.validate_exp = true;
        v.set_required_spec_claims(&["exp"]);
        if self.issuers.is_empty() {
            v.iss = None;
        } else {
            v.set_issuer(&self.issuers);
            v.required_spec_claims.insert("iss".into());
        }
        if self.audiences.is_empty() {
            v.validate_aud = false;
        } else {
            v.set_audience(&self.audiences);
            v.required_spec_claims.insert("aud".into());
        }
        v
    }

    fn check(&self, token: &str, keys: &JwtKeys, alg: Algorithm, kid: Option<&str>) -> KeyCheck {
        let mut tried = false;
        for key in keys.candidates(kid, alg) {
            tried = true;
            match jsonwebtoken::decode::<Map<String, Value>>(
                token,
                &key.key,
                &self.validation(key.algorithm),
            ) {
                Ok(data) => return KeyCheck::Valid(data.claims),
                Err(e) => {
                    if !matches!(e.kind(), jsonwebtoken::errors::ErrorKind::InvalidSignature) {
                        return KeyCheck::Invalid(format!("{e}"));
                    }
                }
            }
        }
        if tried {
            KeyCheck::Invalid("bad signature".into())
        } else {
            KeyCheck::UnknownKey
        }
    }
}

enum KeyCheck {
    Valid(Map<String, Value>),
    Invalid(String),
    UnknownKey,
}

/// The identity a verified token's claims give.
fn identity(claims: Map<String, Value>) -> Identity {
    let subject = ["sub", "client_id", "azp"]
        .iter()
        .find_map(|k| claims.get(*k).and_then(Value::as_str))
        .unwrap_or_default()
        .to_owned();
    let mut scopes: Vec<String> = Vec::new();
    for key in ["scope", "scp"] {
        match claims.get(key) {
            Some(Value::String(s)) => scopes.extend(s.split_whitespace().map(str::to_owned)),
            Some(Value::Array(a)) => {
                scopes.extend(a.iter().filter_map(Value::as_str).map(str::to_owned))
            }
            _ => {}
        }
    }
    Identity::new(subject)
        .with_scopes(scopes)
        .with_claims(claims)
}

#[async_trait]
impl TokenVerifier for JwtVerifier {
    async fn verify(&self, token: &str) -> Result<Identity, Rejected> {
        if let Some(identity) = self.verified.as_ref().and_then(|v| v.get(token)) {
            return Ok(identity);
        }
        // `alg: none` and unknown algorithms do not parse into a header.
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| Rejected::invalid(format!("not a JWT: {e}")))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(Rejected::invalid(format!(
                "algorithm {:?} is not allowed",
                header.alg
            )));
        }
        let kid = header.kid.as_deref();
        let checked = match &self.keys {
            KeySource::Static(keys) => self.check(token, keys, header.alg, kid),
            KeySource::Url { url, resolver } => {
                let keys = resolver.keys(url, false).await?;
                match self.check(token, &keys, header.alg, kid) {
                    KeyCheck::UnknownKey if kid.is_some() => {
                        let keys = resolver.keys(url, true).await?;
                        self.check(token, &keys, header.alg, kid)
                    }
                    checked => checked,
                }
            }
        };
        match checked {
            KeyCheck::Valid(claims) => {
                let exp = claims.get("exp").and_then(Value::as_i64);
                let identity = identity(claims);
                if let Some(verified) = &self.verified {
                    verified.put(token, &identity, exp);
                }
                Ok(identity)
            }
            KeyCheck::Invalid(why) => Err(Rejected::invalid(why)),
            KeyCheck::UnknownKey => Err(Rejected::invalid("no key for the token's kid and alg")),
        }
    }
}
