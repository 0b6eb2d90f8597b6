//! The card's rules, checked on the tokens the macros can see, with the same predicates the
//! linter uses (`a2a-card-rules`). Each error says how to fix the value.
//!
//! What the macros cannot see (a `const`, `concat!(..)`, the types of the arguments, skills
//! declared elsewhere) becomes a [`ConstChecks`] entry: a constant the compiler evaluates, which
//! fails with the check's message at the token at fault.

use a2a_card_rules::MediaType;
use a2a_card_rules::media::mode_hint;
use a2a_card_rules::names::{is_kebab_case, suggest_kebab_case};
use a2a_card_rules::skills::NOT_KEBAB_CASE;
use a2a_card_rules::text::is_blank;
use a2a_card_rules::urls::{UrlKind, check_endpoint_url, classify};
use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{ToTokens, quote_spanned};
use syn::LitStr;

use crate::attr::Text;
use crate::ctxt::Errors;

/// A mode is a media type.
pub fn media_type(lit: &LitStr, errors: &mut Errors) {
    let value = lit.value();
    if let Err(e) = MediaType::parse(&value) {
        let hint = mode_hint(&value).map_or_else(
            || "write `type/subtype`, e.g. \"text/plain\" or \"image/png\"".to_owned(),
            |h| h.render('"'),
        );
        errors.at(lit, format!("`{value}` is not a media type: {e}; {hint}"));
    }
}

/// How to write a URL that does not parse.
const URL_FIX: &str = "write an absolute URL such as \"https://agent.example.com/a2a\" (percent-encode spaces and other reserved characters)";

/// The message of a URL that is not an absolute URL, with how to fix it.
fn invalid_url(message: String) -> String {
    if message.contains("not a valid URL") || message.contains("has no host") {
        format!("{message}; {URL_FIX}")
    } else {
        message
    }
}

/// The agent's endpoint URL: absolute, https unless loopback. `env` is the variable that
/// overrides it, when the URL is `url(env = .., default = ..)`'s default.
pub fn endpoint_url(lit: &LitStr, env: Option<&LitStr>, errors: &mut Errors) {
    if let Err(message) = check_endpoint_url(&lit.value()) {
        let message = invalid_url(message);
        match env {
            Some(var) => errors.at(lit, format!(
                "{message}; this default is the URL whenever `{}` is not set, so it must be a valid endpoint too: an https URL, or a loopback one such as \"http://127.0.0.1:8080\"",
                var.value()
            )),
            None => errors.at(lit, message),
        }
    }
}

/// A link (documentation, icon, provider): an absolute URL.
pub fn link(lit: &LitStr, errors: &mut Errors) {
    if let (UrlKind::Invalid(message), _) = classify(&lit.value()) {
        errors.at(lit, invalid_url(message));
    }
}

/// Gives every token the span `span`: for the path of the runtime crate in generated code, so
/// that an error about an expression it starts points at the token at fault, not at the macro.
pub fn respan(tokens: &TokenStream, span: Span) -> TokenStream {
    tokens
        .clone()
        .into_iter()
        .map(|tt| match tt {
            TokenTree::Group(g) => {
                let mut group = Group::new(g.delimiter(), respan(&g.stream(), span));
                group.set_span(span);
                TokenTree::Group(group)
            }
            mut other => {
                other.set_span(span);
                other
            }
        })
        .collect()
}

/// Whether `tokens` name `Self` (a constant item nested in an impl cannot).
fn mentions_self(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|tt| match tt {
        TokenTree::Ident(i) => i == "Self",
        TokenTree::Group(g) => mentions_self(g.stream()),
        _ => false,
    })
}

/// The checks of a declaration that the compiler evaluates, and where they fail.
#[derive(Default)]
pub struct ConstChecks {
    /// Constant items, nested in the declaration: their failure is the only error.
    items: Vec<TokenStream>,
    /// Statements of the declaration itself, for expressions that name `Self`.
    statements: Vec<TokenStream>,
}

impl ConstChecks {
    /// Adds a check: `check` is an expression of type `__private::Check` made of `uses` (the
    /// user's tokens it evaluates) and generated tokens; it fails at `span` (`Check::assert`
    /// panics at its caller, with the check's message: no macro to expand per check).
    pub fn push(&mut self, check: TokenStream, uses: &dyn ToTokens, span: Span) {
        let fail = quote_spanned!(span=> (#check).assert());
        if mentions_self(uses.to_token_stream()) {
            self.statements.push(fail);
        } else {
            self.items.push(quote_spanned!(span=> const _: () = #fail;));
        }
    }

    /// The checks as constant items, for the module level.
    pub fn items(&self) -> &[TokenStream] {
        &self.items
    }

    /// The declaration `value` with its checks, in a block written at `at`.
    pub fn wrap(&self, at: Span, value: TokenStream) -> TokenStream {
        if self.items.is_empty() && self.statements.is_empty() {
            return value;
        }
        let (items, statements) = (&self.items, &self.statements);
        quote_spanned!(at=> {
            #(#items)*
            #(#statements;)*
            #value
        })
    }
}

/// A text value of the declaration after its check: a literal the macro has checked, or an
/// expression whose check is left to the compiler (see [`ConstChecks::defer`]).
pub struct Checked {
    pub text: Text,
    /// The check the compiler runs when it evaluates the constant; `None` for a literal (checked
    /// already) and for a value that needs none.
    pub deferred: Option<Deferred>,
}

/// A check of an expression's value, run by the compiler.
pub enum Deferred {
    /// The value is not blank: `what` names it, `fix` says how to give one.
    NotBlank {
        what: &'static str,
        fix: &'static str,
    },
    /// The value is a kebab-case skill id.
    KebabCase,
}

impl Checked {
    /// A value that needs no check (a doc comment's body, the crate's version).
    pub fn unchecked(text: Text) -> Checked {
        Checked {
            text,
            deferred: None,
        }
    }
}

impl ToTokens for Checked {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let text = &self.text;
        tokens.extend(quote_spanned!(text.span()=> #text));
    }
}

impl ConstChecks {
    /// Adds the compiler's check of `value`, if it has one.
    pub fn defer(&mut self, value: &Checked, krate: &TokenStream) {
        let Some(deferred) = &value.deferred else {
            return;
        };
        let text = &value.text;
        let span = text.span();
        let check = match deferred {
            Deferred::NotBlank { what, fix } => {
                quote_spanned!(span=> #krate::__private::check_not_blank(#text, #what, #fix))
            }
            Deferred::KebabCase => {
                quote_spanned!(span=> #krate::__private::check_kebab_case(#text))
            }
        };
        self.push(check, text, span);
    }
}

/// A skill id is kebab-case; an expression is checked when the constant is evaluated.
pub fn skill_id(id: Text, errors: &mut Errors) -> Checked {
    let deferred = match id.value() {
        Some(value) if !is_kebab_case(&value) => {
            let fix = suggest_kebab_case(&value);
            errors.at(&id, NOT_KEBAB_CASE.render(&[&value, &fix]));
            None
        }
        Some(_) => None,
        None => Some(Deferred::KebabCase),
    };
    Checked { text: id, deferred }
}

/// A string the card needs is not blank; an expression is checked when the constant is
/// evaluated. `what` names the value, `fix` says how to give one.
pub fn not_blank(
    text: Text,
    what: &'static str,
    fix: &'static str,
    errors: &mut Errors,
) -> Checked {
    let deferred = match text.value() {
        Some(v) if is_blank(&v) => {
            errors.at(&text, format!("{what} is empty; {fix}"));
            None
        }
        Some(_) => None,
        None => Some(Deferred::NotBlank { what, fix }),
    };
    Checked { text, deferred }
}
