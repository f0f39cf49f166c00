//! The storage trait: an index from `u64` keys to records of a protocol's own type.
//!
//! Invariants every [`Index`] implementation keeps:
//!
//! 0. **One collector.** Guards come from crossbeam-epoch's default collector
//!    (`crossbeam_epoch::pin()`, or a `LocalHandle` registered with
//!    `crossbeam_epoch::default_collector()`); reclaiming indexes reject others with
//!    [`Error::Misuse`].
//! 1. **Stable references.** A record never moves once published. A reference returned by
//!    [`Index::get`] or [`Index::get_or_insert`] stays valid while the `crossbeam_epoch::Guard`
//!    it was obtained under is pinned, even if the record is unlinked meanwhile.
//! 2. **Insert-if-absent.** [`Index::get_or_insert`] either returns the record already mapped to
//!    the key or publishes a new one made by [`Record::absent`], atomically: two racing callers get
//!    the same record.
//! 3. **Deletion is logical.** Protocols mark a record deleted in their own version word; the index
//!    keeps it. [`Index::unlink`] later removes the mapping, and the record is destroyed only after
//!    every guard pinned before the unlink has been dropped (epoch-based reclamation).
//! 4. **Phantom stripes.** Ordered indexes expose [`PhantomStripes`]: a small array of version
//!    counters, one per stripe of the key space. Every structural change (a new key linked, a key
//!    unlinked) bumps the stripe of its key *after* the change is visible. A scanner reads the
//!    stripes of its range *before* traversing and re-checks them at commit; an unchanged stripe
//!    proves no key appeared in or vanished from that part of the range (Silo's node-set
//!    validation, with stripes in place of tree nodes).

use crate::error::Error;
use crate::sync::{AtomicU64, Ordering};
use crate::table::{IndexKind, TableId};
use crossbeam_utils::CachePadded;

/// The epoch guard index operations take (re-exported so index implementers need not depend on
/// crossbeam-epoch directly). Engines pin it from crossbeam-epoch's default collector.
pub use crossbeam_epoch::Guard;

/// A protocol's per-key record type (version word(s) plus value).
pub trait Record: Send + Sync + 'static {
    /// A new, logically absent record for a table whose values are `value_size` bytes.
    fn absent(value_size: usize) -> Self;
}

/// What [`Index::get_or_insert`] returns.
#[derive(Debug)]
pub struct Entry<'g, R> {
    /// The record mapped to the key.
    pub record: &'g R,
    /// Whether this call published it.
    pub created: bool,
    /// If the call published a record in an index with phantom stripes: the stripe bumped and its
    /// value before the bump (so a transaction can tell its own insert from someone else's).
    pub bumped: Option<StripeBump>,
}

/// One stripe counter increment made by an insert or unlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StripeBump {
    /// The stripe.
    pub stripe: u32,
    /// Its version before the increment.
    pub before: u64,
}

/// An index from `u64` keys to records of type `R` (see the module docs for the invariants).
pub trait Index<R: Record>: Send + Sync {
    /// The kind of index (for messages and capability checks).
    fn kind(&self) -> IndexKind;

    /// The record mapped to `key`, if any.
    fn get<'g>(&'g self, key: u64, guard: &'g Guard) -> Result<Option<&'g R>, Error>;

    /// The record mapped to `key`, publishing a new absent one if there is none.
    fn get_or_insert<'g>(&'g self, key: u64, guard: &'g Guard) -> Result<Entry<'g, R>, Error>;

    /// Removes the mapping `key -> record` if `key` still maps to exactly this record, deferring
    /// the record's destruction until no pinned guard can see it. Returns the stripe bump if the
    /// index has phantom stripes and it removed something; `Ok(None)` otherwise (including for
    /// indexes whose records live as long as the index, like the dense array).
    fn unlink(&self, key: u64, record: &R, guard: &Guard) -> Result<Option<StripeBump>, Error>;

    /// Visits the records with keys in `lo..=hi` in ascending key order until `visit` returns
    /// `false`. Indexes without order return [`Error::ScanUnsupported`].
    fn scan<'g>(
        &'g self,
        lo: u64,
        hi: u64,
        guard: &'g Guard,
        visit: &mut dyn FnMut(u64, &'g R) -> bool,
    ) -> Result<(), Error>;

    /// The phantom stripes, for indexes that support scans.
    fn phantom_stripes(&self) -> Option<&PhantomStripes> {
        None
    }

    /// Approximate number of keys mapped (dense: the capacity).
    fn len(&self) -> usize;

    /// Whether no key is mapped.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The table this index serves (for error messages).
    fn table(&self) -> TableId;

    /// The value size, in bytes, of the records this index creates (`R::absent(value_size)`).
    /// Engines copy values of their schema's size in and out of records, so it must equal the
    /// table's `TableSpec::value_size`; `Tables::with_custom` checks that.
    fn value_size(&self) -> usize;
}

/// Version counters over stripes of the key space, for phantom detection in range scans.
///
/// Key `k` belongs to bucket `k >> shift`; buckets hash onto `STRIPES` counters. A scan over
/// `lo..=hi` covers buckets `lo>>shift ..= hi>>shift`; when that is more buckets than there are
/// stripes it covers all of them. Hash collisions only cause false aborts, never missed phantoms.
#[derive(Debug)]
pub struct PhantomStripes {
    shift: u32,
    counters: Box<[CachePadded<AtomicU64>]>,
}

impl PhantomStripes {
    /// Number of stripes.
    pub const STRIPES: usize = 256;

    /// Stripes whose buckets span `1 << shift` consecutive keys.
    pub fn new(shift: u32) -> Self {
        let counters = (0..Self::STRIPES)
            .map(|_| CachePadded::new(AtomicU64::new(0)))
            .collect();
        Self {
            shift: shift.min(63),
            counters,
        }
    }

    #[inline]
    fn stripe_of_bucket(bucket: u64) -> u32 {
        // Fibonacci hashing onto 256 stripes.
        (bucket.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u32
    }

    /// The stripe of a key.
    #[inline]
    pub fn stripe_of(&self, key: u64) -> u32 {
        Self::stripe_of_bucket(key >> self.shift)
    }

    /// Records a structural change at `key`; call after the change is visible to readers.
    pub fn bump(&self, key: u64) -> StripeBump {
        let stripe = self.stripe_of(key);
        let before = self.counters[stripe as usize].fetch_add(1, Ordering::SeqCst);
        StripeBump { stripe, before }
    }

    /// The current version of a stripe (read before a scan and again at validation).
    #[inline]
    pub fn version(&self, stripe: u32) -> u64 {
        self.counters[stripe as usize].load(Ordering::SeqCst)
    }

    /// Calls `f` with every stripe covering `lo..=hi` (possibly with repeats).
    pub fn for_range(&self, lo: u64, hi: u64, mut f: impl FnMut(u32)) {
        if lo > hi {
            return;
        }
        let (b0, b1) = (lo >> self.shift, hi >> self.shift);
        if b1 - b0 >= Self::STRIPES as u64 {
            (0..Self::STRIPES as u32).for_each(f);
        } else {
            (b0..=b1).for_each(|b| f(Self::stripe_of_bucket(b)));
        }
    }
}

#[cfg(all(test, not(any(txlab_loom, txlab_shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn a_range_covers_the_stripe_of_every_key_in_it() {
        let s = PhantomStripes::new(4);
        for (lo, hi) in [
            (0u64, 0u64),
            (5, 300),
            (1000, 1015),
            (0, u64::MAX),
            (77, 77 + 16 * 300),
        ] {
            let mut covered = std::collections::HashSet::new();
            s.for_range(lo, hi, |st| {
                covered.insert(st);
            });
            for k in [lo, hi, lo + (hi - lo) / 2, lo.saturating_add(1).min(hi)] {
                assert!(covered.contains(&s.stripe_of(k)), "key {k} of {lo}..={hi}");
            }
        }
    }

    #[test]
    fn bump_reports_the_previous_version() {
        let s = PhantomStripes::new(0);
        let b1 = s.bump(42);
        let b2 = s.bump(42);
        assert_eq!(b1.stripe, b2.stripe);
        assert_eq!(b2.before, b1.before + 1);
        assert_eq!(s.version(b1.stripe), b1.before + 2);
    }
}
