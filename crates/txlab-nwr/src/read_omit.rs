//! The read-and-omit word: check (4)'s read mark and an omitter's footprint for one record, in
//! one 64-bit word, for a baseline whose readers must learn of omissions made before their mark
//! (MVTO, `txlab_mvto::nwr`).
//!
//! ```text
//!  63                              32 31                               0
//! +----------------------------------+----------------------------------+
//! | highest epoch that omitted (32)  |  highest epoch that read (32)    |
//! +----------------------------------+----------------------------------+
//!   0 = never                          0 = never
//! ```
//!
//! - *Read* half: a transaction of epoch `e` read a version of the record older than `e` (and is
//!   not a pre-epoch reader, `crate::rule::is_pre_epoch_reader`). Set by [`ReadOmitWord::mark_read`].
//! - *Omit* half: an omitter of epoch `e` claimed the record for an omitted write
//!   ([`ReadOmitWord::claim`], from `crate::rule::try_omit`, after it observed the item's pivot
//!   and before its CAS on the pivot object). A claim whose transaction then fails a later check
//!   stays (a *leftover*): it costs precision (a reader may abort needlessly), never soundness.
//!
//! Invariant: after the record is published every modification is a compare-and-swap that
//! raises one half to a larger epoch and keeps the other, so both halves only grow and every
//! modification continues the release sequence of every earlier one.
//!
//! Why one word (the race it closes). Silo's and TicToc's readers validate their read after they
//! mark, and a validation after the pivot appeared fails, so a reader there needs no news of
//! omissions ([`crate::read_mark`]). An MVTO reader may legitimately keep reading an item's older
//! version long after the pivot committed (its timestamp is below the pivot's), so it must find
//! out whether a write ordered after that version was omitted in its epoch. Reader and omitter
//! meet on this one location, each with a read-modify-write (a reader that finds its half
//! already marked only loads):
//!
//! - if the omitter's claim comes first in the word's modification order, the reader's RMW (or
//!   load, which reads the claim or a later RMW) returns an omit half `>= e`: the reader learns
//!   of the omission, and, since it acquires from the claim's release sequence, everything the
//!   omitter saw before claiming (its committed pivot) happens before the reader's next steps;
//! - otherwise the claim reads a read half `>= e` and the omitter gives up.
//!
//! Epochs from later transactions only make either side more cautious: a read half above `e`
//! blocks an omitter of `e`, an omit half above `e` makes a reader of `e` check.
//! This is what mRS and mWS of the 128-bit pivot object would do for MVTO+NWR, with no 128-bit
//! operation on any reader's path.
//!
//! **Where the marks live.** [`ReadOmitWord`] is the protocol in its plain form, with full 32-bit
//! epochs; the loom tests below model its race. MVTO+NWR embeds the same two marks, with the same
//! operations, in the 16 spare bits of its record's head word, each kept relative to the epoch
//! of the record's newest version (`txlab_mvto::head`), so its record stays 8 bytes. Every change
//! of that word is a read-modify-write too (links at the head included), and a mark of an epoch
//! any active transaction asks about survives every change, so the argument above carries over.

use txlab_core::protocol::sync::{AtomicU64, Ordering};

/// One record's read and omit epochs (module docs).
#[derive(Debug)]
pub struct ReadOmitWord(AtomicU64);

impl Default for ReadOmitWord {
    fn default() -> Self {
        Self::new()
    }
}

#[inline]
fn read_half(w: u64) -> u32 {
    w as u32
}

#[inline]
fn omit_half(w: u64) -> u32 {
    (w >> 32) as u32
}

impl ReadOmitWord {
    /// A word with neither half set.
    #[cfg(not(txlab_loom))]
    pub const fn new() -> Self {
        Self(AtomicU64::new(0))
    }

    /// A word with neither half set.
    #[cfg(txlab_loom)]
    pub fn new() -> Self {
        Self(AtomicU64::new(0))
    }

    /// Marks the record as read in `epoch` (by a transaction that read a version older than
    /// `epoch`) and tells whether an omission of `epoch` or later was claimed before the mark took
    /// effect. A load if the read half already holds `epoch` or later; otherwise one CAS.
    #[inline]
    pub fn mark_read(&self, epoch: u32) -> bool {
        let mut cur = self.0.load(Ordering::Acquire);
        while read_half(cur) < epoch {
            let next = (cur & !u64::from(u32::MAX)) | u64::from(epoch);
            match self
                .0
                .compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(now) => cur = now,
            }
        }
        omit_half(cur) >= epoch
    }

    /// An omitter of `epoch`, having observed the item's pivot: claims the record for an omitted
    /// write unless a transaction of `epoch` or later marked it read. Returns whether the record
    /// now stands claimed for `epoch` (by this call, or already by an earlier claim of `epoch`
    /// or later, which this call then only loads).
    /// With `ignore_reads` (a test-only mutant of check (4)) it claims regardless.
    #[inline]
    pub fn claim(&self, epoch: u32, ignore_reads: bool) -> bool {
        let mut cur = self.0.load(Ordering::Acquire);
        loop {
            if read_half(cur) >= epoch && !ignore_reads {
                // An RMW even here would order nothing more: the reader's mark is already in
                // the modification order before the value this load read.
                return false;
            }
            if omit_half(cur) >= epoch {
                // Claimed already, by an omitter of `epoch` or later that observed a committed
                // pivot first. A reader whose mark follows this load in the modification order
                // learns of that claim, and of its pivot, which is all it needs (a committed
                // version above its timestamp; `txlab_mvto::nwr`); one whose mark precedes it
                // shows in the read half loaded here. So a load is enough.
                return true;
            }
            let next = (u64::from(epoch) << 32) | (cur & u64::from(u32::MAX));
            match self
                .0
                .compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// The highest epoch that marked the record read (a plain load, for early exits only; the
    /// ordered check is [`ReadOmitWord::claim`]).
    #[inline]
    pub fn read_epoch(&self) -> u32 {
        read_half(self.0.load(Ordering::Acquire))
    }

    /// The highest epoch that claimed the record for an omission (diagnostics and tests).
    #[inline]
    pub fn omit_epoch(&self) -> u32 {
        omit_half(self.0.load(Ordering::Acquire))
    }
}

#[cfg(all(test, not(txlab_loom)))]
mod tests {
    use super::*;

    #[test]
    fn marks_and_claims_exclude_each_other_within_an_epoch() {
        let w = ReadOmitWord::new();
        assert!(!w.mark_read(3), "nothing claimed yet");
        assert_eq!((w.read_epoch(), w.omit_epoch()), (3, 0));
        assert!(
            !w.claim(3, false),
            "a reader of epoch 3 blocks omitters of 3"
        );
        assert!(!w.claim(2, false), "and of earlier epochs (precision only)");
        assert_eq!(w.omit_epoch(), 0, "a refused claim writes nothing");
        assert!(w.claim(4, false), "epoch 4 has no reader yet");
        assert_eq!((w.read_epoch(), w.omit_epoch()), (3, 4));
        assert!(w.claim(4, false), "a second claim of the epoch");
        assert!(w.mark_read(4), "a reader of 4 learns of the claim");
        assert!(w.mark_read(4), "and so does the next one, which only loads");
        assert!(
            w.mark_read(3),
            "a stale reader of 3 sees a claim of a later epoch"
        );
        assert_eq!((w.read_epoch(), w.omit_epoch()), (4, 4), "nothing lowered");
        assert!(!w.mark_read(5), "epoch 5 has no claim");
        assert!(!w.claim(5, false));
        assert!(w.claim(5, true), "the test mutant claims regardless");
        assert_eq!((w.read_epoch(), w.omit_epoch()), (5, 5));
    }

    #[test]
    fn halves_keep_full_32_bit_epochs() {
        let w = ReadOmitWord::new();
        assert!(w.claim(u32::MAX - 1, false));
        assert!(
            !w.mark_read(u32::MAX),
            "a claim of an earlier epoch is not news"
        );
        assert_eq!((w.read_epoch(), w.omit_epoch()), (u32::MAX, u32::MAX - 1));
        assert!(!w.claim(u32::MAX, false));
    }
}

#[cfg(all(test, txlab_loom))]
mod loom_tests {
    //! `RUSTFLAGS="--cfg txlab_loom -C target-cpu=x86-64-v2" cargo test -p txlab-nwr --lib --release loom`
    use super::*;
    use txlab_core::protocol::sync::{Arc, AtomicU64, Ordering, thread};

    const E: u32 = 7;

    /// A reader of `epoch` marks; if told of a claim, it looks for a committed newer version
    /// (`Acquire`, as MVTO's list walk), which makes it abort. Returns (told, saw the pivot).
    fn reader(word: &ReadOmitWord, pivot: &AtomicU64, epoch: u32) -> (bool, bool) {
        let told = word.mark_read(epoch);
        (told, told && pivot.load(Ordering::Acquire) != 0)
    }

    /// Whether an omitter of `epoch` omits: it observes the committed pivot (`Acquire`) and
    /// claims.
    fn omitter_omits(word: &ReadOmitWord, pivot: &AtomicU64, epoch: u32) -> bool {
        pivot.load(Ordering::Acquire) != 0 && word.claim(epoch, false)
    }

    /// The two properties MVTO's old-reader check rests on, for one reader of `E`: told of a
    /// claim, it sees the claimer's pivot (so its walk finds a committed newer version and it
    /// aborts); and if an omitter of `E` claimed, the reader either blocked it or was told.
    fn check(reader: (bool, bool), omitted: bool, omitter_epoch: u32) {
        let (told, saw_pivot) = reader;
        assert!(
            !told || saw_pivot,
            "told of a claim without seeing its pivot"
        );
        if omitter_epoch == E {
            assert!(
                !(omitted && !told),
                "the omitter claimed and the reader committed its older version anyway"
            );
        }
    }

    /// loom's exhaustive search with at most `bound` preemptions per execution (`None`: no bound),
    /// which keeps the four-thread models within seconds; every bug found so far in such
    /// handshakes needs one or two.
    fn model(bound: Option<usize>, f: impl Fn() + Sync + Send + 'static) {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = bound;
        b.check(f);
    }

    /// MVTO's race (module docs), every interleaving and every value the C++11 model allows. A
    /// writer commits the item's pivot (a `Release` store); an omitter of `omitter_epoch`
    /// observes it and claims; a reader of `E`, whose read of the older version is legal whatever
    /// the pivot (its timestamp is below the pivot's), marks. With `other_reader`, a second
    /// reader of `E` marks concurrently, so either may find the mark set and only load. An
    /// omitter of a later epoch need not be blocked by a reader of `E` (the reader precedes it),
    /// but a reader told of its claim must see its pivot.
    fn race(other_reader: bool, omitter_epoch: u32) {
        model(other_reader.then_some(3), move || {
            let pivot = Arc::new(AtomicU64::new(0));
            let word = Arc::new(ReadOmitWord::new());
            let writer = {
                let pivot = Arc::clone(&pivot);
                thread::spawn(move || pivot.store(1, Ordering::Release))
            };
            let omitter = {
                let (pivot, word) = (Arc::clone(&pivot), Arc::clone(&word));
                thread::spawn(move || omitter_omits(&word, &pivot, omitter_epoch))
            };
            let other = other_reader.then(|| {
                let (pivot, word) = (Arc::clone(&pivot), Arc::clone(&word));
                thread::spawn(move || reader(&word, &pivot, E))
            });
            let this = reader(&word, &pivot, E);
            let other = other.map(|h| h.join().unwrap());
            let omitted = omitter.join().unwrap();
            writer.join().unwrap();
            check(this, omitted, omitter_epoch);
            if let Some(other) = other {
                check(other, omitted, omitter_epoch);
            }
        });
    }

    #[test]
    fn loom_a_reader_either_blocks_the_omitter_or_learns_of_it() {
        race(false, E);
    }

    #[test]
    fn loom_a_reader_that_only_loads_its_mark_learns_of_it_too() {
        race(true, E);
    }

    #[test]
    fn loom_a_reader_told_of_a_later_epochs_claim_sees_its_pivot() {
        race(false, E + 1);
    }

    /// Two omitters of `E` racing one reader; the second omitter may find the first's claim and
    /// only load. Whichever claims, the reader blocks it or learns of a claim with a pivot.
    #[test]
    fn loom_a_second_claim_that_only_loads_is_still_seen() {
        model(Some(3), || {
            let pivot = Arc::new(AtomicU64::new(0));
            let word = Arc::new(ReadOmitWord::new());
            let writer = {
                let pivot = Arc::clone(&pivot);
                thread::spawn(move || pivot.store(1, Ordering::Release))
            };
            let first = {
                let (pivot, word) = (Arc::clone(&pivot), Arc::clone(&word));
                thread::spawn(move || omitter_omits(&word, &pivot, E))
            };
            let this = {
                let (pivot, word) = (Arc::clone(&pivot), Arc::clone(&word));
                thread::spawn(move || reader(&word, &pivot, E))
            };
            let second = omitter_omits(&word, &pivot, E);
            let first = first.join().unwrap();
            let this = this.join().unwrap();
            writer.join().unwrap();
            check(this, first || second, E);
        });
    }
}
