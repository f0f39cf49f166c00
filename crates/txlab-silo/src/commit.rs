//! Silo's commit protocol (Tu et al., SOSP 2013, §4.4, Figure 2).
//!
//! ```text
//! Phase 1  sort the write set by record address; lock every record (CAS on the TID lock bit,
//!          spinning: the global order rules out deadlock); remember each replaced word.
//!          fence(SeqCst); e = global epoch                      <- serialization point
//! Phase 2  for every read-set entry: abort if the record's word (without LOCK) differs from the
//!          word read, or if it is locked by another transaction (not in our write set);
//!          for every scanned stripe: abort if its version changed (phantom).
//! Phase 3  tid = smallest TID in epoch e greater than every word read or replaced and than the
//!          worker's last TID; fence(Release); for each write: store the value words, then
//!          publish tid (| ABSENT for deletes) with a Release store, which also unlocks.
//! ```
//!
//! Why the orderings suffice: locking uses an `Acquire` CAS, so the validation loads of Phase 2
//! cannot move before the locks are held; the `SeqCst` fence between Phase 1 and the epoch read
//! orders both against other committers' fences (Silo's "memory fence" before reading `E`), so two
//! transactions that each read what the other writes cannot both pass validation; the `Release`
//! fence before the value stores and the `Release` publish pair with readers' `Acquire`
//! load/fence (the seqlock argument in `txlab_core::value`).

use crate::record::SiloRecord;
use crate::tid::{ABSENT, LOCK, is_locked, next_tid, tag};
use crate::txn::SiloTxn;
use crate::worker_state::WriteKind;
use txlab_core::history::{
    Outcome, Recorder, TxnRecord, WriteEvent, WriteKind as HWriteKind, txn_id,
};
use txlab_core::storage::Index;
use txlab_core::sync::{Ordering, fence};
use txlab_core::{AckMode, CommitInfo, Conflict, ConflictCause, TxResult};

/// Which checks a test-only mutation disables (all `false`, and folded away, without the
/// `mutation` feature).
struct Skips {
    lock: bool,
    reads: bool,
    nodes: bool,
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
            }
        }
        #[cfg(not(feature = "mutation"))]
        Skips {
            lock: false,
            reads: false,
            nodes: false,
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
pub(crate) fn commit<Rec: Recorder>(tx: &mut SiloTxn<'_, '_, Rec>) -> TxResult<CommitInfo> {
    let engine = tx.w.engine;
    let skip = Skips::of(&engine.config);
    let st = &mut tx.w.state;

    // Phase 1: lock the write set in address order.
    st.writes.sort_unstable_by_key(|w| w.rec as usize);
    let skip_lock = skip.lock;
    for w in st.writes.iter_mut() {
        let r = rec(w.rec);
        if skip_lock {
            w.locked_word = r.tid.load(Ordering::Acquire) & !LOCK;
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

    // Phase 2: validate the read set and the node (stripe) set.
    let mut failure: Option<Conflict> = None;
    if !skip.reads {
        for r in st.reads.iter() {
            let cur = rec(r.rec).tid.load(Ordering::Acquire);
            if cur & !LOCK != r.word || (is_locked(cur) && !skip_lock && !st.writes_record(r.rec)) {
                failure = Some(Conflict::at(ConflictCause::ReadValidation, r.table, r.key));
                break;
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
        let tid = next_tid(floor, epoch);
        fence(Ordering::Release);
        for w in st.writes.iter() {
            let r = rec(w.rec);
            match w.kind {
                WriteKind::Put | WriteKind::Insert => {
                    let v = &st.wbuf[w.off as usize..(w.off + w.len) as usize];
                    r.install(Some(v), tid);
                }
                WriteKind::Delete => r.install(None, tid | ABSENT),
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
