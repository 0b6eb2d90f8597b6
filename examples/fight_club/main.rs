//! The fight-comparison agent of the input/output schemas extension, served on the official
//! A2A server: JSON-RPC (1.0, and 0.3 translated), HTTP+JSON, the card and the AG-UI
//! capabilities, on 127.0.0.1.
//!
//! ```text
//! cargo run --example fight_club                       # serve on port $PORT, else 8080
//! cargo run --example fight_club -- --port 9000        # serve on port 9000 (0: any free port)
//! cargo run --example fight_club -- --print-card       # print the card (A2A 1.0) and exit
//! cargo run --example fight_club -- --print-card compat  # or v0.3
//! ```

mod agent;
mod server;

use std::io::Write;
use std::process::ExitCode;

use a2a_card::{Agent, wire::Profile};

const USAGE: &str = "usage: fight_club [--port N] [--print-card [v1|v0.3|compat]]
  --port N        serve on 127.0.0.1:N (default: $PORT, else 8080; 0 picks a free port)
  --print-card P  print the card in profile P (default v1) and exit";

/// What the command line asks for.
enum Command {
    Serve { port: u16 },
    PrintCard(Profile),
    Help,
}

fn parse(args: &[String]) -> Result<Command, String> {
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
            _ => server::DEFAULT_PORT,
        },
    };
    Ok(Command::Serve { port })
}

fn parse_port(value: &str) -> Result<u16, String> {
    value
        .parse()
        .map_err(|_| format!("`{value}` is not a port number (0 to 65535)"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse(&args) {
        Ok(Command::Help) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Command::PrintCard(profile)) => print_card(profile),
        Ok(Command::Serve { port }) => serve(port),
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn print_card(profile: Profile) -> ExitCode {
    match agent::FightClub::card() {
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

fn serve(port: u16) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        let listening = server::bind(port).await?;
        // Serving goes on even if nobody reads the banner.
        let _ = writeln!(std::io::stdout(), "{}", server::banner(&listening));
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
            eprintln!("fight_club: {e}");
            ExitCode::FAILURE
        }
    }
}
