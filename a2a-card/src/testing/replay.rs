//! Replay before a deploy ([`Replay`]): the durable tasks still running in a store (or in a
//! file exported from it), each replayed against the agent of this build without running a
//! step's body, sleeping, asking, calling or storing anything; those that would not replay are
//! listed with the entry and the step that differ.

use std::fmt;
use std::io::{BufRead as _, Write as _};
use std::path::Path;
use std::sync::Arc;

use a2a::{ListTasksRequest, StreamResponse, Task};
use serde::{Deserialize, Serialize};

use super::TestError;
use crate::Agent;
use crate::journal::Entry;
use crate::server::store::{Store, Tasks};
use crate::server::{Checked, Server, ServerError};

/// A durable task as its store keeps it: the task, its journal (entry 0 first) and its log's
/// events. One line of a file [`Replay::save`] writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Journaled {
    /// The task as stored.
    pub task: Task,
    /// Its journal: each entry with its number, in order of number.
    pub journal: Vec<(u64, Entry)>,
    /// The events of its log, in order.
    pub events: Vec<StreamResponse>,
}

impl Journaled {
    /// The skill the task runs, as its journal's entry 0 says.
    pub fn skill(&self) -> Option<&str> {
        self.journal.iter().find_map(|(n, entry)| match entry {
            Entry::Begin { begin } if *n == 0 => Some(begin.skill.as_str()),
            _ => None,
        })
    }
}

/// The durable tasks a replay check replays: read from a store ([`from_store`](Self::from_store),
/// the tasks still running), or from a file ([`from_file`](Self::from_file)) that
/// [`save`](Self::save) wrote, for a check in CI against journals an earlier version made.
///
/// ```
/// use a2a_card::server::Server;
/// use a2a_card::server::store::Tasks;
/// use a2a_card::testing::Replay;
/// use a2a_card::{SkillContext, SkillError, agent, skill};
///
/// struct Shop;
/// /// Sells.
/// #[agent(url = "https://shop.example.com/a2a")]
/// impl Shop {
///     /// Charges, then ships.
///     #[skill(durable)]
///     async fn order(&self, item: String, ctx: SkillContext) -> Result<String, SkillError> {
///         ctx.step("charge", async {}).await?;
///         ctx.step("ship", async {}).await?;
///         Ok(item)
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// // Where production keeps its tasks (here, a store that has none running).
/// let running = Replay::from_store(&Tasks::memory()).await?;
/// let report = running.check(Server::new(Shop)).await?;
/// assert!(report.is_compatible(), "{report}");
/// # Ok::<(), Box<dyn std::error::Error>>(()) })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replay {
    tasks: Vec<Journaled>,
}

impl Replay {
    /// The tasks `tasks` given.
    pub fn new(tasks: Vec<Journaled>) -> Replay {
        Replay { tasks }
    }

    /// The durable tasks still running (not in a terminal state) in the store `tasks` names,
    /// with their journals and logs. Only read: a SQL store is opened as a replica that takes
    /// no task over and leaves as the read ends; a store of your own
    /// ([`Tasks::custom`](crate::server::store::Tasks::custom)) is read and left as it is;
    /// the memory store holds none another process could read.
    pub async fn from_store(tasks: &Tasks) -> Result<Replay, TestError> {
        let failed = |e: a2a::A2AError| TestError::Journals(e.message);
        // A SQL store is opened here, as a replica of its own, which leaves once read; a store
        // of the caller's own is only read (it may be a running server's).
        let (store, opened): (Arc<dyn Store>, bool) = match tasks {
            Tasks::Memory(_) => return Ok(Replay::default()),
            #[cfg(any(feature = "sqlite", feature = "postgres"))]
            Tasks::Sql {
                url,
                retention,
                lease,
            } => (
                Arc::new(
                    crate::server::store::SqlTasks::open(url, *retention, *lease, false)
                        .await
                        .map_err(|e| TestError::Journals(e.to_string()))?,
                ),
                true,
            ),
            Tasks::Custom(store) => (Arc::clone(store), false),
        };
        let Some(log) = store.events().filter(|log| log.keeps_journals()) else {
            return Ok(Replay::default());
        };
        let listed = store.tasks();
        let mut found = Vec::new();
        let mut page_token = None;
        loop {
            let request = ListTasksRequest {
                context_id: None,
                status: None,
                page_size: Some(100),
                page_token: page_token.take(),
                history_length: None,
                status_timestamp_after: None,
                include_artifacts: None,
                tenant: None,
            };
            let page = listed.list(&request).await.map_err(failed)?;
            for task in page.tasks {
                if task.status.state.is_terminal() {
                    continue;
                }
                let journal = log.read_journal(&task.id).await.map_err(failed)?;
                if journal.is_empty() {
                    continue;
                }
                let Some(task) = listed.get(&task.id).await.map_err(failed)? else {
                    continue;
                };
                let events = match log.read(&task.id, Some(0)).await.map_err(failed)? {
                    Some(logged) => logged
                        .events
                        .iter()
                        .map(|(_, e)| e.event().map(std::borrow::Cow::into_owned))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(failed)?,
                    None => Vec::new(),
                };
                found.push(Journaled {
                    task,
                    journal,
                    events,
                });
            }
            if page.next_page_token.is_empty() {
                break;
            }
            page_token = Some(page.next_page_token);
        }
        // The replica opened here leaves the store's table at once (it ran nothing).
        if opened {
            store.release().await.map_err(failed)?;
        }
        Ok(Replay { tasks: found })
    }

    /// The tasks in the file at `path`, as [`save`](Self::save) wrote them (JSON lines, one
    /// [`Journaled`] a line).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Replay, TestError> {
        let path = path.as_ref();
        let shown = path.display();
        let file = std::fs::File::open(path)
            .map_err(|e| TestError::Journals(format!("{shown} cannot be read: {e}")))?;
        let mut tasks = Vec::new();
        for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
            let line =
                line.map_err(|e| TestError::Journals(format!("{shown} cannot be read: {e}")))?;
            if line.trim().is_empty() {
                continue;
            }
            let task = serde_json::from_str(&line).map_err(|e| {
                TestError::Journals(format!(
                    "{shown}:{}: not a journaled task ({e}); the file is what Replay::save writes",
                    i + 1
                ))
            })?;
            tasks.push(task);
        }
        Ok(Replay { tasks })
    }

    /// Writes the tasks to `path` (JSON lines, one [`Journaled`] a line), for
    /// [`from_file`](Self::from_file): journals kept beside the tests, to check each new
    /// version against.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), TestError> {
        let path = path.as_ref();
        let failed = |e: std::io::Error| {
            TestError::Journals(format!("{} cannot be written: {e}", path.display()))
        };
        let mut file = std::io::BufWriter::new(std::fs::File::create(path).map_err(failed)?);
        for task in &self.tasks {
            let line = serde_json::to_string(task)
                .map_err(|e| TestError::Journals(format!("a task does not write as JSON: {e}")))?;
            writeln!(file, "{line}").map_err(failed)?;
        }
        file.flush().map_err(failed)
    }

    /// The tasks.
    pub fn tasks(&self) -> &[Journaled] {
        &self.tasks
    }

    /// Replays each task against the handler of the agent `server` serves (its store is not
    /// used: nothing is stored, and no task is taken over), without running a step's body,
    /// sleeping, asking, calling another agent or sending anything: the handler meets its
    /// journal's entries and its log's items, and stops where it would do new work.
    pub async fn check<A: Agent>(&self, server: Server<A>) -> Result<ReplayReport, ServerError> {
        let lifecycle = server.replay_checker().await?;
        let mut tasks = Vec::with_capacity(self.tasks.len());
        for journaled in &self.tasks {
            let checked = lifecycle
                .check_replay(
                    &journaled.task,
                    journaled.journal.clone(),
                    &journaled.events,
                )
                .await;
            let verdict = match checked {
                Checked::Replays(found) => Verdict::Replays {
                    entries: found.replayed,
                    next: found.end.map(|(_, did)| did),
                    markers: found.markers,
                },
                Checked::Diverged { entry, why, .. } => Verdict::Diverges { entry, why },
                Checked::NotRun(why) => Verdict::NotRun(why),
            };
            tasks.push(Replayed {
                task_id: journaled.task.id.clone(),
                skill: journaled.skill().unwrap_or_default().to_owned(),
                verdict,
            });
        }
        Ok(ReplayReport { tasks })
    }
}

/// One task's replay ([`ReplayReport::tasks`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Replayed {
    /// The task's id.
    pub task_id: String,
    /// The skill it runs.
    pub skill: String,
    /// What its replay came to.
    pub verdict: Verdict,
}

/// What a task's replay came to.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Verdict {
    /// The handler replays what the task did: its journal's entries and its log's items.
    Replays {
        /// The entries it met again.
        entries: usize,
        /// What it does next, past its journal (`None`: it returns).
        next: Option<String>,
        /// The markers (`ctx.patched`) it met that the journal does not hold, and what each
        /// said: `false`, the task takes the old code's path there.
        markers: Vec<(String, bool)>,
    },
    /// It does not: a run of this build would fail the task saying why.
    Diverges {
        /// The journal's entry that differs (`None`: an item of the task's log differs).
        entry: Option<u64>,
        /// What differs.
        why: String,
    },
    /// This build would not run the task again at all (its skill gone, no longer durable, or
    /// of another `durable = ".."` version): why.
    NotRun(String),
}

/// What [`Replay::check`] found, task by task.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayReport {
    tasks: Vec<Replayed>,
}

impl ReplayReport {
    /// Each task, in the order read.
    pub fn tasks(&self) -> &[Replayed] {
        &self.tasks
    }

    /// The tasks this build would not run on: they diverge, or would not run again.
    pub fn failing(&self) -> impl Iterator<Item = &Replayed> {
        self.tasks
            .iter()
            .filter(|t| !matches!(t.verdict, Verdict::Replays { .. }))
    }

    /// The tasks that replay and meet a marker the journal does not hold (the old code's path
    /// where it says `false`).
    pub fn crossing_markers(&self) -> impl Iterator<Item = &Replayed> {
        self.tasks.iter().filter(
            |t| matches!(&t.verdict, Verdict::Replays { markers, .. } if !markers.is_empty()),
        )
    }

    /// Whether every task replays.
    pub fn is_compatible(&self) -> bool {
        self.failing().next().is_none()
    }

    /// Panics, with the report, unless every task replays.
    #[track_caller]
    pub fn assert_compatible(&self) {
        assert!(self.is_compatible(), "{self}");
    }

    /// The exit code for CI: success when every task replays, 1 otherwise.
    pub fn exit_code(&self) -> std::process::ExitCode {
        if self.is_compatible() {
            std::process::ExitCode::SUCCESS
        } else {
            std::process::ExitCode::from(1)
        }
    }
}

impl fmt::Display for ReplayReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let failing = self.failing().count();
        writeln!(
            f,
            "{} durable task(s) replayed: {} replay, {failing} would fail",
            self.tasks.len(),
            self.tasks.len() - failing
        )?;
        for task in &self.tasks {
            let head = format!("  {} (skill `{}`)", task.task_id, task.skill);
            match &task.verdict {
                Verdict::Replays {
                    entries,
                    next,
                    markers,
                } => {
                    let next = next
                        .as_deref()
                        .map_or_else(|| "then returns".to_owned(), |n| format!("then {n}"));
                    write!(f, "{head}: replays {entries} entr(ies), {next}")?;
                    for (name, value) in markers {
                        let path = if *value { "the new" } else { "the old" };
                        write!(f, "; crosses marker `{name}` ({path} code's path)")?;
                    }
                    writeln!(f)?;
                }
                Verdict::Diverges { why, .. } => writeln!(f, "{head}: DIVERGES: {why}")?,
                Verdict::NotRun(why) => writeln!(f, "{head}: WOULD NOT RUN: {why}")?,
            }
        }
        Ok(())
    }
}
