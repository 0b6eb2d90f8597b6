//! The official SDKs' drivers (`tests/interop/*`): run as child processes off the runtime (the
//! agents keep serving meanwhile), killed after [`DEADLINE`], their `ok`/`FAIL` lines counted.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a driver may run before the test kills it and fails.
pub const DEADLINE: Duration = Duration::from_secs(240);

/// The driver `tests/interop/<name>`.
pub fn path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop")
        .join(name)
}

/// Runs `program args...` with `env` added; its exit status and its output, stdout then
/// stderr (with a line saying so when it was killed after [`DEADLINE`]).
pub async fn run(
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(&'static str, OsString)>,
) -> (bool, String) {
    tokio::task::spawn_blocking(move || {
        // The output goes to files, so that a driver that never ends can still be killed.
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sdk-drivers");
        std::fs::create_dir_all(&dir).expect("a directory for the driver's output");
        let stem = format!("{}-{}", std::process::id(), unique());
        let out_path = dir.join(format!("{stem}.out"));
        let err_path = dir.join(format!("{stem}.err"));
        let mut child = Command::new(&program)
            .args(&args)
            .envs(env)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out_path).expect("stdout file"))
            .stderr(std::fs::File::create(&err_path).expect("stderr file"))
            .spawn()
            .unwrap_or_else(|e| panic!("{program:?} does not start: {e}"));
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("the driver's status") {
                break Some(status);
            }
            if started.elapsed() > DEADLINE {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let output = format!(
            "{}{}",
            std::fs::read_to_string(&out_path).unwrap_or_default(),
            std::fs::read_to_string(&err_path).unwrap_or_default()
        );
        let _ = std::fs::remove_file(out_path);
        let _ = std::fs::remove_file(err_path);
        match status {
            Some(status) => (status.success(), output),
            None => (false, format!("{output}\n(killed after {DEADLINE:?})")),
        }
    })
    .await
    .expect("the driver's thread")
}

/// A number no other call in this process gets (output file names).
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The driver succeeded, with `expected` checks passed and none failed; the output is shown
/// otherwise. The count keeps a driver from passing by running fewer checks than it should.
pub fn assert_checks(sdk: &str, (success, output): (bool, String), expected: usize) {
    let passed = output.lines().filter(|l| l.starts_with("ok ")).count();
    let failed: Vec<&str> = output.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert!(
        success && failed.is_empty() && passed == expected,
        "{sdk}: {passed} of {expected} checks passed, {} failed:\n{output}",
        failed.len()
    );
    // Shown with `--nocapture`.
    println!("{sdk}:\n{output}");
}
