//! The list of tasks: the store's own listing, page by page through its cursor, narrowed by
//! skill, caller and search here ([`Filter`]), with the counts by state and the tasks that
//! stand out flagged.

use std::fmt::Write as _;

use a2a::{A2AError, ListTasksRequest, Task, TaskState};
use chrono::{DateTime, Utc};

use super::{STATES, cut, encode, esc, flag, layout, named_state, state_name, text_of, when};
use crate::server::console::Served;
use crate::server::console::access::Operator;

/// How many pages of the store's listing one page of a narrowed list reads at most.
const SCAN: usize = 8;

/// The filters and search of the list, as its query string says.
#[derive(Debug, Default, Clone)]
pub(in crate::server::console) struct Filter {
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
    pub(in crate::server::console) fn from_query(
        query: &[(String, String)],
        tenant: Option<&str>,
    ) -> Filter {
        let get = |name: &str| {
            query
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.trim().to_owned())
        };
        let some = |v: Option<String>| v.filter(|v| !v.is_empty());
        Filter {
            state: get("state").and_then(|s| named_state(&s)),
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
pub(super) fn caller_of(id: &str, reach: &str) -> Option<String> {
    let rest = id.strip_prefix(reach)?;
    rest.split_once('.').map(|(mark, _)| mark.to_owned())
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

/// The list of tasks.
pub(in crate::server::console) async fn list_page(
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
    for state in STATES {
        let listed = lifecycle
            .list_tasks_admitted(request(&reach, Some(state.clone()), 1, None))
            .await?;
        counts.push((state, listed.total_size));
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
    for (state, n) in &counts {
        let name = state_name(state);
        let mut by_state = filter.clone();
        by_state.state = Some(state.clone());
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
    for state in &STATES {
        let name = state_name(state);
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
