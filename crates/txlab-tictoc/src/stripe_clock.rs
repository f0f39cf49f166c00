//! Phantom stripes as TicToc-timestamped objects: one `StripeClock` per phantom stripe of an
//! ordered table, kept by TicToc next to the index's own stripe counters
//! (`txlab_core::protocol::storage::PhantomStripes`, which decide *which* stripe a key or range is on).
//!
//! TicToc (Yu et al., SIGMOD 2016) serializes transactions by their computed commit timestamps,
//! not by physical commit order, so a physical phantom check (Silo's: "the stripe's counter did
//! not move before I validated") is not enough: a transaction that creates a key after a scanner
//! validated could still pick a commit timestamp below the scanner's and be ordered before it,
//! although the scanner did not see the key. Here a stripe is treated as one more object with a
//! TicToc validity interval, whose "value" is the set of records in it that have ever been
//! written:
//!
//! - `version`: counts the *first writes* announced in the stripe. It plays the role a record's
//!   `wts` plays in validation: the identity of the set's current version. A first write installs
//!   the first version of a record that was never written (its locked word is absent and its
//!   history tag is 0): an insert or an upsert of a new key. The first writer announces before
//!   computing its commit timestamp.
//! - `scan_rts`: the largest commit timestamp of a scanner that validated the stripe: the read
//!   timestamp of the set. A first writer commits strictly above it.
//!
//! ```text
//! scanner      before traversal:  v0 = version                           (SeqCst load)
//!              at validation:     scan_rts = max(scan_rts, commit_ts)    (SeqCst load / fetch_max)
//!                                 abort unless version == v0             (SeqCst load)
//! first writer after locking:     version += 1                           (SeqCst fetch_add)
//!                                 commit_ts > scan_rts                   (SeqCst load)
//! ```
//!
//! **Why it suffices** (the store-load pattern; all four accesses are `SeqCst`, so they lie in one
//! total order consistent with program order). Let scanner `S` commit at `c`, and let `W` be the
//! first writer of a record `r` with a key in a stripe `S` scanned, at commit timestamp `w <= c`.
//! `W` loaded a `scan_rts` below `w <= c`; `scan_rts` only grows, so that value is earlier in its
//! modification order than the value `S`'s raise wrote (or, if `S` found `scan_rts >= c` already
//! and skipped the RMW, than the write its load read): `W`'s load is coherence-ordered before it,
//! hence earlier in the total order (C++20 [atomics.order]), and `W`'s announce, sequenced before
//! that load, earlier still. `S`'s final load of `version` follows its raise, so it sees the
//! announce: `S` aborts, unless its first load (`v0`) already saw the announce. (If `S` announced
//! in the stripe itself, it expects `v0 + 1` only when its own `fetch_add` returned `v0`, i.e. no
//! other announce came between; any other announce after `v0` still leaves the counter beyond
//! what `S` expects.) In that case the
//! announce happens-before `S`'s traversal (a `SeqCst` RMW and a `SeqCst` load reading it, or a
//! later RMW of the counter, synchronize), and `W` found `r` in the index before announcing, so
//! the link of `r` happens-before the traversal too: `S` visits `r`, and its read of `r` is
//! validated by TicToc's record rules. So if `S` commits without visiting `r`, `r`'s first write
//! has a timestamp above `c`, and so has every later version of `r` (a record's timestamps
//! strictly increase, `crate::word`): at `c`, `r` is still in its never-written absent state,
//! which is what `S` saw by not seeing it. Deletes and re-creations after a delete need no
//! announce, for the same reason: they are later versions of a record whose first write already
//! ordered every scanner that missed the record. Unlinking a deleted record (`crate::retire`)
//! changes the set too: the retirer announces on the stripe and raises the stripe's retire floor
//! first, and the key's next record starts never-written (tag 0), so its first write announces
//! again.
//!
//! A raise by a scanner that then aborts only pushes later first writers up (as an `rts`
//! extension does for records); an announce by a first writer that then aborts only aborts
//! concurrent scanners (a false abort, never a wrong commit). Linking an absent record in the
//! index (inserts, point reads of missing keys) announces nothing: the record's state is "never
//! written" either way.

use crossbeam_utils::CachePadded;
use txlab_core::protocol::storage::PhantomStripes;
use txlab_core::protocol::sync::{AtomicU64, Ordering};

/// The TicToc state of one phantom stripe (module docs).
#[derive(Debug, Default)]
pub(crate) struct StripeClock {
    /// First writes announced in the stripe: the identity of the current version of its set of
    /// written records.
    version: AtomicU64,
    /// The largest commit timestamp of a scanner that validated the stripe.
    scan_rts: AtomicU64,
}

/// One [`StripeClock`] per stripe of an ordered table, indexed like the table's
/// `PhantomStripes` (`stripe_of`, `for_range`).
#[derive(Debug)]
pub(crate) struct StripeClocks {
    clocks: Box<[CachePadded<StripeClock>]>,
}

impl StripeClocks {
    /// Clocks for the stripes of one table's `PhantomStripes`, all at version 0 and `scan_rts`
    /// 0.
    pub(crate) fn new(stripes: &PhantomStripes) -> Self {
        Self {
            clocks: (0..stripes.len())
                .map(|_| CachePadded::new(StripeClock::default()))
                .collect(),
        }
    }

    #[inline]
    fn clock(&self, stripe: u32) -> &StripeClock {
        &self.clocks[stripe as usize]
    }

    /// The stripe's version (first writes announced so far); a scanner reads it before traversing.
    #[inline]
    pub(crate) fn version(&self, stripe: u32) -> u64 {
        self.clock(stripe).version.load(Ordering::SeqCst)
    }

    /// A first writer announces a first write in the stripe; returns the version before the
    /// announce (so a transaction can recognise its own announce against its own scan).
    #[inline]
    pub(crate) fn announce_first_write(&self, stripe: u32) -> u64 {
        self.clock(stripe).version.fetch_add(1, Ordering::SeqCst)
    }

    /// The largest commit timestamp a scanner validated the stripe at; a first writer that
    /// announced must commit above it.
    #[inline]
    pub(crate) fn scan_rts(&self, stripe: u32) -> u64 {
        self.clock(stripe).scan_rts.load(Ordering::SeqCst)
    }

    /// A scanner committing at `commit_ts` that read the stripe at `version`: raises `scan_rts` to
    /// at least `commit_ts`, then returns whether no first write was announced since.
    #[inline]
    pub(crate) fn validate_scan(&self, stripe: u32, version: u64, commit_ts: u64) -> bool {
        let clock = self.clock(stripe);
        // A SeqCst load that already sees `commit_ts` or more serves as the raise: the write it
        // reads precedes it in the total order, so a first writer's load ordered after it sees as
        // much.
        if clock.scan_rts.load(Ordering::SeqCst) < commit_ts {
            clock.scan_rts.fetch_max(commit_ts, Ordering::SeqCst);
        }
        clock.version.load(Ordering::SeqCst) == version
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_write_after_the_scan_read_invalidates_it() {
        let c = StripeClocks::new(&PhantomStripes::new(0));
        let v0 = c.version(7);
        assert!(c.validate_scan(7, v0, 5), "nothing changed");
        assert_eq!(c.scan_rts(7), 5, "the validation raised scan_rts");
        assert_eq!(c.announce_first_write(7), v0);
        assert!(!c.validate_scan(7, v0, 6), "a first write was announced");
        assert!(c.validate_scan(7, v0 + 1, 6));
        assert_eq!(c.version(8), 0, "stripes are independent");
    }

    #[test]
    fn scan_rts_only_grows() {
        let c = StripeClocks::new(&PhantomStripes::new(0));
        assert!(c.validate_scan(3, 0, 10));
        assert!(c.validate_scan(3, 0, 4));
        assert_eq!(c.scan_rts(3), 10);
        assert!(c.validate_scan(3, 0, 12));
        assert_eq!(c.scan_rts(3), 12);
    }
}
