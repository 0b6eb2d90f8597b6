//! Tests of the rewriting between A2A 0.3 and 1.0: requests, tasks, stream events, push
//! configs and errors, and what is left alone.

use super::*;

#[test]
fn a_0_3_message_send_becomes_a_1_0_send_message() {
    let params = json!({
        "message": {
            "kind": "message", "role": "user", "messageId": 7,
            "parts": [
                {"kind": "text", "text": "Who wins?"},
                {"kind": "data", "data": {"a": "Lion", "b": "Tiger"},
                 "metadata": {"mimeType": "application/json;schema=fightComparison"}},
                {"kind": "file", "file": {"uri": "https://x.example/a.png", "mimeType": "image/png", "name": "a.png"}}
            ]
        },
        "configuration": {"blocking": false, "acceptedOutputModes": ["text/plain"]}
    });
    let v1 = Method::Send.params_to_v1(params);
    assert_eq!(
        v1,
        json!({
            "message": {
                "role": "ROLE_USER", "messageId": "7",
                "parts": [
                    {"text": "Who wins?"},
                    {"data": {"a": "Lion", "b": "Tiger"},
                     "metadata": {"mimeType": "application/json;schema=fightComparison"},
                     "mediaType": "application/json;schema=fightComparison"},
                    {"url": "https://x.example/a.png", "mediaType": "image/png", "filename": "a.png"}
                ]
            },
            "configuration": {"acceptedOutputModes": ["text/plain"], "returnImmediately": true}
        })
    );
    assert_eq!(Method::Send.v1(), "SendMessage");
}

#[test]
fn a_1_0_task_becomes_a_0_3_task() {
    let result = json!({"task": {
        "id": "t1", "contextId": "c1",
        "status": {"state": "TASK_STATE_INPUT_REQUIRED", "timestamp": "2026-01-01T00:00:00Z",
                   "message": {"messageId": "m2", "role": "ROLE_AGENT", "parts": [{"text": "more?"}]}},
        "artifacts": [{"artifactId": "a1", "parts": [
            {"data": {"winner": "Tiger"}, "mediaType": "application/json;schema=fightResponse"},
            {"raw": "AAE=", "mediaType": "application/octet-stream", "filename": "x.bin"}
        ]}],
        "history": [{"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}]
    }});
    let old = Method::Send.result_to_v0_3(result);
    assert_eq!(old["kind"], "task");
    assert_eq!(old["status"]["state"], "input-required");
    assert_eq!(old["status"]["message"]["kind"], "message");
    assert_eq!(old["status"]["message"]["role"], "agent");
    assert_eq!(
        old["status"]["message"]["parts"][0],
        json!({"kind": "text", "text": "more?"})
    );
    assert_eq!(
        old["artifacts"][0]["parts"][0],
        json!({"kind": "data", "data": {"winner": "Tiger"},
               "metadata": {"mimeType": "application/json;schema=fightResponse"}})
    );
    assert_eq!(
        old["artifacts"][0]["parts"][1],
        json!({"kind": "file", "file": {"bytes": "AAE=", "mimeType": "application/octet-stream", "name": "x.bin"}})
    );
    assert_eq!(old["history"][0]["role"], "user");
}

#[test]
fn stream_events_are_kind_tagged_with_final() {
    let done = Method::Stream.result_to_v0_3(json!({"statusUpdate": {
        "taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}
    }}));
    assert_eq!(done["kind"], "status-update");
    assert_eq!(done["final"], true);
    assert_eq!(done["status"]["state"], "completed");
    let working = Method::Stream.result_to_v0_3(json!({"statusUpdate": {
        "taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}
    }}));
    assert_eq!(working["final"], false);
    let artifact = Method::Resubscribe.result_to_v0_3(json!({"artifactUpdate": {
        "taskId": "t", "contextId": "c", "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}
    }}));
    assert_eq!(artifact["kind"], "artifact-update");
    assert_eq!(artifact["artifact"]["parts"][0]["kind"], "text");
}

#[test]
fn push_configs_change_shape_both_ways() {
    let v1 = Method::SetPushConfig.params_to_v1(json!({
        "taskId": "t1",
        "pushNotificationConfig": {"url": "https://hook.example/x", "token": "k",
                                   "authentication": {"schemes": ["Bearer"], "credentials": "c"}}
    }));
    assert_eq!(
        v1,
        json!({"url": "https://hook.example/x", "token": "k", "taskId": "t1",
               "authentication": {"credentials": "c", "scheme": "Bearer"}})
    );
    let old = Method::SetPushConfig.result_to_v0_3(v1);
    assert_eq!(old["taskId"], "t1");
    assert_eq!(
        old["pushNotificationConfig"]["authentication"]["schemes"],
        json!(["Bearer"])
    );
    assert_eq!(
        Method::GetPushConfig.params_to_v1(json!({"id": "t1", "pushNotificationConfigId": "p"})),
        json!({"taskId": "t1", "id": "p"})
    );
    assert_eq!(
        Method::ListPushConfigs.result_to_v0_3(json!({"configs": [{"taskId": "t1", "url": "u"}]})),
        json!([{"taskId": "t1", "pushNotificationConfig": {"url": "u"}}])
    );
}

#[test]
fn errors_carry_the_agent_s_own_details() {
    let error = json!({"code": -32602, "message": "bad", "data": [
        {"@type": a2a::errordetails::STRUCT_TYPE, "reason": "invalid-data"},
        {"@type": a2a::errordetails::ERROR_INFO_TYPE, "reason": "INVALID_PARAMS"}
    ]});
    assert_eq!(
        error_to_v0_3(error),
        json!({"code": -32602, "message": "bad", "data": {"reason": "invalid-data"}})
    );
    let plain =
        json!({"code": -32001, "message": "no task", "data": [{"reason": "TASK_NOT_FOUND"}]});
    assert_eq!(error_to_v0_3(plain.clone()), plain);
}

#[test]
fn anything_unexpected_is_left_alone() {
    for value in [json!(null), json!(3), json!("x"), json!([1])] {
        assert_eq!(Method::Send.params_to_v1(value.clone()), value);
        assert_eq!(Method::GetTask.result_to_v0_3(value.clone()), value);
    }
    assert_eq!(Method::ExtendedCard.params_to_v1(json!(null)), json!({}));
    assert_eq!(Method::parse("tasks/list"), None);
    assert!(Method::parse("message/stream").is_some_and(Method::streams));
}
