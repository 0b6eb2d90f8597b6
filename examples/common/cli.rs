//! The command line both example agents share: `--port`, `--print-card`, serving until Ctrl-C.

use std::future::Future;
use std::io::Write;
use std::process::ExitCode;

use a2a_card::server::{Listening, ServerError};
use a2a_card::{Agent, wire::Profile};

/// What the command line asks for.
enum Command {
    Serve { port: u16 },
    PrintCard(Profile),
    Help,
}

fn usage(name: &str, default_port: u16) -> String {
    format!(
        "usage: {name} [--port N] [--print-card [v1|v0.3|compat]]
  --port N        serve on 127.0.0.1:N (default: $PORT, else {default_port}; 0 picks a free port)
  --print-card P  print the card in profile P (default v1) and exit"
    )
}

fn parse(args: &[String], default_port: u16) -> Result<Command, String> {
    let mut port = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--port" | "-p" => {
                let value = args.get(i + 1).ok_or("--port needs a number")?;
                port = Some(parse_port(value)?);
                i += 1;
            }
            arg if arg.starts_with("--port=") => port = Some(parse_port(&arg[7..])?),
            "--print-card" => {
                let profile = match args.get(i + 1) {
                    Some(p) if !p.starts_with('-') => p.parse()?,
                    _ => Profile::V1,
                };
                return Ok(Command::PrintCard(profile));
            }
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
    Ok(Command::Serve { port })
}

fn parse_port(value: &str) -> Result<u16, String> {
    value
        .parse()
        .map_err(|_| format!("`{value}` is not a port number (0 to 65535)"))
}

/// Runs the example: parses the arguments, then prints the card of `A` or binds with `bind`,
/// prints `banner` and serves until Ctrl-C.
pub fn run<A, B, F>(
    name: &str,
    default_port: u16,
    bind: B,
    banner: fn(&Listening) -> String,
) -> ExitCode
where
    A: Agent,
    B: FnOnce(u16) -> F,
    F: Future<Output = Result<Listening, ServerError>>,
{
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse(&args, default_port) {
        Ok(Command::Help) => {
            println!("{}", usage(name, default_port));
            ExitCode::SUCCESS
        }
        Ok(Command::PrintCard(profile)) => print_card::<A>(profile),
        Ok(Command::Serve { port }) => serve(name, bind(port), banner),
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

fn serve(
    name: &str,
    bind: impl Future<Output = Result<Listening, ServerError>>,
    banner: fn(&Listening) -> String,
) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        let listening = bind.await?;
        // Serving goes on even if nobody reads the banner.
        let _ = writeln!(std::io::stdout(), "{}", banner(&listening));
        listening
            .serve_with_shutdown(async {
                // Ctrl-C ends the server; if the signal cannot be watched, it runs until killed.
                if tokio::signal::ctrl_c().await.is_err() {
                    std::future::pending::<()>().await;
                }
            })
            .await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::FAILURE
        }
    }
}
