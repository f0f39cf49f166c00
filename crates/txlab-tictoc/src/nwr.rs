//! TicToc+NWR (`TicToc<Rec, Nwr>`, the NWR paper §6.1.1): TicToc's hooks for the rule
//! (`txlab_nwr::Hooks`) and the rule's places in TicToc's commit (`crate::commit`), each one call
//! from there; everything here is compiled out for `NoNwr`. For TicToc the paper's authors
//! shrink the timestamp word to 32 bits and keep the epoch in the other 32; txlab keeps its
//! 47-bit timestamps and prefixes them with the epoch instead (`crate::word`).
//!
//! ```text
//! Phase 0  (only with Nwr and AckMode::EpochStable, for transactions that write)
//!          filters with plain loads and the epoch e0 seen now (txlab_nwr::rule::
//!          omission_shape_ok, omission_reads_ok: no scan, writes blind, reads of versions
//!          installed before e0); most writers of YCSB-B stop here, before the fence
//!          fence(SeqCst); e = global epoch (>= e0)
//!          mark every read of a version installed before e (history tag < base(e)) in its
//!          record's read-epoch word (txlab_nwr::read_mark; check (4), outside the object)
//!          if txlab_nwr::try_omit accepts (all writes blind, no scans, every read of a pre-e
//!          version that is still current, unlocked, and whose rts this check extends to at
//!          least floor(e); every written record's current version installed in e; no pre-e
//!          read of it merged in e): commit in epoch e, nothing locked or installed; done.
//!          otherwise fall through (the baseline alone decides; NWR never aborts)
//! Step 1   as above
//! Step 2   commit_ts = max(TicToc's commit_ts, floor(e)); abort (retryable,
//!          epoch_timestamps_exhausted) if commit_ts >= base(e + 1)
//!          mark every pre-e read (every commit, read-only ones too)
//!          except: a read-only transaction whose reads are all pre-e (by history tag) and whose
//!          TicToc commit_ts is below floor(e) keeps that commit_ts and merges nothing
//!          (txlab_nwr::is_pre_epoch_reader: it is serialized before every omitter of e)
//! Step 3-4 as above; a read whose wts moved by a delta-overflow shift is recognised by its
//!          history tag (shifted_version), so an extension into the epoch is no false abort;
//!          installing the first version of a never-written record first marks its read-epoch
//!          word (a scan may have read the key's absence without a read entry)
//! ```
//!
//! `base(e) = e << 24`, `floor(e) = base(e) | 2^23` (`crate::word`). The serial order: every
//! baseline commit at its `commit_ts`, which for a transaction of epoch `e` lies in
//! `[floor(e), base(e + 1))`; every omitting transaction of epoch `e` at the start of epoch `e`
//! (just below `floor(e)`, after everything of earlier epochs), omitters among themselves in the
//! order of their history stamps. Its reads are valid there (the version was current and its
//! `rts` now reaches `floor(e)`, so no version below the floor can be installed after it), and each
//! omitted write sits after the item's last pre-`e` version and before its first `e` version.
//!
//! **The old-version hazard** (TicToc may commit a read of an overwritten version): a transaction
//! `R` of epoch `e` (so `commit_ts(R) >= floor(e)`) that read `x0`, the last pre-`e` version of a
//! record an omitter `O` of `e` wrote, would sit after `O` yet have missed `O`'s write. It cannot
//! commit: `x0` must be valid at `commit_ts(R)`, so either `R` wrote `x` itself (then `R`
//! installed the pivot, after marking its read of `x0`), or some transaction `T` extended `x0`'s
//! `rts` to `>= floor(e)`. A `T` of epoch `>= e` does that only after marking `x0`'s read in `x`'s
//! read-epoch word (`txlab_nwr::read_mark`; Phase 0 marks before its extensions, Step 2 before
//! Step 3). The pivot is installed after that extension (its writer's lock CAS follows it on the
//! word, and its timestamp exceeds it), and `O` loaded the pivot before its read-modify-write of
//! the mark word, so the mark happens-before `O`'s check: `O` reads a mark `>= e` and declines.
//! (If `T` skipped its `fetch_max` because its load already saw a mark `>= e`, that mark precedes
//! `O`'s check in the word's modification order by read-write coherence, and the word only
//! grows.) A `T` that extends without marking is an unmarked pre-epoch reader of an epoch above
//! `e`; any writer that locks `x` after its extension then reads an epoch above `e` too, so its
//! version is no pivot of `e`. No reader is ever aborted because of NWR; `R`, if it read `x0`
//! before the extension, fails TicToc's own validation (its version was replaced).
//! `docs/protocols/tictoc.md` ("NWR") has the full argument and a worked example.
//!
//! ## Single-write omitters (`TicToc<Rec, NwrSingleWrite>`, `tictoc-nwr-single`)
//!
//! ```text
//! Phase 0  (a non-empty write set; txlab_nwr::rule::single_write_shape_ok: no scan, exactly one
//!          write, blind)
//!          fence(SeqCst); e = global epoch
//!          if every read's tag is older than e and txlab_nwr::try_omit_single accepts (the
//!          written record's word and tag, read consistently, are of epoch e: timestamp p in
//!          [floor(e), base(e + 1)), and the tag has no TAG_PIVOT_READ; then every read still
//!          current and unlocked, its rts extended by CAS to at least p): commit in e, nothing
//!          installed, nothing merged.
//! Step 1-2 as TicToc+NWR (the floor, the pre-epoch reader exemption); nothing is merged
//! Step 3   as above; a read of a record we locked flags that write entry as read
//! Step 4   as above; each installed tag carries TAG_PIVOT_READ (crate::record) if the replaced
//!          version is of epoch e and carries it (sticky), or, for the epoch's first version, if
//!          we read the record, insert or delete it, or replace an absent version (a scan may
//!          have missed the key: the scan-miss rule)
//! ```
//!
//! Serial order: baseline commits at `commit_ts`; an omitter of `y` just before `y`'s first
//! version of `e` (timestamp `p1 <= p`), i.e. at `p1 - 1/2`, omitters of one `y` among themselves
//! by stamp; its write recorded at `base(e) | stamp` (between `y`'s last pre-`e` version and its
//! first `e` version, as in TicToc+NWR). Why that position holds:
//! - every transaction that read `y`'s last pre-`e` version `y0` other than the writer of `y`'s
//!   first `e` version sits below `p1`: its `commit_ts <= rts(y0) < p1` (that writer locked `y`
//!   after the last extension). That writer's own read is the mark. So readers leave no marks,
//!   and the old-version hazard of TicToc+NWR (a reader of `y0` serialized after an omitter that
//!   sits at the epoch's start) cannot arise: the omitter sits above every such reader.
//! - the omitter's reads are of versions older than `e` (below `p1`), and their `rts` now reach
//!   `p >= p1`, so whoever overwrites one commits above `p`, after the omitter; an omitter of an
//!   item it read sits before that item's first `e` version, above `p` too. Extending to the
//!   floor only is not enough (the mutant `NwrValidateReadsBeforePivot`): `Y` reads `y0` (whose
//!   `rts` another reader pushed to `floor(e) + 5`) and overwrites `z` at `floor(e) + 1` after the
//!   omitter read `z`, which closes `O -rw(z)-> Y -rw(y)-> O`.
//!
//! `docs/protocols/tictoc.md`, "Single-write omitters", has the whole argument.
use crate::commit::shifted_version;
use crate::engine::{TicToc, TicTocTxn};
use crate::record::{TAG_PIVOT_READ, TicTocRecord};
use crate::word::{
    EPOCH_TS_SHIFT, MAX_WTS, epoch_base, epoch_floor, is_absent, is_locked, rts, with_rts, wts,
};
use std::cell::Cell;
use txlab_core::CommitInfo;
use txlab_core::protocol::epoch::EpochHandle;
use txlab_core::protocol::history::Recorder;
use txlab_core::protocol::sync::{AtomicU32, Ordering, fence};
use txlab_nwr::pivot::{PRE_EPOCH, VersionNumber, epoch_version_number};
use txlab_nwr::{Hooks, NwrMutation, SinglePivot, View, WriteOmission};
use txlab_occ::WriteEntry;

/// TicToc's hooks, for a transaction whose epoch is `epoch` (fixed by [`Hooks::serialize`] in
/// Phase 0, known already after Step 1). Versions are named by their history tags (install
/// timestamps, `read_tags`), which say in which epoch they were installed.
pub(crate) struct TicTocHooks<'a> {
    epochs: &'a EpochHandle,
    read_tags: &'a [u64],
    epoch: Cell<u64>,
}

type TicTocView<'a, Rec, Omit> = View<'a, TicToc<Rec, Omit>, TicTocHooks<'a>>;

impl<'a> TicTocHooks<'a> {
    fn new(epochs: &'a EpochHandle, read_tags: &'a [u64], epoch: u64) -> Self {
        Self {
            epochs,
            read_tags,
            epoch: Cell::new(epoch),
        }
    }
}

#[inline]
fn rec<'a>(p: *const TicTocRecord) -> &'a TicTocRecord {
    // SAFETY: set pointers were obtained under the committing transaction's guard, pinned for the
    // whole commit (`txlab_occ::sets`).
    unsafe { &*p }
}

impl<Rec: Recorder, Omit: WriteOmission> Hooks<TicToc<Rec, Omit>> for TicTocHooks<'_> {
    /// `fence(SeqCst)`, then the global epoch, if its timestamps fit the 47-bit field.
    fn serialize(&self) -> Option<u32> {
        fence(Ordering::SeqCst);
        let epoch = self.epochs.global();
        self.epoch.set(epoch);
        (epoch_floor(epoch) <= MAX_WTS).then_some(epoch as u32)
    }

    /// From the version's history tag (its install timestamp), not the word's `wts`, which a
    /// delta-overflow shift may have moved into this epoch's range (`crate::word`). Versions of
    /// this epoch are numbered by their distance above `floor(epoch)` (monotone in the version
    /// order, saturating; the conservative rule only compares them with `PRE_EPOCH`).
    fn read_version(&self, _v: &TicTocView<'_, Rec, Omit>, i: usize, epoch: u32) -> VersionNumber {
        let (tag, epoch) = (self.read_tags[i], u64::from(epoch));
        if tag < epoch_base(epoch) {
            PRE_EPOCH
        } else {
            epoch_version_number(tag.saturating_sub(epoch_floor(epoch)) + 1)
        }
    }

    #[inline(always)]
    fn read_is_pre_epoch(&self, _v: &TicTocView<'_, Rec, Omit>, i: usize, epoch: u32) -> bool {
        self.read_tags[i] < epoch_base(u64::from(epoch))
    }

    /// Check (4)'s mark: the value's sidecar word (`txlab_nwr::read_mark`).
    #[inline]
    fn mark<'r>(&self, rec: &'r TicTocRecord) -> Option<&'r AtomicU32> {
        Some(rec.value.sidecar())
    }

    /// The current version's history tag is of `epoch` (read consistently with the word; a locked
    /// or changing record counts as "no", which only sends the transaction to the baseline).
    fn has_epoch_version(&self, v: &TicTocView<'_, Rec, Omit>, i: usize, epoch: u32) -> bool {
        let epoch = u64::from(epoch);
        v.write_rec(i)
            .stable_tag()
            .is_some_and(|(_, tag)| tag >= epoch_floor(epoch) && tag < epoch_base(epoch + 1))
    }

    /// `tictoc-nwr-single`: the written record's current version, read consistently with its
    /// tag, is of `epoch` (its timestamp in `[floor(epoch), base(epoch + 1))`; a locked or changing
    /// record counts as "no"), and the tag's [`TAG_PIVOT_READ`] says whether the writer of the
    /// record's first version of `epoch` read the record. Remembers the version's timestamp in
    /// `placed_at` for [`Hooks::overwriters_valid`].
    fn single_write_pivot(
        &self,
        v: &TicTocView<'_, Rec, Omit>,
        i: usize,
        epoch: u32,
    ) -> SinglePivot {
        let epoch = u64::from(epoch);
        let Some((_, tag)) = v.write_rec(i).stable_marked_tag() else {
            return SinglePivot::Missing;
        };
        let ts = tag & !TAG_PIVOT_READ;
        if ts < epoch_floor(epoch) || ts >= epoch_base(epoch + 1) {
            return SinglePivot::Missing;
        }
        v.placed_at.set(ts);
        if tag & TAG_PIVOT_READ != 0 {
            SinglePivot::ReadByItsWriter
        } else {
            SinglePivot::Unread
        }
    }

    /// Silo's overwriter check (each read's version is still the current one and unlocked) plus
    /// TicToc's validity at the omitter's serialization point, the start of the epoch: each read's
    /// `rts` is extended to at least `floor(epoch)` (a CAS, retried while the version stays
    /// current), so no version with a timestamp below the floor can be installed after it any
    /// more. The caller (`merge_reads`, run first) has already marked these reads
    /// (`txlab_nwr::read_mark`).
    ///
    /// `tictoc-nwr-single` extends to the written record's current timestamp instead (at least
    /// the floor), seen just before by `single_write_pivot`: the omitter sits just before the
    /// record's first version of the epoch, and whoever overwrites what it read must come after
    /// that version too (module docs; the test-only mutant that validates before observing the
    /// pivot extends to the floor only).
    fn overwriters_valid(&self, v: &TicTocView<'_, Rec, Omit>) -> bool {
        let floor = epoch_floor(self.epoch.get()).max(v.placed_at.get());
        v.sets
            .reads
            .iter()
            .zip(self.read_tags)
            .all(|(r, &tag)| extend_unlocked(rec(r.rec), r.seen, tag, floor))
    }
}

/// Extends the `rts` of the version read as `seen` (history tag `tag`) to at least `floor`, if
/// it is still the record's current version and unlocked (a CAS, retried while it stays so).
fn extend_unlocked(record: &TicTocRecord, seen: u64, tag: u64, floor: u64) -> bool {
    let mut cur = record.word.load(Ordering::Acquire);
    loop {
        if wts(cur) != wts(seen) {
            match shifted_version(record, cur, Some(tag), false) {
                Some(same) => cur = same,
                None => return false,
            }
        }
        if is_locked(cur) {
            return false;
        }
        if rts(cur) >= floor {
            return true;
        }
        match record.word.compare_exchange_weak(
            cur,
            with_rts(cur, floor),
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => return true,
            Err(now) => cur = now,
        }
    }
}

/// Phase 0 (module docs): tries to commit `tx` with every write omitted.
#[inline]
pub(crate) fn try_omit<Rec: Recorder, Omit: WriteOmission>(
    tx: &mut TicTocTxn<'_, '_, Rec, Omit>,
    mutation: Option<NwrMutation>,
) -> Option<CommitInfo> {
    if tx.w.sets.writes.is_empty() {
        return None;
    }
    let engine = tx.w.engine;
    let w = &mut *tx.w;
    let seen = w.epoch.global();
    let hooks = TicTocHooks::new(&w.epoch, &w.state.read_tags, seen);
    let view = View::new(&w.sets, &tx.guard, &engine.nwr, mutation, hooks);
    let stats = &mut w.state.nwr;
    let epoch = if Omit::SINGLE_WRITE_OMITTERS {
        txlab_nwr::try_omit_one(&view, stats)
    } else {
        // Shape and reads only: unlike Silo, TicToc gained nothing measurable from also checking
        // the written records before the fence (`nwr_fail_epoch` is 1.5 % of YCSB-B's commits).
        txlab_nwr::try_omit_all(&view, seen as u32, false, stats)
    }?;
    let epoch = u64::from(epoch);
    let reserved = 1u64 << (EPOCH_TS_SHIFT - 1);
    Some(txlab_nwr::finish_omitted(
        tx,
        &engine.nwr,
        epoch,
        reserved - 1,
        |stamp| (epoch_base(epoch) | stamp, epoch_base(epoch) | stamp),
    ))
}

/// Step 2 in TicToc+NWR: lifts `commit_ts` to the epoch's floor and tells whether the transaction
/// is an unmarked pre-epoch reader instead: a read-only transaction that read only versions
/// installed before this epoch (by history tag) keeps plain TicToc's commit timestamp if it lies
/// below the epoch's floor, and needs no read marks (`txlab_nwr::is_pre_epoch_reader`). Below
/// `base(e)` it sits at its timestamp; in `[base(e), floor(e))` (a read whose wts a delta shift
/// moved there) every overwriter of what it read has a timestamp above `base(e)`, hence belongs
/// to epoch >= e, so it sits just below `base(e)`, after all earlier epochs. Either way it
/// precedes every omitter of the epoch, and it never extends an `rts` to `floor(e)` without a
/// mark (merge-before-extend).
pub(crate) fn lift_to_epoch<Rec: Recorder, Omit: WriteOmission>(
    tx: &TicTocTxn<'_, '_, Rec, Omit>,
    commit_ts: u64,
    epoch: u64,
    nwr_on: bool,
) -> (u64, bool) {
    let w = &*tx.w;
    let unmarked = nwr_on
        && w.sets.writes.is_empty()
        && commit_ts < epoch_floor(epoch)
        && txlab_nwr::is_pre_epoch_reader(
            &View::new(
                &w.sets,
                &tx.guard,
                &w.engine.nwr,
                None,
                TicTocHooks::new(&w.epoch, &w.state.read_tags, epoch),
            ),
            epoch as u32,
        );
    if unmarked {
        (commit_ts, true)
    } else {
        (commit_ts.max(epoch_floor(epoch)), false)
    }
}

/// Algorithm 3 (1) for baseline commits, read-only ones included, before Step 3: every read of a
/// pre-epoch version is marked (`txlab_nwr::read_mark`) *before* Step 3 may extend its rts to
/// `commit_ts >= floor(epoch)` (the invariant that keeps old-version reads safe). Not by an
/// unmarked pre-epoch reader ([`lift_to_epoch`]), nor under single-write omitters, whose
/// readers mark nothing (`nwr_unmarked_readers` counts every read-only commit there, as in
/// `silo-nwr-single`).
pub(crate) fn mark_reads<Rec: Recorder, Omit: WriteOmission>(
    tx: &mut TicTocTxn<'_, '_, Rec, Omit>,
    epoch: u64,
    unmarked: bool,
) {
    let engine = tx.w.engine;
    let w = &mut *tx.w;
    if unmarked || (Omit::SINGLE_WRITE_OMITTERS && w.sets.writes.is_empty()) {
        w.state.nwr.unmarked_readers += 1;
    } else if !Omit::SINGLE_WRITE_OMITTERS {
        let hooks = TicTocHooks::new(&w.epoch, &w.state.read_tags, epoch);
        let view = View::new(&w.sets, &tx.guard, &engine.nwr, None, hooks);
        txlab_nwr::merge_reads(&view, epoch as u32, &mut w.state.nwr);
    }
}

/// Step 4's marks for write `w` installing the first version of a record in `epoch`, returned as
/// the bits to set in its history tag:
///
/// - `tictoc-nwr-single`: [`TAG_PIVOT_READ`], sticky within the epoch; the epoch's first version
///   is marked if we read the record (a read-modify-write, insert, delete, point read or scan
///   hit) or replace an absent version (a scan may have missed the key without a read entry).
///   The old tag is stable: only the lock holder changes it.
/// - `tictoc-nwr`: the first version of a key that had no record: a scan may have read "absent"
///   from the key's absence in the index, without a read entry to merge. That possible read is
///   merged into the record's read-epoch word before publishing, so no omitter of this epoch
///   orders a write between the absent version and ours (docs: "Predicate reads").
#[inline]
pub(crate) fn install_marks<Omit: WriteOmission>(
    r: &TicTocRecord,
    w: &WriteEntry<TicTocRecord, u64>,
    epoch: u64,
) -> u64 {
    if Omit::SINGLE_WRITE_OMITTERS {
        let old = r.tag.load(Ordering::Relaxed);
        let marked = if old & !TAG_PIVOT_READ >= epoch_base(epoch) {
            old & TAG_PIVOT_READ != 0
        } else {
            w.read || w.kind.observed_presence() || is_absent(w.scratch)
        };
        if marked { TAG_PIVOT_READ } else { 0 }
    } else {
        if is_absent(w.scratch) && r.tag.load(Ordering::Relaxed) == 0 {
            txlab_nwr::read_mark::mark(r.value.sidecar(), epoch as u32);
        }
        0
    }
}
