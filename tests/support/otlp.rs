//! An OTLP/HTTP receiver for the tests: what `a2a_card::otel::init` exports, decoded with the
//! OpenTelemetry proto definitions.

use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;

/// What the receiver got.
#[derive(Default)]
pub struct Received {
    pub spans: Vec<Span>,
    pub metrics: Vec<String>,
    /// The `traceparent` of each webhook POST.
    pub pushes: Vec<String>,
}

/// An OTLP/HTTP receiver (and a webhook at `/hook`) on a free port: its URL, and what it
/// got.
pub async fn receiver() -> (String, Arc<Mutex<Received>>) {
    let received = Arc::new(Mutex::new(Received::default()));
    let (traces, metrics, hooks) = (
        Arc::clone(&received),
        Arc::clone(&received),
        Arc::clone(&received),
    );
    let app = axum::Router::new()
        .route(
            "/hook",
            axum::routing::post(move |headers: axum::http::HeaderMap| {
                let hooks = Arc::clone(&hooks);
                async move {
                    if let Some(parent) = headers.get("traceparent").and_then(|v| v.to_str().ok()) {
                        hooks.lock().unwrap().pushes.push(parent.to_owned());
                    }
                    ""
                }
            }),
        )
        .route(
            "/v1/traces",
            axum::routing::post(
                move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                    let traces = Arc::clone(&traces);
                    async move {
                        // No OTEL_EXPORTER_OTLP_PROTOCOL is set: the default is protobuf.
                        assert_eq!(headers["content-type"], "application/x-protobuf");
                        let request = ExportTraceServiceRequest::decode(body).expect("OTLP traces");
                        let mut got = traces.lock().unwrap();
                        for resource in request.resource_spans {
                            for scope in resource.scope_spans {
                                got.spans.extend(scope.spans);
                            }
                        }
                        ""
                    }
                },
            ),
        )
        .route(
            "/v1/metrics",
            axum::routing::post(
                move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                    let metrics = Arc::clone(&metrics);
                    async move {
                        assert_eq!(headers["content-type"], "application/x-protobuf");
                        let request =
                            ExportMetricsServiceRequest::decode(body).expect("OTLP metrics");
                        let mut got = metrics.lock().unwrap();
                        for resource in request.resource_metrics {
                            for scope in resource.scope_metrics {
                                got.metrics
                                    .extend(scope.metrics.into_iter().map(|m| m.name));
                            }
                        }
                        ""
                    }
                },
            ),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, received)
}

/// The value of attribute `key` of `span`, as text.
pub fn attribute(span: &Span, key: &str) -> Option<String> {
    span.attributes.iter().find(|a| a.key == key).and_then(|a| {
        a.value.as_ref().and_then(|v| match &v.value {
            Some(Any::StringValue(s)) => Some(s.clone()),
            Some(Any::IntValue(i)) => Some(i.to_string()),
            Some(Any::BoolValue(b)) => Some(b.to_string()),
            _ => None,
        })
    })
}
