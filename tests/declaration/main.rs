//! The declaration and what is made of it, without a server process: the card each example
//! declares and its checks, schemas (the official ones and the fixtures), signatures, dispatch
//! of structured input, skills called directly, the wire shapes of the protocol's types, the
//! public API's snapshot, and property tests of the examples and of the linter. One test binary
//! (each module was a test file of its own), so the crates link once for all of them.

#[path = "../support/mod.rs"]
mod support;

/// The card example's card.
use examples::card::code_assist as card_example;
/// The example agents, as their `main.rs` serve them.
use examples::{fight_club, guarded_judge, trip_planner};

mod ag_ui;
mod declared_examples;
mod dispatch;
mod examples_fuzz;
mod fixtures;
mod golden;
mod official_schemas;
mod public_api;
mod robustness;
mod served_card;
mod server_errors;
mod sign;
mod sign_server;
mod skill_calls;
mod wire_shapes;
