use a2a_card::{agent, skill};

pub struct Kitchen;

/// Cooks.
#[agent(url = "https://kitchen.example.com/a2a")]
impl Kitchen {
    /// Bakes a cake.
    #[skill(concurrency = 2usize)]
    fn bake(&self, cake: String) -> String {
        cake
    }
}

fn main() {
    let _ = <Kitchen as a2a_card::Agent>::card();
}
