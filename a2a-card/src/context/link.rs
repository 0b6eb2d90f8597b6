//! The running task's side of a [`SkillContext`](super::SkillContext): where the handler's
//! events go, in order, and what the executor keeps to cancel it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::SinkExt;
use futures::channel::{mpsc, oneshot};

use super::Answer;
use crate::skill::{Reply, SkillError};

/// The running task's side of a context: where events go.
pub(crate) struct Link {
    pub(super) events: mpsc::Sender<Signal>,
    pub(super) cancelled: AtomicBool,
    /// The artifact ids given out, so that each is unique within the task.
    pub(super) artifact_ids: Mutex<Vec<String>>,
    /// The id of the skill, the name of the artifact a streaming return fills.
    pub(super) skill_id: &'static str,
    /// A durable skill's journal (where the store keeps one).
    pub(super) journal: Option<Arc<crate::journal::Journal<Answer>>>,
    /// The tasks other agents run for the handler's calls that have not answered yet
    /// ([`SkillContext::call`]), each with what cancels it: cancelled when the task ends
    /// before they answer ([`LinkHandle::cascade`]).
    pub(super) remote: Mutex<Vec<(u64, Canceller)>>,
    /// The number the next of them is kept at.
    pub(super) next_remote: std::sync::atomic::AtomicU64,
    /// What the handler put in the task's metadata ([`SkillContext::set_metadata`]), written
    /// with the task's end.
    pub(super) metadata: Mutex<std::collections::HashMap<String, serde_json::Value>>,
}

/// What cancels a task another agent runs for a call of the handler.
pub(crate) type Canceller = Box<dyn FnOnce() + Send>;

/// A task another agent runs for a call of the handler, kept with the handler's task until
/// the call has its answer ([`answered`](Self::answered)). Dropped before (the handler
/// dropped the call), it stays kept: cancelled when the task ends, unless the task goes on
/// in another run.
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) struct RemoteTask {
    pub(super) link: Arc<Link>,
    pub(super) n: u64,
}

#[cfg_attr(not(feature = "client"), allow(dead_code))]
impl RemoteTask {
    /// The call has its answer: nothing of it is left to cancel.
    pub(crate) fn answered(self) {
        let mut remote = self.link.remote.lock().unwrap_or_else(|p| p.into_inner());
        remote.retain(|(n, _)| *n != self.n);
    }
}

/// What a running handler tells the task, in order (read by the server's executor).
#[cfg_attr(not(feature = "server"), allow(dead_code))]
pub(crate) enum Signal {
    /// A `working` status with this text.
    Progress(String),
    /// A chunk of artifact `id`.
    Chunk {
        id: String,
        name: String,
        reply: Reply,
        append: bool,
        last: bool,
    },
    /// Artifact `id` is complete (its last chunk was sent without `last`).
    Close { id: String },
    /// Ask the caller; the answer comes back on `answer` (a durable handler's is journaled
    /// at number `entry` first).
    Ask {
        auth: bool,
        question: String,
        /// Data the question carries beside its text (a proposal to approve, a form).
        data: Option<serde_json::Value>,
        answer: oneshot::Sender<Answer>,
        entry: Option<u64>,
    },
    /// A question a durable handler asked again on a replay, whose answer its journal holds.
    Asked { auth: bool, question: String },
    /// The handler returned: its answer goes into artifact `artifact_id`, and `metadata` into
    /// the task's.
    End {
        outcome: Result<Reply, SkillError>,
        artifact_id: String,
        metadata: std::collections::HashMap<String, serde_json::Value>,
    },
}

/// The task end of a [`Link`]: what the executor keeps.
#[derive(Clone)]
#[cfg_attr(not(feature = "server"), allow(dead_code))]
pub(crate) struct LinkHandle {
    pub(super) link: Arc<Link>,
}

#[cfg_attr(not(feature = "server"), allow(dead_code))]
impl LinkHandle {
    /// Marks the task cancelled (what [`SkillContext::is_cancelled`] reads).
    pub(crate) fn cancel(&self) {
        self.link.cancelled.store(true, Ordering::Release);
    }

    /// Cancels the tasks other agents run for the handler's calls that have not answered: its
    /// task ended (cancelled, failed, or its handler returned without waiting for them).
    /// Not when the handler only stops here (its task goes on in another run, which follows
    /// them).
    pub(crate) fn cascade(&self) {
        let remote =
            std::mem::take(&mut *self.link.remote.lock().unwrap_or_else(|p| p.into_inner()));
        for (_, cancel) in remote {
            cancel();
        }
    }

    /// Whether the handler was stopped (cancelled, or its task handed over): the stage that
    /// stopped it cancelled what was to be cancelled.
    pub(crate) fn stopped(&self) -> bool {
        self.link.cancelled.load(Ordering::Acquire)
    }

    /// Sends the handler's outcome, the last event.
    pub(crate) async fn end(&self, outcome: Result<Reply, SkillError>) {
        let artifact_id = self.link.unique_id(self.link.skill_id);
        let metadata =
            std::mem::take(&mut *self.link.metadata.lock().unwrap_or_else(|p| p.into_inner()));
        // Nobody listens any more only when the task was dropped: nothing to tell.
        let _ = self
            .link
            .events
            .clone()
            .send(Signal::End {
                outcome,
                artifact_id,
                metadata,
            })
            .await;
    }
}

impl Link {
    /// A link for a handler of skill `skill_id`, keeping `journal`: the context's end, the
    /// task's end, and the events, with room for `buffer` before the handler waits.
    #[cfg(any(feature = "server", feature = "rig"))]
    pub(super) fn new(
        skill_id: &'static str,
        buffer: usize,
        journal: Option<Arc<crate::journal::Journal<Answer>>>,
    ) -> (Arc<Link>, LinkHandle, mpsc::Receiver<Signal>) {
        let (events, receiver) = mpsc::channel(buffer);
        let link = Arc::new(Link {
            events,
            cancelled: AtomicBool::new(false),
            artifact_ids: Mutex::new(Vec::new()),
            skill_id,
            journal,
            remote: Mutex::new(Vec::new()),
            next_remote: Default::default(),
            metadata: Mutex::default(),
        });
        let handle = LinkHandle {
            link: Arc::clone(&link),
        };
        (link, handle, receiver)
    }

    /// `name`, or `name-2`, `name-3`.. when taken: an artifact id unique within the task.
    pub(super) fn unique_id(&self, name: &str) -> String {
        let mut ids = self
            .artifact_ids
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut id = name.to_owned();
        let mut n = 1;
        while ids.contains(&id) {
            n += 1;
            id = format!("{name}-{n}");
        }
        ids.push(id.clone());
        id
    }
}
