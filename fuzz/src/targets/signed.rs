//! Signed card verification on any bytes: the bytes read as a card (strictly, else leniently)
//! and every signature on it verified ([`sign::verify`]) against two fixed keys, an Ed25519
//! and a P-256 one; the same bytes read as a JWKS ([`Jwks::from_text`]) and as a key
//! ([`VerifyingKey::from_pem`], [`SigningKey::from_text`]). Never a panic; a card the keys
//! verified keeps verifying when read back from its rendered JSON.

use std::sync::OnceLock;

use a2a_card::AgentCard;
use a2a_card::sign::{self, Algorithm, Jwks, SignOptions, SigningKey, VerifyingKey};
use a2a_card::wire::{Document, Profile, ReadLimits, from_value_lenient};
use serde_json::json;

/// The Ed25519 key's id.
const ED_KID: &str = "fuzz-ed25519";
/// The P-256 key's id.
const ES_KID: &str = "fuzz-p256";
/// Both keys' private scalar: 32 bytes of 7, base64url.
const D: &str = "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc";

/// The two signing keys, made once.
fn keys() -> &'static (SigningKey, SigningKey) {
    static KEYS: OnceLock<(SigningKey, SigningKey)> = OnceLock::new();
    KEYS.get_or_init(|| {
        let ed = SigningKey::from_jwk(&json!({"kty": "OKP", "crv": "Ed25519", "d": D}))
            .expect("the fixed Ed25519 key");
        let es = SigningKey::from_jwk(&json!({"kty": "EC", "crv": "P-256", "d": D}))
            .expect("the fixed P-256 key");
        (ed, es)
    })
}

/// The trusted keys, by id.
fn jwks() -> &'static Jwks {
    static JWKS: OnceLock<Jwks> = OnceLock::new();
    JWKS.get_or_init(|| {
        let (ed, es) = keys();
        Jwks::new()
            .with(Some(ED_KID), ed.verifying_key())
            .with(Some(ES_KID), es.verifying_key())
    })
}

/// Bytes verified as a signed card, and read as keys.
pub fn signed_card(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        crate::feedback(if Jwks::from_text(text).is_ok() {
            "jwks"
        } else {
            "no jwks"
        });
        crate::feedback(if VerifyingKey::from_pem(text).is_ok() {
            "pem"
        } else {
            "no pem"
        });
        crate::feedback(if SigningKey::from_text(text).is_ok() {
            "key"
        } else {
            "no key"
        });
    }
    let card = match AgentCard::from_slice(data) {
        Ok(card) => card,
        Err(_) => match Document::parse(data, ReadLimits::default()) {
            Ok(document) => from_value_lenient(&document.value).0,
            Err(_) => return,
        },
    };
    match sign::verify(&card, jwks(), &Algorithm::ALL) {
        Ok(verified) => {
            crate::feedback(&format!(
                "verified {:?} {}",
                verified.algorithm, verified.kid
            ));
            // What verified, written and read again, verifies again.
            let again = AgentCard::from_json(&card.to_json(Profile::V1))
                .unwrap_or_else(|e| panic!("a verified card does not read back: {e}"));
            if let Err(e) = sign::verify(&again, jwks(), &Algorithm::ALL) {
                panic!("a verified card, written and read again, does not verify: {e}");
            }
        }
        Err(e) => crate::feedback(&e.to_string().chars().take(48).collect::<String>()),
    }
}

/// The spec's 1.0 sample card signed with each key, and a card with both signatures.
pub fn seeds() -> Vec<Vec<u8>> {
    let sample = include_str!("../../../tests/data/fixtures/cards/spec-v1.0-sample.json");
    let Ok(mut card) = AgentCard::from_json(&serde_json::from_str(sample).unwrap_or_default())
    else {
        return Vec::new();
    };
    card.signatures.clear();
    let (ed, es) = keys();
    let mut seeds = Vec::new();
    let mut both = card.clone();
    for (key, kid) in [(ed, ED_KID), (es, ES_KID)] {
        if let Ok(signed) = sign::sign(&card, key, SignOptions::kid(kid)) {
            seeds.push(signed.to_json(Profile::V1).to_string().into_bytes());
        }
        if let Ok(signed) = sign::sign(&both, key, SignOptions::kid(kid)) {
            both = signed;
        }
    }
    seeds.push(both.to_json(Profile::V1).to_string().into_bytes());
    seeds
}
