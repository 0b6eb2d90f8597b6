//! The `a2a-card` command as a user runs it (`--features cli`): its exit codes, output formats
//! and hostile input on files (`files`), against the examples' agents served in this process
//! (`remote`), and its signing commands (`sign`). One test binary, so the crate links once for
//! all of them.

mod files;
mod remote;
mod sign;
