//! A clock the test owns ([`TestClock`]): durable sleeps wait on it until the test moves it.

use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, Driven};

/// A clock a test owns: it stands still until [`advance`](Self::advance) moves it, and the
/// durable sleeps (`ctx.sleep` in a `#[skill(durable)]` handler) of a server given it
/// ([`Server::clock`](crate::server::Server::clock)) wait for it, on a store that keeps
/// journals (SQLite, Postgres; the memory store keeps none, and its sleeps are tokio's): a
/// skill that sleeps three days is tested in milliseconds, and a test can see it waiting in
/// between. The server's limits count their request windows on it too, and a task's budget
/// is spent on it (`ctx.budget()`).
///
/// Cheap to clone: clones are the same clock.
///
/// ```
/// use std::time::Duration;
/// use a2a_card::server::Server;
/// use a2a_card::testing::{TestAgent, TestClock};
/// use a2a_card::{SkillContext, SkillError, agent, skill};
///
/// struct Reminder;
/// /// Reminds, later.
/// #[agent(url = "https://reminder.example.com/a2a")]
/// impl Reminder {
///     /// Says `text` again in three days.
///     #[skill(durable)]
///     async fn remind(&self, text: String, ctx: SkillContext) -> Result<String, SkillError> {
///         ctx.sleep(Duration::from_secs(3 * 24 * 3600)).await?;
///         Ok(text)
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// let clock = TestClock::new();
/// let agent = TestAgent::on_sqlite(Server::new(Reminder).clock(clock.clock())).await?;
/// let reminders = ReminderClient::connect_with(agent.connect()).await?;
/// let pending = reminders.remind("pay rent".into()).no_wait().await?;
/// clock.sleeping(1).await; // the handler waits on the clock now
/// clock.advance(Duration::from_secs(3 * 24 * 3600));
/// assert_eq!(pending.wait().await?, "pay rent");
/// # Ok::<(), Box<dyn std::error::Error>>(()) })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct TestClock {
    driven: Arc<Driven>,
}

impl std::fmt::Debug for TestClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClock")
            .field("now_ms", &self.now_ms())
            .field("sleeping", &*self.driven.sleeping.borrow())
            .finish()
    }
}

impl Default for TestClock {
    fn default() -> Self {
        TestClock::new()
    }
}

impl TestClock {
    /// A clock standing at the system's time now.
    pub fn new() -> TestClock {
        TestClock::at_ms(chrono::Utc::now().timestamp_millis())
    }

    /// A clock standing at `now_ms` (milliseconds since the Unix epoch).
    ///
    /// ```
    /// let clock = a2a_card::testing::TestClock::at_ms(1_700_000_000_000);
    /// assert_eq!(clock.now_ms(), 1_700_000_000_000);
    /// ```
    pub fn at_ms(now_ms: i64) -> TestClock {
        TestClock {
            driven: Arc::new(Driven::at_ms(now_ms)),
        }
    }

    /// The clock to give a server ([`Server::clock`](crate::server::Server::clock)).
    pub fn clock(&self) -> Clock {
        Clock::driven(Arc::clone(&self.driven))
    }

    /// The time it stands at, in milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        *self.driven.now_ms.borrow()
    }

    /// Moves the clock `by` forward: the sleeps whose deadline it reaches end (their handlers
    /// go on as the runtime gets to them).
    ///
    /// ```
    /// use std::time::Duration;
    /// let clock = a2a_card::testing::TestClock::at_ms(0);
    /// clock.advance(Duration::from_secs(3 * 24 * 3600));
    /// assert_eq!(clock.now_ms(), 259_200_000);
    /// ```
    pub fn advance(&self, by: Duration) {
        let ms = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        self.driven
            .now_ms
            .send_modify(|now| *now = now.saturating_add(ms));
    }

    /// Moves the clock to the earliest deadline a durable sleep waits for now (nothing when
    /// none waits, or it is due already), and returns that deadline: what a test does to run
    /// whatever is due next without knowing how long the handler sleeps.
    ///
    /// ```
    /// let clock = a2a_card::testing::TestClock::at_ms(0);
    /// assert_eq!(clock.advance_to_next_deadline(), None, "nothing sleeps");
    /// assert_eq!(clock.now_ms(), 0);
    /// ```
    pub fn advance_to_next_deadline(&self) -> Option<i64> {
        let deadline = self.driven.next_deadline()?;
        self.driven
            .now_ms
            .send_modify(|now| *now = (*now).max(deadline));
        Some(deadline)
    }

    /// How many durable sleeps wait on the clock now.
    pub fn sleepers(&self) -> usize {
        *self.driven.sleeping.borrow()
    }

    /// Returns once at least `n` durable sleeps wait on the clock (a handler reached its
    /// `ctx.sleep`): then [`advance`](Self::advance) moves them on.
    pub async fn sleeping(&self, n: usize) {
        let mut sleeping = self.driven.sleeping.subscribe();
        // The sender lives as long as `self`: the wait ends only once `n` sleep.
        let _ = sleeping.wait_for(|count| *count >= n).await;
    }
}
