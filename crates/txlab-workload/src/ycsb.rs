//! YCSB: single-table key-value transactions (Cooper et al., "Benchmarking Cloud Serving Systems
//! with YCSB", SoCC 2010, §4, Table 2; workload F, the
//! read-modify-write mix, is `workloads/workloadf` of the YCSB distribution, not in the paper).
//!
//! # Definition
//!
//! One dense table `usertable` of [`YcsbConfig::records`] keys, each with a
//! [`YcsbConfig::payload_bytes`]-byte value. A transaction performs
//! [`YcsbConfig::ops_per_txn`] operations on **distinct** keys drawn from a [`Zipf`] with skew
//! [`YcsbConfig::theta`]: key 0 is the hottest, key 1 the next, so the hot keys are adjacent (as
//! in CCBench and DBx1000; YCSB's own client hashes the rank to spread them over the key space,
//! see [`crate::zipf`]). Each operation is independently
//!
//! - a read, with probability [`read_ratio`](YcsbConfig::read_ratio);
//! - otherwise a write, which is a read-modify-write with probability
//!   [`rmw_ratio`](YcsbConfig::rmw_ratio) and a blind update otherwise.
//!
//! Grouping several YCSB operations into one transaction follows the multi-key transactional use
//! of YCSB in the concurrency-control literature (e.g. Silo, SOSP 2013; TicToc, SIGMOD 2016;
//! Cicada's 16-operation configuration used in the OCC-batching paper, VLDB 2018 §5.6).
//!
//! # Presets ([`YcsbPreset`]) and defaults
//!
//! | preset | reads | writes | write kind |
//! |---|---|---|---|
//! | A (update heavy) | 50 % | 50 % | blind update |
//! | B (read mostly) | 95 % | 5 % | blind update |
//! | C (read only) | 100 % | 0 % | – |
//! | F (read-modify-write) | 50 % | 50 % | read-modify-write |
//!
//! Every preset uses `records = 100_000`, `ops_per_txn = 10`, `payload_bytes = 100` and
//! `theta = 0` (uniform; set `theta = 0.99` for YCSB's standard hot spot).
//!
//! # Values
//!
//! Every written value starts with the writer's stamp `(thread, txn sequence)` (see
//! [`crate::stamp`]), so writes of different transactions differ. A read-modify-write also adds 1
//! to the little-endian counter in bytes `16..24` when the payload has them, so its result depends
//! on what it read. Loaded values carry the stamp `(LOAD_THREAD, key)`.
//!
//! # Invariants
//!
//! Keys within one transaction are distinct; [`Program::declare`] lists exactly the keys and
//! access kinds [`Program::run`] performs; every read key must be present (all keys are loaded).

pub mod pieces;

pub use pieces::MAX_PIECED_OPS;

use crate::distinct::DistinctKeys;
use crate::rng::{WorkloadRng, worker_rng};
use crate::stamp::{LOAD_THREAD, write_stamp};
use crate::zipf::{MAX_ITEMS, Zipf, validate_theta};
use crate::{Generator, Workload};
use rand::distr::{Bernoulli, Distribution};
use txlab_core::table::MAX_VALUE_SIZE;
use txlab_core::{
    Access, AccessSet, Engine, Error, Program, Schema, TableId, TableSpec, TxError, TxOps, TxResult,
};

/// The standard YCSB core workloads this crate provides (A–C: Cooper et al., SoCC 2010, Table 2;
/// F: the YCSB distribution's `workloadf`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum YcsbPreset {
    /// Update heavy: 50 % reads, 50 % blind updates.
    A,
    /// Read mostly: 95 % reads, 5 % blind updates.
    B,
    /// Read only.
    C,
    /// Read-modify-write: 50 % reads, 50 % read-modify-writes.
    F,
}

impl YcsbPreset {
    /// All presets.
    pub const ALL: [YcsbPreset; 4] = [YcsbPreset::A, YcsbPreset::B, YcsbPreset::C, YcsbPreset::F];

    /// The workload name (`ycsb-a`, ...).
    pub fn name(self) -> &'static str {
        match self {
            YcsbPreset::A => "ycsb-a",
            YcsbPreset::B => "ycsb-b",
            YcsbPreset::C => "ycsb-c",
            YcsbPreset::F => "ycsb-f",
        }
    }

    /// Parses `a`, `b`, `c`, `f` or `ycsb-a`, ... (case-insensitive).
    pub fn from_name(name: &str) -> Result<YcsbPreset, Error> {
        let lower = name.to_ascii_lowercase();
        let letter = lower.strip_prefix("ycsb-").unwrap_or(&lower);
        match letter {
            "a" => Ok(YcsbPreset::A),
            "b" => Ok(YcsbPreset::B),
            "c" => Ok(YcsbPreset::C),
            "f" => Ok(YcsbPreset::F),
            _ => Err(Error::invalid(
                "ycsb preset",
                name,
                "one of a, b, c, f (or ycsb-a, ...)",
            )),
        }
    }

    /// `(read_ratio, rmw_ratio)` of the preset.
    fn mix(self) -> (f64, f64) {
        match self {
            YcsbPreset::A => (0.5, 0.0),
            YcsbPreset::B => (0.95, 0.0),
            YcsbPreset::C => (1.0, 0.0),
            YcsbPreset::F => (0.5, 1.0),
        }
    }
}

/// YCSB parameters (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct YcsbConfig {
    /// Number of keys, `1..=2^40`.
    pub records: u64,
    /// Operations per transaction, on distinct keys: `1..=records`.
    pub ops_per_txn: usize,
    /// Fraction of operations that are reads, `0..=1`.
    pub read_ratio: f64,
    /// Fraction of writes that are read-modify-writes rather than blind updates, `0..=1`.
    pub rmw_ratio: f64,
    /// Value size in bytes, `1..=MAX_VALUE_SIZE`.
    pub payload_bytes: usize,
    /// Zipf skew of key choice, `0..=10` (0 uniform).
    pub theta: f64,
}

impl YcsbConfig {
    /// A preset's mix with the default sizes (module docs).
    pub fn preset(preset: YcsbPreset) -> YcsbConfig {
        let (read_ratio, rmw_ratio) = preset.mix();
        YcsbConfig {
            records: 100_000,
            ops_per_txn: 10,
            read_ratio,
            rmw_ratio,
            payload_bytes: 100,
            theta: 0.0,
        }
    }

    /// Checks every field; the error names the field, its value and the accepted range.
    pub fn validate(&self) -> Result<(), Error> {
        if self.records == 0 || self.records > MAX_ITEMS {
            return Err(Error::invalid(
                "records",
                self.records,
                format!("in 1..={MAX_ITEMS}"),
            ));
        }
        if self.ops_per_txn == 0 || self.ops_per_txn as u64 > self.records {
            return Err(Error::invalid(
                "ops_per_txn",
                self.ops_per_txn,
                format!(
                    "in 1..={} (the keys of a transaction are distinct, so at most `records`)",
                    self.records
                ),
            ));
        }
        validate_fraction("read_ratio", self.read_ratio)?;
        validate_fraction("rmw_ratio", self.rmw_ratio)?;
        if self.payload_bytes == 0 || self.payload_bytes > MAX_VALUE_SIZE {
            return Err(Error::invalid(
                "payload_bytes",
                self.payload_bytes,
                format!("in 1..={MAX_VALUE_SIZE}"),
            ));
        }
        validate_theta("theta", self.theta)
    }

    /// The preset this configuration's mix matches, if any (sizes and skew do not matter).
    pub fn matching_preset(&self) -> Option<YcsbPreset> {
        if self.read_ratio == 1.0 {
            return Some(YcsbPreset::C);
        }
        YcsbPreset::ALL
            .into_iter()
            .find(|p| p.mix() == (self.read_ratio, self.rmw_ratio))
    }
}

impl Default for YcsbConfig {
    /// YCSB-A.
    fn default() -> Self {
        YcsbConfig::preset(YcsbPreset::A)
    }
}

/// Checks a probability: in `0..=1` (NaN rejected).
pub(crate) fn validate_fraction(name: &'static str, value: f64) -> Result<(), Error> {
    if !(0.0..=1.0).contains(&value) {
        return Err(Error::invalid(name, value, "a fraction in 0..=1"));
    }
    Ok(())
}

/// The YCSB workload (module docs).
#[derive(Debug, Clone)]
pub struct Ycsb {
    cfg: YcsbConfig,
    schema: Schema,
    table: TableId,
    zipf: Zipf,
    read: Bernoulli,
    rmw: Bernoulli,
}

impl Ycsb {
    /// Validates `cfg` (see [`YcsbConfig::validate`]) and builds the workload.
    pub fn new(cfg: YcsbConfig) -> Result<Ycsb, Error> {
        cfg.validate()?;
        let mut schema = Schema::new();
        let table = schema.add(TableSpec::dense(
            "usertable",
            cfg.payload_bytes,
            cfg.records,
        ))?;
        let zipf = Zipf::new(cfg.records, cfg.theta)?;
        let read = Bernoulli::new(cfg.read_ratio)
            .map_err(|_| Error::invalid("read_ratio", cfg.read_ratio, "a fraction in 0..=1"))?;
        let rmw = Bernoulli::new(cfg.rmw_ratio)
            .map_err(|_| Error::invalid("rmw_ratio", cfg.rmw_ratio, "a fraction in 0..=1"))?;
        Ok(Ycsb {
            cfg,
            schema,
            table,
            zipf,
            read,
            rmw,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &YcsbConfig {
        &self.cfg
    }

    /// The table's id.
    pub fn table(&self) -> TableId {
        self.table
    }

    /// The usertable partitioned into `partitions` contiguous key ranges of (nearly) equal size.
    pub fn partitioner(
        &self,
        partitions: u32,
    ) -> Result<txlab_core::partition::RangePartitioner, Error> {
        txlab_core::partition::RangePartitioner::new(partitions, vec![self.cfg.records])
    }
}

impl Workload for Ycsb {
    type Program = YcsbTxn;
    type Generator = YcsbGenerator;

    fn name(&self) -> String {
        self.cfg
            .matching_preset()
            .map_or("ycsb", YcsbPreset::name)
            .to_string()
    }

    fn schema(&self) -> Schema {
        self.schema.clone()
    }

    fn load<E: Engine>(&self, engine: &E) -> Result<(), Error> {
        let mut value = vec![0u8; self.cfg.payload_bytes];
        for key in 0..self.cfg.records {
            write_stamp(&mut value, LOAD_THREAD, key);
            engine.load(self.table, key, &value)?;
        }
        Ok(())
    }

    fn generator(&self, thread: usize, seed: u64) -> YcsbGenerator {
        YcsbGenerator {
            rng: worker_rng(seed, thread),
            keys: DistinctKeys::new(self.zipf.clone()),
            read: self.read,
            rmw: self.rmw,
            rmw_ratio: self.cfg.rmw_ratio,
            ops_per_txn: self.cfg.ops_per_txn,
            txn: YcsbTxn {
                table: self.table,
                ops: Vec::with_capacity(self.cfg.ops_per_txn),
                value: vec![0; self.cfg.payload_bytes],
                thread: thread as u64,
                seq: 0,
            },
            started: false,
        }
    }

    fn parameters(&self) -> Vec<(&'static str, String)> {
        vec![
            ("records", self.cfg.records.to_string()),
            ("ops_per_txn", self.cfg.ops_per_txn.to_string()),
            ("read_ratio", self.cfg.read_ratio.to_string()),
            ("rmw_ratio", self.cfg.rmw_ratio.to_string()),
            ("payload_bytes", self.cfg.payload_bytes.to_string()),
            ("theta", self.cfg.theta.to_string()),
        ]
    }
}

/// What a YCSB operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum YcsbOpKind {
    /// Read the value.
    Read,
    /// Overwrite the value without reading it.
    BlindUpdate,
    /// Read the value and write a modified one.
    ReadModifyWrite,
}

/// One operation of a YCSB transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct YcsbOp {
    /// The key.
    pub key: u64,
    /// What is done to it.
    pub kind: YcsbOpKind,
}

/// A YCSB transaction: its operations and the value it writes.
#[derive(Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct YcsbTxn {
    table: TableId,
    ops: Vec<YcsbOp>,
    /// The value of blind updates: stamped with `(thread, seq)`.
    value: Vec<u8>,
    thread: u64,
    seq: u64,
}

/// `clone_from` reuses the target's buffers, so a driver that copies generated transactions
/// into kept ones (thread-aware batching) allocates nothing per transaction.
impl Clone for YcsbTxn {
    fn clone(&self) -> Self {
        Self {
            table: self.table,
            ops: self.ops.clone(),
            value: self.value.clone(),
            thread: self.thread,
            seq: self.seq,
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.table = source.table;
        self.ops.clone_from(&source.ops);
        self.value.clone_from(&source.value);
        self.thread = source.thread;
        self.seq = source.seq;
    }
}

impl YcsbTxn {
    /// The operations, in execution order.
    pub fn ops(&self) -> &[YcsbOp] {
        &self.ops
    }

    /// `(thread, per-thread sequence number)` stamped into this transaction's writes.
    pub fn stamp(&self) -> (u64, u64) {
        (self.thread, self.seq)
    }

    /// Runs one operation; a read hands the value it read to `read`.
    fn run_op<T: TxOps + ?Sized>(
        &self,
        op: &YcsbOp,
        tx: &mut T,
        read: impl FnOnce(&[u8]),
    ) -> TxResult<()> {
        let (thread, seq) = (self.thread, self.seq);
        match op.kind {
            YcsbOpKind::Read => match tx.read(self.table, op.key)? {
                Some(v) => read(v),
                None => return Err(self.absent(op.key)),
            },
            YcsbOpKind::BlindUpdate => tx.write(self.table, op.key, &self.value)?,
            YcsbOpKind::ReadModifyWrite => {
                let present = tx.update(self.table, op.key, &mut |v: &mut [u8]| {
                    if let Some(counter) = v.get_mut(16..24) {
                        let mut word = [0u8; 8];
                        word.copy_from_slice(counter);
                        counter.copy_from_slice(
                            &u64::from_le_bytes(word).wrapping_add(1).to_le_bytes(),
                        );
                    }
                    write_stamp(v, thread, seq);
                })?;
                if !present {
                    return Err(self.absent(op.key));
                }
            }
        }
        Ok(())
    }

    fn absent(&self, key: u64) -> TxError {
        TxError::Error(Error::Invariant(format!(
            "ycsb: usertable key {key} is absent (was the workload loaded?)"
        )))
    }
}

impl Program for YcsbTxn {
    type Output = ();

    fn run<T: TxOps + ?Sized>(&self, tx: &mut T) -> TxResult<()> {
        for op in &self.ops {
            self.run_op(op, tx, |_| {})?;
        }
        Ok(())
    }

    fn declare(&self, out: &mut AccessSet) {
        for op in &self.ops {
            let access = match op.kind {
                YcsbOpKind::Read => Access::Read,
                YcsbOpKind::BlindUpdate => Access::BlindWrite,
                YcsbOpKind::ReadModifyWrite => Access::ReadWrite,
            };
            out.push(self.table, op.key, access);
        }
    }

    fn kind(&self) -> &'static str {
        if self.read_only() {
            "read_only"
        } else {
            "read_write"
        }
    }

    fn read_only(&self) -> bool {
        self.ops.iter().all(|op| op.kind == YcsbOpKind::Read)
    }
}

/// Generates YCSB transactions for one worker, reusing one [`YcsbTxn`].
#[derive(Debug)]
pub struct YcsbGenerator {
    rng: WorkloadRng,
    keys: DistinctKeys,
    read: Bernoulli,
    rmw: Bernoulli,
    /// No draw decides the write kind when every write is blind (YCSB A and B).
    rmw_ratio: f64,
    ops_per_txn: usize,
    txn: YcsbTxn,
    started: bool,
}

impl Generator for YcsbGenerator {
    type Program = YcsbTxn;

    fn next(&mut self) -> &YcsbTxn {
        if self.started {
            self.txn.seq += 1;
        }
        self.started = true;
        self.keys.clear();
        self.txn.ops.clear();
        for _ in 0..self.ops_per_txn {
            let key = self.keys.pick(&mut self.rng);
            let kind = if self.read.sample(&mut self.rng) {
                YcsbOpKind::Read
            } else if self.rmw_ratio > 0.0 && self.rmw.sample(&mut self.rng) {
                YcsbOpKind::ReadModifyWrite
            } else {
                YcsbOpKind::BlindUpdate
            };
            self.txn.ops.push(YcsbOp { key, kind });
        }
        write_stamp(&mut self.txn.value, self.txn.thread, self.txn.seq);
        &self.txn
    }
}
