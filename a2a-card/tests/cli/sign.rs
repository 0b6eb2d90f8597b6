//! End-to-end tests of `a2a-card keygen`, `sign` and `verify` (`--features cli`, which enables
//! `sign`).
#![cfg(feature = "cli")]

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_a2a-card");

/// A fresh directory for one test, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let path =
            std::env::temp_dir().join(format!("a2a-card-sign-cli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(path)
    }

    fn file(&self, name: &str) -> String {
        self.0
            .join(name)
            .to_str()
            .expect("UTF-8 temp paths")
            .to_owned()
    }

    fn write(&self, name: &str, value: &Value) -> String {
        let path = self.file(name);
        std::fs::write(&path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(args: &[&str]) -> Output {
    let out = Command::new(BIN)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run the binary");
    assert_ne!(out.status.code(), Some(101), "panicked: {out:?}");
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn card() -> Value {
    json!({
        "name": "Echo", "description": "Repeats every message back.", "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://echo.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "Returns the input unchanged.", "tags": ["echo"]}]
    })
}

#[test]
fn keygen_sign_verify_for_both_algorithms() {
    for alg in ["EdDSA", "ES256"] {
        let dir = TempDir::new(alg);
        let (private, public) = (dir.file("private.jwk"), dir.file("public.jwk"));
        let out = run(&[
            "keygen",
            "--alg",
            alg,
            "--kid",
            "k1",
            "--out-private",
            &private,
            "--out-public",
            &public,
        ]);
        assert!(out.status.success(), "{out:?}");
        let private_jwk: Value = serde_json::from_slice(&std::fs::read(&private).unwrap()).unwrap();
        let public_jwk: Value = serde_json::from_slice(&std::fs::read(&public).unwrap()).unwrap();
        assert!(private_jwk.get("d").is_some() && public_jwk.get("d").is_none());
        assert_eq!(
            (public_jwk["kid"].as_str(), public_jwk["alg"].as_str()),
            (Some("k1"), Some(alg))
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&private).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "the private key is readable by others");
        }
        // Never over an existing file.
        let again = run(&[
            "keygen",
            "--alg",
            alg,
            "--out-private",
            &private,
            "--out-public",
            &dir.file("p2"),
        ]);
        assert_eq!(again.status.code(), Some(2));

        let card_path = dir.write("card.json", &card());
        let out = run(&[
            "sign",
            "--key",
            &private,
            "--jku",
            "https://echo.example.com/jwks.json",
            &card_path,
        ]);
        assert!(out.status.success(), "{out:?}");
        let signed: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(signed["signatures"].as_array().map(Vec::len), Some(1));
        let signed_path = dir.write("signed.json", &signed);

        let out = run(&["verify", "--jwks", &public, &signed_path]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(stdout(&out).starts_with(&format!("verified: signature #0 ({alg}, kid k1)")));

        let other = if alg == "EdDSA" { "ES256" } else { "EdDSA" };
        let out = run(&["verify", "--jwks", &public, "--alg", other, &signed_path]);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            stdout(&out).contains("not in the allowed list"),
            "{}",
            stdout(&out)
        );

        let mut tampered = signed.clone();
        tampered["name"] = json!("Evil Echo");
        let tampered_path = dir.write("tampered.json", &tampered);
        let out = run(&["verify", "--jwks", &public, &tampered_path]);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            stdout(&out).starts_with("rejected: the signature does not match"),
            "{}",
            stdout(&out)
        );

        let out = run(&["verify", "--jwks", &public, &card_path]);
        assert_eq!(out.status.code(), Some(1));
        assert!(stdout(&out).contains("no signatures"));
    }
}

#[test]
fn unreadable_inputs_exit_2() {
    let dir = TempDir::new("unreadable");
    let jwks = dir.write("jwks.json", &json!({"keys": []}));
    let bad = dir.file("bad.json");
    std::fs::write(&bad, b"{not json").unwrap();
    assert_eq!(
        run(&["verify", "--jwks", &jwks, &bad]).status.code(),
        Some(2)
    );
    assert_eq!(
        run(&["verify", "--jwks", &dir.file("missing"), &bad])
            .status
            .code(),
        Some(2)
    );
    let card_path = dir.write("card.json", &card());
    let not_a_key = dir.write("key.jwk", &json!({"kty": "RSA", "n": "x", "e": "AQAB"}));
    let out = run(&["sign", "--key", &not_a_key, &card_path]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unsupported key"));
}

#[test]
fn signs_with_a_pkcs8_pem_key() {
    use a2a_card::sign::SigningKey;
    use base64::Engine as _;
    // PKCS#8 (RFC 8410) of the Ed25519 seed [7; 32].
    let mut der = vec![
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
        0x20,
    ];
    der.extend_from_slice(&[7u8; 32]);
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        base64::engine::general_purpose::STANDARD.encode(&der)
    );
    let key = SigningKey::ed25519_from_seed(&[7u8; 32]);
    assert_eq!(
        SigningKey::from_pem(&pem).unwrap().verifying_key(),
        key.verifying_key()
    );

    let dir = TempDir::new("pem");
    let pem_path = dir.file("key.pem");
    std::fs::write(&pem_path, &pem).unwrap();
    let card_path = dir.write("card.json", &card());
    let out = run(&["sign", "--key", &pem_path, &card_path]);
    assert!(out.status.success(), "{out:?}");
    let signed_path = dir.write("signed.json", &serde_json::from_slice(&out.stdout).unwrap());
    // The default kid is the key's thumbprint.
    let thumbprint = key.verifying_key().thumbprint();
    let jwks = dir.write(
        "jwks.json",
        &json!({"keys": [key.verifying_key().to_jwk(Some(&thumbprint))]}),
    );
    let out = run(&["verify", "--jwks", &jwks, &signed_path]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}
