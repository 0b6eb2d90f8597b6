//! The glue `#[agent]` generates: each skill is called with the input the message carries, and
//! its value becomes an answer; routing finds the skill that takes a schema.

use crate::support;

use crate::fight_club::agent as fight_club;

use a2a_card::__private::{CallInput, SkillCall};
use a2a_card::dispatch::Dispatcher;
use a2a_card::{Agent, Reply, SkillContext, SkillError};
use fight_club::FightClub;
use serde_json::json;
use support::block_on;

fn call(input: CallInput) -> Result<Reply, SkillError> {
    block_on(FightClub.call_skill(0, SkillCall::new(input, SkillContext::default())))
}

#[test]
fn structured_input_gives_structured_output() {
    let reply = call(CallInput::Data(json!({"a": "Godzilla", "b": "King Kong"}))).unwrap();
    let Reply::Data { schema, value } = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(schema, "fightResponse");
    // Eight letters each: a tie goes to the first contestant, at even odds.
    assert_eq!(value["winner"], "Godzilla");
    assert_eq!(value["probability"], 0.5);
    // The answer follows its own published schema.
    let card = FightClub::card().unwrap();
    let validator = jsonschema::validator_for(&card.schemas["fightResponse"]).unwrap();
    assert!(validator.is_valid(&value), "{value}");
}

#[test]
fn text_input_gives_text_output() {
    let reply = call(CallInput::Text("Who would win, Lion vs Tiger?".into())).unwrap();
    assert_eq!(
        reply,
        Reply::Text("Tiger wins (56%): Tiger brings more to the fight than Lion.".into())
    );
    let reply = call(CallInput::Text("hello".into())).unwrap();
    assert!(matches!(reply, Reply::Text(t) if t.contains("two contestants")));
}

#[test]
fn data_that_does_not_fit_the_type_is_an_input_error() {
    let err = call(CallInput::Data(json!({"a": "Lion"}))).unwrap_err();
    assert!(
        matches!(&err, SkillError::Input(m) if m.contains("fightComparison") && m.contains("missing field `b`")),
        "{err}"
    );
    let err = call(CallInput::None).unwrap_err();
    assert!(matches!(err, SkillError::Input(_)));
}

#[test]
fn an_unknown_skill_index_is_an_error_not_a_panic() {
    let err =
        block_on(FightClub.call_skill(7, SkillCall::new(CallInput::None, SkillContext::default())))
            .unwrap_err();
    assert_eq!(err, SkillError::UnknownSkill(7));
}

#[test]
fn the_dispatcher_finds_the_skill_that_takes_a_schema() {
    let dispatcher = Dispatcher::for_agent::<FightClub>().unwrap();
    assert_eq!(dispatcher.skill_for_schema("fightComparison"), Some(0));
    assert_eq!(dispatcher.skill_for_schema("fightResponse"), None);
    assert_eq!(dispatcher.text_skill(), Some(0));
}

mod errors {
    //! Handler errors fail the call with their message; other shapes of handler work too.
    use a2a_card::{Schema, SkillContext, agent, skill};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(Deserialize, Serialize, JsonSchema, Schema)]
    pub struct Amount {
        pub cents: u32,
    }

    pub struct Bank {
        pub balance: u32,
    }

    /// Keeps one account's balance and answers questions about it.
    #[agent(
        url = "https://bank.example.com/a2a",
        streaming = false,
        push_notifications = false
    )]
    impl Bank {
        /// Withdraws an amount in cents; fails when the balance is too low.
        #[skill]
        fn withdraw(&self, amount: Amount) -> Result<Amount, String> {
            self.balance
                .checked_sub(amount.cents)
                .map(|cents| Amount { cents })
                .ok_or_else(|| format!("insufficient funds: the balance is {} cents", self.balance))
        }

        /// Says which task a question came in.
        #[skill]
        async fn which_task(&self, question: String, context: SkillContext) -> String {
            format!("{question} -> {}", context.task_id.unwrap_or_default())
        }
    }
}

#[test]
fn handler_errors_fail_with_their_message_and_sync_handlers_work() {
    let bank = errors::Bank { balance: 500 };
    let ok = block_on(bank.call_skill(
        0,
        SkillCall::new(
            CallInput::Data(json!({"cents": 200})),
            SkillContext::default(),
        ),
    ));
    assert_eq!(
        ok.unwrap(),
        Reply::Data {
            schema: "amount",
            value: json!({"cents": 300})
        }
    );
    let err = block_on(bank.call_skill(
        0,
        SkillCall::new(
            CallInput::Data(json!({"cents": 900})),
            SkillContext::default(),
        ),
    ));
    assert_eq!(
        err.unwrap_err(),
        SkillError::Failed("insufficient funds: the balance is 500 cents".into())
    );
    let context = SkillContext::new(Some("task-1".into()), None, json!({}));
    let text =
        block_on(bank.call_skill(1, SkillCall::new(CallInput::Text("why?".into()), context)));
    assert_eq!(text.unwrap(), Reply::Text("why? -> task-1".into()));
    // Text sent to a data-only skill is an input error, not a panic.
    let err = block_on(bank.call_skill(
        0,
        SkillCall::new(CallInput::Text("200".into()), SkillContext::default()),
    ));
    assert!(
        matches!(err, Err(SkillError::Input(m)) if m.contains("application/json;schema=amount"))
    );
    let card = <errors::Bank as Agent>::card().unwrap();
    assert_eq!(
        card.skills[0].input_modes,
        ["application/json;schema=amount"]
    );
    assert_eq!(card.skills[1].input_modes, ["text/plain"]);
    assert_eq!(card.skills[1].output_modes, ["text/plain"]);
}
