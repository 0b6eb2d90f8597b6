//! What the macros emit beside their errors, so that one mistake gives one error, not a
//! cascade: the user's item as written, and stand-ins for what other code names (the `Agent`
//! impl, a skill's declaration and call).

use proc_macro2::TokenStream;
use quote::quote;

/// An item the macro cannot parse: the parse error, and the item as written.
pub fn unparsed(error: syn::Error, item: TokenStream) -> TokenStream {
    let error = error.to_compile_error();
    quote!(#error #item)
}

/// [`unparsed`], with a first error that says where the macro goes.
pub fn misplaced(message: String, error: syn::Error, item: TokenStream) -> TokenStream {
    let mut first = syn::Error::new(error.span(), message);
    first.combine(error);
    unparsed(first, item)
}

/// The `Agent` impl of a declaration with errors: the type still implements `Agent`, so code
/// that uses it does not fail a second time. It is never compiled into a program (the errors
/// stop the build).
pub fn agent_impl(self_ty: &TokenStream, krate: &TokenStream) -> TokenStream {
    quote! {
        impl #krate::Agent for #self_ty {
            const DECL: #krate::__private::AgentDecl = #krate::__private::AgentDecl::POISONED;
            const SKILLS: &'static [#krate::__private::SkillDecl] = &[];
            fn card() -> ::core::result::Result<&'static #krate::AgentCard, &'static #krate::BuildError> {
                ::core::unreachable!()
            }
            fn call_skill<'__a>(&'__a self, index: ::core::primitive::usize, _call: #krate::__private::SkillCall) -> #krate::__private::SkillFuture<'__a> {
                #krate::__private::unknown_skill(index)
            }
        }
    }
}

/// A skill with errors: the declaration and the call body of its stand-ins, which the agent
/// can name without further errors.
pub fn skill(krate: &TokenStream) -> (TokenStream, TokenStream) {
    (
        quote!(#krate::__private::SkillDecl::POISONED),
        quote!(#krate::__private::unknown_skill(::core::primitive::usize::MAX)),
    )
}

/// A `#[derive(Schema)]` with errors: the type still names a schema, so that the skills that
/// take or return it do not fail a second time. Never compiled into a program.
pub fn named_schema(
    input: &syn::DeriveInput,
    name: &syn::LitStr,
    krate: &TokenStream,
) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut where_clause = where_clause
        .cloned()
        .unwrap_or_else(|| syn::parse_quote!(where));
    if !input.generics.params.is_empty() {
        where_clause
            .predicates
            .push(syn::parse_quote!(#ident #ty_generics: #krate::__private::schemars::JsonSchema));
    }
    quote! {
        impl #impl_generics #krate::NamedSchema for #ident #ty_generics #where_clause {
            const SCHEMA_NAME: &'static str = #name;
        }
    }
}
