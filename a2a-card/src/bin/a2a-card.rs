//! `a2a-card`: check an A2A Agent Card, or convert it between protocol versions.
//!
//! Install it with `cargo install a2a-card --features cli`.
//!
//! ```text
//! a2a-card lint [--format human|json] FILE|-
//! a2a-card convert --to v1|v0.3|compat [--schemas root|extension-params] FILE|-
//! ```
//!
//! `FILE` is a card document in any profile (A2A 1.0, 0.3, or a compat document holding both);
//! `-` reads standard input (write `./-` for a file named `-`). The input is treated as untrusted:
//! at most [`ReadLimits::default`] bytes (4 MiB) are read, never the whole of a larger file or an
//! endless stream, nesting is limited to 64 levels, and it must be UTF-8 JSON.
//!
//! - `lint` reports every finding of the [linter](a2a_card::lint): in the human format one line
//!   per finding, `error[skill-id-not-kebab-case] /skills/0/id: message`, then a summary line
//!   `N errors, M warnings`; colours are used only when standard output is a terminal and
//!   `NO_COLOR` is unset or empty. In the JSON format, one object
//!   `{"file", "profile", "findings": [{severity, code, pointer, message}], "errors", "warnings"}`,
//!   where `profile` is the profile the document was detected as (`v1`, `v0.3`, `compat`) and
//!   `file` is `<stdin>` for standard input.
//! - `convert` reads the card strictly (a value of the wrong type is an error, listed with its
//!   JSON pointer) and writes it as pretty JSON in the requested profile, with the named schemas of
//!   the input/output schemas extension at the card's root (`--schemas root`, the default) or in
//!   the extension entry's `params` (`--schemas extension-params`) for consumers that reject
//!   unknown root keys.
//!
//! # Exit codes
//!
//! | code | meaning |
//! |---|---|
//! | 0 | `lint`: no error findings (warnings are allowed); `convert`: the card was written |
//! | 1 | `lint`: at least one error finding |
//! | 2 | the input could not be used: missing or unreadable file, I/O error, larger than the size limit, nested deeper than the depth limit, not UTF-8, malformed JSON (with line and column), or, for `convert`, values of the wrong type; also a usage error or output that could not be written |
//!
//! Every such problem is reported on standard error, naming the file. A reader that closes the
//! pipe early (`a2a-card lint card.json | head -1`) ends the output quietly.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use a2a_card::AgentCard;
use a2a_card::lint::{self, Finding, Severity};
use a2a_card::wire::{
    CardError, Profile, ReadLimits, RenderOptions, SchemaPlacement, parse_document,
};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::Value;

/// Check an A2A Agent Card against every rule of the protocol, or convert it between protocol
/// versions.
#[derive(Parser)]
#[command(name = "a2a-card", version)]
#[command(
    after_help = "Exit codes: 0 no error findings (or converted), 1 error findings, \
                  2 unreadable or malformed input."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Report every error and warning of a card, each with its rule code and JSON pointer.
    ///
    /// Exits 0 when there is no error (warnings are allowed), 1 when there is at least one error,
    /// and 2 when the input cannot be read as a JSON document.
    Lint(LintArgs),
    /// Rewrite a card in another protocol version's JSON (A2A 1.0, 0.3, or both in one document).
    ///
    /// The card is read strictly: a value of the wrong type stops the conversion (exit 2) and is
    /// reported with its JSON pointer. Run `lint` for everything else.
    Convert(ConvertArgs),
}

#[derive(Args)]
struct LintArgs {
    /// How to print the findings.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// The card document, or `-` for standard input.
    #[arg(value_name = "FILE")]
    input: PathBuf,
}

#[derive(Args)]
struct ConvertArgs {
    /// The protocol version to write.
    #[arg(long, value_enum, value_name = "PROFILE")]
    to: ProfileArg,
    /// Where to put the named schemas of the input/output schemas extension.
    #[arg(long, value_enum, value_name = "PLACEMENT", default_value_t = SchemasArg::Root)]
    schemas: SchemasArg,
    /// The card document, in any protocol version, or `-` for standard input.
    #[arg(value_name = "FILE")]
    input: PathBuf,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// One line per finding and a summary line.
    Human,
    /// One JSON object with every finding and the counts.
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum ProfileArg {
    /// A2A 1.0 ProtoJSON (`supportedInterfaces`, `securityRequirements`).
    V1,
    /// A2A 0.3 (top-level `url`, `protocolVersion`, `security`).
    #[value(name = "v0.3")]
    V0_3,
    /// The 1.0 and 0.3 fields in one document, for clients that send no `A2A-Version` header.
    Compat,
}

impl From<ProfileArg> for Profile {
    fn from(arg: ProfileArg) -> Profile {
        match arg {
            ProfileArg::V1 => Profile::V1,
            ProfileArg::V0_3 => Profile::V0_3,
            ProfileArg::Compat => Profile::Compat,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum SchemasArg {
    /// The card's root `schemas` key, as the extension says.
    Root,
    /// `params.schemas` of the extension's entry in `capabilities.extensions`.
    ExtensionParams,
}

impl From<SchemasArg> for SchemaPlacement {
    fn from(arg: SchemasArg) -> SchemaPlacement {
        match arg {
            SchemasArg::Root => SchemaPlacement::Root,
            SchemasArg::ExtensionParams => SchemaPlacement::ExtensionParams,
        }
    }
}

/// Why a command could not do its work: lines for standard error, each naming the file
/// (escaped with [`sanitize`] when printed). The exit code is 2.
struct Failure(Vec<String>);

impl From<String> for Failure {
    fn from(line: String) -> Self {
        Failure(vec![line])
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Lint(args) => run_lint(&args),
        Command::Convert(args) => run_convert(&args),
    };
    outcome.unwrap_or_else(|Failure(lines)| {
        let mut err = io::stderr().lock();
        for line in lines {
            // Nothing is left to tell anyone if standard error itself fails.
            let _ = writeln!(err, "a2a-card: {}", sanitize(&line));
        }
        ExitCode::from(2)
    })
}

fn run_lint(args: &LintArgs) -> Result<ExitCode, Failure> {
    let name = display_name(&args.input);
    let document = read_document(&args.input, ReadLimits::default())
        .map_err(|message| format!("{name}: {message}"))?;
    let findings = lint::lint_json(&document);
    let count = |severity| findings.iter().filter(|f| f.severity == severity).count();
    let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
    let mut out = io::stdout().lock();
    let written = match args.format {
        Format::Human => write_human(&mut out, &findings, errors, warnings, Style::detect()),
        Format::Json => {
            let report = serde_json::json!({
                "file": name,
                "profile": Profile::detect(&document).as_str(),
                "findings": findings.iter().map(Finding::to_json).collect::<Vec<_>>(),
                "errors": errors,
                "warnings": warnings,
            });
            write_json(&mut out, &report)
        }
    };
    finish_output(written)?;
    Ok(if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn run_convert(args: &ConvertArgs) -> Result<ExitCode, Failure> {
    let name = display_name(&args.input);
    let document = read_document(&args.input, ReadLimits::default())
        .map_err(|message| format!("{name}: {message}"))?;
    let card = AgentCard::from_json(&document).map_err(|e| match e {
        CardError::Invalid(issues) => {
            let mut lines: Vec<String> = issues
                .iter()
                .map(|issue| format!("{name}: {issue}"))
                .collect();
            lines.push(format!(
                "{name}: not converted: {} value(s) of the wrong type; fix them (`a2a-card lint` lists every finding)",
                issues.len()
            ));
            Failure(lines)
        }
        other => Failure::from(format!("{name}: {other}")),
    })?;
    let options = RenderOptions::new(args.to.into()).schemas(args.schemas.into());
    let json = card.to_json_with(&options);
    finish_output(write_json(&mut io::stdout().lock(), &json))?;
    Ok(ExitCode::SUCCESS)
}

/// The input's name in messages: its path, or `<stdin>`.
fn display_name(input: &Path) -> String {
    if is_stdin(input) {
        "<stdin>".to_owned()
    } else {
        input.display().to_string()
    }
}

fn is_stdin(input: &Path) -> bool {
    input.as_os_str() == "-"
}

/// Reads the document within `limits`: never more than one byte past the size limit, so a huge
/// file or an endless stream is cut off rather than loaded.
fn read_document(input: &Path, limits: ReadLimits) -> Result<Value, String> {
    let cap = u64::try_from(limits.max_bytes)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let mut bytes = Vec::new();
    let read = if is_stdin(input) {
        io::stdin().lock().take(cap).read_to_end(&mut bytes)
    } else {
        File::open(input).and_then(|file| file.take(cap).read_to_end(&mut bytes))
    };
    read.map_err(|e| format!("cannot read: {e}"))?;
    parse_document(&bytes, limits).map_err(|e| match e {
        // Reading stopped one byte past the limit, so the size in the error is only a lower bound.
        CardError::TooLarge { limit, .. } => {
            format!("the document is larger than the limit of {limit} bytes")
        }
        other => other.to_string(),
    })
}

/// Whether to colour the human output.
#[derive(Clone, Copy)]
struct Style {
    color: bool,
}

impl Style {
    /// Colour only on a terminal, and never when `NO_COLOR` is set to a non-empty value
    /// (<https://no-color.org>).
    fn detect() -> Style {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            color: !no_color && io::stdout().is_terminal(),
        }
    }

    /// `text` in the SGR style `sgr` (e.g. `"1;31"` for bold red), or plain.
    fn paint<'a>(self, sgr: &str, text: &'a str) -> Cow<'a, str> {
        if self.color {
            Cow::Owned(format!("\x1b[{sgr}m{text}\x1b[0m"))
        } else {
            Cow::Borrowed(text)
        }
    }
}

fn write_human(
    out: &mut impl Write,
    findings: &[Finding],
    errors: usize,
    warnings: usize,
    style: Style,
) -> io::Result<()> {
    for f in findings {
        let sgr = match f.severity {
            Severity::Error => "1;31",
            Severity::Warning => "1;33",
        };
        let head = format!("{}[{}]", f.severity, f.rule.code());
        let pointer = if f.pointer.is_empty() {
            "/"
        } else {
            &f.pointer
        };
        writeln!(
            out,
            "{} {}: {}",
            style.paint(sgr, &head),
            style.paint("2", &sanitize(pointer)),
            sanitize(&f.message)
        )?;
    }
    writeln!(
        out,
        "{}, {}",
        plural(errors, "error"),
        plural(warnings, "warning")
    )?;
    out.flush()
}

fn write_json(out: &mut impl Write, value: &Value) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(io::Error::from)?;
    writeln!(out)?;
    out.flush()
}

/// A reader that went away (a closed pipe) is not a failure: there is just nobody left to tell.
fn finish_output(written: io::Result<()>) -> Result<(), Failure> {
    match written {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(format!("cannot write the output: {e}").into())
        }
        _ => Ok(()),
    }
}

fn plural(n: usize, word: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{n} {word}{s}")
}

/// Escapes control and bidirectional-override characters, which a hostile card could otherwise
/// use to rewrite the terminal or split one finding into several lines.
fn sanitize(text: &str) -> Cow<'_, str> {
    let unsafe_char =
        |c: char| c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}
