//! The interactive transaction model: engine → per-thread worker → transaction.
//!
//! ```text
//! let engine = Silo::builder().config(config).build(&schema)?; // shared by all threads
//! let mut worker = engine.worker()?; // one per thread; owns read/write-set buffers
//! let mut tx = worker.begin();       // borrows the worker mutably
//! tx.read(table, key)?; tx.write(table, key, v)?;
//! tx.commit()?;                      // consumes the transaction
//! ```
//!
//! - A [`Worker`] owns every buffer a transaction needs and reuses them, so a warmed-up worker
//!   does not allocate on the commit path.
//! - [`Transaction::commit`] and [`Transaction::abort`] take `self`: a finished transaction cannot
//!   be used again (ownership as typestate). Dropping an unfinished transaction aborts it.
//! - Workers are not tied to threads: one thread may hold several workers and drive one open
//!   transaction on each, step by step (schedule replay in tests).
//! - On [`TxError::Conflict`] the transaction is already aborted; the caller may begin again.
//!
//! [`TxError::Conflict`]: crate::error::TxError::Conflict

use crate::error::{Error, TxResult};
use crate::fixed_value::FixedValue;
use crate::table::{Schema, TableId};

/// Operations a transaction program may perform. Workloads are written once against this trait.
///
/// Keys are `u64`. Values have the table's fixed size.
pub trait TxOps {
    /// Reads a key; `None` if it is absent. The slice is the transaction's private copy.
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>>;

    /// Reads a key the program intends to write (locking protocols take a write lock here;
    /// optimistic ones treat it as [`read`](Self::read)).
    fn read_for_update(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        self.read(table, key)
    }

    /// Blind write: sets the key's value without reading it (an upsert: an absent key is created).
    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()>;

    /// Read-modify-write: calls `f` on a copy of the current value and writes the result.
    /// Returns `false` (and writes nothing) if the key is absent.
    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool>;

    /// Inserts a key that must be absent. Returns `false` if it is present (the transaction
    /// observed it present; that observation is validated at commit like a read).
    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool>;

    /// Deletes a key. Returns `false` if it is absent (validated at commit like a read).
    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool>;

    /// Visits the present keys in `lo..=hi` in ascending order, with their values, until `visit`
    /// returns `false`. Only on ordered tables. Sees the transaction's own writes.
    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()>;
}

/// What a successful commit reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommitInfo {
    /// The epoch the transaction committed in (0 for protocols without epochs).
    pub epoch: u64,
    /// Whether the commit has already been acknowledged (see [`AckMode`]). If `false`, the
    /// caller acknowledges it once [`Engine::stable_epoch`] reaches `epoch`.
    pub acknowledged: bool,
    /// Whether the transaction wrote nothing.
    pub read_only: bool,
}

/// When a committed transaction is acknowledged to its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AckMode {
    /// At commit: lowest latency; what latency-focused runs use.
    AtCommit,
    /// Silo's group commit: once the transaction's epoch is stable (every transaction of that
    /// epoch has finished committing). With logging this is when the epoch is durable.
    #[default]
    EpochStable,
}

/// A database running one concurrency-control protocol.
pub trait Engine: Send + Sync {
    /// A per-thread worker.
    type Worker<'e>: Worker
    where
        Self: 'e;

    /// The protocol's short, stable name (`silo`, `tictoc`, ...).
    fn name(&self) -> &'static str;

    /// The tables.
    fn schema(&self) -> &Schema;

    /// A new worker. Workers may be created on any thread and used on the thread that made them.
    fn worker(&self) -> Result<Self::Worker<'_>, Error>;

    /// Non-transactional bulk load, before any transaction runs: sets `key` present with `value`.
    fn load(&self, table: TableId, key: u64, value: &[u8]) -> Result<(), Error>;

    /// [`load`](Self::load) of a typed value ([`FixedValue`]).
    fn load_as<T: FixedValue>(&self, table: TableId, key: u64, value: &T) -> Result<(), Error> {
        self.load(table, key, value.to_bytes().as_ref())
    }

    /// The largest epoch whose transactions are all acknowledged (`u64::MAX` without epochs).
    fn stable_epoch(&self) -> u64 {
        u64::MAX
    }

    /// The acknowledgement mode the engine was configured with.
    fn ack_mode(&self) -> AckMode {
        AckMode::AtCommit
    }
}

/// Code generic over engines that are chosen at run time (by a protocol name): the builder that
/// picks the engine hands it to [`visit`](Self::visit), which sees its concrete type.
pub trait EngineVisitor {
    /// What the visit returns.
    type Output;

    /// Uses `engine`.
    fn visit<E: Engine>(self, engine: E) -> Self::Output;
}

/// A per-thread worker: owns the buffers its transactions use.
pub trait Worker {
    /// An open transaction, borrowing the worker.
    type Txn<'w>: Transaction
    where
        Self: 'w;

    /// Starts a transaction.
    fn begin(&mut self) -> Self::Txn<'_>;

    /// A small integer unique among the engine's live workers.
    fn id(&self) -> u32;

    /// Reports protocol-specific counters accumulated since the last call (e.g. NWR's omitted
    /// writes) as `(name, delta)` pairs, and resets them.
    fn drain_counters(&mut self, _sink: &mut dyn FnMut(&'static str, u64)) {}

    /// Runs `program` once in a new transaction: commits it when the program succeeds, aborts it
    /// when the program fails. Retrying on a conflict is the caller's choice.
    fn attempt<P: crate::Program + ?Sized>(
        &mut self,
        program: &P,
    ) -> TxResult<(P::Output, CommitInfo)>
    where
        Self: Sized,
    {
        let mut tx = self.begin();
        match program.run(&mut tx) {
            Ok(out) => tx.commit().map(|info| (out, info)),
            Err(e) => {
                tx.abort();
                Err(e)
            }
        }
    }
}

/// An open transaction. Dropping it without [`commit`](Self::commit) aborts it.
///
/// [`commit`](Self::commit) and [`abort`](Self::abort) take the transaction by value, so a
/// finished transaction cannot be used again; the compiler rejects it:
///
/// ```compile_fail,E0382
/// use txlab_core::{Transaction, TxOps, TableId};
/// fn finish_twice<T: Transaction>(mut tx: T) {
///     tx.commit().ok();
///     tx.write(TableId(0), 1, &[0u8; 8]).ok(); // use after commit: does not compile
/// }
/// ```
pub trait Transaction: TxOps {
    /// Validates and commits. On `Err` the transaction is aborted.
    fn commit(self) -> TxResult<CommitInfo>;

    /// Rolls back.
    fn abort(self);
}
