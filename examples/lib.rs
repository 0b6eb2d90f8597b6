//! The example agents, as a library: each example's `main.rs` serves its agent from here, and
//! the tests and benchmarks start the same agents through this library's public items (it is
//! the workspace's root package, not published).
//!
//! ```text
//! cargo run --example fight_club      # the fight-comparison agent (fight_club/)
//! cargo run --example trip_planner    # a durable planner that asks (trip_planner/)
//! cargo run --example guarded_judge   # an agent behind a bearer JWT (guarded_judge/)
//! cargo run --example count           # a skill that streams n chunks (count/)
//! cargo run --example model_agent     # an agent that wraps a language model (model_agent/)
//! cargo run --example concierge       # a durable model loop with tools and approval (concierge/)
//! cargo run --example card            # a card built with the builder (card/)
//! ```

/// The "CodeAssist Pro" card, built with the builder.
pub mod card {
    pub mod code_assist;
    pub use code_assist::code_assist_pro;
}

pub mod cli;

/// The counting agent: a skill that streams as many chunks as the message's text says.
pub mod count {
    pub mod agent;
}

/// The fight-comparison agent of the input/output schemas extension, and how it is served.
pub mod fight_club {
    pub mod agent;
    pub mod server;
}

/// An agent whose card requires a bearer JWT.
pub mod guarded_judge {
    pub mod agent;
}

/// A hotel concierge: a language model in a loop with tools, in a durable skill (rig).
pub mod concierge {
    pub mod agent;
}

/// An agent that wraps a language model (rig), one of whose skills calls the Fight Club agent.
pub mod model_agent {
    pub mod agent;
}

/// A durable trip planner that asks its caller, and how it is served.
pub mod trip_planner {
    pub mod agent;
    pub mod server;
}
