//! What a hand-written agent on the official server looks like, for the benchmarks to compare
//! with: the events an executor emits, and the fight example's executor.

use std::collections::HashMap;

use a2a::{
    A2AError, Artifact, Part, PartContent, StreamResponse, TaskArtifactUpdateEvent, TaskState,
    TaskStatus, TaskStatusUpdateEvent,
};
use a2a_server::{AgentExecutor, ExecutorContext};
use futures::stream::{self, BoxStream};
use serde_json::Value;

use crate::fight_club;

/// A status update of task `task` in `context`.
pub fn status(task: &str, context: &str, state: TaskState) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: task.to_owned(),
        context_id: context.to_owned(),
        status: TaskStatus {
            state,
            message: None,
            timestamp: None,
        },
        metadata: None,
    })
}

/// An artifact update (`chunks`) of task `task` in `context`.
pub fn artifact(
    task: &str,
    context: &str,
    parts: Vec<Part>,
    append: bool,
    last: bool,
) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: task.to_owned(),
        context_id: context.to_owned(),
        artifact: Artifact {
            artifact_id: "chunks".to_owned(),
            name: Some("chunks".to_owned()),
            description: None,
            parts,
            metadata: None,
            extensions: None,
        },
        append: append.then_some(true),
        last_chunk: Some(last),
        metadata: None,
    })
}

/// A minimal executor of the fight example: the verdict as one artifact.
pub struct HandJudge;

impl AgentExecutor for HandJudge {
    fn execute(
        &self,
        ctx: ExecutorContext,
    ) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let (task, context) = (ctx.task_id, ctx.context_id);
        let data = ctx
            .message
            .and_then(|m| m.parts.into_iter().next())
            .and_then(|p| match p.content {
                PartContent::Data(d) => Some(d),
                _ => None,
            });
        let fight: Option<fight_club::FightComparison> =
            data.and_then(|d| serde_json::from_value(d).ok());
        let Some(fight) = fight else {
            return Box::pin(stream::iter([Err(A2AError::invalid_params("a fight"))]));
        };
        let verdict = serde_json::to_value(fight_club::judge(&fight)).unwrap_or_default();
        let mode = "application/json;schema=fightResponse".to_owned();
        let part = Part {
            content: PartContent::Data(verdict),
            filename: None,
            metadata: Some(HashMap::from([(
                "mimeType".to_owned(),
                Value::String(mode.clone()),
            )])),
            media_type: Some(mode),
        };
        let mut answer = artifact(&task, &context, vec![part], false, true);
        if let StreamResponse::ArtifactUpdate(u) = &mut answer {
            u.artifact.artifact_id = "fight-comparison".to_owned();
            u.artifact.name = Some("fight-comparison".to_owned());
        }
        Box::pin(stream::iter([
            Ok(status(&task, &context, TaskState::Working)),
            Ok(answer),
            Ok(status(&task, &context, TaskState::Completed)),
        ]))
    }

    fn cancel(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        Box::pin(stream::iter([Ok(status(
            &ctx.task_id,
            &ctx.context_id,
            TaskState::Canceled,
        ))]))
    }
}
