//! A global allocator that counts allocations and live heap bytes, for the tests that measure
//! what the hot path allocates and what the cache holds. A test binary installs it with
//! `#[global_allocator] static GLOBAL: Counting = Counting;` and keeps to one test, so that
//! nothing else allocates while it counts. Allocations are also counted per thread
//! ([`thread_allocations`]), so that a count of one thread's work is not disturbed by another
//! thread of the process (the test harness's, a runtime's).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};

/// Counts every allocation and the bytes alive, then hands over to the system allocator.
pub struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    // Const-initialised and without a destructor: reading it never allocates, so the allocator
    // may use it. `try_with` is a no-op once the thread's storage is gone.
    static THREAD_ALLOCATIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn count_one() {
    ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
    let _ = THREAD_ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
}

// SAFETY: every call is passed on unchanged to `System`; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        LIVE.fetch_add(layout.size() as isize, Ordering::SeqCst);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::SeqCst);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::SeqCst);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations made so far (reallocations count).
pub fn allocations() -> usize {
    ALLOCATIONS.load(Ordering::SeqCst)
}

/// Allocations this thread made so far (reallocations count).
pub fn thread_allocations() -> usize {
    THREAD_ALLOCATIONS.with(std::cell::Cell::get)
}

/// Heap bytes alive now.
pub fn live_bytes() -> isize {
    LIVE.load(Ordering::SeqCst)
}

/// Allocations `f` made.
pub fn allocations_in(f: impl FnOnce()) -> usize {
    let before = allocations();
    f();
    allocations() - before
}
