//! The agent and its callers: each task belongs to the caller that made it (`ownership`), and
//! limits keep any one caller from taking the whole agent (`limits`).

#[path = "../support/mod.rs"]
mod support;

mod limits;
mod ownership;
