//! The agent as an MCP server (feature `mcp`): the same declaration served to MCP hosts, each
//! skill one tool with its real schemas, on the official Rust MCP SDK (`rmcp`).
//!
//! [`Server::mcp`](super::Server::mcp) mounts it at `/mcp` on the agent's listener (MCP's
//! streamable HTTP transport), and [`serve_stdio`] serves it over standard input and output for
//! desktop hosts. Both sit on the agent's own request handler: a tool call is a structured
//! A2A message, dispatched, validated, run and stored as any other (a task in the same store,
//! with the same id), and read back as the task's events.
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
//! [`Authentication`](super::auth::Authentication) (`401` with `WWW-Authenticate`, before any
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
//! a2a_card::mcp::serve_stdio(Echo).await?;
//! # Ok(()) }
//! ```

use std::sync::Arc;

use a2a::{
    A2AError, Artifact, CancelTaskRequest, Message, Part, PartContent, Role, SendMessageRequest,
    StreamResponse, TaskState,
};
use a2a_server::{RequestHandler, ServiceParams};
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use futures::StreamExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, DetailedTask, ErrorCode, GetTaskParams, GetTaskResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    ServerConfig, TASKS_EXTENSION_ID, TaskPayload, TaskStatus, Tool, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use crate::agent::Agent;
use crate::card::{AgentCard, SecurityScheme};
use crate::schema::SchemaMode;

use super::ServerError;
use super::auth::{self, Guard, Refusal};
use super::interfaces::Endpoint;
use super::lifecycle::{Lifecycle, NumberedStream};

/// Where the MCP endpoint is mounted on the agent's listener.
///
/// ```
/// let url = format!("http://127.0.0.1:9000{}", a2a_card::mcp::PATH);
/// assert_eq!(url, "http://127.0.0.1:9000/mcp");
/// ```
pub const PATH: &str = super::interfaces::MCP_PATH;

/// Where the protected-resource metadata (RFC 9728) of the MCP endpoint is served, for agents
/// whose card declares OAuth 2.0 or OpenID Connect.
///
/// ```
/// // What a `401` from `/mcp` names in its `WWW-Authenticate: Bearer resource_metadata="..."`.
/// assert!(a2a_card::mcp::RESOURCE_METADATA_PATH.starts_with("/.well-known/oauth-protected-resource"));
/// ```
pub const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// The URI of the card's extension entry that names the agent's MCP endpoint
/// (`params.url`, `params.transport`).
///
/// ```
/// # fn mcp_url(card: &a2a_card::AgentCard) -> Option<String> {
/// card.capabilities
///     .extensions
///     .iter()
///     .find(|e| e.uri == a2a_card::mcp::EXTENSION_URI)
///     .and_then(|e| e.params.as_ref()?.get("url")?.as_str().map(str::to_owned))
/// # }
/// ```
pub const EXTENSION_URI: &str = super::interfaces::MCP_EXTENSION_URI;

/// The name of the one field an elicited answer has.
const ANSWER: &str = "answer";

/// Serves `agent` as an MCP server over standard input and output, until the host closes
/// them: the transport desktop hosts use when they start the agent themselves. Tasks are kept
/// in memory; for other options, build a [`Server`](super::Server) and call
/// [`Server::serve_mcp_stdio`](super::Server::serve_mcp_stdio).
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
///     a2a_card::mcp::serve_stdio(Echo).await
/// }
/// ```
pub async fn serve_stdio<A: Agent>(agent: A) -> Result<(), ServerError> {
    super::Server::new(agent).serve_mcp_stdio().await
}

/// The MCP face of one agent: its tools, and the request handler they run on.
pub(crate) struct Bridge<A: Agent> {
    inner: Arc<Inner<A>>,
}

impl<A: Agent> Clone for Bridge<A> {
    fn clone(&self) -> Self {
        Bridge {
            inner: Arc::clone(&self.inner),
        }
    }
}

struct Inner<A: Agent> {
    handler: Arc<Lifecycle<A>>,
    tools: Tools,
    info: ServerConfig,
}

impl<A: Agent> Bridge<A> {
    /// The MCP face of the agent served by `handler`.
    pub(crate) fn new(handler: Arc<Lifecycle<A>>) -> Result<Self, ServerError> {
        let card =
            crate::agent::build_extended_card(&A::DECL, A::SKILLS).map_err(ServerError::Card)?;
        let tools = Tools::of::<A>(&card)?;
        let info = serde_json::from_value(json!({
            "protocolVersion": ProtocolVersion::default(),
            "capabilities": {"tools": {}, "extensions": {TASKS_EXTENSION_ID: {}}},
            "serverInfo": {"name": card.name, "version": card.version},
            "instructions": card.description,
        }))
        .map_err(|e| ServerError::Mcp(format!("the server description is not MCP's: {e}")))?;
        Ok(Bridge {
            inner: Arc::new(Inner {
                handler,
                tools,
                info,
            }),
        })
    }
}

impl<A: Agent> Bridge<A> {
    /// The A2A task `id`, as the caller may read it.
    async fn a2a_task(&self, params: &ServiceParams, id: &str) -> Result<a2a::Task, McpError> {
        let request = a2a::GetTaskRequest {
            id: id.to_owned(),
            history_length: None,
            tenant: None,
        };
        super::exact::plain(self.inner.handler.get_task(params, request))
            .await
            .map_err(|e| McpError::invalid_params(e.message, None))
    }

    /// The tool whose call made `task` (none: the task was not made by a tool call).
    fn tool_of(&self, task: &a2a::Task) -> Result<&Entry, McpError> {
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

/// How often a caller should poll a task, in milliseconds.
const POLL_INTERVAL_MS: u64 = 500;

/// The MCP view of A2A task `task`, in `status`. A2A tasks keep the time of their last status,
/// not of their creation: both times are that one.
fn mcp_task(task: &a2a::Task, status: TaskStatus, message: Option<String>) -> rmcp::model::Task {
    let at = task
        .status
        .timestamp
        .unwrap_or_else(chrono::Utc::now)
        .to_rfc3339();
    let mut out = rmcp::model::Task::new(task.id.clone(), status, at.clone(), at)
        .with_poll_interval_ms(POLL_INTERVAL_MS);
    if let Some(message) = message.filter(|m| !m.is_empty()) {
        out = out.with_status_message(message);
    }
    out
}

/// A tool result as the JSON object a task's payload carries.
fn object_of(result: &CallToolResult) -> Result<Map<String, Value>, McpError> {
    match serde_json::to_value(result) {
        Ok(Value::Object(object)) => Ok(object),
        _ => Err(McpError::internal_error(
            "a tool result is a JSON object",
            None,
        )),
    }
}

/// The tools, one per skill, in the order of the skills.
struct Tools {
    entries: Vec<Entry>,
}

/// One tool: what MCP sees, and how its calls become messages and its answers results.
struct Entry {
    tool: Tool,
    skill: usize,
    input: Input,
    output: Output,
    extended: bool,
    /// Whether a call may run as an MCP task (its skill streams, or takes a context: it can
    /// report progress and ask).
    long: bool,
}

/// How a tool's arguments become the message's parts.
enum Input {
    /// The arguments are the data of a part with this schema media type.
    Schema(String),
    /// The arguments are the data of a plain JSON part.
    Json,
    /// `{"text": "..."}`: a text part.
    Text,
    /// `{"files": [...]}`: file parts.
    Files,
}

/// How the skill's artifact becomes `structuredContent`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Output {
    /// The one data value, an object.
    Object,
    /// `{"result": value}` (a value that is not an object).
    Wrapped,
    /// `{"items": [...]}`: a streamed output.
    Items,
    /// No structured content (text or files).
    Unstructured,
}

impl Tools {
    fn of<A: Agent>(card: &AgentCard) -> Result<Tools, ServerError> {
        let mut entries = Vec::new();
        for (index, decl) in A::SKILLS.iter().enumerate() {
            let Some(skill) = card.skills.iter().find(|s| s.id == decl.id) else {
                continue;
            };
            let named = |name: &str| crate::ag_ui::named_schema(card, name).cloned();
            let input_schema = decl.input.schema.map(|s| s.name);
            let (input, input_json) = match input_schema.and_then(|n| Some((n, named(n)?))) {
                Some((name, schema)) => (
                    Input::Schema(
                        SchemaMode::new(name)
                            .map(|m| m.to_string())
                            .unwrap_or_default(),
                    ),
                    schema,
                ),
                None if decl.input.json => (Input::Json, json!({"type": "object"})),
                None if decl.input.text => (Input::Text, crate::ag_ui::text_parameters()),
                None if decl.input.files => (Input::Files, files_parameters()),
                None => (Input::Text, crate::ag_ui::text_parameters()),
            };
            let (output, output_json) = match decl.output.schema.and_then(|s| named(s.name)) {
                Some(schema) if decl.output.streaming => (Output::Items, Some(items_of(schema))),
                Some(schema) if is_object(&schema) => (Output::Object, Some(schema)),
                Some(schema) => (Output::Wrapped, Some(wrapped(schema, "result"))),
                None if decl.output.json => (Output::Wrapped, None),
                None => (Output::Unstructured, None),
            };
            let mut tool = json!({
                "name": skill.id,
                "title": skill.name,
                "description": skill.description,
                "inputSchema": input_json,
            });
            if let Some(schema) = output_json {
                tool["outputSchema"] = schema;
            }
            let tool: Tool = serde_json::from_value(tool).map_err(|e| {
                ServerError::Mcp(format!(
                    "skill `{}` does not make an MCP tool: {e}",
                    skill.id
                ))
            })?;
            entries.push(Entry {
                tool,
                skill: index,
                input,
                output,
                extended: decl.extended,
                long: decl.output.streaming || decl.input.context,
            });
        }
        Ok(Tools { entries })
    }

    /// The tool called `name`, as the caller may see it.
    fn find(&self, name: &str, authenticated: bool) -> Option<&Entry> {
        self.visible(authenticated).find(|e| e.tool.name == name)
    }

    fn visible(&self, authenticated: bool) -> impl Iterator<Item = &Entry> {
        self.entries
            .iter()
            .filter(move |e| authenticated || !e.extended)
    }
}

/// The `inputSchema` of a tool whose skill takes only files: MCP resource contents.
fn files_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {"files": {
            "description": "The files, as MCP resource contents: base64 `blob` or `text`",
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "mimeType": {"type": "string"},
                    "blob": {"type": "string", "contentEncoding": "base64"},
                    "text": {"type": "string"},
                    "name": {"type": "string"},
                    "uri": {"type": "string"}
                },
                "required": ["mimeType"]
            }
        }},
        "required": ["files"]
    })
}

fn is_object(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// `schema` as the one property `field` of an object schema; its `$defs` stay at the root,
/// where its references point.
fn wrapped(mut schema: Value, field: &str) -> Value {
    let defs = schema.as_object_mut().and_then(|o| o.remove("$defs"));
    let mut out = json!({
        "type": "object",
        "properties": {field: schema},
        "required": [field],
    });
    if let Some(defs) = defs {
        out["$defs"] = defs;
    }
    out
}

/// The output schema of a streamed output: `{"items": [item, ...]}`.
fn items_of(mut item: Value) -> Value {
    let defs = item.as_object_mut().and_then(|o| o.remove("$defs"));
    let mut out = wrapped(json!({"type": "array", "items": item}), "items");
    if let Some(defs) = defs {
        out["$defs"] = defs;
    }
    out
}

/// The service parameters of an MCP request: the HTTP request's headers (where the
/// authentication layer sealed the principal), none over stdio.
fn params_of(context: &RequestContext<RoleServer>) -> ServiceParams {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .map(|parts| super::jsonrpc::service_params(&parts.headers))
        .unwrap_or_default()
}

impl<A: Agent> ServerHandler for Bridge<A> {
    fn get_info(&self) -> ServerConfig {
        self.inner.info.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let authenticated = auth::is_authenticated(&params_of(&context));
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
        let params = params_of(&context);
        let task = self.a2a_task(&params, &request.task_id).await?;
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
                let result = result_of::<A>(entry, task.artifacts.as_deref().unwrap_or_default());
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
        let params = params_of(&context);
        let mut responses = request.input_responses;
        let task = self.a2a_task(&params, &request.task_id).await?;
        let entry = self.tool_of(&task)?;
        let call = Call {
            handler: &self.inner.handler,
            params,
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
        let params = params_of(&context);
        let task = self.a2a_task(&params, &request.task_id).await?;
        self.tool_of(&task)?;
        // Cancelling an ended task is the caller's no-op (cooperative, as the extension says).
        cancel(&self.inner.handler, &params, task.id).await;
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let params = params_of(&context);
        let tools = &self.inner.tools;
        let Some(entry) = tools.find(&request.name, auth::is_authenticated(&params)) else {
            let names: Vec<&str> = tools
                .visible(auth::is_authenticated(&params))
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
            handler: &self.inner.handler,
            params,
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

/// One tool call under way.
struct Call<'a, A: Agent> {
    handler: &'a Lifecycle<A>,
    params: ServiceParams,
    entry: &'a Entry,
    progress: Option<ProgressToken>,
    reported: u32,
    task: Option<String>,
    context: &'a RequestContext<RoleServer>,
}

/// Where a task's stream stopped.
enum Stop {
    /// The task ended, as this result.
    Ended(CallToolResult),
    /// The task asks this question.
    Asks(String),
}

impl<A: Agent> Call<'_, A> {
    async fn start(&self, message: Message) -> Result<NumberedStream, A2AError> {
        let request = SendMessageRequest {
            message,
            configuration: None,
            metadata: None,
            tenant: None,
        };
        // A new task runs the tool's skill; an answer goes to the task that asked.
        let skill = request
            .message
            .task_id
            .is_none()
            .then_some(self.entry.skill);
        self.handler.turn(&self.params, request, skill).await
    }

    /// Sends `answer` to task `id`, which asked.
    async fn answer(&self, id: &str, answer: String) -> Result<NumberedStream, A2AError> {
        let mut message = Message::new(Role::User, vec![Part::text(answer)]);
        message.task_id = Some(id.to_owned());
        self.start(message).await
    }

    /// The call as an MCP task: the A2A task it started, which runs on unwatched.
    async fn as_task(
        &self,
        events: Result<NumberedStream, A2AError>,
    ) -> Result<CallToolResponse, McpError> {
        let mut events = match events {
            Ok(events) => events,
            Err(error) => return Ok(tool_error(error, None).into()),
        };
        match events.next().await {
            Some(Ok((_, StreamResponse::Task(task)))) => {
                let seed = mcp_task(&task, TaskStatus::Working, None);
                let created: CreateTaskResult = serde_json::from_value(json!({
                    "resultType": "task",
                    "taskId": seed.task_id,
                    "status": "working",
                    "createdAt": seed.created_at,
                    "lastUpdatedAt": seed.last_updated_at,
                    "ttlMs": null,
                    "pollIntervalMs": POLL_INTERVAL_MS,
                }))
                .map_err(|e| {
                    McpError::internal_error(format!("the task is not MCP's: {e}"), None)
                })?;
                Ok(CallToolResponse::Task(created))
            }
            Some(Err(error)) => Ok(tool_error(error, None).into()),
            _ => Err(McpError::internal_error("the task did not begin", None)),
        }
    }

    /// Follows the call's task through its turns until it ends, asking the caller each
    /// question it asks.
    async fn follow(
        &mut self,
        mut events: Result<NumberedStream, A2AError>,
    ) -> Result<CallToolResponse, McpError> {
        loop {
            let stream = match events {
                Ok(stream) => stream,
                Err(error) => return Ok(tool_error(error, self.task.as_deref()).into()),
            };
            let question = match self.read(stream).await? {
                Stop::Ended(result) => return Ok(result.into()),
                Stop::Asks(question) => question,
            };
            let Some(id) = self.task.clone() else {
                return Err(McpError::internal_error("the task has no id", None));
            };
            let modern = self
                .context
                .protocol_version()
                .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
            let elicits = self
                .context
                .client_capabilities()
                .is_some_and(|c| c.elicitation.is_some());
            if !elicits {
                let why = format!(
                    "the skill needs an answer (\"{question}\"), and this client does not take elicitation requests: the task was canceled"
                );
                return Ok(self.give_up(why).await.into());
            }
            if modern {
                return input_required(&question, &id);
            }
            let asked = elicitation(&question)?;
            let answer = match self.context.peer.create_elicitation(asked).await {
                Ok(result) => answer_in(serde_json::to_value(result).ok()),
                Err(e) => Err(format!("the elicitation failed: {e}")),
            };
            events = match answer {
                Ok(answer) => self.answer(&id, answer).await,
                Err(why) => return Ok(self.give_up(why).await.into()),
            };
        }
    }

    /// Reads one turn's stream: progress to the caller, until the task ends or asks.
    async fn read(&mut self, mut stream: NumberedStream) -> Result<Stop, McpError> {
        let mut artifacts: Vec<Artifact> = Vec::new();
        let mut question = None;
        let token = self.context.ct.clone();
        let cancelled = token.cancelled();
        tokio::pin!(cancelled);
        loop {
            let next = tokio::select! {
                _ = &mut cancelled => {
                    self.cancel().await;
                    return Err(McpError::new(ErrorCode::INTERNAL_ERROR, "the call was cancelled", None));
                }
                next = stream.next() => next,
            };
            let event = match next {
                None => break,
                Some(Err(error)) => {
                    return Ok(Stop::Ended(tool_error(error, self.task.as_deref())));
                }
                Some(Ok((_, event))) => event,
            };
            let status = match event {
                StreamResponse::Task(task) => {
                    self.task = Some(task.id);
                    artifacts = task.artifacts.unwrap_or_default();
                    task.status
                }
                StreamResponse::StatusUpdate(update) => update.status,
                StreamResponse::ArtifactUpdate(update) => {
                    let append = update.append == Some(true);
                    let id = &update.artifact.artifact_id;
                    // A chunk is news; an artifact sent again whole (its closing update) is not.
                    if append || !artifacts.iter().any(|a| &a.artifact_id == id) {
                        for part in &update.artifact.parts {
                            self.report(render_part(part)).await;
                        }
                    }
                    apply(&mut artifacts, update.artifact, append);
                    continue;
                }
                StreamResponse::Message(message) => {
                    let texts = message.parts.iter().filter_map(Part::as_text);
                    let text = texts.collect::<Vec<_>>().join("\n");
                    return Ok(Stop::Ended(CallToolResult::success(vec![
                        ContentBlock::text(text),
                    ])));
                }
            };
            let text = status.message.as_ref().map(message_text);
            question = None;
            match status.state {
                TaskState::Working => {
                    if let Some(text) = text.filter(|t| !t.is_empty()) {
                        self.report(text).await;
                    }
                }
                TaskState::InputRequired | TaskState::AuthRequired => {
                    question = Some(text.unwrap_or_default());
                }
                TaskState::Completed => {
                    return Ok(Stop::Ended(result_of::<A>(self.entry, &artifacts)));
                }
                TaskState::Canceled => {
                    return Ok(Stop::Ended(error_result(format!(
                        "the task was canceled{}",
                        text.map(|t| format!(": {t}")).unwrap_or_default()
                    ))));
                }
                state if state.is_terminal() => {
                    return Ok(Stop::Ended(error_result(
                        text.filter(|t| !t.is_empty())
                            .unwrap_or_else(|| format!("the task ended {state:?}")),
                    )));
                }
                _ => {}
            }
        }
        match question {
            Some(question) => Ok(Stop::Asks(question)),
            None => Ok(Stop::Ended(error_result(
                "the task's events ended before it finished".to_owned(),
            ))),
        }
    }

    /// Tells the caller of progress, when it asked for it (a progress token).
    async fn report(&mut self, message: String) {
        let Some(token) = &self.progress else { return };
        self.reported += 1;
        let mut progress = ProgressNotificationParam::new(token.clone(), f64::from(self.reported));
        progress.message = Some(message);
        // A caller gone away is noticed by the call's cancellation, not here.
        let _ = self.context.peer.notify_progress(progress).await;
    }

    /// Whether the call's task waits for an answer.
    async fn waits(&self) -> bool {
        let Some(id) = &self.task else { return false };
        let request = a2a::GetTaskRequest {
            id: id.clone(),
            history_length: Some(0),
            tenant: None,
        };
        let task = super::exact::plain(self.handler.get_task(&self.params, request)).await;
        task.is_ok_and(|t| {
            matches!(
                t.status.state,
                TaskState::InputRequired | TaskState::AuthRequired
            )
        })
    }

    /// Cancels the call's task, if it has one.
    async fn cancel(&self) {
        if let Some(id) = &self.task {
            cancel(self.handler, &self.params, id.clone()).await;
        }
    }

    /// Cancels the task, which no answer will come to, and says why.
    async fn give_up(&self, why: String) -> CallToolResult {
        self.cancel().await;
        error_result(why)
    }
}

/// Cancels task `id` for the caller of `params`; its answer (the task, or why not) is not
/// wanted.
async fn cancel<A: Agent>(handler: &Lifecycle<A>, params: &ServiceParams, id: String) {
    let request = CancelTaskRequest {
        id,
        metadata: None,
        tenant: None,
    };
    let _ = super::exact::plain(handler.cancel_task(params, request)).await;
}

/// The result of a completed task of tool `entry`: the skill's artifact as structured content
/// and text, other artifacts and files as content.
fn result_of<A: Agent>(entry: &Entry, artifacts: &[Artifact]) -> CallToolResult {
    let own = A::SKILLS[entry.skill].id;
    let mut content = Vec::new();
    let mut data = Vec::new();
    for artifact in artifacts {
        let is_own = artifact.name.as_deref() == Some(own);
        for part in &artifact.parts {
            match &part.content {
                PartContent::Data(value) if is_own => data.push(value.clone()),
                PartContent::Data(value) => content.push(ContentBlock::text(value.to_string())),
                PartContent::Text(text) => content.push(ContentBlock::text(text.clone())),
                PartContent::Raw(_) | PartContent::Url(_) => {
                    content.extend(resource_of(part, &artifact.artifact_id));
                }
            }
        }
    }
    let structured = match (entry.output, data.len()) {
        (Output::Items, _) => Some(json!({"items": data})),
        (_, 0) => None,
        (Output::Object, _) if data[0].is_object() => Some(data.swap_remove(0)),
        (Output::Unstructured, _) if data.len() == 1 && data[0].is_object() => {
            Some(data.swap_remove(0))
        }
        (_, 1) => Some(json!({"result": data.swap_remove(0)})),
        (_, _) => Some(json!({"result": data})),
    };
    let mut result = match &structured {
        Some(value) => {
            let mut blocks = vec![ContentBlock::text(value.to_string())];
            blocks.extend(content);
            CallToolResult::success(blocks)
        }
        None => CallToolResult::success(content),
    };
    result.structured_content = structured;
    result
}

/// The message of a tool call: the arguments as the skill's input.
fn message_of(entry: &Entry, arguments: Option<Map<String, Value>>) -> Result<Message, A2AError> {
    let arguments = arguments.unwrap_or_default();
    let parts = match &entry.input {
        Input::Schema(mode) => vec![data_part(Value::Object(arguments), mode)],
        Input::Json => vec![data_part(
            Value::Object(arguments),
            crate::dispatch::PLAIN_JSON,
        )],
        Input::Text => match arguments.get("text") {
            Some(Value::String(text)) => vec![Part::text(text.clone())],
            _ => {
                return Err(super::lifecycle::field_error(
                    "arguments.text",
                    "is required: the request, as a string",
                ));
            }
        },
        Input::Files => files_in(arguments.get("files"))?,
    };
    let mut message = Message::new(Role::User, parts);
    // The tool a task was called as, for `tasks/get` to read its result as the tool's.
    message.metadata = Some(std::collections::HashMap::from([(
        TOOL_KEY.to_owned(),
        Value::String(entry.tool.name.to_string()),
    )]));
    Ok(message)
}

/// The metadata key, on a tool call's message, naming its tool.
const TOOL_KEY: &str = "a2a-card/mcp-tool";

fn data_part(data: Value, media_type: &str) -> Part {
    Part {
        content: PartContent::Data(data),
        filename: None,
        media_type: Some(media_type.to_owned()),
        metadata: None,
    }
}

/// The file parts of `{"files": [...]}` (MCP resource contents).
fn files_in(files: Option<&Value>) -> Result<Vec<Part>, A2AError> {
    let Some(Value::Array(files)) = files.filter(|f| f.as_array().is_some_and(|a| !a.is_empty()))
    else {
        return Err(super::lifecycle::field_error(
            "arguments.files",
            "is required: an array of at least one file (`mimeType`, and `blob` or `text`)",
        ));
    };
    let mut parts = Vec::with_capacity(files.len());
    for (i, file) in files.iter().enumerate() {
        let field = |name: &str| file.get(name).and_then(Value::as_str);
        let at = |name: &str| format!("arguments.files[{i}].{name}");
        let Some(mime) = field("mimeType") else {
            return Err(super::lifecycle::field_error(
                &at("mimeType"),
                "is required: the file's media type",
            ));
        };
        let bytes = match (field("blob"), field("text")) {
            (Some(blob), _) => STANDARD.decode(blob).map_err(|e| {
                super::lifecycle::field_error(&at("blob"), format!("is not base64: {e}"))
            })?,
            (None, Some(text)) => text.as_bytes().to_vec(),
            (None, None) => {
                return Err(super::lifecycle::field_error(
                    &at("blob"),
                    "is required (or `text`): the file's content",
                ));
            }
        };
        parts.push(Part {
            content: PartContent::Raw(bytes),
            filename: field("name").map(str::to_owned),
            media_type: Some(mime.to_owned()),
            metadata: None,
        });
    }
    Ok(parts)
}

/// Applies an artifact update to the artifacts seen so far.
fn apply(artifacts: &mut Vec<Artifact>, artifact: Artifact, append: bool) {
    match artifacts
        .iter_mut()
        .find(|a| a.artifact_id == artifact.artifact_id)
    {
        Some(seen) if append => seen.parts.extend(artifact.parts),
        Some(seen) => *seen = artifact,
        None => artifacts.push(artifact),
    }
}

/// What a progress notification says of a streamed part.
fn render_part(part: &Part) -> String {
    match &part.content {
        PartContent::Text(text) => text.clone(),
        PartContent::Data(value) => value.to_string(),
        PartContent::Raw(bytes) => format!(
            "a file ({}, {} bytes)",
            part.media_type
                .as_deref()
                .unwrap_or("application/octet-stream"),
            bytes.len()
        ),
        PartContent::Url(url) => format!("a file at {url}"),
    }
}

/// The text of a status message.
fn message_text(message: &Message) -> String {
    let texts: Vec<&str> = message.parts.iter().filter_map(Part::as_text).collect();
    texts.join("\n")
}

/// A file part as MCP content: an embedded resource (bytes) or a resource link (a URL).
fn resource_of(part: &Part, artifact: &str) -> Option<ContentBlock> {
    let mime = part.media_type.clone();
    let block = match &part.content {
        PartContent::Raw(bytes) => {
            let name = part.filename.as_deref().unwrap_or(artifact);
            json!({"type": "resource", "resource": {
                "uri": format!("a2a-artifact:{artifact}/{name}"),
                "mimeType": mime,
                "blob": STANDARD.encode(bytes),
            }})
        }
        PartContent::Url(url) => json!({
            "type": "resource_link",
            "uri": url,
            "name": part.filename.as_deref().unwrap_or(artifact),
            "mimeType": mime,
        }),
        _ => return None,
    };
    serde_json::from_value(block).ok()
}

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// A refused or failed call as a tool error: the message, and the details (the violations of
/// invalid arguments, each naming its field) as JSON.
fn tool_error(error: A2AError, task: Option<&str>) -> CallToolResult {
    let mut blocks = vec![ContentBlock::text(error.message.clone())];
    let details = error.to_jsonrpc_error().data;
    if let Some(details) = details.filter(|d| !d.is_null()) {
        blocks.push(ContentBlock::text(details.to_string()));
    }
    if let Some(task) = task {
        blocks.push(ContentBlock::text(format!("task: {task}")));
    }
    CallToolResult::error(blocks)
}

/// The form that asks `question`: one required string, the answer.
fn elicitation(question: &str) -> Result<rmcp::model::ElicitRequestParams, McpError> {
    serde_json::from_value(json!({
        "mode": "form",
        "message": question,
        "requestedSchema": {
            "type": "object",
            "properties": {ANSWER: {"type": "string", "title": "Answer", "description": question}},
            "required": [ANSWER],
        },
    }))
    .map_err(|e| McpError::internal_error(format!("the elicitation is not MCP's: {e}"), None))
}

/// The `input_required` result that asks `question` of a 2026-07-28 caller, who retries with
/// the answer and the task's id as the request state.
fn input_required(question: &str, task: &str) -> Result<CallToolResponse, McpError> {
    let asked = elicitation(question)?;
    let result = json!({
        "resultType": "input_required",
        "inputRequests": {ANSWER: {"method": "elicitation/create", "params": asked}},
        "requestState": task,
    });
    serde_json::from_value::<rmcp::model::InputRequiredResult>(result)
        .map(CallToolResponse::InputRequired)
        .map_err(|e| McpError::internal_error(format!("the input request is not MCP's: {e}"), None))
}

/// The answer in an elicitation's result, or why there is none.
fn answer_in(result: Option<Value>) -> Result<String, String> {
    let Some(result) = result else {
        return Err("the retry carries no answer to the skill's question".to_owned());
    };
    match result.get("action").and_then(Value::as_str) {
        Some("accept") => {}
        Some(action) => {
            return Err(format!(
                "the caller did not answer the skill's question ({action})"
            ));
        }
        None => return Err("the answer has no `action`".to_owned()),
    }
    match result.pointer("/content/answer") {
        Some(Value::String(answer)) => Ok(answer.clone()),
        Some(other) => Ok(other.to_string()),
        None => Err("the answer has no `content.answer`".to_owned()),
    }
}

/// The `/mcp` routes of an agent served by `handler`: the MCP endpoint (streamable HTTP),
/// behind the body limit and the card's security, and the protected-resource metadata where
/// the card declares OAuth.
pub(crate) fn router<A: Agent>(
    handler: Arc<Lifecycle<A>>,
    guard: Option<Arc<Guard>>,
    card: &AgentCard,
    endpoint: &Endpoint,
    body_limit: usize,
) -> Result<axum::Router, ServerError> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };

    let bridge = Bridge::new(handler)?;
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
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let mut router = axum::Router::new().route_service(PATH, service).layer(
        axum::middleware::from_fn_with_state(Arc::clone(&gate), layer),
    );
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
        router = router
            .route(RESOURCE_METADATA_PATH, axum::routing::get(serve.clone()))
            .route(
                "/.well-known/oauth-protected-resource",
                axum::routing::get(serve),
            );
    }
    Ok(router)
}

/// What the `/mcp` layer checks: the card's security, and which skill each tool runs.
struct Gate {
    guard: Option<Arc<Guard>>,
    tools: Vec<(String, usize)>,
    /// The protected-resource metadata and its URL, where the card declares OAuth.
    metadata: Option<(Value, String)>,
    body_limit: usize,
}

/// The layer in front of the MCP endpoint: the body limit, the caller's credentials (sealed
/// in for the handler), and a `tools/call` of a skill the caller may not use refused as MCP's
/// authorization spec says (`403`, `insufficient_scope`).
async fn layer(
    axum::extract::State(gate): axum::extract::State<Arc<Gate>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    use super::body_limit::{self, BodyError};
    let (mut parts, body) = request.into_parts();
    let refuse = |refusal: &Refusal| gate.refusal(refusal);
    let principal = match &gate.guard {
        Some(guard) => match guard.authenticate(&parts).await {
            Ok(principal) => principal,
            Err(refusal) => return refuse(&refusal),
        },
        None => None,
    };
    auth::seal(&mut parts.headers, principal.as_ref());
    let bytes = match body_limit::read(&parts.headers, body, gate.body_limit).await {
        Ok(bytes) => bytes,
        Err(error) => {
            let message = error.message(gate.body_limit);
            return match error {
                BodyError::TooLarge => {
                    body_limit::closing(rpc_error(StatusCode::PAYLOAD_TOO_LARGE, -32600, message))
                }
                BodyError::Unreadable => rpc_error(StatusCode::BAD_REQUEST, -32600, message),
            };
        }
    };
    let delete = parts.method == axum::http::Method::DELETE;
    if parts.method == axum::http::Method::POST {
        let called = match gate.called(&bytes) {
            Ok((method, called)) => {
                let version = parts
                    .headers
                    .get("mcp-protocol-version")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default();
                super::telemetry::method("MCP", "jsonrpc", &method, version);
                called
            }
            Err((code, message)) => return rpc_error(StatusCode::BAD_REQUEST, code, message),
        };
        if let (Some(guard), Some(skill)) = (&gate.guard, called)
            && let Err(refusal) = guard.authorize_skill(skill, principal.as_ref())
        {
            return refuse(&refusal);
        }
    }
    let mut response = next
        .run(axum::extract::Request::from_parts(parts, Body::from(bytes)))
        .await;
    // A session ended (`DELETE`) is answered `202` by the SDK; MCP clients expect `200` or
    // `204` (the Python SDK warns of a failed termination otherwise): nothing is pending.
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

/// A JSON-RPC error with its HTTP status, for a request refused before the SDK read it.
fn rpc_error(status: StatusCode, code: i32, message: String) -> Response {
    super::telemetry::failed();
    let error = a2a::JsonRpcError {
        code,
        message,
        data: None,
    };
    let answer = a2a::JsonRpcResponse::error(a2a::JsonRpcId::Null, error);
    super::errors::json_response(status, &answer)
}

impl Gate {
    /// The skill a posted message calls (a `tools/call` of a known tool), read once from the
    /// body; a body that is not one JSON-RPC 2.0 message is a JSON-RPC error's code and
    /// message (`-32700`: not JSON, with the line and column; `-32600`: not a message).
    fn called(&self, body: &[u8]) -> Result<(String, Option<usize>), (i32, String)> {
        use std::borrow::Cow;
        #[derive(serde::Deserialize)]
        struct Envelope<'a> {
            #[serde(borrow)]
            jsonrpc: Option<Cow<'a, str>>,
            #[serde(borrow)]
            method: Option<Cow<'a, str>>,
            #[serde(borrow)]
            params: Option<Params<'a>>,
            result: Option<serde::de::IgnoredAny>,
            error: Option<serde::de::IgnoredAny>,
        }
        #[derive(serde::Deserialize)]
        struct Params<'a> {
            #[serde(borrow)]
            name: Option<Cow<'a, str>>,
        }
        let envelope: Envelope<'_> = serde_json::from_slice(body).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => (
                -32600,
                format!("the body is not a JSON-RPC 2.0 message (an object with `jsonrpc`, and `method`, `result` or `error`): {e}"),
            ),
            _ => (-32700, format!("the body is not JSON: {e}")),
        })?;
        let shaped =
            envelope.method.is_some() || envelope.result.is_some() || envelope.error.is_some();
        if envelope.jsonrpc.as_deref() != Some("2.0") || !shaped {
            return Err((
                -32600,
                "the body is not a JSON-RPC 2.0 message: it needs `\"jsonrpc\": \"2.0\"` and a `method` (or `result` or `error`)".to_owned(),
            ));
        }
        let method = envelope
            .method
            .as_deref()
            .unwrap_or("(a response)")
            .to_owned();
        if method != "tools/call" {
            return Ok((method, None));
        }
        let name = envelope.params.and_then(|p| p.name);
        let skill =
            name.and_then(|name| self.tools.iter().find(|(n, _)| *n == name).map(|(_, s)| *s));
        Ok((method, skill))
    }

    /// The answer to a refused request: a JSON-RPC error with the HTTP status and challenges,
    /// the bearer challenges naming the protected-resource metadata where there is some.
    fn refusal(&self, refusal: &Refusal) -> Response {
        let mut response = refusal.jsonrpc(a2a::JsonRpcId::Null);
        let Some((_, url)) = &self.metadata else {
            return response;
        };
        let headers = response.headers_mut();
        let challenges: Vec<HeaderValue> = headers
            .get_all(header::WWW_AUTHENTICATE)
            .iter()
            .map(|value| {
                let text = value.to_str().unwrap_or_default();
                if text.starts_with("Bearer") {
                    let joined = if text == "Bearer" {
                        format!("Bearer resource_metadata=\"{url}\"")
                    } else {
                        format!("{text}, resource_metadata=\"{url}\"")
                    };
                    HeaderValue::from_str(&joined).unwrap_or_else(|_| value.clone())
                } else {
                    value.clone()
                }
            })
            .collect();
        headers.remove(header::WWW_AUTHENTICATE);
        for challenge in challenges {
            headers.append(header::WWW_AUTHENTICATE, challenge);
        }
        response
    }
}

/// The protected-resource metadata (RFC 9728) of the MCP endpoint and its URL, where the card
/// declares OAuth 2.0 or OpenID Connect: the authorization servers its schemes name, and
/// their scopes.
fn resource_metadata(card: &AgentCard, endpoint: &Endpoint) -> Option<(Value, String)> {
    let mut servers: Vec<String> = Vec::new();
    let mut scopes: Vec<String> = Vec::new();
    for scheme in card.security_schemes.values() {
        match scheme {
            SecurityScheme::OAuth2(oauth) => {
                let issuer = oauth
                    .oauth2_metadata_url
                    .as_deref()
                    .map(issuer_of)
                    .or_else(|| {
                        oauth.flows.iter().find_map(|flow| {
                            flow.authorization_url
                                .as_deref()
                                .or(flow.token_url.as_deref())
                                .map(origin_of)
                        })
                    });
                servers.extend(issuer);
                for flow in oauth.flows.iter() {
                    scopes.extend(flow.scopes.keys().cloned());
                }
            }
            SecurityScheme::OpenIdConnect(oidc) => {
                servers.push(issuer_of(&oidc.open_id_connect_url))
            }
            _ => {}
        }
    }
    if servers.is_empty() {
        return None;
    }
    servers.dedup();
    scopes.sort();
    scopes.dedup();
    let origin = endpoint.origin();
    let document = json!({
        "resource": format!("{origin}{PATH}"),
        "authorization_servers": servers,
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": card.name,
    });
    Some((document, format!("{origin}{RESOURCE_METADATA_PATH}")))
}

/// The issuer of an authorization server's metadata URL (RFC 8414, OpenID Connect
/// discovery): the URL without its well-known suffix.
fn issuer_of(url: &str) -> String {
    for suffix in [
        "/.well-known/openid-configuration",
        "/.well-known/oauth-authorization-server",
    ] {
        if let Some(issuer) = url.strip_suffix(suffix) {
            return issuer.to_owned();
        }
    }
    origin_of(url)
}

/// `scheme://authority` of `url`.
fn origin_of(url: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    match url[start..].find('/') {
        Some(end) => url[..start + end].to_owned(),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
