//! A warmed-up Silo worker does not allocate: begin, reads, writes, read-modify-writes and commit
//! of YCSB-shaped transactions run with zero heap allocations on the worker's thread.
//!
//! A counting global allocator (this test binary only) counts allocations made by the current
//! thread; the background epoch thread is disabled so nothing else allocates meanwhile.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use txlab_core::{Engine, Schema, TableId, TableSpec, Transaction, TxOps, Worker};
use txlab_silo::{Silo, SiloConfig};

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCS.with(|c| c.get())
}

fn transactions(worker: &mut impl Worker, n: u64, table: TableId) {
    let value = [7u8; 100];
    let mut x = 88172645463325252u64;
    for _ in 0..n {
        let mut tx = worker.begin();
        for op in 0..10 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = x % 10_000;
            match op % 3 {
                0 => {
                    tx.read(table, key).unwrap();
                }
                1 => tx.write(table, key, &value).unwrap(),
                _ => {
                    tx.update(table, key, &mut |v| v[0] = v[0].wrapping_add(1))
                        .unwrap();
                }
            }
        }
        tx.commit().unwrap();
    }
}

#[test]
fn a_warmed_up_worker_commits_without_allocating() {
    let mut schema = Schema::new();
    let t = schema
        .add(TableSpec::dense("usertable", 100, 10_000))
        .unwrap();
    let db = Silo::new(&schema, SiloConfig::manual()).unwrap();
    for k in 0..10_000 {
        db.load(t, k, &[0u8; 100]).unwrap();
    }
    let mut worker = db.worker().unwrap();
    transactions(&mut worker, 1_000, t); // warm-up: buffers reach their working size
    let before = allocations();
    transactions(&mut worker, 10_000, t);
    let during = allocations() - before;
    assert_eq!(
        during, 0,
        "{during} allocations in 10,000 warmed-up transactions"
    );
    // The counter does count: a deliberate allocation shows up.
    let probe = allocations();
    let v: Vec<u8> = Vec::with_capacity(64);
    assert!(allocations() > probe);
    drop(v);
}
