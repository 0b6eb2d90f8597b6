//! `&self` methods, async and sync, inside the `#[agent]` block; both can be called.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use a2a_card::__private::{CallInput, SkillCall};
use a2a_card::{Agent, Reply, SkillContext, agent, skill};

pub struct Echo {
    prefix: &'static str,
}

/// Repeats what it is told.
#[agent(url = "https://echo.example.com/a2a", version = "2.0.0")]
impl Echo {
    /// Repeats the text after a pause.
    #[skill]
    async fn slow_echo(&self, text: String) -> String {
        std::future::ready(()).await;
        format!("{}{text}", self.prefix)
    }

    /// Repeats the text at once.
    #[skill(tags("echo"), examples("hello"))]
    fn echo(&self, text: String) -> String {
        format!("{}{text}", self.prefix)
    }
}

fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

fn call(agent: &Echo, index: usize, text: &str) -> Reply {
    let call = SkillCall::new(CallInput::Text(text.to_owned()), SkillContext::default());
    block_on(agent.call_skill(index, call)).unwrap()
}

fn main() {
    let card = Echo::card().unwrap();
    assert_eq!(card.name, "Echo");
    assert_eq!(card.description, "Repeats what it is told.");
    assert_eq!(card.version, "2.0.0");
    assert_eq!(card.interfaces[0].url, "https://echo.example.com/a2a");
    let ids: Vec<&str> = card.skills.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["slow-echo", "echo"]);
    assert_eq!(card.skills[0].name, "Slow Echo");
    assert_eq!(
        card.skills[0].description,
        "Repeats the text after a pause."
    );
    assert_eq!(card.skills[1].tags, ["echo"]);
    assert_eq!(card.skills[1].examples, ["hello"]);
    for skill in &card.skills {
        assert_eq!(skill.input_modes, ["text/plain"]);
        assert_eq!(skill.output_modes, ["text/plain"]);
    }

    let agent = Echo { prefix: "> " };
    assert_eq!(call(&agent, 0, "hi"), Reply::Text("> hi".into()));
    assert_eq!(call(&agent, 1, "ho"), Reply::Text("> ho".into()));
}
