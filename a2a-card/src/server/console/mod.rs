//! The operators' console (feature `console`, on with
//! [`Server::console`](crate::server::Server::console)): plain HTML pages, served under the
//! path the server is told, that show an agent's tasks and let an operator steer them.
//!
//! | page | what |
//! |---|---|
//! | `GET <path>` | the tasks, newest status first, paged through the store's own listing (its cursor), filtered by state, skill, tenant and caller, searched; counts by state; tasks waiting for an answer or working for long flagged |
//! | `GET <path>/tasks/{id}` | a task: its status history (from the store's event log), messages, artifacts (typed data shown as data), and for a durable skill's task its journal (steps, sleeps with their deadlines, answers, calls to other agents with their remote task ids, markers); refreshed while the task runs; for a task failed by a replay that diverged, what diverged |
//! | `POST <path>/tasks/{id}/cancel` | cancels the task through the lifecycle's `CancelTask` (the path every binding's cancel takes); a form with a CSRF token |
//! | `GET <path>/replicas` | the processes on the store (which is live, the lease, the running tasks each owns), where the store keeps them, and the limits in force |
//! | `GET`/`POST <path>/login` | where a console token is allowed: the token typed once, kept in a cookie for the console's path alone |
//!
//! **Who may use it.** Only the callers the operator names ([`Console::allow_scope`],
//! [`Console::allow_role`], [`Console::allow_token`]). A caller is checked by the agent's own
//! authentication (the card's security schemes and their verifiers, see
//! [`auth`](crate::server::auth)), and everyone else is refused as any protected route refuses:
//! `401` with the schemes' challenges without credentials, `403` without the scope or role,
//! `429` past the failed-login limit; a refusal carries no page content. A server that names
//! nobody, or a scope or role on an agent that authenticates nobody, does not serve
//! ([`ServerError::Console`](crate::server::ServerError::Console)).
//!
//! The pages are the server's own HTML, with one small script (the live refresh of a running
//! task) and one style sheet, embedded; nothing is fetched from elsewhere, no inline script
//! runs (`Content-Security-Policy`), nothing is cached (`Cache-Control: no-store`). Every
//! value shown is escaped; tokens and credentials never appear in a page or the log.
//!
//! ```no_run
//! use a2a_card::server::{Console, Server};
//! use a2a_card::server::store::Tasks;
//! use a2a_card::{agent, skill};
//!
//! struct Echo;
//! /// Says back what it is told.
//! #[agent(url = "http://127.0.0.1:9000")]
//! impl Echo {
//!     /// Echoes the text.
//!     #[skill]
//!     fn echo(&self, text: String) -> String { text }
//! }
//!
//! # async fn run() -> Result<(), a2a_card::server::ServerError> {
//! let token = std::env::var("CONSOLE_TOKEN").expect("a token for the console");
//! Server::new(Echo)
//!     .tasks(Tasks::sqlite("echo.tasks.db"))
//!     .console(Console::at("/console").allow_token(token))
//!     .bind("127.0.0.1:9000")
//!     .await?
//!     .serve()
//!     .await
//! # }
//! ```
//!
//! One file per part: `access.rs` (who is using the console: the console's token, the
//! agent's authentication, the CSRF token of their forms), `routes.rs` (the routes and their
//! handlers), `pages/` (the pages, written as HTML); this file holds the console's settings
//! and what its handlers share.

mod access;
mod pages;
mod routes;

pub(crate) use routes::router;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::principal::Principal;
use crate::server::auth::Guard;
use crate::server::lifecycle::Lifecycle;
use crate::server::limits::Limits;
use access::digest;

/// The name of the cookie a console token is kept in after sign-in (its digest, not the token).
const COOKIE: &str = "a2a-console";

/// Scripts and styles only from this server, no inline ones; forms post to it alone.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                   img-src 'self' data:; base-uri 'none'; form-action 'self'; \
                   frame-ancestors 'none'";

/// The operators' console of a served agent: where it is served, who may use it, and when a
/// task stands out. Given to [`Server::console`](crate::server::Server::console).
///
/// | page | what |
/// |---|---|
/// | `GET <path>` | the tasks, newest status first, paged through the store's own listing (its cursor), filtered by state, skill, tenant and caller, searched; counts by state; tasks waiting for an answer or working for long flagged |
/// | `GET <path>/tasks/{id}` | a task: its status history (from the store's event log), messages, artifacts (typed data shown as data), and for a durable skill's task its journal (steps, sleeps with their deadlines, answers, calls to other agents with their remote task ids, markers); refreshed while the task runs; for a task failed by a replay that diverged, what diverged |
/// | `POST <path>/tasks/{id}/cancel` | cancels the task through the lifecycle's `CancelTask` (the path every binding's cancel takes); a form with a CSRF token |
/// | `GET <path>/replicas` | the processes on the store (which is live, the lease, the running tasks each owns), where the store keeps them, and the limits in force |
/// | `GET`/`POST <path>/login` | where a console token is allowed: the token typed once, kept in a cookie for the console's path alone |
///
/// **Who may use it.** Only the callers the operator names ([`Console::allow_scope`],
/// [`Console::allow_role`], [`Console::allow_token`]). A caller is checked by the agent's own
/// authentication (the card's security schemes and their verifiers, see
/// [`auth`](crate::server::auth)), and everyone else is refused as any protected route refuses:
/// `401` with the schemes' challenges without credentials, `403` without the scope or role,
/// `429` past the failed-login limit; a refusal carries no page content. A server that names
/// nobody, or a scope or role on an agent that authenticates nobody, does not serve
/// ([`ServerError::Console`](crate::server::ServerError::Console)).
///
/// The pages are the server's own HTML, with one small script (the live refresh of a running
/// task) and one style sheet, embedded; nothing is fetched from elsewhere, no inline script
/// runs (`Content-Security-Policy`), nothing is cached (`Cache-Control: no-store`). Every
/// value shown is escaped; tokens and credentials never appear in a page or the log.
///
///
/// ```
/// use std::time::Duration;
/// use a2a_card::server::Console;
///
/// let console = Console::at("/console")
///     .allow_scope("ops:read")                 // a scope of the card's security schemes
///     .allow_role("operator")                  // or a role the caller's token claims
///     .allow_token("a-long-random-console-token") // or a token for the console alone
///     .long_waiting(Duration::from_secs(30 * 60))
///     .long_working(Duration::from_secs(5 * 60));
/// assert_eq!(console.path(), "/console");
/// assert!(!format!("{console:?}").contains("a-long-random")); // tokens are never shown
/// ```
#[derive(Clone)]
pub struct Console {
    path: String,
    scopes: Vec<String>,
    roles: Vec<String>,
    /// The digests of the tokens allowed ([`digest`]).
    tokens: Vec<[u8; 32]>,
    long_waiting: Duration,
    long_working: Duration,
    refresh: Duration,
    page_size: usize,
}

impl fmt::Debug for Console {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Console")
            .field("path", &self.path)
            .field("scopes", &self.scopes)
            .field("roles", &self.roles)
            .field("tokens", &self.tokens.len())
            .field("long_waiting", &self.long_waiting)
            .field("long_working", &self.long_working)
            .field("refresh", &self.refresh)
            .field("page_size", &self.page_size)
            .finish()
    }
}

impl Console {
    /// The console at `path` (`/console`, `/ops`: from the agent's root; under its mount path
    /// in a [`Host`](crate::server::Host)), allowing nobody yet: name who may use it with
    /// [`allow_scope`](Self::allow_scope), [`allow_role`](Self::allow_role) or
    /// [`allow_token`](Self::allow_token).
    ///
    /// ```
    /// use a2a_card::server::Console;
    /// let console = Console::at("/ops").allow_token("a-long-random-console-token");
    /// assert_eq!(console.path(), "/ops");
    /// ```
    pub fn at(path: impl Into<String>) -> Console {
        Console {
            path: path.into(),
            scopes: Vec::new(),
            roles: Vec::new(),
            tokens: Vec::new(),
            long_waiting: Duration::from_secs(3600),
            long_working: Duration::from_secs(10 * 60),
            refresh: Duration::from_secs(2),
            page_size: 25,
        }
    }

    /// Allows the callers that hold scope `scope` under any of the card's security schemes
    /// (a token's `scope` claim, an API key's scopes): checked by the server's
    /// [`Authentication`](crate::server::auth::Authentication).
    ///
    /// ```
    /// use a2a_card::server::Console;
    /// let console = Console::at("/console").allow_scope("ops:read").allow_scope("ops:admin");
    /// # drop(console);
    /// ```
    pub fn allow_scope(mut self, scope: impl Into<String>) -> Console {
        self.scopes.push(scope.into());
        self
    }

    /// Allows the callers whose credential claims role `role`: a `roles` claim (an array, or
    /// a string of roles separated by spaces) or a `role` claim that holds it, under any of
    /// the card's security schemes.
    ///
    /// ```
    /// use a2a_card::server::Console;
    /// let console = Console::at("/console").allow_role("operator");
    /// # drop(console);
    /// ```
    pub fn allow_role(mut self, role: impl Into<String>) -> Console {
        self.roles.push(role.into());
        self
    }

    /// Allows the callers that present `token`, a secret for the console alone (whatever the
    /// card's security): as `Authorization: Bearer <token>`, or typed once at
    /// `<path>/login`, which keeps its digest in a cookie for the console's path. Only its
    /// digest is kept. Use a long random token (32 characters or more).
    ///
    /// ```
    /// use a2a_card::server::Console;
    /// let token = std::env::var("CONSOLE_TOKEN").unwrap_or_else(|_| "a-long-random-console-token".into());
    /// let console = Console::at("/console").allow_token(token);
    /// # drop(console);
    /// ```
    pub fn allow_token(mut self, token: impl AsRef<str>) -> Console {
        self.tokens.push(digest(token.as_ref()));
        self
    }

    /// A task waiting for an answer (`input-required`, `auth-required`) longer than `after`
    /// is flagged (default: an hour).
    ///
    /// ```
    /// use std::time::Duration;
    /// use a2a_card::server::Console;
    /// let console = Console::at("/console").long_waiting(Duration::from_secs(600));
    /// # drop(console);
    /// ```
    pub fn long_waiting(mut self, after: Duration) -> Console {
        self.long_waiting = after;
        self
    }

    /// A task working (`submitted`, `working`) without a status change for longer than
    /// `after` is flagged (default: ten minutes).
    ///
    /// ```
    /// use std::time::Duration;
    /// use a2a_card::server::Console;
    /// let console = Console::at("/console").long_working(Duration::from_secs(60));
    /// # drop(console);
    /// ```
    pub fn long_working(mut self, after: Duration) -> Console {
        self.long_working = after;
        self
    }

    /// How often a running task's page refreshes itself (default: every 2 s; at least 250
    /// ms).
    ///
    /// ```
    /// use std::time::Duration;
    /// use a2a_card::server::Console;
    /// let console = Console::at("/console").refresh(Duration::from_secs(5));
    /// # drop(console);
    /// ```
    pub fn refresh(mut self, every: Duration) -> Console {
        self.refresh = every.max(Duration::from_millis(250));
        self
    }

    /// How many tasks a page of the list shows (default 25; between 1 and 100).
    ///
    /// ```
    /// use a2a_card::server::Console;
    /// let console = Console::at("/console").page_size(50);
    /// # drop(console);
    /// ```
    pub fn page_size(mut self, tasks: usize) -> Console {
        self.page_size = tasks.clamp(1, 100);
        self
    }

    /// The path the console is served at.
    ///
    /// ```
    /// use a2a_card::server::Console;
    /// assert_eq!(Console::at("/console").path(), "/console");
    /// ```
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Why the console cannot be served as asked, with `guard` (the server's authentication).
    fn check(&self, guard: Option<&Guard>) -> Result<(), String> {
        let path = &self.path;
        let bad = |c: char| c.is_whitespace() || "{}*?#%\\\"'<>".contains(c);
        if !path.starts_with('/') || path.len() < 2 || path.ends_with('/') || path.contains(bad) {
            return Err(format!(
                "`{path}` is not a path for the console: give one such as `/console` (a leading `/`, no trailing `/`, no `{{}}*?#%` or spaces)"
            ));
        }
        if self.scopes.is_empty() && self.roles.is_empty() && self.tokens.is_empty() {
            return Err(
                "it allows nobody: name who may use it with Console::allow_scope, Console::allow_role or Console::allow_token".into(),
            );
        }
        if guard.is_none() && (!self.scopes.is_empty() || !self.roles.is_empty()) {
            return Err(format!(
                "it allows {}, but the server authenticates nobody: declare the card's security and give its verifiers with Server::authentication, or allow a token with Console::allow_token",
                self.allowed()
            ));
        }
        Ok(())
    }

    /// Who may use the console, in words.
    fn allowed(&self) -> String {
        let mut who: Vec<String> = Vec::new();
        who.extend(self.scopes.iter().map(|s| format!("scope `{s}`")));
        who.extend(self.roles.iter().map(|r| format!("role `{r}`")));
        if !self.tokens.is_empty() {
            who.push("the console's token".to_owned());
        }
        who.join(" or ")
    }

    /// Whether `principal` holds an allowed scope or role under any of its schemes.
    fn allows(&self, principal: &Principal) -> bool {
        principal.identities().any(|(_, identity)| {
            self.scopes.iter().any(|s| identity.has_scope(s))
                || roles(identity.claims()).any(|r| self.roles.iter().any(|allowed| allowed == r))
        })
    }
}

/// The roles a credential claims: its `roles` (an array, or roles separated by spaces) and
/// its `role`.
fn roles(claims: &serde_json::Map<String, serde_json::Value>) -> impl Iterator<Item = &str> {
    use serde_json::Value;
    let listed: Vec<&str> = ["roles", "role"]
        .iter()
        .filter_map(|k| claims.get(*k))
        .flat_map(|v| match v {
            Value::String(s) => s.split_whitespace().collect::<Vec<_>>(),
            Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        })
        .collect();
    listed.into_iter()
}

/// What the console's handlers share.
pub(crate) struct Served {
    console: Console,
    lifecycle: Arc<Lifecycle>,
    guard: Option<Arc<Guard>>,
    limits: Limits,
    /// The agent's name, for the pages' titles.
    agent: String,
    /// The tenant the server serves by default (`Server::tenant`).
    tenant: Option<String>,
    /// The key of the CSRF tokens: random, this process's.
    secret: [u8; 32],
}

/// `response` with the console's security headers.
fn secured(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

/// A page of the console.
fn html(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    secured(response)
}

impl Served {
    /// Where the console is, as the browser sees it: under the path a host mounted the agent
    /// at, if any.
    fn base(&self, parts: &Parts) -> String {
        let nested = parts
            .extensions
            .get::<axum::extract::NestedPath>()
            .map(|n| n.as_str().trim_end_matches('/'))
            .unwrap_or("");
        format!("{nested}{}", self.console.path)
    }

    /// The prefix of the ids of the tasks of `tenant` (none: the default tenant).
    fn reach(&self, tenant: Option<&str>) -> String {
        crate::server::store::prefix(self.lifecycle.namespace(), tenant)
    }

    /// Whether task `id` is one of this agent's (its namespace's, in a host's shared store).
    fn ours(&self, id: &str) -> bool {
        match self.lifecycle.namespace() {
            Some(namespace) => id
                .strip_prefix(namespace)
                .is_some_and(|rest| rest.starts_with(':')),
            None => crate::server::store::namespace_of(id).is_none(),
        }
    }
}
