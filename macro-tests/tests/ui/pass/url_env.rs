//! `url(env = "VAR", default = "...")`: the environment overrides the default at run time.

use a2a_card::{Agent, agent, skill};

pub struct Local;

/// Runs on this machine unless told otherwise.
#[agent(url(
    env = "A2A_CARD_UI_TEST_UNSET_URL",
    default = "http://127.0.0.1:8080/a2a"
))]
impl Local {
    /// Repeats the text.
    #[skill]
    fn echo(&self, text: String) -> String {
        text
    }
}

pub struct Deployed;

/// Runs where the environment says.
#[agent(url(env = "A2A_CARD_UI_TEST_URL", default = "http://localhost:8080"))]
impl Deployed {
    /// Repeats the text.
    #[skill]
    fn echo(&self, text: String) -> String {
        text
    }
}

fn main() {
    // SAFETY: no other thread runs yet.
    unsafe { std::env::set_var("A2A_CARD_UI_TEST_URL", "https://echo.example.com/a2a") };
    assert_eq!(
        Local::card().unwrap().interfaces[0].url,
        "http://127.0.0.1:8080/a2a"
    );
    assert_eq!(
        Deployed::card().unwrap().interfaces[0].url,
        "https://echo.example.com/a2a"
    );
}
