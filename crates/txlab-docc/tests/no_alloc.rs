//! Allocations on the commit path of warmed-up workers, counted by a global allocator (this test
//! binary only, every thread): the basic layout allocates nothing per transaction; the chain
//! layout allocates one version per written key, plus crossbeam-epoch's garbage queue nodes (one
//! per 64 versions handed to the collector).
//!
//! Each measurement runs a log twice as long as the previous one with the same shape, so what
//! `execute_log` allocates per call (threads, the schedule, the result vector) cancels out.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use txlab_core::deterministic::Deterministic;
use txlab_docc::{Chain, Docc, DoccConfig, InPlace, Layout as DoccLayout};
use txlab_testkit::deterministic::workload_log;
use txlab_workload::{Workload, Ycsb, YcsbConfig, YcsbPreset};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn ycsb() -> Ycsb {
    let mut cfg = YcsbConfig::preset(YcsbPreset::A);
    cfg.records = 10_000;
    cfg.ops_per_txn = 10;
    cfg.payload_bytes = 100;
    cfg.theta = 0.0;
    Ycsb::new(cfg).unwrap()
}

/// Allocations of one `execute_log` of `n` programs, and the versions it allocated.
fn measure<L: DoccLayout>(db: &Docc<L>, w: &Ycsb, seed: u64, n: usize) -> (u64, u64) {
    let log = workload_log(w, seed, n);
    let versions = db.gc().versions_allocated;
    let before = ALLOCS.load(Ordering::Relaxed);
    let r = db.execute_log(&log, 1).unwrap();
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    assert!(r.iter().all(|x| x.is_ok()));
    (allocs, db.gc().versions_allocated - versions)
}

/// The counter is global: tests measure one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Extra allocations of a log of 4,000 over one of 2,000, and the extra versions.
fn per_txn<L: DoccLayout>(prefetch: bool) -> (i64, i64) {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let w = ycsb();
    let db = Docc::<L>::builder()
        .config(DoccConfig {
            prefetch,
            ..DoccConfig::default()
        })
        .build(&w.schema())
        .unwrap();
    w.load(&db).unwrap();
    measure(&db, &w, 1, 3_000); // warm up: buffers reach their sizes
    let (a1, v1) = measure(&db, &w, 2, 2_000);
    let (a2, v2) = measure(&db, &w, 3, 4_000);
    (a2 as i64 - a1 as i64, v2 as i64 - v1 as i64)
}

#[test]
fn basic_commits_allocate_nothing_per_transaction() {
    let (allocs, versions) = per_txn::<InPlace>(false);
    assert_eq!(versions, 0);
    // 2,000 more transactions of 10 operations: a handful of vector doublings at most.
    assert!(
        allocs <= 16,
        "{allocs} allocations for 2,000 more transactions"
    );
}

#[test]
fn chain_commits_allocate_one_version_per_written_key() {
    for prefetch in [false, true] {
        chain_allocations(prefetch);
    }
}

fn chain_allocations(prefetch: bool) {
    let (allocs, versions) = per_txn::<Chain>(prefetch);
    // Half the operations write: about 5 written keys per transaction.
    assert!(versions > 8_000, "{versions}");
    let extra = allocs - versions;
    // The collector's queue takes one node per 64 deferred versions.
    assert!(
        (0..=versions / 50 + 16).contains(&extra),
        "{allocs} allocations for {versions} versions"
    );
    eprintln!("{allocs} allocations for {versions} more versions ({extra} besides them)");
}
