//! Compile-time checks that the macros' generated code evaluates as constants.
//!
//! What a macro can see in its own tokens it checks itself. What it cannot (a skill declared in
//! another module, a schema name that comes from a derive elsewhere, a description given as a
//! `const` or `include_str!`), these functions check when the compiler evaluates the constant the
//! macro emits, spanned at the token at fault. A failed check is a compile error whose message
//! says what is wrong and how to fix it.

use crate::agent::SkillDecl;
use crate::skill::Io;

/// A message assembled in a constant, for `panic!` during constant evaluation.
struct Msg {
    buf: [u8; 512],
    len: usize,
}

impl Msg {
    const fn new() -> Msg {
        Msg {
            buf: [0; 512],
            len: 0,
        }
    }

    const fn push(mut self, s: &str) -> Msg {
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() && self.len < self.buf.len() {
            self.buf[self.len] = bytes[i];
            self.len += 1;
            i += 1;
        }
        // Never end inside a UTF-8 sequence.
        if i < bytes.len() {
            while self.len > 0 && (self.buf[self.len - 1] & 0b1100_0000) == 0b1000_0000 {
                self.len -= 1;
            }
            if self.len > 0 && self.buf[self.len - 1] >= 0b1100_0000 {
                self.len -= 1;
            }
        }
        self
    }

    const fn fail(&self) -> ! {
        let (head, _) = self.buf.split_at(self.len);
        match core::str::from_utf8(head) {
            Ok(message) => panic!("{}", message),
            Err(_) => panic!("a2a-card: a declaration check failed"),
        }
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn is_blank(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_whitespace() {
            return false;
        }
        i += 1;
    }
    true
}

/// Skill `j` against the skills before it: ids are unique, and no two skills take the same
/// input schema (a structured message could not be routed).
pub const fn check_skill(skills: &[SkillDecl], j: usize) {
    let s = &skills[j];
    if s.poisoned {
        return;
    }
    let mut i = 0;
    while i < j {
        let t = &skills[i];
        if !t.poisoned {
            if str_eq(t.id, s.id) {
                Msg::new()
                    .push("skill id `")
                    .push(s.id)
                    .push("` of `")
                    .push(s.source)
                    .push("` is already the id of `")
                    .push(t.source)
                    .push("`; give one of them another id with #[skill(id = \"...\")]")
                    .fail();
            }
            if let (Some(a), Some(b)) = (t.input.schema, s.input.schema) {
                if str_eq(a.name, b.name) {
                    Msg::new()
                        .push("skills `")
                        .push(t.source)
                        .push("` and `")
                        .push(s.source)
                        .push("` both take schema `")
                        .push(a.name)
                        .push("`, so a structured message could not be routed; give one of them another input type, or rename a schema with #[schema(name = \"...\")]")
                        .fail();
                }
            }
        }
        i += 1;
    }
}

/// The input of a handler from the inputs of its arguments: at most one argument takes input.
pub const fn merge_inputs(args: &[Io], source: &str) -> Io {
    let mut found = Io::NONE;
    let mut i = 0;
    while i < args.len() {
        if args[i].is_some() {
            if found.is_some() {
                Msg::new()
                    .push("skill `")
                    .push(source)
                    .push("` has two input arguments; a message carries one input, so take one argument (use `a2a_card::Input<T>` to take either text or data)")
                    .fail();
            }
            found = args[i];
        }
        i += 1;
    }
    found
}

/// A string value the card needs (a name, a description, a version) is not empty.
pub const fn check_not_blank(value: &str, what: &str, fix: &str) {
    if is_blank(value) {
        Msg::new().push(what).push(" is empty; ").push(fix).fail();
    }
}

/// A skill id given as an expression is kebab-case.
pub const fn check_kebab_case(id: &str, source: &str) {
    let b = id.as_bytes();
    let mut ok = !b.is_empty() && b[0] != b'-' && b[b.len() - 1] != b'-';
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let word = c.is_ascii_lowercase() || c.is_ascii_digit();
        if !(word || (c == b'-' && i > 0 && b[i - 1] != b'-')) {
            ok = false;
        }
        i += 1;
    }
    if !ok {
        Msg::new()
            .push("skill id `")
            .push(id)
            .push("` of `")
            .push(source)
            .push("` is not kebab-case; use lowercase words joined by `-`, e.g. `code-review`")
            .fail();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_cut_at_char_boundaries() {
        let long = "é".repeat(400);
        let msg = Msg::new().push(&long);
        assert!(core::str::from_utf8(&msg.buf[..msg.len]).is_ok());
        assert_eq!(msg.len % 2, 0);
    }

    #[test]
    fn kebab_case_agrees_with_the_linter() {
        for id in [
            "code-review",
            "a",
            "a1-b2",
            "",
            "-a",
            "a-",
            "a--b",
            "A",
            "a_b",
            "é",
        ] {
            let const_ok = std::panic::catch_unwind(|| check_kebab_case(id, "t")).is_ok();
            assert_eq!(const_ok, crate::lint::is_kebab_case(id), "{id:?}");
        }
    }
}
