//! [`DenseIndex`]: a pre-allocated array of records for keys `0..capacity`.
//!
//! The benchmark fast path (YCSB, SmallBank and TPC-C's fixed-size tables): every key in
//! `0..capacity` has its record from construction on, made by [`Record::absent`], and keeps it for
//! the index's lifetime. A lookup is a bounds check and an array access.
//!
//! Invariants:
//!
//! - **Stable references.** The records live in one `Box<[R]>` that is never resized, so a
//!   reference is valid as long as the index is borrowed; the epoch guard is not even needed.
//! - **Insert-if-absent is trivial.** The slot always exists, so [`Index::get_or_insert`] returns
//!   it with `created == false`; protocols track logical presence in their own version word.
//! - **No unlinking.** Records are never removed from the array, so [`Index::unlink`] returns
//!   `Ok(None)` and destroys nothing; they are dropped with the index.
//! - **No phantom stripes.** A phantom is a key appearing in or vanishing from a scanned range.
//!   Here the set of keys is fixed at construction: inserts and deletes are only logical, i.e.
//!   version changes of records that already exist. A scan visits *every* record in its range
//!   (absent ones included), so a protocol that validates the records it scanned, as Silo
//!   validates its read set, sees every logical insert or delete in the range as a changed
//!   version. That is why [`Index::phantom_stripes`] returns `None` and the scan is still
//!   serializable.
//! - **Bad keys are errors.** Keys `>= capacity` return [`Error::KeyOutOfRange`]. Scans clip their
//!   range to `0..capacity` (keys beyond it cannot exist, so there is nothing to visit).

use crossbeam_epoch::Guard;
use std::fmt;
use txlab_core::protocol::storage::{Entry, Index, Record, StripeBump};
use txlab_core::table::MAX_VALUE_SIZE;
use txlab_core::{Error, IndexKind, TableId};

/// Largest capacity a dense index accepts (the same bound as [`txlab_core::TableSpec::validate`]).
pub const MAX_DENSE_CAPACITY: u64 = 1 << 40;

/// A pre-allocated record array for keys `0..capacity` (see the module docs).
pub struct DenseIndex<R> {
    table: TableId,
    value_size: usize,
    records: Box<[R]>,
}

impl<R: Record> DenseIndex<R> {
    /// Allocates `capacity` records of `R::absent(value_size)` for `table`.
    ///
    /// Errors: [`Error::InvalidConfig`] if `value_size` is outside `1..=MAX_VALUE_SIZE`,
    /// `capacity` is outside `1..=2^40`, or the array cannot be allocated.
    pub fn new(table: TableId, value_size: usize, capacity: u64) -> Result<Self, Error> {
        if value_size == 0 || value_size > MAX_VALUE_SIZE {
            return Err(Error::invalid(
                "value_size",
                value_size,
                format!(
                    "dense index of table {}: value size must be in 1..={MAX_VALUE_SIZE} bytes",
                    table.0
                ),
            ));
        }
        if capacity == 0 || capacity > MAX_DENSE_CAPACITY {
            return Err(Error::invalid(
                "capacity",
                capacity,
                format!(
                    "dense index of table {}: capacity must be in 1..=2^40 keys",
                    table.0
                ),
            ));
        }
        let too_big = || {
            Error::invalid(
                "capacity",
                capacity,
                format!(
                    "dense index of table {}: could not allocate {capacity} records of {} bytes each",
                    table.0,
                    size_of::<R>()
                ),
            )
        };
        let len = usize::try_from(capacity).map_err(|_| too_big())?;
        let mut records = Vec::new();
        records.try_reserve_exact(len).map_err(|_| too_big())?;
        records.extend((0..len).map(|_| R::absent(value_size)));
        Ok(Self {
            table,
            value_size,
            records: records.into_boxed_slice(),
        })
    }
}

impl<R> DenseIndex<R> {
    /// Number of keys (`0..capacity` are valid).
    #[inline]
    pub fn capacity(&self) -> u64 {
        self.records.len() as u64
    }

    /// The fixed value size of the table's records.
    #[inline]
    pub fn value_size(&self) -> usize {
        self.value_size
    }

    /// The record of `key`, or [`Error::KeyOutOfRange`]. No guard is needed: dense records live
    /// as long as the index.
    #[inline(always)]
    pub fn record(&self, key: u64) -> Result<&R, Error> {
        usize::try_from(key)
            .ok()
            .and_then(|i| self.records.get(i))
            .ok_or(Error::KeyOutOfRange {
                table: self.table.0,
                key,
                capacity: self.capacity(),
            })
    }

    /// All records, in key order (record `i` belongs to key `i`).
    #[inline]
    pub fn records(&self) -> &[R] {
        &self.records
    }
}

impl<R: Record> Index<R> for DenseIndex<R> {
    #[inline]
    fn kind(&self) -> IndexKind {
        IndexKind::Dense {
            capacity: self.capacity(),
        }
    }

    #[inline]
    fn get<'g>(&'g self, key: u64, _guard: &'g Guard) -> Result<Option<&'g R>, Error> {
        self.record(key).map(Some)
    }

    #[inline(always)]
    fn get_or_insert<'g>(&'g self, key: u64, _guard: &'g Guard) -> Result<Entry<'g, R>, Error> {
        let record = self.record(key)?;
        Ok(Entry {
            record,
            created: false,
            bumped: None,
        })
    }

    #[inline]
    fn unlink(&self, key: u64, _record: &R, _guard: &Guard) -> Result<Option<StripeBump>, Error> {
        self.record(key)?;
        Ok(None)
    }

    fn scan<'g>(
        &'g self,
        lo: u64,
        hi: u64,
        _guard: &'g Guard,
        visit: &mut dyn FnMut(u64, &'g R) -> bool,
    ) -> Result<(), Error> {
        if lo > hi || lo >= self.capacity() {
            return Ok(());
        }
        let end = hi.min(self.capacity() - 1);
        // Both bounds are below the capacity, which fits in usize (checked at construction).
        for (i, record) in self.records[lo as usize..=end as usize].iter().enumerate() {
            if !visit(lo + i as u64, record) {
                break;
            }
        }
        Ok(())
    }

    #[inline]
    fn len(&self) -> usize {
        self.records.len()
    }

    #[inline]
    fn table(&self) -> TableId {
        self.table
    }

    #[inline]
    fn value_size(&self) -> usize {
        self.value_size
    }
}

impl<R> fmt::Debug for DenseIndex<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DenseIndex")
            .field("table", &self.table)
            .field("value_size", &self.value_size)
            .field("capacity", &self.records.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{Counted, ids, racing_inserts_agree};

    type Rec = Counted<{ ids::DENSE_BASIC }>;

    #[test]
    fn every_slot_exists_and_nothing_is_created_or_unlinked() {
        let index = DenseIndex::<Rec>::new(TableId(2), 16, 100).unwrap();
        assert_eq!(index.len(), 100);
        assert_eq!(index.kind(), IndexKind::Dense { capacity: 100 });
        assert!(index.phantom_stripes().is_none());
        let guard = crossbeam_epoch::pin();
        for k in [0, 1, 57, 99] {
            let got = index
                .get(k, &guard)
                .unwrap()
                .expect("dense slots always exist");
            assert_eq!(got.value_size, 16);
            let e = index.get_or_insert(k, &guard).unwrap();
            assert!(std::ptr::eq(got, e.record));
            assert!(!e.created);
            assert_eq!(e.bumped, None);
            assert_eq!(index.unlink(k, got, &guard).unwrap(), None);
            // Still there after the (no-op) unlink.
            assert!(std::ptr::eq(index.get(k, &guard).unwrap().unwrap(), got));
        }
        assert!(std::ptr::eq(index.record(5).unwrap(), &index.records()[5]));
    }

    #[test]
    fn keys_at_or_above_capacity_are_errors_naming_key_and_range() {
        let index = DenseIndex::<Rec>::new(TableId(4), 8, 10).unwrap();
        let guard = crossbeam_epoch::pin();
        let expected = Error::KeyOutOfRange {
            table: 4,
            key: 10,
            capacity: 10,
        };
        assert_eq!(index.get(10, &guard).unwrap_err(), expected);
        assert_eq!(index.get_or_insert(10, &guard).unwrap_err(), expected);
        let r = index.record(0).unwrap();
        assert_eq!(index.unlink(10, r, &guard).unwrap_err(), expected);
        let e = index.get(u64::MAX, &guard).unwrap_err();
        assert_eq!(
            e,
            Error::KeyOutOfRange {
                table: 4,
                key: u64::MAX,
                capacity: 10
            }
        );
        let msg = e.to_string();
        assert!(
            msg.contains(&u64::MAX.to_string()) && msg.contains("0..10"),
            "{msg}"
        );
    }

    #[test]
    fn bad_sizes_are_rejected_with_the_value_named() {
        let e = DenseIndex::<Rec>::new(TableId(0), 8, 0).unwrap_err();
        assert!(e.to_string().contains("capacity = 0"), "{e}");
        let e = DenseIndex::<Rec>::new(TableId(0), 8, MAX_DENSE_CAPACITY + 1).unwrap_err();
        assert!(
            e.to_string()
                .contains(&format!("capacity = {}", MAX_DENSE_CAPACITY + 1)),
            "{e}"
        );
        let e = DenseIndex::<Rec>::new(TableId(0), 0, 5).unwrap_err();
        assert!(e.to_string().contains("value_size = 0"), "{e}");
        let e = DenseIndex::<Rec>::new(TableId(0), MAX_VALUE_SIZE + 1, 5).unwrap_err();
        assert!(e.to_string().contains("value_size"), "{e}");
    }

    #[test]
    fn scans_are_ascending_clipped_and_stop_early() {
        let index = DenseIndex::<Rec>::new(TableId(0), 8, 20).unwrap();
        let guard = crossbeam_epoch::pin();
        let collect = |lo, hi, limit: usize| {
            let mut keys = Vec::new();
            index
                .scan(lo, hi, &guard, &mut |k, r| {
                    assert!(std::ptr::eq(r, &index.records()[k as usize]));
                    keys.push(k);
                    keys.len() < limit
                })
                .unwrap();
            keys
        };
        assert_eq!(collect(3, 7, usize::MAX), vec![3, 4, 5, 6, 7]);
        assert_eq!(collect(17, u64::MAX, usize::MAX), vec![17, 18, 19]);
        assert_eq!(collect(3, 100, 2), vec![3, 4]);
        assert!(collect(8, 7, usize::MAX).is_empty());
        assert!(collect(20, 30, usize::MAX).is_empty());
        assert_eq!(collect(0, 0, usize::MAX), vec![0]);
    }

    #[test]
    fn racing_threads_share_slots_and_never_create() {
        let index = DenseIndex::<Rec>::new(TableId(0), 8, 500).unwrap();
        assert_eq!(
            racing_inserts_agree(&index, 500, 4, false),
            0,
            "no stripes, no bumps"
        );
    }

    #[test]
    fn dropping_the_index_drops_every_record() {
        // This id is used by this test only, so the global counters are this index's.
        let index = DenseIndex::<Counted<{ ids::DENSE_BIG }>>::new(TableId(0), 8, 1000).unwrap();
        assert_eq!(Counted::<{ ids::DENSE_BIG }>::live(), 1000);
        drop(index);
        assert_eq!(Counted::<{ ids::DENSE_BIG }>::live(), 0);
        assert_eq!(Counted::<{ ids::DENSE_BIG }>::dropped(), 1000);
    }
}
