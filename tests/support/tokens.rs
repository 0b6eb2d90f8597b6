//! Real keys and JWTs for the authentication tests and benchmark: Ed25519 and P-256 key pairs
//! generated per run, tokens signed with `jsonwebtoken`.
#![allow(dead_code)]

use std::time::{SystemTime, UNIX_EPOCH};

use a2a_card::server::auth::{Algorithm, JwtKey, JwtKeys};
use a2a_card::sign::{self, SigningKey};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use jsonwebtoken::{self, DecodingKey, EncodingKey, Header};
use serde_json::{Value, json};

/// The issuer and audience the test verifiers expect.
pub const ISSUER: &str = "https://auth.example.com";
pub const AUDIENCE: &str = "https://vault.example.com";

/// A key pair: what signs, and the public half for the verifier.
pub struct Pair {
    pub kid: String,
    pub algorithm: Algorithm,
    pub signing: EncodingKey,
    pub public: DecodingKey,
    /// The public key's bytes (what a confused verifier would use as an HMAC secret).
    pub public_bytes: Vec<u8>,
}

fn b64(value: &Value, key: &str) -> Vec<u8> {
    let text = value[key].as_str().expect("a JWK member");
    B64.decode(text).expect("base64url")
}

impl Pair {
    /// A fresh Ed25519 pair.
    pub fn ed25519(kid: &str) -> Pair {
        let key = SigningKey::generate(sign::Algorithm::EdDSA).expect("a fresh Ed25519 key");
        let jwk = key.to_jwk(None);
        // PKCS#8 v1 of an Ed25519 seed (RFC 8410).
        let mut der = hex("302e020100300506032b657004220420");
        der.extend(b64(&jwk, "d"));
        let x = b64(&jwk, "x");
        Pair {
            kid: kid.to_owned(),
            algorithm: Algorithm::EdDSA,
            signing: EncodingKey::from_ed_der(&der),
            public: DecodingKey::from_ed_components(jwk["x"].as_str().unwrap_or_default())
                .expect("an Ed25519 public key"),
            public_bytes: x,
        }
    }

    /// A fresh P-256 pair.
    pub fn p256(kid: &str) -> Pair {
        let key = SigningKey::generate(sign::Algorithm::ES256).expect("a fresh P-256 key");
        let jwk = key.to_jwk(None);
        // PKCS#8 v1 of a P-256 private key (RFC 5915 inside RFC 5208), without the public key.
        let mut der = hex("3041020100301306072a8648ce3d020106082a8648ce3d030107042730250201010420");
        der.extend(b64(&jwk, "d"));
        let mut sec1 = vec![4u8];
        sec1.extend(b64(&jwk, "x"));
        sec1.extend(b64(&jwk, "y"));
        Pair {
            kid: kid.to_owned(),
            algorithm: Algorithm::ES256,
            signing: EncodingKey::from_ec_der(&der),
            public: DecodingKey::from_ec_components(
                jwk["x"].as_str().unwrap_or_default(),
                jwk["y"].as_str().unwrap_or_default(),
            )
            .expect("a P-256 public key"),
            public_bytes: sec1,
        }
    }

    /// The verification key, pinned to the pair's algorithm.
    pub fn key(&self) -> JwtKey {
        JwtKey::new(self.public.clone(), self.algorithm)
            .expect("the key fits its algorithm")
            .with_kid(&self.kid)
    }

    /// A token of `claims` signed by this pair.
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(self.algorithm);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.signing).expect("signing works")
    }

    /// The same token, with another `kid` in its header.
    pub fn sign_as(&self, kid: &str, claims: &Value) -> String {
        let mut header = Header::new(self.algorithm);
        header.kid = Some(kid.to_owned());
        jsonwebtoken::encode(&header, claims, &self.signing).expect("signing works")
    }
}

/// The keys of these pairs.
pub fn keys(pairs: &[&Pair]) -> JwtKeys {
    JwtKeys::new(pairs.iter().map(|p| p.key()))
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// Seconds since the epoch.
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// Good claims for `sub` with `scope`, valid for an hour.
pub fn claims(sub: &str, scope: &str) -> Value {
    json!({"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "scope": scope,
           "iat": now(), "exp": now() + 3600})
}

/// A token whose header says `alg: none`, with no signature.
pub fn unsigned(claims: &Value) -> String {
    let header = B64.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = B64.encode(claims.to_string());
    format!("{header}.{payload}.")
}

/// An HS256 token whose HMAC secret is `secret` (e.g. a public key's bytes), naming `kid`.
pub fn hs256(secret: &[u8], kid: &str, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_secret(secret)).expect("HMAC works")
}
