//! The processes that share a store, as the store knows them ([`Store::replicas`](super::Store::replicas)).

use std::time::Duration;

/// One process serving a store's tasks, as the store last saw it: what the operators' console
/// shows on its replicas page. The SQL stores keep one row per replica, renewed every third of
/// the lease; the memory store (one process) keeps none.
///
/// ```
/// use std::time::Duration;
/// use a2a_card::server::store::Replica;
///
/// let replica = Replica::new("r-1", Duration::from_millis(1200), 3, true, Duration::from_secs(10));
/// assert!(replica.is_live());
/// assert_eq!(replica.running, 3);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Replica {
    /// The replica's id (a random id each process takes when it opens the store).
    pub id: String,
    /// How long ago the replica last renewed its lease, by the database's clock.
    pub seen: Duration,
    /// How many running tasks the replica owns.
    pub running: u64,
    /// Whether the replica is this process.
    pub this: bool,
    /// How long a replica that stopped renewing still owns its running tasks.
    pub lease: Duration,
}

impl Replica {
    /// Replica `id`, seen `seen` ago, owning `running` running tasks; `this`: the asking
    /// process; `lease`: the store's lease.
    ///
    /// ```
    /// use std::time::Duration;
    /// use a2a_card::server::store::Replica;
    ///
    /// let gone = Replica::new("r-2", Duration::from_secs(30), 1, false, Duration::from_secs(10));
    /// assert!(!gone.is_live()); // its running task is another replica's to take over
    /// ```
    pub fn new(
        id: impl Into<String>,
        seen: Duration,
        running: u64,
        this: bool,
        lease: Duration,
    ) -> Replica {
        Replica {
            id: id.into(),
            seen,
            running,
            this,
            lease,
        }
    }

    /// Whether its lease still holds: it renewed within the lease.
    ///
    /// ```
    /// use std::time::Duration;
    /// use a2a_card::server::store::Replica;
    ///
    /// let live = Replica::new("r-1", Duration::ZERO, 0, true, Duration::from_secs(10));
    /// assert!(live.is_live());
    /// ```
    pub fn is_live(&self) -> bool {
        self.seen <= self.lease
    }
}
