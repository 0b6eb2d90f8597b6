//! The official A2A client under a [`RemoteAgent`](super::RemoteAgent): made for the card's
//! best 1.0 interface (or a 0.3-only agent's JSON-RPC one, through the 0.3 mapping), with the
//! credentials, the extensions asked for and the trace context on every call.

use std::sync::Arc;

use a2a_client::auth::AuthInterceptor;
use a2a_client::jsonrpc::JsonRpcTransportFactory;
use a2a_client::middleware::CallInterceptor;
use a2a_client::rest::RestTransportFactory;
use a2a_client::{A2AClient, A2AClientFactory, Transport};
use serde_json::Value;

use crate::card::{AgentCard, AgentInterface};
use crate::wire;

use super::exchange::Exchange;
use super::jsonrpc::{Dialect, JsonRpc};

/// The official client, over whichever transport the card called for.
pub(super) type Official = A2AClient<Box<dyn Transport>>;

/// Sends the current span's W3C trace context with each call (feature `otel`).
#[cfg(feature = "otel")]
struct TraceContext;

#[cfg(feature = "otel")]
#[async_trait::async_trait]
impl CallInterceptor for TraceContext {
    async fn before(
        &self,
        _method: &str,
        params: &mut a2a_client::ServiceParams,
    ) -> Result<(), a2a::A2AError> {
        for (name, value) in crate::otel::headers_of(&tracing::Span::current()) {
            params.entry(name).or_default().push(value);
        }
        Ok(())
    }
}

/// `call` in a client span named `method` (feature `otel`), whose context the call sends.
#[cfg(feature = "otel")]
pub(crate) fn traced<F: std::future::Future>(
    method: &'static str,
    call: F,
) -> impl std::future::Future<Output = F::Output> {
    use tracing::Instrument as _;
    call.instrument(tracing::info_span!(
        "a2a.client",
        otel.kind = "client",
        rpc.method = method,
    ))
}

/// `call` as it is (without the feature `otel`).
#[cfg(not(feature = "otel"))]
pub(crate) fn traced<F: std::future::Future>(_method: &'static str, call: F) -> F {
    call
}

/// `headers` with extension `uri` asked for (`A2A-Extensions`), once.
pub(super) fn ask_for(headers: &mut Vec<(String, String)>, uri: String) {
    match headers
        .iter_mut()
        .find(|(name, _)| name.eq_ignore_ascii_case("A2A-Extensions"))
    {
        Some((_, value)) if value.split(',').any(|v| v.trim() == uri) => {}
        Some((_, value)) => {
            value.push_str(", ");
            value.push_str(&uri);
        }
        None => headers.push(("A2A-Extensions".to_owned(), uri)),
    }
}

/// The official client for the card's best 1.0 interface, or why there is none.
pub(super) async fn official_client(
    card: &AgentCard,
    exchange: Exchange,
    headers: &[(String, String)],
    bindings: &[String],
) -> Result<Official, String> {
    #[cfg_attr(not(feature = "otel"), allow(unused_mut))]
    let mut interceptors: Vec<Arc<dyn CallInterceptor>> = headers
        .iter()
        .map(|(name, value)| {
            Arc::new(AuthInterceptor::custom(name.clone(), value.clone()))
                as Arc<dyn CallInterceptor>
        })
        .collect();
    #[cfg(feature = "otel")]
    interceptors.push(Arc::new(TraceContext));
    let mut v1 = card.clone();
    // Only interfaces the official client can speak, so that its choice is among them.
    v1.interfaces.retain(|i| !i.is_pre_1_0());
    if v1.interfaces.is_empty() {
        // An agent of 0.3 only: its JSON-RPC interface, through the 0.3 mapping.
        let transport = own_jsonrpc(
            card,
            &card.interfaces,
            exchange,
            Dialect::V0_3,
            "the card offers no A2A 1.0 interface and no 0.3 JSON-RPC one",
        )?;
        return Ok(A2AClient::new(transport).with_interceptors(interceptors));
    }
    // One arm without the feature `testing`.
    #[cfg_attr(
        not(feature = "testing"),
        allow(clippy::infallible_destructuring_match)
    )]
    let http = match exchange {
        Exchange::Http(http) => http,
        // An agent in this process: its JSON-RPC interface, through its router.
        #[cfg(feature = "testing")]
        in_process @ Exchange::InProcess(_) => {
            let transport = own_jsonrpc(
                card,
                &v1.interfaces,
                in_process,
                Dialect::V1_0,
                "an agent in this process is called over its 1.0 JSON-RPC interface, and the card offers none",
            )?;
            return Ok(A2AClient::new(transport).with_interceptors(interceptors));
        }
    };
    let mut json = v1.to_json(wire::Profile::V1);
    // Fields the official card type requires but a card may leave out (a skill without
    // tags, which the linter reports): empty, as the official parsers of other languages read
    // them. Only what the client needs to pick a transport depends on the rest.
    for (key, empty) in [
        ("capabilities", Value::Object(Default::default())),
        ("defaultInputModes", Value::Array(Vec::new())),
        ("defaultOutputModes", Value::Array(Vec::new())),
        ("skills", Value::Array(Vec::new())),
    ] {
        if let Some(map) = json.as_object_mut() {
            map.entry(key).or_insert(empty);
        }
    }
    for skill in json["skills"].as_array_mut().into_iter().flatten() {
        if let Some(map) = skill.as_object_mut() {
            map.entry("tags").or_insert(Value::Array(Vec::new()));
        }
    }
    let official: a2a::AgentCard = serde_json::from_value(json)
        .map_err(|e| format!("the official client cannot read the card: {e}"))?;
    let mut factory = A2AClientFactory::builder()
        .preferred_bindings(bindings.to_vec())
        .register(Arc::new(JsonRpcTransportFactory::new(Some(http.clone()))))
        .register(Arc::new(RestTransportFactory::new(Some(http))));
    // gRPC over plain HTTP/2 (an https agent's gRPC goes through a terminating proxy too).
    #[cfg(feature = "grpc")]
    {
        factory = factory.register(Arc::new(a2a_grpc::GrpcTransportFactory::new()));
    }
    for interceptor in interceptors {
        factory = factory.with_interceptor(interceptor);
    }
    factory
        .build()
        .create_from_card(&official)
        .await
        .map_err(|e| format!("no usable interface on the card: {}", e.message))
}

/// The client's own JSON-RPC transport, speaking `dialect` through `exchange` to the JSON-RPC
/// interface among `interfaces`; `missing` (with what the card lists) where there is none.
fn own_jsonrpc(
    card: &AgentCard,
    interfaces: &[AgentInterface],
    exchange: Exchange,
    dialect: Dialect,
    missing: &str,
) -> Result<Box<dyn Transport>, String> {
    let Some(jsonrpc) = interfaces.iter().find(|i| {
        i.protocol_binding
            .eq_ignore_ascii_case(AgentInterface::JSONRPC)
    }) else {
        return Err(format!(
            "{missing} (it lists {})",
            describe_interfaces(card)
        ));
    };
    Ok(Box::new(JsonRpc::new(
        exchange,
        jsonrpc.url.clone(),
        dialect,
    )))
}

fn describe_interfaces(card: &AgentCard) -> String {
    if card.interfaces.is_empty() {
        return "none".to_owned();
    }
    card.interfaces
        .iter()
        .map(|i| {
            format!(
                "{} {} at {}",
                i.protocol_binding,
                i.protocol_version.as_deref().unwrap_or("(no version)"),
                i.url
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}
