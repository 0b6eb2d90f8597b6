//! What the server tells its operators: `tracing` spans (always), and with the feature `otel`
//! the W3C trace context of each request and OpenTelemetry metrics.
//!
//! The spans and metrics, with their fields and attributes, are listed once, for users, on
//! [`Server::metrics_route`](super::Server::metrics_route); a change here changes that table.
//! No span carries a message's content, a credential or a token: ids, names, states, counts and
//! statuses only.

use std::borrow::Cow;
use std::time::Duration;
#[cfg(feature = "otel")]
use std::time::Instant;

use tracing::Span;

/// The span of one HTTP request, its W3C parent read from `headers` (feature `otel`).
pub(crate) fn request_span(method: &str, path: &str, headers: &axum::http::HeaderMap) -> Span {
    let span = tracing::info_span!(
        "a2a.request",
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        http.request.method = method,
        url.path = path,
        rpc.system = tracing::field::Empty,
        rpc.method = tracing::field::Empty,
        a2a.binding = tracing::field::Empty,
        a2a.version = tracing::field::Empty,
        http.response.status_code = tracing::field::Empty,
    );
    #[cfg(feature = "otel")]
    otel::set_parent(&span, headers);
    #[cfg(not(feature = "otel"))]
    let _ = headers;
    span
}

/// One protocol call being answered: named on its request's span as it begins, counted (its
/// method, outcome and duration) as it ends. The bindings' calls are recorded by
/// the lifecycle's one way in (`Lifecycle::call`), MCP's methods by its gate.
#[must_use = "a call is counted when it ends"]
pub(crate) struct CallRecord {
    /// The method and when the call began, for the metrics (feature `otel`).
    #[cfg(feature = "otel")]
    metered: (Cow<'static, str>, Instant),
}

impl CallRecord {
    /// A call of `method` in protocol `version` begins, in the current request's span, over
    /// the binding `binding` names (its name on the card, and its RPC system).
    pub(crate) fn begin(
        binding: (&'static str, &'static str),
        method: impl Into<Cow<'static, str>>,
        version: &str,
    ) -> CallRecord {
        let (binding, system) = binding;
        let method = method.into();
        let span = Span::current();
        span.record("a2a.binding", binding);
        span.record("rpc.system", system);
        span.record("rpc.method", &*method);
        span.record("a2a.version", version);
        CallRecord {
            #[cfg(feature = "otel")]
            metered: (method, Instant::now()),
        }
    }

    /// The call ended, answered (`ok`) or with an error, whatever the HTTP status says.
    pub(crate) fn end(self, ok: bool) {
        if !ok {
            failed();
        }
        #[cfg(feature = "otel")]
        {
            let (method, started) = self.metered;
            otel::answered(method, ok, started.elapsed());
        }
    }
}

/// Marks the current request as answered with a protocol error (whatever its HTTP status:
/// JSON-RPC answers errors with `200`).
pub(crate) fn failed() {
    Span::current().record("otel.status_code", "ERROR");
}

/// Ends the request's span: its HTTP status (a request answered with `4xx` or `5xx` failed).
fn answered(span: &Span, status: u16) {
    span.record("http.response.status_code", status);
    if status >= 400 {
        span.record("otel.status_code", "ERROR");
    }
}

/// A request the listener answered ahead of its router and layers (a published document,
/// [`Published`](crate::server::documents::Published)): its span, ended with `status` at once.
pub(crate) fn answered_ahead(request: &axum::extract::Request, status: u16) {
    let span = request_span(
        request.method().as_str(),
        request.uri().path(),
        request.headers(),
    );
    answered(&span, status);
}

/// The span of task `id`, a child of the request that created it.
pub(crate) fn task_span(id: &str, context: &str, agent: &str, skill: &str) -> Span {
    tracing::info_span!(
        "a2a.task",
        a2a.task.id = id,
        a2a.context.id = context,
        gen_ai.agent.name = agent,
        gen_ai.tool.name = skill,
        a2a.task.state = tracing::field::Empty,
    )
}

/// The span of task `id` taken up again after its process stopped, in the trace of its first
/// run (`trace`: that run's W3C trace context, as its journal keeps it; feature `otel`).
pub(crate) fn resumed_task_span(
    id: &str,
    context: &str,
    agent: &str,
    skill: &str,
    trace: &[(String, String)],
) -> Span {
    let span = task_span(id, context, agent, skill);
    #[cfg(feature = "otel")]
    if !trace.is_empty() {
        otel::set_parent_from(&span, trace);
    }
    #[cfg(not(feature = "otel"))]
    let _ = trace;
    span
}

/// A state change of the task of `span` (an event on it); a final state is recorded on the
/// span and counted.
pub(crate) fn state_changed(
    span: &Span,
    skill: &'static str,
    state: &'static str,
    terminal: bool,
    age: Duration,
) {
    tracing::info!(parent: span, a2a.task.state = state, "task state");
    if terminal {
        span.record("a2a.task.state", state);
    }
    #[cfg(feature = "otel")]
    otel::task_state(skill, state, terminal, age);
    #[cfg(not(feature = "otel"))]
    let _ = (skill, age);
}

/// A task of skill `skill` started running.
pub(crate) fn task_started(skill: &'static str) {
    #[cfg(feature = "otel")]
    otel::task_started(skill);
    #[cfg(not(feature = "otel"))]
    let _ = skill;
}

/// The span of one run of skill `skill`, a child of its task's span.
pub(crate) fn skill_span(task: &Span, skill: &str) -> Span {
    tracing::info_span!(
        parent: task,
        "a2a.skill",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = skill,
        a2a.skill.cancelled = tracing::field::Empty,
        a2a.skill.panicked = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    )
}

/// An artifact chunk was streamed.
pub(crate) fn chunk() {
    #[cfg(feature = "otel")]
    otel::chunk();
}

/// The span of a round of the SQL stores' writer: `statements` run for `rows` task rows and
/// `events` log events.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn store_span(
    system: &'static str,
    statements: usize,
    rows: usize,
    events: usize,
) -> Span {
    tracing::info_span!(
        "a2a.store.round",
        otel.kind = "client",
        db.system.name = system,
        a2a.store.statements = statements,
        a2a.store.rows = rows,
        a2a.store.events = events,
    )
}

/// A round of the SQL stores' writer ended: `size` rows and events, in `took`.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn store_round(system: &'static str, size: usize, took: Duration) {
    #[cfg(feature = "otel")]
    otel::store_round(system, size, took);
    #[cfg(not(feature = "otel"))]
    let _ = (system, size, took);
}

/// The span of one model completion of a model loop (`rig::ModelLoop`), with the OpenTelemetry
/// GenAI conventions' names: `gen_ai.usage.*` recorded once the model answered.
#[cfg(feature = "rig")]
pub(crate) fn completion_span(provider: &str, model: &str, turn: u32) -> Span {
    tracing::info_span!(
        "gen_ai.chat",
        otel.name = format!("chat {model}"),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider,
        gen_ai.request.model = model,
        a2a.model.turn = turn,
        gen_ai.usage.input_tokens = tracing::field::Empty,
        gen_ai.usage.output_tokens = tracing::field::Empty,
        error.type = tracing::field::Empty,
    )
}

/// The span of one tool call of a model loop, with the GenAI conventions' names.
#[cfg(feature = "rig")]
pub(crate) fn tool_span(name: &str, call: &str) -> Span {
    tracing::info_span!(
        "gen_ai.execute_tool",
        otel.name = format!("execute_tool {name}"),
        otel.kind = "internal",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = name,
        gen_ai.tool.call.id = call,
        error.type = tracing::field::Empty,
    )
}

/// One webhook delivery attempt's span, in the trace `parent` carries (W3C headers).
pub(crate) fn push_span(task: &str, attempt: u32, parent: &[(String, String)]) -> Span {
    let span = tracing::info_span!(
        "a2a.push",
        otel.kind = "client",
        a2a.task.id = task,
        a2a.push.attempt = attempt,
        http.response.status_code = tracing::field::Empty,
    );
    #[cfg(feature = "otel")]
    if !parent.is_empty() {
        otel::set_parent_from(&span, parent);
    }
    #[cfg(not(feature = "otel"))]
    let _ = parent;
    span
}

/// A webhook delivery ended: delivered or not, after retries or not.
pub(crate) fn pushed(delivered: bool, retried: bool) {
    #[cfg(feature = "otel")]
    otel::pushed(delivered, retried);
    #[cfg(not(feature = "otel"))]
    let _ = (delivered, retried);
}

/// A request was refused by the card's security, for `reason`.
pub(crate) fn refused(reason: &'static str) {
    tracing::debug!(a2a.reason = reason, "refused");
    #[cfg(feature = "otel")]
    otel::refused(reason);
}

/// The W3C trace context of the current span, as headers for an outgoing request (feature
/// `otel`; none without it).
pub(crate) fn outgoing_headers(span: &Span) -> Vec<(String, String)> {
    #[cfg(feature = "otel")]
    return crate::otel::headers_of(span);
    #[cfg(not(feature = "otel"))]
    {
        let _ = span;
        Vec::new()
    }
}

/// The layer that gives every request its span and its metrics (see [`traced`]).
pub(crate) async fn layer(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    traced(request, |request| next.run(request)).await
}

/// `request` answered by `next` in its own span, with its metrics: what every request gets,
/// whether it comes to this crate's listener or to an app the router is nested in.
pub(crate) async fn traced<F>(
    request: axum::extract::Request,
    next: impl FnOnce(axum::extract::Request) -> F,
) -> axum::response::Response
where
    F: std::future::Future<Output = axum::response::Response>,
{
    use tracing::Instrument as _;
    let span = request_span(
        request.method().as_str(),
        request.uri().path(),
        request.headers(),
    );
    let response = next(request).instrument(span.clone()).await;
    answered(&span, response.status().as_u16());
    response
}

#[cfg(feature = "otel")]
mod otel {
    use std::borrow::Cow;
    use std::sync::OnceLock;
    use std::time::Duration;

    use opentelemetry::KeyValue;
    use opentelemetry::metrics::{Counter, Histogram, UpDownCounter};
    use tracing::Span;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    /// The instruments, made from the global meter provider on first use (so
    /// `a2a_card::otel::init` goes first).
    struct Instruments {
        requests: Counter<u64>,
        request_duration: Histogram<f64>,
        tasks: Counter<u64>,
        task_duration: Histogram<f64>,
        active: UpDownCounter<i64>,
        chunks: Counter<u64>,
        round_duration: Histogram<f64>,
        round_size: Histogram<u64>,
        pushes: Counter<u64>,
        refusals: Counter<u64>,
    }

    /// The instruments, once `a2a_card::otel::init` has set up the meter provider (before it,
    /// nothing is measured, and nothing is spent on measuring).
    fn instruments() -> Option<&'static Instruments> {
        static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();
        if !crate::otel::metered() {
            return None;
        }
        Some(INSTRUMENTS.get_or_init(|| {
            let meter = opentelemetry::global::meter("a2a-card");
            Instruments {
                requests: meter
                    .u64_counter("a2a.server.requests")
                    .with_description("Protocol requests, by method and outcome")
                    .build(),
                request_duration: meter
                    .f64_histogram("a2a.server.request.duration")
                    .with_unit("s")
                    .with_description("How long protocol requests took to answer")
                    .build(),
                tasks: meter
                    .u64_counter("a2a.tasks")
                    .with_description("Tasks that reached a final state, by skill and state")
                    .build(),
                task_duration: meter
                    .f64_histogram("a2a.task.duration")
                    .with_unit("s")
                    .with_description("How long tasks took, from creation to their final state")
                    .build(),
                active: meter
                    .i64_up_down_counter("a2a.tasks.active")
                    .with_description("Tasks running now, by skill")
                    .build(),
                chunks: meter
                    .u64_counter("a2a.stream.chunks")
                    .with_description("Artifact chunks streamed")
                    .build(),
                round_duration: meter
                    .f64_histogram("a2a.store.round.duration")
                    .with_unit("s")
                    .with_description("How long a round of the SQL stores' writer took")
                    .build(),
                round_size: meter
                    .u64_histogram("a2a.store.round.size")
                    .with_description(
                        "Task rows and events written in a round of the SQL stores' writer",
                    )
                    .build(),
                pushes: meter
                    .u64_counter("a2a.push.deliveries")
                    .with_description(
                        "Webhook deliveries, by outcome and whether they were retried",
                    )
                    .build(),
                refusals: meter
                    .u64_counter("a2a.auth.refusals")
                    .with_description("Requests refused by the card's security, by reason")
                    .build(),
            }
        }))
    }

    /// Sets the span's parent to the W3C trace context of the request's headers, if any.
    pub(super) fn set_parent(span: &Span, headers: &axum::http::HeaderMap) {
        if !headers.contains_key("traceparent") {
            return;
        }
        let context = opentelemetry::global::get_text_map_propagator(|propagator| {
            propagator.extract(&Headers(headers))
        });
        let _ = span.set_parent(context);
    }

    /// Sets the span's parent to the W3C trace context of `headers`.
    pub(super) fn set_parent_from(span: &Span, headers: &[(String, String)]) {
        let map: std::collections::HashMap<String, String> = headers.iter().cloned().collect();
        let context = opentelemetry::global::get_text_map_propagator(|p| p.extract(&map));
        let _ = span.set_parent(context);
    }

    struct Headers<'a>(&'a axum::http::HeaderMap);

    impl opentelemetry::propagation::Extractor for Headers<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            self.0.get(key).and_then(|v| v.to_str().ok())
        }

        fn keys(&self) -> Vec<&str> {
            self.0.keys().map(|k| k.as_str()).collect()
        }
    }

    pub(super) fn answered(method: Cow<'static, str>, ok: bool, took: Duration) {
        let Some(i) = instruments() else { return };
        let outcome = KeyValue::new("a2a.outcome", if ok { "ok" } else { "error" });
        let method = match method {
            Cow::Borrowed(method) => KeyValue::new("rpc.method", method),
            Cow::Owned(method) => KeyValue::new("rpc.method", method),
        };
        i.requests.add(1, &[method.clone(), outcome]);
        i.request_duration.record(took.as_secs_f64(), &[method]);
    }

    pub(super) fn task_started(skill: &'static str) {
        if let Some(i) = instruments() {
            i.active.add(1, &[KeyValue::new("gen_ai.tool.name", skill)]);
        }
    }

    pub(super) fn task_state(
        skill: &'static str,
        state: &'static str,
        terminal: bool,
        age: Duration,
    ) {
        let (true, Some(i)) = (terminal, instruments()) else {
            return;
        };
        let tool = KeyValue::new("gen_ai.tool.name", skill);
        let attributes = [tool.clone(), KeyValue::new("a2a.task.state", state)];
        i.tasks.add(1, &attributes);
        i.task_duration.record(age.as_secs_f64(), &attributes);
        i.active.add(-1, &[tool]);
    }

    pub(super) fn chunk() {
        if let Some(i) = instruments() {
            i.chunks.add(1, &[]);
        }
    }

    pub(super) fn store_round(system: &'static str, size: usize, took: Duration) {
        let Some(i) = instruments() else { return };
        let system = [KeyValue::new("db.system.name", system)];
        i.round_duration.record(took.as_secs_f64(), &system);
        i.round_size.record(size as u64, &system);
    }

    pub(super) fn pushed(delivered: bool, retried: bool) {
        let Some(i) = instruments() else { return };
        let outcome = if delivered { "delivered" } else { "failed" };
        i.pushes.add(
            1,
            &[
                KeyValue::new("a2a.outcome", outcome),
                KeyValue::new("a2a.push.retried", retried),
            ],
        );
    }

    pub(super) fn refused(reason: &'static str) {
        if let Some(i) = instruments() {
            i.refusals.add(1, &[KeyValue::new("a2a.reason", reason)]);
        }
    }
}
