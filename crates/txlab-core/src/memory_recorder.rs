//! [`MemoryRecorder`]: keeps every finished transaction in memory for the checker.
//!
//! Invariants:
//!
//! - **One clock.** `now_ns` is the time elapsed since the recorder was created, read from the
//!   monotonic [`Instant`] clock, so instants taken on different threads are comparable (Rust
//!   documents `Instant` as monotonic; on Linux it is `CLOCK_MONOTONIC`, shared by all cores).
//! - **Nothing is lost.** [`Recorder::record`] appends to one of several mutex-protected shards,
//!   chosen by the worker number in the transaction id, so workers rarely contend; [`take`]
//!   drains every shard. A record made concurrently with `take` lands either in the returned
//!   history or in the next one, never in neither.
//! - **No panics.** A poisoned shard (a thread panicked while appending) is still used: appending
//!   to a `Vec` cannot leave it in an inconsistent state.
//!
//! [`take`]: MemoryRecorder::take

use super::{History, Recorder, TxnRecord};
use crate::error::Error;
use crossbeam_utils::CachePadded;
// `std`'s mutex, deliberately not `crate::protocol::sync`'s: the recorder is the observer, not part
// of any protocol, and must work outside a shuttle or loom execution (a test takes the history
// after the model checker returns).
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

/// A recorder that stores every record in memory (`ENABLED = true`).
#[derive(Debug)]
pub struct MemoryRecorder {
    start: Instant,
    shards: Box<[CachePadded<Mutex<Vec<TxnRecord>>>]>,
}

impl MemoryRecorder {
    /// Default number of shards.
    pub const DEFAULT_SHARDS: usize = 64;
    /// Largest accepted number of shards.
    pub const MAX_SHARDS: usize = 4096;

    /// A recorder with [`DEFAULT_SHARDS`](Self::DEFAULT_SHARDS) shards; its clock starts now.
    pub fn new() -> Self {
        Self::build(Self::DEFAULT_SHARDS)
    }

    /// A recorder with `shards` shards (`1..=MAX_SHARDS`); its clock starts now.
    pub fn with_shards(shards: usize) -> Result<Self, Error> {
        if shards == 0 || shards > Self::MAX_SHARDS {
            return Err(Error::invalid(
                "recorder shards",
                shards,
                format!("between 1 and {}", Self::MAX_SHARDS),
            ));
        }
        Ok(Self::build(shards))
    }

    fn build(shards: usize) -> Self {
        let shards = (0..shards)
            .map(|_| CachePadded::new(Mutex::new(Vec::new())))
            .collect();
        Self {
            start: Instant::now(),
            shards,
        }
    }

    fn shard(&self, index: usize) -> MutexGuard<'_, Vec<TxnRecord>> {
        self.shards[index]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Number of records held.
    pub fn len(&self) -> usize {
        (0..self.shards.len()).map(|i| self.shard(i).len()).sum()
    }

    /// Whether no record is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes and returns every record held, as a history sorted by transaction id.
    pub fn take(&self) -> History {
        let mut records = Vec::new();
        for i in 0..self.shards.len() {
            records.append(&mut self.shard(i));
        }
        records.sort_unstable_by_key(|r| r.id);
        History::from_records(records)
    }
}

impl Default for MemoryRecorder {
    fn default() -> Self {
        Self::new()
    }
}

impl super::sealed::Sealed for MemoryRecorder {}

impl Recorder for MemoryRecorder {
    const ENABLED: bool = true;

    fn now_ns(&self) -> u64 {
        // u64 nanoseconds cover 584 years.
        self.start.elapsed().as_nanos() as u64
    }

    fn record(&self, txn: TxnRecord) {
        let worker = (txn.id >> 40) as usize;
        self.shard(worker % self.shards.len()).push(txn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::history::{Outcome, txn_id};

    fn record(id: u64, begin_ns: u64, end_ns: u64) -> TxnRecord {
        TxnRecord {
            id,
            reads: Vec::new(),
            writes: Vec::new(),
            scans: Vec::new(),
            outcome: Outcome::Committed,
            begin_ns,
            end_ns,
        }
    }

    #[test]
    fn concurrent_records_are_all_kept_and_take_drains() {
        const THREADS: u32 = 4;
        const PER_THREAD: u64 = 2_000;
        let rec = MemoryRecorder::with_shards(3).unwrap();
        std::thread::scope(|s| {
            for w in 0..THREADS {
                let rec = &rec;
                s.spawn(move || {
                    for seq in 0..PER_THREAD {
                        let b = rec.now_ns();
                        let e = rec.now_ns();
                        rec.record(record(txn_id(w, seq), b, e));
                    }
                });
            }
        });
        assert_eq!(rec.len(), (THREADS as u64 * PER_THREAD) as usize);
        let h = rec.take();
        assert!(rec.is_empty());
        assert_eq!(h.len(), (THREADS as u64 * PER_THREAD) as usize);
        let ids: Vec<u64> = h.records().iter().map(|r| r.id).collect();
        let mut expected: Vec<u64> = (0..THREADS)
            .flat_map(|w| (0..PER_THREAD).map(move |s| txn_id(w, s)))
            .collect();
        expected.sort_unstable();
        assert_eq!(ids, expected);
        assert!(h.records().iter().all(|r| r.begin_ns <= r.end_ns));
    }

    #[test]
    fn the_clock_is_monotonic() {
        let rec = MemoryRecorder::new();
        let mut last = rec.now_ns();
        for _ in 0..1000 {
            let now = rec.now_ns();
            assert!(now >= last);
            last = now;
        }
    }

    #[test]
    fn bad_shard_counts_are_rejected_with_the_range() {
        let e = MemoryRecorder::with_shards(0).unwrap_err();
        assert!(e.to_string().contains("recorder shards = 0"), "{e}");
        assert!(e.to_string().contains("4096"), "{e}");
        assert!(MemoryRecorder::with_shards(MemoryRecorder::MAX_SHARDS + 1).is_err());
    }
}
