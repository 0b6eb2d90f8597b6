//! Budgets: how long a caller gives a new task, and how many model tokens, carried down the
//! agents the task calls.
//!
//! A message that makes a task may carry a budget in its metadata, under
//! [`BUDGET_EXTENSION_URI`]: `{"ms": N}`, the milliseconds the caller waits at most, and/or
//! `{"tokens": T}`, the model tokens (input and output) the task may use at most
//! ([`tokens_of`]; a model loop, `rig::ModelLoop`, stops once they are spent, and a call the
//! task makes sends on what is left). The serving
//! agent turns it into the task's deadline as the message arrives (its own clock, so that no
//! two clocks are compared) and the handler reads it ([`SkillContext::deadline`],
//! [`SkillContext::budget`]); a durable task keeps it in its journal, so a run after a takeover
//! has the same deadline. A call the handler makes with [`SkillContext::call`] sends what is
//! left of it on, and stops waiting for the agent it calls once it is spent.
//!
//! A budget is information, not a timer: the serving agent does not end a task whose deadline
//! passed; the handler decides what to do with the time it has (answer with what it has, skip
//! a slow step). Every served card declares the extension.
//!
//! ```
//! use std::time::Duration;
//! use a2a_card::budget::{BUDGET_EXTENSION_URI, budget_of};
//!
//! let metadata = serde_json::json!({ BUDGET_EXTENSION_URI: { "ms": 1500 } });
//! let metadata = serde_json::from_value(metadata)?;
//! assert_eq!(budget_of(Some(&metadata)), Ok(Some(Duration::from_millis(1500))));
//! assert_eq!(budget_of(None), Ok(None));
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! [`SkillContext::deadline`]: crate::SkillContext::deadline
//! [`SkillContext::budget`]: crate::SkillContext::budget
//! [`SkillContext::call`]: crate::SkillContext::call

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;

/// The extension under which a message's metadata carries the budget of the task it makes:
/// `{"ms": N}`.
pub const BUDGET_EXTENSION_URI: &str = "https://github.com/a2a-card/a2a-card/extensions/budget/v1";

/// The longest budget a message gives: longer ones are read as this (a year).
///
/// ```
/// use a2a_card::budget::{BUDGET_EXTENSION_URI, MAX_BUDGET, budget_of};
///
/// let metadata = serde_json::json!({ BUDGET_EXTENSION_URI: { "ms": u64::MAX } });
/// let metadata = serde_json::from_value(metadata)?;
/// assert_eq!(budget_of(Some(&metadata)), Ok(Some(MAX_BUDGET)));
/// # Ok::<(), serde_json::Error>(())
/// ```
pub const MAX_BUDGET: Duration = Duration::from_secs(365 * 24 * 3600);

/// The budget `metadata` (a message's) gives, if any (at most [`MAX_BUDGET`]); what is wrong with the entry otherwise
/// (said of the entry, to be put after its name).
pub fn budget_of(metadata: Option<&HashMap<String, Value>>) -> Result<Option<Duration>, String> {
    let Some(entry) = metadata.and_then(|m| m.get(BUDGET_EXTENSION_URI)) else {
        return Ok(None);
    };
    // A budget of tokens alone gives no time.
    if entry.get("ms").is_none() && entry.get("tokens").is_some() {
        return Ok(None);
    }
    // A whole number, however the binding carried it (ProtoJSON's `Struct` has doubles only).
    let max = u64::try_from(MAX_BUDGET.as_millis()).unwrap_or(u64::MAX);
    let ms = entry.get("ms").and_then(|ms| {
        ms.as_u64().or_else(|| {
            ms.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(|f| if f >= max as f64 { max } else { f as u64 })
        })
    });
    match ms {
        Some(ms) => Ok(Some(Duration::from_millis(ms.min(max)))),
        None => Err(format!(
            "is {entry}; it is an object whose `ms` is the budget in milliseconds (an integer, 0 or more)"
        )),
    }
}

/// The budget of model tokens `metadata` (a message's) gives (`{"tokens": T}` under
/// [`BUDGET_EXTENSION_URI`]), if any; what is wrong with the entry otherwise (said of the
/// entry, to be put after its name).
///
/// ```
/// use a2a_card::budget::{BUDGET_EXTENSION_URI, budget_of, tokens_of};
///
/// let metadata = serde_json::json!({ BUDGET_EXTENSION_URI: { "tokens": 4000 } });
/// let metadata = serde_json::from_value(metadata)?;
/// assert_eq!(tokens_of(Some(&metadata)), Ok(Some(4000)));
/// assert_eq!(budget_of(Some(&metadata)), Ok(None), "no time given");
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn tokens_of(metadata: Option<&HashMap<String, Value>>) -> Result<Option<u64>, String> {
    let Some(tokens) = metadata
        .and_then(|m| m.get(BUDGET_EXTENSION_URI))
        .and_then(|entry| entry.get("tokens"))
    else {
        return Ok(None);
    };
    tokens
        .as_u64()
        .or_else(|| {
            tokens
                .as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < u64::MAX as f64)
                .map(|f| f as u64)
        })
        .map(Some)
        .ok_or_else(|| {
            format!(
                "has `tokens` {tokens}; it is the budget in model tokens (an integer, 0 or more)"
            )
        })
}

/// Gives the task `message` makes a budget of `budget` (under [`BUDGET_EXTENSION_URI`] in its
/// metadata), read by the handler as [`SkillContext::budget`](crate::SkillContext::budget).
///
/// ```
/// # #[cfg(feature = "client")] {
/// use std::time::Duration;
/// use a2a_card::budget::{budget_of, with_budget};
///
/// let mut message = a2a::Message::new(a2a::Role::User, vec![a2a::Part::text("Lisbon")]);
/// with_budget(&mut message, Duration::from_secs(30));
/// assert_eq!(budget_of(message.metadata.as_ref()), Ok(Some(Duration::from_secs(30))));
/// # }
/// ```
#[cfg(any(feature = "client", feature = "server"))]
pub fn with_budget(message: &mut a2a::Message, budget: Duration) {
    let ms = u64::try_from(budget.min(MAX_BUDGET).as_millis()).unwrap_or(u64::MAX);
    set_budget(message, "ms", serde_json::json!(ms));
}

/// Gives the task `message` makes a budget of `tokens` model tokens (beside its budget of
/// time, if it has one), read by the handler as
/// [`SkillContext::token_budget`](crate::SkillContext::token_budget).
///
/// ```
/// # #[cfg(feature = "client")] {
/// use std::time::Duration;
/// use a2a_card::budget::{budget_of, tokens_of, with_budget, with_tokens};
///
/// let mut message = a2a::Message::new(a2a::Role::User, vec![a2a::Part::text("Lisbon")]);
/// with_budget(&mut message, Duration::from_secs(30));
/// with_tokens(&mut message, 2_000);
/// assert_eq!(budget_of(message.metadata.as_ref()), Ok(Some(Duration::from_secs(30))));
/// assert_eq!(tokens_of(message.metadata.as_ref()), Ok(Some(2_000)));
/// # }
/// ```
#[cfg(any(feature = "client", feature = "server"))]
pub fn with_tokens(message: &mut a2a::Message, tokens: u64) {
    set_budget(message, "tokens", serde_json::json!(tokens));
}

/// Sets `key` of the budget entry of `message`'s metadata to `value` (the entry made an object
/// where it is not one).
#[cfg(any(feature = "client", feature = "server"))]
fn set_budget(message: &mut a2a::Message, key: &str, value: Value) {
    let metadata = message.metadata.get_or_insert_with(HashMap::new);
    let mut entry = match metadata.remove(BUDGET_EXTENSION_URI) {
        Some(Value::Object(entry)) => entry,
        _ => serde_json::Map::new(),
    };
    entry.insert(key.to_owned(), value);
    metadata.insert(BUDGET_EXTENSION_URI.to_owned(), Value::Object(entry));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_without_whole_milliseconds_says_what_it_should_be() {
        for bad in [
            serde_json::json!({"ms": -1}),
            serde_json::json!({"ms": 1.5}),
            serde_json::json!({"ms": "5s"}),
            serde_json::json!(5),
        ] {
            let metadata = HashMap::from([(BUDGET_EXTENSION_URI.to_owned(), bad.clone())]);
            let why = budget_of(Some(&metadata)).unwrap_err();
            assert!(
                why.contains(&bad.to_string()) && why.contains("`ms`"),
                "{why}"
            );
        }
        // As ProtoJSON carries it: a double.
        let double = HashMap::from([(
            BUDGET_EXTENSION_URI.to_owned(),
            serde_json::json!({"ms": 1500.0}),
        )]);
        assert_eq!(
            budget_of(Some(&double)),
            Ok(Some(Duration::from_millis(1500)))
        );
        // Longer than a year: a year, however it came.
        for long in [
            serde_json::json!({"ms": u64::MAX}),
            serde_json::json!({"ms": 1e300}),
        ] {
            let metadata = HashMap::from([(BUDGET_EXTENSION_URI.to_owned(), long)]);
            assert_eq!(budget_of(Some(&metadata)), Ok(Some(MAX_BUDGET)));
        }
        let other = HashMap::from([("other".to_owned(), serde_json::json!(1))]);
        assert_eq!(budget_of(Some(&other)), Ok(None));
    }

    #[test]
    fn a_budget_of_tokens_is_a_whole_number_beside_or_without_one_of_time() {
        let entry = |v: serde_json::Value| HashMap::from([(BUDGET_EXTENSION_URI.to_owned(), v)]);
        let both = entry(serde_json::json!({"ms": 500, "tokens": 4000}));
        assert_eq!(tokens_of(Some(&both)), Ok(Some(4000)));
        assert_eq!(budget_of(Some(&both)), Ok(Some(Duration::from_millis(500))));
        let double = entry(serde_json::json!({"tokens": 4000.0}));
        assert_eq!(tokens_of(Some(&double)), Ok(Some(4000)));
        assert_eq!(budget_of(Some(&double)), Ok(None));
        for bad in [
            serde_json::json!({"tokens": -1}),
            serde_json::json!({"tokens": 1.5}),
            serde_json::json!({"tokens": "4k"}),
        ] {
            let why = tokens_of(Some(&entry(bad.clone()))).unwrap_err();
            assert!(why.contains("`tokens`") && why.contains("integer"), "{why}");
        }
        // Neither: the entry says what it should hold.
        assert!(budget_of(Some(&entry(serde_json::json!({})))).is_err());
        assert_eq!(
            tokens_of(Some(&entry(serde_json::json!({"ms": 5})))),
            Ok(None)
        );
    }
}
