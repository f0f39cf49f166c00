//! MVTO+NWR: MVTO's hooks for the non-visible write rule (`txlab_nwr`; the NWR paper §6.1.1)
//! and the one check MVTO needs on top of it, for readers of old versions.
//!
//! `Mvto<Rec, Nwr>` ([`crate::MvtoNwr`], engine name `mvto-nwr`) runs, at the start of every
//! commit of a transaction with timestamp `ts` in epoch `e = epoch_of(ts)` (only with
//! `AckMode::EpochStable`; compiled out for `NoNwr`):
//!
//! 1. `merge_reads_checked` (skipped by a read-only transaction whose reads are all pre-epoch:
//!    it is serialized at the start of `e`, before every omitter, `txlab_nwr::is_pre_epoch_reader`):
//!    every read of a *pre-epoch* version (`wts < epoch_start(e)`, see
//!    [`crate::timestamp::epoch_start`]) sets the read mark in its record's head word
//!    (`crate::head`, the protocol of `txlab_nwr::read_omit`; Algorithm 3 (1) with the mark kept
//!    per record: one CAS, or a load if the epoch's mark is already there). If the word shows
//!    that an omitter of epoch `e` (or later) claimed the item before the mark took effect, a write ordered after the version
//!    read may have been omitted, and if the item also has a committed version newer than `ts`,
//!    the read is stale: the commit aborts with
//!    `ConflictCause::ReadValidation` (counted as `nwr_old_reader_aborts`). This is the one place
//!    where NWR makes a transaction abort that plain MVTO would commit.
//! 2. If the transaction wrote anything: [`txlab_nwr::try_omit`] with the hooks of `NwrView`:
//!    every write blind (`TxOps::write` of a key the transaction did not read), no scan, every
//!    read of a pre-epoch version that is still the newest version of its item (no newer
//!    committed *or pending* version: Silo's overwriter check, a second walk of the version
//!    list), every written item with a committed version of epoch `e` (the pivot), no read of an
//!    older version of it marked in epoch `e`: after observing the pivot, the omitter *claims*
//!    the record's head word, which fails if its read mark holds `e` or later, and then replaces the
//!    item's pivot object (a companion beside the records, `Mvto::pivots`) with one CAS. On
//!    success nothing is linked: `finish_omitted`.
//! 3. Otherwise MVTO's own phases run unchanged (`crate::commit`).
//!
//! **Serial order.** Plain MVTO serializes by timestamp, and timestamps are epoch-prefixed, so
//! the order respects epochs. An omitting transaction `O` of epoch `e` is placed at the *start*
//! of epoch `e`: after every transaction with `ts < epoch_start(e)`, before every other
//! transaction of `e`; its write of `x` is placed after every version of `x` with
//! `wts < epoch_start(e)` and before every version with a larger `wts` (omitters of one epoch
//! among themselves in any total order; they only have write-write edges, see `txlab_nwr::rule`).
//!
//! - `O`'s reads: each returned the newest pre-epoch version `y0`, and no newer version existed
//!   at validation. Later ones cannot slip below `ts_O` (the read raised `y0.rts` to `ts_O`, so a
//!   writer with a smaller timestamp aborts `WriteTooLate`); versions above `ts_O` are after `O`.
//!   So `O` reads exactly what its position gives.
//! - Readers of `x` with `ts < epoch_start(e)` precede `O`: unaffected. Readers of a version of
//!   `x` with `wts >= epoch_start(e)` follow `O` and read a version after `O`'s write: correct.
//! - The hazard: a reader `T` with `ts_T >= epoch_start(e)` that commits having read a
//!   pre-epoch version `x0` of `x`, and is not itself a read-only reader of pre-epoch versions
//!   only (those are placed at the start of `e`, before `O`), would miss `O`'s write. MVTO allows such reads whenever
//!   `ts_T` is below the pivot's `wts`, long after `O` committed. `T` is of epoch `e`: a
//!   transaction of a later epoch has `ts_T` above the committed pivot's `wts` and reads the
//!   pivot or newer (the pivot was committed before `O` omitted; a pivot linked after `T`'s read
//!   with a smaller `wts` would have failed its `rts` check). For `T` of epoch `e`, compare the
//!   two read-modify-writes on `x`'s head word, `T`'s mark (step 1) and `O`'s claim: if
//!   `T`'s comes first, `O`'s claim sees a read mark `>= e` and `O` is not omitted; if `O`'s
//!   comes first, `T`'s mark returns an omit mark `>= e`, and `T` aborts, unless `x` has no
//!   committed version newer than `ts_T`, in which case no omission on `x` can concern `T`: `O`
//!   needed a committed pivot, whose `wts` exceeds `ts_T` as argued above, and garbage
//!   collection only removes it below a newer committed version. (`T`'s mark reads `O`'s claim
//!   or a later RMW of the word, all in the claim's release sequence, so everything `O` saw
//!   before claiming, the committed pivot included, happens before `T`'s list walk. A `T` that
//!   finds its epoch's mark already set only loads; the mark it loads was written after `O`'s
//!   claim, so the load reads the claim too, or before it, so `O` saw the mark. An `O` that
//!   finds the word already claimed for `e` only loads as well: a later mark then learns of the
//!   earlier claim, whose pivot serves as well, `txlab_nwr::read_omit`.) The check never
//!   misses; it may abort needlessly (never commit wrongly) through (a) a leftover claim of a
//!   transaction that claimed this item and then failed a later check (its CAS on the pivot
//!   object, or another item's checks), so it committed through the baseline and omitted
//!   nothing (`txlab_nwr::rule` checks every written item with plain loads before any claim or
//!   CAS, leaving only a race between the two passes), and (b) a claim from a later epoch,
//!   which a lagging reader of `e` cannot tell from one of `e`.
//! - Strictness: with group commit `O` is acknowledged when epoch `e` is stable; every
//!   transaction acknowledged before `O` began is of an earlier epoch, every one beginning after
//!   `O`'s acknowledgement is of a later one.
//!
//! **Recorded order.** An omitted write is recorded as `WriteEvent { visible: false }` with
//! `version = order = e << 40 | stamp`, `stamp` in `1..2^39` drawn once per omitting transaction
//! from a per-engine counter (only when recording). MVTO+NWR clocks start every epoch at counter
//! `2^23` ([`crate::timestamp::NWR_RESERVED`]), so every timestamp of epoch `e` is at least
//! `e << 40 | 2^39` and every earlier one below `e << 40`: the tag sorts between the item's
//! pre-epoch versions and its epoch-`e` versions, as placed above.
//!
//! **Garbage collection** is unchanged: an omitted write links no version, so there is nothing
//! to collect, and the read-and-omit marks live in the record's head word, not in a version (the
//! pivot object beside the record). A link at the head carries them over (`crate::head`,
//! "Rebasing").
//!
//! ## Single-write omitters (`Mvto<Rec, NwrSingleWrite>`, `mvto-nwr-single`)
//!
//! No pivot objects and no marks. An omitter `O` (one blind write of `x`, no scan, timestamp
//! `ts_O`, epoch `e`) is placed by timestamp just below a *pivot* `p`: a committed version of `x`
//! of epoch `e` with `wts(p) > ts_O` whose next committed version below, `u`, has
//! `u.rts < wts(p)` (so `p`'s writer did not read `x`) and, if `u` is absent, whose stripe scan
//! timestamp is below `wts(p)` (so `p`'s writer did not scan past a missing `x`); the lowest
//! such version (`NwrView::single_write_pivot`). Its reads must be the newest versions at
//! `wts(p)`; their `rts` is raised to `wts(p)` and they are checked again
//! (`NwrView::overwriters_valid`). Serial order: timestamp order, `O` at `wts(p) - 1/2`; only `p`'s
//! writer has a timestamp in `(wts(p) - 1/2, wts(p)]`. The write is recorded with `p`'s order,
//! invisible, so it sorts just before `p` (`txlab_core::history::WriteEvent::position`), and the
//! worker's clock moves past `wts(p)`. The argument: `docs/protocols/mvto.md`, "Single-write
//! omitters".

use crate::record::{Visible, deref};
use crate::timestamp::{epoch_of, epoch_start};
use crate::txn::{MvtoTxn, record, version};
use crate::version::{ABORTED, COMMITTED};
use crate::worker_state::{WorkerState, WriteKind};
use crossbeam_epoch::Guard;
use std::cell::Cell;
use txlab_core::history::{Outcome, Recorder, TxnRecord, WriteEvent, WriteKind as HWriteKind};
use txlab_core::sync::Ordering;
use txlab_core::{CommitInfo, TableId};
use txlab_nwr::pivot::{PRE_EPOCH, PivotCell, SATURATED, VersionNumber};
use txlab_nwr::{NwrBaseline, NwrMutation, SinglePivot, WriteOmission};
use txlab_storage::Companions;

/// Whether `W` keeps read-and-omit marks in the records' head words (`mvto-nwr`; not plain
/// MVTO, not `mvto-nwr-single`).
#[inline(always)]
pub(crate) const fn marks_in_head<W: WriteOmission>() -> bool {
    W::ENABLED && !W::SINGLE_WRITE_OMITTERS
}

/// Whether a version with write timestamp `wts` is older than epoch `epoch` (its readers of
/// epoch `epoch` are the ones the rule marks). The loaded version (`wts = 0`) always is.
#[inline]
pub(crate) fn pre_epoch(wts: u64, epoch: u32) -> bool {
    wts < epoch_start(u64::from(epoch))
}

/// MVTO's hooks for the rule (`txlab_nwr::NwrBaseline`) over a committing transaction's sets.
pub(crate) struct NwrView<'a, W: WriteOmission> {
    pub st: &'a WorkerState,
    pub guard: &'a Guard,
    /// The engine's pivot objects (`Mvto::pivots`), looked up under `guard`; only omitters
    /// touch them.
    pub pivots: &'a Companions<PivotCell>,
    pub mutation: Option<NwrMutation>,
    /// The committing transaction's timestamp.
    pub ts: u64,
    /// `mvto-nwr-single`: the `wts` of the pivot [`NwrBaseline::single_write_pivot`] chose (0
    /// until then); [`NwrBaseline::overwriters_valid`] validates the reads there and
    /// [`finish_omitted`] records the omitted write just before it.
    pub pivot_wts: Cell<u64>,
    /// A key's absent floor (`Mvto::absent_floor`: its phantom stripe's scan timestamp, or the
    /// retire floor of a hash table): `mvto-nwr-single` consults it when the version below a
    /// candidate pivot is absent.
    pub absent_floor: &'a dyn Fn(TableId, u64) -> u64,
    pub policy: std::marker::PhantomData<W>,
}

impl<'a, W: WriteOmission> NwrView<'a, W> {
    pub fn new(
        st: &'a WorkerState,
        guard: &'a Guard,
        pivots: &'a Companions<PivotCell>,
        mutation: Option<NwrMutation>,
        ts: u64,
        absent_floor: &'a dyn Fn(TableId, u64) -> u64,
    ) -> Self {
        Self {
            st,
            guard,
            pivots,
            mutation,
            ts,
            pivot_wts: Cell::new(0),
            absent_floor,
            policy: std::marker::PhantomData,
        }
    }

    /// `mvto-nwr-single`'s read validation at `bound = wts(p)`: each version read is still the
    /// newest non-aborted version of its item with `wts <= bound`, and committed.
    fn reads_visible_at(&self, bound: u64) -> bool {
        self.st.reads.iter().all(|r| {
            matches!(record(r.rec).visible(bound + 1, Ordering::SeqCst, self.guard),
                Visible::Committed(v) if std::ptr::eq(v, r.version))
        })
    }
}

impl<W: WriteOmission> NwrBaseline for NwrView<'_, W> {
    fn read_count(&self) -> usize {
        self.st.reads.len()
    }

    fn read_item(&self, i: usize) -> (u16, u64) {
        let r = &self.st.reads[i];
        (r.table.0, r.key)
    }

    /// The read item's object. No MVTO+NWR path uses it: reads are marked in the read-and-omit
    /// word (`merge_reads_checked`), never with `txlab_nwr::merge_reads`, which would put the
    /// marks into mRS, where the rule does not look for them when the engine has such a word
    /// ([`NwrBaseline::has_read_omit`]). Kept for the trait (the printed-algorithm mutant,
    /// which MVTO does not offer).
    fn read_pivot(&self, i: usize) -> &PivotCell {
        let r = &self.st.reads[i];
        self.pivots.cell_of_found_key(r.table, r.key, self.guard)
    }

    /// Pre-epoch, or "some version of this epoch" (the rule only distinguishes the two).
    fn read_version(&self, i: usize, epoch: u32) -> VersionNumber {
        if pre_epoch(version(self.st.reads[i].version).wts, epoch) {
            PRE_EPOCH
        } else {
            SATURATED
        }
    }

    #[inline(always)]
    fn read_is_pre_epoch(&self, i: usize, epoch: u32) -> bool {
        pre_epoch(version(self.st.reads[i].version).wts, epoch)
    }

    fn write_count(&self) -> usize {
        self.st.writes.len()
    }

    fn write_item(&self, i: usize) -> (u16, u64) {
        let w = &self.st.writes[i];
        (w.table.0, w.key)
    }

    fn write_is_blind(&self, i: usize) -> bool {
        let w = &self.st.writes[i];
        w.kind == WriteKind::Put && w.blind && !self.st.reads.iter().any(|r| r.rec == w.rec)
    }

    fn write_pivot(&self, i: usize) -> &PivotCell {
        let w = &self.st.writes[i];
        self.pivots.cell_of_found_key(w.table, w.key, self.guard)
    }

    #[inline(always)]
    fn has_read_omit(&self) -> bool {
        marks_in_head::<W>()
    }

    fn write_read_marked(&self, i: usize, epoch: u32) -> bool {
        record(self.st.writes[i].rec)
            .head
            .read_marked(u64::from(epoch), self.guard)
    }

    fn claim_write(&self, i: usize, epoch: u32, ignore_reads: bool) -> bool {
        record(self.st.writes[i].rec)
            .head
            .claim(u64::from(epoch), ignore_reads, self.guard)
    }

    /// A *committed* version whose `wts` lies in `epoch` (a pending one may still abort).
    fn has_epoch_version(&self, i: usize, epoch: u32) -> bool {
        let start = epoch_start(u64::from(epoch));
        let mut cur = record(self.st.writes[i].rec)
            .head
            .load(Ordering::SeqCst)
            .version(self.guard);
        while let Some(v) = deref(cur) {
            if v.wts < start {
                return false;
            }
            if epoch_of(v.wts) == u64::from(epoch) && v.status() == COMMITTED {
                return true;
            }
            cur = v.older.load(Ordering::SeqCst, self.guard);
        }
        false
    }

    fn has_scans(&self) -> bool {
        self.st.scanned
    }

    /// `mvto-nwr-single` (module docs, "Single-write omitters"): walks the written item's list
    /// newest first. A *candidate* pivot is a committed version `q` of `epoch` with `wts(q) > ts`
    /// whose next committed version below, `u`, has `u.rts < wts(q)`: `q`'s writer did not read
    /// the item (its read would have raised `u.rts` to `wts(q)` before it committed, and this
    /// `Acquire` status load of `q` synchronizes with that commit). If `u` is absent (a tombstone
    /// or the initial absent version), the item's absent floor must be below `wts(q)`
    /// too: `q`'s writer may have scanned the range before the item had a record (the initial
    /// absent version can be linked below `q` later, by an older reader). The lowest candidate is
    /// the pivot; committed versions of `epoch` above `ts` but no candidate mean
    /// [`SinglePivot::ReadByItsWriter`] (also when nothing committed lies below: the writer may
    /// have scanned past a key with no record); none at all, [`SinglePivot::Missing`].
    fn single_write_pivot(&self, i: usize, epoch: u32) -> SinglePivot {
        let epoch = u64::from(epoch);
        let w = &self.st.writes[i];
        let mut cur = record(w.rec)
            .head
            .load(Ordering::SeqCst)
            .version(self.guard);
        let mut above: Option<&crate::version::Version> = None;
        let (mut lowest, mut best) = (0, 0);
        while let Some(v) = deref(cur) {
            if v.status() == COMMITTED {
                if let Some(q) = above
                    && epoch_of(q.wts) == epoch
                    && v.rts.load(Ordering::SeqCst) < q.wts
                    && (!v.tombstone || (self.absent_floor)(w.table, w.key) < q.wts)
                {
                    best = q.wts;
                }
                if v.wts < self.ts {
                    break;
                }
                if epoch_of(v.wts) == epoch {
                    lowest = v.wts;
                }
                above = Some(v);
            }
            cur = v.older.load(Ordering::SeqCst, self.guard);
        }
        if best != 0 {
            self.pivot_wts.set(best);
            SinglePivot::Unread
        } else if lowest != 0 {
            self.pivot_wts.set(lowest);
            SinglePivot::ReadByItsWriter
        } else {
            SinglePivot::Missing
        }
    }

    /// `mvto-nwr-single` validates every read at the pivot's timestamp instead
    /// ([`NwrBaseline::overwriters_valid`]), so a read of a version of the epoch is allowed.
    /// (Only the single-write rule asks; `mvto-nwr`'s `try_omit` checks its reads itself.)
    fn single_write_reads_ok(&self, _epoch: u32) -> bool {
        true
    }

    /// `mvto-nwr`: Silo's check on MVTO's lists: each version read is still the newest
    /// non-aborted version.
    ///
    /// `mvto-nwr-single`: the omitter's reads are valid at its position, just below the pivot
    /// `p` (`bound = wts(p)`, chosen by `single_write_pivot`): each version read is the newest
    /// non-aborted version with `wts <= bound`, committed; checked once with loads only (the
    /// common failure leaves no trace), then each read's `rts` is raised to `bound`
    /// (`fetch_max`, `SeqCst`) and the check repeated. After the raise no version with `wts` in
    /// `(wts(v), bound]` can commit (its writer's `rts` walk sees `bound` and aborts
    /// `WriteTooLate`; plain MVTO's store-load argument, `crate::commit`). The test-only mutant
    /// `NwrValidateReadsBeforePivot` runs before the pivot is known (`bound = 0`) and checks the
    /// reads at the transaction's own timestamp only, which MVTO's execution already ensured.
    fn overwriters_valid(&self) -> bool {
        if W::SINGLE_WRITE_OMITTERS {
            let bound = self.pivot_wts.get();
            if bound == 0 {
                return self.reads_visible_at(self.ts - 1);
            }
            if !self.reads_visible_at(bound) {
                return false;
            }
            for r in self.st.reads.iter() {
                version(r.version).rts.fetch_max(bound, Ordering::SeqCst);
            }
            return self.reads_visible_at(bound);
        }
        self.st.reads.iter().all(|r| {
            let head = record(r.rec).head.load(Ordering::SeqCst);
            let mut cur = head.version(self.guard);
            if head.is_retired() {
                // Being unlinked: this load is the read's half of the retirer's store-load
                // pattern (`crate::retire`), as in plain validation.
                return false;
            }
            while let Some(v) = deref(cur) {
                if v.status() != ABORTED {
                    return std::ptr::eq(v, r.version);
                }
                cur = v.older.load(Ordering::SeqCst, self.guard);
            }
            false
        })
    }

    fn mutation(&self) -> Option<NwrMutation> {
        self.mutation
    }
}

/// Whether `rec` has a committed version with `wts > ts`.
fn has_newer_committed(rec: &crate::record::MvtoRecord, ts: u64, guard: &Guard) -> bool {
    let mut cur = rec.head.load(Ordering::SeqCst).version(guard);
    while let Some(v) = deref(cur) {
        if v.wts <= ts {
            return false;
        }
        if v.status() == COMMITTED {
            return true;
        }
        cur = v.older.load(Ordering::SeqCst, guard);
    }
    false
}

/// Step 1 of the module docs: marks every pre-epoch read of the committing transaction (epoch
/// `epoch`, timestamp `ts`) in its record's head word and returns the index of the
/// first read that an omitted write of this epoch may be ordered after (the commit must abort),
/// if any. With `check == false` (the test-only mutant `NwrSkipOldReaderCheck`) it marks every
/// read and returns `None`.
pub(crate) fn merge_reads_checked<W: WriteOmission>(
    view: &NwrView<'_, W>,
    epoch: u32,
    ts: u64,
    check: bool,
) -> Option<usize> {
    for (i, r) in view.st.reads.iter().enumerate() {
        if !pre_epoch(version(r.version).wts, epoch) {
            continue;
        }
        if !marks_in_head::<W>() {
            continue;
        }
        let maybe_omitted = record(r.rec).head.mark_read(u64::from(epoch), view.guard);
        if check && maybe_omitted && has_newer_committed(record(r.rec), ts, view.guard) {
            return Some(i);
        }
    }
    None
}

/// Ends a transaction committed with every write omitted: nothing is linked; the history
/// records its writes as invisible versions at the start of epoch `epoch` (module docs), or,
/// with single-write omitters, just before the pivot `pivot_wts` (the same `order`, invisible:
/// `txlab_core::history::WriteEvent::position`; the transaction's own timestamp if the test-only
/// mutant `NwrSkipEpochCheck` omitted a write without a pivot).
pub(crate) fn finish_omitted<Rec: Recorder, W: WriteOmission>(
    tx: &mut MvtoTxn<'_, '_, Rec, W>,
    epoch: u32,
    pivot_wts: u64,
) -> CommitInfo {
    let engine = tx.w.engine;
    if W::SINGLE_WRITE_OMITTERS {
        // The worker's next transaction must follow this one: advance the clock past the pivot
        // (its timestamp would otherwise fall below the omitter's position, `wts(p) - 1/2`).
        tx.w.clock.observe(pivot_wts);
    }
    if Rec::ENABLED {
        let st = &mut tx.w.state;
        // One stamp per transaction: a single total order of omitted writes on every key.
        let room = epoch_start(0) - 1;
        let stamp = engine.omit_stamp.fetch_add(1, Ordering::Relaxed) % room + 1;
        let tag = (epoch_start(u64::from(epoch)) - epoch_start(0)) | stamp;
        let order = if !W::SINGLE_WRITE_OMITTERS {
            tag
        } else if pivot_wts != 0 {
            pivot_wts
        } else {
            tx.ts
        };
        for w in st.writes.iter() {
            st.h_writes.push(WriteEvent {
                table: w.table,
                key: w.key,
                version: tag,
                order,
                kind: HWriteKind::Put,
                visible: false,
            });
        }
        let rec = TxnRecord {
            id: txlab_core::history::txn_id(st.id, st.seq),
            reads: std::mem::take(&mut st.h_reads),
            writes: std::mem::take(&mut st.h_writes),
            scans: std::mem::take(&mut st.h_scans),
            outcome: Outcome::Committed,
            begin_ns: tx.begin_ns,
            end_ns: engine.recorder.now_ns(),
        };
        engine.recorder.record(rec);
    }
    tx.finish();
    CommitInfo {
        epoch: u64::from(epoch),
        acknowledged: false,
        read_only: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timestamp::{EPOCH_SHIFT, NWR_RESERVED, WORKER_BITS};

    #[test]
    fn omitted_tags_sort_between_epochs() {
        // epoch_start(e) - epoch_start(0) is e << 40, and stamps stay below epoch_start(0).
        for e in [1u64, 2, 77] {
            assert_eq!(epoch_start(e) - epoch_start(0), e << EPOCH_SHIFT);
            assert_eq!(epoch_start(0), NWR_RESERVED << WORKER_BITS);
            let lowest = (e << EPOCH_SHIFT) | 1;
            let highest = (e << EPOCH_SHIFT) | (epoch_start(0) - 1);
            assert!(
                lowest > (e << EPOCH_SHIFT) - 1,
                "above every earlier epoch's tag"
            );
            assert!(
                highest < epoch_start(e),
                "below every timestamp of epoch {e}"
            );
            assert!(pre_epoch(highest, e as u32) && !pre_epoch(epoch_start(e), e as u32));
        }
        assert!(pre_epoch(0, 0) && pre_epoch(0, 1));
    }
}
