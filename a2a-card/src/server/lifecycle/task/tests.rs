//! Tests of the event logs: which finished logs are kept, which go first, and what they weigh.

use super::*;
use a2a::TaskArtifactUpdateEvent;

use crate::server::fixtures;

fn task(id: &str) -> Task {
    fixtures::task(id, TaskState::Working)
}

/// A chunk of `text` for artifact `a` of task `id`, appended to it or starting it.
fn chunk(id: &str, text: &str, append: bool) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: id.to_owned(),
        context_id: "c".to_owned(),
        artifact: fixtures::text_artifact(text),
        append: append.then_some(true),
        last_chunk: None,
        metadata: None,
    })
}

/// A tracked task that streamed `text` in one chunk to a reader and completed.
fn finished_task(registry: &Registry, id: &str, text: &str) -> Arc<Tracked> {
    finished(registry, id, text, true)
}

/// A tracked task that produced `text` in one chunk and completed, read by a stream or
/// not (`streamed`).
fn finished(registry: &Registry, id: &str, text: &str, streamed: bool) -> Arc<Tracked> {
    let tracked = registry.track(task(id));
    if streamed {
        tracked.resumable();
    }
    tracked.record(chunk(id, text, false), |_, _| {});
    let done = fixtures::status(id, TaskState::Completed);
    let (seq, _, _) = tracked.record(done, |_, _| {}).expect("recorded");
    tracked.publish(seq);
    registry.finished(&tracked);
    tracked
}

#[test]
fn where_the_store_keeps_the_log_nothing_of_a_finished_task_stays() {
    let registry = Registry::new(FinishedLogs::none());
    let running = registry.track(task("running"));
    finished_task(&registry, "done", "hello");
    assert!(
        registry.get("done").is_none(),
        "a finished task is not kept"
    );
    assert!(registry.get("running").is_some(), "a running one is");
    assert_eq!(registry.counts(), (1, 0));
    drop(running);
}

#[test]
fn finished_logs_are_evicted_oldest_first_past_the_count() {
    let registry = Registry::new(FinishedLogs::default().max_entries(3));
    for i in 0..10 {
        finished_task(&registry, &format!("t{i}"), "hello");
    }
    assert_eq!(registry.counts(), (3, 3), "three kept");
    for i in 0..7 {
        assert!(registry.get(&format!("t{i}")).is_none(), "t{i} was evicted");
    }
    for i in 7..10 {
        assert!(registry.get(&format!("t{i}")).is_some(), "t{i} is kept");
    }
}

#[test]
fn finished_logs_are_evicted_oldest_first_past_the_bytes() {
    let big = "x".repeat(10_000);
    // Room for two tasks of about 20 kB each (the text is in the task and in its log).
    let registry = Registry::new(FinishedLogs::default().max_bytes(50_000));
    for i in 0..5 {
        finished_task(&registry, &format!("t{i}"), &big);
    }
    assert_eq!(registry.counts(), (2, 2));
    assert!(registry.get("t3").is_some() && registry.get("t4").is_some());
    // Small ones (under 4 kB each) fit many more in the same bytes, once the large ones
    // made room.
    for i in 0..12 {
        finished_task(&registry, &format!("s{i}"), "hi");
    }
    assert!(registry.get("s0").is_some_and(|s| s.weight() < 4_000));
    assert_eq!(registry.counts(), (12, 12), "the twelve small logs");
    assert!(registry.get("t4").is_none(), "the large ones went first");
}

#[test]
fn a_reader_holding_an_evicted_task_reads_its_whole_log() {
    let registry = Registry::new(FinishedLogs::none());
    let tracked = finished_task(&registry, "t", "hello");
    assert!(registry.get("t").is_none(), "not kept");
    let events: Vec<_> = futures::executor::block_on_stream(tracked.events(0, Until::Terminal))
        .map(|e| e.expect("an event").0)
        .collect();
    assert_eq!(events, [1, 2]);
}

#[test]
fn a_streamed_tasks_weight_is_close_to_what_it_holds() {
    let registry = Registry::new(FinishedLogs::default());
    let (tracked, real) = crate::counted::held(|| {
        let tracked = registry.track(task("t"));
        for i in 0..10_000 {
            tracked.record(chunk("t", &format!("token {i}"), i > 0), |_, _| {});
        }
        tracked
    });
    crate::counted::assert_close("a task of 10,000 chunks", tracked.weight(), real);
}

#[test]
fn a_finished_log_no_stream_read_is_not_kept() {
    let registry = Registry::new(FinishedLogs::default());
    finished(&registry, "blocking", "hello", false);
    finished(&registry, "streamed", "hello", true);
    assert!(registry.get("blocking").is_none(), "nothing can resume it");
    assert!(
        registry.get("streamed").is_some(),
        "a reader may come back to it"
    );
    assert_eq!(registry.counts(), (1, 1));
}

#[test]
fn a_task_noted_twice_is_kept_once() {
    let registry = Registry::new(FinishedLogs::default());
    let tracked = finished_task(&registry, "t", "hello");
    registry.finished(&tracked);
    registry.finished(&tracked);
    assert_eq!(registry.counts(), (1, 1));
}

#[test]
fn a_log_weighs_about_its_data() {
    let registry = Registry::new(FinishedLogs::none());
    let small = finished_task(&registry, "small", "x").weight();
    let large = finished_task(&registry, "large", &"x".repeat(100_000)).weight();
    // The text is held twice: in the task's artifact and in the chunk of the log.
    assert!(
        (199_000..210_000).contains(&(large - small)),
        "{small} {large}"
    );
}
