//! The command line the example agents share, on clap: `--port`, `--tasks`, `--mcp-stdio`,
//! `--print-card`, serving until SIGTERM or Ctrl-C (then drained: see `Listening::serve`);
//! `--replay-check` before a deploy (the durable tasks running in the store, replayed against
//! this build) and `--save-journals`.

use std::future::Future;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use a2a_card::server::store::Tasks;
use a2a_card::server::{Console, Listening, Server};
use a2a_card::testing::Replay;
use a2a_card::{Agent, wire::Profile};
use clap::{CommandFactory, FromArgMatches, Parser};

/// Serves the example agent on 127.0.0.1 (JSON-RPC, HTTP+JSON, gRPC and MCP on one port), or
/// over MCP on stdin/stdout, or prints its card. Spans and metrics go where the `OTEL_*`
/// variables say (nowhere when none is set).
#[derive(Parser)]
struct Args {
    /// The port to serve on, on 127.0.0.1 (0 picks a free port).
    #[arg(short, long, env = "PORT")]
    port: Option<u16>,
    /// Where tasks are kept: sqlite://FILE, postgres://... (shared by replicas) or memory.
    #[arg(long, env = "A2A_TASKS", value_name = "URL", value_parser = Tasks::from_url)]
    tasks: Option<Tasks>,
    /// How long a replica that stopped renewing still owns its running tasks, in milliseconds
    /// (SQL stores).
    #[arg(long, env = "A2A_TASKS_LEASE_MS", value_name = "MS")]
    tasks_lease_ms: Option<u64>,
    /// Serve the agent as an MCP server on stdin/stdout (for a desktop host that starts it)
    /// instead of on a port.
    #[arg(long)]
    mcp_stdio: bool,
    /// Print the card in profile v1 (the default), v0.3 or compat, and exit.
    #[arg(long, value_name = "PROFILE", num_args = 0..=1, default_missing_value = "v1")]
    print_card: Option<Profile>,
    /// Before a deploy: replay the durable tasks still running in the store --tasks names (or
    /// in FILE, written by --save-journals) against this build, list those that would diverge,
    /// and exit 1 if any would.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "")]
    replay_check: Option<std::path::PathBuf>,
    /// Write the durable tasks still running in the store --tasks names to FILE (JSON lines),
    /// for --replay-check FILE on another build, and exit.
    #[arg(long, value_name = "FILE")]
    save_journals: Option<std::path::PathBuf>,
    /// Serve the operators' console at /console: the agent's tasks, each task's history and
    /// journal, cancel, the replicas and limits; for whoever signs in with the console's token.
    #[arg(long)]
    console: bool,
    /// The console's token (with --console); without it, a fresh one is made and printed once.
    #[arg(
        long,
        env = "A2A_CONSOLE_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    console_token: Option<String>,
}

/// Runs the example: parses the arguments, then prints the card of `A`, or serves `example`
/// (with the task store asked for) on the port asked for, printing `banner`, until SIGTERM or
/// Ctrl-C; or serves it over MCP on stdin/stdout.
pub fn run<A: Agent>(
    name: &str,
    default_port: u16,
    example: fn(Tasks) -> Server<A>,
    banner: fn(&Listening) -> String,
) -> ExitCode {
    let command = Args::command().after_help(format!(
        "Without --port or PORT it serves on port {default_port}; without --tasks or A2A_TASKS \
         it keeps tasks in sqlite://{name}.tasks.db, so that a restarted agent still knows them."
    ));
    let args = Args::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    if let Some(profile) = args.print_card {
        return print_card::<A>(profile);
    }
    // Spans and metrics go where the OTEL_* variables say (nowhere when none is set).
    let _telemetry = match a2a_card::otel::init() {
        Ok(telemetry) => telemetry,
        Err(e) => {
            eprintln!("{name}: {e}");
            return ExitCode::from(2);
        }
    };
    let tasks = args
        .tasks
        .unwrap_or_else(|| Tasks::sqlite(format!("{name}.tasks.db")));
    let tasks = match args.tasks_lease_ms {
        Some(ms) => tasks.lease(Duration::from_millis(ms)),
        None => tasks,
    };
    if let Some(file) = args.save_journals {
        return block_on(name, async move {
            let running = Replay::from_store(&tasks).await?;
            running.save(&file)?;
            eprintln!(
                "{} durable task(s) written to {}",
                running.tasks().len(),
                file.display()
            );
            Ok::<(), a2a_card::testing::TestError>(())
        });
    }
    if let Some(file) = args.replay_check {
        return replay_check(name, example(Tasks::memory()), tasks, file);
    }
    if args.mcp_stdio {
        return block_on(name, example(tasks).serve_mcp_stdio());
    }
    let port = args.port.unwrap_or(default_port);
    let console = match (args.console, args.console_token) {
        (false, _) => None,
        (true, Some(token)) if token.len() >= 16 => Some((token, false)),
        (true, Some(_)) => {
            eprintln!(
                "{name}: the console's token is too short: give one of 16 characters or more (32 random ones are best)"
            );
            return ExitCode::from(2);
        }
        (true, None) => match fresh_token() {
            Ok(token) => Some((token, true)),
            Err(e) => {
                eprintln!(
                    "{name}: no token could be made for the console ({e}): set A2A_CONSOLE_TOKEN"
                );
                return ExitCode::FAILURE;
            }
        },
    };
    let server = match &console {
        Some((token, _)) => example(tasks).console(Console::at("/console").allow_token(token)),
        None => example(tasks),
    };
    let shown = console.map(|(token, fresh)| fresh.then_some(token));
    serve(name, server, port, banner, shown)
}

/// A fresh console token: 24 random bytes from the system, in hex.
fn fresh_token() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 24];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn print_card<A: Agent>(profile: Profile) -> ExitCode {
    match A::card() {
        Ok(card) => match serde_json::to_string_pretty(&card.to_json(profile)) {
            // A closed pipe (`| head`) is not an error worth a panic.
            Ok(json) => match writeln!(std::io::stdout(), "{json}") {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("cannot print the card: {e}");
                    ExitCode::FAILURE
                }
            },
            Err(e) => {
                eprintln!("cannot print the card: {e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// Replays the durable tasks running in `tasks` (or saved in `file`, when one is named)
/// against `server`'s handlers, prints what each comes to, and says in the exit code whether
/// every one replays.
fn replay_check<A: Agent>(
    name: &str,
    server: Server<A>,
    tasks: Tasks,
    file: std::path::PathBuf,
) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let running = if file.as_os_str().is_empty() {
            eprintln!("{name}: reading the durable tasks running in {tasks:?}");
            Replay::from_store(&tasks).await
        } else {
            Replay::from_file(&file)
        };
        let running = match running {
            Ok(running) => running,
            Err(e) => {
                eprintln!("{name}: {e}");
                return ExitCode::from(2);
            }
        };
        match running.check(server).await {
            Ok(report) => {
                print!("{report}");
                report.exit_code()
            }
            Err(e) => {
                eprintln!("{name}: {e}");
                ExitCode::from(2)
            }
        }
    })
}

fn serve<A: Agent>(
    name: &str,
    server: Server<A>,
    port: u16,
    banner: fn(&Listening) -> String,
    console: Option<Option<String>>,
) -> ExitCode {
    block_on(name, async {
        let listening = server.bind(("127.0.0.1", port)).await?;
        // Serving goes on even if nobody reads the banner.
        let _ = writeln!(std::io::stdout(), "{}", banner(&listening));
        if let Some(fresh) = console {
            let at = format!("http://{}/console", listening.local_addr());
            // A token made here is shown once, on the terminal (never logged); one given in
            // A2A_CONSOLE_TOKEN is not shown at all.
            let sign_in = match fresh {
                Some(token) => format!("sign in with this token (made for this run): {token}"),
                None => "sign in with the token in A2A_CONSOLE_TOKEN".to_owned(),
            };
            let _ = writeln!(std::io::stdout(), "Operators' console: {at}\n  {sign_in}\n");
        }
        // SIGTERM or Ctrl-C drains the server: the requests under way are answered, open
        // streams end, durable tasks are left for the next process to take over at once.
        listening.serve().await
    })
}

/// Runs `work` on a new runtime; its error is printed, and the exit code says how it ended.
fn block_on<E: std::fmt::Display>(
    name: &str,
    work: impl Future<Output = Result<(), E>>,
) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(work) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::FAILURE
        }
    }
}
