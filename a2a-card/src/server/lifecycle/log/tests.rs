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
fn finished_task(live: &Live, id: &str, text: &str) -> Arc<Tracked> {
    finished(live, id, text, true)
}

/// A tracked task that produced `text` in one chunk and completed, read by a stream or
/// not (`streamed`).
fn finished(live: &Live, id: &str, text: &str, streamed: bool) -> Arc<Tracked> {
    let tracked = live.track(task(id));
    if streamed {
        tracked.resumable();
    }
    tracked.record(chunk(id, text, false), |_, _| {});
    let done = fixtures::status(id, TaskState::Completed);
    let (seq, _, _) = tracked.record(done, |_, _| {}).expect("recorded");
    tracked.publish(seq);
    live.finished(&tracked);
    tracked
}

#[test]
fn where_the_store_keeps_the_log_nothing_of_a_finished_task_stays() {
    let live = Live::new(FinishedLogs::none());
    let running = live.track(task("running"));
    finished_task(&live, "done", "hello");
    assert!(live.get("done").is_none(), "a finished task is not kept");
    assert!(live.get("running").is_some(), "a running one is");
    assert_eq!(live.counts(), (1, 0));
    drop(running);
}

#[test]
fn finished_logs_are_evicted_oldest_first_past_the_count() {
    let live = Live::new(FinishedLogs::default().max_entries(3));
    for i in 0..10 {
        finished_task(&live, &format!("t{i}"), "hello");
    }
    assert_eq!(live.counts(), (3, 3), "three kept");
    for i in 0..7 {
        assert!(live.get(&format!("t{i}")).is_none(), "t{i} was evicted");
    }
    for i in 7..10 {
        assert!(live.get(&format!("t{i}")).is_some(), "t{i} is kept");
    }
}

#[test]
fn finished_logs_are_evicted_oldest_first_past_the_bytes() {
    let big = "x".repeat(10_000);
    // Room for two tasks of about 20 kB each (the text is in the task and in its log).
    let live = Live::new(FinishedLogs::default().max_bytes(50_000));
    for i in 0..5 {
        finished_task(&live, &format!("t{i}"), &big);
    }
    assert_eq!(live.counts(), (2, 2));
    assert!(live.get("t3").is_some() && live.get("t4").is_some());
    // Small ones (under 4 kB each) fit many more in the same bytes, once the large ones
    // made room.
    for i in 0..12 {
        finished_task(&live, &format!("s{i}"), "hi");
    }
    assert!(live.get("s0").is_some_and(|s| s.weight() < 4_000));
    assert_eq!(live.counts(), (12, 12), "the twelve small logs");
    assert!(live.get("t4").is_none(), "the large ones went first");
}

#[test]
fn a_reader_holding_an_evicted_task_reads_its_whole_log() {
    let live = Live::new(FinishedLogs::none());
    let tracked = finished_task(&live, "t", "hello");
    assert!(live.get("t").is_none(), "not kept");
    let events: Vec<_> = futures::executor::block_on_stream(tracked.events(0, Until::Terminal))
        .map(|e| e.expect("an event").0)
        .collect();
    assert_eq!(events, [1, 2]);
}

#[test]
fn a_streamed_tasks_weight_is_close_to_what_it_holds() {
    let live = Live::new(FinishedLogs::default());
    let (tracked, real) = crate::counted::held(|| {
        let tracked = live.track(task("t"));
        for i in 0..10_000 {
            tracked.record(chunk("t", &format!("token {i}"), i > 0), |_, _| {});
        }
        tracked
    });
    crate::counted::assert_close("a task of 10,000 chunks", tracked.weight(), real);
}

#[test]
fn a_finished_log_no_stream_read_is_not_kept() {
    let live = Live::new(FinishedLogs::default());
    finished(&live, "blocking", "hello", false);
    finished(&live, "streamed", "hello", true);
    assert!(live.get("blocking").is_none(), "nothing can resume it");
    assert!(
        live.get("streamed").is_some(),
        "a reader may come back to it"
    );
    assert_eq!(live.counts(), (1, 1));
}

#[test]
fn a_task_noted_twice_is_kept_once() {
    let live = Live::new(FinishedLogs::default());
    let tracked = finished_task(&live, "t", "hello");
    live.finished(&tracked);
    live.finished(&tracked);
    assert_eq!(live.counts(), (1, 1));
}

#[test]
fn a_log_weighs_about_its_data() {
    let live = Live::new(FinishedLogs::none());
    let small = finished_task(&live, "small", "x").weight();
    let large = finished_task(&live, "large", &"x".repeat(100_000)).weight();
    // The text is held twice: in the task's artifact and in the chunk of the log.
    assert!(
        (199_000..210_000).contains(&(large - small)),
        "{small} {large}"
    );
}
