//! The page of the replicas and the limits: the processes on the store (which is live, the
//! lease, the running tasks each owns), what the store keeps, and the limits in force.

use std::fmt::Write as _;

use a2a::A2AError;

use super::{esc, layout, span};
use crate::server::console::Served;
use crate::server::console::access::Operator;

/// The replicas and the limits.
pub(in crate::server::console) async fn replicas_page(
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
