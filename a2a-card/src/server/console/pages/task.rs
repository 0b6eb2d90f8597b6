//! A task's page: where it stands (with the form that cancels it), what diverged in a replay
//! that failed it, its status history from the store's event log, its journal, messages and
//! artifacts (typed data shown as data); its live part alone for the page's refresh.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use a2a::{A2AError, Part, PartContent, TaskState};
use chrono::Utc;
use serde_json::Value;

use super::journal::journal_section;
use super::{cut, encode, esc, flag, layout, state_name, text_of, when};
use crate::server::console::Served;
use crate::server::console::access::Operator;

/// What the failed status of a replay that diverged says (see `journal::Journal::diverged`).
const DIVERGED: &str = "did not replay as its journal says";

/// A part of a message or an artifact.
fn part(out: &mut String, part: &Part) {
    let media = part.media_type.as_deref().unwrap_or("");
    match &part.content {
        PartContent::Text(text) => {
            let _ = write!(out, "<p class=\"text\">{}</p>", esc(text));
        }
        PartContent::Data(data) => {
            let _ = write!(
                out,
                "<div class=\"data\"><p class=\"media\">data{}</p>",
                if media.is_empty() {
                    String::new()
                } else {
                    format!(" · <code>{}</code>", esc(media))
                }
            );
            data_value(out, data);
            out.push_str("</div>");
        }
        PartContent::Raw(bytes) => {
            let _ = write!(
                out,
                "<p class=\"file\">file <code>{}</code> ({}, {} bytes)</p>",
                esc(part.filename.as_deref().unwrap_or("unnamed")),
                esc(if media.is_empty() {
                    "no media type"
                } else {
                    media
                }),
                bytes.len()
            );
        }
        PartContent::Url(url) => {
            let _ = write!(
                out,
                "<p class=\"file\">file <code>{}</code> at <code>{}</code></p>",
                esc(part.filename.as_deref().unwrap_or("unnamed")),
                esc(url)
            );
        }
    }
}

/// Typed data shown as data: an object's fields as a list of names and values, anything
/// else as JSON.
fn data_value(out: &mut String, value: &Value) {
    match value {
        Value::Object(fields) if !fields.is_empty() => {
            out.push_str("<dl>");
            for (name, value) in fields {
                let _ = write!(
                    out,
                    "<dt>{}</dt><dd data-field=\"{}\">",
                    esc(name),
                    esc(name)
                );
                match value {
                    Value::String(s) => out.push_str(&esc(s)),
                    Value::Number(_) | Value::Bool(_) | Value::Null => {
                        out.push_str(&esc(&value.to_string()))
                    }
                    nested => {
                        let _ = write!(
                            out,
                            "<pre>{}</pre>",
                            esc(&serde_json::to_string_pretty(nested).unwrap_or_default())
                        );
                    }
                }
                out.push_str("</dd>");
            }
            out.push_str("</dl>");
        }
        other => {
            let _ = write!(
                out,
                "<pre>{}</pre>",
                esc(&serde_json::to_string_pretty(other).unwrap_or_default())
            );
        }
    }
}

/// A task's page, or its live part alone; `None` when the store has no such task.
pub(in crate::server::console) async fn task_page(
    served: &Served,
    base: &str,
    operator: &Operator,
    id: &str,
    live_only: bool,
    note: Option<&str>,
) -> Result<Option<String>, A2AError> {
    let lifecycle = &served.lifecycle;
    let task = match lifecycle.read_task(id).await {
        Ok(task) => task,
        Err(e) if e.code == a2a::error_code::TASK_NOT_FOUND => return Ok(None),
        Err(e) => return Err(e),
    };
    let log = lifecycle.store().events();
    let events = match &log {
        Some(log) => log.read(id, Some(0)).await?.map(|l| l.events),
        None => None,
    };
    let (journal, written) = match &log {
        Some(log) if log.keeps_journals() => (
            Some(log.read_journal(id).await?),
            log.journal_times(id).await?.into_iter().collect(),
        ),
        _ => (None, BTreeMap::new()),
    };
    let now = Utc::now();
    let state = state_name(&task.status.state);
    let running = !task.status.state.is_terminal();
    let status_text = text_of(task.status.message.as_ref());
    let diverged =
        (task.status.state == TaskState::Failed && status_text.contains(DIVERGED)).then(|| {
            status_text
                .split("its entry ")
                .nth(1)
                .and_then(|rest| rest.split(' ').next())
                .and_then(|n| n.parse::<u64>().ok())
        });

    let mut live = String::new();
    let _ = write!(
        live,
        "<div id=\"live\" data-running=\"{running}\" data-refresh-ms=\"{}\">",
        served.console.refresh.as_millis()
    );
    // Where the task stands.
    let _ = write!(
        live,
        "<section aria-labelledby=\"now\" class=\"now\"><h2 id=\"now\">Now</h2>\
         <p><span class=\"state state-{state}\" id=\"task-state\">{state}</span> {}{}</p>",
        task.status
            .timestamp
            .map(|t| format!("since {}", when(t, now)))
            .unwrap_or_default(),
        flag(served, &task, now)
            .map(|f| format!(" <span class=\"flag\">⚠ {}</span>", esc(&f)))
            .unwrap_or_default(),
    );
    if !status_text.is_empty() {
        let _ = write!(live, "<p class=\"status-text\">{}</p>", esc(&status_text));
    }
    if running {
        let _ = write!(
            live,
            "<form method=\"post\" action=\"{}/tasks/{}/cancel\" class=\"cancel\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{}\">\
             <button type=\"submit\" class=\"danger\" id=\"cancel\">Cancel this task</button>\
             <span class=\"hint\">Cancels it as a caller's <code>CancelTask</code> would: its handler stops, and its webhooks are told.</span></form>",
            esc(base),
            esc(&encode(id)),
            esc(&served.csrf(operator)),
        );
        let _ = write!(
            live,
            "<p class=\"hint\">This page refreshes every {} s while the task runs.</p>",
            served.console.refresh.as_secs_f32()
        );
    }
    live.push_str("</section>");
    if let Some(at) = diverged {
        let _ = write!(
            live,
            "<section aria-labelledby=\"diverged\" class=\"diverged\" id=\"what-diverged\"><h2 id=\"diverged\">What diverged</h2>\
             <p>The task's handler, run again from its journal, did not do what the journal says{}:</p>\
             <blockquote>{}</blockquote></section>",
            at.map(|n| format!(" at entry {n} (marked below)"))
                .unwrap_or_default(),
            esc(&status_text),
        );
    }
    // Status history.
    live.push_str("<section aria-labelledby=\"history\"><h2 id=\"history\">Status history</h2>");
    match &events {
        Some(events) => {
            live.push_str("<ol class=\"timeline\">");
            let mut chunks = 0usize;
            let flush = |live: &mut String, chunks: &mut usize| {
                if *chunks > 0 {
                    let _ = write!(
                        live,
                        "<li class=\"artifact-updates\">{} artifact update{}</li>",
                        chunks,
                        if *chunks == 1 { "" } else { "s" }
                    );
                    *chunks = 0;
                }
            };
            for (n, event) in events {
                match event.event().map(std::borrow::Cow::into_owned) {
                    Ok(a2a::StreamResponse::StatusUpdate(update)) => {
                        flush(&mut live, &mut chunks);
                        let s = state_name(&update.status.state);
                        let _ = write!(
                            live,
                            "<li><span class=\"n\">#{n}</span> <span class=\"state state-{s}\">{s}</span> {} <span class=\"text\">{}</span></li>",
                            update.status.timestamp.map(|t| when(t, now)).unwrap_or_default(),
                            esc(&cut(&text_of(update.status.message.as_ref()), 300)),
                        );
                    }
                    Ok(a2a::StreamResponse::ArtifactUpdate(_)) => chunks += 1,
                    Ok(_) => {}
                    Err(e) => {
                        flush(&mut live, &mut chunks);
                        let _ = write!(
                            live,
                            "<li>#{n}: not readable ({})</li>",
                            esc(&e.message)
                        );
                    }
                }
            }
            flush(&mut live, &mut chunks);
            live.push_str("</ol>");
        }
        None => live.push_str(
            "<p class=\"hint\">The store keeps no event log (tasks in memory): only the task's current status is known.</p>",
        ),
    }
    live.push_str("</section>");
    // Journal.
    if let Some(journal) = &journal
        && !journal.is_empty()
    {
        journal_section(&mut live, journal, &written, diverged.flatten(), now);
    }
    // Messages.
    live.push_str("<section aria-labelledby=\"messages\"><h2 id=\"messages\">Messages</h2>");
    match task.history.as_deref() {
        Some(history) if !history.is_empty() => {
            live.push_str("<ol class=\"messages\">");
            for message in history {
                let role = match message.role {
                    a2a::Role::User => "user",
                    a2a::Role::Agent => "agent",
                    _ => "unknown",
                };
                let _ = write!(
                    live,
                    "<li class=\"message {role}\"><p class=\"role\">{role}</p>"
                );
                for p in &message.parts {
                    part(&mut live, p);
                }
                live.push_str("</li>");
            }
            live.push_str("</ol>");
        }
        _ => live.push_str("<p class=\"empty\">No messages kept.</p>"),
    }
    live.push_str("</section>");
    // Artifacts.
    live.push_str("<section aria-labelledby=\"artifacts\"><h2 id=\"artifacts\">Artifacts</h2>");
    match task.artifacts.as_deref() {
        Some(artifacts) if !artifacts.is_empty() => {
            for artifact in artifacts {
                let _ = write!(
                    live,
                    "<article class=\"artifact\"><h3>{}</h3>",
                    esc(artifact.name.as_deref().unwrap_or(&artifact.artifact_id))
                );
                if let Some(description) = &artifact.description {
                    let _ = write!(live, "<p>{}</p>", esc(description));
                }
                for p in &artifact.parts {
                    part(&mut live, p);
                }
                live.push_str("</article>");
            }
        }
        _ => live.push_str("<p class=\"empty\">No artifacts.</p>"),
    }
    live.push_str("</section></div>");
    if live_only {
        return Ok(Some(live));
    }

    let skill = lifecycle.skill_of(&task);
    let mut main = String::new();
    let _ = write!(
        main,
        "<p class=\"crumbs\"><a href=\"{}\">Tasks</a> /</p><h1>Task <code>{}</code></h1>",
        esc(base),
        esc(&cut(id, 60))
    );
    if note == Some("cancelled") {
        main.push_str("<p class=\"note\" role=\"status\">The task was cancelled.</p>");
    }
    let _ = write!(
        main,
        "<dl class=\"facts\"><dt>Id</dt><dd><code>{}</code></dd><dt>Context</dt><dd><code>{}</code></dd>\
         <dt>Skill</dt><dd>{}</dd><dt>Durable</dt><dd>{}</dd></dl>",
        esc(id),
        esc(&task.context_id),
        skill.map(esc).unwrap_or_else(|| "—".into()),
        match &journal {
            Some(j) if !j.is_empty() => "yes: its journal is below",
            Some(_) => "no journal",
            None => "the store keeps no journals",
        }
    );
    main.push_str(&live);
    Ok(Some(layout(
        served,
        base,
        Some(operator),
        "task",
        &format!("Task {}", cut(id, 24)),
        &main,
    )))
}
