//! The agent and its callers: each task belongs to the caller that made it (`ownership`), and
//! limits keep any one caller from taking the whole agent (`limits`).

mod limits;
mod ownership;
