//! The card's rules, checked on the tokens the macros can see, with the same predicates the
//! linter uses (`a2a-card-rules`). Each error says how to fix the value.
//!
//! What the macros cannot see (a `const`, `concat!(..)`, the types of the arguments, skills
//! declared elsewhere) becomes a [`ConstChecks`] entry: a constant the compiler evaluates, which
//! fails with the check's message at the token at fault.

use a2a_card_rules::MediaType;
use a2a_card_rules::media::mode_hint;
use a2a_card_rules::names::{is_kebab_case, suggest_kebab_case};
use a2a_card_rules::text::is_blank;
use a2a_card_rules::urls::{UrlKind, check_endpoint_url, classify};
use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
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
    /// user's tokens it evaluates) and generated tokens; it fails at `span`.
    pub fn push(
        &mut self,
        check: TokenStream,
        uses: &dyn ToTokens,
        span: Span,
        krate: &TokenStream,
    ) {
        let krate = respan(krate, span);
        let fail = quote_spanned! {span=>
            if let ::core::option::Option::Some(__a2a_message) = #check.message() {
                #krate::__private::fail!(__a2a_message)
            }
        };
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

    /// The declaration `value` with its checks.
    pub fn wrap(&self, value: TokenStream) -> TokenStream {
        if self.items.is_empty() && self.statements.is_empty() {
            return value;
        }
        let (items, statements) = (&self.items, &self.statements);
        quote!({
            #(#items)*
            #(#statements;)*
            #value
        })
    }
}

/// A skill id is kebab-case; an expression is checked when the constant is evaluated.
pub fn skill_id(
    id: &Text,
    source: &str,
    krate: &TokenStream,
    consts: &mut ConstChecks,
    errors: &mut Errors,
) -> TokenStream {
    match id.value() {
        Some(value) if !is_kebab_case(&value) => {
            let fix = suggest_kebab_case(&value);
            errors.at(id, format!("skill id `{value}` is not kebab-case; use lowercase words joined by `-`, e.g. id = \"{fix}\""));
            quote_spanned!(id.span()=> #id)
        }
        Some(_) => quote_spanned!(id.span()=> #id),
        None => {
            let span = id.span();
            let check = quote_spanned!(span=> #krate::__private::check_kebab_case(#id, #source));
            consts.push(check, id, span, krate);
            quote_spanned!(span=> #id)
        }
    }
}

/// A string the card needs is not blank; an expression is checked when the constant is
/// evaluated. `what` names the value, `fix` says how to give one.
pub fn not_blank(
    text: &Text,
    what: &str,
    fix: &str,
    krate: &TokenStream,
    consts: &mut ConstChecks,
    errors: &mut Errors,
) -> TokenStream {
    match text.value() {
        Some(v) if is_blank(&v) => {
            errors.at(text, format!("{what} is empty; {fix}"));
            quote_spanned!(text.span()=> #text)
        }
        Some(_) => quote_spanned!(text.span()=> #text),
        None => {
            let span = text.span();
            let check =
                quote_spanned!(span=> #krate::__private::check_not_blank(#text, #what, #fix));
            consts.push(check, text, span, krate);
            quote_spanned!(span=> #text)
        }
    }
}
