//! The client's own JSON-RPC transport: for agents that offer only A2A 0.3 JSON-RPC (the
//! official client's 1.0 requests rewritten into their 0.3 form, `message/send` with
//! `kind`-tagged parts, `tasks/get`, ..., and the answers read back as 1.0, by the one mapping
//! of both directions, `crate::v0_3`), and for an agent under test in this process (1.0 as it
//! is, through the agent's router: feature `testing`). Streams are server-sent events of
//! JSON-RPC answers.

use a2a::{
    A2AError, AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, SendMessageRequest, SendMessageResponse, StreamResponse,
    SubscribeToTaskRequest, Task, TaskPushNotificationConfig, methods,
};
use a2a_client::{ServiceParams, Transport};
use async_trait::async_trait;
use futures::StreamExt as _;
use futures::stream::{self, BoxStream};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::v0_3::{Method, error_to_v1};

use super::exchange::{Exchange, Reply, Verb};

/// The protocol version a [`JsonRpc`] transport speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// A2A 1.0, as the official types write it.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    V1_0,
    /// A2A 0.3, rewritten both ways.
    V0_3,
}

/// One operation, as each version names it: its 1.0 method, and its 0.3 one where 0.3 has it.
#[derive(Debug, Clone, Copy)]
struct Op {
    v1: &'static str,
    v0_3: Option<Method>,
}

impl From<Method> for Op {
    /// An operation both versions have: its 1.0 name is the method's own.
    fn from(method: Method) -> Op {
        Op {
            v1: method.v1(),
            v0_3: Some(method),
        }
    }
}

/// The JSON-RPC endpoint of an interface.
pub(crate) struct JsonRpc {
    exchange: Exchange,
    url: String,
    dialect: Dialect,
}

/// At most this much of one JSON-RPC answer is read (an agent's answer larger than this is
/// an error, not memory spent).
const MAX_ANSWER_BYTES: usize = 64 << 20;

impl JsonRpc {
    /// The endpoint at `url`, reached through `exchange`, speaking `dialect`.
    pub(crate) fn new(exchange: Exchange, url: String, dialect: Dialect) -> JsonRpc {
        JsonRpc {
            exchange,
            url,
            dialect,
        }
    }

    /// The method's name in this transport's version, or why it has none.
    fn name(&self, op: Op) -> Result<&'static str, A2AError> {
        match (self.dialect, op.v0_3) {
            (Dialect::V1_0, _) => Ok(op.v1),
            (Dialect::V0_3, Some(method)) => Ok(method.name()),
            (Dialect::V0_3, None) => Err(A2AError::unsupported_operation(format!(
                "A2A 0.3 has no `{}`; the agent offers only 0.3",
                op.v1
            ))),
        }
    }

    /// The POST of `request` as `op`, with the call's headers: with 0.3, the official
    /// client's `A2A-Version: 1.0` becomes `0.3`, so that an agent serving both reads the
    /// request as the 0.3 it is.
    async fn post<R: Serialize>(
        &self,
        params: &ServiceParams,
        op: Op,
        request: &R,
        streams: bool,
    ) -> Result<Reply, A2AError> {
        let name = self.name(op)?;
        let mut params_json = serde_json::to_value(request)
            .map_err(|e| A2AError::internal(format!("the request cannot be written: {e}")))?;
        if let (Dialect::V0_3, Some(method)) = (self.dialect, op.v0_3) {
            params_json = method.params_to_v0_3(params_json);
        }
        let body = json!({
            "jsonrpc": "2.0",
            "id": a2a::new_task_id(),
            "method": name,
            "params": params_json,
        });
        let mut headers = Vec::new();
        for (name, values) in params {
            if self.dialect == Dialect::V0_3 && name.eq_ignore_ascii_case(a2a::SVC_PARAM_VERSION) {
                continue;
            }
            for value in values {
                headers.push((name.clone(), value.clone()));
            }
        }
        if streams {
            headers.push(("Accept".to_owned(), "text/event-stream".to_owned()));
        }
        if self.dialect == Dialect::V0_3 {
            headers.push((a2a::SVC_PARAM_VERSION.to_owned(), "0.3".to_owned()));
        }
        let body = serde_json::to_vec(&body)
            .map_err(|e| A2AError::internal(format!("the request cannot be written: {e}")))?;
        self.exchange
            .send(Verb::Post, &self.url, &headers, body)
            .await
            .map_err(|e| A2AError::internal(format!("the agent cannot be reached: {e}")))
    }

    /// A call answered by one JSON-RPC response.
    async fn call<R: Serialize, T: DeserializeOwned>(
        &self,
        params: &ServiceParams,
        op: Op,
        request: &R,
    ) -> Result<T, A2AError> {
        let reply = self.post(params, op, request, false).await?;
        let status = reply.status;
        let body = reply
            .bytes(MAX_ANSWER_BYTES)
            .await
            .map_err(|e| A2AError::internal(format!("the answer cannot be read: {e}")))?;
        let envelope: Value = serde_json::from_slice(&body).map_err(|e| {
            A2AError::internal(format!(
                "the agent answered HTTP {status} with a body that is not JSON-RPC: {e}"
            ))
        })?;
        read_result(self.dialect, op, envelope)
    }

    /// A call answered by a stream of server-sent events.
    async fn stream<R: Serialize>(
        &self,
        params: &ServiceParams,
        op: Op,
        request: &R,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let reply = self.post(params, op, request, true).await?;
        let dialect = self.dialect;
        if !reply.event_stream {
            // An error answering a stream comes as one JSON-RPC response.
            let body = reply
                .bytes(MAX_ANSWER_BYTES)
                .await
                .map_err(|e| A2AError::internal(format!("the answer cannot be read: {e}")))?;
            let envelope: Value = serde_json::from_slice(&body).map_err(|e| {
                A2AError::internal(format!(
                    "the agent answered a stream with neither events nor JSON-RPC: {e}"
                ))
            })?;
            return Err(match read_result::<StreamResponse>(dialect, op, envelope) {
                Err(e) => e,
                Ok(_) => A2AError::internal("the agent answered a stream with a single result"),
            });
        }
        let events = stream::unfold(
            (reply.body, Vec::new(), false),
            move |(mut body, mut buffer, done)| async move {
                if done {
                    return None;
                }
                loop {
                    if let Some(data) = next_event(&mut buffer) {
                        return Some((read_event(dialect, op, &data), (body, buffer, false)));
                    }
                    match body.next().await {
                        Some(Ok(chunk)) => buffer.extend_from_slice(&chunk),
                        None if buffer.iter().all(u8::is_ascii_whitespace) => return None,
                        None => {
                            // A last event without its blank line.
                            buffer.extend_from_slice(b"\n\n");
                            let data = next_event(&mut buffer)?;
                            return Some((read_event(dialect, op, &data), (body, buffer, true)));
                        }
                        Some(Err(e)) => {
                            let err =
                                A2AError::internal(format!("the event stream broke off: {e}"));
                            return Some((Err(err), (body, buffer, true)));
                        }
                    }
                }
            },
        );
        Ok(Box::pin(events))
    }
}

/// The 1.0 result of a JSON-RPC response: its `result` (rewritten from 0.3), or its `error`.
fn read_result<T: DeserializeOwned>(
    dialect: Dialect,
    op: Op,
    mut envelope: Value,
) -> Result<T, A2AError> {
    if let Some(error) = envelope.get("error") {
        return Err(read_error(error));
    }
    let Some(mut result) = envelope.get_mut("result").map(Value::take) else {
        return Err(A2AError::internal(
            "the agent's JSON-RPC response has neither `result` nor `error`",
        ));
    };
    if let (Dialect::V0_3, Some(method)) = (dialect, op.v0_3) {
        result = method.result_to_v1(result);
    }
    serde_json::from_value(result).map_err(|e| {
        A2AError::internal(format!(
            "the agent's `{}` result does not read as A2A: {e}",
            op.v1
        ))
    })
}

/// A JSON-RPC error as the protocol's: its code and message, and its data as details (1.0
/// sends a list of typed details, 0.3 an object).
fn read_error(error: &Value) -> A2AError {
    let mut out = error_to_v1(error);
    if let Some(Value::Array(details)) = error.get("data") {
        let details: Vec<a2a::TypedDetail> = details
            .iter()
            .filter_map(|d| serde_json::from_value(d.clone()).ok())
            .collect();
        if !details.is_empty() {
            out.details = Some(details);
        }
    }
    out
}

/// The 1.0 event of one server-sent event's data (a JSON-RPC response).
fn read_event(dialect: Dialect, op: Op, data: &str) -> Result<StreamResponse, A2AError> {
    let envelope: Value = serde_json::from_str(data)
        .map_err(|e| A2AError::internal(format!("an event is not JSON: {e}")))?;
    read_result(dialect, op, envelope)
}

/// The `data` of the next complete server-sent event in `buffer` (its `data:` lines joined),
/// taken out of the buffer; `None` until a blank line ends one. Events without data (comments,
/// keep-alives) are skipped.
pub(crate) fn next_event(buffer: &mut Vec<u8>) -> Option<String> {
    loop {
        let text = std::str::from_utf8(buffer).ok()?;
        let (end, skip) = [("\r\n\r\n", 4), ("\n\n", 2), ("\r\r", 2)]
            .into_iter()
            .filter_map(|(sep, len)| text.find(sep).map(|at| (at, len)))
            .min()?;
        let data: Vec<&str> = text[..end]
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        let data = data.join("\n");
        buffer.drain(..end + skip);
        if !data.is_empty() {
            return Some(data);
        }
    }
}

#[async_trait]
impl Transport for JsonRpc {
    async fn send_message(
        &self,
        params: &ServiceParams,
        req: &SendMessageRequest,
    ) -> Result<SendMessageResponse, A2AError> {
        self.call(params, Method::Send.into(), req).await
    }

    async fn send_streaming_message(
        &self,
        params: &ServiceParams,
        req: &SendMessageRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        self.stream(params, Method::Stream.into(), req).await
    }

    async fn get_task(
        &self,
        params: &ServiceParams,
        req: &GetTaskRequest,
    ) -> Result<Task, A2AError> {
        self.call(params, Method::GetTask.into(), req).await
    }

    async fn list_tasks(
        &self,
        params: &ServiceParams,
        req: &ListTasksRequest,
    ) -> Result<ListTasksResponse, A2AError> {
        let list = Op {
            v1: methods::LIST_TASKS,
            v0_3: None,
        };
        self.call(params, list, req).await
    }

    async fn cancel_task(
        &self,
        params: &ServiceParams,
        req: &CancelTaskRequest,
    ) -> Result<Task, A2AError> {
        self.call(params, Method::CancelTask.into(), req).await
    }

    async fn subscribe_to_task(
        &self,
        params: &ServiceParams,
        req: &SubscribeToTaskRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        self.stream(params, Method::Resubscribe.into(), req).await
    }

    async fn create_push_config(
        &self,
        params: &ServiceParams,
        req: &TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        self.call(params, Method::SetPushConfig.into(), req).await
    }

    async fn get_push_config(
        &self,
        params: &ServiceParams,
        req: &GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        self.call(params, Method::GetPushConfig.into(), req).await
    }

    async fn list_push_configs(
        &self,
        params: &ServiceParams,
        req: &ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2AError> {
        self.call(params, Method::ListPushConfigs.into(), req).await
    }

    async fn delete_push_config(
        &self,
        params: &ServiceParams,
        req: &DeleteTaskPushNotificationConfigRequest,
    ) -> Result<(), A2AError> {
        self.call::<_, Value>(params, Method::DeletePushConfig.into(), req)
            .await
            .map(drop)
    }

    async fn get_extended_agent_card(
        &self,
        params: &ServiceParams,
        req: &GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2AError> {
        self.call(params, Method::ExtendedCard.into(), req).await
    }

    async fn destroy(&self) -> Result<(), A2AError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_split_at_blank_lines_and_their_data_lines_joined() {
        let mut buffer =
            b": keep-alive\n\ndata: {\"a\":\ndata: 1}\r\n\r\ndata: {\"b\":2}\n\npartial".to_vec();
        assert_eq!(next_event(&mut buffer).as_deref(), Some("{\"a\":\n1}"));
        assert_eq!(next_event(&mut buffer).as_deref(), Some("{\"b\":2}"));
        assert_eq!(next_event(&mut buffer), None);
        assert_eq!(buffer, b"partial");
    }

    #[test]
    fn an_error_keeps_its_code_and_its_data_as_a_detail() {
        let envelope = json!({"jsonrpc": "2.0", "id": 1, "error": {
            "code": -32602, "message": "bad input",
            "data": {"violations": [{"instancePath": "/days"}]}}});
        let error = read_result::<Task>(Dialect::V0_3, Method::Send.into(), envelope)
            .expect_err("an error");
        assert_eq!(error.code, -32602);
        assert_eq!(error.message, "bad input");
        let details = error.details.expect("the data as a detail");
        assert_eq!(details[0].value["violations"][0]["instancePath"], "/days");
    }

    #[test]
    fn a_0_3_task_reads_as_a_1_0_task() {
        let envelope = json!({"jsonrpc": "2.0", "id": 1, "result": {
            "kind": "task", "id": "t1", "contextId": "c1",
            "status": {"state": "input-required", "timestamp": "2026-11-23T10:00:00.123456",
                       "message": {"kind": "message", "role": "agent", "messageId": "m1",
                                   "parts": [{"kind": "text", "text": "Which day?"}]}},
            "artifacts": [{"artifactId": "a1", "parts": [
                {"kind": "data", "data": {"n": 9007199254740993_i64}, "metadata": {"mimeType": "application/json;schema=x"}},
                {"kind": "file", "file": {"uri": "https://f.example.com/a.png", "mimeType": "image/png", "name": "a.png"}}]}]}});
        let task: SendMessageResponse =
            read_result(Dialect::V0_3, Method::Send.into(), envelope).expect("a task");
        let SendMessageResponse::Task(task) = task else {
            panic!("a task, not {task:?}")
        };
        assert_eq!(task.id, "t1");
        assert_eq!(task.status.state, a2a::TaskState::InputRequired);
        assert!(
            task.status.timestamp.is_none(),
            "a timestamp without an offset is dropped"
        );
        let v1 = serde_json::to_value(&task).expect("JSON");
        assert_eq!(v1["status"]["message"]["parts"][0]["text"], "Which day?");
        assert_eq!(
            v1["artifacts"][0]["parts"][0]["mediaType"],
            "application/json;schema=x"
        );
        assert_eq!(
            v1["artifacts"][0]["parts"][1]["url"],
            "https://f.example.com/a.png"
        );
        assert_eq!(v1["artifacts"][0]["parts"][1]["filename"], "a.png");
    }
}
