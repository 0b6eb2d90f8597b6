//! Tests of the writer's rounds: which writes go in a round and which wait for the next, how
//! long a queued write lingers, and when a flush is answered.

use super::*;

fn task(id: &str) -> Task {
    crate::server::fixtures::task(id, TaskState::Working)
}

fn update(id: &str, awaited: bool) -> (Queued, Option<oneshot::Receiver<Result<i64, A2AError>>>) {
    let (done, answer) = oneshot::channel();
    let sent = Queued::Write(Op::Update {
        task: Box::new(task(id)),
        expected: None,
        seq: None,
        done: awaited.then_some(done),
    });
    (sent, awaited.then_some(answer))
}

fn event(id: &str, seq: i64) -> Queued {
    Queued::Write(Op::Event {
        task_id: id.to_owned(),
        seq,
        body: Arc::new(crate::server::store::Event::new(
            a2a::StreamResponse::Message(a2a::Message::new(a2a::Role::Agent, Vec::new())),
        )),
    })
}

fn tasks(round: &Taken) -> Vec<&str> {
    round.ops.iter().map(Op::task).collect()
}

#[test]
fn a_task_in_a_round_in_the_database_waits_with_its_later_writes_for_the_next_round() {
    let mut queue = Queue::default();
    queue.push([update("a", false).0, event("a", 1)].into_iter());
    let first = queue.take(Instant::now()).expect("a round");
    assert_eq!(tasks(&first), ["a", "a"]);
    queue.push([event("a", 2), update("b", true).0, update("a", true).0].into_iter());
    let second = queue
        .take(Instant::now())
        .expect("a round beside the first");
    assert_eq!(tasks(&second), ["b"], "only the task not in the database");
    assert!(
        queue.take(Instant::now()).is_none(),
        "a's writes wait for its round"
    );
    queue.written(first.tasks, first.first);
    let third = queue
        .take(Instant::now())
        .expect("a's writes, once its round is written");
    assert_eq!(tasks(&third), ["a", "a"]);
    match &third.ops[0] {
        Op::Event { seq, .. } => assert_eq!(*seq, 2, "in the order they came"),
        _ => panic!("the event came first"),
    }
}

#[test]
fn a_flush_is_answered_once_every_write_before_it_is_written() {
    let mut queue = Queue::default();
    queue.push([update("a", false).0].into_iter());
    let first = queue.take(Instant::now()).expect("a round");
    let (done, mut answer) = oneshot::channel();
    queue.push([Queued::Flush(done), update("b", false).0].into_iter());
    let second = queue.take(Instant::now()).expect("b's round");
    queue.answer_flushes();
    assert!(answer.try_recv().is_err(), "a is not written yet");
    // A write after the flush, still in the database, does not hold it back.
    queue.written(first.tasks, first.first);
    queue.answer_flushes();
    assert!(answer.try_recv().is_ok(), "answered once a is written");
    queue.written(second.tasks, second.first);
}

#[test]
fn a_queued_write_lingers_for_its_tasks_next_write_unless_someone_waits_for_it() {
    let mut queue = Queue {
        linger: Duration::from_secs(60),
        ..Queue::default()
    };
    let now = Instant::now();
    queue.push([update("a", false).0, event("a", 1), update("b", false).0].into_iter());
    assert!(queue.take(now).is_none(), "nothing is due yet");
    // A write of a that someone waits for takes a's earlier writes along, folded.
    let (sent, _answer) = update("a", true);
    queue.push([sent].into_iter());
    let round = queue.take(now).expect("a's round");
    assert_eq!(tasks(&round), ["a", "a", "a"], "b lingers on");
    queue.written(round.tasks, round.first);
    // A flush after b makes it due.
    let (done, _flushed) = oneshot::channel();
    queue.push([Queued::Flush(done), update("c", false).0].into_iter());
    let round = queue.take(now).expect("b's round");
    assert_eq!(tasks(&round), ["b"], "c came after the flush");
    queue.written(round.tasks, round.first);
    // And c is due once it has lingered.
    let later = queue.ripens().expect("c waits");
    assert!(queue.take(later - Duration::from_millis(1)).is_none());
    assert_eq!(tasks(&queue.take(later).expect("c's round")), ["c"]);
}

#[test]
fn only_a_write_someone_waits_for_or_a_flush_asks_for_a_round_beside_others() {
    let mut queue = Queue::default();
    queue.push([update("a", false).0].into_iter());
    assert!(!queue.awaited(), "a queued write waits for the next round");
    let (sent, _answer) = update("b", true);
    queue.push([sent].into_iter());
    assert!(queue.awaited());
    let round = queue.take(Instant::now()).expect("a round");
    assert_eq!(tasks(&round), ["a", "b"]);
    assert!(!queue.awaited(), "taken");
    let (done, _answer) = oneshot::channel();
    queue.push([Queued::Flush(done)].into_iter());
    assert!(queue.awaited(), "a flush waits");
}
