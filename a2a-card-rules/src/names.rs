//! Identifiers, versions and schema names.

use crate::media::is_token;

/// Whether `s` is kebab-case: lowercase ASCII letters and digits in words joined by single `-`.
///
/// ```
/// use a2a_card_rules::names::is_kebab_case;
/// assert!(is_kebab_case("code-review"));
/// assert!(is_kebab_case("route2"));
/// assert!(!is_kebab_case("code_review"));
/// assert!(!is_kebab_case("CodeReview"));
/// assert!(!is_kebab_case("-x") && !is_kebab_case("a--b") && !is_kebab_case(""));
/// ```
pub const fn is_kebab_case(s: &str) -> bool {
    // A `const fn`: the compile-time check of an id given as a `const` uses it too.
    let b = s.as_bytes();
    if b.is_empty() || b[0] == b'-' || b[b.len() - 1] == b'-' {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let word = c.is_ascii_lowercase() || c.is_ascii_digit();
        if !(word || (c == b'-' && b[i - 1] != b'-')) {
            return false;
        }
        i += 1;
    }
    true
}

/// The example id a fix suggests when an id has no letter or digit to keep.
pub const KEBAB_CASE_EXAMPLE: &str = "code-review";

/// The kebab-case id to suggest for `id`: [`to_kebab_case`], or [`KEBAB_CASE_EXAMPLE`] when
/// that leaves nothing.
///
/// ```
/// use a2a_card_rules::names::suggest_kebab_case;
/// assert_eq!(suggest_kebab_case("Fight_Comparison"), "fight-comparison");
/// assert_eq!(suggest_kebab_case("__"), "code-review");
/// ```
pub fn suggest_kebab_case(id: &str) -> String {
    match to_kebab_case(id) {
        fix if fix.is_empty() => KEBAB_CASE_EXAMPLE.to_owned(),
        fix => fix,
    }
}

/// The id of a skill that gives none: its function's name in kebab-case (a raw identifier
/// without its `r#`).
///
/// ```
/// use a2a_card_rules::names::default_skill_id;
/// assert_eq!(default_skill_id("fight_comparison"), "fight-comparison");
/// assert_eq!(default_skill_id("r#type"), "type");
/// ```
pub fn default_skill_id(fn_name: &str) -> String {
    to_kebab_case(fn_name.trim_start_matches("r#"))
}

/// The kebab-case form of an identifier (`currency_conversion` -> `currency-conversion`,
/// `CodeReview` -> `code-review`), for fix suggestions and default skill ids.
///
/// ```
/// use a2a_card_rules::names::to_kebab_case;
/// assert_eq!(to_kebab_case("currency_conversion"), "currency-conversion");
/// assert_eq!(to_kebab_case("CodeReview"), "code-review");
/// assert_eq!(to_kebab_case("Route  Planner2"), "route-planner2");
/// ```
pub fn to_kebab_case(s: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower && !out.ends_with('-') {
                out.push('-');
            }
            out.extend(c.to_lowercase());
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
        } else {
            if !out.is_empty() && !out.ends_with('-') {
                out.push('-');
            }
            prev_lower = false;
        }
    }
    out.trim_end_matches('-').to_owned()
}

/// Whether `s` is a semantic version (`MAJOR.MINOR.PATCH`, optional `-pre` and `+build`).
///
/// ```
/// use a2a_card_rules::names::is_semver;
/// assert!(is_semver("2.1.0") && is_semver("1.0.0-rc.1+b5"));
/// assert!(!is_semver("v1") && !is_semver("1.0") && !is_semver("01.0.0"));
/// ```
pub fn is_semver(s: &str) -> bool {
    let ident_ok = |x: &str| {
        x.split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    };
    let (rest, build) = match s.split_once('+') {
        Some((rest, build)) => (rest, Some(build)),
        None => (s, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (rest, None),
    };
    let parts: Vec<_> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'))
        })
        && pre.is_none_or(ident_ok)
        && build.is_none_or(ident_ok)
}

/// Checks that a schema name can stand unquoted as a media-type parameter value (an RFC 9110
/// token), which every client can read back. The error says how to fix it.
///
/// ```
/// use a2a_card_rules::names::check_schema_name;
/// assert!(check_schema_name("fightComparison").is_ok());
/// assert!(check_schema_name("fight comparison").is_err());
/// ```
pub fn check_schema_name(name: &str) -> Result<(), String> {
    if is_token(name) {
        Ok(())
    } else if name.is_empty() {
        Err("a schema name cannot be empty".to_owned())
    } else {
        Err(format!(
            "schema name `{name}` has characters that a media-type parameter cannot carry unquoted; \
             use letters, digits and !#$%&'*+-.^_`|~ only (e.g. lowerCamelCase)"
        ))
    }
}

/// The lowerCamelCase form of a type name: the default schema name (`FightComparison` ->
/// `fightComparison`, `HTTPRequest` -> `httpRequest`).
///
/// ```
/// use a2a_card_rules::names::lower_camel_case;
/// assert_eq!(lower_camel_case("FightComparison"), "fightComparison");
/// assert_eq!(lower_camel_case("HTTPRequest"), "httpRequest");
/// assert_eq!(lower_camel_case("Q"), "q");
/// ```
pub fn lower_camel_case(type_name: &str) -> String {
    let chars: Vec<char> = type_name.chars().collect();
    // Lowercase the leading run of capitals, except the last one when it starts a word.
    let run = chars.iter().take_while(|c| c.is_uppercase()).count();
    let lower_upto = if run > 1 && run < chars.len() && chars[run].is_lowercase() {
        run - 1
    } else {
        run
    };
    chars
        .iter()
        .enumerate()
        .flat_map(|(i, c)| {
            if i < lower_upto {
                c.to_lowercase().collect::<Vec<_>>()
            } else {
                vec![*c]
            }
        })
        .collect()
}

/// The Title Case form of a function name: the default skill name (`fight_comparison` ->
/// `Fight Comparison`).
///
/// ```
/// use a2a_card_rules::names::title_case;
/// assert_eq!(title_case("fight_comparison"), "Fight Comparison");
/// assert_eq!(title_case("r#type"), "Type");
/// ```
pub fn title_case(fn_name: &str) -> String {
    fn_name
        .trim_start_matches("r#")
        .split(['_', '-'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut cs = w.chars();
            cs.next()
                .map(|f| f.to_uppercase().chain(cs).collect::<String>())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}
