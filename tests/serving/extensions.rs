//! Extensions negotiated (A2A 1.0 section 4.6): `#[agent(extension(..))]` declares them on the
//! card; a request asks for them in `A2A-Extensions` (0.3: `X-A2A-Extensions`, gRPC: the
//! `a2a-extensions` metadata); a skill sees the ones asked for that the card declares, the
//! answer names them, unknown ones are ignored, and a request without a required one is
//! refused with `-32008` before any task exists, on every binding.

use crate::support;

use a2a_card::client::{Connect, Payload};
use a2a_card::server::Server;
use a2a_card::{SkillContext, agent, skill};
use a2a_pb::proto;
use a2a_pb::proto::a2a_service_client::A2aServiceClient;
use serde_json::{Value, json};
use support::client::{Running, serve};

const AUDIT: &str = "urn:example:audit";
const RHYME: &str = "https://example.com/ext/rhyme/v1";

struct Audited;

/// Says which extensions a call was given.
#[agent(
    url = "http://127.0.0.1:9000",
    extension(
        uri = "urn:example:audit",
        description = "Every call is audited.",
        required
    ),
    extension(
        uri = "https://example.com/ext/rhyme/v1",
        description = "Answers in rhyme.",
        params = r#"{"meter": "iambic"}"#
    )
)]
impl Audited {
    /// Names the extensions in use.
    #[skill]
    fn echo(&self, text: String, ctx: SkillContext) -> String {
        format!("{text} [{}]", ctx.extensions().join(", "))
    }
}

async fn start() -> Running {
    serve(Server::new(Audited).grpc(true)).await
}

/// A JSON-RPC call with `headers`: the answer's headers and body.
async fn rpc(
    base: &str,
    headers: &[(&str, &str)],
    method: &str,
    params: Value,
) -> (reqwest::header::HeaderMap, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/"))
        .header("content-type", "application/json")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("an answer");
    let headers = response.headers().clone();
    (headers, response.json().await.expect("JSON"))
}

fn hello() -> Value {
    json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}})
}

const V1: (&str, &str) = ("a2a-version", "1.0");

/// How many tasks the agent holds, asked with the required extension.
async fn tasks(base: &str) -> Value {
    let (_, listed) = rpc(
        base,
        &[V1, ("a2a-extensions", AUDIT)],
        "ListTasks",
        json!({}),
    )
    .await;
    listed["result"]["totalSize"].clone()
}

#[tokio::test]
async fn the_card_declares_the_extensions_with_their_params() {
    let card = <Audited as a2a_card::Agent>::card().expect("the card");
    let ext = &card.capabilities.extensions;
    let audit = ext.iter().find(|e| e.uri == AUDIT).expect("audit declared");
    assert_eq!(audit.required, Some(true));
    assert_eq!(audit.description.as_deref(), Some("Every call is audited."));
    let rhyme = ext.iter().find(|e| e.uri == RHYME).expect("rhyme declared");
    assert_eq!(rhyme.required, None);
    assert_eq!(
        rhyme.params.as_ref().map(|p| p["meter"].clone()),
        Some(json!("iambic"))
    );
}

#[tokio::test]
async fn a_request_without_a_required_extension_is_refused_before_any_task_on_every_binding() {
    let running = start().await;
    let base = &running.base;
    // JSON-RPC 1.0: -32008, and no task.
    let (_, answer) = rpc(base, &[V1], "SendMessage", hello()).await;
    assert_eq!(answer["error"]["code"], -32008, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(AUDIT) && message.contains("A2A-Extensions"),
        "{message}"
    );
    // Asking for another one does not make up for it.
    let (_, answer) = rpc(
        base,
        &[V1, ("a2a-extensions", RHYME)],
        "SendMessage",
        hello(),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32008, "{answer}");
    // JSON-RPC 0.3.
    let legacy = json!({"message": {"messageId": "m2", "role": "user", "kind": "message",
                                    "parts": [{"kind": "text", "text": "hi"}]}});
    let (_, answer) = rpc(base, &[], "message/send", legacy).await;
    assert_eq!(answer["error"]["code"], -32008, "{answer}");
    // HTTP+JSON: 400, FAILED_PRECONDITION.
    let response = reqwest::Client::new()
        .post(format!("{base}/message:send"))
        .header("a2a-version", "1.0")
        .json(&hello())
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.expect("JSON");
    assert_eq!(body["error"]["status"], "FAILED_PRECONDITION", "{body}");
    assert!(
        body.to_string().contains("EXTENSION_SUPPORT_REQUIRED"),
        "{body}"
    );
    // gRPC: FAILED_PRECONDITION.
    let mut grpc = A2aServiceClient::connect(base.clone())
        .await
        .expect("connected");
    let request = proto::SendMessageRequest {
        message: Some(proto::Message {
            message_id: "m3".into(),
            role: proto::Role::User as i32,
            parts: vec![proto::Part {
                content: Some(proto::part::Content::Text("hi".into())),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    };
    let refused = grpc
        .send_message(tonic::Request::new(request.clone()))
        .await
        .expect_err("refused");
    assert_eq!(
        refused.code(),
        tonic::Code::FailedPrecondition,
        "{refused:?}"
    );
    assert_eq!(tasks(base).await, 0, "no task was made");
    // With it, over gRPC: answered, and the answer names it.
    let mut asked = tonic::Request::new(request);
    asked
        .metadata_mut()
        .insert("a2a-extensions", AUDIT.parse().expect("ASCII"));
    let answer = grpc.send_message(asked).await.expect("answered");
    assert_eq!(
        answer
            .metadata()
            .get("a2a-extensions")
            .and_then(|v| v.to_str().ok()),
        Some(AUDIT)
    );
    assert_eq!(tasks(base).await, 1);
}

#[tokio::test]
async fn the_extensions_asked_for_and_declared_reach_the_skill_and_are_named_in_the_answer() {
    let running = start().await;
    let base = &running.base;
    let asked = format!("{AUDIT}, {RHYME}, urn:example:unknown");
    let (headers, answer) = rpc(
        base,
        &[V1, ("a2a-extensions", &asked)],
        "SendMessage",
        hello(),
    )
    .await;
    let text = &answer["result"]["task"]["artifacts"][0]["parts"][0]["text"];
    assert_eq!(text, &json!(format!("hi [{AUDIT}, {RHYME}]")), "{answer}");
    // The unknown one is ignored: neither given to the skill nor named.
    assert_eq!(
        headers.get("a2a-extensions").and_then(|v| v.to_str().ok()),
        Some(format!("{AUDIT}, {RHYME}").as_str())
    );
    // 0.3 asks with X-A2A-Extensions, and is answered in it.
    let legacy = json!({"message": {"messageId": "m4", "role": "user", "kind": "message",
                                    "parts": [{"kind": "text", "text": "hi"}]}});
    let (headers, answer) = rpc(base, &[("x-a2a-extensions", AUDIT)], "message/send", legacy).await;
    assert_eq!(answer["result"]["status"]["state"], "completed", "{answer}");
    assert_eq!(
        headers
            .get("x-a2a-extensions")
            .and_then(|v| v.to_str().ok()),
        Some(AUDIT)
    );
    // HTTP+JSON.
    let response = reqwest::Client::new()
        .post(format!("{base}/message:send"))
        .header("a2a-version", "1.0")
        .header("a2a-extensions", AUDIT)
        .json(&hello())
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), 200);
    assert_eq!(
        response
            .headers()
            .get("a2a-extensions")
            .and_then(|v| v.to_str().ok()),
        Some(AUDIT)
    );
}

#[tokio::test]
async fn a_malformed_extensions_header_is_a_clear_error_and_makes_no_task() {
    let running = start().await;
    let base = &running.base;
    for bad in ["not a uri", "urn:example:audit, /relative", ":nothing"] {
        let (_, answer) = rpc(base, &[V1, ("a2a-extensions", bad)], "SendMessage", hello()).await;
        assert_eq!(answer["error"]["code"], -32602, "{bad}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("A2A-Extensions"), "{bad}: {message}");
    }
    assert_eq!(tasks(base).await, 0);
}

#[tokio::test]
async fn the_client_asks_for_the_extensions_it_is_given() {
    let running = start().await;
    let url = format!("{}/.well-known/agent-card.json", running.base);
    let without = Connect::new(&url).discover().await.expect("the card");
    let error = without
        .call("echo", Payload::text("hi"))
        .await
        .expect_err("refused without the required extension");
    assert!(error.to_string().contains(AUDIT), "{error}");
    let with = Connect::new(&url)
        .extension(AUDIT)
        .extension(RHYME)
        .discover()
        .await
        .expect("the card");
    let outcome = with
        .call("echo", Payload::text("hi"))
        .await
        .expect("answered");
    assert_eq!(outcome.state(), Some(a2a::TaskState::Completed));
    let outputs = format!("{:?}", outcome.outputs());
    // (and the idempotency extension, which the client asks for wherever a card declares it)
    let idempotency = a2a_card::idempotency::IDEMPOTENCY_EXTENSION_URI;
    assert!(
        outputs.contains(&format!("hi [{AUDIT}, {RHYME}, {idempotency}]")),
        "{outputs}"
    );
}

mod named_skill {
    //! The skill a caller names (`a2a_card::dispatch::SKILL_EXTENSION_URI` in the message's
    //! metadata): the served card declares the extension; a new task runs the skill named,
    //! over every binding, even where routing would pick another; a skill the agent does not
    //! have, or input the skill cannot take, is `-32602` naming it, and makes no task.

    use a2a_card::Input;
    use a2a_card::client::{Connect, Content, Payload};
    use a2a_card::dispatch::SKILL_EXTENSION_URI;
    use a2a_card::server::Server;
    use a2a_card::{Schema, agent, skill};
    use a2a_pb::proto::a2a_service_client::A2aServiceClient;
    use serde::Deserialize;
    use serde_json::{Value, json};

    use super::support::client::{Running, serve};

    #[derive(Deserialize, schemars::JsonSchema, Schema)]
    #[serde(deny_unknown_fields)]
    pub struct Pair {
        /// The first number.
        pub a: i64,
        /// The second number.
        pub b: i64,
    }

    pub struct Twins;
    /// Two skills that take text, and one that takes a pair of numbers.
    #[agent(url = "http://127.0.0.1:9000")]
    impl Twins {
        /// Says the text back.
        #[skill]
        fn echo(&self, text: String) -> String {
            format!("echo: {text}")
        }

        /// Says the text backwards.
        #[skill]
        fn reverse(&self, text: String) -> String {
            format!("reverse: {}", text.chars().rev().collect::<String>())
        }

        /// Adds the pair.
        #[skill]
        fn add(&self, pair: Input<Pair>) -> String {
            match pair {
                Input::Data(p) => format!("add: {}", p.a + p.b),
                Input::Text(t) => format!("add: no numbers in {t}"),
            }
        }
    }

    async fn start() -> Running {
        serve(Server::new(Twins).grpc(true)).await
    }

    /// A text message naming `skill` (none: naming none).
    fn text(text: &str, skill: Option<&str>) -> Value {
        let mut message =
            json!({"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]});
        if let Some(skill) = skill {
            message["metadata"] = json!({SKILL_EXTENSION_URI: {"skill": skill}});
        }
        json!({ "message": message })
    }

    async fn rpc(base: &str, params: Value) -> Value {
        super::rpc(base, &[super::V1], "SendMessage", params)
            .await
            .1
    }

    /// The text of the first artifact of a 1.0 task.
    fn answer(task: &Value) -> String {
        task["artifacts"][0]["parts"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    async fn tasks(base: &str) -> Value {
        super::rpc(base, &[super::V1], "ListTasks", json!({}))
            .await
            .1["result"]["totalSize"]
            .clone()
    }

    #[tokio::test]
    async fn the_served_card_declares_the_extension() {
        let running = start().await;
        let card: Value = reqwest::get(format!("{}/.well-known/agent-card.json", running.base))
            .await
            .expect("the card")
            .json()
            .await
            .expect("JSON");
        let declared = card["capabilities"]["extensions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|e| e["uri"] == SKILL_EXTENSION_URI);
        assert!(declared, "{card}");
    }

    #[tokio::test]
    async fn a_message_naming_a_skill_reaches_it_over_every_binding() {
        let running = start().await;
        let base = &running.base;
        // Routing alone takes text to the first skill that takes text.
        let routed = rpc(base, text("abc", None)).await;
        assert_eq!(answer(&routed["result"]["task"]), "echo: abc", "{routed}");
        // JSON-RPC 1.0.
        let named = rpc(base, text("abc", Some("reverse"))).await;
        assert_eq!(answer(&named["result"]["task"]), "reverse: cba", "{named}");
        // JSON-RPC 0.3: the same metadata on the 0.3 message.
        let legacy = json!({"message": {"messageId": "m2", "role": "user", "kind": "message",
            "parts": [{"kind": "text", "text": "abc"}],
            "metadata": {SKILL_EXTENSION_URI: {"skill": "reverse"}}}});
        let (_, answered) = super::rpc(base, &[], "message/send", legacy).await;
        assert_eq!(
            answered["result"]["artifacts"][0]["parts"][0]["text"], "reverse: cba",
            "{answered}"
        );
        // HTTP+JSON.
        let body: Value = reqwest::Client::new()
            .post(format!("{base}/message:send"))
            .header("a2a-version", "1.0")
            .json(&text("abc", Some("reverse")))
            .send()
            .await
            .expect("an answer")
            .json()
            .await
            .expect("JSON");
        assert_eq!(answer(&body["task"]), "reverse: cba", "{body}");
        // gRPC: the proto message's metadata Struct.
        let mut grpc = A2aServiceClient::connect(base.clone())
            .await
            .expect("connected");
        let mut message = a2a::Message::new(a2a::Role::User, vec![a2a::Part::text("abc")]);
        message.metadata =
            Some([(SKILL_EXTENSION_URI.to_owned(), json!({"skill": "reverse"}))].into());
        let request = a2a_pb::pbconv::to_proto_send_message_request(&a2a::SendMessageRequest {
            message,
            configuration: None,
            metadata: None,
            tenant: None,
        });
        let response = grpc
            .send_message(tonic::Request::new(request))
            .await
            .expect("answered")
            .into_inner();
        let response =
            a2a_pb::pbconv::from_proto_send_message_response(&response).expect("a 1.0 response");
        let a2a::SendMessageResponse::Task(task) = response else {
            panic!("a task: {response:?}")
        };
        let task = serde_json::to_value(task).expect("JSON");
        assert_eq!(answer(&task), "reverse: cba", "{task}");
    }

    #[tokio::test]
    async fn a_skill_the_agent_lacks_or_input_it_cannot_take_is_invalid_params_naming_it() {
        let running = start().await;
        let base = &running.base;
        // No such skill: named, with the agent's skills.
        let unknown = rpc(base, text("abc", Some("translate"))).await;
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
        let message = unknown["error"]["message"].as_str().unwrap_or_default();
        for said in [
            "`translate`",
            "`echo`",
            "`reverse`",
            "`add`",
            SKILL_EXTENSION_URI,
        ] {
            assert!(message.contains(said), "no {said} in: {message}");
        }
        // Text to the skill that takes a pair only as data is text it can take (Input<Pair>);
        // a pair to a skill that takes only text is not.
        let mut pair = text("", Some("echo"));
        pair["message"]["parts"] =
            json!([{"data": {"a": 1, "b": 2}, "mediaType": "application/json;schema=pair"}]);
        let refused = rpc(base, pair.clone()).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("skill `echo`") && message.contains("cannot take it"),
            "{message}"
        );
        // The same pair, naming the skill that takes it, runs it.
        pair["message"]["metadata"][SKILL_EXTENSION_URI]["skill"] = json!("add");
        let added = rpc(base, pair).await;
        assert_eq!(answer(&added["result"]["task"]), "add: 3", "{added}");
        // Data breaking the named skill's schema: the violations, said of the skill.
        let mut wrong = text("", Some("add"));
        wrong["message"]["parts"] =
            json!([{"data": {"a": "one"}, "mediaType": "application/json;schema=pair"}]);
        let refused = rpc(base, wrong).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(
            refused["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("skill `add`")),
            "{refused}"
        );
        // An entry that is not {"skill": ID}.
        let mut malformed = text("abc", None);
        malformed["message"]["metadata"] = json!({SKILL_EXTENSION_URI: "reverse"});
        let refused = rpc(base, malformed).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        // Only the task that ran (`add: 3`) was made.
        assert_eq!(tasks(base).await, 1);
    }

    #[tokio::test]
    async fn a_skill_named_on_an_answer_to_a_task_is_refused() {
        let running = start().await;
        let base = &running.base;
        let done = rpc(base, text("abc", None)).await;
        let id = done["result"]["task"]["id"].as_str().expect("a task id");
        let mut answer_it = text("more", Some("reverse"));
        answer_it["message"]["taskId"] = json!(id);
        let refused = rpc(base, answer_it).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("`reverse`") && message.contains(id),
            "{message}"
        );
    }

    #[tokio::test]
    async fn the_clients_name_the_skill_they_call() {
        let running = start().await;
        let agent = Connect::new(&running.base)
            .discover()
            .await
            .expect("the card");
        assert!(agent.names_skills());
        let outcome = agent
            .call("reverse", Payload::text("abc"))
            .await
            .expect("answered");
        let outputs = outcome.outputs();
        assert!(
            matches!(&outputs[0].content, Content::Text(t) if t == "reverse: cba"),
            "{outputs:?}"
        );
        // The typed client `#[agent]` generates.
        let client = TwinsClient::connect(running.base.as_str())
            .await
            .expect("the served agent matches its declaration");
        let answer = client.reverse("xyz".to_owned()).await.expect("answered");
        assert_eq!(answer, "reverse: zyx");
    }
}
