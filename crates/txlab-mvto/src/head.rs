//! A record's head word: the pointer to its newest version, the retired tag, and (MVTO+NWR only)
//! the read-and-omit marks, in one 64-bit atomic.
//!
//! ```text
//!  63          56 55          48 47                                             1   0
//! +--------------+--------------+------------------------------------------------+---+
//! |  omit mark   |  read mark   |  address of the newest version (8-aligned)      | R |
//! +--------------+--------------+------------------------------------------------+---+
//! ```
//!
//! - The address: user-space pointers fit in 48 bits on x86-64 and AArch64 (4-level paging);
//!   a version allocated above that is refused when it would be linked at the head
//!   ([`crate::record::LinkRefused::Unaddressable`]), never truncated. (An allocator that tags
//!   the top byte of its pointers, as AArch64 MTE or HWASan do, would have every version
//!   refused: safe, but MVTO would not run there.) Versions are 8-aligned, so
//!   bit 0 is free for `R`, `crate::head::RETIRED_TAG` (`crate::retire`).
//! - The marks replace MVTO+NWR's separate 64-bit read-and-omit word (`txlab_nwr::read_omit`,
//!   whose protocol they implement unchanged: the read mark is the highest epoch whose reader
//!   marked a read of an older version, the omit mark the highest epoch whose omitter claimed
//!   the record; both only grow). They are always zero for plain MVTO and `mvto-nwr-single`.
//!
//! **Encoding.** Eight bits cannot hold an epoch, so each mark is kept relative to the *base*
//! `B`, the epoch of the head version's write timestamp (0 for an empty list):
//!
//! ```text
//!   0          no mark
//!   1 ..= 254  the epoch B + v - 2   (so 1 = B - 1, 2 = B, 3 = B + 1)
//!   255        saturated: some epoch >= B + 253, treated as "at least any epoch asked about"
//! ```
//!
//! Why every mark that matters is representable: the global epoch `G` moves on only when every
//! active worker has caught up (`txlab_core::protocol::epoch`), so an active transaction's epoch `e`
//! satisfies `e >= G - 1`. Every MVTO+NWR timestamp's epoch is the epoch its transaction entered
//! (`crate::timestamp::LocalClock::begin` refuses to let the clock carry into a later epoch; the
//! worker waits for the next one instead), so no version is newer than `G`, so
//! `B <= G <= e + 1`, that is `e >= B - 1`. Without that rule a worker that ran 2^23
//! transactions in one epoch would write versions of epoch `G + 1` and later, and a link of such
//! a version could drop a claim a reader of `G` still needs. A mark older than `B - 1` concerns no active transaction (a read mark of `m`
//! blocks omitters of `m` or earlier; a claim of `m` concerns readers of `m` or earlier), and
//! from `B + 253` on a mark saturates, which only makes either side more cautious (an omitter
//! gives up, a reader runs the old-version check).
//!
//! **Rebasing.** Only a link at the head changes `B`, to the new version's epoch `B' >= B` (a
//! version linked at the head has the largest `wts`). Its CAS carries the marks over,
//! re-encoded: an exact mark `m` stays `m` if `m >= B' - 1`, else it is dropped (it concerns no
//! active transaction, as above, since the linker is active: `B' >= G - 1`); a saturated mark
//! becomes `B' + 1` when `B` moved, the largest epoch any mark can hold (`<= G <= B' + 1`). So a
//! mark never decreases for an epoch anyone active asks about, and every change of the word is a
//! read-modify-write: marks, claims, links at the head, the retired tag. The race argument of
//! `txlab_nwr::read_omit` (a reader's mark and an omitter's claim are two RMWs of one location;
//! whichever comes second sees the first, and a reader acquires from the claim's release
//! sequence) holds in the head word as in a separate word, with links in the same release sequence.
//!
//! **Orderings.** Links and the retired tag use `SeqCst` (`crate::record`,
//! `crate::retire`); so do marks and claims and their loads: every load of a list pointer by a
//! transaction is `SeqCst`, which the version pool's grace period needs (`crate::pool`).

use crate::record::deref;
use crate::timestamp::epoch_of;
use crate::version::Version;
use crossbeam_epoch::{Guard, Shared};
use txlab_core::protocol::sync::{AtomicU64, Ordering};

/// The tag bit of a retired record's head (module docs, `crate::retire`).
pub(crate) const RETIRED_TAG: u64 = 1;
/// The address bits.
const ADDR_MASK: u64 = (1 << 48) - 1;
const READ_SHIFT: u32 = 48;
const OMIT_SHIFT: u32 = 56;
/// A saturated mark (module docs).
const SATURATED: u8 = u8::MAX;

/// One loaded value of a [`HeadWord`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Head(u64);

/// What a mark says, decoded against its base (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    None,
    At(u64),
    Saturated,
}

impl Mark {
    /// Whether the mark is of `epoch` or later (a saturated mark always is).
    #[inline]
    pub(crate) fn at_least(self, epoch: u64) -> bool {
        match self {
            Mark::None => false,
            Mark::At(m) => m >= epoch,
            Mark::Saturated => true,
        }
    }
}

#[inline]
fn decode(v: u8, base: u64) -> Mark {
    match v {
        0 => Mark::None,
        SATURATED => Mark::Saturated,
        v => Mark::At(base + u64::from(v) - 2),
    }
}

/// `epoch` relative to `base`, or `None` if it is older than `base - 1`.
#[inline]
fn encode(epoch: u64, base: u64) -> Option<u8> {
    let v = (epoch + 2).checked_sub(base)?;
    match v {
        0 => None,
        v if v >= u64::from(SATURATED) => Some(SATURATED),
        v => Some(v as u8),
    }
}

/// A mark encoded against `old` re-encoded against `new >= old` (module docs, "Rebasing").
#[inline]
fn rebase(v: u8, old: u64, new: u64) -> u8 {
    if v == 0 || old == new {
        return v;
    }
    match decode(v, old) {
        Mark::None => 0,
        Mark::At(m) => encode(m, new).unwrap_or(0),
        Mark::Saturated => 3,
    }
}

impl Head {
    /// The newest version (`Shared::null()` for an empty list), without the tag.
    #[inline]
    pub(crate) fn version<'g>(self, _guard: &'g Guard) -> Shared<'g, Version> {
        Shared::from((self.0 & ADDR_MASK & !RETIRED_TAG) as usize as *const Version)
    }

    /// Whether the record is being unlinked (`crate::retire`).
    #[inline]
    pub(crate) fn is_retired(self) -> bool {
        self.0 & RETIRED_TAG != 0
    }

    /// The same head with the retired tag set.
    #[inline]
    pub(crate) fn retired(self) -> Head {
        Head(self.0 | RETIRED_TAG)
    }

    #[inline]
    fn read_mark(self) -> u8 {
        (self.0 >> READ_SHIFT) as u8
    }

    #[inline]
    fn omit_mark(self) -> u8 {
        (self.0 >> OMIT_SHIFT) as u8
    }

    /// The same address and tag with these marks.
    #[inline]
    fn with_marks(self, read: u8, omit: u8) -> Head {
        Head(
            (self.0 & ADDR_MASK)
                | (u64::from(read) << READ_SHIFT)
                | (u64::from(omit) << OMIT_SHIFT),
        )
    }

    /// The head after linking `new` (with write timestamp `wts`) above this one: `new`'s address,
    /// untagged, the marks rebased to `new`'s epoch; `None` if the address does not fit.
    #[inline]
    pub(crate) fn linking(self, new: *const Version, wts: u64, guard: &Guard) -> Option<Head> {
        let head = Head::fresh(new)?;
        let (read, omit) = (self.read_mark(), self.omit_mark());
        if read | omit == 0 {
            return Some(head);
        }
        let (old, new_base) = (self.base(guard), epoch_of(wts));
        Some(head.with_marks(rebase(read, old, new_base), rebase(omit, old, new_base)))
    }

    /// The head with a new pointer and no marks (a non-transactional load), if it fits.
    #[inline]
    pub(crate) fn fresh(new: *const Version) -> Option<Head> {
        let addr = new as usize as u64;
        (addr & !ADDR_MASK == 0).then_some(Head(addr))
    }

    /// The base of the marks: the epoch of the head version's write timestamp.
    #[inline]
    fn base(self, guard: &Guard) -> u64 {
        deref(self.version(guard)).map_or(0, |v| epoch_of(v.wts))
    }

    /// The decoded marks, read and omit.
    #[inline]
    pub(crate) fn marks(self, guard: &Guard) -> (Mark, Mark) {
        let base = self.base(guard);
        (
            decode(self.read_mark(), base),
            decode(self.omit_mark(), base),
        )
    }
}

/// A record's head word (module docs).
#[derive(Debug)]
pub(crate) struct HeadWord(AtomicU64);

impl HeadWord {
    /// An empty list, no marks.
    pub(crate) fn null() -> Self {
        Self(AtomicU64::new(0))
    }

    #[inline]
    pub(crate) fn load(&self, order: Ordering) -> Head {
        Head(self.0.load(order))
    }

    #[inline]
    pub(crate) fn compare_exchange(
        &self,
        current: Head,
        new: Head,
        success: Ordering,
        failure: Ordering,
    ) -> Result<Head, Head> {
        self.0
            .compare_exchange(current.0, new.0, success, failure)
            .map(Head)
            .map_err(Head)
    }

    #[inline]
    pub(crate) fn swap(&self, new: Head, order: Ordering) -> Head {
        Head(self.0.swap(new.0, order))
    }

    /// Clears the retired tag, keeping the pointer and whatever marks arrived meanwhile.
    #[inline]
    pub(crate) fn clear_retired(&self, order: Ordering) -> Head {
        Head(self.0.fetch_and(!RETIRED_TAG, order))
    }

    /// MVTO+NWR's read mark for a reader of `epoch` that read a version older than `epoch`
    /// (`txlab_nwr::ReadOmitWord::mark_read`): a load if the read mark already holds `epoch` or
    /// later, otherwise one CAS. Tells whether an omission of `epoch` or later was claimed before
    /// the mark took effect.
    #[inline]
    pub(crate) fn mark_read(&self, epoch: u64, guard: &Guard) -> bool {
        let mut cur = self.load(Ordering::SeqCst);
        loop {
            let base = cur.base(guard);
            let omitted = decode(cur.omit_mark(), base).at_least(epoch);
            if decode(cur.read_mark(), base).at_least(epoch) {
                return omitted;
            }
            // An epoch below `base - 1` cannot occur for an active reader (module docs); marking
            // `base - 1` instead only blocks more omitters.
            let v = encode(epoch, base).unwrap_or(1);
            let next = cur.with_marks(v, cur.omit_mark());
            match self
                .0
                .compare_exchange_weak(cur.0, next.0, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return omitted,
                Err(now) => cur = Head(now),
            }
        }
    }

    /// Whether the read mark holds `epoch` or later (one load; the rule's early exit).
    #[inline]
    pub(crate) fn read_marked(&self, epoch: u64, guard: &Guard) -> bool {
        let cur = self.load(Ordering::SeqCst);
        decode(cur.read_mark(), cur.base(guard)).at_least(epoch)
    }

    /// An omitter of `epoch`, having observed the item's committed pivot, claims the record
    /// (`txlab_nwr::ReadOmitWord::claim`): fails if a reader of `epoch` or later marked it,
    /// succeeds with a load if a claim of `epoch` or later is already there, otherwise by CAS.
    /// `ignore_reads` is the test-only mutant of check (4).
    #[inline]
    pub(crate) fn claim(&self, epoch: u64, ignore_reads: bool, guard: &Guard) -> bool {
        let mut cur = self.load(Ordering::SeqCst);
        loop {
            let base = cur.base(guard);
            if decode(cur.read_mark(), base).at_least(epoch) && !ignore_reads {
                return false;
            }
            if decode(cur.omit_mark(), base).at_least(epoch) {
                return true;
            }
            let Some(v) = encode(epoch, base) else {
                return false;
            };
            let next = cur.with_marks(cur.read_mark(), v);
            match self
                .0
                .compare_exchange_weak(cur.0, next.0, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return true,
                Err(now) => cur = Head(now),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::MvtoRecord;
    use crate::timestamp::epoch_start;
    use crate::version::COMMITTED;
    use crossbeam_epoch::Owned;
    use txlab_core::protocol::storage::Record;

    /// Links a committed version written in `epoch` (its `n`-th timestamp there).
    fn write(rec: &MvtoRecord, epoch: u64, n: u64, guard: &Guard) {
        let v = Version::new(epoch_start(epoch) + n, COMMITTED, false, b"v");
        rec.link(Owned::new(v), guard).expect("linked");
    }

    fn marks(rec: &MvtoRecord, guard: &Guard) -> (Mark, Mark) {
        rec.head.load(Ordering::Acquire).marks(guard)
    }

    /// The two orders of a reader's mark and an omitter's claim on one record
    /// (`txlab_nwr::read_omit`): a mark first blocks the claim; a claim first reaches the
    /// reader's mark, which then reports it.
    #[test]
    fn a_mark_blocks_a_later_claim_and_a_claim_reaches_a_later_mark() {
        let guard = &crossbeam_epoch::pin();
        let rec = MvtoRecord::absent(8);
        write(&rec, 5, 1, guard);
        assert!(!rec.head.mark_read(5, guard), "nothing claimed yet");
        assert_eq!(marks(&rec, guard), (Mark::At(5), Mark::None));
        assert!(rec.head.read_marked(5, guard));
        assert!(!rec.head.read_marked(6, guard));
        assert!(
            !rec.head.claim(5, false, guard),
            "a reader of 5 marked first"
        );
        assert!(
            rec.head.claim(6, false, guard),
            "a mark of 5 does not block epoch 6"
        );

        let rec = MvtoRecord::absent(8);
        write(&rec, 5, 1, guard);
        assert!(rec.head.claim(5, false, guard));
        assert_eq!(marks(&rec, guard), (Mark::None, Mark::At(5)));
        assert!(
            rec.head.mark_read(5, guard),
            "the reader learns of the claim"
        );
        // The test-only mutant claims over a mark.
        let rec = MvtoRecord::absent(8);
        write(&rec, 5, 1, guard);
        rec.head.mark_read(5, guard);
        assert!(rec.head.claim(5, true, guard));
    }

    /// Links at the head rebase the marks to the new version's epoch: a mark of `B' - 1` or later
    /// stays, an older one goes; the retired tag keeps them; an initial version linked into an
    /// empty list keeps a mark made before it.
    #[test]
    fn marks_survive_links_at_the_head_the_tag_and_the_initial_version() {
        let guard = &crossbeam_epoch::pin();
        let rec = MvtoRecord::absent(8);
        assert!(!rec.head.mark_read(5, guard));
        assert_eq!(
            marks(&rec, guard),
            (Mark::At(5), Mark::None),
            "base 0, empty list"
        );
        rec.materialize_initial(epoch_start(5), guard)
            .expect("linked");
        assert_eq!(
            marks(&rec, guard),
            (Mark::At(5), Mark::None),
            "base still 0"
        );

        write(&rec, 5, 1, guard);
        assert!(rec.head.claim(6, false, guard));
        assert_eq!(marks(&rec, guard), (Mark::At(5), Mark::At(6)));
        write(&rec, 6, 1, guard);
        assert_eq!(
            marks(&rec, guard),
            (Mark::At(5), Mark::At(6)),
            "base 6 keeps marks of 5 and later"
        );
        write(&rec, 7, 1, guard);
        assert_eq!(
            marks(&rec, guard),
            (Mark::None, Mark::At(6)),
            "a mark of 5 goes at base 7"
        );

        // A link below the head leaves the head word alone.
        write(&rec, 6, 2, guard);
        assert_eq!(marks(&rec, guard), (Mark::None, Mark::At(6)));

        let head = rec.head.load(Ordering::SeqCst);
        rec.head
            .compare_exchange(head, head.retired(), Ordering::SeqCst, Ordering::SeqCst)
            .expect("tagged");
        assert!(!rec.head.mark_read(7, guard));
        assert!(
            rec.head.load(Ordering::SeqCst).is_retired(),
            "a mark keeps the tag"
        );
        assert!(rec.head.clear_retired(Ordering::SeqCst).is_retired());
        let after = rec.head.load(Ordering::SeqCst);
        assert!(!after.is_retired());
        assert_eq!(
            after.marks(guard),
            (Mark::At(7), Mark::At(6)),
            "untagging keeps the marks"
        );
    }

    /// A mark too far above its base saturates: it blocks every omitter, and the next link at the
    /// head turns it into the largest epoch a mark can then hold.
    #[test]
    fn a_saturated_mark_blocks_omitters_until_the_next_link() {
        let guard = &crossbeam_epoch::pin();
        let rec = MvtoRecord::absent(8);
        write(&rec, 1, 1, guard);
        assert!(!rec.head.mark_read(400, guard));
        assert_eq!(marks(&rec, guard), (Mark::Saturated, Mark::None));
        assert!(rec.head.read_marked(400, guard));
        assert!(!rec.head.claim(400, false, guard));
        assert!(
            !rec.head.claim(1_000, false, guard),
            "saturated blocks any epoch"
        );
        write(&rec, 400, 1, guard);
        assert_eq!(marks(&rec, guard), (Mark::At(401), Mark::None));
        assert!(!rec.head.claim(400, false, guard));
        assert!(!rec.head.claim(401, false, guard));
        assert!(rec.head.claim(402, false, guard));
    }

    #[test]
    fn marks_round_trip_in_their_window_and_saturate_beyond() {
        for base in [0u64, 1, 7, 1_000] {
            for e in base.saturating_sub(1).max(1)..base + 300 {
                let v = encode(e, base).expect("e >= base - 1");
                match decode(v, base) {
                    Mark::At(m) => assert_eq!(m, e),
                    Mark::Saturated => assert!(e >= base + 253, "{e} saturated at base {base}"),
                    Mark::None => panic!("{e} at base {base} decoded to no mark"),
                }
            }
        }
        assert_eq!(encode(5, 7), None, "older than base - 1");
    }

    #[test]
    fn rebasing_keeps_what_active_transactions_ask_about() {
        // base 10 -> 12: marks of 11 and 12 (and 13) stay, 9 and 10 go (no active transaction
        // is older than 11 once a version of 12 is being linked).
        for (m, kept) in [(9, false), (10, false), (11, true), (12, true), (13, true)] {
            let v = encode(m, 10).expect("representable at base 10");
            let r = rebase(v, 10, 12);
            if kept {
                assert_eq!(decode(r, 12), Mark::At(m), "mark {m}");
            } else {
                assert_eq!(r, 0, "mark {m} dropped");
            }
        }
        // A saturated mark becomes the largest epoch a mark can hold, B' + 1.
        assert_eq!(decode(rebase(SATURATED, 10, 400), 400), Mark::At(401));
        assert_eq!(rebase(SATURATED, 10, 10), SATURATED);
        assert_eq!(rebase(0, 10, 12), 0);
    }
}
