//! Procedural macros for [`a2a-card`](https://docs.rs/a2a-card): `#[skill]`, `#[agent]` and
//! `#[derive(Schema)]`. Use them through `a2a_card`, which re-exports them and documents them.
//!
//! Each macro is a parse -> check -> expand pipeline that collects every error before reporting
//! them together, and on error still emits the user's item (and stand-ins for what other code
//! names) so that one mistake gives one error.

mod agent;
mod attr;
mod checks;
mod client;
mod ctxt;
mod docs;
#[cfg(test)]
mod expand_file;
mod fallback;
mod schema;
mod security;
mod skill;

use proc_macro::TokenStream;

/// Names a type's JSON Schema for the input/output schemas extension. See `a2a_card::Schema`.
#[proc_macro_derive(Schema, attributes(schema))]
pub fn derive_schema(input: TokenStream) -> TokenStream {
    match syn::parse(input) {
        Ok(input) => schema::expand(input).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Makes a handler function a skill of the agent. See `a2a_card::skill`.
#[proc_macro_attribute]
pub fn skill(args: TokenStream, item: TokenStream) -> TokenStream {
    skill::expand(args.into(), item.into()).into()
}

/// Makes an `impl` block of skills an agent with a checked card. See `a2a_card::agent`.
#[proc_macro_attribute]
pub fn agent(args: TokenStream, item: TokenStream) -> TokenStream {
    agent::expand(args.into(), item.into()).into()
}
