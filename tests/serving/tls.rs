//! https on every outbound path: the caller's side reaching an agent behind TLS, webhooks
//! POSTed over https, and a JWKS fetched over https. Each trusts a test CA given as PEM, and
//! refuses a certificate it was not told to trust, saying why.

use crate::fight_club::agent as fight;
use crate::support;
use crate::trip_planner::agent as trip;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a::{SendMessageConfiguration, TaskPushNotificationConfig, TaskState};
use a2a_card::client::{ClientError, Connect};
use a2a_card::server::auth::{HttpJwks, JwksFetcher};
use a2a_card::server::{Server, ServerError, Webhooks};
use a2a_card::{Input, Output};
use fight::{FightClub, FightClubClient, FightComparison};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use serde_json::{Value, json};
use support::client::{card, client, data_part, request, serve, task};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use trip::TripPlanner;

/// A CA made for the test, and a server certificate for `localhost` that it signed.
struct TestCa {
    /// The CA's certificate: what a client is told to trust.
    pem: String,
    tls: Arc<ServerConfig>,
}

fn test_ca() -> TestCa {
    let ca_key = KeyPair::generate().expect("a CA key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "a2a-card test CA");
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca.self_signed(&ca_key).expect("the CA certificate");
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().expect("a server key");
    let leaf = CertificateParams::new(vec!["localhost".to_owned()])
        .expect("server parameters")
        .signed_by(&key, &issuer)
        .expect("the server certificate");
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let tls = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone()], key)
        .expect("a TLS server configuration");
    TestCa {
        pem: ca_cert.pem(),
        tls: Arc::new(tls),
    }
}

/// TLS on a free loopback port, in front of a plain-HTTP server that starts later.
struct Front {
    listener: TcpListener,
    port: u16,
    /// Handshakes completed.
    handshakes: Arc<AtomicUsize>,
}

impl Front {
    async fn bind() -> Front {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("an address").port();
        Front {
            listener,
            port,
            handshakes: Arc::default(),
        }
    }

    /// `https://localhost:PORT`: the name the certificate is for.
    fn url(&self) -> String {
        format!("https://localhost:{}", self.port)
    }

    /// Forwards each connection's plaintext to `backend`, from now on.
    fn forward_to(self, tls: Arc<ServerConfig>, backend: SocketAddr) -> Arc<AtomicUsize> {
        let acceptor = TlsAcceptor::from(tls);
        let handshakes = Arc::clone(&self.handshakes);
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = self.listener.accept().await else {
                    return;
                };
                let (acceptor, handshakes) = (acceptor.clone(), Arc::clone(&self.handshakes));
                tokio::spawn(async move {
                    // A client that does not trust the certificate ends here.
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    handshakes.fetch_add(1, Ordering::SeqCst);
                    if let Ok(mut plain) = TcpStream::connect(backend).await {
                        let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                    }
                });
            }
        });
        handshakes
    }
}

fn address(base: &str) -> SocketAddr {
    base.trim_start_matches("http://")
        .parse()
        .expect("a served address")
}

/// The fight club served over plain HTTP, with TLS in front: its card names the https URL.
async fn fight_club_behind_tls(
    ca: &TestCa,
) -> (support::client::Running, String, Arc<AtomicUsize>) {
    let front = Front::bind().await;
    let url = front.url();
    let running = serve(Server::new(FightClub).public_url(url.clone())).await;
    let handshakes = front.forward_to(Arc::clone(&ca.tls), address(&running.base));
    (running, url, handshakes)
}

#[tokio::test]
async fn an_agent_behind_https_is_called_with_its_ca_trusted() {
    let ca = test_ca();
    let (running, url, handshakes) = fight_club_behind_tls(&ca).await;
    let client = FightClubClient::connect_with(Connect::new(&url).root_certificates_pem(&ca.pem))
        .await
        .expect("the card is read over https");
    let answer = client
        .fight_comparison(Input::Data(FightComparison {
            a: "Lion".into(),
            b: "Tiger".into(),
        }))
        .await
        .expect("a verdict over https");
    let Output::Data(verdict) = answer else {
        panic!("data in, data out: {answer:?}")
    };
    assert_eq!(verdict.winner, "Tiger");
    // The card sends callers to the https URL, and they went there (the card request and the
    // call share one connection).
    let served = card(&running.base).await;
    assert!(
        served
            .supported_interfaces
            .iter()
            .all(|i| i.url.starts_with(&url)),
        "{:?}",
        served.supported_interfaces
    );
    assert!(handshakes.load(Ordering::SeqCst) >= 1);
}

#[tokio::test]
async fn an_agent_whose_certificate_is_not_trusted_is_refused_with_the_reason() {
    let ca = test_ca();
    let (_running, url, handshakes) = fight_club_behind_tls(&ca).await;
    let error = Connect::new(&url)
        .discover()
        .await
        .expect_err("a certificate of an unknown CA");
    let ClientError::Unreachable { message, .. } = &error else {
        panic!("unreachable, not {error:?}")
    };
    assert!(
        message.to_lowercase().contains("certificate"),
        "the message says the certificate is why: {message}"
    );
    assert_eq!(handshakes.load(Ordering::SeqCst), 0);

    let error = Connect::new(&url)
        .root_certificates_pem("no certificate here")
        .discover()
        .await
        .expect_err("a bundle without a certificate");
    assert!(
        matches!(&error, ClientError::Certificates(m) if m.contains("BEGIN CERTIFICATE")),
        "{error}"
    );
}

#[derive(Default)]
struct Hook {
    received: Mutex<Vec<Value>>,
}

async fn hook(
    axum::extract::State(hook): axum::extract::State<Arc<Hook>>,
    body: axum::body::Bytes,
) -> axum::http::StatusCode {
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    hook.received.lock().expect("not poisoned").push(body);
    axum::http::StatusCode::OK
}

/// Serves `app` over plain HTTP with TLS in front; gives the https base URL.
async fn behind_tls(ca: &TestCa, app: axum::Router) -> (String, Arc<AtomicUsize>) {
    let front = Front::bind().await;
    let url = front.url();
    let plain = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let backend = plain.local_addr().expect("an address");
    tokio::spawn(async move { axum::serve(plain, app).await });
    (url, front.forward_to(Arc::clone(&ca.tls), backend))
}

#[tokio::test]
async fn webhooks_are_posted_over_https() {
    let ca = test_ca();
    let state = Arc::new(Hook::default());
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(hook))
        .with_state(Arc::clone(&state));
    let (hook_url, handshakes) = behind_tls(&ca, app).await;

    let webhooks = Webhooks::default()
        .allow_loopback(true)
        .root_certificates_pem(&ca.pem);
    let planner = TripPlanner {
        pace: Duration::from_millis(1),
    };
    let running = serve(Server::new(planner).webhooks(webhooks)).await;
    let card = card(&running.base).await;
    let client = client(&card, "JSONRPC").await;
    let trip = json!({"destination": "Lisbon", "days": 1, "start_date": "2026-12-01"});
    let mut req = request(vec![data_part("tripRequest", trip)], None);
    req.configuration = Some(SendMessageConfiguration {
        accepted_output_modes: None,
        task_push_notification_config: Some(TaskPushNotificationConfig {
            url: format!("{hook_url}/hook"),
            id: None,
            task_id: String::new(),
            token: Some("hook-token".into()),
            authentication: None,
            tenant: None,
        }),
        history_length: None,
        return_immediately: None,
    });
    let done = task(
        client
            .send_message(&req)
            .await
            .expect("an https webhook is accepted"),
    );
    assert_eq!(done.status.state, TaskState::Completed);
    for _ in 0..200 {
        let completed = state
            .received
            .lock()
            .expect("not poisoned")
            .iter()
            .any(|b| b["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED");
        if completed {
            assert!(handshakes.load(Ordering::SeqCst) >= 1);
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "the completed update never reached the https webhook: {:?}",
        state.received.lock().expect("not poisoned")
    );
}

#[tokio::test]
async fn webhook_roots_without_a_certificate_stop_the_server_saying_so() {
    let webhooks = Webhooks::default().root_certificates_pem("no certificate here");
    let planner = TripPlanner {
        pace: Duration::from_millis(1),
    };
    let error = Server::new(planner)
        .webhooks(webhooks)
        .router()
        .await
        .expect_err("the webhook client cannot trust nothing");
    assert!(
        matches!(&error, ServerError::Webhooks(m) if m.contains("BEGIN CERTIFICATE")),
        "{error}"
    );
}

#[tokio::test]
async fn a_jwks_is_fetched_over_https_from_a_trusted_issuer_only() {
    let ca = test_ca();
    let jwks = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "k1", "alg": "EdDSA",
                                 "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]});
    let document = jwks.to_string();
    let app = axum::Router::new().route(
        "/jwks.json",
        axum::routing::get(move || async move { document }),
    );
    let (base, _) = behind_tls(&ca, app).await;
    let url = format!("{base}/jwks.json");

    let fetcher = HttpJwks::with_root_certificates_pem(&ca.pem).expect("a PEM bundle");
    let fetched = fetcher.fetch(&url).await.expect("fetched over https");
    assert_eq!(serde_json::from_str::<Value>(&fetched).expect("JSON"), jwks);

    let error = HttpJwks::default()
        .fetch(&url)
        .await
        .expect_err("the issuer's CA is not trusted");
    assert!(error.to_lowercase().contains("certificate"), "{error}");
    assert!(HttpJwks::with_root_certificates_pem("nothing").is_err());
}
