//! `a2a-card call`: a skill of a running agent called from the command line, its input
//! checked first; waited for, followed as a stream, or left running, with questions answered
//! from the flags or the terminal.

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use a2a_card::client::{
    ClientError, Connect, Content, Event, Output, Payload, RemoteAgent, TaskOutcome,
};
use clap::Args;
use futures::StreamExt;
use serde_json::{Value, json};

use super::{Access, block_on};
use crate::{Failure, Format, finish_output, read_text, sanitize};

#[derive(Args)]
pub struct CallArgs {
    /// The agent's base URL, its card's URL, or an AI Catalog's URL (its first agent).
    #[arg(value_name = "URL")]
    url: String,
    /// The id of the skill to call.
    #[arg(long, value_name = "ID")]
    skill: String,
    /// The structured input: JSON, or `@FILE` to read it from a file (`@-`: standard input).
    #[arg(
        long,
        value_name = "JSON|@FILE",
        conflicts_with = "text",
        required_unless_present = "text"
    )]
    data: Option<String>,
    /// Text input, for a skill that takes `text/plain`.
    #[arg(long, value_name = "TEXT")]
    text: Option<String>,
    /// Follow the task: print progress and each output chunk as it arrives.
    #[arg(long, conflicts_with = "no_wait")]
    stream: bool,
    /// Do not wait: print the task's id and exit.
    #[arg(long)]
    no_wait: bool,
    /// An answer to a question the task asks (repeatable, used in order). Without one, a
    /// question is asked on the terminal, or ends the call (exit 1) when input is not a terminal.
    #[arg(long, value_name = "TEXT")]
    answer: Vec<String>,
    /// The message's id: a call made again with the id an earlier one printed reaches the task
    /// that one made, where the agent makes sends idempotent (its card declares the
    /// idempotency extension), rather than running the skill again. Default: a new id.
    #[arg(long, value_name = "ID")]
    message_id: Option<String>,
    /// The task's budget: how long this call waits at most, which the skill reads as its
    /// deadline and sends on to the agents it calls (`500ms`, `30s`, `5m`; a bare number is
    /// seconds). Given where the agent declares the budget extension.
    #[arg(long, value_name = "DURATION", value_parser = parse_budget)]
    budget: Option<std::time::Duration>,
    /// How to print the result: human (outputs pretty-printed) or json (the task, or one event
    /// per line with --stream).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    #[command(flatten)]
    access: Access,
}

/// Reads `--data`: inline JSON, `@FILE` or `@-`.
fn read_data(data: &str) -> Result<Value, Failure> {
    let (origin, text) = match data.strip_prefix('@') {
        Some("-") => {
            let mut text = String::new();
            io::Read::read_to_string(&mut io::stdin().lock(), &mut text)
                .map_err(|e| Failure::from(format!("--data @-: cannot read: {e}")))?;
            ("<stdin>".to_owned(), text)
        }
        Some(path) => {
            let path = PathBuf::from(path);
            (path.display().to_string(), read_text(&path)?)
        }
        None => ("--data".to_owned(), data.to_owned()),
    };
    serde_json::from_str(&text).map_err(|e| {
        Failure::from(format!(
            "{origin}: not JSON: {e} (at line {}, column {})",
            e.line(),
            e.column()
        ))
    })
}

/// How progress is shown: a line rewritten in place on a terminal, plain lines otherwise.
struct Progress {
    live: bool,
    shown: bool,
    tick: usize,
}

impl Progress {
    fn new() -> Progress {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Progress {
            live: io::stderr().is_terminal() && !no_color,
            shown: false,
            tick: 0,
        }
    }

    fn say(&mut self, text: &str) {
        let mut err = io::stderr().lock();
        let text = sanitize(text);
        if self.live {
            const FRAMES: [char; 4] = ['|', '/', '-', '\\'];
            self.tick += 1;
            let _ = write!(err, "\r\x1b[2K{} {text}", FRAMES[self.tick % FRAMES.len()]);
            self.shown = true;
        } else {
            let _ = writeln!(err, "progress: {text}");
        }
        let _ = err.flush();
    }

    fn clear(&mut self) {
        if self.shown {
            let _ = write!(io::stderr().lock(), "\r\x1b[2K");
            self.shown = false;
        }
    }
}

/// A refusal the caller can fix (bad input, unknown skill, credentials) or a task that failed.
fn call_failure(e: &ClientError) -> ExitCode {
    let usage = match e {
        // Malformed or invalid input, content the agent does not take, missing or insufficient
        // credentials (the codes of the official Go SDK, which this crate's server uses too).
        ClientError::Rejected { code, reason, .. } => {
            matches!(
                *code,
                -32700 | -32600 | -32601 | -32602 | -32005 | -31401 | -31403
            ) || matches!(
                reason.as_deref(),
                Some(
                    "UNAUTHENTICATED"
                        | "PERMISSION_DENIED"
                        | "INVALID_PARAMS"
                        | "INVALID_REQUEST"
                        | "CONTENT_TYPE_NOT_SUPPORTED"
                )
            )
        }
        other => other.is_usage(),
    };
    let _ = writeln!(
        io::stderr().lock(),
        "a2a-card: {}",
        sanitize(&e.to_string())
    );
    ExitCode::from(if usage { 2 } else { 1 })
}

pub fn run_call(args: &CallArgs) -> Result<ExitCode, Failure> {
    let payload = match (&args.data, &args.text) {
        (Some(data), _) => Payload::data(read_data(data)?),
        (None, Some(text)) => Payload::text(text.clone()),
        (None, None) => return Err(Failure::from("give --data or --text".to_owned())),
    };
    let mut connect = args.access.connect(&args.url)?;
    if let Some((jwks, allowed)) = args.access.keys()? {
        connect = connect.verify_signature(jwks, &allowed);
    }
    block_on(call(args, connect, payload))
}

async fn call(args: &CallArgs, connect: Connect, payload: Payload) -> ExitCode {
    let agent = match connect.discover().await {
        Ok(a) => a,
        Err(e) => return call_failure(&e),
    };
    if let Err(Failure(lines)) = args.access.offered(agent.card()) {
        for line in lines {
            eprintln!("a2a-card: {}", sanitize(&line));
        }
        return ExitCode::from(2);
    }
    // Checked before anything is sent: errors name the field.
    let mut message = match agent.message(&args.skill, payload) {
        Ok(m) => m,
        Err(e) => return call_failure(&e),
    };
    if let Some(id) = &args.message_id {
        message.message_id.clone_from(id);
    }
    if let Some(budget) = args.budget {
        if !agent.takes_budgets() {
            eprintln!(
                "a2a-card: --budget: the agent does not declare the budget extension ({}), so it would not read one",
                a2a_card::budget::BUDGET_EXTENSION_URI
            );
            return ExitCode::from(2);
        }
        a2a_card::budget::with_budget(&mut message, budget);
    }
    // Where the agent makes sends idempotent, the message's id is the call's key: shown, so
    // that a call whose answer was lost can be made again safely.
    if agent.idempotent_sends() {
        let _ = writeln!(
            io::stderr().lock(),
            "idempotency key: {} (to retry safely: --message-id {})",
            sanitize(&message.message_id),
            sanitize(&message.message_id)
        );
    }
    let mut answers = args.answer.iter();
    if args.no_wait {
        return match agent.send_message(message, true).await {
            Ok(outcome) => {
                let id = outcome.task_id().unwrap_or_default().to_owned();
                let written = match args.format {
                    Format::Json => crate::write_json(
                        &mut io::stdout().lock(),
                        &json!({"taskId": id, "state": outcome.state().map(state_str)}),
                    ),
                    Format::Human => writeln!(io::stdout().lock(), "{}", sanitize(&id)),
                };
                exit_after(written, ExitCode::SUCCESS)
            }
            Err(e) => call_failure(&e),
        };
    }
    if args.stream {
        return stream(args, &agent, message, &mut answers).await;
    }
    let mut outcome = match agent.send_message(message, false).await {
        Ok(o) => o,
        Err(e) => return call_failure(&e),
    };
    // Questions: answered from --answer, else on the terminal.
    while let Some(state) = outcome.state().filter(is_question) {
        let question = outcome.status_text().unwrap_or_default();
        let Some(answer) = next_answer(&mut answers, &question, &state) else {
            return call_failure(&ClientError::InputRequired {
                task_id: outcome.task_id().unwrap_or_default().to_owned(),
                question: format!("{question} (answer with --answer TEXT)"),
                auth: state == a2a::TaskState::AuthRequired,
            });
        };
        let mut reply = a2a::Message::new(a2a::Role::User, vec![a2a::Part::text(answer)]);
        reply.task_id = outcome.task_id().map(str::to_owned);
        reply.context_id = outcome.task().map(|t| t.context_id.clone());
        outcome = match agent.send_message(reply, false).await {
            Ok(o) => o,
            Err(e) => return call_failure(&e),
        };
    }
    let written = match args.format {
        Format::Json => crate::write_json(
            &mut io::stdout().lock(),
            &serde_json::to_value(outcome.response()).unwrap_or(Value::Null),
        ),
        Format::Human => print_outputs(&outcome),
    };
    let code = match outcome.clone().into_result() {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => call_failure(&e),
    };
    exit_after(written, code)
}

fn is_question(state: &a2a::TaskState) -> bool {
    matches!(
        state,
        a2a::TaskState::InputRequired | a2a::TaskState::AuthRequired
    )
}

fn state_str(state: a2a::TaskState) -> String {
    serde_json::to_value(&state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The next answer: from `--answer`, else asked on the terminal (when standard input is one).
fn next_answer<'a>(
    answers: &mut impl Iterator<Item = &'a String>,
    question: &str,
    state: &a2a::TaskState,
) -> Option<String> {
    if let Some(a) = answers.next() {
        let _ = writeln!(
            io::stderr().lock(),
            "question: {} -> answered `{}`",
            sanitize(question),
            sanitize(a)
        );
        return Some(a.clone());
    }
    if *state == a2a::TaskState::AuthRequired || !io::stdin().is_terminal() {
        return None;
    }
    let _ = write!(io::stderr().lock(), "{} > ", sanitize(question));
    let _ = io::stderr().flush();
    let mut line = String::new();
    io::stdin().lock().read_line(&mut line).ok()?;
    let line = line.trim_end_matches(['\r', '\n']).to_owned();
    (!line.is_empty()).then_some(line)
}

fn exit_after(written: io::Result<()>, code: ExitCode) -> ExitCode {
    match finish_output(written) {
        Ok(()) => code,
        Err(Failure(lines)) => {
            for l in lines {
                let _ = writeln!(io::stderr().lock(), "a2a-card: {}", sanitize(&l));
            }
            ExitCode::from(2)
        }
    }
}

fn print_outputs(outcome: &TaskOutcome) -> io::Result<()> {
    let mut out = io::stdout().lock();
    for o in outcome.outputs() {
        write_output(&mut out, &o, true)?;
    }
    if let (Some(state), Some(text)) = (outcome.state(), outcome.status_text())
        && state != a2a::TaskState::Completed
    {
        let _ = writeln!(io::stderr().lock(), "status: {}", sanitize(&text));
    }
    out.flush()
}

fn write_output(out: &mut impl Write, o: &Output, pretty: bool) -> io::Result<()> {
    write_content(out, &o.content, pretty)
}

fn write_content(out: &mut impl Write, content: &Content, pretty: bool) -> io::Result<()> {
    match content {
        Content::Text(t) => writeln!(out, "{}", sanitize(t)),
        Content::Data { value, .. } => {
            let text = if pretty {
                serde_json::to_string_pretty(value)
            } else {
                serde_json::to_string(value)
            };
            writeln!(out, "{}", text.unwrap_or_default())
        }
        Content::File {
            name,
            media_type,
            bytes,
            url,
        } => writeln!(
            out,
            "file {} ({}, {})",
            sanitize(name.as_deref().unwrap_or("(unnamed)")),
            sanitize(media_type.as_deref().unwrap_or("no media type")),
            match (bytes, url) {
                (Some(b), _) => format!("{} bytes", b.len()),
                (None, Some(u)) => format!("at {}", sanitize(u)),
                _ => "empty".to_owned(),
            }
        ),
        _ => Ok(()),
    }
}

fn event_json(event: &Event) -> Value {
    match event {
        Event::Status { state, text } => {
            json!({"event": "status", "state": state_str(state.clone()), "text": text})
        }
        Event::Output(o) => {
            let mut v = json!({"event": "output", "artifactId": o.artifact_id, "artifactName": o.artifact_name});
            match &o.content {
                Content::Text(t) => v["text"] = json!(t),
                Content::Data { schema, value } => {
                    v["schema"] = json!(schema);
                    v["data"] = value.clone();
                }
                Content::File {
                    name,
                    media_type,
                    url,
                    ..
                } => v["file"] = json!({"name": name, "mediaType": media_type, "url": url}),
                _ => {}
            }
            v
        }
        Event::Message(m) => {
            json!({"event": "message", "message": serde_json::to_value(m).unwrap_or(Value::Null)})
        }
        Event::Question { text, auth, data } => {
            json!({"event": "question", "text": text, "auth": auth, "data": data})
        }
        Event::Finished { state, text } => {
            json!({"event": "finished", "state": state_str(state.clone()), "text": text})
        }
        _ => json!({"event": "other"}),
    }
}

async fn stream<'a>(
    args: &CallArgs,
    agent: &RemoteAgent,
    message: a2a::Message,
    answers: &mut impl Iterator<Item = &'a String>,
) -> ExitCode {
    let mut run = match agent.stream_message(message).await {
        Ok(r) => r,
        Err(e) => return call_failure(&e),
    };
    let mut progress = Progress::new();
    let mut finished: Option<(a2a::TaskState, Option<String>)> = None;
    loop {
        let Some(event) = run.next().await else {
            break;
        };
        let event = match event {
            Ok(e) => e,
            Err(e) => {
                progress.clear();
                return call_failure(&e);
            }
        };
        let mut out = io::stdout().lock();
        let written = if let Format::Json = args.format {
            serde_json::to_writer(&mut out, &event_json(&event))
                .map_err(io::Error::from)
                .and_then(|()| writeln!(out))
                .and_then(|()| out.flush())
        } else {
            match &event {
                Event::Status { text: Some(t), .. } => {
                    progress.say(t);
                    Ok(())
                }
                Event::Output(o) => {
                    progress.clear();
                    write_output(&mut out, o, false).and_then(|()| out.flush())
                }
                Event::Message(m) => {
                    progress.clear();
                    m.parts
                        .iter()
                        .try_for_each(|p| write_content(&mut out, &Content::of_part(p), false))
                }
                _ => Ok(()),
            }
        };
        drop(out);
        if written.is_err() {
            progress.clear();
            return exit_after(written, ExitCode::from(2));
        }
        match event {
            Event::Question { text, auth, .. } => {
                progress.clear();
                let state = if auth {
                    a2a::TaskState::AuthRequired
                } else {
                    a2a::TaskState::InputRequired
                };
                let Some(answer) = next_answer(answers, &text, &state) else {
                    return call_failure(&ClientError::InputRequired {
                        task_id: run.task_id().unwrap_or_default().to_owned(),
                        question: format!("{text} (answer with --answer TEXT)"),
                        auth,
                    });
                };
                if let Err(e) = run.answer(&answer).await {
                    return call_failure(&e);
                }
            }
            Event::Finished { state, text } => finished = Some((state, text)),
            _ => {}
        }
    }
    progress.clear();
    match finished {
        Some((a2a::TaskState::Completed, _)) | None => ExitCode::SUCCESS,
        Some((state, text)) => call_failure(&ClientError::TaskFailed {
            task_id: run.task_id().unwrap_or_default().to_owned(),
            state,
            message: text,
        }),
    }
}

/// A budget as `--budget` takes it: a whole number followed by `ms`, `s` or `m` (seconds when
/// bare).
fn parse_budget(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => text.split_at(i),
        None => (text, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration: write 500ms, 30s or 5m"))?;
    match unit {
        "ms" => Ok(std::time::Duration::from_millis(n)),
        "s" => Ok(std::time::Duration::from_secs(n)),
        "m" => Ok(std::time::Duration::from_secs(n.saturating_mul(60))),
        other => Err(format!(
            "`{other}` is not a unit of --budget: write ms, s or m (500ms, 30s, 5m)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::parse_budget;

    #[test]
    fn a_budget_is_a_number_and_a_unit() {
        assert_eq!(parse_budget("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_budget("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_budget("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_budget("5m"), Ok(Duration::from_secs(300)));
        assert!(parse_budget("5h").unwrap_err().contains("`h`"));
        assert!(parse_budget("soon").unwrap_err().contains("write 500ms"));
    }
}
