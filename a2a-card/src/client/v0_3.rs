//! A transport for agents that offer only A2A 0.3 JSON-RPC: the official client's 1.0
//! requests, rewritten into their 0.3 form (`message/send` with `kind`-tagged parts,
//! `tasks/get`, ...) and the answers read back as 1.0, by the one mapping of both directions
//! (`crate::v0_3`). Streams are 0.3 server-sent events of JSON-RPC answers.

use a2a::{
    A2AError, AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, SendMessageRequest, SendMessageResponse, StreamResponse,
    SubscribeToTaskRequest, Task, TaskPushNotificationConfig,
};
use a2a_client::{ServiceParams, Transport};
use async_trait::async_trait;
use futures::stream::{self, BoxStream};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::outbound::error_chain;
use crate::v0_3::{Method, error_to_v1};

/// The JSON-RPC endpoint of a 0.3 interface.
pub(crate) struct V03Transport {
    http: reqwest::Client,
    url: String,
}

impl V03Transport {
    pub(crate) fn new(http: reqwest::Client, url: String) -> V03Transport {
        V03Transport { http, url }
    }

    /// The POST of `request` as the 0.3 `method`, with the call's headers: the official
    /// client's `A2A-Version: 1.0` becomes `0.3`, so that an agent serving both reads the
    /// request as the 0.3 it is.
    async fn post<R: Serialize>(
        &self,
        params: &ServiceParams,
        method: Method,
        request: &R,
    ) -> Result<reqwest::Response, A2AError> {
        let v1 = serde_json::to_value(request)
            .map_err(|e| A2AError::internal(format!("the request cannot be written: {e}")))?;
        let body = json!({
            "jsonrpc": "2.0",
            "id": a2a::new_task_id(),
            "method": method.name(),
            "params": method.params_to_v0_3(v1),
        });
        let mut post = self.http.post(&self.url).json(&body);
        for (name, values) in params {
            if name.eq_ignore_ascii_case(a2a::SVC_PARAM_VERSION) {
                continue;
            }
            for value in values {
                post = post.header(name.as_str(), value.as_str());
            }
        }
        if method.streams() {
            post = post.header("Accept", "text/event-stream");
        }
        post.header(a2a::SVC_PARAM_VERSION, "0.3")
            .send()
            .await
            .map_err(|e| {
                A2AError::internal(format!("the agent cannot be reached: {}", error_chain(&e)))
            })
    }

    /// A call answered by one JSON-RPC response.
    async fn call<R: Serialize, T: DeserializeOwned>(
        &self,
        params: &ServiceParams,
        method: Method,
        request: &R,
    ) -> Result<T, A2AError> {
        let response = self.post(params, method, request).await?;
        let status = response.status();
        let body = response.bytes().await.map_err(|e| {
            A2AError::internal(format!("the answer cannot be read: {}", error_chain(&e)))
        })?;
        let envelope: Value = serde_json::from_slice(&body).map_err(|e| {
            A2AError::internal(format!(
                "the agent answered HTTP {status} with a body that is not JSON-RPC: {e}"
            ))
        })?;
        read_result(method, envelope)
    }

    /// A call answered by a stream of server-sent events.
    async fn stream<R: Serialize>(
        &self,
        params: &ServiceParams,
        method: Method,
        request: &R,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        let response = self.post(params, method, request).await?;
        let is_stream = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        if !is_stream {
            // An error answering a stream comes as one JSON-RPC response.
            let body = response.bytes().await.map_err(|e| {
                A2AError::internal(format!("the answer cannot be read: {}", error_chain(&e)))
            })?;
            let envelope: Value = serde_json::from_slice(&body).map_err(|e| {
                A2AError::internal(format!(
                    "the agent answered a stream with neither events nor JSON-RPC: {e}"
                ))
            })?;
            return Err(match read_result::<StreamResponse>(method, envelope) {
                Err(e) => e,
                Ok(_) => A2AError::internal("the agent answered a stream with a single result"),
            });
        }
        let events = stream::unfold(
            (response, Vec::new(), false),
            move |(mut response, mut buffer, done)| async move {
                if done {
                    return None;
                }
                loop {
                    if let Some(data) = next_event(&mut buffer) {
                        return Some((read_event(method, &data), (response, buffer, false)));
                    }
                    match response.chunk().await {
                        Ok(Some(chunk)) => buffer.extend_from_slice(&chunk),
                        Ok(None) if buffer.iter().all(u8::is_ascii_whitespace) => return None,
                        Ok(None) => {
                            // A last event without its blank line.
                            buffer.extend_from_slice(b"\n\n");
                            let data = next_event(&mut buffer)?;
                            return Some((read_event(method, &data), (response, buffer, true)));
                        }
                        Err(e) => {
                            let err = A2AError::internal(format!(
                                "the event stream broke off: {}",
                                error_chain(&e)
                            ));
                            return Some((Err(err), (response, buffer, true)));
                        }
                    }
                }
            },
        );
        Ok(Box::pin(events))
    }
}

/// The 1.0 result of a 0.3 JSON-RPC response: its `result`, rewritten, or its `error`.
fn read_result<T: DeserializeOwned>(method: Method, mut envelope: Value) -> Result<T, A2AError> {
    if let Some(error) = envelope.get("error") {
        return Err(error_to_v1(error));
    }
    let Some(result) = envelope.get_mut("result").map(Value::take) else {
        return Err(A2AError::internal(
            "the agent's JSON-RPC response has neither `result` nor `error`",
        ));
    };
    serde_json::from_value(method.result_to_v1(result)).map_err(|e| {
        A2AError::internal(format!(
            "the agent's `{}` result does not read as A2A: {e}",
            method.name()
        ))
    })
}

/// The 1.0 event of one server-sent event's data (a 0.3 JSON-RPC response).
fn read_event(method: Method, data: &str) -> Result<StreamResponse, A2AError> {
    let envelope: Value = serde_json::from_str(data)
        .map_err(|e| A2AError::internal(format!("an event is not JSON: {e}")))?;
    read_result(method, envelope)
}

/// The `data` of the next complete server-sent event in `buffer` (its `data:` lines joined),
/// taken out of the buffer; `None` until a blank line ends one. Events without data (comments,
/// keep-alives) are skipped.
fn next_event(buffer: &mut Vec<u8>) -> Option<String> {
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
impl Transport for V03Transport {
    async fn send_message(
        &self,
        params: &ServiceParams,
        req: &SendMessageRequest,
    ) -> Result<SendMessageResponse, A2AError> {
        self.call(params, Method::Send, req).await
    }

    async fn send_streaming_message(
        &self,
        params: &ServiceParams,
        req: &SendMessageRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        self.stream(params, Method::Stream, req).await
    }

    async fn get_task(
        &self,
        params: &ServiceParams,
        req: &GetTaskRequest,
    ) -> Result<Task, A2AError> {
        self.call(params, Method::GetTask, req).await
    }

    async fn list_tasks(
        &self,
        _params: &ServiceParams,
        _req: &ListTasksRequest,
    ) -> Result<ListTasksResponse, A2AError> {
        Err(A2AError::unsupported_operation(
            "A2A 0.3 has no way to list tasks; the agent offers only 0.3",
        ))
    }

    async fn cancel_task(
        &self,
        params: &ServiceParams,
        req: &CancelTaskRequest,
    ) -> Result<Task, A2AError> {
        self.call(params, Method::CancelTask, req).await
    }

    async fn subscribe_to_task(
        &self,
        params: &ServiceParams,
        req: &SubscribeToTaskRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse, A2AError>>, A2AError> {
        self.stream(params, Method::Resubscribe, req).await
    }

    async fn create_push_config(
        &self,
        params: &ServiceParams,
        req: &TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        self.call(params, Method::SetPushConfig, req).await
    }

    async fn get_push_config(
        &self,
        params: &ServiceParams,
        req: &GetTaskPushNotificationConfigRequest,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        self.call(params, Method::GetPushConfig, req).await
    }

    async fn list_push_configs(
        &self,
        params: &ServiceParams,
        req: &ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2AError> {
        self.call(params, Method::ListPushConfigs, req).await
    }

    async fn delete_push_config(
        &self,
        params: &ServiceParams,
        req: &DeleteTaskPushNotificationConfigRequest,
    ) -> Result<(), A2AError> {
        self.call::<_, Value>(params, Method::DeletePushConfig, req)
            .await
            .map(drop)
    }

    async fn get_extended_agent_card(
        &self,
        params: &ServiceParams,
        req: &GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2AError> {
        self.call(params, Method::ExtendedCard, req).await
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
        let error = read_result::<Task>(Method::Send, envelope).expect_err("an error");
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
        let task: SendMessageResponse = read_result(Method::Send, envelope).expect("a task");
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
