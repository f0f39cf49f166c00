//! Silo's commit protocol (Tu et al., SOSP 2013, §4.4, Figure 2).
//!
//! ```text
//! Phase 1  sort the write set by record address; lock every record (CAS on the TID lock bit,
//!          spinning: the global order rules out deadlock); remember each replaced word; if a
//!          replaced word is RETIRED (the record was unlinked, crate::retire), unlock and abort
//!          with RecordRetired.
//!          fence(SeqCst); e = global epoch                      <- serialization point
//! Phase 2  for every read-set entry: abort if the record's word (without LOCK) differs from the
//!          word read, or if it is locked by another transaction (not in our write set);
//!          for every scanned stripe: abort if its version changed (phantom).
//! Phase 3  tid = smallest TID in epoch e greater than every word read or replaced and than the
//!          worker's last TID; fence(Release); for each write: store the value words, then
//!          publish tid (| ABSENT for deletes) with a Release store, which also unlocks;
//!          queue each delete on a hash or ordered table for unlinking (crate::retire).
//! ```
//!
//! Why the orderings suffice: locking uses an `Acquire` CAS, so the validation loads of Phase 2
//! cannot move before the locks are held; the `SeqCst` fence between Phase 1 and the epoch read
//! orders both against other committers' fences (Silo's "memory fence" before reading `E`), so two
//! transactions that each read what the other writes cannot both pass validation; the `Release`
//! fence before the value stores and the `Release` publish pair with readers' `Acquire`
//! load/fence (the seqlock argument in `txlab_core::value`).
//!
//! ## Silo+NWR (`Silo<Rec, Nwr>`, the NWR paper §6.1.1)
//!
//! ```text
//! Phase 0  (only with W = Nwr and AckMode::EpochStable and a non-empty write set; compiled out
//!          for NoNwr)
//!          filters with plain loads and the epoch e0 seen now: no scan and every write blind
//!          (txlab_nwr::rule::omission_shape_ok), every read older than e0 (omission_reads_ok),
//!          every written record has a version of e0 and no read mark of e0
//!          (omission_writes_ok); on YCSB-B most writers stop here, before the fence
//!          fence(SeqCst); e = global epoch (>= e0, so the reads are older than e too)
//!          mark every read of a version older than e in its record's read-epoch word
//!          (txlab_nwr::read_mark; check (4)'s mark, kept outside the 128-bit object)
//!          if the rule accepts (txlab_nwr::try_omit: all writes blind, all reads older than e
//!          and still current, every written record has a version of e, no pre-e read of it in
//!          e): commit in epoch e without locking or installing anything; done.
//!          otherwise fall through to Phase 1 (the baseline alone decides; NWR never aborts)
//! Phase 1-3 as above; with Nwr, reads are marked again right after the epoch read
//!          (before Phase 2), except by a read-only transaction whose reads are all older than
//!          e (txlab_nwr::is_pre_epoch_reader: serialized at the start of e), and TIDs of epoch e start at e << 32 | 2^31, leaving the lower half
//!          of each epoch's tag range to the recorded order of omitted writes.
//! ```
//!
//! ## Silo+NWR with single-write omitters (`Silo<Rec, NwrSingleWrite>`)
//!
//! ```text
//! Phase 0  (a non-empty write set; txlab_nwr::rule::single_write_shape_ok: no scan, exactly one
//!          write, blind)
//!          fence(SeqCst); e = global epoch
//!          if every read is older than e and txlab_nwr::try_omit_single accepts (the written
//!          record's word, loaded with Acquire, is of epoch e and has no PIVOT_READ;
//!          fence(SeqCst); every read still current and unlocked): commit in e, nothing
//!          installed, nothing written.
//! Phase 1  as above; no read is marked anywhere (no pivot object, no read-epoch mark)
//! Phase 2  as above; a read of a record we locked (found by the binary search Silo's
//!          validation already does) flags that write entry as read
//! Phase 3  as above, and each written word carries PIVOT_READ (crate::tid) if the replaced word
//!          is of the same epoch and carries it (sticky), or if it is of an earlier epoch (our
//!          version is the pivot) and we read the record or the replaced word is ABSENT (a scan
//!          of this epoch may have missed the key: the scan-miss rule).
//! ```
//!
//! The mark is the only one the single-write rule needs: the pivot writer's own read of its item
//! (`txlab_nwr::NwrSingleWrite`). A reader that passes validation with a read older than `e` of a
//! record it writes is exactly the writer of that record's first version of `e`, so the mark
//! lives in the word that publishes the pivot (the `Release` store an omitter's `Acquire` load
//! reads from) and no reader's mark can race with an omitter's check.
//!
//! Why it is sound: `docs/protocols/nwr.md`, "A rule with fewer read marks".
//!
//! The test-only mutant `Mutation::NwrPrintedAlgorithm` swaps the rule for the paper's printed
//! Algorithms 2 and 3 (`txlab_nwr::printed`); its Algorithm 3 (3) runs here, after Phase 3: each
//! blind write that installed its record's first version of the epoch resets the key's pivot
//! object (`Silo::pivots`) to that version (the `mutation` feature only; otherwise the branch folds away).
//!
//! Omitted writes are recorded as `WriteEvent { visible: false }` with
//! `version = order = e << 32 | stamp` (`stamp` in `1..2^31` from a per-engine counter, only when
//! recording): above every tag of earlier epochs, below every visible TID of epoch `e`, unique per
//! key, and ordered among omitted writes by one total order (see `docs/protocols/nwr.md`).

use crate::record::SiloRecord;
use crate::retire::RetireEntry;
use crate::tid::{ABSENT, LOCK, PIVOT_READ, is_absent, is_locked, is_pivot_read, is_retired};
use crate::tid::{SEQ_ONE, epoch_of};
use crate::tid::{next_tid, tag};
use crate::txn::SiloTxn;
use crate::worker_state::WorkerState;
use crate::worker_state::{WriteKind, write_index};
use crossbeam_epoch::Guard;
use std::marker::PhantomData;
use txlab_core::history::{
    Outcome, Recorder, TxnRecord, WriteEvent, WriteKind as HWriteKind, txn_id,
};
use txlab_core::storage::Index;
use txlab_core::sync::{AtomicU32, Ordering, fence};
use txlab_core::{AckMode, CommitInfo, Conflict, ConflictCause, TxResult};
use txlab_nwr::pivot::{PIVOT_BASE, PRE_EPOCH, PivotCell, VersionNumber, epoch_version_number};
use txlab_nwr::{NwrBaseline, NwrMutation, SinglePivot, WriteOmission};
use txlab_storage::Companions;

/// Which checks a test-only mutation disables (all `false`, and folded away, without the
/// `mutation` feature).
struct Skips {
    lock: bool,
    reads: bool,
    nodes: bool,
    nwr: Option<NwrMutation>,
}

impl Skips {
    #[inline(always)]
    fn of(_config: &crate::config::SiloConfig) -> Self {
        #[cfg(feature = "mutation")]
        {
            use crate::config::Mutation;
            let m = _config.mutation;
            Skips {
                lock: m == Some(Mutation::SkipWriteLock),
                reads: m == Some(Mutation::SkipReadValidation),
                nodes: m == Some(Mutation::SkipPhantomValidation),
                nwr: match m {
                    Some(Mutation::NwrSkipEpochCheck) => Some(NwrMutation::SkipEpochCheck),
                    Some(Mutation::NwrSkipMergedReadCheck) => {
                        Some(NwrMutation::SkipMergedReadCheck)
                    }
                    Some(Mutation::NwrPrintedAlgorithm) => Some(NwrMutation::PrintedAlgorithm),
                    Some(Mutation::NwrValidateReadsBeforePivot) => {
                        Some(NwrMutation::ValidateReadsBeforePivot)
                    }
                    _ => None,
                },
            }
        }
        #[cfg(not(feature = "mutation"))]
        Skips {
            lock: false,
            reads: false,
            nodes: false,
            nwr: None,
        }
    }
}

#[inline]
fn rec<'a>(p: *const SiloRecord) -> &'a SiloRecord {
    // SAFETY: write-set and read-set pointers were obtained under the transaction's guard, which
    // is pinned for the whole commit (see `worker_state`).
    unsafe { &*p }
}

/// Runs the commit protocol on `tx` (see the module docs).
pub(crate) fn commit<Rec: Recorder, W: WriteOmission>(
    tx: &mut SiloTxn<'_, '_, Rec, W>,
) -> TxResult<CommitInfo> {
    let engine = tx.w.engine;
    let skip = Skips::of(&engine.config);
    let nwr_on = W::ENABLED && engine.config.ack == AckMode::EpochStable;

    // Phase 0 (Silo+NWR only): try to commit with every write omitted.
    if nwr_on && W::SINGLE_WRITE_OMITTERS && !tx.w.state.writes.is_empty() {
        let view = NwrView::<W> {
            st: &tx.w.state,
            pivots: &engine.pivots,
            guard: &tx.guard,
            mutation: skip.nwr,
            _omission: PhantomData,
        };
        if txlab_nwr::rule::single_write_shape_ok(&view, &mut tx.w.nwr) {
            fence(Ordering::SeqCst);
            let epoch = tx.w.epoch.global();
            // `try_omit_single` checks the reads' epochs itself (counted as `nwr_fail_mws`).
            if txlab_nwr::try_omit_single(&view, epoch as u32, &mut tx.w.nwr).is_ok() {
                return Ok(finish_omitted(tx, epoch));
            }
        }
    } else if nwr_on && !tx.w.state.writes.is_empty() {
        let view = NwrView::<W> {
            st: &tx.w.state,
            pivots: &engine.pivots,
            guard: &tx.guard,
            mutation: skip.nwr,
            _omission: PhantomData,
        };
        // The rule's cheap filters first, with the epoch as it is now: most writers fail one
        // of them and skip the fence and the merge (the baseline merges before its own
        // validation). The epoch never moves back, so reads older than `seen` are older than
        // the epoch fixed after the fence; a filter fooled by a stale epoch only skips an
        // omission (`txlab_nwr::rule::omission_writes_ok`).
        let seen = tx.w.epoch.global() as u32;
        if txlab_nwr::rule::omission_shape_ok(&view, &mut tx.w.nwr)
            && txlab_nwr::rule::omission_reads_ok(&view, seen, &mut tx.w.nwr)
            && txlab_nwr::rule::omission_writes_ok(&view, seen, &mut tx.w.nwr)
        {
            fence(Ordering::SeqCst);
            let epoch = tx.w.epoch.global();
            txlab_nwr::merge_reads(&view, epoch as u32, &mut tx.w.nwr);
            if txlab_nwr::try_omit(&view, epoch as u32, &mut tx.w.nwr).is_ok() {
                return Ok(finish_omitted(tx, epoch));
            }
        }
    }

    let st = &mut tx.w.state;

    // Phase 1: lock the write set in address order.
    st.writes.sort_unstable_by_key(|w| w.rec as usize);
    let skip_lock = skip.lock;
    let mut retired: Option<usize> = None;
    for (i, w) in st.writes.iter_mut().enumerate() {
        let r = rec(w.rec);
        if skip_lock {
            w.locked_word = r.tid.load(Ordering::Acquire) & !LOCK;
        } else {
            let mut backoff = txlab_core::sync::SpinWait::new();
            w.locked_word = loop {
                if let Some(word) = r.try_lock() {
                    break word;
                }
                backoff.snooze();
            };
        }
        if is_retired(w.locked_word) {
            // Unlinked from its index (crate::retire): never write to it; a retry finds the
            // key's fresh incarnation.
            retired = Some(i);
            break;
        }
    }
    if let Some(i) = retired {
        let w = st.writes[i];
        if !skip_lock {
            for held in st.writes[..=i].iter() {
                rec(held.rec).unlock(held.locked_word);
            }
        }
        let cause = ConflictCause::RecordRetired;
        st.failed = Some(cause);
        tx.finish_abort(Outcome::Aborted(cause));
        return Err(Conflict::at(cause, w.table, w.key).into());
    }
    fence(Ordering::SeqCst);
    let epoch = tx.w.epoch.global();
    if nwr_on {
        // Algorithm 3 (1) for baseline commits: mark our pre-epoch reads (the read-epoch word,
        // `txlab_nwr::read_mark`), before validating them;
        // not needed for a read-only transaction that read nothing of this epoch, which is
        // serialized at the start of the epoch, before its omitters (`is_pre_epoch_reader`).
        let view = NwrView::<W> {
            st,
            pivots: &engine.pivots,
            guard: &tx.guard,
            mutation: skip.nwr,
            _omission: PhantomData,
        };
        if W::SINGLE_WRITE_OMITTERS {
            // Single-write omitters: no merge here. The one mark, the pivot writer's read of its
            // own record, goes into the word Phase 3 publishes (`PIVOT_READ`).
            if st.writes.is_empty() {
                tx.w.nwr.unmarked_readers += 1;
            }
        } else if skip.nwr != Some(NwrMutation::PrintedAlgorithm)
            && txlab_nwr::is_pre_epoch_reader(&view, epoch as u32)
        {
            tx.w.nwr.unmarked_readers += 1;
        } else {
            txlab_nwr::merge_reads(&view, epoch as u32, &mut tx.w.nwr);
        }
    }

    // Phase 2: validate the read set and the node (stripe) set.
    let mut failure: Option<Conflict> = None;
    if !skip.reads {
        // With single-write omitters, a read of a record we write flags its write entry for the
        // pivot writer's mark; the lookup is the one validation does anyway for a locked record.
        let flag_reads = nwr_on && W::SINGLE_WRITE_OMITTERS;
        for r in st.reads.iter() {
            let cur = rec(r.rec).tid.load(Ordering::Acquire);
            if cur & !LOCK != r.word {
                failure = Some(Conflict::at(ConflictCause::ReadValidation, r.table, r.key));
                break;
            }
            if is_locked(cur) || (skip_lock && flag_reads) {
                match write_index(&st.writes, r.rec) {
                    Some(i) => {
                        if flag_reads {
                            st.writes[i].read = true;
                        }
                    }
                    None if skip_lock => {}
                    None => {
                        failure = Some(Conflict::at(ConflictCause::ReadValidation, r.table, r.key));
                        break;
                    }
                }
            }
        }
    }
    if failure.is_none() && !skip.nodes {
        for n in st.nodes.iter() {
            let stripes = engine
                .tables
                .get(n.table)
                .ok()
                .and_then(|i| i.phantom_stripes());
            if stripes.is_some_and(|s| s.version(n.stripe) != n.version) {
                failure = Some(Conflict {
                    cause: ConflictCause::PhantomValidation,
                    table: Some(n.table),
                    key: None,
                });
                break;
            }
        }
    }
    if let Some(c) = failure {
        if !skip_lock {
            for w in st.writes.iter() {
                rec(w.rec).unlock(w.locked_word);
            }
        }
        st.failed = Some(c.cause);
        tx.finish_abort(Outcome::Aborted(c.cause));
        return Err(c.into());
    }

    // Phase 3: choose the TID and install.
    let read_only = st.writes.is_empty();
    if !read_only {
        let mut floor = st.last_tid;
        for r in st.reads.iter() {
            floor = floor.max(tag(r.word));
        }
        for w in st.writes.iter() {
            floor = floor.max(tag(w.locked_word));
        }
        let mut tid = next_tid(floor, epoch);
        if W::ENABLED {
            // Keep the lower half of epoch `epoch`'s tags for omitted writes (module docs).
            tid = tid.max((epoch << 32) + PIVOT_BASE as u64 + SEQ_ONE);
        }
        if nwr_on && !W::SINGLE_WRITE_OMITTERS {
            // Scan-miss rule: a scan of this epoch that found this key absent (or found no record
            // at all) left no read mark on the record. When we replace an absent word of an
            // earlier epoch, our version becomes the key's first version of the epoch (the pivot),
            // so count that possible miss as a pre-epoch read: no later write of the key can then
            // be omitted (ordered before the pivot, hence before such a scanner) in this epoch.
            // Ordering: the mark (`txlab_nwr::read_mark`) is written before the Release publish
            // below, and an omitter reads the mark word only after it saw our version
            // (`has_epoch_version`, an Acquire load), so every omitter that could use our version
            // as its pivot also sees the mark.
            // Sequence overflow (`tid` carried into a later epoch than the one we serialized in,
            // after 2^27 TIDs in one epoch): our versions would look like pivots of that later
            // epoch, whose omitters are placed after us, so every written item is marked there.
            let visible = epoch_of(tid);
            for w in st.writes.iter() {
                if visible != epoch
                    || (is_absent(w.locked_word) && epoch_of(w.locked_word) < visible)
                {
                    txlab_nwr::read_mark::mark(rec(w.rec).value.sidecar(), visible as u32);
                }
            }
        }
        fence(Ordering::Release);
        for w in st.writes.iter() {
            let r = rec(w.rec);
            let word = if nwr_on && W::SINGLE_WRITE_OMITTERS {
                tid | pivot_read_mark(w, tid, epoch)
            } else {
                tid
            };
            match w.kind {
                WriteKind::BlindPut | WriteKind::Put | WriteKind::Insert => {
                    let v = &st.wbuf[w.off as usize..(w.off + w.len) as usize];
                    r.install(Some(v), word);
                }
                WriteKind::Delete => {
                    r.install(None, word | ABSENT);
                    if engine
                        .tables
                        .get(w.table)
                        .is_ok_and(|i| i.unlinks_deleted_records())
                    {
                        tx.w.retire.push(RetireEntry {
                            table: w.table,
                            key: w.key,
                            word: word | ABSENT,
                        });
                    }
                }
            }
            if Rec::ENABLED {
                st.h_writes.push(WriteEvent {
                    table: w.table,
                    key: w.key,
                    version: tid,
                    order: tid,
                    kind: if w.kind == WriteKind::Delete {
                        HWriteKind::Delete
                    } else {
                        HWriteKind::Put
                    },
                    visible: true,
                });
            }
        }
        st.last_tid = tid;
        if nwr_on {
            tx.w.nwr.commits_baseline += 1;
            if skip.nwr == Some(NwrMutation::PrintedAlgorithm) && !W::SINGLE_WRITE_OMITTERS {
                // The printed Algorithm 3 (3) (test-only mutant; `skip.nwr` is the constant
                // `None` without the `mutation` feature): each blind write that installed its
                // item's first version of the epoch becomes the item's pivot.
                let view = NwrView::<W> {
                    st,
                    pivots: &engine.pivots,
                    guard: &tx.guard,
                    mutation: skip.nwr,
                    _omission: PhantomData,
                };
                let installed = epoch_version(tid, epoch as u32);
                for i in 0..st.writes.len() {
                    if epoch_of(st.writes[i].locked_word) < epoch && view.write_is_blind(i) {
                        tx.w.nwr.cas_retries +=
                            txlab_nwr::printed::install_pivot(&view, i, epoch as u32, installed);
                    }
                }
            }
        }
    }

    if Rec::ENABLED {
        let record = TxnRecord {
            id: txn_id(st.id, st.seq),
            reads: std::mem::take(&mut st.h_reads),
            writes: std::mem::take(&mut st.h_writes),
            scans: std::mem::take(&mut st.h_scans),
            outcome: Outcome::Committed,
            begin_ns: tx.begin_ns,
            end_ns: engine.recorder.now_ns(),
        };
        engine.recorder.record(record);
    }
    tx.done = true;
    tx.w.state.clear();
    tx.w.epoch.exit();
    Ok(CommitInfo {
        epoch,
        acknowledged: engine.config.ack == AckMode::AtCommit,
        read_only,
    })
}

/// Ends a transaction committed with the NWR version order: nothing is locked or installed; the
/// history records its writes as invisible versions just before each key's epoch-`epoch` versions.
fn finish_omitted<Rec: Recorder, W: WriteOmission>(
    tx: &mut SiloTxn<'_, '_, Rec, W>,
    epoch: u64,
) -> CommitInfo {
    let engine = tx.w.engine;
    let st = &mut tx.w.state;
    if Rec::ENABLED {
        // One stamp per transaction: a single total order of omitted writes on every key.
        let stamp = engine.omit_stamp.fetch_add(1, Ordering::Relaxed) % (PIVOT_BASE as u64 - 1) + 1;
        let order = (epoch << 32) | stamp;
        for w in st.writes.iter() {
            st.h_writes.push(WriteEvent {
                table: w.table,
                key: w.key,
                version: order,
                order,
                kind: HWriteKind::Put,
                visible: false,
            });
        }
        let record = TxnRecord {
            id: txn_id(st.id, st.seq),
            reads: std::mem::take(&mut st.h_reads),
            writes: std::mem::take(&mut st.h_writes),
            scans: std::mem::take(&mut st.h_scans),
            outcome: Outcome::Committed,
            begin_ns: tx.begin_ns,
            end_ns: engine.recorder.now_ns(),
        };
        engine.recorder.record(record);
    }
    tx.done = true;
    tx.w.state.clear();
    tx.w.epoch.exit();
    CommitInfo {
        epoch,
        acknowledged: false,
        read_only: false,
    }
}

/// The single-write rule's mark for write `w` committing with `tid` in `epoch` (`PIVOT_READ` or
/// 0; module docs and `crate::tid`). Same epoch as the replaced word: copied from it (sticky, so
/// every version of the epoch tells an omitter what the pivot's writer did). Earlier epoch: this
/// write installs the pivot, marked if the transaction read the record (`w.read`, set in Phase 2
/// for validated reads, which then read the replaced word, a version older than the epoch) or
/// replaced an absent word (a scan of the epoch may have missed the key). Marked too if the
/// sequence overflowed (`tid` lies in a later epoch than `epoch`, the one the transaction is
/// serialized in): such a version must not serve as a pivot of that later epoch, whose omitters
/// are placed after this transaction.
#[inline]
fn pivot_read_mark(w: &crate::worker_state::WriteEntry, tid: u64, epoch: u64) -> u64 {
    if epoch_of(tid) != epoch {
        PIVOT_READ
    } else if epoch_of(w.locked_word) == epoch {
        w.locked_word & PIVOT_READ
    } else if w.read || is_absent(w.locked_word) {
        PIVOT_READ
    } else {
        0
    }
}

/// The per-epoch version number (`txlab_nwr::pivot::VersionNumber`) of the version with TID word
/// `word`, for a transaction of `epoch`: `PRE_EPOCH` if it was written in an earlier epoch, else
/// derived from the sequence above the epoch's first Silo+NWR TID (monotone per record).
fn epoch_version(word: u64, epoch: u32) -> VersionNumber {
    if epoch_of(word) < epoch as u64 {
        PRE_EPOCH
    } else {
        // At least the epoch's first number, never `PRE_EPOCH`: a TID whose sequence overflowed
        // into this epoch (low half below the first Silo+NWR TID) is still of this epoch.
        let seq = (tag(word) & 0xFFFF_FFFF).saturating_sub(PIVOT_BASE as u64) / SEQ_ONE;
        epoch_version_number(seq.max(1))
    }
}

/// Silo's hooks for the rule (`txlab_nwr::NwrBaseline`) over a committing transaction's sets.
struct NwrView<'a, W: WriteOmission> {
    st: &'a WorkerState,
    /// The engine's pivot objects (`Silo::pivots`), looked up under `guard`.
    pivots: &'a Companions<PivotCell>,
    /// The committing transaction's guard, pinned for the whole commit.
    guard: &'a Guard,
    mutation: Option<NwrMutation>,
    _omission: PhantomData<W>,
}

impl<W: WriteOmission> NwrBaseline for NwrView<'_, W> {
    #[inline]
    fn read_count(&self) -> usize {
        self.st.reads.len()
    }

    fn read_item(&self, i: usize) -> (u16, u64) {
        let r = &self.st.reads[i];
        (r.table.0, r.key)
    }

    fn read_pivot(&self, i: usize) -> &PivotCell {
        let r = &self.st.reads[i];
        self.pivots.cell_of_found_key(r.table, r.key, self.guard)
    }

    #[inline]
    fn read_mark(&self, i: usize) -> Option<&AtomicU32> {
        Some(rec(self.st.reads[i].rec).value.sidecar())
    }

    fn read_version(&self, i: usize, epoch: u32) -> VersionNumber {
        epoch_version(self.st.reads[i].word, epoch)
    }

    #[inline(always)]
    fn read_is_pre_epoch(&self, i: usize, epoch: u32) -> bool {
        epoch_of(self.st.reads[i].word) < epoch as u64
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
        w.kind == WriteKind::BlindPut && !self.st.reads.iter().any(|r| r.rec == w.rec)
    }

    fn write_pivot(&self, i: usize) -> &PivotCell {
        let w = &self.st.writes[i];
        self.pivots.cell_of_found_key(w.table, w.key, self.guard)
    }

    #[inline]
    fn write_mark(&self, i: usize) -> Option<&AtomicU32> {
        Some(rec(self.st.writes[i].rec).value.sidecar())
    }

    fn has_epoch_version(&self, i: usize, epoch: u32) -> bool {
        // The version installed last (a lock holder has not installed yet; its word below the lock
        // bit is still the installed version).
        let word = rec(self.st.writes[i].rec).tid.load(Ordering::Acquire) & !LOCK;
        epoch_of(word) == epoch as u64
    }

    /// One `Acquire` load of the record's word: of `epoch` or not, and its `PIVOT_READ` mark
    /// (which every version of the epoch carries if the pivot does, `pivot_read_mark`).
    fn single_write_pivot(&self, i: usize, epoch: u32) -> SinglePivot {
        let word = rec(self.st.writes[i].rec).tid.load(Ordering::Acquire) & !LOCK;
        if epoch_of(word) != epoch as u64 {
            SinglePivot::Missing
        } else if is_pivot_read(word) {
            SinglePivot::ReadByItsWriter
        } else {
            SinglePivot::Unread
        }
    }

    /// Any range scan, on any table: `nodes` holds only ordered tables' stripes, and `h_scans`
    /// is filled only when recording, so the flag is what makes unrecorded runs apply the same
    /// rule as the tested, recorded ones.
    fn has_scans(&self) -> bool {
        self.st.scanned
    }

    fn overwriters_valid(&self) -> bool {
        self.st.reads.iter().all(|r| {
            let cur = rec(r.rec).tid.load(Ordering::Acquire);
            cur == r.word
        })
    }

    fn mutation(&self) -> Option<NwrMutation> {
        self.mutation
    }
}

#[cfg(test)]
mod tests {
    use super::pivot_read_mark;
    use crate::tid::{ABSENT, PIVOT_READ, SEQ_ONE};
    use crate::worker_state::{WriteEntry, WriteKind};
    use txlab_core::TableId;

    fn entry(locked_word: u64, read: bool) -> WriteEntry {
        WriteEntry {
            rec: std::ptr::null(),
            table: TableId(0),
            key: 0,
            kind: WriteKind::BlindPut,
            off: 0,
            len: 0,
            locked_word,
            read,
        }
    }

    /// Which words carry the single-write rule's mark: the pivot of a reader or of an absent word,
    /// every later version of the same epoch that replaces a marked one, and every version whose
    /// TID overflowed into a later epoch; nothing else.
    #[test]
    fn the_pivot_writers_mark_is_decided_per_epoch_and_copied_within_it() {
        let e = 7u64;
        let tid = (e << 32) | (1 << 31) | SEQ_ONE;
        let old = (6u64 << 32) | SEQ_ONE;
        assert_eq!(
            pivot_read_mark(&entry(old, false), tid, e),
            0,
            "blind pivot"
        );
        assert_eq!(
            pivot_read_mark(&entry(old, true), tid, e),
            PIVOT_READ,
            "read pivot"
        );
        assert_eq!(
            pivot_read_mark(&entry(ABSENT, false), tid, e),
            PIVOT_READ,
            "absent"
        );
        assert_eq!(
            pivot_read_mark(&entry(old | PIVOT_READ, false), tid, e),
            0,
            "older mark"
        );
        let pivot = tid - SEQ_ONE;
        assert_eq!(
            pivot_read_mark(&entry(pivot, true), tid, e),
            0,
            "unmarked pivot"
        );
        assert_eq!(
            pivot_read_mark(&entry(pivot | PIVOT_READ, false), tid, e),
            PIVOT_READ
        );
        let overflowed = (e + 1) << 32;
        assert_eq!(
            pivot_read_mark(&entry(old, false), overflowed, e),
            PIVOT_READ
        );
    }
}
