//! An associated function without `self` inside the `#[agent]` block is a skill too, called
//! through the dispatch like a method.

use std::future::Future;
use std::task::{Context, Poll, Waker};

use a2a_card::__private::{CallInput, SkillCall};
use a2a_card::{Agent, Reply, SkillContext, agent, skill};

pub struct Shouter;

/// Shouts.
#[agent(url = "https://shout.example.com/a2a")]
impl Shouter {
    /// Repeats the text in capitals.
    #[skill]
    fn shout(text: String) -> String {
        text.to_uppercase()
    }

    /// Repeats the text in capitals, later.
    #[skill]
    async fn shout_later(text: String) -> String {
        Self::shout(text)
    }
}

/// Runs a future that never waits (the handlers do not).
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
    }
}

/// The text skill number `index` answers to `text`.
fn call(index: usize, text: &str) -> String {
    let call = SkillCall::new(CallInput::Text(text.into()), SkillContext::default());
    match block_on(Shouter.call_skill(index, call)) {
        Ok(Reply::Text(text)) => text,
        other => panic!("skill {index} answered {other:?}"),
    }
}

fn main() {
    let card = Shouter::card().unwrap();
    assert_eq!(card.skills.len(), 2);
    assert_eq!(card.skills[0].id, "shout");
    assert_eq!(card.skills[1].id, "shout-later");
    assert_eq!(card.skills[0].input_modes, ["text/plain"]);
    assert_eq!(Shouter::shout("a".into()), "A");
    assert_eq!(call(0, "hey"), "HEY");
    assert_eq!(call(1, "later"), "LATER");
}
