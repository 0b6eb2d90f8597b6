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

mod pages;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::principal::Principal;
use crate::server::ServerError;
use crate::server::auth::{Guard, Refusal};
use crate::server::lifecycle::Lifecycle;
use crate::server::limits::{Limits, Peer};

/// The name of the cookie a console token is kept in after sign-in (its digest, not the token).
const COOKIE: &str = "a2a-console";

/// The largest form body the console reads (a cancel's CSRF token, a sign-in's token).
const FORM_LIMIT: usize = 8 * 1024;

/// Scripts and styles only from this server, no inline ones; forms post to it alone.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                   img-src 'self' data:; base-uri 'none'; form-action 'self'; \
                   frame-ancestors 'none'";

const CSS: &str = include_str!("console.css");
const JS: &str = include_str!("console.js");

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

/// The digest a console token is kept and compared as.
fn digest(token: &str) -> [u8; 32] {
    Sha256::new()
        .chain_update(b"a2a-card console token\0")
        .chain_update(token.as_bytes())
        .finalize()
        .into()
}

/// Who is using the console: a key for the CSRF token of their forms, and how to name them.
#[derive(Debug, Clone)]
struct Operator {
    key: String,
    /// Whether they came in with the token's cookie (they may sign out).
    cookie: bool,
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

/// The console's routes, from the agent's root; why not, when the console cannot be served
/// as asked.
pub(crate) fn router(
    console: Console,
    lifecycle: Arc<Lifecycle>,
    guard: Option<Arc<Guard>>,
    limits: Limits,
    agent: String,
    tenant: Option<String>,
) -> Result<axum::Router, ServerError> {
    console
        .check(guard.as_deref())
        .map_err(ServerError::Console)?;
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(|e| {
        ServerError::Console(format!(
            "the system gave no random bytes for its CSRF tokens ({e})"
        ))
    })?;
    let path = console.path.clone();
    let tokens = !console.tokens.is_empty();
    let served = Arc::new(Served {
        console,
        lifecycle,
        guard,
        limits,
        agent,
        tenant,
        secret,
    });
    let mut router = axum::Router::new()
        .route(&path, get(list))
        .route(&format!("{path}/"), get(list))
        .route(&format!("{path}/tasks/{{id}}"), get(task))
        .route(&format!("{path}/tasks/{{id}}/cancel"), post(cancel))
        .route(&format!("{path}/replicas"), get(replicas))
        .route(
            &format!("{path}/console.css"),
            get(|| async { asset("text/css; charset=utf-8", CSS) }),
        )
        .route(
            &format!("{path}/console.js"),
            get(|| async { asset("text/javascript; charset=utf-8", JS) }),
        );
    if tokens {
        router = router
            .route(&format!("{path}/login"), get(login_page).post(login))
            .route(&format!("{path}/logout"), post(logout));
    }
    Ok(router.with_state(served))
}

/// A static asset of the console.
fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    secured(response)
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
    /// the refusal page when it comes from nobody the console allows.
    async fn operator(&self, parts: &Parts) -> Result<(String, Operator), Response> {
        let base = self.base(parts);
        match self.admit(parts).await {
            Ok(operator) => Ok((base, operator)),
            Err(refusal) => Err(self.refused(&refusal, &base)),
        }
    }

    /// The answer to a refused request: its status and challenges, no page content (a
    /// browser is shown where to sign in, where a token is allowed).
    fn refused(&self, refusal: &Refusal, base: &str) -> Response {
        let login = (!self.console.tokens.is_empty()).then(|| format!("{base}/login"));
        let body = pages::refused(refusal.message(), login.as_deref(), base);
        refusal.over_http(html(StatusCode::OK, body))
    }

    /// The CSRF token of `operator`'s forms.
    fn csrf(&self, operator: &Operator) -> String {
        let mac = Sha256::new()
            .chain_update(self.secret)
            .chain_update(b"\0csrf\0")
            .chain_update(operator.key.as_bytes())
            .finalize();
        crate::server::store::hex(&mac[..16])
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

/// The pairs of a query string or form body.
fn pairs(text: &str) -> Vec<(String, String)> {
    url::form_urlencoded::parse(text.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// The body of a form post, as pairs; why not, as the answer to give.
async fn form(request: Request) -> Result<(Parts, Vec<(String, String)>), Response> {
    let (parts, body) = request.into_parts();
    let is_form = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    let bytes = match axum::body::to_bytes(body, FORM_LIMIT).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return Err(html(
                StatusCode::PAYLOAD_TOO_LARGE,
                pages::problem(
                    "Too large",
                    "the form sent more than the console reads (8 KiB): send the page's own form",
                    None,
                ),
            ));
        }
    };
    if !is_form && !bytes.is_empty() {
        return Err(html(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            pages::problem(
                "Not a form",
                "the console takes `application/x-www-form-urlencoded` forms: send the page's own form",
                None,
            ),
        ));
    }
    let text = String::from_utf8_lossy(&bytes);
    Ok((parts, pairs(&text)))
}

/// `GET <path>`: the tasks.
async fn list(State(served): State<Arc<Served>>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    let (base, operator) = match served.operator(&parts).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let query = pairs(parts.uri.query().unwrap_or(""));
    let filter = pages::Filter::from_query(&query, served.tenant.as_deref());
    match pages::list_page(&served, &base, &operator, &filter).await {
        Ok(body) => html(StatusCode::OK, body),
        Err(e) => store_failed(&base, &e),
    }
}

/// `GET <path>/tasks/{id}`: a task (with `?part=live`: its live part alone, for the refresh).
async fn task(
    State(served): State<Arc<Served>>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let (base, operator) = match served.operator(&parts).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let query = pairs(parts.uri.query().unwrap_or(""));
    let live_only = query.iter().any(|(k, v)| k == "part" && v == "live");
    let note = query
        .iter()
        .find(|(k, _)| k == "done")
        .map(|(_, v)| v.clone());
    if !served.ours(&id) {
        return not_found(&base, &id);
    }
    match pages::task_page(&served, &base, &operator, &id, live_only, note.as_deref()).await {
        Ok(Some(body)) => html(StatusCode::OK, body),
        Ok(None) => not_found(&base, &id),
        Err(e) => store_failed(&base, &e),
    }
}

/// `POST <path>/tasks/{id}/cancel`: cancels the task through the lifecycle.
async fn cancel(
    State(served): State<Arc<Served>>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let (parts, fields) = match form(request).await {
        Ok(form) => form,
        Err(answer) => return answer,
    };
    let (base, operator) = match served.operator(&parts).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let sent = fields
        .iter()
        .find(|(k, _)| k == "csrf")
        .map(|(_, v)| v.as_str())
        .unwrap_or("");
    let expected = served.csrf(&operator);
    if !bool::from(sent.as_bytes().ct_eq(expected.as_bytes())) {
        return html(
            StatusCode::FORBIDDEN,
            pages::problem(
                "Not cancelled",
                "the form's CSRF token is missing or not this console's: open the task's page again and cancel from there",
                Some(&base),
            ),
        );
    }
    if !served.ours(&id) {
        return not_found(&base, &id);
    }
    let at = format!("{base}/tasks/{}", pages::encode(&id));
    match served.lifecycle.cancel_admitted(&id).await {
        Ok(_) => {
            tracing::info!(task = %id, operator = %operator.key.split('/').next().unwrap_or(""), "task cancelled from the console");
            see_other(&format!("{at}?done=cancelled"))
        }
        Err(e) if e.code == a2a::error_code::TASK_NOT_FOUND => not_found(&base, &id),
        Err(e) if e.code == a2a::error_code::TASK_NOT_CANCELABLE => html(
            StatusCode::CONFLICT,
            pages::problem(
                "Not cancelled",
                "the task has ended (completed, failed or rejected) and can no longer be cancelled",
                Some(&at),
            ),
        ),
        Err(e) => store_failed(&base, &e),
    }
}

/// `GET <path>/replicas`: the replicas and the limits.
async fn replicas(State(served): State<Arc<Served>>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    let (base, operator) = match served.operator(&parts).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    match pages::replicas_page(&served, &base, &operator).await {
        Ok(body) => html(StatusCode::OK, body),
        Err(e) => store_failed(&base, &e),
    }
}

/// `GET <path>/login`: the form a console token is typed in.
async fn login_page(State(served): State<Arc<Served>>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    let base = served.base(&parts);
    html(StatusCode::OK, pages::login(&served, &base, None))
}

/// `POST <path>/login`: a console token typed in; kept (its digest) in a cookie for the
/// console's path.
async fn login(State(served): State<Arc<Served>>, request: Request) -> Response {
    let (parts, fields) = match form(request).await {
        Ok(form) => form,
        Err(answer) => return answer,
    };
    let base = served.base(&parts);
    let typed = fields
        .iter()
        .find(|(k, _)| k == "token")
        .map(|(_, v)| v.trim())
        .unwrap_or("");
    let kept = digest(typed);
    let known = served
        .console
        .tokens
        .iter()
        .any(|t| bool::from(t.ct_eq(&kept)));
    if typed.is_empty() || !known {
        return html(
            StatusCode::UNAUTHORIZED,
            pages::login(
                &served,
                &base,
                Some(
                    "That is not the console's token: type the token the server was started with.",
                ),
            ),
        );
    }
    let secure = parts
        .headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("https"));
    let cookie = format!(
        "{COOKIE}={}; Path={base}; HttpOnly; SameSite=Strict{}",
        crate::server::store::hex(&kept),
        if secure { "; Secure" } else { "" }
    );
    let mut response = see_other(&base);
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// `POST <path>/logout`: the token's cookie cleared.
async fn logout(State(served): State<Arc<Served>>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    let base = served.base(&parts);
    let mut response = see_other(&format!("{base}/login"));
    if let Ok(value) = HeaderValue::from_str(&format!(
        "{COOKIE}=; Path={base}; HttpOnly; SameSite=Strict; Max-Age=0"
    )) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// `303 See Other` to `to`.
fn see_other(to: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(value) = HeaderValue::from_str(to) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    secured(response)
}

fn not_found(base: &str, id: &str) -> Response {
    html(
        StatusCode::NOT_FOUND,
        pages::problem(
            "No such task",
            &format!(
                "the store has no task `{id}` of this agent (it may have been removed by retention): look for it in the list"
            ),
            Some(base),
        ),
    )
}

fn store_failed(base: &str, e: &a2a::A2AError) -> Response {
    tracing::warn!(error = %e.message, "the console could not read the task store");
    html(
        StatusCode::SERVICE_UNAVAILABLE,
        pages::problem(
            "The store did not answer",
            &format!(
                "the task store could not be read ({}): check that the database is up, then reload the page",
                e.message
            ),
            Some(base),
        ),
    )
}
