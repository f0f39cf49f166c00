//! A Silo record: the TID word and the value, stored as atomic words.

use crate::tid::{ABSENT, LOCK, is_locked};
use txlab_core::storage::Record;
use txlab_core::sync::{AtomicU64, Ordering, fence};
use txlab_core::value::AtomicValue;

/// One record: TID word (see [`crate::tid`]) plus its value.
#[derive(Debug)]
pub struct SiloRecord {
    pub(crate) tid: AtomicU64,
    pub(crate) value: AtomicValue,
}

impl Record for SiloRecord {
    fn absent(value_size: usize) -> Self {
        Self {
            tid: AtomicU64::new(ABSENT),
            value: AtomicValue::zeroed(value_size),
        }
    }
}

/// Outcome of a bounded attempt to read a record consistently.
pub(crate) enum StableRead {
    /// The TID word (unlocked) under which `out` holds a consistent copy.
    Ok(u64),
    /// A writer held the lock through every attempt.
    Busy,
}

impl SiloRecord {
    /// Copies the value into `out` consistently with the returned TID word (the seqlock read of
    /// `txlab_core::value`): `Acquire` load, relaxed word copies, `Acquire` fence, relaxed re-load.
    /// Spins (with backoff that yields) while the record is locked, up to `max_waits` rounds.
    #[inline]
    pub(crate) fn read_stable(&self, out: &mut [u8], max_waits: u32) -> StableRead {
        let mut waits = 0u32;
        let backoff = crossbeam_utils::Backoff::new();
        loop {
            let t1 = self.tid.load(Ordering::Acquire);
            if !is_locked(t1) {
                if t1 & ABSENT == 0 {
                    self.value.load_into(out);
                }
                fence(Ordering::Acquire);
                let t2 = self.tid.load(Ordering::Relaxed);
                if t1 == t2 {
                    return StableRead::Ok(t1);
                }
            }
            waits += 1;
            if waits > max_waits {
                return StableRead::Busy;
            }
            backoff.snooze();
        }
    }

    /// Tries to set the lock bit; returns the unlocked word it replaced.
    #[inline]
    pub(crate) fn try_lock(&self) -> Option<u64> {
        let cur = self.tid.load(Ordering::Relaxed);
        if is_locked(cur) {
            return None;
        }
        self.tid
            .compare_exchange_weak(cur, cur | LOCK, Ordering::Acquire, Ordering::Relaxed)
            .ok()
    }

    /// Installs `value` (if any) and publishes `word` (which must not have the lock bit),
    /// releasing the lock. Caller holds the lock and has issued a `Release` fence since locking.
    #[inline]
    pub(crate) fn install(&self, value: Option<&[u8]>, word: u64) {
        debug_assert_eq!(word & LOCK, 0);
        if let Some(v) = value {
            self.value.store(v);
        }
        self.tid.store(word, Ordering::Release);
    }

    /// Releases the lock without changing the version.
    #[inline]
    pub(crate) fn unlock(&self, version: u64) {
        self.tid.store(version & !LOCK, Ordering::Release);
    }

    /// Non-transactional load: present, tag 0 (see [`crate::tid`]).
    pub(crate) fn load_initial(&self, value: &[u8]) {
        self.value.store(value);
        self.tid.store(0, Ordering::Release);
    }
}
