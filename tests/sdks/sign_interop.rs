//! Cards signed here verify with the official A2A SDKs' verifiers, and cards they sign verify
//! here: Python (`a2a-sdk`, `create_signature_verifier` / `create_agent_card_signer`) and JS
//! (`@a2a-js/sdk`, `verifyAgentCardSignature` / `generateAgentCardSignature`).
//!
//! The SDKs come from `$A2A_PY` (a Python with `a2a-sdk[signing,grpc]`) and `$A2A_JS_DIR` (a
//! directory with `node_modules/@a2a-js/sdk`), which CI sets (see `.ci/run`). Without them, the
//! pinned SDK is installed under the target directory. A test skips, with a printed reason,
//! only when `python3` (or `node`/`npm`) is absent and `A2A_REQUIRE_SDKS` is unset (CI sets it,
//! so there it fails); it fails when the runtime is there but the SDK cannot be installed.

use crate::support;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use a2a_card::sign::{self, Algorithm, Jwks, SignOptions, SigningKey};
use a2a_card::wire::Profile;
use a2a_card::{AgentCard, AgentSkill, SecurityRequirement, SecurityScheme};
use serde_json::{Value, json};

fn tmp() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
}

/// The command that runs the Python driver, or `None` (with the reason printed) to skip.
fn python() -> Option<Vec<OsString>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/a2a_py.py");
    support::a2a_python().map(|py| vec![py.into(), script.into()])
}

/// The command that runs the JS driver, or `None` (with the reason printed) to skip.
fn node() -> Option<Vec<OsString>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/a2a_js.mjs");
    support::a2a_js_dir().map(|dir| {
        vec![
            OsString::from("node"),
            script.into(),
            OsString::from(format!("--dir={}", dir.display())),
        ]
    })
}

fn run(driver: &[OsString], args: &[&Path], extra: &[&str]) -> Output {
    let (program, rest) = driver.split_first().expect("a program");
    let mut command = Command::new(program);
    for arg in rest {
        // The JS driver takes its SDK directory from the environment.
        match arg.to_str().and_then(|a| a.strip_prefix("--dir=")) {
            Some(dir) => command.env("A2A_JS_DIR", dir),
            None => command.arg(arg),
        };
    }
    command
        .args(args)
        .args(extra)
        .output()
        .expect("run the SDK driver")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn card() -> AgentCard {
    AgentCard::builder(
        "Quote Agent",
        "Quotes currency exchange rates, naïvely: « 1 € = 1.08 $ ».",
        "1.0.0",
    )
    .jsonrpc("https://quotes.example.com/a2a")
    .streaming(false)
    .provider("Example Corp", "https://example.com")
    .security_scheme("bearer", SecurityScheme::bearer(Some("JWT")))
    .security_requirement(SecurityRequirement::scheme("bearer", ["quotes:read"]))
    .schema(
        "quote-request",
        json!({"type": "object", "required": [], "properties": {"n": {"type": "integer", "maximum": 10}}}),
    )
    .skill(
        AgentSkill::builder("quote", "Quote", "Quotes the rate between two currencies.")
            .tag("fx")
            .input_schema("quote-request"),
    )
    .build()
    .expect("a valid card")
}

fn write(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
    path
}

fn both_ways(sdk: &str, driver: &[OsString]) {
    let dir = tmp().join(format!("sign-interop-{sdk}"));
    std::fs::create_dir_all(&dir).unwrap();
    for alg in Algorithm::ALL {
        let key = SigningKey::generate(alg).unwrap();
        let kid = format!("key-{alg}");
        let jwks = json!({ "keys": [key.verifying_key().to_jwk(Some(&kid))] });
        let jwks_path = write(&dir, &format!("jwks-{alg}.json"), &jwks);
        let options = SignOptions::kid(&kid).with_jku("https://quotes.example.com/jwks.json");
        let signed = sign::sign(&card(), &key, options).unwrap();

        // Ours -> the SDK's verifier, in the 1.0 and the compat documents.
        for profile in [Profile::V1, Profile::Compat] {
            let path = write(
                &dir,
                &format!("ours-{alg}-{profile}.json"),
                &signed.to_json(profile),
            );
            let out = run(driver, &[Path::new("verify"), &path, &jwks_path], &[]);
            assert!(
                out.status.success(),
                "{sdk} {alg} {profile}: rejected ours: {}",
                text(&out)
            );
        }

        // A tampered card is rejected there too.
        let mut bad = signed.clone();
        bad.skills[0].description = "Tampered.".into();
        let path = write(&dir, &format!("bad-{alg}.json"), &bad.to_json(Profile::V1));
        let out = run(driver, &[Path::new("verify"), &path, &jwks_path], &[]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{sdk} {alg}: accepted a tampered card: {}",
            text(&out)
        );

        // The SDK's signer -> our verifier.
        let private = write(&dir, &format!("private-{alg}.jwk"), &key.to_jwk(Some(&kid)));
        // A card with schemas is prepared for a foreign signer by binding its schemas first.
        let mut prepared = card();
        sign::bind_schemas(&mut prepared).unwrap();
        let plain = write(
            &dir,
            &format!("plain-{alg}.json"),
            &prepared.to_json(Profile::V1),
        );
        let out = run(driver, &[Path::new("sign"), &plain, &private], &[&kid]);
        assert!(
            out.status.success(),
            "{sdk} {alg}: could not sign: {}",
            text(&out)
        );
        let theirs: Value = serde_json::from_slice(&out.stdout).expect("the signed card's JSON");
        let mut theirs = AgentCard::from_json(&theirs).unwrap();
        let trusted = Jwks::from_json(&jwks).unwrap();
        if theirs.schemas.is_empty() {
            // Python writes back its protobuf card, which has no root `schemas`: the signed
            // digest then says schemas are missing. The publisher serves its own card with the
            // SDK's signature added.
            assert!(matches!(
                sign::verify(&theirs, &trusted, &[alg]),
                Err(sign::VerifyError::SchemasDigestMismatch { .. })
            ));
            theirs.schemas = prepared.schemas.clone();
        }
        let ok = sign::verify(&theirs, &trusted, &[alg])
            .unwrap_or_else(|e| panic!("{sdk} {alg}: their signature: {e}"));
        assert_eq!(ok.kid, kid);
        if !theirs.schemas.is_empty() {
            // The SDK kept the root schemas (JS does, Python drops them): bound by the digest.
            let mut bad = theirs.clone();
            bad.schemas.insert("quote-request".into(), json!({}));
            assert!(matches!(
                sign::verify(&bad, &trusted, &[alg]),
                Err(sign::VerifyError::SchemasDigestMismatch { .. })
            ));
        }
        let mut bad = theirs.clone();
        bad.name = "Evil".into();
        assert_eq!(
            sign::verify(&bad, &trusted, &[alg]),
            Err(sign::VerifyError::SignatureMismatch)
        );
    }
}

#[test]
fn python_sdk_both_ways() {
    if let Some(driver) = python() {
        both_ways("python", &driver);
    }
}

#[test]
fn js_sdk_both_ways() {
    if let Some(driver) = node() {
        both_ways("js", &driver);
    }
}
