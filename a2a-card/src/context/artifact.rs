//! Artifacts a handler sends chunk by chunk ([`SkillContext::artifact`](super::SkillContext::artifact)).

use std::fmt;
use std::marker::PhantomData;

use super::{Signal, SkillContext};
use crate::skill::{Reply, SkillError, SkillReturn};

/// An artifact a handler sends chunk by chunk (see [`SkillContext::artifact`]).
///
/// The first chunk creates the artifact (`append: false`), the next ones add to it
/// (`append: true`). [`send_last`](Self::send_last) marks the last chunk (`lastChunk: true`).
/// An artifact still open when the handler returns, or closed with [`close`](Self::close), is
/// closed by one more update carrying the whole artifact (`append: false`, `lastChunk: true`):
/// the protocol wants at least one part in every update, and the end of a stream is known only
/// after its last item was sent. That update also completes the artifact for a client that
/// missed a chunk.
#[must_use = "an artifact sends nothing until `send` is called"]
pub struct Artifact<T> {
    pub(super) ctx: SkillContext,
    pub(super) id: String,
    pub(super) name: String,
    pub(super) sent: bool,
    pub(super) done: bool,
    pub(super) _item: PhantomData<fn(T)>,
}

impl<T> fmt::Debug for Artifact<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Artifact")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("sent", &self.sent)
            .field("done", &self.done)
            .finish()
    }
}

impl<T: SkillReturn> Artifact<T> {
    /// The artifact's id (unique within the task).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Sends `item` as the next chunk. An item that is an `Err` fails the skill with its
    /// message.
    pub async fn send(&mut self, item: T) -> Result<(), SkillError> {
        self.chunk(item, false).await
    }

    /// Sends `item` as the last chunk: the artifact is complete.
    pub async fn send_last(&mut self, item: T) -> Result<(), SkillError> {
        self.chunk(item, true).await
    }

    /// Closes the artifact, when its last chunk was sent with [`send`](Self::send). Nothing
    /// happens when it was already closed or nothing was sent.
    pub async fn close(mut self) {
        self.finish().await;
    }

    async fn finish(&mut self) {
        if self.sent && !self.done {
            self.done = true;
            self.ctx
                .send(Signal::Close {
                    id: self.id.clone(),
                })
                .await;
        }
    }

    async fn chunk(&mut self, item: T, last: bool) -> Result<(), SkillError> {
        self.send_reply(item.into_reply()?, last).await
    }
}

impl<T> Artifact<T> {
    pub(super) async fn send_reply(&mut self, reply: Reply, last: bool) -> Result<(), SkillError> {
        if self.done {
            return Err(SkillError::Failed(format!(
                "artifact `{}` was already complete",
                self.id
            )));
        }
        let append = std::mem::replace(&mut self.sent, true);
        self.done = last;
        self.ctx
            .send(Signal::Chunk {
                id: self.id.clone(),
                name: self.name.clone(),
                reply,
                append,
                last,
            })
            .await;
        Ok(())
    }
}
