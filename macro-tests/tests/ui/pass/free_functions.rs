//! Free functions in other modules, collected on a unit struct with `skills(path::to::f)`.

use a2a_card::{Agent, Schema, agent};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod greetings {
    use a2a_card::skill;

    /// Says hello to the name it is given.
    #[skill(tags("greeting"))]
    pub fn hello(name: String) -> String {
        format!("Hello, {name}!")
    }
}

pub mod currency {
    use a2a_card::{Schema, skill};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// An amount to convert.
    #[derive(Deserialize, JsonSchema, Schema)]
    pub struct Conversion {
        pub amount: f64,
        pub from: String,
        pub to: String,
    }

    /// A converted amount.
    #[derive(Serialize, JsonSchema, Schema)]
    pub struct Converted {
        pub amount: f64,
        pub currency: String,
    }

    /// Converts an amount between currencies at a fixed rate.
    #[skill(id = "currency-conversion")]
    pub async fn convert(input: Conversion) -> Converted {
        Converted {
            amount: input.amount * 2.0,
            currency: input.to,
        }
    }
}

/// Unused here, but a skill type can live beside the agent too.
#[derive(Serialize, Deserialize, JsonSchema, Schema)]
pub struct Unused {
    pub x: u8,
}

/// Greets people and converts money.
#[agent(
    url = "https://desk.example.com/a2a",
    skills(greetings::hello, currency::convert)
)]
pub struct FrontDesk;

fn main() {
    let card = FrontDesk::card().unwrap();
    assert_eq!(card.name, "Front Desk");
    assert_eq!(card.skills[0].id, "hello");
    assert_eq!(card.skills[0].tags, ["greeting"]);
    assert_eq!(card.skills[0].input_modes, ["text/plain"]);
    assert_eq!(card.skills[1].id, "currency-conversion");
    assert_eq!(
        card.skills[1].input_modes,
        ["application/json;schema=conversion"]
    );
    assert_eq!(
        card.skills[1].output_modes,
        ["application/json;schema=converted"]
    );
    assert!(card.schemas.contains_key("conversion"));
    assert!(card.schemas.contains_key("converted"));
    assert!(!card.schemas.contains_key("unused"));
    assert_eq!(greetings::hello("Ada".into()), "Hello, Ada!");
}
