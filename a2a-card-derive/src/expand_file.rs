//! The macros' expansion of a whole source file, for `scripts/bench_compile.py`: its `expanded`
//! variant is the macros variant with every `#[agent]`, `#[skill]` and `#[derive(Schema)]`
//! replaced by what these functions emit, so that it cannot drift from them.
//!
//! Run by the script as `cargo test -p a2a-card-derive --lib expand_file::write -- --ignored`
//! with `A2A_CARD_EXPAND_IN` (a file of the macros variant) and `A2A_CARD_EXPAND_OUT`.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{Attribute, ImplItem, Item, Meta};

fn named(attr: &Attribute, name: &str) -> bool {
    attr.path().segments.last().is_some_and(|s| s.ident == name)
}

fn args(attr: &Attribute) -> TokenStream {
    match &attr.meta {
        Meta::List(list) => list.tokens.clone(),
        Meta::Path(_) | Meta::NameValue(_) => TokenStream::new(),
    }
}

/// Takes the first attribute called `name` off `attrs`.
fn take(attrs: &mut Vec<Attribute>, name: &str) -> Option<Attribute> {
    let at = attrs.iter().position(|a| named(a, name))?;
    Some(attrs.remove(at))
}

/// Takes `Schema` out of a `#[derive(..)]` list; whether it was there.
fn take_schema_derive(attrs: &mut [Attribute]) -> bool {
    let mut found = false;
    for attr in attrs.iter_mut().filter(|a| named(a, "derive")) {
        let Ok(paths) = attr.parse_args_with(
            syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
        ) else {
            continue;
        };
        let (schema, rest): (Vec<_>, Vec<_>) = paths
            .into_iter()
            .partition(|p| p.segments.last().is_some_and(|s| s.ident == "Schema"));
        if !schema.is_empty() {
            found = true;
            *attr = syn::parse_quote!(#[derive(#(#rest),*)]);
        }
    }
    found
}

/// The items `tokens` (a macro's output) stand for, each expanded again.
fn items(tokens: TokenStream) -> Vec<Item> {
    let file: syn::File = syn::parse2(tokens).expect("a macro's output is items");
    file.items.into_iter().flat_map(item).collect()
}

/// An item with the macros on it (and in it) expanded.
fn item(mut it: Item) -> Vec<Item> {
    match &mut it {
        Item::Impl(block) => {
            if let Some(attr) = take(&mut block.attrs, "agent") {
                return items(crate::agent::expand(args(&attr), block.to_token_stream()));
            }
            let methods = std::mem::take(&mut block.items);
            for method in methods {
                let ImplItem::Fn(mut f) = method else {
                    block.items.push(method);
                    continue;
                };
                let Some(attr) = take(&mut f.attrs, "skill") else {
                    block.items.push(ImplItem::Fn(f));
                    continue;
                };
                let out = crate::skill::expand(args(&attr), f.to_token_stream());
                let wrapped: syn::ItemImpl =
                    syn::parse2(quote::quote!(impl __Expanded { #out })).expect("impl items");
                block.items.extend(wrapped.items);
            }
        }
        Item::Fn(f) => {
            if let Some(attr) = take(&mut f.attrs, "skill") {
                return items(crate::skill::expand(args(&attr), f.to_token_stream()));
            }
        }
        Item::Struct(s) => {
            if let Some(attr) = take(&mut s.attrs, "agent") {
                return items(crate::agent::expand(args(&attr), s.to_token_stream()));
            }
            if take_schema_derive(&mut s.attrs) {
                let derived = crate::schema::expand(syn::parse2(s.to_token_stream()).unwrap());
                s.attrs.retain(|a| !named(a, "schema"));
                return std::iter::once(it).chain(items(derived)).collect();
            }
        }
        Item::Enum(e) => {
            if !take_schema_derive(&mut e.attrs) {
                return vec![it];
            }
            let derived = crate::schema::expand(syn::parse2(e.to_token_stream()).unwrap());
            e.attrs.retain(|a| !named(a, "schema"));
            return std::iter::once(it).chain(items(derived)).collect();
        }
        _ => {}
    }
    vec![it]
}

/// The source `text` with the macros expanded (the rest as it was, comments dropped).
fn expand_file(text: &str) -> String {
    let file: syn::File = syn::parse_file(text).expect("a Rust source file");
    let expanded = syn::File {
        items: file.items.into_iter().flat_map(item).collect(),
        ..file
    };
    expanded.to_token_stream().to_string()
}

#[test]
#[ignore = "a tool: scripts/bench_compile.py runs it with A2A_CARD_EXPAND_IN and _OUT set"]
fn write() {
    let input = std::env::var("A2A_CARD_EXPAND_IN").expect("A2A_CARD_EXPAND_IN");
    let output = std::env::var("A2A_CARD_EXPAND_OUT").expect("A2A_CARD_EXPAND_OUT");
    let text = std::fs::read_to_string(&input).expect("the input file");
    std::fs::write(&output, expand_file(&text)).expect("the output file");
}

#[test]
fn expands_every_macro_and_keeps_the_rest() {
    let text = r#"
        use a2a_card::{agent, skill, Schema};
        #[derive(Deserialize, JsonSchema, Schema)]
        #[schema(name = "order")]
        pub struct Order { item: String }
        pub struct Shop;
        /// Takes orders.
        #[agent(url = "https://shop.example.com/a2a")]
        impl Shop {
            /// Places an order.
            #[skill(tags("orders"))]
            fn place_order(&self, order: Order) -> String { order.item }
            fn helper(&self) {}
        }
    "#;
    let out = expand_file(text);
    let file = syn::parse_file(&out).expect("the expansion parses");
    let text = file.to_token_stream().to_string();
    for gone in ["# [agent", "# [skill", "JsonSchema , Schema", "# [schema"] {
        assert!(!text.contains(gone), "`{gone}` left in {text}");
    }
    for kept in [
        "derive (Deserialize , JsonSchema)",
        "const SCHEMA_NAME : & 'static str = \"order\"",
        "impl :: a2a_card :: Agent for Shop",
        "\"place-order\"",
        "fn place_order (& self , order : Order) -> String",
        "fn helper (& self)",
    ] {
        assert!(text.contains(kept), "`{kept}` missing from {text}");
    }
}
