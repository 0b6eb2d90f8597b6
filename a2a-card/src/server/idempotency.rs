//! Idempotent sends on the server's side ([`crate::idempotency`]): a send's key (its
//! `Idempotency-Key`, else its `messageId` when the caller activates the extension), scoped to
//! the caller's place, kept by the store where it keeps keys for every replica, else by
//! [`Keys`] in this process.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use a2a::{A2AError, Message};
use sha2::{Digest, Sha256};

use super::call::Context;
use super::store::KeyClaim;
use super::store::hex;
use crate::idempotency::{IDEMPOTENCY_EXTENSION_URI, KEY_RETENTION, MAX_KEY_LEN};

/// A send's key, as the caller gave it: from the `Idempotency-Key` header, or the message's
/// `messageId` (the extension activated).
pub(crate) struct Key {
    text: String,
    from_header: bool,
}

impl Key {
    /// The key of a send of `message` in `ctx`: none for an answer (a message naming a task)
    /// or a send that carries none; `-32602` for a key that is empty or too long.
    pub(crate) fn of(ctx: &Context, message: &Message) -> Result<Option<Key>, A2AError> {
        if message.task_id.is_some() {
            return Ok(None);
        }
        let key = match &ctx.idempotency_key {
            Some(key) => Key {
                text: key.clone(),
                from_header: true,
            },
            None if ctx
                .extensions
                .iter()
                .any(|e| e == IDEMPOTENCY_EXTENSION_URI) =>
            {
                Key {
                    text: message.message_id.clone(),
                    from_header: false,
                }
            }
            None => return Ok(None),
        };
        if key.text.is_empty() || key.text.len() > MAX_KEY_LEN {
            let field = if key.from_header {
                "Idempotency-Key"
            } else {
                "message.messageId"
            };
            return Err(A2AError::invalid_params(format!(
                "{field}: an idempotency key is 1 to {MAX_KEY_LEN} bytes; this one is {}",
                key.text.len()
            )));
        }
        Ok(Some(key))
    }

    /// The key as kept: a digest of the key and of `make`, the prefix of the ids of the
    /// caller's new tasks (its agent, tenant and owner), so that one caller's key is never
    /// another's.
    pub(crate) fn scoped(&self, make: &str) -> String {
        hex(Sha256::new()
            .chain_update(b"a2a-card idempotency key\0")
            .chain_update(make.as_bytes())
            .chain_update([0])
            .chain_update(self.text.as_bytes())
            .finalize()
            .as_slice())
    }

    /// The digest of what the send asks: the message (without its `messageId` when the key
    /// came in the header, so that a retry may give the message a new one).
    pub(crate) fn digest(&self, message: &Message) -> String {
        let mut value = serde_json::to_value(message).unwrap_or_default();
        if let Some(fields) = value.as_object_mut() {
            if self.from_header {
                fields.remove("messageId");
            }
            // What is left of the caller's budget is not what the send asks: a retry sends
            // less of it.
            if let Some(serde_json::Value::Object(metadata)) = fields.get_mut("metadata")
                && metadata
                    .remove(crate::budget::BUDGET_EXTENSION_URI)
                    .is_some()
                && metadata.is_empty()
            {
                fields.remove("metadata");
            }
        }
        // One form whatever the order of the message's maps: members sorted by name.
        value.sort_all_objects();
        hex(Sha256::digest(value.to_string().as_bytes()).as_slice())
    }

    /// The refusal of this key, kept for another message (task `task_id`).
    pub(crate) fn conflict(&self, task_id: &str) -> A2AError {
        let what = if self.from_header {
            "Idempotency-Key"
        } else {
            "the messageId (the idempotency extension is active)"
        };
        A2AError::invalid_params(format!(
            "{what} `{}` was used for another message, which made task `{task_id}`; a retry sends the same message, and a new message takes a new key",
            self.text.chars().take(64).collect::<String>()
        ))
    }
}

/// How many keys [`Keys`] holds before it drops those past [`KEY_RETENTION`].
const MAX_KEYS: usize = 100_000;

/// The keys this process keeps, where the store keeps none (memory, a store of one's own).
#[derive(Default)]
pub(crate) struct Keys(Mutex<HashMap<String, (String, String, Instant)>>);

impl Keys {
    /// Keeps `key` for `task_id` (digest `digest`) unless it is kept: as
    /// [`Store::claim_key`](super::store::Store::claim_key).
    pub(crate) fn claim(&self, key: &str, task_id: &str, digest: &str) -> KeyClaim {
        let mut keys = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        if keys.len() >= MAX_KEYS {
            keys.retain(|_, (_, _, at)| now.duration_since(*at) < KEY_RETENTION);
        }
        match keys.get(key) {
            Some((task, kept, at)) if now.duration_since(*at) < KEY_RETENTION => KeyClaim::Taken {
                task_id: task.clone(),
                digest: kept.clone(),
            },
            _ => {
                keys.insert(key.to_owned(), (task_id.to_owned(), digest.to_owned(), now));
                KeyClaim::New
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_kept_once_and_found_after() {
        let keys = Keys::default();
        assert_eq!(keys.claim("k", "t-1", "d"), KeyClaim::New);
        assert_eq!(
            keys.claim("k", "t-2", "e"),
            KeyClaim::Taken {
                task_id: "t-1".into(),
                digest: "d".into()
            }
        );
        assert_eq!(keys.claim("other", "t-3", "d"), KeyClaim::New);
    }

    #[test]
    fn a_message_has_one_digest_whatever_the_order_of_its_maps() {
        let key = Key {
            text: "m-1".into(),
            from_header: false,
        };
        let one: Message = serde_json::from_value(serde_json::json!({
            "messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}],
            "metadata": {"a": 1, "b": {"x": true, "y": [1, 2]}}}))
        .unwrap();
        let two: Message = serde_json::from_value(serde_json::json!({
            "role": "ROLE_USER", "metadata": {"b": {"y": [1, 2], "x": true}, "a": 1},
            "parts": [{"text": "hi"}], "messageId": "m-1"}))
        .unwrap();
        assert_eq!(key.digest(&one), key.digest(&two));
        let other: Message = serde_json::from_value(serde_json::json!({
            "messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}],
            "metadata": {"a": 1, "b": {"x": true, "y": [2, 1]}}}))
        .unwrap();
        assert_ne!(key.digest(&one), key.digest(&other));
    }

    #[test]
    fn one_key_of_two_callers_is_two_keys() {
        let key = Key {
            text: "retry-1".into(),
            from_header: true,
        };
        assert_ne!(key.scoped("acme:aaaa."), key.scoped("acme:bbbb."));
        assert_eq!(key.scoped("acme:aaaa."), key.scoped("acme:aaaa."));
    }
}
