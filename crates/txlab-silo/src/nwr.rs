//! Silo+NWR (the NWR paper §6.1.1): Silo's hooks for the rule (`txlab_nwr::Hooks`) and the
//! rule's four places in Silo's commit (`crate::commit`). Everything here is compiled out for
//! `NoNwr`.
//!
//! ```text
//! Phase 0  (Nwr and group commit, a non-empty write set)
//!          txlab_nwr::try_omit_all: filters with plain loads and the epoch e0 seen now (no scan,
//!          every write blind, every read older than e0, every written record has a version of
//!          e0 and no read mark of e0: on YCSB-B most writers stop here, before the fence);
//!          fence(SeqCst); e = global epoch (a SeqCst load, >= e0, so the reads are older than e
//!          too); mark every read of a version older than e in its record's read-epoch word
//!          (txlab_nwr::read_mark, check (4)'s mark); if txlab_nwr::try_omit accepts (every read
//!          still current, by SeqCst loads, every
//!          written record has a version of e, no pre-e read of it in e): commit in epoch e
//!          without locking or installing anything.
//!          (NwrSingleWrite) txlab_nwr::try_omit_one: no scan, exactly one write, blind;
//!          fence(SeqCst); e = global epoch; every read older than e, the written record's word
//!          (Acquire) of epoch e without PIVOT_READ; fence(SeqCst); every read still current and
//!          unlocked: commit in e, nothing installed, nothing written.
//!          Otherwise the baseline alone decides (NWR never aborts).
//! after the epoch read of Phase 1 (a SeqCst load, the baseline's serialization point; no fence):
//!          mark the reads (mark_reads), except a read-only transaction
//!          whose reads are all older than e (txlab_nwr::is_pre_epoch_reader: serialized at the
//!          start of e). Single-write omitters mark nothing: their one mark is PIVOT_READ.
//! Phase 2  single-write omitters: a read of a record we locked flags that write entry as read.
//! Phase 3  TIDs of epoch e start at e << 32 | 2^31 (reserve_tid), leaving the lower half of each
//!          epoch's tags to the recorded order of omitted writes. Nwr: before publishing, the
//!          scan-miss marks (mark_scan_misses); NwrSingleWrite: each word carries PIVOT_READ
//!          (pivot_read_bit).
//! ```
//!
//! The single-write mark is the only one that rule needs: the pivot writer's own read of its
//! item (`txlab_nwr::NwrSingleWrite`). A reader that passes validation with a read older than `e`
//! of a record it writes is exactly the writer of that record's first version of `e`, so the mark
//! lives in the word that publishes the pivot (the `Release` store an omitter's `Acquire` load
//! reads from) and no reader's mark can race with an omitter's check. Why it is sound:
//! `docs/protocols/nwr.md`, "A rule with fewer read marks".
//!
//! The test-only mutant `Mutation::Nwr(NwrMutation::PrintedAlgorithm)` swaps the rule for the paper's printed
//! Algorithms 2 and 3 (`txlab_nwr::printed`); its Algorithm 3 (3) runs after Phase 3
//! ([`installed`]): each blind write that installed its record's first version of the epoch resets
//! the key's pivot object to that version.
//!
//! Omitted writes are recorded as `WriteEvent { visible: false }` with
//! `version = order = e << 32 | stamp` (`stamp` in `1..2^31`, only when recording): above every
//! tag of earlier epochs, below every visible TID of epoch `e`, unique per key, and ordered among
//! omitted writes by one total order (see `docs/protocols/nwr.md`).

use crate::engine::{Silo, SiloTxn};
use crate::record::SiloRecord;
use crate::tid::{LOCK, PIVOT_READ, SEQ_ONE, epoch_of, is_absent, is_pivot_read, tag};
use txlab_core::CommitInfo;
use txlab_core::protocol::epoch::EpochHandle;
use txlab_core::protocol::history::Recorder;
use txlab_core::protocol::sync::{AtomicU32, Ordering, fence};
use txlab_nwr::pivot::{PIVOT_BASE, PRE_EPOCH, VersionNumber, epoch_version_number};
use txlab_nwr::{Hooks, NwrBaseline, NwrMutation, SinglePivot, View, WriteOmission};
use txlab_occ::WriteEntry;

/// Silo's hooks: versions are TID words, whose epoch field says when they were written.
pub(crate) struct SiloHooks<'a> {
    epoch: &'a EpochHandle,
}

type SiloView<'a, Rec, W> = View<'a, Silo<Rec, W>, SiloHooks<'a>>;

#[inline]
fn rec<'a>(p: *const SiloRecord) -> &'a SiloRecord {
    // SAFETY: set pointers were obtained under the committing transaction's guard, pinned for the
    // whole commit (`txlab_occ::sets`).
    unsafe { &*p }
}

impl<Rec: Recorder, W: WriteOmission> Hooks<Silo<Rec, W>> for SiloHooks<'_> {
    /// The omitter's epoch: `fence(SeqCst)`, then the global epoch as a `SeqCst` load, before its
    /// `SeqCst` validation loads ([`Hooks::overwriters_valid`]), so that every baseline commit
    /// that overwrites what it validated is later in `S` and reads this epoch or a later one
    /// (`crate::commit`'s module docs).
    fn serialize(&self) -> Option<u32> {
        fence(Ordering::SeqCst);
        Some(self.epoch.global_seq_cst() as u32)
    }

    /// Most writers of a skewed workload find a written record without a version of the epoch,
    /// or marked: checking the writes before the fence saves them the fence and the merge.
    const FILTER_WRITES: bool = true;

    fn read_version(&self, v: &SiloView<'_, Rec, W>, i: usize, epoch: u32) -> VersionNumber {
        epoch_version(v.sets.reads[i].seen, epoch)
    }

    #[inline(always)]
    fn read_is_pre_epoch(&self, v: &SiloView<'_, Rec, W>, i: usize, epoch: u32) -> bool {
        epoch_of(v.sets.reads[i].seen) < u64::from(epoch)
    }

    /// Check (4)'s mark: the value's sidecar word (`txlab_nwr::read_mark`).
    #[inline]
    fn mark<'a>(&self, rec: &'a SiloRecord) -> Option<&'a AtomicU32> {
        Some(rec.value.sidecar())
    }

    /// The version installed last is of `epoch` (a lock holder has not installed yet; its word
    /// below the lock bit is still the installed version). An `Acquire` load.
    fn has_epoch_version(&self, v: &SiloView<'_, Rec, W>, i: usize, epoch: u32) -> bool {
        let word = v.write_rec(i).tid.load(Ordering::Acquire) & !LOCK;
        epoch_of(word) == u64::from(epoch)
    }

    /// One `Acquire` load of the record's word: of `epoch` or not, and its `PIVOT_READ` mark
    /// (which every version of the epoch carries if the pivot does, [`pivot_read_bit`]).
    fn single_write_pivot(&self, v: &SiloView<'_, Rec, W>, i: usize, epoch: u32) -> SinglePivot {
        let word = v.write_rec(i).tid.load(Ordering::Acquire) & !LOCK;
        if epoch_of(word) != u64::from(epoch) {
            SinglePivot::Missing
        } else if is_pivot_read(word) {
            SinglePivot::ReadByItsWriter
        } else {
            SinglePivot::Unread
        }
    }

    /// Silo's validation without locks: every read's record still holds the word read, unlocked.
    /// `SeqCst` loads (a plain `mov` on x86), after the omitter's `SeqCst` epoch load
    /// ([`Hooks::serialize`]): a baseline commit whose lock one of them misses locks later in `S`
    /// and reads its epoch later in `S`, so it is of this epoch or a later one.
    fn overwriters_valid(&self, v: &SiloView<'_, Rec, W>) -> bool {
        v.sets
            .reads
            .iter()
            .all(|r| rec(r.rec).tid.load(Ordering::SeqCst) == r.seen)
    }
}

/// Phase 0 (module docs): tries to commit `tx` with every write omitted.
#[inline]
pub(crate) fn try_omit<Rec: Recorder, W: WriteOmission>(
    tx: &mut SiloTxn<'_, '_, Rec, W>,
    mutation: Option<NwrMutation>,
) -> Option<CommitInfo> {
    if tx.w.sets.writes.is_empty() {
        return None;
    }
    let engine = tx.w.engine;
    let w = &mut *tx.w;
    let seen = w.epoch.global() as u32;
    let hooks = SiloHooks { epoch: &w.epoch };
    let view = View::new(&w.sets, &tx.guard, &engine.nwr, mutation, hooks);
    let stats = &mut w.state.nwr;
    let epoch = if W::SINGLE_WRITE_OMITTERS {
        txlab_nwr::try_omit_one(&view, stats)
    } else {
        txlab_nwr::try_omit_all(&view, seen, false, stats)
    }?;
    let epoch = u64::from(epoch);
    Some(txlab_nwr::finish_omitted(
        tx,
        &engine.nwr,
        epoch,
        u64::from(PIVOT_BASE) - 1,
        |stamp| ((epoch << 32) | stamp, (epoch << 32) | stamp),
    ))
}

/// Algorithm 3 (1) for a baseline commit of `epoch`, right after its epoch read and before its
/// validation: marks its pre-epoch reads (`txlab_nwr::read_mark`). Not needed by a read-only
/// transaction that read nothing of this epoch, which is serialized at the start of the epoch,
/// before its omitters (`txlab_nwr::is_pre_epoch_reader`), nor under single-write omitters,
/// whose one mark goes into the word Phase 3 publishes.
pub(crate) fn mark_reads<Rec: Recorder, W: WriteOmission>(
    tx: &mut SiloTxn<'_, '_, Rec, W>,
    epoch: u64,
    mutation: Option<NwrMutation>,
) {
    let engine = tx.w.engine;
    let w = &mut *tx.w;
    let hooks = SiloHooks { epoch: &w.epoch };
    let view = View::new(&w.sets, &tx.guard, &engine.nwr, mutation, hooks);
    let epoch = epoch as u32;
    if W::SINGLE_WRITE_OMITTERS {
        if w.sets.writes.is_empty() {
            w.state.nwr.unmarked_readers += 1;
        }
    } else if mutation != Some(NwrMutation::PrintedAlgorithm)
        && txlab_nwr::is_pre_epoch_reader(&view, epoch)
    {
        w.state.nwr.unmarked_readers += 1;
    } else {
        txlab_nwr::merge_reads(&view, epoch, &mut w.state.nwr);
    }
}

/// The first TID of epoch `epoch` a baseline commit may take in an NWR engine: the lower half of
/// each epoch's tags is kept for the recorded order of omitted writes.
#[inline]
pub(crate) fn reserve_tid(tid: u64, epoch: u64) -> u64 {
    tid.max((epoch << 32) + u64::from(PIVOT_BASE) + SEQ_ONE)
}

/// The scan-miss rule (`Nwr`), before Phase 3 publishes `tid`: a scan of this epoch that found a
/// key absent (or found no record at all) left no read mark on the record. When a write replaces
/// an absent word of an earlier epoch, its version becomes the key's first version of the epoch
/// (the pivot), so that possible miss counts as a pre-epoch read: no later write of the key can
/// be omitted in this epoch (ordered before the pivot, hence before such a scanner).
///
/// Ordering: the mark is written before the `Release` publish of Phase 3, and an omitter reads the
/// mark word only after it saw our version (`has_epoch_version`, an `Acquire` load), so every
/// omitter that could use our version as its pivot also sees the mark. If the sequence overflowed
/// (`tid` carried into a later epoch than `epoch`, after 2^27 TIDs in one epoch), our versions
/// would look like pivots of that later epoch, whose omitters are placed after us, so every
/// written record is marked there.
pub(crate) fn mark_scan_misses(writes: &[WriteEntry<SiloRecord, u64>], tid: u64, epoch: u64) {
    let visible = epoch_of(tid);
    for w in writes {
        if visible != epoch || (is_absent(w.scratch) && epoch_of(w.scratch) < visible) {
            txlab_nwr::read_mark::mark(rec(w.rec).value.sidecar(), visible as u32);
        }
    }
}

/// The single-write rule's mark for write `w` committing with `tid` in `epoch` (`PIVOT_READ` or
/// 0; `crate::tid`). Same epoch as the replaced word: copied from it (sticky, so every version of
/// the epoch tells an omitter what the pivot's writer did). Earlier epoch: this write installs
/// the pivot, marked if the transaction read the record (`w.read`, set in Phase 2 for validated
/// reads, which then read the replaced word, a version older than the epoch) or replaced an
/// absent word (a scan of the epoch may have missed the key). Marked too if the sequence
/// overflowed (`tid` lies in a later epoch than `epoch`, the one the transaction is serialized
/// in): such a version must not serve as a pivot of that later epoch, whose omitters are placed
/// after this transaction.
#[inline]
pub(crate) fn pivot_read_bit(locked_word: u64, read: bool, tid: u64, epoch: u64) -> u64 {
    if epoch_of(tid) != epoch {
        PIVOT_READ
    } else if epoch_of(locked_word) == epoch {
        locked_word & PIVOT_READ
    } else if read || is_absent(locked_word) {
        PIVOT_READ
    } else {
        0
    }
}

/// After Phase 3 of a baseline commit that installed `tid` in `epoch`: counts it, and runs the
/// printed Algorithm 3 (3) of the test-only mutant (module docs; `mutation` is the constant
/// `None` without the `mutation` feature).
pub(crate) fn installed<Rec: Recorder, W: WriteOmission>(
    tx: &mut SiloTxn<'_, '_, Rec, W>,
    tid: u64,
    epoch: u64,
    mutation: Option<NwrMutation>,
) {
    tx.w.state.nwr.commits_baseline += 1;
    if mutation != Some(NwrMutation::PrintedAlgorithm) || W::SINGLE_WRITE_OMITTERS {
        return;
    }
    let engine = tx.w.engine;
    let w = &mut *tx.w;
    let hooks = SiloHooks { epoch: &w.epoch };
    let view = View::new(&w.sets, &tx.guard, &engine.nwr, mutation, hooks);
    let version = epoch_version(tid, epoch as u32);
    for i in 0..w.sets.writes.len() {
        if epoch_of(w.sets.writes[i].scratch) < epoch && view.write_is_blind(i) {
            w.state.nwr.cas_retries +=
                txlab_nwr::printed::install_pivot(&view, i, epoch as u32, version);
        }
    }
}

/// The per-epoch version number (`txlab_nwr::pivot::VersionNumber`) of the version with TID word
/// `word`, for a transaction of `epoch`: `PRE_EPOCH` if it was written in an earlier epoch, else
/// derived from the sequence above the epoch's first Silo+NWR TID (monotone per record).
fn epoch_version(word: u64, epoch: u32) -> VersionNumber {
    if epoch_of(word) < u64::from(epoch) {
        PRE_EPOCH
    } else {
        // At least the epoch's first number, never `PRE_EPOCH`: a TID whose sequence overflowed
        // into this epoch (low half below the first Silo+NWR TID) is still of this epoch.
        let seq = (tag(word) & 0xFFFF_FFFF).saturating_sub(u64::from(PIVOT_BASE)) / SEQ_ONE;
        epoch_version_number(seq.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::pivot_read_bit;
    use crate::tid::{ABSENT, PIVOT_READ, SEQ_ONE};

    /// Which words carry the single-write rule's mark: the pivot of a reader or of an absent word,
    /// every later version of the same epoch that replaces a marked one, and every version whose
    /// TID overflowed into a later epoch; nothing else.
    #[test]
    fn the_pivot_writers_mark_is_decided_per_epoch_and_copied_within_it() {
        let e = 7u64;
        let tid = (e << 32) | (1 << 31) | SEQ_ONE;
        let old = (6u64 << 32) | SEQ_ONE;
        assert_eq!(pivot_read_bit(old, false, tid, e), 0, "blind pivot");
        assert_eq!(pivot_read_bit(old, true, tid, e), PIVOT_READ, "read pivot");
        assert_eq!(pivot_read_bit(ABSENT, false, tid, e), PIVOT_READ, "absent");
        assert_eq!(
            pivot_read_bit(old | PIVOT_READ, false, tid, e),
            0,
            "older mark"
        );
        let pivot = tid - SEQ_ONE;
        assert_eq!(pivot_read_bit(pivot, true, tid, e), 0, "unmarked pivot");
        assert_eq!(
            pivot_read_bit(pivot | PIVOT_READ, false, tid, e),
            PIVOT_READ
        );
        let overflowed = (e + 1) << 32;
        assert_eq!(pivot_read_bit(old, false, overflowed, e), PIVOT_READ);
    }
}
