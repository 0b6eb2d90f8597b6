//! The command line both example agents share: `--port`, `--print-card`, `--mcp-stdio`,
//! serving until SIGTERM or Ctrl-C (then drained: see `Listening::serve`).

use std::future::Future;
use std::io::Write;
use std::process::ExitCode;

use a2a_card::server::store::Tasks;
use a2a_card::server::{Listening, Server};
use a2a_card::{Agent, wire::Profile};

/// What the command line asks for.
enum Command {
    Serve { port: u16, tasks: Tasks },
    McpStdio { tasks: Tasks },
    PrintCard(Profile),
    Help,
}

fn usage(name: &str, default_port: u16) -> String {
    format!(
        "usage: {name} [--port N] [--tasks URL] [--mcp-stdio] [--print-card [v1|v0.3|compat]]
  --port N        serve on 127.0.0.1:N (default: $PORT, else {default_port}; 0 picks a free port)
  --tasks URL     where tasks are kept: sqlite://FILE, postgres://... (shared by replicas) or
                  memory (default: $A2A_TASKS, else sqlite://{name}.tasks.db, so a restarted
                  agent still knows its tasks); $A2A_TASKS_LEASE_MS sets the replica lease
  --mcp-stdio     serve the agent as an MCP server on stdin/stdout (for a desktop host that
                  starts it) instead of on a port
  --print-card P  print the card in profile P (default v1) and exit"
    )
}

fn parse(args: &[String], name: &str, default_port: u16) -> Result<Command, String> {
    let mut port = None;
    let mut tasks = None;
    let mut stdio = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--port" | "-p" => {
                let value = args.get(i + 1).ok_or("--port needs a number")?;
                port = Some(parse_port(value)?);
                i += 1;
            }
            arg if arg.starts_with("--port=") => port = Some(parse_port(&arg[7..])?),
            "--tasks" => {
                let value = args
                    .get(i + 1)
                    .ok_or("--tasks needs a URL (sqlite://FILE or memory)")?;
                tasks = Some(Tasks::from_url(value)?);
                i += 1;
            }
            arg if arg.starts_with("--tasks=") => tasks = Some(Tasks::from_url(&arg[8..])?),
            "--print-card" => {
                let profile = match args.get(i + 1) {
                    Some(p) if !p.starts_with('-') => p.parse()?,
                    _ => Profile::V1,
                };
                return Ok(Command::PrintCard(profile));
            }
            "--mcp-stdio" => stdio = true,
            "--help" | "-h" => return Ok(Command::Help),
            other => return Err(format!("unknown argument `{other}`")),
        }
        i += 1;
    }
    let port = match port {
        Some(port) => port,
        None => match std::env::var("PORT") {
            Ok(value) if !value.trim().is_empty() => {
                parse_port(value.trim()).map_err(|e| format!("PORT: {e}"))?
            }
            _ => default_port,
        },
    };
    let tasks = match tasks {
        Some(tasks) => tasks,
        None => match std::env::var("A2A_TASKS") {
            Ok(url) if !url.trim().is_empty() => {
                Tasks::from_url(&url).map_err(|e| format!("A2A_TASKS: {e}"))?
            }
            _ => Tasks::sqlite(format!("{name}.tasks.db")),
        },
    };
    let tasks = match std::env::var("A2A_TASKS_LEASE_MS") {
        Ok(ms) => {
            let ms: u64 = ms.trim().parse().map_err(|_| {
                format!("A2A_TASKS_LEASE_MS: `{ms}` is not a number of milliseconds")
            })?;
            tasks.lease(std::time::Duration::from_millis(ms))
        }
        Err(_) => tasks,
    };
    if stdio {
        return Ok(Command::McpStdio { tasks });
    }
    Ok(Command::Serve { port, tasks })
}

fn parse_port(value: &str) -> Result<u16, String> {
    value
        .parse()
        .map_err(|_| format!("`{value}` is not a port number (0 to 65535)"))
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Spans and metrics go where the OTEL_* variables say (nowhere when none is set).
    let _telemetry = match a2a_card::otel::init() {
        Ok(telemetry) => telemetry,
        Err(e) => {
            eprintln!("{name}: {e}");
            return ExitCode::from(2);
        }
    };
    match parse(&args, name, default_port) {
        Ok(Command::Help) => {
            println!("{}", usage(name, default_port));
            ExitCode::SUCCESS
        }
        Ok(Command::PrintCard(profile)) => print_card::<A>(profile),
        Ok(Command::Serve { port, tasks }) => serve(name, example(tasks), port, banner),
        Ok(Command::McpStdio { tasks }) => block_on(name, example(tasks).serve_mcp_stdio()),
        Err(e) => {
            eprintln!("{e}\n{}", usage(name, default_port));
            ExitCode::from(2)
        }
    }
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

fn serve<A: Agent>(
    name: &str,
    server: Server<A>,
    port: u16,
    banner: fn(&Listening) -> String,
) -> ExitCode {
    block_on(name, async {
        let listening = server.bind(("127.0.0.1", port)).await?;
        // Serving goes on even if nobody reads the banner.
        let _ = writeln!(std::io::stdout(), "{}", banner(&listening));
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
