//! The card route serves the signed card when the server has a key.

use a2a_card::AgentCard;
use a2a_card::server::Server;
use a2a_card::sign::{self, Algorithm, Jwks, SignOptions, SigningKey};
use a2a_card::wire::Profile;

struct Echo;

/// Says back what it is told.
#[a2a_card::agent(url = "http://127.0.0.1:9000/a2a")]
impl Echo {
    /// Echoes the text.
    #[a2a_card::skill]
    fn echo(&self, text: String) -> String {
        text
    }
}

#[tokio::test]
async fn the_v1_and_compat_cards_are_signed() {
    let key = SigningKey::generate(Algorithm::ES256).unwrap();
    let trusted = Jwks::new().with(Some("srv"), key.verifying_key());
    let server = Server::new(Echo).sign_with(key.clone(), SignOptions::kid("srv"));
    sign::verify(&server.card().unwrap(), &trusted, &[Algorithm::ES256]).unwrap();

    let listening = server.bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listening.local_addr());
    tokio::spawn(listening.serve());
    let http = reqwest::Client::new();
    for (version, profile) in [
        (Some("1.0"), Profile::V1),
        (Some("0.3"), Profile::V0_3),
        (None, Profile::Compat),
    ] {
        let mut request = http.get(format!("{base}/.well-known/agent-card.json"));
        if let Some(v) = version {
            request = request.header("A2A-Version", v);
        }
        let body = request.send().await.unwrap().bytes().await.unwrap();
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(Profile::detect(&json), profile, "{json}");
        let card = AgentCard::from_json(&json).unwrap();
        if profile == Profile::V0_3 {
            // Lossy (only the 0.3 interfaces): a 1.0 signature would not verify, so none.
            assert!(card.signatures.is_empty());
            continue;
        }
        // The bound port is in the signed card.
        assert!(card.interfaces[0].url.starts_with(&base), "{profile}");
        let ok = sign::verify(&card, &trusted, &[Algorithm::ES256])
            .unwrap_or_else(|e| panic!("{profile}: {e}"));
        assert_eq!(ok.kid, "srv");
    }
}
