//! Heap allocations per blocking `SendMessage` of the fight example, counted by a counting
//! global allocator: the router called in the process (no socket, no client), on a
//! current-thread runtime, so that everything counted is the server's (the request's own
//! building included, the same for every version). JSON-RPC and HTTP+JSON, after a warm-up:
//!
//! ```text
//! cargo bench --bench allocations
//! ```
//!
//! Allocations are counted, not timed: the figures do not depend on the machine's load, and
//! two versions of the crate compare by running this file against each.

#[path = "../examples/fight_club/agent.rs"]
#[allow(dead_code)]
mod fight_club;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use a2a_card::server::Server;
use axum::body::Body;
use axum::http::Request;
use tower::ServiceExt;

/// The system allocator, counting.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: the caller's layout, as given.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: a pointer this allocator gave, with its layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
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
}
