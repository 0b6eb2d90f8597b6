//! Nothing but a home for `tests/ui.rs`: the macros' compile-time diagnostics, each case in
//! `tests/ui/fail` with the error it must give and each in `tests/ui/pass` compiling. A
//! package of its own so that trybuild builds the cases against a small dependency tree.
