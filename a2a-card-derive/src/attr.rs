//! Parsing the values of attribute keys: strings (literal or constant expression), lists,
//! booleans, security requirements and the crate path.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, LitBool, LitStr, Token, bracketed, parenthesized};

use crate::ctxt::Errors;

/// Parses the `key = value, key(..), ..` entries of an attribute into an `A`, recording every
/// error. A key not in `repeatable` may be given once: a second one is an error at it (it would
/// silently override the first). When the list does not parse as a whole, each entry is parsed
/// on its own, so that a mistake in one entry gives one error and the other entries still count
/// (no error for a "missing" key that was written after the mistake).
pub fn parse_entries<A: Default>(
    args: TokenStream,
    errors: &mut Errors,
    repeatable: &[&str],
    mut entry: impl FnMut(&mut A, ParseNestedMeta) -> syn::Result<()>,
) -> A {
    let mut whole = A::default();
    let mut seen = Vec::new();
    let result = syn::meta::parser(|meta| {
        once(&meta, &mut seen, repeatable)?;
        entry(&mut whole, meta)
    })
    .parse2(args.clone());
    let Err(error) = result else {
        return whole;
    };
    let before = errors.len();
    let mut each = A::default();
    let mut seen = Vec::new();
    for tokens in split_entries(args) {
        errors.ok(syn::meta::parser(|meta| {
            once(&meta, &mut seen, repeatable)?;
            entry(&mut each, meta)
        })
        .parse2(tokens));
    }
    if errors.len() == before {
        errors.push(error);
    }
    each
}

/// Refuses a key already `seen` unless it is `repeatable`, pointing at the second one.
fn once(meta: &ParseNestedMeta, seen: &mut Vec<String>, repeatable: &[&str]) -> syn::Result<()> {
    let Some(key) = meta.path.get_ident().map(ToString::to_string) else {
        return Ok(());
    };
    if seen.contains(&key) && !repeatable.contains(&key.as_str()) {
        return Err(syn::Error::new_spanned(
            &meta.path,
            format!(
                "duplicate attribute `{key}`; give it once (the second would override the first)"
            ),
        ));
    }
    seen.push(key);
    Ok(())
}

/// The entries of an attribute's list: its tokens split at the commas outside groups.
fn split_entries(args: TokenStream) -> Vec<TokenStream> {
    let mut entries = vec![TokenStream::new()];
    for tt in args {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => entries.push(TokenStream::new()),
            _ => entries
                .last_mut()
                .into_iter()
                .for_each(|e| e.extend([tt.clone()])),
        }
    }
    entries.retain(|e| !e.is_empty());
    entries
}

/// A string value: a literal the macro can check now, or a constant expression (`concat!`,
/// `include_str!`, a `const`) that a constant check verifies when the compiler evaluates it.
#[derive(Clone)]
pub enum Text {
    /// A string literal.
    Lit(LitStr),
    /// Any other expression of type `&'static str`.
    Expr(Expr),
}

impl Text {
    /// A literal made by the macro (defaults).
    pub fn new(value: &str, span: Span) -> Text {
        Text::Lit(LitStr::new(value, span))
    }

    /// The value, when it is a literal.
    pub fn value(&self) -> Option<String> {
        match self {
            Text::Lit(l) => Some(l.value()),
            Text::Expr(_) => None,
        }
    }

    pub fn span(&self) -> Span {
        match self {
            Text::Lit(l) => l.span(),
            Text::Expr(e) => e.span(),
        }
    }
}

impl ToTokens for Text {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        match self {
            Text::Lit(l) => l.to_tokens(tokens),
            Text::Expr(e) => e.to_tokens(tokens),
        }
    }
}

fn text_of(expr: Expr) -> syn::Result<Text> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(Text::Lit(s)),
        Expr::Lit(other) => Err(syn::Error::new_spanned(
            other,
            "expected a string: a literal, `concat!(..)`, `include_str!(..)` or a `const`",
        )),
        other => Ok(Text::Expr(other)),
    }
}

/// `key = "text"` (or a constant expression).
pub fn text(meta: &ParseNestedMeta) -> syn::Result<Text> {
    text_of(meta.value()?.parse()?)
}

/// `key = "literal"`: values the macro must see (URLs, modes, environment variable names).
pub fn lit_str(meta: &ParseNestedMeta) -> syn::Result<LitStr> {
    let value = meta.value()?;
    let expr: Expr = value.parse()?;
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s),
        other => Err(syn::Error::new_spanned(
            other,
            "expected a string literal here, so that it can be checked at compile time",
        )),
    }
}

/// `key = true|false`, or the bare `key` for `true`.
pub fn flag(meta: &ParseNestedMeta) -> syn::Result<LitBool> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<LitBool>()
    } else {
        Ok(LitBool::new(true, meta.path.span()))
    }
}

/// `key("a", concat!(..), CONST)`, or `key = ["a", ..]`.
pub fn texts(meta: &ParseNestedMeta) -> syn::Result<Vec<Text>> {
    let exprs: Punctuated<Expr, Token![,]> = if meta.input.peek(Token![=]) {
        let value = meta.value()?;
        let content;
        bracketed!(content in value);
        Punctuated::parse_terminated(&content)?
    } else {
        let content;
        parenthesized!(content in meta.input);
        Punctuated::parse_terminated(&content)?
    };
    exprs.into_iter().map(text_of).collect()
}

/// `key("a", "b")` or `key = ["a", "b"]` of literals.
pub fn lit_strs(meta: &ParseNestedMeta) -> syn::Result<Vec<LitStr>> {
    texts(meta)?
        .into_iter()
        .map(|t| match t {
            Text::Lit(l) => Ok(l),
            Text::Expr(e) => Err(syn::Error::new_spanned(
                e,
                "expected a string literal here, so that it can be checked at compile time",
            )),
        })
        .collect()
}

/// One alternative of a security requirement: `security(bearer, oauth = ["read", "write"])`.
#[derive(Clone)]
pub struct Requirement {
    pub schemes: Vec<(LitStr, Vec<LitStr>)>,
}

pub fn requirement(meta: &ParseNestedMeta) -> syn::Result<Requirement> {
    let mut schemes = Vec::new();
    meta.parse_nested_meta(|scheme| {
        let name = scheme
            .path
            .get_ident()
            .map(|i| LitStr::new(&i.to_string(), i.span()))
            .ok_or_else(|| scheme.error("expected a security scheme name"))?;
        let scopes = if scheme.input.peek(Token![=]) {
            lit_strs(&scheme)?
        } else {
            Vec::new()
        };
        schemes.push((name, scopes));
        Ok(())
    })?;
    if schemes.is_empty() {
        return Err(meta.error(
            "a security requirement names at least one scheme, e.g. security(bearer) or security(oauth = [\"read\"])",
        ));
    }
    Ok(Requirement { schemes })
}

impl Requirement {
    /// `&[("name", &["scope"]), ..]`, written at `at`.
    pub fn tokens(&self, at: proc_macro2::Span) -> TokenStream {
        let entries = self
            .schemes
            .iter()
            .map(|(name, scopes)| quote::quote_spanned!(at=> (#name, &[#(#scopes),*])));
        quote::quote_spanned!(at=> &[#(#entries),*])
    }
}

/// `crate = "path"` or `crate = path`.
pub fn krate(meta: &ParseNestedMeta) -> syn::Result<syn::Path> {
    let value = meta.value()?;
    if value.peek(LitStr) {
        value.parse::<LitStr>()?.parse()
    } else {
        value.parse()
    }
}

/// The path generated code names the runtime crate by.
pub fn runtime(krate: &Option<syn::Path>) -> TokenStream {
    match krate {
        Some(path) => quote!(#path),
        None => quote!(::a2a_card),
    }
}
