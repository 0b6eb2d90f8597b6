//! An agent whose card requires a bearer JWT, and a server that enforces it.
//!
//! At start it makes an Ed25519 key pair, checks tokens against the public half, signs a demo
//! token with the private half, and prints it with a `curl` line that uses it:
//!
//! ```text
//! cargo run --example guarded_judge                  # serve on 127.0.0.1:8082
//! cargo run --example guarded_judge -- --port 0      # any free port
//! ```
//!
//! Without the token the agent answers `401` with `WWW-Authenticate: Bearer realm="a2a"`; the
//! card route stays public. The demo token holds the scope `fights:write`, which the `record`
//! skill requires; the extended card (`GetExtendedAgentCard`) also lists `odds`.

use std::time::{SystemTime, UNIX_EPOCH};

use a2a_card::server::Server;
use a2a_card::server::auth::{Algorithm, Authentication, JwtKey, JwtKeys, JwtVerifier};
use a2a_card::sign::{self, SigningKey};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use clap::Parser;
use examples::guarded_judge::agent::GuardedJudge;
use jsonwebtoken::{self, DecodingKey, EncodingKey, Header};

const ISSUER: &str = "https://auth.example.com";
const AUDIENCE: &str = "guarded-judge";

/// An Ed25519 key pair made now: the signing key, and the verification key pinned to EdDSA.
fn keys() -> Result<(EncodingKey, JwtKey), Box<dyn std::error::Error>> {
    let key = SigningKey::generate(sign::Algorithm::EdDSA)?;
    let jwk = key.to_jwk(None);
    let field = |name: &str| jwk[name].as_str().unwrap_or_default().to_owned();
    // PKCS#8 v1 of the Ed25519 seed (RFC 8410), which `jsonwebtoken` signs with.
    let mut der = vec![
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
        0x20,
    ];
    der.extend(URL_SAFE_NO_PAD.decode(field("d"))?);
    let public = DecodingKey::from_ed_components(&field("x"))?;
    let verify = JwtKey::new(public, Algorithm::EdDSA)?.with_kid("demo");
    Ok((EncodingKey::from_ed_der(&der), verify))
}

fn demo_token(signing: &EncodingKey) -> Result<String, jsonwebtoken::errors::Error> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some("demo".into());
    let claims = serde_json::json!({
        "iss": ISSUER, "aud": AUDIENCE, "sub": "demo-user",
        "scope": "fights:write", "iat": now, "exp": now + 3600,
    });
    jsonwebtoken::encode(&header, &claims, signing)
}

/// Serves the Guarded Judge agent on 127.0.0.1, its calls behind a bearer JWT, and prints a demo
/// token (made at start, valid one hour) with a `curl` line that uses it.
#[derive(Parser)]
struct Args {
    /// The port to serve on, on 127.0.0.1 (0 picks a free port).
    #[arg(short, long, default_value_t = 8082)]
    port: u16,
}

/// The allocator: mimalloc returns to the system what a long stream freed (glibc's malloc
/// keeps most of it in its threads' arenas; book/src/performance.md#memory).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port = Args::parse().port;
    // Spans and metrics go where the OTEL_* variables say (nowhere when none is set).
    let _telemetry = a2a_card::otel::init()?;
    let (signing, verify) = keys()?;
    let verifier = || {
        JwtVerifier::new(JwtKeys::new([verify.clone()]), [Algorithm::EdDSA])
            .issuer(ISSUER)
            .audience(AUDIENCE)
    };
    let auth = Authentication::new()
        .token("bearer", verifier())
        .token("oauth", verifier());
    let listening = Server::new(GuardedJudge)
        .authentication(auth)
        .grpc(true)
        .mcp(true)
        .bind(("127.0.0.1", port))
        .await?;
    let url = listening.url().trim_end_matches('/').to_owned();
    let token = demo_token(&signing)?;
    println!("Guarded Judge agent listening on {url}");
    println!("card (public):  {url}/.well-known/agent-card.json");
    println!("MCP endpoint:   {url}/mcp (the same token; `record` needs fights:write)");
    println!();
    println!("Demo token (EdDSA, key made at start, valid 1 hour, scope fights:write):");
    println!("{token}");
    println!();
    println!("Without it: 401. With it:");
    println!(
        r#"curl -s {url}/ -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -H 'Authorization: Bearer {token}' \
  -d '{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{{"messageId":"m1","role":"ROLE_USER","parts":[{{"text":"Lion vs Tiger"}}]}}}}}}'"#
    );
    // SIGTERM or Ctrl-C drains the server, then it stops.
    listening.serve().await?;
    Ok(())
}
