//! Server processes a test can kill: the test binary started again, running one test of its
//! own (which serves, and prints `LISTENING <url>`), with the environment the test gives.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The command that runs test `process` of this test binary alone (`process` as
/// `concat!(module_path!(), "::name")` gives it: the test harness names tests without the
/// crate's name).
pub fn test_process(process: &str) -> Command {
    let exe = std::env::current_exe().expect("the test binary");
    let name = process.split_once("::").map_or(process, |(_, test)| test);
    let mut command = Command::new(exe);
    command.args([name, "--exact", "--nocapture", "--test-threads=1"]);
    command
}

/// A server process, killed (as `kill -9` does) when dropped.
pub struct Replica {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl Replica {
    /// Runs test `process` of this test binary (alone) with `env`, and waits until it says
    /// where it listens. `process` is the test's path with the crate's name, as
    /// `concat!(module_path!(), "::name")` gives it.
    pub fn spawn(process: &str, env: &[(&str, String)]) -> Replica {
        Replica::try_spawn(process, env).unwrap_or_else(|why| panic!("{why}"))
    }

    /// As [`spawn`](Self::spawn), or why the process did not start (what it printed).
    pub fn try_spawn(process: &str, env: &[(&str, String)]) -> Result<Replica, String> {
        let mut command = test_process(process);
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("a replica process");
        let stdout = child.stdout.take().expect("its output");
        let mut base = None;
        let mut lines = BufReader::new(stdout).lines();
        for line in lines.by_ref() {
            let line = line.expect("a line");
            // The test harness may have printed the test's name before it on the line.
            if let Some((_, url)) = line.split_once("LISTENING ") {
                base = Some(url.trim().to_owned());
                break;
            }
        }
        // Read on, so that what the process prints later (the harness's verdict, once it
        // returns) does not meet a closed pipe and fail it.
        std::thread::spawn(move || lines.for_each(drop));
        let Some(base) = base else {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("the replica did not start: {err}"));
        };
        Ok(Replica { child, base })
    }

    /// Sends it SIGTERM, as an orchestrator does to stop it.
    pub fn terminate(&self) {
        self.signal("-TERM");
    }

    /// Pauses it (SIGSTOP), as a stalled machine or a long garbage collection would: it does
    /// nothing, and holds its connections, until [`resume`](Self::resume).
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Resumes it after [`pause`](Self::pause) (SIGCONT).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let sent = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(sent.success(), "{signal} was not sent");
    }

    /// Waits `within` at most for it to exit: how it exited and when (after the call), or
    /// `None` if it still runs.
    pub async fn exited_within(&mut self, within: Duration) -> Option<(ExitStatus, Duration)> {
        let start = Instant::now();
        while start.elapsed() < within {
            if let Some(status) = self.child.try_wait().expect("the replica's status") {
                return Some((status, start.elapsed()));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        None
    }

    /// Kills it as `kill -9` does.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The environment that sets a process's wall clock `offset` off (libfaketime's `FAKETIME`
/// form: `+1h`, `-30m`), its monotonic clock left alone: what a replica on a machine whose
/// clock is wrong sees. `None` (the test skips, saying why) where Debian's `libfaketime` is not
/// installed; with `A2A_REQUIRE_FAKETIME` set it panics instead.
pub fn clock_offset_or_skip(offset: &str) -> Option<Vec<(&'static str, String)>> {
    let library = ["x86_64-linux-gnu", "aarch64-linux-gnu"]
        .iter()
        .map(|arch| format!("/usr/lib/{arch}/faketime/libfaketime.so.1"))
        .find(|path| std::path::Path::new(path).exists());
    let Some(library) = library else {
        let why = "libfaketime is not installed (Debian: apt-get install libfaketime)";
        if std::env::var_os("A2A_REQUIRE_FAKETIME").is_some() {
            panic!("a clock offset is required (A2A_REQUIRE_FAKETIME) but: {why}");
        }
        eprintln!("SKIPPED the clock offset: {why}");
        return None;
    };
    Some(vec![
        ("LD_PRELOAD", library),
        ("FAKETIME", offset.to_owned()),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_owned()),
    ])
}
