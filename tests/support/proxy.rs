//! A TCP proxy in the test process, between a server process and its database: the test cuts
//! one replica's connections (each one open is closed, and a new one is closed as it comes)
//! while the others keep theirs, then heals it.

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

#[derive(Default)]
struct State {
    cut: AtomicBool,
    /// The connections forwarding now.
    open: Mutex<Vec<AbortHandle>>,
}

impl Proxy {
    /// A proxy on a free port of 127.0.0.1 to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let port = listener.local_addr().expect("its address").port();
        let state = Arc::new(State::default());
        let shared = Arc::clone(&state);
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if shared.cut.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let forward = tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    let (mut client, mut server) = (client, server);
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
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

    /// Forwards new connections again.
    pub fn heal(&self) {
        self.state.cut.store(false, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}

/// The address of the Postgres URL `url` (on 127.0.0.1).
pub fn postgres_address(url: &str) -> SocketAddr {
    let (_, rest) = url.split_once("@127.0.0.1:").expect("a URL on 127.0.0.1");
    let port = rest.split('/').next().expect("a port");
    format!("127.0.0.1:{port}").parse().expect("an address")
}
