//! What the benchmarks share: a counting global allocator, [`unique`] names for the runs
//! and files a benchmark creates, and the [`Observing`] hook.
//!
//! A benchmark that measures memory installs [`CountingAllocator`] as its global allocator.
//! It counts only between [`CountingAllocator::start`] and [`CountingAllocator::stop`]; the
//! rest of the time it costs one relaxed atomic load per allocation, so timed code is not
//! slowed measurably.
// Each benchmark uses only part of this module.
#![allow(dead_code)]

use reins::agent::{
    AgentHook, DispatchAction, DispatchEvent, HookContext, OutcomeAction, OutcomeEvent,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};

/// Forwards to the system allocator and, while switched on, counts allocations, the net heap
/// bytes allocated since it was switched on, and their peak.
pub struct CountingAllocator;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static CURRENT: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

/// What the allocator counted between `start` and `stop`.
#[derive(Debug, Clone, Copy)]
pub struct Counts {
    /// Calls to `alloc`, `alloc_zeroed` and `realloc`.
    pub allocations: usize,
    /// Bytes allocated minus bytes freed.
    pub net_bytes: isize,
    /// The highest `net_bytes` reached.
    pub peak_bytes: isize,
}

impl CountingAllocator {
    fn record(delta: isize, allocation: bool) {
        if COUNTING.load(Ordering::Relaxed) {
            if allocation {
                ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            }
            let now = CURRENT.fetch_add(delta, Ordering::Relaxed) + delta;
            if delta > 0 {
                PEAK.fetch_max(now, Ordering::Relaxed);
            }
        }
    }

    /// Starts counting from zero.
    pub fn start() {
        ALLOCATIONS.store(0, Ordering::SeqCst);
        CURRENT.store(0, Ordering::SeqCst);
        PEAK.store(0, Ordering::SeqCst);
        COUNTING.store(true, Ordering::SeqCst);
    }

    /// Net bytes allocated since `start`, while counting.
    pub fn net_bytes() -> isize {
        CURRENT.load(Ordering::SeqCst)
    }

    /// Allocations since `start`, while counting.
    pub fn allocations() -> usize {
        ALLOCATIONS.load(Ordering::SeqCst)
    }

    /// Stops counting and returns the counts since `start`.
    pub fn stop() -> Counts {
        COUNTING.store(false, Ordering::SeqCst);
        Counts {
            allocations: ALLOCATIONS.load(Ordering::SeqCst),
            net_bytes: CURRENT.load(Ordering::SeqCst),
            peak_bytes: PEAK.load(Ordering::SeqCst),
        }
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; only counters change.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            Self::record(layout.size() as isize, true);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            Self::record(layout.size() as isize, true);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) };
        Self::record(-(layout.size() as isize), false);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            Self::record(new_size as isize - layout.size() as isize, true);
        }
        new
    }
}

/// Bytes as MiB.
pub fn mib(bytes: isize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// `name` made unique to this process and moment (its pid and the time in nanoseconds): a
/// run id or file name that no earlier benchmark run left behind in a store.
pub fn unique(name: &str) -> String {
    format!(
        "{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    )
}

/// A hook that implements `on_dispatch` and `on_outcome` (answering proceed) and observes
/// every kind observed by default, so every other event also reaches its `on_event`.
pub struct Observing;

impl AgentHook for Observing {
    async fn on_dispatch(&self, _ctx: &HookContext, event: DispatchEvent<'_>) -> DispatchAction {
        black_box(event.kind);
        DispatchAction::proceed()
    }

    async fn on_outcome(&self, _ctx: &HookContext, event: OutcomeEvent<'_>) -> OutcomeAction {
        black_box(event.kind);
        OutcomeAction::proceed()
    }
}
