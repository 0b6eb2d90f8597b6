//! Whose a task is, as its id says: the agent (where a [`Host`](crate::server::Host) keeps
//! several agents' tasks in one store), the tenant and, where the server authenticates its
//! callers, the owner, before the id proper:
//!
//! ```text
//! [AGENT:][TENANT:][OWNER.]UUID
//! 550e8400-e29b-41d4-a716-446655440000                 an agent alone, the default tenant, no authentication
//! acme:550e8400-...                                    tenant `acme`
//! planner:acme:550e8400-...                            agent `planner` of a host, tenant `acme`
//! planner::550e8400-...                                agent `planner`, the default tenant
//! acme:3f1c0a9e5b7d2468ace13579.550e8400-...           tenant `acme`, owned by one caller
//! ```
//!
//! A call reaches the tasks whose id begins with its **reach** and has no `:` after it: its
//! tenant's prefix and its own owner mark, or the tenant's prefix alone for an administrator
//! (see [`Ownership`](crate::server::auth::Ownership)). So whether a call may touch a task is
//! decided from the id alone, before any store is read: a task of another owner is answered
//! as a task that does not exist, in the same words and without a read that could tell the
//! two apart. The same prefix filters `ListTasks` in the store's own query.
//!
//! Neither an agent's namespace nor a tenant has a `:`; an owner mark is hex digits (or
//! [`ANONYMOUS`]) and a UUID has no `.`, so no caller's ids are another's.

use sha2::{Digest, Sha256};

/// The owner mark of the tasks of anonymous callers of an agent that authenticates its
/// callers (an agent whose card lets anonymous callers in beside authenticated ones): they
/// share these tasks, and reach no authenticated caller's.
pub(crate) const ANONYMOUS: &str = "anon";

/// The prefix of the ids of the tasks of `tenant` (none: the default tenant), under
/// `namespace` where a host keeps several agents' tasks: `""`, `acme:`, `planner:acme:`,
/// `planner::`.
pub(crate) fn prefix(namespace: Option<&str>, tenant: Option<&str>) -> String {
    match (namespace, tenant) {
        (None, None) => String::new(),
        (None, Some(tenant)) => format!("{tenant}:"),
        (Some(namespace), tenant) => format!("{namespace}:{}:", tenant.unwrap_or("")),
    }
}

/// The owner mark of the tasks of the owner `key` (what [`Ownership`] made of a caller): a
/// digest, so that an id says whose it is without saying who that is.
///
/// [`Ownership`]: crate::server::auth::Ownership
pub(crate) fn mark(key: &str) -> String {
    let digest = Sha256::new()
        .chain_update(b"a2a-card task owner\0")
        .chain_update(key.as_bytes())
        .finalize();
    hex(&digest[..12])
}

/// `bytes` in lowercase hex digits.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 15)]));
    }
    out
}

/// Where a call's tasks are: the prefix of the ids of the tasks it makes, and the prefix of
/// those it reaches (the same, or, for an administrator, every owner's of its tenant).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Place {
    /// The prefix a new task's id takes (its tenant's, then its owner's mark and `.`).
    pub(crate) make: String,
    /// The prefix of the ids of the tasks the call reaches.
    pub(crate) reach: String,
}

impl Place {
    /// The place of a call in the tenant whose prefix is `tenant`, made by the owner of
    /// `mark` (none: tasks are the tenant's, whoever calls), reaching every owner's tasks of
    /// the tenant when `all`.
    pub(crate) fn new(tenant: String, mark: Option<&str>, all: bool) -> Place {
        let make = match mark {
            Some(mark) => format!("{tenant}{mark}."),
            None => tenant.clone(),
        };
        let reach = if all { tenant } else { make.clone() };
        Place { make, reach }
    }

    /// A new task id in this place.
    pub(crate) fn new_id(&self) -> String {
        let id = a2a::new_task_id();
        if self.make.is_empty() {
            return id;
        }
        let mut placed = String::with_capacity(self.make.len() + id.len());
        placed.push_str(&self.make);
        placed.push_str(&id);
        placed
    }

    /// Whether the call reaches task `id`.
    pub(crate) fn reaches(&self, id: &str) -> bool {
        reaches(&self.reach, id)
    }

    /// The reach as a `ListTasks` request names it to the store (see
    /// [`Store`](super::Store)): `None` for the empty prefix.
    pub(crate) fn listed(&self) -> Option<String> {
        (!self.reach.is_empty()).then(|| self.reach.clone())
    }
}

/// Whether task `id` is within `reach`: it begins with it and has no `:` after it.
pub(crate) fn reaches(reach: &str, id: &str) -> bool {
    id.strip_prefix(reach)
        .is_some_and(|rest| !rest.contains(':'))
}

/// The namespace task `id` names (`planner` of `planner:acme:...`): the agent of a
/// [`Host`](crate::server::Host) it belongs to; `None` for a task of an agent alone.
pub(crate) fn namespace_of(id: &str) -> Option<&str> {
    let mut segments = id.splitn(3, ':');
    match (segments.next(), segments.next(), segments.next()) {
        (Some(namespace), Some(_), Some(_)) => Some(namespace),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_reaches_its_own_tasks_and_no_others() {
        let alice = Place::new(
            prefix(None, Some("acme")),
            Some(&mark("bearer/alice")),
            false,
        );
        let bob = Place::new(prefix(None, Some("acme")), Some(&mark("bearer/bob")), false);
        let admin = Place::new(prefix(None, Some("acme")), Some(&mark("bearer/root")), true);
        let hers = alice.new_id();
        assert!(hers.starts_with("acme:") && hers.contains('.'), "{hers}");
        assert!(alice.reaches(&hers));
        assert!(!bob.reaches(&hers), "another owner's task");
        assert!(
            admin.reaches(&hers),
            "an administrator reaches the tenant's tasks"
        );
        assert!(admin.reaches(&bob.new_id()));
        assert!(!admin.reaches("other:abc"), "not another tenant's");
        assert!(
            admin.reaches("acme:made-before-owners"),
            "nor a task without an owner"
        );
        assert!(!alice.reaches("acme:made-before-owners"));
    }

    #[test]
    fn without_owners_a_tenant_is_the_boundary() {
        let alone = Place::new(prefix(None, None), None, false);
        assert!(alone.reaches("550e8400"));
        assert!(!alone.reaches("acme:550e8400"));
        assert_eq!(alone.listed(), None);
        let hosted = Place::new(prefix(Some("planner"), None), None, false);
        let id = hosted.new_id();
        assert!(id.starts_with("planner::"), "{id}");
        assert_eq!(namespace_of(&id), Some("planner"));
        assert!(!hosted.reaches("planner:acme:x"));
        let owned = Place::new(
            prefix(Some("planner"), Some("acme")),
            Some(ANONYMOUS),
            false,
        );
        let id = owned.new_id();
        assert!(id.starts_with("planner:acme:anon."), "{id}");
        assert_eq!(namespace_of(&id), Some("planner"));
    }

    #[test]
    fn a_mark_is_a_digest_that_names_nobody() {
        let m = mark("bearer/alice");
        assert_eq!(m.len(), 24);
        assert!(m.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(!m.contains("alice"));
        assert_ne!(m, mark("bearer/bob"));
    }
}
