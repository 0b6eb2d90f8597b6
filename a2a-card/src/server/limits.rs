//! What protects the service from one caller: requests per window, running tasks at once, and
//! failed logins, per caller, per tenant and per skill ([`Limits`], given to
//! [`Server::limits`](super::Server::limits)); a call over a limit is refused before anything
//! is done with it (`429` with `Retry-After`).

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::store::Store;
use crate::principal::Principal;

/// A number of requests per window of time (fixed windows: the count starts again at each
/// window's start).
///
/// ```
/// use std::time::Duration;
/// use a2a_card::server::Rate;
///
/// assert_eq!(Rate::per_minute(600), Rate::new(600, Duration::from_secs(60)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    requests: u32,
    window: Duration,
}

impl Rate {
    /// `requests` per `window` (a window under a millisecond counts as one).
    pub fn new(requests: u32, window: Duration) -> Rate {
        Rate {
            requests,
            window: window.max(Duration::from_millis(1)),
        }
    }

    /// `requests` per second.
    pub fn per_second(requests: u32) -> Rate {
        Rate::new(requests, Duration::from_secs(1))
    }

    /// `requests` per minute.
    pub fn per_minute(requests: u32) -> Rate {
        Rate::new(requests, Duration::from_secs(60))
    }

    /// `requests` per hour.
    pub fn per_hour(requests: u32) -> Rate {
        Rate::new(requests, Duration::from_secs(3600))
    }
}

/// Limits that keep one caller from taking the whole agent, given to
/// [`Server::limits`](super::Server::limits). None is set by default.
///
/// | limit | counted per | what it bounds |
/// |---|---|---|
/// | [`per_caller`](Self::per_caller) | caller: its principal (scheme and subject), else its address | protocol requests per window |
/// | [`per_tenant`](Self::per_tenant) | tenant (the default tenant is one) | protocol requests per window |
/// | [`running_per_caller`](Self::running_per_caller) | caller | tasks running at once (until they end) |
/// | [`running_per_tenant`](Self::running_per_tenant) | tenant | tasks running at once |
/// | [`skill`](Self::skill), or `#[skill(concurrency = N)]` | skill | tasks of that skill running at once |
/// | [`failed_logins`](Self::failed_logins) | client address | refused credentials per window: past it, the client's requests are refused before any verifier runs |
/// | [`open_streams`](Self::open_streams) | this process | streams open at once (`SendStreamingMessage` and `SubscribeToTask`, until the caller or the task ends them) |
/// | [`open_streams_per_caller`](Self::open_streams_per_caller) | caller | streams open at once |
///
/// A call over a limit is refused before anything is done with it, and no task is made: HTTP
/// `429 Too Many Requests` with `Retry-After` (the seconds until the window that refused it
/// ends; `1` for running tasks and open streams), JSON-RPC error [`RATE_LIMITED`](super::auth::RATE_LIMITED)
/// (`-31429`, `ErrorInfo` reason `RATE_LIMITED`), HTTP+JSON `RESOURCE_EXHAUSTED`, gRPC
/// `RESOURCE_EXHAUSTED` with `retry-after` metadata. Each refusal is counted in the metrics
/// (`a2a.auth.refusals`, `a2a.reason` `rate_limited`).
///
/// Requests per window are counted for every replica together on Postgres (one counter row
/// per key and window), and by each process on SQLite and in memory; running tasks and failed
/// logins and open streams are counted by each process. The client address is the peer of the connection as
/// [`Listening::serve`](super::Listening::serve) sees it (behind a proxy, the proxy's): a
/// router served another way counts callers by principal alone unless it is served with
/// `into_make_service_with_connect_info::<SocketAddr>()`.
///
/// ```
/// use a2a_card::server::{Limits, Rate};
///
/// let limits = Limits::new()
///     .per_caller(Rate::per_minute(600))
///     .per_tenant(Rate::per_second(200))
///     .running_per_caller(10)
///     .skill("plan-trip", 2)
///     .failed_logins(Rate::per_minute(10));
/// # drop(limits);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Limits {
    per_caller: Option<Rate>,
    per_tenant: Option<Rate>,
    running_per_caller: Option<usize>,
    running_per_tenant: Option<usize>,
    skills: Vec<(String, usize)>,
    failed_logins: Option<Rate>,
    open_streams: Option<usize>,
    open_streams_per_caller: Option<usize>,
}

impl Limits {
    /// No limit yet.
    pub fn new() -> Limits {
        Limits::default()
    }

    /// At most `rate` protocol requests of one caller (its principal, else its address).
    pub fn per_caller(mut self, rate: Rate) -> Limits {
        self.per_caller = Some(rate);
        self
    }

    /// At most `rate` protocol requests in one tenant.
    pub fn per_tenant(mut self, rate: Rate) -> Limits {
        self.per_tenant = Some(rate);
        self
    }

    /// At most `tasks` tasks of one caller running at once (a task runs until it ends: one
    /// waiting for an answer runs).
    pub fn running_per_caller(mut self, tasks: usize) -> Limits {
        self.running_per_caller = Some(tasks);
        self
    }

    /// At most `tasks` tasks of one tenant running at once.
    pub fn running_per_tenant(mut self, tasks: usize) -> Limits {
        self.running_per_tenant = Some(tasks);
        self
    }

    /// At most `tasks` tasks of skill `id` running at once. The server refuses to start when
    /// the agent has no such skill. A skill may declare its own (`#[skill(concurrency = 2)]`);
    /// this one, given for the same skill, replaces it.
    pub fn skill(mut self, id: impl Into<String>, tasks: usize) -> Limits {
        let id = id.into();
        self.skills.retain(|(s, _)| *s != id);
        self.skills.push((id, tasks));
        self
    }

    /// At most `rate` refused credentials (`401`) from one client address; past it, the
    /// client's requests are refused (`429`) before any verifier runs, until the window ends.
    pub fn failed_logins(mut self, rate: Rate) -> Limits {
        self.failed_logins = Some(rate);
        self
    }

    /// At most `streams` streams open at once in this process, of every caller together: a
    /// `SendStreamingMessage` or `SubscribeToTask` past it is refused (`429`, `Retry-After:
    /// 1`) before a task is made or read, and an open stream counts until the caller closes it
    /// or its task ends. An open stream holds about 35 kB of resident memory on a 64-bit Linux
    /// server (book, *Performance*, *Ten thousand open streams*): the bound is the memory
    /// streams may take.
    ///
    /// ```
    /// use a2a_card::server::Limits;
    ///
    /// // At most 350 MB or so of open streams, and 100 of them for one caller.
    /// let limits = Limits::new().open_streams(10_000).open_streams_per_caller(100);
    /// # drop(limits);
    /// ```
    pub fn open_streams(mut self, streams: usize) -> Limits {
        self.open_streams = Some(streams);
        self
    }

    /// At most `streams` streams of one caller (its principal, else its address) open at once
    /// in this process; past it, as [`open_streams`](Self::open_streams).
    pub fn open_streams_per_caller(mut self, streams: usize) -> Limits {
        self.open_streams_per_caller = Some(streams);
        self
    }

    /// These limits with the concurrency each of `skills` declares (`#[skill(concurrency =
    /// N)]`) where the builder set none for it: [`skill`](Self::skill) overrides a declaration.
    pub(crate) fn with_declared(mut self, skills: &[crate::agent::SkillDecl]) -> Limits {
        for decl in skills.iter().filter(|d| !d.poisoned) {
            if let Some(max) = decl.concurrency
                && !self.skills.iter().any(|(id, _)| id == decl.id)
            {
                self.skills.push((decl.id.to_owned(), max));
            }
        }
        self
    }

    /// Each limit set, as the operators' console shows it: what it bounds, and how much.
    #[cfg(feature = "console")]
    pub(crate) fn in_force(&self) -> Vec<(String, String)> {
        let rate = |r: &Rate| format!("{} requests per {:?}", r.requests, r.window);
        let mut out = Vec::new();
        let mut put = |what: &str, value: Option<String>| {
            if let Some(value) = value {
                out.push((what.to_owned(), value));
            }
        };
        put("requests per caller", self.per_caller.as_ref().map(rate));
        put("requests per tenant", self.per_tenant.as_ref().map(rate));
        let count = |n: Option<usize>| n.map(|n| n.to_string());
        put("running tasks per caller", count(self.running_per_caller));
        put("running tasks per tenant", count(self.running_per_tenant));
        put(
            "failed logins per client",
            self.failed_logins.as_ref().map(rate),
        );
        for (skill, n) in &self.skills {
            put(&format!("running tasks of `{skill}`"), Some(n.to_string()));
        }
        out
    }

    /// The skill ids the limits name that `skills` does not have.
    pub(crate) fn unknown_skills<'a>(&'a self, skills: &[&str]) -> Vec<&'a str> {
        self.skills
            .iter()
            .map(|(id, _)| id.as_str())
            .filter(|id| !skills.contains(id))
            .collect()
    }
}

/// The peer address of a request's connection, where the server knows it (axum's
/// `ConnectInfo`, which [`Listening::serve`](super::Listening::serve) gives every request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Peer(pub(crate) IpAddr);

impl Peer {
    /// The peer of a request whose extensions hold `info`.
    pub(crate) fn of(
        info: Option<&axum::extract::ConnectInfo<std::net::SocketAddr>>,
    ) -> Option<Peer> {
        info.map(|info| Peer(info.0.ip()))
    }
}

/// The limits of one served agent, and their counters.
pub(crate) struct Limiter {
    limits: Limits,
    /// Where requests per window are counted for every replica, where the store does.
    store: Option<Arc<dyn Store>>,
    /// What keys are hashed with (counters here are kept by the hash of their key: nothing
    /// is allocated per request).
    hasher: RandomState,
    windows: Windows,
    logins: Windows,
    /// Running tasks and open streams, by the hash of their key.
    running: Arc<Mutex<HashMap<u64, usize>>>,
    /// The clock its windows read (the server's: [`Server::clock`](super::Server::clock)).
    clock: super::Clock,
}

/// Tasks running at once, counted until dropped.
#[derive(Default)]
pub(crate) struct Permits {
    /// Each released as it drops.
    _held: Vec<Permit>,
}

struct Permit {
    key: u64,
    running: Arc<Mutex<HashMap<u64, usize>>>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = running.get_mut(&self.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                running.remove(&self.key);
            }
        }
    }
}

/// What a counter counts: a caller, a tenant, a skill or a client address.
#[derive(Hash)]
enum Key<'a> {
    /// A caller by its principal's scheme and subject.
    Principal(&'a str, &'a str),
    /// A caller by its address.
    Address(IpAddr),
    Tenant(&'a str),
    Skill(&'a str),
    /// The streams open in this process.
    Streams,
    /// The streams of a caller (the key of the caller).
    StreamsOf(Box<Key<'a>>),
}

impl Key<'_> {
    /// The key of the caller `caller` (from `peer`): its principal, else its address.
    fn caller<'a>(caller: Option<&'a Principal>, peer: Option<Peer>) -> Option<Key<'a>> {
        match (caller, peer) {
            (Some(p), _) => Some(Key::Principal(p.scheme(), p.subject())),
            (None, Some(Peer(addr))) => Some(Key::Address(addr)),
            (None, None) => None,
        }
    }

    /// The key as a store that counts for every replica keeps it.
    fn text(&self) -> String {
        match self {
            Key::Principal(scheme, subject) => format!("caller/p/{scheme}/{subject}"),
            Key::Address(addr) => format!("caller/ip/{addr}"),
            Key::Tenant(tenant) => format!("tenant/{tenant}"),
            Key::Skill(skill) => format!("skill/{skill}"),
            Key::Streams => "streams".to_owned(),
            Key::StreamsOf(caller) => format!("streams/{}", caller.text()),
        }
    }
}

impl Limiter {
    /// The limiter of `limits`, counting requests per window on `store` where it counts for
    /// every replica (one shared with other processes), else here.
    pub(crate) fn new(limits: Limits, store: Option<Arc<dyn Store>>) -> Limiter {
        Limiter {
            limits,
            store,
            hasher: RandomState::new(),
            windows: Windows::default(),
            logins: Windows::default(),
            running: Arc::default(),
            clock: super::Clock::system(),
        }
    }

    /// This limiter, its windows read on `clock`.
    pub(crate) fn clocked(mut self, clock: super::Clock) -> Limiter {
        self.clock = clock;
        self
    }

    fn hash(&self, key: &Key<'_>) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Counts a request of `caller` (from `peer`) in `tenant`; the refusal when it is one too
    /// many.
    pub(crate) async fn request(
        &self,
        caller: Option<&Principal>,
        peer: Option<Peer>,
        tenant: Option<&str>,
    ) -> Result<(), Limited> {
        if let (Some(rate), Some(key)) = (self.limits.per_caller, Key::caller(caller, peer)) {
            self.count(&key, rate).await?;
        }
        if let Some(rate) = self.limits.per_tenant {
            self.count(&Key::Tenant(tenant.unwrap_or("")), rate).await?;
        }
        Ok(())
    }

    /// One more hit of `key` at `rate`: shared by the replicas where the store counts, else
    /// here.
    async fn count(&self, key: &Key<'_>, rate: Rate) -> Result<(), Limited> {
        let now = self.clock.now_ms();
        let window = millis(rate.window);
        let start = now - now % window;
        let shared = match &self.store {
            // Not counted by the store (or it failed: the limit holds here meanwhile).
            Some(store) => store.hit(&key.text(), start, window).await.ok().flatten(),
            None => None,
        };
        let hits = match shared {
            Some(hits) => hits,
            None => self.windows.hit(self.hash(key), start),
        };
        if hits > u64::from(rate.requests) {
            return Err(limited(start + window - now, "requests"));
        }
        Ok(())
    }

    /// Takes a running task of `caller` (from `peer`) in `tenant` running skill `skill`: the
    /// permits it holds until it ends, or the refusal when one is too many.
    pub(crate) fn run(
        &self,
        caller: Option<&Principal>,
        peer: Option<Peer>,
        tenant: Option<&str>,
        skill: &str,
    ) -> Result<Permits, Limited> {
        let mut wanted: Vec<(u64, usize)> = Vec::new();
        if let (Some(max), Some(key)) = (self.limits.running_per_caller, Key::caller(caller, peer))
        {
            wanted.push((self.hash(&key), max));
        }
        if let Some(max) = self.limits.running_per_tenant {
            wanted.push((self.hash(&Key::Tenant(tenant.unwrap_or(""))), max));
        }
        if let Some((_, max)) = self.limits.skills.iter().find(|(id, _)| id == skill) {
            wanted.push((self.hash(&Key::Skill(skill)), *max));
        }
        self.take(wanted, "running tasks")
    }

    /// Takes an open stream of `caller` (from `peer`): the permits it holds until it closes,
    /// or the refusal when one is too many.
    pub(crate) fn stream(
        &self,
        caller: Option<&Principal>,
        peer: Option<Peer>,
    ) -> Result<Permits, Limited> {
        let mut wanted: Vec<(u64, usize)> = Vec::new();
        if let Some(max) = self.limits.open_streams {
            wanted.push((self.hash(&Key::Streams), max));
        }
        if let (Some(max), Some(key)) = (
            self.limits.open_streams_per_caller,
            Key::caller(caller, peer),
        ) {
            wanted.push((self.hash(&Key::StreamsOf(Box::new(key))), max));
        }
        self.take(wanted, "open streams")
    }

    /// One permit of each of `wanted` (a counter's key and its bound), or, when one of them
    /// is at its bound, none and the refusal of too many `what`.
    fn take(&self, wanted: Vec<(u64, usize)>, what: &str) -> Result<Permits, Limited> {
        if wanted.is_empty() {
            return Ok(Permits::default());
        }
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if wanted
            .iter()
            .any(|(key, max)| running.get(key).copied().unwrap_or(0) >= *max)
        {
            return Err(limited(1_000, what));
        }
        let held = wanted
            .into_iter()
            .map(|(key, _)| {
                *running.entry(key).or_insert(0) += 1;
                Permit {
                    key,
                    running: Arc::clone(&self.running),
                }
            })
            .collect();
        Ok(Permits { _held: held })
    }

    /// Whether the client at `peer` may try its credentials: the refusal once it failed too
    /// often in this window.
    pub(crate) fn may_log_in(&self, peer: Option<Peer>) -> Result<(), Limited> {
        let (Some(rate), Some(Peer(addr))) = (self.limits.failed_logins, peer) else {
            return Ok(());
        };
        let now = self.clock.now_ms();
        let window = millis(rate.window);
        let start = now - now % window;
        let key = self.hash(&Key::Address(addr));
        if self.logins.get(key, start) >= u64::from(rate.requests) {
            return Err(limited(start + window - now, "failed logins"));
        }
        Ok(())
    }

    /// Counts a failed login of the client at `peer`.
    pub(crate) fn failed_login(&self, peer: Option<Peer>) {
        if let (Some(rate), Some(Peer(addr))) = (self.limits.failed_logins, peer) {
            let now = self.clock.now_ms();
            let window = millis(rate.window);
            self.logins
                .hit(self.hash(&Key::Address(addr)), now - now % window);
        }
    }
}

/// A call over one of the agent's limits, refused (`429`): to be tried again in `retry_after`
/// seconds.
#[derive(Debug, Clone)]
pub(crate) struct Limited {
    pub(crate) retry_after: u64,
    pub(crate) message: String,
}

/// The refusal of a call over a limit of `what`, to be tried again in `ms` milliseconds.
fn limited(ms: i64, what: &str) -> Limited {
    let retry_after = u64::try_from(ms.max(1)).unwrap_or(1).div_ceil(1_000).max(1);
    Limited {
        retry_after,
        message: format!(
            "too many {what}: this agent's limit is reached; try again in {retry_after} s"
        ),
    }
}

/// Hits per key (its hash) in fixed windows, counted here: each key's current window and its
/// count.
#[derive(Default)]
struct Windows(Mutex<HashMap<u64, (i64, u64)>>);

/// How many keys a counter keeps before it drops those of past windows.
const KEYS: usize = 100_000;

impl Windows {
    /// One more hit of `key` in the window that starts at `start`: the hits so far.
    fn hit(&self, key: u64, start: i64) -> u64 {
        let mut windows = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if windows.len() >= KEYS && !windows.contains_key(&key) {
            windows.retain(|_, (at, _)| *at >= start);
        }
        let entry = windows.entry(key).or_insert((start, 0));
        if entry.0 != start {
            *entry = (start, 0);
        }
        entry.1 += 1;
        entry.1
    }

    /// The hits of `key` in the window that starts at `start`.
    fn get(&self, key: u64, start: i64) -> u64 {
        let windows = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match windows.get(&key) {
            Some((at, hits)) if *at == start => *hits,
            _ => 0,
        }
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::principal::Identity;

    #[tokio::test]
    async fn the_request_past_the_rate_is_refused_until_the_window_ends() {
        let limiter = Limiter::new(Limits::new().per_caller(Rate::per_hour(3)), None);
        let alice = Principal::new("bearer", Identity::new("alice"));
        for _ in 0..3 {
            assert!(limiter.request(Some(&alice), None, None).await.is_ok());
        }
        let Err(Limited { retry_after, .. }) = limiter.request(Some(&alice), None, None).await
        else {
            panic!("the fourth is refused")
        };
        assert!((1..=3600).contains(&retry_after), "{retry_after}");
        // Another caller counts apart.
        let bob = Principal::new("bearer", Identity::new("bob"));
        assert!(limiter.request(Some(&bob), None, None).await.is_ok());
    }

    #[test]
    fn running_tasks_are_counted_until_their_permits_drop() {
        let limiter = Limiter::new(Limits::new().skill("plan", 2), None);
        let one = limiter.run(None, None, None, "plan").expect("one");
        let two = limiter.run(None, None, None, "plan").expect("two");
        assert!(limiter.run(None, None, None, "plan").is_err(), "a third");
        assert!(
            limiter.run(None, None, None, "other").is_ok(),
            "another skill"
        );
        drop(one);
        assert!(limiter.run(None, None, None, "plan").is_ok(), "room again");
        drop(two);
    }

    #[test]
    fn open_streams_are_counted_in_all_and_per_caller_until_they_close() {
        let limiter = Limiter::new(
            Limits::new().open_streams(3).open_streams_per_caller(2),
            None,
        );
        let alice = Principal::new("bearer", Identity::new("alice"));
        let bob = Principal::new("bearer", Identity::new("bob"));
        let one = limiter.stream(Some(&alice), None).expect("one");
        let _two = limiter.stream(Some(&alice), None).expect("two");
        let Err(refused) = limiter.stream(Some(&alice), None) else {
            panic!("alice's third is refused")
        };
        assert_eq!(refused.retry_after, 1);
        assert!(
            refused.message.contains("open streams"),
            "{}",
            refused.message
        );
        let _three = limiter.stream(Some(&bob), None).expect("bob's first");
        assert!(limiter.stream(Some(&bob), None).is_err(), "four in all");
        // Running tasks count apart.
        assert!(limiter.run(Some(&bob), None, None, "plan").is_ok());
        drop(one);
        assert!(limiter.stream(Some(&alice), None).is_ok(), "room again");
    }

    #[test]
    fn failed_logins_past_the_rate_shut_the_client_out() {
        let limiter = Limiter::new(Limits::new().failed_logins(Rate::per_hour(2)), None);
        let peer = Some(Peer("10.0.0.7".parse().unwrap()));
        let other = Some(Peer("10.0.0.8".parse().unwrap()));
        limiter.failed_login(peer);
        assert!(limiter.may_log_in(peer).is_ok());
        limiter.failed_login(peer);
        assert!(limiter.may_log_in(peer).is_err());
        assert!(limiter.may_log_in(other).is_ok());
        assert!(limiter.may_log_in(None).is_ok(), "no address, no count");
    }
}
