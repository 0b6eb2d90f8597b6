//! The fight-comparison agent of the input/output schemas extension's own example, declared
//! with the macros. Its card is the extension's example card, key for key.

use a2a_card::{Input, Output, Schema, agent, skill};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// The two contestants (the extension's `fightComparison` schema).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Schema)]
#[serde(deny_unknown_fields)]
pub struct FightComparison {
    /// The name of the first contestant
    pub a: String,
    /// The name of the second contestant
    pub b: String,
}

// The verdict (the extension's `fightResponse` schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Schema)]
#[serde(deny_unknown_fields)]
pub struct FightResponse {
    /// The name of the winner of the fight
    #[schemars(title = "Winner")]
    pub winner: String,
    /// The probability of the winner winning the fight
    #[schemars(title = "Probability", range(min = 0, max = 1))]
    pub probability: f64,
    /// A freeform field justifying the reason for choosing the winner
    #[schemars(title = "Explanation")]
    pub explanation: String,
}

/// The agent: no state, a deterministic judge.
pub struct FightClub;

/// Judges hypothetical fights between any two contestants, in plain text or as structured data.
#[agent(
    url(env = "FIGHT_CLUB_URL", default = "http://127.0.0.1:8080"),
    version = "1.0.0",
    streaming = false,
    push_notifications = false
)]
impl FightClub {
    /// Determines who would win in a hypothetical fight between two contestants. Requires a data
    /// payload with two fields: "a" (first contestant) and "b" (second contestant). Returns the
    /// winner, probability of victory, and an explanation.
    #[skill(
        tags("comparison", "fight", "ai-analysis", "prediction"),
        examples(
            r#"{"a": "Superman", "b": "Batman"}"#,
            r#"{"a": "Lion", "b": "Tiger"}"#,
            r#"{"a": "Godzilla", "b": "King Kong"}"#
        )
    )]
    pub async fn fight_comparison(&self, input: Input<FightComparison>) -> Output<FightResponse> {
        match input {
            Input::Data(fight) => Output::Data(judge(&fight)),
            Input::Text(text) => Output::Text(match parse_fight(&text) {
                Some(fight) => {
                    let verdict = judge(&fight);
                    format!(
                        "{} wins ({:.0}%): {}",
                        verdict.winner,
                        verdict.probability * 100.0,
                        verdict.explanation
                    )
                }
                None => "Name two contestants, as in \"Lion vs Tiger\".".to_owned(),
            }),
        }
    }
}

/// "Lion vs Tiger", "a lion or a tiger?"
fn parse_fight(text: &str) -> Option<FightComparison> {
    let text = text.trim().trim_end_matches('?');
    let (a, b) = text
        .split_once(" vs ")
        .or_else(|| text.split_once(" vs. "))
        .or_else(|| text.split_once(" or "))?;
    let (a, b) = (a.rsplit(", ").next()?.trim(), b.trim());
    (!a.is_empty() && !b.is_empty()).then(|| FightComparison {
        a: a.to_owned(),
        b: b.to_owned(),
    })
}

/// A deterministic judge: the contestant whose name carries more letters wins, more surely the
/// bigger the difference. No model, no network.
pub fn judge(fight: &FightComparison) -> FightResponse {
    let weight = |name: &str| name.chars().filter(|c| c.is_alphanumeric()).count() as f64;
    let (wa, wb) = (weight(&fight.a), weight(&fight.b));
    let (winner, loser, ww, wl) = if wa >= wb {
        (&fight.a, &fight.b, wa, wb)
    } else {
        (&fight.b, &fight.a, wb, wa)
    };
    let probability = if ww + wl == 0.0 {
        0.5
    } else {
        (0.5 + (ww - wl) / (2.0 * (ww + wl))).min(0.99)
    };
    FightResponse {
        winner: winner.clone(),
        probability: (probability * 100.0).round() / 100.0,
        explanation: format!("{winner} brings more to the fight than {loser}."),
    }
}
