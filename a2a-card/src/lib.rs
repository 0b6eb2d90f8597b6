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

pub mod agent;
pub mod builder;
pub mod card;
mod checks;
pub mod lint;
pub mod schema;
pub mod skill;
pub mod wire;

pub use a2a_card_rules::media;
pub use a2a_card_rules::{MediaType, MediaTypeError};
pub use agent::Agent;
pub use builder::{AgentCardBuilder, AgentSkillBuilder, BuildError};
pub use card::*;
pub use schema::{IO_SCHEMAS_EXTENSION_URI, NamedSchema, SchemaMode, SchemaOptions};
pub use skill::{Input, Output, Reply, SkillContext, SkillError};

pub use a2a_card_derive::{Schema, agent, skill};

/// What the macros' generated code names; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::agent::{
        AgentDecl, RequirementDecl, Routes, Skill, SkillDecl, build_card, unknown_skill,
    };
    pub use crate::checks::*;
    pub use crate::skill::{
        CallInput, Io, SchemaRef, SkillArg, SkillCall, SkillFuture, SkillReturn,
    };
    pub use schemars;
    pub use serde_json;
    pub use std::boxed::Box;
    pub use std::sync::OnceLock;

    /// Security schemes from any iterator of `(name, scheme)`.
    pub fn schemes<I, K>(iter: I) -> Vec<(String, crate::SecurityScheme)>
    where
        I: IntoIterator<Item = (K, crate::SecurityScheme)>,
        K: Into<String>,
    {
        iter.into_iter().map(|(k, v)| (k.into(), v)).collect()
    }
}
