//! Tests of the scripted model: the script replayed in order, requests recorded, text and tool
//! calls streamed, errors, and rig's agent loop calling a tool then answering.

use super::*;
use futures::{StreamExt, TryStreamExt};
use rig_core::completion::{AssistantContent, FinishReason};
use rig_core::message::{Message, ToolName, ToolResultContent, UserContent};
use rig_core::streaming::{Item, PartKind, StreamEvent};
use rig_core::tool::PortableTool;
use serde_json::json;

/// The text of the last user message of `request` (its prompt).
fn prompt(request: &CompletionRequest) -> String {
    request
        .chat_history
        .iter()
        .rev()
        .find_map(|message| match message {
            Message::User { content } => Some(
                content
                    .iter()
                    .filter_map(|c| match c {
                        UserContent::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect::<String>(),
            ),
            _ => None,
        })
        .unwrap_or_default()
}

#[test]
fn is_send_sync_and_a_model() {
    fn send_sync<T: Send + Sync + Clone + 'static>() {}
    send_sync::<ScriptedModel>();
    let model: DynModel<Completion> = ScriptedModel::new().into();
    assert_eq!(model.name(), ScriptedModel::PROVIDER);
}

#[test]
fn text_is_streamed_word_by_word() {
    assert_eq!(
        wire::deltas("Hello there,  friend.\n"),
        ["Hello ", "there,  ", "friend.\n"]
    );
    assert_eq!(wire::deltas("  lead"), ["  ", "lead"]);
    assert!(wire::deltas("").is_empty());
}

#[tokio::test]
async fn the_script_is_replayed_in_order() {
    let model = ScriptedModel::new()
        .text("One.")
        .usage(10, 2)
        .tool_call("add", json!({"a": 1, "b": 2}))
        .tool_calls([
            ScriptedCall::new("add", json!({"a": 3})),
            ScriptedCall::new("sub", json!({"a": 4})).id("mine"),
        ])
        .reply(ScriptedReply::text("Checking.").and_tool_call("look", json!({})))
        .error("overloaded")
        .text("Last.");
    assert_eq!(model.remaining(), 6);

    let one = model.call("1").await.expect("a text reply");
    assert_eq!(one.text(), "One.");
    assert_eq!(one.usage.input_tokens, Some(10));
    assert_eq!(one.usage.output_tokens, Some(2));
    assert_eq!(one.usage.total_tokens, Some(12));
    assert_eq!(one.finish_reason(), Some(FinishReason::Stop));
    assert_eq!(one.response_id(), Some("scripted-1"));
    assert_eq!(one.origin.provider, ScriptedModel::PROVIDER);
    assert_eq!(one.raw["content"][0]["text"], "One.");

    let two = model.call("2").await.expect("a tool call");
    let calls: Vec<_> = two.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id.to_string(), "call_1");
    assert_eq!(calls[0].function.name, "add");
    assert_eq!(calls[0].function.arguments_value(), json!({"a": 1, "b": 2}));
    assert_eq!(two.finish_reason(), Some(FinishReason::ToolCalls));
    assert!(!two.usage.is_reported());

    let three = model.call("3").await.expect("two tool calls");
    let ids: Vec<String> = three.tool_calls().map(|c| c.id.to_string()).collect();
    assert_eq!(ids, ["call_2", "mine"]);

    let four = model.call("4").await.expect("text and a call");
    assert!(
        matches!(&four.choice[..], [AssistantContent::Text(t), AssistantContent::ToolCall(c)]
        if t.text == "Checking." && c.id.to_string() == "call_4")
    );

    let five = model.call("5").await.expect_err("a scripted error");
    assert!(
        matches!(&five, ProviderError::Provider(m) if m == "overloaded"),
        "{five:?}"
    );

    assert_eq!(model.call("6").await.expect("text").text(), "Last.");
    assert_eq!(model.remaining(), 0);
}

#[tokio::test]
async fn requests_are_recorded_and_shared_by_clones() {
    let model = ScriptedModel::new().text("A.").text("B.");
    let kept = model.clone();
    let tool = rig_core::completion::ToolDefinition {
        name: ToolName::new("add").expect("a name"),
        description: "Adds.".into(),
        parameters: json!({"type": "object"}),
    };
    let request = CompletionRequest::new("What is 1 + 2?")
        .preamble("You add.")
        .tool(tool)
        .temperature(0.5)
        .max_tokens(64);
    model.call(request).await.expect("a reply");
    model
        .stream("Second")
        .expect("a stream")
        .finish()
        .await
        .expect("a reply");

    let sent = kept.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(kept.request_count(), 2);
    assert_eq!(sent[0].system_instructions(), Some("You add."));
    assert_eq!(prompt(&sent[0]), "What is 1 + 2?");
    assert_eq!(sent[0].tools.len(), 1);
    assert_eq!(sent[0].tools[0].name, "add");
    assert_eq!(sent[0].temperature, Some(0.5));
    assert_eq!(sent[0].max_tokens, Some(64));
    assert_eq!(sent[0].model.as_deref(), Some(ScriptedModel::MODEL));
    assert_eq!(sent[1].system_instructions(), None);
    assert_eq!(
        kept.last_request().map(|r| prompt(&r)).as_deref(),
        Some("Second")
    );
    // A clone scripts for all.
    kept.push(ScriptedReply::text("C."));
    assert_eq!(model.call("3").await.expect("a reply").text(), "C.");
}

#[tokio::test]
async fn an_exhausted_script_is_a_provider_error() {
    let model = ScriptedModel::new().text("Only.");
    model.call("1").await.expect("the one reply");
    let error = model.call("2").await.expect_err("no reply left");
    let ProviderError::Provider(message) = &error else {
        panic!("a provider error expected, got {error:?}");
    };
    assert!(message.contains("no reply left for request 2"), "{message}");
    assert!(message.contains("held 1 reply"), "{message}");
    // Streamed, the error is the stream's one item.
    let mut stream = model.stream("3").expect("a stream");
    assert!(matches!(
        stream.next().await,
        Some(Err(ProviderError::Provider(_)))
    ));
    assert!(stream.next().await.is_none());
    assert_eq!(model.request_count(), 3);

    let empty = ScriptedModel::new();
    let error = empty.call("1").await.expect_err("an empty script");
    assert!(error.to_string().contains("held 0 replies"), "{error}");
}

#[tokio::test]
async fn usage_before_any_reply_is_reported() {
    let model = ScriptedModel::new().usage(1, 2).text("Hi.");
    let error = model.call("1").await.expect_err("a misused builder");
    assert!(error.to_string().contains("`usage(1, 2)`"), "{error}");
}

#[tokio::test]
async fn an_empty_tool_name_is_a_provider_error() {
    let model = ScriptedModel::new().tool_call("", json!({}));
    let error = model.call("1").await.expect_err("no tool name");
    assert!(error.to_string().contains("empty name"), "{error}");
}

#[tokio::test]
async fn a_stream_unpolled_takes_no_reply() {
    let model = ScriptedModel::new().text("Kept.");
    drop(model.stream("dropped").expect("a stream"));
    assert_eq!(model.request_count(), 0);
    assert_eq!(model.remaining(), 1);
}

#[tokio::test]
async fn streaming_yields_text_deltas_then_the_response() {
    let model = ScriptedModel::new().text("The answer is 42.").usage(7, 5);
    let mut stream = model.stream("Question?").expect("a stream");
    let mut deltas = Vec::new();
    while let Some(item) = stream.next().await {
        if let Item::Event(StreamEvent::Text { text, .. }) = item.expect("an item") {
            deltas.push(text);
        }
    }
    assert_eq!(deltas, ["The ", "answer ", "is ", "42."]);
    let response = stream.finish().await.expect("the response");
    assert_eq!(response.text(), "The answer is 42.");
    assert_eq!(response.usage.input_tokens, Some(7));
    assert_eq!(response.usage.output_tokens, Some(5));

    // Through this crate's adapter, as a streaming skill returns it.
    let model = ScriptedModel::new().text("Hello there.");
    let chunks: Vec<String> = crate::rig::TextDeltas::new(model.stream("Hi"))
        .try_collect()
        .await
        .expect("the deltas");
    assert_eq!(chunks, ["Hello ", "there."]);
}

#[tokio::test]
async fn streaming_yields_tool_call_parts() {
    let model = ScriptedModel::new().tool_call("add", json!({"a": 1}));
    let mut stream = model.stream("Add").expect("a stream");
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        if let Item::Event(event) = item.expect("an item") {
            events.push(event);
        }
    }
    assert!(
        matches!(&events[0], StreamEvent::Start { kind: PartKind::ToolCall, name: Some(n), .. } if n == "add"),
        "{events:?}"
    );
    assert!(
        matches!(&events[1], StreamEvent::Arguments { json, .. } if json == r#"{"a":1}"#),
        "{events:?}"
    );
    assert!(
        matches!(&events[2], StreamEvent::End { content: AssistantContent::ToolCall(c), .. }
            if c.id.to_string() == "call_1" && c.function.arguments_value() == json!({"a": 1})),
        "{events:?}"
    );
    assert_eq!(events.len(), 3);
    let response = stream.finish().await.expect("the response");
    assert_eq!(response.finish_reason(), Some(FinishReason::ToolCalls));
}

/// A tool that adds two numbers, and keeps the arguments of each call.
#[derive(Clone, Default)]
struct Add {
    calls: Arc<Mutex<Vec<AddArgs>>>,
}

#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
struct AddArgs {
    a: i64,
    b: i64,
}

impl PortableTool for Add {
    const NAME: &'static str = "add";
    type Args = AddArgs;
    type Output = i64;
    type Error = std::convert::Infallible;

    fn description(&self) -> String {
        "Adds two integers.".into()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"]
        })
    }

    async fn call(&self, args: AddArgs) -> Result<i64, Self::Error> {
        let sum = args.a + args.b;
        self.calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(args);
        Ok(sum)
    }
}

#[tokio::test]
async fn an_agent_calls_the_tool_then_answers() {
    let model = ScriptedModel::new()
        .tool_call("add", json!({"a": 2, "b": 3}))
        .usage(30, 4)
        .text("2 + 3 = 5.")
        .usage(45, 6);
    let add = Add::default();
    let agent = rig_agent::AgentBuilder::new(model.clone())
        .preamble("You add numbers with the tool.")
        .tool(add.clone())
        .build();
    let response = agent
        .prompt("What is 2 + 3?")
        .max_turns(3)
        .await
        .expect("the agent answers");
    assert_eq!(response.output(), "2 + 3 = 5.");
    assert_eq!(response.usage.input_tokens, Some(75));
    assert_eq!(response.usage.output_tokens, Some(10));

    // The tool ran once, with the scripted arguments.
    let calls = add.calls.lock().unwrap_or_else(|p| p.into_inner()).clone();
    assert_eq!(calls, [AddArgs { a: 2, b: 3 }]);

    // The first request offered the tool, under the preamble.
    let sent = model.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(
        sent[0].system_instructions(),
        Some("You add numbers with the tool.")
    );
    assert_eq!(prompt(&sent[0]), "What is 2 + 3?");
    let offered: Vec<&str> = sent[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(offered, ["add"]);

    // The second carried the call and the tool's result, answering it by its id.
    let history = &sent[1].chat_history;
    let called = history.iter().any(|m| {
        matches!(m, Message::Assistant(turn) if turn.content.iter().any(|c|
            matches!(c, AssistantContent::ToolCall(call) if call.id.to_string() == "call_1")))
    });
    assert!(called, "{history:?}");
    let result = history
        .iter()
        .find_map(|m| match m {
            Message::User { content } => content.iter().find_map(|c| match c {
                UserContent::ToolResult(result) => Some(result.clone()),
                _ => None,
            }),
            _ => None,
        })
        .expect("a tool result in the second request");
    assert_eq!(result.call.to_string(), "call_1");
    assert_eq!(result.name, "add");
    assert!(!result.is_error);
    let output: String = result
        .content
        .iter()
        .map(|c| match c {
            ToolResultContent::Text(t) => t.text.clone(),
            ToolResultContent::Json { value, .. } => value.to_string(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(output, "5");
}
