//! The console's routes ([`router`]) and their handlers: each admits its request (its
//! operator, or the refusal page), reads what it shows through the lifecycle, and answers
//! with a page; the forms' bodies read here.

use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use subtle::ConstantTimeEq;

use super::access::digest;
use super::{COOKIE, Console, Served, html, pages, secured};
use crate::server::ServerError;
use crate::server::auth::{Guard, Refusal};
use crate::server::lifecycle::Lifecycle;
use crate::server::limits::Limits;

/// The largest form body the console reads (a cancel's CSRF token, a sign-in's token).
const FORM_LIMIT: usize = 8 * 1024;

const CSS: &str = include_str!("console.css");
const JS: &str = include_str!("console.js");

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

/// The answer to a request the console refused (`refusal`): its status and challenges, no
/// page content (a browser is shown where to sign in, where a token is allowed).
fn refused(served: &Served, refusal: &Refusal, base: &str) -> Response {
    let login = (!served.console.tokens.is_empty()).then(|| format!("{base}/login"));
    let body = pages::refused(refusal.message(), login.as_deref(), base);
    refusal.over_http(html(StatusCode::OK, body))
}

/// `GET <path>`: the tasks.
async fn list(State(served): State<Arc<Served>>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    let (base, operator) = match served.operator(&parts).await {
        Ok(admitted) => admitted,
        Err((refusal, base)) => return refused(&served, &refusal, &base),
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
        Err((refusal, base)) => return refused(&served, &refusal, &base),
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
        Err((refusal, base)) => return refused(&served, &refusal, &base),
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
        Err((refusal, base)) => return refused(&served, &refusal, &base),
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
