//! A server a bench runs in a process of its own: the bench's binary started again, told its
//! part by its environment, which prints `LISTENING <address>` once it listens (so that its
//! resident memory and its processor time are its own). Killed when dropped.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

/// A server process of the bench, and where it listens.
pub struct Process {
    /// The process.
    pub child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl Process {
    /// This bench started again with `env`, once it says where it listens (the rest of its
    /// output read and dropped).
    pub fn start(env: &[(&str, &str)]) -> Process {
        Process::program(&std::env::current_exe().expect("this bench"), &[], env)
    }

    /// `program` started with `args` and `env`, once it says where it listens, as
    /// [`start`](Process::start).
    #[allow(dead_code)] // (each bench has its own copy of this module; some start only themselves)
    pub fn program(program: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Process {
        let mut child = Command::new(program)
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{} could not start: {e}", program.display()));
        let stdout = child.stdout.take().expect("its output");
        let mut lines = BufReader::new(stdout).lines();
        let addr = lines
            .by_ref()
            .find_map(|l| {
                l.ok()?
                    .strip_prefix("LISTENING ")
                    .and_then(|a| a.trim().parse().ok())
            })
            .expect("the server says where it listens");
        std::thread::spawn(move || lines.for_each(drop));
        Process { child, addr }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
