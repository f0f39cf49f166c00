//! A warmed-up worker commits without allocating: begin, reads, blind writes, read-modify-writes
//! and commit of YCSB-shaped transactions make no heap allocation on the worker's thread.
//!
//! [`Counting`] counts the allocations of the current thread. A test binary installs it as its
//! global allocator and runs [`warmed_up_commits_do_not_allocate`]:
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: txlab_testkit::no_alloc::Counting = txlab_testkit::no_alloc::Counting;
//!
//! #[test]
//! fn no_alloc() {
//!     txlab_testkit::no_alloc::warmed_up_commits_do_not_allocate(|s| Silo::builder().config(SiloConfig::manual()).build(s));
//! }
//! ```
//!
//! Engines should be built without a background epoch thread (`manual` configurations), so
//! nothing else runs meanwhile; only the worker's thread is counted either way.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use txlab_core::{Engine, Error, Schema, TableId, TableSpec, Transaction, TxOps, Worker};

/// A global allocator that forwards to [`System`] and counts each thread's allocations.
#[derive(Debug)]
pub struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
    /// Allocations of at least [`BAG_BYTES`].
    static LARGE: Cell<u64> = const { Cell::new(0) };
    /// The sizes of the last few allocations (for the failure message).
    static SIZES: [Cell<usize>; SIZES_KEPT] = const { [const { Cell::new(0) }; SIZES_KEPT] };
}

const SIZES_KEPT: usize = 8;

/// crossbeam-epoch's sealed garbage bag is about 2 KiB (64 deferred functions); nothing a
/// transaction of this test allocates comes near 1 KiB.
const BAG_BYTES: usize = 1024;

fn count(layout: &Layout) {
    if layout.size() >= BAG_BYTES {
        let _ = LARGE.try_with(|c| c.set(c.get() + 1));
    }
    let _ = ALLOCS.try_with(|c| {
        let n = c.get();
        let _ = SIZES.try_with(|s| s[n as usize % SIZES_KEPT].set(layout.size()));
        c.set(n + 1);
    });
}

/// The sizes of the current thread's last (up to 8) allocations.
fn last_sizes() -> Vec<usize> {
    let n = allocations() as usize;
    SIZES.with(|s| {
        (n.saturating_sub(SIZES_KEPT)..n)
            .map(|i| s[i % SIZES_KEPT].get())
            .collect()
    })
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(&layout);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(&Layout::from_size_align(new_size, layout.align()).unwrap_or(layout));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations made so far by the current thread (0 unless [`Counting`] is the global allocator).
pub fn allocations() -> u64 {
    ALLOCS.with(|c| c.get())
}

/// Allocations of at least 1 KiB made so far by the current thread.
fn large_allocations() -> u64 {
    LARGE.with(|c| c.get())
}

const KEYS: u64 = 10_000;
/// Transactions measured.
const MEASURED: u64 = 10_000;

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Collects the garbage deferred so far through crossbeam-epoch's global queue (each flush
/// advances the epoch if it can and frees a few bags), so that a measured worker does not pop it.
fn drain_global_garbage() {
    for _ in 0..4096 {
        crossbeam_epoch::pin().flush();
    }
}

/// `n` transactions of 10 operations each (reads, blind writes and read-modify-writes of
/// 100-byte values, by a xorshift over `KEYS` keys), each committed.
fn transactions(worker: &mut impl Worker, n: u64, table: TableId, x: &mut u64) {
    let value = [7u8; 100];
    for _ in 0..n {
        let mut tx = worker.begin();
        for op in 0..10 {
            *x ^= *x << 13;
            *x ^= *x >> 7;
            *x ^= *x << 17;
            let key = *x % KEYS;
            match op % 3 {
                0 => {
                    tx.read(table, key).expect("read");
                }
                1 => tx.write(table, key, &value).expect("write"),
                _ => {
                    tx.update(table, key, &mut |v| v[0] = v[0].wrapping_add(1))
                        .expect("update");
                }
            }
        }
        tx.commit().expect("one worker alone never conflicts");
    }
}

/// Builds an engine with `make` over one dense table of 10,000 100-byte records, warms one worker
/// up (every key written once, then 20,000 transactions), and asserts that the next 10,000 make no
/// allocation on its thread, except crossbeam-epoch's: a worker that hands its thread-local
/// garbage over (`txlab_occ::worker`, every `FLUSH_EVERY` begins) while it holds some seals it in
/// a new 2 KiB bag, and collecting others' bags defers their queue nodes into its own, so once
/// any garbage exists each hand-over may allocate one bag.
/// Fails too if [`Counting`] is not installed (a deliberate allocation must be counted).
pub fn warmed_up_commits_do_not_allocate<E: Engine>(
    make: impl FnOnce(&Schema) -> Result<E, Error>,
) {
    // One engine at a time per process: engines free their last garbage through crossbeam-epoch's
    // global queue, and a worker that pops another engine's garbage allocates a bag to defer the
    // queue nodes' destruction (crossbeam's cost, amortized over 64 bags, not the engine's).
    let _one_at_a_time = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut schema = Schema::new();
    let t = schema
        .add(TableSpec::dense("usertable", 100, KEYS))
        .expect("schema");
    let db = make(&schema).expect("engine");
    for k in 0..KEYS {
        db.load(t, k, &[0u8; 100]).expect("load");
    }
    drain_global_garbage();
    let mut worker = db.worker().expect("worker");
    // Warm-up: every key written once (a multi-version engine's lists reach their steady
    // length), then random transactions (buffers reach their working size).
    for first in (0..KEYS).step_by(10) {
        let mut tx = worker.begin();
        for key in first..(first + 10).min(KEYS) {
            tx.write(t, key, &[1u8; 100]).expect("write");
        }
        tx.commit().expect("one worker alone never conflicts");
    }
    let mut x = 88172645463325252u64;
    transactions(&mut worker, 20_000, t, &mut x);
    let (before, large_before) = (allocations(), large_allocations());
    transactions(&mut worker, MEASURED, t, &mut x);
    let large = large_allocations() - large_before;
    let small = allocations() - before - large;
    let sizes = last_sizes();
    let name = db.name();
    assert_eq!(
        small, 0,
        "{name}: {small} allocations in {MEASURED} warmed-up transactions (sizes of the last: {sizes:?})"
    );
    let flushes = MEASURED / u64::from(txlab_occ::worker::FLUSH_EVERY) + 1;
    assert!(
        large <= flushes,
        "{name}: {large} allocations of 1 KiB or more in {MEASURED} warmed-up transactions, more \
         than one per garbage hand-over ({flushes}; sizes of the last: {sizes:?})"
    );
    drop(worker);
    drop(db);
    drain_global_garbage();
    let probe = allocations();
    let v: Vec<u8> = Vec::with_capacity(64);
    assert!(
        allocations() > probe,
        "the counting allocator is not installed"
    );
    drop(v);
}
