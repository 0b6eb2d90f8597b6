use a2a_card::{File, agent, skill};

pub struct Reader;

/// Reads documents.
#[agent(url = "https://reader.example.com/a2a")]
impl Reader {
    /// Counts the bytes of a document.
    #[skill]
    fn size(&self, document: File) -> String {
        document.len().to_string()
    }
}

fn main() {
    let _ = <Reader as a2a_card::Agent>::card();
}
