use a2a_card::{SkillContext, agent, skill};

pub struct Calculator;

/// Does sums.
#[agent(url = "https://calc.example.com/a2a")]
impl Calculator {
    /// Adds two numbers.
    #[skill]
    fn add(&self, a: i32, b: i32, _context: SkillContext) -> String {
        (a + b).to_string()
    }
}

fn main() {
    let _ = <Calculator as a2a_card::Agent>::card();
}
