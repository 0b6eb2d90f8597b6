//! The console's pages, written as HTML here: every value from a task, a caller or the store
//! escaped ([`esc`]), no inline script or style.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use a2a::{A2AError, ListTasksRequest, Message, Part, PartContent, Task, TaskState};
use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{Operator, Served};
use crate::journal::{Entry, MARKS, STARTS};

/// The states a task can be in, with how the console names them (as A2A 1.0's JSON does,
/// lowercase), in the order the counts show them.
const STATES: [(TaskState, &str); 8] = [
    (TaskState::Submitted, "submitted"),
    (TaskState::Working, "working"),
    (TaskState::InputRequired, "input-required"),
    (TaskState::AuthRequired, "auth-required"),
    (TaskState::Completed, "completed"),
    (TaskState::Failed, "failed"),
    (TaskState::Canceled, "canceled"),
    (TaskState::Rejected, "rejected"),
];

/// How many pages of the store's listing one page of a narrowed list reads at most.
const SCAN: usize = 8;

/// What the failed status of a replay that diverged says (see `journal::Journal::diverged`).
const DIVERGED: &str = "did not replay as its journal says";

/// The name of `state`.
fn state_name(state: &TaskState) -> &'static str {
    STATES
        .iter()
        .find(|(s, _)| s == state)
        .map_or("unknown", |(_, n)| n)
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

/// The filters and search of the list, as its query string says.
#[derive(Debug, Default, Clone)]
pub(super) struct Filter {
    state: Option<TaskState>,
    skill: Option<String>,
    tenant: Option<String>,
    caller: Option<String>,
    q: Option<String>,
    /// The store's cursor: where the page starts.
    after: Option<String>,
}

impl Filter {
    /// The filters of query `query`; the tenant, when the query names none, `tenant`.
    pub(super) fn from_query(query: &[(String, String)], tenant: Option<&str>) -> Filter {
        let get = |name: &str| {
            query
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.trim().to_owned())
        };
        let some = |v: Option<String>| v.filter(|v| !v.is_empty());
        Filter {
            state: get("state").and_then(|s| {
                STATES
                    .iter()
                    .find(|(_, n)| *n == s)
                    .map(|(state, _)| state.clone())
            }),
            skill: some(get("skill")),
            tenant: match get("tenant") {
                Some(t) => some(Some(t)),
                None => tenant.map(str::to_owned),
            },
            caller: some(get("caller")),
            q: some(get("q")).map(|q| q.to_lowercase()),
            after: some(get("after")),
        }
    }

    /// Whether the filters narrow the store's listing here (the store filters by state).
    fn narrows(&self) -> bool {
        self.skill.is_some() || self.caller.is_some() || self.q.is_some()
    }

    /// The query string of these filters, from `after`.
    fn query(&self, after: Option<&str>) -> String {
        let mut pairs = url::form_urlencoded::Serializer::new(String::new());
        if let Some(state) = &self.state {
            pairs.append_pair("state", state_name(state));
        }
        for (name, value) in [
            ("skill", &self.skill),
            ("tenant", &self.tenant),
            ("caller", &self.caller),
            ("q", &self.q),
        ] {
            if let Some(value) = value {
                pairs.append_pair(name, value);
            }
        }
        if let Some(after) = after {
            pairs.append_pair("after", after);
        }
        pairs.finish()
    }
}

/// A task as the list shows it.
struct Row {
    task: Task,
    skill: Option<&'static str>,
    caller: Option<String>,
    flag: Option<String>,
}

impl Row {
    fn of(served: &Served, task: Task, reach: &str, now: DateTime<Utc>) -> Row {
        let skill = served.lifecycle.skill_of(&task);
        let caller = caller_of(&task.id, reach);
        let flag = flag(served, &task, now);
        Row {
            task,
            skill,
            caller,
            flag,
        }
    }

    fn passes(&self, filter: &Filter) -> bool {
        filter
            .skill
            .as_deref()
            .is_none_or(|s| self.skill == Some(s))
            && filter
                .caller
                .as_deref()
                .is_none_or(|c| self.caller.as_deref().is_some_and(|m| m.starts_with(c)))
            && filter.q.as_deref().is_none_or(|q| {
                self.task.id.to_lowercase().contains(q)
                    || self.task.context_id.to_lowercase().contains(q)
                    || self.skill.is_some_and(|s| s.contains(q))
                    || text_of(self.task.status.message.as_ref())
                        .to_lowercase()
                        .contains(q)
            })
    }
}

/// The owner mark task `id` carries after its tenant's prefix `reach` (`anon`, or a digest
/// that names nobody), where the server authenticates its callers.
fn caller_of(id: &str, reach: &str) -> Option<String> {
    let rest = id.strip_prefix(reach)?;
    rest.split_once('.').map(|(mark, _)| mark.to_owned())
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

/// A `ListTasks` request of the store's listing, in reach `reach`.
fn request(
    reach: &str,
    state: Option<TaskState>,
    size: usize,
    after: Option<String>,
) -> ListTasksRequest {
    ListTasksRequest {
        context_id: None,
        status: state,
        page_size: Some(i32::try_from(size).unwrap_or(100)),
        page_token: after,
        history_length: None,
        status_timestamp_after: None,
        include_artifacts: Some(false),
        tenant: (!reach.is_empty()).then(|| reach.to_owned()),
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

/// The list of tasks.
pub(super) async fn list_page(
    served: &Served,
    base: &str,
    operator: &Operator,
    filter: &Filter,
) -> Result<String, A2AError> {
    let lifecycle = &served.lifecycle;
    let reach = served.reach(filter.tenant.as_deref());
    let now = Utc::now();
    // Counts by state: the store's own count of each.
    let mut counts = Vec::with_capacity(STATES.len());
    for (state, name) in &STATES {
        let listed = lifecycle
            .list_tasks_admitted(request(&reach, Some(state.clone()), 1, None))
            .await?;
        counts.push((name, listed.total_size));
    }
    // The page: the store's pages from the cursor, as many as a narrowed list needs.
    let size = served.console.page_size;
    let mut rows = Vec::new();
    let mut after = filter.after.clone();
    let mut scanned = 0;
    let mut total = None;
    loop {
        let listed = lifecycle
            .list_tasks_admitted(request(&reach, filter.state.clone(), size, after.clone()))
            .await?;
        scanned += 1;
        total.get_or_insert(listed.total_size);
        rows.extend(
            listed
                .tasks
                .into_iter()
                .map(|t| Row::of(served, t, &reach, now))
                .filter(|r| r.passes(filter)),
        );
        after = (!listed.next_page_token.is_empty()).then_some(listed.next_page_token);
        if after.is_none() || !filter.narrows() || rows.len() >= size || scanned >= SCAN {
            break;
        }
    }

    let mut main = String::new();
    main.push_str("<h1>Tasks</h1>");
    // Counts.
    main.push_str("<section aria-labelledby=\"counts\"><h2 id=\"counts\" class=\"quiet\">By state</h2><ul class=\"counts\">");
    for (name, n) in &counts {
        let mut by_state = filter.clone();
        by_state.state = STATES
            .iter()
            .find(|(_, s)| s == *name)
            .map(|(state, _)| state.clone());
        by_state.after = None;
        let _ = write!(
            main,
            "<li><a href=\"{}?{}\" class=\"state-{name}\"><span class=\"n\">{n}</span> {name}</a></li>",
            esc(base),
            esc(&by_state.query(None)),
        );
    }
    main.push_str("</ul></section>");
    // Filters.
    let value = |v: &Option<String>| esc(v.as_deref().unwrap_or(""));
    let _ = write!(
        main,
        "<form class=\"filters\" method=\"get\" action=\"{}\" role=\"search\" aria-label=\"Filter the tasks\">",
        esc(base)
    );
    main.push_str("<label>State <select name=\"state\"><option value=\"\">any</option>");
    for (state, name) in &STATES {
        let selected = if filter.state.as_ref() == Some(state) {
            " selected"
        } else {
            ""
        };
        let _ = write!(main, "<option{selected}>{name}</option>");
    }
    main.push_str(
        "</select></label><label>Skill <select name=\"skill\"><option value=\"\">any</option>",
    );
    for skill in lifecycle.skill_ids() {
        let selected = if filter.skill.as_deref() == Some(skill) {
            " selected"
        } else {
            ""
        };
        let _ = write!(main, "<option{selected}>{}</option>", esc(skill));
    }
    let _ = write!(
        main,
        "</select></label>\
         <label>Tenant <input name=\"tenant\" value=\"{}\" placeholder=\"default\" autocomplete=\"off\"></label>\
         <label>Caller <input name=\"caller\" value=\"{}\" placeholder=\"owner mark\" autocomplete=\"off\"></label>\
         <label class=\"wide\">Search <input type=\"search\" name=\"q\" value=\"{}\" placeholder=\"id, context, status text\"></label>\
         <button type=\"submit\">Filter</button></form>",
        value(&filter.tenant),
        value(&filter.caller),
        value(&filter.q),
    );
    // The rows.
    let flagged = rows.iter().filter(|r| r.flag.is_some()).count();
    let _ = write!(
        main,
        "<p class=\"summary\" id=\"summary\">{} task{} on this page{}; {} in the store's listing{}.</p>",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        if flagged > 0 {
            format!(", <strong class=\"flag\">{flagged} standing out</strong>")
        } else {
            String::new()
        },
        total.unwrap_or(0),
        if filter.narrows() {
            format!(" ({scanned} of its pages read for the filters)")
        } else {
            String::new()
        }
    );
    if rows.is_empty() {
        main.push_str("<p class=\"empty\">No task matches.</p>");
    } else {
        main.push_str(
            "<table class=\"tasks\" aria-describedby=\"summary\"><thead><tr><th scope=\"col\">Task</th><th scope=\"col\">State</th><th scope=\"col\">Skill</th><th scope=\"col\">Caller</th><th scope=\"col\">Updated</th><th scope=\"col\">Status</th></tr></thead><tbody>",
        );
        for row in &rows {
            let task = &row.task;
            let state = state_name(&task.status.state);
            let short = cut(task.id.rsplit(['.', ':']).next().unwrap_or(&task.id), 13);
            let _ = write!(
                main,
                "<tr class=\"{}\" data-task=\"{}\" data-state=\"{state}\">\
                 <td data-label=\"Task\"><a href=\"{}/tasks/{}\" title=\"{}\"><code>{}</code></a></td>\
                 <td data-label=\"State\"><span class=\"state state-{state}\">{state}</span>{}</td>\
                 <td data-label=\"Skill\">{}</td><td data-label=\"Caller\">{}</td>\
                 <td data-label=\"Updated\">{}</td><td data-label=\"Status\">{}</td></tr>",
                if row.flag.is_some() { "flagged" } else { "" },
                esc(&task.id),
                esc(base),
                esc(&encode(&task.id)),
                esc(&task.id),
                esc(&short),
                row.flag
                    .as_deref()
                    .map(|f| format!(" <span class=\"flag\">⚠ {}</span>", esc(f)))
                    .unwrap_or_default(),
                row.skill.map(esc).unwrap_or_else(|| "—".into()),
                row.caller
                    .as_deref()
                    .map(|c| format!("<code title=\"{}\">{}</code>", esc(c), esc(&cut(c, 8))))
                    .unwrap_or_else(|| "—".into()),
                task.status
                    .timestamp
                    .map(|t| when(t, now))
                    .unwrap_or_else(|| "—".into()),
                esc(&cut(&text_of(task.status.message.as_ref()), 120)),
            );
        }
        main.push_str("</tbody></table>");
    }
    let mut pager = String::new();
    if filter.after.is_some() {
        let _ = write!(
            pager,
            "<a href=\"{}?{}\">First page</a>",
            esc(base),
            esc(&filter.query(None))
        );
    }
    if let Some(next) = &after {
        let _ = write!(
            pager,
            "<a href=\"{}?{}\" rel=\"next\" id=\"next-page\">Next page</a>",
            esc(base),
            esc(&filter.query(Some(next)))
        );
    }
    if !pager.is_empty() {
        let _ = write!(
            main,
            "<nav class=\"pager\" aria-label=\"Pages\">{pager}</nav>"
        );
    }
    Ok(layout(
        served,
        base,
        Some(operator),
        "tasks",
        "Tasks",
        &main,
    ))
}

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
pub(super) async fn task_page(
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

/// `ms` milliseconds as an operator reads them: `840 ms`, `2.4 s`, `3 min 5 s`, `2 h 10 min`.
fn duration(ms: i64) -> String {
    match ms {
        ..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", ms as f64 / 1_000.0),
        60_000..3_600_000 => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1_000),
        _ => format!("{} h {} min", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

/// A durable task's journal: its entries in the order the handler made them, steps begun
/// and not finished among them, markers after; how long each step took, where the store
/// kept when its start and its result were `written` (entry number to milliseconds since the
/// Unix epoch).
fn journal_section(
    out: &mut String,
    journal: &[(u64, Entry)],
    written: &BTreeMap<u64, i64>,
    diverged: Option<u64>,
    now: DateTime<Utc>,
) {
    let entries: BTreeMap<u64, &Entry> = journal.iter().map(|(n, e)| (*n, e)).collect();
    // The steps begun, by the number their result is written at.
    let started: BTreeMap<u64, &str> = entries
        .range(STARTS..)
        .filter_map(|(n, e)| match e {
            Entry::Started { started } => Some((n - STARTS, started.as_str())),
            _ => None,
        })
        .collect();
    let mut rows: Vec<(u64, String, String, &'static str)> = Vec::new();
    for (n, entry) in entries.range(..MARKS) {
        let (what, detail, class) = match entry {
            Entry::Begin { begin } => {
                let mut d = format!("skill <code>{}</code>", esc(&begin.skill));
                if let Some(v) = &begin.version {
                    let _ = write!(d, ", version <code>{}</code>", esc(v));
                }
                if let Some(p) = &begin.principal {
                    let _ = write!(d, ", caller <code>{}</code>", esc(p.subject()));
                }
                if let Some(t) = &begin.tenant {
                    let _ = write!(d, ", tenant <code>{}</code>", esc(t));
                }
                if let Some(ms) = begin.deadline_ms
                    && let Some(at) = DateTime::<Utc>::from_timestamp_millis(ms)
                {
                    let _ = write!(d, ", deadline {}", when(at, now));
                }
                if let Some(tokens) = begin.tokens {
                    let _ = write!(d, ", {tokens} model tokens");
                }
                ("began".to_owned(), d, "begin")
            }
            Entry::Step { name, value } => {
                let begun = if started.contains_key(n) {
                    "begun, then finished"
                } else {
                    "finished"
                };
                // From the start's write (before the body ran; the first run's, when a stop
                // made it run again) to the result's.
                let took = match (written.get(&(n + STARTS)), written.get(n)) {
                    (Some(start), Some(end)) if end >= start => {
                        format!(" in <span class=\"took\">{}</span>", duration(end - start))
                    }
                    _ => String::new(),
                };
                (
                    format!("step <code>{}</code>", esc(name)),
                    format!(
                        "{begun}{took}; result <code class=\"json\">{}</code>",
                        esc(&cut(&value.to_string(), 200))
                    ),
                    "step",
                )
            }
            Entry::Sleep { until_ms } => {
                let at = DateTime::<Utc>::from_timestamp_millis(*until_ms);
                let passed = at.is_some_and(|at| at <= now);
                (
                    "sleep".to_owned(),
                    format!(
                        "until {}{}",
                        at.map(|at| when(at, now))
                            .unwrap_or_else(|| until_ms.to_string()),
                        if passed { " (passed)" } else { " (ahead)" }
                    ),
                    "sleep",
                )
            }
            Entry::Answer { message } => (
                "answer".to_owned(),
                esc(&cut(&answer_text(message), 200)),
                "answer",
            ),
            Entry::Call { call } => (
                format!("call of <code>{}</code>", esc(&call.skill)),
                format!(
                    "at <code>{}</code>; remote task <code class=\"remote-task\">{}</code> (context <code>{}</code>)",
                    esc(&call.agent),
                    esc(&call.task),
                    esc(&call.context)
                ),
                "call",
            ),
            Entry::Returned { returned } => (
                "call returned".to_owned(),
                esc(&returned_text(returned)),
                "returned",
            ),
            Entry::Patched { name, value } => (
                format!("marker <code>{}</code>", esc(name)),
                format!("said {value}"),
                "marker",
            ),
            Entry::Started { started } => (
                format!("step <code>{}</code>", esc(started)),
                "begun".to_owned(),
                "started",
            ),
        };
        rows.push((*n, what, detail, class));
    }
    for (n, name) in &started {
        if !entries.contains_key(n) {
            rows.push((
                *n,
                format!("step <code>{}</code>", esc(name)),
                "begun, not finished: its body may have run, and runs again on the task's next run"
                    .to_owned(),
                "unfinished",
            ));
        }
    }
    rows.sort_by_key(|(n, ..)| *n);
    for (n, entry) in entries.range(MARKS..STARTS) {
        if let Entry::Patched { name, value } = entry {
            rows.push((
                *n,
                format!("marker <code>{}</code>", esc(name)),
                format!(
                    "said {value} (code after it runs {})",
                    if *value { "the new way" } else { "the old way" }
                ),
                "marker",
            ));
        }
    }
    out.push_str(
        "<section aria-labelledby=\"journal\"><h2 id=\"journal\">Journal</h2>\
         <p class=\"hint\">What the durable handler did, as its journal keeps it: a run after a stop replays these instead of doing them again.</p>\
         <table class=\"journal\"><thead><tr><th scope=\"col\">#</th><th scope=\"col\">Entry</th><th scope=\"col\">Detail</th></tr></thead><tbody>",
    );
    for (n, what, detail, class) in rows {
        let shown = if n >= MARKS {
            "marker".to_owned()
        } else {
            n.to_string()
        };
        let here = diverged == Some(n);
        let _ = write!(
            out,
            "<tr class=\"entry {class}{}\" data-entry=\"{n}\"><td>{shown}</td><td>{what}</td><td>{detail}{}</td></tr>",
            if here { " diverged" } else { "" },
            if here {
                " <strong class=\"flag\">⟵ the replay diverged here</strong>"
            } else {
                ""
            }
        );
    }
    out.push_str("</tbody></table></section>");
}

/// The text of an answer entry's message.
fn answer_text(message: &Message) -> String {
    let mut parts = Vec::new();
    for p in &message.parts {
        match &p.content {
            PartContent::Text(t) => parts.push(t.clone()),
            PartContent::Data(d) => parts.push(d.to_string()),
            _ => parts.push("(a file)".to_owned()),
        }
    }
    parts.join(" ")
}

/// What a call's answer says: the state of the task it made, its message, or why it failed.
fn returned_text(returned: &Value) -> String {
    if let Some(error) = returned.get("error") {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("no message");
        return format!("failed: {message}");
    }
    if let Some(task) = returned.get("task") {
        let state = task
            .pointer("/status/state")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .trim_start_matches("TASK_STATE_")
            .to_lowercase()
            .replace('_', "-");
        return format!("its task is {state}");
    }
    if returned.get("message").is_some() {
        return "a message".to_owned();
    }
    cut(&returned.to_string(), 200)
}

/// The replicas and the limits.
pub(super) async fn replicas_page(
    served: &Served,
    base: &str,
    operator: &Operator,
) -> Result<String, A2AError> {
    let store = served.lifecycle.store();
    let mut main = String::from("<h1>Replicas &amp; limits</h1>");
    main.push_str("<section aria-labelledby=\"replicas\"><h2 id=\"replicas\">Replicas</h2>");
    match store.replicas().await? {
        None => main.push_str(
            "<p id=\"no-replicas\">This store keeps no replicas: its tasks are in this process's memory, served by this process alone, and do not outlive it. With <code>Tasks::postgres</code> every replica serving the store is listed here with its lease and the running tasks it owns; with <code>Tasks::sqlite</code>, this process.</p>",
        ),
        Some(replicas) if replicas.is_empty() => main.push_str(
            "<p>The store lists no replica yet (the first lease renewal comes within a third of the lease).</p>",
        ),
        Some(replicas) => {
            if let Some(lease) = replicas.first().map(|r| r.lease) {
                let _ = write!(
                    main,
                    "<p>A replica owns its running tasks while it renews its lease ({:?}); once the lease runs out, another replica takes its durable tasks over and fails the others.</p>",
                    lease
                );
            }
            main.push_str("<table class=\"replicas\"><thead><tr><th scope=\"col\">Replica</th><th scope=\"col\">Lease</th><th scope=\"col\">Last renewed</th><th scope=\"col\">Running tasks</th></tr></thead><tbody>");
            for r in &replicas {
                let _ = write!(
                    main,
                    "<tr><td><code>{}</code>{}</td><td>{}</td><td>{} ago</td><td>{}</td></tr>",
                    esc(&r.id),
                    if r.this { " (this process)" } else { "" },
                    if r.is_live() {
                        "<span class=\"state state-completed\">live</span>"
                    } else {
                        "<span class=\"state state-failed\">ran out</span>"
                    },
                    esc(&span(i64::try_from(r.seen.as_millis()).unwrap_or(i64::MAX))),
                    r.running
                );
            }
            main.push_str("</tbody></table>");
        }
    }
    main.push_str("</section>");
    let log = store.events();
    let _ = write!(
        main,
        "<section aria-labelledby=\"store\"><h2 id=\"store\">Store</h2><dl class=\"facts\">\
         <dt>Event log</dt><dd>{}</dd><dt>Journals of durable skills</dt><dd>{}</dd>\
         <dt>Shared with other processes</dt><dd>{}</dd><dt>Reachable</dt><dd>{}</dd></dl></section>",
        if log.is_some() {
            "kept: streams resume, and a task's status history is shown"
        } else {
            "not kept (memory)"
        },
        if log.as_ref().is_some_and(|l| l.keeps_journals()) {
            "kept: durable tasks resume after a stop"
        } else {
            "not kept: durable skills run as any other"
        },
        if store.changes().is_some() {
            "yes"
        } else {
            "no"
        },
        if store.reachable() {
            "yes"
        } else {
            "no: its last lease renewal failed"
        },
    );
    main.push_str("<section aria-labelledby=\"limits\"><h2 id=\"limits\">Limits in force</h2>");
    let limits = served.limits.in_force();
    if limits.is_empty() {
        main.push_str("<p>No limits are set (see <code>Server::limits</code>).</p>");
    } else {
        main.push_str("<table class=\"limits\"><thead><tr><th scope=\"col\">Limit</th><th scope=\"col\">At most</th></tr></thead><tbody>");
        for (what, value) in &limits {
            let _ = write!(
                main,
                "<tr><td>{}</td><td>{}</td></tr>",
                esc(what),
                esc(value)
            );
        }
        main.push_str("</tbody></table>");
    }
    let _ = write!(
        main,
        "<p>The console flags a task waiting for an answer after {} and one working without a status change after {}.</p></section>",
        esc(&span(
            i64::try_from(served.console.long_waiting.as_millis()).unwrap_or(i64::MAX)
        )),
        esc(&span(
            i64::try_from(served.console.long_working.as_millis()).unwrap_or(i64::MAX)
        )),
    );
    Ok(layout(
        served,
        base,
        Some(operator),
        "replicas",
        "Replicas & limits",
        &main,
    ))
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
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_and_ids_encoded() {
        assert_eq!(
            esc("<script>\"x\" & 'y'</script>"),
            "&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;"
        );
        assert_eq!(encode("acme:3f.ab cd/?"), "acme:3f.ab%20cd%2F%3F");
        assert_eq!(
            caller_of("acme:3f1c.uuid", "acme:"),
            Some("3f1c".to_owned())
        );
        assert_eq!(caller_of("uuid-1", ""), None);
    }

    #[test]
    fn durations_read_as_an_operator_reads_them() {
        assert_eq!(duration(840), "840 ms");
        assert_eq!(duration(2_449), "2.4 s");
        assert_eq!(duration(185_000), "3 min 5 s");
        assert_eq!(duration(7_800_000), "2 h 10 min");
    }

    #[test]
    fn what_a_call_returned_is_told_in_words() {
        let done = serde_json::json!({"task": {"id": "t", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}});
        assert_eq!(returned_text(&done), "its task is input-required");
        let failed = serde_json::json!({"error": {"message": "refused"}});
        assert_eq!(returned_text(&failed), "failed: refused");
    }
}
