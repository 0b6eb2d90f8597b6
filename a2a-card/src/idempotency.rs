//! Idempotent sends: a send made again with the same key, by the same caller, reaches the task
//! the first one made instead of making another (the skill runs once).
//!
//! A send that makes a task carries its key in the `Idempotency-Key` header (gRPC: the
//! `idempotency-key` metadata), or, when the caller activates [`IDEMPOTENCY_EXTENSION_URI`]
//! (`A2A-Extensions`), its message's `messageId` is the key. The server declares the extension
//! on its card. A retry with the same key and the same message gets the original task (a
//! blocking send: once its turn ends or asks; a stream: the task's events), and the same key
//! with another message is refused (`-32602` naming the key). Keys are the caller's own: the
//! same key from another owner (or tenant) makes that caller's own task. The SQL stores keep
//! keys for every replica and across restarts ([`KEY_RETENTION`]); the memory store, in the
//! process.
//!
//! ```
//! use a2a_card::idempotency::{IDEMPOTENCY_EXTENSION_URI, IDEMPOTENCY_KEY_HEADER};
//!
//! assert!(IDEMPOTENCY_EXTENSION_URI.starts_with("https://"));
//! assert_eq!(IDEMPOTENCY_KEY_HEADER, "idempotency-key");
//! ```

use std::time::Duration;

/// The extension a caller activates for the `messageId` of a message that makes a task to be
/// its idempotency key (where no `Idempotency-Key` header names another).
pub const IDEMPOTENCY_EXTENSION_URI: &str =
    "https://github.com/a2a-card/a2a-card/extensions/idempotency/v1";

/// The header (gRPC: metadata) that carries a send's idempotency key.
pub const IDEMPOTENCY_KEY_HEADER: &str = "idempotency-key";

/// The longest key, in bytes.
pub const MAX_KEY_LEN: usize = 255;

/// How long a key is kept: a retry within it reaches the original task (as long as the task
/// itself is kept).
pub const KEY_RETENTION: Duration = Duration::from_secs(24 * 3600);
