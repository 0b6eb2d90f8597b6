//! Whose tasks a caller reaches: the agent's authorization model for its tasks (A2A 1.0.1
//! section 13.1), declared once on [`Authentication`](super::Authentication).

use std::fmt;
use std::sync::Arc;

use crate::principal::Principal;
use crate::server::store::{ANONYMOUS, Place, mark};

use super::Refusal;

/// Whose tasks a caller reaches, where the server authenticates its callers: the agent's
/// authorization model for its tasks, given to
/// [`Authentication::ownership`](super::Authentication::ownership).
///
/// A task belongs to the owner of the caller that made it: every task method (`GetTask`,
/// `CancelTask`, `SubscribeToTask`, a message that answers a task, the four push-config
/// methods) answers a task of another owner exactly as a task that does not exist, and
/// `ListTasks` lists the caller's owner's tasks alone, on every binding and every store. The
/// check is made on the task's id, before any store is read (see
/// [`Store`](crate::server::store::Store) on task ids).
///
/// | model | a caller's tasks are |
/// |---|---|
/// | [`subject`](Self::subject) (the default) | its own: those made under the same scheme and subject (a token's `sub`, an API key's owner) |
/// | [`claim`](Self::claim) | its group's: those of every caller whose credential carries the same value of a claim (`org`, `team`) |
/// | [`by`](Self::by) | those of the key a function of yours makes of the caller |
/// | [`tenant`](Self::tenant) | the tenant's: every caller of a tenant reaches its tasks (the tenant is the only boundary) |
///
/// A caller with the [`admin_scope`](Self::admin_scope), where one is named, reaches every
/// task of its tenant. Anonymous callers (of an agent whose card lets them in beside
/// authenticated ones) share the tasks anonymous callers make, and reach no other. A task
/// made before its agent authenticated callers (or under [`tenant`](Self::tenant)) has no
/// owner: only an administrator reaches it. An agent that authenticates nobody (no security
/// on its card, no [`Authentication`](super::Authentication)) keeps tasks by tenant alone.
///
/// A caller that the model cannot place (no such claim, or your function says `None`) is
/// refused with `403`.
///
/// ```
/// use a2a_card::server::auth::{Authentication, Ownership};
///
/// // Tasks shared by the members of an organisation; an operator sees them all.
/// let auth = Authentication::new()
///     .ownership(Ownership::claim("org").admin_scope("tasks:admin"));
/// # drop(auth);
/// ```
#[derive(Clone)]
pub struct Ownership {
    by: By,
    admin: Option<String>,
}

#[derive(Clone)]
enum By {
    Subject,
    Claim(String),
    Tenant,
    Key(KeyOf),
}

/// The key a function of the user's makes of a caller (see [`Ownership::by`]).
type KeyOf = Arc<dyn Fn(&Principal) -> Option<String> + Send + Sync>;

impl Default for Ownership {
    fn default() -> Self {
        Ownership::subject()
    }
}

impl fmt::Debug for Ownership {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let by = match &self.by {
            By::Subject => "subject".to_owned(),
            By::Claim(claim) => format!("claim `{claim}`"),
            By::Tenant => "tenant".to_owned(),
            By::Key(_) => "a function".to_owned(),
        };
        f.debug_struct("Ownership")
            .field("by", &by)
            .field("admin", &self.admin)
            .finish()
    }
}

impl Ownership {
    /// Each caller reaches its own tasks: those made under the same security scheme with the
    /// same subject (the default). Two schemes are two owners, even for one subject.
    ///
    /// ```
    /// use a2a_card::server::auth::{Authentication, Ownership};
    /// let auth = Authentication::new().ownership(Ownership::subject());
    /// # drop(auth);
    /// ```
    pub fn subject() -> Self {
        Ownership {
            by: By::Subject,
            admin: None,
        }
    }

    /// The callers whose credential carries the same value of claim `claim` (a group, an
    /// organisation) share their tasks. A caller without the claim is refused (`403`).
    ///
    /// ```
    /// use a2a_card::server::auth::{Authentication, Ownership};
    /// let auth = Authentication::new().ownership(Ownership::claim("org"));
    /// # drop(auth);
    /// ```
    pub fn claim(claim: impl Into<String>) -> Self {
        Ownership {
            by: By::Claim(claim.into()),
            admin: None,
        }
    }

    /// The callers `key` gives the same key share their tasks; `None` refuses the caller
    /// (`403`).
    ///
    /// ```
    /// use a2a_card::server::auth::{Authentication, Ownership};
    ///
    /// // A team from the API key's owner (`team-blue/ci`), else the token's subject.
    /// let auth = Authentication::new().ownership(Ownership::by(|caller| {
    ///     Some(caller.subject().split('/').next().unwrap_or_default().to_owned())
    /// }));
    /// # drop(auth);
    /// ```
    pub fn by<F>(key: F) -> Self
    where
        F: Fn(&Principal) -> Option<String> + Send + Sync + 'static,
    {
        Ownership {
            by: By::Key(Arc::new(key)),
            admin: None,
        }
    }

    /// No owner: every caller of a tenant reaches all of its tasks (the tenant, and the agent
    /// in a host, are the only boundaries), as for an agent that authenticates nobody.
    ///
    /// ```
    /// use a2a_card::server::auth::{Authentication, Ownership};
    /// let auth = Authentication::new().ownership(Ownership::tenant());
    /// # drop(auth);
    /// ```
    pub fn tenant() -> Self {
        Ownership {
            by: By::Tenant,
            admin: None,
        }
    }

    /// Callers holding scope `scope` reach every task of their tenant, whoever owns it (the
    /// tasks they make are their own, as any caller's).
    ///
    /// ```
    /// use a2a_card::server::auth::{Authentication, Ownership};
    /// let auth = Authentication::new().ownership(Ownership::subject().admin_scope("tasks:admin"));
    /// # drop(auth);
    /// ```
    pub fn admin_scope(mut self, scope: impl Into<String>) -> Self {
        self.admin = Some(scope.into());
        self
    }

    /// Where the tasks of a call in the tenant whose ids begin with `tenant` are, for
    /// `caller` (`None`: anonymous).
    pub(crate) fn place(
        &self,
        tenant: String,
        caller: Option<&Principal>,
    ) -> Result<Place, Refusal> {
        let Some(caller) = caller else {
            return Ok(match self.by {
                By::Tenant => Place::new(tenant, None, false),
                _ => Place::new(tenant, Some(ANONYMOUS), false),
            });
        };
        let all = self
            .admin
            .as_deref()
            .is_some_and(|scope| caller.has_scope(scope));
        let key = match &self.by {
            By::Tenant => return Ok(Place::new(tenant, None, false)),
            By::Subject => Some(format!("{}/{}", caller.scheme(), caller.subject())),
            By::Claim(claim) => caller.claims().get(claim).and_then(|value| {
                let key = match value {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Null => return None,
                    other => other.to_string(),
                };
                (!key.is_empty()).then(|| format!("claim/{claim}/{key}"))
            }),
            By::Key(key) => key(caller).map(|key| format!("key/{key}")),
        };
        match key {
            Some(key) => Ok(Place::new(tenant, Some(&mark(&key)), all)),
            None => Err(Refusal::Forbidden {
                challenges: Vec::new(),
                message: match &self.by {
                    By::Claim(claim) => format!(
                        "the caller's credential carries no `{claim}` claim, by which this agent keeps its tasks"
                    ),
                    _ => "this agent cannot tell whose tasks the caller's are".to_owned(),
                },
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::principal::Identity;

    fn caller(subject: &str) -> Principal {
        Principal::new("bearer", Identity::new(subject))
    }

    #[test]
    fn each_subject_is_an_owner_and_an_admin_reaches_all() {
        let model = Ownership::subject().admin_scope("admin");
        let alice = model.place("acme:".into(), Some(&caller("alice"))).unwrap();
        let bob = model.place("acme:".into(), Some(&caller("bob"))).unwrap();
        assert_ne!(alice.reach, bob.reach);
        let root = Principal::new("bearer", Identity::new("root").with_scopes(["admin"]));
        let root = model.place("acme:".into(), Some(&root)).unwrap();
        assert_eq!(root.reach, "acme:");
        assert!(root.make.starts_with("acme:") && root.make.ends_with('.'));
        let anonymous = model.place("acme:".into(), None).unwrap();
        assert_eq!(anonymous.reach, "acme:anon.");
    }

    #[test]
    fn a_claim_groups_callers_and_its_absence_is_refused() {
        let model = Ownership::claim("org");
        let member = |sub: &str, org: &str| {
            let mut claims = serde_json::Map::new();
            claims.insert("org".into(), org.into());
            Principal::new("bearer", Identity::new(sub).with_claims(claims))
        };
        let a = model
            .place(String::new(), Some(&member("a", "blue")))
            .unwrap();
        let b = model
            .place(String::new(), Some(&member("b", "blue")))
            .unwrap();
        let c = model
            .place(String::new(), Some(&member("c", "red")))
            .unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let refused = model.place(String::new(), Some(&caller("nobody")));
        assert!(matches!(refused, Err(Refusal::Forbidden { .. })));
    }

    #[test]
    fn the_tenant_model_has_no_owner() {
        let place = Ownership::tenant()
            .place("acme:".into(), Some(&caller("alice")))
            .unwrap();
        assert_eq!(
            (place.make.as_str(), place.reach.as_str()),
            ("acme:", "acme:")
        );
    }
}
