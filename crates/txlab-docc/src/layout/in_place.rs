//! [`InPlace`]: one version per record, installed in place (the paper's Algorithm 1).
//!
//! Version word (`AtomicU64`):
//!
//! ```text
//! | seq (raw Seq, 61 bits) | SEALED | BUSY | ABSENT |
//! ```
//!
//! The value is an [`AtomicValue`]: readers copy it with relaxed word loads under the version
//! word, a seqlock (`txlab_core::protocol::value` has the argument):
//!
//! ```text
//! committer: store(word | BUSY, Relaxed); fence(Release); store value words (Relaxed);
//!            store(new word, Release)
//! reader:    w1 = load(Acquire), retried while BUSY; copy words (Relaxed); fence(Acquire);
//!            w2 = load(Relaxed); the copy is consistent iff w1 == w2
//! ```
//!
//! There is exactly one committer at a time (the waiting phase), so the committer needs neither
//! a lock bit nor a compare-and-swap: `BUSY` only tells readers a copy may be torn. A reader that
//! copies while a writer stores value words and then sees the same word twice would need the
//! writer's `BUSY` store to be invisible after its acquire fence, which the release fence between
//! that store and the value stores forbids.

use super::{Installed, Keep, Layout, Observed, sealed};
use crossbeam_epoch::Guard;
use txlab_core::protocol::storage::Record;
use txlab_core::protocol::sync::{AtomicU64, Ordering, SpinWait, fence};
use txlab_core::protocol::value::AtomicValue;

const ABSENT: u64 = 1;
const BUSY: u64 = 2;
const SEALED: u64 = 4;
const SHIFT: u32 = 3;

/// The basic layout (module docs): `Docc<InPlace>` is `docc-basic`.
#[derive(Debug, Clone, Copy, Default)]
pub struct InPlace;

/// A record of the [`InPlace`] layout: the version word and the value.
#[derive(Debug)]
pub struct InPlaceRecord {
    word: AtomicU64,
    value: AtomicValue,
}

impl Record for InPlaceRecord {
    fn absent(value_size: usize) -> Self {
        Self {
            word: AtomicU64::new(ABSENT),
            value: AtomicValue::zeroed(value_size),
        }
    }
}

#[inline]
fn observed(word: u64) -> Observed {
    Observed {
        version: word >> SHIFT,
        present: word & ABSENT == 0,
        sealed: word & SEALED != 0,
    }
}

impl InPlaceRecord {
    /// The version word once no install is in progress.
    #[inline]
    fn stable_word(&self) -> u64 {
        let mut wait = SpinWait::new();
        loop {
            let w = self.word.load(Ordering::Acquire);
            if w & BUSY == 0 {
                return w;
            }
            wait.snooze();
        }
    }
}

impl sealed::Sealed for InPlace {}

impl Layout for InPlace {
    type Record = InPlaceRecord;
    const SNAPSHOT: bool = false;
    const NAME: &'static str = "in-place";

    #[inline]
    fn read(rec: &InPlaceRecord, _bound: u64, out: &mut [u8], _guard: &Guard) -> Observed {
        loop {
            let w1 = rec.stable_word();
            if w1 & ABSENT == 0 {
                rec.value.load_into(out);
            }
            fence(Ordering::Acquire);
            let w2 = rec.word.load(Ordering::Relaxed);
            if w1 == w2 {
                return observed(w1);
            }
        }
    }

    #[inline]
    fn current(rec: &InPlaceRecord, _bound: u64, _guard: &Guard) -> Observed {
        observed(rec.stable_word())
    }

    #[inline]
    fn install(
        rec: &InPlaceRecord,
        seq: u64,
        value: Option<&[u8]>,
        _keep: Keep<'_>,
        _guard: &Guard,
    ) -> Installed {
        let old = rec.word.load(Ordering::Relaxed);
        if old & SEALED != 0 {
            return Installed {
                sealed: true,
                ..Installed::default()
            };
        }
        let new = match value {
            Some(v) => {
                rec.word.store(old | BUSY, Ordering::Relaxed);
                fence(Ordering::Release);
                rec.value.store(v);
                seq << SHIFT
            }
            None => (seq << SHIFT) | ABSENT,
        };
        rec.word.store(new, Ordering::Release);
        Installed::default()
    }

    fn load(rec: &InPlaceRecord, value: &[u8], _guard: &Guard) {
        rec.word.store(BUSY, Ordering::Relaxed);
        fence(Ordering::Release);
        rec.value.store(value);
        rec.word.store(0, Ordering::Release);
    }

    fn seal_tombstone(rec: &InPlaceRecord, seq: u64, _guard: &Guard) -> bool {
        let w = rec.word.load(Ordering::Relaxed);
        if w == (seq << SHIFT) | ABSENT {
            rec.word.store(w | SEALED, Ordering::Release);
            true
        } else {
            false
        }
    }

    #[inline]
    fn is_sealed(rec: &InPlaceRecord, _guard: &Guard) -> bool {
        rec.word.load(Ordering::Acquire) & SEALED != 0
    }

    fn versions(_rec: &InPlaceRecord, _guard: &Guard) -> usize {
        1
    }
}

#[cfg(all(test, not(any(txlab_loom, txlab_shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn installs_reads_tombstones_and_seals() {
        let g = crossbeam_epoch::pin();
        let r = InPlaceRecord::absent(12);
        let mut out = [0u8; 12];
        let o = InPlace::read(&r, u64::MAX, &mut out, &g);
        assert_eq!((o.version, o.present, o.sealed), (0, false, false));
        InPlace::load(&r, &[1; 12], &g);
        assert_eq!(InPlace::read(&r, 5, &mut out, &g).version, 0);
        assert_eq!(out, [1; 12]);
        InPlace::install(&r, 1 << 32, Some(&[2; 12]), Keep::All, &g);
        let o = InPlace::read(&r, u64::MAX, &mut out, &g);
        assert_eq!((o.version, o.present, out), (1 << 32, true, [2; 12]));
        InPlace::install(&r, 2 << 32, None, Keep::All, &g);
        assert!(!InPlace::current(&r, u64::MAX, &g).present);
        assert!(
            !InPlace::seal_tombstone(&r, 1 << 32, &g),
            "not that tombstone"
        );
        assert!(InPlace::seal_tombstone(&r, 2 << 32, &g));
        assert!(InPlace::is_sealed(&r, &g));
        assert!(InPlace::current(&r, u64::MAX, &g).sealed);
        assert!(InPlace::install(&r, 3 << 32, Some(&[3; 12]), Keep::All, &g).sealed);
        assert!(
            !InPlace::current(&r, u64::MAX, &g).present,
            "nothing installed"
        );
    }
}
