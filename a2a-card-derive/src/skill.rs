//! `#[skill]`: a handler function becomes a skill of the card.
//!
//! parse (attribute keys, the signature) -> check (the card's rules, the shapes the dispatcher
//! can call) -> expand (the declaration constant and the call glue). A method expands into
//! associated items (`__A2A_SKILL_name`, `__a2a_call_name`): `#[agent]` expands the methods of
//! its block itself, with [`expand_handler`]; a free function expands into a hidden unit struct
//! `__a2a_skill_name` beside it, which `#[agent(skills(path::to::name))]` finds.

use a2a_card_rules::names::{default_skill_id, title_case};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{
    Attribute, FnArg, Ident, LitStr, Pat, ReceiverKind, ReturnType, Safety, Signature, Type,
    Visibility,
};

use crate::attr::{self, Requirement, Text};
use crate::checks::{self, Checked, ConstChecks};
use crate::ctxt::{Errors, unknown_key};
use crate::docs::{self, Docs};

const KEYS: &[&str] = &[
    "id",
    "name",
    "description",
    "tags",
    "examples",
    "input_modes",
    "output_modes",
    "security",
    "extended",
    "durable",
    "concurrency",
    "crate",
];

/// The shapes of handler the dispatcher can call, for signature errors.
const SHAPES: &str = "a skill handler is `[async] fn name(&self, input: I) -> R` (or without `&self` outside an impl), where the one input `I` is a type deriving `a2a_card::Schema`, `String` or `a2a_card::Input<T>`, extra arguments may be `a2a_card::SkillContext` and files (`a2a_card::File`, `Option<File>`, `Vec<File>`), and `R` is a type deriving `a2a_card::Schema`, `String`, `a2a_card::Output<T>`, `a2a_card::File`, `impl Stream<Item = R>` of one of these, or a `Result` of one of these";

/// What `#[skill(...)]` says.
#[derive(Default)]
pub struct Attrs {
    pub id: Option<Text>,
    pub name: Option<Text>,
    pub description: Option<Text>,
    pub tags: Vec<Text>,
    pub examples: Vec<Text>,
    pub input_modes: Vec<LitStr>,
    pub output_modes: Vec<LitStr>,
    pub security: Vec<Requirement>,
    pub extended: Option<syn::LitBool>,
    /// `durable` (journals any version of the handler runs on) or `durable = "VERSION"`: the
    /// key, and the version it names.
    pub durable: Option<(syn::Path, Option<LitStr>)>,
    /// `concurrency = N`: at most N tasks of the skill running at once.
    pub concurrency: Option<syn::LitInt>,
    pub krate: Option<syn::Path>,
    /// The handler is a method of the block `#[agent]` is on (set by `#[agent]`, which expands
    /// its skills itself), with or without `self`.
    pub method: bool,
}

/// Parses the attribute's arguments, recording every error.
pub fn parse_attrs(args: TokenStream, errors: &mut Errors) -> Attrs {
    let repeatable = [
        "tags",
        "examples",
        "input_modes",
        "output_modes",
        "security",
    ];
    attr::parse_entries(args, errors, &repeatable, |a: &mut Attrs, meta| {
        let key = meta
            .path
            .get_ident()
            .map(Ident::to_string)
            .unwrap_or_default();
        match key.as_str() {
            "id" => a.id = Some(attr::text(&meta)?),
            "name" => a.name = Some(attr::text(&meta)?),
            "description" => a.description = Some(attr::text(&meta)?),
            "tags" => a.tags.extend(attr::texts(&meta)?),
            "examples" => a.examples.extend(attr::texts(&meta)?),
            "input_modes" => a.input_modes.extend(attr::lit_strs(&meta)?),
            "output_modes" => a.output_modes.extend(attr::lit_strs(&meta)?),
            "security" => a.security.push(attr::requirement(&meta)?),
            "extended" => a.extended = Some(attr::flag(&meta)?),
            "durable" => a.durable = Some((meta.path.clone(), durable_version(&meta)?)),
            "concurrency" => a.concurrency = Some(concurrency(&meta)?),
            "crate" => a.krate = Some(attr::krate(&meta)?),
            _ => return Err(unknown_key(&meta.path, KEYS, "skill")),
        }
        Ok(())
    })
}

/// The version `durable = "VERSION"` names, `None` for the bare flag.
fn durable_version(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Option<LitStr>> {
    if !meta.input.peek(syn::Token![=]) {
        return Ok(None);
    }
    let value = meta.value()?;
    let version: LitStr = value.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            "`durable` is a flag, or `durable = \"VERSION\"`: the version of the handler's code its journals are kept for (a string such as \"2\")",
        )
    })?;
    let text = version.value();
    if text.trim().is_empty() || text.len() > 64 {
        return Err(syn::Error::new(
            version.span(),
            "the durable version is 1 to 64 characters (such as \"2\"); leave it out for journals that every version of the handler runs on",
        ));
    }
    Ok(Some(version))
}

/// The number `concurrency = N` names: a whole number from 1.
fn concurrency(meta: &syn::meta::ParseNestedMeta) -> syn::Result<syn::LitInt> {
    const HOW: &str = "`concurrency = N`: at most N tasks of this skill running at once, a whole number from 1 (such as `concurrency = 2`)";
    let value = meta.value().map_err(|e| syn::Error::new(e.span(), HOW))?;
    let n: syn::LitInt = value.parse().map_err(|e| syn::Error::new(e.span(), HOW))?;
    match n.base10_parse::<usize>() {
        Ok(0) | Err(_) => Err(syn::Error::new(n.span(), HOW)),
        Ok(_) if !n.suffix().is_empty() => Err(syn::Error::new(
            n.span(),
            "`concurrency` is a plain number, without a type suffix (such as `concurrency = 2`)",
        )),
        Ok(_) => Ok(n),
    }
}

/// A handler, checked.
pub struct Skill {
    pub attrs: Attrs,
    pub ident: Ident,
    pub is_async: bool,
    /// Takes `&self` (a method with a receiver).
    pub receiver: bool,
    /// Argument types, in order.
    pub args: Vec<Type>,
    pub ret: Type,
    /// The handler returns `impl Stream<Item = ret>`.
    pub streaming: bool,
    pub docs: Option<Docs>,
}

impl Skill {
    /// The skill id as the macro knows it: explicit, or the function name in kebab-case.
    pub fn id(&self) -> Text {
        self.attrs.id.clone().unwrap_or_else(|| {
            Text::new(
                &default_skill_id(&self.ident.to_string()),
                self.ident.span(),
            )
        })
    }

    fn is_method(&self) -> bool {
        self.receiver || self.attrs.method
    }

    /// Where the tokens the macro writes for the skill are placed: at the handler's name,
    /// resolved as the macro's own (the call site). An edit above the handler then moves them
    /// with it, and the compiler's incremental check finds the skill's items unchanged; placed
    /// at the macro's attribute, every skill below an edit would be checked again.
    pub fn at(&self) -> Span {
        at(&self.ident)
    }
}

/// [`Skill::at`] of the handler named `ident`.
pub fn at(ident: &Ident) -> Span {
    Span::call_site().located_at(ident.span())
}

/// A handler as the macro needs it: attributes, visibility and signature parsed; the body kept
/// as the tokens it came as, never parsed (the macro has no use for it, and large handlers then
/// cost the compiler nothing extra).
pub struct Handler {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub sig: Signature,
    pub body: proc_macro2::Group,
}

impl Parse for Handler {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        let body = match input.parse::<proc_macro2::TokenTree>()? {
            proc_macro2::TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Brace => g,
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    "expected the function's body `{ .. }`",
                ));
            }
        };
        Ok(Handler {
            attrs,
            vis,
            sig,
            body,
        })
    }
}

impl quote::ToTokens for Handler {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        for attr in &self.attrs {
            attr.to_tokens(tokens);
        }
        self.vis.to_tokens(tokens);
        self.sig.to_tokens(tokens);
        self.body.to_tokens(tokens);
    }
}

/// Checks the signature against the shapes the dispatcher can call.
fn signature(func: &Handler, errors: &mut Errors) -> (bool, Vec<Type>, Option<(Type, bool)>) {
    let sig = &func.sig;
    if let Some(c) = &sig.constness {
        errors.at(
            c,
            format!("a skill handler cannot be a `const fn`; {SHAPES}"),
        );
    }
    if let Safety::Unsafe(u) = &sig.safety {
        errors.at(u, "a skill handler cannot be `unsafe`: the dispatcher calls it with whatever a peer sends");
    }
    if let Some(abi) = &sig.abi {
        errors.at(abi, format!("a skill handler cannot have an ABI; {SHAPES}"));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.at(&sig.generics, format!("a skill handler cannot be generic: the dispatcher must know its argument types; {SHAPES}"));
    }
    if let Some(v) = &sig.variadic {
        errors.at(v, format!("a skill handler cannot be variadic; {SHAPES}"));
    }
    let mut receiver = false;
    let mut args = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(r) => match &r.kind {
                ReceiverKind::Reference(_, _, None) => receiver = true,
                ReceiverKind::Reference(_, _, Some(m)) => errors.at(m, "a skill takes `&self`, not `&mut self`: the skills of an agent may run at the same time; keep mutable state behind a `Mutex` or an atomic"),
                ReceiverKind::Value => errors.at(r, "a skill takes `&self`, not `self`: one agent value serves every call; write `&self`"),
                _ => errors.at(r, format!("a skill takes `&self` (or no `self` at all); {SHAPES}")),
            },
            FnArg::Typed(pt) => {
                if !matches!(&*pt.pat, Pat::Ident(_) | Pat::Wild(_)) {
                    errors.at(&pt.pat, "bind a skill argument to a name (patterns are not supported)");
                }
                match &*pt.ty {
                    Type::Reference(r) => errors.at(r, format!(
                        "a skill takes its arguments by value (the call outlives the message it came in); take {}",
                        owned(&r.elem)
                    )),
                    Type::ImplTrait(t) => errors.at(t, format!("a skill argument needs a concrete type; {SHAPES}")),
                    ty => args.push(ty.clone()),
                }
            }
        }
    }
    one_input(sig, errors);
    if let Some(extra) = sig
        .inputs
        .iter()
        .filter(|i| matches!(i, FnArg::Typed(_)))
        .nth(MAX_ARGS)
    {
        errors.at(extra, format!(
            "a skill handler takes at most {MAX_ARGS} arguments besides `&self`, and this is one more: take the message's files as one `Vec<a2a_card::File>`, and the `SkillContext` once"
        ));
    }
    let ret = match &sig.output {
        ReturnType::Default => {
            errors.at(
                &sig.ident,
                format!(
                    "skill `{}` returns nothing, but a skill must answer; {SHAPES}",
                    sig.ident
                ),
            );
            None
        }
        ReturnType::Type(_, ty) => match &**ty {
            Type::ImplTrait(t) => match stream_item(t) {
                Some(item) => Some((item, true)),
                None => {
                    errors.at(t, format!("a skill returns a concrete type or `impl Stream<Item = R>` (write `async fn` rather than returning `impl Future`); {SHAPES}"));
                    None
                }
            },
            ty => Some((ty.clone(), false)),
        },
    };
    (receiver, args, ret)
}

/// A message carries one input: two arguments that are neither the context nor files are an
/// error at the second, which says to put them in one type (a check on the tokens, before the
/// types are known; `check_inputs` catches what it cannot see).
fn one_input(sig: &Signature, errors: &mut Errors) {
    let inputs: Vec<&syn::PatType> = sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            FnArg::Typed(pt) if !is_extra(&pt.ty) => Some(pt),
            _ => None,
        })
        .collect();
    let [first, second, ..] = inputs.as_slice() else {
        return;
    };
    let name = |pt: &syn::PatType| match &*pt.pat {
        Pat::Ident(i) => i.ident.to_string(),
        other => other.to_token_stream().to_string(),
    };
    let fields: Vec<String> = inputs
        .iter()
        .map(|pt| {
            format!(
                "{}: {}",
                name(pt),
                pt.ty.to_token_stream().to_string().replace(' ', "")
            )
        })
        .collect();
    errors.at(
        &second.ty,
        format!(
            "one input per skill: `{}` and `{}` are both inputs, and a message carries one; put them in one type deriving `serde::Deserialize`, `schemars::JsonSchema` and `a2a_card::Schema` (e.g. `struct {}Input {{ {} }}`) and take that (other arguments may be `a2a_card::SkillContext` and files)",
            name(first),
            name(second),
            title_case(&sig.ident.to_string()).replace(' ', ""),
            fields.join(", ")
        ),
    );
}

/// Whether an argument type is one a skill takes beside its input: the context, or files.
fn is_extra(ty: &Type) -> bool {
    let Type::Path(p) = ty else { return false };
    p.path
        .segments
        .last()
        .is_some_and(|s| s.ident == "SkillContext")
        || names_file(ty)
}

/// Whether a type names `File` anywhere (`File`, `Option<File>`, `a2a_card::File`).
pub(crate) fn names_file(ty: &Type) -> bool {
    ty.to_token_stream()
        .into_iter()
        .any(|t| matches!(&t, proc_macro2::TokenTree::Ident(i) if i == "File") || {
            matches!(&t, proc_macro2::TokenTree::Group(g) if g.stream().into_iter().any(|t| matches!(&t, proc_macro2::TokenTree::Ident(i) if i == "File")))
        })
}

/// `R` of a return type `impl Stream<Item = R> [+ Send ..]`.
pub(crate) fn stream_item(t: &syn::TypeImplTrait) -> Option<Type> {
    t.bounds.iter().find_map(|bound| {
        let syn::TypeParamBound::Trait(tb) = bound else {
            return None;
        };
        let last = tb.path.segments.last()?;
        if last.ident != "Stream" {
            return None;
        }
        let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
            return None;
        };
        args.args.iter().find_map(|arg| match arg {
            syn::GenericArgument::AssocType(a) if a.ident == "Item" => Some(a.ty.clone()),
            _ => None,
        })
    })
}

/// The owned type to take instead of a reference to `elem`, for messages.
fn owned(elem: &Type) -> String {
    let text = |t: &dyn quote::ToTokens| t.to_token_stream().to_string().replace(' ', "");
    match elem {
        Type::Path(p) if p.path.is_ident("str") => "`String` instead of `&str`".to_owned(),
        Type::Slice(s) => format!("`Vec<{}>` instead of a slice", text(&s.elem)),
        other => format!("`{}` instead of a reference", text(other)),
    }
}

/// Checks a handler and its parsed attribute (`errors` holds the attribute's mistakes only);
/// `None` when a check failed (the errors say why).
pub fn parse(attrs: Attrs, func: &Handler, errors: &mut Errors) -> Option<Skill> {
    // A mistake in the attribute may hide the description it gives: report the mistake only.
    let attrs_ok = errors.is_empty();
    let (receiver, arg_types, ret) = signature(func, errors);
    let docs = docs::read(&func.attrs);
    let no_description = attrs_ok
        && attrs.description.is_none()
        && !matches!(&docs, Some(Docs::Text { body, .. }) if !body.is_empty())
        && !matches!(&docs, Some(Docs::Expr(_)));
    if no_description {
        errors.at(&func.sig.ident, format!(
            "skill `{}` has no description; add a doc comment (`/// What it takes and returns`) or #[skill(description = \"...\")]",
            func.sig.ident
        ));
    }
    if let Some((key, _)) = &attrs.durable
        && func.sig.asyncness.is_none()
    {
        errors.at(
            key,
            format!(
                "skill `{}` is durable but not `async`: a durable handler's steps, sleeps and questions are awaited; make it an `async fn`, or leave out `durable`",
                func.sig.ident
            ),
        );
    }
    let (ret, streaming) = ret?;
    Some(Skill {
        attrs,
        ident: func.sig.ident.clone(),
        is_async: func.sig.asyncness.is_some(),
        receiver,
        args: arg_types,
        ret,
        streaming,
        docs,
    })
}

/// The skill's card values, checked.
struct Values {
    id: Checked,
    name: Checked,
    description: Checked,
}

/// Checks the skill's card values: a kebab-case id, a name and a description that are not
/// blank, modes that are media types.
fn check(skill: &Skill, errors: &mut Errors) -> Values {
    let source = skill.ident.to_string();
    let a = &skill.attrs;
    let id = checks::skill_id(skill.id(), errors);
    let name = a.name.clone().unwrap_or_else(|| match &skill.docs {
        Some(Docs::Text {
            heading: Some(h), ..
        }) => Text::new(h, skill.ident.span()),
        _ => Text::new(&title_case(&source), skill.ident.span()),
    });
    let name = checks::not_blank(
        name,
        "the skill name",
        "give the skill a name with #[skill(name = \"...\")]",
        errors,
    );
    let description = |text: Text, errors: &mut Errors| {
        checks::not_blank(
            text,
            "the skill description",
            "say what the skill takes and returns",
            errors,
        )
    };
    let description = match (&a.description, &skill.docs) {
        (Some(d), _) => description(d.clone(), errors),
        (None, Some(Docs::Text { body, .. })) => Checked::unchecked(Text::new(body, skill.at())),
        (None, Some(Docs::Expr(e))) => description(Text::Expr(syn::parse_quote!(#e)), errors),
        (None, None) => Checked::unchecked(Text::new("", skill.at())),
    };
    for m in a.input_modes.iter().chain(&a.output_modes) {
        checks::media_type(m, errors);
    }
    Values {
        id,
        name,
        description,
    }
}

/// The `SkillDecl` constant of a checked skill, with the checks left to the compiler: its
/// values', and those of its argument and return types.
fn decl(skill: &Skill, values: Values, krate: &TokenStream) -> TokenStream {
    let source = skill.ident.to_string();
    let a = &skill.attrs;
    let mut consts = ConstChecks::default();
    let Values {
        id,
        name,
        description,
    } = values;
    for value in [&id, &name, &description] {
        consts.defer(value, krate);
    }
    let (tags, examples) = (&a.tags, &a.examples);
    let (input_modes, output_modes) = (&a.input_modes, &a.output_modes);
    let at = skill.at();
    let security = a.security.iter().map(|r| r.tokens(at));
    let arg_types = &skill.args;
    let ret = &skill.ret;
    let span = skill.ident.span();
    let inputs = quote_spanned! {span=>
        [#(<#arg_types as #krate::__private::SkillArg>::INPUT),*]
    };
    if arg_types.len() > 1 {
        let check = quote_spanned!(span=> #krate::__private::check_inputs(&#inputs, #source));
        consts.push(check, &quote!(#(#arg_types)*), span);
    }
    let input = quote_spanned!(span=> #krate::__private::merge_inputs(&#inputs));
    let output = if skill.streaming {
        quote_spanned!(ret.span()=> <#ret as #krate::__private::SkillReturn>::OUTPUT.streamed())
    } else {
        quote_spanned!(ret.span()=> <#ret as #krate::__private::SkillReturn>::OUTPUT)
    };
    // Files taken or returned need declared media types (checked where a type names `File`:
    // the check costs compile time, and every other skill would pass it).
    if arg_types.iter().any(names_file) {
        let at = arg_types
            .iter()
            .map(Spanned::span)
            .reduce(|a, b| a.join(b).unwrap_or(a))
            .unwrap_or(span);
        let check = quote_spanned!(at=> #krate::__private::check_file_modes(#input, &[#(#input_modes),*], false, #source));
        consts.push(check, &quote!(#(#arg_types)*), at);
    }
    if names_file(ret) {
        let check = quote_spanned!(ret.span()=> #krate::__private::check_file_modes(#output, &[#(#output_modes),*], true, #source));
        consts.push(check, ret, ret.span());
    }
    // Only the fields the skill sets: the rest come from `SkillDecl::BLANK`, and the compiler
    // reads (parses, resolves, lowers, hashes) fewer tokens for each skill.
    let mut set = Vec::new();
    if !tags.is_empty() {
        set.push(quote_spanned!(at=> tags: &[#(#tags),*],));
    }
    if !examples.is_empty() {
        set.push(quote_spanned!(at=> examples: &[#(#examples),*],));
    }
    if !input_modes.is_empty() {
        set.push(quote_spanned!(at=> extra_input_modes: &[#(#input_modes),*],));
    }
    if !output_modes.is_empty() {
        set.push(quote_spanned!(at=> extra_output_modes: &[#(#output_modes),*],));
    }
    if !a.security.is_empty() {
        set.push(quote_spanned!(at=> security: &[#(#security),*],));
    }
    if a.extended.as_ref().is_some_and(|f| f.value) {
        set.push(quote_spanned!(at=> extended: true,));
    }
    match &a.durable {
        None => {}
        Some((_, None)) => {
            set.push(quote_spanned!(at=> durable: ::core::option::Option::Some(""),))
        }
        Some((_, Some(version))) => {
            set.push(quote_spanned!(at=> durable: ::core::option::Option::Some(#version),));
        }
    }
    if let Some(n) = &a.concurrency {
        set.push(quote_spanned!(at=> concurrency: ::core::option::Option::Some(#n),));
    }
    consts.wrap(
        at,
        quote_spanned! {at=>
            #krate::__private::SkillDecl {
                id: #id,
                name: #name,
                description: #description,
                input: #input,
                output: #output,
                source: #source,
                #(#set)*
                ..#krate::__private::SkillDecl::BLANK
            }
        },
    )
}

/// The most arguments a handler takes: the runtime's `Arguments` (in
/// `a2a-card/src/arguments.rs`) is implemented up to this many.
const MAX_ARGS: usize = 8;

/// The body of the call glue: take each argument from the call, run the handler, turn its value
/// into an answer.
fn call_body(skill: &Skill, krate: &TokenStream) -> TokenStream {
    let ident = &skill.ident;
    let at = skill.at();
    let types = &skill.args;
    let ret = &skill.ret;
    // Placed at the handler, so that a future that is not `Send` is reported there.
    let krate = checks::respan(krate, at);
    let path = match skill.is_method() {
        true => quote_spanned!(at=> Self::#ident),
        false => quote_spanned!(at=> #ident),
    };
    if skill.streaming {
        let names: Vec<Ident> = (0..types.len())
            .map(|i| format_ident!("__arg{}", i, span = at))
            .collect();
        let handler = match skill.receiver {
            true => quote_spanned!(at=> self.#ident),
            false => path,
        };
        let call = match skill.is_async {
            true => quote_spanned!(at=> #handler(#(#names),*).await),
            false => quote_spanned!(at=> #handler(#(#names),*)),
        };
        return quote_spanned! {ident.span()=>
            #krate::__private::Box::pin(async move {
                let mut __call = __call;
                let __context = ::core::clone::Clone::clone(&__call.context);
                #(let #names = <#types as #krate::__private::SkillArg>::extract(&mut __call)?;)*
                #krate::__private::drain(#call, &__context, <#ret as #krate::__private::SkillReturn>::into_reply).await
            })
        };
    }
    // One generic function of the runtime, given the handler and how to take each argument and
    // make the answer, named with the handler's types as written (so that a type that cannot
    // be one is reported there, once).
    let function = match skill.is_async {
        true => quote_spanned!(at=> call_async),
        false => quote_spanned!(at=> call_sync),
    };
    // The agent is the handler's first argument when it takes `&self`.
    let lead = match skill.receiver {
        true => quote_spanned!(at=> (self,)),
        false => quote_spanned!(at=> ()),
    };
    quote_spanned! {at=>
        #krate::__private::#function(
            #lead, __call, #path,
            (#(<#types as #krate::__private::SkillArg>::extract as #krate::__private::Extract<_>,)*),
            <#ret as #krate::__private::SkillReturn>::into_reply
        )
    }
}

/// The names of the items a skill expands to.
pub fn decl_const(ident: &Ident) -> Ident {
    format_ident!("__A2A_SKILL_{}", ident.to_string().trim_start_matches("r#"))
}
pub fn call_fn(ident: &Ident) -> Ident {
    format_ident!("__a2a_call_{}", ident.to_string().trim_start_matches("r#"))
}
pub fn free_struct(ident: &Ident) -> Ident {
    format_ident!("__a2a_skill_{}", ident.to_string().trim_start_matches("r#"))
}

/// Entry point of `#[skill]`.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let func: Handler = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let message = format!("#[skill] goes on a handler function; {SHAPES}");
            return crate::fallback::misplaced(message, e, item);
        }
    };
    let mut errors = Errors::default();
    let attrs = parse_attrs(args, &mut errors);
    // The handler as written begins at its first attribute (or at `#[skill]`, which the
    // compiler took off, when it has none left).
    let start = func
        .attrs
        .first()
        .map_or_else(Span::call_site, |a| a.pound_token.span);
    expand_handler(attrs, errors, &func, start)
}

/// A handler and the items its skill adds (the errors of its attribute, `errors`, and of its
/// signature first): `#[skill]`'s expansion, and `#[agent]`'s of each skill method of its block
/// (with [`Attrs::method`] set).
///
/// `start` is where the handler begins as written (its first attribute). Each item the skill
/// adds begins there and ends where the handler's body ends, so that it spans the handler's
/// tokens it names (its types, its attribute's values): an edit above the handler moves the
/// item whole, and the compiler's incremental check, which hashes the positions of an item's
/// tokens relative to the item, finds it unchanged.
pub fn expand_handler(
    attrs: Attrs,
    mut errors: Errors,
    func: &Handler,
    start: Span,
) -> TokenStream {
    // The runtime path, even when the skill has a mistake (its stand-ins name it too).
    let at = at(&func.sig.ident);
    let (begin, end) = (
        Span::call_site().located_at(start),
        Span::call_site().located_at(func.body.span_close()),
    );
    // The default path placed with the handler; a path given with `crate = ..` keeps its own
    // tokens, so that a mistake in it is reported there, once.
    let krate = match &attrs.krate {
        Some(_) => attr::runtime(&attrs.krate),
        None => checks::respan(&attr::runtime(&None), at),
    };
    let skill = parse(attrs, func, &mut errors);
    let values = skill.as_ref().map(|s| check(s, &mut errors));
    let method = skill.as_ref().is_some_and(Skill::is_method)
        || func
            .sig
            .inputs
            .iter()
            .any(|i| matches!(i, FnArg::Receiver(_)));
    let ident = &func.sig.ident;
    let (decl, body) = match (errors.is_empty(), values, &skill) {
        (true, Some(values), Some(skill)) => {
            (decl(skill, values, &krate), call_body(skill, &krate))
        }
        // One mistake, one error.
        _ => crate::fallback::skill(&krate),
    };
    let errors = errors.to_compile_errors();
    if method {
        let (mut decl_const, mut call_fn) = (decl_const(ident), call_fn(ident));
        decl_const.set_span(at);
        call_fn.set_span(at);
        // An item's span leaves out its attributes: it begins at `const` or `fn`.
        let (const_, fn_) = (quote_spanned!(begin=> const), quote_spanned!(begin=> fn));
        let semi = quote_spanned!(end=> ;);
        let mut body = proc_macro2::Group::new(proc_macro2::Delimiter::Brace, body);
        body.set_span(end);
        quote_spanned! {at=>
            #errors
            #func
            #[doc(hidden)]
            #[allow(non_upper_case_globals, dead_code)]
            #const_ #decl_const: #krate::__private::SkillDecl = #decl #semi
            #[doc(hidden)]
            #[allow(unused_mut, dead_code, clippy::all)]
            #fn_ #call_fn(&self, __call: #krate::__private::SkillCall) -> #krate::__private::SkillFuture<'_> #body
        }
    } else {
        let vis = &func.vis;
        let mut holder = free_struct(ident);
        holder.set_span(at);
        let doc = format!("The skill declaration of [`{ident}`], for `#[agent(skills(..))]`.");
        quote_spanned! {at=>
            #errors
            #func
            #[doc = #doc]
            #[doc(hidden)]
            #[allow(non_camel_case_types, dead_code)]
            #vis struct #holder;
            #[allow(unused_mut, unused_variables, clippy::all)]
            impl<__A: ?::core::marker::Sized + ::core::marker::Sync> #krate::__private::Skill<__A> for #holder {
                const DECL: #krate::__private::SkillDecl = #decl;
                fn call<'__a>(_agent: &'__a __A, __call: #krate::__private::SkillCall) -> #krate::__private::SkillFuture<'__a> {
                    #body
                }
            }
        }
    }
}
