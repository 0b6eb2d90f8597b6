//! `#[derive(Schema)]`: names a type's JSON Schema for the input/output schemas extension.

use a2a_card_rules::names::{check_schema_name, lower_camel_case};
use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, LitStr};

use crate::attr;
use crate::ctxt::{Errors, unknown_key};

const KEYS: &[&str] = &["name", "inline", "crate"];

/// What `#[schema(...)]` says.
#[derive(Default)]
struct Attrs {
    name: Option<LitStr>,
    inline: bool,
    krate: Option<syn::Path>,
}

fn parse(input: &DeriveInput, errors: &mut Errors) -> Attrs {
    let mut attrs = Attrs::default();
    for a in input.attrs.iter().filter(|a| a.path().is_ident("schema")) {
        let Some(list) = errors.ok(a.meta.require_list()) else {
            continue;
        };
        let these = attr::parse_entries(
            list.tokens.clone(),
            errors,
            &[],
            |attrs: &mut Attrs, meta| {
                if meta.path.is_ident("name") {
                    attrs.name = Some(attr::lit_str(&meta)?);
                } else if meta.path.is_ident("inline") {
                    attrs.inline = attr::flag(&meta)?.value;
                } else if meta.path.is_ident("crate") {
                    attrs.krate = Some(attr::krate(&meta)?);
                } else {
                    return Err(unknown_key(&meta.path, KEYS, "schema"));
                }
                Ok(())
            },
        );
        attrs.name = these.name.or(attrs.name);
        attrs.inline |= these.inline;
        attrs.krate = these.krate.or(attrs.krate);
    }
    attrs
}

pub fn expand(input: DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let attrs = parse(&input, &mut errors);
    let ident = &input.ident;
    if !input.generics.params.is_empty() {
        errors.at(
            &input.generics,
            "a named schema has one name, so it cannot be generic; derive `Schema` on a concrete type (e.g. a newtype around the instance you publish)",
        );
    }
    let name = attrs
        .name
        .clone()
        .unwrap_or_else(|| LitStr::new(&lower_camel_case(&ident.to_string()), ident.span()));
    if let Err(message) = check_schema_name(&name.value()) {
        errors.at(
            &name,
            format!("{message}; set another with #[schema(name = \"...\")]"),
        );
    }
    let krate = attr::runtime(&attrs.krate);
    if !errors.is_empty() {
        let errors = errors.to_compile_errors();
        let fallback = crate::fallback::named_schema(&input, &name, &krate);
        return quote!(#errors #fallback);
    }
    let options = if attrs.inline {
        quote!(const SCHEMA_OPTIONS: #krate::SchemaOptions = #krate::SchemaOptions::INLINE;)
    } else {
        TokenStream::new()
    };
    quote! {
        impl #krate::NamedSchema for #ident {
            const SCHEMA_NAME: &'static str = #name;
            #options
        }
    }
}
