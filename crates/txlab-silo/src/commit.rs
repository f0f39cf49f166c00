//! Silo's commit protocol (Tu et al., SOSP 2013, §4.4, Figure 2).
//!
//! ```text
//! Phase 1  lock: sort the write set by record address; lock every record (SeqCst CAS on the TID
//!          lock bit, spinning: the global order rules out deadlock); remember each replaced
//!          word. A RETIRED record (unlinked, crate::retire): unlock, abort with RecordRetired
//!          (txlab_occ::lock_writes).
//!          e = global epoch (Silo+NWR: a SeqCst load)          <- serialization point
//! Phase 2  validate: every read-set entry's record (SeqCst load) must still hold the word read
//!          (without LOCK) and must not be locked by another transaction (one not in our write
//!          set); every scanned stripe must still have the version read (phantoms).
//! Phase 3  install: tid = the smallest TID in epoch e greater than every word read or replaced
//!          and than the worker's last TID; fence(Release); per write: store the value words,
//!          then publish tid (| ABSENT for a delete) with a Release store, which also unlocks;
//!          queue each delete on a hash or ordered table for unlinking (crate::retire).
//! ```
//!
//! Why the orderings suffice. Silo's "memory fence" between locking and validation is there for a
//! store→load pattern: `T1` locks `A` and validates `B`, `T2` locks `B` and validates `A`; they
//! must not both miss the other's lock. Here the locks are `SeqCst` compare-and-swaps and the
//! validation loads are `SeqCst` loads, which gives that without a fence. All four operations are
//! in the single total order `S` of `SeqCst` operations, which agrees with program order and with
//! coherence order (C++20 \[atomics.order\]: an operation that reads a value written before a
//! modification in its object's modification order precedes that modification in `S`). Were
//! `T1`'s load of `B` to read a word older than `T2`'s lock, it would precede that lock in `S`,
//! and likewise `T2`'s load of `A` would precede `T1`'s lock; with each lock before its own
//! load, `S` would hold the cycle lock `A` < load `B` < lock `B` < load `A` < lock `A`. So one of
//! them reads the other's lock, or a word written after it (a newer TID, or the same word
//! restored by an abort that then commits nothing), and fails validation. A read-set entry's word
//! never returns to a value a committed writer replaced, since TIDs of a record only grow. The
//! argument needs every modification of a TID word that can fail another transaction's
//! validation to be in `S`: the commit's lock CAS and the retirer's CAS that locks a tombstone
//! (`crate::retire`) are both `SeqCst`. (With an `Acquire` retirer CAS, a transaction that read
//! the tombstone and one that wrote the key into its fresh record after the retirement could
//! each miss the other: write skew.) On
//! x86 a `SeqCst` compare-and-swap is the same `lock cmpxchg` as an `Acquire` one and a `SeqCst`
//! load a plain `mov`, so the commit issues no `mfence` (about 20 ns on the project's EPYC VM,
//! where the lock CAS costs about 2). The epoch needs no fence for read-from and write-write
//! edges: a transaction that read (or overwrote) another's write loaded `E` after that write's
//! `Release` publish, which follows the writer's own load of `E`, so those edges never run
//! against epochs (`E` only grows). For an anti-dependency (`T1` reads `x`, `T2` overwrites it)
//! nothing orders `T2`'s `Acquire` epoch load after `T1`'s: plain Silo does not rely on epochs
//! for serializability (the checker ignores them, and there is no recovery), so this is not
//! needed here. Silo+NWR, which does, reads the epoch with a `SeqCst` load
//! (`EpochHandle::global_seq_cst`, the same `mov` on x86) and takes that load as its
//! serialization point `τ`: `T1`'s `τ` precedes its `SeqCst` validation load of `x` in `S`,
//! which precedes `T2`'s lock of `x` (it read an older word), which precedes `T2`'s `τ`; every
//! store of the global epoch is `SeqCst`, so `SeqCst` loads of it never go back along `S`, and
//! `T2`'s epoch is at least `T1`'s. Write-read and write-write edges order the `τ`s the same way
//! (the writer's `τ` is sequenced before its `Release` publish, which the other side's `Acquire`
//! load or lock CAS reads, and that is sequenced before the other side's `τ`). So Silo+NWR's
//! baseline order, by `τ`, agrees with its epochs with no fence on the commit path; the rule's
//! read marks pair with omitters through read-modify-writes on the mark word
//! (`txlab_nwr::read_mark`), not through fences (`crate::nwr`). The
//! `Release` fence before the value stores and the `Release` publish pair with readers'
//! `Acquire` load/fence (the seqlock argument in `txlab_core::protocol::value`).
//!
//! A read-only transaction (no writes, NWR off) locks nothing, so there is no store→load pair to
//! order, and happens-before alone does the rest. If it read a version
//! that writer `W` installed (a `Release` store it loaded with `Acquire`), everything `W` did
//! before, including locking every record it wrote, happens before our later validation loads,
//! which therefore see `W`'s lock or a later TID on any record of `W` we read an older version
//! of, and abort; and the epoch `W` read happens before our load of `E`, so ours is not smaller.
//!
//! Silo+NWR adds a Phase 0 and marks in the other phases, each one call into [`crate::nwr`]
//! (compiled out for `NoNwr`); history recording ([`record_installed`]) and the test-only
//! mutations ([`Checks`]) are likewise kept off the baseline's path.

use crate::engine::{Silo, SiloTxn};
use crate::nwr;
use crate::record::SiloRecord;
use crate::tid::{ABSENT, LOCK, epoch_of, is_locked, next_tid, tag};
use txlab_core::protocol::history::{Recorder, WriteEvent};
use txlab_core::protocol::sync::{Ordering, fence};
use txlab_core::{AckMode, CommitInfo, Conflict, ConflictCause, TxResult};
use txlab_nwr::WriteOmission;
use txlab_occ::{Protocol, RetireEntry, Sets, lock_writes, unlinks, unlock_writes, write_index};

/// The sets of a Silo transaction.
type SiloSets<Rec, W> = Sets<Silo<Rec, W>>;

/// Runs the commit protocol on `tx` (module docs).
pub(crate) fn commit<Rec: Recorder, W: WriteOmission>(
    tx: &mut SiloTxn<'_, '_, Rec, W>,
) -> TxResult<CommitInfo> {
    let checks = Checks::of(&tx.w.engine.shell.config);
    let nwr_on = W::ENABLED && tx.w.engine.shell.config.ack == AckMode::EpochStable;
    if nwr_on && let Some(info) = nwr::try_omit(tx, checks.nwr) {
        return Ok(info);
    }
    if let Err(c) = lock_writes(&mut tx.w.sets, checks.lock_writes) {
        return Err(tx.abort_with(c));
    }
    // Silo+NWR: a `SeqCst` load, its serialization point in `S` (module docs); no fence.
    let epoch = if nwr_on {
        tx.w.epoch.global_seq_cst()
    } else {
        tx.w.epoch.global()
    };
    if nwr_on {
        nwr::mark_reads(tx, epoch, checks.nwr);
    }
    let st = &mut tx.w.sets;
    if let Err(c) = validate(st, tx.w.engine, &checks, nwr_on && W::SINGLE_WRITE_OMITTERS) {
        unlock_writes(&st.writes, checks.lock_writes);
        return Err(tx.abort_with(c));
    }
    let read_only = tx.w.sets.writes.is_empty();
    if !read_only {
        let mut tid = choose_tid(&tx.w.sets, tx.w.state.last_tid, epoch);
        if W::ENABLED {
            tid = nwr::reserve_tid(tid, epoch);
        }
        install(tx, tid, epoch, nwr_on);
        if Rec::ENABLED {
            record_installed(&mut tx.w.sets, tid);
        }
        if nwr_on {
            nwr::installed(tx, tid, epoch, checks.nwr);
        }
    }
    Ok(tx.committed(epoch, read_only))
}

#[inline]
fn rec<'a>(p: *const SiloRecord) -> &'a SiloRecord {
    // SAFETY: write-set and read-set pointers were obtained under the transaction's guard, which
    // is pinned for the whole commit (`txlab_occ::sets`).
    unsafe { &*p }
}

/// Phase 2: the read set, then the node (stripe) set. With `flag_reads` (single-write omitters),
/// a read of a record we locked flags that write entry as read, for the pivot writer's mark
/// (`crate::nwr::pivot_read_bit`); the lookup is the one validation does anyway for a locked
/// record.
fn validate<Rec: Recorder, W: WriteOmission>(
    st: &mut SiloSets<Rec, W>,
    engine: &Silo<Rec, W>,
    checks: &Checks,
    flag_reads: bool,
) -> Result<(), Conflict> {
    if checks.validate_reads {
        for r in st.reads.iter() {
            // SeqCst: ordered after our SeqCst locks without a fence (module docs).
            let cur = rec(r.rec).tid.load(Ordering::SeqCst);
            if cur & !LOCK != r.seen {
                return Err(Conflict::at(ConflictCause::ReadValidation, r.table, r.key));
            }
            if is_locked(cur) || (!checks.lock_writes && flag_reads) {
                match write_index(&st.writes, r.rec) {
                    Some(i) if flag_reads => st.writes[i].read = true,
                    Some(_) => {}
                    None if !checks.lock_writes => {}
                    None => {
                        return Err(Conflict::at(ConflictCause::ReadValidation, r.table, r.key));
                    }
                }
            }
        }
    }
    if checks.validate_stripes {
        st.validate_stripe_versions(&engine.shell().tables)?;
    }
    Ok(())
}

/// Phase 3's TID (Silo §4.4): the smallest TID of epoch `epoch` greater than (a) every TID the
/// transaction read, (b) every TID its locks replaced, and (c) the worker's last TID. (a) keeps a
/// key's versions ordered after every version the writer depended on (a reader's later write
/// must not look older than what it read), (b) makes a record's TIDs strictly increase, (c) makes
/// a worker's TIDs increase. Without (a) every history stays serializable; `txlab_testkit::tid_rule`
/// fails (`tests/kit.rs`).
#[inline]
fn choose_tid<Rec: Recorder, W: WriteOmission>(
    st: &SiloSets<Rec, W>,
    last_tid: u64,
    epoch: u64,
) -> u64 {
    let read = st.reads.iter().map(|r| tag(r.seen)).max().unwrap_or(0);
    let replaced = st.writes.iter().map(|w| tag(w.scratch)).max().unwrap_or(0);
    next_tid(read.max(replaced).max(last_tid), epoch)
}

/// Phase 3: publishes every write at `tid` (module docs) and queues deletes for unlinking.
fn install<Rec: Recorder, W: WriteOmission>(
    tx: &mut SiloTxn<'_, '_, Rec, W>,
    tid: u64,
    epoch: u64,
    nwr_on: bool,
) {
    let tables = &tx.w.engine.shell.tables;
    let w = &mut *tx.w;
    if nwr_on && !W::SINGLE_WRITE_OMITTERS {
        nwr::mark_scan_misses(&w.sets.writes, tid, epoch);
    }
    fence(Ordering::Release);
    for (i, e) in w.sets.writes.iter().enumerate() {
        let mut word = tid;
        if nwr_on && W::SINGLE_WRITE_OMITTERS {
            word |= nwr::pivot_read_bit(e.scratch, e.read, tid, epoch);
        }
        if e.kind.is_delete() {
            rec(e.rec).install(None, word | ABSENT);
            if unlinks(tables.get(e.table)) {
                w.retire.push(RetireEntry {
                    table: e.table,
                    key: e.key,
                    version: word | ABSENT,
                    epoch: epoch_of(word),
                });
            }
        } else {
            rec(e.rec).install(Some(w.sets.write_value(i)), word);
        }
    }
    w.state.last_tid = tid;
}

/// The installed writes' history events (only when recording): every version is tagged `tid`.
fn record_installed<Rec: Recorder, W: WriteOmission>(st: &mut SiloSets<Rec, W>, tid: u64) {
    for w in st.writes.iter() {
        st.h_writes.push(WriteEvent {
            table: w.table,
            key: w.key,
            version: tid,
            order: tid,
            kind: w.kind.history(),
            visible: true,
        });
    }
}

txlab_nwr::mutation_checks!(crate::SiloConfig {
    lock_writes: SkipWriteLock,
    validate_reads: SkipReadValidation,
    validate_stripes: SkipPhantomValidation,
});
