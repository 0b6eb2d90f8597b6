//! The guarded judge: an agent whose card requires a bearer JWT, with one skill that needs an
//! OAuth scope and one listed only on the extended card. Served by `main.rs`.

use a2a_card::OAuthFlow;
use a2a_card::{SkillContext, agent, skill};

/// The judge: no state.
pub struct GuardedJudge;

/// Judges fights for callers with a token, and records them for callers allowed to.
#[agent(
    url = "http://127.0.0.1:8082",
    security_schemes(
        bearer = bearer("JWT"),
        oauth = oauth2(OAuthFlow::client_credentials("https://auth.example.com/token")
            .scope("fights:write", "Record fights"))
    ),
    security(bearer)
)]
impl GuardedJudge {
    /// Names the winner of a fight written as "A vs B", for whoever calls.
    #[skill(tags("fight"))]
    fn winner(&self, fight: String, ctx: SkillContext) -> String {
        let caller = ctx.principal().map_or("nobody", |p| p.subject());
        let winner = fight
            .split(" vs ")
            .max_by_key(|s| s.trim().len())
            .unwrap_or_default()
            .trim();
        format!("{winner} wins (judged for {caller})")
    }

    /// Records the result of a fight; needs the `fights:write` scope.
    #[skill(tags("fight"), security(oauth = ["fights:write"]))]
    fn record(&self, result: FightResult) -> String {
        format!("recorded: {} won", result.winner)
    }

    /// Tells the house odds of a fight; listed only on the extended card.
    #[skill(tags("fight"), extended)]
    fn odds(&self, pair: Pair) -> String {
        format!("{} 3:2 {}", pair.a, pair.b)
    }
}

/// The result of a fight.
#[derive(serde::Deserialize, schemars::JsonSchema, a2a_card::Schema)]
pub struct FightResult {
    /// Who won.
    pub winner: String,
}

/// Two contestants.
#[derive(serde::Deserialize, schemars::JsonSchema, a2a_card::Schema)]
pub struct Pair {
    /// The first contestant.
    pub a: String,
    /// The second contestant.
    pub b: String,
}
