//! A TicToc transaction's execution phase (Yu et al., SIGMOD 2016, Algorithm 1): reads copy the
//! value together with the record's timestamp word (`wts`, `rts`) under the seqlock protocol and
//! enter the read set; writes are buffered in the write set; scans also record the versions of
//! their phantom stripes (`crate::stripe_clock`).
//! Nothing shared is written before commit except the absent records that inserts and point reads
//! of missing keys publish in the index (insert-if-absent), exactly as in Silo.
//! The commit protocol (Algorithms 2 and 3) is in [`crate::commit`].

use crate::engine::TicTocWorker;
use crate::nwr_hook::WriteOmission;
use crate::record::TicTocRecord;
use crate::word::is_absent;
use crate::worker_state::WriteKind;
use crossbeam_epoch::Guard;
use txlab_core::history::{Outcome, Recorder, ScanCoverage, TxnRecord, txn_id};
use txlab_core::storage::Index;
use txlab_core::{CommitInfo, TableId, Transaction, TxOps, TxResult};

/// An open TicToc transaction. Dropping it aborts it.
#[derive(Debug)]
pub struct TicTocTxn<'w, 'e, Rec: Recorder, Omit: WriteOmission> {
    pub(crate) w: &'w mut TicTocWorker<'e, Rec, Omit>,
    pub(crate) guard: Guard,
    pub(crate) begin_ns: u64,
    pub(crate) done: bool,
}

impl<'w, 'e, Rec: Recorder, Omit: WriteOmission> TicTocTxn<'w, 'e, Rec, Omit> {
    pub(crate) fn begin(w: &'w mut TicTocWorker<'e, Rec, Omit>) -> Self {
        w.state.clear();
        w.state.seq += 1;
        w.epoch.enter();
        let guard = w.handle.pin();
        if !w.retire.is_empty() {
            // Unlink a few old tombstones (crate::retire), under this transaction's pinned guard.
            let engine = w.engine;
            crate::retire::process(
                &mut w.retire,
                w.epoch.global(),
                |t| engine.table_retire(t),
                &guard,
                Rec::ENABLED.then_some(&engine.retired_tags),
                engine.config.retire_raises_floor(),
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
    /// an absent record so that a later insert of the key changes a `wts` the reader validates.
    #[inline]
    fn locate(&mut self, table: TableId, key: u64) -> TxResult<*const TicTocRecord> {
        let engine = self.w.engine;
        // Linking a new absent record is not a write: phantom protection counts first writes at
        // commit (`crate::stripe_clock`), so the index's stripe bump is not used.
        let entry = engine.tables.get(table)?.get_or_insert(key, &self.guard)?;
        Ok(entry.record as *const TicTocRecord)
    }

    #[inline]
    fn observe(
        &mut self,
        rec: *const TicTocRecord,
        vs: usize,
        table: TableId,
        key: u64,
    ) -> TxResult<u64> {
        let engine = self.w.engine;
        let waits = engine.config.read_wait_rounds;
        self.w.state.observe::<Rec>(
            rec,
            vs,
            table,
            key,
            waits,
            Omit::ENABLED,
            || engine.retire_floor(table, key),
            &engine.retired_tags,
        )
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

impl<Rec: Recorder, Omit: WriteOmission> TxOps for TicTocTxn<'_, '_, Rec, Omit> {
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
        let rec = self.locate(table, key)?;
        self.w
            .state
            .push_write(rec, table, key, WriteKind::Put, value);
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
        // Phantom protection: the stripes' versions are read before the traversal
        // (`crate::stripe_clock`: a first write announced before this load is visible to the
        // traversal; one announced after it fails the scan's validation or commits above it).
        if let Some((stripes, clocks)) = engine.stripes(table) {
            let stripe_set = &mut self.w.state.stripes;
            let ts_floor = &mut self.w.state.ts_floor;
            stripes.for_range(lo, hi, |s| {
                stripe_set.push(crate::worker_state::StripeEntry {
                    table,
                    stripe: s,
                    version: clocks.version(s),
                });
                // After the version (`crate::retire`: a scan that misses a record unlinked after
                // this load fails validation; one that loaded the announce sees the floor).
                *ts_floor = (*ts_floor).max(engine.stripe_retire_floor(table, s));
            });
        }
        let waits = engine.config.read_wait_rounds;
        let st = &mut self.w.state;
        st.scanned = true;
        // Where the scan really stopped (the history's predicate read covers only that far).
        let mut coverage = ScanCoverage::new(table, lo, hi);
        index.scan(lo, hi, &self.guard, &mut |key, rec| {
            let outcome = if let Some(i) = st.find_write(table, key) {
                Ok(match st.writes[i].kind {
                    WriteKind::Delete => true,
                    _ => visit(key, st.write_value(i)),
                })
            } else {
                let rec = rec as *const TicTocRecord;
                st.observe::<Rec>(
                    rec,
                    vs,
                    table,
                    key,
                    waits,
                    Omit::ENABLED,
                    || engine.retire_floor(table, key),
                    &engine.retired_tags,
                )
                .map(|word| is_absent(word) || visit(key, &st.rbuf[..vs]))
            };
            coverage.step(key, outcome)
        })?;
        coverage.finish::<Rec>(&mut st.h_scans)
    }
}

impl<Rec: Recorder, Omit: WriteOmission> Transaction for TicTocTxn<'_, '_, Rec, Omit> {
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

impl<Rec: Recorder, Omit: WriteOmission> Drop for TicTocTxn<'_, '_, Rec, Omit> {
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
