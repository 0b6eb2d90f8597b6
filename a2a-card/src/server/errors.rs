//! How the structured input flow's errors and a skill's errors become A2A errors, and how an
//! A2A error is written on HTTP+JSON.

use std::collections::HashMap;

use a2a::errordetails::{self, FieldViolation, TypedDetail};
use a2a::{A2AError, error_code};
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::Value;

use crate::dispatch::DispatchError;
use crate::skill::SkillError;

/// The A2A error answering a message the [dispatcher](crate::dispatch::Dispatcher) rejected.
///
/// The code is [`DispatchError::code`] (`-32005` content type not supported, `-32602` invalid
/// params), the message is the error's own, and the details are
/// [`DispatchError::data`] as a `google.protobuf.Struct` detail, plus, for data that breaks its
/// schema, a `google.rpc.BadRequest` detail with one field violation per schema violation (the
/// field is the instance path, a JSON pointer into the part's data).
pub(crate) fn dispatch_error(error: &DispatchError) -> A2AError {
    let code = i32::try_from(error.code()).unwrap_or(error_code::INVALID_PARAMS);
    let mut details = vec![TypedDetail::from_struct(object(error.data()))];
    if let DispatchError::InvalidData { violations, .. } = error {
        details.push(TypedDetail::bad_request(
            violations
                .iter()
                .map(|v| FieldViolation {
                    field: v.instance_path.clone(),
                    description: v.message.clone(),
                })
                .collect(),
        ));
    }
    A2AError::new(code, error.to_string()).with_details(details)
}

/// The A2A error of a skill call that could not take the message's input
/// ([`SkillError::Input`]): invalid params, with the reason in a struct detail.
pub(crate) fn input_error(error: &SkillError) -> A2AError {
    let mut fields = HashMap::new();
    fields.insert("reason".to_owned(), Value::from("invalid-input"));
    fields.insert("detail".to_owned(), Value::from(error.to_string()));
    A2AError::invalid_params(error.to_string()).with_details(vec![TypedDetail::from_struct(fields)])
}

/// A JSON object's fields (anything else under `value`).
fn object(value: Value) -> HashMap<String, Value> {
    match value {
        Value::Object(map) => map.into_iter().collect(),
        other => HashMap::from([("value".to_owned(), other)]),
    }
}

/// An HTTP+JSON error answer with the HTTP status `status`: [`rest_status_json`], as
/// `application/problem+json`.
pub(crate) fn rest_status(status: StatusCode, err: A2AError) -> Response {
    let mut response = Response::new(Body::from(rest_status_json(status, err)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    super::telemetry::failed();
    response
}

/// An HTTP+JSON error with the HTTP status `status`: a `google.rpc.Status` (A2A 1.0 section
/// 11.6: the HTTP status, the gRPC status name, the message, the error's details and an
/// `ErrorInfo` naming the A2A reason), as the JSON text of its `{"error": ...}` envelope
/// (an answer's body, or a stream's `error` event).
pub(crate) fn rest_status_json(status: StatusCode, err: A2AError) -> String {
    let mut details: Vec<TypedDetail> = err
        .details
        .unwrap_or_default()
        .into_iter()
        .filter(|d| d.type_url != errordetails::ERROR_INFO_TYPE)
        .collect();
    let metadata = HashMap::from([("timestamp".to_owned(), chrono::Utc::now().to_rfc3339())]);
    details.push(TypedDetail::error_info(
        a2a::errors::error_reason(err.code),
        errordetails::PROTOCOL_DOMAIN,
        Some(metadata),
    ));
    serde_json::json!({"error": {
        "code": status.as_u16(),
        "status": grpc_status(err.code),
        "message": err.message,
        "details": details,
    }})
    .to_string()
}

/// The gRPC status name of an A2A error code (A2A 1.0 section 5.4).
fn grpc_status(code: i32) -> &'static str {
    use a2a::error_code as c;
    match code {
        c::TASK_NOT_FOUND => "NOT_FOUND",
        c::METHOD_NOT_FOUND => "UNIMPLEMENTED",
        c::TASK_NOT_CANCELABLE
        | c::EXTENDED_CARD_NOT_CONFIGURED
        | c::EXTENSION_SUPPORT_REQUIRED
        | c::PUSH_NOTIFICATION_NOT_SUPPORTED
        | c::UNSUPPORTED_OPERATION
        | c::VERSION_NOT_SUPPORTED => "FAILED_PRECONDITION",
        c::CONTENT_TYPE_NOT_SUPPORTED | c::PARSE_ERROR | c::INVALID_REQUEST | c::INVALID_PARAMS => {
            "INVALID_ARGUMENT"
        }
        _ => "INTERNAL",
    }
}

/// `body` as a JSON answer with `status`.
pub(crate) fn json_response(status: StatusCode, body: &impl serde::Serialize) -> Response {
    // Begun at 1 KiB: most answers fit, where a buffer grown from a small one is copied, with
    // the allocator's lock taken, at each step.
    let mut bytes = Vec::with_capacity(1024);
    if serde_json::to_writer(&mut bytes, body).is_err() {
        bytes.clear();
    }
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::Violation;

    #[test]
    fn invalid_data_carries_the_struct_and_the_field_violations() {
        let violation = Violation {
            instance_path: "/b".into(),
            schema_path: "/properties/b/type".into(),
            message: "1 is not of type \"string\"".into(),
        };
        let err = dispatch_error(&DispatchError::InvalidData {
            schema: "fightComparison".into(),
            violations: vec![violation],
            truncated: false,
        });
        assert_eq!(err.code, error_code::INVALID_PARAMS);
        let details = err.details.unwrap_or_default();
        assert_eq!(details.len(), 2);
        assert_eq!(details[0].type_url, a2a::errordetails::STRUCT_TYPE);
        assert_eq!(details[0].value["schema"], "fightComparison");
        assert_eq!(details[1].type_url, a2a::errordetails::BAD_REQUEST_TYPE);
        assert_eq!(details[1].value["fieldViolations"][0]["field"], "/b");
    }

    #[test]
    fn undeclared_schemas_are_content_type_errors() {
        let err = dispatch_error(&DispatchError::UndeclaredSchema {
            mode: "application/json;schema=nope".into(),
            name: "nope".into(),
        });
        assert_eq!(err.code, error_code::CONTENT_TYPE_NOT_SUPPORTED);
        assert!(err.message.contains("nope"));
    }
}
