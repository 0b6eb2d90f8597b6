use a2a_card::{agent, skill};
use futures::Stream;

pub struct Counter;

/// Counts.
#[agent(url = "https://counter.example.com/a2a")]
impl Counter {
    /// Streams numbers as bytes.
    #[skill]
    fn count(&self, _start: String) -> impl Stream<Item = Vec<u8>> + Send {
        futures::stream::iter(vec![vec![1u8], vec![2u8]])
    }
}

fn main() {
    let _ = <Counter as a2a_card::Agent>::card();
}
