//! Limits keep one caller from taking the whole agent: the request past a caller's (or a
//! tenant's) rate is refused with `429` and a `Retry-After` that says when its window ends,
//! over JSON-RPC, HTTP+JSON and gRPC, making no task; two Postgres replicas share the count;
//! a skill limited to two tasks at once (by the server, or by its own `#[skill(concurrency =
//! 2)]`) runs two of ten concurrent callers' and refuses the rest; a client that failed to log in too often is refused before any verifier runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use a2a_card::server::auth::{Authentication, Rejected};
use a2a_card::server::store::Tasks;
use a2a_card::server::{Limits, Rate, Server};
use a2a_card::{Identity, SkillContext, agent, skill};
use a2a_pb::proto;
use a2a_pb::proto::a2a_service_client::A2aServiceClient;
use serde_json::{Value, json};

use super::ownership::{Caller, Notes, auth, bearer, make, rpc, text};
use crate::support::client::serve;
use crate::support::tokens::Pair;

const RATE_LIMITED: i64 = -31429;

/// A day: a window no test run crosses but at midnight (UTC), whose end the test can tell.
const DAY: Duration = Duration::from_secs(86_400);

/// Seconds until the current day's window ends.
fn rest_of_day() -> u64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    86_400 - now % 86_400
}

/// A new task's note, by `caller`: status, `Retry-After`, body.
async fn send(base: &str, caller: &Caller) -> (u16, Option<u64>, Value) {
    say(base, caller, "milk").await
}

/// A raw JSON-RPC `SendMessage` of a new task by `caller`, saying `what`: status,
/// `Retry-After`, body.
async fn say(base: &str, caller: &Caller, what: &str) -> (u16, Option<u64>, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                      "params": {"message": text(what, None)}});
    let response = reqwest::Client::new()
        .post(format!("{base}/"))
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .header(caller.header.0, &caller.header.1)
        .body(body.to_string())
        .send()
        .await
        .expect("an answer");
    let status = response.status().as_u16();
    let retry = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    (status, retry, response.json().await.expect("JSON"))
}

/// The tasks the agent keeps, as its administrator lists them.
async fn count(base: &str, admin: &Caller) -> usize {
    let listed = rpc(base, admin, "1.0", "ListTasks", json!({})).await;
    listed["result"]["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {listed}"))
        .len()
}

/// The refusal of a request over the limit, as JSON-RPC answers it.
fn assert_limited((status, retry, body): &(u16, Option<u64>, Value)) {
    assert_eq!(*status, 429, "{body}");
    assert_eq!(body["error"]["code"], RATE_LIMITED, "{body}");
    let reason = &body["error"]["data"][0]["reason"];
    assert_eq!(reason, "RATE_LIMITED", "{body}");
    let retry = retry.expect("a Retry-After");
    let left = rest_of_day();
    assert!(
        retry.abs_diff(left) <= 2,
        "Retry-After {retry} s, the window ends in {left} s"
    );
}

#[tokio::test]
async fn the_request_past_a_callers_rate_is_refused_until_its_window_ends() {
    let pair = Pair::ed25519("ed-1");
    let (alice, bob) = (
        bearer("alice", &pair, "notes"),
        bearer("bob", &pair, "notes"),
    );
    let admin = bearer("root", &pair, "tasks:admin");
    let running = serve(
        Server::new(Notes)
            .authentication(auth(&pair))
            .grpc(true)
            .limits(Limits::new().per_caller(Rate::new(3, DAY))),
    )
    .await;
    let base = &running.base;
    for n in 1..=3 {
        let (status, _, body) = send(base, &alice).await;
        assert_eq!(status, 200, "request {n}: {body}");
    }
    let refused = send(base, &alice).await;
    assert_limited(&refused);
    // Bob counts apart; the refused request made no task.
    assert_eq!(send(base, &bob).await.0, 200);
    assert_eq!(count(base, &admin).await, 4);
    // HTTP+JSON and gRPC answer alike.
    let rest = reqwest::Client::new()
        .get(format!("{base}/tasks"))
        .header("a2a-version", "1.0")
        .header(alice.header.0, &alice.header.1)
        .send()
        .await
        .expect("an answer");
    assert_eq!(rest.status().as_u16(), 429);
    assert!(rest.headers().contains_key("retry-after"));
    let body: Value = rest.json().await.expect("JSON");
    assert_eq!(body["error"]["status"], "RESOURCE_EXHAUSTED", "{body}");
    let mut grpc = A2aServiceClient::connect(base.clone())
        .await
        .expect("connected");
    let mut list = tonic::Request::new(proto::ListTasksRequest::default());
    list.metadata_mut()
        .insert(alice.header.0, alice.header.1.parse().expect("metadata"));
    let status = grpc.list_tasks(list).await.expect_err("refused");
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    assert!(status.metadata().get("retry-after").is_some(), "{status:?}");
}

#[tokio::test]
async fn an_anonymous_caller_is_counted_by_its_address() {
    struct Echo;
    /// Says back what it is told.
    #[agent(url = "http://127.0.0.1:9000")]
    impl Echo {
        /// Echoes the text.
        #[skill]
        fn echo(&self, text: String) -> String {
            text
        }
    }
    let running =
        serve(Server::new(Echo).limits(Limits::new().per_caller(Rate::new(2, DAY)))).await;
    let anyone = Caller {
        name: "anyone",
        header: ("x-nothing", String::new()),
    };
    assert_eq!(send(&running.base, &anyone).await.0, 200);
    assert_eq!(send(&running.base, &anyone).await.0, 200);
    assert_limited(&send(&running.base, &anyone).await);
}

/// A stream's first event, or the refusal: the status, `Retry-After`, and the response
/// (to hold the stream open) or the refusal's body.
async fn open_stream(
    base: &str,
    method: &str,
    params: Value,
) -> (u16, Option<u64>, Result<reqwest::Response, Value>) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut response = reqwest::Client::new()
        .post(format!("{base}/"))
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .header("a2a-version", "1.0")
        .body(body.to_string())
        .send()
        .await
        .expect("an answer");
    let status = response.status().as_u16();
    let retry = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let streams = response
        .headers()
        .get("content-type")
        .is_some_and(|t| t.as_bytes().starts_with(b"text/event-stream"));
    if !streams {
        return (status, retry, Err(response.json().await.expect("JSON")));
    }
    let first = response.chunk().await.expect("a chunk").expect("an event");
    assert!(
        first.starts_with(b"data:") || first.starts_with(b"id:"),
        "{first:?}"
    );
    (status, retry, Ok(response))
}

#[tokio::test]
async fn streams_past_the_open_stream_bound_are_refused_until_one_closes() {
    struct Waits;
    /// Says it started, then waits.
    #[agent(url = "http://127.0.0.1:9000", streaming)]
    impl Waits {
        /// Streams `started`, and nothing after.
        #[skill]
        fn wait(&self, _text: String) -> impl futures::Stream<Item = String> + Send {
            futures::StreamExt::chain(
                futures::stream::once(async { "started".to_owned() }),
                futures::stream::pending(),
            )
        }
    }
    let running = serve(Server::new(Waits).limits(Limits::new().open_streams(2))).await;
    let base = &running.base;
    let send = |n: usize| json!({"message": text(&format!("stream {n}"), None)});
    let (status, _, one) = open_stream(base, "SendStreamingMessage", send(1)).await;
    assert_eq!(status, 200);
    let one = one.expect("the first stream");
    let (_, _, two) = open_stream(base, "SendStreamingMessage", send(2)).await;
    let two = two.expect("the second stream");
    // A third stream is refused, of either kind, and makes no task; a call that is no stream
    // is not counted.
    let (status, retry, refused) = open_stream(base, "SendStreamingMessage", send(3)).await;
    let body = refused.expect_err("the third is refused");
    assert_eq!((status, retry), (429, Some(1)), "{body}");
    assert_eq!(body["error"]["code"], RATE_LIMITED, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("open streams"), "{body}");
    let listed = reqwest::Client::new()
        .post(format!("{base}/"))
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .body(json!({"jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": {}}).to_string())
        .send()
        .await
        .expect("an answer");
    let listed: Value = listed.json().await.expect("JSON");
    let tasks = listed["result"]["tasks"].as_array().expect("tasks");
    assert_eq!(tasks.len(), 2, "the refused stream made no task: {listed}");
    let id = tasks[0]["id"].as_str().expect("an id").to_owned();
    let (status, _, refused) = open_stream(base, "SubscribeToTask", json!({"id": id})).await;
    assert_eq!(status, 429, "{refused:?}");
    // Once the caller closes a stream, another opens (the server sees the connection close
    // though the stream is idle).
    drop(one);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let three = loop {
        match open_stream(base, "SubscribeToTask", json!({"id": id})).await {
            (200, _, Ok(stream)) => break stream,
            refused if std::time::Instant::now() < deadline => {
                assert_eq!(refused.0, 429, "{:?}", refused.2);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            refused => panic!("a closed stream still counts after 10 s: {:?}", refused.2),
        }
    };
    drop((two, three));
}

#[tokio::test]
async fn a_tenants_rate_holds_for_all_its_callers() {
    let pair = Pair::ed25519("ed-1");
    let running = serve(
        Server::new(Notes)
            .authentication(auth(&pair))
            .limits(Limits::new().per_tenant(Rate::new(2, DAY))),
    )
    .await;
    let one = bearer("alice", &pair, "notes");
    let two = bearer("bob", &pair, "notes");
    assert_eq!(send(&running.base, &one).await.0, 200);
    assert_eq!(send(&running.base, &two).await.0, 200);
    assert_limited(&send(&running.base, &one).await);
    // Another tenant has its own count.
    let other = rpc(
        &running.base,
        &two,
        "1.0",
        "SendMessage",
        json!({"message": text("milk", None), "tenant": "beta"}),
    )
    .await;
    assert!(other["result"]["task"].is_object(), "{other}");
}

#[tokio::test]
async fn two_postgres_replicas_share_a_callers_count() {
    let Some(url) = crate::support::postgres::database_or_skip("limits").await else {
        return;
    };
    let pair = Pair::ed25519("ed-1");
    let replica = || {
        Server::new(Notes)
            .authentication(auth(&pair))
            .limits(Limits::new().per_caller(Rate::new(4, DAY)))
            .tasks(Tasks::postgres(url.clone()))
    };
    let (a, b) = (serve(replica()).await, serve(replica()).await);
    let alice = bearer("alice", &pair, "notes");
    for base in [&a.base, &b.base, &a.base, &b.base] {
        let (status, _, body) = send(base, &alice).await;
        assert_eq!(status, 200, "{body}");
    }
    // The fifth, on either replica, is one too many.
    assert_limited(&send(&a.base, &alice).await);
    assert_limited(&send(&b.base, &alice).await);
}

/// Ten callers at once, each sending a message that waits for its answer (and so runs on), to
/// the agent at `base`: `running` of them run and the rest are refused; once one ends, there is
/// room for another.
async fn ten_at_once(base: &str, pair: &Pair, running: usize) {
    let callers: Vec<Caller> = (0..10)
        .map(|i| {
            let name: &'static str = Box::leak(format!("caller-{i}").into_boxed_str());
            bearer(name, pair, "notes")
        })
        .collect();
    let sends = callers.iter().map(|caller| say(base, caller, "ask"));
    let answers: Vec<(u16, Value)> = futures::future::join_all(sends)
        .await
        .into_iter()
        .map(|(status, _, body)| (status, body))
        .collect();
    let ran: Vec<usize> = (0..10).filter(|i| answers[*i].0 == 200).collect();
    let refused = answers.iter().filter(|(s, _)| *s == 429).count();
    assert_eq!((ran.len(), refused), (running, 10 - running), "{answers:?}");
    // One ends: room for another.
    let (i, first) = (ran[0], &answers[ran[0]].1);
    let task = first["result"]["task"]["id"].as_str().expect("a task");
    let done = rpc(
        base,
        &callers[i],
        "1.0",
        "SendMessage",
        json!({"message": text("it says hi", Some(task))}),
    )
    .await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    let again = make(base, &callers[9], "milk").await;
    assert!(!again.is_empty());
}

#[tokio::test]
async fn a_skill_limited_to_two_tasks_runs_two_of_ten_concurrent_callers() {
    let pair = Pair::ed25519("ed-1");
    let running = serve(
        Server::new(Notes)
            .authentication(auth(&pair))
            .limits(Limits::new().skill("note", 2)),
    )
    .await;
    ten_at_once(&running.base, &pair, 2).await;
}

/// The notes agent with its skill's concurrency declared.
struct Capped;

/// Keeps notes, two at a time.
#[agent(
    url = "http://127.0.0.1:9000",
    security_schemes(bearer = bearer("JWT"), key = api_key(header = "X-API-Key")),
    security(bearer),
    security(key)
)]
impl Capped {
    /// Takes a note; asks what it says when told `ask`.
    #[skill(concurrency = 2)]
    async fn note(&self, text: String, ctx: SkillContext) -> Result<String, String> {
        Notes.note(text, ctx).await
    }
}

#[tokio::test]
async fn a_skill_declared_with_a_concurrency_of_two_runs_two_of_ten() {
    let pair = Pair::ed25519("ed-1");
    let running = serve(Server::new(Capped).authentication(auth(&pair))).await;
    ten_at_once(&running.base, &pair, 2).await;
}

#[tokio::test]
async fn the_servers_limit_on_a_skill_replaces_the_declared_one() {
    let pair = Pair::ed25519("ed-1");
    let running = serve(
        Server::new(Capped)
            .authentication(auth(&pair))
            .limits(Limits::new().skill("note", 3)),
    )
    .await;
    ten_at_once(&running.base, &pair, 3).await;
}

struct Guarded;

/// Answers callers with a token.
#[agent(
    url = "http://127.0.0.1:9000",
    security_schemes(bearer = bearer("opaque")),
    security(bearer)
)]
impl Guarded {
    /// Says who called.
    #[skill]
    fn who(&self, _text: String, ctx: SkillContext) -> String {
        ctx.principal()
            .map(|p| p.subject().to_owned())
            .unwrap_or_default()
    }
}

#[tokio::test]
async fn a_client_that_failed_too_often_is_refused_before_any_verifier_runs() {
    let checked = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&checked);
    let auth = Authentication::new().token("bearer", move |token: String| {
        seen.fetch_add(1, Ordering::SeqCst);
        async move {
            match token.as_str() {
                "good-token-0123456789" => Ok(Identity::new("alice")),
                _ => Err(Rejected::invalid("unknown token")),
            }
        }
    });
    let running = serve(
        Server::new(Guarded)
            .authentication(auth)
            .limits(Limits::new().failed_logins(Rate::new(3, DAY))),
    )
    .await;
    let with = |token: &str| Caller {
        name: "client",
        header: ("authorization", format!("Bearer {token}")),
    };
    for _ in 0..3 {
        assert_eq!(send(&running.base, &with("guess")).await.0, 401);
    }
    assert_eq!(checked.load(Ordering::SeqCst), 3);
    // Shut out, even with a good token, and no verifier runs.
    let refused = send(&running.base, &with("good-token-0123456789")).await;
    assert_limited(&refused);
    assert_eq!(checked.load(Ordering::SeqCst), 3, "no verifier ran");
}

#[tokio::test]
async fn a_limit_on_a_skill_the_agent_does_not_have_does_not_serve() {
    let pair = Pair::ed25519("ed-1");
    let refused = Server::new(Notes)
        .authentication(auth(&pair))
        .limits(Limits::new().skill("nope", 1))
        .bind("127.0.0.1:0")
        .await
        .expect_err("refused");
    let said = refused.to_string();
    assert!(said.contains("`nope`") && said.contains("note"), "{said}");
}
