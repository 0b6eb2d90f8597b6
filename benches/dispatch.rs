//! What the structured input flow costs.
//!
//! 1. `dispatch`: the fight-comparison message (A2A 1.0, one data part with
//!    `application/json;schema=fightComparison`) through [`Dispatcher::dispatch`] (find the
//!    part, validate it, route it) and then `serde_json::from_value::<FightComparison>` of the
//!    routed data, against the baseline of `from_value` alone on the same data. Target: at most
//!    1.5x the baseline.
//!    A second baseline, `hand-routed`, takes the data out of the part it is known to be in and
//!    drops the rest of the message, as a dispatch does: the ratio to it is what finding,
//!    validating and routing add, apart from owning the message.
//! 2. `routing`: the same kind of message dispatched over 1 skill and over 1,000 skills (1,000
//!    schema names, the last one named). Target: the 1,000-skill dispatch within 1.1x of the
//!    1-skill one.
//!
//! Criterion measures each side on its own; then the ratios are measured head to head, in
//! interleaved blocks (A, B, B, A, ...: each block times [`BLOCK`] calls on inputs cloned before
//! the clock starts, outputs dropped after it stops) and printed from the medians of the block
//! times:
//!
//! ```text
//! cargo bench --bench dispatch
//! ```
//!
//! Under `cargo test --benches` every function runs once, as a smoke test, and no ratio is timed.

use examples::fight_club::agent as fight_club;

use std::hint::black_box;
use std::time::{Duration, Instant};

use a2a_card::__private::{CallInput, Io, SchemaRef, SkillDecl};
use a2a_card::dispatch::{Decision, Dispatcher};
use criterion::{BatchSize, Criterion};
use fight_club::{FightClub, FightComparison};
use serde_json::{Value, json};

/// Calls per timed block of the ratio measurement.
const BLOCK: usize = 1_000;
/// Blocks per side of each ratio.
const ROUNDS: usize = 400;
/// Skills of the large dispatcher.
const MANY: usize = 1_000;

/// The 1.0 message carrying `data` as a structured part of schema `schema`.
fn message(schema: &str, data: Value) -> Value {
    json!({
        "role": "ROLE_USER",
        "messageId": "m1",
        "contextId": "c1",
        "parts": [{"data": data, "mediaType": format!("application/json;schema={schema}")}]
    })
}

fn fight() -> Value {
    json!({"a": "Lion", "b": "Tiger"})
}

/// The whole structured path: dispatch, then deserialise the routed data as the handler would.
fn dispatch_fight(dispatcher: &Dispatcher, message: Value) -> FightComparison {
    match dispatcher.dispatch(message, None) {
        Decision::Run { call, .. } => match call.input {
            CallInput::Data(data) => {
                serde_json::from_value(data).expect("the data follows the schema")
            }
            other => panic!("expected data, got {other:?}"),
        },
        other => panic!("the message is valid: {other:?}"),
    }
}

/// The baseline: only the deserialisation.
fn from_value(data: Value) -> FightComparison {
    serde_json::from_value(data).expect("the data follows the schema")
}

/// A second baseline: the data taken out of the part it is known to be in, deserialised, and the
/// rest of the message dropped, as a dispatch does. What dispatch adds over this is finding the
/// part, validating it and routing it.
fn hand_routed(mut message: Value) -> FightComparison {
    let data = message["parts"][0]["data"].take();
    let fight = from_value(data);
    drop(message);
    fight
}

/// The routed skill of a dispatch (which must run).
fn route(dispatcher: &Dispatcher, message: Value) -> usize {
    match dispatcher.dispatch(message, None) {
        Decision::Run { skill, .. } => skill,
        other => panic!("the message is valid: {other:?}"),
    }
}

/// A small object schema, the same for every generated skill.
fn small_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "required": ["q"],
        "additionalProperties": false
    })
}

/// The schema name of generated skill `i`; every name has the same length, so the 1-skill and
/// 1,000-skill messages hash and parse alike.
fn schema_name(i: usize) -> &'static str {
    Box::leak(format!("schema{i:04}").into_boxed_str())
}

/// A skill that takes data of schema `name`.
fn skill(i: usize, name: &'static str) -> SkillDecl {
    let mut input = Io::NONE;
    input.schema = Some(SchemaRef {
        name,
        schema: small_schema,
    });
    SkillDecl {
        id: Box::leak(format!("skill-{i}").into_boxed_str()),
        name: "Generated",
        description: "A generated skill.",
        input,
        output: Io::TEXT,
        poisoned: false,
        ..SkillDecl::POISONED
    }
}

/// The dispatchers over 1 and over [`MANY`] skills, and the message naming the last schema of
/// the large one (which is the only schema of the small one).
fn routing_setup() -> (Dispatcher, Dispatcher, Value) {
    let last = schema_name(MANY - 1);
    let one = Dispatcher::new(&[skill(0, last)]).expect("the schema compiles");
    let skills: Vec<SkillDecl> = (0..MANY).map(|i| skill(i, schema_name(i))).collect();
    let many = Dispatcher::new(&skills).expect("the schemas compile");
    (one, many, message(last, json!({"q": "who wins?"})))
}

fn criterion_benches(c: &mut Criterion) {
    let dispatcher = Dispatcher::for_agent::<FightClub>().expect("the schemas compile");
    let msg = message("fightComparison", fight());
    let data = fight();
    let mut group = c.benchmark_group("dispatch");
    group.bench_function("dispatch+from_value", |b| {
        b.iter_batched(
            || msg.clone(),
            |m| dispatch_fight(&dispatcher, m),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("from_value", |b| {
        b.iter_batched(|| data.clone(), from_value, BatchSize::SmallInput)
    });
    group.bench_function("hand-routed", |b| {
        b.iter_batched(|| msg.clone(), hand_routed, BatchSize::SmallInput)
    });
    group.finish();

    let (one, many, msg) = routing_setup();
    let mut group = c.benchmark_group("routing");
    for (name, d) in [("1 skill", &one), ("1000 skills", &many)] {
        group.bench_function(name, |b| {
            b.iter_batched(|| msg.clone(), |m| route(d, m), BatchSize::SmallInput)
        });
    }
    group.finish();
}

/// Times `BLOCK` calls of `f` on inputs cloned from `input` beforehand; outputs are dropped
/// after the clock stops. Returns nanoseconds per call.
fn block<I: Clone, O>(input: &I, f: &mut impl FnMut(I) -> O) -> f64 {
    let inputs: Vec<I> = (0..BLOCK).map(|_| input.clone()).collect();
    let mut outputs: Vec<O> = Vec::with_capacity(BLOCK);
    let start = Instant::now();
    for i in inputs {
        outputs.push(black_box(f(black_box(i))));
    }
    let elapsed = start.elapsed();
    drop(outputs);
    elapsed.as_nanos() as f64 / BLOCK as f64
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// The medians (ns per call) of `a` and `b`, measured in interleaved blocks.
fn head_to_head<IA: Clone, OA, IB: Clone, OB>(
    (ia, mut a): (IA, impl FnMut(IA) -> OA),
    (ib, mut b): (IB, impl FnMut(IB) -> OB),
) -> (f64, f64) {
    // Warm up both sides.
    let warm = Instant::now();
    while warm.elapsed() < Duration::from_millis(300) {
        block(&ia, &mut a);
        block(&ib, &mut b);
    }
    let (mut ta, mut tb) = (Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS));
    for round in 0..ROUNDS {
        // A B, then B A: neither side always runs first.
        if round % 2 == 0 {
            ta.push(block(&ia, &mut a));
            tb.push(block(&ib, &mut b));
        } else {
            tb.push(block(&ib, &mut b));
            ta.push(block(&ia, &mut a));
        }
    }
    (median(ta), median(tb))
}

fn ratios() {
    let dispatcher = Dispatcher::for_agent::<FightClub>().expect("the schemas compile");
    let msg = message("fightComparison", fight());
    let (d, base) = head_to_head(
        (msg.clone(), |m| dispatch_fight(&dispatcher, m)),
        (fight(), from_value),
    );
    let (d2, hand) = head_to_head(
        (msg.clone(), |m| dispatch_fight(&dispatcher, m)),
        (msg, hand_routed),
    );
    let (one, many, msg) = routing_setup();
    let (t1, tn) = head_to_head(
        (msg.clone(), |m| route(&one, m)),
        (msg, |m| route(&many, m)),
    );
    println!();
    println!("ratios (medians of {ROUNDS} interleaved blocks of {BLOCK} calls each):");
    println!("  dispatch+from_value {d:8.1} ns   from_value {base:8.1} ns");
    println!("  dispatch/from_value = {:.2}x (target <= 1.5x)", d / base);
    println!("  dispatch+from_value {d2:8.1} ns   hand-routed {hand:8.1} ns");
    println!(
        "  dispatch/hand-routed = {:.2}x (what finding, validating and routing add)",
        d2 / hand
    );
    println!("  1 skill {t1:8.1} ns   {MANY} skills {tn:8.1} ns");
    println!("  {MANY} skills/1 skill = {:.2}x (target <= 1.1x)", tn / t1);
}

/// Runs every function once and checks what it returns.
fn smoke() {
    let dispatcher = Dispatcher::for_agent::<FightClub>().expect("the schemas compile");
    let fc = dispatch_fight(&dispatcher, message("fightComparison", fight()));
    assert_eq!((fc.a.as_str(), fc.b.as_str()), ("Lion", "Tiger"));
    assert_eq!(from_value(fight()).b, "Tiger");
    assert_eq!(hand_routed(message("fightComparison", fight())).a, "Lion");
    let (one, many, msg) = routing_setup();
    assert_eq!(route(&one, msg.clone()), 0);
    assert_eq!(route(&many, msg), MANY - 1);
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    smoke();
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    criterion_benches(&mut c);
    c.final_summary();
    if bench {
        ratios();
    }
}
