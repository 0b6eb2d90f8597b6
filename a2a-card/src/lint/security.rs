//! The checks of whom the agent lets in and whether the card is its own: the security schemes
//! (OAuth 2.0 flows above all, whose URLs must be https), the requirements that name them on
//! the card and on each skill, and the card's signatures.

use a2a_card_rules::skills::{SCOPES_WITHOUT_MEANING, SchemeKind};
use a2a_card_rules::text::is_blank;
use a2a_card_rules::urls::{UrlKind, classify};

use super::{Finding, Rule};
use crate::card::*;
use crate::schema::IO_SCHEMAS_EXTENSION_URI;
use crate::wire::quote::short;
use crate::wire::{Sources, pointer_push};

/// An authentication URL (OAuth, OpenID Connect): https is required.
fn auth_url(raw: &str, pointer: String, out: &mut Vec<Finding>) {
    match classify(raw).0 {
        UrlKind::Invalid(m) => out.push(Finding::new(Rule::UrlInvalid, pointer, m)),
        UrlKind::Http { loopback: false } | UrlKind::Other(_) => out.push(Finding::new(
            Rule::UrlInsecure,
            pointer,
            format!(
                "`{}` must use https: OAuth 2.0 and OpenID Connect require TLS",
                short(raw)
            ),
        )),
        _ => {}
    }
}

pub(super) fn requirements(
    card: &AgentCard,
    reqs: &[SecurityRequirement],
    skill: Option<usize>,
    paths: &Sources,
    out: &mut Vec<Finding>,
) {
    for (j, req) in reqs.iter().enumerate() {
        for (name, scopes) in &req.schemes {
            if let Some(kind) = card.security_schemes.get(name).map(scheme_kind) {
                if !kind.takes_scopes() && !scopes.is_empty() {
                    out.push(Finding::new(
                        Rule::SecurityScopesUnsupported,
                        paths.requirement(skill, j, name),
                        SCOPES_WITHOUT_MEANING.render(&[&short(name), kind.describe()]),
                    ));
                }
            } else {
                let declared: Vec<_> = card.security_schemes.keys().map(|k| short(k)).collect();
                let known = if declared.is_empty() {
                    "none are declared".to_owned()
                } else {
                    format!("declared: {}", declared.join(", "))
                };
                out.push(Finding::new(Rule::SecuritySchemeUndeclared, paths.requirement(skill, j, name), format!("security scheme `{}` is not declared in `securitySchemes` ({known}); declare it or fix the name", short(name))));
            }
        }
    }
}

/// The kind of a scheme, as the rules shared with the macros see it.
fn scheme_kind(scheme: &SecurityScheme) -> SchemeKind {
    match scheme {
        SecurityScheme::ApiKey(_) => SchemeKind::ApiKey,
        SecurityScheme::Http(_) => SchemeKind::Http,
        SecurityScheme::OAuth2(_) => SchemeKind::OAuth2,
        SecurityScheme::OpenIdConnect(_) => SchemeKind::OpenIdConnect,
        SecurityScheme::MutualTls(_) => SchemeKind::MutualTls,
    }
}

pub(super) fn security(card: &AgentCard, paths: &Sources, out: &mut Vec<Finding>) {
    requirements(card, &card.security_requirements, None, paths, out);
    for (name, scheme) in &card.security_schemes {
        if paths.schemes.get(name).is_some_and(|s| s.legacy) {
            // Named in the 0.1/0.2 `authentication` object, which cannot say more: the document
            // rules report that object instead.
            continue;
        }
        let at = |field: &str| paths.scheme(name, field);
        let mut incomplete = |field: &str, what: &str| {
            out.push(Finding::new(
                Rule::SecuritySchemeIncomplete,
                at(field),
                format!("security scheme `{}` {what}", short(name)),
            ));
        };
        match scheme {
            SecurityScheme::ApiKey(k) => {
                if is_blank(&k.name) {
                    incomplete(
                        "name",
                        "has no `name`; set the header, query parameter or cookie that carries the key",
                    );
                }
                if ApiKeyLocation::parse(&k.location).is_none() {
                    incomplete(
                        "location",
                        &format!(
                            "has location `{}`; use `header`, `query` or `cookie`",
                            short(&k.location)
                        ),
                    );
                }
            }
            SecurityScheme::Http(h) => {
                if is_blank(&h.scheme) {
                    incomplete(
                        "scheme",
                        "has no HTTP `scheme`; set e.g. `bearer` or `basic`",
                    );
                }
            }
            SecurityScheme::OpenIdConnect(o) => {
                if is_blank(&o.open_id_connect_url) {
                    incomplete(
                        "openIdConnectUrl",
                        "has no `openIdConnectUrl`; set the provider's discovery URL",
                    );
                } else {
                    auth_url(&o.open_id_connect_url, at("openIdConnectUrl"), out);
                }
            }
            SecurityScheme::OAuth2(o) => oauth2(name, o, paths, out),
            SecurityScheme::MutualTls(_) => {}
        }
    }
}

fn oauth2(name: &str, o: &OAuth2Scheme, paths: &Sources, out: &mut Vec<Finding>) {
    let at = |field: &str| paths.scheme(name, field);
    let count = o.flows.iter().count();
    // 0.3 itself allows several flows, but the official SDK's client, which reads 0.3 cards as
    // 1.0, fails on them: the rule holds for every version.
    if count != 1 {
        out.push(Finding::new(Rule::OAuthFlowCount, at("flows"), format!("OAuth 2.0 scheme `{}` has {count} flows; A2A 1.0 allows exactly one (declare another scheme for each further flow)", short(name))));
    }
    if let Some(u) = &o.oauth2_metadata_url {
        auth_url(u, at("oauth2MetadataUrl"), out);
    }
    for flow in o.flows.iter() {
        let kind = flow.kind.wire_name();
        let fp = |field: &str| paths.flow(name, kind, field);
        if flow.kind.is_deprecated() {
            out.push(Finding::new(Rule::OAuthFlowDeprecated, paths.flow_base(name, kind), format!("the `{kind}` flow is deprecated; use authorizationCode with PKCE, or deviceCode")));
        }
        let scopes_required = matches!(
            flow.kind,
            OAuthFlowKind::AuthorizationCode
                | OAuthFlowKind::ClientCredentials
                | OAuthFlowKind::DeviceCode
        );
        if scopes_required && flow.scopes.is_empty() && paths.modern {
            out.push(Finding::new(
                Rule::SecuritySchemeIncomplete,
                fp("scopes"),
                format!(
                    "the `{kind}` flow of `{}` has no scopes; A2A 1.0 requires at least one in `scopes` (scope name -> description)",
                    short(name)
                ),
            ));
        }
        let needed: &[(&str, &Option<String>)] = match flow.kind {
            OAuthFlowKind::AuthorizationCode => &[
                ("authorizationUrl", &flow.authorization_url),
                ("tokenUrl", &flow.token_url),
            ],
            OAuthFlowKind::ClientCredentials | OAuthFlowKind::Password => {
                &[("tokenUrl", &flow.token_url)]
            }
            OAuthFlowKind::DeviceCode => &[
                ("deviceAuthorizationUrl", &flow.device_authorization_url),
                ("tokenUrl", &flow.token_url),
            ],
            OAuthFlowKind::Implicit => &[("authorizationUrl", &flow.authorization_url)],
        };
        for (field, value) in needed {
            match value.as_deref().map(str::trim) {
                None | Some("") => out.push(Finding::new(
                    Rule::SecuritySchemeIncomplete,
                    fp(field),
                    format!(
                        "the `{kind}` flow of `{}` has no `{field}`; set it",
                        short(name)
                    ),
                )),
                Some(u) => auth_url(u, fp(field), out),
            }
        }
        if let Some(u) = &flow.refresh_url {
            auth_url(u, fp("refreshUrl"), out);
        }
        if flow.kind == OAuthFlowKind::AuthorizationCode && flow.pkce_required != Some(true) {
            out.push(Finding::new(Rule::OAuthPkceMissing, fp("pkceRequired"), format!("the authorization code flow of `{}` does not require PKCE; set `pkceRequired: true`", short(name))));
        }
    }
}

fn is_base64url(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

pub(super) fn signatures(card: &AgentCard, paths: &Sources, out: &mut Vec<Finding>) {
    let bound = card
        .capabilities
        .extension(IO_SCHEMAS_EXTENSION_URI)
        .and_then(|ext| ext.params.as_ref())
        .is_some_and(|params| params.contains_key("schemasDigest"));
    if !card.signatures.is_empty() && !card.schemas.is_empty() && !bound {
        out.push(Finding::new(
            Rule::SignatureSchemasUnbound,
            paths.signature(0),
            "the card is signed but its root `schemas` are outside every signature (the official SDKs sign only the fields they know); bind them with `params.schemasDigest` in the input/output schemas extension entry by signing with `a2a_card::sign` or `a2a-card sign`".to_owned(),
        ));
    }
    for (i, sig) in card.signatures.iter().enumerate() {
        for (field, value) in [("protected", &sig.protected), ("signature", &sig.signature)] {
            if !is_base64url(value) {
                out.push(Finding::new(
                    Rule::SignatureMalformed,
                    pointer_push(&paths.signature(i), field),
                    format!("`{field}` must be a non-empty base64url string without padding"),
                ));
            }
        }
    }
}
