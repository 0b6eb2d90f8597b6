//! Errors collected across a whole macro invocation, reported together.

use proc_macro2::TokenStream;
use quote::ToTokens;

/// Collects errors instead of stopping at the first.
#[derive(Default)]
pub struct Errors {
    errors: Vec<syn::Error>,
}

impl Errors {
    /// Records an error at `tokens`.
    pub fn at(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error.
    pub fn push(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// Records the error of a result, returning its value.
    pub fn ok<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        result.map_err(|e| self.push(e)).ok()
    }

    /// Whether nothing went wrong.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// How many errors so far.
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// Every error as `compile_error!` invocations.
    pub fn to_compile_errors(&self) -> TokenStream {
        self.errors
            .iter()
            .map(syn::Error::to_compile_error)
            .collect()
    }
}

/// The known key closest to `unknown`, when it is close enough to be a typo.
pub fn did_you_mean<'a>(unknown: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (distance(unknown, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// The error for an attribute key the macro does not know.
pub fn unknown_key(path: &syn::Path, known: &[&str], attribute: &str) -> syn::Error {
    let name = path.to_token_stream().to_string().replace(' ', "");
    let hint = match did_you_mean(&name, known) {
        Some(k) => format!("did you mean `{k}`?"),
        None => format!("expected one of: {}", known.join(", ")),
    };
    syn::Error::new_spanned(
        path,
        format!("unknown key `{name}` in #[{attribute}]; {hint}"),
    )
}

/// Levenshtein distance.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}
