//! [`NoopEngine`] and [`NoopWorkload`]: an engine whose transactions do nothing and a workload of
//! empty programs, to measure the harness's own per-transaction cost.
//!
//! Run through [`crate::runner::run_workload`], their throughput is an upper bound on what the
//! harness can measure: every real protocol's figure includes this overhead. The CLI exposes
//! them as the hidden protocol and workload `noop`.
//!
//! The engine accepts any schema and stores nothing: reads see every key absent, writes and
//! inserts succeed and are forgotten, scans visit nothing.

use txlab_core::program::AccessSet;
use txlab_core::protocol::sync::{AtomicU32, Ordering};
use txlab_core::{CommitInfo, Engine, Error, Program, Schema, TableId, Transaction, TxOps};
use txlab_core::{TxResult, Worker};
use txlab_workload::{Generator, Workload};

/// An engine whose transactions do nothing (see the module docs).
#[derive(Debug, Default)]
pub struct NoopEngine {
    schema: Schema,
    next_worker: AtomicU32,
}

impl NoopEngine {
    /// A no-op engine over `schema`.
    pub fn new(schema: &Schema) -> Self {
        Self {
            schema: schema.clone(),
            next_worker: AtomicU32::new(0),
        }
    }
}

/// A worker of [`NoopEngine`].
#[derive(Debug)]
pub struct NoopWorker {
    id: u32,
}

/// A transaction of [`NoopEngine`].
#[derive(Debug)]
pub struct NoopTxn;

impl Engine for NoopEngine {
    type Worker<'e> = NoopWorker;

    fn name(&self) -> &'static str {
        "noop"
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn worker(&self) -> Result<NoopWorker, Error> {
        Ok(NoopWorker {
            id: self.next_worker.fetch_add(1, Ordering::Relaxed),
        })
    }

    fn load(&self, table: TableId, _key: u64, _value: &[u8]) -> Result<(), Error> {
        self.schema.table(table).map(|_| ())
    }
}

impl Worker for NoopWorker {
    type Txn<'w> = NoopTxn;

    #[inline]
    fn begin(&mut self) -> NoopTxn {
        NoopTxn
    }

    fn id(&self) -> u32 {
        self.id
    }
}

impl TxOps for NoopTxn {
    #[inline]
    fn read(&mut self, _table: TableId, _key: u64) -> TxResult<Option<&[u8]>> {
        Ok(None)
    }

    #[inline]
    fn write(&mut self, _table: TableId, _key: u64, _value: &[u8]) -> TxResult<()> {
        Ok(())
    }

    #[inline]
    fn update(&mut self, _: TableId, _: u64, _: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        Ok(false)
    }

    #[inline]
    fn insert(&mut self, _table: TableId, _key: u64, _value: &[u8]) -> TxResult<bool> {
        Ok(true)
    }

    #[inline]
    fn delete(&mut self, _table: TableId, _key: u64) -> TxResult<bool> {
        Ok(false)
    }

    fn scan(
        &mut self,
        _: TableId,
        _: u64,
        _: u64,
        _: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        Ok(())
    }
}

impl Transaction for NoopTxn {
    #[inline]
    fn commit(self) -> TxResult<CommitInfo> {
        Ok(CommitInfo {
            epoch: 0,
            acknowledged: true,
            read_only: true,
        })
    }

    #[inline]
    fn abort(self) {}
}

/// A workload of empty programs over an empty schema.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoopWorkload;

/// The empty program.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoopProgram;

impl Program for NoopProgram {
    type Output = ();

    #[inline]
    fn run<T: TxOps + ?Sized>(&self, _tx: &mut T) -> TxResult<()> {
        Ok(())
    }

    fn declare(&self, _out: &mut AccessSet) {}

    fn kind(&self) -> &'static str {
        "noop"
    }
}

/// The generator of [`NoopWorkload`].
#[derive(Debug, Default)]
pub struct NoopGenerator {
    program: NoopProgram,
}

impl Generator for NoopGenerator {
    type Program = NoopProgram;

    #[inline]
    fn next(&mut self) -> &NoopProgram {
        &self.program
    }
}

impl Workload for NoopWorkload {
    type Program = NoopProgram;
    type Generator = NoopGenerator;

    fn name(&self) -> String {
        "noop".into()
    }

    fn schema(&self) -> Schema {
        Schema::new()
    }

    fn load<E: Engine>(&self, _engine: &E) -> Result<(), Error> {
        Ok(())
    }

    fn generator(&self, _thread: usize, _seed: u64) -> NoopGenerator {
        NoopGenerator::default()
    }

    fn parameters(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}
