//! [`HashIndex`]: a concurrent hash index over arbitrary keys, built from sharded locked maps.
//!
//! Design: `2^k` shards, each a `std` `RwLock` (imported through `txlab_core::protocol::sync`, so shuttle and loom can schedule it) around a `std` [`HashMap`] from key to a
//! raw pointer to a heap-allocated record. A key's shard is picked from the top bits of its hash,
//! so shards stay balanced while the inner map uses the low bits. Lookups take the shard's read
//! lock, inserts and unlinks its write lock; the locks are held only for the map operation, never
//! while the caller uses a record.
//!
//! Invariants:
//!
//! - **Stable references.** A record is allocated once (`Box::into_raw`) and never moved; the map
//!   stores only its address, so rehashing moves pointers, not records.
//! - **Insert-if-absent.** [`HashIndex::get_or_insert`] re-checks under the write lock, so of two
//!   racing callers exactly one allocates and publishes the record and reports `created`; the
//!   other gets the same address.
//! - **Epoch-deferred destruction.** [`HashIndex::unlink`] removes the mapping under the write
//!   lock only if it still points at the given record, then hands the record to
//!   [`Guard::defer_unchecked`]: it is destroyed once every guard pinned before the unlink is gone,
//!   so readers that found it earlier keep a valid reference.
//! - **No leaks.** Dropping the index frees every record still mapped (unlinked ones are owned by
//!   their deferred destructor).
//! - **No order.** Scans return [`Error::ScanUnsupported`]; there are no phantom stripes.
//!
//! Why locks rather than a lock-free table: the shard locks are uncontended on the read path in
//! practice (a read lock is one atomic increment and decrement), records never move so no
//! lock-free resizing scheme is needed for stable addresses, and reclamation of unlinked records
//! goes through the same crossbeam-epoch guard the protocols already hold. A lock-free design
//! would buy little on top of that for much more unsafe code.

use crate::guard_check::check_default_collector;
use crossbeam_epoch::Guard;
use std::borrow::Borrow;
use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::ptr::NonNull;
use txlab_core::protocol::storage::{Entry, Index, Record, StripeBump};
use txlab_core::protocol::sync::{IgnorePoison, RwLock};
use txlab_core::{Error, IndexKind, TableId};

/// Default number of shards (a power of two; enough to keep 2–64 threads off each other's locks).
pub const DEFAULT_HASH_SHARDS: usize = 64;

/// Largest shard count [`HashIndex::with_shards`] accepts.
pub const MAX_HASH_SHARDS: usize = 1 << 16;

/// The address of a record owned by a [`HashIndex`].
struct RecordPtr<R>(NonNull<R>);

// SAFETY: a `RecordPtr` is an owning pointer to an `R` (created by `Box::into_raw`, freed exactly
// once by the index's drop or by the deferred destructor of `unlink`). Sending it to another thread
// moves or shares an `R`, which `R: Send + Sync` allows.
unsafe impl<R: Send + Sync> Send for RecordPtr<R> {}
// SAFETY: as above; through `&RecordPtr` other threads only obtain `&R`, which `R: Sync` allows.
unsafe impl<R: Send + Sync> Sync for RecordPtr<R> {}

impl<R> Clone for RecordPtr<R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R> Copy for RecordPtr<R> {}

/// One shard: a locked map from key to record address.
type Shard<K, R, S> = RwLock<HashMap<K, RecordPtr<R>, S>>;

/// A concurrent hash index from keys `K` to records `R` (see the module docs).
///
/// `S` is the hasher builder; the default is `std`'s DoS-resistant [`RandomState`].
pub struct HashIndex<K, R, S = RandomState> {
    table: TableId,
    value_size: usize,
    /// Right shift that maps a 64-bit hash onto a shard index (`64 - log2(shards)`).
    shard_shift: u32,
    hasher: S,
    shards: Box<[Shard<K, R, S>]>,
}

impl<K, R> HashIndex<K, R, RandomState>
where
    K: Hash + Eq + Clone + Send + Sync,
    R: Record,
{
    /// An empty index for `table` with [`DEFAULT_HASH_SHARDS`] shards.
    pub fn new(table: TableId, value_size: usize) -> Self {
        Self::build(table, value_size, DEFAULT_HASH_SHARDS, RandomState::new())
    }

    /// An empty index with `shards` shards, a power of two in `1..=MAX_HASH_SHARDS`.
    pub fn with_shards(table: TableId, value_size: usize, shards: usize) -> Result<Self, Error> {
        Self::with_shards_and_hasher(table, value_size, shards, RandomState::new())
    }
}

impl<K, R, S> HashIndex<K, R, S>
where
    K: Hash + Eq + Clone + Send + Sync,
    R: Record,
    S: BuildHasher + Clone,
{
    /// An empty index with `shards` shards (a power of two in `1..=MAX_HASH_SHARDS`) hashing
    /// with `hasher`.
    pub fn with_shards_and_hasher(
        table: TableId,
        value_size: usize,
        shards: usize,
        hasher: S,
    ) -> Result<Self, Error> {
        if !shards.is_power_of_two() || shards > MAX_HASH_SHARDS {
            return Err(Error::invalid(
                "shards",
                shards,
                format!(
                    "hash index of table {}: a power of two in 1..={MAX_HASH_SHARDS}",
                    table.0
                ),
            ));
        }
        Ok(Self::build(table, value_size, shards, hasher))
    }

    fn build(table: TableId, value_size: usize, shards: usize, hasher: S) -> Self {
        let shard_bits = shards.trailing_zeros();
        let shards = (0..shards)
            .map(|_| RwLock::new(HashMap::with_hasher(hasher.clone())))
            .collect();
        // With one shard the shift is 64, which `checked_shr` turns into index 0.
        Self {
            table,
            value_size,
            shard_shift: 64 - shard_bits,
            hasher,
            shards,
        }
    }

    #[inline]
    fn shard_of<Q: Hash + ?Sized>(&self, key: &Q) -> &Shard<K, R, S> {
        let hash = self.hasher.hash_one(key);
        let index = hash.checked_shr(self.shard_shift).unwrap_or(0) as usize;
        &self.shards[index]
    }

    /// The record mapped to `key`, if any. The reference is valid while `guard` stays pinned.
    ///
    /// Errors: [`Error::Misuse`] if `guard` is not from crossbeam-epoch's default collector.
    #[inline]
    pub fn get<'g, Q>(&'g self, key: &Q, guard: &'g Guard) -> Result<Option<&'g R>, Error>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        check_default_collector(guard)?;
        let found = self.shard_of(key).read().ignore_poison().get(key).copied();
        // SAFETY: the pointer was mapped while we held the read lock, so the record had not been
        // unlinked before this point; an unlink from now on defers its destruction until `guard`
        // (pinned on the default collector, checked above) is dropped, and dropping the index
        // needs `&mut self`, which `'g` excludes. The record is never mutated through the pointer.
        Ok(found.map(|p| unsafe { p.0.as_ref() }))
    }

    /// The record mapped to `key`, publishing a new `R::absent(value_size)` if there is none.
    /// Returns `(record, created)`; of racing callers exactly one sees `created == true`.
    ///
    /// Errors: [`Error::Misuse`] if `guard` is not from crossbeam-epoch's default collector.
    pub fn get_or_insert<'g>(&'g self, key: K, guard: &'g Guard) -> Result<(&'g R, bool), Error> {
        check_default_collector(guard)?;
        let shard = self.shard_of(&key);
        let existing = shard.read().ignore_poison().get(&key).copied();
        let (ptr, created) = match existing {
            Some(p) => (p, false),
            None => {
                let mut map = shard.write().ignore_poison();
                match map.get(&key) {
                    Some(p) => (*p, false),
                    None => {
                        let p = RecordPtr(NonNull::from(Box::leak(Box::new(R::absent(
                            self.value_size,
                        )))));
                        map.insert(key, p);
                        (p, true)
                    }
                }
            }
        };
        // SAFETY: as in `get`: the pointer was mapped while we held the shard lock, later unlinks
        // defer destruction past `guard`, and the index outlives `'g`.
        Ok((unsafe { ptr.0.as_ref() }, created))
    }

    /// Removes the mapping `key -> record` if `key` still maps to exactly this record (address
    /// equality), deferring the record's destruction until every guard pinned now is dropped.
    /// Returns whether it removed the mapping.
    ///
    /// Errors: [`Error::Misuse`] if `guard` is not from crossbeam-epoch's default collector.
    pub fn unlink<Q>(&self, key: &Q, record: &R, guard: &Guard) -> Result<bool, Error>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        check_default_collector(guard)?;
        let removed = {
            let mut map = self.shard_of(key).write().ignore_poison();
            match map.get(key) {
                Some(p) if std::ptr::eq(p.0.as_ptr(), record) => map.remove(key),
                _ => None,
            }
        };
        let Some(ptr) = removed else { return Ok(false) };
        // SAFETY: `ptr` came from `Box::into_raw` (via `Box::leak`) and was just removed from the
        // map under the write lock, so no other `unlink` or the index's drop can free it: this
        // deferred closure is its only owner. It runs after every guard pinned before now (all
        // readers that could have found the pointer) is dropped; `R: Send` lets it run on any
        // thread and `R: 'static` means it borrows nothing.
        unsafe {
            guard.defer_unchecked(move || drop(Box::from_raw(ptr.0.as_ptr())));
        }
        Ok(true)
    }

    /// Number of keys mapped (sums the shards one at a time, so only approximate under
    /// concurrent inserts and unlinks).
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.read().ignore_poison().len())
            .sum()
    }

    /// Whether no key is mapped (approximate under concurrency, like [`HashIndex::len`]).
    pub fn is_empty(&self) -> bool {
        self.shards
            .iter()
            .all(|s| s.read().ignore_poison().is_empty())
    }

    /// Number of shards.
    pub fn shard_count(&self) -> usize {
        self.shards.len()
    }
}

impl<K, R, S> HashIndex<K, R, S> {
    /// The table this index serves.
    pub fn table(&self) -> TableId {
        self.table
    }

    /// The fixed value size of the table's records.
    pub fn value_size(&self) -> usize {
        self.value_size
    }
}

impl<R, S> Index<R> for HashIndex<u64, R, S>
where
    R: Record,
    S: BuildHasher + Clone + Send + Sync,
{
    #[inline]
    fn kind(&self) -> IndexKind {
        IndexKind::Hash
    }

    #[inline]
    fn get<'g>(&'g self, key: u64, guard: &'g Guard) -> Result<Option<&'g R>, Error> {
        HashIndex::get(self, &key, guard)
    }

    #[inline]
    fn get_or_insert<'g>(&'g self, key: u64, guard: &'g Guard) -> Result<Entry<'g, R>, Error> {
        let (record, created) = HashIndex::get_or_insert(self, key, guard)?;
        Ok(Entry {
            record,
            created,
            bumped: None,
        })
    }

    /// Unlinks as [`HashIndex::unlink`]; the hash index has no phantom stripes, so the result is
    /// `Ok(None)` whether or not the mapping was removed (use the inherent method to find out).
    #[inline]
    fn unlink(&self, key: u64, record: &R, guard: &Guard) -> Result<Option<StripeBump>, Error> {
        HashIndex::unlink(self, &key, record, guard)?;
        Ok(None)
    }

    fn scan<'g>(
        &'g self,
        _lo: u64,
        _hi: u64,
        _guard: &'g Guard,
        _visit: &mut dyn FnMut(u64, &'g R) -> bool,
    ) -> Result<(), Error> {
        Err(Error::ScanUnsupported {
            table: self.table.0,
            kind: IndexKind::Hash.name(),
        })
    }

    fn len(&self) -> usize {
        HashIndex::len(self)
    }

    fn is_empty(&self) -> bool {
        HashIndex::is_empty(self)
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

impl<K, R, S> Drop for HashIndex<K, R, S> {
    fn drop(&mut self) {
        for shard in self.shards.iter_mut() {
            for (_, ptr) in shard.get_mut().ignore_poison().drain() {
                // SAFETY: every pointer still mapped came from `Box::into_raw` and is owned by the
                // map (unlinked ones were removed before their destruction was deferred). `&mut self`
                // means no reference handed out by the index is alive any more, and draining
                // removes each pointer so it is freed exactly once.
                drop(unsafe { Box::from_raw(ptr.0.as_ptr()) });
            }
        }
    }
}

impl<K, R, S> fmt::Debug for HashIndex<K, R, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HashIndex")
            .field("table", &self.table)
            .field("value_size", &self.value_size)
            .field("shards", &self.shards.len())
            .field(
                "len",
                &self
                    .shards
                    .iter()
                    .map(|s| s.read().ignore_poison().len())
                    .sum::<usize>(),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::racing_inserts_agree;
    use crate::test_support::{Counted, churn_never_exposes_freed_records, flush_until, ids};
    use proptest::prelude::*;
    use std::collections::BTreeMap;
    use std::sync::atomic::Ordering as StdOrdering;

    #[test]
    fn racing_get_or_insert_publishes_one_record_per_key() {
        type Rec = Counted<{ ids::HASH_RACE }>;
        let index = HashIndex::<u64, Rec>::with_shards(TableId(1), 8, 4).unwrap();
        assert_eq!(
            racing_inserts_agree(&index, 2_000, 4, true),
            0,
            "no stripes, no bumps"
        );
        assert_eq!(Index::len(&index), 2_000);
        // The loser of a race never allocates: exactly one record per key exists.
        assert_eq!(Rec::created(), 2_000);
    }

    #[test]
    fn churn_never_exposes_freed_records_and_unlinked_ones_are_destroyed() {
        type Rec = Counted<{ ids::HASH_UNLINK }>;
        let index = HashIndex::<u64, Rec>::with_shards(TableId(1), 8, 2).unwrap();
        churn_never_exposes_freed_records(&index, 64, 4, 40, false);
        assert!(Rec::created() > 64, "the churn unlinked nothing");
        let mapped = HashIndex::len(&index);
        assert!(
            flush_until(|| Rec::live() == mapped),
            "unlinked records not destroyed: live {} vs mapped {mapped}",
            Rec::live()
        );
    }

    #[test]
    fn unlink_removes_only_the_given_record_and_drop_frees_the_rest() {
        type Rec = Counted<{ ids::HASH_DROP }>;
        let index = HashIndex::<u64, Rec>::new(TableId(3), 8);
        let guard = crossbeam_epoch::pin();
        let (r1, created) = index.get_or_insert(7, &guard).unwrap();
        assert!(created);
        let (other, _) = index.get_or_insert(8, &guard).unwrap();
        assert!(
            !index.unlink(&7, other, &guard).unwrap(),
            "wrong record must not unlink"
        );
        assert!(
            !index.unlink(&9, other, &guard).unwrap(),
            "absent key must not unlink"
        );
        assert!(index.unlink(&7, r1, &guard).unwrap());
        assert!(index.get(&7, &guard).unwrap().is_none());
        // Still readable: this guard was pinned before the unlink.
        r1.check();
        let (r2, created) = index.get_or_insert(7, &guard).unwrap();
        assert!(created && !std::ptr::eq(r1, r2));
        assert!(
            !index.unlink(&7, r1, &guard).unwrap(),
            "a stale record must not unlink"
        );
        assert!(std::ptr::eq(index.get(&7, &guard).unwrap().unwrap(), r2));
        drop(guard);
        for k in 100..200 {
            index.get_or_insert(k, &crossbeam_epoch::pin()).unwrap();
        }
        assert_eq!(Rec::created(), 103);
        drop(index);
        assert!(
            flush_until(|| Rec::live() == 0),
            "leaked {} records",
            Rec::live()
        );
        assert_eq!(Rec::dropped(), 103);
    }

    #[test]
    fn byte_string_keys_are_found_by_slice() {
        type Rec = Counted<{ ids::HASH_BYTES }>;
        let index = HashIndex::<Box<[u8]>, Rec>::new(TableId(0), 4);
        let guard = crossbeam_epoch::pin();
        let (a, created) = index
            .get_or_insert(b"alice".to_vec().into_boxed_slice(), &guard)
            .unwrap();
        assert!(created);
        let found = index.get(b"alice".as_slice(), &guard).unwrap().unwrap();
        assert!(std::ptr::eq(a, found));
        assert!(index.get(b"bob".as_slice(), &guard).unwrap().is_none());
        assert!(index.unlink(b"alice".as_slice(), a, &guard).unwrap());
        assert!(index.is_empty());
    }

    #[test]
    fn bad_input_is_an_error() {
        type Rec = Counted<{ ids::MISC }>;
        let index = HashIndex::<u64, Rec>::new(TableId(5), 8);
        let guard = crossbeam_epoch::pin();
        let e = index.scan(0, 10, &guard, &mut |_, _| true).unwrap_err();
        assert_eq!(
            e,
            Error::ScanUnsupported {
                table: 5,
                kind: "hash"
            }
        );
        assert!(e.to_string().contains("table 5 has a hash index"), "{e}");
        assert!(index.phantom_stripes().is_none());
        for shards in [0, 3, 2 * MAX_HASH_SHARDS] {
            let e = HashIndex::<u64, Rec>::with_shards(TableId(5), 8, shards).unwrap_err();
            assert!(e.to_string().contains(&format!("shards = {shards}")), "{e}");
        }
        let one = HashIndex::<u64, Rec>::with_shards(TableId(5), 8, 1).unwrap();
        assert_eq!(one.shard_count(), 1);
        assert!(one.get_or_insert(u64::MAX, &guard).unwrap().1);
        let collector = crossbeam_epoch::Collector::new();
        let handle = collector.register();
        let foreign = handle.pin();
        assert!(matches!(index.get(&1, &foreign), Err(Error::Misuse(_))));
        assert!(matches!(
            index.get_or_insert(1, &foreign),
            Err(Error::Misuse(_))
        ));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u64),
        Get(u64),
        Unlink(u64),
        UnlinkStale(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        let key = 0u64..24;
        prop_oneof![
            key.clone().prop_map(Op::Insert),
            key.clone().prop_map(Op::Get),
            key.clone().prop_map(Op::Unlink),
            key.prop_map(Op::UnlinkStale),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Single-threaded, the hash index behaves like a map from key to the record published
        /// for it (identified by a tag written on creation).
        #[test]
        fn behaves_like_a_btreemap(ops in proptest::collection::vec(op(), 1..120)) {
            type Rec = Counted<{ ids::HASH_MODEL }>;
            let index = HashIndex::<u64, Rec>::with_shards(TableId(0), 8, 2).unwrap();
            let mut model: BTreeMap<u64, u64> = BTreeMap::new();
            let guard = crossbeam_epoch::pin();
            let mut retired: Vec<&Rec> = Vec::new();
            for (tag, op) in (1u64..).zip(ops) {
                match op {
                    Op::Insert(k) => {
                        let (r, created) = index.get_or_insert(k, &guard).unwrap();
                        prop_assert_eq!(created, !model.contains_key(&k));
                        if created {
                            r.tag.store(tag, StdOrdering::Relaxed);
                            model.insert(k, tag);
                        }
                        prop_assert_eq!(r.tag.load(StdOrdering::Relaxed), model[&k]);
                    }
                    Op::Get(k) => {
                        let got = index.get(&k, &guard).unwrap().map(|r| r.tag.load(StdOrdering::Relaxed));
                        prop_assert_eq!(got, model.get(&k).copied());
                    }
                    Op::Unlink(k) => {
                        if let Some(r) = index.get(&k, &guard).unwrap() {
                            prop_assert!(index.unlink(&k, r, &guard).unwrap());
                            retired.push(r);
                            model.remove(&k);
                        } else {
                            prop_assert!(!model.contains_key(&k));
                        }
                    }
                    Op::UnlinkStale(k) => {
                        if let Some(stale) = retired.last() {
                            prop_assert!(!index.unlink(&k, stale, &guard).unwrap());
                        }
                    }
                }
                prop_assert_eq!(HashIndex::len(&index), model.len());
            }
            for r in retired {
                r.check();
            }
        }
    }
}
