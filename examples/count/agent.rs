//! The counting agent: one skill that streams as many chunks as it is asked for.

use futures::Stream;

/// Counts out loud.
pub struct Counter;

/// Counts to the number it is sent, one chunk per number: the smallest streaming agent.
#[a2a_card::agent(url = "http://127.0.0.1:8080", streaming)]
impl Counter {
    /// Streams `chunk 0`, `chunk 1`, ... up to the number given as the message's text (none
    /// for text that is not a whole number).
    #[a2a_card::skill(examples("3", "10000"))]
    fn count(&self, n: String) -> impl Stream<Item = String> + Send {
        let n: u64 = n.trim().parse().unwrap_or(0);
        futures::stream::iter((0..n).map(|i| format!("chunk {i}")))
    }
}
