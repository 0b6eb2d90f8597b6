//! Compile-time checks that the macros' generated code evaluates as constants.
//!
//! What a macro can see in its own tokens it checks itself. What it cannot (a skill declared in
//! another module, a schema name that comes from a derive elsewhere, a description given as a
//! `const` or `include_str!`), these functions check when the compiler evaluates the constant the
//! macro emits. Each returns a [`Check`]; the generated constant calls [`Check::assert`], spanned
//! at the token at fault, so that the compile error points there and says what is wrong and how
//! to fix it.

use a2a_card_rules::media::essence_is;
use a2a_card_rules::names::{KEBAB_CASE_EXAMPLE, is_kebab_case};
pub use a2a_card_rules::skills::SchemeKind;
use a2a_card_rules::skills::{
    DUPLICATE_ID, NOT_KEBAB_CASE, SCOPES_WITHOUT_MEANING, SHARED_INPUT_SCHEMA, Template, same,
};
use a2a_card_rules::text::is_blank;

use crate::agent::SkillDecl;
use crate::skill::Io;

/// The outcome of a check: nothing, or the message of a compile error.
pub struct Check {
    failure: Option<Msg>,
}

impl Check {
    /// The check passed.
    pub const OK: Check = Check { failure: None };

    const fn failed(message: Msg) -> Check {
        Check {
            failure: Some(message),
        }
    }

    /// The message, when the check failed.
    pub const fn message(&self) -> Option<&str> {
        match &self.failure {
            Some(m) => Some(m.as_str()),
            None => None,
        }
    }

    /// Fails the evaluation of the constant that calls it with the check's message, at the
    /// call (which the macro spans at the token at fault); passes otherwise.
    #[track_caller]
    pub const fn assert(&self) {
        if let Some(message) = self.message() {
            panic!("{}", message)
        }
    }
}

/// A message assembled in a constant.
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

    /// Pushes `template` with `values` in its holes (as `Template::render` writes it).
    const fn template(mut self, template: Template, values: &[&str]) -> Msg {
        let pieces = template.pieces();
        self = self.push(pieces[0]);
        let mut i = 0;
        while i < values.len() && i + 1 < pieces.len() {
            self = self.push(values[i]).push(pieces[i + 1]);
            i += 1;
        }
        self
    }

    const fn push_byte(mut self, b: u8) -> Msg {
        if self.len < self.buf.len() {
            self.buf[self.len] = b;
            self.len += 1;
        }
        self
    }

    /// Pushes the kebab-case id to suggest for an ASCII identifier (`FightComparison`,
    /// `fight_comparison` -> `fight-comparison`), as `a2a_card_rules::names::suggest_kebab_case`
    /// does (a `const` copy: that one allocates); other characters separate words. The test
    /// `the_suggested_id_is_the_kebab_case_of_the_rules` proves the two agree.
    const fn push_kebab(mut self, id: &str) -> Msg {
        let start = self.len;
        let b = id.as_bytes();
        let mut prev_lower = false;
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            let dash = self.len > start && self.buf[self.len - 1] == b'-';
            if c.is_ascii_alphanumeric() {
                if c.is_ascii_uppercase() && prev_lower && !dash {
                    self = self.push_byte(b'-');
                }
                self = self.push_byte(c.to_ascii_lowercase());
                prev_lower = !c.is_ascii_uppercase();
            } else {
                if self.len > start && !dash {
                    self = self.push_byte(b'-');
                }
                prev_lower = false;
            }
            i += 1;
        }
        while self.len > start && self.buf[self.len - 1] == b'-' {
            self.len -= 1;
        }
        if self.len == start {
            self = self.push(KEBAB_CASE_EXAMPLE);
        }
        self
    }

    const fn as_str(&self) -> &str {
        let (head, _) = self.buf.split_at(self.len);
        match core::str::from_utf8(head) {
            Ok(message) => message,
            Err(_) => "a2a-card: a declaration check failed",
        }
    }
}

/// How the declaration names skill `i` (its function name when the list is short).
const fn name_of<'a>(names: &[&'a str], i: usize, skill: &'a SkillDecl) -> &'a str {
    if i < names.len() {
        names[i]
    } else {
        skill.source
    }
}

/// Skill `j` against the skills before it: ids are unique, and no two skills take the same
/// input schema (a structured message could not be routed). `names` are the skills as the
/// declaration names them (`winner`, `books::search`). `distinct`: [`distinct`] found every
/// id and input schema its own already, so there is nothing to look for.
pub const fn check_skill(distinct: bool, skills: &[SkillDecl], j: usize, names: &[&str]) -> Check {
    let s = &skills[j];
    if distinct || s.poisoned {
        return Check::OK;
    }
    let mut i = 0;
    while i < j {
        let t = &skills[i];
        if !t.poisoned {
            if same(t.id, s.id) {
                return Check::failed(Msg::new().template(
                    DUPLICATE_ID,
                    &[s.id, name_of(names, j, s), name_of(names, i, t)],
                ));
            }
            if let (Some(a), Some(b)) = (t.input.schema, s.input.schema)
                && same(a.name, b.name)
            {
                return Check::failed(Msg::new().template(
                    SHARED_INPUT_SCHEMA,
                    &[name_of(names, i, t), name_of(names, j, s), a.name],
                ));
            }
        }
        i += 1;
    }
    Check::OK
}

/// Whether the `N` skills' ids, and their input schemas, are each their own: one pass over
/// their digests, sorted, for every skill at once, so that the checks of each skill against
/// the others ([`check_skill`], quadratic in the skills, and slow in the compiler's constant
/// evaluation) are made only when it finds two alike (or two digests alike by chance).
pub const fn distinct<const N: usize>(skills: &[SkillDecl]) -> bool {
    if skills.len() != N {
        return false;
    }
    let (mut ids, mut schemas) = ([0u64; N], [0u64; N]);
    let (mut i, mut with_schema) = (0, 0);
    while i < N {
        let s = &skills[i];
        if s.poisoned {
            return false;
        }
        ids[i] = digest(s.id);
        if let Some(schema) = s.input.schema {
            schemas[with_schema] = digest(schema.name);
            with_schema += 1;
        }
        i += 1;
    }
    sort(&mut ids, N);
    sort(&mut schemas, with_schema);
    !repeats(&ids, N) && !repeats(&schemas, with_schema)
}

/// The FNV-1a digest of `text`.
const fn digest(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    hash
}

/// Sorts the first `n` values (a heap sort: no allocation, `n log n` steps).
const fn sort(values: &mut [u64], n: usize) {
    let mut start = n / 2;
    while start > 0 {
        start -= 1;
        sift_down(values, start, n);
    }
    let mut end = n;
    while end > 1 {
        end -= 1;
        let top = values[0];
        values[0] = values[end];
        values[end] = top;
        sift_down(values, 0, end);
    }
}

/// Moves `values[root]` down the heap of the first `end` values.
const fn sift_down(values: &mut [u64], mut root: usize, end: usize) {
    loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && values[child] < values[child + 1] {
            child += 1;
        }
        if values[root] >= values[child] {
            return;
        }
        let parent = values[root];
        values[root] = values[child];
        values[child] = parent;
        root = child;
    }
}

/// Whether two of the first `n` values, sorted, are equal.
const fn repeats(values: &[u64], n: usize) -> bool {
    let mut i = 1;
    while i < n {
        if values[i] == values[i - 1] {
            return true;
        }
        i += 1;
    }
    false
}

/// The id of the stand-in for a method listed in `skills(Self::name)` that is not a skill.
const NOT_A_SKILL: &str = "\0not-a-skill";

/// The stand-in for a method listed in `skills(Self::name)` that is not a skill (it has no
/// `#[skill]`, so none of the items the macro adds): what the agent finds in its place.
pub const fn not_a_skill() -> SkillDecl {
    SkillDecl {
        id: NOT_A_SKILL,
        ..SkillDecl::POISONED
    }
}

/// A method listed in `skills(Self::name)` is a skill.
pub const fn check_listed(decl: &SkillDecl, listed: &str) -> Check {
    if same(decl.id, NOT_A_SKILL) {
        Check::failed(
            Msg::new()
                .push("`")
                .push(listed)
                .push("` is listed in #[agent(skills(..))] but is not a skill; mark it with #[skill] and give it a doc comment"),
        )
    } else {
        Check::OK
    }
}

/// The input of a handler from the inputs of its arguments: that of the argument that takes
/// input ([`check_inputs`] makes sure there is at most one).
pub const fn merge_inputs(args: &[Io]) -> Io {
    let mut input = Io::NONE;
    let (mut files, mut context) = (false, false);
    let mut i = 0;
    while i < args.len() {
        if args[i].is_some() && !input.is_some() {
            input = args[i];
        }
        files |= args[i].files;
        context |= args[i].context;
        i += 1;
    }
    input.files = files;
    input.context = context;
    input
}

/// A skill that takes or returns files declares their media types (`input_modes(..)`,
/// `output_modes(..)`): the card must say which files the skill handles.
pub const fn check_file_modes(io: Io, declared: &[&str], output: bool, source: &str) -> Check {
    if !io.files {
        return Check::OK;
    }
    let mut i = 0;
    while i < declared.len() {
        if !essence_is(declared[i], "text/plain") && !essence_is(declared[i], "application/json") {
            return Check::OK;
        }
        i += 1;
    }
    let (what, key, example) = if output {
        ("returns a file", "output_modes", "image/png")
    } else {
        ("takes a file", "input_modes", "application/pdf")
    };
    Check::failed(
        Msg::new()
            .push("skill `")
            .push(source)
            .push("` ")
            .push(what)
            .push(" but declares no file media type; say which with #[skill(")
            .push(key)
            .push("(\"")
            .push(example)
            .push("\"))]"),
    )
}

/// An agent that says `streaming = false` has no skill that streams (the first that does is
/// named).
pub const fn check_streaming(skills: &[SkillDecl]) -> Check {
    let mut index = 0;
    while index < skills.len() {
        let skill = &skills[index];
        if !skill.poisoned && skill.output.streaming {
            return Check::failed(
                Msg::new()
                    .push("the agent says `streaming = false`, but skill `")
                    .push(skill.source)
                    .push("` returns a stream; remove `streaming = false` (a streaming skill makes the card declare streaming)"),
            );
        }
        index += 1;
    }
    Check::OK
}

/// The security requirements of skill `index` name only schemes in `declared` (`(name,
/// kind)`), with scopes only on schemes whose kind has them.
pub const fn check_security(
    skills: &[SkillDecl],
    index: usize,
    declared: &[(&str, SchemeKind)],
) -> Check {
    let skill = &skills[index];
    if skill.poisoned {
        return Check::OK;
    }
    let mut r = 0;
    while r < skill.security.len() {
        let requirement = skill.security[r];
        let mut i = 0;
        while i < requirement.len() {
            let (name, scopes) = requirement[i];
            let mut found = None;
            let mut d = 0;
            while d < declared.len() {
                if same(declared[d].0, name) {
                    found = Some(declared[d].1);
                }
                d += 1;
            }
            match found {
                None => {
                    return Check::failed(
                        Msg::new()
                            .push("skill `")
                            .push(skill.source)
                            .push("` requires security scheme `")
                            .push(name)
                            .push("`, which this agent does not declare; declare it in #[agent(security_schemes(..))] or fix the name"),
                    );
                }
                Some(kind) if !kind.takes_scopes() && !scopes.is_empty() => {
                    return Check::failed(
                        Msg::new().template(SCOPES_WITHOUT_MEANING, &[name, kind.describe()]),
                    );
                }
                _ => {}
            }
            i += 1;
        }
        r += 1;
    }
    Check::OK
}

/// At most one argument of a handler takes input.
pub const fn check_inputs(args: &[Io], source: &str) -> Check {
    let mut found = false;
    let mut i = 0;
    while i < args.len() {
        if args[i].is_some() {
            if found {
                return Check::failed(
                    Msg::new()
                        .push("skill `")
                        .push(source)
                        .push("` has two input arguments; a message carries one input, so take one argument (use `a2a_card::Input<T>` to take either text or data, and `a2a_card::SkillContext` for the rest of the message)"),
                );
            }
            found = true;
        }
        i += 1;
    }
    Check::OK
}

/// A string value the card needs (a name, a description, a version) is not empty.
pub const fn check_not_blank(value: &str, what: &str, fix: &str) -> Check {
    if is_blank(value) {
        Check::failed(Msg::new().push(what).push(" is empty; ").push(fix))
    } else {
        Check::OK
    }
}

/// A skill id given as an expression is kebab-case.
pub const fn check_kebab_case(id: &str) -> Check {
    if is_kebab_case(id) {
        Check::OK
    } else {
        let pieces = NOT_KEBAB_CASE.pieces();
        Check::failed(
            Msg::new()
                .push(pieces[0])
                .push(id)
                .push(pieces[1])
                .push_kebab(id)
                .push(pieces[2]),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_finds_a_repeated_id_or_input_schema_wherever_it_is() {
        const IDS: [&str; 9] = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        let skill = |id: &'static str| SkillDecl {
            id,
            poisoned: false,
            ..SkillDecl::POISONED
        };
        let skills: Vec<SkillDecl> = IDS.iter().map(|id| skill(id)).collect();
        assert!(distinct::<9>(&skills));
        // Any two alike, at any two places, whatever the order.
        for (i, id) in IDS.iter().enumerate() {
            for j in 0..IDS.len() {
                if i == j {
                    continue;
                }
                let mut alike = skills.clone();
                alike[j].id = id;
                assert!(!distinct::<9>(&alike), "{i} {j}");
            }
        }
        // A count that is not the skills' is not taken for them.
        assert!(!distinct::<8>(&skills));
        // Two skills with one input schema.
        let schema = |name: &'static str| {
            Some(crate::skill::SchemaRef {
                name,
                schema: serde_json::Value::default,
            })
        };
        let mut shared = skills.clone();
        shared[2].input.schema = schema("order");
        shared[7].input.schema = schema("invoice");
        assert!(distinct::<9>(&shared));
        shared[4].input.schema = schema("order");
        assert!(!distinct::<9>(&shared));
        // What `check_skill` says then is the rule's message, of the second of the two.
        let names: Vec<&str> = IDS.to_vec();
        assert!(check_skill(false, &shared, 2, &names).message().is_none());
        let check = check_skill(false, &shared, 4, &names);
        let said = check.message();
        assert!(said.is_some_and(|m| m.contains("order")), "{said:?}");
        // Told they are distinct, it looks for nothing.
        assert!(check_skill(true, &shared, 4, &names).message().is_none());
    }

    #[test]
    fn messages_are_cut_at_char_boundaries() {
        let long = "é".repeat(400);
        let msg = Msg::new().push(&long);
        assert!(core::str::from_utf8(&msg.buf[..msg.len]).is_ok());
        assert_eq!(msg.len % 2, 0);
    }

    #[test]
    fn kebab_case_is_checked_by_the_rule() {
        for (id, ok) in [
            ("code-review", true),
            ("a", true),
            ("a1-b2", true),
            ("", false),
            ("-a", false),
            ("a-", false),
            ("a--b", false),
            ("A", false),
            ("a_b", false),
            ("é", false),
        ] {
            let const_ok = check_kebab_case(id).message().is_none();
            assert_eq!(const_ok, ok, "{id:?}");
            assert_eq!(const_ok, crate::lint::is_kebab_case(id), "{id:?}");
        }
    }

    #[test]
    fn the_suggested_id_is_the_kebab_case_of_the_rules() {
        for id in [
            "FightComparison",
            "fight_comparison",
            "Route  Planner2",
            "HTTPRequest",
            "a--b",
            "-x-",
            "Code Review!",
        ] {
            let msg = Msg::new().push_kebab(id);
            assert_eq!(
                msg.as_str(),
                a2a_card_rules::names::to_kebab_case(id),
                "{id:?}"
            );
        }
        for id in ["__", "", "-", "FightComparison", "a--b"] {
            assert_eq!(
                Msg::new().push_kebab(id).as_str(),
                a2a_card_rules::names::suggest_kebab_case(id),
                "{id:?}"
            );
        }
        assert_eq!(Msg::new().push_kebab("__").as_str(), "code-review");
    }

    #[test]
    fn checks_say_what_is_wrong() {
        assert!(check_not_blank("x", "the name", "fix").message().is_none());
        assert_eq!(
            check_not_blank(" ", "the name", "set one").message(),
            Some("the name is empty; set one")
        );
        // Blank as the linter and the macros see it: Unicode white space too.
        assert!(
            check_not_blank("\u{a0}\u{3000}", "the name", "set one")
                .message()
                .is_some()
        );
        // The wording of the rule, as the linter and the macro write it.
        assert_eq!(
            check_kebab_case("Fight_Comparison").message(),
            Some(
                NOT_KEBAB_CASE
                    .render(&["Fight_Comparison", "fight-comparison"])
                    .as_str()
            )
        );
        let (text, none) = (Io::TEXT, Io::NONE);
        assert!(check_inputs(&[none, text, none], "f").message().is_none());
        assert!(check_inputs(&[text, none, text], "f").message().is_some());
        assert!(merge_inputs(&[none, text]).text);
        assert!(!merge_inputs(&[none]).is_some());
    }
}
