use a2a_card::{File, agent, skill};

pub struct Painter;

/// Paints pictures.
#[agent(url = "https://painter.example.com/a2a")]
impl Painter {
    /// Paints what it is told, as a PNG image.
    #[skill]
    fn paint(&self, subject: String) -> Result<File, String> {
        Ok(File::from_bytes("image/png", subject.into_bytes()))
    }
}

fn main() {
    let _ = <Painter as a2a_card::Agent>::card();
}
