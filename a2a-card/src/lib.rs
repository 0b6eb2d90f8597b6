//! Declare an A2A (Agent2Agent protocol) agent in Rust.
//!
//! This crate holds the Agent Card: a version-neutral [model](card), its JSON in the protocol's
//! [wire profiles](wire) (A2A 1.0, 0.3, and a compat document holding both), the
//! [input/output schemas extension](schema), and a [linter](lint) that knows every rule of the card.
//!
//! ```
//! use a2a_card::{AgentCard, AgentSkill, wire::Profile};
//!
//! let card = AgentCard::builder(
//!     "Fight Judge",
//!     "Decides who would win a hypothetical fight between two named contestants, with a probability and reasons.",
//!     "1.0.0",
//! )
//! .jsonrpc("https://fights.example.com/a2a")
//! .streaming(false)
//! .push_notifications(false)
//! .skill(
//!     AgentSkill::builder("fight-comparison", "Fight Comparison", "Compares two contestants and names the likely winner.")
//!         .tags(["comparison", "fight"])
//!         .example("Who wins, a lion or a tiger?"),
//! )
//! .build()?;
//! let json = card.to_json(Profile::V1);
//! assert_eq!(json["skills"][0]["id"], "fight-comparison");
//! # Ok::<(), a2a_card::BuildError>(())
//! ```
#![warn(missing_docs)]

pub mod builder;
pub mod card;
pub mod lint;
pub mod schema;
pub mod wire;

pub use a2a_card_rules::media;
pub use a2a_card_rules::{MediaType, MediaTypeError};
pub use builder::{AgentCardBuilder, AgentSkillBuilder, BuildError};
pub use card::*;
pub use schema::{IO_SCHEMAS_EXTENSION_URI, SchemaMode};
