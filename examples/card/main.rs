//! Builds the "CodeAssist Pro" card from the Agent Card schema reference with the builder and
//! prints it as JSON (A2A 1.0 profile by default).
//!
//! ```text
//! cargo run --example card                    # A2A 1.0
//! cargo run --example card -- --profile v0.3  # or compat
//! ```
//!
//! The card itself is in `code_assist.rs`.

use a2a_card::wire::Profile;
use clap::Parser;
use examples::card::code_assist_pro;

/// Prints the "CodeAssist Pro" card, built with the builder, as JSON.
#[derive(Parser)]
struct Args {
    /// The profile to print it in: v1, v0.3 or compat.
    #[arg(long, default_value = "v1")]
    profile: Profile,
}

fn main() {
    let profile = Args::parse().profile;
    let card = code_assist_pro();
    let json =
        serde_json::to_string_pretty(&card.to_json(profile)).expect("a Value always serialises");
    println!("{json}");
}
