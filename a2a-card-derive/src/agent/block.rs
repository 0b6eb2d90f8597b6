//! The `impl` block `#[agent]` is on, read as the macro needs it: the header and each item's
//! attributes and signature parsed, the methods' bodies kept as the tokens they came as, never
//! parsed (the macro has no use for them, and every check of the user's crate runs the macro
//! again: a body parsed and printed back would cost each check for nothing).

use proc_macro2::TokenStream;
use quote::{ToTokens, TokenStreamExt};
use syn::parse::discouraged::Speculative;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Generics, ImplItem, Path, Token, Type, braced, token};

use crate::skill::Handler;

/// An `impl` block: `impl Type { .. }` (or `impl Trait for Type`, which the macro refuses).
pub struct Block {
    pub attrs: Vec<Attribute>,
    impl_token: Token![impl],
    pub generics: Generics,
    /// The trait of `impl Trait for Type`.
    pub trait_: Option<(Path, Token![for])>,
    pub self_ty: Type,
    brace: token::Brace,
    inner_attrs: Vec<Attribute>,
    pub items: Vec<BlockItem>,
}

/// One item of the block.
pub enum BlockItem {
    /// A method with a body, and what the macro expanded it into (the method and the items its
    /// skill adds), when it is a skill.
    Fn(Box<Handler>, Option<TokenStream>),
    /// Anything else (constants, types, macros, a method without a body), parsed whole.
    Other(Box<ImplItem>),
}

impl Parse for Block {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let impl_token = input.parse()?;
        let mut generics: Generics = if input.peek(Token![<]) {
            input.parse()?
        } else {
            Generics::default()
        };
        let first: Type = input.parse()?;
        let (trait_, self_ty) = if input.peek(Token![for]) {
            let Type::Path(trait_) = first else {
                return Err(syn::Error::new_spanned(first, "expected a trait"));
            };
            let for_token = input.parse()?;
            (Some((trait_.path, for_token)), input.parse()?)
        } else {
            (None, first)
        };
        generics.where_clause = input.parse()?;
        let content;
        let brace = braced!(content in input);
        let inner_attrs = content.call(Attribute::parse_inner)?;
        let mut items = Vec::new();
        while !content.is_empty() {
            let fork = content.fork();
            match fork.parse::<Handler>() {
                Ok(handler) => {
                    content.advance_to(&fork);
                    items.push(BlockItem::Fn(Box::new(handler), None));
                }
                Err(_) => items.push(BlockItem::Other(Box::new(content.parse()?))),
            }
        }
        Ok(Block {
            attrs,
            impl_token,
            generics,
            trait_,
            self_ty,
            brace,
            inner_attrs,
            items,
        })
    }
}

impl ToTokens for Block {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.append_all(&self.attrs);
        self.impl_token.to_tokens(tokens);
        self.generics.to_tokens(tokens);
        if let Some((path, for_token)) = &self.trait_ {
            path.to_tokens(tokens);
            for_token.to_tokens(tokens);
        }
        self.self_ty.to_tokens(tokens);
        self.generics.where_clause.to_tokens(tokens);
        self.brace.surround(tokens, |tokens| {
            tokens.append_all(&self.inner_attrs);
            for item in &self.items {
                match item {
                    BlockItem::Fn(_, Some(expanded)) => expanded.to_tokens(tokens),
                    BlockItem::Fn(handler, None) => handler.to_tokens(tokens),
                    BlockItem::Other(item) => item.to_tokens(tokens),
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn a_block_is_printed_back_as_it_was_written() {
        let written = quote! {
            #[doc = "The agent."]
            impl<'a> Agent<'a> where Self: Sized {
                #![allow(dead_code)]
                const LIMIT: usize = 3;
                /// Echoes.
                pub async fn echo(&self, text: String) -> String { let x = text; x }
                fn bare();
                m!{}
            }
        };
        let block: Block = syn::parse2(written.clone()).unwrap();
        assert!(block.trait_.is_none());
        let kinds: Vec<bool> = block
            .items
            .iter()
            .map(|i| matches!(i, BlockItem::Fn(..)))
            .collect();
        assert_eq!(kinds, [false, true, false, false]);
        assert_eq!(block.to_token_stream().to_string(), written.to_string());
    }

    #[test]
    fn a_trait_impl_is_read_with_its_trait() {
        let block: Block =
            syn::parse2(quote!(impl Clone for Agent { fn clone(&self) -> Self { Agent } }))
                .unwrap();
        let (path, _) = block.trait_.as_ref().unwrap();
        assert!(path.is_ident("Clone"));
        assert!(matches!(&block.self_ty, Type::Path(p) if p.path.is_ident("Agent")));
    }
}
