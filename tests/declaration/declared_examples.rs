//! A skill's `examples(..)` that are JSON data for a structured skill follow its input schema:
//! the card of a declaration whose example breaks the schema does not build, and the error names
//! the example, where it is and what is wrong. Text examples, and JSON examples of a skill that
//! takes no schema, are left alone.

use a2a_card::lint::Rule;
use a2a_card::{Agent, Input, Schema, agent, skill};
use schemars::JsonSchema;
use serde::Deserialize;

/// Two contestants.
#[derive(Deserialize, JsonSchema, Schema)]
#[serde(deny_unknown_fields)]
pub struct Pair {
    /// The first contestant.
    pub a: String,
    /// The second contestant (in the schema; the handler reads `a` alone).
    #[allow(dead_code)]
    pub b: String,
}

pub struct Careless;

/// Judges fights between two contestants, from data or text.
#[agent(url = "https://judge.example.com/a2a")]
impl Careless {
    /// Names the winner of a pair of contestants.
    #[skill(examples("Lion vs Tiger", r#"{"a": "Lion", "b": "Tiger"}"#, r#"{"a": "Lion"}"#))]
    fn winner(&self, pair: Input<Pair>) -> String {
        match pair {
            Input::Data(p) => p.a,
            Input::Text(t) => t,
        }
    }

    /// Echoes the text it is given, word for word.
    #[skill(examples(r#"{"not": "data for this skill"}"#))]
    fn echo(&self, text: String) -> String {
        text
    }
}

pub struct Careful;

/// Judges fights between two contestants, from data or text.
#[agent(url = "https://judge.example.com/a2a")]
impl Careful {
    /// Names the winner of a pair of contestants.
    #[skill(examples("Lion vs Tiger", r#" {"a": "Lion", "b": "Tiger"} "#, "{not json}"))]
    fn winner(&self, pair: Input<Pair>) -> String {
        match pair {
            Input::Data(p) => p.a,
            Input::Text(t) => t,
        }
    }
}

#[test]
fn an_example_that_breaks_the_input_schema_fails_the_card_build_naming_it() {
    let err = Careless::card().unwrap_err();
    let invalid: Vec<_> = err
        .findings
        .iter()
        .filter(|f| f.rule == Rule::SkillExampleInvalid)
        .collect();
    assert_eq!(invalid.len(), 1, "{err}");
    assert_eq!(invalid[0].pointer, "/skills/0/examples/2");
    let message = &invalid[0].message;
    assert!(message.contains(r#"{"a": "Lion"}"#), "{message}");
    assert!(message.contains("`pair`"), "{message}");
    assert!(
        message.contains("\"b\" is a required property"),
        "{message}"
    );
    // The build error says it too.
    assert!(err.to_string().contains("/skills/0/examples/2"), "{err}");
}

#[test]
fn text_examples_and_valid_data_examples_build() {
    let card = Careful::card().expect("valid examples");
    assert_eq!(card.skills[0].examples.len(), 3);
}
