//! TicToc's commit protocol (X. Yu, A. Pavlo, D. Sanchez, S. Devadas, "TicToc: Time Traveling
//! Optimistic Concurrency Control", SIGMOD 2016, §3, Algorithms 2 and 3).
//!
//! ```text
//! (Phase 0: TicToc+NWR may take over here, `crate::nwr`; compiled out for NoNwr)
//! Step 1  sort the write set by record address; lock every record (SeqCst CAS on the lock bit,
//!         spinning: the global order rules out deadlock); remember each replaced word. A record
//!         found RETIRED (unlinked, `crate::retire`): unlock what we hold, abort (RecordRetired)
//!         (`txlab_occ::lock_writes`).
//! Step 1b for every record this transaction writes first (locked word absent, history tag 0:
//!         never written): commit above its key's retire floor (`crate::retire`); and for every
//!         phantom stripe holding one, once per stripe: announce the first write (SeqCst
//!         fetch_add of the stripe's version, `crate::stripe_clock`).
//!         epoch = global epoch  (recorded in CommitInfo)
//! Step 2  commit_ts = max( max over the write set of rts + 1   (of the locked word),
//!                          max over the read set  of wts       (as read),
//!                          max over announced stripes of scan_rts + 1,
//!                          the retire floors met (fresh records read or written first,
//!                          scanned stripes; `crate::retire`) )
//! Step 3  for every read with rts (as read) < commit_ts:
//!           loop { cur = word (SeqCst load);
//!                  abort if wts(cur) != wts read                 (the version was replaced);
//!                  done  if rts(cur) >= commit_ts                (someone already extended it);
//!                  if locked: done if we hold the lock (we overwrite it at commit_ts),
//!                             abort otherwise (cannot extend under another writer's lock);
//!                  CAS cur -> cur with rts = commit_ts (delta form, shifting wts on overflow);
//!                  done on success, retry the loop on failure }
//!         for every scanned phantom stripe: raise its scan_rts to commit_ts, then abort if
//!         its version changed since the scan read it (a first write was announced).
//! Step 4  (Algorithm 3) fence(Release); for each write: store the value, then publish
//!         wts = rts = commit_ts (| ABSENT for deletes) with a Release store, which unlocks;
//!         queue each delete on a hash or ordered table for unlinking (`crate::retire`).
//! ```
//!
//! **Why this is serializable** (the paper's correctness argument, restated for this code): every
//! committed transaction `T` gets a logical time `commit_ts(T)`. Each version `v` of a record is
//! valid over `[wts(v), rts(v)]` and the next version's `wts` exceeds `rts(v)` (Step 2 picks
//! `commit_ts > rts` of every locked record, and `rts` cannot grow under a lock because Step 3
//! only extends unlocked words). Step 3 makes `rts(v) >= commit_ts(T)` for every version `T`
//! read, or aborts `T`; so every version `T` read is the one valid at `commit_ts(T)`, and every
//! version `T` wrote is valid from `commit_ts(T)`. Ordering transactions by `commit_ts` (ties
//! broken by physical commit order) therefore gives a serial order that reads the same versions.
//! Scans add predicate reads: a record the traversal visited is in the read set like any read;
//! for records it did not visit, each scanned stripe is itself a timestamped object (the set of
//! its records ever written, `crate::stripe_clock`): the scanner extends the stripe's `scan_rts`
//! to its `commit_ts` and checks the stripe's version, and the first write of a record in the
//! stripe commits above `scan_rts`. So a scanner that commits without having visited a record is
//! ordered before every version of it but the initial never-written one, where its key is indeed
//! absent (the proof, with its store-load argument, is in `crate::stripe_clock`).
//! That serial order is *not* real-time order: a transaction may commit at a logical time before
//! one that finished earlier, so TicToc is serializable but not strictly serializable (see
//! `tests/semantics.rs` for a schedule showing it, and `docs/protocols/tictoc.md`).
//!
//! **Orderings.** Locking is a `SeqCst` CAS and Step 3 loads each word it validates with a
//! `SeqCst` load (and re-reads it through `SeqCst` CAS failures), so two transactions that each
//! validate what the other locks cannot both miss the other's lock, without a fence: the four
//! operations are in the single total order `S` of `SeqCst` operations, which agrees with program
//! order and coherence order, and were both loads to read words older than the other's lock, `S`
//! would hold the cycle lock `A` < load `B` < lock `B` < load `A` < lock `A` (the argument in
//! full: `txlab_silo`'s commit docs). A read whose version's `rts` already covers `commit_ts` is
//! not loaded again: a writer that locks it later reads that `rts` (or a later one) in its lock
//! CAS and commits above it. On x86 the `SeqCst` CAS and load compile to the same instructions as
//! `Acquire` ones, so the commit issues no `mfence` (about 20 ns on the project's EPYC VM).
//! TicToc+NWR needs no fence there either: its serial order is `commit_ts` order, whose epoch
//! ranges (`crate::word`) make it agree with epochs by construction, and its read marks pair with
//! omitters through read-modify-writes (the mark word's `fetch_max` and `fetch_add(0)`, `rts`
//! extensions and lock CASes on the record's word: `crate::nwr`), not through fences. An `rts`
//! extension is a CAS on the same word a later writer
//! locks, so the writer's lock CAS sees the extension by coherence and its `commit_ts` exceeds it.
//! The `Release` fence before the value stores and the `Release` publish pair with readers'
//! `Acquire` load/fence (the seqlock argument in `txlab_core::protocol::value`). Stripe clocks use only
//! `SeqCst` accesses: a first writer's announce (Step 1b) precedes its `scan_rts` load (Step 2),
//! a scanner's `scan_rts` raise precedes its version load (Step 3), so in the single total order
//! either the first writer sees the raise or the scanner sees the announce. An announce or a
//! raise is never undone on abort: a stale announce only aborts scanners, a stale raise only
//! pushes first writers up. A read-only transaction (NWR off) locked nothing, so there is no
//! store→load pair to order; if it read a version writer `W` published (`Release`
//! store, loaded with `Acquire`), `W`'s locks happen before our Step 3 loads, which see the lock
//! or the new `wts` on any record of `W` whose older version we read, and abort (we cannot extend
//! under another writer's lock).
//!
//! **Group commit.** TicToc's timestamps carry no epoch; the epoch read right after locking is the
//! transaction's epoch in [`CommitInfo`]. A transaction that read another's write loaded the
//! epoch after that write was published, and the writer loaded its epoch before publishing, so
//! readers never get an earlier epoch than the writers they depend on (the global epoch only
//! grows); acknowledging at epoch stability therefore never acknowledges a dependent before its
//! dependency.
//!
//! TicToc+NWR adds a Phase 0, the epoch's floor and marks in the other steps, each one call into
//! [`crate::nwr`] (compiled out for `NoNwr`); history recording ([`record_installed`]) and the
//! test-only mutations ([`Checks`]) are likewise kept off the baseline's path.

use crate::engine::{TicToc, TicTocTxn};
use crate::nwr;
use crate::record::{TAG_PIVOT_READ, TicTocRecord};
use crate::word::{MAX_WTS, epoch_base, installed, is_absent, is_locked, rts, with_rts, wts};
use txlab_core::protocol::history::{Recorder, WriteEvent};
use txlab_core::protocol::sync::{Ordering, fence};
use txlab_core::{AckMode, CommitInfo, Conflict, ConflictCause, Error, TxError, TxResult};
use txlab_nwr::WriteOmission;
use txlab_occ::{RetireEntry, Sets, lock_writes, unlinks, unlock_writes, write_index};

/// The retryable abort of a commit whose timestamp would spill into the next epoch's range
/// (TicToc+NWR only; `crate::word`).
pub const EPOCH_TIMESTAMPS_EXHAUSTED: ConflictCause = ConflictCause::TimestampsExhausted;

/// The sets of a TicToc transaction.
type TicTocSets<Rec, Omit> = Sets<TicToc<Rec, Omit>>;

/// Runs the commit protocol on `tx` (module docs).
pub(crate) fn commit<Rec: Recorder, Omit: WriteOmission>(
    tx: &mut TicTocTxn<'_, '_, Rec, Omit>,
) -> TxResult<CommitInfo> {
    let checks = Checks::of(&tx.w.engine.shell.config);
    let nwr_on = Omit::ENABLED && tx.w.engine.shell.config.ack == AckMode::EpochStable;
    if nwr_on && let Some(info) = nwr::try_omit(tx, checks.nwr) {
        return Ok(info);
    }
    if let Err(c) = lock_writes(&mut tx.w.sets, checks.lock_writes) {
        return Err(tx.abort_with(c));
    }
    announce_first_writes(tx);
    let epoch = tx.w.epoch.global();
    let mut commit_ts = commit_ts(tx, &checks);
    let mut unmarked = false;
    if Omit::ENABLED {
        (commit_ts, unmarked) = nwr::lift_to_epoch(tx, commit_ts, epoch, nwr_on);
    }
    let mut failure = timestamp_range(commit_ts, epoch, Omit::ENABLED);
    if nwr_on && failure.is_none() {
        nwr::mark_reads(tx, epoch, unmarked);
    }
    if failure.is_none() {
        failure = validate(tx, commit_ts, &checks, nwr_on)
            .err()
            .map(Failure::Conflict);
    }
    if let Some(f) = failure {
        unlock_writes(&tx.w.sets.writes, checks.lock_writes);
        return Err(match f {
            Failure::Conflict(c) => tx.abort_with(c),
            Failure::Internal(msg) => {
                tx.finish(txlab_core::protocol::history::Outcome::UserAborted);
                TxError::Error(Error::Internal(msg))
            }
        });
    }
    let read_only = tx.w.sets.writes.is_empty();
    if !read_only {
        install(tx, commit_ts, epoch, nwr_on);
        if Rec::ENABLED {
            record_installed(&mut tx.w.sets, commit_ts);
        }
        if nwr_on {
            tx.w.state.nwr.commits_baseline += 1;
        }
    }
    Ok(tx.committed(epoch, read_only))
}

/// Why a commit failed after locking.
enum Failure {
    Conflict(Conflict),
    Internal(String),
}

#[inline]
fn rec<'a>(p: *const TicTocRecord) -> &'a TicTocRecord {
    // SAFETY: write-set and read-set pointers were obtained under the transaction's guard, which
    // is pinned for the whole commit (`txlab_occ::sets`).
    unsafe { &*p }
}

/// Step 1b: announces every first write (the first version of a never-written record: locked
/// word absent, history tag 0, which only the lock holder changes) on its phantom stripe, once
/// per stripe, before Step 2 reads the stripe's `scan_rts` (`crate::stripe_clock`). Our own scans
/// of the stripe move along with our own announce. A first write also commits above its key's
/// retire floor (`crate::retire`: the key's record may be a fresh one linked after a tombstone
/// was unlinked), loaded after locking.
fn announce_first_writes<Rec: Recorder, Omit: WriteOmission>(
    tx: &mut TicTocTxn<'_, '_, Rec, Omit>,
) {
    let engine = tx.w.engine;
    let w = &mut *tx.w;
    let (st, firsts) = (&mut w.sets, &mut w.state.first_writes);
    for e in st.writes.iter() {
        if is_absent(e.scratch) && rec(e.rec).tag.load(Ordering::Relaxed) == 0 {
            let floor = engine.retire_floor(e.table, e.key);
            if floor > 0 {
                w.state.ts_floor = w.state.ts_floor.max(floor + 1);
            }
            if let Some((stripes, _)) = engine.stripes(e.table) {
                firsts.push((e.table, stripes.stripe_of(e.key)));
            }
        }
    }
    firsts.sort_unstable();
    firsts.dedup();
    for &(table, stripe) in firsts.iter() {
        if let Some((_, clocks)) = engine.stripes(table) {
            let before = clocks.announce_first_write(stripe);
            for s in st.stripes.iter_mut() {
                if s.table == table && s.stripe == stripe && s.version == before {
                    s.version = before + 1;
                }
            }
        }
    }
}

/// Step 2: `commit_ts` above every locked word's `rts`, at least every `wts` read, above the
/// `scan_rts` of every stripe a first write was announced on, and at least the retire floors met.
fn commit_ts<Rec: Recorder, Omit: WriteOmission>(
    tx: &TicTocTxn<'_, '_, Rec, Omit>,
    checks: &Checks,
) -> u64 {
    let (engine, st, state) = (tx.w.engine, &tx.w.sets, &tx.w.state);
    let mut ts = 0u64;
    for w in st.writes.iter() {
        ts = ts.max(rts(w.scratch) + 1);
    }
    if checks.stripe_timestamps {
        for &(table, stripe) in state.first_writes.iter() {
            if let Some((_, clocks)) = engine.stripes(table) {
                ts = ts.max(clocks.scan_rts(stripe) + 1);
            }
        }
    }
    for r in st.reads.iter() {
        ts = ts.max(wts(r.seen));
    }
    ts.max(state.ts_floor)
}

/// Whether `commit_ts` can be installed: the 47-bit `wts` field holds it (an internal error
/// otherwise, reported once the locks are released) and, in TicToc+NWR, it stays in its epoch's
/// range (a retryable abort otherwise, `crate::word`).
fn timestamp_range(commit_ts: u64, epoch: u64, epoch_ranges: bool) -> Option<Failure> {
    if commit_ts > MAX_WTS {
        Some(Failure::Internal(format!(
            "tictoc: commit timestamp {commit_ts} exceeds the {MAX_WTS} the 47-bit wts field holds"
        )))
    } else if epoch_ranges && commit_ts >= epoch_base(epoch + 1) {
        Some(Failure::Conflict(Conflict::new(EPOCH_TIMESTAMPS_EXHAUSTED)))
    } else {
        None
    }
}

/// Step 3: every read whose `rts` is below `commit_ts` is validated and extended
/// ([`validate_read`]), then every scanned stripe must be valid at `commit_ts`: its `scan_rts` is
/// raised to `commit_ts`, then no first write may have been announced since the scan read it.
/// With single-write omitters, a read of a record we locked flags that write entry as read
/// (`crate::nwr::install_marks`).
fn validate<Rec: Recorder, Omit: WriteOmission>(
    tx: &mut TicTocTxn<'_, '_, Rec, Omit>,
    commit_ts: u64,
    checks: &Checks,
    nwr_on: bool,
) -> Result<(), Conflict> {
    let engine = tx.w.engine;
    let w = &mut *tx.w;
    let st = &mut w.sets;
    if checks.validate_reads {
        for (i, r) in st.reads.iter().enumerate() {
            if rts(r.seen) >= commit_ts {
                // Never a read of a record we write: commit_ts exceeds the locked word's rts,
                // which is at least the rts of any version of it we read.
                continue;
            }
            let own = if st.writes.is_empty() {
                None
            } else {
                write_index(&st.writes, r.rec)
            };
            if nwr_on
                && Omit::SINGLE_WRITE_OMITTERS
                && let Some(j) = own
            {
                st.writes[j].read = true;
            }
            let tag = Omit::ENABLED.then(|| w.state.read_tags[i]);
            if !validate_read(rec(r.rec), r.seen, tag, commit_ts, own.is_some(), checks) {
                return Err(Conflict::at(ConflictCause::ReadValidation, r.table, r.key));
            }
        }
    }
    if checks.validate_stripes {
        st.validate_stripes(|s| {
            engine
                .stripes(s.table)
                .is_some_and(|(_, clocks)| !clocks.validate_scan(s.stripe, s.version, commit_ts))
        })?;
    }
    Ok(())
}

/// Step 3 for one read (`seen` its word) whose `rts` is below `commit_ts`: returns whether the
/// version read is (now) valid at `commit_ts`. `own` says whether the record is in the write set
/// (locked by us). `tag` is the read version's history tag in TicToc+NWR (`None` in plain
/// TicToc): it recognises the version after a delta-overflow shift moved its `wts`
/// ([`shifted_version`]).
#[inline]
fn validate_read(
    record: &TicTocRecord,
    seen: u64,
    tag: Option<u64>,
    commit_ts: u64,
    own: bool,
    checks: &Checks,
) -> bool {
    // SeqCst loads (here and on CAS failure): ordered after our SeqCst locks without a fence
    // (module docs).
    let mut cur = record.word.load(Ordering::SeqCst);
    loop {
        if wts(cur) != wts(seen) {
            match shifted_version(record, cur, tag, own) {
                Some(same) => cur = same,
                None => return false,
            }
        }
        if rts(cur) >= commit_ts {
            return true;
        }
        if is_locked(cur) {
            return own;
        }
        if !checks.extend_rts {
            return true;
        }
        match record.word.compare_exchange_weak(
            cur,
            with_rts(cur, commit_ts),
            Ordering::SeqCst,
            Ordering::SeqCst,
        ) {
            Ok(_) => return true,
            Err(now) => cur = now,
        }
    }
}

/// TicToc+NWR: `cur`'s `wts` differs from the one read; if the record still holds the version
/// whose history tag is `tag` (its `wts` moved by a delta-overflow shift, which every rts
/// extension into a new epoch's range causes, `crate::word`), returns a word of that version
/// read consistently with the tag. Tags are unique per version of a record, so an equal tag is
/// the same version. `None` if the version was replaced (or is locked by another transaction),
/// and always in plain TicToc (`tag == None`), where a changed `wts` means a new version or a
/// shift and both abort, as in the paper.
#[inline]
pub(crate) fn shifted_version(
    record: &TicTocRecord,
    cur: u64,
    tag: Option<u64>,
    own: bool,
) -> Option<u64> {
    let t = tag?;
    if is_locked(cur) {
        // Only the lock holder changes the tag; when that is us, the tag is stable.
        let now = record.tag.load(Ordering::Relaxed) & !TAG_PIVOT_READ;
        return (own && now == t).then_some(cur);
    }
    let (word, now) = record.stable_tag()?;
    (now == t).then_some(word)
}

/// Step 4 (Algorithm 3): publishes every write at `commit_ts` and queues deletes for unlinking.
fn install<Rec: Recorder, Omit: WriteOmission>(
    tx: &mut TicTocTxn<'_, '_, Rec, Omit>,
    commit_ts: u64,
    epoch: u64,
    nwr_on: bool,
) {
    let tables = &tx.w.engine.shell.tables;
    let w = &mut *tx.w;
    fence(Ordering::Release);
    for (i, e) in w.sets.writes.iter().enumerate() {
        let r = rec(e.rec);
        let delete = e.kind.is_delete();
        let mut tag = commit_ts;
        if nwr_on {
            tag |= nwr::install_marks::<Omit>(r, e, epoch);
        }
        let value = (!delete).then(|| w.sets.write_value(i));
        r.install(value, tag, installed(commit_ts, delete));
        if delete && unlinks(tables.get(e.table)) {
            w.retire.push(RetireEntry {
                table: e.table,
                key: e.key,
                version: commit_ts,
                epoch,
            });
        }
    }
}

/// The installed writes' history events (only when recording): a version's tag is its `wts`.
fn record_installed<Rec: Recorder, Omit: WriteOmission>(
    st: &mut TicTocSets<Rec, Omit>,
    commit_ts: u64,
) {
    for w in st.writes.iter() {
        st.h_writes.push(WriteEvent {
            table: w.table,
            key: w.key,
            version: commit_ts,
            order: commit_ts,
            kind: w.kind.history(),
            visible: true,
        });
    }
}

txlab_nwr::mutation_checks!(crate::TicTocConfig {
    lock_writes: SkipWriteLock,
    validate_reads: SkipReadValidation,
    extend_rts: SkipRtsExtension,
    validate_stripes: SkipPhantomValidation,
    stripe_timestamps: SkipStripeTimestamps,
});
