//! The fight-comparison agent: prints its card (A2A 1.0 profile).
//!
//! ```text
//! cargo run --example fight_club
//! ```

mod agent;

use a2a_card::{Agent, wire::Profile};

fn main() {
    match agent::FightClub::card() {
        Ok(card) => match serde_json::to_string_pretty(&card.to_json(Profile::V1)) {
            Ok(json) => println!("{json}"),
            Err(e) => eprintln!("cannot print the card: {e}"),
        },
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
