use a2a_card::{agent, skill};
use futures::Stream;

pub struct Counter;

/// Counts.
#[agent(url = "https://counter.example.com/a2a", streaming = false)]
impl Counter {
    /// Streams the numbers one to three.
    #[skill]
    fn count(&self, _start: String) -> impl Stream<Item = String> + Send {
        futures::stream::iter(["1", "2", "3"].map(String::from))
    }
}

fn main() {
    let _ = <Counter as a2a_card::Agent>::card();
}
