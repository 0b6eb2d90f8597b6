//! The mutation loop: `fuzz TARGET --seconds N [--seed S]` (or `fuzz all --seconds N`) starts
//! from the corpus `fuzz/corpus/TARGET/`, mutates inputs, runs the target on each, keeps the
//! inputs whose outcome is new, and on a panic writes the input to `fuzz/crashes/` and exits
//! non-zero. `fuzz TARGET --run FILE` runs one input (a crash's, to reproduce it).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use a2a_card_fuzz::campaign::fuzz;
use a2a_card_fuzz::runner::run_one;
use a2a_card_fuzz::targets::{TARGETS, Target, find};

const USAGE: &str =
    "usage: fuzz TARGET|all [--seconds N] [--seed S] | fuzz TARGET --run FILE | fuzz --list";

/// The command line.
struct Args {
    target: String,
    seconds: u64,
    seed: Option<u64>,
    run: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut parsed = Args {
        target: String::new(),
        seconds: 60,
        seed: None,
        run: None,
    };
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--seconds" => {
                parsed.seconds = value("--seconds")?
                    .parse()
                    .map_err(|e| format!("--seconds: {e}"))?;
            }
            "--seed" => {
                parsed.seed = Some(
                    value("--seed")?
                        .parse()
                        .map_err(|e| format!("--seed: {e}"))?,
                );
            }
            "--run" => parsed.run = Some(PathBuf::from(value("--run")?)),
            "--list" => parsed.target = "--list".to_owned(),
            other if other.starts_with('-') => return Err(format!("unknown option {other}")),
            other => parsed.target = other.to_owned(),
        }
    }
    if parsed.target.is_empty() {
        return Err("no target".to_owned());
    }
    Ok(parsed)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if args.target == "--list" {
        for t in TARGETS {
            println!("{:<14} {}", t.name, t.about);
        }
        return ExitCode::SUCCESS;
    }
    let targets: Vec<&'static Target> = if args.target == "all" {
        TARGETS.iter().collect()
    } else {
        match find(&args.target) {
            Some(t) => vec![t],
            None => {
                eprintln!("no target `{}`; `fuzz --list` lists them", args.target);
                return ExitCode::from(2);
            }
        }
    };
    if let Some(file) = &args.run {
        return reproduce(targets[0], file);
    }
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    println!("seed {seed} (--seed {seed} makes the same inputs)");
    let mut summaries = Vec::new();
    for target in targets {
        let summary = fuzz(target, Duration::from_secs(args.seconds), seed);
        let crashed = summary.crash.is_some();
        summaries.push(summary);
        if crashed && args.target != "all" {
            break;
        }
    }
    println!("\ntarget          execs  execs/s  corpus  features  crash");
    for s in &summaries {
        println!(
            "{:<14} {:>6} {:>8.0} {:>7} {:>9}  {}",
            s.target,
            s.execs,
            s.execs as f64 / s.seconds.max(1e-9),
            s.corpus,
            s.outcomes,
            s.crash
                .as_ref()
                .map_or("none".to_owned(), |p| p.display().to_string()),
        );
    }
    if summaries.iter().any(|s| s.crash.is_some()) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Runs one input and says what it did.
fn reproduce(target: &Target, file: &Path) -> ExitCode {
    let data = match std::fs::read(file) {
        Ok(data) => data,
        Err(e) => {
            eprintln!("{}: {e}", file.display());
            return ExitCode::from(2);
        }
    };
    match run_one(target, &data) {
        Ok(features) => {
            println!("{}: no panic ({} feature(s))", target.name, features.len());
            ExitCode::SUCCESS
        }
        Err(panicked) => {
            eprintln!("{}: {panicked}", target.name);
            ExitCode::FAILURE
        }
    }
}
