//! The console's pages, written as HTML here: every value from a task, a caller or the store
//! escaped ([`esc`]), no inline script or style.
//!
//! One file per page: `list.rs` (the tasks), `task.rs` (a task), `journal.rs` (a durable
//! task's journal, on its task's page), `replicas.rs` (the replicas and the limits); this file
//! holds what they share (the layout, escaping, times, which tasks stand out) and the small
//! pages (sign-in, refusal, a problem).

mod journal;
mod list;
mod replicas;
mod task;

pub(super) use list::{Filter, list_page};
pub(super) use replicas::replicas_page;
pub(super) use task::task_page;

use std::fmt::Write as _;

use a2a::{Message, PartContent, Task, TaskState};
use chrono::{DateTime, Utc};

use super::Served;
use super::access::Operator;

/// The states a task can be in, in the order the counts show them.
const STATES: [TaskState; 8] = [
    TaskState::Submitted,
    TaskState::Working,
    TaskState::InputRequired,
    TaskState::AuthRequired,
    TaskState::Completed,
    TaskState::Failed,
    TaskState::Canceled,
    TaskState::Rejected,
];

/// The name of `state` (as the protocol's JSON names it, lowercase: `input-required`);
/// `unknown` for a state that is none of [`STATES`].
fn state_name(state: &TaskState) -> &'static str {
    if STATES.contains(state) {
        crate::v0_3::state_name(state)
    } else {
        "unknown"
    }
}

/// The state named `name` (see [`state_name`]).
fn named_state(name: &str) -> Option<TaskState> {
    STATES.into_iter().find(|state| state_name(state) == name)
}

/// `text` escaped for HTML text and attribute values.
pub(super) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `text` percent-encoded for a path segment or a query value.
pub(super) fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b':') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// `text` cut to `max` characters.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// A duration in words: `12 s`, `5 min`, `3 h`, `2 d`.
fn span(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        s if s < 120 => format!("{s} s"),
        s if s < 2 * 3600 => format!("{} min", s / 60),
        s if s < 2 * 86_400 => format!("{} h", s / 3600),
        s => format!("{} d", s / 86_400),
    }
}

/// A time as the pages show it, with how long ago (or ahead) it is.
fn when(at: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let ms = (now - at).num_milliseconds();
    let rel = if ms >= 0 {
        format!("{} ago", span(ms))
    } else {
        format!("in {}", span(-ms))
    };
    format!(
        "<time datetime=\"{}\" title=\"{}\">{}</time>",
        at.to_rfc3339(),
        at.format("%Y-%m-%d %H:%M:%S UTC"),
        esc(&rel)
    )
}

/// The text of a message's text parts.
fn text_of(message: Option<&Message>) -> String {
    message
        .map(|m| {
            m.parts
                .iter()
                .filter_map(|p| match &p.content {
                    PartContent::Text(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// Why task `task` stands out, if it does: waiting for an answer, or working without a
/// status change, for longer than the console's thresholds.
fn flag(served: &Served, task: &Task, now: DateTime<Utc>) -> Option<String> {
    let at = task.status.timestamp?;
    let ms = (now - at).num_milliseconds();
    let over =
        |limit: std::time::Duration| ms > i64::try_from(limit.as_millis()).unwrap_or(i64::MAX);
    match task.status.state {
        TaskState::InputRequired | TaskState::AuthRequired if over(served.console.long_waiting) => {
            Some(format!("waiting for an answer for {}", span(ms)))
        }
        TaskState::Submitted | TaskState::Working if over(served.console.long_working) => {
            Some(format!("working for {} without a status change", span(ms)))
        }
        _ => None,
    }
}

/// The page around `main`.
fn layout(
    served: &Served,
    base: &str,
    operator: Option<&Operator>,
    current: &str,
    title: &str,
    main: &str,
) -> String {
    let agent = esc(&served.agent);
    let mut nav = String::new();
    if operator.is_some() {
        for (href, label, key) in [
            (base.to_owned(), "Tasks", "tasks"),
            (format!("{base}/replicas"), "Replicas & limits", "replicas"),
        ] {
            let here = if key == current {
                " aria-current=\"page\""
            } else {
                ""
            };
            let _ = write!(nav, "<a href=\"{}\"{here}>{}</a>", esc(&href), esc(label));
        }
    }
    if operator.is_some_and(|o| o.cookie) {
        let _ = write!(
            nav,
            "<form method=\"post\" action=\"{}/logout\" class=\"logout\"><button type=\"submit\">Sign out</button></form>",
            esc(base)
        );
    }
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · {agent} · console</title>\
         <link rel=\"stylesheet\" href=\"{b}/console.css\">\
         <script src=\"{b}/console.js\" defer></script></head>\
         <body><a class=\"skip\" href=\"#main\">Skip to content</a>\
         <header><p class=\"agent\">{agent} <span>console</span></p>\
         <nav aria-label=\"Console\">{nav}</nav></header>\
         <main id=\"main\" tabindex=\"-1\">{main}</main></body></html>\n",
        title = esc(title),
        b = esc(base),
    )
}

/// The form a console token is typed in.
pub(super) fn login(served: &Served, base: &str, error: Option<&str>) -> String {
    let mut main = String::from("<h1>Sign in</h1>");
    if let Some(error) = error {
        let _ = write!(main, "<p class=\"error\" role=\"alert\">{}</p>", esc(error));
    }
    let _ = write!(
        main,
        "<form method=\"post\" action=\"{}/login\" class=\"login\">\
         <label for=\"token\">Console token</label>\
         <input type=\"password\" id=\"token\" name=\"token\" required autocomplete=\"current-password\">\
         <button type=\"submit\">Sign in</button></form>\
         <p class=\"hint\">The token the agent's operator gave the console. It is kept, as a digest, in a cookie for the console's pages alone.</p>",
        esc(base)
    );
    layout(served, base, None, "login", "Sign in", &main)
}

/// The page of a refused request: why, and where to sign in; nothing of the agent's tasks.
pub(super) fn refused(message: &str, login: Option<&str>, base: &str) -> String {
    let _ = base;
    let mut body = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Not allowed · console</title></head><body><main><h1>Not allowed</h1><p>{}</p>",
        esc(message)
    );
    if let Some(login) = login {
        let _ = write!(
            body,
            "<p><a href=\"{}\">Sign in with the console's token</a></p>",
            esc(login)
        );
    }
    body.push_str("</main></body></html>\n");
    body
}

/// A page that says what went wrong and what to do.
pub(super) fn problem(title: &str, message: &str, back: Option<&str>) -> String {
    let mut body = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{t} · console</title></head><body><main><h1>{t}</h1><p>{}</p>",
        esc(message),
        t = esc(title),
    );
    if let Some(back) = back {
        let _ = write!(body, "<p><a href=\"{}\">Back</a></p>", esc(back));
    }
    body.push_str("</main></body></html>\n");
    body
}

#[cfg(test)]
mod tests;
