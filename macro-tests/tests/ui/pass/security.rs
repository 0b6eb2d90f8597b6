//! `security(..)` requirements on the agent and its skills, and `security_schemes = path`.

use a2a_card::{OAuthFlow, SecurityScheme};
use a2a_card::{Agent, agent, skill};

fn schemes() -> Vec<(&'static str, SecurityScheme)> {
    vec![
        ("bearer", SecurityScheme::bearer(Some("JWT"))),
        (
            "oauth",
            SecurityScheme::oauth2(
                OAuthFlow::client_credentials("https://auth.example.com/token")
                    .scope("read", "Read fights")
                    .scope("write", "Record fights"),
            ),
        ),
    ]
}

pub struct Judge;

/// Judges fights, for known callers.
#[agent(
    url = "https://judge.example.com/a2a",
    security_schemes = schemes,
    security(bearer),
    security(oauth = ["read"])
)]
impl Judge {
    /// Names the winner of a fight.
    #[skill]
    fn winner(&self, fight: String) -> String {
        fight
    }

    /// Records the result of a fight.
    #[skill(security(oauth = ["read", "write"]))]
    fn record(&self, fight: String) -> String {
        fight
    }
}

fn main() {
    let card = Judge::card().unwrap();
    let names: Vec<&str> = card.security_schemes.keys().map(String::as_str).collect();
    assert_eq!(names, ["bearer", "oauth"]);
    assert_eq!(card.security_requirements.len(), 2);
    assert!(card.security_requirements[0].schemes["bearer"].is_empty());
    assert_eq!(card.security_requirements[1].schemes["oauth"], ["read"]);
    assert!(card.skills[0].security_requirements.is_empty());
    assert_eq!(
        card.skills[1].security_requirements[0].schemes["oauth"],
        ["read", "write"]
    );
}
