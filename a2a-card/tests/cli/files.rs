//! End-to-end tests of the `a2a-card` binary (`--features cli`): exit codes, output formats,
//! hostile input and conversion between profiles.
#![cfg(feature = "cli")]

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_a2a-card");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/fixtures");
const IO_SCHEMAS_EXTENSION: &str =
    "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/main/v1";

/// A file in the temp directory, named after this process and the test, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, bytes: &[u8]) -> TempFile {
        let path = std::env::temp_dir().join(format!("a2a-card-cli-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).expect("write temp file");
        TempFile(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("temp paths are UTF-8 here")
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs the binary with `args` (and `stdin`, if any) without colours, and checks it did not panic.
fn run(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut command = Command::new(BIN);
    command.args(args).env("NO_COLOR", "1");
    run_command(command, stdin)
}

fn run_command(mut command: Command, stdin: Option<&[u8]>) -> Output {
    let mut child = command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn a2a-card");
    if let Some(bytes) = stdin {
        // The binary may stop reading early (size limit); a broken pipe here is expected then.
        let _ = child.stdin.take().expect("piped stdin").write_all(bytes);
    }
    let output = child.wait_with_output().expect("wait for a2a-card");
    assert_no_panic(&output);
    output
}

fn assert_no_panic(output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("panicked"),
        "the binary panicked: {stderr}"
    );
    assert_ne!(
        output.status.code(),
        Some(101),
        "exit code 101 is a panic: {stderr}"
    );
}

fn stdout(output: &Output) -> &str {
    std::str::from_utf8(&output.stdout).expect("stdout is UTF-8")
}

fn stderr(output: &Output) -> &str {
    std::str::from_utf8(&output.stderr).expect("stderr is UTF-8")
}

fn json_stdout(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).expect("stdout is one JSON document")
}

/// A 0.3 card with exactly ten mistakes, each from a different rule.
const TEN_MISTAKES: &str = r#"{
  "name": "Currency Agent",
  "version": "",
  "url": "http://fx.example.com/a2a",
  "protocolVersion": "0.3.0",
  "preferredTransport": "JSONRPC",
  "provider": {"organization": "Example FX Ltd"},
  "capabilities": {
    "streaming": false,
    "pushNotifications": false,
    "extensions": [{"uri": "https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/main/v1"}]
  },
  "securitySchemes": {
    "oauth": {
      "type": "oauth2",
      "flows": {
        "clientCredentials": {"tokenUrl": "https://auth.example.com/token", "scopes": {"fx": "Convert currencies"}},
        "authorizationCode": {
          "authorizationUrl": "https://auth.example.com/authorize",
          "tokenUrl": "https://auth.example.com/token",
          "pkceRequired": true,
          "scopes": {"fx": "Convert currencies"}
        }
      }
    }
  },
  "security": [{"oauth": ["fx"]}, {"apiKey": []}],
  "defaultInputModes": ["text"],
  "defaultOutputModes": ["text/plain", "application/json"],
  "skills": [
    {
      "id": "currency_conversion",
      "name": "Currency Conversion",
      "description": "Converts an amount of money between two ISO 4217 currencies at today's rate.",
      "tags": ["fx", "currency"],
      "examples": ["How much is 100 USD in EUR?"],
      "inputModes": ["text/plain", "application/json;schema=conversionRequest"]
    },
    {
      "id": "exchange-rates",
      "name": "Exchange Rates",
      "description": "Lists today's exchange rates of a base currency against the major currencies.",
      "tags": ["fx", "rates"],
      "examples": ["Show today's rates for GBP"]
    },
    {
      "id": "exchange-rates",
      "name": "Historical Rates",
      "description": "Returns the exchange rate between two currencies on a given past date.",
      "tags": ["fx", "history"],
      "examples": ["What was USD to JPY on 2020-01-02?"]
    }
  ]
}"#;

/// The ten findings of [`TEN_MISTAKES`]: (code, pointer), sorted.
fn ten_expected() -> Vec<(String, String)> {
    let mut expected: Vec<(String, String)> = [
        ("description-missing", "/description"),    // no description
        ("version-missing", "/version"),            // empty version
        ("provider-incomplete", "/provider/url"),   // provider without url
        ("url-insecure", "/url"),                   // plain http, not loopback
        ("mode-shorthand", "/defaultInputModes/0"), // `text`, not a media type (a warning)
        ("skill-id-duplicate", "/skills/2/id"),     // `exchange-rates` twice
        ("security-scheme-undeclared", "/security/1/apiKey"), // requirement names no scheme
        ("oauth-flow-count", "/securitySchemes/oauth/flows"), // two OAuth flows
        ("schema-undeclared", "/skills/0/inputModes/1"), // schema mode, no such schema
        ("skill-id-not-kebab-case", "/skills/0/id"), // `currency_conversion`
    ]
    .iter()
    .map(|(c, p)| (c.to_string(), p.to_string()))
    .collect();
    expected.sort();
    expected
}

/// Splits a human finding line `severity[code] pointer: message` into its parts.
fn parse_human_line(line: &str) -> (String, String, String) {
    let (head, rest) = line
        .split_once(' ')
        .unwrap_or_else(|| panic!("no space in {line:?}"));
    let (severity, code) = head
        .strip_suffix(']')
        .and_then(|h| h.split_once('['))
        .unwrap_or_else(|| panic!("no `severity[code]` in {line:?}"));
    let (pointer, message) = rest
        .split_once(": ")
        .unwrap_or_else(|| panic!("no `: ` in {line:?}"));
    assert!(severity == "error" || severity == "warning", "{line:?}");
    assert!(pointer.starts_with('/'), "not a JSON pointer in {line:?}");
    assert!(!message.is_empty(), "{line:?}");
    (code.to_owned(), pointer.to_owned(), severity.to_owned())
}

#[test]
fn ten_mistakes_give_ten_findings_in_both_formats() {
    let card = TempFile::new("ten-mistakes.json", TEN_MISTAKES.as_bytes());

    let human = run(&["lint", card.path()], None);
    assert_eq!(human.status.code(), Some(1), "{}", stderr(&human));
    let lines: Vec<&str> = stdout(&human).lines().collect();
    let (summary, finding_lines) = lines.split_last().expect("some output");
    assert_eq!(*summary, "8 errors, 2 warnings");
    assert_eq!(finding_lines.len(), 10, "{}", stdout(&human));
    let parsed: Vec<_> = finding_lines.iter().map(|l| parse_human_line(l)).collect();
    let mut found: Vec<_> = parsed
        .iter()
        .map(|(c, p, _)| (c.clone(), p.clone()))
        .collect();
    found.sort();
    assert_eq!(found, ten_expected());
    // Errors come first, then warnings.
    let severities: Vec<_> = parsed.iter().map(|(_, _, s)| s.as_str()).collect();
    assert_eq!(severities.iter().filter(|s| **s == "error").count(), 8);
    assert_eq!(severities.last(), Some(&"warning"));
    assert!(stderr(&human).is_empty(), "{}", stderr(&human));

    let machine = run(&["lint", "--format", "json", card.path()], None);
    assert_eq!(machine.status.code(), Some(1));
    let report = json_stdout(&machine);
    assert_eq!(report["file"], card.path());
    assert_eq!(report["profile"], "v0.3");
    assert_eq!(report["errors"], 8);
    assert_eq!(report["warnings"], 2);
    let findings = report["findings"].as_array().expect("findings array");
    assert_eq!(findings.len(), 10);
    for f in findings {
        assert!(
            f["severity"] == "error" || f["severity"] == "warning",
            "{f}"
        );
        assert!(f["message"].as_str().is_some_and(|m| !m.is_empty()), "{f}");
    }
    let json_pairs: Vec<(String, String)> = findings
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_owned(),
                f["pointer"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    // The same findings, in the same order, as the human lines.
    let human_pairs: Vec<_> = parsed.into_iter().map(|(c, p, _)| (c, p)).collect();
    assert_eq!(json_pairs, human_pairs);
}

#[test]
fn stdin_is_read_for_dash() {
    let human = run(&["lint", "-"], Some(TEN_MISTAKES.as_bytes()));
    assert_eq!(human.status.code(), Some(1));
    assert_eq!(stdout(&human).lines().count(), 11);

    let machine = run(
        &["lint", "--format", "json", "-"],
        Some(TEN_MISTAKES.as_bytes()),
    );
    assert_eq!(machine.status.code(), Some(1));
    let report = json_stdout(&machine);
    assert_eq!(report["file"], "<stdin>");
    let mut pairs: Vec<(String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_owned(),
                f["pointer"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    pairs.sort();
    assert_eq!(pairs, ten_expected());
}

fn valid_card() -> Value {
    json!({
        "name": "Recipe Planner",
        "description": "Plans weekly meals from a list of ingredients and dietary needs, and returns recipes with shopping lists.",
        "version": "1.4.2",
        "supportedInterfaces": [
            {"url": "https://recipes.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "provider": {"organization": "Example Kitchens", "url": "https://kitchens.example.com"},
        "capabilities": {"streaming": true, "pushNotifications": false},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [{
            "id": "meal-plan",
            "name": "Meal Plan",
            "description": "Builds a seven-day meal plan from the ingredients and diet the user names.",
            "tags": ["meals", "recipes"],
            "examples": ["Plan a vegetarian week using lentils and spinach"]
        }]
    })
}

#[test]
fn valid_card_exits_zero() {
    let card = TempFile::new("valid.json", valid_card().to_string().as_bytes());
    let human = run(&["lint", card.path()], None);
    assert_eq!(
        human.status.code(),
        Some(0),
        "{}{}",
        stdout(&human),
        stderr(&human)
    );
    assert_eq!(stdout(&human), "0 errors, 0 warnings\n");

    let machine = run(&["lint", "--format", "json", card.path()], None);
    assert_eq!(machine.status.code(), Some(0));
    let report = json_stdout(&machine);
    assert_eq!(report["profile"], "v1");
    assert_eq!(report["findings"], json!([]));
    assert_eq!(
        (report["errors"].clone(), report["warnings"].clone()),
        (json!(0), json!(0))
    );

    // Warnings alone do not fail the lint.
    let mut warned = valid_card();
    warned["skills"][0]["id"] = json!("meal_plan");
    let out = run(&["lint", "-"], Some(warned.to_string().as_bytes()));
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).starts_with("warning[skill-id-not-kebab-case] /skills/0/id: "),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).ends_with("0 errors, 1 warning\n"));

    // The official 1.0 sample too.
    let sample = format!("{FIXTURES}/cards/spec-v1.0-sample.json");
    assert_eq!(run(&["lint", &sample], None).status.code(), Some(0));
}

/// Checks the binary refuses the input with exit 2, in both formats, with nothing on stdout and
/// each of `expected` in the message on stderr.
fn assert_unreadable(input: &str, stdin: Option<&[u8]>, expected: &[&str]) {
    for format in ["human", "json"] {
        let out = run(&["lint", "--format", format, input], stdin);
        assert_eq!(out.status.code(), Some(2), "{format}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{format}: {}", stdout(&out));
        let message = stderr(&out);
        assert!(message.starts_with("a2a-card: "), "{message}");
        for fragment in expected {
            assert!(
                message.contains(fragment),
                "{format}: {message:?} lacks {fragment:?}"
            );
        }
    }
}

#[test]
fn missing_file_exits_two() {
    let path = std::env::temp_dir().join(format!(
        "a2a-card-cli-{}-does-not-exist.json",
        std::process::id()
    ));
    let path = path.to_str().unwrap();
    assert_unreadable(path, None, &[path, "cannot read"]);
}

#[test]
fn malformed_json_exits_two_with_line_and_column() {
    let card = TempFile::new(
        "malformed.json",
        b"{\n  \"name\": \"Echo\",\n  \"version\": tru,\n  \"x\": 1\n}",
    );
    assert_unreadable(
        card.path(),
        None,
        &[card.path(), "malformed JSON at line 3 column 17"],
    );
    let out = run(&["convert", "--to", "v1", card.path()], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("line 3 column"), "{}", stderr(&out));
}

#[test]
fn invalid_utf8_exits_two() {
    let card = TempFile::new("latin1.json", b"{\n  \"name\": \"Caf\xe9 Agent\"\n}");
    assert_unreadable(
        card.path(),
        None,
        &[card.path(), "invalid UTF-8 at line 2 column 15"],
    );
}

/// Valid JSON (an empty array padded with spaces) just over the 4 MiB limit.
fn oversized_document() -> Vec<u8> {
    let mut doc = vec![b' '; 4 * 1024 * 1024 + 16];
    doc[0] = b'[';
    let last = doc.len() - 1;
    doc[last] = b']';
    doc
}

#[test]
fn too_large_exits_two() {
    let doc = oversized_document();
    assert!(
        serde_json::from_slice::<Value>(&doc).is_ok(),
        "the document itself is valid JSON"
    );
    let card = TempFile::new("large.json", &doc);
    assert_unreadable(
        card.path(),
        None,
        &[card.path(), "larger than the limit of 4194304 bytes"],
    );
    assert_unreadable("-", Some(&doc), &["<stdin>", "larger than the limit"]);
}

#[test]
fn endless_stdin_is_cut_off_at_the_limit() {
    let mut child = Command::new(BIN)
        .args(["lint", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // Feed up to 256 MiB; a reader that stops at the limit makes the writes fail long before.
    let writer = std::thread::spawn(move || {
        let chunk = [b' '; 64 * 1024];
        let mut sent = 0usize;
        while sent < 256 * 1024 * 1024 {
            match input.write(&chunk) {
                Ok(n) => sent += n,
                Err(_) => break,
            }
        }
        sent
    });
    let output = child.wait_with_output().unwrap();
    let sent = writer.join().unwrap();
    assert_no_panic(&output);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("larger than the limit"),
        "{}",
        stderr(&output)
    );
    assert!(
        sent < 64 * 1024 * 1024,
        "the binary read {sent} bytes of an endless stream"
    );
}

#[test]
fn too_deep_exits_two() {
    let doc = format!("{}{}", "[".repeat(65), "]".repeat(65));
    let card = TempFile::new("deep.json", doc.as_bytes());
    assert_unreadable(
        card.path(),
        None,
        &[
            card.path(),
            "nesting deeper than 64 levels at line 1 column 65",
        ],
    );
    // Far deeper than any recursive parser could take.
    let abyss = "[".repeat(1_000_000);
    assert_unreadable(
        "-",
        Some(abyss.as_bytes()),
        &["<stdin>", "nesting deeper than 64"],
    );
}

#[test]
fn documents_that_are_not_objects_are_findings_not_crashes() {
    for doc in ["[]", "42", "null", "\"card\"", "true"] {
        let out = run(&["lint", "--format", "json", "-"], Some(doc.as_bytes()));
        assert_eq!(out.status.code(), Some(1), "{doc}");
        let report = json_stdout(&out);
        assert!(
            report["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["code"] == "wrong-type" && f["pointer"] == ""),
            "{doc}: {report}"
        );
    }
}

#[test]
fn hostile_text_cannot_forge_lines_or_escape_sequences() {
    let mut card = valid_card();
    card["skills"][0]["id"] = json!("x\u{1b}[2J\nerror[fake] /forged: \u{202e}gotcha");
    let out = run(&["lint", "-"], Some(card.to_string().as_bytes()));
    let text = stdout(&out);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{202e}'),
        "{text:?}"
    );
    assert!(
        !text.lines().any(|l| l.starts_with("error[fake]")),
        "{text}"
    );
    for line in text.lines().take(text.lines().count() - 1) {
        parse_human_line(line);
    }
}

#[test]
fn no_colour_when_stdout_is_not_a_terminal() {
    let card = TempFile::new("colour.json", TEN_MISTAKES.as_bytes());
    let mut command = Command::new(BIN);
    command.args(["lint", card.path()]).env_remove("NO_COLOR");
    let out = run_command(command, None);
    assert_eq!(out.status.code(), Some(1));
    assert!(!out.stdout.contains(&0x1b), "{}", stdout(&out));
}

#[test]
fn closed_stdout_is_not_a_crash() {
    let card = TempFile::new("closed-pipe.json", TEN_MISTAKES.as_bytes());
    let mut child = Command::new(BIN)
        .args(["lint", card.path()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away before the findings are written
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(status.code(), Some(1), "{err}");
}

fn convert(args: &[&str]) -> Value {
    let out = run(args, None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json_stdout(&out)
}

#[test]
fn convert_between_profiles() {
    let sample = format!("{FIXTURES}/cards/spec-v0.3-sample.json");
    assert!(
        std::path::Path::new(&sample).is_file(),
        "fixture missing: {sample}"
    );

    let v1 = convert(&["convert", "--to", "v1", &sample]);
    assert!(v1.get("url").is_none(), "{v1:#}");
    assert!(v1.get("preferredTransport").is_none());
    let interfaces = v1["supportedInterfaces"]
        .as_array()
        .expect("supportedInterfaces");
    assert_eq!(
        interfaces[0]["url"],
        "https://georoute-agent.example.com/a2a/v1"
    );
    assert_eq!(interfaces[0]["protocolBinding"], "JSONRPC");
    assert_eq!(interfaces.len(), 3);

    let compat = convert(&["convert", "--to", "compat", &sample]);
    assert_eq!(compat["url"], "https://georoute-agent.example.com/a2a/v1");
    assert!(compat["supportedInterfaces"].is_array(), "{compat:#}");

    let v03 = convert(&["convert", "--to", "v0.3", &sample]);
    assert_eq!(v03["url"], "https://georoute-agent.example.com/a2a/v1");
    assert!(v03.get("supportedInterfaces").is_none());

    // The v1 output reads back to the same card, through stdin.
    let back = run(
        &["convert", "--to", "v1", "-"],
        Some(v1.to_string().as_bytes()),
    );
    assert_eq!(back.status.code(), Some(0));
    assert_eq!(json_stdout(&back), v1);
    // And it is pretty-printed.
    assert!(stdout(&back).starts_with("{\n  \""), "{}", stdout(&back));
}

#[test]
fn convert_moves_schemas_into_extension_params() {
    let partial = format!("{FIXTURES}/io-schemas-extension/agent-card-partial.json");
    let original: Value =
        serde_json::from_slice(&std::fs::read(&partial).expect("fixture")).unwrap();
    let schemas = &original["schemas"];
    assert!(schemas["fightComparison"].is_object() && schemas["fightResponse"].is_object());

    let extension = |card: &Value| -> Value {
        card["capabilities"]["extensions"]
            .as_array()
            .expect("extensions")
            .iter()
            .find(|e| e["uri"] == IO_SCHEMAS_EXTENSION)
            .cloned()
            .expect("the extension entry")
    };

    // The extension's example is only the part of a card it is about; completed, it converts.
    let mut complete = original.clone();
    for (key, value) in [
        ("name", json!("Fight Club")),
        (
            "description",
            json!("Compares two fighters and says who would win, and why."),
        ),
        ("version", json!("1.0.0")),
        ("url", json!("https://fights.example.com/a2a")),
        ("protocolVersion", json!("0.3.0")),
        ("defaultInputModes", json!(["text/plain"])),
        ("defaultOutputModes", json!(["text/plain"])),
    ] {
        complete[key] = value;
    }
    let file = TempFile::new("partial-completed.json", complete.to_string().as_bytes());
    let partial = file.path().to_owned();
    let root = convert(&["convert", "--to", "v1", &partial]);
    assert_eq!(&root["schemas"], schemas);
    assert!(extension(&root).pointer("/params/schemas").is_none());

    let strict = convert(&[
        "convert",
        "--to",
        "v1",
        "--schemas",
        "extension-params",
        &partial,
    ]);
    assert!(strict.get("schemas").is_none(), "{strict:#}");
    assert_eq!(&extension(&strict)["params"]["schemas"], schemas);
}

#[test]
fn convert_lists_every_wrong_type_and_exits_two() {
    let mut card = valid_card();
    card["name"] = json!(42);
    card["skills"][0]["tags"] = json!("meals");
    let out = run(
        &["convert", "--to", "v0.3", "-"],
        Some(card.to_string().as_bytes()),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let message = stderr(&out);
    assert!(
        message.contains("<stdin>: /name: expected a string"),
        "{message}"
    );
    assert!(
        message.contains("<stdin>: /skills/0/tags: expected an array of strings"),
        "{message}"
    );
}

#[test]
fn usage_errors_exit_two() {
    let out = run(&["convert", "--to", "v2", "-"], Some(b"{}"));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("v0.3"), "{}", stderr(&out));
    assert_eq!(run(&["lint"], None).status.code(), Some(2));
}

#[test]
fn convert_refuses_a_card_that_lacks_what_the_target_requires() {
    // The extension's partial example has no name, description, version, interface or modes:
    // a v1 card made from it would be invalid, so nothing is written and each lack is listed.
    let partial = format!("{FIXTURES}/io-schemas-extension/agent-card-partial.json");
    let out = run(&["convert", "--to", "v1", &partial], None);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let message = stderr(&out);
    for code in [
        "name-missing",
        "description-missing",
        "version-missing",
        "interface-missing",
    ] {
        assert!(
            message.contains(&format!("error[{code}]")),
            "{code}: {message}"
        );
    }
    assert!(message.contains("not converted"), "{message}");
    // A skill without tags cannot become a 1.0 skill either.
    let mut card = valid_card();
    card["skills"][0].as_object_mut().unwrap().remove("tags");
    let out = run(
        &["convert", "--to", "v1", "-"],
        Some(card.to_string().as_bytes()),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("error[skill-tags-missing] /skills/0/tags"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn convert_fills_only_documented_defaults_and_says_so() {
    // A 0.3 card that says neither its protocol version nor its transport.
    let mut card = valid_card();
    let obj = card.as_object_mut().unwrap();
    obj.remove("supportedInterfaces");
    obj.insert("url".into(), json!("https://recipes.example.com/a2a"));
    obj.insert("x-internal".into(), json!({"team": "fx"}));
    let bytes = card.to_string();
    let out = run(&["convert", "--to", "v1", "-"], Some(bytes.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v1 = json_stdout(&out);
    assert_eq!(v1["supportedInterfaces"][0]["protocolVersion"], "0.3.0");
    assert_eq!(v1["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
    assert!(v1.get("x-internal").is_none(), "{v1:#}");
    let notes = stderr(&out);
    assert!(
        notes.contains("note: /protocolVersion: missing; filled"),
        "{notes}"
    );
    assert!(
        notes.contains("note: /preferredTransport: missing; filled"),
        "{notes}"
    );
    assert!(notes.contains("note: /x-internal: left out"), "{notes}");
    // 0.3 allows extra fields: kept there, with no note.
    let out = run(&["convert", "--to", "v0.3", "-"], Some(bytes.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v03 = json_stdout(&out);
    assert_eq!(v03["x-internal"], json!({"team": "fx"}));
    assert_eq!(v03["protocolVersion"], "0.3.0");
    assert!(!stderr(&out).contains("left out"), "{}", stderr(&out));
}

fn unknown_field_findings(report: &Value) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "unknown-field")
        .map(|f| {
            (
                f["severity"].as_str().unwrap().to_owned(),
                f["pointer"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn an_unknown_member_of_a_1_0_card_is_an_error_and_lenient_makes_it_a_warning() {
    // The 1.0 schema allows no other member inside an interface (nor anywhere in the card).
    let mut card = valid_card();
    card["supportedInterfaces"][0]["pricing"] = json!({"perCall": "0.01"});
    let bytes = card.to_string();
    let out = run(&["lint", "--format", "json", "-"], Some(bytes.as_bytes()));
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let report = json_stdout(&out);
    assert_eq!(
        unknown_field_findings(&report),
        [(
            "error".to_owned(),
            "/supportedInterfaces/0/pricing".to_owned()
        )]
    );
    assert_eq!(report["errors"], 1, "{report:#}");
    let human = run(&["lint", "-"], Some(bytes.as_bytes()));
    assert!(
        stdout(&human).contains("error[unknown-field] /supportedInterfaces/0/pricing: "),
        "{}",
        stdout(&human)
    );
    let lenient = run(
        &["lint", "--lenient", "--format", "json", "-"],
        Some(bytes.as_bytes()),
    );
    assert_eq!(lenient.status.code(), Some(0), "{}", stdout(&lenient));
    let report = json_stdout(&lenient);
    assert_eq!(
        unknown_field_findings(&report),
        [(
            "warning".to_owned(),
            "/supportedInterfaces/0/pricing".to_owned()
        )]
    );
    assert_eq!(report["errors"], 0, "{report:#}");
    // The two switches say opposite things: refused together.
    let both = run(
        &["lint", "--lenient", "--strict", "-"],
        Some(bytes.as_bytes()),
    );
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
}

#[test]
fn strict_makes_mode_shorthands_and_unknown_fields_errors() {
    let mut card = valid_card();
    card["defaultInputModes"] = json!(["text"]);
    card["x-internal"] = json!(1);
    let bytes = card.to_string();
    let lenient = run(
        &["lint", "--lenient", "--format", "json", "-"],
        Some(bytes.as_bytes()),
    );
    assert_eq!(lenient.status.code(), Some(0), "{}", stdout(&lenient));
    let report = json_stdout(&lenient);
    assert_eq!(report["errors"], 0, "{report:#}");
    let strict = run(
        &["lint", "--strict", "--format", "json", "-"],
        Some(bytes.as_bytes()),
    );
    assert_eq!(strict.status.code(), Some(1));
    let report = json_stdout(&strict);
    let errors: Vec<_> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| (f["code"].as_str().unwrap(), f["pointer"].as_str().unwrap()))
        .collect();
    assert!(
        errors.contains(&("mode-shorthand", "/defaultInputModes/0")),
        "{errors:?}"
    );
    assert!(
        errors.contains(&("unknown-field", "/x-internal")),
        "{errors:?}"
    );
}

#[test]
fn max_bytes_raises_the_size_limit() {
    // A valid card pretty-printed past 4 MiB by a long description: refused by default, read
    // with a larger limit, and no finding quotes the whole description.
    let mut card = valid_card();
    card["description"] = json!("x".repeat(4 * 1024 * 1024));
    let bytes = serde_json::to_vec_pretty(&card).unwrap();
    let file = TempFile::new("big-card.json", &bytes);
    let refused = run(&["lint", file.path()], None);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("--max-bytes"),
        "{}",
        stderr(&refused)
    );
    let limit = (bytes.len() + 1).to_string();
    let read = run(&["lint", "--max-bytes", &limit, file.path()], None);
    assert_ne!(read.status.code(), Some(2), "{}", stderr(&read));
    assert!(
        stdout(&read).len() < 10_000,
        "{} bytes of findings",
        stdout(&read).len()
    );
    let converted = run(
        &["convert", "--to", "v1", "--max-bytes", &limit, file.path()],
        None,
    );
    assert_eq!(converted.status.code(), Some(0), "{}", stderr(&converted));
}

#[test]
fn duplicate_keys_are_errors() {
    let text = valid_card().to_string();
    let text = text.replacen("{", "{\"name\": \"Shadowed Agent\", ", 1);
    let out = run(&["lint", "--format", "json", "-"], Some(text.as_bytes()));
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let report = json_stdout(&out);
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "duplicate-key"
                && f["pointer"] == "/name"
                && f["severity"] == "error"),
        "{report:#}"
    );
}
