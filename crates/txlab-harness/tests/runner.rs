//! Runner tests on the no-op engine and on a scripted engine that injects conflicts, user aborts,
//! real errors and delayed (epoch-based) acknowledgements.

use std::time::{Duration, Instant};
use txlab_core::program::AccessSet;
use txlab_core::protocol::sync::{AtomicU32, AtomicU64, Ordering};
use txlab_core::{AckMode, CommitInfo, Conflict, ConflictCause, Engine, Error, Program};
use txlab_core::{
    RetryPolicy, RunLimit, Schema, TableId, TableSpec, Transaction, TxError, TxOps, TxResult,
    Worker,
};
use txlab_harness::noop::{NoopEngine, NoopWorkload};
use txlab_harness::runner::{RunConfig, RunResult, run_workload};
use txlab_harness::topology::Placement;
use txlab_workload::{Generator, Workload};

/// Every `CONFLICT_EVERY`-th commit attempt of a worker fails, alternating between two causes.
const CONFLICT_EVERY: u64 = 3;
/// Every `USER_ABORT_EVERY`-th generated program rolls itself back.
const USER_ABORT_EVERY: u64 = 7;

#[derive(Debug)]
struct ScriptedEngine {
    schema: Schema,
    ack: AckMode,
    /// Attempts over the whole run, warm-up included.
    all_attempts: AtomicU64,
    /// Attempts begun after a worker's second `drain_counters`: the runner drains on leaving
    /// warm-up and on leaving the measured interval, so these ran during cool-down (or later).
    after_measure_attempts: AtomicU64,
    /// Fail with a real error once this many attempts were made in total.
    error_after: Option<u64>,
    epoch_origin: Instant,
    next_id: AtomicU32,
}

impl ScriptedEngine {
    fn new(ack: AckMode, error_after: Option<u64>) -> Self {
        Self {
            schema: Schema::new(),
            ack,
            all_attempts: AtomicU64::new(0),
            after_measure_attempts: AtomicU64::new(0),
            error_after,
            epoch_origin: Instant::now(),
            next_id: AtomicU32::new(0),
        }
    }

    /// Time-based epochs of 1 ms: a transaction commits in the current millisecond's epoch and
    /// an epoch becomes stable 2 ms later, so every acknowledged latency is at least 1 ms.
    fn epoch_now(&self) -> u64 {
        self.epoch_origin.elapsed().as_millis() as u64 + 10
    }
}

#[derive(Debug, Default)]
struct ScriptedWorker<'e> {
    engine: Option<&'e ScriptedEngine>,
    id: u32,
    seq: u64,
    attempts: u64,
    commits: u64,
    conflicts: u64,
    user_aborts: u64,
    /// `drain_counters` calls so far.
    drains: u32,
}

#[derive(Debug)]
struct ScriptedTxn<'w, 'e> {
    w: &'w mut ScriptedWorker<'e>,
}

impl Engine for ScriptedEngine {
    type Worker<'e> = ScriptedWorker<'e>;
    fn name(&self) -> &'static str {
        "scripted"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn worker(&self) -> Result<ScriptedWorker<'_>, Error> {
        Ok(ScriptedWorker {
            engine: Some(self),
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            ..Default::default()
        })
    }
    fn load(&self, _: TableId, _: u64, _: &[u8]) -> Result<(), Error> {
        Ok(())
    }
    fn stable_epoch(&self) -> u64 {
        match self.ack {
            AckMode::EpochStable => self.epoch_now() - 2,
            _ => u64::MAX,
        }
    }
    fn ack_mode(&self) -> AckMode {
        self.ack
    }
}

impl<'e> Worker for ScriptedWorker<'e> {
    type Txn<'w>
        = ScriptedTxn<'w, 'e>
    where
        Self: 'w;
    fn begin(&mut self) -> ScriptedTxn<'_, 'e> {
        self.attempts += 1;
        let engine = self.engine.expect("worker made by the engine");
        engine.all_attempts.fetch_add(1, Ordering::Relaxed);
        if self.drains >= 2 {
            engine
                .after_measure_attempts
                .fetch_add(1, Ordering::Relaxed);
        }
        ScriptedTxn { w: self }
    }
    fn id(&self) -> u32 {
        self.id
    }
    fn drain_counters(&mut self, sink: &mut dyn FnMut(&'static str, u64)) {
        self.drains += 1;
        sink("attempts", std::mem::take(&mut self.attempts));
        sink("commits", std::mem::take(&mut self.commits));
        sink("conflicts", std::mem::take(&mut self.conflicts));
        sink("user_aborts", std::mem::take(&mut self.user_aborts));
    }
}

impl TxOps for ScriptedTxn<'_, '_> {
    fn read(&mut self, _: TableId, _: u64) -> TxResult<Option<&[u8]>> {
        let engine = self.w.engine.expect("worker made by the engine");
        if engine
            .error_after
            .is_some_and(|n| engine.all_attempts.load(Ordering::Relaxed) > n)
        {
            return Err(Error::Internal("scripted failure".into()).into());
        }
        Ok(None)
    }
    fn write(&mut self, _: TableId, _: u64, _: &[u8]) -> TxResult<()> {
        Ok(())
    }
    fn update(&mut self, _: TableId, _: u64, _: &mut dyn FnMut(&mut [u8])) -> TxResult<bool> {
        Ok(false)
    }
    fn insert(&mut self, _: TableId, _: u64, _: &[u8]) -> TxResult<bool> {
        Ok(true)
    }
    fn delete(&mut self, _: TableId, _: u64) -> TxResult<bool> {
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

impl Transaction for ScriptedTxn<'_, '_> {
    fn commit(self) -> TxResult<CommitInfo> {
        let w = self.w;
        w.seq += 1;
        if w.seq.is_multiple_of(CONFLICT_EVERY) {
            w.conflicts += 1;
            let cause = if (w.seq / CONFLICT_EVERY).is_multiple_of(2) {
                ConflictCause::ReadValidation
            } else {
                ConflictCause::LockBusy
            };
            return Err(TxError::Conflict(Conflict::new(cause)));
        }
        w.commits += 1;
        let engine = w.engine.expect("worker made by the engine");
        Ok(match engine.ack {
            AckMode::EpochStable => CommitInfo {
                epoch: engine.epoch_now(),
                acknowledged: false,
                read_only: false,
            },
            _ => CommitInfo {
                epoch: 0,
                acknowledged: true,
                read_only: false,
            },
        })
    }
    fn abort(self) {
        self.w.user_aborts += 1;
    }
}

#[derive(Debug)]
struct ScriptedProgram {
    user_abort: bool,
}

impl Program for ScriptedProgram {
    type Output = ();
    fn run<T: TxOps + ?Sized>(&self, tx: &mut T) -> TxResult<()> {
        tx.read(TableId(0), 1)?;
        if self.user_abort {
            Err(TxError::user_abort("scripted"))
        } else {
            Ok(())
        }
    }
    fn declare(&self, _: &mut AccessSet) {}
    fn kind(&self) -> &'static str {
        "scripted"
    }
}

#[derive(Debug)]
struct ScriptedGenerator {
    n: u64,
    program: ScriptedProgram,
}

impl Generator for ScriptedGenerator {
    type Program = ScriptedProgram;
    fn next(&mut self) -> &ScriptedProgram {
        self.n += 1;
        self.program.user_abort = self.n.is_multiple_of(USER_ABORT_EVERY);
        &self.program
    }
}

#[derive(Debug)]
struct ScriptedWorkload;

impl Workload for ScriptedWorkload {
    type Program = ScriptedProgram;
    type Generator = ScriptedGenerator;
    fn name(&self) -> String {
        "scripted".into()
    }
    fn schema(&self) -> Schema {
        Schema::new()
    }
    fn load<E: Engine>(&self, _: &E) -> Result<(), Error> {
        Ok(())
    }
    fn generator(&self, _: usize, _: u64) -> ScriptedGenerator {
        ScriptedGenerator {
            n: 0,
            program: ScriptedProgram { user_abort: false },
        }
    }
    fn parameters(&self) -> Vec<(&'static str, String)> {
        vec![]
    }
}

fn cfg(threads: usize, warmup_ms: u64, duration_ms: u64) -> RunConfig {
    RunConfig {
        threads,
        warmup: Duration::from_millis(warmup_ms),
        duration: Duration::from_millis(duration_ms),
        placement: Placement::PhysicalCores,
        retry: RetryPolicy::no_backoff(),
        ..RunConfig::default()
    }
}

#[test]
fn counts_add_up_and_match_the_engine_over_the_measured_interval() {
    let engine = ScriptedEngine::new(AckMode::AtCommit, None);
    let r = run_workload(&engine, &ScriptedWorkload, &cfg(2, 30, 100)).unwrap();
    assert!(
        r.commits > 0 && r.conflicts > 0 && r.user_aborts > 0,
        "{r:?}"
    );
    // The engine's own counters cover exactly the counted transactions.
    assert_eq!(r.counters["commits"], r.commits);
    assert_eq!(r.counters["conflicts"], r.conflicts);
    assert_eq!(r.counters["user_aborts"], r.user_aborts);
    assert_eq!(
        r.counters["attempts"],
        r.commits + r.conflicts + r.user_aborts
    );
    // Every conflict was retried, none abandoned; causes add up.
    assert_eq!(r.retries, r.conflicts);
    assert_eq!(r.abandoned, 0);
    assert_eq!(r.conflicts_by_cause.values().sum::<u64>(), r.conflicts);
    assert_eq!(r.conflicts_by_table.values().sum::<u64>(), r.conflicts);
    assert!(r.conflicts_by_cause.contains_key("read_validation"));
    assert!(r.conflicts_by_cause.contains_key("lock_busy"));
    // One latency sample per commit.
    assert_eq!(r.latency_ns.len(), r.commits);
    assert!(r.latency.p50_us > 0.0 && r.latency.max_us >= r.latency.p999_us);
    let expected_rate = r.conflicts as f64 / (r.commits + r.conflicts) as f64;
    assert!((r.abort_rate - expected_rate).abs() < 1e-12);
    assert!((r.throughput_tps - r.commits as f64 / r.elapsed_s).abs() < 1e-6);
    assert_eq!(r.per_thread_commits.len(), 2);
    assert_eq!(r.per_thread_commits.iter().sum::<u64>(), r.commits);
    // Warm-up transactions ran but were not counted.
    let all = engine.all_attempts.load(Ordering::Relaxed);
    assert!(
        all > r.counters["attempts"],
        "all {all} vs counted {}",
        r.counters["attempts"]
    );
    assert!(r.elapsed_s >= 0.1, "measured {}", r.elapsed_s);
}

#[test]
fn transactions_started_during_cool_down_run_but_are_not_counted() {
    let engine = ScriptedEngine::new(AckMode::AtCommit, None);
    let mut c = cfg(2, 10, 50);
    c.cooldown = Duration::from_millis(100);
    let start = Instant::now();
    let r = run_workload(&engine, &ScriptedWorkload, &c).unwrap();
    let wall = start.elapsed();
    assert!(
        wall >= Duration::from_millis(10 + 50 + 100),
        "warm-up + measure + cool-down took only {wall:?}"
    );
    // Workers kept running transactions after the measured interval ended.
    let after = engine.after_measure_attempts.load(Ordering::Relaxed);
    assert!(after > 0, "no attempt after the measured interval: {r:?}");
    // None of them is in the result: the runner's counts equal the engine's counters drained
    // on leaving the measured interval, which exclude every attempt begun after that drain.
    assert_eq!(
        r.counters["attempts"],
        r.commits + r.conflicts + r.user_aborts
    );
    assert_eq!(r.counters["commits"], r.commits);
    assert_eq!(r.latency_ns.len(), r.commits);
    let all = engine.all_attempts.load(Ordering::Relaxed);
    assert!(
        all >= r.counters["attempts"] + after,
        "all {all}, counted {}, after {after}",
        r.counters["attempts"]
    );
    // The measured interval is the measure phase alone, not the cool-down.
    assert!(
        r.elapsed_s >= 0.05 && r.elapsed_s < wall.as_secs_f64() - 0.1,
        "elapsed {} of {wall:?}",
        r.elapsed_s
    );
}

#[test]
fn a_cool_down_longer_than_24h_is_rejected() {
    let mut c = cfg(1, 0, 10);
    c.cooldown = Duration::from_secs(25 * 3600);
    let err = run_workload(&NoopEngine::new(&Schema::new()), &NoopWorkload, &c).unwrap_err();
    assert!(
        err.to_string().contains("cooldown") && err.to_string().contains("24h"),
        "{err}"
    );
}

#[test]
fn the_latency_cdf_is_monotone_and_ends_at_the_maximum() {
    let r = run_workload(
        &ScriptedEngine::new(AckMode::EpochStable, None),
        &ScriptedWorkload,
        &cfg(1, 0, 50),
    )
    .unwrap();
    assert!(r.commits > 0);
    let cdf = &r.latency_cdf;
    let percentiles: Vec<f64> = txlab_harness::runner::cdf_percentiles().collect();
    assert_eq!(
        cdf.iter().map(|p| p.percentile).collect::<Vec<_>>(),
        percentiles
    );
    assert!(cdf.windows(2).all(|w| w[0].latency_us <= w[1].latency_us));
    assert_eq!(cdf.last().unwrap().latency_us, r.latency.max_us);
    let p50 = cdf.iter().find(|p| p.percentile == 50.0).unwrap();
    assert_eq!(p50.latency_us, r.latency.p50_us);
    // Epoch acknowledgement: every latency is at least one 1 ms epoch.
    assert!(cdf[0].latency_us >= 999.0, "{:?}", cdf[0]);
}

#[test]
fn noop_engine_runs_through_the_runner() {
    let r = run_workload(
        &NoopEngine::new(&Schema::new()),
        &NoopWorkload,
        &cfg(1, 0, 50),
    )
    .unwrap();
    assert!(r.commits > 1000, "{r:?}");
    assert_eq!(r.conflicts + r.user_aborts, 0);
    assert_eq!(r.latency_ns.len(), r.commits);
    assert_eq!(r.ack, "commit");
    assert_eq!(r.cpus.len(), 1);
    assert!(r.cpu_time_s > 0.0);
}

#[test]
fn epoch_acknowledged_latency_ends_when_the_epoch_is_stable() {
    let engine = ScriptedEngine::new(AckMode::EpochStable, None);
    let r = run_workload(&engine, &ScriptedWorkload, &cfg(1, 10, 60)).unwrap();
    assert!(r.commits > 0);
    assert_eq!(
        r.unacknowledged, 0,
        "the epoch keeps advancing, so the final drain finishes"
    );
    assert_eq!(r.latency_ns.len(), r.commits);
    let one_ms = r.latency_ns.lowest_equivalent(1_000_000);
    assert!(
        r.latency_ns.min() >= one_ms,
        "min latency {} ns < 1 epoch",
        r.latency_ns.min()
    );
    assert_eq!(r.ack, "epoch");
}

#[test]
fn a_real_error_stops_the_run_early_and_is_returned() {
    let engine = ScriptedEngine::new(AckMode::AtCommit, Some(1000));
    let start = Instant::now();
    let e = run_workload(&engine, &ScriptedWorkload, &cfg(2, 0, 120_000)).unwrap_err();
    assert!(e.to_string().contains("scripted failure"), "{e}");
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "the run did not stop on the error"
    );
}

#[test]
fn a_bounded_retry_policy_abandons_transactions() {
    let engine = ScriptedEngine::new(AckMode::AtCommit, None);
    let mut c = cfg(1, 0, 50);
    c.retry = RetryPolicy::attempts(1).unwrap();
    let r = run_workload(&engine, &ScriptedWorkload, &c).unwrap();
    assert!(r.conflicts > 0);
    assert_eq!(r.abandoned, r.conflicts);
    assert_eq!(r.retries, 0);
}

#[test]
fn bad_run_configs_are_errors_naming_the_field() {
    let e = NoopEngine::new(&Schema::new());
    let err = run_workload(&e, &NoopWorkload, &cfg(0, 0, 10)).unwrap_err();
    assert!(
        err.to_string().contains("threads = 0") && err.to_string().contains("1..="),
        "{err}"
    );
    let err = run_workload(&e, &NoopWorkload, &cfg(1, 0, 0)).unwrap_err();
    assert!(err.to_string().contains("duration"), "{err}");
}

/// Harness overhead: empty transactions through the full per-transaction path must reach 20 M
/// per second per thread. Measured per CPU-second of the process (commits / CPU time), so a
/// machine shared with other work does not fail it; in release mode only.
///
/// Run: `cargo test --release -p txlab-harness --test runner -- --ignored harness_overhead`.
#[test]
#[ignore = "timing; run in release mode (see the doc comment)"]
fn harness_overhead_noop_reaches_20m_transactions_per_cpu_second() {
    if cfg!(debug_assertions) {
        panic!("build with --release: debug numbers mean nothing");
    }
    let r = run_workload(
        &NoopEngine::new(&Schema::new()),
        &NoopWorkload,
        &cfg(1, 100, 1000),
    )
    .unwrap();
    let per_cpu_second = r.commits as f64 / r.cpu_time_s;
    eprintln!(
        "noop: {:.1} M txn/s wall, {:.1} M txn per CPU-second",
        r.throughput_tps / 1e6,
        per_cpu_second / 1e6
    );
    assert!(
        per_cpu_second >= 20e6,
        "{:.1} M txn per CPU-second",
        per_cpu_second / 1e6
    );
}

#[test]
fn a_transaction_limit_ends_the_measured_interval_after_that_many_transactions() {
    let e = NoopEngine::new(&Schema::new());
    let w = NoopWorkload;
    // An hour-long interval that only the limit can end.
    let c = RunConfig {
        warmup: Duration::ZERO,
        cooldown: Duration::ZERO,
        threads: 2,
        ..RunConfig::default()
    }
    .with_limit(RunLimit::Transactions(5_000))
    .unwrap();
    assert_eq!(c.transaction_cap, Some(5_000));
    let started = Instant::now();
    let r = run_workload(&e, &w, &c).unwrap();
    assert_eq!(r.commits, 5_000, "exactly the limit counts");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the limit ended the run"
    );
    assert!(
        RunConfig::default()
            .with_limit(RunLimit::Transactions(0))
            .is_err()
    );
}

#[test]
fn conflicts_by_table_are_named_by_the_workload_schema() {
    let mut schema = Schema::new();
    schema.add(TableSpec::ordered("new_order", 8)).unwrap();
    schema.add(TableSpec::hash("stock", 8)).unwrap();
    let mut r = RunResult::empty(1).unwrap();
    r.conflicts_by_table = [
        ("phantom_validation@#0".to_string(), 3),
        ("read_validation@#1".to_string(), 2),
        ("lock_busy@-".to_string(), 1),
        ("lock_busy@#9".to_string(), 4),
    ]
    .into();
    r.name_tables(&schema);
    let named: Vec<(&str, u64)> = r
        .conflicts_by_table
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(
        named,
        [
            ("lock_busy@#9", 4),
            ("lock_busy@-", 1),
            ("phantom_validation@new_order", 3),
            ("read_validation@stock", 2),
        ]
    );
}
