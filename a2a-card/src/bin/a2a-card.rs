//! `a2a-card`: check an A2A Agent Card, or convert it between protocol versions.
//!
//! Install it with `cargo install a2a-card --features cli`.
//!
//! ```text
//! a2a-card lint [--format human|json] [--strict | --lenient] [--max-bytes N] FILE|-
//! a2a-card convert --to v1|v0.3|compat [--schemas root|extension-params] [--max-bytes N] FILE|-
//! a2a-card keygen --alg EdDSA|ES256 [--kid KID] --out-private FILE --out-public FILE
//! a2a-card sign --key KEY.jwk|KEY.pem [--kid KID] [--jku URL] FILE|-
//! a2a-card verify --jwks KEYS.json [--alg EdDSA,ES256] FILE|-
//! ```
//!
//! `FILE` is a card document in any profile (A2A 1.0, 0.3, or a compat document holding both);
//! `-` reads standard input (write `./-` for a file named `-`). The input is treated as untrusted:
//! at most `--max-bytes` bytes (default [`ReadLimits::default`]: 4 MiB, 4194304 bytes) are read,
//! never the whole of a larger file or an endless stream, nesting is limited to 64 levels, and it
//! must be UTF-8 JSON.
//!
//! - `lint` reports every finding of the [linter](a2a_card::lint): in the human format one line
//!   per finding, `error[skill-id-not-kebab-case] /skills/0/id: message`, then a summary line
//!   `N errors, M warnings`; colours are used only when standard output is a terminal and
//!   `NO_COLOR` is unset or empty. In the JSON format, one object
//!   `{"file", "profile", "findings": [{severity, code, pointer, message}], "errors", "warnings"}`,
//!   where `profile` is the profile the document was detected as (`v1`, `v0.3`, `compat`) and
//!   `file` is `<stdin>` for standard input. Each card is judged by its own A2A version; duplicate
//!   keys are reported too. `--strict` judges as a strict consumer does: the warnings that
//!   official parsers tolerate but strict ones reject (unknown fields, the `text`/`file`/`data`
//!   mode shorthands) become errors. An unknown member of a 1.0 card is an error already (the
//!   1.0 schema allows no other member in the card's objects); `--lenient` makes it a warning.
//! - `convert` reads the card strictly (a value of the wrong type is an error, listed with its
//!   JSON pointer) and writes it as pretty JSON in the requested profile, with the named schemas of
//!   the input/output schemas extension at the card's root (`--schemas root`, the default) or in
//!   the extension entry's `params` (`--schemas extension-params`) for consumers that reject
//!   unknown root keys. The output is a valid card of the target version, or nothing: a value the
//!   target requires is filled only where a specification defines its default (a 0.3 card's
//!   `protocolVersion` `"0.3.0"`, `preferredTransport` `JSONRPC`), fields the strict `v1`
//!   profile does not allow are left out, each noted on standard error as
//!   `a2a-card: FILE: note: POINTER: ...`; anything else missing refuses the conversion
//!   (exit 1), listing every problem as a lint finding of the output.
//! - `keygen` writes a new private key and its public key as JWK files (the private one readable
//!   only by its owner, on Unix); neither file may exist yet. The `kid` defaults to the key's
//!   RFC 7638 thumbprint.
//! - `sign` signs the card (see [`a2a_card::sign`]) with a private JWK or PKCS#8 PEM key and
//!   prints the signed card in the 1.0 profile. The `kid` defaults to the JWK's `kid`, else the
//!   key's thumbprint.
//! - `verify` checks the card's signatures against the keys of a JWKS document (or one JWK)
//!   with the listed algorithms (default: both). It prints `verified: ...` and exits 0 when one
//!   signature verifies, or prints `rejected: REASON` and exits 1.
//!
//! # Exit codes
//!
//! | code | meaning |
//! |---|---|
//! | 0 | `lint`: no error findings (warnings are allowed); `convert`, `sign`, `keygen`: written; `verify`: verified |
//! | 1 | `lint`: at least one error finding; `convert`: the card lacks what the target version requires (listed on standard error); `verify`: rejected |
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
use a2a_card::lint::{self, Finding, LintOptions, Severity};
use a2a_card::sign::{self, Algorithm, Jwks, SignOptions, SigningKey};
use a2a_card::wire::{
    self, CardError, ConvertError, Document, Profile, ReadLimits, RenderOptions, SchemaPlacement,
};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::Value;

#[path = "a2a-card/remote/mod.rs"]
mod remote;

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
    /// Make a key pair for signing cards, as two JWK files.
    Keygen(KeygenArgs),
    /// Sign a card (JWS, A2A 1.0 section 8.4) and print the signed card in the 1.0 profile.
    Sign(SignArgs),
    /// Verify a card's signatures against trusted keys: exit 0 verified, 1 rejected.
    Verify(VerifyArgs),
    /// Summarise a running agent: its card, interfaces, capabilities, security, signature,
    /// lint findings, and each skill with an outline of its input schema.
    Inspect(remote::InspectArgs),
    /// Call a skill of a running agent: the input is checked against the skill's schema first.
    ///
    /// Exits 0 when the task completed, 1 when it failed, was rejected or canceled (or waits
    /// for an answer that was not given), 2 when the input is unusable or the agent unreachable.
    Call(remote::CallArgs),
}

#[derive(Clone, Copy, ValueEnum)]
enum AlgArg {
    /// Ed25519.
    #[value(name = "EdDSA", alias = "eddsa")]
    EdDSA,
    /// ECDSA P-256 with SHA-256.
    #[value(name = "ES256", alias = "es256")]
    ES256,
}

impl From<AlgArg> for Algorithm {
    fn from(a: AlgArg) -> Algorithm {
        match a {
            AlgArg::EdDSA => Algorithm::EdDSA,
            AlgArg::ES256 => Algorithm::ES256,
        }
    }
}

#[derive(Args)]
struct KeygenArgs {
    /// The algorithm of the key.
    #[arg(long, value_enum)]
    alg: AlgArg,
    /// The key id; default: the key's RFC 7638 thumbprint.
    #[arg(long)]
    kid: Option<String>,
    /// Where to write the private JWK (must not exist).
    #[arg(long, value_name = "FILE")]
    out_private: PathBuf,
    /// Where to write the public JWK (must not exist).
    #[arg(long, value_name = "FILE")]
    out_public: PathBuf,
}

#[derive(Args)]
struct SignArgs {
    /// The private key: a JWK, or a PKCS#8 PEM file.
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    /// The key id; default: the JWK's `kid`, else the key's thumbprint.
    #[arg(long)]
    kid: Option<String>,
    /// The URL of a JWKS holding the public key, put in the protected header.
    #[arg(long, value_name = "URL")]
    jku: Option<String>,
    /// The card document, in any protocol version, or `-` for standard input.
    #[arg(value_name = "FILE")]
    input: PathBuf,
}

#[derive(Args)]
struct VerifyArgs {
    /// The trusted keys: a JWKS document (`{"keys": [...]}`) or one JWK.
    #[arg(long, value_name = "FILE")]
    jwks: PathBuf,
    /// The algorithms to accept.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [AlgArg::EdDSA, AlgArg::ES256])]
    alg: Vec<AlgArg>,
    /// The card document, in any protocol version, or `-` for standard input.
    #[arg(value_name = "FILE")]
    input: PathBuf,
}

/// The default of `--max-bytes`: [`ReadLimits::default`]'s 4 MiB.
const DEFAULT_MAX_BYTES: usize = 4 * 1024 * 1024;

#[derive(Args)]
struct LintArgs {
    /// How to print the findings.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Judge as a strict consumer does: unknown fields and the `text`/`file`/`data` mode
    /// shorthands are errors, not warnings.
    #[arg(long, conflicts_with = "lenient")]
    strict: bool,
    /// Judge unknown members leniently: in a 1.0 card, whose schema allows no other member in
    /// its objects, an unknown member is a warning instead of an error.
    #[arg(long)]
    lenient: bool,
    /// The largest document to read, in bytes.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_BYTES)]
    max_bytes: usize,
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
    /// The largest document to read, in bytes.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_BYTES)]
    max_bytes: usize,
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
        Command::Keygen(args) => run_keygen(&args),
        Command::Sign(args) => run_sign(&args),
        Command::Verify(args) => run_verify(&args),
        Command::Inspect(args) => remote::run_inspect(&args),
        Command::Call(args) => remote::run_call(&args),
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
    let limits = ReadLimits::default().max_bytes(args.max_bytes);
    let document =
        read_document(&args.input, limits).map_err(|message| format!("{name}: {message}"))?;
    let findings = lint::lint_document(
        &document,
        &LintOptions::default()
            .strict(args.strict)
            .lenient(args.lenient),
    );
    let count = |severity| findings.iter().filter(|f| f.severity == severity).count();
    let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
    let mut out = io::stdout().lock();
    let written = match args.format {
        Format::Human => write_human(&mut out, &findings, errors, warnings, Style::detect()),
        Format::Json => {
            let report = serde_json::json!({
                "file": name,
                "profile": Profile::detect(&document.value).as_str(),
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
    let limits = ReadLimits::default().max_bytes(args.max_bytes);
    let document =
        read_document(&args.input, limits).map_err(|message| format!("{name}: {message}"))?;
    let options = RenderOptions::new(args.to.into()).schemas(args.schemas.into());
    match wire::convert(&document.value, &options) {
        Ok(done) => {
            let mut err = io::stderr().lock();
            for note in &done.notes {
                // Standard error is only for notes here; losing it must not lose the card.
                let _ = writeln!(
                    err,
                    "a2a-card: {}: note: {}",
                    sanitize(&name),
                    sanitize(note)
                );
            }
            finish_output(write_json(&mut io::stdout().lock(), &done.document))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(ConvertError::Invalid(issues)) => Err(wrong_types(&name, &issues, "converted")),
        Err(ConvertError::Incomplete { profile, findings }) => {
            let mut err = io::stderr().lock();
            for f in &findings {
                let _ = writeln!(
                    err,
                    "a2a-card: {}: {}",
                    sanitize(&name),
                    sanitize(&f.to_string())
                );
            }
            let _ = writeln!(
                err,
                "a2a-card: {}: not converted: a {profile} card made from it would be invalid ({} problem(s) above, pointers into the {profile} output); add what is missing (`a2a-card lint` lists every finding)",
                sanitize(&name),
                findings.len()
            );
            Ok(ExitCode::from(1))
        }
        Err(other) => Err(Failure::from(format!("{name}: {other}"))),
    }
}

/// The lines that list values of the wrong type, and the verdict.
fn wrong_types(name: &str, issues: &[a2a_card::wire::ParseIssue], done: &str) -> Failure {
    let mut lines: Vec<String> = issues
        .iter()
        .map(|issue| format!("{name}: {issue}"))
        .collect();
    lines.push(format!(
        "{name}: not {done}: {} value(s) of the wrong type; fix them (`a2a-card lint` lists every finding)",
        issues.len()
    ));
    Failure(lines)
}

/// Writes `text` to a new file (never over an existing one), owner-only on Unix when `private`.
fn write_new(path: &Path, text: &str, private: bool) -> Result<(), Failure> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    options
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| Failure::from(format!("{}: cannot write: {e}", path.display())))
}

fn run_keygen(args: &KeygenArgs) -> Result<ExitCode, Failure> {
    let key = SigningKey::generate(args.alg.into()).map_err(|e| Failure::from(e.to_string()))?;
    let kid = args
        .kid
        .clone()
        .unwrap_or_else(|| key.verifying_key().thumbprint());
    let private = key.to_jwk(Some(&kid));
    let public = key.verifying_key().to_jwk(Some(&kid));
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
    write_new(&args.out_public, &pretty(&public), false)?;
    write_new(&args.out_private, &pretty(&private), true)?;
    Ok(ExitCode::SUCCESS)
}

/// Reads a small text file (a key or a key set), at most 1 MiB.
fn read_text(path: &Path) -> Result<String, Failure> {
    let mut text = String::new();
    File::open(path)
        .and_then(|f| f.take(1 << 20).read_to_string(&mut text))
        .map_err(|e| Failure::from(format!("{}: cannot read: {e}", path.display())))?;
    Ok(text)
}

fn run_sign(args: &SignArgs) -> Result<ExitCode, Failure> {
    let card = read_card(&args.input, "signed")?;
    let text = read_text(&args.key)?;
    let key = SigningKey::from_text(&text)
        .map_err(|e| Failure::from(format!("{}: {e}", args.key.display())))?;
    let kid = args.kid.clone().or_else(|| {
        serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|jwk| jwk.get("kid")?.as_str().map(str::to_owned))
    });
    let mut options = SignOptions::default();
    if let Some(kid) = kid {
        options = options.with_kid(kid);
    }
    if let Some(jku) = &args.jku {
        options = options.with_jku(jku);
    }
    let signed = sign::sign(&card, &key, options)
        .map_err(|e| Failure::from(format!("{}: {e}", display_name(&args.input))))?;
    finish_output(write_json(
        &mut io::stdout().lock(),
        &signed.to_json(Profile::V1),
    ))?;
    Ok(ExitCode::SUCCESS)
}

fn run_verify(args: &VerifyArgs) -> Result<ExitCode, Failure> {
    let card = read_card(&args.input, "verified")?;
    let jwks = Jwks::from_text(&read_text(&args.jwks)?)
        .map_err(|e| Failure::from(format!("{}: {e}", args.jwks.display())))?;
    let allowed: Vec<Algorithm> = args.alg.iter().map(|&a| a.into()).collect();
    let mut out = io::stdout().lock();
    let (line, code) = match sign::verify(&card, &jwks, &allowed) {
        Ok(v) => (
            format!(
                "verified: signature #{} ({}, kid {})",
                v.index,
                v.algorithm,
                sanitize(&v.kid)
            ),
            ExitCode::SUCCESS,
        ),
        Err(e) => (
            format!("rejected: {}", sanitize(&e.to_string())),
            ExitCode::from(1),
        ),
    };
    finish_output(writeln!(out, "{line}").and_then(|()| out.flush()))?;
    Ok(code)
}

/// Reads a card strictly: a value of the wrong type is an error with its JSON pointer.
fn read_card(input: &Path, done: &str) -> Result<AgentCard, Failure> {
    let name = display_name(input);
    let document = read_document(input, ReadLimits::default())
        .map_err(|message| format!("{name}: {message}"))?;
    AgentCard::from_json(&document.value).map_err(|e| match e {
        CardError::Invalid(issues) => wrong_types(&name, &issues, done),
        other => Failure::from(format!("{name}: {other}")),
    })
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
fn read_document(input: &Path, limits: ReadLimits) -> Result<Document, String> {
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
    Document::parse(&bytes, limits).map_err(|e| match e {
        // Reading stopped one byte past the limit, so the size in the error is only a lower bound.
        CardError::TooLarge { limit, .. } => {
            format!(
                "the document is larger than the limit of {limit} bytes (raise it with --max-bytes)"
            )
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
