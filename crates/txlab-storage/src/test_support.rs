//! Test-only record type that detects use-after-free and counts creations and drops.
//!
//! Each test uses its own `ID` so counters of tests running in parallel do not mix.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use txlab_core::protocol::storage::Record;

const SLOTS: usize = 32;
static CREATED: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static DROPPED: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];

const ALIVE: u64 = 0xA11C_E0FF_1CE5_600D;
const DEAD: u64 = 0xDEAD_DEAD_DEAD_DEAD;

/// Per-test ids of [`Counted`] (one per test that counts drops).
pub mod ids {
    pub const DENSE_BASIC: usize = 0;
    pub const HASH_RACE: usize = 1;
    pub const HASH_DROP: usize = 2;
    pub const HASH_UNLINK: usize = 3;
    pub const ORDERED_RACE: usize = 4;
    pub const ORDERED_UNLINK: usize = 5;
    pub const ORDERED_DROP: usize = 6;
    pub const TABLES: usize = 7;
    pub const HASH_MODEL: usize = 8;
    pub const ORDERED_MODEL: usize = 9;
    pub const ORDERED_SCAN: usize = 10;
    pub const MISC: usize = 11;
    pub const HASH_BYTES: usize = 12;
    pub const DENSE_BIG: usize = 13;
}

/// A record with a canary word (set while alive, poisoned on drop) and a value size.
#[derive(Debug)]
pub struct Counted<const ID: usize> {
    canary: AtomicU64,
    pub value_size: usize,
    /// A word tests may write to tell records apart.
    pub tag: AtomicU64,
}

impl<const ID: usize> Counted<ID> {
    /// Panics if this record has been dropped (its canary poisoned).
    #[track_caller]
    pub fn check(&self) {
        let c = self.canary.load(Ordering::Acquire);
        assert_eq!(
            c, ALIVE,
            "record used after it was destroyed (canary {c:#x})"
        );
    }

    pub fn created() -> usize {
        CREATED[ID].load(Ordering::SeqCst)
    }

    pub fn dropped() -> usize {
        DROPPED[ID].load(Ordering::SeqCst)
    }

    /// Records created and not yet dropped.
    pub fn live() -> usize {
        Self::created() - Self::dropped()
    }
}

impl<const ID: usize> Record for Counted<ID> {
    fn absent(value_size: usize) -> Self {
        CREATED[ID].fetch_add(1, Ordering::SeqCst);
        Self {
            canary: AtomicU64::new(ALIVE),
            value_size,
            tag: AtomicU64::new(0),
        }
    }
}

impl<const ID: usize> Drop for Counted<ID> {
    fn drop(&mut self) {
        assert_eq!(*self.canary.get_mut(), ALIVE, "record dropped twice");
        *self.canary.get_mut() = DEAD;
        DROPPED[ID].fetch_add(1, Ordering::SeqCst);
    }
}

/// Flushes crossbeam-epoch's deferred destructors until `done()` holds, at most a bounded number
/// of rounds; returns whether it held.
///
/// The bound is generous because tests run in parallel in one process and share the global
/// epoch: a guard another test keeps pinned holds back reclamation here until it is dropped.
pub fn flush_until(mut done: impl FnMut() -> bool) -> bool {
    for _ in 0..2_000_000 {
        if done() {
            return true;
        }
        crossbeam_epoch::pin().flush();
        std::thread::yield_now();
    }
    done()
}

use std::sync::Barrier;
use txlab_core::protocol::storage::Index;

/// `threads` threads start together and call `get_or_insert` on keys `0..keys` in the same order.
/// Asserts every thread got the same record (address) for each key, the address `get` returns,
/// and exactly one `created` per key if `expect_creation`, none otherwise. Returns how many calls
/// reported a stripe bump (`Entry::bumped`).
pub fn racing_inserts_agree<const ID: usize, I: Index<Counted<ID>>>(
    index: &I,
    keys: u64,
    threads: usize,
    expect_creation: bool,
) -> u64 {
    let barrier = Barrier::new(threads);
    let created: Vec<AtomicUsize> = (0..keys).map(|_| AtomicUsize::new(0)).collect();
    let bumps = AtomicUsize::new(0);
    let addresses: Vec<Vec<usize>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    (0..keys)
                        .map(|k| {
                            let guard = crossbeam_epoch::pin();
                            let e = index.get_or_insert(k, &guard).unwrap();
                            e.record.check();
                            if e.created {
                                created[k as usize].fetch_add(1, Ordering::SeqCst);
                            }
                            if e.bumped.is_some() {
                                bumps.fetch_add(1, Ordering::SeqCst);
                            }
                            std::ptr::from_ref(e.record) as usize
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let guard = crossbeam_epoch::pin();
    for k in 0..keys {
        let first = addresses[0][k as usize];
        for (t, a) in addresses.iter().enumerate() {
            assert_eq!(
                a[k as usize], first,
                "thread {t} got another record for key {k}"
            );
        }
        let found = index
            .get(k, &guard)
            .unwrap()
            .expect("inserted key is mapped");
        assert_eq!(
            std::ptr::from_ref(found) as usize,
            first,
            "get disagrees for key {k}"
        );
        let c = created[k as usize].load(Ordering::SeqCst);
        assert_eq!(
            c,
            usize::from(expect_creation),
            "key {k} was created {c} times"
        );
    }
    bumps.load(Ordering::SeqCst) as u64
}

/// Half the threads repeatedly insert and unlink keys `0..keys`; the others look keys up (and
/// scan, if `scans`) and check every record they see is alive, both right away and after the
/// churners made progress, while still pinned.
pub fn churn_never_exposes_freed_records<const ID: usize, I: Index<Counted<ID>>>(
    index: &I,
    keys: u64,
    threads: usize,
    rounds: u64,
    scans: bool,
) {
    let barrier = Barrier::new(threads);
    let churners_done = AtomicUsize::new(0);
    let churners = threads / 2;
    std::thread::scope(|s| {
        for t in 0..threads {
            let (barrier, churners_done) = (&barrier, &churners_done);
            s.spawn(move || {
                barrier.wait();
                if t < churners {
                    for r in 0..rounds {
                        for k in 0..keys {
                            let guard = crossbeam_epoch::pin();
                            let e = index.get_or_insert(k, &guard).unwrap();
                            e.record.check();
                            if (k + r + t as u64).is_multiple_of(2) {
                                index.unlink(k, e.record, &guard).unwrap();
                            }
                            e.record.check();
                        }
                    }
                    churners_done.fetch_add(1, Ordering::SeqCst);
                } else {
                    // Readers run until every churner has finished, then once more.
                    loop {
                        let finished = churners_done.load(Ordering::SeqCst) == churners;
                        let guard = crossbeam_epoch::pin();
                        let mut seen = Vec::new();
                        for k in 0..keys {
                            if let Some(r) = index.get(k, &guard).unwrap() {
                                r.check();
                                seen.push(r);
                            }
                        }
                        if scans {
                            let mut last = None;
                            index
                                .scan(0, keys - 1, &guard, &mut |k, r| {
                                    r.check();
                                    assert!(last < Some(k), "scan not ascending at {k}");
                                    assert!(k < keys, "scan out of bounds: {k}");
                                    last = Some(k);
                                    seen.push(r);
                                    true
                                })
                                .unwrap();
                        }
                        // The churners unlinked some of these meanwhile; they must still be
                        // intact because this guard is still pinned.
                        for r in &seen {
                            r.check();
                        }
                        if finished {
                            break;
                        }
                    }
                }
            });
        }
    });
}
