use a2a_card::{SkillContext, agent, skill};

pub struct Bank;

/// Moves money.
#[agent(url = "https://bank.example.com/a2a")]
impl Bank {
    /// Pays a bill.
    #[skill(durable = 2)]
    async fn pay(&self, bill: String, ctx: SkillContext) -> String {
        let _ = ctx;
        bill
    }
}

fn main() {
    let _ = <Bank as a2a_card::Agent>::card();
}
