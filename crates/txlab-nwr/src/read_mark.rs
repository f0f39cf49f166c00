//! The read-epoch mark: check (4) of the NWR rule (the mRS check, "no transaction of epoch `e`
//! read the version the omitted write is ordered after") kept in one 32-bit word per record
//! instead of in the 128-bit pivot object's mRS.
//!
//! ```text
//!  31                                0
//! +-----------------------------------+
//! |  highest epoch that marked (32)   |   0 = never marked
//! +-----------------------------------+
//! ```
//!
//! Why a separate word. The sound rule (`docs/protocols/nwr.md`, "The rule as implemented")
//! marks every read of a pre-epoch version by a transaction that is not a pre-epoch reader. Kept
//! in mRS, that mark costs a 128-bit load on every such read and a `lock cmpxchg16b` on the first
//! one per item and epoch; priced on YCSB-B θ 0.9 at 1 thread, that is about 12 points of a 19 %
//! gap to Silo (`docs/results/nwr.md#where-the-overhead-goes-figure-7`). Here it is a 32-bit load
//! on every such read and a
//! 32-bit `fetch_max` on the first one per item and epoch. Only the rule's own mark moves: the
//! pivot counter, mWS and the epoch stay in the 128-bit object, still read, validated and
//! replaced by one CAS per omitted write (the printed-algorithm mutant keeps using mRS).
//!
//! Invariant: every modification after the record is published is a `fetch_max` or a
//! `fetch_add(0)` (read-modify-writes), so the word only grows and every modification continues
//! the release sequence of every earlier one.
//!
//! Ordering (the race the mark must close). A reader `R` of epoch `e` marks ([`mark`]) before it
//! validates its read of the pre-epoch version (an `Acquire` load of the item's version word). An
//! omitter `O` of epoch `e` observes the pivot (an `Acquire` load of the version word that sees
//! the epoch-`e` version, published with `Release`) and then checks the mark with a
//! read-modify-write ([`read_in`], `AcqRel`). In the mark word's modification order:
//!
//! - if `O`'s RMW comes after the value `R` read or wrote, it reads a value `>= e` (the word only
//!   grows) and `O` falls back to the baseline;
//! - otherwise `R`'s `fetch_max`, or the value its `Acquire` load read, lies in the release
//!   sequence headed by `O`'s RMW (every later modification is an RMW), so `O`'s RMW
//!   synchronizes with `R`'s mark; the pivot's publication happens before `O`'s load that saw it,
//!   hence before `R`'s validation load, which (coherence) sees the pivot and fails.
//!
//! So a reader that passes validation is always seen by an omitter that needs to see it. The same
//! argument, with the object's CAS in place of the `fetch_max`, is the one the mRS mark used.
//! A mark from a later epoch also blocks an omitter of `e` (it cannot tell the epochs apart);
//! that costs precision only, and only at an epoch boundary.

use txlab_core::protocol::sync::{AtomicU32, Ordering};

/// Marks the record's pre-epoch version as read by a transaction of `epoch` (call before
/// validating the read). Returns whether it had to write (the first mark of the epoch).
#[inline]
pub fn mark(word: &AtomicU32, epoch: u32) -> bool {
    if word.load(Ordering::Acquire) >= epoch {
        return false;
    }
    word.fetch_max(epoch, Ordering::AcqRel);
    true
}

/// Whether a transaction of `epoch` (or later) marked the record: the omitter's check, made after
/// it observed the pivot (module docs). A read-modify-write that leaves the word unchanged, so it
/// orders itself against every reader's mark.
#[inline]
pub fn read_in(word: &AtomicU32, epoch: u32) -> bool {
    word.fetch_add(0, Ordering::AcqRel) >= epoch
}

#[cfg(all(test, not(txlab_loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_mark_only_grows_and_is_seen_from_its_epoch_on() {
        let w = AtomicU32::new(0);
        assert!(!read_in(&w, 1));
        assert!(mark(&w, 5));
        assert!(!mark(&w, 5), "a second mark of the epoch does not write");
        assert!(!mark(&w, 4), "a stale epoch does not lower the mark");
        assert_eq!(w.load(Ordering::Relaxed), 5);
        assert!(read_in(&w, 5));
        assert!(
            read_in(&w, 3),
            "a later mark blocks an earlier omitter (precision only)"
        );
        assert!(
            !read_in(&w, 6),
            "an earlier epoch's mark means nothing to epoch 6"
        );
        assert_eq!(w.load(Ordering::Relaxed), 5, "read_in changes nothing");
    }
}

#[cfg(all(test, txlab_loom))]
mod loom_tests {
    //! `RUSTFLAGS="--cfg txlab_loom -C target-cpu=x86-64-v2" cargo test -p txlab-nwr --lib --release loom`
    use super::*;
    use txlab_core::protocol::sync::{Arc, AtomicU64, Ordering, thread};

    const OLD: u64 = 1;
    const PIVOT: u64 = 2;
    const E: u32 = 7;

    /// The race of the module docs, every interleaving and every value the C++11 model allows:
    /// a reader of epoch `E` marks, then validates its read of the old version; a pivot writer
    /// publishes the epoch's first version; an omitter that observed the pivot checks the mark.
    /// The reader passing validation and the omitter finding no mark never happen together.
    /// With `premarked`, another reader of `E` marked first, so this reader takes the path that
    /// only loads (its `fetch_max` is skipped).
    fn race(premarked: bool) {
        loom::model(move || {
            let version = Arc::new(AtomicU64::new(OLD));
            let word = Arc::new(AtomicU32::new(0));
            if premarked {
                assert!(mark(&word, E));
            }
            let reader = {
                let (version, word) = (Arc::clone(&version), Arc::clone(&word));
                thread::spawn(move || {
                    mark(&word, E);
                    version.load(Ordering::Acquire) == OLD
                })
            };
            let writer = {
                let version = Arc::clone(&version);
                thread::spawn(move || version.store(PIVOT, Ordering::Release))
            };
            let omitted = version.load(Ordering::Acquire) == PIVOT && !read_in(&word, E);
            let validated = reader.join().unwrap();
            writer.join().unwrap();
            assert!(
                !(validated && omitted),
                "the reader validated its old version and the omitter missed its mark"
            );
        });
    }

    #[test]
    fn loom_a_validated_reader_is_always_seen_by_the_omitter() {
        race(false);
    }

    #[test]
    fn loom_a_reader_that_only_loads_the_mark_is_seen_too() {
        race(true);
    }

    /// A stale reader (an earlier epoch) racing a reader of `E` never lowers the word below `E`.
    #[test]
    fn loom_a_stale_mark_never_hides_a_newer_one() {
        loom::model(|| {
            let word = Arc::new(AtomicU32::new(0));
            let stale = {
                let word = Arc::clone(&word);
                thread::spawn(move || mark(&word, E - 1))
            };
            mark(&word, E);
            stale.join().unwrap();
            assert!(read_in(&word, E));
        });
    }
}
