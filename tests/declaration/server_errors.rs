//! Bad requests get a clean 4xx, over real HTTP: never a 5xx, never a dropped connection.
//! The server runs on 127.0.0.1:0 with a small body limit; requests are written byte for
//! byte, so that bodies can be anything (invalid UTF-8, chunked, lying about their type).

use crate::fight_club::agent;

use std::net::SocketAddr;
use std::time::Duration;

use a2a_card::server::Server;
use agent::FightClub;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

const LIMIT: usize = 4096;

struct Running {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

async fn start() -> Running {
    let listening = Server::new(FightClub)
        .body_limit(LIMIT)
        .bind("127.0.0.1:0")
        .await
        .expect("bind a free loopback port");
    let addr = listening.local_addr();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(listening.serve_with_shutdown(async {
        let _ = stopped.await;
    }));
    Running { addr, _stop: stop }
}

/// An answer: status, headers (lowercase names) and body.
struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!("{e}: {} {}", self.head, String::from_utf8_lossy(&self.body))
        })
    }

    /// The JSON-RPC error code of the body.
    fn code(&self) -> i64 {
        self.json()["error"]["code"].as_i64().unwrap_or_default()
    }
}

/// Sends raw bytes as one request (`Connection: close` is up to the caller) and reads the
/// whole answer.
async fn raw(addr: SocketAddr, request: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request).await.expect("write");
    let mut bytes = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut bytes))
        .await
        .expect("the server answers in time")
        .expect("read");
    let split = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP head in {:?}", String::from_utf8_lossy(&bytes)));
    let head = String::from_utf8_lossy(&bytes[..split]).to_ascii_lowercase();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head}"));
    let mut body = bytes[split + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        body = dechunk(&body);
    }
    Answer { status, head, body }
}

fn dechunk(mut bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = bytes.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(std::str::from_utf8(&bytes[..eol]).unwrap_or("0"), 16)
            .unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&bytes[eol + 2..eol + 2 + size]);
        bytes = &bytes[eol + 2 + size + 2..];
    }
    out
}

/// A `POST` with a body and a content type (none when `None`).
fn post(path: &str, content_type: Option<&str>, version: Option<&str>, body: &[u8]) -> Vec<u8> {
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    if let Some(ct) = content_type {
        head.push_str(&format!("content-type: {ct}\r\n"));
    }
    if let Some(v) = version {
        head.push_str(&format!("a2a-version: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut request = head.into_bytes();
    request.extend_from_slice(body);
    request
}

fn rpc(body: &[u8]) -> Vec<u8> {
    post("/", Some("application/json"), Some("1.0"), body)
}

#[tokio::test]
async fn malformed_json_rpc_is_a_json_rpc_error_with_200() {
    let server = start().await;
    let parse_errors: [&[u8]; 3] = [b"{not json", b"", b"{\"jsonrpc\": \"2.0\", \"id\": 1,"];
    for body in parse_errors {
        let answer = raw(server.addr, &rpc(body)).await;
        // JSON-RPC errors travel with 200, as the official SDKs answer them.
        assert_eq!(answer.status, 200, "{:?}", String::from_utf8_lossy(body));
        assert_eq!(answer.code(), -32700);
        assert_eq!(answer.json()["id"], Value::Null);
    }
    let invalid = [
        json!([]),
        json!([{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}]),
        json!("SendMessage"),
        json!({"jsonrpc": "2.0", "method": "SendMessage"}),
        json!({"jsonrpc": "2.0", "id": {"no": 1}, "method": "SendMessage"}),
        json!({"jsonrpc": "1.0", "id": 1, "method": "SendMessage", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 1, "params": {}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": 7}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": [1, 2]}),
    ];
    for body in invalid {
        let answer = raw(server.addr, &rpc(body.to_string().as_bytes())).await;
        assert_eq!(answer.status, 200, "{body}");
        assert_eq!(answer.code(), -32600, "{body}");
    }
    // The id is echoed when there is one.
    let body = json!({"jsonrpc": "1.0", "id": "abc", "method": "SendMessage"});
    let answer = raw(server.addr, &rpc(body.to_string().as_bytes())).await;
    assert_eq!(answer.json()["id"], "abc");
}

#[tokio::test]
async fn a_body_that_is_not_json_by_its_type_is_415() {
    let server = start().await;
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}"#;
    for ct in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let answer = raw(server.addr, &post("/", ct, Some("1.0"), body)).await;
        assert_eq!(answer.status, 415, "{ct:?}");
        assert_eq!(answer.code(), -32600);
    }
    // HTTP+JSON says 415 too.
    let answer = raw(
        server.addr,
        &post("/message:send", Some("text/plain"), None, b"{}"),
    )
    .await;
    assert_eq!(answer.status, 415);
}

/// An HTTP+JSON error answer is a `google.rpc.Status` (A2A 1.0 section 11.6): its HTTP
/// status, a gRPC status name, a message, and an `ErrorInfo` detail with the A2A domain.
fn assert_status_json(answer: &Answer, status: u16, grpc: &str, what: &str) {
    assert_eq!(answer.status, status, "{what}: {}", answer.head);
    assert!(
        answer
            .head
            .contains("content-type: application/problem+json"),
        "{what}: {}",
        answer.head
    );
    let body = answer.json();
    let error = &body["error"];
    assert_eq!(error["code"], status, "{what}: {body}");
    assert_eq!(error["status"], grpc, "{what}: {body}");
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{what}: {body}"
    );
    let info = error["details"]
        .as_array()
        .and_then(|d| {
            d.iter()
                .find(|d| d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo")
        })
        .unwrap_or_else(|| panic!("{what}: no ErrorInfo in {body}"));
    assert_eq!(info["domain"], "a2a-protocol.org", "{what}: {body}");
    assert!(info["reason"].as_str().is_some(), "{what}: {body}");
}

#[tokio::test]
async fn every_http_json_error_is_a_google_rpc_status() {
    let server = start().await;
    let version = Some("1.0");
    // Bodies that do not parse, on each route that takes one.
    for path in [
        "/message:send",
        "/message:stream",
        "/tasks/x/pushNotificationConfigs",
    ] {
        for body in [&b"{not json"[..], b"", b"[1, 2"] {
            let answer = raw(
                server.addr,
                &post(path, Some("application/json"), version, body),
            )
            .await;
            let what = format!("{path} {:?}", String::from_utf8_lossy(body));
            assert!(
                answer.status == 400 || answer.status == 422,
                "{what}: {}",
                answer.head
            );
            assert_status_json(&answer, answer.status, "INVALID_ARGUMENT", &what);
        }
        // No content type, or not JSON.
        for ct in [None, Some("text/plain")] {
            let answer = raw(server.addr, &post(path, ct, version, b"{}")).await;
            assert_status_json(&answer, 415, "INVALID_ARGUMENT", &format!("{path} {ct:?}"));
        }
    }
    // A body over the limit.
    let big = vec![b' '; LIMIT + 1];
    let answer = raw(
        server.addr,
        &post("/message:send", Some("application/json"), version, &big),
    )
    .await;
    assert_status_json(&answer, 413, "INVALID_ARGUMENT", "over the limit");
}

#[tokio::test]
async fn an_unknown_method_is_a_json_rpc_error_with_200() {
    let server = start().await;
    for method in ["NoSuchMethod", "message/send", "tasks/list", ""] {
        let body = json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": {}});
        let answer = raw(server.addr, &rpc(body.to_string().as_bytes())).await;
        assert_eq!(answer.status, 200, "{method}");
        assert_eq!(answer.code(), -32601, "{method}");
        assert_eq!(answer.json()["id"], 9);
    }
    // Routes that do not exist, or the wrong HTTP method on one that does.
    let get = b"GET / HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n";
    assert_eq!(raw(server.addr, get).await.status, 405);
    let nowhere = raw(
        server.addr,
        &post("/nowhere", Some("application/json"), None, b"{}"),
    )
    .await;
    assert_eq!(nowhere.status, 404);
}

#[tokio::test]
async fn an_oversized_body_is_413() {
    let server = start().await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{{"messageId":"m","role":"ROLE_USER","parts":[{{"text":"{}"}}]}}}}}}"#,
        "x".repeat(LIMIT)
    );
    // With a Content-Length.
    let answer = raw(server.addr, &rpc(big.as_bytes())).await;
    assert_eq!(answer.status, 413);
    assert_eq!(answer.code(), -32600);
    let answer = raw(
        server.addr,
        &post(
            "/message:send",
            Some("application/json"),
            None,
            big.as_bytes(),
        ),
    )
    .await;
    assert_eq!(answer.status, 413);
    // Chunked, with no length given up front.
    for path in ["/", "/message:send"] {
        let mut request = format!(
            "POST {path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\ncontent-type: application/json\r\na2a-version: 1.0\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        .into_bytes();
        for chunk in big.as_bytes().chunks(1000) {
            request.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            request.extend_from_slice(chunk);
            request.extend_from_slice(b"\r\n");
        }
        request.extend_from_slice(b"0\r\n\r\n");
        let answer = raw(server.addr, &request).await;
        assert_eq!(answer.status, 413, "{path}");
    }
    // Just under the limit is fine.
    let small = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{{"messageId":"m","role":"ROLE_USER","parts":[{{"text":"{}"}}]}}}}}}"#,
        "Lion vs Tiger ".repeat(100)
    );
    let answer = raw(server.addr, &rpc(small.as_bytes())).await;
    assert_eq!(answer.status, 200);
    assert!(answer.json()["result"]["task"].is_object());
}

#[tokio::test]
async fn invalid_utf8_is_a_parse_error() {
    let server = start().await;
    let mut body = br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":""#.to_vec();
    body.extend_from_slice(&[0xff, 0xfe, 0xc3]);
    body.extend_from_slice(br#""}]}}}"#);
    let answer = raw(server.addr, &rpc(&body)).await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.code(), -32700);
    assert!(
        answer.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("UTF-8")
    );
    let answer = raw(
        server.addr,
        &post("/message:send", Some("application/json"), None, &body[60..]),
    )
    .await;
    assert_eq!(answer.status, 400);
}

#[tokio::test]
async fn well_formed_requests_with_bad_params_are_answered_not_crashed() {
    let server = start().await;
    for params in [
        json!({}),
        json!({"message": 3}),
        json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}}),
        json!({"message": {"messageId": "m", "role": "nobody", "parts": [{"text": "x"}]}}),
        json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": {"a": "x", "b": "y"}, "mediaType": "application/json;schema=\"unterminated"}]}}),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params});
        let answer = raw(server.addr, &rpc(body.to_string().as_bytes())).await;
        assert!(answer.status < 500, "{params}: {}", answer.status);
        let code = answer.code();
        assert!(
            [-32602, -32005].contains(&code),
            "{params}: {}",
            String::from_utf8_lossy(&answer.body)
        );
    }
}

#[tokio::test]
async fn no_garbage_gets_a_5xx() {
    let server = start().await;
    let bodies: Vec<Vec<u8>> = vec![
        vec![0; 64],
        vec![0xff; 64],
        b"null".to_vec(),
        b"{}".to_vec(),
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{\"id\":\"\\ud800\"}}"
            .to_vec(),
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SubscribeToTask\",\"params\":{\"id\":\"x\"}}"
            .to_vec(),
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendStreamingMessage\",\"params\":{}}"
            .to_vec(),
        b"{\"jsonrpc\":\"2.0\",\"id\":1e400,\"method\":\"GetTask\"}".to_vec(),
        "[".repeat(3000).into_bytes(),
    ];
    for body in &bodies {
        for path in ["/", "/message:send", "/tasks/x", "/tasks/x:cancel"] {
            for version in [None, Some("1.0"), Some("0.3"), Some("banana")] {
                let answer = raw(
                    server.addr,
                    &post(path, Some("application/json"), version, body),
                )
                .await;
                assert!(
                    answer.status < 500,
                    "{path} {version:?} {:?}: {} {}",
                    String::from_utf8_lossy(body),
                    answer.status,
                    String::from_utf8_lossy(&answer.body)
                );
            }
        }
    }
    // And the server still answers.
    let ok = raw(
        server.addr,
        b"GET /.well-known/agent-card.json HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(ok.status, 200);
}
