//! The clock a server's durable sleeps read ([`Clock`]): the system's, or one a test owns
//! (`a2a_card::testing::TestClock`, feature `testing`), which stands still until the test
//! moves it.

use std::fmt;
use std::sync::Arc;

use tokio::sync::watch;

/// The time a server's durable sleeps (`ctx.sleep` in a `#[skill(durable)]` handler) read:
/// when one began, and when its deadline has come. [`Clock::system`] by default; a test gives
/// the server one it owns (`a2a_card::testing::TestClock`, feature `testing`) with
/// [`Server::clock`](crate::server::Server::clock), so that a skill that sleeps three days is tested
/// in milliseconds, on a store that keeps journals (SQLite, Postgres). On the memory store a
/// durable skill keeps no journal and its sleeps are tokio's: a test with tokio's clock paused
/// (`#[tokio::test(start_paused = true)]`) skips them.
///
/// ```
/// use a2a_card::server::Clock;
/// assert_eq!(format!("{:?}", Clock::system()), "Clock::System");
/// ```
#[derive(Clone, Default)]
pub struct Clock {
    driven: Option<Arc<Driven>>,
}

/// A clock a test drives: the time (milliseconds since the Unix epoch), how many sleeps wait
/// on it, and their deadlines.
pub(crate) struct Driven {
    pub(crate) now_ms: watch::Sender<i64>,
    pub(crate) sleeping: watch::Sender<usize>,
    pub(crate) deadlines: std::sync::Mutex<Vec<i64>>,
}

#[cfg_attr(not(feature = "testing"), allow(dead_code))]
impl Driven {
    /// A clock standing at `now_ms`, no sleep waiting on it.
    pub(crate) fn at_ms(now_ms: i64) -> Driven {
        Driven {
            now_ms: watch::Sender::new(now_ms),
            sleeping: watch::Sender::new(0),
            deadlines: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// The earliest deadline a sleep waits for, if one waits.
    pub(crate) fn next_deadline(&self) -> Option<i64> {
        let deadlines = self.deadlines.lock().unwrap_or_else(|p| p.into_inner());
        deadlines.iter().min().copied()
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.driven {
            None => f.write_str("Clock::System"),
            Some(driven) => write!(f, "Clock::Driven({} ms)", *driven.now_ms.borrow()),
        }
    }
}

impl Clock {
    /// The system's clock: sleeps wait as long as they say.
    pub fn system() -> Clock {
        Clock::default()
    }

    /// A clock that `driven` moves.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(crate) fn driven(driven: Arc<Driven>) -> Clock {
        Clock {
            driven: Some(driven),
        }
    }

    /// Now, in milliseconds since the Unix epoch.
    pub(crate) fn now_ms(&self) -> i64 {
        match &self.driven {
            None => chrono::Utc::now().timestamp_millis(),
            Some(driven) => *driven.now_ms.borrow(),
        }
    }

    /// Returns once it is `until_ms` (milliseconds since the Unix epoch) or later, without
    /// counting as a durable sleep (its deadline is not one [`Driven::next_deadline`] gives):
    /// a timer of the server's own, such as a question's input timeout.
    pub(crate) async fn wait_until_ms(&self, until_ms: i64) {
        match &self.driven {
            None => {
                let left = until_ms.saturating_sub(self.now_ms());
                if left > 0 {
                    tokio::time::sleep(std::time::Duration::from_millis(left.unsigned_abs())).await;
                }
            }
            Some(driven) => {
                let mut now = driven.now_ms.subscribe();
                let _ = now.wait_for(|now| *now >= until_ms).await;
            }
        }
    }

    /// Returns once it is `until_ms` (milliseconds since the Unix epoch) or later: a durable
    /// sleep, which a driven clock counts among its sleepers until it ends.
    pub(crate) async fn sleep_until_ms(&self, until_ms: i64) {
        // Counted out however the sleep ends (its handler may be dropped meanwhile).
        let _awake = self.driven.as_deref().map(|driven| {
            driven
                .deadlines
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(until_ms);
            driven.sleeping.send_modify(|n| *n += 1);
            Awake(driven, until_ms)
        });
        self.wait_until_ms(until_ms).await;
    }
}

/// Counts a sleep (and its deadline) out of [`Driven::sleeping`] when it ends.
struct Awake<'a>(&'a Driven, i64);

impl Drop for Awake<'_> {
    fn drop(&mut self) {
        {
            let mut deadlines = self.0.deadlines.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(i) = deadlines.iter().position(|d| *d == self.1) {
                deadlines.swap_remove(i);
            }
        }
        self.0.sleeping.send_modify(|n| *n = n.saturating_sub(1));
    }
}
