//! A Silo record: the TID word and the value, stored as atomic words.

use crate::tid::{ABSENT, LOCK, is_locked, is_retired};
use txlab_core::protocol::storage::Record;
use txlab_core::protocol::sync::{AtomicU64, Ordering, fence};
use txlab_core::protocol::value::AtomicValue;
use txlab_occ::LockWord;

/// Whether this build pads every record to its own 64-byte cache line (cargo feature
/// `line-aligned-records`, CCBench's layout) instead of packing records (the default).
pub const LINE_ALIGNED_RECORDS: bool = cfg!(feature = "line-aligned-records");

/// One record: TID word (see `crate::tid`) plus its value (32 bytes), the same for every
/// variant. The NWR paper §6.1.1 widens Silo's TID word itself to 128 bits; txlab keeps the 64-bit
/// TID word and keeps Silo+NWR's 128-bit pivot version object beside the record, as a cold
/// companion only omitters touch (`Silo::pivots`, `txlab_storage::Companions`); check (4)'s read
/// mark is the value's sidecar word (`txlab_nwr::read_mark`). See
/// `docs/results/nwr.md#record-layout`.
#[cfg_attr(feature = "line-aligned-records", repr(align(64)))]
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

impl LockWord for SiloRecord {
    #[inline]
    fn try_lock(&self) -> Option<u64> {
        let cur = self.tid.load(Ordering::Relaxed);
        if is_locked(cur) {
            return None;
        }
        self.tid
            .compare_exchange_weak(cur, cur | LOCK, Ordering::SeqCst, Ordering::Relaxed)
            .ok()
    }

    /// Releases the lock without changing the version.
    #[inline]
    fn unlock(&self, version: u64) {
        self.tid.store(version & !LOCK, Ordering::Release);
    }

    #[inline]
    fn unlocked_word(&self) -> u64 {
        self.tid.load(Ordering::Acquire) & !LOCK
    }

    #[inline]
    fn retired(word: u64) -> bool {
        is_retired(word)
    }

    /// The retirer sets `RETIRED` together with the lock (`crate::retire`).
    #[inline]
    fn is_retired(&self) -> bool {
        is_retired(self.tid.load(Ordering::Acquire))
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
    /// `txlab_core::protocol::value`): `Acquire` load, relaxed word copies, `Acquire` fence, relaxed re-load.
    /// Spins (with backoff that yields) while the record is locked, up to `max_waits` rounds.
    #[inline]
    pub(crate) fn read_stable(&self, out: &mut [u8], max_waits: u32) -> StableRead {
        let mut waits = 0u32;
        let mut backoff = txlab_core::protocol::sync::SpinWait::new();
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

    /// Non-transactional load: present, tag 0 (see [`crate::tid`]).
    pub(crate) fn load_initial(&self, value: &[u8]) {
        self.value.store(value);
        self.tid.store(0, Ordering::Release);
    }
}

#[cfg(all(test, txlab_loom))]
mod loom_tests {
    //! `RUSTFLAGS="--cfg txlab_loom -C target-cpu=x86-64-v2" cargo test -p txlab-silo --lib --release loom`
    use super::*;
    use crate::tid::SEQ_ONE;
    use txlab_core::protocol::sync::{Arc, Ordering, fence, thread};

    /// A reader racing a writer's lock/install/unlock sees the old value or the new one, each
    /// with its own TID word, never a mix of words: the seqlock kernel is race-free under the
    /// C++11 memory model as loom explores it (every interleaving, relaxed loads included).
    #[test]
    fn loom_seqlock_read_is_never_torn() {
        loom::model(|| {
            let r = Arc::new(SiloRecord::absent(16));
            r.load_initial(&[1u8; 16]);
            let writer = {
                let r = Arc::clone(&r);
                thread::spawn(move || {
                    let old = loop {
                        if let Some(w) = r.try_lock() {
                            break w;
                        }
                        thread::yield_now();
                    };
                    fence(Ordering::Release);
                    r.install(Some(&[2u8; 16]), old + SEQ_ONE);
                })
            };
            let mut out = [0u8; 16];
            if let StableRead::Ok(word) = r.read_stable(&mut out, 2) {
                let expected = if word == 0 { [1u8; 16] } else { [2u8; 16] };
                assert_eq!(out, expected, "word {word:#x}");
            }
            writer.join().unwrap();
        });
    }

    /// Two writers: the lock bit admits one at a time and the final word reflects both installs.
    #[test]
    fn loom_lock_bit_serializes_writers() {
        loom::model(|| {
            let r = Arc::new(SiloRecord::absent(8));
            r.load_initial(&[0u8; 8]);
            let spawn = |r: Arc<SiloRecord>| {
                thread::spawn(move || {
                    let old = loop {
                        if let Some(w) = r.try_lock() {
                            break w;
                        }
                        thread::yield_now();
                    };
                    fence(Ordering::Release);
                    let mut v = [0u8; 8];
                    r.value.load_into(&mut v);
                    let n = u64::from_le_bytes(v) + 1;
                    r.install(Some(&n.to_le_bytes()), old + SEQ_ONE);
                })
            };
            let (a, b) = (spawn(Arc::clone(&r)), spawn(Arc::clone(&r)));
            a.join().unwrap();
            b.join().unwrap();
            let mut v = [0u8; 8];
            r.value.load_into(&mut v);
            assert_eq!(u64::from_le_bytes(v), 2);
            assert_eq!(r.tid.load(Ordering::Acquire), 2 * SEQ_ONE);
        });
    }
}
