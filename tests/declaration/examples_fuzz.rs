//! Examples are code users copy: none may panic on input. Every skill of every example agent is
//! fuzzed through the path a served message takes (the dispatcher, then the agent's generated
//! `call_skill`), with arbitrary text, data drawn from the skill's own input schema, and files
//! (calendar-shaped text, arbitrary bytes) of the media types the skills take and of others.
//!
//! Besides "no panic", three properties hold: data within a schema reaches the skill that takes
//! it; that skill accepts it (no input error: the schema and the Rust type agree); and an answer
//! with data follows the skill's published output schema.

use crate::fight_club::agent as fight_club;
use crate::guarded_judge::agent as guarded_judge;
use crate::trip_planner::agent as trip_planner;

use std::time::Duration;

use a2a_card::dispatch::{Decision, Dispatcher};
use a2a_card::{Agent, File, Reply, SkillError};
use proptest::prelude::*;
use proptest::strategy::{Union, ValueTree};
use serde_json::{Map, Value, json};

/// How deep the generated data nests before containers are left empty.
const MAX_DEPTH: u32 = 4;

/// Values that follow `schema` (a draft 2020-12 schema; `$ref`s resolve against `root`): the
/// keywords schemars emits for Rust types (`type`, `properties`, `required`, `items`, bounds,
/// `enum`, `const`, `anyOf`/`oneOf`, `$defs`).
fn values(schema: &Value, root: &Value, depth: u32) -> BoxedStrategy<Value> {
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        let pointer = target.strip_prefix('#').expect("a local $ref");
        let resolved = root
            .pointer(pointer)
            .unwrap_or_else(|| panic!("{target} resolves in {root}"));
        return values(resolved, root, depth);
    }
    if let Some(value) = schema.get("const") {
        return Just(value.clone()).boxed();
    }
    if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
        return proptest::sample::select(choices.clone()).boxed();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            return Union::new(branches.iter().map(|b| values(b, root, depth))).boxed();
        }
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        // `true`, `{}` or a description only: any JSON.
        _ => vec!["null", "boolean", "integer", "string"],
    };
    Union::new(types.into_iter().map(|t| of_type(t, schema, root, depth))).boxed()
}

fn of_type(kind: &str, schema: &Value, root: &Value, depth: u32) -> BoxedStrategy<Value> {
    let number = |key: &str| schema.get(key).and_then(Value::as_f64);
    match kind {
        "null" => Just(Value::Null).boxed(),
        "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
        "integer" => {
            let low = number("minimum")
                .or(number("exclusiveMinimum").map(|m| m + 1.0))
                .map_or(i64::MIN, |m| m.ceil() as i64);
            let high = number("maximum")
                .or(number("exclusiveMaximum").map(|m| m - 1.0))
                .map_or(i64::MAX, |m| m.floor() as i64);
            (low..=high).prop_map(Value::from).boxed()
        }
        "number" => {
            let low = number("minimum").unwrap_or(-1e12);
            let high = number("maximum").unwrap_or(1e12);
            (low..=high).prop_map(|f| json!(f)).boxed()
        }
        "string" => {
            let min = number("minLength").unwrap_or(0.0) as usize;
            let max = number("maxLength").map_or(min + 24, |m| m as usize);
            match schema.get("pattern").and_then(Value::as_str) {
                Some(pattern) => proptest::string::string_regex(pattern)
                    .unwrap_or_else(|e| panic!("pattern {pattern}: {e}"))
                    .prop_map(Value::String)
                    .boxed(),
                None => prop_oneof![
                    // Any text, most of it not ASCII.
                    proptest::collection::vec(any::<char>(), min..=max)
                        .prop_map(|cs| Value::String(cs.into_iter().collect())),
                    // A shape strings often have (dates, here) that reaches further in a skill.
                    "[0-9]{4}-[0-9]{2}-[0-9]{2}".prop_map(Value::String),
                ]
                .boxed(),
            }
        }
        "array" => {
            let item = schema.get("items").cloned().unwrap_or(json!({}));
            let min = number("minItems").unwrap_or(0.0) as usize;
            let max = if depth >= MAX_DEPTH {
                min
            } else {
                number("maxItems").map_or(min + 3, |m| m as usize)
            };
            proptest::collection::vec(values(&item, root, depth + 1), min..=max)
                .prop_map(Value::Array)
                .boxed()
        }
        "object" => {
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = schema
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .map(|(name, property)| {
                    let field = values(property, root, depth + 1)
                        .prop_map({
                            let name = name.clone();
                            move |v| Some((name.clone(), v))
                        })
                        .boxed();
                    if required.contains(&name.as_str()) {
                        field
                    } else {
                        prop_oneof![Just(None), field].boxed()
                    }
                })
                .collect();
            fields
                .prop_map(|fields| {
                    Value::Object(fields.into_iter().flatten().collect::<Map<_, _>>())
                })
                .boxed()
        }
        other => panic!("a schema type this generator does not know: {other}"),
    }
}

/// An iCalendar-like text: `DTSTART;VALUE=DATE:` lines with dates, digits and any text, and
/// other lines.
fn calendar() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        "[0-9]{8}".prop_map(|d| format!("DTSTART;VALUE=DATE:{d}")),
        "\\PC{0,10}".prop_map(|d| format!("DTSTART;VALUE=DATE:{d}")),
        // Digits and characters of two and three bytes: often eight bytes, rarely eight chars.
        "[0-9é€]{3,8}".prop_map(|d| format!("DTSTART;VALUE=DATE:{d}")),
        "\\PC{0,30}",
    ];
    proptest::collection::vec(line, 0..8).prop_map(|lines| lines.join("\r\n").into_bytes())
}

/// Files: of a media type from `modes` (what the agent's skills take), of others, or of none;
/// calendar-shaped or arbitrary bytes.
fn files(modes: Vec<String>) -> impl Strategy<Value = Vec<File>> {
    let others = [
        "application/octet-stream",
        "TEXT/Calendar; charset=utf-8",
        "",
    ]
    .map(String::from);
    let media = if modes.is_empty() {
        proptest::sample::select(others.to_vec()).boxed()
    } else {
        // Mostly what a skill takes, so that most files reach a handler.
        prop_oneof![
            3 => proptest::sample::select(modes),
            1 => proptest::sample::select(others.to_vec()),
        ]
        .boxed()
    };
    let file = (
        media,
        prop_oneof![calendar(), proptest::collection::vec(any::<u8>(), 0..64)],
    )
        .prop_map(|(media, bytes)| {
            let mut file = File::from_bytes(media.clone(), bytes);
            if media.is_empty() {
                file.media_type = None;
            }
            file
        });
    proptest::collection::vec(file, 0..3)
}

/// A message an agent can be sent, and the files taken out of it (as the server takes file
/// parts out before dispatching): text, data of one of its skills' schemas (with text or
/// not), or nothing but the files.
#[derive(Debug, Clone)]
struct Sent {
    message: Value,
    files: Vec<File>,
    /// The schema the data part names, when there is one.
    schema: Option<&'static str>,
}

fn sent<A: Agent>() -> impl Strategy<Value = Sent> {
    let mut parts: Vec<BoxedStrategy<(Vec<Value>, Option<&'static str>)>> = vec![
        "\\PC{0,40}"
            .prop_map(|t| (vec![json!({"text": t})], None))
            .boxed(),
        Just((Vec::new(), None)).boxed(),
    ];
    let mut schemas: Vec<&'static str> = Vec::new();
    for skill in A::SKILLS {
        let Some(schema) = skill.input.schema else {
            continue;
        };
        if schemas.contains(&schema.name) {
            continue;
        }
        schemas.push(schema.name);
        let root = (schema.schema)();
        let mode = format!("application/json;schema={}", schema.name);
        parts.push(
            (values(&root, &root, 0), proptest::option::of("\\PC{0,20}"))
                .prop_map(move |(data, text)| {
                    let mut parts = vec![json!({"data": data, "mediaType": mode})];
                    parts.extend(text.map(|t| json!({"text": t})));
                    (parts, Some(schema.name))
                })
                .boxed(),
        );
    }
    let modes: Vec<String> = A::SKILLS
        .iter()
        .filter(|s| s.input.files)
        .flat_map(|s| s.extra_input_modes.iter().map(|m| (*m).to_owned()))
        .collect();
    (Union::new(parts), files(modes)).prop_map(|((parts, schema), files)| Sent {
        message: json!({"role": "ROLE_USER", "messageId": "m1", "parts": parts}),
        files,
        schema,
    })
}

/// Sends `sent` to `agent` the way the server does, and checks the properties of the module.
fn send<A: Agent>(agent: &A, sent: Sent) -> Result<(), TestCaseError> {
    let dispatcher = Dispatcher::for_agent::<A>().expect("the schemas compile");
    let (skill, call) = match dispatcher.dispatch_with_files(sent.message, sent.files, None) {
        Decision::Run { skill, call } => (skill, call),
        Decision::Reject(e) => {
            // Data within its schema is never rejected for the data's sake.
            prop_assert!(
                !matches!(e, a2a_card::dispatch::DispatchError::InvalidData { .. }),
                "data drawn from its own schema was rejected: {e}"
            );
            return Ok(());
        }
        other => return Err(TestCaseError::fail(format!("{other:?}"))),
    };
    if let Some(schema) = sent.schema {
        prop_assert_eq!(Some(skill), dispatcher.skill_for_schema(schema));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let outcome = runtime.block_on(agent.call_skill(skill, call));
    let declared = &A::SKILLS[skill];
    match outcome {
        Err(SkillError::Input(m)) if sent.schema.is_some() => Err(TestCaseError::fail(format!(
            "skill `{}` refused data drawn from its own input schema: {m}",
            declared.id
        ))),
        Err(e @ (SkillError::Output(_) | SkillError::UnknownSkill(_))) => {
            Err(TestCaseError::fail(format!("skill `{}`: {e}", declared.id)))
        }
        Ok(Reply::Data { schema, value }) => {
            let published = declared
                .output
                .schema
                .filter(|s| s.name == schema)
                .unwrap_or_else(|| {
                    panic!("skill `{}` answers with schema `{schema}`", declared.id)
                });
            let validator = jsonschema::validator_for(&(published.schema)()).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&value)
                .map(|e| e.to_string())
                .collect();
            prop_assert!(errors.is_empty(), "{value} breaks `{schema}`: {errors:?}");
            Ok(())
        }
        _ => Ok(()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fight_club_takes_any_input(sent in sent::<fight_club::FightClub>()) {
        send(&fight_club::FightClub, sent)?;
    }

    #[test]
    fn trip_planner_takes_any_input(sent in sent::<trip_planner::TripPlanner>()) {
        send(&trip_planner::TripPlanner { pace: Duration::ZERO }, sent)?;
    }

    #[test]
    fn guarded_judge_takes_any_input(sent in sent::<guarded_judge::GuardedJudge>()) {
        send(&guarded_judge::GuardedJudge, sent)?;
    }

    #[test]
    fn trip_planner_reads_any_calendar(bytes in calendar()) {
        let file = File::from_bytes("text/calendar", bytes);
        let days = trip_planner::busy_days(&file);
        prop_assert!(days.iter().all(|d| trip_planner::format_date(*d).len() == 10));
    }
}

/// Every example's agent is fuzzed: the schema-less skills reach their handler through text,
/// each schema through its data (a skill added to an example is covered without a test change).
#[test]
fn each_example_skill_is_reached() {
    fn reached<A: Agent>(agent: &A) -> Vec<&'static str> {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let dispatcher = Dispatcher::for_agent::<A>().unwrap();
        let mut seen = Vec::new();
        for _ in 0..200 {
            let sent = sent::<A>().new_tree(&mut runner).unwrap().current();
            if let Decision::Run { skill, .. } =
                dispatcher.dispatch_with_files(sent.message.clone(), sent.files.clone(), None)
            {
                seen.push(A::SKILLS[skill].id);
            }
            send(agent, sent).unwrap();
        }
        seen.sort();
        seen.dedup();
        seen
    }
    assert_eq!(reached(&fight_club::FightClub), ["fight-comparison"]);
    assert_eq!(
        reached(&trip_planner::TripPlanner {
            pace: Duration::ZERO
        }),
        ["export-calendar", "plan-trip"]
    );
    assert_eq!(
        reached(&guarded_judge::GuardedJudge),
        ["odds", "record", "winner"]
    );
}

/// The case: a `DTSTART` value of eight bytes that are not eight characters.
#[test]
fn a_non_ascii_dtstart_is_skipped_not_sliced() {
    let ics = "BEGIN:VCALENDAR\r\nDTSTART;VALUE=DATE:é0é212\r\nDTSTART;VALUE=DATE:20261202\r\nEND:VCALENDAR\r\n";
    let days = trip_planner::busy_days(&File::from_bytes("text/calendar", ics.into()));
    assert_eq!(days, [trip_planner::parse_date("2026-12-02").unwrap()]);
}
