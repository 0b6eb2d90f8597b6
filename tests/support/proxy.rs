//! A TCP proxy in the test process, between a server process and its database: the test cuts
//! one replica's connections (each one open is closed, and a new one is closed as it comes),
//! or partitions it (nothing passes either way, the connections left open, as when the
//! network drops every packet), while the others keep theirs, then heals it; or, in front of
//! an agent, loses the answers to a client's next requests (their connections closed as the
//! answer comes back, after the agent did the work).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

/// A proxy to one address; it forwards until [`cut`](Self::cut), and stops when dropped.
pub struct Proxy {
    port: u16,
    state: Arc<State>,
    accept: AbortHandle,
}

struct State {
    cut: AtomicBool,
    /// Partitioned: nothing passes until healed (`true`), told to each connection.
    partitioned: tokio::sync::watch::Sender<bool>,
    /// The connections forwarding now.
    open: Mutex<Vec<AbortHandle>>,
    /// How many answers to lose ([`Proxy::lose_answers`]).
    lose: std::sync::atomic::AtomicUsize,
    /// How long each read waits before it is passed on, in milliseconds ([`Proxy::slow`]).
    delay_ms: std::sync::atomic::AtomicU64,
}

impl Proxy {
    /// A proxy on a free port of 127.0.0.1 to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let port = listener.local_addr().expect("its address").port();
        let state = Arc::new(State {
            cut: AtomicBool::new(false),
            partitioned: tokio::sync::watch::channel(false).0,
            open: Mutex::default(),
            lose: Default::default(),
            delay_ms: Default::default(),
        });
        let shared = Arc::clone(&state);
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if shared.cut.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let partitioned = shared.partitioned.subscribe();
                let lose = Arc::clone(&shared);
                let forward = tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    let (from_client, to_client) = client.into_split();
                    let (from_server, to_server) = server.into_split();
                    let up = pass(
                        from_client,
                        to_server,
                        partitioned.clone(),
                        Arc::clone(&lose),
                        false,
                    );
                    let down = pass(from_server, to_client, partitioned, lose, true);
                    let _ = tokio::join!(up, down);
                });
                let mut open = shared.open.lock().expect("the connections");
                open.retain(|c| !c.is_finished());
                open.push(forward.abort_handle());
            }
        })
        .abort_handle();
        Proxy {
            port,
            state,
            accept,
        }
    }

    /// Its port, on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The Postgres URL `url` (on 127.0.0.1) through this proxy: its port replaced by the
    /// proxy's.
    pub fn postgres_url(&self, url: &str) -> String {
        let (head, rest) = url.split_once("@127.0.0.1:").expect("a URL on 127.0.0.1");
        let path = rest.find('/').map_or("", |i| &rest[i..]);
        format!("{head}@127.0.0.1:{}{path}", self.port)
    }

    /// Closes every connection open through it, and each new one as it comes, until
    /// [`heal`](Self::heal).
    pub fn cut(&self) {
        self.state.cut.store(true, Ordering::SeqCst);
        for connection in self.state.open.lock().expect("the connections").drain(..) {
            connection.abort();
        }
    }

    /// Lets nothing through either way, the connections left open (a client's query waits
    /// for an answer that does not come, a new connection for its handshake), until
    /// [`heal`](Self::heal): what was sent meanwhile then goes on.
    pub fn partition(&self) {
        self.state.partitioned.send_replace(true);
    }

    /// Loses the next `n` answers: the first bytes the server sends back on a connection are
    /// not passed on, and the connection is closed instead (the request reached the server,
    /// which did its work; the client hears nothing of it).
    pub fn lose_answers(&self, n: usize) {
        self.state.lose.store(n, Ordering::SeqCst);
    }

    /// Holds what passes either way for `by` before passing it on, until
    /// [`heal`](Self::heal): a slow or congested network.
    pub fn slow(&self, by: std::time::Duration) {
        let ms = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        self.state.delay_ms.store(ms, Ordering::SeqCst);
    }

    /// Forwards again, at full speed, after [`cut`](Self::cut), [`partition`](Self::partition)
    /// or [`slow`](Self::slow).
    pub fn heal(&self) {
        self.state.delay_ms.store(0, Ordering::SeqCst);
        self.state.cut.store(false, Ordering::SeqCst);
        self.state.partitioned.send_replace(false);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}

/// Copies `from` to `to`, holding what it reads while `partitioned` says so and for the
/// proxy's delay; the way back (`answers`) loses answers while the proxy has some to lose.
async fn pass(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut partitioned: tokio::sync::watch::Receiver<bool>,
    state: Arc<State>,
    answers: bool,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        if partitioned.wait_for(|p| !*p).await.is_err() {
            return;
        }
        let n = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let lost = answers
            && state
                .lose
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
        if lost {
            // Both ways closed: the client's connection ends without its answer.
            return;
        }
        let delay = state.delay_ms.load(Ordering::SeqCst);
        if delay > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
        }
        if partitioned.wait_for(|p| !*p).await.is_err() || to.write_all(&buffer[..n]).await.is_err()
        {
            return;
        }
    }
}

/// The address of the Postgres URL `url` (on 127.0.0.1).
pub fn postgres_address(url: &str) -> SocketAddr {
    let (_, rest) = url.split_once("@127.0.0.1:").expect("a URL on 127.0.0.1");
    let port = rest.split('/').next().expect("a port");
    format!("127.0.0.1:{port}").parse().expect("an address")
}
