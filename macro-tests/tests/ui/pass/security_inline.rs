//! Security schemes declared inline, checked against every requirement at compile time, and
//! `#[skill(extended)]`.

use a2a_card::OAuthFlow;
use a2a_card::{Agent, SecurityScheme, agent, skill};

pub struct Judge;

/// Judges fights, for known callers.
#[agent(
    url = "https://judge.example.com/a2a",
    security_schemes(
        bearer = bearer("JWT"),
        key = api_key(header = "X-API-Key"),
        basic = basic,
        oauth = oauth2(OAuthFlow::client_credentials("https://auth.example.com/token").scope("write", "Record fights")),
        oidc = openid_connect("https://auth.example.com/.well-known/openid-configuration"),
        mtls = mutual_tls
    ),
    security(bearer),
    security(key, basic)
)]
impl Judge {
    /// Names the winner.
    #[skill]
    fn winner(&self, fight: String) -> String {
        fight
    }

    /// Records a fight.
    #[skill(security(oauth = ["write"]), security(oidc = ["write"]))]
    fn record(&self, fight: a2a_card::Input<Fight>) -> String {
        let _ = fight;
        String::new()
    }

    /// Tells the house odds; only on the extended card.
    #[skill(extended)]
    fn odds(&self, fight: a2a_card::Input<Odds>) -> String {
        let _ = fight;
        String::new()
    }
}

/// A fight.
#[derive(serde::Deserialize, schemars::JsonSchema, a2a_card::Schema)]
pub struct Fight {
    /// Who won.
    pub winner: String,
}

/// A pair to price.
#[derive(serde::Deserialize, schemars::JsonSchema, a2a_card::Schema)]
pub struct Odds {
    /// The first contestant.
    pub a: String,
}

fn main() {
    let card = Judge::card().unwrap();
    let names: Vec<&str> = card.security_schemes.keys().map(String::as_str).collect();
    assert_eq!(names, ["bearer", "key", "basic", "oauth", "oidc", "mtls"]);
    assert!(matches!(card.security_schemes["basic"], SecurityScheme::Http(ref h) if h.scheme == "basic"));
    assert_eq!(card.security_requirements.len(), 2);
    assert_eq!(card.security_requirements[1].schemes.len(), 2);
    let ids: Vec<&str> = card.skills.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["winner", "record"], "the extended skill is not on the public card");
    assert_eq!(card.capabilities.extended_agent_card, Some(true));
    let extended = a2a_card::__private::build_extended_card(&Judge::DECL, Judge::SKILLS).unwrap();
    assert_eq!(extended.skills.len(), 3);
}
