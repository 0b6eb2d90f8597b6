//! `#[agent]`: an `impl` block of skills (or a type that lists skills from other modules)
//! becomes an agent with a compile-time-checked card.
//!
//! parse (card-level keys, in `attrs`; the skills of the block, the listed skills) -> check
//! (the card's rules on literal values, duplicate ids the macro can see, at least one skill) ->
//! expand (the `Agent` impl, and a constant check per skill for what only the compiler can
//! evaluate: ids and input schemas across modules).

mod attrs;
pub mod block;

use a2a_card_rules::names::title_case;
use a2a_card_rules::skills::{DUPLICATE_ID, SchemeKind};
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Attribute, Ident, Item, LitStr, Meta, Path};

use self::attrs::{Attrs, parse_attrs};
use self::block::{Block, BlockItem};
use crate::attr::{self, Requirement, Text};
use crate::checks::{self, Checked, ConstChecks};
use crate::ctxt::Errors;
use crate::docs::{self, Docs};
use crate::fallback;
use crate::security;
use crate::skill;

/// One skill of the agent, as the macro sees it.
struct SkillRef {
    /// The constant that declares it.
    decl: TokenStream,
    /// How to call it (`self` and `call` in scope).
    call: TokenStream,
    /// Where its checks point.
    span: Span,
    /// Its id, when the macro can know it.
    id: Option<String>,
    /// The handler, for messages.
    source: String,
    /// For a method listed in `skills(Self::name)`: the names of the items its `#[skill]` adds,
    /// which the agent replaces with stand-ins that fail a check when they are missing.
    listed_method: Option<(Ident, Ident)>,
    /// Its `security(..)` requirements, when its attribute is in the block (else checked as a
    /// constant).
    security: Option<Vec<Requirement>>,
    /// The method of the block, when the skill is one and is on the public card (the typed
    /// client's methods).
    client: Option<Ident>,
}

fn is_skill_attr(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "skill")
}

/// The skills of an impl block, its `#[skill]` methods, each expanded here (its attribute
/// taken off, its errors its own, the agent's `crate = ..` its own unless it names one): one
/// macro run for the block, not one more per skill.
fn block_skills(block: &mut Block, krate: Option<&Path>) -> (Vec<SkillRef>, Vec<Path>) {
    let mut found = Vec::new();
    let mut paths: Vec<Path> = Vec::new();
    for item in &mut block.items {
        let BlockItem::Fn(method, expanded) = item else {
            continue;
        };
        let Some(at) = method.attrs.iter().position(is_skill_attr) else {
            continue;
        };
        // Where the method begins as written: its first attribute, before any is taken off.
        let start = method.attrs[0].pound_token.span;
        let mut errors = Errors::default();
        let (path, args) = match method.attrs.remove(at).meta {
            Meta::List(list) => (list.path, list.tokens),
            Meta::Path(path) => (path, TokenStream::new()),
            Meta::NameValue(value) => {
                errors.at(
                    &value.value,
                    "#[skill] takes its settings in parentheses, such as #[skill(id = \"fight-comparison\")]",
                );
                (value.path, TokenStream::new())
            }
        };
        // The card lists every skill of the block: one left out of the build would leave it
        // naming a handler that is not there.
        if let Some(cfg) = method.attrs.iter().find(|a| a.path().is_ident("cfg")) {
            errors.at(
                cfg,
                "a skill cannot be left out of the build with #[cfg(..)]: the agent's card lists it either way; move the skill to its own #[agent] type, or make its handler refuse at run time",
            );
        }
        if !paths.contains(&path) {
            paths.push(path);
        }
        let mut attrs = skill::parse_attrs(args, &mut errors);
        attrs.method = true;
        if attrs.krate.is_none() {
            attrs.krate = krate.cloned();
        }
        let ident = method.sig.ident.clone();
        let (id, span) = match &attrs.id {
            Some(text) => (text.value(), text.span()),
            None => (
                Some(a2a_card_rules::names::default_skill_id(&ident.to_string())),
                ident.span(),
            ),
        };
        let (decl_const, call_fn) = (skill::decl_const(&ident), skill::call_fn(&ident));
        // Skills only on the extended card are not on the card a client checks.
        let public = !attrs.extended.as_ref().is_some_and(|e| e.value);
        let security = attrs.security.clone();
        *expanded = Some(skill::expand_handler(attrs, errors, method, start));
        found.push(SkillRef {
            decl: quote!(Self::#decl_const),
            call: quote!(Self::#call_fn(self, call)),
            span,
            id,
            source: ident.to_string(),
            listed_method: None,
            security: Some(security),
            client: public.then_some(ident),
        });
    }
    (found, paths)
}

/// The skills listed in `skills(..)`: `Self::method` / `Type::method`, or `path::to::function`.
fn listed_skills(paths: &[Path], self_name: &str, krate: &TokenStream) -> Vec<SkillRef> {
    paths
        .iter()
        .map(|path| {
            let mut path = path.clone();
            let source = quote!(#path).to_string().replace(' ', "");
            let first = path
                .segments
                .first()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            let is_method = path.segments.len() == 2 && (first == "Self" || first == self_name);
            let Some(last) = path.segments.last_mut() else {
                unreachable!("a parsed path has a segment")
            };
            let ident = last.ident.clone();
            // Errors about the skill point at its name in the list.
            let span = ident.span();
            let named = |mut generated: Ident| {
                generated.set_span(span);
                generated
            };
            if is_method {
                let decl_const = named(skill::decl_const(&ident));
                let call_fn = named(skill::call_fn(&ident));
                SkillRef {
                    decl: quote_spanned!(span=> Self::#decl_const),
                    call: quote_spanned!(span=> Self::#call_fn(self, call)),
                    span,
                    id: None,
                    source,
                    listed_method: Some((decl_const, call_fn)),
                    security: None,
                    client: None,
                }
            } else {
                last.ident = named(skill::free_struct(&ident));
                let holder = quote_spanned!(span=> <#path as #krate::__private::Skill<Self>>);
                SkillRef {
                    decl: quote!(#holder::DECL),
                    call: quote!(#holder::call(self, call)),
                    span,
                    id: None,
                    source,
                    listed_method: None,
                    security: None,
                    client: None,
                }
            }
        })
        .collect()
}

/// `FightClub` -> `Fight Club`.
fn words(type_name: &str) -> String {
    let mut out = String::new();
    for (i, c) in type_name.chars().enumerate() {
        if i > 0 && c.is_uppercase() {
            out.push('_');
        }
        out.push(c);
    }
    title_case(&out)
}

fn option<T: quote::ToTokens>(value: &Option<T>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

/// The item `#[agent]` is on, as the macro reads it.
struct Target {
    /// The agent's type.
    self_ty: TokenStream,
    /// Its name, for messages and the default card name.
    name: String,
    /// "this impl block" or "this struct", for messages.
    kind: &'static str,
    /// The item's attributes (its doc comment is the default description).
    attrs: Vec<Attribute>,
    /// The paths the block's `#[skill]` attributes are written with (`skill`,
    /// `a2a_card::skill`). The macro expands those skills itself, so the compiler never
    /// resolves these attributes: the expansion names each path once, so that the import it
    /// goes through counts as used (and a path that names nothing is an error at it).
    skill_paths: Vec<Path>,
}

impl Target {
    /// An item that names each of [`Target::skill_paths`].
    fn skill_paths_used(&self) -> TokenStream {
        if self.skill_paths.is_empty() {
            return TokenStream::new();
        }
        // Each `use` written at its attribute, so that a path that names nothing is an error
        // there.
        let uses = self.skill_paths.iter().map(|path| {
            let span = syn::spanned::Spanned::span(path);
            quote_spanned!(span=> #[allow(unused_imports)] use #path as _;)
        });
        quote! {
            const _: () = {
                #(#uses)*
            };
        }
    }
}

/// The card-level values of the declaration, checked.
struct Card {
    name: Checked,
    description: Checked,
    version: Checked,
    /// `None` after an error that the URL's absence would only repeat.
    url: Option<LitStr>,
}

/// The item `#[agent]` is on: an impl block (read without its methods' bodies), or another
/// item (a struct that lists its skills), parsed whole.
enum Declared {
    Block(Block),
    Item(Item),
}

impl quote::ToTokens for Declared {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        match self {
            Declared::Block(block) => block.to_tokens(tokens),
            Declared::Item(item) => item.to_tokens(tokens),
        }
    }
}

/// Entry point of `#[agent]`: parse -> check -> expand, or the fallback on any error.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let parsed = match syn::parse2::<Block>(item.clone()) {
        Ok(block) => Ok(Declared::Block(block)),
        Err(_) => syn::parse2::<Item>(item.clone()).map(Declared::Item),
    };
    let mut item = match parsed {
        Ok(item) => item,
        Err(e) => return fallback::unparsed(e, item),
    };
    let mut errors = Errors::default();
    let attrs = parse_attrs(args, &mut errors);
    // A mistake in the attribute may hide what it gives (a URL, the skills): report the mistake
    // only, not the values it seems to miss.
    let attrs_ok = errors.is_empty();
    let krate = attr::runtime(&attrs.krate);
    let Some((target, mut skills)) = read_item(&mut item, &attrs, &mut errors) else {
        // The item as written too, so that what names it is not a second error.
        let errors = errors.to_compile_errors();
        return quote!(#errors #item);
    };
    skills.extend(listed_skills(&attrs.skills, &target.name, &krate));

    check_skills(&skills, attrs_ok, &mut errors);
    let card = check_card(&attrs, &target, attrs_ok, &mut errors);
    let declared = check_security(&attrs, &skills, attrs_ok, &mut errors);

    if !errors.is_empty() {
        let errors = errors.to_compile_errors();
        let fallback = fallback::agent_impl(&target.self_ty, &krate);
        let used = target.skill_paths_used();
        return quote! {
            #errors
            #item
            #fallback
            #used
        };
    }
    let client = match &item {
        Declared::Block(block) => {
            let methods: Vec<&Ident> = skills.iter().filter_map(|s| s.client.as_ref()).collect();
            crate::client::expand(block, &methods, &target.name, &krate)
        }
        Declared::Item(_) => TokenStream::new(),
    };
    let agent_impl = agent_impl(&attrs, &target, &skills, card, declared.as_deref(), &krate);
    let used = target.skill_paths_used();
    quote! {
        #item
        #agent_impl
        #client
        #used
    }
}

/// The agent's type and the skills of its block; `None` when the item cannot be an agent.
fn read_item(
    item: &mut Declared,
    attrs: &Attrs,
    errors: &mut Errors,
) -> Option<(Target, Vec<SkillRef>)> {
    match item {
        Declared::Block(block) => {
            if block.trait_.is_some() {
                errors.at(&block.self_ty, "#[agent] goes on the inherent `impl` block that holds the skills, not on a trait impl");
            }
            if !block.generics.params.is_empty() {
                errors.at(&block.generics, "an agent cannot be generic yet: its card and routes are built once per type; wrap the generic part in a concrete type");
            }
            let name = match &block.self_ty {
                syn::Type::Path(p) => p
                    .path
                    .segments
                    .last()
                    .map(|s| s.ident.to_string())
                    .unwrap_or_default(),
                other => {
                    errors.at(other, "#[agent] needs an impl block for a named type");
                    String::new()
                }
            };
            let ty = block.self_ty.clone();
            let (found, skill_paths) = block_skills(block, attrs.krate.as_ref());
            let target = Target {
                self_ty: quote!(#ty),
                name,
                kind: "this impl block",
                attrs: block.attrs.clone(),
                skill_paths,
            };
            Some((target, found))
        }
        Declared::Item(Item::Struct(s)) => {
            if !s.generics.params.is_empty() {
                errors.at(
                    &s.generics,
                    "an agent cannot be generic yet: its card and routes are built once per type",
                );
            }
            let ident = s.ident.clone();
            let target = Target {
                self_ty: quote!(#ident),
                name: ident.to_string(),
                kind: "this struct",
                attrs: s.attrs.clone(),
                skill_paths: Vec::new(),
            };
            Some((target, Vec::new()))
        }
        // An `impl` block the light reading refused (`unsafe impl`, `impl !Trait for ..`).
        Declared::Item(Item::Impl(block)) => {
            errors.at(&block.self_ty, "#[agent] goes on the inherent `impl` block that holds the skills (`impl Type { .. }`), not on a trait impl or an `unsafe` one");
            None
        }
        Declared::Item(other) => {
            errors.at(&*other, "#[agent] goes on an `impl` block of skills, or on a struct that lists them with skills(..)");
            None
        }
    }
}

/// At least one skill, and no id twice among those the macro can see.
fn check_skills(skills: &[SkillRef], attrs_ok: bool, errors: &mut Errors) {
    if skills.is_empty() && attrs_ok {
        errors.push(syn::Error::new(
            Span::call_site(),
            "an agent needs at least one skill: mark a method of this block with #[skill], or list skill functions with #[agent(skills(path::to::handler))]",
        ));
    }
    for (j, s) in skills.iter().enumerate() {
        let first = skills[..j].iter().find(|t| t.id.is_some() && t.id == s.id);
        if let (Some(first), Some(id)) = (first, &s.id) {
            errors.push(syn::Error::new(
                s.span,
                DUPLICATE_ID.render(&[id, &s.source, &first.source]),
            ));
        }
    }
}

/// The card-level values: name, description, version and URL (each present and not blank),
/// links that parse, modes that are media types.
fn check_card(attrs: &Attrs, target: &Target, attrs_ok: bool, errors: &mut Errors) -> Card {
    let description = |text: Text, errors: &mut Errors| {
        checks::not_blank(
            text,
            "the agent description",
            "say what the agent does",
            errors,
        )
    };
    let description = match (&attrs.description, docs::read(&target.attrs)) {
        (Some(d), _) => description(d.clone(), errors),
        (None, Some(Docs::Text { body, .. })) if !body.is_empty() => {
            Checked::unchecked(Text::new(&body, Span::call_site()))
        }
        (None, Some(Docs::Expr(e))) => description(Text::Expr(syn::parse_quote!(#e)), errors),
        (None, _) if !attrs_ok => Checked::unchecked(Text::new("", Span::call_site())),
        (None, _) => {
            errors.push(syn::Error::new(Span::call_site(), format!(
                "agent `{}` has no description; add a doc comment on {} (`/// What the agent does`) or #[agent(description = \"...\")]",
                target.name, target.kind
            )));
            Checked::unchecked(Text::new("", Span::call_site()))
        }
    };
    let name = attrs
        .name
        .clone()
        .unwrap_or_else(|| Text::new(&words(&target.name), Span::call_site()));
    let name = checks::not_blank(
        name,
        "the agent name",
        "set #[agent(name = \"...\")]",
        errors,
    );
    let version = match &attrs.version {
        Some(v) => checks::not_blank(
            v.clone(),
            "the agent version",
            "set #[agent(version = \"1.0.0\")], or leave it out to use the crate's version",
            errors,
        ),
        None => Checked::unchecked(Text::Expr(syn::parse_quote!(::core::env!(
            "CARGO_PKG_VERSION"
        )))),
    };
    match &attrs.url {
        Some(u) => checks::endpoint_url(u, attrs.url_env.as_ref(), errors),
        None if !attrs_ok => {}
        None => errors.push(syn::Error::new(Span::call_site(), "an agent needs the URL clients send requests to: #[agent(url = \"https://agent.example.com/a2a\")], or url(env = \"AGENT_URL\", default = \"http://127.0.0.1:8080\") to take it from the environment")),
    }
    if let Some((_, u)) = &attrs.provider {
        checks::link(u, errors);
    }
    for u in [&attrs.documentation_url, &attrs.icon_url]
        .into_iter()
        .flatten()
    {
        checks::link(u, errors);
    }
    for m in attrs
        .default_input_modes
        .iter()
        .chain(&attrs.default_output_modes)
    {
        checks::media_type(m, errors);
    }
    Card {
        name,
        description,
        version,
        url: attrs.url.clone(),
    }
}

/// Requirements against the declared schemes, where the macro sees both (an agent without
/// `security_schemes` declares none). Returns the declared schemes' names, when known.
fn check_security(
    attrs: &Attrs,
    skills: &[SkillRef],
    attrs_ok: bool,
    errors: &mut Errors,
) -> Option<Vec<(String, SchemeKind)>> {
    let declared = match &attrs.security_schemes {
        Some(schemes) => schemes.known(),
        None => Some(Vec::new()),
    };
    if attrs_ok {
        security::check(&attrs.security, declared.as_deref(), errors);
        for s in skills {
            if let Some(requirements) = &s.security {
                security::check(requirements, declared.as_deref(), errors);
            }
        }
    }
    declared
}

/// The `Agent` impl of a declaration without errors, with the constant checks of what only the
/// compiler can evaluate.
fn agent_impl(
    attrs: &Attrs,
    target: &Target,
    skills: &[SkillRef],
    card: Card,
    declared: Option<&[(String, SchemeKind)]>,
    krate: &TokenStream,
) -> TokenStream {
    let self_ty = &target.self_ty;
    let self_name = &target.name;
    let decls = skills.iter().map(|s| &s.decl);
    let calls = skills.iter().enumerate().map(|(i, s)| {
        let call = &s.call;
        quote!(#i => #call)
    });
    let (checks, stand_ins) = skill_checks(attrs, self_ty, skills, declared, krate);
    let decl = agent_decl(attrs, self_name, card, krate);
    quote! {
        const _: () = {
            #stand_ins
            impl #krate::Agent for #self_ty {
                const DECL: #krate::__private::AgentDecl = #decl;
                const SKILLS: &'static [#krate::__private::SkillDecl] = &[#(#decls),*];

                fn card() -> ::core::result::Result<&'static #krate::AgentCard, &'static #krate::BuildError> {
                    static CARD: #krate::__private::OnceLock<::core::result::Result<#krate::AgentCard, #krate::BuildError>> =
                        #krate::__private::OnceLock::new();
                    CARD.get_or_init(|| {
                        #krate::__private::build_card(&<Self as #krate::Agent>::DECL, <Self as #krate::Agent>::SKILLS)
                    })
                    .as_ref()
                }

                fn call_skill<'__a>(&'__a self, index: ::core::primitive::usize, call: #krate::__private::SkillCall) -> #krate::__private::SkillFuture<'__a> {
                    match index {
                        #(#calls,)*
                        _ => #krate::__private::unknown_skill(index),
                    }
                }
            }
            #(#checks)*
        };
    }
}

/// The `AgentDecl` constant.
fn agent_decl(attrs: &Attrs, self_name: &str, card: Card, krate: &TokenStream) -> TokenStream {
    let Card {
        name,
        description,
        version,
        url,
    } = card;
    let mut consts = ConstChecks::default();
    for value in [&name, &description, &version] {
        consts.defer(value, krate);
    }
    let url = url.map_or_else(|| quote!(""), |u| quote!(#u));
    let url_env = option(&attrs.url_env);
    let provider = option(&attrs.provider.as_ref().map(|(o, u)| quote!((#o, #u))));
    let documentation_url = option(&attrs.documentation_url);
    let icon_url = option(&attrs.icon_url);
    let streaming = option(&attrs.streaming);
    let push = option(&attrs.push_notifications);
    let history = option(&attrs.state_transition_history);
    let extended = option(&attrs.extended_agent_card);
    let (inputs, outputs) = (&attrs.default_input_modes, &attrs.default_output_modes);
    let schemes = option(
        &attrs
            .security_schemes
            .as_ref()
            .map(|schemes| schemes.function(krate)),
    );
    let security = attrs.security.iter().map(|r| r.tokens(Span::call_site()));
    let extensions = attrs.extensions.iter().map(|e| {
        let uri = &e.uri;
        let description = option(&e.description);
        let required = e.required;
        let params = option(&e.params);
        quote! {
            #krate::__private::ExtensionDecl {
                uri: #uri,
                description: #description,
                required: #required,
                params: #params,
            }
        }
    });
    consts.wrap(
        Span::call_site(),
        quote! {
            #krate::__private::AgentDecl {
                name: #name,
                description: #description,
                version: #version,
                url_env: #url_env,
                url: #url,
                provider: #provider,
                documentation_url: #documentation_url,
                icon_url: #icon_url,
                streaming: #streaming,
                push_notifications: #push,
                state_transition_history: #history,
                extended_agent_card: #extended,
                default_input_modes: &[#(#inputs),*],
                default_output_modes: &[#(#outputs),*],
                security_schemes: #schemes,
                security: &[#(#security),*],
                extensions: &[#(#extensions),*],
                source: #self_name,
            }
        },
    )
}

/// The constant checks of the skills (in the block of the impl, never nested in an impl:
/// `Self` is not a concern), and the stand-ins for methods listed in `skills(Self::name)`.
fn skill_checks(
    attrs: &Attrs,
    self_ty: &TokenStream,
    skills: &[SkillRef],
    declared: Option<&[(String, SchemeKind)]>,
    krate: &TokenStream,
) -> (Vec<TokenStream>, Option<TokenStream>) {
    let mut skill_checks = ConstChecks::default();
    let mut stand_ins = Vec::new();
    for s in skills {
        if let Some((decl_const, call_fn)) = &s.listed_method {
            let source = &s.source;
            let check = quote_spanned!(s.span=> #krate::__private::check_listed(&<#self_ty>::#decl_const, #source));
            skill_checks.push(check, &TokenStream::new(), s.span);
            stand_ins.push(quote! {
                const #decl_const: #krate::__private::SkillDecl = #krate::__private::not_a_skill();
                fn #call_fn<'__a>(&'__a self, _call: #krate::__private::SkillCall) -> #krate::__private::SkillFuture<'__a> {
                    #krate::__private::unknown_skill(::core::primitive::usize::MAX)
                }
            });
        }
    }
    // The skills as the declaration names them (`winner`, `books::search`), for messages,
    // and whether their ids and input schemas are all distinct: checked once for them all,
    // so that each skill's own check (which says which two are alike, at the skill) is made
    // only when they are not.
    let sources: Vec<&str> = skills.iter().map(|s| s.source.as_str()).collect();
    let count = skills.len();
    let mut shared = vec![quote! {
        const __A2A_SKILL_NAMES: &[&str] = &[#(#sources),*];
        const __A2A_SKILLS_DISTINCT: bool =
            #krate::__private::distinct::<#count>(<#self_ty as #krate::Agent>::SKILLS);
        const fn __a2a_check_skill(index: ::core::primitive::usize) -> #krate::__private::Check {
            #krate::__private::check_skill(__A2A_SKILLS_DISTINCT, <#self_ty as #krate::Agent>::SKILLS, index, __A2A_SKILL_NAMES)
        }
    }];
    // One short check a skill (the compiler reads these tokens on every check of the crate).
    for (j, s) in skills.iter().enumerate() {
        let check = quote_spanned!(s.span=> __a2a_check_skill(#j));
        skill_checks.push(check, &TokenStream::new(), s.span);
    }
    // Skills declared elsewhere: their requirements against the declared schemes, as
    // constants (the error points at the skill's name in `skills(..)`).
    if let Some(declared) = declared {
        let table = security::table(declared, krate);
        for (j, s) in skills
            .iter()
            .enumerate()
            .filter(|(_, s)| s.security.is_none())
        {
            let check = quote_spanned!(s.span=> #krate::__private::check_security(<#self_ty as #krate::Agent>::SKILLS, #j, #table));
            skill_checks.push(check, &TokenStream::new(), s.span);
        }
    }
    // `streaming = false` with a skill that streams: the error points at the `false` (one
    // check for all the skills, which names the first that streams).
    if let Some(flag) = attrs.streaming.as_ref().filter(|f| !f.value) {
        let check = quote_spanned!(flag.span=> #krate::__private::check_streaming(<#self_ty as #krate::Agent>::SKILLS));
        skill_checks.push(check, &TokenStream::new(), flag.span);
    }
    // A method listed in `skills(Self::name)` that has no `#[skill]` lacks the items the
    // agent names: these stand-ins (which inherent items shadow) fail a check instead.
    let stand_ins = (!stand_ins.is_empty()).then(|| {
        quote! {
            #[allow(dead_code, non_camel_case_types, non_upper_case_globals)]
            trait __A2aListedSkills {
                #(#stand_ins)*
            }
            impl __A2aListedSkills for #self_ty {}
        }
    });
    shared.extend_from_slice(skill_checks.items());
    (shared, stand_ins)
}
