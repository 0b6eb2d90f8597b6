//! A throwaway Postgres cluster for the tests: `initdb` under `target/`, the server on a free
//! loopback port, stopped when the test process ends. Run as a non-root user (as root, as the
//! `postgres` user, since the server refuses to run as root). When the server binaries are
//! missing and the tests run as root, Debian's `postgresql` package is installed first.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Where the Postgres 15+ server binaries are, if anywhere.
fn bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|d| d.join("initdb").exists())
        .collect();
    dirs.sort();
    dirs.pop()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Installs Debian's `postgresql` (as root) when its binaries are missing.
fn install() -> Option<PathBuf> {
    if let Some(dir) = bin_dir() {
        return Some(dir);
    }
    if !is_root() {
        return None;
    }
    eprintln!("postgres: installing Debian's postgresql package for the tests");
    let ok = Command::new("apt-get")
        .arg("update")
        .status()
        .is_ok_and(|s| s.success())
        && Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", "postgresql"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|s| s.success());
    if ok { bin_dir() } else { None }
}

/// Runs `program` (as `postgres` when this process is root).
fn run_as(root: bool, program: &Path, args: &[&str]) -> Command {
    if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program).args(args);
        c
    } else {
        let mut c = Command::new(program);
        c.args(args);
        c
    }
}

/// A free loopback port.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The URL of a database on the test cluster (started at first use), or why there is none.
pub fn cluster() -> Result<&'static str, String> {
    static CLUSTER: OnceLock<Result<String, String>> = OnceLock::new();
    CLUSTER.get_or_init(start).as_deref().map_err(Clone::clone)
}

/// A new cluster's binaries, data and directory, and whether it runs as `postgres`.
struct Initialized {
    bin: PathBuf,
    data: PathBuf,
    dir: PathBuf,
    root: bool,
}

/// `initdb` of a new cluster in `target/<name>` (owned by `postgres` when this process is root).
fn initialize(name: &str) -> Result<Initialized, String> {
    let bin = install().ok_or(
        "the Postgres server binaries are missing (install Debian's `postgresql`, or run the tests as root so that they install it)",
    )?;
    let root = is_root();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if root {
        let status = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(&dir)
            .status()
            .map_err(|e| format!("chown: {e}"))?;
        if !status.success() {
            return Err("chown of the cluster directory failed".into());
        }
    }
    let data = dir.join("data");
    let out = run_as(
        root,
        &bin.join("initdb"),
        &[
            "-D",
            &data.to_string_lossy(),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
        ],
    )
    .output()
    .map_err(|e| format!("initdb: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(Initialized {
        bin,
        data,
        dir,
        root,
    })
}

fn start() -> Result<String, String> {
    let Initialized {
        bin,
        data,
        dir,
        root,
    } = initialize(&format!("pg-{}", std::process::id()))?;
    let data_s = data.to_string_lossy().into_owned();
    let port = free_port();
    let dir_s = dir.to_string_lossy().into_owned();
    // The server stops when this test process ends: a watcher waits for its pid to go.
    let script = format!(
        "'{postgres}' -D '{data_s}' -p {port} -k '{dir_s}' -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200 > '{dir_s}/log' 2>&1 & pg=$!; while [ -d /proc/{me} ]; do sleep 1; done; kill -INT $pg; wait $pg; rm -rf '{data_s}'",
        postgres = bin.join("postgres").display(),
        me = std::process::id(),
    );
    let sh = if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--", "sh", "-c", &script]);
        c
    } else {
        let mut c = Command::new("sh");
        c.args(["-c", &script]);
        c
    };
    let mut sh = sh;
    let errors =
        std::fs::File::create(dir.join("start.log")).map_err(|e| format!("start.log: {e}"))?;
    sh.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(errors);
    sh.spawn().map_err(|e| format!("postgres: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        if Instant::now() > deadline {
            let log = std::fs::read_to_string(dir.join("log")).unwrap_or_default();
            let start = std::fs::read_to_string(dir.join("start.log")).unwrap_or_default();
            return Err(format!("postgres did not start: {start}{log}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(format!("postgres://postgres@127.0.0.1:{port}/postgres"))
}

/// A fresh, empty database on the test cluster, or `None` where Postgres cannot run here
/// (said on stderr; under `A2A_REQUIRE_POSTGRES`, as CI sets it, a failure instead).
pub async fn database_or_skip(name: &str) -> Option<String> {
    match database(name).await {
        Ok(url) => Some(url),
        Err(why) => {
            if std::env::var_os("A2A_REQUIRE_POSTGRES").is_some() {
                panic!("Postgres is required (A2A_REQUIRE_POSTGRES) but: {why}");
            }
            eprintln!("SKIPPED the Postgres test: {why}");
            None
        }
    }
}

/// A fresh, empty database on the test cluster: its URL.
pub async fn database(name: &str) -> Result<String, String> {
    use sqlx::Connection;
    let base = cluster()?;
    let name = format!("{name}_{}", std::process::id()).replace('-', "_");
    // A server that has just started accepts connections before it is ready ("the database
    // system is starting up"): try again for a while, on a loaded machine too.
    let mut tries = 0;
    let mut conn = loop {
        match sqlx::PgConnection::connect(base).await {
            Ok(conn) => break conn,
            Err(e) if tries < 100 && e.to_string().contains("starting up") => {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            Err(e) => return Err(e.to_string()),
        }
    };
    sqlx::raw_sql(&format!("DROP DATABASE IF EXISTS {name}"))
        .execute(&mut conn)
        .await
        .map_err(|e| e.to_string())?;
    sqlx::raw_sql(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!("{}/{name}", base.trim_end_matches("/postgres")))
}

/// A cluster of a test's own, which the test can stop and start again (a database that goes
/// away while a server uses it). Stopped when dropped.
pub struct OwnCluster {
    bin: PathBuf,
    data: PathBuf,
    dir: PathBuf,
    port: u16,
    root: bool,
}

impl OwnCluster {
    /// Creates and starts a cluster named `name` under `target/`.
    pub fn start(name: &str) -> Result<OwnCluster, String> {
        let Initialized {
            bin,
            data,
            dir,
            root,
        } = initialize(&format!("pg-{name}-{}", std::process::id()))?;
        let cluster = OwnCluster {
            bin,
            data,
            dir,
            port: free_port(),
            root,
        };
        cluster.up()?;
        Ok(cluster)
    }

    /// [`start`](Self::start), or `None` where Postgres cannot run here (said on stderr;
    /// under `A2A_REQUIRE_POSTGRES`, as CI sets it, a failure instead).
    pub fn start_or_skip(name: &str) -> Option<OwnCluster> {
        match OwnCluster::start(name) {
            Ok(cluster) => Some(cluster),
            Err(why) => {
                if std::env::var_os("A2A_REQUIRE_POSTGRES").is_some() {
                    panic!("Postgres is required (A2A_REQUIRE_POSTGRES) but: {why}");
                }
                eprintln!("SKIPPED: {why}");
                None
            }
        }
    }

    /// Its `postgres` database.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Starts the server (again), waiting until it accepts connections.
    pub fn up(&self) -> Result<(), String> {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.display()
        );
        let out = run_as(
            self.root,
            &self.bin.join("pg_ctl"),
            &[
                "-D",
                &self.data.to_string_lossy(),
                "-o",
                &options,
                "-l",
                &self.dir.join("log").to_string_lossy(),
                "-w",
                "start",
            ],
        )
        .output()
        .map_err(|e| format!("pg_ctl: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "pg_ctl start: {}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// Stops the server at once (as a crash or a lost network would).
    pub fn down(&self) {
        let _ = run_as(
            self.root,
            &self.bin.join("pg_ctl"),
            &[
                "-D",
                &self.data.to_string_lossy(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
        )
        .output();
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        self.down();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
