//! The interactive entry point (`Engine`, `Worker`, `Transaction`): "sequence at commit".
//!
//! **Not deterministic.** An interactive transaction has no position until it commits: `begin`
//! starts an optimistic transaction that reads the newest versions; `commit` takes the
//! committer lock (every transaction holding or waiting for it is already committing, none is
//! waiting on a user), takes the next `Seq`, validates its reads and scanned stripes against the
//! newest versions, and installs with version `Seq`, or returns
//! `TxError::Conflict(ReadValidation)` (or `PhantomValidation`). The order is the order in which
//! commits took the lock, so it depends on timing: this path exists for `Workload::load` and
//! `Workload::check`, the correctness kit and applications, not for deterministic execution.
//!
//! It is exclusive with deterministic runs (`Deterministic::execute_log`, `Docc::run`): creating
//! a worker during a run, or starting a run while a worker exists, is `Error::Misuse`.
//!
//! Backward validation at the commit point makes histories strictly serializable: a transaction
//! is serialized when it holds the committer lock, inside its own real-time interval.

use crate::engine::Docc;
use crate::exec::{Attempt, Exec, ExecState, validation_conflict};
use crate::layout::{Keep, Layout};
use crate::run::Recording;
use crossbeam_epoch::Guard;
use std::marker::PhantomData;
use txlab_core::protocol::history::{Outcome, Recorder};
use txlab_core::{CommitInfo, ConflictCause, Error, TableId, Transaction, TxOps, TxResult, Worker};

/// An interactive DOCC worker (module docs).
#[derive(Debug)]
pub struct DoccWorker<'e, L: Layout, Rec: Recorder> {
    engine: &'e Docc<L, Rec>,
    id: u32,
    handle: crossbeam_epoch::LocalHandle,
    st: ExecState<L::Record>,
    history: Recording,
    /// Objects handed to the epoch collector, paid back in extra pins before the next
    /// transaction (`crate::commit`, "Freeing").
    reclaim: crate::commit::Reclaim,
}

impl<'e, L: Layout, Rec: Recorder> DoccWorker<'e, L, Rec> {
    pub(crate) fn new(engine: &'e Docc<L, Rec>) -> Result<Self, Error> {
        engine.enter_interactive()?;
        let id = engine
            .next_worker
            .fetch_add(1, txlab_core::protocol::sync::Ordering::Relaxed);
        Ok(Self {
            engine,
            id,
            handle: crossbeam_epoch::default_collector().register(),
            st: ExecState::default(),
            history: Recording::new(id),
            reclaim: crate::commit::Reclaim::default(),
        })
    }
}

impl<L: Layout, Rec: Recorder> Drop for DoccWorker<'_, L, Rec> {
    fn drop(&mut self) {
        self.engine.leave_interactive();
    }
}

impl<'e, L: Layout, Rec: Recorder> Worker for DoccWorker<'e, L, Rec> {
    type Txn<'w>
        = DoccTxn<'w, 'e, L, Rec>
    where
        Self: 'w;

    fn begin(&mut self) -> DoccTxn<'_, 'e, L, Rec> {
        self.st.clear();
        self.reclaim.pay(&self.handle);
        let guard = self.handle.pin();
        let begin_ns = self.engine.now_ns();
        DoccTxn {
            w: self,
            guard,
            begin_ns,
            failed: None,
            done: false,
        }
    }

    fn id(&self) -> u32 {
        self.id
    }
}

/// An open interactive transaction. Dropping it aborts it.
#[derive(Debug)]
pub struct DoccTxn<'w, 'e, L: Layout, Rec: Recorder> {
    w: &'w mut DoccWorker<'e, L, Rec>,
    guard: Guard,
    begin_ns: u64,
    /// Why an operation failed, if one did (the abort's cause).
    failed: Option<ConflictCause>,
    done: bool,
}

impl<L: Layout, Rec: Recorder> DoccTxn<'_, '_, L, Rec> {
    fn ops(&mut self) -> Exec<'_, L, Rec> {
        Exec {
            tables: &self.w.engine.tables,
            st: &mut self.w.st,
            guard: &self.guard,
            bound: u64::MAX,
            attempt: Attempt::First { keep: false },
            read_only: None,
            retired_tags: &self.w.engine.retired_tags,
            _rec: PhantomData,
        }
    }

    /// Notes a conflict an operation returned, for the abort record.
    fn note<T>(&mut self, r: TxResult<T>) -> TxResult<T> {
        if let Err(e) = &r
            && let Some(c) = e.conflict()
        {
            self.failed = Some(c.cause);
        }
        r
    }

    fn finish(&mut self, outcome: Outcome, rank: Option<u64>) {
        self.done = true;
        let w = &mut *self.w;
        if Rec::ENABLED {
            let committed = outcome == Outcome::Committed;
            w.history
                .record(w.engine, &mut w.st, rank, self.begin_ns, outcome, committed);
        }
        w.st.clear();
    }

    fn aborted_outcome(&self) -> Outcome {
        self.failed.map_or(Outcome::UserAborted, Outcome::Aborted)
    }
}

impl<L: Layout, Rec: Recorder> TxOps for DoccTxn<'_, '_, L, Rec> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        let r = self.ops().read(table, key).map(|v| v.is_some());
        if !self.note(r)? {
            return Ok(None);
        }
        let st = &self.w.st;
        Ok(Some(match st.find_write(table, key) {
            Some(i) => st.write_value(i),
            None => &st.rbuf[..self.w.engine.tables.value_size(table)?],
        }))
    }

    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        let r = self.ops().write(table, key, value);
        self.note(r)
    }

    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        let r = self.ops().update(table, key, f);
        self.note(r)
    }

    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        let r = self.ops().insert(table, key, value);
        self.note(r)
    }

    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        let r = self.ops().delete(table, key);
        self.note(r)
    }

    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        let r = self.ops().scan(table, lo, hi, visit);
        self.note(r)
    }
}

impl<L: Layout, Rec: Recorder> Transaction for DoccTxn<'_, '_, L, Rec> {
    fn commit(mut self) -> TxResult<CommitInfo> {
        let engine = self.w.engine;
        let mut committer = engine.committer();
        if let Some(c) = validation_conflict::<L>(&self.w.st, &engine.tables, u64::MAX, &self.guard)
        {
            drop(committer);
            self.failed = Some(c.cause);
            self.finish(Outcome::Aborted(c.cause), None);
            return Err(c.into());
        }
        let rank = engine.take_ranks(1);
        let read_only = self.w.st.writes.is_empty();
        let mut epoch = 0;
        if !read_only {
            let seq = committer.next_interactive(|| engine.take_epochs(1))?;
            epoch = u64::from(seq.epoch());
            let w = &mut *self.w;
            let before = committer.gc.deferred();
            committer.install::<L>(
                &w.st,
                &engine.tables,
                seq.raw(),
                Keep::Below(&[]),
                &self.guard,
                Rec::ENABLED,
                &mut w.history.writes,
            )?;
            let tags = Rec::ENABLED.then_some(&engine.retired_tags);
            committer.retire::<L>(&engine.tables, u64::MAX, &self.guard, tags);
            self.w.reclaim.handed(before, committer.gc.deferred());
        }
        drop(committer);
        self.finish(Outcome::Committed, Some(rank));
        Ok(CommitInfo {
            epoch,
            acknowledged: true,
            read_only,
        })
    }

    fn abort(mut self) {
        let outcome = self.aborted_outcome();
        self.finish(outcome, None);
    }
}

impl<L: Layout, Rec: Recorder> Drop for DoccTxn<'_, '_, L, Rec> {
    fn drop(&mut self) {
        if !self.done {
            let outcome = self.aborted_outcome();
            self.finish(outcome, None);
        }
    }
}
