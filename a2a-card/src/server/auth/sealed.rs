//! The principal in the service parameters: put there by the authentication layer under a
//! per-process secret a client cannot know, read by the request handler.

use std::sync::OnceLock;

use a2a_server::ServiceParams;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use subtle::ConstantTimeEq;

use crate::principal::Principal;

/// The request header (and service parameter) that carries the principal inside the process.
pub(crate) const PRINCIPAL_HEADER: &str = "x-a2a-card-principal";

/// The per-process secret that marks a principal parameter as set by the authentication layer.
fn seal_key() -> &'static str {
    static KEY: OnceLock<String> = OnceLock::new();
    KEY.get_or_init(|| {
        let mut bytes = [0u8; 24];
        if getrandom::fill(&mut bytes).is_err() {
            // No randomness: a key no request can carry (header values are visible ASCII).
            return "\u{1}unset".to_owned();
        }
        URL_SAFE_NO_PAD.encode(bytes)
    })
}

/// Removes any principal a client sent, and puts `principal` in.
pub(crate) fn seal(headers: &mut HeaderMap, principal: Option<&Principal>) {
    headers.remove(PRINCIPAL_HEADER);
    let Some(principal) = principal else { return };
    let Ok(json) = serde_json::to_vec(principal) else {
        return;
    };
    let value = format!("{}.{}", seal_key(), URL_SAFE_NO_PAD.encode(json));
    if let Ok(value) = HeaderValue::from_str(&value) {
        headers.insert(HeaderName::from_static(PRINCIPAL_HEADER), value);
    }
}

/// The sealed payload of the principal parameter, when the layer set it.
fn sealed(params: &ServiceParams) -> Option<&str> {
    let values = params.get(PRINCIPAL_HEADER)?;
    let [value] = values.as_slice() else {
        return None;
    };
    let (key, payload) = value.split_once('.')?;
    bool::from(key.as_bytes().ct_eq(seal_key().as_bytes())).then_some(payload)
}

/// Whether the authentication layer found an authenticated caller for this request.
pub(crate) fn is_authenticated(params: &ServiceParams) -> bool {
    sealed(params).is_some()
}

/// The principal the authentication layer found for this request.
pub(crate) fn principal_of(params: &ServiceParams) -> Option<Principal> {
    let payload = sealed(params)?;
    let json = URL_SAFE_NO_PAD.decode(payload).ok()?;
    serde_json::from_slice(&json).ok()
}
