//! The micro benchmark of the OCC-batching paper (B. Ding, L. Kot, J. Gehrke, "Improving
//! Optimistic Concurrency Control Through Transaction Batching and Operation Reordering",
//! PVLDB 12(2), 2018, §5.1 "Experimental Setup", used in §5.2 and §5.3).
//!
//! # Definition
//!
//! The paper populates a key-value store with 100K objects and generates transactions that "read
//! 5 objects and write to 5 objects drawn from a Zipfian distribution, with one of the reads and
//! one of the writes on the same object". Here:
//!
//! - one dense table `objects` of [`MicroConfig::keys`] keys with
//!   [`MicroConfig::value_bytes`]-byte values (the paper leaves values null; 8 bytes hold a writer
//!   stamp, see [`crate::stamp`]);
//! - a transaction draws `reads + writes - 1` **distinct** keys from a [`Zipf`] with skew
//!   [`MicroConfig::theta`]; the first is the shared key, read and then written (a
//!   read-modify-write); `reads - 1` further keys are only read and `writes - 1` further keys are
//!   only written (blind writes);
//! - execution order: all reads (the shared key first), then all writes (the shared key first).
//!   The written value is the writer's stamp `(thread, txn sequence)`.
//!
//! # Parameters and defaults
//!
//! `keys = 100_000`, `reads = 5`, `writes = 5` (the paper's values), `theta = 0.8` (the paper
//! sweeps the skew factor up to 0.9, §5.2–5.3), `value_bytes = 8`.
//!
//! # Invariants
//!
//! Exactly `reads` keys are read and `writes` keys written, exactly one key is both, all keys of a
//! transaction are distinct, and [`Program::declare`] lists exactly what [`Program::run`] touches.

use crate::distinct::DistinctKeys;
use crate::rng::{WorkloadRng, worker_rng};
use crate::stamp::{LOAD_THREAD, write_stamp};
use crate::zipf::{MAX_ITEMS, Zipf, validate_theta};
use crate::{Generator, Workload};
use txlab_core::table::MAX_VALUE_SIZE;
use txlab_core::{
    Access, AccessSet, Engine, Error, Program, Schema, TableId, TableSpec, TxError, TxOps, TxResult,
};

/// Micro benchmark parameters (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MicroConfig {
    /// Number of keys, `1..=2^40`, at least `reads + writes - 1`.
    pub keys: u64,
    /// Keys read per transaction (including the shared key), at least 1.
    pub reads: usize,
    /// Keys written per transaction (including the shared key), at least 1.
    pub writes: usize,
    /// Zipf skew of key choice, `0..=10`.
    pub theta: f64,
    /// Value size in bytes, `1..=MAX_VALUE_SIZE`.
    pub value_bytes: usize,
}

impl Default for MicroConfig {
    fn default() -> Self {
        MicroConfig {
            keys: 100_000,
            reads: 5,
            writes: 5,
            theta: 0.8,
            value_bytes: 8,
        }
    }
}

impl MicroConfig {
    /// Checks every field; the error names the field, its value and the accepted range.
    pub fn validate(&self) -> Result<(), Error> {
        if self.keys == 0 || self.keys > MAX_ITEMS {
            return Err(Error::invalid(
                "keys",
                self.keys,
                format!("in 1..={MAX_ITEMS}"),
            ));
        }
        // Bounded so that `reads + writes - 1` neither overflows nor exceeds `keys`.
        let limit = usize::try_from(self.keys).unwrap_or(usize::MAX);
        if self.reads == 0 || self.reads > limit {
            return Err(Error::invalid(
                "reads",
                self.reads,
                format!("in 1..={limit} (one read is on the key that is also written)"),
            ));
        }
        if self.writes == 0 || self.writes > limit {
            return Err(Error::invalid(
                "writes",
                self.writes,
                format!("in 1..={limit} (one write is on the key that is also read)"),
            ));
        }
        let distinct = self.reads + self.writes - 1;
        if distinct as u64 > self.keys {
            return Err(Error::invalid(
                "reads + writes",
                self.reads + self.writes,
                format!(
                    "at most keys + 1 = {} (a transaction uses reads + writes - 1 distinct keys)",
                    self.keys + 1
                ),
            ));
        }
        if self.value_bytes == 0 || self.value_bytes > MAX_VALUE_SIZE {
            return Err(Error::invalid(
                "value_bytes",
                self.value_bytes,
                format!("in 1..={MAX_VALUE_SIZE}"),
            ));
        }
        validate_theta("theta", self.theta)
    }
}

/// The micro benchmark workload (module docs).
#[derive(Debug, Clone)]
pub struct Micro {
    cfg: MicroConfig,
    schema: Schema,
    table: TableId,
    zipf: Zipf,
}

impl Micro {
    /// Validates `cfg` (see [`MicroConfig::validate`]) and builds the workload.
    pub fn new(cfg: MicroConfig) -> Result<Micro, Error> {
        cfg.validate()?;
        let mut schema = Schema::new();
        let table = schema.add(TableSpec::dense("objects", cfg.value_bytes, cfg.keys))?;
        let zipf = Zipf::new(cfg.keys, cfg.theta)?;
        Ok(Micro {
            cfg,
            schema,
            table,
            zipf,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &MicroConfig {
        &self.cfg
    }

    /// The table's id.
    pub fn table(&self) -> TableId {
        self.table
    }
}

impl Workload for Micro {
    type Program = MicroTxn;
    type Generator = MicroGenerator;

    fn name(&self) -> String {
        "micro".to_string()
    }

    fn schema(&self) -> Schema {
        self.schema.clone()
    }

    fn load<E: Engine>(&self, engine: &E) -> Result<(), Error> {
        let mut value = vec![0u8; self.cfg.value_bytes];
        for key in 0..self.cfg.keys {
            write_stamp(&mut value, LOAD_THREAD, key);
            engine.load(self.table, key, &value)?;
        }
        Ok(())
    }

    fn generator(&self, thread: usize, seed: u64) -> MicroGenerator {
        MicroGenerator {
            rng: worker_rng(seed, thread),
            keys: DistinctKeys::new(self.zipf.clone()),
            reads: self.cfg.reads,
            writes: self.cfg.writes,
            txn: MicroTxn {
                table: self.table,
                shared: 0,
                read_only: Vec::with_capacity(self.cfg.reads - 1),
                write_only: Vec::with_capacity(self.cfg.writes - 1),
                value: vec![0; self.cfg.value_bytes],
                thread: thread as u64,
                seq: 0,
            },
            started: false,
        }
    }

    fn parameters(&self) -> Vec<(&'static str, String)> {
        vec![
            ("keys", self.cfg.keys.to_string()),
            ("reads", self.cfg.reads.to_string()),
            ("writes", self.cfg.writes.to_string()),
            ("theta", self.cfg.theta.to_string()),
            ("value_bytes", self.cfg.value_bytes.to_string()),
        ]
    }
}

/// A micro benchmark transaction (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MicroTxn {
    table: TableId,
    shared: u64,
    read_only: Vec<u64>,
    write_only: Vec<u64>,
    value: Vec<u8>,
    thread: u64,
    seq: u64,
}

impl MicroTxn {
    /// The key that is read and then written.
    pub fn shared_key(&self) -> u64 {
        self.shared
    }

    /// The keys that are only read.
    pub fn read_only_keys(&self) -> &[u64] {
        &self.read_only
    }

    /// The keys that are only written.
    pub fn write_only_keys(&self) -> &[u64] {
        &self.write_only
    }

    /// `(thread, per-thread sequence number)` stamped into this transaction's writes.
    pub fn stamp(&self) -> (u64, u64) {
        (self.thread, self.seq)
    }

    fn read_present<T: TxOps + ?Sized>(
        &self,
        tx: &mut T,
        key: u64,
        for_update: bool,
    ) -> TxResult<()> {
        let found = if for_update {
            tx.read_for_update(self.table, key)?
        } else {
            tx.read(self.table, key)?
        };
        if found.is_none() {
            return Err(TxError::Error(Error::Invariant(format!(
                "micro: objects key {key} is absent (was the workload loaded?)"
            ))));
        }
        Ok(())
    }
}

impl Program for MicroTxn {
    type Output = ();

    fn run<T: TxOps + ?Sized>(&self, tx: &mut T) -> TxResult<()> {
        self.read_present(tx, self.shared, true)?;
        for &key in &self.read_only {
            self.read_present(tx, key, false)?;
        }
        tx.write(self.table, self.shared, &self.value)?;
        for &key in &self.write_only {
            tx.write(self.table, key, &self.value)?;
        }
        Ok(())
    }

    fn declare(&self, out: &mut AccessSet) {
        out.push(self.table, self.shared, Access::ReadWrite);
        for &key in &self.read_only {
            out.push(self.table, key, Access::Read);
        }
        for &key in &self.write_only {
            out.push(self.table, key, Access::BlindWrite);
        }
    }

    fn kind(&self) -> &'static str {
        "micro"
    }
}

/// Generates micro benchmark transactions for one worker, reusing one [`MicroTxn`].
#[derive(Debug)]
pub struct MicroGenerator {
    rng: WorkloadRng,
    keys: DistinctKeys,
    reads: usize,
    writes: usize,
    txn: MicroTxn,
    started: bool,
}

impl Generator for MicroGenerator {
    type Program = MicroTxn;

    fn next(&mut self) -> &MicroTxn {
        if self.started {
            self.txn.seq += 1;
        }
        self.started = true;
        self.keys.clear();
        self.txn.read_only.clear();
        self.txn.write_only.clear();
        self.txn.shared = self.keys.pick(&mut self.rng);
        for _ in 1..self.reads {
            let key = self.keys.pick(&mut self.rng);
            self.txn.read_only.push(key);
        }
        for _ in 1..self.writes {
            let key = self.keys.pick(&mut self.rng);
            self.txn.write_only.push(key);
        }
        write_stamp(&mut self.txn.value, self.txn.thread, self.txn.seq);
        &self.txn
    }
}
