//! The form page (`GET /ui`) of the examples' agents: served with its embedded assets, and
//! driven in a real browser (Debian's headless Chromium through `playwright-core`, by
//! `tests/browser/form_ui.mjs`): a fresh form that flags nothing, titles and Markdown
//! descriptions, the fight form submitted and answered, an invalid trip shown at its field, a
//! streamed plan arriving card by card, a keyboard-only run, a phone-sized screen. A screenshot
//! of each state goes to `target/tmp/form-ui/`, and those of the run before to
//! `target/tmp/form-ui/before/`, to compare.
//!
//! Chromium comes from apt (installed here when running as root and missing), playwright-core
//! from `ui/package-lock.json`. Without them the browser test says why and skips, unless
//! `A2A_REQUIRE_BROWSER` is set (CI sets it), when it fails.

use crate::fight_club::{agent as fight_agent, server as fight_server};
use crate::trip_planner::server as trip_server;

use std::path::{Path, PathBuf};
use std::process::Command;

use a2a_card::server::store::Tasks;
use tokio::sync::oneshot;

const CHROMIUM: &str = "/usr/bin/chromium";

struct Running {
    base: String,
    _stop: oneshot::Sender<()>,
}

async fn start<A: a2a_card::Agent>(server: a2a_card::server::Server<A>) -> Running {
    let listening = server.bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listening.local_addr());
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(listening.serve_with_shutdown(async {
        let _ = stopped.await;
    }));
    Running { base, _stop: stop }
}

async fn fight_club() -> Running {
    start(fight_server::example(Tasks::memory())).await
}

async fn trip_planner() -> Running {
    start(trip_server::example(Tasks::memory())).await
}

#[tokio::test]
async fn the_page_and_its_assets_are_served_with_their_types() {
    let server = fight_club().await;
    let http = reqwest::Client::new();
    for (path, kind, needle) in [
        ("/ui", "text/html", "ui/app.js"),
        ("/ui/app.js", "text/javascript", "SendStreamingMessage"),
        ("/ui/form.js", "text/javascript", "class SchemaForm"),
        ("/ui/app.css", "text/css", "field-error"),
    ] {
        let response = http
            .get(format!("{}{path}", server.base))
            .send()
            .await
            .expect("served");
        assert_eq!(response.status(), 200, "{path}");
        let headers = response.headers().clone();
        let content_type = headers["content-type"].to_str().unwrap_or_default();
        assert!(content_type.starts_with(kind), "{path}: {content_type}");
        assert!(
            headers["content-security-policy"]
                .to_str()
                .unwrap_or_default()
                .contains("script-src 'self'"),
            "{path}"
        );
        assert!(
            !headers["content-security-policy"]
                .to_str()
                .unwrap_or_default()
                .contains("unsafe-inline"),
            "{path}: the page needs no inline script or style"
        );
        let body = response.text().await.expect("a body");
        assert!(body.contains(needle), "{path} lacks {needle}");
    }
    // Everything the page loads is one of these: nothing from elsewhere.
    let page = http
        .get(format!("{}/ui", server.base))
        .send()
        .await
        .expect("served")
        .text()
        .await
        .expect("a body");
    let outside: Vec<&str> = page
        .split(['"', '\''])
        .filter(|s| s.contains("://"))
        .collect();
    assert!(outside.is_empty(), "the page refers to {outside:?}");
    let gone = http
        .get(format!("{}/ui/jsoneditor.js", server.base))
        .send()
        .await
        .expect("answered");
    assert_eq!(gone.status(), 404);
}

#[tokio::test]
async fn the_page_is_off_unless_asked_for() {
    let server = start(a2a_card::server::Server::new(fight_agent::FightClub)).await;
    let status = reqwest::get(format!("{}/ui", server.base))
        .await
        .expect("answered")
        .status();
    assert_eq!(status, 404);
}

/// Chromium, installed with apt when running as root; `None` (and why) when it cannot be had.
pub(crate) fn chromium() -> Result<PathBuf, String> {
    let path = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(CHROMIUM));
    if path.exists() {
        return Ok(path);
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    if !root {
        return Err(format!(
            "{} is missing and this is not root: `apt-get install chromium chromium-driver`",
            path.display()
        ));
    }
    let installed = Command::new("apt-get")
        .args([
            "install",
            "-y",
            "-qq",
            "--no-install-recommends",
            "chromium",
            "chromium-driver",
        ])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .is_ok_and(|s| s.success());
    if installed && path.exists() {
        Ok(path)
    } else {
        Err("apt-get could not install chromium".to_owned())
    }
}

/// `ui/node_modules` with playwright-core, from the lockfile.
pub(crate) fn playwright(root: &Path) -> Result<(), String> {
    if root.join("ui/node_modules/playwright-core").exists() {
        return Ok(());
    }
    let ok = Command::new("npm")
        .args(["ci", "--silent", "--no-audit", "--no-fund", "--prefix"])
        .arg(root.join("ui"))
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(())
    } else {
        Err("`npm ci --prefix ui` failed (is npm installed?)".to_owned())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_forms_work_in_a_real_browser() {
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
    let (fight, trip) = (fight_club().await, trip_planner().await);
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("form-ui");
    keep_as_before(&out);
    std::fs::create_dir_all(&out).expect("screenshot directory");
    let script = root.join("tests/browser/form_ui.mjs");
    let (fight_url, trip_url) = (fight.base.clone(), trip.base.clone());
    let output = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .arg(script)
            .args([&fight_url, &trip_url])
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
    for state in [
        "fresh", "fight", "touched", "invalid", "stream", "question", "file", "keyboard", "phone",
    ] {
        let shot =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("form-ui/form-ui-{state}.png"));
        assert!(shot.exists(), "no screenshot {}", shot.display());
    }
}

/// The screenshots of the run before, moved to `before/` beside the new ones.
pub(crate) fn keep_as_before(out: &Path) {
    let Ok(entries) = std::fs::read_dir(out) else {
        return;
    };
    let before = out.join("before");
    std::fs::create_dir_all(&before).expect("a directory for the screenshots before");
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "png") {
            std::fs::rename(&path, before.join(entry.file_name())).expect("move a screenshot");
        }
    }
}
