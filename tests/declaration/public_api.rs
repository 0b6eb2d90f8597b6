//! The public API of `a2a-card`, listed from its source and held against a reviewed snapshot
//! (`tests/public_api.txt`): every item a user can name (modules, types, traits, functions,
//! constants, re-exports, macros, and the public methods of public types), with the features
//! it needs. A change to the list fails this test until the snapshot is written again, on
//! purpose:
//!
//! ```text
//! A2A_BLESS=1 cargo test --all-features --test declaration public_api::
//! ```
//!
//! Items under `#[doc(hidden)]` (what the macros' generated code names) are not listed.

use std::collections::BTreeSet;
use std::path::Path;

use syn::{Attribute, ImplItem, Item, Visibility};

const SNAPSHOT: &str = "tests/public_api.txt";

/// The features an item's `#[cfg]`s name, as ` [a, b]` (none: empty).
fn features(attrs: &[Attribute]) -> Vec<String> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("cfg")) {
        let text = attr.meta.to_token_stream_string();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("feature = \"") {
            rest = &rest[at + 11..];
            if let Some(end) = rest.find('"') {
                out.push(rest[..end].to_owned());
                rest = &rest[end..];
            }
        }
    }
    out
}

trait TokenString {
    fn to_token_stream_string(&self) -> String;
}

impl TokenString for syn::Meta {
    fn to_token_stream_string(&self) -> String {
        quote::ToTokens::to_token_stream(self).to_string()
    }
}

fn hidden(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("doc")
            && quote::ToTokens::to_token_stream(&a.meta)
                .to_string()
                .contains("hidden")
    })
}

fn only_for_tests(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            // `cfg(test)`, `cfg(doctest)`, `cfg(all(test, ..))`: the word, not a feature named
            // `testing`.
            let text = quote::ToTokens::to_token_stream(&a.meta).to_string();
            text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '"'))
                .any(|word| word == "test" || word == "doctest")
        }
    })
}

fn public(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

/// What the walk finds: the lines of public items, and those of items in private modules
/// (public only if a `pub use` names them), with the name that would be re-exported.
#[derive(Default)]
struct Found {
    lines: BTreeSet<String>,
    exported: BTreeSet<String>,
    hidden_away: Vec<(String, String)>,
    private: bool,
}

/// Lists the public items of the module in `file` (path `module`), following its modules.
fn walk(file: &Path, module: &str, inherited: &[String], out: &mut Found) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let dir = match file.file_name().and_then(|n| n.to_str()) {
        Some("lib.rs" | "mod.rs") => file.parent().map(Path::to_path_buf).unwrap_or_default(),
        _ => file.with_extension(""),
    };
    items(&parsed.items, &dir, module, inherited, out);
}

fn line(out: &mut Found, path: String, kind: &str, features: &[String]) {
    let features = if features.is_empty() {
        String::new()
    } else {
        let mut f = features.to_vec();
        f.sort();
        f.dedup();
        format!(" [{}]", f.join(", "))
    };
    let text = format!("{path} ({kind}){features}");
    if out.private {
        // `Type` of `a::b::Type` or of `a::b::Type::method`: public only if re-exported.
        let mut names = path.rsplit("::");
        let name = match kind {
            "method" | "const" if path.matches("::").count() > 1 => {
                names.next();
                names.next()
            }
            _ => names.next(),
        };
        // `Server<A>` of `Server<A>::method` is the type `Server`.
        let name = name.unwrap_or_default();
        let name = name.split('<').next().unwrap_or(name);
        out.hidden_away.push((name.to_owned(), text));
    } else {
        out.lines.insert(text);
    }
}

/// The names a `use` tree makes (its last segments, renames included).
fn names(tree: &syn::UseTree, out: &mut BTreeSet<String>) {
    match tree {
        syn::UseTree::Path(p) => names(&p.tree, out),
        syn::UseTree::Name(n) => {
            out.insert(n.ident.to_string());
        }
        syn::UseTree::Rename(r) => {
            out.insert(r.ident.to_string());
        }
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| names(t, out)),
        syn::UseTree::Glob(_) => {}
    }
}

fn items(list: &[Item], dir: &Path, module: &str, inherited: &[String], out: &mut Found) {
    for item in list {
        let attrs: &[Attribute] = match item {
            Item::Const(i) => &i.attrs,
            Item::Enum(i) => &i.attrs,
            Item::Fn(i) => &i.attrs,
            Item::Impl(i) => &i.attrs,
            Item::Macro(i) => &i.attrs,
            Item::Mod(i) => &i.attrs,
            Item::Static(i) => &i.attrs,
            Item::Struct(i) => &i.attrs,
            Item::Trait(i) => &i.attrs,
            Item::Type(i) => &i.attrs,
            Item::Use(i) => &i.attrs,
            _ => continue,
        };
        if hidden(attrs) || only_for_tests(attrs) {
            continue;
        }
        let mut feats = inherited.to_vec();
        feats.extend(features(attrs));
        let at = |name: &dyn std::fmt::Display| format!("{module}::{name}");
        match item {
            Item::Const(i) if public(&i.vis) => line(out, at(&i.ident), "const", &feats),
            Item::Static(i) if public(&i.vis) => line(out, at(&i.ident), "static", &feats),
            Item::Enum(i) if public(&i.vis) => line(out, at(&i.ident), "enum", &feats),
            Item::Struct(i) if public(&i.vis) => line(out, at(&i.ident), "struct", &feats),
            Item::Trait(i) if public(&i.vis) => line(out, at(&i.ident), "trait", &feats),
            Item::Type(i) if public(&i.vis) => line(out, at(&i.ident), "type", &feats),
            Item::Fn(i) if public(&i.vis) => line(out, at(&i.sig.ident), "fn", &feats),
            Item::Use(i) if public(&i.vis) => {
                names(&i.tree, &mut out.exported);
                let tree = quote::ToTokens::to_token_stream(&i.tree)
                    .to_string()
                    .replace(' ', "");
                line(out, format!("{module} use {tree}"), "re-export", &feats);
            }
            Item::Macro(i) => {
                let exported = i.attrs.iter().any(|a| a.path().is_ident("macro_export"));
                if let (true, Some(name)) = (exported, &i.ident) {
                    line(out, format!("a2a_card::{name}!"), "macro", &feats);
                }
            }
            Item::Impl(i) if i.trait_.is_none() => {
                let ty = quote::ToTokens::to_token_stream(&i.self_ty)
                    .to_string()
                    .replace(' ', "");
                for member in &i.items {
                    if let ImplItem::Fn(f) = member
                        && public(&f.vis)
                        && !hidden(&f.attrs)
                    {
                        let mut feats = feats.clone();
                        feats.extend(features(&f.attrs));
                        line(out, at(&format!("{ty}::{}", f.sig.ident)), "method", &feats);
                    }
                    if let ImplItem::Const(c) = member
                        && public(&c.vis)
                    {
                        line(out, at(&format!("{ty}::{}", c.ident)), "const", &feats);
                    }
                }
            }
            Item::Mod(m) => {
                let path = at(&m.ident);
                let was_private = out.private;
                if public(&m.vis) {
                    line(out, path.clone(), "mod", &feats);
                } else {
                    out.private = true;
                }
                match &m.content {
                    Some((_, inner)) => {
                        items(inner, &dir.join(m.ident.to_string()), &path, &feats, out)
                    }
                    None => {
                        let name = m.ident.to_string();
                        let file = [
                            dir.join(format!("{name}.rs")),
                            dir.join(&name).join("mod.rs"),
                        ]
                        .into_iter()
                        .find(|f| f.exists());
                        match file {
                            Some(file) => walk(&file, &path, &feats, out),
                            None if public(&m.vis) => panic!("module {path}: no file"),
                            // A private module found elsewhere (`#[path]`): nothing public.
                            None => {}
                        }
                    }
                }
                out.private = was_private;
            }
            _ => {}
        }
    }
}

#[test]
fn the_public_api_is_the_reviewed_one() {
    let mut found = Found::default();
    walk(
        Path::new("a2a-card/src/lib.rs"),
        "a2a_card",
        &[],
        &mut found,
    );
    // What private modules hold is public where a `pub use` names it.
    for (name, text) in std::mem::take(&mut found.hidden_away) {
        if found.exported.contains(&name) {
            found.lines.insert(text);
        }
    }
    let now: String = found.lines.iter().map(|l| format!("{l}\n")).collect();
    if std::env::var_os("A2A_BLESS").is_some() {
        std::fs::write(SNAPSHOT, &now).expect("the snapshot is written");
        return;
    }
    let reviewed = std::fs::read_to_string(SNAPSHOT).unwrap_or_default();
    let reviewed: BTreeSet<&str> = reviewed.lines().collect();
    let now: BTreeSet<&str> = now.lines().collect();
    let added: Vec<&&str> = now.difference(&reviewed).collect();
    let removed: Vec<&&str> = reviewed.difference(&now).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "the public API changed; review it, then write the snapshot again (A2A_BLESS=1 cargo test --all-features --test declaration public_api::)\nadded:\n{}\nremoved:\n{}",
        added
            .iter()
            .map(|l| format!("  + {l}"))
            .collect::<Vec<_>>()
            .join("\n"),
        removed
            .iter()
            .map(|l| format!("  - {l}"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
}
