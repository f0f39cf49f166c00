//! MVTO's commit protocol (Cicada, Lim et al. SIGMOD 2017, §3.3–§3.4, without its
//! contention-regulation and early-abort heuristics).
//!
//! The timestamp `ts` was fixed at begin; execution raised the read timestamp (`rts`) of every
//! version read and remembered it.
//!
//! ```text
//! Phase 1  install: for each write, link a PENDING version with wts = ts at its place in the
//!          key's list (SeqCst CAS); then walk down from it to the first committed version,
//!          skipping aborted ones: if any version on the way has rts > ts, a later transaction
//!          already read what this write would overwrite -> abort WriteTooLate. If the key was
//!          absent before (no committed version, or a tombstone), the key's absent floor must
//!          not exceed ts either (`Mvto::absent_floor`: a later scan missed this insert, or a
//!          later reader read a tombstone since retired, `crate::retire`). A record being
//!          retired refuses the link -> abort RecordRetired.
//! Phase 2  validate: every version read must still be the visible one for ts (no committed or
//!          pending version appeared between its wts and ts) -> else abort ReadValidation, or
//!          RecordRetired if its record is being retired; every scanned stripe must have its
//!          recorded version -> else PhantomValidation.
//! Phase 3  mark the pending versions COMMITTED (or ABORTED on failure); on commit, queue each
//!          delete on a hash or ordered table for unlinking (`crate::retire`) and collect
//!          garbage on the written records (`crate::gc`).
//! ```
//!
//! Why the orderings suffice (the store-load pattern, every access `SeqCst`): a reader R with
//! `ts_R > ts` raises `rts` of version `v` (`fetch_max`) and later re-reads the list in
//! validation; a writer W links its version above `v` and then loads `v.rts`. In the single
//! total order of `SeqCst` operations either W's link precedes R's `fetch_max`, so R's
//! validation sees W's version (pending or committed) and R aborts, or R's `fetch_max` precedes
//! W's link, so W's load sees `rts >= ts_R > ts` and W aborts. The same argument with the stripe
//! scan timestamps (raised before the scanner reads stripe versions and traverses) covers inserts
//! into records created after the scan. Version contents are immutable once linked
//! (`crate::version`), so no value needs a seqlock.
//!
//! MVTO+NWR (`Mvto<Rec, Nwr>`, only with `AckMode::EpochStable`; compiled out for `NoNwr`) runs
//! a Phase 0 first, see `crate::nwr`:
//!
//! ```text
//! Phase 0  e = epoch of ts; a read-only transaction whose reads are all pre-epoch skips to
//!          Phase 1 (it is serialized at the start of e, before every omitter:
//!          txlab_nwr::is_pre_epoch_reader). Otherwise:
//!          mark every read of a pre-epoch version in its record's head word (crate::head); if
//!          an omitted write of e may be ordered after one of them (the record was claimed) and
//!          the item has a committed version newer than ts, abort ReadValidation (the
//!          old-version-reader check).
//!          If writing and txlab_nwr::try_omit accepts (all writes blind, all reads pre-epoch
//!          and still the newest version, every written item has a committed version of e, no
//!          pre-epoch read of it marked in e): commit in epoch e, linking nothing; done.
//!          Otherwise Phases 1-3 decide, as in plain MVTO.
//! ```
//!
//! MVTO+NWR with single-write omitters (`Mvto<Rec, NwrSingleWrite>`) runs this Phase 0 instead:
//!
//! ```text
//! Phase 0  read-only: nothing (counted as an unmarked reader). One blind write, no scan:
//!          txlab_nwr::try_omit_single with crate::nwr's hooks: a pivot p of x (a committed
//!          version of e above ts whose writer did not read x), the reads valid at wts(p) (rts
//!          raised there, checked again): commit in epoch e, linking nothing, placed just below p.
//!          Otherwise Phases 1-3 decide; the scan-miss merge of Phase 1 is not needed.
//! ```
//!
//! Serial order: timestamp order. Every committed read of `x` by T returns the newest committed
//! version of `x` with `wts < ts_T` (validation), and no version with `wts < ts_T` can commit
//! after T read past it (the `rts` check), which is the MVTO correctness condition (Bernstein,
//! Hadzilacos, Goodman, "Concurrency Control and Recovery in Database Systems", §5.5).

use crate::gc;
use crate::nwr::{self, NwrView};
use crate::record::{LinkRefused, Visible, deref};
use crate::timestamp::epoch_of;
use crate::txn::{MvtoTxn, record, version};
use crate::version::{ABORTED, COMMITTED, PENDING, Version};
use crate::worker_state::WriteKind;
use crossbeam_epoch::Owned;
use txlab_core::history::{
    Outcome, Recorder, TxnRecord, WriteEvent, WriteKind as HWriteKind, txn_id,
};
use txlab_core::storage::Index;
use txlab_core::sync::Ordering;
use txlab_core::{AckMode, CommitInfo, Conflict, ConflictCause, Error, TxError, TxResult};
use txlab_nwr::{NwrMutation, WriteOmission};

/// Which checks a test-only mutation disables (all `false`, and folded away, without the
/// `mutation` feature).
struct Skips {
    write_too_late: bool,
    nwr: Option<NwrMutation>,
    old_reader: bool,
}

impl Skips {
    #[inline(always)]
    fn of(_config: &crate::config::MvtoConfig) -> Self {
        #[cfg(feature = "mutation")]
        {
            use crate::config::Mutation;
            let m = _config.mutation;
            Skips {
                write_too_late: m == Some(Mutation::SkipWriteTooLate),
                nwr: match m {
                    Some(Mutation::NwrSkipEpochCheck) => Some(NwrMutation::SkipEpochCheck),
                    Some(Mutation::NwrSkipMergedReadCheck) => {
                        Some(NwrMutation::SkipMergedReadCheck)
                    }
                    Some(Mutation::NwrValidateReadsBeforePivot) => {
                        Some(NwrMutation::ValidateReadsBeforePivot)
                    }
                    _ => None,
                },
                old_reader: m == Some(Mutation::NwrSkipOldReaderCheck),
            }
        }
        #[cfg(not(feature = "mutation"))]
        Skips {
            write_too_late: false,
            nwr: None,
            old_reader: false,
        }
    }
}

/// Why a commit failed.
enum Failure {
    Conflict(Conflict),
    Internal(String),
}

/// Phase 1 for one linked version: the read-timestamp walk. Returns `Some(rts)` of the version
/// that was read too late, or `None` with whether the key was absent before `new`.
#[inline]
fn write_check(new: &Version, ts: u64, guard: &crossbeam_epoch::Guard) -> Result<bool, u64> {
    let mut cur = new.older.load(Ordering::SeqCst, guard);
    while let Some(v) = deref(cur) {
        let status = v.status();
        if status != ABORTED {
            let rts = v.rts.load(Ordering::SeqCst);
            if rts > ts {
                return Err(rts);
            }
            if status == COMMITTED {
                return Ok(v.tombstone);
            }
        }
        cur = v.older.load(Ordering::SeqCst, guard);
    }
    Ok(true)
}

/// Runs the commit protocol on `tx` (see the module docs).
pub(crate) fn commit<Rec: Recorder, W: WriteOmission>(
    tx: &mut MvtoTxn<'_, '_, Rec, W>,
) -> TxResult<CommitInfo> {
    let engine = tx.w.engine;
    let skip = Skips::of(&engine.config);
    let ts = tx.ts;
    let nwr_on = W::ENABLED && engine.config.ack == AckMode::EpochStable;
    let scan_ts = |table, key| engine.absent_floor(table, key);

    // Phase 0, single-write omitters (`mvto-nwr-single`): no merge anywhere; a lone blind
    // write may be omitted just below a pivot (`crate::nwr`, "Single-write omitters").
    if nwr_on && W::SINGLE_WRITE_OMITTERS {
        let epoch = epoch_of(ts) as u32;
        let w = &mut *tx.w;
        let view = NwrView::<W>::new(&w.state, &tx.guard, &engine.pivots, skip.nwr, ts, &scan_ts);
        if w.state.writes.is_empty() {
            // A read-only commit leaves no mark under this rule (as in `silo-nwr-single`).
            w.nwr.unmarked_readers += 1;
        } else if txlab_nwr::rule::single_write_shape_ok(&view, &mut w.nwr)
            && txlab_nwr::try_omit_single(&view, epoch, &mut w.nwr).is_ok()
        {
            let pivot_wts = view.pivot_wts.get();
            return Ok(nwr::finish_omitted(tx, epoch, pivot_wts));
        }
    }
    // Phase 0 (MVTO+NWR only): merge pre-epoch reads, check them, try to omit every write.
    else if nwr_on {
        let epoch = epoch_of(ts) as u32;
        let w = &mut *tx.w;
        let view = NwrView::<W>::new(&w.state, &tx.guard, &engine.pivots, skip.nwr, ts, &scan_ts);
        // A read-only transaction that read only pre-epoch versions is serialized at the start
        // of the epoch, before its omitters: no marks, no old-reader check
        // (`txlab_nwr::is_pre_epoch_reader`).
        let unmarked = txlab_nwr::is_pre_epoch_reader(&view, epoch);
        let stale = if unmarked {
            w.nwr.unmarked_readers += 1;
            None
        } else {
            nwr::merge_reads_checked(&view, epoch, ts, !skip.old_reader)
        };
        if let Some(i) = stale {
            let r = w.state.reads[i];
            let cause = ConflictCause::ReadValidation;
            w.old_reader_aborts += 1;
            w.state.failed = Some(cause);
            tx.finish_abort(Outcome::Aborted(cause));
            return Err(Conflict::at(cause, r.table, r.key).into());
        }
        if !w.state.writes.is_empty() && txlab_nwr::try_omit(&view, epoch, &mut w.nwr).is_ok() {
            return Ok(nwr::finish_omitted(tx, epoch, 0));
        }
    }

    let guard = &tx.guard;
    let w = &mut *tx.w;
    let st = &mut w.state;
    let mut failure: Option<Failure> = None;

    // Phase 1: install pending versions and check read timestamps.
    for i in 0..st.writes.len() {
        let wr = st.writes[i];
        let rec = record(wr.rec);
        let tombstone = wr.kind == WriteKind::Delete;
        let value: Box<[u8]> = if tombstone {
            Box::default()
        } else {
            st.wbuf[wr.off as usize..(wr.off + wr.len) as usize].into()
        };
        let linked = match rec.link(
            Owned::new(Version::new(ts, PENDING, tombstone, value)),
            guard,
        ) {
            Ok(linked) => linked,
            Err(LinkRefused::Retired) => {
                failure = Some(Failure::Conflict(Conflict::at(
                    ConflictCause::RecordRetired,
                    wr.table,
                    wr.key,
                )));
                break;
            }
            Err(LinkRefused::Duplicate) => {
                failure = Some(Failure::Internal(format!(
                    "mvto: timestamp {ts:#x} already has a version of table {} key {}",
                    wr.table.0, wr.key
                )));
                break;
            }
            Err(LinkRefused::Unaddressable) => {
                failure = Some(Failure::Internal(crate::engine::UNADDRESSABLE.to_string()));
                break;
            }
        };
        st.writes[i].installed = linked.as_raw();
        if skip.write_too_late {
            continue;
        }
        let late = match write_check(version(linked.as_raw()), ts, guard) {
            Err(rts) => Some(rts),
            Ok(true) => {
                if nwr_on && !W::SINGLE_WRITE_OMITTERS {
                    // Scan-miss rule (docs/protocols/nwr.md): the key was absent below our
                    // version, and a scan of this epoch that missed it left no mark on the
                    // record. Count that as a pre-epoch read, so no write of the key is omitted
                    // in this epoch (ordered before such a scanner). Marked before Phase 3 marks
                    // our version COMMITTED; an omitter only uses a COMMITTED version of the
                    // epoch as its pivot (`has_epoch_version`, Acquire status loads) and claims
                    // the record after that, so it sees the mark.
                    if nwr::marks_in_head::<W>() {
                        rec.head.mark_read(epoch_of(ts), guard);
                    }
                }
                Some(engine.absent_floor(wr.table, wr.key)).filter(|&r| r > ts)
            }
            Ok(false) => None,
        };
        if let Some(rts) = late {
            w.clock.observe(rts);
            failure = Some(Failure::Conflict(Conflict::at(
                ConflictCause::WriteTooLate,
                wr.table,
                wr.key,
            )));
            break;
        }
    }

    // Phase 2: validate the read set and the node (stripe) set.
    if failure.is_none() {
        for r in st.reads.iter() {
            let cause = match record(r.rec).visible(ts, Ordering::SeqCst, guard) {
                Visible::Committed(v) if std::ptr::eq(v, r.version) => continue,
                Visible::Retired => ConflictCause::RecordRetired,
                _ => ConflictCause::ReadValidation,
            };
            failure = Some(Failure::Conflict(Conflict::at(cause, r.table, r.key)));
            break;
        }
    }
    if failure.is_none() {
        for n in st.nodes.iter() {
            let stripes = engine
                .tables
                .get(n.table)
                .ok()
                .and_then(|i| i.phantom_stripes());
            if stripes.is_some_and(|s| s.version(n.stripe) != n.version) {
                failure = Some(Failure::Conflict(Conflict {
                    cause: ConflictCause::PhantomValidation,
                    table: Some(n.table),
                    key: None,
                }));
                break;
            }
        }
    }

    // Phase 3: decide.
    let decided = if failure.is_some() {
        ABORTED
    } else {
        COMMITTED
    };
    for wr in st.writes.iter() {
        if !wr.installed.is_null() {
            version(wr.installed)
                .status
                .store(decided, Ordering::SeqCst);
        }
    }
    if let Some(f) = failure {
        let (err, outcome): (TxError, Outcome) = match f {
            Failure::Conflict(c) => {
                st.failed = Some(c.cause);
                (c.into(), Outcome::Aborted(c.cause))
            }
            Failure::Internal(msg) => (Error::Internal(msg).into(), Outcome::UserAborted),
        };
        tx.finish_abort(outcome);
        return Err(err);
    }

    let read_only = st.writes.is_empty();
    if nwr_on && !read_only {
        w.nwr.commits_baseline += 1;
    }
    if !read_only {
        for wr in st.writes.iter() {
            if wr.kind == WriteKind::Delete
                && engine
                    .tables
                    .get(wr.table)
                    .is_ok_and(|i| i.unlinks_deleted_records())
            {
                w.retire.push(crate::retire::RetireEntry {
                    table: wr.table,
                    key: wr.key,
                    wts: ts,
                    epoch: epoch_of(ts),
                });
            }
        }
        st.since_horizon += 1;
        let horizon = if st.since_horizon >= engine.config.horizon_interval {
            st.since_horizon = 0;
            engine.clocks.refresh_horizon()
        } else {
            engine.clocks.horizon()
        };
        for wr in st.writes.iter() {
            gc::collect(record(wr.rec), horizon, guard);
        }
    }

    if Rec::ENABLED {
        for wr in st.writes.iter() {
            st.h_writes.push(WriteEvent {
                table: wr.table,
                key: wr.key,
                version: ts,
                order: ts,
                kind: if wr.kind == WriteKind::Delete {
                    HWriteKind::Delete
                } else {
                    HWriteKind::Put
                },
                visible: !wr.installed.is_null(),
            });
        }
        let rec = TxnRecord {
            id: txn_id(st.id, st.seq),
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
    Ok(CommitInfo {
        epoch: epoch_of(ts),
        acknowledged: engine.config.ack == AckMode::AtCommit,
        read_only,
    })
}
