//! The task stores and what outlives a process: the stores' contract on memory, SQLite and
//! Postgres, durable skills resumed after a crash, replicas sharing one database, and graceful
//! shutdown. Server processes here are this binary started again on one test of its own
//! (`support::replica`), which a test kills or stops.

#[path = "../support/mod.rs"]
mod support;

/// The example agents, as their `main.rs` serve them.
use examples::{fight_club, trip_planner};

mod bounds;
mod calls;
mod campaign;
mod deploy;
mod durable;
mod faults;
mod replicas;
mod shutdown;
mod stores;
