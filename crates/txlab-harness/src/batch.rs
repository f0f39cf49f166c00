//! The OCC-batching engines of `txlab-batch` (Ding, Kot, Gehrke, "Improving Optimistic
//! Concurrency Control Through Transaction Batching and Operation Reordering", PVLDB 12(2), 2018)
//! behind the harness: the centralized-validator [`Pipeline`] in its five modes (`batch-base`,
//! `batch-batch`, `batch-sr`, `batch-vc`, `batch-srvc`) and thread-aware batching over Silo
//! (`silo-ta`).
//!
//! Neither engine is driven by the generic interactive runner ([`crate::runner`]): a pipeline
//! processor multiplexes many live transactions, and thread-aware batching decides which worker
//! runs which transaction. Both have their own drivers ([`Pipeline::run`], [`ThreadAware::run`]);
//! this module calls them and converts their statistics into a [`RunResult`]. Differences from
//! the interactive runner, stated in every field's terms:
//!
//! - **threads**: `--threads` is the pipeline's processor count (clients, storage workers,
//!   reordering workers, batch preparation and the validation worker run besides them) and
//!   thread-aware batching's worker count (the workers form the batches themselves; no other
//!   thread runs). Threads are not pinned (`cpus` is all `None`); `oversubscribed` compares every
//!   thread the engine runs with the CPUs the placement offers.
//! - **warm-up**: a separate run of the same driver for `--warmup` whose statistics are discarded
//!   (the engine's state, caches and store stay warm). The pipeline rejects intervals under 1 ms,
//!   so a shorter non-zero warm-up is rounded up to 1 ms; warm-ups longer than the pipeline's 1 h
//!   limit run in 1 h pieces.
//! - **cool-down**: not applicable and ignored: both drivers stop issuing at the deadline and
//!   finish every transaction already issued, which is counted, so `elapsed_s` (the driver's own
//!   clock) slightly exceeds `--duration`.
//! - **latency**: the drivers measure microseconds (pipeline: submission to commit decision,
//!   restarts included; thread-aware: batch formation to commit, retries included), converted to
//!   the harness's nanosecond histogram. Commits are acknowledged when the decision is made
//!   (`ack` is `commit`; Silo's epoch acknowledgement is not waited for by `silo-ta`).
//! - **not measured** (left zero or empty): `abandoned` (both drivers retry until commit),
//!   `conflicts_by_cause`, `commits_by_kind`, `per_thread_commits`, `unacknowledged`.
//!   Engine-specific numbers go to `counters` instead (validator aborts by stage, batches,
//!   reordering time, peak live transactions; batches and assignment time).
//!
//! With `--check` the engines record through a [`MemoryRecorder`] (warm-up included: the whole
//! history is checked) and the workload's invariants are checked after the run.

use crate::registry::{CheckSummary, EngineParams, PointOutcome, Protocol, silo_config};
use crate::resources::process_usage;
use crate::runner::{
    LatencySummary, MAX_LATENCY_NS, MAX_THREADS, RunConfig, RunResult, latency_cdf,
};
use crate::topology::plan_for_this_machine;
use clap::ValueEnum;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;
use txlab_batch::pipeline::config::{MAX_BATCH_SIZE, MAX_COMPONENT_THREADS, MAX_CONCURRENCY};
use txlab_batch::{
    Algorithm, Mode, Pipeline, PipelineConfig, Refinement, ReorderPolicy, RunLimit, ThreadAware,
    ThreadAwareConfig,
};
use txlab_check::MemoryRecorder;
use txlab_core::history::Recorder;
use txlab_core::sync::Arc;
use txlab_core::{Engine, Error};
use txlab_silo::Silo;
use txlab_workload::Workload;

/// Default `--batch-size`: transactions per validator batch and requests per storage batch (the
/// paper's 40).
pub const DEFAULT_BATCH_SIZE: usize = 40;
/// Default `--concurrency`: live transactions in the pipeline (the paper's 300).
pub const DEFAULT_CONCURRENCY: usize = 300;
/// Default `--reorder-workers` (the pipeline's default, the paper's 4).
pub const DEFAULT_REORDER_WORKERS: usize = 4;
/// Transaction clients of the pipeline (the paper's 2; fewer if `--concurrency` is 1).
pub const PIPELINE_CLIENTS: usize = 2;
/// The longest interval one pipeline run accepts.
const PIPELINE_MAX_RUN: Duration = Duration::from_secs(3600);
/// The shortest interval one pipeline run accepts.
const PIPELINE_MIN_RUN: Duration = Duration::from_millis(1);

/// The feedback vertex set algorithm of the pipeline's reordering workers (`--fvs`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FvsChoice {
    /// Sort-based greedy, multi factor 2 (Algorithm 2; the paper's and the pipeline's default).
    #[default]
    Sort,
    /// SCC-based greedy (Algorithm 1).
    Scc,
    /// SCC-based greedy, components of at most 10 nodes solved exactly (`hybrid_10`).
    Hybrid,
}

impl FvsChoice {
    /// The largest component `hybrid` solves exactly.
    pub const HYBRID_MAX_EXACT: usize = 10;

    /// The algorithm this choice names.
    pub fn algorithm(self) -> Algorithm {
        match self {
            FvsChoice::Sort => Algorithm::SortGreedy { multi: 2 },
            FvsChoice::Scc => Algorithm::SccGreedy,
            FvsChoice::Hybrid => Algorithm::hybrid(Self::HYBRID_MAX_EXACT),
        }
    }
}

/// The pass over the feedback vertex set of the pipeline's reordering workers
/// (`--fvs-refinement`; `txlab_batch::Refinement`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum RefinementChoice {
    /// The algorithm's set as it is (the paper's algorithms, the default).
    #[default]
    None,
    /// Put back every aborted transaction that closes no cycle (a minimal set).
    Minimal,
}

impl RefinementChoice {
    /// The refinement this choice names.
    pub fn refinement(self) -> Refinement {
        match self {
            RefinementChoice::None => Refinement::None,
            RefinementChoice::Minimal => Refinement::Minimal,
        }
    }
}

/// The reordering policy of the pipeline's reordering workers (`--policy`; Ding, Kot, Gehrke,
/// §5.5).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum PolicyChoice {
    /// Prod-degree: maximize commits (the paper's "mc", the default).
    #[default]
    #[value(alias = "mc")]
    Prod,
    /// Fewest restarts enters the feedback vertex set first, ties by prod-degree.
    Rct,
    /// Largest in-degree × out-degree / 2^restarts enters the feedback vertex set first.
    Rdeg,
}

impl PolicyChoice {
    /// The pipeline policy this choice names.
    pub fn policy(self) -> ReorderPolicy {
        match self {
            PolicyChoice::Prod => ReorderPolicy::ProdDegree,
            PolicyChoice::Rct => ReorderPolicy::Rct,
            PolicyChoice::Rdeg => ReorderPolicy::Rdeg,
        }
    }
}

/// The batching engines' parameters (`--batch-size`, `--concurrency`, `--reorder-workers`,
/// `--fvs`, `--policy`, `--fvs-refinement`); other protocols ignore them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BatchParams {
    /// Pipeline: transactions per validator batch and requests per storage batch,
    /// `1..=65536`. (`silo-ta` keeps the paper's 4 transactions per thread and batch.)
    pub batch_size: usize,
    /// Pipeline: live transactions in the system, `1..=2^20`.
    pub concurrency: usize,
    /// Pipeline: reordering worker threads (modes `vc` and `srvc`), `0..=256`; 0 is the
    /// single-thread layout (modes `batch`, `vc`, `srvc`).
    pub reorder_workers: usize,
    /// Pipeline: the feedback vertex set algorithm.
    pub fvs: FvsChoice,
    /// Pipeline: the reordering policy.
    pub policy: PolicyChoice,
    /// Pipeline: the pass over the feedback vertex set.
    pub fvs_refinement: RefinementChoice,
}

impl Default for BatchParams {
    fn default() -> Self {
        Self {
            batch_size: DEFAULT_BATCH_SIZE,
            concurrency: DEFAULT_CONCURRENCY,
            reorder_workers: DEFAULT_REORDER_WORKERS,
            fvs: FvsChoice::Sort,
            policy: PolicyChoice::Prod,
            fvs_refinement: RefinementChoice::None,
        }
    }
}

/// The pipeline mode a protocol names, `None` for the others.
pub fn pipeline_mode(protocol: Protocol) -> Option<Mode> {
    match protocol {
        Protocol::BatchBase => Some(Mode::Base),
        Protocol::BatchBatch => Some(Mode::Batch),
        Protocol::BatchSr => Some(Mode::Sr),
        Protocol::BatchVc => Some(Mode::Vc),
        Protocol::BatchSrvc => Some(Mode::Srvc),
        _ => None,
    }
}

fn pipeline_config(mode: Mode, threads: usize, p: &BatchParams, seed: u64) -> PipelineConfig {
    let mut c = PipelineConfig::default()
        .with_mode(mode)
        .with_batch_size(p.batch_size)
        .with_concurrency(p.concurrency)
        .with_algorithm(p.fvs.algorithm())
        .with_policy(p.policy.policy())
        .with_refinement(p.fvs_refinement.refinement());
    c = c.with_threads(
        PIPELINE_CLIENTS.min(p.concurrency.max(1)),
        threads,
        c.storage_workers,
        p.reorder_workers,
    );
    c.seed = seed;
    c
}

/// Thread-aware batching with the paper's batch of 4 transactions per thread (§5.6).
fn thread_aware_config(threads: usize) -> ThreadAwareConfig {
    ThreadAwareConfig::new(threads)
}

/// Checks that `protocol` accepts `threads`, the batching parameters and the run's intervals
/// (before anything runs); the error names the flag.
pub fn validate(
    protocol: Protocol,
    threads: usize,
    p: &BatchParams,
    run: &RunConfig,
) -> Result<(), Error> {
    if let Some(mode) = pipeline_mode(protocol) {
        let flag = |name: &'static str, value: usize, max: usize| {
            if value == 0 || value > max {
                Err(Error::invalid(name, value, format!("1..={max}")))
            } else {
                Ok(())
            }
        };
        flag("--batch-size", p.batch_size, MAX_BATCH_SIZE)?;
        flag("--concurrency", p.concurrency, MAX_CONCURRENCY)?;
        if p.reorder_workers > MAX_COMPONENT_THREADS {
            return Err(Error::invalid(
                "--reorder-workers",
                p.reorder_workers,
                format!("0..={MAX_COMPONENT_THREADS} (0: the single-thread layout)"),
            ));
        }
        flag("--threads", threads, MAX_COMPONENT_THREADS).map_err(|_| {
            Error::invalid(
                "--threads",
                threads,
                format!("1..={MAX_COMPONENT_THREADS} for the pipeline (its processors)"),
            )
        })?;
        if run.duration > PIPELINE_MAX_RUN {
            return Err(Error::invalid(
                "--duration",
                format!("{:?}", run.duration),
                "at most 1h for the batch-* protocols",
            ));
        }
        pipeline_config(mode, threads, p, run.seed).validate()?;
    } else if protocol == Protocol::SiloTa {
        if threads == 0 || threads > MAX_THREADS {
            return Err(Error::invalid(
                "--threads",
                threads,
                format!("1..={MAX_THREADS}"),
            ));
        }
        thread_aware_config(threads).validate()?;
    }
    Ok(())
}

/// Runs a `batch-*` protocol (`mode`) on `workload`.
pub(crate) fn run_pipeline<W>(
    mode: Mode,
    workload: &W,
    params: &EngineParams,
    run: &RunConfig,
    check: bool,
) -> Result<PointOutcome, Error>
where
    W: Workload,
    W::Program: Clone + Send + 'static,
{
    validate(pipeline_protocol(mode), run.threads, &params.batch, run)?;
    let config = pipeline_config(mode, run.threads, &params.batch, run.seed);
    let schema = workload.schema();
    if check {
        let recorder = Arc::new(MemoryRecorder::new());
        let engine = Pipeline::with_recorder(&schema, config, Arc::clone(&recorder))?;
        let out = measure_pipeline(&engine, workload, run, check)?;
        drop(engine);
        Ok(crate::registry::with_history_check(out, &recorder))
    } else {
        let engine = Pipeline::new(&schema, config)?;
        measure_pipeline(&engine, workload, run, check)
    }
}

fn pipeline_protocol(mode: Mode) -> Protocol {
    match mode {
        Mode::Base => Protocol::BatchBase,
        Mode::Batch => Protocol::BatchBatch,
        Mode::Sr => Protocol::BatchSr,
        Mode::Vc => Protocol::BatchVc,
        _ => Protocol::BatchSrvc,
    }
}

/// The threads a pipeline runs: clients, processors, storage workers, the validation worker,
/// and (with validator batching) batch preparation and (with reordering) the reordering workers.
fn pipeline_threads(c: &PipelineConfig) -> usize {
    use txlab_batch::pipeline::ValidatorBatching;
    let validator = match c.mode.validator() {
        ValidatorBatching::Off => 1,
        _ if c.reorder_workers == 0 => 1,
        ValidatorBatching::ArrivalOrder => 2,
        _ => 2 + c.reorder_workers,
    };
    c.clients + c.processors + c.storage_workers + validator
}

fn measure_pipeline<W, Rec>(
    engine: &Pipeline<Rec>,
    workload: &W,
    run: &RunConfig,
    check: bool,
) -> Result<PointOutcome, Error>
where
    W: Workload,
    W::Program: Clone + Send + 'static,
    Rec: Recorder,
{
    workload.load(engine)?;
    let mut warmup = run.warmup;
    if !warmup.is_zero() {
        warmup = warmup.max(PIPELINE_MIN_RUN);
    }
    while !warmup.is_zero() {
        let piece = warmup.min(PIPELINE_MAX_RUN);
        engine.run(workload, RunLimit::Duration(piece), run.seed)?;
        warmup -= piece;
    }
    let usage0 = process_usage()?;
    // A different seed, so the measured run does not replay the warm-up's transactions.
    let stats = engine.run(
        workload,
        RunLimit::Duration(run.duration.max(PIPELINE_MIN_RUN)),
        run.seed.wrapping_add(1),
    )?;
    let usage1 = process_usage()?;
    let v = stats.validator;
    let counters = [
        ("batches", v.batches),
        ("reordered_txns", v.reordered_txns),
        ("reorder_ns", v.reorder_ns),
        ("reorder_failures", v.reorder_failures),
        ("prevalidation_aborts", v.prevalidation_aborts),
        ("reordering_aborts", v.reordering_aborts),
        ("validation_aborts", v.validation_aborts),
        ("stale_when_read_aborts", v.stale_when_read_aborts),
        ("peak_live", stats.peak_live as u64),
    ];
    let result = to_result(Measured {
        threads: run.threads,
        engine_threads: pipeline_threads(engine.config()),
        run,
        elapsed: stats.elapsed,
        commits: stats.committed,
        user_aborts: stats.user_aborts,
        conflicts: stats.restarts,
        counters: &counters,
        latency_us: &stats.latency_us,
        cpu: usage1.cpu().saturating_sub(usage0.cpu()),
        peak_rss_bytes: usage1.max_rss_bytes,
    })?;
    Ok(outcome(result, engine, workload, check))
}

/// Runs `silo-ta`: thread-aware batching over Silo.
pub(crate) fn run_silo_ta<W>(
    workload: &W,
    params: &EngineParams,
    run: &RunConfig,
    check: bool,
) -> Result<PointOutcome, Error>
where
    W: Workload,
    W::Program: Clone + Send,
{
    validate(Protocol::SiloTa, run.threads, &params.batch, run)?;
    let mut config = thread_aware_config(run.threads);
    config.retry = run.retry;
    let schema = workload.schema();
    if check {
        let recorder = Arc::new(MemoryRecorder::new());
        let silo = Silo::with_recorder(&schema, silo_config(params)?, Arc::clone(&recorder))?;
        let out = measure_thread_aware(ThreadAware::new(silo, config)?, workload, run, check)?;
        Ok(crate::registry::with_history_check(out, &recorder))
    } else {
        let silo = Silo::new(&schema, silo_config(params)?)?;
        measure_thread_aware(ThreadAware::new(silo, config)?, workload, run, check)
    }
}

fn measure_thread_aware<E, W>(
    wrapper: ThreadAware<E>,
    workload: &W,
    run: &RunConfig,
    check: bool,
) -> Result<PointOutcome, Error>
where
    E: Engine,
    W: Workload,
    W::Program: Clone + Send,
{
    workload.load(wrapper.engine())?;
    if !run.warmup.is_zero() {
        wrapper.run(workload, RunLimit::Duration(run.warmup), run.seed)?;
    }
    let usage0 = process_usage()?;
    let stats = wrapper.run(
        workload,
        RunLimit::Duration(run.duration),
        run.seed.wrapping_add(1),
    )?;
    let usage1 = process_usage()?;
    let counters = [
        ("batches", stats.batches),
        ("assign_ns", stats.assign_time.as_nanos() as u64),
    ];
    let result = to_result(Measured {
        threads: run.threads,
        engine_threads: run.threads,
        run,
        elapsed: stats.elapsed,
        commits: stats.committed,
        user_aborts: stats.user_aborts,
        conflicts: stats.conflicts,
        counters: &counters,
        latency_us: &stats.latency_us,
        cpu: usage1.cpu().saturating_sub(usage0.cpu()),
        peak_rss_bytes: usage1.max_rss_bytes,
    })?;
    Ok(outcome(result, wrapper.engine(), workload, check))
}

/// What a batching driver measured, in the terms [`to_result`] needs.
struct Measured<'a> {
    threads: usize,
    engine_threads: usize,
    run: &'a RunConfig,
    elapsed: Duration,
    commits: u64,
    user_aborts: u64,
    conflicts: u64,
    counters: &'a [(&'static str, u64)],
    latency_us: &'a Histogram<u64>,
    cpu: Duration,
    peak_rss_bytes: u64,
}

/// A histogram of microseconds as one of nanoseconds (values clamped to [`MAX_LATENCY_NS`]).
fn to_nanos(us: &Histogram<u64>) -> Result<Histogram<u64>, Error> {
    let mut ns = Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3)
        .map_err(|e| Error::Internal(format!("creating a latency histogram: {e:?}")))?;
    for v in us.iter_recorded() {
        let value = v
            .value_iterated_to()
            .saturating_mul(1000)
            .min(MAX_LATENCY_NS);
        ns.record_n(value.max(1), v.count_at_value())
            .map_err(|e| Error::Internal(format!("latency histogram: {e:?}")))?;
    }
    Ok(ns)
}

fn to_result(m: Measured<'_>) -> Result<RunResult, Error> {
    let latency_ns = to_nanos(m.latency_us)?;
    let elapsed_s = m.elapsed.as_secs_f64();
    let attempts = m.commits + m.conflicts;
    Ok(RunResult {
        threads: m.threads,
        elapsed_s,
        commits: m.commits,
        user_aborts: m.user_aborts,
        conflicts: m.conflicts,
        // Every conflict abort was re-executed.
        retries: m.conflicts,
        abandoned: 0,
        conflicts_by_cause: BTreeMap::new(),
        counters: m
            .counters
            .iter()
            .map(|&(k, v)| (k.to_string(), v))
            .collect(),
        commits_by_kind: BTreeMap::new(),
        unacknowledged: 0,
        throughput_tps: m.commits as f64 / elapsed_s.max(1e-9),
        abort_rate: if attempts == 0 {
            0.0
        } else {
            m.conflicts as f64 / attempts as f64
        },
        latency: LatencySummary::of(&latency_ns),
        latency_cdf: latency_cdf(&latency_ns),
        per_thread_commits: Vec::new(),
        cpu_time_s: m.cpu.as_secs_f64(),
        peak_rss_bytes: m.peak_rss_bytes,
        cpus: vec![None; m.threads],
        oversubscribed: plan_for_this_machine(m.run.placement, m.engine_threads).oversubscribed,
        ack: "commit".into(),
        latency_ns,
    })
}

fn outcome<E: Engine, W: Workload>(
    result: RunResult,
    engine: &E,
    workload: &W,
    check: bool,
) -> PointOutcome {
    let parameters = workload
        .parameters()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let check = check.then(|| CheckSummary {
        history_checked: false,
        committed: 0,
        anomalies: Vec::new(),
        invariant: workload.check(engine).err().map(|e| e.to_string()),
    });
    PointOutcome {
        result,
        parameters,
        check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    /// The engine parameters `txlab run ARGS` parses to.
    fn run_params(args: &[&str]) -> Result<crate::cli::ParamArgs, clap::Error> {
        let mut argv = vec!["txlab", "run"];
        argv.extend_from_slice(args);
        match Cli::try_parse_from(argv)?.command {
            Command::Run(r) => Ok(r.params),
            other => panic!("parsed as {other:?}"),
        }
    }

    fn policy_of(args: &[&str]) -> Result<PolicyChoice, clap::Error> {
        run_params(args).map(|p| p.policy)
    }

    #[test]
    fn the_policy_flag_parses_and_reaches_the_pipeline() {
        assert_eq!(policy_of(&[]).unwrap(), PolicyChoice::Prod);
        assert_eq!(policy_of(&["--policy", "mc"]).unwrap(), PolicyChoice::Prod);
        assert_eq!(policy_of(&["--policy", "rct"]).unwrap(), PolicyChoice::Rct);
        assert_eq!(
            policy_of(&["--policy", "rdeg"]).unwrap(),
            PolicyChoice::Rdeg
        );
        let e = policy_of(&["--policy", "fifo"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let msg = e.to_string();
        for needle in ["--policy", "fifo", "prod", "rct", "rdeg"] {
            assert!(msg.contains(needle), "message lacks {needle:?}: {msg}");
        }
        let params = BatchParams {
            policy: PolicyChoice::Rdeg,
            ..BatchParams::default()
        };
        let config = pipeline_config(Mode::Srvc, 1, &params, 1);
        assert_eq!(config.policy, ReorderPolicy::Rdeg);
    }

    #[test]
    fn zero_reorder_workers_is_the_single_thread_layout() {
        let parse = |args: &[&str]| run_params(args).map(|p| p.reorder_workers);
        assert_eq!(parse(&[]).unwrap(), DEFAULT_REORDER_WORKERS);
        let workers = parse(&["--reorder-workers", "0"]).unwrap();
        assert_eq!(workers, 0);
        let single = BatchParams {
            reorder_workers: workers,
            ..BatchParams::default()
        };
        let staged = BatchParams::default();
        let config = pipeline_config(Mode::Srvc, 1, &single, 1);
        assert_eq!(config.reorder_workers, 0);
        assert!(config.validate().is_ok());
        // 2 clients, 1 processor, 2 storage workers, then the validator's threads: one in the
        // single-thread layout (as many as `base`), batch preparation + 4 reordering workers +
        // validation when staged, batch preparation + validation for `batch`.
        let threads = |mode, p: &BatchParams| pipeline_threads(&pipeline_config(mode, 1, p, 1));
        assert_eq!(threads(Mode::Srvc, &single), 6);
        assert_eq!(threads(Mode::Batch, &single), 6);
        assert_eq!(threads(Mode::Base, &single), 6);
        assert_eq!(threads(Mode::Srvc, &staged), 11);
        assert_eq!(threads(Mode::Batch, &staged), 7);
        assert_eq!(threads(Mode::Sr, &staged), 6);
        let too_many = BatchParams {
            reorder_workers: 257,
            ..BatchParams::default()
        };
        let run = RunConfig::default();
        let e = validate(Protocol::BatchSrvc, 1, &too_many, &run)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--reorder-workers") && e.contains("0..=256"),
            "{e}"
        );
        assert!(validate(Protocol::BatchSrvc, 1, &single, &run).is_ok());
    }

    #[test]
    fn the_fvs_refinement_flag_parses_and_reaches_the_pipeline() {
        let parse = |args: &[&str]| run_params(args).map(|p| p.fvs_refinement);
        assert_eq!(parse(&[]).unwrap(), RefinementChoice::None);
        let minimal = parse(&["--fvs-refinement", "minimal"]).unwrap();
        assert_eq!(minimal, RefinementChoice::Minimal);
        let e = parse(&["--fvs-refinement", "maximal"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let msg = e.to_string();
        for needle in ["--fvs-refinement", "maximal", "none", "minimal"] {
            assert!(msg.contains(needle), "message lacks {needle:?}: {msg}");
        }
        let params = BatchParams {
            fvs_refinement: minimal,
            ..BatchParams::default()
        };
        let config = pipeline_config(Mode::Srvc, 1, &params, 1);
        assert_eq!(config.refinement, Refinement::Minimal);
        let default = pipeline_config(Mode::Srvc, 1, &BatchParams::default(), 1);
        assert_eq!(default.refinement, Refinement::None);
    }
}
