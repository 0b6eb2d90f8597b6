//! The form page (`GET /ui`, on with [`Server::ui`](crate::server::Server::ui)): the card's skills as
//! forms generated from their input schemas, submitted as structured messages, answers shown
//! as cards with the output schema's titles.
//!
//! The assets are the page's own (no framework, nothing fetched from elsewhere), copied from
//! `ui/src/` by `scripts/build-ui.sh` and embedded here; CI checks that they match.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const INDEX: &str = include_str!("ui/index.html");
const APP: &str = include_str!("ui/app.js");
const CSS: &str = include_str!("ui/app.css");
const FORM: &str = include_str!("ui/form.js");

/// Scripts and styles only from this server, no inline ones.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                   img-src 'self' data:; base-uri 'none'; form-action 'none'; \
                   frame-ancestors 'none'";

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    headers.insert(
        header::HeaderName::from_static("x-content-type-options"),
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    response
}

/// The routes of the page and its assets.
pub(crate) fn router() -> axum::Router {
    axum::Router::new()
        .route(
            "/ui",
            get(|| async { asset("text/html; charset=utf-8", INDEX) }),
        )
        .route(
            "/ui/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP) }),
        )
        .route(
            "/ui/app.css",
            get(|| async { asset("text/css; charset=utf-8", CSS) }),
        )
        .route(
            "/ui/form.js",
            get(|| async { asset("text/javascript; charset=utf-8", FORM) }),
        )
}
