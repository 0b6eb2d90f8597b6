//! Compile-time diagnostics of the macros: every misuse in `tests/ui/fail` fails with one error
//! at the token at fault, saying how to fix it; every handler shape in `tests/ui/pass` compiles
//! and gives the card it should.
//!
//! Regenerate the expected output with `TRYBUILD=overwrite cargo test -p a2a-card-macro-tests --test ui`, then read it.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
