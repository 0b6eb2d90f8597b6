//! The operators' console (`Server::console`) driven in a real browser (Debian's headless
//! Chromium through `playwright-core`, by `tests/browser/console_ui.mjs`), as the form page is:
//! signed in with the console's token, the task list, a durable task's journal, a cancel from
//! the task's page, a keyboard-only run, a phone's screen, and axe-core's WCAG 2 A and AA rules
//! on every page. A screenshot of each state goes to `target/tmp/console-ui/` (those of the run
//! before to `target/tmp/console-ui/before/`); `book/src/console.png` is a copy of the list's.
//!
//! Without Chromium or playwright-core the test says why and skips, unless
//! `A2A_REQUIRE_BROWSER` is set (CI sets it), when it fails.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use a2a_card::server::store::Tasks;
use a2a_card::server::{Console, Server};
use a2a_card::{Schema, SkillContext, SkillError, agent, skill};
use serde_json::{Value, json};

use crate::form_ui::{chromium, keep_as_before, playwright};
use crate::support::client::{rpc, serve};

const TOKEN: &str = "console-browser-token-0123456789";

#[derive(serde::Deserialize, schemars::JsonSchema, Schema)]
struct Parcel {
    /// What to ship.
    contents: String,
    /// Its weight, in kilograms.
    kilograms: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema, Schema)]
struct Stocktake {
    /// The aisle to count.
    #[allow(dead_code)]
    aisle: u32,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Schema)]
struct Label {
    /// What the label says.
    label: String,
    /// The slot the parcel waits in.
    slot: u32,
    /// The fee, in euros.
    fee: f64,
}

struct Depot;
/// A parcel depot: ships parcels (durably, asking where to) and counts stock (slowly).
#[agent(url = "http://127.0.0.1:9000")]
impl Depot {
    /// Ships a parcel: reserves a slot, weighs it, asks where to, prints the label.
    #[skill(durable)]
    async fn ship(&self, parcel: Parcel, ctx: SkillContext) -> Result<Label, SkillError> {
        let slot: u32 = ctx.step("reserve-slot", async { 42 }).await?;
        let kilograms = parcel.kilograms;
        let fee: f64 = ctx.step("weigh", async move { 4.5 + kilograms }).await?;
        ctx.sleep(Duration::from_millis(5)).await?;
        let to = ctx
            .ask("Where to?")
            .await
            .map_err(|e| SkillError::Failed(e.to_string()))?;
        let label: String = ctx
            .step("print-label", async {
                format!("{} to {}", parcel.contents, to.text())
            })
            .await?;
        Ok(Label { label, slot, fee })
    }

    /// Counts an aisle's stock (it takes its time).
    #[skill]
    async fn stocktake(&self, _count: Stocktake) -> String {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        "counted".to_owned()
    }
}

fn send(data: Value, schema: &str, task: Option<&str>, id: &str) -> Value {
    let mut message = json!({"messageId": id, "role": "ROLE_USER",
        "parts": [{"data": data, "mediaType": format!("application/json;schema={schema}")}]});
    if let Some(task) = task {
        message = json!({"messageId": id, "role": "ROLE_USER", "taskId": task,
            "parts": [{"text": "Lisbon"}]});
    }
    json!({"message": message, "configuration": {"returnImmediately": schema == "stocktake"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_works_in_a_real_browser() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let required = std::env::var_os("A2A_REQUIRE_BROWSER").is_some();
    let ready = chromium().and_then(|c| playwright(root).map(|()| c));
    let chromium = match ready {
        Ok(c) => c,
        Err(why) if !required => {
            eprintln!("skipping the browser test: {why}");
            return;
        }
        Err(why) => panic!("the browser test cannot run: {why}"),
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-ui-store");
    std::fs::create_dir_all(&dir).expect("a directory");
    let db = dir.join("depot.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let running = serve(
        Server::new(Depot)
            .tasks(Tasks::sqlite(&db))
            .console(Console::at("/console").allow_token(TOKEN)),
    )
    .await;
    let base = running.base.clone();
    // A parcel shipped (asked, answered), one waiting for its address, a stocktake working.
    let parcel = json!({"contents": "books", "kilograms": 2.0});
    let asked = rpc(
        &base,
        "SendMessage",
        send(parcel.clone(), "parcel", None, "m1"),
    )
    .await;
    let shipped = asked["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_owned();
    let done = rpc(
        &base,
        "SendMessage",
        send(json!(null), "", Some(&shipped), "m2"),
    )
    .await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    let waiting = rpc(&base, "SendMessage", send(parcel, "parcel", None, "m3")).await;
    let waiting = waiting["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_owned();
    let counting = rpc(
        &base,
        "SendMessage",
        send(json!({"aisle": 7}), "stocktake", None, "m4"),
    )
    .await;
    let counting = counting["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_owned();

    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-ui");
    keep_as_before(&out);
    std::fs::create_dir_all(&out).expect("screenshot directory");
    let script = root.join("tests/browser/console_ui.mjs");
    let output = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .arg(script)
            .args([&base, TOKEN, &shipped, &waiting, &counting])
            .arg(&out)
            .env("CHROMIUM", chromium)
            .output()
            .expect("run node")
    })
    .await
    .expect("the browser's thread");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    println!("{stdout}");
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(!stdout.contains("FAIL"), "{stdout}");
    for state in ["signin", "list", "journal", "cancel", "keyboard", "phone"] {
        let shot = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("console-ui/console-ui-{state}.png"));
        assert!(shot.exists(), "no screenshot {}", shot.display());
    }
    drop(running);
}
