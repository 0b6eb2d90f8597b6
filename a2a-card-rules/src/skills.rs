//! The rules across the skills of one card, and the wording of every rule about skills: one home
//! for the linter (`a2a_card::lint`), the `#[skill]`/`#[agent]` macros and the checks the
//! compiler evaluates as constants, so that the three say the same thing.
//!
//! A message is a [`Template`]: fixed pieces around the values, which `const` code can push one
//! by one and other code [renders](Template::render).

/// A message with holes: `pieces[0] value[0] pieces[1] value[1] .. pieces[n]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template {
    pieces: &'static [&'static str],
}

impl Template {
    /// A template of these pieces (one more than the values it takes).
    pub const fn new(pieces: &'static [&'static str]) -> Template {
        Template { pieces }
    }

    /// The fixed pieces, for `const` code that assembles the message itself.
    pub const fn pieces(&self) -> &'static [&'static str] {
        self.pieces
    }

    /// How many values the message takes.
    pub const fn holes(&self) -> usize {
        self.pieces.len() - 1
    }

    /// The message with `values` in its holes.
    ///
    /// ```
    /// use a2a_card_rules::skills::NOT_KEBAB_CASE;
    /// assert_eq!(
    ///     NOT_KEBAB_CASE.render(&["Code_Review", "code-review"]),
    ///     "skill id `Code_Review` is not kebab-case; use lowercase words joined by `-`, e.g. `code-review`"
    /// );
    /// ```
    ///
    /// # Panics
    ///
    /// When `values` does not have [`holes`](Self::holes) values (a bug in the caller).
    pub fn render(&self, values: &[&str]) -> String {
        assert_eq!(values.len(), self.holes(), "a template's values");
        let mut out = String::from(self.pieces[0]);
        for (value, piece) in values.iter().zip(&self.pieces[1..]) {
            out.push_str(value);
            out.push_str(piece);
        }
        out
    }
}

/// A skill id that is not kebab-case: the id, and the id to use instead
/// ([`suggest_kebab_case`](crate::names::suggest_kebab_case)).
pub const NOT_KEBAB_CASE: Template = Template::new(&[
    "skill id `",
    "` is not kebab-case; use lowercase words joined by `-`, e.g. `",
    "`",
]);

/// Two skills with one id: the id, the later skill, the earlier one (as the surface names skills:
/// a handler in Rust, a JSON pointer in a card).
pub const DUPLICATE_ID: Template = Template::new(&[
    "skill id `",
    "` of `",
    "` is already the id of `",
    "`; give each skill its own id",
]);

/// Two skills that take one input schema: the earlier skill, the later one, the schema name.
pub const SHARED_INPUT_SCHEMA: Template = Template::new(&[
    "skills `",
    "` and `",
    "` both take schema `",
    "`: structured input is routed by its schema name alone, so a message naming it reaches only the first; give one of them another input schema",
]);

/// Scopes in a requirement of a scheme whose kind has none: the scheme's name, its kind
/// ([`SchemeKind::describe`]).
pub const SCOPES_WITHOUT_MEANING: Template = Template::new(&[
    "security scheme `",
    "` is ",
    ", which has no scopes; require it with no scopes (scopes belong to OAuth 2.0 and OpenID Connect schemes)",
]);

/// Whether two strings are equal, in a `const fn` (what the cross-skill rules compare ids and
/// schema names with: exactly, as routing does).
///
/// ```
/// use a2a_card_rules::skills::same;
/// assert!(same("fight", "fight") && !same("fight", "Fight"));
/// ```
pub const fn same(a: &str, b: &str) -> bool {
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

/// The kind of a security scheme, as far as the rules care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemeKind {
    /// An API key in a header, query parameter or cookie.
    ApiKey,
    /// HTTP authentication (bearer, basic...).
    Http,
    /// OAuth 2.0.
    OAuth2,
    /// OpenID Connect.
    OpenIdConnect,
    /// Mutual TLS.
    MutualTls,
}

impl SchemeKind {
    /// Whether a requirement of a scheme of this kind may list scopes: OAuth 2.0 and OpenID
    /// Connect only (as in OpenAPI, whose security objects A2A's follow).
    ///
    /// ```
    /// use a2a_card_rules::skills::SchemeKind;
    /// assert!(SchemeKind::OAuth2.takes_scopes() && !SchemeKind::ApiKey.takes_scopes());
    /// ```
    pub const fn takes_scopes(self) -> bool {
        matches!(self, SchemeKind::OAuth2 | SchemeKind::OpenIdConnect)
    }

    /// The kind in words, for messages (`an API key scheme`).
    pub const fn describe(self) -> &'static str {
        match self {
            SchemeKind::ApiKey => "an API key scheme",
            SchemeKind::Http => "an HTTP authentication scheme",
            SchemeKind::OAuth2 => "an OAuth 2.0 scheme",
            SchemeKind::OpenIdConnect => "an OpenID Connect scheme",
            SchemeKind::MutualTls => "a mutual TLS scheme",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_render_their_values_in_order() {
        assert_eq!(
            DUPLICATE_ID.render(&["judge", "loser", "winner"]),
            "skill id `judge` of `loser` is already the id of `winner`; give each skill its own id"
        );
        assert_eq!(SHARED_INPUT_SCHEMA.holes(), 3);
        assert!(
            SCOPES_WITHOUT_MEANING
                .render(&["key", SchemeKind::ApiKey.describe()])
                .starts_with("security scheme `key` is an API key scheme, which has no scopes")
        );
    }
}
