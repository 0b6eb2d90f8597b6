//! The official A2A SDKs' *clients* against the example agents, served here on free loopback
//! ports: the Python SDK 1.3 client (`a2a.client`) and the JS SDK 1.3 client
//! (`@a2a-js/sdk/client`) over JSON-RPC 1.0 and HTTP+JSON, and the Python SDK 0.3 client over
//! JSON-RPC 0.3. Each client, through its public API, checks the task lifecycle as the SDK sees
//! it: a stream that begins with the task and ends completed, a subscription to a task waiting
//! for input that gives the task once and then updates, cancel (again, and of a finished task),
//! `ListTasks` newest first with its cursor and its page-size limits, refused messages that
//! leave no task, and JSON-RPC errors that reach the SDK as its error types with their codes
//! rather than as transport failures.
//!
//! The drivers are `tests/interop/lifecycle_py.py`, `lifecycle_py03.py` and `lifecycle_js.mjs`:
//! each prints one `ok ...` or `FAIL ...` line per check and exits non-zero on any failure. The
//! SDKs come from `$A2A_PY`, `$A2A_PY_0_3` and `$A2A_JS_DIR` (CI sets them, see `.ci/run`), else
//! they are installed under the target directory. A test skips, with a printed reason, only when
//! `python3` (or `node`/`npm`) is absent and `A2A_REQUIRE_SDKS` is unset (CI sets it, so there it
//! fails instead).

use crate::fight_club::agent as fight_club;
use crate::support;
use crate::trip_planner::server;

use std::ffi::OsString;
use std::time::Duration;

use a2a_card::server::{Server, Webhooks};
use support::client::{Running, serve};
use support::driver::{self, assert_checks};

/// The agents one driver talks to, each on its own port (a driver counts the tasks it leaves,
/// so no two drivers share an agent).
struct Agents {
    /// The trip planner, planning a day in a few milliseconds.
    planner: Running,
    /// The trip planner at a day a second: a 14-day plan is still running when it is cancelled.
    slow_planner: Running,
    /// The trip planner without the A2A 0.3 translation: a 0.3 method is an unknown method.
    without_0_3: Running,
    /// The fight club: no streaming, one structured answer.
    fight_club: Running,
}

impl Agents {
    async fn start() -> Self {
        let planner = |pace| server::server(pace, Webhooks::default());
        Agents {
            planner: serve(planner(Duration::from_millis(20))).await,
            slow_planner: serve(planner(Duration::from_secs(1))).await,
            without_0_3: serve(planner(Duration::from_millis(20)).a2a_0_3(false)).await,
            fight_club: serve(Server::new(fight_club::FightClub)).await,
        }
    }

    /// The drivers' arguments: the four base URLs, in this order.
    fn bases(&self) -> Vec<OsString> {
        [
            &self.planner,
            &self.slow_planner,
            &self.without_0_3,
            &self.fight_club,
        ]
        .iter()
        .map(|r| OsString::from(&r.base))
        .collect()
    }
}

/// Runs `program args... BASES...` (the agents' base URLs) with `env` added.
async fn run_driver(
    program: OsString,
    mut args: Vec<OsString>,
    env: Vec<(&'static str, OsString)>,
    agents: &Agents,
) -> (bool, String) {
    args.extend(agents.bases());
    driver::run(program, args, env).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_1_3_client_over_json_rpc_and_http_json() {
    let Some(python) = support::a2a_python() else {
        return;
    };
    let agents = Agents::start().await;
    let out = run_driver(
        python.into(),
        vec![driver::path("lifecycle_py.py").into()],
        Vec::new(),
        &agents,
    )
    .await;
    // Eleven checks on each binding, and the unknown method on JSON-RPC.
    assert_checks("Python SDK 1.3", out, 23);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_0_3_client_over_json_rpc_0_3() {
    let Some(python) = support::a2a_python_0_3() else {
        return;
    };
    let agents = Agents::start().await;
    let out = run_driver(
        python.into(),
        vec![driver::path("lifecycle_py03.py").into()],
        Vec::new(),
        &agents,
    )
    .await;
    assert_checks("Python SDK 0.3", out, 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_js_sdk_client_over_json_rpc_and_http_json() {
    let Some(dir) = support::a2a_js_dir() else {
        return;
    };
    let agents = Agents::start().await;
    let out = run_driver(
        "node".into(),
        vec![driver::path("lifecycle_js.mjs").into()],
        vec![("A2A_JS_DIR", dir.into())],
        &agents,
    )
    .await;
    assert_checks("JS SDK 1.3", out, 23);
}
