//! A Silo transaction's execution phase: reads copy values under the seqlock protocol and enter
//! the read set; writes are buffered in the write set; scans also record phantom stripes.
//! The commit protocol is in [`crate::commit`].

use crate::engine::SiloWorker;
use crate::record::SiloRecord;
use crate::tid::is_absent;
use crate::worker_state::WriteKind;
use crossbeam_epoch::Guard;
use txlab_core::history::{Outcome, Recorder, TxnRecord, txn_id};
use txlab_core::storage::Index;
use txlab_core::{CommitInfo, Conflict, ConflictCause, TableId, Transaction, TxOps, TxResult};
use txlab_nwr::{NoNwr, WriteOmission};

/// An open Silo transaction. Dropping it aborts it.
#[derive(Debug)]
pub struct SiloTxn<'w, 'e, Rec: Recorder, W: WriteOmission = NoNwr> {
    pub(crate) w: &'w mut SiloWorker<'e, Rec, W>,
    pub(crate) guard: Guard,
    pub(crate) begin_ns: u64,
    pub(crate) done: bool,
}

impl<'w, 'e, Rec: Recorder, W: WriteOmission> SiloTxn<'w, 'e, Rec, W> {
    pub(crate) fn begin(w: &'w mut SiloWorker<'e, Rec, W>) -> Self {
        w.state.clear();
        w.state.seq += 1;
        w.epoch.enter();
        let guard = w.handle.pin();
        if !w.retire.is_empty() {
            // Unlink a few old tombstones (crate::retire), under this transaction's pinned guard.
            let history = Rec::ENABLED.then_some(&w.engine.retired_tags);
            crate::retire::process(
                &w.engine.tables,
                &w.engine.pivots,
                &mut w.retire,
                w.epoch.global(),
                w.engine.config.retire_grace(),
                &guard,
                history,
            );
        }
        let begin_ns = if Rec::ENABLED {
            w.engine.recorder.now_ns()
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

    /// Finds or creates (absent) the record of `(table, key)`. Point reads of missing keys create
    /// an absent record so that a later insert of the key changes a TID the reader validates.
    #[inline]
    fn locate(&mut self, table: TableId, key: u64) -> TxResult<*const SiloRecord> {
        self.locate_noting_scan_miss(table, key).map(|(rec, _)| rec)
    }

    /// [`Self::locate`], also telling whether we created the record inside a stripe one of our
    /// scans covered (that scan saw the key missing, and our own bump of the stripe no longer
    /// protects that observation).
    #[inline]
    fn locate_noting_scan_miss(
        &mut self,
        table: TableId,
        key: u64,
    ) -> TxResult<(*const SiloRecord, bool)> {
        let engine = self.w.engine;
        let entry = engine.tables.get(table)?.get_or_insert(key, &self.guard)?;
        let scan_miss = entry
            .bumped
            .is_some_and(|b| self.w.state.own_bump(table, b));
        Ok((entry.record as *const SiloRecord, scan_miss))
    }

    #[inline]
    fn observe(
        &mut self,
        rec: *const SiloRecord,
        vs: usize,
        table: TableId,
        key: u64,
    ) -> TxResult<u64> {
        let engine = self.w.engine;
        let waits = engine.config.read_wait_rounds;
        self.w
            .state
            .observe::<Rec>(rec, vs, table, key, waits, &engine.retired_tags)
    }

    /// Ends an aborted transaction: records it, leaves the epoch.
    pub(crate) fn finish_abort(&mut self, outcome: Outcome) {
        self.done = true;
        if Rec::ENABLED {
            let st = &mut self.w.state;
            let rec = TxnRecord {
                id: txn_id(st.id, st.seq),
                reads: std::mem::take(&mut st.h_reads),
                writes: Vec::new(),
                scans: std::mem::take(&mut st.h_scans),
                outcome,
                begin_ns: self.begin_ns,
                end_ns: self.w.engine.recorder.now_ns(),
            };
            self.w.engine.recorder.record(rec);
        }
        self.w.state.clear();
        self.w.epoch.exit();
    }
}

impl<Rec: Recorder, W: WriteOmission> TxOps for SiloTxn<'_, '_, Rec, W> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        let vs = self.w.engine.value_size(table)?;
        if let Some(i) = self.w.state.find_write(table, key) {
            return Ok(match self.w.state.writes[i].kind {
                WriteKind::Delete => None,
                _ => Some(self.w.state.write_value(i)),
            });
        }
        let rec = self.locate(table, key)?;
        let word = self.observe(rec, vs, table, key)?;
        Ok(if is_absent(word) {
            None
        } else {
            Some(&self.w.state.rbuf[..vs])
        })
    }

    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        self.w.engine.check_value(table, value)?;
        if let Some(i) = self.w.state.find_write(table, key) {
            let st = &mut self.w.state;
            st.set_write_value(i, value);
            if st.writes[i].kind == WriteKind::Delete {
                st.writes[i].kind = WriteKind::Put;
            }
            return Ok(());
        }
        let (rec, scan_miss) = self.locate_noting_scan_miss(table, key)?;
        if scan_miss {
            // A scan of ours saw this key missing and we just created its record, moving our
            // stripe version past our own bump. Another transaction's write of the record bumps
            // no stripe, so read the record too: validation then sees such a write (without it,
            // both commit and our write lands last: `us -rw-> them -ww-> us`). Every other
            // operation that creates a record reads it anyway.
            let vs = self.w.engine.value_size(table)?;
            let word = self.observe(rec, vs, table, key)?;
            if !is_absent(word) {
                let cause = ConflictCause::PhantomValidation;
                self.w.state.failed = Some(cause);
                return Err(Conflict::at(cause, table, key).into());
            }
        }
        self.w
            .state
            .push_write(rec, table, key, WriteKind::BlindPut, value);
        Ok(())
    }

    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        let vs = self.w.engine.value_size(table)?;
        if let Some(i) = self.w.state.find_write(table, key) {
            if self.w.state.writes[i].kind == WriteKind::Delete {
                return Ok(false);
            }
            f(self.w.state.write_value_mut(i));
            return Ok(true);
        }
        let rec = self.locate(table, key)?;
        let word = self.observe(rec, vs, table, key)?;
        if is_absent(word) {
            return Ok(false);
        }
        let st = &mut self.w.state;
        let off = st.wbuf.len();
        st.wbuf.extend_from_slice(&st.rbuf[..vs]);
        f(&mut st.wbuf[off..off + vs]);
        st.writes.push(crate::worker_state::WriteEntry {
            rec,
            table,
            key,
            kind: WriteKind::Put,
            off: off as u32,
            len: vs as u32,
            locked_word: 0,
            read: false,
        });
        Ok(true)
    }

    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        let vs = self.w.engine.check_value(table, value)?;
        if let Some(i) = self.w.state.find_write(table, key) {
            let st = &mut self.w.state;
            if st.writes[i].kind != WriteKind::Delete {
                return Ok(false);
            }
            st.set_write_value(i, value);
            st.writes[i].kind = WriteKind::Put;
            return Ok(true);
        }
        let rec = self.locate(table, key)?;
        // The observation "absent" enters the read set: commit fails if anyone inserts first.
        let word = self.observe(rec, vs, table, key)?;
        if !is_absent(word) {
            return Ok(false);
        }
        self.w
            .state
            .push_write(rec, table, key, WriteKind::Insert, value);
        Ok(true)
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        let vs = self.w.engine.value_size(table)?;
        if let Some(i) = self.w.state.find_write(table, key) {
            let st = &mut self.w.state;
            if st.writes[i].kind == WriteKind::Delete {
                return Ok(false);
            }
            st.writes[i].kind = WriteKind::Delete;
            return Ok(true);
        }
        let rec = self.locate(table, key)?;
        let word = self.observe(rec, vs, table, key)?;
        if is_absent(word) {
            return Ok(false);
        }
        self.w
            .state
            .push_write(rec, table, key, WriteKind::Delete, &[]);
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
        let vs = engine.value_size(table)?;
        let index = engine.tables.get(table)?;
        // Phantom protection: stripe versions are read before the traversal (storage invariant 4).
        if let Some(stripes) = index.phantom_stripes() {
            let nodes = &mut self.w.state.nodes;
            stripes.for_range(lo, hi, |s| {
                nodes.push(crate::worker_state::NodeEntry {
                    table,
                    stripe: s,
                    version: stripes.version(s),
                })
            });
        }
        let waits = engine.config.read_wait_rounds;
        let st = &mut self.w.state;
        st.scanned = true;
        let mut coverage = txlab_core::history::ScanCoverage::new(table, lo, hi);
        index.scan(lo, hi, &self.guard, &mut |key, rec| {
            let outcome = if let Some(i) = st.find_write(table, key) {
                Ok(match st.writes[i].kind {
                    WriteKind::Delete => true,
                    _ => visit(key, st.write_value(i)),
                })
            } else {
                let rec = rec as *const SiloRecord;
                st.observe::<Rec>(rec, vs, table, key, waits, &engine.retired_tags)
                    .map(|word| is_absent(word) || visit(key, &st.rbuf[..vs]))
            };
            coverage.step(key, outcome)
        })?;
        coverage.finish::<Rec>(&mut st.h_scans)
    }
}

impl<Rec: Recorder, W: WriteOmission> Transaction for SiloTxn<'_, '_, Rec, W> {
    fn commit(mut self) -> TxResult<CommitInfo> {
        crate::commit::commit(&mut self)
    }

    fn abort(mut self) {
        let outcome = self
            .w
            .state
            .failed
            .map_or(Outcome::UserAborted, Outcome::Aborted);
        self.finish_abort(outcome);
    }
}

impl<Rec: Recorder, W: WriteOmission> Drop for SiloTxn<'_, '_, Rec, W> {
    fn drop(&mut self) {
        if !self.done {
            let outcome = self
                .w
                .state
                .failed
                .map_or(Outcome::UserAborted, Outcome::Aborted);
            self.finish_abort(outcome);
        }
    }
}
