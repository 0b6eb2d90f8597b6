//! Stopping without losing work: the drain a served listener goes through when it is told to
//! stop (SIGTERM, Ctrl-C, or the future given to
//! [`serve_with_shutdown`](crate::server::Listening::serve_with_shutdown)), and the health routes
//! an orchestrator probes.
//!
//! Once the drain begins, [`READY_PATH`] answers `503`; a request that arrives is refused
//! (`503`, `Connection: close`, `Retry-After: 1`) so that its caller sends it again elsewhere;
//! each open event stream (SSE) ends, so that its caller resumes elsewhere with
//! `Last-Event-ID`, and each gRPC stream ends with `UNAVAILABLE` ([`GRPC_DRAINED`]); every
//! other answer says `Connection: close`. The requests under way
//! finish, and the tasks only this process can finish (those of skills that are not durable,
//! at work) run on, until both are done or the drain deadline passes; then the process gives
//! up what it still runs (see [`Listening::serve`](crate::server::Listening::serve)).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, Version, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use tokio::sync::watch;

use crate::server::store::Store;

/// The status message of a task that was still running (or waiting for an answer) when the
/// drain of its agent's listener ended: the task fails with it. A durable skill's task does
/// not: another process takes it over (see [`Listening::serve`](crate::server::Listening::serve)).
pub const SHUT_DOWN: &str = "the agent shut down before this task finished (its drain timeout passed, or the task waited for an answer); send the request again as a new task";

/// The liveness route: `200` while the process serves.
pub(crate) const LIVE_PATH: &str = "/healthz";
/// The readiness route: `200` while the server takes requests, `503` once its drain began.
pub(crate) const READY_PATH: &str = "/readyz";

/// Whether `path` is one of the health routes, which the drain's rules leave alone.
pub(crate) fn is_probe(path: &str) -> bool {
    path == LIVE_PATH || path == READY_PATH
}

/// The drain of one listener: whether it began, and the requests under way.
pub(crate) struct Drain {
    began: watch::Sender<bool>,
    /// Requests under way (not yet answered; a stream counts until its answer begins).
    in_flight: AtomicUsize,
}

impl Drain {
    pub(crate) fn new() -> Arc<Drain> {
        Arc::new(Drain {
            began: watch::channel(false).0,
            in_flight: AtomicUsize::new(0),
        })
    }

    /// Begins the drain (once; later calls change nothing).
    pub(crate) fn begin(&self) {
        self.began.send_replace(true);
    }

    /// Whether the drain began.
    pub(crate) fn draining(&self) -> bool {
        *self.began.borrow()
    }

    /// Resolves once the drain begins.
    fn begun(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut began = self.began.subscribe();
        async move {
            // The sender lives as long as the drain, which outlives every request.
            let _ = began.wait_for(|b| *b).await;
        }
    }

    /// Waits until no request is under way and `busy` says no work of this process is left,
    /// or `deadline` passed: whether the work was done in time. `busy` is asked at once, then
    /// every 20 ms, whatever the requests under way (it may do work of its own first: the
    /// server hands over there the tasks no caller reads any more).
    pub(crate) async fn settle<F>(&self, deadline: Duration, busy: impl Fn() -> F) -> bool
    where
        F: std::future::Future<Output = bool>,
    {
        let done = async {
            loop {
                let busy = busy().await;
                if self.in_flight.load(Ordering::Acquire) == 0 && !busy {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        tokio::time::timeout(deadline, done).await.is_ok()
    }
}

/// What a gRPC call still streaming is told when the drain ends it (with `UNAVAILABLE`, the
/// status a client retries elsewhere).
pub(crate) const GRPC_DRAINED: &str = "the server is shutting down: subscribe to the task again, on another replica or once this one is back";

/// A gRPC answer's body that ends when `cut` resolves: between two messages (each data frame
/// holds whole ones), with the trailers of an `UNAVAILABLE` status ([`GRPC_DRAINED`]) instead of
/// its own. An answer that ends first ends as it would.
fn grpc_cut(body: Body, cut: impl std::future::Future<Output = ()> + Send + 'static) -> Body {
    use http_body_util::BodyStream;
    let frames = BodyStream::new(body);
    let state = (Some(frames), Box::pin(cut));
    let stream = futures::stream::unfold(state, |(frames, mut cut)| async move {
        let mut frames = frames?;
        match futures::future::select(frames.next(), cut.as_mut()).await {
            futures::future::Either::Left((Some(frame), _)) => {
                let last = frame.as_ref().is_ok_and(http_body::Frame::is_trailers);
                Some((frame, (if last { None } else { Some(frames) }, cut)))
            }
            futures::future::Either::Left((None, _)) => None,
            futures::future::Either::Right(((), _)) => {
                let mut trailers = axum::http::HeaderMap::with_capacity(2);
                // UNAVAILABLE.
                trailers.insert("grpc-status", HeaderValue::from_static("14"));
                // Printable ASCII but `%`: carried as it is (the gRPC spec's percent-encoding).
                trailers.insert("grpc-message", HeaderValue::from_static(GRPC_DRAINED));
                Some((Ok(http_body::Frame::trailers(trailers)), (None, cut)))
            }
        }
    });
    Body::new(http_body_util::StreamBody::new(stream))
}

/// A request under way, counted while it lives.
struct InFlight<'a>(&'a Drain);

impl<'a> InFlight<'a> {
    fn enter(drain: &'a Drain) -> Self {
        drain.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(drain)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// `req` answered by `next` under the drain's rules: what every request of a served listener
/// meets first (the health routes apart; see the [module docs](self)).
pub(crate) async fn watched<F>(
    drain: &Drain,
    req: Request,
    next: impl FnOnce(Request) -> F,
) -> Response
where
    F: std::future::Future<Output = Response>,
{
    let http1 = req.version() <= Version::HTTP_11;
    // A gRPC method that streams its answer (the others answer in one message).
    let path = req.uri().path();
    let grpc_stream = path.ends_with("/SendStreamingMessage") || path.ends_with("/SubscribeToTask");
    if drain.draining() {
        return refused(http1);
    }
    let mut res = {
        let _counted = InFlight::enter(drain);
        next(req).await
    };
    let content_type = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if content_type.starts_with("text/event-stream") {
        // Ended between two events once the drain begins: the caller resumes elsewhere from
        // the last id it read.
        let (parts, body) = res.into_parts();
        let body = body.into_data_stream().take_until(drain.begun());
        res = Response::from_parts(parts, Body::from_stream(body));
    } else if grpc_stream
        && content_type.starts_with("application/grpc")
        && !http_body::Body::is_end_stream(res.body())
    {
        // (A refusal is trailers-only: headers that end the stream, left as they are.)
        let (parts, body) = res.into_parts();
        res = Response::from_parts(parts, grpc_cut(body, drain.begun()));
    }
    if http1 && drain.draining() {
        res.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    res
}

/// The answer to a request that arrives during the drain.
fn refused(http1: bool) -> Response {
    let mut res = (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, HeaderValue::from_static("1"))],
        "the agent is shutting down; send the request again (another replica, or this agent once restarted, answers it)",
    )
        .into_response();
    if http1 {
        res.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    res
}

/// The health routes: [`LIVE_PATH`] and [`READY_PATH`] (not ready while draining, or while
/// one of `stores` was not reached at its last check), outside every other layer (no
/// authentication, no telemetry).
pub(crate) fn health(drain: &Arc<Drain>, stores: Vec<Arc<dyn Store>>) -> axum::Router {
    let ready = Arc::clone(drain);
    axum::Router::new()
        .route(LIVE_PATH, axum::routing::get(|| async { "ok" }))
        .route(
            READY_PATH,
            axum::routing::get(move || {
                let answer = if ready.draining() {
                    (StatusCode::SERVICE_UNAVAILABLE, "draining").into_response()
                } else if !stores.iter().all(|s| s.reachable()) {
                    let why = "the task store cannot be reached";
                    (StatusCode::SERVICE_UNAVAILABLE, why).into_response()
                } else {
                    "ready".into_response()
                };
                async move { answer }
            }),
        )
}

/// Resolves at the first SIGTERM (Unix) or Ctrl-C (SIGINT) the process gets. A signal that
/// cannot be listened to is said in the log, and the other still counts.
pub(crate) async fn signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %e, "Ctrl-C cannot be listened to");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "SIGTERM cannot be listened to");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    futures::future::select(std::pin::pin!(ctrl_c), std::pin::pin!(term)).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::extract::State;
    use axum::middleware::Next;
    use tower::ServiceExt as _;

    fn app(drain: &Arc<Drain>) -> axum::Router {
        let events = || async {
            let body = Body::from_stream(
                futures::stream::iter([Ok::<_, std::io::Error>(axum::body::Bytes::from_static(
                    b"id: 1\ndata: {}\n\n",
                ))])
                .chain(futures::stream::pending()),
            );
            ([(header::CONTENT_TYPE, "text/event-stream")], body)
        };
        axum::Router::new()
            .route("/", axum::routing::get(|| async { "answer" }))
            .route("/events", axum::routing::get(events))
            .layer(axum::middleware::from_fn_with_state(
                Arc::clone(drain),
                |State(drain): State<Arc<Drain>>, req: Request, next: Next| async move {
                    watched(&drain, req, |req| next.run(req)).await
                },
            ))
            .merge(health(drain, Vec::new()))
    }

    async fn get(app: &axum::Router, path: &str) -> Response {
        let req = Request::get(path).body(Body::empty()).unwrap();
        app.clone().oneshot(req).await.unwrap()
    }

    #[tokio::test]
    async fn once_the_drain_begins_readiness_fails_and_new_requests_are_refused() {
        let drain = Drain::new();
        let app = app(&drain);
        assert_eq!(get(&app, READY_PATH).await.status(), StatusCode::OK);
        let res = get(&app, "/").await;
        assert_eq!(res.status(), StatusCode::OK);
        assert!(res.headers().get(header::CONNECTION).is_none());
        drain.begin();
        assert_eq!(
            get(&app, READY_PATH).await.status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
        assert_eq!(get(&app, LIVE_PATH).await.status(), StatusCode::OK);
        let res = get(&app, "/").await;
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(res.headers()[header::CONNECTION], "close");
        assert_eq!(res.headers()[header::RETRY_AFTER], "1");
    }

    /// A store whose last check did not reach it.
    struct Down;

    #[async_trait::async_trait]
    impl Store for Down {
        fn tasks(&self) -> Arc<dyn a2a_server::TaskStore> {
            Arc::new(a2a_server::InMemoryTaskStore::new())
        }
        fn reachable(&self) -> bool {
            false
        }
    }

    #[tokio::test]
    async fn readiness_fails_while_a_store_is_not_reached() {
        let drain = Drain::new();
        let up: Arc<dyn Store> = Arc::new(
            Arc::new(a2a_server::InMemoryTaskStore::new()) as Arc<dyn a2a_server::TaskStore>
        );
        let app = health(&drain, vec![Arc::clone(&up)]);
        assert_eq!(get(&app, READY_PATH).await.status(), StatusCode::OK);
        let app = health(&drain, vec![up, Arc::new(Down)]);
        let res = get(&app, READY_PATH).await;
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(get(&app, LIVE_PATH).await.status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn an_open_stream_ends_when_the_drain_begins() {
        let drain = Drain::new();
        let app = app(&drain);
        let res = get(&app, "/events").await;
        let mut body = res.into_body().into_data_stream();
        let first = body.next().await.unwrap().unwrap();
        assert_eq!(&first[..], b"id: 1\ndata: {}\n\n");
        drain.begin();
        let end = tokio::time::timeout(Duration::from_secs(5), body.next()).await;
        assert!(matches!(end, Ok(None)), "the stream ended");
    }

    #[tokio::test]
    async fn the_drain_settles_once_nothing_is_under_way_or_at_its_deadline() {
        let drain = Drain::new();
        assert!(
            drain
                .settle(Duration::from_secs(5), || async { false })
                .await
        );
        let counted = InFlight::enter(&drain);
        assert!(
            !drain
                .settle(Duration::from_millis(100), || async { false })
                .await
        );
        drop(counted);
        assert!(
            !drain
                .settle(Duration::from_millis(100), || async { true })
                .await
        );
    }
}
