use a2a_card::{agent, skill};

pub struct Echo;

/// Echoes.
#[agent(url = "https://echo.example.com/a2a")]
impl Echo {
    /// Says back what it is told, later.
    #[skill]
    fn echo(&self, text: String) -> impl std::future::Future<Output = String> {
        async move { text }
    }
}

fn main() {
    let _ = <Echo as a2a_card::Agent>::card();
}
