//! Push notifications: which webhook URLs are accepted, and delivery with retries.

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tracing::Instrument as _;

use crate::outbound::ExtraRoots;
use a2a::{A2AError, TaskPushNotificationConfig};
use a2a_server::PushConfigStore;

use super::store::Event;
use tokio::sync::mpsc;

/// Which webhooks the agent posts task updates to, and how hard it tries.
///
/// By default a webhook URL must be `http` to a host that is not loopback (`127.0.0.0/8`,
/// `::1`, `localhost`), link-local (`169.254.0.0/16`, `fe80::/10`, which holds cloud metadata
/// services), private (`10/8`, `172.16/12`, `192.168/16`, `fc00::/7`), unspecified, shared
/// (`100.64/10`) or multicast: a caller must not be able to make the agent reach into its own
/// network. A URL that names such an address, or a host name that resolves to one, is refused
/// when the config is set (`-32602`), and every delivery resolves again and connects only to
/// allowed addresses. Redirects are not followed.
///
/// Each status and artifact update is POSTed as the A2A 1.0 `StreamResponse` JSON, with the
/// config's `token` in `A2A-Notification-Token` and `X-A2A-Notification-Token` (the spellings
/// of the official SDKs) and its credentials in `Authorization`; a
/// failed delivery (no connection, or a status other than 2xx) is retried with exponential
/// backoff, and the updates of one task are delivered in order.
///
/// Webhooks are `http` or `https` (rustls, with the platform's certificate roots and any given
/// to [`root_certificates_pem`](Self::root_certificates_pem)).
///
/// ```
/// use std::time::Duration;
/// use a2a_card::server::Webhooks;
///
/// // Tests that post to a webhook on this machine:
/// let webhooks = Webhooks::default().allow_loopback(true).retries(2).backoff(Duration::from_millis(50));
/// # drop(webhooks);
/// ```
#[derive(Debug, Clone)]
pub struct Webhooks {
    allow_loopback: bool,
    allow_private: bool,
    retries: u32,
    backoff: Duration,
    timeout: Duration,
    roots: ExtraRoots,
}

impl Default for Webhooks {
    fn default() -> Self {
        Webhooks {
            allow_loopback: false,
            allow_private: false,
            retries: 4,
            backoff: Duration::from_millis(250),
            timeout: Duration::from_secs(10),
            roots: ExtraRoots::default(),
        }
    }
}

impl Webhooks {
    /// Accepts webhooks on loopback addresses (for tests and local development).
    pub fn allow_loopback(mut self, yes: bool) -> Self {
        self.allow_loopback = yes;
        self
    }

    /// Accepts webhooks on private, shared and link-local addresses (an agent deployed beside
    /// its callers on a private network).
    pub fn allow_private_networks(mut self, yes: bool) -> Self {
        self.allow_private = yes;
        self
    }

    /// How many times a failed delivery is tried again (default 4).
    pub fn retries(mut self, n: u32) -> Self {
        self.retries = n;
        self
    }

    /// The wait before the first retry, doubled for each next one (default 250 ms).
    pub fn backoff(mut self, first: Duration) -> Self {
        self.backoff = first;
        self
    }

    /// How long one delivery may take (default 10 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Trusts the certificates of a PEM bundle beside the platform's roots, for https webhooks
    /// whose certificates a private CA signed (call again to add more). A bundle that holds no
    /// certificate stops the server from starting, with a message that says so.
    ///
    /// ```no_run
    /// use a2a_card::server::Webhooks;
    /// let webhooks = Webhooks::default().root_certificates_pem(std::fs::read("internal-ca.pem").unwrap());
    /// # drop(webhooks);
    /// ```
    pub fn root_certificates_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        self.roots.add(pem.as_ref());
        self
    }

    /// Why the agent does not post to `ip`, if it does not.
    fn refuses(&self, ip: IpAddr) -> Option<&'static str> {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
            v4 => v4,
        };
        let (loopback, private, other) = match ip {
            IpAddr::V4(v4) => {
                let [a, b, ..] = v4.octets();
                (
                    v4.is_loopback(),
                    v4.is_private() || v4.is_link_local() || (a == 100 && (64..128).contains(&b)),
                    v4.is_unspecified() || v4.is_multicast() || v4.is_broadcast(),
                )
            }
            IpAddr::V6(v6) => {
                let first = v6.segments()[0];
                (
                    v6.is_loopback(),
                    (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfe80,
                    v6.is_unspecified() || v6.is_multicast(),
                )
            }
        };
        if other {
            Some("an unspecified, broadcast or multicast address")
        } else if loopback && !self.allow_loopback {
            Some("a loopback address")
        } else if private && !self.allow_private {
            Some("a private or link-local address")
        } else {
            None
        }
    }

    /// Checks a webhook URL before it is stored: `http` or `https`, and a host the agent may
    /// post to.
    pub(crate) async fn check(&self, url: &str) -> Result<(), A2AError> {
        let refuse = |why: String| {
            A2AError::invalid_params(format!(
                "push notification URL `{}` is refused: {why}",
                shorten(url)
            ))
        };
        let parsed =
            url::Url::parse(url).map_err(|e| refuse(format!("it is not an absolute URL ({e})")))?;
        match parsed.scheme() {
            "http" | "https" => {}
            other => {
                return Err(refuse(format!(
                    "the scheme is `{other}`; a webhook is an http or https URL"
                )));
            }
        }
        let Some(host) = parsed.host() else {
            return Err(refuse("it has no host".into()));
        };
        let port = parsed.port_or_known_default().unwrap_or(80);
        let addrs: Vec<IpAddr> = match host {
            url::Host::Ipv4(ip) => vec![IpAddr::V4(ip)],
            url::Host::Ipv6(ip) => vec![IpAddr::V6(ip)],
            url::Host::Domain(name) => {
                if a2a_card_rules::urls::is_loopback_name(name) && !self.allow_loopback {
                    return Err(refuse("it names a loopback host".into()));
                }
                tokio::net::lookup_host((name.trim_end_matches('.'), port))
                    .await
                    .map_err(|e| refuse(format!("its host does not resolve ({e})")))?
                    .map(|a| a.ip())
                    .collect()
            }
        };
        for ip in addrs {
            if let Some(why) = self.refuses(ip) {
                return Err(refuse(format!("its host is {why} ({ip})")));
            }
        }
        Ok(())
    }

    /// The check of a URL whose host is an IP literal (host names go through the resolver).
    fn check_literal(&self, url: &str) -> Result<(), String> {
        let parsed = url::Url::parse(url).map_err(|e| e.to_string())?;
        let ip = match parsed.host() {
            Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
            Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
            _ => return Ok(()),
        };
        match self.refuses(ip) {
            Some(why) => Err(format!("the webhook's host is {why}")),
            None => Ok(()),
        }
    }
}

/// A URL cut for messages.
fn shorten(url: &str) -> String {
    const MAX: usize = 200;
    if url.len() <= MAX {
        return url.to_owned();
    }
    let mut end = MAX;
    while !url.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &url[..end])
}

/// Resolves webhook hosts, keeping only the addresses the policy allows: a host name cannot
/// lead a delivery to a refused address, whatever it resolves to at the time.
struct GuardedResolver(Webhooks);

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.0.clone();
        Box::pin(async move {
            let found = tokio::net::lookup_host((name.as_str(), 0)).await?;
            let allowed: Vec<SocketAddr> =
                found.filter(|a| policy.refuses(a.ip()).is_none()).collect();
            if allowed.is_empty() {
                return Err(format!(
                    "webhook host `{}` resolves to no address this agent posts to",
                    name.as_str()
                )
                .into());
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// An update waiting for delivery, with the webhooks it goes to.
/// An update to post: the task's webhooks, the update, and the trace context it was recorded
/// in (W3C headers; none without the `otel` feature).
type Queued = (Arc<Vec<TaskPushNotificationConfig>>, Arc<Event>, Trace);

/// W3C trace-context headers.
type Trace = Vec<(String, String)>;

/// Posts the updates of tasks to their webhooks: in order per task, with retries, off the
/// task's own path (neither a slow webhook nor the config store slows the skill or the
/// caller).
///
/// Each task's webhooks are read from the config store once and then known here: set when
/// this process saves or deletes one, read again after [`KNOWN_FOR`] (a webhook another
/// replica registers for a task running here is posted to from then on), forgotten when the
/// task ends.
pub(crate) struct Delivery {
    policy: Webhooks,
    store: Arc<dyn PushConfigStore>,
    client: reqwest::Client,
    queues: Mutex<HashMap<String, mpsc::UnboundedSender<Queued>>>,
    known: Mutex<HashMap<String, Known>>,
    /// The updates to deliver, in order, for the dispatcher that reads their webhooks.
    inbox: std::sync::OnceLock<mpsc::UnboundedSender<(String, Arc<Event>, Trace)>>,
}

/// A task's webhooks as known here, and since when.
struct Known {
    at: std::time::Instant,
    configs: Arc<Vec<TaskPushNotificationConfig>>,
}

/// How long the webhooks of a task are taken as known before they are read again.
const KNOWN_FOR: Duration = Duration::from_secs(1);

impl fmt::Debug for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Delivery")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Delivery {
    pub(crate) fn new(
        policy: Webhooks,
        store: Arc<dyn PushConfigStore>,
    ) -> Result<Delivery, String> {
        let builder = reqwest::Client::builder()
            .timeout(policy.timeout)
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(GuardedResolver(policy.clone())));
        let client = policy
            .roots
            .apply(builder)
            .and_then(|b| b.build().map_err(|e| e.to_string()))
            .map_err(|e| format!("the webhook client cannot be built: {e}"))?;
        Ok(Delivery {
            policy,
            store,
            client,
            queues: Mutex::new(HashMap::new()),
            known: Mutex::new(HashMap::new()),
            inbox: std::sync::OnceLock::new(),
        })
    }

    /// Whether `event` of `task` may have somewhere to go: `false` when the task is known to
    /// have no webhook (the caller then need not make the update at all).
    pub(crate) fn wants(&self, task: &str, event: &Event) -> bool {
        if event.ends() {
            return true;
        }
        let known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        !known
            .get(task)
            .is_some_and(|k| k.configs.is_empty() && k.at.elapsed() < KNOWN_FOR)
    }

    /// Takes `configs` as the webhooks of `task` (this process has just saved them), or
    /// forgets what was known (`None`: read them again).
    pub(crate) fn know(&self, task: &str, configs: Option<Vec<TaskPushNotificationConfig>>) {
        match configs {
            Some(configs) => self.remember(task, Arc::new(configs)),
            None => {
                let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
                known.remove(task);
            }
        }
    }

    /// Queues `event` for every webhook of `task`; returns at once.
    pub(crate) fn deliver(self: &Arc<Self>, task: &str, event: Arc<Event>) {
        self.deliver_in(task, event, &tracing::Span::current());
    }

    /// [`deliver`](Self::deliver), in the trace of `span` (the task's).
    pub(crate) fn deliver_in(
        self: &Arc<Self>,
        task: &str,
        event: Arc<Event>,
        span: &tracing::Span,
    ) {
        let inbox = self.inbox.get_or_init(|| {
            let (sender, receiver) = mpsc::unbounded_channel();
            tokio::spawn(Arc::clone(self).dispatch(receiver));
            sender
        });
        let trace = super::telemetry::outgoing_headers(span);
        let _ = inbox.send((task.to_owned(), event, trace));
    }

    /// Hands each update to its task's worker, with the task's webhooks.
    async fn dispatch(
        self: Arc<Self>,
        mut inbox: mpsc::UnboundedReceiver<(String, Arc<Event>, Trace)>,
    ) {
        while let Some((task, event, trace)) = inbox.recv().await {
            let configs = self.webhooks_of(&task).await;
            let terminal = event.ends();
            if terminal {
                self.know(&task, None);
            }
            let mut queues = self.queues.lock().unwrap_or_else(|p| p.into_inner());
            if configs.is_empty() {
                if terminal {
                    queues.remove(&task);
                }
                continue;
            }
            let sender = queues.entry(task.clone()).or_insert_with(|| {
                let (sender, receiver) = mpsc::unbounded_channel();
                tokio::spawn(Arc::clone(&self).run(receiver));
                sender
            });
            let _ = sender.send((configs, event, trace));
            if terminal {
                // The worker delivers what is queued, then ends.
                queues.remove(&task);
            }
        }
    }

    /// The webhooks of `task`, as known or read again (none when they cannot be read).
    async fn webhooks_of(&self, task: &str) -> Arc<Vec<TaskPushNotificationConfig>> {
        {
            let known = self.known.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(k) = known.get(task).filter(|k| k.at.elapsed() < KNOWN_FOR) {
                return Arc::clone(&k.configs);
            }
        }
        let configs = match self.store.list(task).await {
            Ok(configs) => Arc::new(configs),
            Err(e) => {
                tracing::warn!(task, error = %e.message, "push configs could not be read");
                Arc::default()
            }
        };
        self.remember(task, Arc::clone(&configs));
        configs
    }

    /// Takes `configs` as the webhooks of `task`, from now.
    fn remember(&self, task: &str, configs: Arc<Vec<TaskPushNotificationConfig>>) {
        let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        known.insert(
            task.to_owned(),
            Known {
                at: std::time::Instant::now(),
                configs,
            },
        );
    }

    async fn run(self: Arc<Self>, mut queue: mpsc::UnboundedReceiver<Queued>) {
        while let Some((configs, event, trace)) = queue.recv().await {
            // The event's JSON, made once (the stream frames and the log share it).
            let body = axum::body::Bytes::copy_from_slice(event.json().as_bytes());
            for config in configs.iter() {
                self.post(config, &body, &trace).await;
            }
        }
    }

    /// One update to one webhook, tried again on failure.
    async fn post(
        &self,
        config: &TaskPushNotificationConfig,
        body: &axum::body::Bytes,
        trace: &Trace,
    ) {
        let mut wait = self.policy.backoff;
        for attempt in 0..=self.policy.retries {
            let span = super::telemetry::push_span(&config.task_id, attempt, trace);
            if attempt > 0 {
                tokio::time::sleep(wait).await;
                wait = wait.saturating_mul(2);
            }
            // IP literals skip the resolver: check them here too.
            if let Err(e) = self.policy.check_literal(&config.url) {
                tracing::warn!(task = %config.task_id, error = %e, "push notification not sent");
                return;
            }
            let mut request = self
                .client
                .post(&config.url)
                .header("Content-Type", "application/json")
                .body(body.clone());
            if let Some(token) = &config.token {
                // Both spellings: the official Rust and Go SDKs read the first, the Python and
                // JS SDKs the second.
                request = request
                    .header("A2A-Notification-Token", token)
                    .header("X-A2A-Notification-Token", token);
            }
            // The webhook's request continues the task's trace, as a child of this attempt.
            if !trace.is_empty() {
                for (name, value) in super::telemetry::outgoing_headers(&span) {
                    request = request.header(name, value);
                }
            }
            if let Some(auth) = &config.authentication
                && let Some(credentials) = &auth.credentials
            {
                request = request.header("Authorization", format!("{} {credentials}", auth.scheme));
            }
            match request.send().instrument(span.clone()).await {
                Ok(response) if response.status().is_success() => {
                    span.record("http.response.status_code", response.status().as_u16());
                    super::telemetry::pushed(true, attempt > 0);
                    return;
                }
                Ok(response) => {
                    span.record("http.response.status_code", response.status().as_u16());
                    tracing::warn!(task = %config.task_id, status = %response.status(), attempt, "webhook refused a push notification")
                }
                Err(e) => {
                    tracing::warn!(task = %config.task_id, error = %crate::outbound::error_chain(&e), attempt, "push notification delivery failed")
                }
            }
        }
        tracing::warn!(task = %config.task_id, "push notification dropped after every retry");
        super::telemetry::pushed(false, self.policy.retries > 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::fixtures::status;

    /// Nothing of a finished task stays in the dispatcher's maps, webhook or not.
    #[tokio::test]
    async fn the_dispatcher_forgets_each_task_that_ended() {
        let configs = Arc::new(a2a_server::InMemoryPushConfigStore::new());
        let delivery =
            Arc::new(Delivery::new(Webhooks::default(), configs.clone()).expect("a delivery"));
        for i in 0..200 {
            let task = format!("t{i}");
            // As the lifecycle does for a new task: its webhooks (one task in ten has one, on
            // loopback, which the default policy refuses: no request is made).
            let hooks = if i % 10 == 0 {
                vec![TaskPushNotificationConfig {
                    tenant: None,
                    id: Some("h".to_owned()),
                    task_id: task.clone(),
                    url: "http://127.0.0.1:9/hook".to_owned(),
                    token: None,
                    authentication: None,
                }]
            } else {
                Vec::new()
            };
            delivery.know(&task, Some(hooks));
            delivery.deliver(
                &task,
                Arc::new(status(&task, a2a::TaskState::Working).into()),
            );
            delivery.deliver(
                &task,
                Arc::new(status(&task, a2a::TaskState::Completed).into()),
            );
        }
        for _ in 0..100 {
            let known = delivery.known.lock().map(|k| k.len()).unwrap_or(1);
            let queues = delivery.queues.lock().map(|q| q.len()).unwrap_or(1);
            if known == 0 && queues == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let known = delivery.known.lock().map(|k| k.len()).unwrap_or(1);
        let queues = delivery.queues.lock().map(|q| q.len()).unwrap_or(1);
        panic!("{known} tasks' webhooks and {queues} queues kept after every task ended");
    }

    #[test]
    fn address_ranges() {
        let strict = Webhooks::default();
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "224.0.0.1",
        ] {
            assert!(
                strict.refuses(ip.parse().unwrap()).is_some(),
                "{ip} is refused"
            );
        }
        for ip in [
            "93.184.216.34",
            "2606:2800:220:1::1",
            "172.32.0.1",
            "100.128.0.1",
        ] {
            assert!(
                strict.refuses(ip.parse().unwrap()).is_none(),
                "{ip} is allowed"
            );
        }
        let local = Webhooks::default().allow_loopback(true);
        assert!(local.refuses("127.0.0.1".parse().unwrap()).is_none());
        assert!(local.refuses("10.0.0.1".parse().unwrap()).is_some());
    }
}
