//! What a running skill can do besides returning its answer (the user guide is on
//! `SkillContext`): the context itself here; the link through which it tells the running task
//! (the server's side) in `link`; artifacts sent chunk by chunk in `artifact`; the answers to
//! its questions in `answer`.

mod answer;
mod artifact;
mod link;

pub use answer::{Answer, Interrupted};
pub use artifact::Artifact;
use link::Link;
#[cfg(any(feature = "server", feature = "rig"))]
pub(crate) use link::LinkHandle;
pub(crate) use link::{Canceller, RemoteTask, Signal};

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures::SinkExt;
use futures::channel::oneshot;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::principal::Principal;
use crate::skill::{Reply, SkillError, SkillReturn};

/// Where a call runs: its task and context, the message that started it, and the handle
/// through which the handler reports progress, sends artifacts and asks the caller.
///
/// What a running skill can do besides returning its answer: see where it runs, report
/// progress, send artifacts as it makes them, ask the caller for more input, and notice that it
/// was cancelled. A handler gets all of this by taking a `SkillContext` argument. Cloning it is
/// cheap, and clones share the task.
///
/// | call | on the task |
/// |---|---|
/// | [`ctx.progress("Looking up flights")`](SkillContext::progress) | a `working` status update carrying the text (in streams, `GetTask`, push) |
/// | [`ctx.artifact::<T>("name")`](SkillContext::artifact), then [`send`](Artifact::send) | a named artifact, sent chunk by chunk as `TaskArtifactUpdateEvent`s |
/// | [`ctx.ask("Which date?").await?`](SkillContext::ask) | `input-required` with the question; the caller's next message on the task is the answer |
/// | [`ctx.ask_auth("Sign in at ...").await?`](SkillContext::ask_auth) | `auth-required`, likewise |
/// | [`ctx.is_cancelled()`](SkillContext::is_cancelled) | whether `CancelTask` reached the task |
///
/// Cancellation: when the task is cancelled, the handler's future is dropped at its next
/// `.await` (so `Drop` guards run, and nothing after that point runs); a handler that computes
/// for a long time without awaiting can poll [`SkillContext::is_cancelled`] between steps.
///
/// Outside a server (a handler called directly, as in a unit test) there is no task:
/// `progress` and artifacts go nowhere, and `ask` answers [`Interrupted`].
///
/// ```
/// use a2a_card::{SkillContext, agent, skill};
///
/// struct Concierge;
/// /// Books tables at restaurants.
/// #[agent(url = "http://127.0.0.1:9000")]
/// impl Concierge {
///     /// Books a table; asks for the time when the request gives none.
///     #[skill]
///     async fn book(&self, request: String, ctx: SkillContext) -> Result<String, String> {
///         ctx.progress("Checking availability").await;
///         let time = if request.contains(':') {
///             request.clone()
///         } else {
///             ctx.ask("At what time?").await?.text().to_owned()
///         };
///         Ok(format!("Booked: {request} at {time}"))
///     }
/// }
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct SkillContext {
    /// The task the call runs in.
    pub task_id: Option<String>,
    /// The conversation context.
    pub context_id: Option<String>,
    /// The incoming message, as JSON. The dispatcher moves the structured part's `data` into the
    /// call's input rather than copying it, and file parts into its files, so those parts are
    /// not here.
    pub message: Value,
    link: Option<Arc<Link>>,
    principal: Option<Arc<Principal>>,
    extensions: Vec<String>,
    tenant: Option<String>,
    /// The task's deadline, where its caller gave it a budget ([`crate::budget`]).
    deadline: Option<std::time::SystemTime>,
    /// The clock the deadline is read on (the server's, [`Server::clock`]); the system's
    /// where none is given.
    ///
    /// [`Server::clock`]: crate::server::Server::clock
    #[cfg(feature = "server")]
    clock: Option<crate::clock::Clock>,
    /// The model tokens its caller gave the task, where it gave some ([`crate::budget`]).
    tokens: Option<u64>,
    /// The model tokens the task used so far (shared by the context's clones).
    spent: Arc<std::sync::atomic::AtomicU64>,
}

impl PartialEq for SkillContext {
    fn eq(&self, other: &Self) -> bool {
        self.task_id == other.task_id
            && self.context_id == other.context_id
            && self.message == other.message
    }
}

impl fmt::Debug for SkillContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillContext")
            .field("task_id", &self.task_id)
            .field("context_id", &self.context_id)
            .field("message", &self.message)
            .field("in_task", &self.link.is_some())
            .finish()
    }
}

impl SkillContext {
    /// A context with these ids and message, outside any task.
    pub fn new(task_id: Option<String>, context_id: Option<String>, message: Value) -> Self {
        SkillContext {
            task_id,
            context_id,
            message,
            link: None,
            principal: None,
            extensions: Vec::new(),
            tenant: None,
            deadline: None,
            #[cfg(feature = "server")]
            clock: None,
            tokens: None,
            spent: Arc::default(),
        }
    }

    /// The same context, called by `principal` (to call a handler directly, as the server
    /// would for an authenticated caller).
    ///
    /// ```
    /// use a2a_card::{Identity, Principal, SkillContext};
    ///
    /// let ctx = SkillContext::new(None, None, serde_json::Value::Null)
    ///     .with_principal(Principal::new("bearer", Identity::new("alice")));
    /// assert_eq!(ctx.principal().map(|p| p.subject()), Some("alice"));
    /// ```
    pub fn with_principal(mut self, principal: Principal) -> Self {
        self.principal = Some(Arc::new(principal));
        self
    }

    #[cfg(feature = "server")]
    pub(crate) fn set_principal(&mut self, principal: Option<Arc<Principal>>) {
        self.principal = principal;
    }

    /// Who called: the authenticated principal (subject, scopes, claims per scheme), when the
    /// card declares security and the caller's credentials verified; `None` for an anonymous
    /// call (only where the card lets one in) or outside a server.
    ///
    /// ```
    /// use a2a_card::{SkillContext, agent, skill};
    ///
    /// struct Greeter;
    /// /// Greets the caller by name.
    /// #[agent(url = "http://127.0.0.1:9000")]
    /// impl Greeter {
    ///     /// Says hello to whoever calls.
    ///     #[skill]
    ///     fn hello(&self, _text: String, ctx: SkillContext) -> String {
    ///         match ctx.principal() {
    ///             Some(p) => format!("Hello, {}", p.subject()),
    ///             None => "Hello, stranger".to_owned(),
    ///         }
    ///     }
    /// }
    /// # let _ = <Greeter as a2a_card::Agent>::card();
    /// ```
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_deref()
    }

    #[cfg(feature = "server")]
    pub(crate) fn set_tenant(&mut self, tenant: Option<String>) {
        self.tenant = tenant;
    }

    /// The tenant the call was made in (A2A 1.0: the request's `tenant`, or the HTTP+JSON
    /// path's first segment); `None` for the default tenant and outside a server. A task of
    /// one tenant is not found under another.
    ///
    /// ```
    /// use a2a_card::{SkillContext, agent, skill};
    ///
    /// struct Greeter;
    /// /// Greets, naming the tenant it serves.
    /// #[agent(url = "http://127.0.0.1:9000")]
    /// impl Greeter {
    ///     /// Greets.
    ///     #[skill]
    ///     fn hello(&self, name: String, ctx: SkillContext) -> String {
    ///         format!("Hello {name}, from {}", ctx.tenant().unwrap_or("everyone"))
    ///     }
    /// }
    /// # let card = <Greeter as a2a_card::Agent>::card().unwrap();
    /// # assert_eq!(card.skills[0].id, "hello");
    /// ```
    pub fn tenant(&self) -> Option<&str> {
        self.tenant.as_deref()
    }

    #[cfg(feature = "server")]
    pub(crate) fn set_extensions(&mut self, extensions: Vec<String>) {
        self.extensions = extensions;
    }

    /// The extensions the caller asked for (`A2A-Extensions`) that the card declares, in the
    /// order asked: what the handler may use for this call (an extension the card does not
    /// declare is ignored, and the answer names the ones asked for and declared). Empty
    /// outside a server.
    ///
    /// ```
    /// use a2a_card::{SkillContext, agent, skill};
    ///
    /// struct Greeter;
    /// /// Greets, in rhyme for callers that ask for it.
    /// #[agent(url = "http://127.0.0.1:9000", extension(uri = "https://example.com/ext/rhyme/v1"))]
    /// impl Greeter {
    ///     /// Greets.
    ///     #[skill]
    ///     fn hello(&self, name: String, ctx: SkillContext) -> String {
    ///         let rhymes = ctx.extensions().iter().any(|e| e == "https://example.com/ext/rhyme/v1");
    ///         if rhymes { format!("Hello {name}, good to see you again") } else { format!("Hello, {name}") }
    ///     }
    /// }
    /// # let card = <Greeter as a2a_card::Agent>::card().unwrap();
    /// # assert_eq!(card.capabilities.extensions[0].uri, "https://example.com/ext/rhyme/v1");
    /// ```
    pub fn extensions(&self) -> &[String] {
        &self.extensions
    }

    /// The task's deadline, `deadline_ms` (milliseconds since the Unix epoch), read on
    /// `clock`.
    #[cfg(feature = "server")]
    pub(crate) fn set_deadline(&mut self, deadline_ms: Option<i64>, clock: crate::clock::Clock) {
        self.deadline = deadline_ms.and_then(|ms| {
            std::time::UNIX_EPOCH
                .checked_add(std::time::Duration::from_millis(ms.max(0).unsigned_abs()))
        });
        self.clock = Some(clock);
    }

    /// Now, on the clock the task's deadline is read on.
    fn now(&self) -> std::time::SystemTime {
        #[cfg(feature = "server")]
        if let Some(clock) = &self.clock {
            let ms = clock.now_ms().max(0).unsigned_abs();
            return std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
        }
        std::time::SystemTime::now()
    }

    #[cfg(feature = "server")]
    pub(crate) fn set_tokens(&mut self, tokens: Option<u64>) {
        self.tokens = tokens;
    }

    /// The model tokens the task's caller gave it (see [`crate::budget`]), all of them; `None`
    /// when it gave none.
    pub fn tokens_given(&self) -> Option<u64> {
        self.tokens
    }

    /// What is left of the model tokens the task's caller gave it: those given less those the
    /// task used ([`spend_tokens`](Self::spend_tokens): a model loop counts each completion's);
    /// `None` when its caller gave none. A call of another agent made with
    /// [`call`](Self::call) sends it on.
    ///
    /// ```
    /// let ctx = a2a_card::SkillContext::new(None, None, serde_json::Value::Null);
    /// ctx.spend_tokens(40);
    /// assert_eq!(ctx.token_budget(), None, "no budget given");
    /// ```
    pub fn token_budget(&self) -> Option<u64> {
        let spent = self.spent.load(std::sync::atomic::Ordering::Relaxed);
        Some(self.tokens?.saturating_sub(spent))
    }

    /// Counts `tokens` model tokens the task used (what [`token_budget`](Self::token_budget)
    /// takes away from the budget). `rig::ModelLoop` counts each completion's usage.
    pub fn spend_tokens(&self, tokens: u64) {
        self.spent
            .fetch_add(tokens, std::sync::atomic::Ordering::Relaxed);
    }

    /// The task's deadline, where its caller gave it a budget (see [`crate::budget`]): the time
    /// the message that made the task arrived, plus the budget, on the server's clock
    /// ([`Server::clock`](crate::server::Server::clock): the system's unless a test gives its
    /// own). A durable task keeps it when it runs again elsewhere. `None` when no budget was
    /// given.
    ///
    /// ```
    /// # use a2a_card::{SkillContext, agent, skill};
    /// # struct Clock;
    /// # /// Tells the time.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Clock {
    /// /// Says by when it must answer.
    /// #[skill]
    /// async fn by_when(&self, _ask: String, ctx: SkillContext) -> String {
    ///     match ctx.deadline() {
    ///         Some(at) => format!("by {at:?}"),
    ///         None => "whenever".to_owned(),
    ///     }
    /// }
    /// # }
    /// ```
    pub fn deadline(&self) -> Option<std::time::SystemTime> {
        self.deadline
    }

    /// What is left of the task's budget now (zero once its deadline passed), read on the
    /// server's clock; `None` when its caller gave it none. A call of another agent made with
    /// [`call`](Self::call) sends it on.
    ///
    /// ```
    /// # use a2a_card::{SkillContext, agent, skill};
    /// # struct Search;
    /// # /// Searches.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Search {
    /// /// Searches the fast index only when time is short.
    /// #[skill]
    /// async fn search(&self, query: String, ctx: SkillContext) -> String {
    ///     let short = ctx.budget().is_some_and(|left| left < std::time::Duration::from_secs(2));
    ///     if short { format!("{query}: from the cache") } else { format!("{query}: from the index") }
    /// }
    /// # }
    /// ```
    pub fn budget(&self) -> Option<std::time::Duration> {
        let deadline = self.deadline?;
        Some(deadline.duration_since(self.now()).unwrap_or_default())
    }

    /// Puts `value` under `key` in the task's metadata, written with the task's end (the last
    /// value of a key wins): a summary a caller reads with the task, such as the model usage
    /// `rig::ModelLoop` records. Outside a task, or for a value that does not
    /// write as JSON, nothing.
    ///
    /// ```
    /// # use a2a_card::{SkillContext, agent, skill};
    /// # struct Search;
    /// # /// Searches.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Search {
    /// /// Searches, and says how many sources it read.
    /// #[skill]
    /// async fn search(&self, query: String, ctx: SkillContext) -> String {
    ///     ctx.set_metadata("https://example.com/sources-read", &3);
    ///     format!("{query}: found")
    /// }
    /// # }
    /// ```
    pub fn set_metadata(&self, key: impl Into<String>, value: &impl serde::Serialize) {
        let (Some(link), Ok(value)) = (&self.link, serde_json::to_value(value)) else {
            return;
        };
        link.metadata
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.into(), value);
    }

    /// A durable handler's journal, if the context has one.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn journal(&self) -> Option<&Arc<crate::journal::Journal<Answer>>> {
        self.link.as_ref()?.journal.as_ref()
    }

    /// Keeps `cancel` with the task until the returned guard is dropped: it is called if the
    /// task ends first ([`LinkHandle::cascade`]). `None` outside a task.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn remote_task(&self, cancel: Canceller) -> Option<RemoteTask> {
        let link = self.link.as_ref()?;
        let n = link.next_remote.fetch_add(1, Ordering::Relaxed);
        link.remote
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((n, cancel));
        Some(RemoteTask {
            link: Arc::clone(link),
            n,
        })
    }

    /// Links the context to a running task: its events go to the returned receiver, in order,
    /// with room for `buffer` before the handler waits.
    #[cfg(any(feature = "server", feature = "rig"))]
    pub(crate) fn link(
        &mut self,
        skill_id: &'static str,
        buffer: usize,
        journal: Option<Arc<crate::journal::Journal<Answer>>>,
    ) -> (LinkHandle, futures::channel::mpsc::Receiver<Signal>) {
        let (link, handle, receiver) = Link::new(skill_id, buffer, journal);
        self.link = Some(link);
        (handle, receiver)
    }

    /// Whether the call runs in a task (on a server), rather than being called directly.
    pub fn in_task(&self) -> bool {
        self.link.is_some()
    }

    /// Whether the task was cancelled. The handler's future is dropped at its next `.await`
    /// once it is; this is for handlers that work long between awaits.
    pub fn is_cancelled(&self) -> bool {
        self.link
            .as_ref()
            .is_some_and(|l| l.cancelled.load(Ordering::Acquire))
    }

    /// Reports progress: a `working` status update whose message is `text`. Streaming callers
    /// see it at once; `GetTask` shows the latest.
    pub async fn progress(&self, text: impl Into<String>) {
        self.send(Signal::Progress(text.into())).await;
    }

    /// Opens an artifact named `name`, to send chunk by chunk (each chunk one part: `T` as a
    /// data part of its schema, text as a text part, a [`File`](crate::File) as a file part). The artifact's
    /// id is its name (made unique within the task when a name is used twice).
    ///
    /// ```
    /// # use a2a_card::{SkillContext, agent, skill};
    /// # struct Writer;
    /// # /// Writes.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Writer {
    /// /// Writes a poem and its notes, line by line.
    /// #[skill]
    /// async fn poem(&self, topic: String, ctx: SkillContext) -> Result<String, String> {
    ///     let mut poem = ctx.artifact::<String>("poem");
    ///     poem.send(format!("Of {topic} I sing,")).await?;
    ///     poem.send_last("and then I stop.".to_owned()).await?;
    ///     Ok("Done.".to_owned())
    /// }
    /// # }
    /// ```
    pub fn artifact<T: SkillReturn>(&self, name: impl Into<String>) -> Artifact<T> {
        let name = name.into();
        let id = match &self.link {
            Some(link) => link.unique_id(&name),
            None => name.clone(),
        };
        Artifact {
            ctx: self.clone(),
            id,
            name,
            sent: false,
            done: false,
            _item: PhantomData,
        }
    }

    /// Asks the caller a question and waits for the answer: the task goes `input-required`
    /// with `question` as its status message (a blocking `SendMessage` returns the task then),
    /// and the caller's next message on the task (text, or data without a schema media type)
    /// is the answer.
    ///
    /// Fails with [`Interrupted`] only when there is no one to ask: outside a task, or when
    /// the server drops the task. A cancelled task drops the handler instead, and so does a
    /// question left unanswered past the server's `Server::input_timeout` (24 hours by
    /// default; the task then fails saying so).
    pub async fn ask(&self, question: impl Into<String>) -> Result<Answer, Interrupted> {
        self.ask_with(false, question.into(), None).await
    }

    /// Like [`ask`](Self::ask), the question carrying `data` beside its text: the status
    /// message is the text, then `data` as a data part, for a caller that reads it as typed
    /// data (a tool call proposed for approval, with the schema of the answer it takes).
    ///
    /// ```
    /// # use a2a_card::{SkillContext, SkillError, agent, skill};
    /// # struct Shop;
    /// # /// Sells.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Shop {
    /// /// Refunds, once the caller agrees to the amount.
    /// #[skill]
    /// async fn refund(&self, order: String, ctx: SkillContext) -> Result<String, SkillError> {
    ///     let proposal = serde_json::json!({"order": order, "amount": 12.5});
    ///     let answer = ctx.ask_with_data("Refund 12.50?", &proposal).await?;
    ///     Ok(format!("{order}: {}", answer.text()))
    /// }
    /// # }
    /// ```
    pub async fn ask_with_data(
        &self,
        question: impl Into<String>,
        data: &impl serde::Serialize,
    ) -> Result<Answer, Interrupted> {
        let data = serde_json::to_value(data)
            .map_err(|e| Interrupted(format!("the question's data does not write as JSON: {e}")))?;
        self.ask_with(false, question.into(), Some(data)).await
    }

    /// Like [`ask`](Self::ask), for credentials: the task goes `auth-required`.
    pub async fn ask_auth(&self, question: impl Into<String>) -> Result<Answer, Interrupted> {
        self.ask_with(true, question.into(), None).await
    }

    async fn ask_with(
        &self,
        auth: bool,
        question: String,
        data: Option<Value>,
    ) -> Result<Answer, Interrupted> {
        let Some(link) = &self.link else {
            return Err(Interrupted(
                "this call runs outside a task: there is no caller to ask".into(),
            ));
        };
        // A durable handler's question answered before its process stopped: the answer
        // recorded, the question not asked again; else the number its answer is written at.
        let mut entry = None;
        if let Some(journal) = &link.journal {
            match journal.answer() {
                Ok(crate::journal::Slot::Recorded(answer)) => {
                    self.send(Signal::Asked { auth, question }).await;
                    return Ok(answer);
                }
                Ok(crate::journal::Slot::Free(n) | crate::journal::Slot::Again(n)) => {
                    entry = Some(n)
                }
                Err(diverged) => return Err(Interrupted(diverged.0)),
            }
        }
        let (answer, receiver) = oneshot::channel();
        if !self
            .send(Signal::Ask {
                auth,
                question,
                data,
                answer,
                entry,
            })
            .await
        {
            return Err(Interrupted("the task is no longer running".into()));
        }
        receiver
            .await
            .map_err(|_| Interrupted("the task ended before the caller answered".into()))
    }

    /// Runs `body` once, as step `name` of a durable skill (`#[skill(durable)]`): its result
    /// (any serde type) is journaled with the task, and a run of the handler after its process
    /// stopped gets the recorded result back without running `body` again. `body` does its
    /// work only: progress, items and questions are the handler's, between steps (a replay
    /// skips the body, and would not send them again). Steps may run at the same time
    /// (`join_all`): each keeps the place it began at. Anything the
    /// handler must not do twice, or that would not give the same result twice (a payment, a
    /// model call, the clock, a random number), goes in a step. Its start is journaled before
    /// `body` runs (one round of the store's writer, milliseconds), and its result in the
    /// store's next round, beside the task's other writes: a step whose process stopped while
    /// `body` ran, or before that round, runs again, under the same name, so give what it
    /// calls an idempotency key. (A run after such a stop sees the step begun: a
    /// [`patched`](Self::patched) marker met before it says `false`, the old code's path.)
    ///
    /// Outside a durable skill (or on a store that keeps no journal, such as the memory
    /// store) `body` just runs. Fails only when the handler, replayed, does not do what its
    /// journal says it did (its steps in another order or of other names): see the book's
    /// durable skills.
    ///
    /// ```
    /// # use a2a_card::{SkillContext, SkillError, agent, skill};
    /// # struct Shop;
    /// # /// Sells.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Shop {
    /// /// Charges a card and ships the order.
    /// #[skill(durable)]
    /// async fn order(&self, item: String, ctx: SkillContext) -> Result<String, SkillError> {
    ///     let key = format!("order-{}", ctx.task_id.clone().unwrap_or_default());
    ///     let receipt: String = ctx.step("charge", async { format!("receipt for {item} ({key})") }).await?;
    ///     let confirm = ctx.ask("Ship to the address on file?").await?;
    ///     Ok(format!("{receipt}; shipping: {}", confirm.text()))
    /// }
    /// # }
    /// ```
    pub async fn step<T, F>(&self, name: &str, body: F) -> Result<T, SkillError>
    where
        T: serde::Serialize + DeserializeOwned,
        F: std::future::Future<Output = T>,
    {
        let Some(journal) = self.link.as_ref().and_then(|l| l.journal.as_ref()) else {
            return Ok(body.await);
        };
        let slot = match journal.step(name)? {
            crate::journal::Slot::Recorded(recorded) => {
                return serde_json::from_value(recorded).map_err(|e| {
                    SkillError::Failed(format!(
                        "the journaled result of step `{name}` does not read as the step's type now: {e}"
                    ))
                });
            }
            // Its start kept before the body runs: a run after this one knows the body may
            // have run (a marker met before it is old work).
            crate::journal::Slot::Free(n) => {
                journal.start(n, name).await.map_err(|e| {
                    SkillError::Failed(format!(
                        "step `{name}` was not run: its start could not be journaled ({e})"
                    ))
                })?;
                n
            }
            crate::journal::Slot::Again(n) => n,
        };
        let value = body.await;
        let json = serde_json::to_value(&value).map_err(|e| {
            SkillError::Failed(format!(
                "the result of step `{name}` cannot be journaled (it is not JSON): {e}"
            ))
        })?;
        journal.stepped(slot, name, json);
        Ok(value)
    }

    /// Whether the code after marker `name` is the task's own: `true` for a task that met the
    /// marker first as new work (it began, or got past what its journal holds, on code that
    /// has the marker), `false` for one that, run again from its journal after its process
    /// stopped, replays what code without the marker did there (its journal holds a step,
    /// sleep or answer further on, or its log an item it has not sent again). The first answer is
    /// journaled with the task, and every later run of it gets the same one. Outside a
    /// durable skill (or on a store that keeps no journal), `true`.
    ///
    /// It lets a new version of a durable handler change what it does without failing the
    /// tasks an older version began (a new `#[skill(durable = "VERSION")]` fails them): the
    /// old path stays, for them, until no task of the old code is left. See the book's
    /// durable skills, "Deploying a new version".
    ///
    /// ```
    /// # use a2a_card::{SkillContext, SkillError, agent, skill};
    /// # struct Shop;
    /// # /// Sells.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Shop {
    /// /// Charges for an order; since version 2, with its tax.
    /// #[skill(durable)]
    /// async fn order(&self, item: String, ctx: SkillContext) -> Result<String, SkillError> {
    ///     let total: u64 = if ctx.patched("tax") {
    ///         ctx.step("charge-with-tax", async { 120 }).await?
    ///     } else {
    ///         // The tasks begun before: as they did.
    ///         ctx.step("charge", async { 100 }).await?
    ///     };
    ///     Ok(format!("{item}: charged {total}"))
    /// }
    /// # }
    /// ```
    pub fn patched(&self, name: &str) -> bool {
        match self.link.as_ref().and_then(|l| l.journal.as_ref()) {
            Some(journal) => journal.patched(name),
            None => true,
        }
    }

    /// The fencing token of this run of a durable skill (`#[skill(durable)]`, on a store that
    /// keeps journals): larger than that of every earlier run of the task, smaller than that
    /// of any later one. A task runs again after its process stopped or lost the database for
    /// half its lease; should the earlier run still be going (a process paused, or cut off
    /// from the database), its writes to the store are refused, but what it sends elsewhere is
    /// not: send the token with each side effect, and have the other system refuse a token
    /// below the largest it has seen for the task. A step's idempotency key (the task's id and
    /// the step's name) tells the same step's runs apart from other work; the token, which of
    /// them is the task's. `None` outside a durable run (no run of the task follows it).
    ///
    /// ```
    /// # use a2a_card::{SkillContext, SkillError, agent, skill};
    /// # struct Shop;
    /// # /// Sells.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Shop {
    /// /// Ships an order, once.
    /// #[skill(durable)]
    /// async fn ship(&self, item: String, ctx: SkillContext) -> Result<String, SkillError> {
    ///     let key = format!("{}-ship", ctx.task_id.clone().unwrap_or_default());
    ///     let token = ctx.fencing_token().unwrap_or_default();
    ///     // The warehouse keeps the largest token per key and refuses a smaller one.
    ///     let label: String = ctx
    ///         .step("ship", async { format!("label for {item} ({key}, token {token})") })
    ///         .await?;
    ///     Ok(label)
    /// }
    /// # }
    /// ```
    pub fn fencing_token(&self) -> Option<u64> {
        let journal = self.link.as_ref()?.journal.as_ref()?;
        Some(journal.token())
    }

    /// Waits `duration`, durably in a durable skill: the deadline is journaled, and a run of
    /// the handler after its process stopped waits only what is left of it (feature
    /// `server`). Elsewhere, a plain sleep.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use a2a_card::{SkillContext, SkillError, agent, skill};
    /// # struct Reminder;
    /// # /// Reminds.
    /// # #[agent(url = "http://127.0.0.1:9000")]
    /// # impl Reminder {
    /// /// Says `text` again in an hour.
    /// #[skill(durable)]
    /// async fn remind(&self, text: String, ctx: SkillContext) -> Result<String, SkillError> {
    ///     ctx.sleep(Duration::from_secs(3600)).await?;
    ///     Ok(text)
    /// }
    /// # }
    /// ```
    #[cfg(feature = "server")]
    pub async fn sleep(&self, duration: std::time::Duration) -> Result<(), SkillError> {
        let Some(journal) = self.link.as_ref().and_then(|l| l.journal.as_ref()) else {
            tokio::time::sleep(duration).await;
            return Ok(());
        };
        let clock = journal.clock();
        let ms = i64::try_from(duration.as_millis()).unwrap_or(i64::MAX);
        let until = journal.sleep(clock.now_ms(), ms)?;
        clock.sleep_until_ms(until).await;
        Ok(())
    }

    /// Sends an event (an item the task's log keeps, which a durable handler's journal
    /// counts); `false` when the task no longer listens.
    async fn send(&self, event: Signal) -> bool {
        let Some(link) = &self.link else {
            return false;
        };
        if let Some(journal) = &link.journal {
            journal.sent();
        }
        link.events.clone().send(event).await.is_ok()
    }

    /// Sends a streaming handler's items, each turned into a reply by `reply`, as chunks of
    /// one artifact named after the skill, then closes it.
    pub(crate) async fn drain<S, R>(
        &self,
        stream: S,
        reply: fn(R) -> Result<Reply, SkillError>,
    ) -> Result<Reply, SkillError>
    where
        S: futures::Stream<Item = R> + Send,
    {
        use futures::StreamExt;
        let name = self.link.as_ref().map_or("output", |l| l.skill_id);
        // The item type is erased: chunks go as replies.
        let mut artifact = self.artifact::<String>(name);
        let mut stream = std::pin::pin!(stream);
        while let Some(item) = stream.next().await {
            artifact.send_reply(reply(item)?, false).await?;
        }
        artifact.close().await;
        Ok(Reply::Streamed)
    }
}
