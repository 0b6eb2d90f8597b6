use a2a_card::{agent, skill};

pub struct Judge;

/// Judges fights, for known callers.
#[agent(
    url = "https://judge.example.com/a2a",
    security_schemes(key = api_key(header = "X-API-Key")),
    security(key)
)]
impl Judge {
    /// Records a fight.
    #[skill(security(key = ["fights:write"]))]
    fn record(&self, fight: String) -> String {
        fight
    }
}

fn main() {
    let _ = <Judge as a2a_card::Agent>::card();
}
