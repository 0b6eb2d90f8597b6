//! One tool call under way: the message sent, the task's stream followed to its end or its
//! question, progress reported, a cancel passed on.

use a2a::{
    A2AError, Artifact, CancelTaskRequest, Message, Part, Role, SendMessageRequest, StreamResponse,
    TaskState,
};
use futures::StreamExt;
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, CreateTaskResult, ErrorCode,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, TaskStatus,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::json;

use super::render::*;
use super::tools::*;
use crate::agent::SkillDecl;
use crate::server::call::{Context, Failure, NumberedStream};
use crate::server::lifecycle::{CancelTask, FollowedTurn, GetTask, Lifecycle, Unfolding};

/// One tool call under way.
pub(super) struct Call<'a> {
    pub(super) lifecycle: &'a Lifecycle,
    pub(super) skills: &'static [SkillDecl],
    pub(super) ctx: Context,
    pub(super) entry: &'a ToolEntry,
    pub(super) progress: Option<ProgressToken>,
    pub(super) reported: u32,
    pub(super) task: Option<String>,
    pub(super) context: &'a RequestContext<RoleServer>,
}

/// Where a task's stream stopped.
pub(super) enum Stop {
    /// The task ended, as this result.
    Ended(CallToolResult),
    /// The task asks this question.
    Asks(String),
}

impl Call<'_> {
    pub(super) async fn start(&self, message: Message) -> Result<Unfolding, A2AError> {
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
        self.lifecycle
            .call(
                &self.ctx,
                FollowedTurn {
                    req: request,
                    skill,
                },
            )
            .await
            .map(|answered| answered.answer)
            .map_err(Failure::into_error)
    }

    /// Sends `answer` to task `id`, which asked.
    pub(super) async fn answer(&self, id: &str, answer: String) -> Result<Unfolding, A2AError> {
        let mut message = Message::new(Role::User, vec![Part::text(answer)]);
        message.task_id = Some(id.to_owned());
        self.start(message).await
    }

    /// The call as an MCP task: the A2A task it started, which runs on unwatched.
    pub(super) async fn as_task(
        &self,
        events: Result<Unfolding, A2AError>,
    ) -> Result<CallToolResponse, McpError> {
        let mut events = match events {
            Ok(Unfolding::Turn(events)) => events,
            Ok(Unfolding::Answered(answer)) => return Ok(self.answered(answer).into()),
            Err(error) => return Ok(tool_error(error, None).into()),
        };
        let began = || McpError::internal_error("the task did not begin", None);
        match events.next().await {
            Some(Ok((_, event))) => {
                let Some(StreamResponse::Task(task)) = event.kept() else {
                    return Err(began());
                };
                let seed = mcp_task(task, TaskStatus::Working, None);
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
            None => Err(began()),
        }
    }

    /// Follows the call's task through its turns until it ends, asking the caller each
    /// question it asks.
    pub(super) async fn follow(
        &mut self,
        mut events: Result<Unfolding, A2AError>,
    ) -> Result<CallToolResponse, McpError> {
        loop {
            let stream = match events {
                Ok(Unfolding::Turn(stream)) => stream,
                Ok(Unfolding::Answered(answer)) => return Ok(self.answered(answer).into()),
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

    /// The result of a call the skill answered at once, without a task: its reply, as the
    /// task's artifact would have been rendered, or its failure.
    fn answered(&self, answer: Result<Option<Part>, String>) -> CallToolResult {
        match answer {
            Ok(part) => {
                let own = self.skills[self.entry.skill].id;
                let artifact = Artifact {
                    artifact_id: own.to_owned(),
                    name: Some(own.to_owned()),
                    description: None,
                    parts: part.into_iter().collect(),
                    metadata: None,
                    extensions: None,
                };
                result_of(self.skills, self.entry, vec![artifact])
            }
            Err(why) if why.is_empty() => error_result("the skill failed".to_owned()),
            Err(why) => error_result(why),
        }
    }

    /// Reads one turn's stream: progress to the caller, until the task ends or asks.
    pub(super) async fn read(&mut self, mut stream: NumberedStream) -> Result<Stop, McpError> {
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
            let held = match next {
                None => break,
                Some(Err(error)) => {
                    return Ok(Stop::Ended(tool_error(error, self.task.as_deref())));
                }
                Some(Ok((_, held))) => held,
            };
            // Read where it is: only what the call keeps (the artifacts) is copied.
            let event = match held.event() {
                Ok(event) => event,
                Err(error) => {
                    return Ok(Stop::Ended(tool_error(error, self.task.as_deref())));
                }
            };
            let status = match &*event {
                StreamResponse::Task(task) => {
                    self.task = Some(task.id.clone());
                    artifacts = task.artifacts.clone().unwrap_or_default();
                    &task.status
                }
                StreamResponse::StatusUpdate(update) => &update.status,
                StreamResponse::ArtifactUpdate(update) => {
                    let append = update.append == Some(true);
                    let id = &update.artifact.artifact_id;
                    // A chunk is news; an artifact sent again whole (its closing update) is not.
                    if append || !artifacts.iter().any(|a| &a.artifact_id == id) {
                        for part in &update.artifact.parts {
                            self.report(render_part(part)).await;
                        }
                    }
                    apply(&mut artifacts, update.artifact.clone(), append);
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
            match &status.state {
                TaskState::Working => {
                    if let Some(text) = text.filter(|t| !t.is_empty()) {
                        self.report(text).await;
                    }
                }
                TaskState::InputRequired | TaskState::AuthRequired => {
                    question = Some(text.unwrap_or_default());
                }
                TaskState::Completed => {
                    return Ok(Stop::Ended(result_of(
                        self.skills,
                        self.entry,
                        std::mem::take(&mut artifacts),
                    )));
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
    pub(super) async fn report(&mut self, message: String) {
        let Some(token) = &self.progress else { return };
        self.reported += 1;
        let mut progress = ProgressNotificationParam::new(token.clone(), f64::from(self.reported));
        progress.message = Some(message);
        // A caller gone away is noticed by the call's cancellation, not here.
        let _ = self.context.peer.notify_progress(progress).await;
    }

    /// Whether the call's task waits for an answer.
    pub(super) async fn waits(&self) -> bool {
        let Some(id) = &self.task else { return false };
        let request = a2a::GetTaskRequest {
            id: id.clone(),
            history_length: Some(0),
            tenant: None,
        };
        let task = self.lifecycle.call(&self.ctx, GetTask(request)).await;
        matches!(task, Ok(t) if matches!(
            t.answer
            .status.state,
            TaskState::InputRequired | TaskState::AuthRequired
        ))
    }

    /// Cancels the call's task, if it has one.
    pub(super) async fn cancel(&self) {
        if let Some(id) = &self.task {
            cancel(self.lifecycle, &self.ctx, id.clone()).await;
        }
    }

    /// Cancels the task, which no answer will come to, and says why.
    pub(super) async fn give_up(&self, why: String) -> CallToolResult {
        self.cancel().await;
        error_result(why)
    }
}

/// Cancels task `id` for the caller of `ctx`; its answer (the task, or why not) is not
/// wanted.
pub(super) async fn cancel(lifecycle: &Lifecycle, ctx: &Context, id: String) {
    let request = CancelTaskRequest {
        id,
        metadata: None,
        tenant: None,
    };
    let _ = lifecycle.call(ctx, CancelTask(request)).await;
}
