//! The predicates behind the rules of an A2A Agent Card.
//!
//! The runtime linter (`a2a_card::lint`) and the compile-time checks of the `#[skill]` and
//! `#[agent]` macros must agree on every rule, and a proc-macro crate cannot share code with the
//! crate that re-exports it; so the predicates live here, with no dependency but `url`. Use them
//! through `a2a-card`, which re-exports what users need.

pub mod media;
pub mod names;
pub mod skills;
pub mod text;
pub mod urls;

pub use media::{MediaType, MediaTypeError};
