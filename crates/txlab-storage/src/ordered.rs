//! [`OrderedIndex`]: a concurrent ordered index with range scans and phantom stripes.
//!
//! Built on `crossbeam_skiplist::base::SkipList`, a lock-free skip list (Herlihy & Shavit, "The
//! Art of Multiprocessor Programming", ch. 14, in crossbeam's implementation) whose nodes are
//! reclaimed through crossbeam-epoch. Each node holds a [`Slot`]: the record, the token of the
//! call that created it, and whether the key's stripe was bumped for its link.
//!
//! Invariants:
//!
//! - **Stable references.** A node never moves; `Entry::value()` is valid while the guard it was
//!   found under is pinned, and removed nodes are destroyed only through the epoch collector
//!   (`Guard::defer_unchecked` once their reference count drops to zero). The skip list uses
//!   crossbeam-epoch's default collector, the one [`crossbeam_epoch::pin`] uses; guards from other
//!   collectors are rejected with [`Error::Misuse`].
//! - **Atomic insert-if-absent.** [`OrderedIndex::get_or_insert`] first looks the key up (no
//!   atomic write on the hit path), then calls the skip list's `get_or_insert_with`, which links a
//!   new node only if the key is still absent at its level-0 CAS. The skip list does not say who
//!   won, so the closure that builds the new slot stamps it with a fresh creator token: the caller
//!   whose token is in the returned slot created it; everyone else got an existing record.
//! - **Stripes are bumped after the change is visible.** The creator bumps the stripe of a new
//!   key after `get_or_insert_with` returned (the node is linked at level 0, so scans see it).
//!   [`OrderedIndex::unlink`] removes only the node whose record is the given one (address
//!   equality), and only the call whose tower mark succeeded bumps, after the mark (from which
//!   point scans skip the node).
//! - **No record leaves `get_or_insert` before its link's bump.** A slot's state carries
//!   [`BUMPED`] once its key's stripe was bumped after the link (a `SeqCst` bump, then a
//!   `Release` store of the bit). [`OrderedIndex::get_or_insert`], the call through which protocols
//!   obtain every record they write, loads the state (`Acquire`) and, while the bit is clear (the
//!   creator was preempted between its link and its bump), bumps the stripe itself before
//!   returning. So the bump precedes, in the `SeqCst` order, every `SeqCst` access the caller makes
//!   afterwards (the bump is sequenced before the `Release` store its `Acquire` load reads).
//!   Without it a scan that traversed before the link and validated before the creator's bump
//!   would miss a write into the new record by another transaction, which bumps nothing of its
//!   own: the scan took the key as missing while that write, serialized before it, made the key
//!   present (write skew through the range). Linking an absent record is no logical change, so a
//!   scan that sees the record before its bump loses nothing: it reads the record like any other.
//!   Calls that find the bump pending at once may each bump (false conflicts in that window
//!   only); every bump is reported to the call that made it ([`Entry::bumped`]), the creator's
//!   too, so a transaction can still recognise its own.
//! - **Scans** visit `lo..=hi` in ascending key order and stop when the visitor returns `false`.
//!   A scanner reads the stripes covering its range *before* scanning and re-checks them at
//!   commit. Keys map onto stripes through [`StripeKey::stripe_point`] (monotone) and the
//!   index's [`StripeLayout`]; [`PhantomStripes`] states the covering invariant that makes a
//!   scan's stripes see every insert or unlink inside its range, and how a layout keeps the
//!   stripes of disjoint partitions (TPC-C's districts) apart.

use crate::guard_check::check_default_collector;
use crate::stripe_key::StripeKey;
use crossbeam_epoch::Guard;
use crossbeam_skiplist::base::SkipList;
use std::borrow::Borrow;
use std::fmt;
use std::ops::Bound;
use txlab_core::protocol::storage::{
    Entry, Index, PhantomStripes, Record, StripeBump, StripeLayout,
};
use txlab_core::protocol::sync::{AtomicU64, Ordering};
use txlab_core::{Error, IndexKind, TableId};

/// Default stripe shift: buckets of 64 consecutive keys.
pub const DEFAULT_STRIPE_SHIFT: u32 = 6;

/// Largest stripe shift accepted (buckets of `2^63` keys: every key on two stripes).
pub const MAX_STRIPE_SHIFT: u32 = 63;

/// What a skip-list node stores (module docs).
struct Slot<R> {
    /// The token of the call that created the slot, with [`BUMPED`] set once the key's stripe was
    /// bumped after the node's link.
    state: AtomicU64,
    record: R,
}

/// The bit of [`Slot::state`] that says the key's stripe was bumped after the node's link (tokens
/// count up from 1 and never reach it).
const BUMPED: u64 = 1 << 63;

/// A concurrent ordered index from keys `K` to records `R` (see the module docs).
pub struct OrderedIndex<K, R> {
    table: TableId,
    value_size: usize,
    list: SkipList<K, Slot<R>>,
    stripes: PhantomStripes,
    /// Source of creator tokens (0 is never handed out, so it means "did not build a slot").
    next_token: AtomicU64,
}

impl<K, R> OrderedIndex<K, R>
where
    K: Ord + StripeKey + Send + Sync + 'static,
    R: Record,
{
    /// An empty index for `table` with stripes over buckets of `2^DEFAULT_STRIPE_SHIFT` keys.
    pub fn new(table: TableId, value_size: usize) -> Self {
        Self {
            table,
            value_size,
            list: SkipList::new(crossbeam_epoch::default_collector().clone()),
            stripes: PhantomStripes::new(DEFAULT_STRIPE_SHIFT),
            next_token: AtomicU64::new(1),
        }
    }

    /// An empty index whose stripe buckets span `2^shift` consecutive keys,
    /// `shift` in `0..=MAX_STRIPE_SHIFT`.
    pub fn with_stripe_shift(table: TableId, value_size: usize, shift: u32) -> Result<Self, Error> {
        if shift > MAX_STRIPE_SHIFT {
            return Err(Error::invalid(
                "stripe_shift",
                shift,
                format!(
                    "ordered index of table {}: a shift in 0..={MAX_STRIPE_SHIFT}",
                    table.0
                ),
            ));
        }
        Ok(Self {
            stripes: PhantomStripes::new(shift),
            ..Self::new(table, value_size)
        })
    }

    /// An empty index whose keys are grouped onto phantom stripes by `layout`.
    ///
    /// Errors: [`Error::InvalidConfig`] naming the field of `layout` out of range.
    pub fn with_layout(
        table: TableId,
        value_size: usize,
        layout: StripeLayout,
    ) -> Result<Self, Error> {
        Ok(Self {
            stripes: PhantomStripes::with_layout(layout)?,
            ..Self::new(table, value_size)
        })
    }

    /// The record mapped to `key`, if any. The reference is valid while `guard` stays pinned.
    ///
    /// Errors: [`Error::Misuse`] if `guard` is not from crossbeam-epoch's default collector.
    #[inline]
    pub fn get<'g, Q>(&'g self, key: &Q, guard: &'g Guard) -> Result<Option<&'g R>, Error>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        check_default_collector(guard)?;
        Ok(self.list.get(key, guard).map(|e| &e.value().record))
    }

    /// The record mapped to `key`, publishing a new `R::absent(value_size)` if there is none.
    /// Only the call that published it sees `created == true`. The key's stripe has been bumped
    /// after the record's link when this returns: by its creator, or by this call if the
    /// creator's bump was still pending (then reported in [`Entry::bumped`], as the creator's is).
    ///
    /// Errors: [`Error::Misuse`] if `guard` is not from crossbeam-epoch's default collector.
    pub fn get_or_insert<'g>(&'g self, key: K, guard: &'g Guard) -> Result<Entry<'g, R>, Error> {
        check_default_collector(guard)?;
        if let Some(e) = self.list.get(&key, guard) {
            let slot = e.value();
            return Ok(Entry {
                record: &slot.record,
                created: false,
                bumped: self.bump_if_pending(e.key(), slot),
            });
        }
        let mut my_token = 0;
        let entry = self.list.get_or_insert_with(
            key,
            || {
                my_token = self.next_token.fetch_add(1, Ordering::Relaxed);
                Slot {
                    state: AtomicU64::new(my_token),
                    record: R::absent(self.value_size),
                }
            },
            guard,
        );
        let slot = entry.value();
        // The token bits never change after the slot is built.
        let created = my_token != 0 && slot.state.load(Ordering::Relaxed) & !BUMPED == my_token;
        #[cfg(any(test, feature = "hooks"))]
        if created {
            crate::hooks::linked(entry.key().stripe_point());
        }
        let bumped = self.bump_if_pending(entry.key(), slot);
        let record_ptr: *const R = &slot.record;
        entry.release(guard);
        // SAFETY: the node holding `record` was reachable (and reference-counted by `entry`) while
        // `guard` was pinned. Releasing `entry` or unlinking the node can only hand it to
        // `guard.defer_unchecked` (crossbeam-skiplist's `Node::decrement`), i.e. destroy it after
        // every guard pinned now, `guard` included, is dropped; dropping the skip list itself
        // needs `&mut self`, which the `'g` borrow of `self` excludes.
        let record: &'g R = unsafe { &*record_ptr };
        Ok(Entry {
            record,
            created,
            bumped,
        })
    }

    /// Bumps `key`'s stripe for the link of `slot`'s node unless that was done already (module
    /// docs); returns the bump if this call made it.
    #[inline]
    fn bump_if_pending(&self, key: &K, slot: &Slot<R>) -> Option<StripeBump> {
        let state = slot.state.load(Ordering::Acquire);
        if state & BUMPED != 0 {
            return None;
        }
        let bump = self.stripes.bump(key.stripe_point());
        slot.state.store(state | BUMPED, Ordering::Release);
        Some(bump)
    }

    /// Removes the mapping `key -> record` if `key` still maps to exactly this record (address
    /// equality). On removal, bumps the key's stripe and returns the bump; otherwise `None`. The
    /// record is destroyed once every guard pinned now is dropped.
    ///
    /// Errors: [`Error::Misuse`] if `guard` is not from crossbeam-epoch's default collector.
    pub fn unlink<Q>(&self, key: &Q, record: &R, guard: &Guard) -> Result<Option<StripeBump>, Error>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        check_default_collector(guard)?;
        let Some(entry) = self.list.get(key, guard) else {
            return Ok(None);
        };
        if !std::ptr::eq(&entry.value().record, record) {
            return Ok(None);
        }
        // `remove` marks this very node (not whatever the key maps to by now) and reports whether
        // this call's mark was the one that removed it.
        if !entry.remove() {
            return Ok(None);
        }
        Ok(Some(self.stripes.bump(entry.key().stripe_point())))
    }

    /// Visits the entries with keys in `lo..=hi` in ascending key order until `visit` returns
    /// `false`. An empty range (`lo > hi`) visits nothing.
    ///
    /// Errors: [`Error::Misuse`] if `guard` is not from crossbeam-epoch's default collector.
    pub fn scan<'g, Q>(
        &'g self,
        lo: &Q,
        hi: &Q,
        guard: &'g Guard,
        mut visit: impl FnMut(&'g K, &'g R) -> bool,
    ) -> Result<(), Error>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        check_default_collector(guard)?;
        if lo > hi {
            return Ok(());
        }
        for e in self
            .list
            .range((Bound::Included(lo), Bound::Included(hi)), guard)
        {
            if !visit(e.key(), &e.value().record) {
                break;
            }
        }
        Ok(())
    }

    /// Calls `f` with every stripe covering the keys `lo..=hi` (possibly with repeats): the
    /// stripes a scanner of that range reads before scanning and re-checks at commit.
    pub fn for_stripes_covering<Q>(&self, lo: &Q, hi: &Q, f: impl FnMut(u32))
    where
        Q: StripeKey + ?Sized,
    {
        self.stripes
            .for_range(lo.stripe_point(), hi.stripe_point(), f);
    }
}

impl<K, R> OrderedIndex<K, R> {
    /// The phantom stripes of this index.
    #[inline]
    pub fn stripes(&self) -> &PhantomStripes {
        &self.stripes
    }

    /// Stripe buckets span `2^stripe_shift` consecutive keys (within a partition of the layout).
    #[inline]
    pub fn stripe_shift(&self) -> u32 {
        self.stripes.layout().bucket_shift
    }

    /// Approximate number of keys mapped.
    #[inline]
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether no key is mapped (approximate under concurrency).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The table this index serves.
    #[inline]
    pub fn table(&self) -> TableId {
        self.table
    }

    /// The fixed value size of the table's records.
    #[inline]
    pub fn value_size(&self) -> usize {
        self.value_size
    }
}

impl<R: Record> Index<R> for OrderedIndex<u64, R> {
    #[inline]
    fn kind(&self) -> IndexKind {
        IndexKind::Ordered
    }

    #[inline]
    fn get<'g>(&'g self, key: u64, guard: &'g Guard) -> Result<Option<&'g R>, Error> {
        OrderedIndex::get(self, &key, guard)
    }

    #[inline]
    fn get_or_insert<'g>(&'g self, key: u64, guard: &'g Guard) -> Result<Entry<'g, R>, Error> {
        OrderedIndex::get_or_insert(self, key, guard)
    }

    #[inline]
    fn unlink(&self, key: u64, record: &R, guard: &Guard) -> Result<Option<StripeBump>, Error> {
        OrderedIndex::unlink(self, &key, record, guard)
    }

    fn scan<'g>(
        &'g self,
        lo: u64,
        hi: u64,
        guard: &'g Guard,
        visit: &mut dyn FnMut(u64, &'g R) -> bool,
    ) -> Result<(), Error> {
        OrderedIndex::scan(self, &lo, &hi, guard, |k, r| visit(*k, r))
    }

    #[inline]
    fn phantom_stripes(&self) -> Option<&PhantomStripes> {
        Some(&self.stripes)
    }

    #[inline]
    fn len(&self) -> usize {
        OrderedIndex::len(self)
    }

    #[inline]
    fn is_empty(&self) -> bool {
        OrderedIndex::is_empty(self)
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

impl<K, R> fmt::Debug for OrderedIndex<K, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OrderedIndex")
            .field("table", &self.table)
            .field("value_size", &self.value_size)
            .field("len", &self.list.len())
            .field("stripes", &self.stripes.layout())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{
        Counted, churn_never_exposes_freed_records, flush_until, ids, racing_inserts_agree,
    };
    use proptest::prelude::*;
    use std::collections::BTreeMap;
    use std::sync::atomic::Ordering as StdOrdering;

    fn stripe_versions(stripes: &PhantomStripes) -> Vec<u64> {
        (0..stripes.len() as u32)
            .map(|s| stripes.version(s))
            .collect()
    }

    /// Every key's bump is done: a later `get_or_insert` finds nothing pending.
    fn no_bump_pending<R: Record>(index: &OrderedIndex<u64, R>, keys: u64) {
        let guard = crossbeam_epoch::pin();
        for k in 0..keys {
            let e = index.get_or_insert(k, &guard).unwrap();
            assert!(!e.created && e.bumped.is_none(), "key {k}: bump pending");
        }
    }

    #[test]
    fn racing_get_or_insert_publishes_one_record_and_a_bump_per_key() {
        type Rec = Counted<{ ids::ORDERED_RACE }>;
        let index = OrderedIndex::<u64, Rec>::new(TableId(1), 8);
        let reported = racing_inserts_agree(&index, 2_000, 4, true);
        assert_eq!(Index::len(&index), 2_000);
        // Every stripe bump is one increment, reported to the call that made it; a key is bumped
        // at least once (by its creator, or first by a racer that found the bump pending).
        let total: u64 = stripe_versions(index.stripes()).iter().sum();
        assert_eq!(total, reported);
        assert!(reported >= 2_000, "{reported} bumps for 2000 new keys");
        no_bump_pending(&index, 2_000);
        // Losers' slots were dropped right away; exactly one record per key survives.
        assert_eq!(Rec::live(), 2_000);
    }

    #[test]
    fn a_record_found_before_its_creators_bump_is_bumped_by_the_finder() {
        use std::sync::mpsc;
        type Rec = Counted<{ ids::MISC }>;
        let index = OrderedIndex::<u64, Rec>::new(TableId(0), 8);
        let stripe = index.stripes().stripe_of(5);
        let (parked, is_parked) = mpsc::channel();
        let (resume, resumed) = mpsc::channel::<()>();
        std::thread::scope(|s| {
            let creator = s.spawn(|| {
                crate::hooks::with_link_pause(
                    move |point| {
                        assert_eq!(point, 5);
                        parked.send(()).unwrap();
                        resumed.recv().unwrap();
                    },
                    || {
                        let guard = crossbeam_epoch::pin();
                        let e = index.get_or_insert(5, &guard).unwrap();
                        (e.created, e.bumped, std::ptr::from_ref(e.record) as usize)
                    },
                )
            });
            is_parked.recv().unwrap();
            // The creator has linked key 5 and not bumped: the key is visible, the stripe unmoved.
            let guard = crossbeam_epoch::pin();
            assert!(index.get(&5, &guard).unwrap().is_some());
            assert_eq!(index.stripes().version(stripe), 0);
            let found = index.get_or_insert(5, &guard).unwrap();
            assert!(!found.created);
            assert_eq!(found.bumped, Some(StripeBump { stripe, before: 0 }));
            assert_eq!(index.stripes().version(stripe), 1);
            let again = index.get_or_insert(5, &guard).unwrap();
            assert!(!again.created && again.bumped.is_none());
            resume.send(()).unwrap();
            let (created, bumped, record) = creator.join().unwrap();
            // The creator finds its bump done and does not bump again.
            assert!(created && bumped.is_none());
            assert_eq!(record, std::ptr::from_ref(found.record) as usize);
            assert_eq!(index.stripes().version(stripe), 1);
        });
    }

    /// A record whose construction waits until a second thread is constructing one too, so two
    /// `get_or_insert` calls on a fresh key both miss and both build a slot: the skip list keeps
    /// one, and only its builder may report `created`.
    struct Rendezvous;

    static RENDEZVOUS_ARRIVED: AtomicU64 = AtomicU64::new(0);

    impl Record for Rendezvous {
        fn absent(_value_size: usize) -> Self {
            let n = RENDEZVOUS_ARRIVED.fetch_add(1, Ordering::SeqCst) + 1;
            let pair_complete = n.next_multiple_of(2);
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while RENDEZVOUS_ARRIVED.load(Ordering::SeqCst) < pair_complete {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the other racer never arrived"
                );
                std::thread::yield_now();
            }
            Rendezvous
        }
    }

    #[test]
    fn when_both_racers_build_a_slot_only_the_published_one_counts_as_created() {
        const KEYS: u64 = 200;
        let index = OrderedIndex::<u64, Rendezvous>::new(TableId(1), 8);
        let creations = AtomicU64::new(0);
        let bumps = AtomicU64::new(0);
        let results: Vec<Vec<usize>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| {
                        (0..KEYS)
                            .map(|k| {
                                let guard = crossbeam_epoch::pin();
                                let e = index.get_or_insert(k, &guard).unwrap();
                                if e.created {
                                    creations.fetch_add(1, Ordering::SeqCst);
                                }
                                if e.bumped.is_some() {
                                    bumps.fetch_add(1, Ordering::SeqCst);
                                }
                                std::ptr::from_ref(e.record) as usize
                            })
                            .collect()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        // Both racers built a slot for every key...
        assert_eq!(RENDEZVOUS_ARRIVED.load(Ordering::SeqCst), 2 * KEYS);
        // ...yet they agree on one record per key and one creation per key, and every bump was
        // reported to the racer that made it (the loser bumps too if it found the bump pending).
        assert_eq!(results[0], results[1], "racers got different records");
        assert_eq!(creations.load(Ordering::SeqCst), KEYS);
        let total: u64 = stripe_versions(index.stripes()).iter().sum();
        assert_eq!(total, bumps.load(Ordering::SeqCst));
        assert!(total >= KEYS);
        no_bump_pending(&index, KEYS);
    }

    #[test]
    fn churn_never_exposes_freed_records_and_unlinked_ones_are_destroyed() {
        type Rec = Counted<{ ids::ORDERED_UNLINK }>;
        let index = OrderedIndex::<u64, Rec>::with_stripe_shift(TableId(1), 8, 2).unwrap();
        churn_never_exposes_freed_records(&index, 64, 4, 40, true);
        assert!(Rec::created() > 64, "the churn unlinked nothing");
        let mapped = OrderedIndex::len(&index);
        assert!(
            flush_until(|| Rec::live() == mapped),
            "unlinked records not destroyed: live {} vs mapped {mapped}",
            Rec::live()
        );
    }

    #[test]
    fn inserts_and_unlinks_bump_the_key_stripe_and_gets_do_not() {
        type Rec = Counted<{ ids::ORDERED_SCAN }>;
        let index = OrderedIndex::<u64, Rec>::with_stripe_shift(TableId(0), 8, 4).unwrap();
        assert_eq!(index.stripe_shift(), 4);
        let stripes = index
            .phantom_stripes()
            .expect("ordered indexes have stripes");
        let guard = crossbeam_epoch::pin();
        let (lo, hi) = (100u64, 163u64);
        let covering = |index: &OrderedIndex<u64, Rec>| {
            let mut v = Vec::new();
            index.for_stripes_covering(&lo, &hi, |s| v.push((s, index.stripes().version(s))));
            v
        };
        let before = covering(&index);
        let e = index.get_or_insert(120, &guard).unwrap();
        assert!(e.created);
        let bump = e.bumped.expect("the creator bumps");
        assert_eq!(bump.stripe, stripes.stripe_of(120));
        assert_eq!(stripes.version(bump.stripe), bump.before + 1);
        let after_insert = covering(&index);
        assert_ne!(
            before, after_insert,
            "an insert inside the range must change a covering stripe"
        );

        // Looking up an existing key, by get or get_or_insert, bumps nothing anywhere.
        let all = stripe_versions(stripes);
        assert!(std::ptr::eq(
            index.get(&120, &guard).unwrap().unwrap(),
            e.record
        ));
        let again = index.get_or_insert(120, &guard).unwrap();
        assert!(!again.created && again.bumped.is_none() && std::ptr::eq(again.record, e.record));
        assert!(index.get(&121, &guard).unwrap().is_none());
        assert_eq!(all, stripe_versions(stripes));

        let unlink = index
            .unlink(&120, e.record, &guard)
            .unwrap()
            .expect("unlinked");
        assert_eq!(unlink.stripe, bump.stripe);
        assert_eq!(unlink.before, bump.before + 1);
        assert_ne!(
            after_insert,
            covering(&index),
            "an unlink inside the range must bump"
        );

        // A failed unlink (already gone) bumps nothing.
        let all = stripe_versions(stripes);
        assert_eq!(index.unlink(&120, e.record, &guard).unwrap(), None);
        assert_eq!(all, stripe_versions(stripes));
    }

    #[test]
    fn a_partitioned_layout_keeps_other_partitions_changes_off_a_scans_stripes() {
        type Rec = Counted<{ ids::ORDERED_SCAN }>;
        // Partitions of 2^32 keys (TPC-C's NEW-ORDER: one per district), four of them.
        let layout = StripeLayout::partitioned(32, 4);
        let index = OrderedIndex::<u64, Rec>::with_layout(TableId(0), 8, layout).unwrap();
        assert_eq!(index.stripes().len(), 4);
        let guard = crossbeam_epoch::pin();
        let (lo, hi) = (2u64 << 32, (2u64 << 32) | 0x7FF_FFFF);
        let covering = |index: &OrderedIndex<u64, Rec>| {
            let mut v = Vec::new();
            index.for_stripes_covering(&lo, &hi, |s| v.push((s, index.stripes().version(s))));
            v
        };
        let before = covering(&index);
        assert_eq!(
            before.len(),
            1,
            "a range inside one partition covers its one stripe"
        );
        for p in [0u64, 1, 3] {
            let e = index.get_or_insert((p << 32) | 7, &guard).unwrap();
            assert!(e.created);
            index
                .unlink(&((p << 32) | 7), e.record, &guard)
                .unwrap()
                .unwrap();
        }
        assert_eq!(before, covering(&index), "other partitions bumped this one");
        assert!(index.get_or_insert(hi, &guard).unwrap().created);
        assert_ne!(
            before,
            covering(&index),
            "an insert inside the range must bump"
        );
        assert!(
            OrderedIndex::<u64, Rec>::with_layout(TableId(0), 8, StripeLayout::partitioned(32, 0))
                .is_err()
        );
    }

    #[test]
    fn unlink_removes_only_the_given_record() {
        type Rec = Counted<{ ids::ORDERED_DROP }>;
        {
            let index = OrderedIndex::<u64, Rec>::new(TableId(0), 8);
            let guard = crossbeam_epoch::pin();
            let r1 = index.get_or_insert(7, &guard).unwrap().record;
            let other = index.get_or_insert(8, &guard).unwrap().record;
            assert_eq!(
                index.unlink(&7, other, &guard).unwrap(),
                None,
                "wrong record"
            );
            assert_eq!(index.unlink(&9, other, &guard).unwrap(), None, "absent key");
            assert!(index.unlink(&7, r1, &guard).unwrap().is_some());
            assert!(index.get(&7, &guard).unwrap().is_none());
            r1.check(); // still valid: the guard was pinned before the unlink
            let e2 = index.get_or_insert(7, &guard).unwrap();
            assert!(e2.created && !std::ptr::eq(r1, e2.record));
            assert_eq!(index.unlink(&7, r1, &guard).unwrap(), None, "stale record");
            assert!(std::ptr::eq(
                index.get(&7, &guard).unwrap().unwrap(),
                e2.record
            ));
            drop(guard);
            for k in 100..200 {
                index.get_or_insert(k, &crossbeam_epoch::pin()).unwrap();
            }
            assert_eq!(Rec::created(), 103);
        }
        assert!(
            flush_until(|| Rec::live() == 0),
            "leaked {} records",
            Rec::live()
        );
    }

    #[test]
    fn scans_are_ascending_within_bounds_and_stop_early() {
        type Rec = Counted<{ ids::MISC }>;
        let index = OrderedIndex::<u64, Rec>::new(TableId(0), 8);
        let guard = crossbeam_epoch::pin();
        for k in (0..100).rev().map(|k| k * 3) {
            index.get_or_insert(k, &guard).unwrap();
        }
        let collect = |lo: u64, hi: u64, limit: usize| {
            let mut keys = Vec::new();
            Index::scan(&index, lo, hi, &guard, &mut |k, r| {
                r.check();
                assert!(std::ptr::eq(r, index.get(&k, &guard).unwrap().unwrap()));
                keys.push(k);
                keys.len() < limit
            })
            .unwrap();
            keys
        };
        assert_eq!(collect(10, 20, usize::MAX), vec![12, 15, 18]);
        assert_eq!(collect(9, 18, usize::MAX), vec![9, 12, 15, 18]);
        assert_eq!(collect(290, u64::MAX, usize::MAX), vec![291, 294, 297]);
        assert_eq!(collect(0, u64::MAX, 4), vec![0, 3, 6, 9]);
        assert!(collect(20, 10, usize::MAX).is_empty());
        assert!(collect(1, 2, usize::MAX).is_empty());
        assert_eq!(collect(0, u64::MAX, usize::MAX).len(), 100);
    }

    #[test]
    fn byte_string_keys_scan_by_slice_bounds() {
        type Rec = Counted<{ ids::MISC }>;
        let index = OrderedIndex::<Box<[u8]>, Rec>::new(TableId(0), 8);
        let guard = crossbeam_epoch::pin();
        for name in ["carol", "alice", "bob", "dave", "al"] {
            let e = index.get_or_insert(name.as_bytes().into(), &guard).unwrap();
            assert!(e.created && e.bumped.is_some());
        }
        let mut seen = Vec::new();
        index
            .scan(b"al".as_slice(), b"c".as_slice(), &guard, |k, _| {
                seen.push(String::from_utf8(k.to_vec()).unwrap());
                true
            })
            .unwrap();
        assert_eq!(seen, ["al", "alice", "bob"]);
        let bob = index.get(b"bob".as_slice(), &guard).unwrap().unwrap();
        assert!(
            index
                .unlink(b"bob".as_slice(), bob, &guard)
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn bad_input_is_an_error() {
        type Rec = Counted<{ ids::MISC }>;
        let e = OrderedIndex::<u64, Rec>::with_stripe_shift(TableId(3), 8, 64).unwrap_err();
        assert!(
            e.to_string().contains("stripe_shift = 64") && e.to_string().contains("0..=63"),
            "{e}"
        );
        let index = OrderedIndex::<u64, Rec>::with_stripe_shift(TableId(3), 8, 63).unwrap();
        let collector = crossbeam_epoch::Collector::new();
        let handle = collector.register();
        let foreign = handle.pin();
        assert!(matches!(
            Index::get(&index, 1, &foreign),
            Err(Error::Misuse(_))
        ));
        assert!(matches!(
            Index::get_or_insert(&index, 1, &foreign),
            Err(Error::Misuse(_))
        ));
        assert!(matches!(
            Index::scan(&index, 0, 1, &foreign, &mut |_, _| true),
            Err(Error::Misuse(_))
        ));
        assert_eq!(index.kind(), IndexKind::Ordered);
        assert_eq!(Index::table(&index), TableId(3));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u64),
        Get(u64),
        Unlink(u64),
        UnlinkStale(u64),
        Scan(u64, u64, usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        let key = 0u64..40;
        prop_oneof![
            key.clone().prop_map(Op::Insert),
            key.clone().prop_map(Op::Get),
            key.clone().prop_map(Op::Unlink),
            key.clone().prop_map(Op::UnlinkStale),
            (key.clone(), key, 1usize..10).prop_map(|(a, b, n)| Op::Scan(a, b, n)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Single-threaded, the ordered index behaves like a `BTreeMap` from key to the record
        /// published for it (identified by a tag written on creation), scans included, and
        /// bumps stripes exactly once per structural change.
        #[test]
        fn behaves_like_a_btreemap(ops in proptest::collection::vec(op(), 1..120)) {
            type Rec = Counted<{ ids::ORDERED_MODEL }>;
            let index = OrderedIndex::<u64, Rec>::with_stripe_shift(TableId(0), 8, 2).unwrap();
            let mut model: BTreeMap<u64, u64> = BTreeMap::new();
            let guard = crossbeam_epoch::pin();
            let mut retired: Vec<&Rec> = Vec::new();
            let mut changes = 0u64;
            for (tag, op) in (1u64..).zip(ops) {
                match op {
                    Op::Insert(k) => {
                        let e = index.get_or_insert(k, &guard).unwrap();
                        prop_assert_eq!(e.created, !model.contains_key(&k));
                        prop_assert_eq!(e.bumped.is_some(), e.created);
                        if e.created {
                            changes += 1;
                            e.record.tag.store(tag, StdOrdering::Relaxed);
                            model.insert(k, tag);
                        }
                        prop_assert_eq!(e.record.tag.load(StdOrdering::Relaxed), model[&k]);
                    }
                    Op::Get(k) => {
                        let got = index.get(&k, &guard).unwrap().map(|r| r.tag.load(StdOrdering::Relaxed));
                        prop_assert_eq!(got, model.get(&k).copied());
                    }
                    Op::Unlink(k) => {
                        if let Some(r) = index.get(&k, &guard).unwrap() {
                            prop_assert!(index.unlink(&k, r, &guard).unwrap().is_some());
                            changes += 1;
                            retired.push(r);
                            model.remove(&k);
                        } else {
                            prop_assert!(!model.contains_key(&k));
                        }
                    }
                    Op::UnlinkStale(k) => {
                        if let Some(stale) = retired.last() {
                            prop_assert_eq!(index.unlink(&k, stale, &guard).unwrap(), None);
                        }
                    }
                    Op::Scan(lo, hi, limit) => {
                        let mut got = Vec::new();
                        index.scan(&lo, &hi, &guard, |k, r| {
                            got.push((*k, r.tag.load(StdOrdering::Relaxed)));
                            got.len() < limit
                        }).unwrap();
                        let expected: Vec<(u64, u64)> = if lo <= hi {
                            model.range(lo..=hi).map(|(k, t)| (*k, *t)).take(limit).collect()
                        } else {
                            Vec::new()
                        };
                        prop_assert_eq!(got, expected);
                    }
                }
                prop_assert_eq!(OrderedIndex::len(&index), model.len());
            }
            let total: u64 = stripe_versions(index.stripes()).iter().sum();
            prop_assert_eq!(total, changes);
            for r in retired {
                r.check();
            }
        }
    }
}
