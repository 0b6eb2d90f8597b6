//! Procedural macros for [`a2a-card`](https://docs.rs/a2a-card).
//!
//! Use them through the `a2a_card` crate, which re-exports them; this crate has no API of its
//! own yet. The `#[skill]`, `#[agent]` and schema-derive macros land here.
