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
//! `ts_R > ts` raises `rts` of version `v` (a compare-and-swap that writes `ts_R`,
//! `Version::raise_rts`) and later re-reads the list in validation; a writer W links its version
//! above `v` and then loads `v.rts`. In the single total order of `SeqCst` operations either W's
//! link precedes R's raise, so R's validation sees W's version (pending or committed) and R
//! aborts, or R's raise precedes W's link, so W's load sees `rts >= ts_R > ts` and W aborts. R
//! writes nothing when its `SeqCst` load of `rts` (the first load, or the value a failed
//! compare-and-swap returns) already reads `ts_R` or more: that value was written by a raise
//! preceding the load in the total order, so if the load precedes W's link, W's later load reads
//! that write or a later one (`rts` only grows) and W aborts as in the first case; a read then
//! writes nothing to shared memory when a younger reader got there first. The same argument with the stripe
//! scan timestamps (raised before the scanner reads stripe versions and traverses) covers inserts
//! into records created after the scan. Version contents are immutable once linked
//! (`crate::version`), so no value needs a seqlock.
//!
//! MVTO+NWR (`Mvto<Rec, Nwr>` and `Mvto<Rec, NwrSingleWrite>`, only with `AckMode::EpochStable`;
//! compiled out for `NoNwr`) runs a Phase 0 first (`crate::nwr`), and Phase 1 marks a possible
//! scan miss; history recording ([`record_installed`]) and the test-only mutations ([`Checks`])
//! are likewise kept off the baseline's path.
//!
//! Serial order: timestamp order. Every committed read of `x` by T returns the newest committed
//! version of `x` with `wts < ts_T` (validation), and no version with `wts < ts_T` can commit
//! after T read past it (the `rts` check), which is the MVTO correctness condition (Bernstein,
//! Hadzilacos, Goodman, "Concurrency Control and Recovery in Database Systems", §5.5).

use crate::engine::{Installed, Mvto, MvtoTxn, UNADDRESSABLE};
use crate::gc;
use crate::nwr;
use crate::pool::prefetch;
use crate::record::{LinkRefused, MvtoRecord, Visible, deref};
use crate::timestamp::epoch_of;
use crate::version::{ABORTED, COMMITTED, PENDING, Version};
use crossbeam_epoch::Guard;
use txlab_core::protocol::history::{Outcome, Recorder, WriteEvent};
use txlab_core::protocol::sync::Ordering;
use txlab_core::{AckMode, CommitInfo, Conflict, ConflictCause, Error, TxError, TxResult};
use txlab_nwr::WriteOmission;
use txlab_occ::{RetireEntry, Sets, unlinks};

/// The sets of an MVTO transaction.
type MvtoSets<Rec, W> = Sets<Mvto<Rec, W>>;

/// Runs the commit protocol on `tx` (module docs).
pub(crate) fn commit<Rec: Recorder, W: WriteOmission>(
    tx: &mut MvtoTxn<'_, '_, Rec, W>,
) -> TxResult<CommitInfo> {
    let checks = Checks::of(&tx.w.engine.shell.config);
    let nwr_on = W::ENABLED && tx.w.engine.shell.config.ack == AckMode::EpochStable;
    if nwr_on && let Some(info) = nwr::phase0(tx, checks.nwr, checks.old_readers)? {
        return Ok(info);
    }
    let mut failure = install_pending(tx, &checks, nwr_on).err();
    if failure.is_none() {
        failure = validate(tx).err().map(Failure::Conflict);
    }
    decide(&tx.w.sets, failure.is_none());
    if let Some(f) = failure {
        return Err(match f {
            Failure::Conflict(c) => tx.abort_with(c),
            Failure::Internal(msg) => {
                tx.finish(Outcome::UserAborted);
                TxError::Error(Error::Internal(msg))
            }
        });
    }
    let ts = tx.w.state.ts;
    let read_only = tx.w.sets.writes.is_empty();
    if !read_only {
        queue_deletes(tx);
        collect_garbage(tx);
        if nwr_on {
            tx.w.state.nwr.commits_baseline += 1;
        }
    }
    if Rec::ENABLED {
        record_installed(&mut tx.w.sets, ts);
    }
    Ok(tx.committed(epoch_of(ts), read_only))
}

/// Why a commit failed.
enum Failure {
    Conflict(Conflict),
    Internal(String),
}

#[inline]
fn record<'a>(p: *const MvtoRecord) -> &'a MvtoRecord {
    // SAFETY: set pointers were obtained under the transaction's guard, which stays pinned for
    // the whole commit (`txlab_occ::sets`).
    unsafe { &*p }
}

#[inline]
fn version<'a>(p: *const Version) -> &'a Version {
    // SAFETY: as for `record`; versions are freed only after every guard that could reach them is
    // dropped (`crate::gc`).
    unsafe { &*p }
}

/// Phase 1: links a pending version of every write at `ts` and checks, below it, that no later
/// transaction read what it overwrites ([`write_check`]); a key that was absent below it also
/// checks the key's absent floor. Stops at the first failure; the versions linked so far are
/// marked aborted by Phase 3.
fn install_pending<Rec: Recorder, W: WriteOmission>(
    tx: &mut MvtoTxn<'_, '_, Rec, W>,
    checks: &Checks,
    nwr_on: bool,
) -> Result<(), Failure> {
    let engine = tx.w.engine;
    let guard = &tx.guard;
    let w = &mut *tx.w;
    let ts = w.state.ts;
    prefetch_writes(&w.sets, guard);
    for i in 0..w.sets.writes.len() {
        let e = w.sets.writes[i];
        let tombstone = e.kind.is_delete();
        let value = if tombstone {
            &[][..]
        } else {
            w.sets.write_value(i)
        };
        let new = w.state.pool.version(ts, PENDING, tombstone, value);
        let linked = record(e.rec)
            .link(new, guard)
            .map_err(|why| link_refused(why, ts, e.table, e.key))?;
        w.sets.writes[i].scratch = Installed(linked.as_raw());
        if !checks.write_too_late {
            continue;
        }
        let late = match write_check(version(linked.as_raw()), ts, guard) {
            Err(rts) => Some(rts),
            Ok(absent_below) => {
                if absent_below && nwr_on && nwr::marks_in_head::<W>() {
                    // Scan-miss rule (docs/protocols/nwr.md): the key was absent below our
                    // version, and a scan of this epoch that missed it left no mark on the
                    // record. Count that as a pre-epoch read, so no write of the key is omitted
                    // in this epoch (ordered before such a scanner). Marked before Phase 3 marks
                    // our version COMMITTED; an omitter only uses a COMMITTED version of the
                    // epoch as its pivot (`has_epoch_version`, Acquire status loads) and claims
                    // the record after that, so it sees the mark.
                    record(e.rec).head.mark_read(epoch_of(ts), guard);
                }
                absent_below
                    .then(|| engine.absent_floor(e.table, e.key))
                    .filter(|&floor| floor > ts)
            }
        };
        if let Some(rts) = late {
            w.state.clock.observe(rts);
            let c = Conflict::at(ConflictCause::WriteTooLate, e.table, e.key);
            return Err(Failure::Conflict(c));
        }
    }
    Ok(())
}

/// Before Phase 1: loads every written record's head word and prefetches the version it points
/// to, so the cache misses of all writes overlap. Each link's `SeqCst` compare-and-swap is a
/// locked instruction that later loads cannot pass, so without this the writes' misses (the
/// head word, then the version below it that [`MvtoRecord::link`] compares with and
/// [`write_check`] reads) are taken one after another. The `Relaxed` loads only pick addresses
/// for the prefetch hint, which changes no memory: no decision depends on what they return, and
/// the protocol's own loads follow in [`install_pending`]. A pointer that is stale by then only
/// wastes a prefetch (the version stays allocated under the transaction's guard, `crate::gc`).
#[inline]
fn prefetch_writes<Rec: Recorder, W: WriteOmission>(st: &MvtoSets<Rec, W>, guard: &Guard) {
    if st.writes.len() < 2 {
        return;
    }
    for e in st.writes.iter() {
        let head = record(e.rec).head.load(Ordering::Relaxed);
        prefetch(head.version(guard).as_raw());
    }
}

/// Why [`MvtoRecord::link`] refused a version, as a commit failure.
fn link_refused(why: LinkRefused, ts: u64, table: txlab_core::TableId, key: u64) -> Failure {
    match why {
        LinkRefused::Retired => {
            Failure::Conflict(Conflict::at(ConflictCause::RecordRetired, table, key))
        }
        LinkRefused::Duplicate => Failure::Internal(format!(
            "mvto: timestamp {ts:#x} already has a version of table {} key {key}",
            table.0
        )),
        LinkRefused::Unaddressable => Failure::Internal(UNADDRESSABLE.to_string()),
    }
}

/// Phase 1 for one linked version: the read-timestamp walk. `Err(rts)` of the version that was
/// read too late, or `Ok` with whether the key was absent below `new`.
#[inline]
fn write_check(new: &Version, ts: u64, guard: &Guard) -> Result<bool, u64> {
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

/// Phase 2: every version read is still the one visible at `ts` (a record being retired fails
/// with `RecordRetired`), and every scanned stripe still has the version read.
fn validate<Rec: Recorder, W: WriteOmission>(tx: &MvtoTxn<'_, '_, Rec, W>) -> Result<(), Conflict> {
    let (st, ts, guard) = (&tx.w.sets, tx.w.state.ts, &tx.guard);
    for r in st.reads.iter() {
        let cause = match record(r.rec).visible(ts, Ordering::SeqCst, guard) {
            Visible::Committed(v) if std::ptr::eq(v, r.seen) => continue,
            Visible::Retired => ConflictCause::RecordRetired,
            _ => ConflictCause::ReadValidation,
        };
        return Err(Conflict::at(cause, r.table, r.key));
    }
    st.validate_stripe_versions(&tx.w.engine.shell.tables)
}

/// Phase 3: marks every linked version `COMMITTED` (or `ABORTED`). `Release` stores: a reader
/// acts on a status only after an `Acquire` load of it, which then sees the version's contents
/// and whatever this commit did before (the NWR scan-miss mark of Phase 1); no store-load pattern
/// involves the status (a reader that still sees `PENDING` waits or fails validation, which is
/// safe), so the full barrier of a `SeqCst` store (`xchg` on x86) buys nothing here.
fn decide<Rec: Recorder, W: WriteOmission>(st: &MvtoSets<Rec, W>, commit: bool) {
    let status = if commit { COMMITTED } else { ABORTED };
    for w in st.writes.iter() {
        if !w.scratch.0.is_null() {
            version(w.scratch.0).status.store(status, Ordering::Release);
        }
    }
}

/// After a commit: each delete on a hash or ordered table is queued for unlinking
/// (`crate::retire`).
fn queue_deletes<Rec: Recorder, W: WriteOmission>(tx: &mut MvtoTxn<'_, '_, Rec, W>) {
    let tables = &tx.w.engine.shell.tables;
    let w = &mut *tx.w;
    let ts = w.state.ts;
    for e in w.sets.writes.iter() {
        if e.kind.is_delete() && unlinks(tables.get(e.table)) {
            w.retire.push(RetireEntry {
                table: e.table,
                key: e.key,
                version: ts,
                epoch: epoch_of(ts),
            });
        }
    }
}

/// After a commit: cuts each written record's list below the horizon (`crate::gc`), recomputing
/// the horizon every `horizon_interval` writing commits.
fn collect_garbage<Rec: Recorder, W: WriteOmission>(tx: &mut MvtoTxn<'_, '_, Rec, W>) {
    let engine = tx.w.engine;
    let w = &mut *tx.w;
    w.state.since_horizon += 1;
    let horizon = if w.state.since_horizon >= engine.shell.config.protocol.horizon_interval {
        w.state.since_horizon = 0;
        engine.clocks.refresh_horizon()
    } else {
        engine.clocks.horizon()
    };
    for e in w.sets.writes.iter() {
        gc::collect(
            record(e.rec),
            horizon,
            &tx.guard,
            &mut w.state.pool,
            &engine.clocks,
        );
    }
}

/// The installed writes' history events (only when recording): a version's tag is its `wts`.
fn record_installed<Rec: Recorder, W: WriteOmission>(st: &mut MvtoSets<Rec, W>, ts: u64) {
    for w in st.writes.iter() {
        st.h_writes.push(WriteEvent {
            table: w.table,
            key: w.key,
            version: ts,
            order: ts,
            kind: w.kind.history(),
            visible: !w.scratch.0.is_null(),
        });
    }
}

txlab_nwr::mutation_checks!(crate::MvtoConfig {
    write_too_late: SkipWriteTooLate,
    old_readers: NwrSkipOldReaderCheck,
});
