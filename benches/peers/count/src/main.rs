//! The counting agent of `examples/count` on `a2a-protocol-server` 0.15: one skill that streams
//! `chunk 0`, `chunk 1`, ... up to the number the message's text gives, then completes. JSON-RPC
//! (A2A 1.0) at `POST /` through the framework's dispatcher, on 127.0.0.1.
//!
//! ```text
//! count_peer [--port N]
//! ```
//!
//! For `benches/streams.rs` (`STREAMS_TRIGGER` set to a file's path): the text `tick` streams
//! `ready` at once and `go` once the file exists (one task looks for it every 5 ms, as the
//! bench's own servers do), and the process says `LISTENING 127.0.0.1:N` once it listens.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use a2a_protocol_server::{
    AgentExecutor, EventQueueWriter, JsonRpcDispatcher, RequestContext, RequestHandlerBuilder,
    ServeConfig, Server,
};
use a2a_protocol_types::agent_card::AgentCard;
use a2a_protocol_types::artifact::{Artifact, ArtifactId};
use a2a_protocol_types::error::A2aResult;
use a2a_protocol_types::events::{StreamResponse, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
use a2a_protocol_types::message::{Part, PartContent};
use a2a_protocol_types::task::{ContextId, TaskState, TaskStatus};

/// Counts to the number it is sent; `tick` streams `ready`, then `go` once `go` turns true.
struct Counter {
    go: Option<tokio::sync::watch::Receiver<bool>>,
}

impl Counter {
    /// Streams `n` chunks of one artifact (`{task}-{name}`), chunk `i` holding `text(i)`, the
    /// last once `go` turns true when `held` (the bench's `tick`), then completes.
    async fn chunks(
        &self,
        ctx: &RequestContext,
        queue: &dyn EventQueueWriter,
        name: &str,
        n: u64,
        text: impl Fn(u64) -> String,
        held: bool,
    ) -> A2aResult<()> {
        let context_id = ContextId::new(ctx.context_id.clone());
        let artifact_id = ArtifactId::new(format!("{}-{name}", ctx.task_id));
        for i in 0..n {
            if held
                && i + 1 == n
                && let Some(go) = &self.go
            {
                let mut go = go.clone();
                let _ = go.wait_for(|g| *g).await;
            }
            let artifact = Artifact::new(artifact_id.clone(), vec![Part::text(text(i))]);
            queue
                .write(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                    task_id: ctx.task_id.clone(),
                    context_id: context_id.clone(),
                    artifact,
                    append: (i > 0).then_some(true),
                    last_chunk: (i + 1 == n).then_some(true),
                    metadata: None,
                }))
                .await?;
        }
        queue
            .write(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: ctx.task_id.clone(),
                context_id,
                status: TaskStatus::with_timestamp(TaskState::Completed),
                metadata: None,
            }))
            .await
    }

    async fn run(&self, ctx: &RequestContext, queue: &dyn EventQueueWriter) -> A2aResult<()> {
        let ticks = ctx
            .message
            .parts
            .iter()
            .any(|p| matches!(&p.content, PartContent::Text(t) if t.trim() == "tick"));
        if ticks {
            // `ready` at once, `go` once the trigger comes.
            let word = |i: u64| if i == 0 { "ready" } else { "go" }.to_owned();
            return self.chunks(ctx, queue, "tick", 2, word, true).await;
        }
        let n: u64 = ctx
            .message
            .parts
            .iter()
            .find_map(|p| match &p.content {
                PartContent::Text(t) => t.trim().parse().ok(),
                _ => None,
            })
            .unwrap_or(0);
        self.chunks(ctx, queue, "count", n, |i| format!("chunk {i}"), false)
            .await
    }
}

impl AgentExecutor for Counter {
    fn execute<'a>(
        &'a self,
        ctx: &'a RequestContext,
        queue: &'a dyn EventQueueWriter,
    ) -> Pin<Box<dyn Future<Output = A2aResult<()>> + Send + 'a>> {
        Box::pin(self.run(ctx, queue))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut port = 9999u16;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--port" => port = args.next().ok_or("--port needs a value")?.parse()?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let base = format!("http://127.0.0.1:{port}");
    let card: AgentCard = card(&base)?;
    // The streams bench's trigger: one task looks for the file.
    let trigger = std::env::var_os("STREAMS_TRIGGER").map(std::path::PathBuf::from);
    let go = trigger.as_ref().map(|file| {
        let (tx, rx) = tokio::sync::watch::channel(false);
        let file = file.clone();
        tokio::spawn(async move {
            while !file.exists() {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            let _ = tx.send(true);
        });
        rx
    });
    let handler = Arc::new(
        RequestHandlerBuilder::new(Counter { go })
            .with_agent_card(card)
            .build()?,
    );
    let server = Server::bind(("127.0.0.1", port))
        .await?
        .with_config(ServeConfig::default());
    println!("{base} (a2a-protocol-server 0.15.0, counting)");
    if trigger.is_some() {
        println!("LISTENING 127.0.0.1:{port}");
    }
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let report = server
        .serve_with_shutdown(JsonRpcDispatcher::new(handler), shutdown)
        .await;
    if let Some(why) = report.refused {
        return Err(format!("the listener refused to start: {why}").into());
    }
    Ok(())
}

/// The card: one streaming skill, JSON-RPC at `base`.
fn card(base: &str) -> Result<AgentCard, Box<dyn std::error::Error>> {
    let card = format!(
        r#"{{"name": "Counter", "description": "Counts to the number it is sent.", "version": "1.0.0",
        "supportedInterfaces": [{{"url": "{base}/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}}],
        "capabilities": {{"streaming": true, "pushNotifications": false}},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{{"id": "count", "name": "Count", "tags": ["count"],
                     "description": "Streams a chunk per number up to the number given."}}]}}"#
    );
    Ok(serde_json::from_str(&card)?)
}
