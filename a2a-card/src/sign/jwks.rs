//! Finding the key of a signature: the [`KeyResolver`] trait and a JWKS-backed [`Jwks`].

use serde_json::Value;

use super::keys::{KeyError, VerifyingKey};

/// Finds the public key for a signature's protected `kid` and `jku`.
///
/// The resolver decides whom to trust: a fixed key set, a store of known providers, or keys
/// fetched from a `jku` the caller vouches for. Return `None` for a key it does not know.
pub trait KeyResolver {
    /// The key named by `kid` (and `jku`, when the header has one).
    fn resolve(&self, kid: Option<&str>, jku: Option<&str>) -> Option<VerifyingKey>;
}

/// A trusted JSON Web Key Set (RFC 7517 section 5): resolves by `kid` and ignores `jku` (the
/// caller chose these keys; nothing is fetched).
///
/// ```
/// use a2a_card::sign::{Algorithm, Jwks, KeyResolver, SigningKey};
/// let key = SigningKey::generate(Algorithm::EdDSA).unwrap();
/// let jwks = serde_json::json!({ "keys": [key.verifying_key().to_jwk(Some("k1"))] });
/// let jwks = Jwks::from_json(&jwks).unwrap();
/// assert_eq!(jwks.resolve(Some("k1"), None), Some(key.verifying_key()));
/// assert_eq!(jwks.resolve(Some("k2"), None), None);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Jwks {
    keys: Vec<(Option<String>, VerifyingKey)>,
}

impl Jwks {
    /// An empty set.
    pub fn new() -> Self {
        Jwks::default()
    }

    /// Adds a key under a `kid` (or none).
    pub fn with(mut self, kid: Option<&str>, key: VerifyingKey) -> Self {
        self.keys.push((kid.map(str::to_owned), key));
        self
    }

    /// The keys of a JWKS document (`{"keys": [...]}`) or of one bare JWK. Keys of other
    /// types (RSA, ...) are skipped; a malformed Ed25519 or P-256 key is an error.
    pub fn from_json(value: &Value) -> Result<Jwks, KeyError> {
        let entries: Vec<&Value> = match value.get("keys") {
            Some(Value::Array(keys)) => keys.iter().collect(),
            Some(_) => return Err(KeyError::BadMember("keys")),
            None => vec![value],
        };
        let mut jwks = Jwks::new();
        for jwk in entries {
            match VerifyingKey::from_jwk(jwk) {
                Ok(key) => {
                    let kid = jwk.get("kid").and_then(Value::as_str);
                    jwks = jwks.with(kid, key);
                }
                Err(KeyError::Unsupported(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(jwks)
    }

    /// The keys of a JWKS document's text.
    pub fn from_text(text: &str) -> Result<Jwks, KeyError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| KeyError::Unreadable(e.to_string()))?;
        Jwks::from_json(&value)
    }

    /// How many keys the set holds.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the set holds no key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

impl KeyResolver for Jwks {
    fn resolve(&self, kid: Option<&str>, _jku: Option<&str>) -> Option<VerifyingKey> {
        self.keys
            .iter()
            .find(|(k, _)| k.as_deref() == kid)
            .map(|(_, key)| key.clone())
    }
}

impl KeyResolver for VerifyingKey {
    /// One trusted key: resolves whatever the `kid`.
    fn resolve(&self, _kid: Option<&str>, _jku: Option<&str>) -> Option<VerifyingKey> {
        Some(self.clone())
    }
}
