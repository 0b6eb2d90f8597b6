//! What `#[agent(...)]` says: its card-level keys, parsed (each value checked for its form
//! where the parser can tell, such as an extension's URI and params), for the checks and the
//! expansion of `#[agent]`.

use proc_macro2::TokenStream;
use syn::{LitBool, LitStr, Path};

use crate::attr::{self, Requirement, Text};
use crate::ctxt::{Errors, unknown_key};
use crate::security;

const KEYS: &[&str] = &[
    "name",
    "description",
    "version",
    "url",
    "provider",
    "documentation_url",
    "icon_url",
    "streaming",
    "push_notifications",
    "state_transition_history",
    "extended_agent_card",
    "default_input_modes",
    "default_output_modes",
    "security_schemes",
    "security",
    "extension",
    "skills",
    "crate",
];

/// One `extension(..)` of `#[agent]`: an extension the card declares.
pub(super) struct Extension {
    pub(super) uri: LitStr,
    pub(super) description: Option<LitStr>,
    pub(super) required: bool,
    pub(super) params: Option<LitStr>,
}

/// What `#[agent(...)]` says.
#[derive(Default)]
pub(super) struct Attrs {
    pub(super) name: Option<Text>,
    pub(super) description: Option<Text>,
    pub(super) version: Option<Text>,
    pub(super) url: Option<LitStr>,
    pub(super) url_env: Option<LitStr>,
    pub(super) provider: Option<(LitStr, LitStr)>,
    pub(super) documentation_url: Option<LitStr>,
    pub(super) icon_url: Option<LitStr>,
    pub(super) streaming: Option<LitBool>,
    pub(super) push_notifications: Option<LitBool>,
    pub(super) state_transition_history: Option<LitBool>,
    pub(super) extended_agent_card: Option<LitBool>,
    pub(super) default_input_modes: Vec<LitStr>,
    pub(super) default_output_modes: Vec<LitStr>,
    pub(super) security_schemes: Option<security::Schemes>,
    pub(super) security: Vec<Requirement>,
    pub(super) extensions: Vec<Extension>,
    pub(super) skills: Vec<Path>,
    pub(super) krate: Option<Path>,
}

/// `extension(uri = "...", description = "...", required, params = r#"{...}"#)`: the URI is
/// an absolute URI, the params a JSON object, and the crate's own input/output schemas
/// extension is not declared by hand (the card declares it where a skill uses schemas).
fn extension(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Extension> {
    let (mut uri, mut description, mut required, mut params) = (None, None, false, None);
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("uri") {
            uri = Some(attr::lit_str(&inner)?);
        } else if inner.path.is_ident("description") {
            description = Some(attr::lit_str(&inner)?);
        } else if inner.path.is_ident("required") {
            required = attr::flag(&inner)?.value;
        } else if inner.path.is_ident("params") {
            params = Some(attr::lit_str(&inner)?);
        } else {
            return Err(unknown_key(
                &inner.path,
                &["uri", "description", "required", "params"],
                "agent(extension(..))",
            ));
        }
        Ok(())
    })?;
    let Some(uri) = uri else {
        return Err(meta.error(
            "an extension needs its URI: extension(uri = \"https://example.com/ext/v1\", ..)",
        ));
    };
    if !a2a_card_rules::urls::is_absolute_uri(&uri.value()) {
        return Err(syn::Error::new(
            uri.span(),
            format!(
                "`{}` is not an absolute URI; an extension is named by one, e.g. https://example.com/ext/v1 or urn:example:ext",
                uri.value()
            ),
        ));
    }
    if uri.value() == a2a_card_rules::urls::IO_SCHEMAS_EXTENSION_URI {
        return Err(syn::Error::new(
            uri.span(),
            "the input/output schemas extension is declared by the card itself wherever a skill uses schemas; remove this entry",
        ));
    }
    if let Some(params) = &params {
        match serde_json::from_str::<serde_json::Value>(&params.value()) {
            Ok(serde_json::Value::Object(_)) => {}
            Ok(_) => {
                return Err(syn::Error::new(
                    params.span(),
                    "an extension's params are a JSON object, e.g. params = r#\"{\"version\": 2}\"#",
                ));
            }
            Err(e) => {
                return Err(syn::Error::new(
                    params.span(),
                    format!("an extension's params are JSON: {e}"),
                ));
            }
        }
    }
    Ok(Extension {
        uri,
        description,
        required,
        params,
    })
}

pub(super) fn parse_attrs(args: TokenStream, errors: &mut Errors) -> Attrs {
    let repeatable = [
        "default_input_modes",
        "default_output_modes",
        "security",
        "extension",
        "skills",
    ];
    attr::parse_entries(args, errors, &repeatable, |a: &mut Attrs, meta| {
        let key = meta
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        match key.as_str() {
            "name" => a.name = Some(attr::text(&meta)?),
            "description" => a.description = Some(attr::text(&meta)?),
            "version" => a.version = Some(attr::text(&meta)?),
            "url" if meta.input.peek(syn::token::Paren) => {
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("env") {
                        a.url_env = Some(attr::lit_str(&inner)?);
                    } else if inner.path.is_ident("default") {
                        a.url = Some(attr::lit_str(&inner)?);
                    } else {
                        return Err(unknown_key(
                            &inner.path,
                            &["env", "default"],
                            "agent(url(..))",
                        ));
                    }
                    Ok(())
                })?;
                if a.url.is_none() {
                    return Err(meta.error("url(env = \"VAR\", default = \"https://...\") needs a default, used when VAR is not set"));
                }
            }
            "url" => a.url = Some(attr::lit_str(&meta)?),
            "provider" => {
                let (mut organization, mut url) = (None, None);
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("organization") {
                        organization = Some(attr::lit_str(&inner)?);
                    } else if inner.path.is_ident("url") {
                        url = Some(attr::lit_str(&inner)?);
                    } else {
                        return Err(unknown_key(
                            &inner.path,
                            &["organization", "url"],
                            "agent(provider(..))",
                        ));
                    }
                    Ok(())
                })?;
                match (organization, url) {
                    (Some(o), Some(u)) => a.provider = Some((o, u)),
                    _ => return Err(meta.error("a provider needs both: provider(organization = \"...\", url = \"https://...\")")),
                }
            }
            "documentation_url" => a.documentation_url = Some(attr::lit_str(&meta)?),
            "icon_url" => a.icon_url = Some(attr::lit_str(&meta)?),
            "streaming" => a.streaming = Some(attr::flag(&meta)?),
            "push_notifications" => a.push_notifications = Some(attr::flag(&meta)?),
            "state_transition_history" => a.state_transition_history = Some(attr::flag(&meta)?),
            "extended_agent_card" => a.extended_agent_card = Some(attr::flag(&meta)?),
            "default_input_modes" => a.default_input_modes.extend(attr::lit_strs(&meta)?),
            "default_output_modes" => a.default_output_modes.extend(attr::lit_strs(&meta)?),
            "security_schemes" => a.security_schemes = Some(security::parse(&meta)?),
            "security" => a.security.push(attr::requirement(&meta)?),
            "extension" => {
                let extension = extension(&meta)?;
                if a.extensions
                    .iter()
                    .any(|e| e.uri.value() == extension.uri.value())
                {
                    return Err(syn::Error::new(
                        extension.uri.span(),
                        format!(
                            "extension `{}` is declared twice; declare each extension once",
                            extension.uri.value()
                        ),
                    ));
                }
                a.extensions.push(extension);
            }
            "skills" => meta.parse_nested_meta(|inner| {
                a.skills.push(inner.path);
                Ok(())
            })?,
            "crate" => a.krate = Some(attr::krate(&meta)?),
            _ => return Err(unknown_key(&meta.path, KEYS, "agent")),
        }
        Ok(())
    })
}
