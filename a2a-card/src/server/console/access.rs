//! Who is using the console: an [`Operator`], admitted by the console's token (typed in, kept
//! as a digest in a cookie, or sent as a bearer token) or by the agent's own authentication
//! with an allowed scope or role, and the CSRF token of their forms; everyone else refused as
//! any protected route refuses.

use axum::http::header;
use axum::http::request::Parts;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::{COOKIE, Served};
use crate::server::auth::Refusal;
use crate::server::limits::Peer;

/// The digest a console token is kept and compared as.
pub(super) fn digest(token: &str) -> [u8; 32] {
    Sha256::new()
        .chain_update(b"a2a-card console token\0")
        .chain_update(token.as_bytes())
        .finalize()
        .into()
}

/// Who is using the console: a key for the CSRF token of their forms, and how to name them.
#[derive(Debug, Clone)]
pub(super) struct Operator {
    pub(super) key: String,
    /// Whether they came in with the token's cookie (they may sign out).
    pub(super) cookie: bool,
}

impl Served {
    /// The operator making the request, or the refusal any protected route would answer.
    async fn admit(&self, parts: &Parts) -> Result<Operator, Refusal> {
        if !self.console.tokens.is_empty()
            && let Some((presented, cookie)) = presented(parts)
            && self
                .console
                .tokens
                .iter()
                .any(|t| bool::from(t.ct_eq(&presented)))
        {
            return Ok(Operator {
                key: format!("token/{}", crate::server::store::hex(&presented[..12])),
                cookie,
            });
        }
        let Some(guard) = &self.guard else {
            return Err(self.unauthenticated(&[]));
        };
        let peer = Peer::of(parts.extensions.get());
        match guard.admit(parts, peer).await? {
            None => Err(self.unauthenticated(guard.unauthenticated_any().challenges())),
            Some(principal) if self.console.allows(&principal) => Ok(Operator {
                key: format!("principal/{}/{}", principal.scheme(), principal.subject()),
                cookie: false,
            }),
            Some(_) => {
                let mut challenges = Vec::new();
                if !self.console.scopes.is_empty() {
                    challenges.push(format!(
                        "Bearer error=\"insufficient_scope\", scope=\"{}\"",
                        self.console.scopes.join(" ").replace(['"', '\\'], "")
                    ));
                }
                Err(Refusal::Forbidden {
                    challenges,
                    message: format!(
                        "the caller may not use the console: it is for {}",
                        self.console.allowed()
                    ),
                })
            }
        }
    }

    /// The refusal of a caller without the credentials the console needs.
    fn unauthenticated(&self, challenges: &[String]) -> Refusal {
        let mut challenges = challenges.to_vec();
        if !self.console.tokens.is_empty() {
            challenges.push("Bearer realm=\"a2a-card console\"".to_owned());
        }
        Refusal::Unauthenticated {
            challenges,
            message: format!(
                "authentication required: the console is for {}",
                self.console.allowed()
            ),
        }
    }

    /// The console's base path for the request of `parts`, and the operator it comes from;
    /// why not (with the base path, for the page that says so) when it comes from nobody the
    /// console allows.
    pub(super) async fn operator(
        &self,
        parts: &Parts,
    ) -> Result<(String, Operator), (Refusal, String)> {
        let base = self.base(parts);
        match self.admit(parts).await {
            Ok(operator) => Ok((base, operator)),
            Err(refusal) => Err((refusal, base)),
        }
    }

    /// The CSRF token of `operator`'s forms.
    pub(super) fn csrf(&self, operator: &Operator) -> String {
        let mac = Sha256::new()
            .chain_update(self.secret)
            .chain_update(b"\0csrf\0")
            .chain_update(operator.key.as_bytes())
            .finalize();
        crate::server::store::hex(&mac[..16])
    }
}

/// The console token a request presents, as its digest, and whether it came in the cookie.
fn presented(parts: &Parts) -> Option<([u8; 32], bool)> {
    if let Some(value) = parts.headers.get(header::AUTHORIZATION)
        && let Ok(value) = value.to_str()
        && let Some((word, token)) = value.trim().split_once(' ')
        && word.eq_ignore_ascii_case("bearer")
    {
        return Some((digest(token.trim()), false));
    }
    for value in parts.headers.get_all(header::COOKIE) {
        let Ok(value) = value.to_str() else { continue };
        for pair in value.split(';') {
            if let Some((name, kept)) = pair.trim().split_once('=')
                && name.trim() == COOKIE
                && let Some(kept) = unhex(kept.trim())
            {
                return Some((kept, true));
            }
        }
    }
    None
}

/// 64 hex digits as 32 bytes.
fn unhex(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in text.as_bytes().chunks(2).enumerate() {
        let pair = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}
