//! An open transaction and the operations of `TxOps`, written once for every protocol.
//!
//! Execution (Silo §4.3, TicToc's Algorithm 1, MVTO's reads): a read of a key the transaction
//! wrote returns its own buffered value; otherwise the record is located (an absent one is linked
//! for a missing key, so that a later insert changes a version the reader validates) and observed
//! by the protocol ([`Protocol::observe`]), which enters the read set. Writes, inserts and deletes
//! are buffered in the write set, one entry per key ([`crate::write_kind`] for how later
//! operations on a key change its entry); inserts and deletes observe the record first, so their
//! view of its presence is validated like any read. Scans run the protocol's phantom protection
//! ([`Protocol::protect_scan`]) before the traversal, then read every record in range like a point
//! read, overlaid with the transaction's own writes.
//!
//! Nothing shared is written before commit except the absent records linked for missing keys
//! and, for protocols whose reads leave a trace (MVTO's read timestamps), what their reads write.

use crate::protocol::{Observation, Protocol};
use crate::sets::ReadEntry;
use crate::worker::{FLUSHES_AFTER_WRITE, Worker};
use crate::write_kind::WriteKind;
use crossbeam_epoch::Guard;
use txlab_core::protocol::history::{
    Outcome, ReadEvent, Recorder, ScanCoverage, TxnRecord, txn_id,
};
use txlab_core::protocol::storage::Index;
use txlab_core::{
    CommitInfo, Conflict, ConflictCause, TableId, Transaction, TxError, TxOps, TxResult,
};

/// An open transaction of protocol `P` (module docs). Dropping it aborts it.
#[derive(Debug)]
pub struct Txn<'w, 'e, P: Protocol> {
    /// The worker running it.
    pub w: &'w mut Worker<'e, P>,
    /// The crossbeam-epoch guard every record and version pointer of its sets was obtained
    /// under, pinned until it ends.
    pub guard: Guard,
    /// When it began (only measured when recording).
    pub begin_ns: u64,
    done: bool,
}

impl<'w, 'e, P: Protocol> Txn<'w, 'e, P> {
    /// Begins a transaction on `w`: clears the sets, lets the protocol begin (enter the epoch),
    /// pins the guard (on top of the worker's anchor, `crate::worker`), and unlinks a few old
    /// tombstones under it.
    pub(crate) fn begin(w: &'w mut Worker<'e, P>) -> Self {
        w.sets.clear();
        w.sets.seq += 1;
        P::begin(w);
        let guard = w.pin();
        if !w.retire.is_empty() {
            w.owed_flushes = FLUSHES_AFTER_WRITE;
            retire_some(w, &guard);
        }
        let begin_ns = if <P::Recorder as Recorder>::ENABLED {
            w.engine.shell().recorder.now_ns()
        } else {
            0
        };
        Self {
            w,
            guard,
            begin_ns,
            done: false,
        }
    }

    /// The engine.
    #[inline]
    pub fn engine(&self) -> &'e P {
        self.w.engine
    }

    /// Ends the transaction: records it (when recording) with `outcome`, clears the sets, lets
    /// the protocol end it, and leaves the epoch. Every commit protocol ends with this.
    pub fn finish(&mut self, outcome: Outcome) {
        self.done = true;
        let shell = self.w.engine.shell();
        if !self.w.sets.writes.is_empty() {
            self.w.owed_flushes = FLUSHES_AFTER_WRITE;
        }
        let st = &mut self.w.sets;
        if <P::Recorder as Recorder>::ENABLED {
            let record = TxnRecord {
                id: txn_id(st.id, st.seq),
                reads: std::mem::take(&mut st.h_reads),
                writes: std::mem::take(&mut st.h_writes),
                scans: std::mem::take(&mut st.h_scans),
                outcome,
                begin_ns: self.begin_ns,
                end_ns: shell.recorder.now_ns(),
            };
            shell.recorder.record(record);
        }
        st.clear();
        P::end(self.w);
        self.w.epoch.exit();
    }

    /// Ends a committed transaction ([`Txn::finish`]) and describes the commit: of `epoch`,
    /// acknowledged now unless group commit waits for the epoch.
    #[inline]
    pub fn committed(&mut self, epoch: u64, read_only: bool) -> CommitInfo {
        self.finish(Outcome::Committed);
        CommitInfo {
            epoch,
            acknowledged: self.w.engine.shell().acks_at_commit(),
            read_only,
        }
    }

    /// Ends the transaction aborted by `conflict` and returns the error its commit reports.
    pub fn abort_with(&mut self, conflict: Conflict) -> TxError {
        self.w.sets.failed = Some(conflict.cause);
        self.finish(Outcome::Aborted(conflict.cause));
        conflict.into()
    }

    /// How an abort is recorded: with the conflict that failed the transaction during execution,
    /// if one did, as the user's otherwise.
    fn abort_outcome(&self) -> Outcome {
        self.w
            .sets
            .failed
            .map_or(Outcome::UserAborted, Outcome::Aborted)
    }

    /// Finds `(table, key)`'s record, linking an absent one if the key has none; also returns
    /// whether `TxOps::write` must read it ([`Protocol::linked`]).
    #[inline]
    fn locate(&mut self, table: TableId, key: u64) -> TxResult<(*const P::Record, bool)> {
        let engine = self.w.engine;
        let entry = engine
            .shell()
            .tables
            .get(table)?
            .get_or_insert(key, &self.guard)?;
        let must_read = entry.bumped.is_some_and(|b| P::linked(self.w, table, b));
        Ok((entry.record as *const P::Record, must_read))
    }

    /// Observes `rec` into the read set ([`observe`]).
    #[inline]
    fn observe(
        &mut self,
        rec: *const P::Record,
        table: TableId,
        key: u64,
        vs: usize,
    ) -> TxResult<Observation<P::Seen>> {
        // SAFETY: `rec` came from the table's index under `self.guard`, which stays pinned until
        // the transaction ends; records are not freed while it is pinned (storage invariant 1).
        let r = unsafe { &*rec };
        observe(self.w, &self.guard, r, table, key, vs)
    }

    /// The value a present observation saw.
    #[inline]
    fn seen_value(&self, o: &Observation<P::Seen>, vs: usize) -> &[u8] {
        P::value(&self.w.sets.rbuf, &o.seen, vs)
    }
}

/// Reads `rec` with the protocol's [`Protocol::observe`], then adds the read entry and the
/// history event, or records the conflict that refused the read.
#[inline]
fn observe<P: Protocol>(
    w: &mut Worker<'_, P>,
    guard: &Guard,
    rec: &P::Record,
    table: TableId,
    key: u64,
    vs: usize,
) -> TxResult<Observation<P::Seen>> {
    if w.sets.rbuf.len() < vs {
        w.sets.rbuf.resize(vs, 0);
    }
    match P::observe(w, guard, rec, (table, key), vs) {
        Ok(o) => {
            w.sets.reads.push(ReadEntry {
                rec,
                seen: o.seen,
                table,
                key,
            });
            if <P::Recorder as Recorder>::ENABLED {
                // A fresh incarnation's absent state is the state after the key's last retired
                // delete (`txlab_core::protocol::history::RetiredTags`).
                let version = if o.tag == 0 && !o.present {
                    w.engine.shell().retired_tags.fresh_version(table, key)
                } else {
                    o.tag
                };
                w.sets.h_reads.push(ReadEvent {
                    table,
                    key,
                    version,
                    present: o.present,
                });
            }
            Ok(o)
        }
        Err(e) => {
            if let TxError::Conflict(c) = &e {
                w.sets.failed = Some(c.cause);
            }
            Err(e)
        }
    }
}

/// A read refused with `cause` (for [`Protocol::observe`]).
#[inline]
pub fn refused(cause: ConflictCause, table: TableId, key: u64) -> TxError {
    Conflict::at(cause, table, key).into()
}

/// Hands a few ready entries of the worker's retire queue to the protocol, under `guard`.
#[cold]
fn retire_some<P: Protocol>(w: &mut Worker<'_, P>, guard: &Guard) {
    let engine = w.engine;
    let history = <P::Recorder as Recorder>::ENABLED.then_some(&engine.shell().retired_tags);
    w.retire.process(
        w.epoch.global(),
        engine.retire_grace(),
        |e| e.epoch,
        |e| engine.retire(e, guard, history),
    );
}

impl<P: Protocol> TxOps for Txn<'_, '_, P> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        let vs = self.w.engine.shell().value_size(table)?;
        if let Some(i) = self.w.sets.find_write(table, key) {
            let st = &self.w.sets;
            return Ok((!st.writes[i].kind.is_delete()).then(|| st.write_value(i)));
        }
        let (rec, _) = self.locate(table, key)?;
        let o = self.observe(rec, table, key, vs)?;
        Ok(o.present.then(|| self.seen_value(&o, vs)))
    }

    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        let vs = self.w.engine.shell().check_value(table, value)?;
        if let Some(i) = self.w.sets.find_write(table, key) {
            let st = &mut self.w.sets;
            st.set_write_value(i, value);
            if st.writes[i].kind.is_delete() {
                st.writes[i].kind = WriteKind::Put;
            }
            return Ok(());
        }
        let (rec, must_read) = self.locate(table, key)?;
        if must_read {
            // A scan of ours saw this key missing and we just linked its record (`Protocol::
            // linked`): read it too, so validation sees another transaction's write of it.
            if self.observe(rec, table, key, vs)?.present {
                let cause = ConflictCause::PhantomValidation;
                self.w.sets.failed = Some(cause);
                return Err(refused(cause, table, key));
            }
        }
        P::buffered_blind_write(rec);
        self.w
            .sets
            .push_write(rec, (table, key), WriteKind::BlindPut, value);
        Ok(())
    }

    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        let vs = self.w.engine.shell().value_size(table)?;
        if let Some(i) = self.w.sets.find_write(table, key) {
            if self.w.sets.writes[i].kind.is_delete() {
                return Ok(false);
            }
            f(self.w.sets.write_value_mut(i));
            return Ok(true);
        }
        let (rec, _) = self.locate(table, key)?;
        let o = self.observe(rec, table, key, vs)?;
        if !o.present {
            return Ok(false);
        }
        // The new value starts as a copy of the one read.
        let st = &mut self.w.sets;
        let off = st.wbuf.len();
        st.wbuf.extend_from_slice(P::value(&st.rbuf, &o.seen, vs));
        st.push_entry(rec, (table, key), WriteKind::Put, off, vs);
        f(&mut st.wbuf[off..off + vs]);
        Ok(true)
    }

    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        let vs = self.w.engine.shell().check_value(table, value)?;
        if let Some(i) = self.w.sets.find_write(table, key) {
            let st = &mut self.w.sets;
            if !st.writes[i].kind.is_delete() {
                return Ok(false);
            }
            st.set_write_value(i, value);
            st.writes[i].kind = WriteKind::Put;
            return Ok(true);
        }
        let (rec, _) = self.locate(table, key)?;
        // The observation "absent" enters the read set: commit fails if anyone inserts first.
        if self.observe(rec, table, key, vs)?.present {
            return Ok(false);
        }
        self.w
            .sets
            .push_write(rec, (table, key), WriteKind::Insert, value);
        Ok(true)
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        let vs = self.w.engine.shell().value_size(table)?;
        if let Some(i) = self.w.sets.find_write(table, key) {
            let st = &mut self.w.sets;
            if st.writes[i].kind.is_delete() {
                return Ok(false);
            }
            st.writes[i].kind = WriteKind::Delete;
            return Ok(true);
        }
        let (rec, _) = self.locate(table, key)?;
        if !self.observe(rec, table, key, vs)?.present {
            return Ok(false);
        }
        self.w
            .sets
            .push_write(rec, (table, key), WriteKind::Delete, &[]);
        Ok(true)
    }

    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        let engine = self.w.engine;
        let vs = engine.shell().value_size(table)?;
        let index = engine.shell().tables.get(table)?;
        P::protect_scan(self.w, index, table, lo, hi);
        let w = &mut *self.w;
        w.sets.scanned = true;
        if w.sets.rbuf.len() < vs {
            w.sets.rbuf.resize(vs, 0);
        }
        let guard = &self.guard;
        // Where the scan really stopped (the history's predicate read covers only that far).
        let mut coverage = ScanCoverage::new(table, lo, hi);
        index.scan(lo, hi, guard, &mut |key, rec| {
            let outcome = match w.sets.find_write(table, key) {
                Some(i) => {
                    Ok(w.sets.writes[i].kind.is_delete() || visit(key, w.sets.write_value(i)))
                }
                None => observe(w, guard, rec, table, key, vs)
                    .map(|o| !o.present || visit(key, P::value(&w.sets.rbuf, &o.seen, vs))),
            };
            coverage.step(key, outcome)
        })?;
        coverage.finish::<P::Recorder>(&mut w.sets.h_scans)
    }
}

impl<P: Protocol> Transaction for Txn<'_, '_, P> {
    fn commit(mut self) -> TxResult<CommitInfo> {
        P::commit(&mut self)
    }

    fn abort(mut self) {
        let outcome = self.abort_outcome();
        self.finish(outcome);
    }
}

impl<P: Protocol> Drop for Txn<'_, '_, P> {
    fn drop(&mut self) {
        if !self.done {
            let outcome = self.abort_outcome();
            self.finish(outcome);
        }
    }
}
