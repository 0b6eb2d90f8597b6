//! The task stores and what outlives a process: the stores' contract on memory, SQLite and
//! Postgres, durable skills resumed after a crash, replicas sharing one database, and graceful
//! shutdown. Server processes here are this binary started again on one test of its own
//! (`support::replica`), which a test kills or stops.

#[path = "../support/mod.rs"]
mod support;

/// The `fight_club` example's files, as its `main.rs` declares them.
#[allow(dead_code)]
#[path = "../../examples/fight_club"]
mod fight_club {
    pub mod agent;
    pub mod server;
}

/// The `trip_planner` example's files, as its `main.rs` declares them.
#[allow(dead_code)]
#[path = "../../examples/trip_planner"]
mod trip_planner {
    pub mod agent;
    pub mod server;
}

mod calls;
mod deploy;
mod durable;
mod faults;
mod replicas;
mod shutdown;
mod stores;
