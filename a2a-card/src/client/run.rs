//! A task as the caller sees it: its outputs, its events while it runs, and a handle on a task
//! that runs without the caller waiting.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::stream::{BoxStream, Stream, StreamExt};
use serde_json::Value;

use super::{ClientError, RemoteAgent};
use crate::schema::SchemaMode;
use crate::v0_3::state_name;

/// What one part of an answer carries.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text(String),
    /// Structured data, with the schema its media type names (`application/json;schema=NAME`).
    Data {
        /// The schema name, when the part's media type names one.
        schema: Option<String>,
        /// The data.
        value: Value,
    },
    /// A file.
    File {
        /// Its name.
        name: Option<String>,
        /// Its media type.
        media_type: Option<String>,
        /// Its bytes, when sent inline.
        bytes: Option<Vec<u8>>,
        /// Its URL, when sent by reference.
        url: Option<String>,
    },
}

impl Content {
    /// The content of an A2A part.
    ///
    /// ```
    /// use a2a::Part;
    /// use a2a_card::client::Content;
    /// let part = Part::data(serde_json::json!({"winner": "Tiger"}))
    ///     .with_media_type("application/json;schema=fightResponse");
    /// let Content::Data { schema, .. } = Content::of_part(&part) else { unreachable!() };
    /// assert_eq!(schema.as_deref(), Some("fightResponse"));
    /// ```
    pub fn of_part(part: &a2a::Part) -> Content {
        let media = part.media_type.clone().or_else(|| {
            part.metadata
                .as_ref()?
                .get("mimeType")?
                .as_str()
                .map(str::to_owned)
        });
        match &part.content {
            a2a::PartContent::Text(t) => Content::Text(t.clone()),
            a2a::PartContent::Data(value) => Content::Data {
                schema: media
                    .as_deref()
                    .and_then(SchemaMode::name_in)
                    .map(|n| n.into_owned()),
                value: integral(value.clone()),
            },
            a2a::PartContent::Raw(bytes) => Content::File {
                name: part.filename.clone(),
                media_type: media,
                bytes: Some(bytes.clone()),
                url: None,
            },
            a2a::PartContent::Url(url) => Content::File {
                name: part.filename.clone(),
                media_type: media,
                bytes: None,
                url: Some(url.clone()),
            },
        }
    }
}

/// The data with every whole float (`1.0`) made an integer (`1`).
///
/// Data parts travel as a protobuf `Struct`, whose only number is a double: a `u8` sent as `1`
/// arrives as `1.0`, which serde will not read into an integer. JSON Schema counts `1.0` as an
/// integer anyway, so nothing the schema says changes.
fn integral(value: Value) -> Value {
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            // Exactly representable range of i64 / u64 in a double.
            if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
                if f < 0.0 {
                    Value::from(f as i64)
                } else {
                    Value::from(f as u64)
                }
            } else {
                Value::Number(n)
            }
        }
        Value::Array(items) => Value::Array(items.into_iter().map(integral).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, integral(v))).collect())
        }
        other => other,
    }
}

/// One part of the task's output, with the artifact it belongs to.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Output {
    /// The artifact's id (none for a part of a direct message answer).
    pub artifact_id: Option<String>,
    /// The artifact's name.
    pub artifact_name: Option<String>,
    /// What the part carries.
    pub content: Content,
}

/// Something that happened to a task while the caller follows it ([`Run`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// The task is submitted or working; `text` is the progress the skill reported, if any.
    Status {
        /// The task's state.
        state: a2a::TaskState,
        /// The status message's text.
        text: Option<String>,
    },
    /// A new part of the output: a chunk of a streamed artifact, or a whole artifact.
    Output(Output),
    /// The agent answered with a message rather than a task.
    Message(a2a::Message),
    /// The task waits for the caller: [`Run::answer`] answers.
    Question {
        /// The question.
        text: String,
        /// Whether it asks for authentication (`auth-required`).
        auth: bool,
        /// The data the question carries beside its text (its status message's first data
        /// part), if any: a tool call proposed for approval, a form to fill.
        data: Option<Value>,
    },
    /// The task ended (completed, failed, canceled or rejected).
    Finished {
        /// The final state.
        state: a2a::TaskState,
        /// The status message's text (why it failed).
        text: Option<String>,
    },
}

fn status_text(status: &a2a::TaskStatus) -> Option<String> {
    let message = status.message.as_ref()?;
    let text: Vec<&str> = message
        .parts
        .iter()
        .filter_map(|p| match &p.content {
            a2a::PartContent::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    (!text.is_empty()).then(|| text.join("\n"))
}

/// The first data part of a status's message.
fn status_data(status: &a2a::TaskStatus) -> Option<Value> {
    status
        .message
        .as_ref()?
        .parts
        .iter()
        .find_map(|p| match &p.content {
            a2a::PartContent::Data(data) => Some(data.clone()),
            _ => None,
        })
}

fn is_interrupted(state: &a2a::TaskState) -> bool {
    matches!(
        state,
        a2a::TaskState::InputRequired | a2a::TaskState::AuthRequired
    )
}

fn state_event(status: &a2a::TaskStatus) -> Event {
    let text = status_text(status);
    let state = status.state.clone();
    if is_interrupted(&state) {
        Event::Question {
            text: text.unwrap_or_default(),
            auth: state == a2a::TaskState::AuthRequired,
            data: status_data(status),
        }
    } else if state.is_terminal() {
        Event::Finished { state, text }
    } else {
        Event::Status { state, text }
    }
}

fn outputs_of(artifact: &a2a::Artifact, parts: &[a2a::Part]) -> Vec<Output> {
    parts
        .iter()
        .map(|p| Output {
            artifact_id: Some(artifact.artifact_id.to_string()),
            artifact_name: artifact.name.clone(),
            content: Content::of_part(p),
        })
        .collect()
}

/// The answer to a message: a task (in whatever state it reached) or a direct message.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskOutcome {
    response: a2a::SendMessageResponse,
}

impl TaskOutcome {
    pub(crate) fn from_response(response: a2a::SendMessageResponse) -> TaskOutcome {
        TaskOutcome { response }
    }

    pub(crate) fn from_task(task: a2a::Task) -> TaskOutcome {
        TaskOutcome {
            response: a2a::SendMessageResponse::Task(task),
        }
    }

    /// The task, unless the agent answered with a message.
    pub fn task(&self) -> Option<&a2a::Task> {
        match &self.response {
            a2a::SendMessageResponse::Task(t) => Some(t),
            a2a::SendMessageResponse::Message(_) => None,
        }
    }

    /// The message, when the agent answered with one instead of a task.
    pub fn message(&self) -> Option<&a2a::Message> {
        match &self.response {
            a2a::SendMessageResponse::Message(m) => Some(m),
            a2a::SendMessageResponse::Task(_) => None,
        }
    }

    /// The official answer.
    pub fn response(&self) -> &a2a::SendMessageResponse {
        &self.response
    }

    /// The task's state (none for a message answer).
    pub fn state(&self) -> Option<a2a::TaskState> {
        self.task().map(|t| t.status.state.clone())
    }

    /// The task's id.
    pub fn task_id(&self) -> Option<&str> {
        self.task().map(|t| t.id.as_str())
    }

    /// Whether there is nothing more to wait for: the task ended or asks its caller (or the
    /// answer is a message).
    pub(crate) fn settled(&self) -> bool {
        self.state()
            .is_none_or(|s| s.is_terminal() || is_interrupted(&s))
    }

    /// The text of the task's status message (progress, a question, why it failed).
    pub fn status_text(&self) -> Option<String> {
        status_text(&self.task()?.status)
    }

    /// Every part of the output, in order: the task's artifacts, or the message's parts.
    pub fn outputs(&self) -> Vec<Output> {
        match &self.response {
            a2a::SendMessageResponse::Task(task) => task
                .artifacts
                .iter()
                .flatten()
                .flat_map(|a| outputs_of(a, &a.parts))
                .collect(),
            a2a::SendMessageResponse::Message(m) => m
                .parts
                .iter()
                .map(|p| Output {
                    artifact_id: None,
                    artifact_name: None,
                    content: Content::of_part(p),
                })
                .collect(),
        }
    }

    /// The outcome when the task completed, is still running, or the agent answered with a
    /// message; [`ClientError::TaskFailed`] when it failed, was canceled or rejected, and
    /// [`ClientError::InputRequired`] when it waits for the caller.
    pub fn into_result(self) -> Result<TaskOutcome, ClientError> {
        let Some(task) = self.task() else {
            return Ok(self);
        };
        let state = task.status.state.clone();
        if is_interrupted(&state) {
            return Err(ClientError::InputRequired {
                task_id: task.id.to_string(),
                question: status_text(&task.status).unwrap_or_default(),
                auth: state == a2a::TaskState::AuthRequired,
            });
        }
        if state.is_terminal() && state != a2a::TaskState::Completed {
            return Err(ClientError::TaskFailed {
                task_id: task.id.to_string(),
                state,
                message: status_text(&task.status),
            });
        }
        Ok(self)
    }
}

type Events = BoxStream<'static, Result<a2a::StreamResponse, a2a::A2AError>>;

/// A task followed as it runs: a `Stream` of [`Event`]s, ending when the task ends or asks the
/// caller something. [`answer`](Self::answer) answers a question and follows the task on.
///
/// Chunks of a streamed artifact arrive as [`Event::Output`]s, each once: the update that
/// closes an artifact by repeating its parts gives nothing new.
pub struct Run {
    agent: RemoteAgent,
    events: Option<Events>,
    pending: VecDeque<Event>,
    task_id: Option<String>,
    context_id: Option<String>,
    state: Option<a2a::TaskState>,
    /// How many parts of each artifact were given out.
    seen: HashMap<String, usize>,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("task_id", &self.task_id)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl Run {
    pub(crate) async fn start(
        agent: RemoteAgent,
        message: a2a::Message,
    ) -> Result<Run, ClientError> {
        let events = open_stream(&agent, message).await?;
        Ok(Run::following(agent, events, None, None))
    }

    fn following(
        agent: RemoteAgent,
        events: Events,
        task_id: Option<String>,
        context_id: Option<String>,
    ) -> Run {
        Run {
            agent,
            events: Some(events),
            pending: VecDeque::new(),
            task_id,
            context_id,
            state: None,
            seen: HashMap::new(),
        }
    }

    /// The task's id, once the agent said it.
    pub fn task_id(&self) -> Option<&str> {
        self.task_id.as_deref()
    }

    /// The task's last known state.
    pub fn state(&self) -> Option<a2a::TaskState> {
        self.state.clone()
    }

    /// Answers the task's question (after an [`Event::Question`]) with `text`, and follows the
    /// task on: the next events are those of the resumed task.
    pub async fn answer(&mut self, text: &str) -> Result<(), ClientError> {
        let Some(task_id) = self.task_id.clone() else {
            return Err(ClientError::Transport(
                "there is no task to answer yet: wait for its first event".to_owned(),
            ));
        };
        let mut message = a2a::Message::new(a2a::Role::User, vec![a2a::Part::text(text)]);
        message.task_id = Some(task_id);
        message.context_id = self.context_id.clone();
        self.events = Some(open_stream(&self.agent, message).await?);
        Ok(())
    }

    /// Cancels the task.
    pub async fn cancel(&self) -> Result<TaskOutcome, ClientError> {
        let Some(task_id) = &self.task_id else {
            return Err(ClientError::Transport(
                "there is no task to cancel yet: wait for its first event".to_owned(),
            ));
        };
        cancel(&self.agent, task_id).await
    }

    fn absorb(&mut self, response: a2a::StreamResponse) {
        match response {
            a2a::StreamResponse::Task(task) => {
                self.ids(&task.id, &task.context_id);
                for artifact in task.artifacts.iter().flatten() {
                    self.artifact(artifact, false);
                }
                self.status(&task.status);
            }
            a2a::StreamResponse::Message(m) => self.pending.push_back(Event::Message(m)),
            a2a::StreamResponse::StatusUpdate(e) => {
                self.ids(&e.task_id, &e.context_id);
                self.status(&e.status);
            }
            a2a::StreamResponse::ArtifactUpdate(e) => {
                self.ids(&e.task_id, &e.context_id);
                self.artifact(&e.artifact, e.append.unwrap_or(false));
            }
        }
    }

    fn ids(&mut self, task: &str, context: &str) {
        self.task_id = Some(task.to_owned());
        self.context_id = Some(context.to_owned());
    }

    fn status(&mut self, status: &a2a::TaskStatus) {
        self.state = Some(status.state.clone());
        self.pending.push_back(state_event(status));
    }

    /// The parts not given out yet: an update that replaces the artifact (`append` false)
    /// repeats those already seen.
    fn artifact(&mut self, artifact: &a2a::Artifact, append: bool) {
        let seen = self
            .seen
            .entry(artifact.artifact_id.to_string())
            .or_default();
        let new: &[a2a::Part] = if append {
            &artifact.parts
        } else if *seen <= artifact.parts.len() {
            &artifact.parts[*seen..]
        } else {
            // A replacement shorter than what was seen: the artifact started over.
            *seen = 0;
            &artifact.parts
        };
        *seen += new.len();
        for output in outputs_of(artifact, new) {
            self.pending.push_back(Event::Output(output));
        }
    }
}

impl Stream for Run {
    type Item = Result<Event, ClientError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Poll::Ready(Some(Ok(event)));
            }
            let Some(events) = self.events.as_mut() else {
                return Poll::Ready(None);
            };
            match events.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    self.events = None;
                    return Poll::Ready(None);
                }
                Poll::Ready(Some(Err(e))) => {
                    self.events = None;
                    return Poll::Ready(Some(Err(ClientError::from_a2a(e))));
                }
                Poll::Ready(Some(Ok(response))) => self.absorb(response),
            }
        }
    }
}

async fn open_stream(agent: &RemoteAgent, message: a2a::Message) -> Result<Events, ClientError> {
    let request = a2a::SendMessageRequest {
        message,
        configuration: None,
        metadata: None,
        tenant: None,
    };
    let client = agent.client()?;
    super::official::traced(
        "SendStreamingMessage",
        client.send_streaming_message(&request),
    )
    .await
    .map_err(ClientError::from_a2a)
}

pub(crate) async fn cancel(agent: &RemoteAgent, task_id: &str) -> Result<TaskOutcome, ClientError> {
    let request = a2a::CancelTaskRequest {
        id: task_id.to_owned(),
        metadata: None,
        tenant: None,
    };
    let client = agent.client()?;
    let task = super::official::traced("CancelTask", client.cancel_task(&request))
        .await
        .map_err(ClientError::from_a2a)?;
    Ok(TaskOutcome::from_task(task))
}

/// A task that runs without the caller waiting (see [`RemoteAgent::send`]): poll it, follow it,
/// wait for it, answer it, or cancel it.
#[derive(Debug, Clone)]
pub struct TaskHandle {
    agent: RemoteAgent,
    task_id: String,
    context_id: String,
    last: TaskOutcome,
}

impl TaskHandle {
    pub(crate) fn from_outcome(
        agent: RemoteAgent,
        outcome: TaskOutcome,
    ) -> Result<TaskHandle, ClientError> {
        let Some(task) = outcome.task() else {
            return Err(ClientError::Transport(
                "the agent answered with a message, not a task: there is nothing to follow"
                    .to_owned(),
            ));
        };
        Ok(TaskHandle {
            task_id: task.id.to_string(),
            context_id: task.context_id.clone(),
            agent,
            last: outcome,
        })
    }

    /// Task `id` of `agent`, as it is now.
    pub(crate) async fn get(agent: RemoteAgent, id: &str) -> Result<TaskHandle, ClientError> {
        let request = a2a::GetTaskRequest {
            id: id.to_owned(),
            history_length: None,
            tenant: None,
        };
        let task = super::official::traced("GetTask", agent.client()?.get_task(&request))
            .await
            .map_err(ClientError::from_a2a)?;
        TaskHandle::from_outcome(agent, TaskOutcome::from_task(task))
    }

    /// The task's id.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// The task's context.
    pub fn context_id(&self) -> &str {
        &self.context_id
    }

    /// The task as last seen.
    pub fn last(&self) -> &TaskOutcome {
        &self.last
    }

    /// Asks the agent for the task as it is now.
    pub async fn poll(&mut self) -> Result<&TaskOutcome, ClientError> {
        let request = a2a::GetTaskRequest {
            id: self.task_id.clone(),
            history_length: None,
            tenant: None,
        };
        let client = self.agent.client()?;
        let task = super::official::traced("GetTask", client.get_task(&request))
            .await
            .map_err(ClientError::from_a2a)?;
        self.last = TaskOutcome::from_task(task);
        Ok(&self.last)
    }

    /// Follows the task's events from now on.
    pub async fn subscribe(&self) -> Result<Run, ClientError> {
        let request = a2a::SubscribeToTaskRequest {
            id: self.task_id.clone(),
            tenant: None,
        };
        let events = self
            .agent
            .client()?
            .subscribe_to_task(&request)
            .await
            .map_err(ClientError::from_a2a)?;
        Ok(Run::following(
            self.agent.clone(),
            events,
            Some(self.task_id.clone()),
            Some(self.context_id.clone()),
        ))
    }

    /// Waits until the task ends or asks the caller something, and gives it as it is then.
    pub async fn wait(mut self) -> Result<TaskOutcome, ClientError> {
        if !self.last.settled() {
            // Followed until it ends or asks: an agent may keep a subscription open through a
            // question (A2A closes it only at the end). A task that ended meanwhile cannot be
            // followed, which is fine: it is read below.
            if let Ok(mut run) = self.subscribe().await {
                while let Some(Ok(event)) = run.next().await {
                    if matches!(event, Event::Question { .. } | Event::Finished { .. }) {
                        break;
                    }
                }
            }
            // A server that closed the stream early: read until settled, briefly apart.
            let mut delay = std::time::Duration::from_millis(20);
            loop {
                if self.poll().await?.settled() {
                    break;
                }
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(std::time::Duration::from_secs(1));
            }
        }
        Ok(self.last)
    }

    /// Answers the task's question with `text` and waits for what follows.
    pub async fn answer(&self, text: &str) -> Result<TaskOutcome, ClientError> {
        let mut message = a2a::Message::new(a2a::Role::User, vec![a2a::Part::text(text)]);
        message.task_id = Some(self.task_id.clone());
        message.context_id = Some(self.context_id.clone());
        self.agent.send_message(message, false).await
    }

    /// Cancels the task.
    pub async fn cancel(&self) -> Result<TaskOutcome, ClientError> {
        cancel(&self.agent, &self.task_id).await
    }
}

impl std::fmt::Display for TaskOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.task() {
            Some(task) => write!(f, "task {} {}", task.id, state_name(&task.status.state)),
            None => f.write_str("message"),
        }
    }
}
