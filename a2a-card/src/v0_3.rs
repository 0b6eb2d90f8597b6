//! A2A 0.3 JSON-RPC and 1.0, both ways: method names, request params, results, stream events
//! and errors.
//!
//! The official Rust server and client speak only 1.0. On the server, the compat card
//! advertises a 0.3 JSON-RPC interface beside the 1.0 ones, so 0.3 requests (`message/send`
//! with `kind`-tagged parts, `tasks/get`, ...) are rewritten into 1.0 ones, run by the same
//! handler, and their answers rewritten back, as the official Python SDK's compatibility layer
//! does. On the client, a 1.0 request to an agent that offers only 0.3 is rewritten into its 0.3
//! form and the answer read back as 1.0 (`client/v0_3.rs`). Everything here works on JSON
//! values and never fails: what it does not recognise it leaves as it is, for the reader of the
//! result to judge.

// The server uses one direction and the client the other: a build with one of them leaves
// the other half unused.
#![cfg_attr(not(all(feature = "client", feature = "server")), allow(dead_code))]

use serde_json::{Map, Value, json};

/// A 0.3 method this layer translates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Send,
    Stream,
    GetTask,
    CancelTask,
    Resubscribe,
    SetPushConfig,
    GetPushConfig,
    ListPushConfigs,
    DeletePushConfig,
    ExtendedCard,
}

/// Each 0.3 method by its name.
const NAMES: [(&str, Method); 10] = [
    ("message/send", Method::Send),
    ("message/stream", Method::Stream),
    ("tasks/get", Method::GetTask),
    ("tasks/cancel", Method::CancelTask),
    ("tasks/resubscribe", Method::Resubscribe),
    ("tasks/pushNotificationConfig/set", Method::SetPushConfig),
    ("tasks/pushNotificationConfig/get", Method::GetPushConfig),
    ("tasks/pushNotificationConfig/list", Method::ListPushConfigs),
    (
        "tasks/pushNotificationConfig/delete",
        Method::DeletePushConfig,
    ),
    ("agent/getAuthenticatedExtendedCard", Method::ExtendedCard),
];

impl Method {
    /// The 0.3 method named `name`.
    pub(crate) fn parse(name: &str) -> Option<Method> {
        NAMES.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
    }

    /// The 1.0 method.
    pub(crate) fn v1(self) -> &'static str {
        use a2a::methods::*;
        match self {
            Method::Send => SEND_MESSAGE,
            Method::Stream => SEND_STREAMING_MESSAGE,
            Method::GetTask => GET_TASK,
            Method::CancelTask => CANCEL_TASK,
            Method::Resubscribe => SUBSCRIBE_TO_TASK,
            Method::SetPushConfig => CREATE_PUSH_CONFIG,
            Method::GetPushConfig => GET_PUSH_CONFIG,
            Method::ListPushConfigs => LIST_PUSH_CONFIGS,
            Method::DeletePushConfig => DELETE_PUSH_CONFIG,
            Method::ExtendedCard => GET_EXTENDED_AGENT_CARD,
        }
    }

    /// The 0.3 method name.
    pub(crate) fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(_, m)| *m == self)
            .map_or("", |(n, _)| n)
    }

    /// Whether the answer is a stream of events.
    pub(crate) fn streams(self) -> bool {
        matches!(self, Method::Stream | Method::Resubscribe)
    }

    /// The 1.0 params of a 0.3 request's params.
    pub(crate) fn params_to_v1(self, params: Value) -> Value {
        let Value::Object(mut p) = params else {
            return match self {
                Method::ExtendedCard => json!({}),
                _ => params,
            };
        };
        match self {
            Method::Send | Method::Stream => {
                if let Some(message) = p.get_mut("message") {
                    message_to_v1(message);
                }
                if let Some(Value::Object(config)) = p.get_mut("configuration") {
                    if let Some(push) = config.remove("pushNotificationConfig") {
                        config.insert("taskPushNotificationConfig".into(), push_to_v1(push, None));
                    }
                    if let Some(blocking) = config.remove("blocking")
                        && blocking == Value::Bool(false)
                    {
                        config.insert("returnImmediately".into(), Value::Bool(true));
                    }
                }
            }
            Method::GetTask => {
                p.remove("metadata");
            }
            Method::Resubscribe => {
                p.remove("metadata");
            }
            Method::CancelTask => {}
            Method::SetPushConfig => {
                let task_id = p.remove("taskId");
                let config = p.remove("pushNotificationConfig").unwrap_or(Value::Null);
                return push_to_v1(config, task_id);
            }
            Method::GetPushConfig | Method::DeletePushConfig => {
                let task_id = p.remove("id").unwrap_or(Value::Null);
                let config_id = p
                    .remove("pushNotificationConfigId")
                    .unwrap_or_else(|| task_id.clone());
                return json!({"taskId": task_id, "id": config_id});
            }
            Method::ListPushConfigs => {
                let task_id = p.remove("id").unwrap_or(Value::Null);
                return json!({"taskId": task_id});
            }
            Method::ExtendedCard => return json!({}),
        }
        Value::Object(p)
    }

    /// The 0.3 params of a 1.0 request's params (the client's side of [`params_to_v1`]).
    ///
    /// [`params_to_v1`]: Method::params_to_v1
    pub(crate) fn params_to_v0_3(self, params: Value) -> Value {
        let Value::Object(mut p) = params else {
            return params;
        };
        p.remove("tenant");
        match self {
            Method::Send | Method::Stream => {
                if let Some(message) = p.remove("message") {
                    p.insert("message".into(), message_to_v0_3(message));
                }
                let config = p
                    .entry("configuration")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(config) = config {
                    if let Some(push) = config.remove("taskPushNotificationConfig") {
                        let push = match push_to_v0_3(push) {
                            Value::Object(mut wrapped) => wrapped
                                .remove("pushNotificationConfig")
                                .unwrap_or(Value::Null),
                            other => other,
                        };
                        config.insert("pushNotificationConfig".into(), push);
                    }
                    let immediately = config.remove("returnImmediately") == Some(Value::Bool(true));
                    config.insert("blocking".into(), Value::Bool(!immediately));
                }
                Value::Object(p)
            }
            Method::GetTask | Method::CancelTask | Method::Resubscribe => Value::Object(p),
            Method::SetPushConfig => push_to_v0_3(Value::Object(p)),
            Method::GetPushConfig | Method::DeletePushConfig => {
                let task_id = p.remove("taskId").unwrap_or(Value::Null);
                let config_id = p.remove("id").unwrap_or(Value::Null);
                json!({"id": task_id, "pushNotificationConfigId": config_id})
            }
            Method::ListPushConfigs => {
                let task_id = p.remove("taskId").unwrap_or(Value::Null);
                json!({"id": task_id})
            }
            Method::ExtendedCard => json!({}),
        }
    }

    /// The 1.0 result of a 0.3 result (for streams: of one event); the client's side of
    /// [`result_to_v0_3`](Method::result_to_v0_3).
    pub(crate) fn result_to_v1(self, result: Value) -> Value {
        match self {
            Method::Send | Method::Stream | Method::Resubscribe => event_to_v1(result),
            Method::GetTask | Method::CancelTask => task_to_v1(result),
            Method::SetPushConfig | Method::GetPushConfig => wrapped_push_to_v1(result),
            Method::ListPushConfigs => match result {
                Value::Array(configs) => {
                    json!({"configs": configs.into_iter().map(wrapped_push_to_v1).collect::<Vec<_>>()})
                }
                other => other,
            },
            Method::DeletePushConfig => json!({}),
            Method::ExtendedCard => match crate::card::AgentCard::from_json(&result) {
                Ok(card) => card.to_json(crate::wire::Profile::V1),
                Err(_) => result,
            },
        }
    }

    /// The 0.3 result of a 1.0 result (for streams: of one event).
    pub(crate) fn result_to_v0_3(self, result: Value) -> Value {
        match self {
            Method::Send | Method::Stream | Method::Resubscribe => event_to_v0_3(result),
            Method::GetTask | Method::CancelTask => task_to_v0_3(result),
            Method::SetPushConfig | Method::GetPushConfig => push_to_v0_3(result),
            Method::ListPushConfigs => match result {
                Value::Object(mut r) => match r.remove("configs") {
                    Some(Value::Array(configs)) => {
                        Value::Array(configs.into_iter().map(push_to_v0_3).collect())
                    }
                    _ => Value::Array(Vec::new()),
                },
                other => other,
            },
            Method::DeletePushConfig => Value::Null,
            Method::ExtendedCard => match crate::card::AgentCard::from_json(&result) {
                Ok(card) => card.to_json(crate::wire::Profile::V0_3),
                Err(_) => result,
            },
        }
    }
}

/// A 0.3 error's `data`: the agent's own details object when the 1.0 error carries one (a
/// `google.protobuf.Struct` detail), otherwise the 1.0 details as they are.
pub(crate) fn error_to_v0_3(mut error: Value) -> Value {
    if let Some(data) = error.get_mut("data") {
        let own = data.as_array().and_then(|details| {
            details.iter().find(|d| {
                d.get("@type").and_then(Value::as_str) == Some(a2a::errordetails::STRUCT_TYPE)
            })
        });
        if let Some(Value::Object(own)) = own.cloned() {
            let mut own = own;
            own.remove("@type");
            *data = Value::Object(own);
        }
    }
    error
}

/// A 0.3 JSON-RPC error (`{code, message, data}`) as the 1.0 error the official client gives:
/// the same code and message, and an object `data` (the agent's own details) as a
/// `google.protobuf.Struct` detail, as a 1.0 agent sends it.
pub(crate) fn error_to_v1(error: &Value) -> a2a::A2AError {
    let code = error
        .get("code")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok())
        .unwrap_or(a2a::error_code::INTERNAL_ERROR);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("the agent answered an error without a message");
    let mut out = a2a::A2AError::new(code, message);
    if let Some(Value::Object(data)) = error.get("data") {
        let value = data.clone().into_iter().collect();
        out.details = Some(vec![a2a::TypedDetail::new(
            a2a::errordetails::STRUCT_TYPE,
            value,
        )]);
    }
    out
}

/// A 0.3 `kind`-tagged result or event as its 1.0 `SendMessageResponse` or `StreamResponse`
/// (`{"task": ..}`, `{"message": ..}`, `{"statusUpdate": ..}`, `{"artifactUpdate": ..}`).
fn event_to_v1(event: Value) -> Value {
    let Value::Object(mut e) = event else {
        return event;
    };
    let kind = e.remove("kind");
    match kind.as_ref().and_then(Value::as_str) {
        Some("task") => json!({"task": task_to_v1(Value::Object(e))}),
        Some("message") => {
            let mut message = Value::Object(e);
            message_to_v1(&mut message);
            json!({"message": message})
        }
        Some("status-update") => {
            e.remove("final");
            if let Some(status) = e.remove("status") {
                e.insert("status".into(), status_to_v1(status));
            }
            json!({"statusUpdate": e})
        }
        Some("artifact-update") => {
            if let Some(artifact) = e.remove("artifact") {
                e.insert("artifact".into(), artifact_to_v1(artifact));
            }
            json!({"artifactUpdate": e})
        }
        _ => {
            if let Some(kind) = kind {
                e.insert("kind".into(), kind);
            }
            Value::Object(e)
        }
    }
}

fn task_to_v1(task: Value) -> Value {
    let Value::Object(mut t) = task else {
        return task;
    };
    t.remove("kind");
    if let Some(status) = t.remove("status") {
        t.insert("status".into(), status_to_v1(status));
    }
    if let Some(Value::Array(artifacts)) = t.remove("artifacts") {
        let artifacts = artifacts.into_iter().map(artifact_to_v1).collect();
        t.insert("artifacts".into(), Value::Array(artifacts));
    }
    if let Some(Value::Array(mut history)) = t.remove("history") {
        history.iter_mut().for_each(message_to_v1);
        t.insert("history".into(), Value::Array(history));
    }
    Value::Object(t)
}

fn status_to_v1(status: Value) -> Value {
    let Value::Object(mut s) = status else {
        return status;
    };
    if let Some(state) = s.get_mut("state")
        && let Some(name) = state.as_str()
    {
        *state = Value::from(state_to_v1(name));
    }
    if let Some(message) = s.get_mut("message") {
        message_to_v1(message);
    }
    // A 1.0 timestamp is RFC 3339 with its offset; a 0.3 sender may write a local time.
    let zoned = s.get("timestamp").and_then(Value::as_str).is_some_and(|t| {
        t.split_once('T')
            .is_some_and(|(_, time)| time.contains(['Z', 'z', '+', '-']))
    });
    if !zoned {
        s.remove("timestamp");
    }
    Value::Object(s)
}

/// The state's name as the protocol's JSON writes it in 0.3 (`completed`, `input-required`).
pub(crate) fn state_name(state: &a2a::TaskState) -> &'static str {
    use a2a::TaskState as S;
    match state {
        S::Unspecified => "unspecified",
        S::Submitted => "submitted",
        S::Working => "working",
        S::Completed => "completed",
        S::Failed => "failed",
        S::Canceled => "canceled",
        S::InputRequired => "input-required",
        S::Rejected => "rejected",
        S::AuthRequired => "auth-required",
    }
}

/// `input-required` -> `TASK_STATE_INPUT_REQUIRED`; `unknown` -> `TASK_STATE_UNSPECIFIED`.
fn state_to_v1(state: &str) -> String {
    match state {
        "unknown" | "" => "TASK_STATE_UNSPECIFIED".to_owned(),
        other => format!(
            "TASK_STATE_{}",
            other.to_ascii_uppercase().replace('-', "_")
        ),
    }
}

fn artifact_to_v1(artifact: Value) -> Value {
    let Value::Object(mut a) = artifact else {
        return artifact;
    };
    if let Some(Value::Array(parts)) = a.get_mut("parts") {
        parts.iter_mut().for_each(part_to_v1);
    }
    Value::Object(a)
}

/// A 0.3 `TaskPushNotificationConfig` (`{taskId, pushNotificationConfig}`) as 1.0.
fn wrapped_push_to_v1(config: Value) -> Value {
    let Value::Object(mut c) = config else {
        return config;
    };
    let task_id = c.remove("taskId");
    let inner = c
        .remove("pushNotificationConfig")
        .unwrap_or(Value::Object(c));
    push_to_v1(inner, task_id)
}

/// A 0.3 message as 1.0: no `kind`, `ROLE_*` roles, 1.0 parts, string ids.
fn message_to_v1(message: &mut Value) {
    let Value::Object(m) = message else { return };
    m.remove("kind");
    if let Some(role) = m.get_mut("role") {
        let v1 = match role.as_str() {
            Some("user") => Some("ROLE_USER"),
            Some("agent") => Some("ROLE_AGENT"),
            _ => None,
        };
        if let Some(v1) = v1 {
            *role = Value::from(v1);
        }
    }
    // Some 0.3 senders (the extension's own example) number their messages.
    if let Some(id) = m.get_mut("messageId")
        && id.is_number()
    {
        *id = Value::String(id.to_string());
    }
    if let Some(Value::Array(parts)) = m.get_mut("parts") {
        for part in parts {
            part_to_v1(part);
        }
    }
}

/// A 0.3 part (`kind` text, data or file) as a 1.0 part.
fn part_to_v1(part: &mut Value) {
    let Value::Object(p) = part else { return };
    let Some(kind) = p.remove("kind") else { return };
    match kind.as_str() {
        Some("data") => {
            let mode = p
                .get("metadata")
                .and_then(|m| m.get("mimeType"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            if let Some(mode) = mode {
                p.entry("mediaType").or_insert(Value::String(mode));
            }
        }
        Some("file") => {
            if let Some(Value::Object(mut file)) = p.remove("file") {
                if let Some(bytes) = file.remove("bytes") {
                    p.insert("raw".into(), bytes);
                }
                if let Some(uri) = file.remove("uri") {
                    p.insert("url".into(), uri);
                }
                if let Some(mime) = file.remove("mimeType") {
                    p.insert("mediaType".into(), mime);
                }
                if let Some(name) = file.remove("name") {
                    p.insert("filename".into(), name);
                }
            }
        }
        _ => {}
    }
}

/// A 0.3 `PushNotificationConfig` (with its task id) as a 1.0 `TaskPushNotificationConfig`.
fn push_to_v1(config: Value, task_id: Option<Value>) -> Value {
    let Value::Object(mut c) = config else {
        return config;
    };
    if let Some(task_id) = task_id {
        c.insert("taskId".into(), task_id);
    }
    if let Some(Value::Object(mut auth)) = c.remove("authentication") {
        let scheme = match auth.remove("schemes") {
            Some(Value::Array(schemes)) => schemes.into_iter().next().unwrap_or_default(),
            _ => Value::Null,
        };
        if let Some(scheme) = scheme.as_str() {
            auth.insert("scheme".into(), Value::from(scheme));
            c.insert("authentication".into(), Value::Object(auth));
        }
    }
    Value::Object(c)
}

/// A 1.0 `TaskPushNotificationConfig` as a 0.3 `TaskPushNotificationConfig`.
fn push_to_v0_3(config: Value) -> Value {
    let Value::Object(mut c) = config else {
        return config;
    };
    let task_id = c.remove("taskId").unwrap_or(Value::Null);
    c.remove("tenant");
    if let Some(Value::Object(mut auth)) = c.remove("authentication") {
        let scheme = auth.remove("scheme").unwrap_or(Value::Null);
        auth.insert("schemes".into(), json!([scheme]));
        c.insert("authentication".into(), Value::Object(auth));
    }
    json!({"taskId": task_id, "pushNotificationConfig": Value::Object(c)})
}

/// A 1.0 `SendMessageResponse` or `StreamResponse` (`{"task": ..}`, `{"message": ..}`,
/// `{"statusUpdate": ..}`, `{"artifactUpdate": ..}`) as its 0.3 `kind`-tagged object.
fn event_to_v0_3(event: Value) -> Value {
    let Value::Object(mut e) = event else {
        return event;
    };
    if let Some(task) = e.remove("task") {
        return task_to_v0_3(task);
    }
    if let Some(message) = e.remove("message") {
        return message_to_v0_3(message);
    }
    if let Some(Value::Object(mut update)) = e.remove("statusUpdate") {
        let state = update
            .get("status")
            .and_then(|s| s.get("state"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if let Some(status) = update.remove("status") {
            update.insert("status".into(), status_to_v0_3(status));
        }
        let last = matches!(
            state.as_str(),
            "TASK_STATE_COMPLETED"
                | "TASK_STATE_FAILED"
                | "TASK_STATE_CANCELED"
                | "TASK_STATE_REJECTED"
                | "TASK_STATE_INPUT_REQUIRED"
                | "TASK_STATE_AUTH_REQUIRED"
        );
        update.insert("final".into(), Value::Bool(last));
        return tagged("status-update", update);
    }
    if let Some(Value::Object(mut update)) = e.remove("artifactUpdate") {
        if let Some(artifact) = update.remove("artifact") {
            update.insert("artifact".into(), artifact_to_v0_3(artifact));
        }
        return tagged("artifact-update", update);
    }
    Value::Object(e)
}

/// `object` with `kind` first.
fn tagged(kind: &str, object: Map<String, Value>) -> Value {
    let mut out = Map::with_capacity(object.len() + 1);
    out.insert("kind".into(), Value::from(kind));
    out.extend(object);
    Value::Object(out)
}

fn task_to_v0_3(task: Value) -> Value {
    let Value::Object(mut t) = task else {
        return task;
    };
    if let Some(status) = t.remove("status") {
        t.insert("status".into(), status_to_v0_3(status));
    }
    if let Some(Value::Array(artifacts)) = t.remove("artifacts") {
        let artifacts = artifacts.into_iter().map(artifact_to_v0_3).collect();
        t.insert("artifacts".into(), Value::Array(artifacts));
    }
    if let Some(Value::Array(history)) = t.remove("history") {
        let history = history.into_iter().map(message_to_v0_3).collect();
        t.insert("history".into(), Value::Array(history));
    }
    tagged("task", t)
}

fn status_to_v0_3(status: Value) -> Value {
    let Value::Object(mut s) = status else {
        return status;
    };
    if let Some(state) = s.get_mut("state")
        && let Some(name) = state.as_str()
    {
        *state = Value::from(state_to_v0_3(name));
    }
    if let Some(message) = s.remove("message") {
        s.insert("message".into(), message_to_v0_3(message));
    }
    Value::Object(s)
}

/// `TASK_STATE_INPUT_REQUIRED` -> `input-required`.
fn state_to_v0_3(state: &str) -> String {
    match state.strip_prefix("TASK_STATE_") {
        Some("UNSPECIFIED") | None => "unknown".to_owned(),
        Some(rest) => rest.to_ascii_lowercase().replace('_', "-"),
    }
}

fn message_to_v0_3(message: Value) -> Value {
    let Value::Object(mut m) = message else {
        return message;
    };
    if let Some(role) = m.get_mut("role") {
        let old = match role.as_str() {
            Some("ROLE_USER") => Some("user"),
            Some("ROLE_AGENT") => Some("agent"),
            _ => None,
        };
        if let Some(old) = old {
            *role = Value::from(old);
        }
    }
    if let Some(Value::Array(parts)) = m.remove("parts") {
        let parts = parts.into_iter().map(part_to_v0_3).collect();
        m.insert("parts".into(), Value::Array(parts));
    }
    tagged("message", m)
}

fn artifact_to_v0_3(artifact: Value) -> Value {
    let Value::Object(mut a) = artifact else {
        return artifact;
    };
    if let Some(Value::Array(parts)) = a.remove("parts") {
        let parts = parts.into_iter().map(part_to_v0_3).collect();
        a.insert("parts".into(), Value::Array(parts));
    }
    Value::Object(a)
}

/// A 1.0 part as a 0.3 `kind`-tagged part; a data part's media type goes to
/// `metadata.mimeType`, where 0.3 readers look for it.
fn part_to_v0_3(part: Value) -> Value {
    let Value::Object(mut p) = part else {
        return part;
    };
    let media_type = p.remove("mediaType");
    let filename = p.remove("filename");
    if p.contains_key("text") {
        return tagged("text", p);
    }
    if p.contains_key("data") {
        if let Some(mode) = media_type {
            let metadata = p
                .entry("metadata")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(metadata) = metadata {
                metadata.entry("mimeType").or_insert(mode);
            }
        }
        return tagged("data", p);
    }
    let mut file = Map::new();
    if let Some(raw) = p.remove("raw") {
        file.insert("bytes".into(), raw);
    }
    if let Some(url) = p.remove("url") {
        file.insert("uri".into(), url);
    }
    if let Some(mime) = media_type {
        file.insert("mimeType".into(), mime);
    }
    if let Some(name) = filename {
        file.insert("name".into(), name);
    }
    p.insert("file".into(), Value::Object(file));
    tagged("file", p)
}

#[cfg(test)]
mod tests;
