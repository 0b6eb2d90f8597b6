//! What the processes that share a store tell each other, on the lifecycle's side
//! ([`Cluster`]: one process alone, or several replicas on a store with a change feed):
//! answers forwarded to the replica whose handler asked, cancels made on another replica
//! heard, tasks another replica runs followed through the store's log; and the failures
//! recovery made posted.

use std::sync::Arc;
use std::time::Duration;

use a2a::*;
use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::{self, BoxStream};
use tokio::sync::broadcast;

use super::task::updates::status;
use super::task::{
    Ending, Found, Happening, Letter, Numbered, Recorder, Storing, Tracked, deliver, hand_over,
};
use crate::dispatch::Decision;
use crate::server::message::decide;
use crate::server::push::Delivery;
use crate::server::store::{Change, ChangeFeed, EventLog, Store, status_update};

/// What the processes that share a store tell each other, as the lifecycle uses it.
#[async_trait]
pub(crate) trait Cluster: Send + Sync {
    /// Whether other processes may run the store's tasks (their cancels reach the handlers
    /// here, and they tell their tasks' webhooks themselves).
    fn is_shared(&self) -> bool;

    /// The changes any process makes from now on (`None` alone: nothing changes but here).
    fn wake(&self) -> Option<Wake>;

    /// Sends the caller's answer to the question of task `task_id` to the process whose
    /// handler asked; `false` when no other process takes answers.
    async fn forward(&self, task_id: &str, message: &Message) -> Result<bool, A2AError>;
}

/// What wakes a reader of the store's log: the changes of every process.
pub(super) type Wake = broadcast::Receiver<Change>;

/// One process alone on its store.
pub(super) struct Alone;

#[async_trait]
impl Cluster for Alone {
    fn is_shared(&self) -> bool {
        false
    }

    fn wake(&self) -> Option<Wake> {
        None
    }

    async fn forward(&self, _: &str, _: &Message) -> Result<bool, A2AError> {
        Ok(false)
    }
}

/// Replicas of one store, which tells each the others' changes ([`Store::changes`]).
pub(super) struct Replicas {
    pub(super) store: Arc<dyn Store>,
    pub(super) changes: ChangeFeed,
}

#[async_trait]
impl Cluster for Replicas {
    fn is_shared(&self) -> bool {
        true
    }

    fn wake(&self) -> Option<Wake> {
        Some(self.changes.subscribe())
    }

    async fn forward(&self, task_id: &str, message: &Message) -> Result<bool, A2AError> {
        self.store.forward(task_id, message).await
    }
}

/// The cluster of the processes on `store`.
pub(super) fn of(store: &Arc<dyn Store>) -> Arc<dyn Cluster> {
    match store.changes() {
        Some(changes) => Arc::new(Replicas {
            store: Arc::clone(store),
            changes,
        }),
        None => Arc::new(Alone),
    }
}

/// Hears the other replicas: stops the handlers running here whose task another replica
/// cancelled (recording the cancel, already in the store, in their log), and hands each
/// answer forwarded for a handler here to it (answers for tasks that run elsewhere are not
/// this replica's).
pub(super) fn hear(
    changes: Wake,
    recorder: Arc<Recorder>,
    dispatcher: Arc<crate::dispatch::Dispatcher>,
    max_inline_file: usize,
    namespace: Option<String>,
) {
    // Two listeners, each at its own pace: a cancel is checked against the store, and that
    // read must not hold back (or, past the feed's capacity, lose) an answer.
    let answers = changes.resubscribe();
    let cancels = Arc::clone(&recorder);
    listen(changes, move |change| {
        let recorder = Arc::clone(&cancels);
        async move {
            match change {
                // (A task's other changes are its own replica's writes, or a follower's
                // concern: reading each would cost a read of the task a write.)
                Change::Canceled(id) => cancelled(&recorder, &id).await,
                // Cancels may have been missed: each task running here is checked.
                Change::Missed => {
                    for tracked in recorder.registry.all() {
                        cancelled(&recorder, &tracked.id).await;
                    }
                }
                // Another process took this one's task over (while it was stalled or cut off).
                Change::TakenOver(id) => {
                    if let Some(tracked) = recorder.registry.get(&id)
                        && !tracked.state().is_terminal()
                    {
                        recorder.abandon(
                            &tracked,
                            A2AError::internal(
                                "another process took the task over while this one was stalled past its lease or cut off from the store",
                            ),
                        );
                    }
                }
                // This process's lease ran low: its tasks are no longer its own.
                Change::LeaseLost => {
                    for tracked in recorder.registry.all() {
                        if !tracked.state().is_terminal() {
                            recorder.abandon(
                                &tracked,
                                A2AError::internal(
                                    "this process's lease on the task store ran low",
                                ),
                            );
                        }
                    }
                }
                _ => {}
            }
        }
    });
    listen(answers, move |change| {
        let (recorder, dispatcher) = (Arc::clone(&recorder), Arc::clone(&dispatcher));
        let namespace = namespace.clone();
        async move {
            let Change::Answer { task, message } = change else {
                return;
            };
            // The replica that took it checked it; read here as any answer is.
            let Ok(Decision::FollowUp(call)) =
                decide(&dispatcher, max_inline_file, &message, Some(&task))
            else {
                return;
            };
            let journals = recorder.journals().is_some();
            let ours = crate::server::store::namespace_of(&task) == namespace.as_deref();
            if journals && ours {
                // A durable task this agent may run: handed to its handler here if it waits,
                // else kept (its process may have stopped, and this one may take the task over,
                // or be replaying it, and ask again).
                let letter = Letter {
                    message: *message,
                    answer: super::task::answer_of(call),
                    caller: None,
                };
                if let Ok(Some(Found {
                    tracked,
                    letter,
                    waiting,
                })) = recorder
                    .mailbox
                    .keep(&recorder.registry, &task, letter, None)
                    && let Err(e) =
                        deliver(&recorder, &tracked, letter.message, letter.answer, waiting).await
                {
                    tracing::warn!(task = %task, "a forwarded answer was not handed over: {}", e.message);
                }
            } else if let Some(tracked) = recorder.registry.get(&task)
                && let Ok(waiting) = tracked.take_waiting(&mut None)
                && let Err(e) = hand_over(&recorder, &tracked, *message, call, waiting).await
            {
                tracing::warn!(task = %task, "a forwarded answer was not handed over: {}", e.message);
            }
        }
    });
}

/// Handles each change of `changes` with `handle`, in order, for as long as the feed lasts
/// (a change missed by falling behind is skipped).
fn listen<F, Fut>(mut changes: Wake, handle: F)
where
    F: Fn(Change) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    tokio::spawn(async move {
        loop {
            match changes.recv().await {
                Ok(change) => handle(change).await,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    });
}

/// Stops the handler of task `id`, if it runs here and another replica cancelled the task.
async fn cancelled(recorder: &Recorder, id: &str) {
    let Some(tracked) = recorder.registry.get(id) else {
        return;
    };
    if tracked.state().is_terminal() {
        return;
    }
    if let Ok(Some(task)) = recorder.store.get(id).await
        && task.status.state == TaskState::Canceled
    {
        let event = status(&tracked, TaskState::Canceled, None);
        let ending = Ending::with(event).written(Storing::Skip);
        let _ = recorder.end(&tracked, Happening::Cancel, ending).await;
    }
}

/// Records the events of task `tracked`, which another replica runs, as its log brings them
/// (`follow`: the log's events after a number), with their numbers (not logged, written or
/// posted again), until it ends. A read of the log that fails is made again, after a pause
/// that grows to [`RECHECK`], from the last event recorded: the copy stays followed (and
/// live) through a store that fails for a while, so that its callers here get the task's end
/// once the store answers again, or, should this process lose the store past its lease, the
/// error its fencing breaks the copy off with; never a wait without end. A task the store no
/// longer has breaks the copy off, and its readers here learn so.
pub(super) fn mirror(
    recorder: Arc<Recorder>,
    tracked: Arc<Tracked>,
    mut follow: impl FnMut(u64) -> LogStream + Send + 'static,
) {
    tokio::spawn(async move {
        let mut pause = FIRST_PAUSE;
        'follow: loop {
            let mut events = follow(tracked.last());
            while let Some(event) = events.next().await {
                match event {
                    Ok((seq, event)) => {
                        recorder.heard(&tracked, seq, event);
                        pause = FIRST_PAUSE;
                    }
                    Err(e) if e.code == a2a::error_code::TASK_NOT_FOUND => {
                        recorder.lost(&tracked, e);
                        break 'follow;
                    }
                    Err(e) => {
                        tracing::warn!(
                            a2a.task.id = %tracked.id,
                            error = %e.message,
                            "reading the log of a task another replica runs failed; reading it again"
                        );
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(RECHECK);
                        continue 'follow;
                    }
                }
            }
            // The task ended, or the store closed.
            break;
        }
        recorder.finish(&tracked);
    });
}

/// The first pause before a failed read of a task's log is made again.
const FIRST_PAUSE: Duration = Duration::from_millis(100);

/// Posts the failure of each task the store's recovery fails to the task's webhooks.
pub(super) fn post_recovered(
    mut recovered: tokio::sync::mpsc::UnboundedReceiver<Task>,
    push: Arc<Delivery>,
) {
    tokio::spawn(async move {
        while let Some(task) = recovered.recv().await {
            push.deliver(&task.id, Arc::new(status_update(&task).into()));
        }
    });
}

/// How long a reader of the store's log waits for a notification before it reads the log
/// again all the same.
pub(super) const RECHECK: Duration = Duration::from_secs(5);

/// How often a reader of a log no other process announces reads it again, while the task runs
/// on.
const POLL: Duration = Duration::from_millis(250);

/// Events read from the store's log, with their numbers.
pub(super) type LogStream = BoxStream<'static, Result<Numbered, A2AError>>;

/// The events of task `id` after event `after`, from the store's log: `read` (those read
/// already), then each as any replica logs it (woken by `wake`), until one ends the task. A
/// task that ended without its end in the log (cancelled where no handler ran it) ends the
/// stream with its stored status.
pub(super) fn follow_log(
    log: Arc<dyn EventLog>,
    wake: Option<Wake>,
    id: String,
    after: u64,
    read: Vec<Numbered>,
) -> LogStream {
    struct Follow {
        log: Arc<dyn EventLog>,
        wake: Option<Wake>,
        id: String,
        after: u64,
        pending: std::collections::VecDeque<Numbered>,
        done: bool,
    }
    let state = Follow {
        log,
        wake,
        id,
        after,
        pending: read.into(),
        done: false,
    };
    Box::pin(stream::unfold(state, |mut st| async move {
        loop {
            if st.done {
                return None;
            }
            if let Some((seq, event)) = st.pending.pop_front() {
                if seq <= st.after {
                    continue;
                }
                st.after = seq;
                st.done = event.ends();
                return Some((Ok((seq, event)), st));
            }
            let logged = match st.log.read(&st.id, Some(st.after)).await {
                Ok(Some(logged)) => logged,
                Ok(None) => {
                    st.done = true;
                    return Some((Err(A2AError::task_not_found(&st.id)), st));
                }
                Err(e) => {
                    st.done = true;
                    return Some((Err(e), st));
                }
            };
            if !logged.events.is_empty() {
                st.pending.extend(logged.events);
                continue;
            }
            if logged.task.status.state.is_terminal() {
                st.done = true;
                let seq = st.after.max(logged.seq) + 1;
                return Some((Ok((seq, Arc::new(status_update(&logged.task).into()))), st));
            }
            let Some(changes) = st.wake.as_mut() else {
                // No other process writes this store now, but the task runs on: its process
                // stopped, and this one's recovery will fail it or (a durable skill's) run it
                // again here. Read again in a moment.
                tokio::time::sleep(POLL).await;
                continue;
            };
            // Until its log grows or it changes (or some notifications were missed), or for
            // `RECHECK` at most: a replica that runs the task may not have heard of this one
            // yet, and so not announce (see `SqlTasks`).
            let recheck = tokio::time::sleep(RECHECK);
            tokio::pin!(recheck);
            loop {
                let woken = tokio::select! {
                    change = changes.recv() => change,
                    () = &mut recheck => break,
                };
                match woken {
                    Ok(Change::Task(id) | Change::Events(id)) if id == st.id => break,
                    Ok(Change::Missed) => break,
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => break,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        }
    }))
}

#[cfg(all(test, feature = "sqlite"))]
mod tests {
    use super::*;
    use a2a_server::TaskStore;

    fn task(state: TaskState) -> Task {
        crate::server::fixtures::task("t", state)
    }

    /// A replica that runs a task may not have heard of this one yet and write without
    /// announcing: the follower finds the write all the same, `RECHECK` later.
    #[tokio::test]
    async fn a_follower_that_hears_no_notification_reads_the_log_again() {
        let path = std::env::temp_dir().join(format!("a2a-recheck-{}.db", std::process::id()));
        let store = Arc::new(
            crate::server::store::SqlTasks::sqlite(&path, Default::default())
                .await
                .expect("a store"),
        );
        store
            .create(task(TaskState::Working))
            .await
            .expect("created");
        // Wake-ups that never come (kept open: closed, the follower would end).
        let changes = crate::server::store::ChangeFeed::new(1);
        let log: Arc<dyn EventLog> = Arc::clone(&store) as Arc<dyn EventLog>;
        let mut follow = follow_log(
            log,
            Some(changes.subscribe()),
            "t".to_owned(),
            0,
            Vec::new(),
        );
        let nothing = tokio::time::timeout(Duration::from_millis(300), follow.next()).await;
        assert!(nothing.is_err(), "nothing was written yet: {nothing:?}");

        let done = task(TaskState::Completed);
        store.append("t", 1, &Arc::new(status_update(&done).into()));
        store.update_at(done, 1).await.expect("written");
        let started = std::time::Instant::now();
        let next = tokio::time::timeout(RECHECK * 2, follow.next())
            .await
            .expect("found without a notification");
        let (seq, event) = next.expect("an event").expect("read");
        assert_eq!(seq, 1);
        assert!(event.ends(), "the task's end: {event:?}");
        assert!(
            started.elapsed() <= RECHECK + Duration::from_secs(1),
            "found after {:?}",
            started.elapsed()
        );
        assert!(
            follow.next().await.is_none(),
            "the stream ends with the task"
        );
        drop(changes);
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }
}
