//! Signing and verifying keys, from and to JWK (RFC 7517) and PEM (PKCS#8 / SPKI).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::Algorithm;

/// Why a key could not be read or made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyError {
    /// The text is neither a JWK (JSON) nor a PEM block of a supported key.
    Unreadable(String),
    /// A JWK of a type or curve other than `OKP`/`Ed25519` and `EC`/`P-256`.
    Unsupported(String),
    /// A JWK member is missing or is not base64url of the right length.
    BadMember(&'static str),
    /// A private key was needed and the JWK holds only the public part (no `d`).
    NotPrivate,
    /// The operating system's random number generator failed.
    Random(String),
}

impl std::fmt::Display for KeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyError::Unreadable(e) => write!(f, "unreadable key: {e}"),
            KeyError::Unsupported(what) => write!(
                f,
                "unsupported key {what}: expected OKP/Ed25519 (EdDSA) or EC/P-256 (ES256)"
            ),
            KeyError::BadMember(m) => {
                write!(f, "the JWK member `{m}` is missing or malformed")
            }
            KeyError::NotPrivate => {
                f.write_str("the JWK is a public key; signing needs the private member `d`")
            }
            KeyError::Random(e) => write!(f, "no randomness for a new key: {e}"),
        }
    }
}

impl std::error::Error for KeyError {}

/// A private key that signs cards: Ed25519 (`EdDSA`) or P-256 (`ES256`).
#[derive(Clone)]
#[non_exhaustive]
pub enum SigningKey {
    /// An Ed25519 key, for `EdDSA`.
    Ed25519(ed25519_dalek::SigningKey),
    /// A P-256 key, for `ES256`.
    Es256(p256::ecdsa::SigningKey),
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey({}, ..)", self.algorithm())
    }
}

/// A public key that verifies card signatures: Ed25519 (`EdDSA`) or P-256 (`ES256`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifyingKey {
    /// An Ed25519 key, for `EdDSA`.
    Ed25519(ed25519_dalek::VerifyingKey),
    /// A P-256 key, for `ES256`.
    Es256(p256::ecdsa::VerifyingKey),
}

fn member<const N: usize>(jwk: &Value, name: &'static str) -> Result<[u8; N], KeyError> {
    let text = jwk
        .get(name)
        .and_then(Value::as_str)
        .ok_or(KeyError::BadMember(name))?;
    let bytes = B64
        .decode(text.trim_end_matches('='))
        .map_err(|_| KeyError::BadMember(name))?;
    bytes.try_into().map_err(|_| KeyError::BadMember(name))
}

fn kty_crv(jwk: &Value) -> Result<Algorithm, KeyError> {
    let kty = jwk.get("kty").and_then(Value::as_str).unwrap_or("");
    let crv = jwk.get("crv").and_then(Value::as_str).unwrap_or("");
    match (kty, crv) {
        ("OKP", "Ed25519") => Ok(Algorithm::EdDSA),
        ("EC", "P-256") => Ok(Algorithm::ES256),
        _ => Err(KeyError::Unsupported(format!("kty `{kty}`, crv `{crv}`"))),
    }
}

fn parse_json(text: &str) -> Result<Value, KeyError> {
    serde_json::from_str(text).map_err(|e| KeyError::Unreadable(e.to_string()))
}

impl SigningKey {
    /// A new random key for the algorithm.
    pub fn generate(alg: Algorithm) -> Result<SigningKey, KeyError> {
        loop {
            let mut seed = [0u8; 32];
            getrandom::fill(&mut seed).map_err(|e| KeyError::Random(e.to_string()))?;
            match alg {
                Algorithm::EdDSA => {
                    return Ok(SigningKey::Ed25519(ed25519_dalek::SigningKey::from_bytes(
                        &seed,
                    )));
                }
                Algorithm::ES256 => {
                    // A 32-byte string is a valid scalar except with negligible probability;
                    // draw again when it is not.
                    if let Ok(key) = p256::ecdsa::SigningKey::from_slice(&seed) {
                        return Ok(SigningKey::Es256(key));
                    }
                }
            }
        }
    }

    /// An Ed25519 key from its 32-byte seed (deterministic; for tests and fixed vectors).
    pub fn ed25519_from_seed(seed: &[u8; 32]) -> SigningKey {
        SigningKey::Ed25519(ed25519_dalek::SigningKey::from_bytes(seed))
    }

    /// The algorithm this key signs with.
    pub fn algorithm(&self) -> Algorithm {
        match self {
            SigningKey::Ed25519(_) => Algorithm::EdDSA,
            SigningKey::Es256(_) => Algorithm::ES256,
        }
    }

    /// The public half.
    pub fn verifying_key(&self) -> VerifyingKey {
        match self {
            SigningKey::Ed25519(k) => VerifyingKey::Ed25519(k.verifying_key()),
            SigningKey::Es256(k) => VerifyingKey::Es256(*k.verifying_key()),
        }
    }

    /// A private JWK (`OKP`/`Ed25519` or `EC`/`P-256`, with `d`).
    pub fn from_jwk(jwk: &Value) -> Result<SigningKey, KeyError> {
        if jwk.get("d").is_none() {
            kty_crv(jwk)?;
            return Err(KeyError::NotPrivate);
        }
        match kty_crv(jwk)? {
            Algorithm::EdDSA => Ok(SigningKey::ed25519_from_seed(&member::<32>(jwk, "d")?)),
            Algorithm::ES256 => p256::ecdsa::SigningKey::from_slice(&member::<32>(jwk, "d")?)
                .map(SigningKey::Es256)
                .map_err(|_| KeyError::BadMember("d")),
        }
    }

    /// A PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`) of either kind.
    pub fn from_pem(pem: &str) -> Result<SigningKey, KeyError> {
        use p256::pkcs8::DecodePrivateKey as _;
        if let Ok(k) = ed25519_dalek::SigningKey::from_pkcs8_pem(pem) {
            return Ok(SigningKey::Ed25519(k));
        }
        p256::ecdsa::SigningKey::from_pkcs8_pem(pem)
            .map(SigningKey::Es256)
            .map_err(|e| {
                KeyError::Unreadable(format!("not a PKCS#8 Ed25519 or P-256 private key: {e}"))
            })
    }

    /// A private key from a JWK (text starting with `{`) or a PEM block.
    pub fn from_text(text: &str) -> Result<SigningKey, KeyError> {
        if text.trim_start().starts_with('{') {
            SigningKey::from_jwk(&parse_json(text)?)
        } else {
            SigningKey::from_pem(text)
        }
    }

    /// The private JWK, with `kid` when given and `alg`.
    pub fn to_jwk(&self, kid: Option<&str>) -> Value {
        let mut jwk = self.verifying_key().to_jwk(kid);
        let d = match self {
            SigningKey::Ed25519(k) => B64.encode(k.to_bytes()),
            SigningKey::Es256(k) => B64.encode(k.to_bytes()),
        };
        jwk["d"] = Value::String(d);
        jwk
    }

    /// Signs `message` (the JWS signing input): 64 bytes, Ed25519's, or ES256's `r || s`.
    pub(crate) fn sign_bytes(&self, message: &[u8]) -> Vec<u8> {
        use ed25519_dalek::Signer as _;
        match self {
            SigningKey::Ed25519(k) => k.sign(message).to_bytes().to_vec(),
            SigningKey::Es256(k) => {
                let sig: p256::ecdsa::Signature = p256::ecdsa::signature::Signer::sign(k, message);
                sig.to_bytes().to_vec()
            }
        }
    }
}

impl VerifyingKey {
    /// The algorithm this key verifies.
    pub fn algorithm(&self) -> Algorithm {
        match self {
            VerifyingKey::Ed25519(_) => Algorithm::EdDSA,
            VerifyingKey::Es256(_) => Algorithm::ES256,
        }
    }

    /// A public JWK (private members, when present, are ignored).
    pub fn from_jwk(jwk: &Value) -> Result<VerifyingKey, KeyError> {
        match kty_crv(jwk)? {
            Algorithm::EdDSA => ed25519_dalek::VerifyingKey::from_bytes(&member::<32>(jwk, "x")?)
                .map(VerifyingKey::Ed25519)
                .map_err(|_| KeyError::BadMember("x")),
            Algorithm::ES256 => {
                let x = member::<32>(jwk, "x")?;
                let y = member::<32>(jwk, "y")?;
                let mut sec1 = Vec::with_capacity(65);
                sec1.push(0x04);
                sec1.extend_from_slice(&x);
                sec1.extend_from_slice(&y);
                p256::ecdsa::VerifyingKey::from_sec1_bytes(&sec1)
                    .map(VerifyingKey::Es256)
                    .map_err(|_| KeyError::BadMember("x, y"))
            }
        }
    }

    /// An SPKI PEM public key (`-----BEGIN PUBLIC KEY-----`) of either kind.
    pub fn from_pem(pem: &str) -> Result<VerifyingKey, KeyError> {
        use p256::pkcs8::DecodePublicKey as _;
        if let Ok(k) = ed25519_dalek::VerifyingKey::from_public_key_pem(pem) {
            return Ok(VerifyingKey::Ed25519(k));
        }
        p256::ecdsa::VerifyingKey::from_public_key_pem(pem)
            .map(VerifyingKey::Es256)
            .map_err(|e| {
                KeyError::Unreadable(format!("not an SPKI Ed25519 or P-256 public key: {e}"))
            })
    }

    /// The public JWK, with `kid` when given, `alg` and `use: "sig"`.
    pub fn to_jwk(&self, kid: Option<&str>) -> Value {
        let mut jwk = match self {
            VerifyingKey::Ed25519(k) => json!({
                "kty": "OKP", "crv": "Ed25519", "x": B64.encode(k.to_bytes()),
            }),
            VerifyingKey::Es256(k) => {
                let point = k.to_sec1_point(false);
                let coordinate = |c: Option<&[u8]>| B64.encode(c.unwrap_or_default());
                json!({
                    "kty": "EC", "crv": "P-256",
                    "x": coordinate(point.x().map(|x| x.as_slice())),
                    "y": coordinate(point.y().map(|y| y.as_slice())),
                })
            }
        };
        jwk["alg"] = Value::String(self.algorithm().as_str().to_owned());
        jwk["use"] = Value::String("sig".to_owned());
        if let Some(kid) = kid {
            jwk["kid"] = Value::String(kid.to_owned());
        }
        jwk
    }

    /// The RFC 7638 JWK thumbprint (SHA-256, base64url): the default `kid`.
    pub fn thumbprint(&self) -> String {
        let jwk = self.to_jwk(None);
        let required: &[&str] = match self {
            VerifyingKey::Ed25519(_) => &["crv", "kty", "x"],
            VerifyingKey::Es256(_) => &["crv", "kty", "x", "y"],
        };
        let members: serde_json::Map<String, Value> = required
            .iter()
            .map(|k| ((*k).to_owned(), jwk[*k].clone()))
            .collect();
        let bytes = super::canonical::jcs(&Value::Object(members)).unwrap_or_default();
        B64.encode(Sha256::digest(&bytes))
    }

    /// Whether `signature` is this key's signature of `message`.
    pub(crate) fn verify_bytes(&self, message: &[u8], signature: &[u8]) -> bool {
        match self {
            VerifyingKey::Ed25519(k) => ed25519_dalek::Signature::from_slice(signature)
                .is_ok_and(|sig| k.verify_strict(message, &sig).is_ok()),
            VerifyingKey::Es256(k) => {
                p256::ecdsa::Signature::from_slice(signature).is_ok_and(|sig| {
                    p256::ecdsa::signature::Verifier::verify(k, message, &sig).is_ok()
                })
            }
        }
    }
}
