//! Signed cards: round trips, every tampering case with its own error, fixed vectors.

use a2a_card::sign::{
    self, Algorithm, Jwks, MAX_DEPTH, SignOptions, SigningKey, VerifyError, VerifyingKey,
};
use a2a_card::{AgentCard, AgentSkill, OAuthFlow, SecurityRequirement, SecurityScheme};
use base64::Engine as _;
use serde_json::{Value, json};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

fn card() -> AgentCard {
    AgentCard::builder(
        "Quote Agent",
        "Quotes currency exchange rates for a pair of ISO 4217 codes.",
        "1.0.0",
    )
    .jsonrpc("https://quotes.example.com/a2a")
    .streaming(false)
    .security_scheme(
        "oauth",
        SecurityScheme::oauth2(
            OAuthFlow::client_credentials("https://auth.example.com/token")
                .scope("quotes:read", "Read quotes"),
        ),
    )
    .security_requirement(SecurityRequirement::scheme("oauth", ["quotes:read"]))
    .schema(
        "quote-request",
        json!({"type": "object", "properties": {"from": {"type": "string"}}}),
    )
    .skill(
        AgentSkill::builder("quote", "Quote", "Quotes the rate between two currencies.")
            .tag("fx")
            .input_schema("quote-request"),
    )
    .build()
    .expect("a valid card")
}

fn ed_key() -> SigningKey {
    SigningKey::ed25519_from_seed(&[7u8; 32])
}

fn trusted(key: &SigningKey) -> Jwks {
    Jwks::new().with(Some("k1"), key.verifying_key())
}

fn signed(key: &SigningKey) -> AgentCard {
    sign::sign(&card(), key, SignOptions::kid("k1")).expect("signs")
}

const ALL: &[Algorithm] = &Algorithm::ALL;

#[test]
fn round_trip_both_algorithms() {
    for alg in Algorithm::ALL {
        let key = SigningKey::generate(alg).unwrap();
        let card = signed(&key);
        let ok = sign::verify(&card, &trusted(&key), &[alg]).unwrap();
        assert_eq!((ok.index, ok.algorithm, ok.kid.as_str()), (0, alg, "k1"));
        // Through JSON and back, as a client would read it.
        let json = card.to_json(a2a_card::wire::Profile::V1);
        let read = AgentCard::from_json(&json).unwrap();
        sign::verify(&read, &trusted(&key), &[alg]).unwrap();
        let sig = B64.decode(&card.signatures[0].signature).unwrap();
        assert_eq!(sig.len(), 64, "{alg}: raw 64-byte signature, not DER");
    }
}

#[test]
fn keys_round_trip_through_jwk_and_default_kid_is_the_thumbprint() {
    for alg in Algorithm::ALL {
        let key = SigningKey::generate(alg).unwrap();
        let private = key.to_jwk(Some("x"));
        let again = SigningKey::from_jwk(&private).unwrap();
        assert_eq!(again.verifying_key(), key.verifying_key());
        let public = VerifyingKey::from_jwk(&key.verifying_key().to_jwk(None)).unwrap();
        assert_eq!(public, key.verifying_key());
        let card = sign::sign(&card(), &key, SignOptions::default()).unwrap();
        let jwks = Jwks::new().with(Some(&key.verifying_key().thumbprint()), public);
        sign::verify(&card, &jwks, &[alg]).unwrap();
    }
}

#[test]
fn rfc7638_thumbprint_example() {
    // RFC 8037 appendix A.3: the thumbprint of the Ed25519 key of appendix A.2.
    let jwk =
        json!({"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"});
    let key = VerifyingKey::from_jwk(&jwk).unwrap();
    assert_eq!(
        key.thumbprint(),
        "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
    );
}

#[test]
fn rfc8037_ed25519_signature_vector() {
    // RFC 8037 appendix A.4: signing "Example of Ed25519 signing" with the key of A.1.
    let d = B64
        .decode("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A")
        .unwrap();
    let key = SigningKey::from_jwk(&json!({
        "kty": "OKP", "crv": "Ed25519", "d": B64.encode(&d),
        "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
    }))
    .unwrap();
    let jwk = key.verifying_key().to_jwk(None);
    assert_eq!(jwk["x"], "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo");
}

fn reject(card: &AgentCard, key: &SigningKey) -> VerifyError {
    sign::verify(card, &trusted(key), ALL).unwrap_err()
}

#[test]
fn tampered_name_skill_scope_are_signature_mismatches() {
    let key = ed_key();
    let good = signed(&key);

    let mut c = good.clone();
    c.name = "Evil Quote Agent".into();
    assert_eq!(reject(&c, &key), VerifyError::SignatureMismatch);

    let mut c = good.clone();
    c.skills[0].description = "Sends your money elsewhere.".into();
    assert_eq!(reject(&c, &key), VerifyError::SignatureMismatch);

    let mut c = good.clone();
    c.security_requirements[0]
        .schemes
        .insert("oauth".into(), vec!["quotes:write".into()]);
    assert_eq!(reject(&c, &key), VerifyError::SignatureMismatch);
}

#[test]
fn tampered_schemas_are_a_digest_mismatch() {
    let key = ed_key();
    let mut c = signed(&key);
    c.schemas
        .insert("quote-request".into(), json!({"type": "object"}));
    assert!(matches!(
        reject(&c, &key),
        VerifyError::SchemasDigestMismatch {
            signed: Some(_),
            ..
        }
    ));
    // Changing the signed digest itself breaks the signature.
    let mut c = signed(&key);
    let ext = c
        .capabilities
        .extensions
        .iter_mut()
        .find(|e| e.uri == a2a_card::IO_SCHEMAS_EXTENSION_URI)
        .unwrap();
    ext.params
        .as_mut()
        .unwrap()
        .insert("schemasDigest".into(), json!("sha-256:AAAA"));
    assert_eq!(reject(&c, &key), VerifyError::SignatureMismatch);
}

fn with_header(header: Value) -> AgentCard {
    let key = ed_key();
    let mut c = signed(&key);
    c.signatures[0].protected = B64.encode(header.to_string());
    c
}

#[test]
fn header_cases_each_have_their_own_error() {
    let key = ed_key();
    let mut c = signed(&key);
    c.signatures.clear();
    assert_eq!(reject(&c, &key), VerifyError::NoSignatures);

    let c = with_header(json!({"alg": "none", "kid": "k1", "typ": "JOSE"}));
    assert_eq!(reject(&c, &key), VerifyError::AlgNone);

    let c = with_header(json!({"alg": "HS256", "kid": "k1", "typ": "JOSE"}));
    assert_eq!(reject(&c, &key), VerifyError::Hmac("HS256".into()));

    let c = signed(&key);
    assert_eq!(
        sign::verify(&c, &trusted(&key), &[Algorithm::ES256]).unwrap_err(),
        VerifyError::AlgorithmNotAllowed("EdDSA".into())
    );
    let c = with_header(json!({"alg": "RS256", "kid": "k1", "typ": "JOSE"}));
    assert_eq!(
        reject(&c, &key),
        VerifyError::AlgorithmNotAllowed("RS256".into())
    );

    for bad in [
        json!({"kid": "k1", "typ": "JOSE"}),
        json!({"alg": "EdDSA", "typ": "JOSE"}),
        json!({"alg": "EdDSA", "kid": "k1", "typ": "JWT"}),
        json!(["not", "an", "object"]),
    ] {
        let c = with_header(bad);
        assert!(matches!(reject(&c, &key), VerifyError::MalformedHeader(_)));
    }
    let mut c = signed(&key);
    c.signatures[0].protected = "not base64!".into();
    assert!(matches!(reject(&c, &key), VerifyError::MalformedHeader(_)));

    let c = with_header(json!({"alg": "EdDSA", "kid": "k9", "typ": "JOSE"}));
    assert_eq!(
        reject(&c, &key),
        VerifyError::UnknownKey { kid: "k9".into() }
    );

    // A header that was changed but is well-formed: the signature no longer matches.
    let c = with_header(
        json!({"alg": "EdDSA", "kid": "k1", "typ": "JOSE", "jku": "https://evil.example"}),
    );
    assert_eq!(reject(&c, &key), VerifyError::SignatureMismatch);

    // The right kid with a key of the other algorithm.
    let es = SigningKey::generate(Algorithm::ES256).unwrap();
    let jwks = Jwks::new().with(Some("k1"), es.verifying_key());
    assert_eq!(
        sign::verify(&signed(&key), &jwks, ALL).unwrap_err(),
        VerifyError::KeyAlgorithmMismatch {
            alg: "EdDSA".into()
        }
    );
}

#[test]
fn one_good_signature_of_several_is_enough() {
    let key = ed_key();
    let other = SigningKey::generate(Algorithm::ES256).unwrap();
    let twice = sign::sign(&signed(&other), &key, SignOptions::kid("k1")).unwrap();
    let ok = sign::verify(&twice, &trusted(&key), ALL).unwrap();
    assert_eq!(ok.index, 1);
    let mut bad = twice.clone();
    bad.name = "x".into();
    assert!(matches!(reject(&bad, &key), VerifyError::AllRejected(e) if e.len() == 2));
}

#[test]
fn nesting_is_bounded() {
    let mut deep = json!("leaf");
    for _ in 0..MAX_DEPTH + 1 {
        deep = json!({ "a": deep });
    }
    let mut c = card();
    c.capabilities.extensions[0]
        .params
        .get_or_insert_default()
        .insert("deep".into(), deep);
    assert!(matches!(
        sign::sign(&c, &ed_key(), SignOptions::kid("k1")),
        Err(sign::SignError::Canonical(
            sign::CanonicalError::TooDeep { .. }
        ))
    ));
    let mut s = signed(&ed_key());
    s.capabilities.extensions = c.capabilities.extensions.clone();
    assert_eq!(reject(&s, &ed_key()), VerifyError::TooDeep);
}

#[test]
fn unknown_fields_and_root_schemas_are_outside_the_payload() {
    let mut c = card();
    let before = sign::canonical_payload(&c).unwrap();
    c.extra.insert("x-vendor".into(), json!("anything"));
    c.schemas.insert("other".into(), json!({"type": "string"}));
    assert_eq!(sign::canonical_payload(&c).unwrap(), before);
    let text = String::from_utf8(before).unwrap();
    assert!(!text.contains("\"schemas\":{\"quote-request\""));
}

/// A fixed key and a fixed card give fixed bytes (Ed25519 is deterministic). Cross-checked when
/// pinned: the official Python SDK's `_canonicalize_agent_card` gives the same payload for this
/// card, and Python `cryptography`'s Ed25519 the same signature.
#[test]
fn pinned_vector() {
    let card = AgentCard::builder("Echo", "Repeats every message back.", "1.0.0")
        .jsonrpc("https://echo.example.com/a2a")
        .skill(AgentSkill::builder("echo", "Echo", "Returns the input unchanged.").tag("echo"))
        .build()
        .unwrap();
    let payload = String::from_utf8(sign::canonical_payload(&card).unwrap()).unwrap();
    assert_eq!(payload, PINNED_PAYLOAD);
    let s = sign::sign(&card, &ed_key(), SignOptions::kid("k1")).unwrap();
    assert_eq!(
        String::from_utf8(B64.decode(&s.signatures[0].protected).unwrap()).unwrap(),
        r#"{"alg":"EdDSA","kid":"k1","typ":"JOSE"}"#
    );
    assert_eq!(s.signatures[0].signature, PINNED_SIGNATURE);
}

const PINNED_PAYLOAD: &str = r#"{"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"description":"Repeats every message back.","name":"Echo","skills":[{"description":"Returns the input unchanged.","id":"echo","name":"Echo","tags":["echo"]}],"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"https://echo.example.com/a2a"}],"version":"1.0.0"}"#;
const PINNED_SIGNATURE: &str =
    "BPhj5Kcd-36PDeP0eaOF1xDl-2fOEV1NIEUsitjVFTK0gzCWMuhHYvbHk5MhONpaV28YJNMnh2bnma_WaDq8Bg";

/// RFC 8785 section 3.2.2 / appendix B examples: our canonical form is the crate's, checked
/// against the RFC's published outputs.
#[test]
fn rfc8785_examples() {
    let jcs = |v: &str| {
        let v: Value = serde_json::from_str(v).unwrap();
        String::from_utf8(serde_json_canonicalizer::to_vec(&v).unwrap()).unwrap()
    };
    // Section 3.2.2.3 (numbers) and 3.2.2.2 (strings), the example of section 3.2.2.
    assert_eq!(
        jcs(
            r#"{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
                "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
                "literals": [null, true, false]}"#
        ),
        r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
    );
    // Section 3.2.3: properties sorted by UTF-16 code units.
    assert_eq!(
        jcs(
            r#"{"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
                "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis"}"#
        ),
        "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}"
    );
    // Appendix B: selected IEEE 754 values.
    for (input, out) in [
        ("0", "0"),
        ("-0", "0"),
        ("1e21", "1e+21"),
        ("1e20", "100000000000000000000"),
        ("9007199254740992", "9007199254740992"),
        ("0.000001", "0.000001"),
        ("1e-7", "1e-7"),
        ("295147905179352830000", "295147905179352830000"),
    ] {
        assert_eq!(jcs(input), out, "{input}");
    }
}

#[test]
fn spec_example_of_default_removal() {
    // A2A 1.0 section 8.4.1; the official SDKs also drop empty strings and lists, so the
    // example's `"description": ""` and `"skills": []` are left out here as they are there.
    let mut c = AgentCard::default();
    c.name = "Example Agent".into();
    c.capabilities.streaming = Some(false);
    c.capabilities.push_notifications = Some(false);
    assert_eq!(
        String::from_utf8(sign::canonical_payload(&c).unwrap()).unwrap(),
        r#"{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}"#
    );
}

#[test]
fn the_linter_warns_about_unbound_schemas_on_a_signed_card() {
    let codes = |card: &AgentCard| -> Vec<&'static str> {
        a2a_card::lint::lint_json(&card.to_json(a2a_card::wire::Profile::V1))
            .iter()
            .map(|f| f.rule.code())
            .collect()
    };
    let good = signed(&ed_key());
    assert!(!codes(&good).contains(&"signature-schemas-unbound"));
    let mut unbound = good.clone();
    for ext in &mut unbound.capabilities.extensions {
        ext.params = None;
    }
    assert!(codes(&unbound).contains(&"signature-schemas-unbound"));
    assert!(!codes(&card()).contains(&"signature-schemas-unbound"));
}

/// Signatures are outside bytes: whatever a card's signature holds (its protected header, its
/// signature, its card's fields changed after signing), verifying it never panics, and accepts
/// nothing but the card as signed, by the trusted key, under an allowed algorithm (property
/// tests standing in for fuzzing; `SIGN_CASES=N` runs more).
mod tampered {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::Config;

    fn config() -> Config {
        Config {
            cases: std::env::var("SIGN_CASES")
                .ok()
                .and_then(|n| n.parse().ok())
                .unwrap_or(256),
            failure_persistence: None,
            ..Config::default()
        }
    }

    /// A protected header: JSON objects whose `alg`, `kid`, `typ` and `crit` take any value
    /// (the algorithms a token may claim among them), or bytes of any kind.
    fn header() -> impl Strategy<Value = Vec<u8>> {
        let alg = prop_oneof![
            Just(json!("EdDSA")),
            Just(json!("ES256")),
            Just(json!("none")),
            Just(json!("HS256")),
            Just(json!("RS256")),
            "[A-Za-z0-9]{0,8}".prop_map(Value::String),
            any::<i64>().prop_map(|n| json!(n)),
            Just(Value::Null),
        ];
        let kid = prop_oneof![
            Just(json!("k1")),
            Just(json!("k2")),
            "[a-z0-9]{0,4}".prop_map(Value::String),
            Just(json!([])),
        ];
        prop_oneof![
            (alg, kid, any::<bool>(), any::<bool>()).prop_map(|(alg, kid, typ, crit)| {
                let mut header = serde_json::Map::new();
                header.insert("alg".into(), alg);
                header.insert("kid".into(), kid);
                if typ {
                    header.insert("typ".into(), json!("JOSE"));
                }
                if crit {
                    header.insert("crit".into(), json!(["b64"]));
                }
                serde_json::to_vec(&header).unwrap()
            }),
            prop::collection::vec(any::<u8>(), 0..64),
        ]
    }

    /// A signature's bytes: the real one with a byte changed, or any.
    fn signature(real: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
        let len = real.len();
        prop_oneof![
            (0..len, 1u8..=255).prop_map(move |(i, x)| {
                let mut s = real.clone();
                s[i] ^= x;
                s
            }),
            prop::collection::vec(any::<u8>(), 0..96),
        ]
    }

    proptest! {
        #![proptest_config(config())]

        #[test]
        fn a_signature_with_any_header_is_refused_unless_it_is_the_one_signed(
            header in header(),
            base64 in any::<bool>(),
        ) {
            let key = ed_key();
            let mut card = signed(&key);
            let original = card.signatures[0].protected.clone();
            card.signatures[0].protected = if base64 {
                B64.encode(&header)
            } else {
                String::from_utf8_lossy(&header).into_owned()
            };
            let verified = sign::verify(&card, &trusted(&key), ALL);
            if card.signatures[0].protected != original {
                prop_assert!(verified.is_err(), "a changed header verified: {:?}", card.signatures[0]);
            }
        }

        #[test]
        fn a_changed_signature_is_refused(
            bytes in signature(B64.decode(signed(&ed_key()).signatures[0].signature.as_bytes()).unwrap()),
            es in any::<bool>(),
        ) {
            let key = if es { SigningKey::generate(Algorithm::ES256).unwrap() } else { ed_key() };
            let mut card = signed(&key);
            let real = B64.decode(card.signatures[0].signature.as_bytes()).unwrap();
            card.signatures[0].signature = B64.encode(&bytes);
            let verified = sign::verify(&card, &trusted(&key), ALL);
            if bytes != real {
                prop_assert!(verified.is_err(), "a changed signature verified");
            }
        }

        #[test]
        fn a_card_changed_after_signing_is_refused(
            name in "\\PC{0,12}",
            skill in "[a-z-]{0,8}",
            extra in 0usize..3,
        ) {
            let key = ed_key();
            let signed = signed(&key);
            let mut card = signed.clone();
            card.name = name;
            if let Some(s) = card.skills.first_mut() {
                s.id = skill;
            }
            for i in 0..extra {
                card.skills.push(
                    AgentSkill::builder(format!("extra-{i}"), "Extra", "Added after signing.").build(),
                );
            }
            let verified = sign::verify(&card, &trusted(&key), ALL);
            if card != signed {
                prop_assert!(verified.is_err(), "a changed card verified");
            } else {
                prop_assert!(verified.is_ok());
            }
        }
    }
}
