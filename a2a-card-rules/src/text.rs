//! Blank text: what the card's rules count as no value at all.
//!
//! One definition for the linter, the macros and the checks the compiler evaluates as
//! constants: [`is_blank`] is a `const fn`, and agrees with `str::trim` (Unicode `White_Space`).

/// Whether `c` is white space in Unicode's sense (`White_Space`), as `char::is_whitespace`
/// says, in a `const fn`.
///
/// ```
/// use a2a_card_rules::text::is_white_space;
/// assert!(is_white_space(' ') && is_white_space('\u{a0}') && is_white_space('\u{3000}'));
/// assert!(!is_white_space('x') && !is_white_space('\u{200b}'));
/// ```
pub const fn is_white_space(c: char) -> bool {
    matches!(
        c as u32,
        0x09..=0x0D
            | 0x20
            | 0x85
            | 0xA0
            | 0x1680
            | 0x2000..=0x200A
            | 0x2028
            | 0x2029
            | 0x202F
            | 0x205F
            | 0x3000
    )
}

/// Whether `s` is empty or only white space (`s.trim().is_empty()`), in a `const fn`: a name,
/// description or version that is blank is no value.
///
/// ```
/// use a2a_card_rules::text::is_blank;
/// assert!(is_blank("") && is_blank(" \t\n") && is_blank("\u{a0}\u{2003}"));
/// assert!(!is_blank(" x "));
/// ```
pub const fn is_blank(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        // A `&str` is valid UTF-8: the lead byte says how long each character is.
        let lead = b[i] as u32;
        let (c, len) = if lead < 0x80 {
            (lead, 1)
        } else if lead < 0xE0 {
            (((lead & 0x1F) << 6) | (b[i + 1] as u32 & 0x3F), 2)
        } else if lead < 0xF0 {
            (
                ((lead & 0x0F) << 12) | ((b[i + 1] as u32 & 0x3F) << 6) | (b[i + 2] as u32 & 0x3F),
                3,
            )
        } else {
            (
                ((lead & 0x07) << 18)
                    | ((b[i + 1] as u32 & 0x3F) << 12)
                    | ((b[i + 2] as u32 & 0x3F) << 6)
                    | (b[i + 3] as u32 & 0x3F),
                4,
            )
        };
        match char::from_u32(c) {
            Some(c) if is_white_space(c) => {}
            _ => return false,
        }
        i += len;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn white_space_is_unicodes() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            assert_eq!(is_white_space(c), c.is_whitespace(), "{:#x}", c as u32);
        }
    }

    #[test]
    fn blank_is_what_trim_leaves_empty() {
        for s in [
            "",
            " ",
            "\t\r\n",
            "\u{a0}",
            "\u{85}",
            "\u{2028}\u{3000}",
            "\u{feff}",
            "x",
            " x",
            "\u{a0}é",
            "é",
            "\u{1f600}",
            " \u{1f600} ",
            "\u{200b}",
        ] {
            assert_eq!(is_blank(s), s.trim().is_empty(), "{s:?}");
        }
        // Every character, alone and between spaces.
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let s = format!(" {c}\u{a0}");
            assert_eq!(is_blank(&s), s.trim().is_empty(), "{:#x}", c as u32);
        }
    }
}
