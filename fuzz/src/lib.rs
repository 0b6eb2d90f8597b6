//! Fuzz targets for every decoder of `a2a-card` that takes outside bytes, run on the stable
//! toolchain by a mutation loop of this crate's own (`src/bin/fuzz.rs`): no nightly, no
//! `cargo-fuzz`, no coverage instrumentation.
//!
//! Each target is a function `fn(&[u8])` in [`targets`] that panics when an invariant breaks;
//! [`runner::run_one`] calls it under `catch_unwind`, and also counts a panic that a served
//! agent's own task caught (a skill's run, a spawned task) as a failure, through a panic hook.
//! Targets tell the loop what their input did with [`feedback`] (an HTTP status, a JSON-RPC
//! error code, the linter's rules): an input with an outcome not seen before joins the corpus.

pub mod campaign;
pub mod mutate;
pub mod runner;
pub mod targets;

pub use runner::feedback;
