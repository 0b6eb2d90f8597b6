//! The gRPC binding (`Server::grpc`), called by the official Rust gRPC client (`a2a-grpc`'s
//! transport through `a2a-client`) and by the raw generated `lf.a2a.v1.A2AService` client: the
//! card's GRPC interface, structured input checked and answered, a schema violation, a stream
//! that begins with the task, a question answered, cancel, subscribe, push configs, the card's
//! security from the request's metadata, and bad input that leaves the server serving.

use crate::fight_club::agent as fight_agent;
use crate::guarded_judge::agent as guarded_agent;
use crate::support;
use crate::trip_planner::server;

use std::sync::Arc;
use std::time::Duration;

use a2a::{
    AgentCard, CancelTaskRequest, Message, Part, Role, SendMessageConfiguration,
    SendMessageRequest, StreamResponse, SubscribeToTaskRequest, TaskPushNotificationConfig,
    TaskState,
};
use a2a_card::server::auth::{Algorithm, Authentication, JwtVerifier};
use a2a_card::server::{Server, Webhooks};
use a2a_client::{A2AClient, A2AClientFactory, Transport};
use a2a_pb::proto;
use a2a_pb::proto::a2a_service_client::A2aServiceClient;
use futures::StreamExt;
use serde_json::json;
use support::client::{Running, card, data_part, request, serve, task};
use support::tokens::{self, Pair, claims};

/// The official client, speaking gRPC to the agent whose card is `card`.
async fn grpc_client(card: &AgentCard) -> A2AClient<Box<dyn Transport>> {
    A2AClientFactory::builder()
        .register(Arc::new(a2a_grpc::GrpcTransportFactory::new()))
        .preferred_bindings(vec!["GRPC".to_owned()])
        .build()
        .create_from_card(card)
        .await
        .expect("a gRPC transport from the card's GRPC interface")
}

/// The generated client, on the agent's gRPC interface.
async fn raw(card: &AgentCard) -> A2aServiceClient<tonic::transport::Channel> {
    let url = grpc_url(card);
    A2aServiceClient::connect(url).await.expect("connected")
}

/// The URL of the card's GRPC interface, as a channel takes it (the official client reads a
/// card's interface URL without its scheme; it connects over plain HTTP/2 then, as here).
fn grpc_url(card: &AgentCard) -> String {
    let url = card
        .supported_interfaces
        .iter()
        .find(|i| i.protocol_binding == "GRPC")
        .map(|i| i.url.clone())
        .expect("the card lists a GRPC interface");
    if url.contains("://") {
        url
    } else {
        format!("http://{url}")
    }
}

async fn planner() -> Running {
    serve(
        server::server(
            Duration::from_millis(30),
            Webhooks::default().allow_loopback(true),
        )
        .grpc(true),
    )
    .await
}

fn trip(days: u8, start: Option<&str>) -> Part {
    let mut data = json!({"destination": "Lisbon", "days": days});
    if let Some(start) = start {
        data["start_date"] = json!(start);
    }
    data_part("tripRequest", data)
}

#[tokio::test]
async fn the_card_offers_grpc_only_when_it_is_mounted() {
    let with = serve(Server::new(fight_agent::FightClub).grpc(true)).await;
    let served = card(&with.base).await;
    let interfaces: Vec<(&str, &str)> = served
        .supported_interfaces
        .iter()
        .map(|i| (i.protocol_binding.as_str(), i.protocol_version.as_str()))
        .collect();
    assert!(interfaces.contains(&("GRPC", "1.0")), "{interfaces:?}");
    // As served (the 1.0 card), gRPC is at the URL's origin.
    let json: serde_json::Value = reqwest::Client::new()
        .get(format!("{}/.well-known/agent-card.json", with.base))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .expect("the card")
        .json()
        .await
        .expect("JSON");
    let grpc = json["supportedInterfaces"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|i| i["protocolBinding"] == "GRPC")
        .expect("a GRPC interface");
    assert_eq!(grpc["url"], with.base.as_str(), "{json}");
    // In the order the operator prefers.
    let first = serve(
        Server::new(fight_agent::FightClub)
            .grpc(true)
            .interface_order(["GRPC"]),
    )
    .await;
    let served = card(&first.base).await;
    assert_eq!(served.supported_interfaces[0].protocol_binding, "GRPC");
    let without = serve(Server::new(fight_agent::FightClub)).await;
    let served = card(&without.base).await;
    assert!(
        served
            .supported_interfaces
            .iter()
            .all(|i| i.protocol_binding != "GRPC"),
        "no GRPC interface unless it is mounted"
    );
}

#[tokio::test]
async fn structured_input_is_checked_and_answered_over_grpc() {
    let running = serve(Server::new(fight_agent::FightClub).grpc(true)).await;
    let client = grpc_client(&card(&running.base).await).await;
    let done = task(
        client
            .send_message(&request(
                vec![data_part(
                    "fightComparison",
                    json!({"a": "Lion", "b": "Tiger"}),
                )],
                None,
            ))
            .await
            .expect("a verdict over gRPC"),
    );
    assert_eq!(done.status.state, TaskState::Completed);
    let answer = done
        .artifacts
        .iter()
        .flatten()
        .flat_map(|a| &a.parts)
        .find_map(|p| match &p.content {
            a2a::PartContent::Data(data) => Some(data.clone()),
            _ => None,
        })
        .expect("a data part");
    assert_eq!(answer["winner"], "Tiger", "{answer}");

    // Data that breaks the schema: refused, naming the field, and no task.
    let refused = client
        .send_message(&request(
            vec![data_part("fightComparison", json!({"a": "Lion"}))],
            None,
        ))
        .await
        .expect_err("a schema violation is refused");
    assert!(
        refused.message.contains("b"),
        "the violation names the field: {refused:?}"
    );
    let mut raw = raw(&card(&running.base).await).await;
    let listed = raw
        .list_tasks(proto::ListTasksRequest::default())
        .await
        .expect("listed")
        .into_inner();
    assert_eq!(listed.tasks.len(), 1, "the refused message made no task");
    // The status is INVALID_ARGUMENT with the A2A reason, as spec section 10.6 maps it.
    let status = raw
        .send_message(proto_send(json!({"a": "Lion"})))
        .await
        .expect_err("refused");
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    // With the violations as `BadRequest` field violations and the A2A `ErrorInfo` reason
    // (spec sections 10.6 and 5.4).
    use tonic_types::StatusExt as _;
    let bad = status
        .get_details_bad_request()
        .expect("a BadRequest detail");
    assert!(
        bad.field_violations
            .iter()
            .any(|v| v.description.contains("\"b\"") || v.field.contains('b')),
        "{bad:?}"
    );
    let info = status
        .get_details_error_info()
        .expect("an ErrorInfo detail");
    assert!(!info.reason.is_empty(), "{info:?}");
}

/// A `SendMessageRequest` in protobuf with one fight-comparison data part.
fn proto_send(data: serde_json::Value) -> proto::SendMessageRequest {
    let mut message = Message::new(Role::User, vec![data_part("fightComparison", data)]);
    message.message_id = a2a::new_message_id();
    a2a_pb::pbconv::to_proto_send_message_request(&SendMessageRequest {
        message,
        configuration: None,
        metadata: None,
        tenant: None,
    })
}

#[tokio::test]
async fn streams_questions_cancel_subscribe_and_push_configs_over_grpc() {
    let running = planner().await;
    let client = grpc_client(&card(&running.base).await).await;

    // A stream begins with the task, then its updates, to completion.
    let mut events = client
        .send_streaming_message(&request(vec![trip(3, Some("2026-12-01"))], None))
        .await
        .expect("a stream");
    let first = events.next().await.expect("an event").expect("ok");
    assert!(matches!(first, StreamResponse::Task(_)), "{first:?}");
    let mut last = None;
    while let Some(event) = events.next().await {
        if let StreamResponse::StatusUpdate(u) = event.expect("an event") {
            last = Some(u.status.state);
        }
    }
    assert_eq!(last, Some(TaskState::Completed));

    // A question, answered.
    let asked = task(
        client
            .send_message(&request(vec![trip(2, None)], None))
            .await
            .expect("a question"),
    );
    assert_eq!(asked.status.state, TaskState::InputRequired);
    // A push config on the waiting task, then listed.
    let config = TaskPushNotificationConfig {
        url: "http://127.0.0.1:9/hook".into(),
        id: Some("hook".into()),
        task_id: asked.id.clone(),
        token: Some("t".into()),
        authentication: None,
        tenant: None,
    };
    client
        .create_push_config(&config)
        .await
        .expect("a push config over gRPC");
    let listed = client
        .list_push_configs(&a2a::ListTaskPushNotificationConfigsRequest {
            task_id: asked.id.clone(),
            page_size: None,
            page_token: None,
            tenant: None,
        })
        .await
        .expect("listed");
    assert_eq!(listed.configs.len(), 1);
    let done = task(
        client
            .send_message(&request(
                vec![Part::text("2026-12-01")],
                Some(asked.id.clone()),
            ))
            .await
            .expect("the answer"),
    );
    assert_eq!(done.status.state, TaskState::Completed);

    // A subscriber to a running task gets the task, then updates; cancel ends it.
    let mut slow = request(vec![trip(14, Some("2026-12-01"))], None);
    slow.configuration = Some(SendMessageConfiguration {
        accepted_output_modes: None,
        task_push_notification_config: None,
        history_length: None,
        return_immediately: Some(true),
    });
    let running_task = task(client.send_message(&slow).await.expect("started"));
    let mut watched = client
        .subscribe_to_task(&SubscribeToTaskRequest {
            id: running_task.id.clone(),
            tenant: None,
        })
        .await
        .expect("subscribed");
    let first = watched.next().await.expect("an event").expect("ok");
    assert!(matches!(first, StreamResponse::Task(_)), "{first:?}");
    let canceled = client
        .cancel_task(&CancelTaskRequest {
            id: running_task.id.clone(),
            metadata: None,
            tenant: None,
        })
        .await
        .expect("canceled");
    assert_eq!(canceled.status.state, TaskState::Canceled);
    let mut end = None;
    let read = async {
        while let Some(event) = watched.next().await {
            if let Ok(StreamResponse::StatusUpdate(u)) = event {
                end = Some(u.status.state);
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("the subscription ends with the cancel");
    assert_eq!(end, Some(TaskState::Canceled));
}

#[tokio::test]
async fn the_cards_security_applies_to_grpc_from_the_metadata() {
    let key = Pair::ed25519("k1");
    let verifier = || {
        JwtVerifier::new(tokens::keys(&[&key]), [Algorithm::EdDSA])
            .issuer(tokens::ISSUER)
            .audience(tokens::AUDIENCE)
    };
    let auth = Authentication::new()
        .token("bearer", verifier())
        .token("oauth", verifier());
    let running = serve(
        Server::new(guarded_agent::GuardedJudge)
            .authentication(auth)
            .grpc(true),
    )
    .await;
    let served = card(&running.base).await;
    let mut raw = raw(&served).await;
    let text = |t: &str| {
        let mut message = Message::new(Role::User, vec![Part::text(t)]);
        message.message_id = a2a::new_message_id();
        a2a_pb::pbconv::to_proto_send_message_request(&SendMessageRequest {
            message,
            configuration: None,
            metadata: None,
            tenant: None,
        })
    };

    // No token: UNAUTHENTICATED, with the challenge.
    let refused = raw
        .send_message(text("Lion vs Tiger"))
        .await
        .expect_err("no token, no call");
    assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused:?}");
    assert!(
        refused.metadata().get("www-authenticate").is_some(),
        "{refused:?}"
    );

    // A token: served, and the principal reaches the skill.
    let token = key.sign(&claims("alice", ""));
    let mut call = tonic::Request::new(text("Lion vs Tiger"));
    call.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("ascii"),
    );
    let answered = raw.send_message(call).await.expect("served").into_inner();
    let shown = format!("{answered:?}");
    assert!(shown.contains("judged for alice"), "{shown}");

    // The `record` skill needs a scope the token lacks: PERMISSION_DENIED.
    let mut message = Message::new(
        Role::User,
        vec![data_part("fightResult", json!({"winner": "Tiger"}))],
    );
    message.message_id = a2a::new_message_id();
    let mut call = tonic::Request::new(a2a_pb::pbconv::to_proto_send_message_request(
        &SendMessageRequest {
            message,
            configuration: None,
            metadata: None,
            tenant: None,
        },
    ));
    call.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("ascii"),
    );
    let refused = raw.send_message(call).await.expect_err("under-scoped");
    assert_eq!(refused.code(), tonic::Code::PermissionDenied, "{refused:?}");

    // The extended card, to an authenticated caller only: it lists the `odds` skill.
    let refused = raw
        .get_extended_agent_card(proto::GetExtendedAgentCardRequest::default())
        .await
        .expect_err("no token, no extended card");
    assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused:?}");
    let mut call = tonic::Request::new(proto::GetExtendedAgentCardRequest::default());
    call.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("ascii"),
    );
    let extended = raw
        .get_extended_agent_card(call)
        .await
        .expect("the extended card")
        .into_inner();
    assert!(
        extended.skills.iter().any(|s| s.id == "odds"),
        "{:?}",
        extended.skills.iter().map(|s| &s.id).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn bad_grpc_input_gets_its_status_and_the_server_keeps_serving() {
    let running = serve(
        Server::new(fight_agent::FightClub)
            .grpc(true)
            .body_limit(64 * 1024),
    )
    .await;
    let served = card(&running.base).await;
    let mut raw = raw(&served).await;

    // A message over the body limit: refused before it is read (tonic's OUT_OF_RANGE, naming
    // the limit).
    let big = "x".repeat(128 * 1024);
    let refused = raw
        .send_message(proto_send(json!({"a": big, "b": "Tiger"})))
        .await
        .expect_err("too large");
    assert_eq!(refused.code(), tonic::Code::OutOfRange, "{refused:?}");
    assert!(refused.message().contains("65536"), "{refused:?}");

    // A method the service does not have: UNIMPLEMENTED.
    let mut grpc = tonic::client::Grpc::new(
        tonic::transport::Channel::from_shared(grpc_url(&served))
            .expect("a URL")
            .connect()
            .await
            .expect("connected"),
    );
    grpc.ready().await.expect("ready");
    let unknown: Result<tonic::Response<proto::Task>, _> = grpc
        .unary(
            tonic::Request::new(proto::GetTaskRequest::default()),
            "/lf.a2a.v1.A2AService/NoSuchMethod"
                .parse()
                .expect("a path"),
            tonic_prost::ProstCodec::default(),
        )
        .await;
    assert_eq!(
        unknown.expect_err("unknown").code(),
        tonic::Code::Unimplemented
    );

    // Bytes that do not decode as the request: a `Part` whose raw bytes stand where the
    // request's `message` (field 2) is, and are no message (wire type 7). Refused as they are
    // read, no task.
    grpc.ready().await.expect("ready");
    let garbage: Result<tonic::Response<proto::Task>, _> = grpc
        .unary(
            tonic::Request::new(proto::Part {
                content: Some(proto::part::Content::Raw(vec![0xff, 0xfe, 0x00])),
                ..Default::default()
            }),
            "/lf.a2a.v1.A2AService/SendMessage".parse().expect("a path"),
            tonic_prost::ProstCodec::default(),
        )
        .await;
    let status = garbage.expect_err("not a SendMessageRequest");
    assert_eq!(status.code(), tonic::Code::Internal, "{status:?}");
    assert!(status.message().contains("decode"), "{status:?}");

    // A request without its message: INVALID_ARGUMENT.
    let empty = raw
        .send_message(proto::SendMessageRequest::default())
        .await
        .expect_err("no message");
    assert_eq!(empty.code(), tonic::Code::InvalidArgument, "{empty:?}");

    // Still serving, and no task was made by any of the above.
    let listed = raw
        .list_tasks(proto::ListTasksRequest::default())
        .await
        .expect("listed")
        .into_inner();
    assert_eq!(listed.tasks.len(), 0, "{listed:?}");
    let done = raw
        .send_message(proto_send(json!({"a": "Lion", "b": "Tiger"})))
        .await
        .expect("served after the bad input");
    assert!(format!("{:?}", done.into_inner()).contains("Tiger"));
}
