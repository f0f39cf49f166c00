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
//! 4. **Phantom stripes.** Ordered indexes expose [`PhantomStripes`]: an array of version
//!    counters, one per stripe of the key space, laid out by the table's [`StripeLayout`]. Every
//!    structural change (a new key linked, a key unlinked) bumps the stripe of its key *after* the
//!    change is visible (a `SeqCst` read-modify-write that follows the index's link or mark), and
//!    [`Index::get_or_insert`] returns a new key's record only after that bump: a call that finds
//!    the record while its creator has linked it and not yet bumped makes the bump itself, before
//!    returning, so that the bump precedes in the `SeqCst` order whatever the caller does with the
//!    record next. A scanner loads the stripes covering its range (`SeqCst`) *before* traversing
//!    and re-checks them at commit; an unchanged stripe proves no key appeared in or vanished from
//!    that part of the range (Silo's node-set validation, with stripes in place of tree nodes): a
//!    change whose bump the first load saw was visible to the traversal, and one whose bump it did
//!    not see comes after it in the `SeqCst` order, so a re-check after the bump sees the version
//!    move. A re-check can come before a new key's bump only while the key's record is still
//!    unwritten (its absent state, what the scan saw by not seeing it): protocols write only
//!    records that `get_or_insert` returned, so any write of it follows the bump. A layout only
//!    decides which keys share a stripe (false conflicts); the covering invariant of
//!    [`PhantomStripes`] is what every layout keeps.

use crate::error::Error;
use crate::protocol::sync::{AtomicU64, Ordering};
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
    /// If the call bumped a phantom stripe for the record's link: the stripe and its value before
    /// the bump (so a transaction can tell its own insert from someone else's). The creator bumps,
    /// and so does a call that found the record with its creator's bump still pending (module
    /// docs, invariant 4); a call that finds the bump done gets `None`.
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

/// How an ordered table's keys are grouped onto phantom stripes ([`PhantomStripes`]).
///
/// A key's *partition* is `key >> partition_shift`; partition `p` owns the block of
/// `per_partition` stripes numbered from `(p % partitions) * per_partition`, so keys of distinct
/// partitions below `partitions` never share a stripe. Within its partition a key's *bucket* is
/// `(key mod 2^partition_shift) >> bucket_shift`, and buckets hash (Fibonacci hashing) onto the
/// block's stripes. The [`Default`] layout is one partition of 256 stripes over buckets of 64
/// keys.
///
/// A workload whose scans stay within a prefix of the key (TPC-C's scans never leave a district)
/// declares that prefix as the partition: scans of one partition then read only its stripes, and
/// inserts or deletes elsewhere never change them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StripeLayout {
    /// Keys with equal `key >> partition_shift` form one partition, `1..=64` (64: all keys are
    /// one partition).
    pub partition_shift: u32,
    /// Partitions with stripes of their own, `1..=MAX_STRIPES / per_partition`; partition `p`
    /// uses the block of `p % partitions`.
    pub partitions: u32,
    /// Stripes per partition, a power of two, `1..=MAX_STRIPES`.
    pub per_partition: u32,
    /// Buckets of `2^bucket_shift` consecutive keys within a partition hash onto its stripes,
    /// `0..=63`.
    pub bucket_shift: u32,
}

impl Default for StripeLayout {
    fn default() -> Self {
        Self {
            partition_shift: 64,
            partitions: 1,
            per_partition: PhantomStripes::STRIPES as u32,
            bucket_shift: 6,
        }
    }
}

impl StripeLayout {
    /// Most stripes one table may have (`partitions * per_partition`).
    pub const MAX_STRIPES: u32 = 1 << 16;

    /// One stripe for each of `partitions` partitions of keys `key >> partition_shift`.
    pub fn partitioned(partition_shift: u32, partitions: u32) -> Self {
        Self {
            partition_shift,
            partitions,
            per_partition: 1,
            bucket_shift: 0,
        }
    }

    /// The same partitions with `per_partition` stripes each, over buckets of `2^bucket_shift`
    /// keys.
    pub fn with_buckets(self, bucket_shift: u32, per_partition: u32) -> Self {
        Self {
            bucket_shift,
            per_partition,
            ..self
        }
    }

    /// The number of stripes, `partitions * per_partition`.
    pub fn stripes(&self) -> usize {
        self.partitions as usize * self.per_partition as usize
    }

    /// Checks the fields' ranges; the error names the field, its value and what is accepted.
    pub fn validate(&self) -> Result<(), Error> {
        if !(1..=64).contains(&self.partition_shift) {
            return Err(Error::invalid(
                "partition_shift",
                self.partition_shift,
                "a shift in 1..=64",
            ));
        }
        if self.bucket_shift > 63 {
            return Err(Error::invalid(
                "bucket_shift",
                self.bucket_shift,
                "a shift in 0..=63",
            ));
        }
        if !self.per_partition.is_power_of_two() || self.per_partition > Self::MAX_STRIPES {
            return Err(Error::invalid(
                "per_partition",
                self.per_partition,
                format!("a power of two in 1..={}", Self::MAX_STRIPES),
            ));
        }
        let most = Self::MAX_STRIPES / self.per_partition;
        if !(1..=most).contains(&self.partitions) {
            return Err(Error::invalid(
                "partitions",
                self.partitions,
                format!(
                    "1..={most} with {} stripes per partition (at most {} stripes)",
                    self.per_partition,
                    Self::MAX_STRIPES
                ),
            ));
        }
        Ok(())
    }
}

/// Version counters over stripes of the key space, for phantom detection in range scans.
///
/// Keys map onto stripes by a [`StripeLayout`]: partition `key >> partition_shift` picks a block
/// of stripes, the key's bucket within the partition picks one stripe of the block.
///
/// **Covering invariant.** For every `lo <= k <= hi`, [`for_range`](Self::for_range)`(lo, hi)`
/// calls its function with [`stripe_of`](Self::stripe_of)`(k)`: a range inside one partition
/// covers the stripes of its buckets (all of the block once it spans as many buckets as the
/// block has stripes); a range over several partitions covers the whole blocks of all of them.
/// Together with the bump order of invariant 4 ([module docs](self)) this is why a scan that
/// validated its stripes unchanged saw every key linked into or unlinked from its range: such a
/// change bumps `stripe_of(key)` after it is visible, the scanner loaded that stripe before its
/// traversal, so either the traversal saw the change or the stripe's version moved after the
/// load and validation sees it. Keys sharing a stripe (a bucket hash collision, partitions equal
/// modulo `partitions`) only cause false aborts, never missed phantoms.
#[derive(Debug)]
pub struct PhantomStripes {
    layout: StripeLayout,
    /// `log2(layout.per_partition)`.
    per_bits: u32,
    counters: Box<[CachePadded<AtomicU64>]>,
}

impl PhantomStripes {
    /// Number of stripes of the [`Default`] layout (and of [`PhantomStripes::new`]).
    pub const STRIPES: usize = 256;

    /// The default layout's 256 stripes over buckets of `1 << shift` consecutive keys (a shift
    /// above 63 is taken as 63).
    pub fn new(shift: u32) -> Self {
        Self::build(StripeLayout {
            bucket_shift: shift.min(63),
            ..StripeLayout::default()
        })
    }

    /// Stripes laid out by `layout`.
    ///
    /// Errors: [`Error::InvalidConfig`] naming the field of `layout` out of range.
    pub fn with_layout(layout: StripeLayout) -> Result<Self, Error> {
        layout.validate()?;
        Ok(Self::build(layout))
    }

    fn build(layout: StripeLayout) -> Self {
        let counters = (0..layout.stripes())
            .map(|_| CachePadded::new(AtomicU64::new(0)))
            .collect();
        Self {
            layout,
            per_bits: layout.per_partition.trailing_zeros(),
            counters,
        }
    }

    /// The layout.
    #[inline]
    pub fn layout(&self) -> StripeLayout {
        self.layout
    }

    /// The number of stripes (stripes are `0..len()`).
    #[inline]
    pub fn len(&self) -> usize {
        self.counters.len()
    }

    /// Always `false`: every layout has at least one stripe.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.counters.is_empty()
    }

    /// The partition of `key`, not yet reduced modulo `partitions`.
    #[inline]
    fn partition(&self, key: u64) -> u64 {
        key.checked_shr(self.layout.partition_shift).unwrap_or(0)
    }

    /// The bucket of `key` within its partition.
    #[inline]
    fn bucket(&self, key: u64) -> u64 {
        let within = match 1u64.checked_shl(self.layout.partition_shift) {
            Some(size) => key & (size - 1),
            None => key,
        };
        within >> self.layout.bucket_shift
    }

    /// The first stripe of partition `p`'s block.
    #[inline]
    fn block(&self, p: u64) -> u32 {
        ((p % u64::from(self.layout.partitions)) as u32) << self.per_bits
    }

    /// The stripe within a block of bucket `b` (Fibonacci hashing onto the block).
    #[inline]
    fn in_block(&self, b: u64) -> u32 {
        b.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .checked_shr(64 - self.per_bits)
            .unwrap_or(0) as u32
    }

    /// The stripe of a key.
    #[inline]
    pub fn stripe_of(&self, key: u64) -> u32 {
        self.block(self.partition(key)) + self.in_block(self.bucket(key))
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

    /// Calls `f` with every stripe covering `lo..=hi` (the covering invariant in the type's docs;
    /// a stripe may come more than once).
    pub fn for_range(&self, lo: u64, hi: u64, mut f: impl FnMut(u32)) {
        if lo > hi {
            return;
        }
        let per = self.layout.per_partition;
        let (p0, p1) = (self.partition(lo), self.partition(hi));
        if p0 == p1 {
            let block = self.block(p0);
            let (b0, b1) = (self.bucket(lo), self.bucket(hi));
            if b1 - b0 >= u64::from(per) {
                (block..block + per).for_each(f);
            } else {
                (b0..=b1).for_each(|b| f(block + self.in_block(b)));
            }
        } else if p1 - p0 >= u64::from(self.layout.partitions) {
            (0..self.len() as u32).for_each(f);
        } else {
            for p in p0..=p1 {
                let block = self.block(p);
                (block..block + per).for_each(&mut f);
            }
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

    /// A layout over small numbers, so that ranges often cross buckets and partitions.
    fn small_layout() -> impl proptest::strategy::Strategy<Value = StripeLayout> {
        use proptest::prelude::*;
        (1u32..=12, 1u32..=6, 0u32..=3, 0u32..=4).prop_map(|(ps, parts, per_bits, bs)| {
            StripeLayout::partitioned(ps, parts).with_buckets(bs, 1 << per_bits)
        })
    }

    proptest::proptest! {
        /// The covering invariant: every key of a range is on a stripe the range covers, for any
        /// layout, including ranges across partitions and partitions beyond `partitions`.
        #[test]
        fn every_layout_covers_the_stripe_of_every_key_in_a_range(
            layout in small_layout(),
            lo in 0u64..20_000,
            len in 0u64..3_000,
        ) {
            let s = PhantomStripes::with_layout(layout).unwrap();
            let hi = lo + len;
            let mut covered = std::collections::HashSet::new();
            s.for_range(lo, hi, |st| {
                covered.insert(st);
            });
            proptest::prop_assert!(covered.iter().all(|&st| (st as usize) < s.len()));
            for k in lo..=hi {
                proptest::prop_assert!(covered.contains(&s.stripe_of(k)), "key {} of {}..={}", k, lo, hi);
            }
        }

        /// Partitions below `partitions` are disjoint: a range inside one partition covers no
        /// stripe of any key of another.
        #[test]
        fn a_range_in_one_partition_covers_no_stripe_of_another(
            layout in small_layout(),
            p in 0u64..6,
            q in 0u64..6,
            lo_off in 0u64..4096,
            len in 0u64..4096,
            key_off in 0u64..4096,
        ) {
            let s = PhantomStripes::with_layout(layout).unwrap();
            let parts = u64::from(layout.partitions);
            proptest::prop_assume!(p % parts != q % parts);
            let size = 1u64 << layout.partition_shift;
            let lo = (p << layout.partition_shift) + lo_off % size;
            let hi = lo + len.min((p + 1) * size - 1 - lo);
            let other = (q << layout.partition_shift) + key_off % size;
            let mut covered = Vec::new();
            s.for_range(lo, hi, |st| covered.push(st));
            proptest::prop_assert!(!covered.contains(&s.stripe_of(other)));
        }
    }

    #[test]
    fn the_default_layout_keeps_256_hashed_stripes() {
        let s = PhantomStripes::new(6);
        assert_eq!(s.len(), PhantomStripes::STRIPES);
        assert_eq!(s.layout(), StripeLayout::default());
        for k in [0u64, 63, 64, 1 << 40, u64::MAX] {
            let expected = ((k >> 6).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u32;
            assert_eq!(s.stripe_of(k), expected, "key {k}");
        }
        let mut n = 0;
        s.for_range(0, u64::MAX, |_| n += 1);
        assert_eq!(n, PhantomStripes::STRIPES);
    }

    #[test]
    fn bad_layouts_are_rejected_with_the_field_named() {
        let ok = StripeLayout::partitioned(32, 160);
        assert!(ok.validate().is_ok());
        assert_eq!(PhantomStripes::with_layout(ok).unwrap().len(), 160);
        for (bad, field) in [
            (StripeLayout::partitioned(0, 4), "partition_shift = 0"),
            (StripeLayout::partitioned(65, 4), "partition_shift = 65"),
            (StripeLayout::partitioned(32, 0), "partitions = 0"),
            (
                StripeLayout::partitioned(32, 1 << 17),
                "partitions = 131072",
            ),
            (ok.with_buckets(64, 1), "bucket_shift = 64"),
            (ok.with_buckets(4, 3), "per_partition = 3"),
            (ok.with_buckets(4, 1024), "partitions = 160"),
        ] {
            let e = PhantomStripes::with_layout(bad).unwrap_err();
            assert!(e.to_string().contains(field), "{field}: {e}");
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
