//! An MVTO transaction's execution phase. The timestamp is fixed at begin; a read finds the
//! newest committed version older than the timestamp, raises its read timestamp and enters the
//! read set; writes are buffered; scans on ordered tables also raise the stripes' scan timestamps
//! and record the stripes' versions. The commit protocol is in [`crate::commit`].

use crate::engine::MvtoWorker;
use crate::record::{MvtoRecord, Visible};
use crate::timestamp::LocalClock;
use crate::version::Version;
use crate::worker_state::{NodeEntry, ReadEntry, WorkerState, WriteKind};
use crossbeam_epoch::Guard;
use txlab_core::history::{
    Outcome, ReadEvent, Recorder, RetiredTags, ScanCoverage, TxnRecord, txn_id,
};
use txlab_core::storage::Index;
use txlab_core::sync::Ordering;
use txlab_core::{CommitInfo, Conflict, ConflictCause, TableId, Transaction, TxOps, TxResult};
use txlab_nwr::WriteOmission;

/// An open MVTO transaction. Dropping it aborts it.
#[derive(Debug)]
pub struct MvtoTxn<'w, 'e, Rec: Recorder, W: WriteOmission> {
    pub(crate) w: &'w mut MvtoWorker<'e, Rec, W>,
    pub(crate) guard: Guard,
    pub(crate) ts: u64,
    pub(crate) begin_ns: u64,
    pub(crate) done: bool,
}

#[inline]
pub(crate) fn version<'a>(p: *const Version) -> &'a Version {
    // SAFETY: read-set and write-set version pointers were obtained under the transaction's guard,
    // which stays pinned until the transaction ends and the sets are cleared (`worker_state`).
    unsafe { &*p }
}

#[inline]
pub(crate) fn record<'a>(p: *const MvtoRecord) -> &'a MvtoRecord {
    // SAFETY: as for `version`: records come from the index under the pinned guard.
    unsafe { &*p }
}

/// Reads `rec` at timestamp `ts`: waits (bounded) for a pending version, raises the read
/// timestamp of the visible version, adds it to the read set and returns it.
#[expect(
    clippy::too_many_arguments,
    reason = "split borrows of the transaction: called from inside the index's scan closure"
)]
#[inline]
fn observe<Rec: Recorder>(
    st: &mut WorkerState,
    clock: &mut LocalClock,
    guard: &Guard,
    rec: *const MvtoRecord,
    ts: u64,
    max_waits: u32,
    table: TableId,
    key: u64,
    retired_tags: &RetiredTags,
) -> TxResult<*const Version> {
    let r = record(rec);
    let mut backoff = txlab_core::sync::SpinWait::new();
    let mut waits = 0u32;
    loop {
        match r.visible(ts, Ordering::Acquire, guard) {
            Visible::Committed(v) => {
                v.rts.fetch_max(ts, Ordering::SeqCst);
                clock.observe(v.wts);
                st.reads.push(ReadEntry {
                    rec,
                    version: v,
                    table,
                    key,
                });
                if Rec::ENABLED {
                    // A fresh record's initial absent version stands for the key's last retired
                    // tombstone, if any (`crate::retire`, "Histories").
                    let version = if v.wts == 0 && v.tombstone {
                        retired_tags.fresh_version(table, key)
                    } else {
                        v.wts
                    };
                    st.h_reads.push(ReadEvent {
                        table,
                        key,
                        version,
                        present: !v.tombstone,
                    });
                }
                return Ok(v);
            }
            Visible::Pending(v) => {
                clock.observe(v.wts);
                waits += 1;
                if waits > max_waits {
                    st.failed = Some(ConflictCause::ReadBusy);
                    return Err(Conflict::at(ConflictCause::ReadBusy, table, key).into());
                }
                backoff.snooze();
            }
            Visible::Nothing => {
                if r.materialize_initial(ts, guard).is_err() {
                    return Err(crate::engine::unaddressable().into());
                }
            }
            Visible::Retired => {
                st.failed = Some(ConflictCause::RecordRetired);
                return Err(Conflict::at(ConflictCause::RecordRetired, table, key).into());
            }
        }
    }
}

/// MVTO+NWR only, when the worker's clock used up `epoch`'s counter range: a timestamp of a later
/// epoch than the global one would break the marks' encoding (`crate::head`), so the worker
/// leaves the epoch, waits until the global epoch moves on (advancing it if nobody else does) and
/// begins in the epoch it enters then, whose range has room.
#[cold]
#[inline(never)]
fn begin_in_a_later_epoch<Rec: Recorder, W: WriteOmission>(
    w: &mut MvtoWorker<'_, Rec, W>,
    mut epoch: u64,
    reserved: u64,
) -> u64 {
    loop {
        w.epoch.exit();
        w.engine.epochs.wait_past(epoch);
        epoch = w.epoch.enter();
        if let Some(ts) = w.clock.begin(
            &w.engine.clocks,
            epoch,
            w.engine.config.clock_sync_interval,
            reserved,
        ) {
            return ts;
        }
    }
}

impl<'w, 'e, Rec: Recorder, W: WriteOmission> MvtoTxn<'w, 'e, Rec, W> {
    pub(crate) fn begin(w: &'w mut MvtoWorker<'e, Rec, W>) -> Self {
        w.state.clear();
        w.state.seq += 1;
        let epoch = w.epoch.enter();
        // MVTO+NWR keeps the start of each epoch's timestamp range for omitted writes.
        let reserved = if W::ENABLED {
            crate::timestamp::NWR_RESERVED
        } else {
            0
        };
        let ts = match w.clock.begin(
            &w.engine.clocks,
            epoch,
            w.engine.config.clock_sync_interval,
            reserved,
        ) {
            Some(ts) => ts,
            None => begin_in_a_later_epoch(w, epoch, reserved),
        };
        let guard = w.handle.pin();
        if !w.retire.is_empty() {
            // Unlink a few old tombstones (crate::retire), under this transaction's pinned guard.
            let engine = w.engine;
            crate::retire::process(
                &mut w.retire,
                w.epoch.global(),
                engine.clocks.horizon(),
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
            ts,
            begin_ns,
            done: false,
        }
    }

    /// The transaction's timestamp (its position in the serial order).
    pub fn timestamp(&self) -> u64 {
        self.ts
    }

    /// Finds or creates (absent) the record of `(table, key)`.
    #[inline]
    fn locate(&mut self, table: TableId, key: u64) -> TxResult<*const MvtoRecord> {
        let engine = self.w.engine;
        let entry = engine.tables.get(table)?.get_or_insert(key, &self.guard)?;
        if let Some(b) = entry.bumped {
            self.w.state.own_bump(table, b);
        }
        Ok(entry.record as *const MvtoRecord)
    }

    #[inline]
    fn observe(
        &mut self,
        rec: *const MvtoRecord,
        table: TableId,
        key: u64,
    ) -> TxResult<*const Version> {
        let engine = self.w.engine;
        let w = &mut *self.w;
        observe::<Rec>(
            &mut w.state,
            &mut w.clock,
            &self.guard,
            rec,
            self.ts,
            engine.config.read_wait_rounds,
            table,
            key,
            &engine.retired_tags,
        )
    }

    /// A version of the read set, borrowed for as long as the transaction (hence its guard).
    #[inline]
    fn version_ref(&self, p: *const Version) -> &Version {
        version(p)
    }

    /// Ends the transaction's bookkeeping: clears the sets, leaves the epoch.
    pub(crate) fn finish(&mut self) {
        self.done = true;
        self.w.state.clear();
        self.w.clock.end();
        self.w.epoch.exit();
    }

    /// Ends an aborted transaction: records it, finishes.
    pub(crate) fn finish_abort(&mut self, outcome: Outcome) {
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
        self.finish();
    }

    fn outcome(&self) -> Outcome {
        self.w
            .state
            .failed
            .map_or(Outcome::UserAborted, Outcome::Aborted)
    }
}

impl<Rec: Recorder, W: WriteOmission> TxOps for MvtoTxn<'_, '_, Rec, W> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        self.w.engine.value_size(table)?;
        if let Some(i) = self.w.state.find_write(table, key) {
            return Ok(match self.w.state.writes[i].kind {
                WriteKind::Delete => None,
                _ => Some(self.w.state.write_value(i)),
            });
        }
        let rec = self.locate(table, key)?;
        let p = self.observe(rec, table, key)?;
        let v = self.version_ref(p);
        Ok((!v.tombstone).then_some(&v.value[..]))
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
            .push_write(rec, (table, key), WriteKind::Put, true, value);
        Ok(())
    }

    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        self.w.engine.value_size(table)?;
        if let Some(i) = self.w.state.find_write(table, key) {
            if self.w.state.writes[i].kind == WriteKind::Delete {
                return Ok(false);
            }
            f(self.w.state.write_value_mut(i));
            return Ok(true);
        }
        let rec = self.locate(table, key)?;
        let v = version(self.observe(rec, table, key)?);
        if v.tombstone {
            return Ok(false);
        }
        let st = &mut self.w.state;
        st.push_write(rec, (table, key), WriteKind::Put, false, &v.value);
        let i = st.writes.len() - 1;
        f(st.write_value_mut(i));
        Ok(true)
    }

    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        self.w.engine.check_value(table, value)?;
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
        // The observation "absent" enters the read set: commit fails if an insert lands between.
        let v = version(self.observe(rec, table, key)?);
        if !v.tombstone {
            return Ok(false);
        }
        self.w
            .state
            .push_write(rec, (table, key), WriteKind::Insert, false, value);
        Ok(true)
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.w.engine.value_size(table)?;
        if let Some(i) = self.w.state.find_write(table, key) {
            let st = &mut self.w.state;
            if st.writes[i].kind == WriteKind::Delete {
                return Ok(false);
            }
            st.writes[i].kind = WriteKind::Delete;
            return Ok(true);
        }
        let rec = self.locate(table, key)?;
        let v = version(self.observe(rec, table, key)?);
        if v.tombstone {
            return Ok(false);
        }
        self.w
            .state
            .push_write(rec, (table, key), WriteKind::Delete, false, &[]);
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
        engine.value_size(table)?;
        let index = engine.tables.get(table)?;
        let ts = self.ts;
        self.w.state.scanned = true;
        // Phantom protection, before the traversal: raise the stripes' scan timestamps (so an
        // older insert into the range aborts), then record their versions (so a newer record
        // appearing in the range aborts us), as in `crate::commit`.
        if let Some(stripes) = index.phantom_stripes() {
            let scan_rts = engine.stripe_rts[table.0 as usize].as_deref();
            let nodes = &mut self.w.state.nodes;
            stripes.for_range(lo, hi, |s| {
                if let Some(rts) = scan_rts {
                    rts[s as usize].fetch_max(ts, Ordering::SeqCst);
                }
                nodes.push(NodeEntry {
                    table,
                    stripe: s,
                    version: stripes.version(s),
                });
            });
        }
        let waits = engine.config.read_wait_rounds;
        let w = &mut *self.w;
        let (st, clock) = (&mut w.state, &mut w.clock);
        let guard = &self.guard;
        let mut coverage = ScanCoverage::new(table, lo, hi);
        index.scan(lo, hi, guard, &mut |key, rec| {
            let outcome = if let Some(i) = st.find_write(table, key) {
                Ok(match st.writes[i].kind {
                    WriteKind::Delete => true,
                    _ => visit(key, st.write_value(i)),
                })
            } else {
                observe::<Rec>(
                    st,
                    clock,
                    guard,
                    rec,
                    ts,
                    waits,
                    table,
                    key,
                    &engine.retired_tags,
                )
                .map(|v| {
                    let v = version(v);
                    v.tombstone || visit(key, &v.value)
                })
            };
            coverage.step(key, outcome)
        })?;
        // The predicate read: every key of the covered range not returned was absent at ts.
        coverage.finish::<Rec>(&mut st.h_scans)
    }
}

impl<Rec: Recorder, W: WriteOmission> Transaction for MvtoTxn<'_, '_, Rec, W> {
    fn commit(mut self) -> TxResult<CommitInfo> {
        crate::commit::commit(&mut self)
    }

    fn abort(mut self) {
        let outcome = self.outcome();
        self.finish_abort(outcome);
    }
}

impl<Rec: Recorder, W: WriteOmission> Drop for MvtoTxn<'_, '_, Rec, W> {
    fn drop(&mut self) {
        if !self.done {
            let outcome = self.outcome();
            self.finish_abort(outcome);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::MvtoTxn;
    use crate::timestamp::epoch_of;
    use crate::{MvtoConfig, MvtoNwr};
    use txlab_core::{AckMode, Engine, Schema, TableSpec};

    /// An MVTO+NWR worker whose clock used up the current epoch's counter range leaves the
    /// epoch, moves the (manual) global epoch on and begins in the next one, never with a
    /// timestamp of an epoch the global epoch has not reached (`crate::head`).
    #[test]
    fn an_nwr_worker_whose_clock_ran_out_begins_in_the_next_epoch() {
        let mut s = Schema::new();
        s.add(TableSpec::dense("t", 8, 4)).unwrap();
        let db = MvtoNwr::new_nwr(&s, MvtoConfig::manual().with_ack(AckMode::EpochStable)).unwrap();
        let mut w = db.worker().unwrap();
        let e = db.epochs().global();
        w.clock.exhaust(e);
        let tx = MvtoTxn::begin(&mut w);
        assert_eq!(epoch_of(tx.timestamp()), e + 1);
        assert_eq!(
            db.epochs().global(),
            e + 1,
            "the epoch moved on, not the clock alone"
        );
        drop(tx);
        let tx = MvtoTxn::begin(&mut w);
        assert_eq!(
            epoch_of(tx.timestamp()),
            e + 1,
            "room left in the new epoch"
        );
    }
}
