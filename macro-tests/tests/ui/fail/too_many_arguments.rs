use a2a_card::{File, SkillContext, agent, skill};

struct Judge;

/// Judges fights.
#[agent(url = "https://judge.example.com/a2a")]
impl Judge {
    /// Picks the winner of a fight from nine pieces of evidence.
    #[skill]
    fn winner(
        &self,
        fight: String,
        context: SkillContext,
        a: File,
        b: File,
        c: File,
        d: File,
        e: File,
        f: File,
        g: File,
    ) -> String {
        let _ = (context, a, b, c, d, e, f, g);
        fight
    }
}

fn main() {}
