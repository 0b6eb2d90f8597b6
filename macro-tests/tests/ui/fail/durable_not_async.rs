use a2a_card::{agent, skill};

pub struct Bank;

/// Moves money.
#[agent(url = "https://bank.example.com/a2a")]
impl Bank {
    /// Pays a bill.
    #[skill(durable)]
    fn pay(&self, bill: String) -> String {
        bill
    }
}

fn main() {
    let _ = <Bank as a2a_card::Agent>::card();
}
