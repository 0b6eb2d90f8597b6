//! The official MCP SDKs' *clients* against the agents' MCP face, served here on free loopback
//! ports: the Python SDK (`mcp`, its `Client`) in both of its modes, `auto` (MCP 2026-07-28,
//! where a question comes back as an `input_required` result the client answers and retries)
//! and `legacy` (the initialize handshake, where the server sends `elicitation/create` during
//! the call), and the TypeScript SDK (`@modelcontextprotocol/sdk`, `Client` over
//! `StreamableHTTPClientTransport`). Each, through its public API, checks: the tools and their
//! schemas against the served card, a structured call answered as A2A answers it, invalid
//! arguments and unknown tools, progress and a question answered (or declined) in the middle of
//! a streamed plan, a call cancelled mid-plan (the A2A task ends canceled and makes no more
//! days), and the guarded judge's security as MCP's authorization spec has it (`401` naming the
//! protected-resource metadata, `403 insufficient_scope` for a tool the token's scopes do not
//! cover, extended skills listed only to authenticated callers). The Python client also
//! launches the fight club example as a stdio server and calls it there.
//!
//! The drivers are `tests/interop/mcp_py.py` and `mcp_js.mjs`: each prints one `ok ...` or
//! `FAIL ...` line per check and exits non-zero on any failure. The SDKs come from `$MCP_PY`
//! and `$MCP_JS_DIR` (CI sets them, see `.ci/run`), else they are installed under the target
//! directory. A test skips, with a printed reason, only when `python3` (or `node`/`npm`) is
//! absent and `A2A_REQUIRE_SDKS` is unset.
//!
//! The stdio server is the `fight_club` example's own binary (`--mcp-stdio --tasks memory`), as
//! a desktop host would start it. Cargo gives integration tests the paths of the package's
//! binaries (`CARGO_BIN_EXE_*`) but not of its examples, and builds the examples only when the
//! whole package is tested, so the test asks Cargo for it: `$CARGO build --workspace
//! --all-features --example fight_club`, into this test's own target directory and profile. The
//! options are those of the README's test command (`cargo test --workspace --all-features`),
//! so there the example is already built and the build is a no-op; run alone, this test builds
//! the example once. (Cargo holds its build lock only while it compiles, not while tests run.)

use crate::fight_club::agent as fight_club;
use crate::guarded_judge::agent as guarded_judge;
use crate::support;
use crate::trip_planner::server;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use a2a_card::server::auth::{Algorithm, Authentication, JwtVerifier};
use a2a_card::server::{Server, Webhooks};
use support::client::{Running, serve};
use support::driver::{self, assert_checks};
use support::tokens::{self, Pair};

/// The agents one driver talks to, each on its own port, and the judge's tokens.
struct Agents {
    /// The trip planner, planning a day in a few milliseconds.
    planner: Running,
    /// The trip planner at a day a second: a 14-day plan is still running when it is cancelled.
    slow_planner: Running,
    /// The fight club: one structured answer.
    fight_club: Running,
    /// The guarded judge: a bearer JWT required, `record` needing the scope `fights:write`,
    /// `odds` listed only to authenticated callers.
    judge: Running,
    /// A token of the judge's issuer with the scope `fights:write`.
    writer: String,
    /// A valid token without that scope.
    reader: String,
}

impl Agents {
    async fn start() -> Self {
        let planner = |pace| server::server(pace, Webhooks::default());
        let key = Pair::ed25519("k1");
        let verifier = || {
            JwtVerifier::new(tokens::keys(&[&key]), [Algorithm::EdDSA])
                .issuer(tokens::ISSUER)
                .audience(tokens::AUDIENCE)
        };
        // As the example serves it (examples/guarded_judge/main.rs), with a key of the test's.
        let judge = Server::new(guarded_judge::GuardedJudge)
            .authentication(
                Authentication::new()
                    .token("bearer", verifier())
                    .token("oauth", verifier()),
            )
            .mcp(true);
        Agents {
            planner: serve(planner(Duration::from_millis(20))).await,
            slow_planner: serve(planner(Duration::from_secs(1))).await,
            fight_club: serve(Server::new(fight_club::FightClub).mcp(true)).await,
            judge: serve(judge).await,
            writer: key.sign(&tokens::claims("writer", "fights:write")),
            reader: key.sign(&tokens::claims("reader", "fights:read")),
        }
    }

    /// The drivers' arguments: the four base URLs, then the two tokens, in this order.
    fn args(&self) -> Vec<OsString> {
        [
            &self.planner.base,
            &self.slow_planner.base,
            &self.fight_club.base,
            &self.judge.base,
            &self.writer,
            &self.reader,
        ]
        .iter()
        .map(OsString::from)
        .collect()
    }
}

/// The checks each driver makes over streamable HTTP, per mode: the protocol version and the
/// session's end, the fight club's and the planner's tools, the fight call, its bad arguments,
/// the unknown tool, the planner's progress and question, the declined question, the cancelled
/// plan, and five on the judge.
const HTTP_CHECKS: usize = 14;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_client_in_auto_and_legacy_mode() {
    let Some(python) = support::mcp_python() else {
        return;
    };
    let agents = Agents::start().await;
    let mut args = vec![driver::path("mcp_py.py").into(), "http".into()];
    args.extend(agents.args());
    let out = driver::run(python.into(), args, Vec::new()).await;
    assert_checks("MCP Python SDK", out, 2 * HTTP_CHECKS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_client() {
    let Some(dir) = support::mcp_js_dir() else {
        return;
    };
    let agents = Agents::start().await;
    let mut args = vec![driver::path("mcp_js.mjs").into()];
    args.extend(agents.args());
    let out = driver::run("node".into(), args, vec![("MCP_JS_DIR", dir.into())]).await;
    assert_checks("MCP TypeScript SDK", out, HTTP_CHECKS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_client_over_stdio_launching_the_example() {
    let Some(python) = support::mcp_python() else {
        return;
    };
    let example = tokio::task::spawn_blocking(fight_club_example)
        .await
        .expect("the build's thread");
    // What the example must answer: its judge's verdict, as this test computes it.
    let verdict = fight_club::judge(&fight_club::FightComparison {
        a: "Lion".into(),
        b: "Tiger".into(),
    });
    let verdict = serde_json::to_string(&verdict).expect("the verdict as JSON");
    let args = vec![
        driver::path("mcp_py.py").into(),
        "stdio".into(),
        example.into(),
        verdict.into(),
    ];
    let out = driver::run(python.into(), args, Vec::new()).await;
    // The tools and one call, in each mode.
    assert_checks("MCP Python SDK over stdio", out, 4);
}

/// The `fight_club` example's binary, built by Cargo (see the module docs) in the profile this
/// test was built in, into the same target directory.
fn fight_club_example() -> PathBuf {
    // This test runs from `<target>/<profile>/deps/`; the examples are in `<target>/<profile>/examples/`.
    let exe = std::env::current_exe().expect("the test's own path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test runs from <target>/<profile>/deps");
    let profile = profile_dir
        .file_name()
        .and_then(|p| p.to_str())
        .expect("a profile directory");
    let target_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory holds tmp/")
        .to_path_buf();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let mut build = Command::new(cargo);
    build
        .args(["build", "--quiet", "--workspace", "--all-features"])
        .args(["--example", "fight_club", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target_dir);
    // `debug` is the `dev` profile's directory; the others are named after their profile.
    if profile != "debug" {
        build.args(["--profile", profile]);
    }
    let status = build
        .status()
        .unwrap_or_else(|e| panic!("cargo does not start: {e}"));
    assert!(status.success(), "building the fight_club example failed");
    let example = profile_dir
        .join("examples")
        .join(format!("fight_club{}", std::env::consts::EXE_SUFFIX));
    assert!(example.exists(), "no {}", example.display());
    example
}
