//! Signed Agent Cards (A2A 1.0 section 8.4): sign a card, verify a card, one call each.
//!
//! A signature is a JWS (RFC 7515) with a detached payload, kept in the card's `signatures` as
//! `{protected, signature, header?}`. The protected header is `{"alg", "kid", "typ": "JOSE"}`
//! plus `jku` when given, written in RFC 8785 form. The payload is [`canonical_payload`]: the
//! card in the 1.0 profile, restricted to the fields of the 1.0 protobuf `AgentCard` (what the
//! official SDKs parse and sign), with empty and default values removed as they do, in RFC 8785
//! form. The signing input is `BASE64URL(protected) '.' BASE64URL(payload)`.
//!
//! The root `schemas` key is not a protobuf field, so an official SDK would neither sign nor
//! see it; [`sign`] binds it instead through `params.schemasDigest` in the input/output schemas
//! extension entry (a field every SDK signs), and [`verify`] checks that digest.
//!
//! Other keys outside the protobuf model (a card's `extra` fields) are not covered by the
//! signature, in this crate as in the official SDKs.
//!
//! ```
//! use a2a_card::{AgentCard, AgentSkill};
//! use a2a_card::sign::{self, Algorithm, Jwks, SignOptions, SigningKey, VerifyError};
//!
//! let card = AgentCard::builder("Echo", "Repeats every message back.", "1.0.0")
//!     .jsonrpc("https://echo.example.com/a2a")
//!     .skill(AgentSkill::builder("echo", "Echo", "Returns the input unchanged."))
//!     .build()?;
//! let key = SigningKey::generate(Algorithm::EdDSA)?;
//! let signed = sign::sign(&card, &key, SignOptions::kid("key-1"))?;
//!
//! let trusted = Jwks::new().with(Some("key-1"), key.verifying_key());
//! let ok = sign::verify(&signed, &trusted, &[Algorithm::EdDSA])?;
//! assert_eq!(ok.kid, "key-1");
//!
//! let mut tampered = signed.clone();
//! tampered.name = "Evil Echo".into();
//! assert_eq!(
//!     sign::verify(&tampered, &trusted, &[Algorithm::EdDSA]),
//!     Err(VerifyError::SignatureMismatch)
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod canonical;
mod error;
mod jwks;
mod keys;

use std::fmt;
use std::str::FromStr;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde_json::{Map, Value};

use crate::card::{AgentCard, AgentCardSignature};
use crate::schema::IO_SCHEMAS_EXTENSION_URI;

pub use canonical::{
    CanonicalError, MAX_DEPTH, SCHEMAS_DIGEST_PARAM, canonical_payload, schemas_digest,
    value_digest,
};
pub use error::{SignError, VerifyError};
pub use jwks::{Jwks, KeyResolver};
pub use keys::{KeyError, SigningKey, VerifyingKey};

/// A JWS algorithm this crate signs and verifies with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// Ed25519 (RFC 8037), deterministic.
    EdDSA,
    /// ECDSA on P-256 with SHA-256; the signature is the 64-byte `r || s` (RFC 7518 3.4).
    ES256,
}

impl Algorithm {
    /// Every supported algorithm.
    pub const ALL: [Algorithm; 2] = [Algorithm::EdDSA, Algorithm::ES256];

    /// The JWS `alg` name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Algorithm::EdDSA => "EdDSA",
            Algorithm::ES256 => "ES256",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Algorithm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "EdDSA" => Ok(Algorithm::EdDSA),
            "ES256" => Ok(Algorithm::ES256),
            other => Err(format!(
                "unsupported algorithm `{other}`: expected EdDSA or ES256"
            )),
        }
    }
}

/// How to sign: the protected `kid` and `jku`, and an unprotected header.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct SignOptions {
    /// The key id; default: the key's RFC 7638 thumbprint.
    pub kid: Option<String>,
    /// The URL of a JWKS holding the public key.
    pub jku: Option<String>,
    /// The unprotected header, kept as given (not signed).
    pub header: Option<Map<String, Value>>,
}

impl SignOptions {
    /// Options with this key id.
    pub fn kid(kid: impl Into<String>) -> Self {
        SignOptions {
            kid: Some(kid.into()),
            ..SignOptions::default()
        }
    }

    /// Sets the key id.
    pub fn with_kid(mut self, kid: impl Into<String>) -> Self {
        self.kid = Some(kid.into());
        self
    }

    /// Sets the JWKS URL (`jku`).
    pub fn with_jku(mut self, jku: impl Into<String>) -> Self {
        self.jku = Some(jku.into());
        self
    }

    /// Sets the unprotected header.
    pub fn with_header(mut self, header: Map<String, Value>) -> Self {
        self.header = Some(header);
        self
    }
}

/// The signature that verified.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifiedSignature {
    /// Its index in the card's `signatures`.
    pub index: usize,
    /// Its algorithm.
    pub algorithm: Algorithm,
    /// Its protected `kid`.
    pub kid: String,
    /// Its protected `jku`, if any.
    pub jku: Option<String>,
}

/// Sets `params.schemasDigest` on the input/output schemas extension entry, adding the entry
/// when the card has schemas and no entry. Cards with neither are left alone.
///
/// [`sign`] does this itself; call it to prepare a card that another signer (an official SDK)
/// will sign, so that [`verify`] finds its schemas bound.
pub fn bind_schemas(card: &mut AgentCard) -> Result<(), CanonicalError> {
    let has_entry = card
        .capabilities
        .extension(IO_SCHEMAS_EXTENSION_URI)
        .is_some();
    if card.schemas.is_empty() && !has_entry {
        return Ok(());
    }
    let digest = schemas_digest(card)?;
    if !has_entry {
        card.capabilities
            .extensions
            .push(crate::schema::io_schemas_extension());
    }
    for ext in &mut card.capabilities.extensions {
        if ext.uri == IO_SCHEMAS_EXTENSION_URI {
            ext.params.get_or_insert_with(Map::new).insert(
                SCHEMAS_DIGEST_PARAM.to_owned(),
                Value::String(digest.clone()),
            );
        }
    }
    Ok(())
}

/// Signs a card: returns it with the schemas digest set and one more signature.
///
/// Signatures already on the card stay (they cover the same payload unless the digest changed).
pub fn sign(
    card: &AgentCard,
    key: &SigningKey,
    options: SignOptions,
) -> Result<AgentCard, SignError> {
    let mut card = card.clone();
    bind_schemas(&mut card).map_err(SignError::Canonical)?;
    let payload = canonical_payload(&card).map_err(SignError::Canonical)?;
    let alg = key.algorithm();
    let kid = options
        .kid
        .unwrap_or_else(|| key.verifying_key().thumbprint());
    let mut header = Map::new();
    header.insert("alg".into(), Value::String(alg.as_str().to_owned()));
    header.insert("kid".into(), Value::String(kid));
    header.insert("typ".into(), Value::String("JOSE".to_owned()));
    if let Some(jku) = options.jku {
        header.insert("jku".into(), Value::String(jku));
    }
    let header = canonical::jcs(&Value::Object(header)).map_err(SignError::Canonical)?;
    let protected = B64.encode(header);
    let input = format!("{protected}.{}", B64.encode(&payload));
    let signature = B64.encode(key.sign_bytes(input.as_bytes()));
    card.signatures.push(AgentCardSignature {
        protected,
        signature,
        header: options.header,
        ..AgentCardSignature::default()
    });
    Ok(card)
}

/// Verifies a card: accepted when one of its signatures verifies with a key from `keys`, by
/// an algorithm in `allowed`, and the schemas still match the signed digest.
///
/// With one signature the error is that signature's; with several,
/// [`VerifyError::AllRejected`] lists each.
pub fn verify(
    card: &AgentCard,
    keys: &dyn KeyResolver,
    allowed: &[Algorithm],
) -> Result<VerifiedSignature, VerifyError> {
    if card.signatures.is_empty() {
        return Err(VerifyError::NoSignatures);
    }
    let payload = B64.encode(canonical_payload(card)?);
    let mut errors = Vec::new();
    for (index, sig) in card.signatures.iter().enumerate() {
        match verify_one(sig, index, &payload, keys, allowed) {
            Ok(verified) => {
                check_schemas(card)?;
                return Ok(verified);
            }
            Err(e) => errors.push(e),
        }
    }
    if errors.len() == 1 {
        Err(errors.remove(0))
    } else {
        Err(VerifyError::AllRejected(errors))
    }
}

fn check_schemas(card: &AgentCard) -> Result<(), VerifyError> {
    let signed = card
        .capabilities
        .extension(IO_SCHEMAS_EXTENSION_URI)
        .and_then(|ext| ext.params.as_ref())
        .and_then(|params| params.get(SCHEMAS_DIGEST_PARAM));
    if signed.is_none() && card.schemas.is_empty() {
        return Ok(());
    }
    let actual = schemas_digest(card)?;
    match signed {
        Some(Value::String(s)) if *s == actual => Ok(()),
        other => Err(VerifyError::SchemasDigestMismatch {
            signed: other.map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned)),
            actual,
        }),
    }
}

fn verify_one(
    sig: &AgentCardSignature,
    index: usize,
    payload: &str,
    keys: &dyn KeyResolver,
    allowed: &[Algorithm],
) -> Result<VerifiedSignature, VerifyError> {
    let malformed = |why: &str| VerifyError::MalformedHeader(why.to_owned());
    let bytes = B64
        .decode(&sig.protected)
        .map_err(|_| malformed("`protected` is not base64url"))?;
    let header: Value =
        serde_json::from_slice(&bytes).map_err(|_| malformed("`protected` is not JSON"))?;
    let header = header
        .as_object()
        .ok_or_else(|| malformed("`protected` is not a JSON object"))?;
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .ok_or_else(|| malformed("the protected header has no `alg` string"))?;
    if alg.eq_ignore_ascii_case("none") {
        return Err(VerifyError::AlgNone);
    }
    if alg.starts_with("HS") {
        return Err(VerifyError::Hmac(alg.to_owned()));
    }
    let algorithm = alg
        .parse::<Algorithm>()
        .ok()
        .filter(|a| allowed.contains(a))
        .ok_or_else(|| VerifyError::AlgorithmNotAllowed(alg.to_owned()))?;
    let kid = header
        .get("kid")
        .and_then(Value::as_str)
        .ok_or_else(|| malformed("the protected header has no `kid` string"))?;
    match header.get("typ") {
        None => {}
        Some(Value::String(t)) if t == "JOSE" => {}
        Some(_) => return Err(malformed("the protected `typ` is not \"JOSE\"")),
    }
    if header.contains_key("crit") {
        return Err(malformed("the protected header has `crit` extensions"));
    }
    let jku = match header.get("jku") {
        None => None,
        Some(Value::String(u)) => Some(u.as_str()),
        Some(_) => return Err(malformed("the protected `jku` is not a string")),
    };
    let key = keys
        .resolve(Some(kid), jku)
        .ok_or_else(|| VerifyError::UnknownKey {
            kid: kid.to_owned(),
        })?;
    if key.algorithm() != algorithm {
        return Err(VerifyError::KeyAlgorithmMismatch {
            alg: alg.to_owned(),
        });
    }
    let signature = B64
        .decode(&sig.signature)
        .map_err(|_| malformed("`signature` is not base64url"))?;
    let input = format!("{}.{payload}", sig.protected);
    if !key.verify_bytes(input.as_bytes(), &signature) {
        return Err(VerifyError::SignatureMismatch);
    }
    Ok(VerifiedSignature {
        index,
        algorithm,
        kid: kid.to_owned(),
        jku: jku.map(str::to_owned),
    })
}
