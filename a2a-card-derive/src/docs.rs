//! Doc comments as names and descriptions.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// What a doc comment gives: a heading (`# Name`) and the text.
pub enum Docs {
    /// Literal doc comments, read now.
    Text {
        heading: Option<String>,
        body: String,
    },
    /// Doc attributes that are expressions (`#[doc = include_str!(..)]`): joined at compile time.
    Expr(TokenStream),
}

/// The doc comment of an item, if it has one.
pub fn read(attrs: &[Attribute]) -> Option<Docs> {
    let mut lines = Vec::new();
    let mut exprs = Vec::new();
    // Where a check of the text points: the first doc attribute that is an expression.
    let mut expr_span: Option<Span> = None;
    for attr in attrs {
        let Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        if !nv.path.is_ident("doc") {
            continue;
        }
        match &nv.value {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => {
                let value = s.value();
                lines.extend(
                    value
                        .split('\n')
                        .map(|l| l.strip_prefix(' ').unwrap_or(l).to_owned()),
                );
                exprs.push(quote!(#s));
            }
            other => {
                expr_span.get_or_insert(other.span());
                exprs.push(quote!(#other));
            }
        }
    }
    if exprs.is_empty() {
        return None;
    }
    if let Some(span) = expr_span {
        return Some(Docs::Expr(
            quote_spanned!(span=> ::core::concat!(#(#exprs, "\n"),*)),
        ));
    }
    let mut lines: Vec<&str> = lines.iter().map(|l| l.trim_end()).collect();
    while lines.first().is_some_and(|l| l.is_empty()) {
        lines.remove(0);
    }
    let heading = lines
        .first()
        .and_then(|l| l.strip_prefix("# "))
        .map(|h| h.trim().to_owned());
    if heading.is_some() {
        lines.remove(0);
    }
    Some(Docs::Text {
        heading,
        body: paragraphs(&lines),
    })
}

/// Markdown-ish reflow: lines of a paragraph join with a space, paragraphs with a blank line;
/// list items, tables and code blocks keep their line breaks.
fn paragraphs(lines: &[&str]) -> String {
    let mut out = String::new();
    let mut in_code = false;
    let mut blank = false;
    for line in lines {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_code = !in_code;
        }
        if trimmed.is_empty() && !in_code {
            blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            let keeps_break = in_code
                || trimmed.starts_with("```")
                || trimmed.starts_with(['-', '*', '+', '|', '#'])
                || trimmed
                    .split_once(". ")
                    .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            out.push_str(if blank {
                "\n\n"
            } else if keeps_break {
                "\n"
            } else {
                " "
            });
        }
        blank = false;
        out.push_str(if in_code { line } else { trimmed });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(text: &str) -> (Option<String>, String) {
        let attrs: Vec<Attribute> = text
            .lines()
            .map(|l| syn::parse_quote!(#[doc = #l]))
            .collect();
        match read(&attrs) {
            Some(Docs::Text { heading, body }) => (heading, body),
            _ => panic!("no docs"),
        }
    }

    #[test]
    fn headings_paragraphs_and_lists() {
        assert_eq!(
            docs(" # Fight\n Picks\n a winner.\n\n Then explains."),
            (
                Some("Fight".into()),
                "Picks a winner.\n\nThen explains.".into()
            )
        );
        assert_eq!(
            docs(" Takes:\n - a\n - b"),
            (None, "Takes:\n- a\n- b".into())
        );
        assert_eq!(docs(" One line."), (None, "One line.".into()));
    }
}
