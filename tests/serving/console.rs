//! The operators' console (`Server::console`, feature `console`): its pages for a store seeded
//! with tasks in every state (memory and SQLite), a durable task's journal, cancel through the
//! lifecycle (the handler stopped, the cancel recorded as any caller's), the CSRF token, the
//! store's cursor followed page by page, the filters, and callers refused exactly as a
//! protected route refuses them, with no page content.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use a2a::{Message, Part, Role, Task, TaskState, TaskStatus};
use a2a_card::server::auth::{Authentication, StaticApiKeys};
use a2a_card::server::store::{MemoryTasks, Retention, Tasks};
use a2a_card::server::{Console, Server};
use a2a_card::{Identity, SkillContext, SkillError, agent, skill};
use a2a_server::TaskStore;
use serde_json::{Value, json};
use support::client::{Running, rpc, serve};

const TOKEN: &str = "console-token-0123456789abcdef0123";

/// Whether the running `hang` handler was dropped (stopped by a cancel).
static HANG_STOPPED: AtomicBool = AtomicBool::new(false);

struct Stopped;
impl Drop for Stopped {
    fn drop(&mut self) {
        HANG_STOPPED.store(true, Ordering::SeqCst);
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema, a2a_card::Schema)]
struct Hang {
    /// Anything.
    #[allow(dead_code)]
    x: u32,
}

struct Depot;
/// A depot: ships parcels (durably), echoes, fails, and works forever when asked.
#[agent(url = "http://127.0.0.1:9000")]
impl Depot {
    /// Ships a parcel: reserves, waits a moment, asks where to, labels.
    #[skill(durable)]
    async fn ship(&self, parcel: String, ctx: SkillContext) -> Result<String, SkillError> {
        let reserved: u32 = ctx
            .step("reserve", async {
                tokio::time::sleep(Duration::from_millis(40)).await;
                7
            })
            .await?;
        ctx.sleep(Duration::from_millis(5)).await?;
        let _ = ctx.patched("labels-v2");
        let to = ctx
            .ask("Where to?")
            .await
            .map_err(|e| SkillError::Failed(e.to_string()))?;
        let label: String = ctx
            .step("label", async { format!("{parcel} to {}", to.text()) })
            .await?;
        Ok(format!("{label} (slot {reserved})"))
    }

    /// Works until cancelled.
    #[skill]
    async fn hang(&self, _hang: Hang) -> String {
        let _stopped = Stopped;
        tokio::time::sleep(Duration::from_secs(3600)).await;
        "woke".to_owned()
    }
}

/// A user message with `text` (and, for `ship`, the text is the parcel).
fn message(text: &str) -> Message {
    Message {
        message_id: format!("m-{text}"),
        context_id: None,
        task_id: None,
        role: Role::User,
        parts: vec![Part::text(text)],
        metadata: None,
        extensions: None,
        reference_task_ids: None,
    }
}

/// A task in `state`, its status `seconds` seconds old.
fn seeded(id: &str, state: TaskState, seconds: i64, text: &str) -> Task {
    Task {
        id: id.to_owned(),
        context_id: format!("ctx-{id}"),
        status: TaskStatus {
            state,
            message: Some(Message {
                role: Role::Agent,
                ..message(&format!("status of {text}"))
            }),
            timestamp: Some(chrono::Utc::now() - chrono::Duration::seconds(seconds)),
        },
        artifacts: None,
        history: Some(vec![message(text)]),
        metadata: None,
    }
}

const STATES: [(TaskState, &str); 8] = [
    (TaskState::Submitted, "submitted"),
    (TaskState::Working, "working"),
    (TaskState::InputRequired, "input-required"),
    (TaskState::AuthRequired, "auth-required"),
    (TaskState::Completed, "completed"),
    (TaskState::Failed, "failed"),
    (TaskState::Canceled, "canceled"),
    (TaskState::Rejected, "rejected"),
];

/// One task in each state (an old one waiting and one working long, to be flagged), and 30
/// more completed ones, into `store`.
async fn seed(store: &dyn TaskStore) {
    for (i, (state, name)) in STATES.iter().enumerate() {
        // Input-required for two hours, working for an hour: both stand out.
        let age = match state {
            TaskState::InputRequired | TaskState::Working => 7200,
            _ => 60 + i as i64,
        };
        store
            .create(seeded(&format!("seed-{name}"), state.clone(), age, name))
            .await
            .expect("seeded");
    }
    for n in 0..30 {
        store
            .create(seeded(
                &format!("done-{n:02}"),
                TaskState::Completed,
                1000 + n,
                &format!("parcel {n}"),
            ))
            .await
            .expect("seeded");
    }
}

fn console() -> Console {
    Console::at("/console")
        .allow_token(TOKEN)
        .page_size(10)
        .long_waiting(Duration::from_secs(3600))
        .long_working(Duration::from_secs(600))
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client")
}

/// A console page as the operator gets it: status and body.
async fn page(base: &str, path: &str) -> (u16, String) {
    let response = http()
        .get(format!("{base}{path}"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("answered");
    let status = response.status().as_u16();
    (status, response.text().await.expect("a body"))
}

/// A form body of `pairs` (plain ASCII values, as the tests send).
fn encoded(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// The ids of the tasks a list page shows.
fn listed(html: &str) -> Vec<String> {
    html.split("data-task=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .map(str::to_owned)
        .collect()
}

/// The store's cursor of the page's "Next page" link.
fn next_link(html: &str) -> Option<String> {
    let at = html.find("id=\"next-page\"")?;
    let before = &html[..at];
    let href = before.rfind("href=\"")?;
    let link = before[href + 6..].split('"').next()?;
    Some(link.replace("&amp;", "&"))
}

/// The CSRF token of a task page's cancel form.
fn csrf(html: &str) -> String {
    html.split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("a cancel form with its CSRF token")
        .to_owned()
}

/// The pages of a store seeded with every state: counts, flags, filters, the cursor.
async fn every_state_and_the_cursor(base: &str) {
    let (status, list) = page(base, "/console").await;
    assert_eq!(status, 200, "{list}");
    for (_, name) in STATES {
        assert!(
            list.contains(&format!("class=\"state-{name}\"")),
            "a count for {name}"
        );
    }
    assert!(
        list.contains("<span class=\"n\">31</span> completed"),
        "completed counted by the store: {list}"
    );
    // Long-waiting and long-working tasks stand out.
    let (_, waiting) = page(base, "/console?state=input-required").await;
    assert!(
        waiting.contains("waiting for an answer for 2 h"),
        "{waiting}"
    );
    assert!(waiting.contains("class=\"flagged\""), "{waiting}");
    let (_, working) = page(base, "/console?state=working").await;
    assert!(
        working.contains("working for 2 h without a status change"),
        "{working}"
    );
    let (_, recent) = page(base, "/console?state=completed").await;
    assert!(!recent.contains("class=\"flagged\""), "{recent}");

    // Each state's page lists that state alone.
    for (_, name) in STATES {
        let (_, html) = page(base, &format!("/console?state={name}")).await;
        let ids = listed(&html);
        assert!(ids.contains(&format!("seed-{name}")), "{name}: {ids:?}");
        assert!(html.matches("data-state=\"").count() == ids.len());
        assert!(
            html.split("data-state=\"")
                .skip(1)
                .all(|s| s.starts_with(name)),
            "{name} lists only {name}"
        );
    }
    // A search.
    let (_, html) = page(base, "/console?q=parcel+17").await;
    assert_eq!(listed(&html), ["done-17"]);

    // The store's cursor: three pages of ten completed tasks, newest first, then no more.
    let mut seen = Vec::new();
    let mut path = "/console?state=completed".to_owned();
    for n in 0..4 {
        let (_, html) = page(base, &path).await;
        let ids = listed(&html);
        assert!(!ids.is_empty(), "page {n}");
        assert!(ids.len() <= 10, "page {n}: {ids:?}");
        assert!(ids.iter().all(|id| !seen.contains(id)), "page {n} repeats");
        seen.extend(ids);
        match next_link(&html) {
            Some(next) => {
                assert!(next.contains("after="), "{next}");
                path = next.trim_start_matches(base).to_owned();
            }
            None => break,
        }
    }
    assert_eq!(seen.len(), 31, "every completed task once: {seen:?}");
    assert_eq!(seen.first().map(String::as_str), Some("seed-completed"));
    assert_eq!(seen.last().map(String::as_str), Some("done-29"));

    // A seeded task's page, and the replicas page.
    let (status, html) = page(base, "/console/tasks/seed-failed").await;
    assert_eq!(status, 200);
    assert!(html.contains("status of failed") && html.contains("state-failed"));
    let (status, html) = page(base, "/console/replicas").await;
    assert_eq!(status, 200, "{html}");
    let (status, _) = page(base, "/console/tasks/no-such-task").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_seeded_memory_store_shows_every_state_and_pages_by_the_cursor() {
    // The crate's memory store, seeded before it serves.
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTasks::new(Retention::forever()));
    seed(&*store).await;
    let running = serve(
        Server::new(Depot)
            .tasks(Tasks::custom(Arc::clone(&store)))
            .console(console()),
    )
    .await;
    every_state_and_the_cursor(&running.base).await;
    let (_, replicas) = page(&running.base, "/console/replicas").await;
    assert!(replicas.contains("id=\"no-replicas\""), "{replicas}");
}

#[tokio::test]
async fn a_seeded_sqlite_store_shows_every_state_and_pages_by_the_cursor() {
    let dir = std::env::temp_dir().join(format!("a2a-console-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let path = dir.join("seeded.db");
    let _ = std::fs::remove_file(&path);
    let running = serve(
        Server::new(Depot)
            .tasks(Tasks::sqlite(&path))
            .console(console()),
    )
    .await;
    // Seeded by another process on the file (this one's second store), which keeps its lease
    // while the test runs: its running tasks stay its own.
    let other = Tasks::sqlite(&path).open().await.expect("opened");
    seed(&*other).await;
    every_state_and_the_cursor(&running.base).await;
    let (_, replicas) = page(&running.base, "/console/replicas").await;
    assert!(replicas.contains("(this process)"), "{replicas}");
    assert!(replicas.contains(">live<"), "{replicas}");
    drop(other);
}

async fn sqlite_depot(name: &str) -> Running {
    let dir = std::env::temp_dir().join(format!("a2a-console-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let path = dir.join(format!("{name}.db"));
    let _ = std::fs::remove_file(&path);
    serve(
        Server::new(Depot)
            .tasks(Tasks::sqlite(&path))
            .console(console()),
    )
    .await
}

fn send(text: &str, task: Option<&str>) -> Value {
    let mut message = json!({"messageId": format!("m-{text}-{}", task.unwrap_or("new")), "role": "ROLE_USER", "parts": [{"text": text}]});
    if let Some(task) = task {
        message["taskId"] = json!(task);
    }
    json!({"message": message, "configuration": {"returnImmediately": false}})
}

#[tokio::test]
async fn a_durable_task_shows_its_journal_steps_sleep_marker_and_answer() {
    let running = sqlite_depot("journal").await;
    let base = &running.base;
    let asked = rpc(base, "SendMessage", send("books", None)).await;
    let id = asked["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_owned();
    assert_eq!(
        asked["result"]["task"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    let (_, html) = page(base, &format!("/console/tasks/{id}")).await;
    assert!(html.contains("step <code>reserve</code>"), "{html}");
    // How long the step took: from its start's write to its result's, the body's 40 ms
    // between them.
    let took = html
        .split("<span class=\"took\">")
        .nth(1)
        .and_then(|rest| rest.split("</span>").next())
        .unwrap_or_else(|| panic!("the step's duration: {html}"));
    let ms: u64 = took
        .strip_suffix(" ms")
        .and_then(|ms| ms.parse().ok())
        .unwrap_or_else(|| panic!("a duration in ms: {took}"));
    assert!((40..5_000).contains(&ms), "took {took}");
    assert!(html.contains("class=\"entry sleep"), "{html}");
    assert!(html.contains("marker <code>labels-v2</code>"), "{html}");
    assert!(html.contains("skill <code>ship</code>"), "{html}");
    assert!(html.contains("data-running=\"true\""));
    // Answered: the answer and the last step are journaled; the page stops refreshing.
    let done = rpc(base, "SendMessage", send("Lisbon", Some(&id))).await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    let (_, html) = page(base, &format!("/console/tasks/{id}")).await;
    assert!(html.contains("class=\"entry answer"), "{html}");
    assert!(html.contains("Lisbon"), "{html}");
    assert!(html.contains("step <code>label</code>"), "{html}");
    assert!(html.contains("data-running=\"false\""));
    assert!(
        html.contains("books to Lisbon"),
        "the messages and output: {html}"
    );
    // The list knows the task's skill.
    let (_, list) = page(base, "/console?skill=ship").await;
    assert_eq!(listed(&list), std::slice::from_ref(&id));
    let (_, list) = page(base, "/console?skill=hang").await;
    assert!(listed(&list).is_empty());
}

#[tokio::test]
async fn cancel_goes_through_the_lifecycle_and_needs_the_csrf_token() {
    let running = sqlite_depot("cancel").await;
    let base = &running.base;
    let started = rpc(
        base,
        "SendMessage",
        json!({"message": {"messageId": "m-hang", "role": "ROLE_USER", "parts": [{"data": {"x": 1}, "mediaType": "application/json;schema=hang"}]},
               "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = started["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_owned();
    let (_, html) = page(base, &format!("/console/tasks/{id}")).await;
    let token = csrf(&html);
    let cancel = format!("{base}/console/tasks/{id}/cancel");

    // Without the CSRF token, or with another: refused, the task runs on.
    for form in [vec![], vec![("csrf", "0123456789abcdef0123456789abcdef")]] {
        let form: Vec<(&str, &str)> = form;
        let refused = http()
            .post(&cancel)
            .bearer_auth(TOKEN)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(encoded(&form))
            .send()
            .await
            .expect("answered");
        assert_eq!(refused.status(), 403);
    }
    let task = rpc(base, "GetTask", json!({"id": id})).await;
    assert_ne!(task["result"]["status"]["state"], "TASK_STATE_CANCELED");
    assert!(!HANG_STOPPED.load(Ordering::SeqCst));

    // Without the console's token: refused before the form is looked at.
    let refused = http()
        .post(&cancel)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(encoded(&[("csrf", token.as_str())]))
        .send()
        .await
        .expect("answered");
    assert_eq!(refused.status(), 401);

    let done = http()
        .post(&cancel)
        .bearer_auth(TOKEN)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(encoded(&[("csrf", token.as_str())]))
        .send()
        .await
        .expect("answered");
    assert_eq!(done.status(), 303);
    let task = rpc(base, "GetTask", json!({"id": id})).await;
    assert_eq!(task["result"]["status"]["state"], "TASK_STATE_CANCELED");
    // The lifecycle stopped the handler, as a caller's CancelTask does.
    for _ in 0..100 {
        if HANG_STOPPED.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        HANG_STOPPED.load(Ordering::SeqCst),
        "the handler was stopped"
    );
    let (_, html) = page(base, &format!("/console/tasks/{id}?done=cancelled")).await;
    assert!(html.contains("The task was cancelled."));
    assert!(
        !html.contains("name=\"csrf\""),
        "no cancel form on an ended task"
    );
    // Twice: the task has ended.
    let again = http()
        .post(&cancel)
        .bearer_auth(TOKEN)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(encoded(&[("csrf", token.as_str())]))
        .send()
        .await
        .expect("answered");
    assert_eq!(again.status(), 303, "a canceled task answers as it is");
}

struct Guarded;
/// A depot for known callers.
#[agent(
    url = "http://127.0.0.1:9000",
    security_schemes(key = api_key(header = "X-API-Key")),
    security(key)
)]
impl Guarded {
    /// Echoes.
    #[skill]
    fn echo(&self, text: String) -> String {
        text
    }
}

const ALICE: &str = "k-alice-0123456789abcdef";
const BOB: &str = "k-bob-0123456789abcdef";
const CAROL: &str = "k-carol-0123456789abcdef";

async fn guarded() -> Running {
    let roles = serde_json::Map::from_iter([("roles".to_owned(), json!(["operator"]))]);
    let keys = StaticApiKeys::new()
        .key(ALICE, Identity::new("alice").with_scopes(["ops:read"]))
        .key(BOB, Identity::new("bob"))
        .key(CAROL, Identity::new("carol").with_claims(roles));
    let server = Server::new(Guarded)
        .authentication(Authentication::new().api_key("key", keys))
        .console(
            Console::at("/ops")
                .allow_scope("ops:read")
                .allow_role("operator"),
        );
    serve(server).await
}

#[tokio::test]
async fn callers_the_operator_did_not_name_are_refused_as_by_a_protected_route() {
    let running = guarded().await;
    let base = &running.base;
    // A task, so that a page would have something to show.
    let made = http()
        .post(format!("{base}/"))
        .header("X-API-Key", BOB)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                      "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "secret-text"}]}}}))
        .send()
        .await
        .expect("answered");
    assert_eq!(made.status(), 200);
    // The protected route's refusal of a caller without credentials.
    let protected = http()
        .post(format!("{base}/"))
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .expect("answered");
    let challenge = protected.headers()["www-authenticate"].clone();
    assert_eq!(protected.status(), 401);

    for path in ["/ops", "/ops/replicas", "/ops/tasks/anything"] {
        let anonymous = http()
            .get(format!("{base}{path}"))
            .send()
            .await
            .expect("answered");
        assert_eq!(anonymous.status(), 401, "{path}");
        assert_eq!(anonymous.headers()["www-authenticate"], challenge, "{path}");
        let body = anonymous.text().await.expect("a body");
        assert!(
            !body.contains("secret-text") && !body.contains("data-task"),
            "{body}"
        );

        let bob = http()
            .get(format!("{base}{path}"))
            .header("X-API-Key", BOB)
            .send()
            .await
            .expect("answered");
        assert_eq!(
            bob.status(),
            403,
            "{path}: authenticated, without the scope or role"
        );
        let body = bob.text().await.expect("a body");
        assert!(
            body.contains("scope `ops:read` or role `operator`"),
            "{body}"
        );
        assert!(
            !body.contains("secret-text") && !body.contains("data-task"),
            "{body}"
        );

        let wrong = http()
            .get(format!("{base}{path}"))
            .header("X-API-Key", "k-nobody-0123456789abcdef")
            .send()
            .await
            .expect("answered");
        assert_eq!(wrong.status(), 401, "{path}");
    }
    // The scope, and the role, let in; the list shows every caller's tasks.
    for key in [ALICE, CAROL] {
        let ok = http()
            .get(format!("{base}/ops"))
            .header("X-API-Key", key)
            .send()
            .await
            .expect("answered");
        assert_eq!(ok.status(), 200);
        let headers = ok.headers().clone();
        assert_eq!(headers["cache-control"], "no-store");
        assert!(
            headers["content-security-policy"]
                .to_str()
                .unwrap_or_default()
                .contains("script-src 'self'")
        );
        let body = ok.text().await.expect("a body");
        assert_eq!(
            listed(&body).len(),
            1,
            "bob's task, listed for the operator"
        );
    }
}

#[tokio::test]
async fn a_console_that_allows_nobody_or_what_cannot_be_checked_does_not_serve() {
    let nobody = Server::new(Depot)
        .console(Console::at("/console"))
        .router()
        .await;
    let error = nobody.expect_err("refused").to_string();
    assert!(error.contains("allows nobody"), "{error}");
    let unchecked = Server::new(Depot)
        .console(Console::at("/console").allow_scope("ops:read"))
        .router()
        .await;
    let error = unchecked.expect_err("refused").to_string();
    assert!(error.contains("authenticates nobody"), "{error}");
    let bad_path = Server::new(Depot)
        .console(Console::at("console/").allow_token(TOKEN))
        .router()
        .await;
    assert!(bad_path.is_err());
}

#[tokio::test]
async fn the_token_signs_in_once_and_its_cookie_holds_no_token() {
    let store: Arc<dyn TaskStore> = Arc::new(MemoryTasks::new(Retention::forever()));
    seed(&*store).await;
    let running = serve(
        Server::new(Depot)
            .tasks(Tasks::custom(store))
            .console(console()),
    )
    .await;
    let base = &running.base;
    let wrong = http()
        .post(format!("{base}/console/login"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(encoded(&[("token", "not-it")]))
        .send()
        .await
        .expect("answered");
    assert_eq!(wrong.status(), 401);
    let signed = http()
        .post(format!("{base}/console/login"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(encoded(&[("token", TOKEN)]))
        .send()
        .await
        .expect("answered");
    assert_eq!(signed.status(), 303);
    let cookie = signed.headers()["set-cookie"]
        .to_str()
        .expect("a cookie")
        .to_owned();
    assert!(
        cookie.contains("HttpOnly")
            && cookie.contains("SameSite=Strict")
            && cookie.contains("Path=/console")
    );
    assert!(
        !cookie.contains(TOKEN),
        "the cookie holds a digest, not the token"
    );
    let pair = cookie.split(';').next().expect("name=value").to_owned();
    let list = http()
        .get(format!("{base}/console"))
        .header("Cookie", pair)
        .send()
        .await
        .expect("answered");
    assert_eq!(list.status(), 200);
    let body = list.text().await.expect("a body");
    assert!(body.contains("Sign out") && !body.contains(TOKEN));
}
