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
//! invisible, so it sorts just before `p` (`txlab_core::protocol::history::WriteEvent::position`), and the
//! worker's clock moves past `wts(p)`. The argument: `docs/protocols/mvto.md`, "Single-write
//! omitters".

use crate::engine::{Mvto, MvtoTxn};
use crate::record::{MvtoRecord, Visible, deref};
use crate::timestamp::{epoch_of, epoch_start};
use crate::version::{ABORTED, COMMITTED, Version};
use crossbeam_epoch::Guard;
use txlab_core::protocol::history::Recorder;
use txlab_core::protocol::sync::Ordering;
use txlab_core::{CommitInfo, Conflict, ConflictCause, TxError};
use txlab_nwr::pivot::{PRE_EPOCH, SATURATED, VersionNumber};
use txlab_nwr::{Hooks, NwrMutation, SinglePivot, View, WriteOmission};

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

#[inline]
fn record<'a>(p: *const MvtoRecord) -> &'a MvtoRecord {
    // SAFETY: set pointers were obtained under the committing transaction's guard, pinned for the
    // whole commit (`txlab_occ::sets`).
    unsafe { &*p }
}

#[inline]
fn version<'a>(p: *const Version) -> &'a Version {
    // SAFETY: as for `record`; versions are freed only after every guard that could reach them
    // is dropped (`crate::gc`).
    unsafe { &*p }
}

/// MVTO's hooks, for a transaction with timestamp `ts` of `engine`.
pub(crate) struct MvtoHooks<'a, Rec: Recorder, W: WriteOmission> {
    engine: &'a Mvto<Rec, W>,
    ts: u64,
}

type MvtoView<'a, Rec, W> = View<'a, Mvto<Rec, W>, MvtoHooks<'a, Rec, W>>;

impl<'a, Rec: Recorder, W: WriteOmission> MvtoHooks<'a, Rec, W> {
    /// `mvto-nwr-single`'s read validation at `bound = wts(p)`: each version read is still the
    /// newest non-aborted version of its item with `wts <= bound`, and committed.
    fn reads_visible_at(v: &MvtoView<'_, Rec, W>, bound: u64) -> bool {
        v.sets.reads.iter().all(|r| {
            matches!(record(r.rec).visible(bound + 1, Ordering::SeqCst, v.guard),
                Visible::Committed(c) if std::ptr::eq(c, r.seen))
        })
    }
}

impl<Rec: Recorder, W: WriteOmission> Hooks<Mvto<Rec, W>> for MvtoHooks<'_, Rec, W> {
    /// The epoch of the timestamp fixed at begin: no fence, MVTO serializes by timestamp.
    fn serialize(&self) -> Option<u32> {
        Some(epoch_of(self.ts) as u32)
    }

    /// Pre-epoch, or "some version of this epoch" (the rule only distinguishes the two).
    fn read_version(&self, v: &MvtoView<'_, Rec, W>, i: usize, epoch: u32) -> VersionNumber {
        if pre_epoch(version(v.sets.reads[i].seen).wts, epoch) {
            PRE_EPOCH
        } else {
            SATURATED
        }
    }

    #[inline(always)]
    fn read_is_pre_epoch(&self, v: &MvtoView<'_, Rec, W>, i: usize, epoch: u32) -> bool {
        pre_epoch(version(v.sets.reads[i].seen).wts, epoch)
    }

    const READ_OMIT: bool = marks_in_head::<W>();

    fn write_read_marked(&self, v: &MvtoView<'_, Rec, W>, i: usize, epoch: u32) -> bool {
        v.write_rec(i).head.read_marked(u64::from(epoch), v.guard)
    }

    fn claim_write(&self, v: &MvtoView<'_, Rec, W>, i: usize, epoch: u32, ignore: bool) -> bool {
        v.write_rec(i).head.claim(u64::from(epoch), ignore, v.guard)
    }

    /// A *committed* version whose `wts` lies in `epoch` (a pending one may still abort).
    fn has_epoch_version(&self, v: &MvtoView<'_, Rec, W>, i: usize, epoch: u32) -> bool {
        let start = epoch_start(u64::from(epoch));
        let mut cur = v.write_rec(i).head.load(Ordering::SeqCst).version(v.guard);
        while let Some(x) = deref(cur) {
            if x.wts < start {
                return false;
            }
            if epoch_of(x.wts) == u64::from(epoch) && x.status() == COMMITTED {
                return true;
            }
            cur = x.older.load(Ordering::SeqCst, v.guard);
        }
        false
    }

    /// `mvto-nwr-single` (module docs, "Single-write omitters"): walks the written item's list
    /// newest first. A *candidate* pivot is a committed version `q` of `epoch` with `wts(q) > ts`
    /// whose next committed version below, `u`, has `u.rts < wts(q)`: `q`'s writer did not read
    /// the item (its read would have raised `u.rts` to `wts(q)` before it committed, and this
    /// `Acquire` status load of `q` synchronizes with that commit). If `u` is absent (a tombstone
    /// or the initial absent version), the item's absent floor must be below `wts(q)`
    /// too: `q`'s writer may have scanned the range before the item had a record (the initial
    /// absent version can be linked below `q` later, by an older reader). The lowest candidate is
    /// the pivot (its `wts` goes to `placed_at`); committed versions of `epoch` above `ts` but no
    /// candidate mean [`SinglePivot::ReadByItsWriter`] (also when nothing committed lies below:
    /// the writer may have scanned past a key with no record); none at all,
    /// [`SinglePivot::Missing`].
    fn single_write_pivot(&self, v: &MvtoView<'_, Rec, W>, i: usize, epoch: u32) -> SinglePivot {
        let epoch = u64::from(epoch);
        let w = &v.sets.writes[i];
        let mut cur = record(w.rec).head.load(Ordering::SeqCst).version(v.guard);
        let mut above: Option<&Version> = None;
        let (mut lowest, mut best) = (0, 0);
        while let Some(x) = deref(cur) {
            if x.status() == COMMITTED {
                if let Some(q) = above
                    && epoch_of(q.wts) == epoch
                    && x.rts.load(Ordering::SeqCst) < q.wts
                    && (!x.tombstone || self.engine.absent_floor(w.table, w.key) < q.wts)
                {
                    best = q.wts;
                }
                if x.wts < self.ts {
                    break;
                }
                if epoch_of(x.wts) == epoch {
                    lowest = x.wts;
                }
                above = Some(x);
            }
            cur = x.older.load(Ordering::SeqCst, v.guard);
        }
        if best != 0 {
            v.placed_at.set(best);
            SinglePivot::Unread
        } else if lowest != 0 {
            v.placed_at.set(lowest);
            SinglePivot::ReadByItsWriter
        } else {
            SinglePivot::Missing
        }
    }

    /// `mvto-nwr-single` validates every read at the pivot's timestamp instead
    /// ([`Hooks::overwriters_valid`]), so a read of a version of the epoch is allowed.
    fn single_write_reads_ok(&self, _v: &MvtoView<'_, Rec, W>, _epoch: u32) -> Option<bool> {
        Some(true)
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
    fn overwriters_valid(&self, v: &MvtoView<'_, Rec, W>) -> bool {
        if W::SINGLE_WRITE_OMITTERS {
            let bound = v.placed_at.get();
            if bound == 0 {
                return Self::reads_visible_at(v, self.ts - 1);
            }
            if !Self::reads_visible_at(v, bound) {
                return false;
            }
            for r in v.sets.reads.iter() {
                version(r.seen).rts.fetch_max(bound, Ordering::SeqCst);
            }
            return Self::reads_visible_at(v, bound);
        }
        v.sets.reads.iter().all(|r| {
            let head = record(r.rec).head.load(Ordering::SeqCst);
            if head.is_retired() {
                // Being unlinked: this load is the read's half of the retirer's store-load
                // pattern (`crate::retire`), as in plain validation.
                return false;
            }
            let mut cur = head.version(v.guard);
            while let Some(x) = deref(cur) {
                if x.status() != ABORTED {
                    return std::ptr::eq(x, r.seen);
                }
                cur = x.older.load(Ordering::SeqCst, v.guard);
            }
            false
        })
    }
}

/// Whether `rec` has a committed version with `wts > ts`.
fn has_newer_committed(rec: &MvtoRecord, ts: u64, guard: &Guard) -> bool {
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
fn merge_reads_checked<Rec: Recorder, W: WriteOmission>(
    view: &MvtoView<'_, Rec, W>,
    epoch: u32,
    ts: u64,
    check: bool,
) -> Option<usize> {
    if !marks_in_head::<W>() {
        return None;
    }
    for (i, r) in view.sets.reads.iter().enumerate() {
        if !pre_epoch(version(r.seen).wts, epoch) {
            continue;
        }
        let maybe_omitted = record(r.rec).head.mark_read(u64::from(epoch), view.guard);
        if check && maybe_omitted && has_newer_committed(record(r.rec), ts, view.guard) {
            return Some(i);
        }
    }
    None
}

/// Phase 0 (module docs, steps 1-2, and "Single-write omitters"): `Ok(Some(_))` when the
/// transaction committed with every write omitted, `Ok(None)` to go on with MVTO's own phases,
/// `Err` when the old-version-reader check aborted it.
pub(crate) fn phase0<Rec: Recorder, W: WriteOmission>(
    tx: &mut MvtoTxn<'_, '_, Rec, W>,
    mutation: Option<NwrMutation>,
    check_old_readers: bool,
) -> Result<Option<CommitInfo>, TxError> {
    let engine = tx.w.engine;
    let w = &mut *tx.w;
    let ts = w.state.ts;
    let epoch = epoch_of(ts) as u32;
    let hooks = MvtoHooks { engine, ts };
    let view = View::new(&w.sets, &tx.guard, &engine.nwr, mutation, hooks);
    let stats = &mut w.state.nwr;
    let omitted = if W::SINGLE_WRITE_OMITTERS {
        if w.sets.writes.is_empty() {
            // A read-only commit leaves no mark under this rule (as in `silo-nwr-single`).
            stats.unmarked_readers += 1;
            return Ok(None);
        }
        txlab_nwr::try_omit_one(&view, stats)
    } else {
        // A read-only transaction that read only pre-epoch versions is serialized at the start
        // of the epoch, before its omitters: no marks, no old-reader check
        // (`txlab_nwr::is_pre_epoch_reader`).
        let stale = if txlab_nwr::is_pre_epoch_reader(&view, epoch) {
            stats.unmarked_readers += 1;
            None
        } else {
            merge_reads_checked(&view, epoch, ts, check_old_readers)
        };
        if let Some(i) = stale {
            let r = w.sets.reads[i];
            w.state.old_reader_aborts += 1;
            let c = Conflict::at(ConflictCause::ReadValidation, r.table, r.key);
            return Err(tx.abort_with(c));
        }
        if w.sets.writes.is_empty() {
            return Ok(None);
        }
        txlab_nwr::try_omit_all(&view, epoch, true, stats)
    };
    let Some(epoch) = omitted else {
        return Ok(None);
    };
    let pivot_wts = view.placed_at.get();
    Ok(Some(finish_omitted(tx, epoch, pivot_wts)))
}

/// Ends a transaction committed with every write omitted: nothing is linked; the history
/// records its writes as invisible versions at the start of epoch `epoch` (module docs), or,
/// with single-write omitters, just before the pivot `pivot_wts` (the same `order`, invisible:
/// `txlab_core::protocol::history::WriteEvent::position`; the transaction's own timestamp if the test-only
/// mutant `NwrSkipEpochCheck` omitted a write without a pivot).
fn finish_omitted<Rec: Recorder, W: WriteOmission>(
    tx: &mut MvtoTxn<'_, '_, Rec, W>,
    epoch: u32,
    pivot_wts: u64,
) -> CommitInfo {
    let engine = tx.w.engine;
    let ts = tx.w.state.ts;
    if W::SINGLE_WRITE_OMITTERS {
        // The worker's next transaction must follow this one: advance the clock past the pivot
        // (its timestamp would otherwise fall below the omitter's position, `wts(p) - 1/2`).
        tx.w.state.clock.observe(pivot_wts);
    }
    let room = epoch_start(0) - 1;
    txlab_nwr::finish_omitted(tx, &engine.nwr, u64::from(epoch), room, |stamp| {
        let tag = (epoch_start(u64::from(epoch)) - epoch_start(0)) | stamp;
        let order = if !W::SINGLE_WRITE_OMITTERS {
            tag
        } else if pivot_wts != 0 {
            pivot_wts
        } else {
            ts
        };
        (tag, order)
    })
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
