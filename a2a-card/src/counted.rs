//! The unit tests' global allocator: the system's, counting the bytes each thread holds, so
//! that a test can check an estimate of memory against what was really allocated.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting per thread.
struct Counting;

thread_local! {
    /// The bytes this thread allocated and has not freed (frees of another thread's
    /// allocations count here too).
    static NET: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    // A thread being torn down has no counter left: its allocations are not counted.
    let _ = NET.try_with(|net| net.set(net.get() + delta));
}

// SAFETY: every call is passed on to the system allocator unchanged; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: the caller's layout, as given.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        // SAFETY: a pointer this allocator gave, with its layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        // SAFETY: a pointer this allocator gave, with its layout.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// What `make` returns, with the bytes it left allocated on this thread (what the value
/// holds, when `make` frees all else).
pub(crate) fn held<T>(make: impl FnOnce() -> T) -> (T, usize) {
    let before = NET.with(Cell::get);
    let made = make();
    let after = NET.with(Cell::get);
    (made, usize::try_from(after - before).unwrap_or(0))
}

/// Asserts that `estimate` is within a third of `real` either way.
#[track_caller]
pub(crate) fn assert_close(what: &str, estimate: usize, real: usize) {
    let ratio = estimate as f64 / real as f64;
    assert!(
        (0.75..=1.33).contains(&ratio),
        "{what}: estimated {estimate} bytes, {real} allocated ({ratio:.2}x)"
    );
}
