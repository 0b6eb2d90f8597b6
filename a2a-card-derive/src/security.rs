//! `security_schemes(..)` declared inline in `#[agent]`, and the requirements checked against it
//! at compile time: a requirement naming a scheme that is not declared, or scopes on a scheme
//! kind that has none, is an error at the token at fault.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Expr, ExprAssign, ExprCall, ExprLit, ExprPath, Ident, Lit, LitStr};

use a2a_card_rules::skills::{SCOPES_WITHOUT_MEANING, SchemeKind};

use crate::attr::Requirement;
use crate::ctxt::{Errors, did_you_mean};

/// How the agent declares its schemes.
pub enum Schemes {
    /// `security_schemes = path`: a function, called at run time (nothing known here).
    Path(syn::Path),
    /// `security_schemes(name = kind(..), ..)`.
    Inline(Vec<Scheme>),
}

/// One inline scheme.
pub struct Scheme {
    pub name: Ident,
    /// Its kind: whether requirements on it may list scopes, and its name in messages.
    pub kind: SchemeKind,
    /// The `SecurityScheme` value, given the runtime crate's path.
    value: Value,
}

enum Value {
    Bearer(Option<LitStr>),
    Basic,
    ApiKey(Ident, LitStr),
    OAuth2(Expr),
    OpenIdConnect(Expr),
    MutualTls,
}

impl Value {
    fn tokens(&self, krate: &TokenStream) -> TokenStream {
        let s = quote!(#krate::SecurityScheme);
        match self {
            Value::Bearer(None) => quote!(#s::bearer(::core::option::Option::None)),
            Value::Bearer(Some(f)) => quote!(#s::bearer(::core::option::Option::Some(#f))),
            Value::Basic => quote!(#s::basic()),
            Value::ApiKey(place, key) => quote!(#s::api_key(#krate::ApiKeyLocation::#place, #key)),
            Value::OAuth2(flow) => quote!(#s::oauth2(#flow)),
            Value::OpenIdConnect(url) => quote!(#s::open_id_connect(#url)),
            Value::MutualTls => quote!(#s::mutual_tls()),
        }
    }
}

const KINDS: &str = "bearer, bearer(\"JWT\"), basic, api_key(header = \"X-API-Key\") (or query = / cookie =), oauth2(flow), openid_connect(\"https://.../.well-known/openid-configuration\"), mutual_tls";

/// Parses `security_schemes(..)` or `security_schemes = path`.
pub fn parse(meta: &ParseNestedMeta) -> syn::Result<Schemes> {
    if !meta.input.peek(syn::token::Paren) {
        return Ok(Schemes::Path(meta.value()?.parse()?));
    }
    let mut schemes = Vec::new();
    meta.parse_nested_meta(|inner| {
        let name = inner.path.get_ident().cloned().ok_or_else(|| {
            inner.error("expected a scheme name, e.g. security_schemes(bearer = bearer(\"JWT\"))")
        })?;
        let value: Expr = inner.value()?.parse()?;
        schemes.push(scheme(name, &value)?);
        Ok(())
    })?;
    Ok(Schemes::Inline(schemes))
}

fn string(expr: &Expr) -> Option<&LitStr> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s),
        _ => None,
    }
}

fn scheme(name: Ident, value: &Expr) -> syn::Result<Scheme> {
    let (kind, args): (&Ident, Vec<&Expr>) = match value {
        Expr::Path(ExprPath { path, .. }) if path.get_ident().is_some() => (
            path.get_ident().unwrap_or_else(|| unreachable!()),
            Vec::new(),
        ),
        Expr::Call(ExprCall { func, args, .. }) => match &**func {
            Expr::Path(ExprPath { path, .. }) if path.get_ident().is_some() => (
                path.get_ident().unwrap_or_else(|| unreachable!()),
                args.iter().collect(),
            ),
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    format!("expected a scheme kind: {KINDS}"),
                ));
            }
        },
        other => {
            return Err(syn::Error::new_spanned(
                other,
                format!("expected a scheme kind: {KINDS}"),
            ));
        }
    };
    let wrong =
        |what: &str| syn::Error::new_spanned(value, format!("{what}; the kinds are: {KINDS}"));
    let (kind, value) = match (kind.to_string().as_str(), args.as_slice()) {
        ("bearer", []) => (SchemeKind::Http, Value::Bearer(None)),
        ("bearer", [format]) => {
            let format =
                string(format).ok_or_else(|| wrong("bearer(\"FORMAT\") takes a string literal"))?;
            (SchemeKind::Http, Value::Bearer(Some(format.clone())))
        }
        ("basic", []) => (SchemeKind::Http, Value::Basic),
        ("api_key", [Expr::Assign(ExprAssign { left, right, .. })]) => {
            let place = match &**left {
                Expr::Path(p) if p.path.is_ident("header") => Ident::new("Header", p.span()),
                Expr::Path(p) if p.path.is_ident("query") => Ident::new("Query", p.span()),
                Expr::Path(p) if p.path.is_ident("cookie") => Ident::new("Cookie", p.span()),
                other => {
                    return Err(syn::Error::new_spanned(
                        other,
                        "an API key is sent in a `header`, a `query` parameter or a `cookie`: api_key(header = \"X-API-Key\")",
                    ));
                }
            };
            let key = string(right)
                .ok_or_else(|| wrong("api_key(header = \"NAME\") takes a string literal"))?;
            (SchemeKind::ApiKey, Value::ApiKey(place, key.clone()))
        }
        ("api_key", _) => {
            return Err(wrong(
                "write api_key(header = \"X-API-Key\"), api_key(query = \"key\") or api_key(cookie = \"key\")",
            ));
        }
        ("oauth2", [flow]) => (SchemeKind::OAuth2, Value::OAuth2((*flow).clone())),
        ("openid_connect", [url]) => (
            SchemeKind::OpenIdConnect,
            Value::OpenIdConnect((*url).clone()),
        ),
        ("mutual_tls", []) => (SchemeKind::MutualTls, Value::MutualTls),
        ("bearer" | "basic" | "oauth2" | "openid_connect" | "mutual_tls", _) => {
            return Err(wrong(&format!("`{kind}` does not take these arguments")));
        }
        _ => {
            return Err(syn::Error::new_spanned(
                kind,
                format!("unknown security scheme kind `{kind}`; the kinds are: {KINDS}"),
            ));
        }
    };
    Ok(Scheme { name, kind, value })
}

impl Schemes {
    /// The function that lists the schemes, for the declaration.
    pub fn function(&self, krate: &TokenStream) -> TokenStream {
        let body = match self {
            Schemes::Path(path) => quote!(#krate::__private::schemes(#path())),
            Schemes::Inline(schemes) => {
                let entries = schemes.iter().map(|s| {
                    let name = LitStr::new(&s.name.to_string(), s.name.span());
                    let value = s.value.tokens(krate);
                    quote!((::std::string::String::from(#name), #value))
                });
                quote!(::std::vec![#(#entries),*])
            }
        };
        quote! {{
            fn __a2a_security_schemes() -> ::std::vec::Vec<(::std::string::String, #krate::SecurityScheme)> {
                #body
            }
            __a2a_security_schemes as fn() -> _
        }}
    }

    /// `(name, kind)` of each scheme, when known here.
    pub fn known(&self) -> Option<Vec<(String, SchemeKind)>> {
        match self {
            Schemes::Path(_) => None,
            Schemes::Inline(schemes) => Some(
                schemes
                    .iter()
                    .map(|s| (s.name.to_string(), s.kind))
                    .collect(),
            ),
        }
    }
}

/// Checks `requirements` against the declared schemes (`None`: declared by a function, not
/// known here), recording an error at each scheme name that is not declared and at each scope
/// list of a scheme that has no scopes.
pub fn check(
    requirements: &[Requirement],
    declared: Option<&[(String, SchemeKind)]>,
    errors: &mut Errors,
) {
    let Some(declared) = declared else { return };
    let names: Vec<&str> = declared.iter().map(|(n, _)| n.as_str()).collect();
    for requirement in requirements {
        for (name, scopes) in &requirement.schemes {
            let value = name.value();
            match declared.iter().find(|(n, _)| *n == value) {
                None => {
                    let hint = match did_you_mean(&value, &names) {
                        Some(close) => format!("; did you mean `{close}`?"),
                        None if names.is_empty() => "; declare it with #[agent(security_schemes(NAME = bearer(\"JWT\"), ..))]".to_owned(),
                        None => format!(
                            "; declare it in security_schemes(..) (declared: {})",
                            names.join(", ")
                        ),
                    };
                    errors.push(syn::Error::new(
                        name.span(),
                        format!("security scheme `{value}` is not declared by this agent{hint}"),
                    ));
                }
                Some((_, kind)) if !kind.takes_scopes() && !scopes.is_empty() => {
                    let span = scopes
                        .iter()
                        .map(LitStr::span)
                        .reduce(|a, b| a.join(b).unwrap_or(a))
                        .unwrap_or_else(Span::call_site);
                    errors.push(syn::Error::new(
                        span,
                        SCOPES_WITHOUT_MEANING.render(&[&value, kind.describe()]),
                    ));
                }
                Some(_) => {}
            }
        }
    }
}

/// The `(name, kind)` table a constant check compares a listed skill's requirements with.
pub fn table(declared: &[(String, SchemeKind)], krate: &TokenStream) -> TokenStream {
    let entries = declared.iter().map(|(n, kind)| {
        let kind = match kind {
            SchemeKind::ApiKey => quote!(ApiKey),
            SchemeKind::Http => quote!(Http),
            SchemeKind::OAuth2 => quote!(OAuth2),
            SchemeKind::OpenIdConnect => quote!(OpenIdConnect),
            SchemeKind::MutualTls => quote!(MutualTls),
        };
        quote!((#n, #krate::__private::SchemeKind::#kind))
    });
    quote!(&[#(#entries),*])
}
