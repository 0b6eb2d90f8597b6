//! OpenTelemetry for a served agent (feature `otel`): its spans and metrics exported over
//! OTLP, one trace across agents, and a Prometheus text endpoint.
//!
//! The server always describes its work with `tracing` spans (the request, the task with an
//! event per state change, the skill's run, the SQL stores' rounds, each webhook delivery; the
//! table is in the [server docs](crate::server::Server::metrics_route)). [`init`] sends them,
//! and the server's metrics, where the standard OpenTelemetry variables say:
//!
//! | variable | effect |
//! |---|---|
//! | `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `_METRICS_ENDPOINT`) | export over OTLP/HTTP there (`/v1/traces` and `/v1/metrics` appended to the base); unset: nothing is exported, and nothing is spent on it |
//! | `OTEL_EXPORTER_OTLP_PROTOCOL` (or `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` / `_METRICS_PROTOCOL`) | `http/protobuf` (the default) or `http/json`; `grpc` is refused by [`init`] (this build exports over HTTP) |
//! | `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` | the resource's `service.name` and attributes |
//! | `OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG` | the sampler (`parentbased_always_on` by default) |
//! | `OTEL_METRIC_EXPORT_INTERVAL` | how often metrics are exported (ms) |
//! | `OTEL_SDK_DISABLED=true` | nothing is set up |
//!
//! W3C trace context (`traceparent`, `tracestate`) is read from every incoming request (HTTP,
//! gRPC metadata, MCP), so a caller's trace continues in the handler; `a2a_card::client` (the
//! typed client and `RemoteAgent`) sends the current context with each call, in a client span,
//! so that an agent calling another makes one trace across both; webhook deliveries carry the
//! trace of the task's event. No span holds a message's content, a credential or a token.
//!
//! ```no_run
//! # use a2a_card::{agent, skill};
//! # struct Echo;
//! # /// Says back what it is told.
//! # #[agent(url = "http://127.0.0.1:9000")]
//! # impl Echo {
//! #     /// Echoes the text.
//! #     #[skill]
//! #     fn echo(&self, text: String) -> String { text }
//! # }
//! use a2a_card::server::Server;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // Before the server is built: its metrics are made from what this sets up.
//!     let _telemetry = a2a_card::otel::init()?;
//!     Server::new(Echo)
//!         .metrics_route("/metrics")
//!         .bind("127.0.0.1:9000")
//!         .await?
//!         .serve()
//!         .await?;
//!     Ok(())
//! }
//! ```

use std::fmt;
use std::sync::OnceLock;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Why telemetry could not be set up.
///
/// ```no_run
/// match a2a_card::otel::init() {
///     Ok(telemetry) => drop(telemetry),
///     Err(a2a_card::otel::OtelError::Config(why)) => eprintln!("check OTEL_*: {why}"),
///     Err(e) => eprintln!("{e}"),
/// }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum OtelError {
    /// An `OTEL_*` variable asks for what this build cannot do (named in the message).
    Config(String),
    /// The OTLP exporter could not be built.
    Exporter(String),
    /// A `tracing` subscriber is already installed for the process.
    Subscriber(String),
}

impl fmt::Display for OtelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OtelError::Config(why) => write!(f, "telemetry is not set up: {why}"),
            OtelError::Exporter(why) => write!(f, "the OTLP exporter cannot be built: {why}"),
            OtelError::Subscriber(why) => {
                write!(f, "the tracing subscriber cannot be installed: {why}")
            }
        }
    }
}

impl std::error::Error for OtelError {}

/// Telemetry set up by [`init`]: dropping it (at the end of `main`) sends what is still
/// buffered and shuts the exporters down.
///
/// ```no_run
/// let telemetry = a2a_card::otel::init()?;
/// if !telemetry.exports() {
///     eprintln!("no OTEL_EXPORTER_OTLP_ENDPOINT: spans are not exported");
/// }
/// // ... serve ...
/// telemetry.flush(); // or let it drop
/// # Ok::<(), a2a_card::otel::OtelError>(())
/// ```
#[must_use = "dropping it shuts the exporters down"]
pub struct Telemetry {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
}

impl fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Telemetry")
            .field("exports_traces", &self.tracer.is_some())
            .finish_non_exhaustive()
    }
}

impl Telemetry {
    /// Whether spans are exported (an OTLP endpoint is configured).
    pub fn exports(&self) -> bool {
        self.tracer.is_some()
    }

    /// Sends what is buffered now (spans and metrics), waiting for the exporters.
    pub fn flush(&self) {
        if let Some(tracer) = &self.tracer {
            let _ = tracer.force_flush();
        }
        if let Some(meter) = &self.meter {
            let _ = meter.force_flush();
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(tracer) = self.tracer.take() {
            let _ = tracer.shutdown();
        }
        if let Some(meter) = self.meter.take() {
            let _ = meter.shutdown();
        }
    }
}

/// Whether [`init`] has set up the meter provider (the server records metrics only then).
static METERED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(crate) fn metered() -> bool {
    METERED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The Prometheus registry the meter provider of [`init`] fills.
fn registry() -> &'static prometheus::Registry {
    static REGISTRY: OnceLock<prometheus::Registry> = OnceLock::new();
    REGISTRY.get_or_init(prometheus::Registry::new)
}

/// The server's metrics in the Prometheus text format (what
/// [`Server::metrics_route`](crate::server::Server::metrics_route) serves); empty before
/// [`init`].
///
/// ```
/// // Before `init`, nothing is measured yet.
/// let text = a2a_card::otel::prometheus_text();
/// assert!(text.is_empty() || text.contains("# TYPE"));
/// ```
pub fn prometheus_text() -> String {
    use prometheus::Encoder as _;
    let mut out = Vec::new();
    let families = registry().gather();
    if prometheus::TextEncoder::new()
        .encode(&families, &mut out)
        .is_err()
    {
        return String::new();
    }
    String::from_utf8(out).unwrap_or_default()
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The OTLP protocol of one signal: its own variable (`signal`), else
/// `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf`, the specification's default. Chosen
/// here because the exporter crate, built with both encodings, would default to JSON.
fn protocol(signal: &str) -> Result<Protocol, OtelError> {
    match env(signal) {
        Some(value) => protocol_named(signal, Some(&value)),
        None => {
            let general = "OTEL_EXPORTER_OTLP_PROTOCOL";
            protocol_named(general, env(general).as_deref())
        }
    }
}

/// The protocol variable `name` says (`value`; unset: protobuf).
fn protocol_named(name: &str, value: Option<&str>) -> Result<Protocol, OtelError> {
    match value.map(str::trim) {
        None | Some("http/protobuf") => Ok(Protocol::HttpBinary),
        Some("http/json") => Ok(Protocol::HttpJson),
        Some(other) => Err(OtelError::Config(format!(
            "{name} is `{other}`; this build exports over HTTP: use http/protobuf or http/json"
        ))),
    }
}

/// Sets up OpenTelemetry from the standard `OTEL_*` variables (see the [module docs](self)):
/// the W3C trace-context propagator, a meter provider read by [`prometheus_text`] and, when an
/// OTLP endpoint is configured, exported with the batching span processor and the periodic
/// metric reader; and installs a `tracing` subscriber that sends the spans there (and prints
/// warnings to standard error). Call it once, before the server is built.
///
/// # Errors
///
/// [`OtelError::Config`] for `OTEL_EXPORTER_OTLP_PROTOCOL=grpc`, [`OtelError::Exporter`] when
/// an exporter cannot be built, [`OtelError::Subscriber`] when the process already has a
/// `tracing` subscriber.
///
/// ```no_run
/// // OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 OTEL_SERVICE_NAME=judge ./agent
/// let _telemetry = a2a_card::otel::init()?; // kept until the end of `main`
/// # Ok::<(), a2a_card::otel::OtelError>(())
/// ```
pub fn init() -> Result<Telemetry, OtelError> {
    if env("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Ok(Telemetry {
            tracer: None,
            meter: None,
        });
    }
    let span_protocol = protocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")?;
    let metric_protocol = protocol("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL")?;
    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
    let resource = opentelemetry_sdk::Resource::builder().build();
    let traces = env("OTEL_EXPORTER_OTLP_ENDPOINT")
        .or_else(|| env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
        .is_some();
    let metrics = env("OTEL_EXPORTER_OTLP_ENDPOINT")
        .or_else(|| env("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"))
        .is_some();

    let prometheus = opentelemetry_prometheus::exporter()
        .with_registry(registry().clone())
        .build()
        .map_err(|e| OtelError::Exporter(e.to_string()))?;
    let mut meter = SdkMeterProvider::builder()
        .with_resource(resource.clone())
        .with_reader(prometheus);
    if metrics {
        let exporter = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_protocol(metric_protocol)
            .build()
            .map_err(|e| OtelError::Exporter(e.to_string()))?;
        meter = meter
            .with_reader(opentelemetry_sdk::metrics::PeriodicReader::builder(exporter).build());
    }
    let meter = meter.build();
    opentelemetry::global::set_meter_provider(meter.clone());
    METERED.store(true, std::sync::atomic::Ordering::Relaxed);

    let tracer = if traces {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(span_protocol)
            .build()
            .map_err(|e| OtelError::Exporter(e.to_string()))?;
        let provider = SdkTracerProvider::builder()
            .with_resource(resource)
            .with_batch_exporter(exporter)
            .build();
        opentelemetry::global::set_tracer_provider(provider.clone());
        Some(provider)
    } else {
        None
    };
    let warnings = Warnings(tracing_subscriber::fmt::layer().with_writer(std::io::stderr));
    let exported = tracer.as_ref().map(|provider| {
        // The spans' own attributes only: no source location, thread, level or target on
        // each, no busy/idle timing and no context switch at every poll of a span's future
        // (measured: each costs throughput; outgoing calls read a span's context directly).
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("a2a-card"))
            .with_location(false)
            .with_threads(false)
            .with_level(false)
            .with_target(false)
            .with_tracked_inactivity(false)
            .with_context_activation(false)
    });
    // One filter for the whole subscriber, not one per layer: a per-layer filter makes the
    // registry keep per-span and per-event filter state for every layer (measured: most of
    // what the bridge costs at INFO). INFO when spans are exported, else WARN, so that with
    // no endpoint no INFO span is made at all.
    let level = if exported.is_some() {
        tracing_subscriber::filter::LevelFilter::INFO
    } else {
        tracing_subscriber::filter::LevelFilter::WARN
    };
    tracing_subscriber::registry()
        .with(level)
        .with(warnings)
        .with(exported)
        .try_init()
        .map_err(|e| OtelError::Subscriber(e.to_string()))?;
    Ok(Telemetry {
        tracer,
        meter: Some(meter),
    })
}

/// Warnings and errors printed to standard error: the `fmt` layer `0`, given events at WARN and
/// above and nothing else. It sees no span, so it needs no per-layer filter (which would make
/// the registry keep filter state for every span and event, measured costly at INFO).
struct Warnings<L>(L);

impl<S, L> tracing_subscriber::Layer<S> for Warnings<L>
where
    S: tracing::Subscriber,
    L: tracing_subscriber::Layer<S>,
{
    fn on_event(&self, event: &tracing::Event<'_>, ctx: tracing_subscriber::layer::Context<'_, S>) {
        if *event.metadata().level() <= tracing::Level::WARN {
            self.0.on_event(event, ctx);
        }
    }
}

/// The W3C trace context of `span`, as headers for an outgoing request.
pub(crate) fn headers_of(span: &tracing::Span) -> Vec<(String, String)> {
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    let context = span.context();
    let mut headers = std::collections::HashMap::new();
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.inject_context(&context, &mut headers)
    });
    headers.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_protocol_is_protobuf_unless_a_variable_says_json_and_grpc_is_refused_by_name() {
        let name = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
        assert_eq!(protocol_named(name, None).unwrap(), Protocol::HttpBinary);
        assert_eq!(
            protocol_named(name, Some("http/protobuf")).unwrap(),
            Protocol::HttpBinary
        );
        assert_eq!(
            protocol_named(name, Some(" http/json ")).unwrap(),
            Protocol::HttpJson
        );
        match protocol_named(name, Some("grpc")) {
            Err(OtelError::Config(why)) => {
                assert!(why.contains(name) && why.contains("`grpc`"), "{why}")
            }
            other => panic!("grpc accepted: {other:?}"),
        }
    }

    /// Counts the events and spans it is given.
    #[derive(Clone, Default)]
    struct Seen(std::sync::Arc<std::sync::Mutex<(Vec<tracing::Level>, usize)>>);

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Seen {
        fn on_event(
            &self,
            event: &tracing::Event<'_>,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            self.0.lock().unwrap().0.push(*event.metadata().level());
        }

        fn on_new_span(
            &self,
            _: &tracing::span::Attributes<'_>,
            _: &tracing::span::Id,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            self.0.lock().unwrap().1 += 1;
        }
    }

    #[test]
    fn the_warnings_layer_is_given_warnings_and_errors_only_and_no_span() {
        use tracing_subscriber::layer::SubscriberExt as _;
        let seen = Seen::default();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_subscriber::filter::LevelFilter::INFO)
            .with(Warnings(seen.clone()));
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("a2a.request");
            let _entered = span.enter();
            tracing::info!("told");
            tracing::warn!("warned");
            tracing::error!("failed");
        });
        let (levels, spans) = seen.0.lock().unwrap().clone();
        assert_eq!(levels, [tracing::Level::WARN, tracing::Level::ERROR]);
        assert_eq!(spans, 0);
    }
}
