//! The tasks' event logs as a store keeps them ([`EventLog`]), the events they hold
//! ([`Event`]), and what a read of one finds ([`Logged`]); and the journals of durable skills,
//! which a log that keeps them keeps beside the events.

use std::sync::Arc;

use a2a::Task;

/// The tasks' events as a store keeps them, numbered as the server numbers them (a task is
/// its own event 0; each later event of the task, in order, is 1, 2, ...): with it, a stream
/// resumes (`Last-Event-ID`) from the store after a restart and on any process that shares
/// it. The SQL stores keep one; a [`Store`](super::Store) of your own may.
///
/// The server calls [`append`](Self::append) for every event, in order, and
/// [`update_at`](Self::update_at) instead of [`TaskStore::update`](a2a_server::TaskStore::update) for each change of what
/// the task holds (a status, a whole artifact); a reader calls [`read`](Self::read).
///
/// An event log in memory beside a task store (a sketch of what a database-backed one does
/// with a table of events and a column for the task's event number):
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::{Arc, Mutex};
/// use a2a::{A2AError, Task};
/// use a2a_server::{InMemoryTaskStore, TaskStore};
/// use a2a_card::server::store::{Event, EventLog, Logged};
///
/// #[derive(Default)]
/// struct Log {
///     tasks: Arc<InMemoryTaskStore>,
///     /// Each task's events by number, and the number its stored task is at.
///     events: Mutex<HashMap<String, (u64, Vec<(u64, Arc<Event>)>)>>,
/// }
///
/// #[async_trait::async_trait]
/// impl EventLog for Log {
///     fn append(&self, task_id: &str, seq: u64, event: &Arc<Event>) {
///         let mut events = self.events.lock().unwrap();
///         events.entry(task_id.to_owned()).or_default().1.push((seq, Arc::clone(event)));
///     }
///
///     async fn update_at(&self, task: Task, seq: u64) -> Result<(), A2AError> {
///         self.events.lock().unwrap().entry(task.id.clone()).or_default().0 = seq;
///         self.tasks.update(task).await.map(drop)
///     }
///
///     async fn read(&self, task_id: &str, after: Option<u64>) -> Result<Option<Logged>, A2AError> {
///         let Some(task) = self.tasks.get(task_id).await? else { return Ok(None) };
///         let events = self.events.lock().unwrap();
///         let (at, logged) = events.get(task_id).cloned().unwrap_or_default();
///         let after = after.unwrap_or(at);
///         let events = logged.into_iter().filter(|(n, _)| *n > after).collect();
///         Ok(Some(Logged::new(task, at, events)))
///     }
/// }
/// # drop(Log::default());
/// ```
#[async_trait::async_trait]
pub trait EventLog: Send + Sync {
    /// Keeps event `seq` of task `task_id` (its JSON, [`Event::json`], is what a log row
    /// holds). Called on the server's event path: it must not block (queue the write); the
    /// events of a task must be readable, in order, once the task's next
    /// [`update_at`](Self::update_at) returns.
    fn append(&self, task_id: &str, seq: u64, event: &Arc<Event>);

    /// Writes `task` as it is after its event `seq` (as [`TaskStore::update`](a2a_server::TaskStore::update) does, and
    /// remembering `seq` for [`read`](Self::read)).
    async fn update_at(&self, task: Task, seq: u64) -> Result<(), a2a::A2AError>;

    /// Task `task_id` as stored, the number of the last event the stored task reflects, and
    /// the events kept after `after` (by default, after that number), in order. `None` for a
    /// task the store does not have.
    async fn read(
        &self,
        task_id: &str,
        after: Option<u64>,
    ) -> Result<Option<Logged>, a2a::A2AError>;

    /// Whether the log keeps the journals of durable skills (`#[skill(durable)]`), with which
    /// their tasks resume after their process stops ([`journal`](Self::journal),
    /// [`read_journal`](Self::read_journal), and [`Recovery::resumed`](super::Recovery::resumed)). By default no: a durable
    /// skill then runs as any other.
    ///
    /// A log that keeps journals beside its events (in memory here, for the sketch: a
    /// database keeps them as rows of the task, written with its events):
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use std::sync::{Arc, Mutex};
    /// use a2a::{A2AError, Task};
    /// use a2a_card::journal::Entry;
    /// use a2a_card::server::store::{Event, EventLog, Logged};
    ///
    /// #[derive(Default)]
    /// struct Journals {
    ///     /// Each task's journal entries, by number.
    ///     entries: Mutex<HashMap<String, Vec<(u64, Entry)>>>,
    /// }
    ///
    /// #[async_trait::async_trait]
    /// impl EventLog for Journals {
    ///     # fn append(&self, _: &str, _: u64, _: &Arc<Event>) {}
    ///     # async fn update_at(&self, _: Task, _: u64) -> Result<(), A2AError> { Ok(()) }
    ///     # async fn read(&self, _: &str, _: Option<u64>) -> Result<Option<Logged>, A2AError> { Ok(None) }
    ///     fn keeps_journals(&self) -> bool {
    ///         true
    ///     }
    ///
    ///     fn journal(&self, task_id: &str, n: u64, entry: &Entry) {
    ///         let mut entries = self.entries.lock().unwrap();
    ///         entries.entry(task_id.to_owned()).or_default().push((n, entry.clone()));
    ///     }
    ///
    ///     async fn journal_written(&self, _task_id: &str, _n: u64) -> Result<(), A2AError> {
    ///         Ok(()) // kept as soon as `journal` returns
    ///     }
    ///
    ///     async fn read_journal(&self, task_id: &str) -> Result<Vec<(u64, Entry)>, A2AError> {
    ///         let mut entries = self.entries.lock().unwrap().get(task_id).cloned().unwrap_or_default();
    ///         entries.sort_by_key(|(n, _)| *n);
    ///         Ok(entries)
    ///     }
    /// }
    /// # drop(Journals::default());
    /// ```
    fn keeps_journals(&self) -> bool {
        false
    }

    /// Keeps entry `n` of task `task_id`'s journal (entry 0 is what the task runs, each later
    /// one what its handler did; a database keeps its JSON, `serde_json::to_string(entry)`),
    /// in order with the task's events, and written soon (the SQL stores: within the writer's linger of 2 ms, not held
    /// back until the task's next write; a step whose result is not written yet runs again
    /// after a crash). As [`append`](Self::append), it must not block.
    fn journal(&self, task_id: &str, n: u64, entry: &crate::journal::Entry) {
        let _ = (task_id, n, entry);
    }

    /// Returns once the journal entries of task `task_id` queued so far are written (an
    /// answer is kept before its handler has it); an error when entry `n` was not (the
    /// store refused it, or cannot be reached): the answer is then not handed over, and its
    /// caller is told so.
    async fn journal_written(&self, task_id: &str, n: u64) -> Result<(), a2a::A2AError> {
        let _ = (task_id, n);
        Ok(())
    }

    /// Keeps entry `n` of task `task_id`'s journal and returns once it is written (a durable
    /// step's start, before its body runs; an answer, before its handler has it); an error
    /// when it was not. By default [`journal`](Self::journal), then
    /// [`journal_written`](Self::journal_written); a store that can learn an entry's outcome
    /// from the write itself does it in one go (the SQL stores: a round of their writer at
    /// once, nothing read back).
    async fn write_journal(
        &self,
        task_id: &str,
        n: u64,
        entry: &crate::journal::Entry,
    ) -> Result<(), a2a::A2AError> {
        self.journal(task_id, n, entry);
        self.journal_written(task_id, n).await
    }

    /// Task `task_id`'s journal: each entry written, with its number, in order of number; an
    /// error when one cannot be read.
    async fn read_journal(
        &self,
        task_id: &str,
    ) -> Result<Vec<(u64, crate::journal::Entry)>, a2a::A2AError> {
        let _ = task_id;
        Ok(Vec::new())
    }

    /// When each entry of task `task_id`'s journal was written, in milliseconds since the Unix
    /// epoch, in order of number, for the entries whose time the store keeps: what the
    /// operators' console reads to show how long a step took (from its start, written before
    /// its body ran, to its result). By default none.
    ///
    /// ```
    /// # async fn run(log: &dyn a2a_card::server::store::EventLog) -> Result<(), a2a::A2AError> {
    /// for (n, at_ms) in log.journal_times("task-1").await? {
    ///     println!("entry {n} written at {at_ms}");
    /// }
    /// # Ok(()) }
    /// ```
    async fn journal_times(&self, task_id: &str) -> Result<Vec<(u64, i64)>, a2a::A2AError> {
        let _ = task_id;
        Ok(Vec::new())
    }

    /// Gives up this process's claim on running task `task_id`, whose run here stopped (the
    /// store refused a write of it), so that the store's recovery takes it over without
    /// waiting for this process's lease to run out: a durable skill's task runs again from its
    /// journal (on this process or another), any other fails saying why. A claim another
    /// process took since is left as it is. By default nothing (a store of one process
    /// recovers its tasks at its next start).
    async fn give_up(&self, task_id: &str) -> Result<(), a2a::A2AError> {
        let _ = task_id;
        Ok(())
    }
}

/// A task's event as the server records it: the event, and its JSON (the A2A 1.0
/// `StreamResponse`), made once and shared by whatever writes it: the frames of every stream
/// that carries it, the store's log row, the webhooks' bodies.
///
/// An artifact chunk (an update that appends to an artifact) is the bulk of a long stream (a
/// model's tokens): it is kept as its JSON alone, made when it is recorded, and read back into
/// the event only where a binding needs the typed event (gRPC, the in-process handler). What a
/// running stream holds per chunk is then its JSON, once. So is the update that closes such an
/// artifact (all of it again, once): it is written from the artifact the task holds, without
/// a copy of it.
///
/// ```
/// use a2a::{StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent};
/// use a2a_card::server::store::Event;
///
/// let update = TaskStatusUpdateEvent {
///     task_id: "t".into(),
///     context_id: "c".into(),
///     status: TaskStatus { state: TaskState::Working, message: None, timestamp: None },
///     metadata: None,
/// };
/// let event = Event::new(StreamResponse::StatusUpdate(update.clone()));
/// assert!(event.json().starts_with(r#"{"statusUpdate":"#));
/// assert_eq!(*event.event().unwrap(), StreamResponse::StatusUpdate(update));
/// ```
#[derive(Debug)]
pub struct Event {
    kept: Kept,
}

/// How an [`Event`] is kept.
#[derive(Debug)]
enum Kept {
    /// The event, its JSON made when first asked for (boxed: a chunk's [`Event`] is then
    /// two words).
    Whole(Box<Whole>),
    /// An artifact chunk, or the closing update of an artifact sent in chunks, as its JSON
    /// alone.
    Artifact { json: Box<str> },
}

impl Event {
    /// `event`; an artifact chunk is serialised at once and kept as its JSON alone, any other
    /// event's JSON is made when first asked for.
    pub fn new(event: a2a::StreamResponse) -> Event {
        Event::chunk_of(&event).unwrap_or_else(|| Event { kept: whole(event) })
    }

    /// An appended artifact chunk `event` as its JSON alone (as [`new`](Self::new) keeps
    /// it), made from a borrow: the caller keeps the event, to move its parts on. `None` for
    /// any other event (and for a chunk that does not serialise, which the `a2a` types always
    /// do).
    pub(crate) fn chunk_of(event: &a2a::StreamResponse) -> Option<Event> {
        match event {
            a2a::StreamResponse::ArtifactUpdate(u) if u.append == Some(true) => {
                let json = serde_json::to_string(event).ok()?;
                Some(Event {
                    kept: Kept::Artifact { json: json.into() },
                })
            }
            _ => None,
        }
    }

    /// The closing update of `artifact`, an artifact of task `task_id` (in context
    /// `context_id`) sent in chunks: all of it, once, complete (`lastChunk: true`), kept as its
    /// JSON alone and made from a borrow (a long artifact is not copied to be sent whole).
    pub(crate) fn closing(task_id: &str, context_id: &str, artifact: &a2a::Artifact) -> Event {
        /// `TaskArtifactUpdateEvent` borrowed, as the `a2a` types write it.
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Update<'a> {
            task_id: &'a str,
            context_id: &'a str,
            artifact: &'a a2a::Artifact,
            last_chunk: bool,
        }
        /// The `StreamResponse` that holds it.
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Closing<'a> {
            artifact_update: Update<'a>,
        }
        let update = Update {
            task_id,
            context_id,
            artifact,
            last_chunk: true,
        };
        match serde_json::to_string(&Closing {
            artifact_update: update,
        }) {
            Ok(json) => Event {
                kept: Kept::Artifact { json: json.into() },
            },
            // Not reached (the `a2a` types always serialise): the update made whole instead.
            Err(_) => Event::new(a2a::StreamResponse::ArtifactUpdate(
                a2a::TaskArtifactUpdateEvent {
                    task_id: task_id.to_owned(),
                    context_id: context_id.to_owned(),
                    artifact: artifact.clone(),
                    append: None,
                    last_chunk: Some(true),
                    metadata: None,
                },
            )),
        }
    }

    /// `event` with its JSON as already written (read back from a log): `json` must be
    /// `event` serialised.
    pub fn with_json(event: a2a::StreamResponse, json: String) -> Event {
        Event {
            kept: Kept::Whole(Box::new(Whole {
                event,
                json: json.into(),
            })),
        }
    }

    /// The event: borrowed, or read back from its JSON (an artifact chunk). The JSON this
    /// crate makes always reads back; an error says what did not.
    pub fn event(&self) -> Result<std::borrow::Cow<'_, a2a::StreamResponse>, a2a::A2AError> {
        match &self.kept {
            Kept::Whole(whole) => Ok(std::borrow::Cow::Borrowed(&whole.event)),
            Kept::Artifact { json } => serde_json::from_str(json)
                .map(std::borrow::Cow::Owned)
                .map_err(|e| {
                    a2a::A2AError::internal(format!("an event's JSON does not read back: {e}"))
                }),
        }
    }

    /// The event's JSON, made once.
    pub fn json(&self) -> &str {
        match &self.kept {
            Kept::Whole(whole) => whole.json.get_or_init(|| {
                // The `a2a` types always serialise.
                serde_json::to_string(&whole.event).unwrap_or_default()
            }),
            Kept::Artifact { json } => json,
        }
    }

    /// The event when it is kept whole: every event but an artifact chunk or closing update
    /// made here (what checks of a status or a task read, without reading a chunk back).
    pub(crate) fn kept(&self) -> Option<&a2a::StreamResponse> {
        match &self.kept {
            Kept::Whole(whole) => Some(&whole.event),
            Kept::Artifact { .. } => None,
        }
    }

    /// Whether the event ends its task (a final status, or the task in a final state).
    pub(crate) fn ends(&self) -> bool {
        match self.kept() {
            Some(a2a::StreamResponse::StatusUpdate(u)) => u.status.state.is_terminal(),
            Some(a2a::StreamResponse::Task(t)) => t.status.state.is_terminal(),
            _ => false,
        }
    }

    /// About how many bytes the event holds in memory (what the bounds on finished tasks'
    /// logs count): the event and its JSON once made.
    pub(crate) fn bytes(&self) -> usize {
        size_of::<Event>()
            + match &self.kept {
                Kept::Whole(whole) => {
                    size_of::<Whole>()
                        + super::event_bytes(&whole.event)
                        + whole.json.get().map_or(0, String::capacity)
                }
                Kept::Artifact { json } => json.len(),
            }
    }
}

/// An event kept whole.
#[derive(Debug)]
struct Whole {
    event: a2a::StreamResponse,
    json: std::sync::OnceLock<String>,
}

fn whole(event: a2a::StreamResponse) -> Kept {
    Kept::Whole(Box::new(Whole {
        event,
        json: std::sync::OnceLock::new(),
    }))
}

impl From<a2a::StreamResponse> for Event {
    fn from(event: a2a::StreamResponse) -> Event {
        Event::new(event)
    }
}

/// What [`EventLog::read`] finds.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Logged {
    /// The task as stored.
    pub task: Task,
    /// The number of the last event `task` reflects.
    pub seq: u64,
    /// The events asked for, with their numbers, in order.
    pub events: Vec<(u64, Arc<Event>)>,
}

impl Logged {
    /// The task as stored at its event `seq`, and the `events` after the point asked for.
    ///
    /// ```
    /// use a2a::{Task, TaskState, TaskStatus};
    /// use a2a_card::server::store::Logged;
    ///
    /// let task = Task {
    ///     id: "t".into(),
    ///     context_id: "c".into(),
    ///     status: TaskStatus { state: TaskState::Working, message: None, timestamp: None },
    ///     artifacts: None,
    ///     history: None,
    ///     metadata: None,
    /// };
    /// let logged = Logged::new(task, 2, Vec::new()); // stored at event 2, nothing after it
    /// assert_eq!(logged.seq, 2);
    /// ```
    pub fn new(task: Task, seq: u64, events: Vec<(u64, Arc<Event>)>) -> Logged {
        Logged { task, seq, events }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closing_update_is_written_as_the_typed_update_would_be_and_reads_back() {
        let mut artifact = crate::server::fixtures::text_artifact("chunk 0");
        artifact.parts.push(a2a::Part::text("chunk 1"));
        artifact.name = Some("count".to_owned());
        artifact.metadata = Some(std::collections::HashMap::from([(
            "k".to_owned(),
            serde_json::json!({"n": 1}),
        )]));
        let typed = a2a::StreamResponse::ArtifactUpdate(a2a::TaskArtifactUpdateEvent {
            task_id: "t".to_owned(),
            context_id: "c".to_owned(),
            artifact: artifact.clone(),
            append: None,
            last_chunk: Some(true),
            metadata: None,
        });
        let closing = Event::closing("t", "c", &artifact);
        let as_typed: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&typed).unwrap()).unwrap();
        let written: serde_json::Value = serde_json::from_str(closing.json()).unwrap();
        assert_eq!(written, as_typed);
        assert_eq!(*closing.event().unwrap(), typed);
        // Kept as its JSON alone: no typed copy of the artifact.
        assert!(closing.kept().is_none());
        assert_eq!(closing.bytes(), size_of::<Event>() + closing.json().len());
    }
}
