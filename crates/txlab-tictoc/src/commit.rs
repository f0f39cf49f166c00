//! TicToc's commit protocol (X. Yu, A. Pavlo, D. Sanchez, S. Devadas, "TicToc: Time Traveling
//! Optimistic Concurrency Control", SIGMOD 2016, §3, Algorithms 2 and 3).
//!
//! ```text
//! (NWR HOOK: a WriteOmission policy may take over here; compiled out for NoNwr)
//! Step 1  sort the write set by record address; lock every record (CAS on the lock bit,
//!         spinning: the global order rules out deadlock); remember each replaced word.
//!         fence(SeqCst); epoch = global epoch                       (recorded in CommitInfo)
//! Step 2  commit_ts = max( max over the write set of rts + 1   (of the locked word),
//!                          max over the read set  of wts       (as read) )
//! Step 3  for every read with rts (as read) < commit_ts:
//!           loop { cur = word;
//!                  abort if wts(cur) != wts read                 (the version was replaced);
//!                  done  if rts(cur) >= commit_ts                (someone already extended it);
//!                  if locked: done if we hold the lock (we overwrite it at commit_ts),
//!                             abort otherwise (cannot extend under another writer's lock);
//!                  CAS cur -> cur with rts = commit_ts (delta form, shifting wts on overflow);
//!                  done on success, retry the loop on failure }
//!         for every scanned phantom stripe: abort if its version changed.
//! Step 4  (Algorithm 3) fence(Release); for each write: store the value, then publish
//!         wts = rts = commit_ts (| ABSENT for deletes) with a Release store, which unlocks.
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
//! That serial order is *not* real-time order: a transaction may commit at a logical time before
//! one that finished earlier, so TicToc is serializable but not strictly serializable (see
//! `tests/semantics.rs` for a schedule showing it, and `docs/protocols/tictoc.md`).
//!
//! **Orderings.** Locking is an `Acquire` CAS; the `SeqCst` fence after locking orders the
//! validation loads of Step 3 after every lock of Step 1 against other committers doing the same
//! (two transactions that each read what the other locks cannot both miss the other's lock: the
//! store-load pattern needs the fence). An `rts` extension is a CAS on the same word a later writer
//! locks, so the writer's lock CAS sees the extension by coherence and its `commit_ts` exceeds it.
//! The `Release` fence before the value stores and the `Release` publish pair with readers'
//! `Acquire` load/fence (the seqlock argument in `txlab_core::value`).
//!
//! **Group commit.** TicToc's timestamps carry no epoch; the epoch read right after locking is the
//! transaction's epoch in [`CommitInfo`]. A transaction that read another's write loaded the
//! epoch after that write was published, and the writer loaded its epoch before publishing, so
//! readers never get an earlier epoch than the writers they depend on (the global epoch only
//! grows); acknowledging at epoch stability therefore never acknowledges a dependent before its
//! dependency.

use crate::nwr_hook::WriteOmission;
use crate::record::TicTocRecord;
use crate::txn::TicTocTxn;
use crate::word::{MAX_WTS, installed, is_locked, rts, with_rts, wts};
use crate::worker_state::{ReadEntry, WriteKind};
use txlab_core::history::{
    Outcome, Recorder, TxnRecord, WriteEvent, WriteKind as HWriteKind, txn_id,
};
use txlab_core::storage::Index;
use txlab_core::sync::{Ordering, fence};
use txlab_core::{AckMode, CommitInfo, Conflict, ConflictCause, Error, TxError, TxResult};

/// Which checks a test-only mutation disables (all `false`, and folded away, without the
/// `mutation` feature).
struct Skips {
    lock: bool,
    reads: bool,
    extension: bool,
    stripes: bool,
}

impl Skips {
    #[inline(always)]
    fn of(_config: &crate::config::TicTocConfig) -> Self {
        #[cfg(feature = "mutation")]
        {
            use crate::config::Mutation;
            let m = _config.mutation;
            Skips {
                lock: m == Some(Mutation::SkipWriteLock),
                reads: m == Some(Mutation::SkipReadValidation),
                extension: m == Some(Mutation::SkipRtsExtension),
                stripes: m == Some(Mutation::SkipPhantomValidation),
            }
        }
        #[cfg(not(feature = "mutation"))]
        Skips {
            lock: false,
            reads: false,
            extension: false,
            stripes: false,
        }
    }
}

#[inline]
fn rec<'a>(p: *const TicTocRecord) -> &'a TicTocRecord {
    // SAFETY: write-set and read-set pointers were obtained under the transaction's guard, which
    // is pinned for the whole commit (see `worker_state`).
    unsafe { &*p }
}

/// Step 3 for one read whose `rts` (as read) is below `commit_ts`: returns whether the version read
/// is (now) valid at `commit_ts`. `own` says whether the record is in the write set (locked by us).
#[inline]
fn validate_read(r: &ReadEntry, commit_ts: u64, own: bool, skip_extension: bool) -> bool {
    let record = rec(r.rec);
    let mut cur = record.word.load(Ordering::Acquire);
    loop {
        if wts(cur) != wts(r.word) {
            return false;
        }
        if rts(cur) >= commit_ts {
            return true;
        }
        if is_locked(cur) {
            return own;
        }
        if skip_extension {
            return true;
        }
        match record.word.compare_exchange_weak(
            cur,
            with_rts(cur, commit_ts),
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => return true,
            Err(now) => cur = now,
        }
    }
}

/// Runs the commit protocol on `tx` (see the module docs).
pub(crate) fn commit<Rec: Recorder, Omit: WriteOmission>(
    tx: &mut TicTocTxn<'_, '_, Rec, Omit>,
) -> TxResult<CommitInfo> {
    let engine = tx.w.engine;
    let skip = Skips::of(&engine.config);

    // ===== NWR HOOK =====
    // A `WriteOmission` policy with `ENABLED = true` (TicToc+NWR, not implemented in this crate)
    // runs here: with the read set and write set complete and nothing locked, it tries to place
    // every write just before its key's pivot version and, if its validation passes, commits
    // without locking or installing (still validating the read set as Step 3 does). If it
    // declines, control falls through to the baseline protocol below, unchanged ("no false
    // aborts", NWR paper §4.1). For `NoNwr` this block is compiled out.
    if Omit::ENABLED {
        let _policy: &Omit = &engine.omission;
    }

    let st = &mut tx.w.state;

    // Step 1: lock the write set in address order.
    st.writes.sort_unstable_by_key(|w| w.rec as usize);
    for w in st.writes.iter_mut() {
        let r = rec(w.rec);
        if skip.lock {
            w.locked_word = r.word.load(Ordering::Acquire) & !crate::word::LOCK;
            continue;
        }
        let mut backoff = txlab_core::sync::SpinWait::new();
        w.locked_word = loop {
            if let Some(word) = r.try_lock() {
                break word;
            }
            backoff.snooze();
        };
    }
    fence(Ordering::SeqCst);
    let epoch = tx.w.epoch.global();

    // Step 2: the commit timestamp.
    let mut commit_ts = 0u64;
    for w in st.writes.iter() {
        commit_ts = commit_ts.max(rts(w.locked_word) + 1);
    }
    for r in st.reads.iter() {
        commit_ts = commit_ts.max(wts(r.word));
    }

    // Step 3: validate the read set (extending rts) and the phantom stripes.
    let mut failure: Option<Conflict> = None;
    if commit_ts > MAX_WTS {
        failure = Some(Conflict::new(ConflictCause::Other("timestamp_exhausted")));
    }
    if failure.is_none() && !skip.reads {
        for r in st.reads.iter() {
            if rts(r.word) >= commit_ts {
                continue;
            }
            let own = !st.writes.is_empty() && st.writes_record(r.rec);
            if !validate_read(r, commit_ts, own, skip.extension) {
                failure = Some(Conflict::at(ConflictCause::ReadValidation, r.table, r.key));
                break;
            }
        }
    }
    if failure.is_none() && !skip.stripes {
        for n in st.stripes.iter() {
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
        if !skip.lock {
            for w in st.writes.iter() {
                rec(w.rec).unlock(w.locked_word);
            }
        }
        if c.cause == ConflictCause::Other("timestamp_exhausted") {
            tx.finish_abort(Outcome::UserAborted);
            return Err(TxError::Error(Error::Internal(format!(
                "tictoc: commit timestamp {commit_ts} exceeds the {MAX_WTS} the 47-bit wts field \
                 holds"
            ))));
        }
        st.failed = Some(c.cause);
        tx.finish_abort(Outcome::Aborted(c.cause));
        return Err(c.into());
    }

    // Step 4: install the write set at commit_ts (Algorithm 3).
    let read_only = st.writes.is_empty();
    if !read_only {
        fence(Ordering::Release);
        for w in st.writes.iter() {
            let r = rec(w.rec);
            let delete = w.kind == WriteKind::Delete;
            let value = (!delete).then(|| &st.wbuf[w.off as usize..(w.off + w.len) as usize]);
            r.install(value, commit_ts, installed(commit_ts, delete));
            if Rec::ENABLED {
                st.h_writes.push(WriteEvent {
                    table: w.table,
                    key: w.key,
                    version: commit_ts,
                    order: commit_ts,
                    kind: if delete {
                        HWriteKind::Delete
                    } else {
                        HWriteKind::Put
                    },
                    visible: true,
                });
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
