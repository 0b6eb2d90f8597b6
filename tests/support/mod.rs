//! Helpers shared by the integration tests: the fixtures and official schemas in `tests/data`
//! (copies of public documents; `tests/data/fixtures/SOURCES.md` says where each comes from).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// The official Python SDK version CI pins, with its gRPC client for tests/sdks/sdk_grpc.rs (keep in
/// step with `.ci/run`).
pub const PY_SDK: &str = "a2a-sdk[signing,grpc]==1.3.0";

/// The last official Python SDK of A2A 0.3, with its server, for an agent that speaks only 0.3
/// (keep in step with `.ci/run`).
pub const PY_SDK_0_3: [&str; 2] = ["a2a-sdk[http-server]==0.3.26", "uvicorn==0.38.0"];

fn succeeds(command: &mut Command) -> bool {
    command.status().is_ok_and(|s| s.success())
}

/// The switch CI sets so that the official SDKs' interop tests cannot pass by skipping: with it,
/// a missing `python3` or `node`/`npm` fails the test instead of skipping it.
pub const REQUIRE_SDKS: &str = "A2A_REQUIRE_SDKS";

/// A test cannot run because `why`: prints why and gives `None` (the caller skips), or panics
/// when [`REQUIRE_SDKS`] is set.
pub fn skip_without_sdk<T>(why: &str) -> Option<T> {
    if std::env::var_os(REQUIRE_SDKS).is_some() {
        panic!("the official SDKs are required ({REQUIRE_SDKS} is set) but: {why}");
    }
    eprintln!("skipping: {why}");
    None
}

/// A Python with the official A2A SDK: `$A2A_PY` (which CI sets), else a venv under the target
/// directory with [`PY_SDK`] installed on first use. `None`, with the reason printed, only when
/// there is no `python3` and [`REQUIRE_SDKS`] is unset (the caller then skips); a failed install
/// fails the test.
pub fn a2a_python() -> Option<PathBuf> {
    static PY: OnceLock<Option<PathBuf>> = OnceLock::new();
    PY.get_or_init(|| {
        python_with(
            "A2A_PY",
            "a2a-py-venv",
            &[PY_SDK],
            // The gRPC transport too: a venv made before the `grpc` extra is installed again.
            "import a2a.utils.signing, a2a.client.card_resolver, a2a.compat.v0_3.types, \
             a2a.client.transports.grpc",
        )
    })
    .clone()
}

/// A Python with the official A2A SDK 0.3 and its server: `$A2A_PY_0_3` (which CI sets), else
/// a venv under the target directory with [`PY_SDK_0_3`]; as [`a2a_python`] otherwise.
pub fn a2a_python_0_3() -> Option<PathBuf> {
    static PY: OnceLock<Option<PathBuf>> = OnceLock::new();
    PY.get_or_init(|| {
        python_with(
            "A2A_PY_0_3",
            "a2a-py03-venv",
            &PY_SDK_0_3,
            "import a2a.server.apps, a2a.types, uvicorn",
        )
    })
    .clone()
}

/// The official JS SDK version CI pins (keep in step with `.ci/run`; the Python one is
/// [`PY_SDK`]).
pub const JS_SDK: &str = "@a2a-js/sdk@1.3.0";

/// A directory with the official JS SDK in `node_modules/@a2a-js/sdk`: `$A2A_JS_DIR` (which CI
/// sets), else one under the target directory with [`JS_SDK`] installed by npm on first use.
/// `None`, with the reason printed, only when there is no `node` or `npm` and [`REQUIRE_SDKS`]
/// is unset (the caller then skips); a failed install fails the test.
pub fn a2a_js_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        js_with(
            "A2A_JS_DIR",
            "a2a-js",
            JS_SDK,
            "node_modules/@a2a-js/sdk/package.json",
        )
    })
    .clone()
}

/// The official MCP Python SDK version CI pins, for tests/sdks/mcp_sdks.rs (keep in step with
/// `.ci/run`).
pub const MCP_PY_SDK: &str = "mcp==2.3.0";

/// A Python with the official MCP SDK: `$MCP_PY` (which CI sets), else a venv under the target
/// directory with [`MCP_PY_SDK`]; as [`a2a_python`] otherwise.
pub fn mcp_python() -> Option<PathBuf> {
    static PY: OnceLock<Option<PathBuf>> = OnceLock::new();
    PY.get_or_init(|| {
        python_with(
            "MCP_PY",
            "mcp-py-venv",
            &[MCP_PY_SDK],
            "from mcp import Client, StdioServerParameters; import mcp.client.streamable_http",
        )
    })
    .clone()
}

/// The official MCP TypeScript SDK version CI pins, for tests/sdks/mcp_sdks.rs (keep in step with
/// `.ci/run`).
pub const MCP_JS_SDK: &str = "@modelcontextprotocol/sdk@1.32.2";

/// A directory with the official MCP TypeScript SDK in `node_modules/@modelcontextprotocol/sdk`:
/// `$MCP_JS_DIR` (which CI sets), else one under the target directory with [`MCP_JS_SDK`]; as
/// [`a2a_js_dir`] otherwise.
pub fn mcp_js_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        js_with(
            "MCP_JS_DIR",
            "mcp-js",
            MCP_JS_SDK,
            "node_modules/@modelcontextprotocol/sdk/package.json",
        )
    })
    .clone()
}

/// `$var`, or a directory `dir` under the target directory with `package` installed by npm
/// (`marker` is a file the install leaves).
fn js_with(var: &str, dir: &str, package: &str, marker: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(var) {
        return Some(PathBuf::from(dir));
    }
    let has = |tool: &str| Command::new(tool).arg("--version").output().is_ok();
    if !has("node") || !has("npm") {
        return skip_without_sdk(&format!(
            "the JS SDK interop needs node and npm on PATH or {var} set; neither is there"
        ));
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    if !dir.join(marker).exists() {
        std::fs::create_dir_all(&dir).expect("a directory for the JS SDK");
        assert!(
            succeeds(
                Command::new("npm")
                    .args(["install", "--silent", "--no-save", "--prefix"])
                    .arg(&dir)
                    .arg(package)
            ),
            "npm install {package} failed"
        );
    }
    Some(dir)
}

/// `$var`, or a venv `dir` under the target directory with `packages` installed, checked by
/// importing `imports`.
fn python_with(var: &str, dir: &str, packages: &[&str], imports: &str) -> Option<PathBuf> {
    if let Some(py) = std::env::var_os(var) {
        return Some(PathBuf::from(py));
    }
    if Command::new("python3").arg("--version").output().is_err() {
        return skip_without_sdk(&format!(
            "the Python SDK checks need python3 on PATH or {var} set; neither is there"
        ));
    }
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    let py = venv.join("bin/python");
    let ready = |py: &Path| succeeds(Command::new(py).args(["-c", imports]));
    if !ready(&py) {
        assert!(
            succeeds(Command::new("python3").arg("-m").arg("venv").arg(&venv)),
            "python3 -m venv failed"
        );
        assert!(
            succeeds(
                Command::new(&py)
                    .args(["-m", "pip", "install", "--quiet"])
                    .args(packages)
            ),
            "pip install {packages:?} failed"
        );
        assert!(ready(&py), "{packages:?} installed but does not import");
    }
    Some(py)
}

/// `tests/data/<rel>`, in the repository.
pub fn shared(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// A JSON file under `tests/data`.
pub fn json(rel: &str) -> Value {
    let path = shared(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every card fixture: (file name, document).
pub fn card_fixtures() -> Vec<(String, Value)> {
    let dir = shared("fixtures/cards");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert!(
        names.len() >= 5,
        "expected the five card fixtures, found {names:?}"
    );
    names
        .into_iter()
        .map(|n| {
            let doc = json(&format!("fixtures/cards/{n}"));
            (n, doc)
        })
        .collect()
}

/// A validator for one definition of an official schema file.
pub fn official_validator(file: &str, definition: &str) -> jsonschema::Validator {
    let mut root = json(&format!("spec/a2a/{file}"));
    encode_refs(&mut root);
    let encoded = definition.replace(' ', "%20");
    root.as_object_mut().unwrap().insert(
        "$ref".into(),
        Value::String(format!("#/definitions/{encoded}")),
    );
    jsonschema::validator_for(&root).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// Definition names in the official 1.0 schema have spaces (`#/definitions/Agent Card`); a URI
/// reference spells them `%20`.
fn encode_refs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                match v {
                    Value::String(s) if k == "$ref" => *s = s.replace(' ', "%20"),
                    other => encode_refs(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(encode_refs),
        _ => {}
    }
}

/// Every violation of `doc` against `validator`, as `pointer: message` lines.
pub fn violations(validator: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    validator
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Every path of `sub` is in `sup` with an equal value (arrays compared element-wise, same length).
/// Returns the paths where they differ.
pub fn missing_from(sub: &Value, sup: &Value, at: &str) -> Vec<String> {
    match (sub, sup) {
        (Value::Object(a), Value::Object(b)) => a
            .iter()
            .flat_map(|(k, v)| match b.get(k) {
                Some(w) => missing_from(v, w, &format!("{at}/{k}")),
                None => vec![format!("{at}/{k} (absent)")],
            })
            .collect(),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .flat_map(|(i, (v, w))| missing_from(v, w, &format!("{at}/{i}")))
            .collect(),
        _ if sub == sup => Vec::new(),
        _ => vec![format!("{at}: {sub} != {sup}")],
    }
}

/// Runs a future to completion on this thread (the tests need no runtime beyond this).
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(out) => return out,
            Poll::Pending => std::thread::park(),
        }
    }
}

/// The official Rust client against a served agent.
pub mod client;

/// A throwaway Postgres cluster.
pub mod postgres;

/// Server processes a test can kill.
pub mod replica;

/// A TCP proxy a test cuts, between a server process and its database.
pub mod proxy;

/// A small filesystem a test fills up.
pub mod disk;

/// An OTLP/HTTP receiver.
pub mod otlp;

/// MCP over raw HTTP.
pub mod mcp;

/// Server-sent events, frame by frame.
pub mod sse;

/// A webhook on loopback, and a task a stopped process left running with it.
pub mod webhook;

/// The official SDKs' drivers, run and judged.
pub mod driver;
pub mod tokens;
