//! The agent as an MCP server (feature `mcp`): the same declaration served to MCP hosts, each
//! skill one tool with its real schemas, on the official Rust MCP SDK (`rmcp`).
//!
//! [`Server::mcp`](crate::server::Server::mcp) mounts it at `/mcp` on the agent's listener (MCP's
//! streamable HTTP transport), and [`serve_stdio`] serves it over standard input and output for
//! desktop hosts. Both sit on the agent's own request handler: a tool call is a structured
//! A2A message, dispatched, validated and run as any other. A call of a skill that can only
//! return (it neither streams nor takes a context, and is not durable) is answered at once,
//! without a task, unless it carries an idempotency key; any other call runs as a task in the
//! same store (with the same id an A2A caller reads it by), read back as the task's events.
//!
//! | MCP | A2A, the same agent |
//! |---|---|
//! | a tool (`tools/list`) | a skill: `name` its id, `title` its name, `description` its description |
//! | `inputSchema` | the skill's input schema, as on the card; a text skill takes `{"text": "..."}`; a skill that takes only files takes `{"files": [...]}`, each an MCP blob or text resource (`mimeType`, `blob` or `text`, optional `name`) |
//! | `outputSchema` | the skill's output schema when it is an object; a streamed output is `{"items": [...]}`, another value `{"result": ...}` |
//! | `tools/call` arguments | the data of a structured message (`application/json;schema=NAME`): the same validation, the same violations (a tool error naming each field) |
//! | `structuredContent` and the text content | the skill's typed answer (the data of its artifact, exact numbers), and its JSON text; file outputs are embedded resources |
//! | progress notifications (when the call has a `progressToken`) | each [`SkillContext::progress`](crate::SkillContext::progress) text and each streamed item |
//! | an elicitation (MCP `2025-06-18` to `2025-11-25`: `elicitation/create`; `2026-07-28`: an `input_required` result answered on retry) | [`SkillContext::ask`](crate::SkillContext::ask): the caller's answer resumes the same handler |
//! | `notifications/cancelled` | `CancelTask`: the handler stops |
//! | a tool error | the task failed (the handler's `Err`, or a panic), was rejected or canceled |
//! | an MCP task (the tasks extension, `io.modelcontextprotocol/tasks`, for a caller that declares it): `tasks/get`, `tasks/update`, `tasks/cancel` | a call of a skill that streams or takes a context returns at once with the A2A task's id; the task's state, its question as an input request, its result; the answer resumes it; cancel cancels it |
//!
//! Security is the card's: on `/mcp` the caller's credentials are checked by the same
//! [`Authentication`](crate::server::auth::Authentication) (`401` with `WWW-Authenticate`, before any
//! MCP message is read), a tool whose skill needs scopes the caller lacks is refused with
//! `403` and `WWW-Authenticate: Bearer error="insufficient_scope"` (MCP's authorization
//! spec), and skills marked `extended` are listed only to authenticated callers. For an
//! agent whose card declares OAuth 2.0 or OpenID Connect, the protected-resource metadata
//! (RFC 9728) is served at `/.well-known/oauth-protected-resource/mcp` and named in the
//! challenge. Over stdio there are no credentials: the caller is anonymous, so a secured
//! agent's tools are refused there (deny by default).
//!
//! The served card names the MCP endpoint in an extension entry ([`EXTENSION_URI`], `params.url`).
//!
//! Tenants: MCP has no `tenant` field, so over `/mcp` a call names its tenant in the HTTP header
//! [`TENANT_HEADER`] (`A2A-Tenant`); its tasks are that tenant's, apart from the others', as on
//! the A2A bindings, and a caller the server's tenant resolver does not let into it is refused.
//!
//! ```no_run
//! use a2a_card::server::Server;
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
//! // A2A on every binding and MCP at http://127.0.0.1:9000/mcp, on one listener:
//! Server::new(Echo).mcp(true).bind("127.0.0.1:9000").await?.serve().await?;
//! // Or MCP over stdio, for a desktop host that starts the agent itself:
//! a2a_card::server::mcp::serve_stdio(Echo).await?;
//! # Ok(()) }
//! ```

use std::sync::Arc;

use a2a::TaskState;
use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, DetailedTask, GetTaskParams,
    GetTaskResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerConfig,
    TASKS_EXTENSION_ID, TaskPayload, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::agent::Agent;
use crate::card::AgentCard;

use crate::agent::{Declared, SkillDecl};
use crate::server::ServerError;
use crate::server::call::{Binding, Context};
use crate::server::interfaces::Endpoint;
use crate::server::lifecycle::{GetTask, Lifecycle};

mod call;
mod gate;
mod render;
mod sessions;
mod tools;

use call::*;
pub use gate::RESOURCE_METADATA_PATH;
use gate::*;
use render::*;
use tools::*;

/// Where the MCP endpoint is mounted on the agent's listener.
///
/// ```
/// let url = format!("http://127.0.0.1:9000{}", a2a_card::server::mcp::PATH);
/// assert_eq!(url, "http://127.0.0.1:9000/mcp");
/// ```
pub const PATH: &str = crate::server::interfaces::MCP_PATH;

/// The URI of the card's extension entry that names the agent's MCP endpoint
/// (`params.url`, `params.transport`).
///
/// ```
/// # fn mcp_url(card: &a2a_card::AgentCard) -> Option<String> {
/// card.capabilities
///     .extensions
///     .iter()
///     .find(|e| e.uri == a2a_card::server::mcp::EXTENSION_URI)
///     .and_then(|e| e.params.as_ref()?.get("url")?.as_str().map(str::to_owned))
/// # }
/// ```
pub const EXTENSION_URI: &str = crate::server::interfaces::MCP_EXTENSION_URI;

/// Serves `agent` as an MCP server over standard input and output, until the host closes
/// them: the transport desktop hosts use when they start the agent themselves. Tasks are kept
/// in memory; for other options, build a [`Server`](crate::server::Server) and call
/// [`Server::serve_mcp_stdio`](crate::server::Server::serve_mcp_stdio).
///
/// Nothing but MCP messages may be written to standard output meanwhile (log to standard
/// error).
///
/// ```no_run
/// # use a2a_card::{agent, skill};
/// # struct Echo;
/// # /// Says back what it is told.
/// # #[agent(url = "http://127.0.0.1:9000")]
/// # impl Echo {
/// #     /// Echoes the text.
/// #     #[skill]
/// #     fn echo(&self, text: String) -> String { text }
/// # }
/// #[tokio::main]
/// async fn main() -> Result<(), a2a_card::server::ServerError> {
///     a2a_card::server::mcp::serve_stdio(Echo).await
/// }
/// ```
pub async fn serve_stdio<A: Agent>(agent: A) -> Result<(), ServerError> {
    crate::server::Server::new(agent).serve_mcp_stdio().await
}

/// The MCP face of one agent: its tools, and the request handler they run on.
pub(crate) struct Bridge {
    inner: Arc<Inner>,
}

impl Clone for Bridge {
    fn clone(&self) -> Self {
        Bridge {
            inner: Arc::clone(&self.inner),
        }
    }
}

struct Inner {
    lifecycle: Arc<Lifecycle>,
    skills: &'static [SkillDecl],
    tools: Tools,
    info: ServerConfig,
}

impl Bridge {
    /// The MCP face of `agent`, whose calls `lifecycle` answers.
    pub(crate) fn new(
        lifecycle: Arc<Lifecycle>,
        agent: &dyn Declared,
    ) -> Result<Self, ServerError> {
        let card = crate::agent::build_extended_card(agent.decl(), agent.skills())
            .map_err(ServerError::Card)?;
        let tools = Tools::of(agent.skills(), &card)?;
        let info = serde_json::from_value(json!({
            "protocolVersion": ProtocolVersion::default(),
            "capabilities": {"tools": {}, "extensions": {TASKS_EXTENSION_ID: {}}},
            "serverInfo": {"name": card.name, "version": card.version},
            "instructions": card.description,
        }))
        .map_err(|e| ServerError::Mcp(format!("the server description is not MCP's: {e}")))?;
        Ok(Bridge {
            inner: Arc::new(Inner {
                lifecycle,
                skills: agent.skills(),
                tools,
                info,
            }),
        })
    }

    /// The A2A task `id`, as the caller may read it.
    async fn a2a_task(&self, ctx: &Context, id: &str) -> Result<a2a::Task, McpError> {
        let request = a2a::GetTaskRequest {
            id: id.to_owned(),
            history_length: None,
            tenant: None,
        };
        match self.inner.lifecycle.call(ctx, GetTask(request)).await {
            Ok(answered) => Ok(answered.answer),
            Err(failure) => Err(McpError::invalid_params(failure.into_error().message, None)),
        }
    }

    /// The tool whose call made `task` (none: the task was not made by a tool call).
    fn tool_of(&self, task: &a2a::Task) -> Result<&ToolEntry, McpError> {
        let first = task.history.as_ref().and_then(|h| h.first());
        let name = first
            .and_then(|m| m.metadata.as_ref())
            .and_then(|m| m.get(TOOL_KEY))
            .and_then(Value::as_str);
        let entry = name.and_then(|n| self.inner.tools.entries.iter().find(|e| e.tool.name == n));
        entry.ok_or_else(|| {
            McpError::invalid_params(
                format!("task `{}` is not the task of a tool call", task.id),
                None,
            )
        })
    }
}

/// The HTTP header that names the tenant of a call over `/mcp` (MCP's requests have no
/// `tenant` field).
///
/// ```
/// // An MCP client of tenant `acme` sends `A2A-Tenant: acme` with each request to /mcp.
/// assert_eq!(a2a_card::server::mcp::TENANT_HEADER, "A2A-Tenant");
/// ```
pub const TENANT_HEADER: &str = "A2A-Tenant";

/// [`TENANT_HEADER`], as looked up on each call (lowercase, as HTTP names are compared).
const TENANT: axum::http::HeaderName = axum::http::HeaderName::from_static("a2a-tenant");

/// The context of an MCP request's calls: its HTTP request's (the caller the authentication
/// layer let in, the tool whose requirement the gate checked), anonymous over stdio.
fn ctx_of(context: &RequestContext<RoleServer>) -> Context {
    let Some(parts) = context.extensions.get::<axum::http::request::Parts>() else {
        return Context {
            binding: Binding::Mcp,
            ..Context::in_process()
        };
    };
    // The gate refused a request whose credentials were refused: what reaches here was let in.
    let mut ctx = Context::of(Binding::Mcp, parts).unwrap_or(Context {
        binding: Binding::Mcp,
        ..Context::in_process()
    });
    ctx.admitted = parts.extensions.get::<Admitted>().map(|a| a.0);
    ctx.tenant = parts
        .headers
        .get(TENANT)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    ctx
}

impl ServerHandler for Bridge {
    fn get_info(&self) -> ServerConfig {
        self.inner.info.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let authenticated = ctx_of(&context).is_authenticated();
        let tools = self
            .inner
            .tools
            .visible(authenticated)
            .map(|e| e.tool.clone())
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let mut task = self.a2a_task(&ctx_of(&context), &request.task_id).await?;
        let entry = self.tool_of(&task)?;
        let text = task.status.message.as_ref().map(message_text);
        let payload = match task.status.state.clone() {
            TaskState::InputRequired | TaskState::AuthRequired => {
                let asked = elicitation(text.as_deref().unwrap_or_default())?;
                let requests = json!({ANSWER: {"method": "elicitation/create", "params": asked}});
                TaskPayload::InputRequired {
                    input_requests: serde_json::from_value(requests).map_err(|e| {
                        McpError::internal_error(
                            format!("the input request is not MCP's: {e}"),
                            None,
                        )
                    })?,
                }
            }
            TaskState::Completed => {
                let artifacts = task.artifacts.take().unwrap_or_default();
                let result = result_of(self.inner.skills, entry, artifacts);
                TaskPayload::Completed {
                    result: object_of(&result)?,
                }
            }
            TaskState::Canceled => TaskPayload::Cancelled,
            // The skill's failure is the tool's error result, as the call would have answered.
            state if state.is_terminal() => TaskPayload::Completed {
                result: object_of(&error_result(
                    text.clone()
                        .filter(|t| !t.is_empty())
                        .unwrap_or_else(|| format!("the task ended {state:?}")),
                ))?,
            },
            _ => TaskPayload::Working,
        };
        let status = payload.status();
        let detailed = DetailedTask::new(mcp_task(&task, status, text), payload);
        Ok(GetTaskResult::new(detailed))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let ctx = ctx_of(&context);
        let mut responses = request.input_responses;
        let task = self.a2a_task(&ctx, &request.task_id).await?;
        let entry = self.tool_of(&task)?;
        let call = Call {
            lifecycle: &self.inner.lifecycle,
            skills: self.inner.skills,
            ctx,
            entry,
            progress: None,
            reported: 0,
            task: Some(task.id.clone()),
            context: &context,
        };
        match answer_in(responses.remove(ANSWER)) {
            Ok(answer) => {
                // The answer resumes the task, which runs on unwatched.
                if let Err(error) = call.answer(&task.id, answer).await {
                    return Err(McpError::invalid_params(error.message, None));
                }
            }
            Err(_) if call.waits().await => {
                call.cancel().await;
            }
            Err(why) => return Err(McpError::invalid_params(why, None)),
        }
        Ok(())
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let ctx = ctx_of(&context);
        let task = self.a2a_task(&ctx, &request.task_id).await?;
        self.tool_of(&task)?;
        // Cancelling an ended task is the caller's no-op (cooperative, as the extension says).
        cancel(&self.inner.lifecycle, &ctx, task.id).await;
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let ctx = ctx_of(&context);
        let tools = &self.inner.tools;
        let Some(entry) = tools.find(&request.name, ctx.is_authenticated()) else {
            let names: Vec<&str> = tools
                .visible(ctx.is_authenticated())
                .map(|e| e.tool.name.as_ref())
                .collect();
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool `{}`; this server's tools: {}",
                    request.name,
                    names.join(", ")
                ),
                None,
            ));
        };
        let mut call = Call {
            lifecycle: &self.inner.lifecycle,
            skills: self.inner.skills,
            ctx,
            entry,
            progress: context.meta.get_progress_token(),
            reported: 0,
            task: None,
            context: &context,
        };
        let events = match (request.request_state, request.input_responses) {
            // A retry with the caller's answer (MCP 2026-07-28): the state is the task's id.
            (Some(task), responses) => {
                call.task = Some(task.clone());
                match answer_in(responses.and_then(|mut r| r.remove(ANSWER))) {
                    Ok(answer) => call.answer(&task, answer).await,
                    // The state is the caller's to send: a task is canceled here only while
                    // it waits for an answer (as any caller with its id could).
                    Err(declined) if call.waits().await => {
                        return Ok(call.give_up(declined).await.into());
                    }
                    Err(declined) => return Ok(error_result(declined).into()),
                }
            }
            (None, _) => match message_of(entry, request.arguments) {
                Ok(message) => call.start(message).await,
                Err(error) => return Ok(tool_error(error, None).into()),
            },
        };
        // A caller that takes MCP tasks gets a long-running call as one: the A2A task (same
        // store, same id), polled with `tasks/get`.
        let tasks = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        if tasks && entry.long {
            return call.as_task(events).await;
        }
        call.follow(events).await
    }
}

/// The `/mcp` routes of `agent`, whose calls `lifecycle` answers: the MCP endpoint (streamable HTTP),
/// behind the body limit and the card's security, and the protected-resource metadata where
/// the card declares OAuth.
pub(crate) fn router(
    lifecycle: Arc<Lifecycle>,
    agent: &dyn Declared,
    guard: Option<Arc<crate::server::auth::Guard>>,
    card: &AgentCard,
    endpoint: &Endpoint,
    body_limit: usize,
) -> Result<axum::Router, ServerError> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };

    let bridge = Bridge::new(lifecycle, agent)?;
    let gate = Arc::new(Gate {
        guard,
        tools: bridge
            .inner
            .tools
            .entries
            .iter()
            .map(|e| (e.tool.name.to_string(), e.skill))
            .collect(),
        metadata: resource_metadata(card, endpoint),
        body_limit,
    });
    let mut hosts = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    if let Some(host) = endpoint.host() {
        hosts.push(host.to_owned());
    }
    // A call that sends nothing before its result is answered with JSON (one write), not an
    // event stream; progress, an elicitation and sessions still stream.
    let config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .with_allowed_hosts(hosts)
        .with_max_request_body_bytes(body_limit);
    let service = StreamableHttpService::new(
        move || Ok(bridge.clone()),
        // At most `sessions::MAX_SESSIONS` at once, the oldest closed first.
        Arc::new(sessions::Sessions::new(sessions::MAX_SESSIONS)),
        config,
    );
    // Shared, not cloned per request as a routed service would be (its configuration is
    // copied with it).
    let service = Arc::new(service);
    // Every request to the endpoint passes the gate first, in the same future.
    let gate_of_route = Arc::clone(&gate);
    let handle = move |request: axum::extract::Request| {
        let (service, gate) = (Arc::clone(&service), Arc::clone(&gate_of_route));
        async move {
            gated(&gate, request, |request| async move {
                axum::response::IntoResponse::into_response(service.handle(request).await)
            })
            .await
        }
    };
    let mut router = axum::Router::new().route(&endpoint.mcp_path(), axum::routing::any(handle));
    if let Some((document, _)) = &gate.metadata {
        let document = Arc::new(document.to_string());
        let serve = move || {
            let document = Arc::clone(&document);
            async move {
                let mut response = Response::new(Body::from(document.as_str().to_owned()));
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                response
            }
        };
        router = router.route(&metadata_path(endpoint), axum::routing::get(serve.clone()));
        // The bare well-known path, for clients that look there first: the agent alone on
        // its listener only (agents a host mounts have one each, by path).
        if endpoint.mount.is_empty() {
            router = router.route(
                "/.well-known/oauth-protected-resource",
                axum::routing::get(serve),
            );
        }
    }
    Ok(router)
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a::PartContent;
    use serde_json::json;

    #[test]
    fn the_tenant_header_is_looked_up_by_the_name_it_is_documented_as() {
        let documented = axum::http::HeaderName::from_bytes(TENANT_HEADER.as_bytes());
        assert_eq!(documented.ok(), Some(TENANT));
    }

    #[test]
    fn a_wrapped_schema_keeps_its_definitions_at_the_root() {
        let schema = json!({"$ref": "#/$defs/Day", "$defs": {"Day": {"type": "string"}}});
        let out = items_of(schema);
        assert_eq!(out["$defs"]["Day"]["type"], "string");
        assert_eq!(out["properties"]["items"]["items"]["$ref"], "#/$defs/Day");
        assert_eq!(out["required"], json!(["items"]));
    }

    #[test]
    fn an_answer_is_read_from_an_accepted_elicitation() {
        let accepted = json!({"action": "accept", "content": {"answer": "2026-12-01"}});
        assert_eq!(answer_in(Some(accepted)).as_deref(), Ok("2026-12-01"));
        let declined = answer_in(Some(json!({"action": "decline"}))).unwrap_err();
        assert!(declined.contains("decline"), "{declined}");
        assert!(answer_in(None).is_err());
    }

    #[test]
    fn the_issuer_of_a_metadata_url_drops_its_well_known_suffix() {
        assert_eq!(
            issuer_of("https://auth.example.com/realms/a/.well-known/openid-configuration"),
            "https://auth.example.com/realms/a"
        );
        assert_eq!(
            origin_of("https://auth.example.com/token"),
            "https://auth.example.com"
        );
    }

    #[test]
    fn files_arguments_become_file_parts_and_bad_ones_name_the_field() {
        let files =
            json!([{"mimeType": "text/calendar", "text": "BEGIN:VCALENDAR", "name": "a.ics"}]);
        let parts = files_in(Some(&files)).unwrap();
        assert_eq!(parts[0].filename.as_deref(), Some("a.ics"));
        assert!(matches!(&parts[0].content, PartContent::Raw(b) if b == b"BEGIN:VCALENDAR"));
        let bad = json!([{"mimeType": "text/plain", "blob": "not base64!"}]);
        let error = files_in(Some(&bad)).unwrap_err();
        let data = error.to_jsonrpc_error().data.unwrap().to_string();
        assert!(data.contains("arguments.files[0].blob"), "{data}");
        assert!(files_in(Some(&json!([]))).is_err());
    }
}
