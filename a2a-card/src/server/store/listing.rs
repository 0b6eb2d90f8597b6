//! `ListTasks` as every store answers it: which tasks a request's filters pass, the page it
//! asks for (newest status first, from an opaque cursor), and each task shaped as it wants it.

use a2a::Task;

/// Whether `task` passes the filters of a `ListTasks` request (the tasks of the caller's
/// reach only: see [`Store`] on the request's `tenant`).
pub(crate) fn matches(req: &a2a::ListTasksRequest, task: &Task) -> bool {
    super::reaches(req.tenant.as_deref().unwrap_or(""), &task.id)
        && req
            .context_id
            .as_ref()
            .is_none_or(|c| *c == task.context_id)
        && req.status.as_ref().is_none_or(|s| *s == task.status.state)
        && req
            .status_timestamp_after
            .is_none_or(|after| task.status.timestamp.is_some_and(|t| t > after))
}

/// The page of `tasks` a `ListTasks` request asks for: newest status first (then id,
/// descending), from the request's cursor, history cut to `historyLength`, artifacts left out
/// unless `includeArtifacts`.
pub(crate) fn page(
    mut tasks: Vec<Task>,
    req: &a2a::ListTasksRequest,
) -> Result<a2a::ListTasksResponse, a2a::A2AError> {
    let cursor = Cursor::parse(req.page_token.as_deref())?;
    let total = tasks.len();
    let mut keyed: Vec<(String, Task)> = tasks.drain(..).map(|t| (status_at(&t), t)).collect();
    keyed.sort_by(|(a, x), (b, y)| b.cmp(a).then_with(|| y.id.cmp(&x.id)));
    let size = a2a_server::pagination::resolve_page_size(req.page_size);
    let mut rest = keyed
        .into_iter()
        .filter(|(at, t)| cursor.as_ref().is_none_or(|c| c.precedes(at, &t.id)));
    let page: Vec<(String, Task)> = rest.by_ref().take(size).collect();
    let more = rest.next().is_some();
    Ok(a2a::ListTasksResponse {
        next_page_token: match page.last() {
            Some((at, t)) if more => Cursor::token(at, &t.id),
            _ => String::new(),
        },
        tasks: page.into_iter().map(|(_, t)| shape(t, req)).collect(),
        page_size: size as i32,
        total_size: total as i32,
    })
}

/// When a task's status last changed, as the stores keep and compare it (RFC 3339; empty when
/// the task has no timestamp).
pub(crate) fn status_at(task: &Task) -> String {
    task.status
        .timestamp
        .map(|t| t.to_rfc3339())
        .unwrap_or_default()
}

/// Where the next page of a `ListTasks` starts: after the task last listed, in the list's
/// order (newest status first, then id). A cursor, not an offset: tasks created meanwhile do
/// not shift the pages that follow.
pub(crate) struct Cursor {
    pub(crate) at: String,
    pub(crate) id: String,
}

impl Cursor {
    /// The opaque token of the cursor after the task with status time `at` and id `id`.
    pub(crate) fn token(at: &str, id: &str) -> String {
        use base64::Engine as _;
        let json = serde_json::json!([at, id]).to_string();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }

    /// The cursor a page token stands for (`None` for the first page).
    pub(crate) fn parse(token: Option<&str>) -> Result<Option<Cursor>, a2a::A2AError> {
        use base64::Engine as _;
        let token = match token {
            None | Some("") => return Ok(None),
            Some(token) => token,
        };
        let invalid = || {
            a2a::A2AError::invalid_params(
                "`pageToken` is not a token this agent gave: pass the `nextPageToken` of the page before",
            )
        };
        let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(token)
            .map_err(|_| invalid())?;
        let (at, id): (String, String) = serde_json::from_slice(&json).map_err(|_| invalid())?;
        Ok(Some(Cursor { at, id }))
    }

    /// Whether the task with status time `at` and id `id` comes after the cursor.
    fn precedes(&self, at: &str, id: &str) -> bool {
        at < self.at.as_str() || (at == self.at && id < self.id.as_str())
    }
}

/// A listed task as the request wants it.
pub(crate) fn shape(mut task: Task, req: &a2a::ListTasksRequest) -> Task {
    if let (Some(n), Some(history)) = (req.history_length, task.history.as_mut()) {
        let keep = usize::try_from(n.max(0)).unwrap_or(0);
        if history.len() > keep {
            history.drain(..history.len() - keep);
        }
    }
    if req.include_artifacts == Some(false) {
        task.artifacts = None;
    }
    task
}
