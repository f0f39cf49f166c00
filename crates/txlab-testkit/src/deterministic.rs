//! The deterministic kit: a serial-replay oracle for engines implementing
//! [`Deterministic`], instantiated per engine with [`deterministic_kit!`](crate::deterministic_kit).
//!
//! - **Serial-replay oracle.** Random input logs are executed by the engine's `execute_log` at
//!   1, 2 and 4 workers, each on a freshly loaded engine, and must give the same per-program
//!   results and the same [`StateDigest`] as [`SerialEngine`] executing the log in order. Logs:
//!   YCSB on 10 hot keys, SmallBank, TPC-C (1 warehouse, 1,000 items; 30 customers per district
//!   to keep the load small) and random one-shot programs ([`OneShot`]) built from the schedule
//!   operations of [`crate::replay::Op`] (reads, blind writes, read-modify-writes, inserts,
//!   deletes, scans). A mismatch prints the first differing rows ([`StateDigest::diff`]) and
//!   proptest's shrunk log.
//! - **Order equivalence, not just serializability.** The engine is built with its sequence
//!   clock on (a transaction of rank `r` is recorded as running from `2r` to `2r + 1`), so
//!   `CheckOptions::strict()` on its history checks equivalence to the serial execution in log
//!   order with the ordinary checker.
//! - **Determinism.** The same log at 1, 2 and 4 workers gives the same results and digest
//!   (each is compared with the one serial execution).
//! - **Read-only claims.** A program claiming `read_only` that writes is `Error::Misuse` and
//!   writes nothing; the oracle runs such programs through [`ReadOnlyGuard`], which refuses
//!   their writes the same way (messages are not compared).
//! - TPC-C's consistency conditions hold after every TPC-C log.
//!
//! Cases: `TXLAB_PROPTEST_CASES=N` sets the random-program cases (default 256) and scales the
//! workload cases (a fifth of it, at least 16); seed fixed, `TXLAB_SEED=N` for another.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};
use std::fmt::Debug;
use std::sync::Arc;
use txlab_check::digest::StateDigest;
use txlab_check::serial::SerialEngine;
use txlab_check::{CheckOptions, MemoryRecorder, check};
use txlab_core::deterministic::Deterministic;
use txlab_core::{
    Access, AccessSet, Engine, Error, IndexKind, Program, RetryPolicy, Schema, TableId, TableSpec,
    TxError, TxOps, TxResult,
};
use txlab_workload::{
    Generator, SmallBank, Tpcc, TpccConfig, Workload, Ycsb, YcsbConfig, YcsbPreset,
};

use crate::replay::Op;

/// A deterministic engine under test.
pub trait DeterministicProtocol {
    /// The engine, recording into a [`MemoryRecorder`].
    type Engine: Deterministic;

    /// The engine's name (for messages).
    const NAME: &'static str;

    /// Builds an engine over `schema` recording into `recorder`, with its sequence clock on
    /// (module docs).
    fn build(schema: &Schema, recorder: Arc<MemoryRecorder>) -> Result<Self::Engine, Error>;
}

/// The worker counts every log runs at.
pub const WORKERS: [usize; 3] = [1, 2, 4];

/// The one table random programs use: ordered, 8-byte little-endian values.
pub const KV: TableId = TableId(0);

fn val(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().expect("8-byte values"))
}

/// A random one-shot program: schedule operations on [`KV`], a read-only claim (true for
/// programs that only read, and for deliberate liars), and, as its output, everything it saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneShot {
    /// The operations, in order (`Op::Commit` and `Op::Abort` are not used; `Op::Abort` as the
    /// last operation makes the program roll back).
    pub ops: Vec<Op>,
    /// What [`Program::read_only`] answers.
    pub claims_read_only: bool,
}

impl Program for OneShot {
    type Output = Vec<Option<u64>>;

    fn run<T: TxOps + ?Sized>(&self, tx: &mut T) -> TxResult<Vec<Option<u64>>> {
        let mut seen = Vec::new();
        for op in &self.ops {
            match *op {
                Op::Read(k) => seen.push(tx.read(KV, k)?.map(val)),
                Op::Write(k, v) => tx.write(KV, k, &v.to_le_bytes())?,
                Op::Update(k, d) => {
                    let ok = tx.update(KV, k, &mut |b| {
                        b.copy_from_slice(&val(b).wrapping_add(d).to_le_bytes())
                    })?;
                    seen.push(Some(u64::from(ok)));
                }
                Op::Insert(k, v) => {
                    seen.push(Some(u64::from(tx.insert(KV, k, &v.to_le_bytes())?)))
                }
                Op::Delete(k) => seen.push(Some(u64::from(tx.delete(KV, k)?))),
                Op::Scan(lo, hi) | Op::ScanUpdate(lo, hi, _) => {
                    tx.scan(KV, lo, hi, &mut |k, v| {
                        seen.push(Some(k));
                        seen.push(Some(val(v)));
                        true
                    })?
                }
                Op::Abort => return Err(TxError::user_abort("one-shot program rolls back")),
                Op::Commit => {}
            }
        }
        Ok(seen)
    }

    fn declare(&self, out: &mut AccessSet) {
        for op in &self.ops {
            match *op {
                Op::Read(k) => out.push(KV, k, Access::Read),
                Op::Write(k, _) => out.push(KV, k, Access::BlindWrite),
                Op::Update(k, _) => out.push(KV, k, Access::ReadWrite),
                Op::Insert(k, _) => out.push(KV, k, Access::Insert),
                Op::Delete(k) => out.push(KV, k, Access::Delete),
                // A range is not a key: the keys it finds depend on the state.
                Op::Scan(..) | Op::ScanUpdate(..) => out.dependent = true,
                Op::Commit | Op::Abort => {}
            }
        }
    }

    fn kind(&self) -> &'static str {
        "one_shot"
    }

    fn read_only(&self) -> bool {
        self.claims_read_only
    }
}

/// The schema of random programs: [`KV`].
pub fn one_shot_schema() -> Schema {
    let mut s = Schema::new();
    s.add(TableSpec::ordered("kv", 8)).expect("valid table");
    s
}

/// Runs a program, refusing its writes with `Error::Misuse` when it claims `read_only` (what a
/// deterministic engine does, for the oracle; module docs). The refusal sticks: the program's
/// result is the misuse even if it swallowed the error.
#[derive(Debug, Clone)]
pub struct ReadOnlyGuard<P>(pub P);

struct Refusing<'t, T: ?Sized> {
    tx: &'t mut T,
    refuse: bool,
    refused: bool,
}

const REFUSED: &str = "a program claiming read_only wrote";

impl<T: TxOps + ?Sized> Refusing<'_, T> {
    fn check(&mut self) -> TxResult<()> {
        if self.refuse {
            self.refused = true;
            return Err(Error::Misuse(REFUSED).into());
        }
        Ok(())
    }
}

impl<T: TxOps + ?Sized> TxOps for Refusing<'_, T> {
    fn read(&mut self, table: TableId, key: u64) -> TxResult<Option<&[u8]>> {
        self.tx.read(table, key)
    }
    fn write(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<()> {
        self.check()?;
        self.tx.write(table, key, value)
    }
    fn update(&mut self, table: TableId, key: u64, f: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        self.check()?;
        self.tx.update(table, key, f)
    }
    fn insert(&mut self, table: TableId, key: u64, value: &[u8]) -> TxResult<bool> {
        self.check()?;
        self.tx.insert(table, key, value)
    }
    fn delete(&mut self, table: TableId, key: u64) -> TxResult<bool> {
        self.check()?;
        self.tx.delete(table, key)
    }
    fn scan(
        &mut self,
        table: TableId,
        lo: u64,
        hi: u64,
        visit: &mut dyn FnMut(u64, &[u8]) -> bool,
    ) -> TxResult<()> {
        self.tx.scan(table, lo, hi, visit)
    }
}

impl<P: Program> Program for ReadOnlyGuard<P> {
    type Output = P::Output;

    fn run<T: TxOps + ?Sized>(&self, tx: &mut T) -> TxResult<P::Output> {
        let mut guarded = Refusing {
            tx,
            refuse: self.0.read_only(),
            refused: false,
        };
        let r = self.0.run(&mut guarded);
        match (r, guarded.refused) {
            (Ok(_), true) => Err(Error::Misuse(REFUSED).into()),
            (r, _) => r,
        }
    }

    fn declare(&self, out: &mut AccessSet) {
        self.0.declare(out)
    }

    fn kind(&self) -> &'static str {
        self.0.kind()
    }

    fn read_only(&self) -> bool {
        self.0.read_only()
    }
}

/// A result with misuse messages blanked (engines word them differently).
fn normalized<T: Clone>(r: &TxResult<T>) -> TxResult<T> {
    match r {
        Err(TxError::Error(Error::Misuse(_))) => Err(Error::Misuse("").into()),
        other => other.clone(),
    }
}

/// Copies every row of `engine` into a [`SerialEngine`] (dense tables key by key, ordered ones by
/// a full scan), for [`StateDigest::diff`].
pub fn dump<E: Engine>(engine: &E) -> Result<SerialEngine, Error> {
    let schema = engine.schema().clone();
    let out = SerialEngine::new(schema.clone());
    let mut worker = engine.worker()?;
    for (i, spec) in schema.tables().iter().enumerate() {
        let table = TableId(i as u16);
        let kind = spec.index;
        let rows = txlab_core::run(&mut worker, RetryPolicy::default(), |tx| {
            let mut rows = Vec::new();
            match kind {
                IndexKind::Dense { capacity } => {
                    for key in 0..capacity {
                        if let Some(v) = tx.read(table, key)? {
                            rows.push((key, v.to_vec()));
                        }
                    }
                }
                IndexKind::Hash => {
                    return Err(Error::invalid(
                        "table",
                        &spec.name,
                        "the kit dumps dense and ordered tables",
                    )
                    .into());
                }
                _ => tx.scan(table, 0, u64::MAX, &mut |k, v| {
                    rows.push((k, v.to_vec()));
                    true
                })?,
            }
            Ok(rows)
        })
        .map_err(|e| Error::Internal(format!("dump of table {i}: {e}")))?;
        for (k, v) in rows.value {
            out.insert_raw(table, k, &v)?;
        }
    }
    Ok(out)
}

/// Runs `log` on a fresh `P` engine (loaded by `load`) at `workers` workers and compares it with
/// `oracle` (the serial execution's engine) and `expected` (its results): results, digest,
/// strict history. Returns a description of the first difference.
pub fn compare<P, L>(
    schema: &Schema,
    setup: &impl Setup,
    log: &[L],
    workers: usize,
    oracle: &SerialEngine,
    expected: &[TxResult<L::Output>],
    after: &dyn Fn(&P::Engine) -> Result<(), Error>,
) -> Result<(), String>
where
    P: DeterministicProtocol,
    L: Program + Sync,
    L::Output: Send + Clone + PartialEq + Debug,
{
    let recorder = Arc::new(MemoryRecorder::new());
    let engine = P::build(schema, Arc::clone(&recorder)).map_err(|e| e.to_string())?;
    setup.load(&engine).map_err(|e| format!("load: {e}"))?;
    let got = engine
        .execute_log(log, workers)
        .map_err(|e| format!("{} at {workers} workers: execute_log: {e}", P::NAME))?;
    if got.len() != log.len() {
        return Err(format!(
            "{} returned {} results for {} programs",
            P::NAME,
            got.len(),
            log.len()
        ));
    }
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        if normalized(g) != normalized(e) {
            return Err(format!(
                "{} at {workers} workers: program {i} ({}) returned {g:?}, the serial execution \
                 {e:?}",
                P::NAME,
                log[i].kind()
            ));
        }
    }
    let history = recorder.take();
    let report = check(&history, CheckOptions::strict());
    if !report.is_serializable() {
        return Err(format!(
            "{} at {workers} workers: the history is not equivalent to the log order:\n{report}",
            P::NAME
        ));
    }
    let digest = StateDigest::of(&engine).map_err(|e| e.to_string())?;
    if digest != StateDigest::of_serial(oracle) {
        let mine = dump(&engine).map_err(|e| e.to_string())?;
        let rows: Vec<String> = StateDigest::diff(oracle, &mine, 5)
            .iter()
            .map(|d| d.to_string())
            .collect();
        return Err(format!(
            "{} at {workers} workers: final state differs from the serial execution (left: \
             serial, right: engine); first rows:\n{}",
            P::NAME,
            rows.join("\n")
        ));
    }
    after(&engine).map_err(|e| format!("{} at {workers} workers: {e}", P::NAME))
}

/// How a fresh engine is filled before a log runs (any engine type: the oracle's and the
/// engine's under test).
pub trait Setup {
    /// Loads the initial rows through `Engine::load`.
    fn load<E: Engine>(&self, engine: &E) -> Result<(), Error>;
}

/// The initial rows of a workload.
#[derive(Debug)]
pub struct WorkloadSetup<'a, W>(pub &'a W);

impl<W: Workload> Setup for WorkloadSetup<'_, W> {
    fn load<E: Engine>(&self, engine: &E) -> Result<(), Error> {
        self.0.load(engine)
    }
}

/// Keys `0..n` of [`KV`] present with value `10 k + 10` (random programs).
#[derive(Debug, Clone, Copy)]
pub struct Present(pub u64);

impl Setup for Present {
    fn load<E: Engine>(&self, engine: &E) -> Result<(), Error> {
        (0..self.0).try_for_each(|k| engine.load(KV, k, &(10 * k + 10).to_le_bytes()))
    }
}

/// Runs `log` serially on `SerialEngine` and on `P` at every count of [`WORKERS`]; the first
/// difference, described.
pub fn check_log<P, L>(
    schema: &Schema,
    setup: &impl Setup,
    log: &[L],
    after: &dyn Fn(&P::Engine) -> Result<(), Error>,
) -> Result<(), String>
where
    P: DeterministicProtocol,
    L: Program + Sync + Clone,
    L::Output: Send + Clone + PartialEq + Debug,
{
    let oracle = SerialEngine::new(schema.clone());
    setup.load(&oracle).map_err(|e| format!("load: {e}"))?;
    let guarded: Vec<ReadOnlyGuard<L>> = log.iter().cloned().map(ReadOnlyGuard).collect();
    let expected = oracle
        .execute_log(&guarded, 1)
        .map_err(|e| format!("serial execution: {e}"))?;
    for workers in WORKERS {
        compare::<P, L>(schema, setup, log, workers, &oracle, &expected, after)?;
    }
    Ok(())
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Random-program cases (`TXLAB_PROPTEST_CASES`, default 256).
pub fn cases() -> u32 {
    env_u64("TXLAB_PROPTEST_CASES").unwrap_or(256) as u32
}

fn runner(cases: u32) -> (TestRunner, u64) {
    let seed = env_u64("TXLAB_SEED").unwrap_or(0x646f_6363);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    (
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)),
        seed,
    )
}

fn outcome<V: Debug>(seed: u64, result: Result<(), TestError<V>>) -> Option<String> {
    match result {
        Ok(()) => None,
        Err(TestError::Fail(reason, input)) => {
            Some(format!("seed {seed}: {reason}\nshrunk input: {input:#?}"))
        }
        Err(TestError::Abort(reason)) => Some(format!("seed {seed}: aborted: {reason}")),
    }
}

/// One random program (module docs): 1 to 5 schedule operations over keys 0..6, claiming
/// `read_only` when it only reads, or when it is a liar (1 in 12).
pub fn one_shot() -> impl Strategy<Value = OneShot> {
    (
        prop::collection::vec(crate::schedule::op(6), 1..=5),
        prop::bool::weighted(0.08),
        prop::bool::weighted(1.0 / 12.0),
    )
        .prop_map(|(mut ops, rollback, liar)| {
            if rollback {
                ops.push(Op::Abort);
            }
            let reads_only = ops
                .iter()
                .all(|o| matches!(o, Op::Read(_) | Op::Scan(..) | Op::Abort));
            OneShot {
                ops,
                claims_read_only: reads_only || liar,
            }
        })
}

/// Random logs of [`OneShot`] programs: 1 to 24 programs and the keys present initially (with
/// unique values per write, as in random schedules).
pub fn one_shot_logs() -> impl Strategy<Value = (Vec<OneShot>, u64)> {
    (prop::collection::vec(one_shot(), 1..=24), 0u64..=6).prop_map(|(mut log, present)| {
        for (t, p) in log.iter_mut().enumerate() {
            for (i, op) in p.ops.iter_mut().enumerate() {
                let unique = 1_000 + 100 * t as u64 + i as u64;
                if let Op::Write(_, v) | Op::Insert(_, v) = op {
                    *v = unique;
                }
            }
        }
        (log, present)
    })
}

/// Searches random one-shot logs for a difference from the serial execution.
pub fn find_one_shot_violation<P: DeterministicProtocol>(cases: u32) -> Option<String> {
    let schema = one_shot_schema();
    let (mut runner, seed) = runner(cases);
    let result = runner.run(&one_shot_logs(), |(log, present)| {
        check_log::<P, OneShot>(&schema, &Present(present), &log, &|_| Ok(()))
            .map_err(TestCaseError::fail)
    });
    outcome(seed, result)
}

/// YCSB on 10 hot keys (theta 0.99, 4 operations, half read-modify-writes) for the kit.
pub fn ycsb_hot() -> Ycsb {
    let mut cfg = YcsbConfig::preset(YcsbPreset::A);
    cfg.records = 10;
    cfg.ops_per_txn = 4;
    cfg.rmw_ratio = 0.5;
    cfg.payload_bytes = 16;
    cfg.theta = 0.99;
    Ycsb::new(cfg).expect("valid YCSB configuration")
}

/// Read-mostly YCSB (preset B) on 10 hot keys: many read-only transactions between writers.
pub fn ycsb_read_mostly_hot() -> Ycsb {
    let mut cfg = YcsbConfig::preset(YcsbPreset::B);
    cfg.records = 10;
    cfg.ops_per_txn = 4;
    cfg.payload_bytes = 16;
    cfg.theta = 0.99;
    Ycsb::new(cfg).expect("valid YCSB configuration")
}

/// SmallBank over 100 customers with the audit ledger.
pub fn smallbank() -> SmallBank {
    crate::stress::smallbank_workload()
}

/// TPC-C for the kit: 1 warehouse, 10 districts, 30 customers per district, 1,000 items.
pub fn tpcc_small() -> Tpcc {
    Tpcc::new(TpccConfig {
        customers_per_district: 30,
        items: 1_000,
        ..TpccConfig::default()
    })
    .expect("valid TPC-C configuration")
}

/// A log of `len` programs of `workload`, taken round-robin from the generators of three
/// threads seeded with `seed`.
pub fn workload_log<W: Workload>(workload: &W, seed: u64, len: usize) -> Vec<W::Program>
where
    W::Program: Clone,
{
    let mut gens: Vec<_> = (0..3).map(|t| workload.generator(t, seed)).collect();
    (0..len).map(|i| gens[i % 3].next().clone()).collect()
}

/// Searches random logs of `workload` (a seed and a length up to `max_len`) for a difference
/// from the serial execution; `Workload::check` must hold afterwards.
pub fn find_workload_violation<P, W>(workload: &W, max_len: usize, cases: u32) -> Option<String>
where
    P: DeterministicProtocol,
    W: Workload,
    W::Program: Clone + Sync + Debug,
{
    let schema = workload.schema();
    let (mut runner, seed) = runner(cases);
    let result = runner.run(&(any::<u64>(), 1..=max_len), |(s, len)| {
        let log = workload_log(workload, s, len);
        let after = |e: &P::Engine| workload.check(e);
        check_log::<P, W::Program>(&schema, &WorkloadSetup(workload), &log, &after)
            .map_err(TestCaseError::fail)
    });
    outcome(seed, result)
}

/// Workload cases: a fifth of [`cases`], at least 16.
pub fn workload_cases() -> u32 {
    (cases() / 5).max(16)
}

/// The first difference the kit finds on `P` (random programs, then YCSB, SmallBank and TPC-C
/// logs), or `None`.
pub fn find_violation<P: DeterministicProtocol>() -> Option<String> {
    find_one_shot_violation::<P>(cases())
        .or_else(|| find_workload_violation::<P, _>(&ycsb_hot(), 60, workload_cases()))
        .or_else(|| find_workload_violation::<P, _>(&smallbank(), 60, workload_cases()))
        .or_else(|| find_workload_violation::<P, _>(&tpcc_small(), 40, workload_cases()))
}

/// Asserts the kit catches `P` (a deliberately broken engine). Some mutants show only under a
/// thread interleaving, which a loaded machine can make rare: the kit is run up to five times, and
/// the first violation ends the search (a caught mutant usually costs one run).
pub fn assert_caught<P: DeterministicProtocol>() {
    match (0..5).find_map(|_| find_violation::<P>()) {
        Some(v) => eprintln!(
            "{} caught as expected: {}",
            P::NAME,
            v.lines().next().unwrap_or("")
        ),
        None => panic!(
            "{}: the deterministic kit did not catch a broken engine",
            P::NAME
        ),
    }
}

/// Panics with the failure, naming the engine.
pub fn assert_none(what: &str, name: &str, failure: Option<String>) {
    if let Some(f) = failure {
        panic!("{name}: {what}: {f}");
    }
}

/// Instantiates the deterministic kit for a [`DeterministicProtocol`] as `#[test]` functions in
/// a module `deterministic_kit`.
#[macro_export]
macro_rules! deterministic_kit {
    ($proto:ty) => {
        mod deterministic_kit {
            use super::*;
            use $crate::deterministic as dk;

            #[test]
            fn random_one_shot_logs_match_the_serial_execution() {
                dk::assert_none(
                    "random one-shot programs",
                    <$proto as dk::DeterministicProtocol>::NAME,
                    dk::find_one_shot_violation::<$proto>(dk::cases()),
                );
            }

            #[test]
            fn ycsb_hot_keys_match_the_serial_execution() {
                dk::assert_none(
                    "YCSB on 10 hot keys",
                    <$proto as dk::DeterministicProtocol>::NAME,
                    dk::find_workload_violation::<$proto, _>(
                        &dk::ycsb_hot(),
                        60,
                        dk::workload_cases(),
                    ),
                );
            }

            #[test]
            fn read_mostly_ycsb_matches_the_serial_execution() {
                dk::assert_none(
                    "read-mostly YCSB on 10 hot keys",
                    <$proto as dk::DeterministicProtocol>::NAME,
                    dk::find_workload_violation::<$proto, _>(
                        &dk::ycsb_read_mostly_hot(),
                        60,
                        dk::workload_cases(),
                    ),
                );
            }

            #[test]
            fn smallbank_matches_the_serial_execution() {
                dk::assert_none(
                    "SmallBank",
                    <$proto as dk::DeterministicProtocol>::NAME,
                    dk::find_workload_violation::<$proto, _>(
                        &dk::smallbank(),
                        60,
                        dk::workload_cases(),
                    ),
                );
            }

            #[test]
            fn tpcc_matches_the_serial_execution_and_stays_consistent() {
                dk::assert_none(
                    "TPC-C",
                    <$proto as dk::DeterministicProtocol>::NAME,
                    dk::find_workload_violation::<$proto, _>(
                        &dk::tpcc_small(),
                        40,
                        dk::workload_cases(),
                    ),
                );
            }
        }
    };
}
