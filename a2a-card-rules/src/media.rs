//! Media types (RFC 6838 / RFC 9110 section 8.3.1), as used in input and output modes.

use std::fmt;

/// A parsed media type: `type/subtype` with parameters.
///
/// Parsing is lenient where the RFCs allow it (case of type, subtype and parameter names,
/// white space around `;` and `=`, quoted parameter values) and strict where they do not
/// (token characters, a `/` between two non-empty tokens). [`Display`](fmt::Display) prints the
/// canonical form: lowercase type, subtype and parameter names, no spaces, values quoted only
/// when they must be.
///
/// ```
/// use a2a_card_rules::MediaType;
/// let m = MediaType::parse(r#"Application/JSON ; schema="fightComparison""#).unwrap();
/// assert_eq!(m.essence(), "application/json");
/// assert_eq!(m.param("schema"), Some("fightComparison"));
/// assert_eq!(m.to_string(), "application/json;schema=fightComparison");
/// assert!(MediaType::parse("text").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaType {
    type_: String,
    subtype: String,
    params: Vec<(String, String)>,
}

/// Why a string is not a media type.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MediaTypeError {
    /// No `/` between type and subtype (e.g. `text`, a 0.2-era mode name).
    MissingSlash,
    /// The type or subtype is empty or has a character outside RFC 9110 `tchar`.
    BadToken(String),
    /// A parameter is not `name=value`.
    BadParameter(String),
}

impl fmt::Display for MediaTypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MediaTypeError::MissingSlash => {
                f.write_str("a media type needs a type and a subtype separated by `/`")
            }
            MediaTypeError::BadToken(t) => write!(
                f,
                "`{t}` is not a valid type or subtype (letters, digits and !#$&-^_.+ only)"
            ),
            MediaTypeError::BadParameter(p) => write!(f, "parameter `{p}` is not `name=value`"),
        }
    }
}

impl std::error::Error for MediaTypeError {}

/// The essence of a media type as written: what comes before its parameters, without the white
/// space around it (`Text/Plain ; charset=utf-8` -> `Text/Plain`), in a `const fn`. Compare
/// essences with [`essence_is`] (or split one with [`type_and_subtype`]), which ignore case and
/// the white space around `/` as [`MediaType::parse`] does; [`MediaType::essence`] is the
/// parsed form. Every place that matches a media type by its essence uses these.
///
/// ```
/// use a2a_card_rules::media::essence;
/// assert_eq!(essence(" Text/Plain ; charset=utf-8"), "Text/Plain");
/// assert_eq!(essence("application/json"), "application/json");
/// assert_eq!(essence(""), "");
/// ```
pub const fn essence(media_type: &str) -> &str {
    let bytes = media_type.as_bytes();
    let mut end = 0;
    while end < bytes.len() && bytes[end] != b';' {
        end += 1;
    }
    let (head, _) = bytes.split_at(end);
    // `;` is ASCII: the cut falls between characters.
    match core::str::from_utf8(head) {
        Ok(head) => head.trim_ascii(),
        Err(_) => "",
    }
}

/// The type and subtype of a media type as written, each without the white space around it
/// (`Text / Plain; charset=utf-8` -> `("Text", "Plain")`), as [`MediaType::parse`] reads them;
/// `None` without a `/`. In a `const fn`.
///
/// ```
/// use a2a_card_rules::media::type_and_subtype;
/// assert_eq!(type_and_subtype("image / PNG ;x=1"), Some(("image", "PNG")));
/// assert_eq!(type_and_subtype("text"), None);
/// ```
pub const fn type_and_subtype(media_type: &str) -> Option<(&str, &str)> {
    let bytes = essence(media_type).as_bytes();
    let mut slash = 0;
    while slash < bytes.len() && bytes[slash] != b'/' {
        slash += 1;
    }
    if slash == bytes.len() {
        return None;
    }
    let (type_, rest) = bytes.split_at(slash);
    let (_, subtype) = rest.split_at(1);
    // `/` is ASCII: both halves are whole characters.
    match (core::str::from_utf8(type_), core::str::from_utf8(subtype)) {
        (Ok(t), Ok(s)) => Some((t.trim_ascii(), s.trim_ascii())),
        _ => None,
    }
}

/// Whether the type and subtype of `media_type` are those of `expected` (ASCII
/// case-insensitively, white space around them ignored, parameters aside), in a `const fn`.
///
/// ```
/// use a2a_card_rules::media::essence_is;
/// assert!(essence_is("Application/JSON; schema=fight", "application/json"));
/// assert!(essence_is("application/ json", "application/json"));
/// assert!(!essence_is("application/json+x", "application/json"));
/// ```
pub const fn essence_is(media_type: &str, expected: &str) -> bool {
    match (type_and_subtype(media_type), type_and_subtype(expected)) {
        (Some((t1, s1)), Some((t2, s2))) => {
            same_ignoring_case(t1, t2) && same_ignoring_case(s1, s2)
        }
        _ => false,
    }
}

/// ASCII-case-insensitive equality, in a `const fn`.
const fn same_ignoring_case(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if !a[i].eq_ignore_ascii_case(&b[i]) {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether `c` is an RFC 9110 `tchar`.
pub fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Whether `s` is a non-empty RFC 9110 token.
pub fn is_token(s: &str) -> bool {
    !s.is_empty() && s.chars().all(is_tchar)
}

impl MediaType {
    /// Parses a media type such as `application/json;schema=fightComparison`.
    pub fn parse(input: &str) -> Result<MediaType, MediaTypeError> {
        let mut pieces = split_params(input).into_iter();
        let essence = pieces.next().unwrap_or_default();
        let (type_, subtype) = essence
            .split_once('/')
            .ok_or(MediaTypeError::MissingSlash)?;
        let (type_, subtype) = (type_.trim(), subtype.trim());
        for token in [type_, subtype] {
            if !is_token(token) {
                return Err(MediaTypeError::BadToken(token.to_owned()));
            }
        }
        let mut params = Vec::new();
        for piece in pieces {
            let piece = piece.trim();
            if piece.is_empty() {
                continue; // `text/plain;` is tolerated
            }
            let (name, value) = piece
                .split_once('=')
                .ok_or_else(|| MediaTypeError::BadParameter(piece.to_owned()))?;
            let (name, value) = (name.trim(), value.trim());
            let value = match value.strip_prefix('"') {
                Some(quoted) => {
                    unquote(quoted).ok_or_else(|| MediaTypeError::BadParameter(piece.to_owned()))?
                }
                None if is_token(value) => value.to_owned(),
                None => return Err(MediaTypeError::BadParameter(piece.to_owned())),
            };
            if !is_token(name) {
                return Err(MediaTypeError::BadParameter(piece.to_owned()));
            }
            params.push((name.to_ascii_lowercase(), value));
        }
        Ok(MediaType {
            type_: type_.to_ascii_lowercase(),
            subtype: subtype.to_ascii_lowercase(),
            params,
        })
    }

    /// The top-level type, lowercase (`application`).
    pub fn type_(&self) -> &str {
        &self.type_
    }

    /// The subtype, lowercase (`json`).
    pub fn subtype(&self) -> &str {
        &self.subtype
    }

    /// `type/subtype` without parameters, lowercase: the free function [`essence`] of the
    /// string parsed, lowercased.
    pub fn essence(&self) -> String {
        format!("{}/{}", self.type_, self.subtype)
    }

    /// The value of the first parameter named `name` (case-insensitive).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// All parameters, names lowercase, in order.
    pub fn params(&self) -> &[(String, String)] {
        &self.params
    }
}

impl fmt::Display for MediaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.type_, self.subtype)?;
        for (name, value) in &self.params {
            write!(f, ";{name}=")?;
            write_param_value(f, value)?;
        }
        Ok(())
    }
}

/// Writes a parameter value, quoting it when it is not a token.
pub fn write_param_value(f: &mut impl fmt::Write, value: &str) -> fmt::Result {
    if is_token(value) {
        f.write_str(value)
    } else {
        f.write_char('"')?;
        for c in value.chars() {
            if c == '"' || c == '\\' {
                f.write_char('\\')?;
            }
            f.write_char(c)?;
        }
        f.write_char('"')
    }
}

/// Splits at `;` outside quoted strings.
fn split_params(input: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in input.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ';' if !quoted => {
                pieces.push(&input[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    pieces.push(&input[start..]);
    pieces
}

/// The content of a quoted-string whose opening quote has been removed; `None` when the closing
/// quote is missing or followed by anything.
fn unquote(rest: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?),
            '"' => return chars.as_str().trim().is_empty().then_some(out),
            c => out.push(c),
        }
    }
    None
}

/// The 0.2-era mode shorthands that official samples still use and official schemas accept
/// (`text`, `file`, `data`), with the media type each stands for.
///
/// ```
/// use a2a_card_rules::media::shorthand;
/// assert_eq!(shorthand(" text "), Some("text/plain"));
/// assert_eq!(shorthand("Text"), None);
/// ```
pub fn shorthand(mode: &str) -> Option<&'static str> {
    match mode.trim() {
        "text" => Some("text/plain"),
        "file" => Some("application/octet-stream"),
        "data" => Some("application/json"),
        _ => None,
    }
}

/// How to fix a mode that is not a media type but an old mode name (`text`, `json`, `file`,
/// `image`...): what to do, and the media types to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModeHint {
    /// What to do, before the examples: `use`, or `name the image type, e.g.`.
    pub advice: &'static str,
    /// The media types to write, in order.
    pub examples: &'static [&'static str],
}

impl ModeHint {
    /// The hint with each example between `quote`s: `` use `text/plain` `` in a linter
    /// message, `use "text/plain"` in a macro's.
    ///
    /// ```
    /// use a2a_card_rules::media::mode_hint;
    /// assert_eq!(mode_hint("JSON").unwrap().render('"'), r#"use "application/json""#);
    /// assert_eq!(
    ///     mode_hint("file").unwrap().render('`'),
    ///     "name the file's media type, e.g. `application/pdf` or `application/octet-stream`"
    /// );
    /// assert_eq!(mode_hint("text/plain"), None);
    /// ```
    pub fn render(&self, quote: char) -> String {
        let examples: Vec<String> = self
            .examples
            .iter()
            .map(|e| format!("{quote}{e}{quote}"))
            .collect();
        format!("{} {}", self.advice, examples.join(" or "))
    }
}

/// The hint for an old mode name (any case, white space around it ignored), or `None`.
pub fn mode_hint(mode: &str) -> Option<ModeHint> {
    let hint = |advice, examples| Some(ModeHint { advice, examples });
    match mode.trim().to_ascii_lowercase().as_str() {
        "text" => hint("use", &["text/plain"]),
        "data" | "json" => hint("use", &["application/json"]),
        "file" => hint(
            "name the file's media type, e.g.",
            &["application/pdf", "application/octet-stream"],
        ),
        "image" => hint("name the image type, e.g.", &["image/png"]),
        "audio" => hint("name the audio type, e.g.", &["audio/mpeg"]),
        "video" => hint("name the video type, e.g.", &["video/mp4"]),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_canonicalises() {
        let m = MediaType::parse(" TEXT/Plain ; Charset=UTF-8 ").unwrap();
        assert_eq!(m.to_string(), "text/plain;charset=UTF-8");
        let q = MediaType::parse(r#"application/json;schema="a b\"c""#).unwrap();
        assert_eq!(q.param("SCHEMA"), Some("a b\"c"));
        assert_eq!(q.to_string(), r#"application/json;schema="a b\"c""#);
        assert_eq!(
            MediaType::parse(r#"a/b;x="1;2""#).unwrap().param("x"),
            Some("1;2")
        );
    }

    #[test]
    fn the_essence_of_a_string_is_that_of_its_parse() {
        for raw in [
            "text/plain",
            " TEXT/Plain ; Charset=UTF-8 ",
            r#"application/json;schema="a;b""#,
            "Image/PNG",
            "application/vnd.a+json; x=1",
            "application / JSON ;schema=a",
        ] {
            let parsed = MediaType::parse(raw).unwrap();
            assert!(essence_is(raw, &parsed.essence()), "{raw}");
        }
    }

    #[test]
    fn rejects_what_is_not_a_media_type() {
        assert_eq!(MediaType::parse("text"), Err(MediaTypeError::MissingSlash));
        assert!(matches!(
            MediaType::parse("text/"),
            Err(MediaTypeError::BadToken(_))
        ));
        assert!(matches!(
            MediaType::parse("te xt/plain"),
            Err(MediaTypeError::BadToken(_))
        ));
        assert!(matches!(
            MediaType::parse("a/b;c"),
            Err(MediaTypeError::BadParameter(_))
        ));
        assert!(matches!(
            MediaType::parse(r#"a/b;c="x"y"#),
            Err(MediaTypeError::BadParameter(_))
        ));
        assert!(matches!(
            MediaType::parse(r#"a/b;c="x"#),
            Err(MediaTypeError::BadParameter(_))
        ));
        assert!(matches!(
            MediaType::parse("a/b;c=x y"),
            Err(MediaTypeError::BadParameter(_))
        ));
    }
}
