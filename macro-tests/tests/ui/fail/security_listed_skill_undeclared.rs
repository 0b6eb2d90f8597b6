use a2a_card::{agent, skill};

mod records {
    /// Records a fight.
    #[a2a_card::skill(security(oauth = ["fights:write"]))]
    pub fn record(fight: String) -> String {
        fight
    }
}

pub struct Judge;

/// Judges fights, for known callers.
#[agent(
    url = "https://judge.example.com/a2a",
    security_schemes(bearer = bearer("JWT")),
    skills(records::record)
)]
impl Judge {
    /// Names the winner.
    #[skill(security(bearer))]
    fn winner(&self, fight: String) -> String {
        fight
    }
}

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
}
