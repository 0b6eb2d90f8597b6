//! Heap allocations per blocking `SendMessage` of the fight example, counted by a counting
//! global allocator: the router called in the process (no socket, no client), on a
//! current-thread runtime, so that everything counted is the server's (the request's own
//! building included, the same for every version). JSON-RPC and HTTP+JSON, after a warm-up.
//! Then the heap a stream holds: a skill streaming numbered chunks over JSON-RPC (1 x 100,000
//! and 100 x 2,000 chunks, on the memory store and SQLite), the live bytes counted while it
//! runs, at the peak and after, per chunk and against the chunk's own JSON:
//!
//! ```text
//! cargo bench --bench allocations
//! ```
//!
//! Allocations are counted, not timed: the figures do not depend on the machine's load, and
//! two versions of the crate compare by running this file against each.

use examples::fight_club::agent as fight_club;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use a2a_card::server::Server;
use a2a_card::server::store::Tasks;
use a2a_card::skill;
use axum::body::Body;
use axum::http::Request;
use tower::ServiceExt;

/// The system allocator, counting.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
/// The bytes allocated and not yet freed.
static LIVE: AtomicI64 = AtomicI64::new(0);
/// The most `LIVE` has been since it was last reset.
static PEAK: AtomicI64 = AtomicI64::new(0);
/// The most `LIVE` was when a stream made its last chunk (its chunks held, before the
/// update that closes its artifact).
static RUNNING: AtomicI64 = AtomicI64::new(0);

/// Adds `delta` to the live bytes, raising the peak.
fn live(delta: i64) {
    let now = LIVE.fetch_add(delta, Ordering::Relaxed) + delta;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is passed on to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        live(layout.size() as i64);
        // SAFETY: the caller's layout, as given.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        live(-(layout.size() as i64));
        // SAFETY: a pointer this allocator gave, with its layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        live(new_size as i64 - layout.size() as i64);
        // SAFETY: a pointer this allocator gave, with its layout.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

const MESSAGE: &str = r#"{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"a":"Lion","b":"Tiger"},"mediaType":"application/json;schema=fightComparison"}]}"#;

/// The request of `binding`.
fn request(binding: &str) -> Request<Body> {
    let (path, body) = match binding {
        "JSON-RPC" => (
            "/",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{MESSAGE}}}}}"#
            ),
        ),
        _ => ("/message:send", format!(r#"{{"message":{MESSAGE}}}"#)),
    };
    Request::post(path)
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .header("content-length", body.len())
        .body(Body::from(body))
        .expect("a request")
}

/// Sends `n` requests of `binding` to `app`, each answered and read whole.
async fn send(app: &axum::Router, binding: &str, n: usize) {
    for _ in 0..n {
        let answer = app
            .clone()
            .oneshot(request(binding))
            .await
            .expect("an answer");
        assert_eq!(answer.status(), 200, "{binding}");
        let body = axum::body::to_bytes(answer.into_body(), usize::MAX)
            .await
            .expect("the body");
        assert!(body.windows(6).any(|w| w == b"Tiger\""), "{binding}");
    }
}

fn main() {
    let quick =
        std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench");
    let (warm, counted) = if quick { (10, 100) } else { (2_000, 20_000) };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let app = Server::new(fight_club::FightClub)
            .router()
            .await
            .expect("the router");
        println!(
            "heap allocations per blocking SendMessage of the fight example ({counted} requests):"
        );
        for binding in ["JSON-RPC", "HTTP+JSON"] {
            send(&app, binding, warm).await;
            let (allocations, bytes) = (
                ALLOCATIONS.load(Ordering::Relaxed),
                BYTES.load(Ordering::Relaxed),
            );
            send(&app, binding, counted).await;
            let n = counted as f64;
            let per = (ALLOCATIONS.load(Ordering::Relaxed) - allocations) as f64 / n;
            let bytes = (BYTES.load(Ordering::Relaxed) - bytes) as f64 / n;
            println!("  {binding:<10} {per:>8.1} allocations, {bytes:>9.0} bytes allocated");
        }
    });
    let loads: &[(usize, usize)] = if quick {
        &[(1, 1_000), (10, 200)]
    } else {
        &[(1, 100_000), (100, 2_000)]
    };
    println!("heap held by streams of the chunks skill over JSON-RPC (live bytes, counted):");
    for store in ["memory", "sqlite"] {
        runtime.block_on(async {
            let tasks = match store {
                "memory" => Tasks::memory(),
                _ => {
                    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
                    let file = dir.join(format!("allocations-{}.db", std::process::id()));
                    let _ = std::fs::remove_file(&file);
                    Tasks::sqlite(file)
                }
            };
            let app = Server::new(Streamer)
                .tasks(tasks)
                .router()
                .await
                .expect("the router");
            stream(&app, 10).await;
            for &(streams, chunks) in loads {
                let before = LIVE.load(Ordering::Relaxed);
                PEAK.store(before, Ordering::Relaxed);
                RUNNING.store(before, Ordering::Relaxed);
                let sent: usize =
                    futures::future::join_all((0..streams).map(|_| stream(&app, chunks)))
                        .await
                        .into_iter()
                        .sum();
                let (peak, after) = (PEAK.load(Ordering::Relaxed), LIVE.load(Ordering::Relaxed));
                let n = (streams * chunks) as f64;
                let wire = sent as f64 / n;
                let running = RUNNING.load(Ordering::Relaxed);
                let held = (running - before) as f64 / n;
                let peak = (peak - before) as f64 / n;
                let kept = (after - before) as f64 / n;
                println!(
                    "  {store:<6} {streams:>3} x {chunks:>6} chunks: {wire:>3.0} B on the wire; \
                     held while running {held:>4.0} B ({:.2}x), at the peak {peak:>4.0} B, \
                     kept after {kept:>3.0} B ({:.1} MiB)",
                    held / wire,
                    (after - before) as f64 / f64::from(1 << 20),
                );
            }
        });
    }
}

/// Streams numbered chunks.
struct Streamer;

/// Streams numbered chunks.
#[a2a_card::agent(url = "http://127.0.0.1:1")]
impl Streamer {
    /// Streams `n` chunks of text, `n` given as the message's text.
    #[skill]
    fn chunks(&self, n: String) -> impl futures::Stream<Item = String> + Send {
        let n: usize = n.trim().parse().unwrap_or(0);
        futures::stream::iter((0..n).map(move |i| {
            if i + 1 == n {
                RUNNING.fetch_max(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
            }
            format!("chunk {i}")
        }))
    }
}

/// Streams one task of `n` chunks through `app`, reading each frame as it comes; the bytes
/// read, checked to end with the completed task.
async fn stream(app: &axum::Router, n: usize) -> usize {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{{"message":{{"messageId":"m-{n}","role":"ROLE_USER","parts":[{{"text":"{n}"}}]}}}}}}"#
    );
    let request = Request::post("/")
        .header("content-type", "application/json")
        .header("a2a-version", "1.0")
        .header("content-length", body.len())
        .body(Body::from(body))
        .expect("a request");
    let answer = app.clone().oneshot(request).await.expect("an answer");
    assert_eq!(answer.status(), 200);
    let mut frames = answer.into_body().into_data_stream();
    let (mut bytes, mut last) = (0, axum::body::Bytes::new());
    while let Some(frame) = futures::StreamExt::next(&mut frames).await {
        let frame = frame.expect("a frame");
        bytes += frame.len();
        last = frame;
    }
    let last = String::from_utf8_lossy(&last);
    assert!(last.contains("TASK_STATE_COMPLETED"), "{last}");
    bytes
}
