//! The deterministic engines of `txlab-docc`: DOCC in its three modes (`docc`, `docc-snapshot`,
//! `docc-basic`) and the Calvin-style deterministic-locking baseline (`calvin`), driven by their
//! own sequencer (`run_metered`): the sequencer issues through the session's probe 0 and seals a
//! batch every `--batch-epoch-us`; worker `w` reports through probe `1 + w`.
//!
//! What differs from the interactive engines, in every result field's terms:
//!
//! - **threads**: `--threads` is the number of workers executing transactions; the sequencer
//!   (and Calvin's `--lock-managers` lock-manager threads) run besides them, and
//!   `oversubscribed` counts them. Threads are not pinned (`cpus` is all `None`).
//!   `per_thread_commits` is per worker (the sequencer commits nothing).
//! - **latency**: from a client's submission (its previous transaction's end) to the commit,
//!   so it includes the wait for the epoch to close (`ack` is `commit`).
//! - **aborts**: `retries` are DOCC's retries (a failed validation, Algorithm 3) or Calvin's
//!   reconnaissance restarts; neither is visible to the program. `abandoned` is 0.
//! - **counters**: `docc_retries`, `docc_validation_failures`, `docc_retry_lookups_saved`,
//!   `docc_retry_lookups_seen_before`, `docc_waits`, `docc_wait_ns`, `docc_settled`, `batches`, `restarts:<kind>`
//!   per transaction type, `ollp_restarts`; sampled engine counters `versions_allocated`,
//!   `versions_trimmed`, `tombstones_retired` (DOCC) and `lock_manager_busy_ns`,
//!   `reconnaissance`, `barriers` (Calvin).
//!
//! With `--check` the engine records its history on the sequence clock (a transaction of rank
//! `r` runs from `2r` to `2r + 1`) and keeps the input log; after the run the history must be
//! strictly serializable (equivalent to the serial execution in log order), the workload's
//! invariants must hold, and the **serial-replay oracle** must agree: `SerialEngine` loaded the
//! same way and executing the log's serial order reaches the same state digest.

use super::Descriptor;
use super::partitioned::{self, Transport};
use crate::driver::{Driven, Driver};
use crate::point::{EngineParams, PointCtx, PointOutcome, measure_loaded};
use crate::runner::RunConfig;
use crate::session::Session;
use crate::workloads::{AnyWorkload, WorkloadVisitor};
use serde::Serialize;
use std::marker::PhantomData;
use std::sync::Mutex;
use std::time::Duration;
use txlab_check::digest::StateDigest;
use txlab_check::serial::SerialEngine;
use txlab_check::{CheckOptions, MemoryRecorder, check};
use txlab_core::deterministic::Deterministic;
use txlab_core::protocol::history::Recorder;
use txlab_core::protocol::sync::Arc;
use txlab_core::{AckMode, Engine, Error, Program, Schema};
use txlab_docc::calvin::{Calvin, CalvinConfig};
use txlab_docc::{
    BatchConfig, Chain, Docc, DoccConfig, DriverConfig, InPlace, InputLog, Layout, StandAlone,
};
/// The largest `--concurrency` (outstanding transactions per node) and `--threads`/`--lock-managers`.
pub use txlab_docc::{MAX_CONCURRENCY, MAX_WORKERS};
use txlab_workload::Workload;

/// Default `--batch-epoch-us`: 5 ms epochs.
pub const DEFAULT_BATCH_EPOCH_US: u64 = 5_000;
/// Default `--concurrency` of the deterministic engines: outstanding transactions per node.
pub const DEFAULT_CONCURRENCY: usize = 4_096;
/// Client generators sharing the outstanding transactions (fewer if `--concurrency` is lower).
pub const CLIENTS: usize = 16;

/// The deterministic engines' parameters (`--batch-epoch-us`, `--concurrency`,
/// `--lock-managers`); other protocols ignore them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DeterministicParams {
    /// Epoch length of the sequencer's batches, microseconds, `1..=10_000_000`.
    pub batch_epoch_us: u64,
    /// Outstanding transactions per node, `1..=2^22`.
    pub concurrency: usize,
    /// Calvin: lock-manager threads, `1..=--threads`.
    pub lock_managers: usize,
    /// `--nodes`: run as a cluster of this many partitions (`super::partitioned`); `None`: the
    /// single-node engine.
    pub nodes: Option<u16>,
    /// `--transport` of a cluster.
    pub transport: Transport,
    /// `--pipeline` of a cluster: whether a multi-partition transaction's non-leading
    /// participants pass it without waiting for its outcome (`txlab_docc::cluster::Pipeline`);
    /// `None`: the engine's default (off for DOCC and Calvin).
    pub pipeline: Option<bool>,
}

impl Default for DeterministicParams {
    fn default() -> Self {
        Self {
            batch_epoch_us: DEFAULT_BATCH_EPOCH_US,
            concurrency: DEFAULT_CONCURRENCY,
            lock_managers: 1,
            nodes: None,
            transport: Transport::Inproc,
            pipeline: None,
        }
    }
}

impl DeterministicParams {
    fn batch(&self) -> BatchConfig {
        BatchConfig {
            epoch: Duration::from_micros(self.batch_epoch_us),
            ..BatchConfig::default()
        }
    }

    fn driver(&self, seed: u64, keep_log: bool) -> DriverConfig {
        DriverConfig {
            concurrency: self.concurrency,
            clients: CLIENTS.min(self.concurrency),
            seed,
            keep_log,
        }
    }
}

/// The engine flags DOCC reads.
const DOCC_FLAGS: &[&str] = &[
    "--batch-epoch-us",
    "--concurrency",
    "--nodes",
    "--transport",
    "--link-latency-us",
    "--pipeline",
];
/// ... and Calvin.
const CALVIN_FLAGS: &[&str] = &[
    "--batch-epoch-us",
    "--concurrency",
    "--lock-managers",
    "--nodes",
    "--transport",
    "--link-latency-us",
    "--pipeline",
];

/// What every line of [`PROTOCOLS`] shares.
const DETERMINISTIC: Descriptor = Descriptor {
    name: "",
    description: "",
    hidden: false,
    compared: false,
    flags: DOCC_FLAGS,
    accepts: Descriptor::any_workload,
    validate: validate_docc,
    run: docc,
};

/// The deterministic protocols, in `txlab list` order.
pub const PROTOCOLS: &[Descriptor] = &[
    Descriptor {
        name: "docc",
        description: "DOCC: deterministic OCC, validation in sequence order, snapshots, prefetching retry (JCST 2020)",
        run: docc,
        ..DETERMINISTIC
    },
    Descriptor {
        name: "docc-snapshot",
        description: "DOCC with multi-version snapshots, no prefetching retry (read-only transactions never block)",
        run: docc_snapshot,
        ..DETERMINISTIC
    },
    Descriptor {
        name: "docc-basic",
        description: "DOCC's basic algorithm: one version per record, every transaction waits for the one before",
        run: docc_basic,
        ..DETERMINISTIC
    },
    Descriptor {
        name: "calvin",
        description: "Calvin-style deterministic locking: lock manager grants in sequence order, OLLP reconnaissance (SIGMOD 2012)",
        flags: CALVIN_FLAGS,
        validate: validate_calvin,
        run: calvin,
        ..DETERMINISTIC
    },
];

fn check_range(flag: &'static str, value: u64, lo: u64, hi: u64) -> Result<(), Error> {
    if value < lo || value > hi {
        return Err(Error::invalid(flag, value, format!("{lo}..={hi}")));
    }
    Ok(())
}

fn validate_docc(threads: usize, p: &EngineParams, _run: &RunConfig) -> Result<(), Error> {
    let d = &p.deterministic;
    check_range("--threads", threads as u64, 1, MAX_WORKERS as u64)?;
    check_range("--batch-epoch-us", d.batch_epoch_us, 1, 10_000_000)?;
    check_range(
        "--concurrency",
        d.concurrency as u64,
        1,
        MAX_CONCURRENCY as u64,
    )
}

fn validate_calvin(threads: usize, p: &EngineParams, run: &RunConfig) -> Result<(), Error> {
    validate_docc(threads, p, run)?;
    let m = p.deterministic.lock_managers;
    if m == 0 || m > threads {
        return Err(Error::invalid(
            "--lock-managers",
            m,
            format!("1..={threads} (at most one per worker, --threads)"),
        ));
    }
    Ok(())
}

// The update fills txlab-docc's test-only `mutation` field when a test build turns it on.
#[allow(clippy::needless_update)]
pub(super) fn docc_config(
    p: &EngineParams,
    run: &RunConfig,
    prefetch: bool,
    check: bool,
) -> DoccConfig {
    DoccConfig {
        workers: run.threads,
        prefetch,
        batch: p.deterministic.batch(),
        sequence_clock: check,
        ..DoccConfig::default()
    }
}

pub(super) fn calvin_config(p: &EngineParams, run: &RunConfig, check: bool) -> CalvinConfig {
    CalvinConfig {
        workers: run.threads,
        lock_managers: p.deterministic.lock_managers,
        batch: p.deterministic.batch(),
        sequence_clock: check,
        ..CalvinConfig::default()
    }
}

/// A deterministic engine the family drives: its metered run (`StandAlone::metered`) and what
/// the harness samples.
trait Sequenced: StandAlone {
    /// Every thread it runs (workers, the sequencer, lock managers).
    fn threads(&self) -> usize;

    /// Cumulative engine counters, sampled at both ends of the measured interval.
    fn sampled(&self) -> Vec<(&'static str, u64)>;
}

impl<L: Layout, Rec: Recorder> Sequenced for Docc<L, Rec> {
    fn threads(&self) -> usize {
        self.config().workers + 1
    }

    fn sampled(&self) -> Vec<(&'static str, u64)> {
        let gc = self.gc();
        vec![
            ("versions_allocated", gc.versions_allocated),
            ("versions_trimmed", gc.versions_trimmed),
            ("tombstones_retired", gc.tombstones_retired),
        ]
    }
}

impl<Rec: Recorder> Sequenced for Calvin<Rec> {
    fn threads(&self) -> usize {
        self.config().workers + self.config().lock_managers + 1
    }

    fn sampled(&self) -> Vec<(&'static str, u64)> {
        let s = self.stats();
        vec![
            ("lock_manager_busy_ns", s.lock_manager_busy_ns),
            ("reconnaissance", s.reconnaissance),
            ("barriers", s.barriers),
        ]
    }
}

/// Where a checked run's input log is kept until the checks.
type KeptLog<Q> = Mutex<Option<InputLog<Q>>>;

/// The family's [`Driver`] (module docs); keeps the input log for `--check`.
struct SequencedDriver<'a, E: Sequenced, W: Workload>
where
    W::Program: Clone + Send + Sync,
{
    engine: &'a E,
    workload: &'a W,
    driver: DriverConfig,
    log: KeptLog<E::Entry<W::Program>>,
}

impl<E, W> Driver for SequencedDriver<'_, E, W>
where
    E: Sequenced,
    W: Workload,
    W::Program: Clone + Send + Sync,
{
    fn engine_threads(&self, _cfg: &RunConfig) -> usize {
        self.engine.threads()
    }

    fn ack(&self) -> AckMode {
        AckMode::AtCommit
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.engine.sampled()
    }

    fn drive(&self, session: &Session<'_>) -> Result<Driven, Error> {
        session.ready();
        let threads = session.config().threads;
        let (run, log) = self.engine.metered(self.workload, self.driver, session)?;
        if let Some(e) = run.first_error {
            return Err(e);
        }
        *self.log.lock().unwrap_or_else(|e| e.into_inner()) = log;
        Ok(Driven {
            cpus: vec![None; threads],
            counters: Vec::new(),
        })
    }
}

/// Checks a recorded run (module docs) and adds the findings to `out`.
fn checked<E, Q, W>(
    mut out: PointOutcome,
    engine: &E,
    recorder: &MemoryRecorder,
    workload: &W,
    log: Option<InputLog<Q>>,
) -> Result<PointOutcome, Error>
where
    E: Engine,
    Q: Program<Output = ()> + Clone + Sync,
    W: Workload,
{
    let report = check(&recorder.take(), CheckOptions::strict());
    let Some(c) = out.check.as_mut() else {
        return Ok(out);
    };
    c.history_checked = true;
    c.committed = report.committed;
    c.anomalies = report
        .counts
        .iter()
        .map(|(k, n)| format!("{k:?}: {n}"))
        .collect();
    let log = log.ok_or_else(|| Error::Internal("a checked run kept no input log".into()))?;
    let serial = SerialEngine::new(workload.schema());
    workload.load(&serial)?;
    let order: Vec<Q> = log.serial_order().into_iter().cloned().collect();
    serial.execute_log(&order, 1)?;
    let (expected, got) = (StateDigest::of_serial(&serial), StateDigest::of(engine)?);
    if expected != got {
        c.anomalies.push(format!(
            "serial replay: the final state differs from the serial execution of the input log \
             ({} transactions; digest {got} instead of {expected})",
            order.len()
        ));
    }
    Ok(out)
}

struct Visit<'a, F, G, E, R> {
    ctx: &'a PointCtx<'a>,
    plain: F,
    recorded: G,
    engines: PhantomData<fn() -> (E, R)>,
}

impl<F, G, E, R> WorkloadVisitor for Visit<'_, F, G, E, R>
where
    E: Sequenced,
    R: Sequenced,
    F: Fn(&Schema) -> Result<E, Error>,
    G: Fn(&Schema, Arc<MemoryRecorder>) -> Result<R, Error>,
{
    type Output = Result<PointOutcome, Error>;

    fn visit<W>(self, workload: &W) -> Self::Output
    where
        W: Workload + Sync,
        W::Program: Clone + Send + Sync + 'static,
    {
        let schema = workload.schema();
        let (run, check) = (self.ctx.run, self.ctx.check);
        let driver = self.ctx.engine.deterministic.driver(run.seed, check);
        if check {
            let recorder = Arc::new(MemoryRecorder::new());
            let engine = (self.recorded)(&schema, Arc::clone(&recorder))?;
            let d = SequencedDriver {
                engine: &engine,
                workload,
                driver,
                log: Mutex::new(None),
            };
            let out = measure_loaded(&engine, workload, &d, run, true)?;
            let log = d.log.into_inner().unwrap_or_else(|e| e.into_inner());
            checked(out, &engine, &recorder, workload, log)
        } else {
            let engine = (self.plain)(&schema)?;
            let d = SequencedDriver {
                engine: &engine,
                workload,
                driver,
                log: Mutex::new(None),
            };
            measure_loaded(&engine, workload, &d, run, false)
        }
    }
}

fn visit<E, R>(
    w: &AnyWorkload,
    ctx: &PointCtx<'_>,
    plain: impl Fn(&Schema) -> Result<E, Error>,
    recorded: impl Fn(&Schema, Arc<MemoryRecorder>) -> Result<R, Error>,
) -> Result<PointOutcome, Error>
where
    E: Sequenced,
    R: Sequenced,
{
    w.visit(Visit {
        ctx,
        plain,
        recorded,
        engines: PhantomData,
    })
}

fn docc_mode<L: Layout>(
    w: &AnyWorkload,
    ctx: &PointCtx<'_>,
    prefetch: bool,
) -> Result<PointOutcome, Error> {
    if let Some(nodes) = ctx.engine.deterministic.nodes {
        return partitioned::docc::<L, _>(w, ctx, nodes, prefetch, partitioned::InProcess(ctx));
    }
    let (p, run) = (ctx.engine, ctx.run);
    visit(
        w,
        ctx,
        |s| {
            Docc::<L>::builder()
                .config(docc_config(p, run, prefetch, false))
                .build(s)
        },
        |s, r| {
            Docc::<L, _>::builder()
                .config(docc_config(p, run, prefetch, true))
                .recorder(r)
                .build(s)
        },
    )
}

fn docc(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    docc_mode::<Chain>(w, ctx, true)
}

fn docc_snapshot(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    docc_mode::<Chain>(w, ctx, false)
}

fn docc_basic(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    docc_mode::<InPlace>(w, ctx, false)
}

fn calvin(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    if let Some(nodes) = ctx.engine.deterministic.nodes {
        return partitioned::calvin(w, ctx, nodes, partitioned::InProcess(ctx));
    }
    let (p, run) = (ctx.engine, ctx.run);
    visit(
        w,
        ctx,
        |s| {
            Calvin::builder()
                .config(calvin_config(p, run, false))
                .build(s)
        },
        |s, r| {
            Calvin::builder()
                .config(calvin_config(p, run, true))
                .recorder(r)
                .build(s)
        },
    )
}
