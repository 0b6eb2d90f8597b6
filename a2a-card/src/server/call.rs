//! The call: one protocol operation with its typed parameters, and the context it came in
//! (who calls, over which binding and version, which extensions it asks for, where a
//! subscription resumes). Every binding decodes its request into a call and encodes the
//! [`CallAnswer`]; the lifecycle answers calls, and nothing reaches it any other way.

use std::sync::Arc;

use a2a::*;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName};
use futures::stream::BoxStream;

use super::auth::{Admission, Refusal};
use super::limits::Peer;
use super::store::Event;
use crate::principal::Principal;

/// The request header that names the protocol version a request speaks (and the card's
/// profile it asks for).
///
/// The headers read on every request are named by a [`HeaderName`], not a `&str`: a lookup by
/// `&str` parses and checks the name each time.
pub(crate) const A2A_VERSION_HEADER: HeaderName = HeaderName::from_static("a2a-version");

/// [`EXTENSIONS_HEADER`], and the spelling some clients of 0.3 send, as looked up.
const EXTENSIONS: HeaderName = HeaderName::from_static(EXTENSIONS_HEADER);
const EXTENSIONS_X: HeaderName = HeaderName::from_static("x-a2a-extensions");
/// Where a reconnecting subscriber resumes.
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
/// [`IDEMPOTENCY_KEY_HEADER`](crate::idempotency::IDEMPOTENCY_KEY_HEADER), as looked up.
const IDEMPOTENCY_KEY: HeaderName =
    HeaderName::from_static(crate::idempotency::IDEMPOTENCY_KEY_HEADER);

/// A task's events with their number in the task's log (`None` for the task as it is, when
/// a store without a log holds it).
pub(crate) type NumberedStream = BoxStream<'static, Result<(Option<u64>, Arc<Event>), A2AError>>;

/// The binding a call came over (its telemetry name, as `a2a.binding` records it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
    JsonRpc,
    HttpJson,
    #[cfg_attr(not(feature = "grpc"), allow(dead_code))]
    Grpc,
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    Mcp,
    /// A caller in the same process ([`Server::request_handler`](super::Server::request_handler)).
    InProcess,
}

impl Binding {
    /// The binding's name as the card spells it, and its RPC system (OpenTelemetry's
    /// `rpc.system`).
    pub(crate) fn names(self) -> (&'static str, &'static str) {
        match self {
            Binding::JsonRpc => ("JSONRPC", "jsonrpc"),
            Binding::HttpJson => ("HTTP+JSON", "http"),
            Binding::Grpc => ("GRPC", "grpc"),
            Binding::Mcp => ("MCP", "jsonrpc"),
            Binding::InProcess => ("IN-PROCESS", "in-process"),
        }
    }
}

/// What a call came with, besides its parameters.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    /// The caller the authentication layer let in (`None`: anonymous).
    pub(crate) principal: Option<Arc<Principal>>,
    /// The binding the call came over.
    pub(crate) binding: Binding,
    /// The tenant the request's path names (HTTP+JSON: `/{tenant}/...`); the other bindings
    /// name it in the request's own `tenant` field.
    pub(crate) tenant: Option<String>,
    /// The extensions the caller asks for (`A2A-Extensions`), as sent.
    pub(crate) extensions: Vec<String>,
    /// The number of the last event a reconnecting subscriber saw (`Last-Event-ID`).
    pub(crate) after: Option<u64>,
    /// The skill whose requirement the binding already checked for this caller (MCP checks
    /// a tool's before its SDK reads the call, to answer `403` as MCP says).
    pub(crate) admitted: Option<usize>,
    /// The address of the caller's connection, where the server knows it (the agent's
    /// limits count an anonymous caller by it).
    pub(crate) peer: Option<Peer>,
    /// The send's idempotency key (`Idempotency-Key`), as sent.
    pub(crate) idempotency_key: Option<String>,
    /// The protocol version the call speaks.
    pub(crate) version: Version,
}

/// The protocol version a call speaks: 1.0, or 0.3 translated (JSON-RPC only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Version {
    #[default]
    V1_0,
    V0_3,
}

impl Version {
    /// The version as `A2A-Version` spells it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Version::V1_0 => "1.0",
            Version::V0_3 => "0.3",
        }
    }
}

impl Context {
    /// The context of a request over `binding` (its head, with the extensions the server's
    /// layers left on it): the caller the authentication layer let in (none where the card asks
    /// for no security), or its refusal; the connection's peer; the extensions asked for,
    /// `Last-Event-ID` and `Idempotency-Key`. Every binding's context is made here, most
    /// through [`Incoming`].
    pub(crate) fn of(binding: Binding, parts: &Parts) -> Result<Context, Refusal> {
        let headers = &parts.headers;
        let peer = Peer::of(parts.extensions.get());
        let principal = match parts.extensions.get::<Admission>() {
            Some(Admission::Refused(refusal)) => return Err((**refusal).clone()),
            Some(Admission::Caller(principal)) => principal.clone(),
            None => None,
        };
        Ok(Context {
            principal,
            binding,
            extensions: extensions(headers),
            after: last_event_id(headers),
            admitted: None,
            tenant: None,
            peer,
            idempotency_key: headers
                .get(IDEMPOTENCY_KEY)
                .and_then(|v| v.to_str().ok())
                .map(|v| v.trim().to_owned()),
            version: Version::V1_0,
        })
    }

    /// An anonymous call in the same process.
    pub(crate) fn in_process() -> Context {
        Context {
            principal: None,
            binding: Binding::InProcess,
            extensions: Vec::new(),
            after: None,
            admitted: None,
            tenant: None,
            peer: None,
            idempotency_key: None,
            version: Version::V1_0,
        }
    }

    /// Whether the caller is authenticated.
    pub(crate) fn is_authenticated(&self) -> bool {
        self.principal.is_some()
    }
}

/// The binding whose requests a router's state serves (what [`Incoming`] reads).
pub(crate) trait Bound {
    /// The binding.
    const BINDING: Binding;
}

/// A request's call context, extracted once from its head (an axum extractor over a router
/// whose state is [`Bound`]): the context, or the authentication layer's refusal, which the
/// binding renders in its own wire shape once it can (a JSON-RPC refusal names the request's
/// `id`, read from the body).
pub(crate) struct Incoming(pub(crate) Result<Context, Refusal>);

impl<S: Bound + Send + Sync> FromRequestParts<S> for Incoming {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Incoming(Context::of(S::BINDING, parts)))
    }
}

/// The extensions a request asks for: `A2A-Extensions` (and 0.3's `X-A2A-Extensions`), a
/// comma-separated list of URIs.
fn extensions(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(EXTENSIONS)
        .iter()
        .chain(headers.get_all(EXTENSIONS_X))
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|uri| !uri.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The number of the last event a reconnecting subscriber saw (`Last-Event-ID`).
fn last_event_id(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(LAST_EVENT_ID)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

/// The `A2A-Version` a request asks for, trimmed (none: absent).
pub(crate) fn requested_version(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(A2A_VERSION_HEADER)
        .map(|v| v.to_str().map(str::trim).unwrap_or("?"))
}

/// The tenant a call is made in: the one its path names and the one its request names, which
/// must agree; a tenant is a path segment of 1 to 64 letters, digits and `.`, `_`, `~`, `-`
/// (`-32602` naming the field otherwise). `None`: the default tenant.
pub(crate) fn tenant_of<'a>(
    ctx: &'a Context,
    named: Option<&'a str>,
) -> Result<Option<&'a str>, A2AError> {
    let tenant = match (ctx.tenant.as_deref(), named) {
        (Some(path), Some(field)) if path != field => {
            return Err(field_error(
                "tenant",
                format!("is `{field}`, and the path names tenant `{path}`"),
            ));
        }
        (path, field) => path.or(field),
    };
    if let Some(t) = tenant
        && let Err(why) = check_tenant(t)
    {
        return Err(field_error("tenant", why));
    }
    Ok(tenant)
}

/// Whether `tenant` is one: a path segment of 1 to 64 letters, digits, `.`, `_`, `~` or `-`
/// (not `.` or `..`); what is wrong otherwise.
pub(crate) fn check_tenant(tenant: &str) -> Result<(), String> {
    let fine = (1..=64).contains(&tenant.len())
        && tenant
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'-'))
        && tenant != "."
        && tenant != "..";
    match fine {
        true => Ok(()),
        false => Err(format!(
            "`{}` is not a tenant: 1 to 64 letters, digits, `.`, `_`, `~` or `-` (omit it for the default tenant)",
            tenant.chars().take(80).collect::<String>()
        )),
    }
}

/// The extensions the served card declares, and which of them a caller must ask for (A2A 1.0
/// section 4.6).
#[derive(Debug, Default)]
pub(crate) struct Extensions {
    declared: Vec<String>,
    required: Vec<String>,
}

/// The header that names the extensions a request asks for, and those its answer used.
pub(crate) const EXTENSIONS_HEADER: &str = "a2a-extensions";

impl Extensions {
    /// The extensions `card` declares.
    pub(crate) fn of(card: &crate::card::AgentCard) -> Extensions {
        let declared = &card.capabilities.extensions;
        Extensions {
            declared: declared.iter().map(|e| e.uri.clone()).collect(),
            required: declared
                .iter()
                .filter(|e| e.required == Some(true))
                .map(|e| e.uri.clone())
                .collect(),
        }
    }

    /// The extensions a call `asked` for that the card declares, in the order asked (unknown
    /// ones ignored); `-32602` naming the header when an entry is not a URI, `-32008` when a
    /// required one is missing.
    pub(crate) fn activate(&self, asked: &[String]) -> Result<Vec<String>, A2AError> {
        if let Some(bad) = asked
            .iter()
            .find(|uri| !a2a_card_rules::urls::is_absolute_uri(uri))
        {
            return Err(field_error(
                "A2A-Extensions",
                format!(
                    "`{}` is not a URI; the header lists extension URIs, comma-separated",
                    bad.chars().take(128).collect::<String>()
                ),
            ));
        }
        let missing: Vec<&str> = self
            .required
            .iter()
            .filter(|uri| !asked.contains(uri))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(A2AError::new(
                a2a::error_code::EXTENSION_SUPPORT_REQUIRED,
                format!(
                    "this agent requires the extension{} {}: ask for {} in the A2A-Extensions header",
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(", "),
                    if missing.len() == 1 { "it" } else { "them" },
                ),
            ));
        }
        Ok(self.used(asked).map(str::to_owned).collect())
    }

    /// The extensions of `asked` the card declares, each once, in the order asked.
    fn used<'a>(&self, asked: &'a [String]) -> impl Iterator<Item = &'a str> {
        asked
            .iter()
            .enumerate()
            .filter(|(i, uri)| self.declared.contains(uri) && !asked[..*i].contains(uri))
            .map(|(_, uri)| uri.as_str())
    }
}

/// What a call answered (its operation's own answer; [`CallAnswer`], any operation's, where the
/// operation was read from a request by its method's name), and the extensions it used, which
/// the bindings name in the answer.
pub(crate) struct Answered<T = CallAnswer> {
    pub(crate) answer: T,
    pub(crate) used: Used,
}

impl<T> Answered<T> {
    /// The same answer, made another type.
    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Answered<U> {
        Answered {
            answer: f(self.answer),
            used: self.used,
        }
    }
}

/// The extensions a call used: those it asked for that the card declares, each once, in the
/// order asked.
#[derive(Debug, Default)]
pub(crate) struct Used(pub(crate) Vec<String>);

impl Used {
    /// The header value naming them, if any.
    pub(crate) fn header(&self) -> Option<axum::http::HeaderValue> {
        if self.0.is_empty() {
            return None;
        }
        axum::http::HeaderValue::from_str(&self.0.join(", ")).ok()
    }

    /// `response`, naming them in the HTTP header `name` (0.3 callers read
    /// `X-A2A-Extensions`).
    pub(crate) fn name_in(
        &self,
        mut response: axum::response::Response,
        name: &'static str,
    ) -> axum::response::Response {
        if let Some(used) = self.header() {
            response.headers_mut().insert(name, used);
        }
        response
    }
}

/// One protocol operation with its typed parameters.
#[derive(Debug)]
pub(crate) enum Op {
    /// `SendMessage`.
    Send(SendMessageRequest),
    /// `SendStreamingMessage`.
    Stream(SendMessageRequest),
    Get(GetTaskRequest),
    List(ListTasksRequest),
    Cancel(CancelTaskRequest),
    Subscribe(SubscribeToTaskRequest),
    CreateConfig(TaskPushNotificationConfig),
    GetConfig(GetTaskPushNotificationConfigRequest),
    ListConfigs(ListTaskPushNotificationConfigsRequest),
    DeleteConfig(DeleteTaskPushNotificationConfigRequest),
    ExtendedCard,
}
/// An invalid-params error about one field of the request, with a `BadRequest` detail.
pub(crate) fn field_error(field: &str, description: impl Into<String>) -> A2AError {
    use a2a::errordetails::{FieldViolation, TypedDetail};
    let description = description.into();
    A2AError::invalid_params(format!("`{field}`: {description}")).with_details(vec![
        TypedDetail::bad_request(vec![FieldViolation {
            field: field.to_owned(),
            description,
        }]),
    ])
}
/// What a call answers.
pub(crate) enum CallAnswer {
    /// `SendMessage`'s answer: the task (shared with its log where it ran here).
    Sent(Arc<Task>),
    /// A task (`GetTask`, `CancelTask`).
    Task(Box<Task>),
    /// A page of tasks.
    Tasks(ListTasksResponse),
    /// A stream of the task's events, numbered.
    Stream(NumberedStream),
    /// A push-notification config.
    Config(TaskPushNotificationConfig),
    /// A page of push-notification configs.
    Configs(ListTaskPushNotificationConfigsResponse),
    /// A push-notification config deleted: nothing.
    Deleted,
    /// The extended card.
    Card(Box<a2a::AgentCard>),
}

/// The answer as the JSON bindings write it (a stream, which is written event by event, and
/// nothing as `null`).
impl serde::Serialize for CallAnswer {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            // As `SendMessageResponse::Task` writes it.
            CallAnswer::Sent(task) => {
                use serde::ser::SerializeMap as _;
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("task", &**task)?;
                map.end()
            }
            CallAnswer::Task(task) => task.serialize(serializer),
            CallAnswer::Tasks(list) => list.serialize(serializer),
            CallAnswer::Config(config) => config.serialize(serializer),
            CallAnswer::Configs(list) => list.serialize(serializer),
            CallAnswer::Card(card) => card.serialize(serializer),
            CallAnswer::Deleted | CallAnswer::Stream(_) => serializer.serialize_unit(),
        }
    }
}

/// Why a call was not answered: a protocol error, or the caller's credentials (which each
/// binding answers with its own status and challenges).
#[derive(Debug)]
pub(crate) enum Failure {
    Error(A2AError),
    Refused(Refusal),
}

impl From<A2AError> for Failure {
    fn from(error: A2AError) -> Self {
        Failure::Error(error)
    }
}

impl From<Refusal> for Failure {
    fn from(refusal: Refusal) -> Self {
        Failure::Refused(refusal)
    }
}

impl From<super::limits::Limited> for Failure {
    fn from(limited: super::limits::Limited) -> Self {
        Failure::Refused(limited.into())
    }
}

impl Failure {
    /// As an A2A error (a refusal with its code and `ErrorInfo`).
    pub(crate) fn into_error(self) -> A2AError {
        match self {
            Failure::Error(error) => error,
            Failure::Refused(refusal) => refusal.error(),
        }
    }
}
