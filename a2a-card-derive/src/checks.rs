//! The card's rules, checked on the tokens the macros can see, with the same predicates the
//! linter uses (`a2a-card-rules`). Each error says how to fix the value.

use a2a_card_rules::MediaType;
use a2a_card_rules::names::{is_kebab_case, to_kebab_case};
use a2a_card_rules::urls::{UrlKind, check_endpoint_url, classify};
use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::LitStr;

use crate::attr::Text;
use crate::ctxt::Errors;

/// A mode is a media type.
pub fn media_type(lit: &LitStr, errors: &mut Errors) {
    let value = lit.value();
    if let Err(e) = MediaType::parse(&value) {
        let hint = match value.trim() {
            "text" => "; use \"text/plain\"".to_owned(),
            "json" | "data" => "; use \"application/json\"".to_owned(),
            _ => "; write `type/subtype`, e.g. \"text/plain\" or \"image/png\"".to_owned(),
        };
        errors.at(lit, format!("`{value}` is not a media type: {e}{hint}"));
    }
}

/// The agent's endpoint URL: absolute, https unless loopback.
pub fn endpoint_url(lit: &LitStr, errors: &mut Errors) {
    if let Err(message) = check_endpoint_url(&lit.value()) {
        errors.at(lit, message);
    }
}

/// A link (documentation, icon, provider): an absolute URL.
pub fn link(lit: &LitStr, errors: &mut Errors) {
    if let (UrlKind::Invalid(message), _) = classify(&lit.value()) {
        errors.at(lit, message);
    }
}

/// A skill id is kebab-case; an expression is checked when the constant is evaluated.
pub fn skill_id(id: &Text, source: &str, krate: &TokenStream, errors: &mut Errors) -> TokenStream {
    match id.value() {
        Some(value) if !is_kebab_case(&value) => {
            let fix = to_kebab_case(&value);
            let fix = if fix.is_empty() {
                "code-review".to_owned()
            } else {
                fix
            };
            errors.at(id, format!("skill id `{value}` is not kebab-case; use lowercase words joined by `-`, e.g. id = \"{fix}\""));
            quote_spanned!(id.span()=> #id)
        }
        Some(_) => quote_spanned!(id.span()=> #id),
        None => quote_spanned!(id.span()=> {
            #krate::__private::check_kebab_case(#id, #source);
            #id
        }),
    }
}

/// A string the card needs is not blank; an expression is checked when the constant is
/// evaluated. `what` names the value, `fix` says how to give one.
pub fn not_blank(
    text: &Text,
    what: &str,
    fix: &str,
    krate: &TokenStream,
    errors: &mut Errors,
) -> TokenStream {
    match text.value() {
        Some(v) if v.trim().is_empty() => {
            errors.at(text, format!("{what} is empty; {fix}"));
            quote_spanned!(text.span()=> #text)
        }
        Some(_) => quote_spanned!(text.span()=> #text),
        None => quote_spanned!(text.span()=> {
            #krate::__private::check_not_blank(#text, #what, #fix);
            #text
        }),
    }
}
