//! Measured memory: a counting global allocator around a steady-state run at the defaults
//! (budget 512, recentWindow 16, obsWindow 16, poolKernel 7, an evict after every step).
//!
//! `cargo test --release --test memory -- --nocapture` prints the figures quoted in README.md.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use snapkv::{Params, SnapKV};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // Only the measuring thread counts: libtest's own threads allocate and free at times of
    // their own, and counting them made the figure differ by a few hundred bytes at random.
    static MEASURING: Cell<bool> = const { Cell::new(false) };
}

fn measuring() -> bool {
    MEASURING.try_with(Cell::get).unwrap_or(false)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if measuring() {
            let live = LIVE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(live, Ordering::SeqCst);
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if measuring() {
            LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
        }
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn memory_per_kept_slot_at_the_defaults() {
    let params = Params::DEFAULT;
    // Weights prepared before measuring, so only the policy's own allocations count.
    let weights: Vec<f32> = (0..=params.budget)
        .map(|i| (i % 97) as f32 / 97.0)
        .collect();
    MEASURING.with(|m| m.set(true));
    let before = LIVE.load(Ordering::SeqCst);
    let mut policy = SnapKV::new(params);
    PEAK.store(before, Ordering::SeqCst);
    for pos in 0..4 * params.budget {
        let kept = policy.kept().len();
        policy.step(i64::from(pos), Some(&weights[..kept])).unwrap();
        drop(policy.evict());
    }
    let held = LIVE.load(Ordering::SeqCst) - before;
    let peak = PEAK.load(Ordering::SeqCst) - before;
    let kept = policy.kept().len();
    MEASURING.with(|m| m.set(false));
    assert_eq!(kept, params.budget as usize);
    assert_eq!(
        held,
        policy.heap_bytes(),
        "heap_bytes() must account for every allocation"
    );
    let per_slot = held as f64 / kept as f64;
    println!(
        "defaults {params:?}: {held} bytes held for {kept} kept ({per_slot:.1} bytes per kept \
         slot; peak {peak} bytes)"
    );
    // 4 (position) + 16 * 4 (ring) + 2 * 8 (scratch) = 84 bytes a row, at budget + 1 rows,
    // plus 16 column headers: nothing else may grow with the run.
    assert!(per_slot < 85.0, "{per_slot} bytes per kept slot");
}
