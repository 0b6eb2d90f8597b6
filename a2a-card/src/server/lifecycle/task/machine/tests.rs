//! The table of changes, each phase against each happening, as a reader checks it: the rows
//! written out below are what the table must say, and a change to the table changes them.

use super::*;

/// Every phase against every happening: `PHASE + HAPPENING -> PHASE [EFFECTS, in order]`, or
/// `refused: WHY`.
const TABLE: &str = "
Elsewhere + Start { journaled: false } -> Running { journaled: false } []
Elsewhere + Start { journaled: true } -> Running { journaled: true } []
Elsewhere + Ask refused: Gone
Elsewhere + Answer refused: Gone
Elsewhere + Return -> Ended [Record, Finish]
Elsewhere + Expire refused: Gone
Elsewhere + Cancel -> Ended [Record, Finish]
Elsewhere + Fail -> Ended [Record, Finish]
Elsewhere + Stop -> Elsewhere []
Elsewhere + GiveUp -> Elsewhere [Forget]
Running { journaled: false } + Start { journaled: false } -> Running { journaled: false } [StopHandler]
Running { journaled: false } + Start { journaled: true } -> Running { journaled: true } [StopHandler]
Running { journaled: false } + Ask -> Waiting { journaled: false } []
Running { journaled: false } + Answer refused: Working
Running { journaled: false } + Return -> Ended [TellCaller, Record, Finish]
Running { journaled: false } + Expire refused: Working
Running { journaled: false } + Cancel -> Ended [CancelCalls, StopHandler, Record, Finish]
Running { journaled: false } + Fail -> Ended [CancelCalls, StopHandler, Record, Finish]
Running { journaled: false } + Stop -> Elsewhere [StopHandler]
Running { journaled: false } + GiveUp -> Elsewhere [CancelCalls, StopHandler, Forget]
Running { journaled: true } + Start { journaled: false } -> Running { journaled: false } [StopHandler]
Running { journaled: true } + Start { journaled: true } -> Running { journaled: true } [StopHandler]
Running { journaled: true } + Ask -> Waiting { journaled: true } []
Running { journaled: true } + Answer refused: Journaled
Running { journaled: true } + Return -> Ended [TellCaller, Record, Finish]
Running { journaled: true } + Expire refused: Working
Running { journaled: true } + Cancel -> Ended [CancelCalls, StopHandler, Record, Finish]
Running { journaled: true } + Fail -> Ended [CancelCalls, StopHandler, Record, Finish]
Running { journaled: true } + Stop -> Elsewhere [StopHandler]
Running { journaled: true } + GiveUp -> Elsewhere [StopHandler, Forget]
Waiting { journaled: false } + Start { journaled: false } -> Running { journaled: false } [Disarm, StopHandler]
Waiting { journaled: false } + Start { journaled: true } -> Running { journaled: true } [Disarm, StopHandler]
Waiting { journaled: false } + Ask -> Waiting { journaled: false } [Disarm]
Waiting { journaled: false } + Answer -> Running { journaled: false } [Disarm, Deliver]
Waiting { journaled: false } + Return -> Ended [Disarm, TellCaller, Record, Finish]
Waiting { journaled: false } + Expire -> Ended [CancelCalls, StopHandler, Record, Finish]
Waiting { journaled: false } + Cancel -> Ended [Disarm, CancelCalls, StopHandler, Record, Finish]
Waiting { journaled: false } + Fail -> Ended [Disarm, CancelCalls, StopHandler, Record, Finish]
Waiting { journaled: false } + Stop -> Elsewhere [Disarm, StopHandler]
Waiting { journaled: false } + GiveUp -> Elsewhere [Disarm, CancelCalls, StopHandler, Forget]
Waiting { journaled: true } + Start { journaled: false } -> Running { journaled: false } [Disarm, StopHandler]
Waiting { journaled: true } + Start { journaled: true } -> Running { journaled: true } [Disarm, StopHandler]
Waiting { journaled: true } + Ask -> Waiting { journaled: true } [Disarm]
Waiting { journaled: true } + Answer -> Running { journaled: true } [Disarm, Deliver]
Waiting { journaled: true } + Return -> Ended [Disarm, TellCaller, Record, Finish]
Waiting { journaled: true } + Expire -> Ended [CancelCalls, StopHandler, Record, Finish]
Waiting { journaled: true } + Cancel -> Ended [Disarm, CancelCalls, StopHandler, Record, Finish]
Waiting { journaled: true } + Fail -> Ended [Disarm, CancelCalls, StopHandler, Record, Finish]
Waiting { journaled: true } + Stop -> Elsewhere [Disarm, StopHandler]
Waiting { journaled: true } + GiveUp -> Elsewhere [Disarm, StopHandler, Forget]
Ended + Start { journaled: false } refused: Ended
Ended + Start { journaled: true } refused: Ended
Ended + Ask refused: Ended
Ended + Answer refused: Ended
Ended + Return refused: Ended
Ended + Expire refused: Ended
Ended + Cancel refused: Ended
Ended + Fail refused: Ended
Ended + Stop refused: Ended
Ended + GiveUp -> Ended [Forget]
";

/// One row of the table as [`next`] says it.
fn row(phase: Phase, happening: Happening) -> String {
    let outcome = match next(phase, happening) {
        Ok(step) => format!("-> {:?} {:?}", step.to, step.effects),
        Err(why) => format!("refused: {why:?}"),
    };
    format!("{phase:?} + {happening:?} {outcome}")
}

#[test]
fn each_phase_meets_each_happening_as_the_table_says() {
    let expected: Vec<&str> = TABLE.trim().lines().collect();
    let mut said = Vec::new();
    for phase in Phase::ALL {
        for happening in Happening::ALL {
            said.push(row(phase, happening));
        }
    }
    assert_eq!(
        said.len(),
        expected.len(),
        "one row for each phase and happening"
    );
    let differ: Vec<String> = said
        .iter()
        .zip(&expected)
        .filter(|(said, expected)| said != *expected)
        .map(|(said, expected)| format!("  table: {expected}\n  next:  {said}"))
        .collect();
    assert!(
        differ.is_empty(),
        "rows that differ:\n{}",
        differ.join("\n")
    );
}

/// Every allowed change: its phase, its happening, and what the table says of it.
fn allowed() -> impl Iterator<Item = (Phase, Happening, Transition)> {
    Phase::ALL.into_iter().flat_map(|phase| {
        Happening::ALL
            .into_iter()
            .filter_map(move |happening| Some((phase, happening, next(phase, happening).ok()?)))
    })
}

#[test]
fn a_change_that_ends_a_task_records_its_end_and_nothing_follows_it() {
    for (phase, happening, step) in allowed() {
        let records = step.effects.contains(&Effect::Record);
        assert_eq!(
            step.to == Phase::Ended && phase != Phase::Ended,
            records,
            "{phase:?} + {happening:?}: a task reaches its end by recording it"
        );
        assert_eq!(happening.ends(), records, "{phase:?} + {happening:?}");
        // Once ended, only an end the store refused (given up) is allowed.
        if phase == Phase::Ended {
            assert_eq!(happening, Happening::GiveUp);
        }
    }
}

#[test]
fn a_handler_is_stopped_before_its_end_is_recorded_and_its_question_disarmed_first() {
    for (phase, happening, step) in allowed() {
        let at = |e: Effect| step.effects.iter().position(|x| *x == e);
        if let (Some(stop), Some(record)) = (at(Effect::StopHandler), at(Effect::Record)) {
            assert!(
                stop < record,
                "{phase:?} + {happening:?}: {:?}",
                step.effects
            );
        }
        if let (Some(calls), Some(stop)) = (at(Effect::CancelCalls), at(Effect::StopHandler)) {
            assert!(
                calls < stop,
                "{phase:?} + {happening:?}: the calls first, while the handler's link holds them"
            );
        }
        if let Some(disarm) = at(Effect::Disarm) {
            assert_eq!(disarm, 0, "{phase:?} + {happening:?}: {:?}", step.effects);
            assert!(
                matches!(phase, Phase::Waiting { .. }),
                "only a question is disarmed"
            );
        }
        // A journaled handler given up is stopped, its calls followed by its next run.
        if happening == Happening::GiveUp && phase.journaled() == Some(true) {
            assert!(
                at(Effect::CancelCalls).is_none(),
                "{phase:?}: {:?}",
                step.effects
            );
        }
    }
}
