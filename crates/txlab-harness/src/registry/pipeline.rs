//! The OCC-batching validator pipeline of `txlab-batch` (Ding, Kot, Gehrke, "Improving
//! Optimistic Concurrency Control Through Transaction Batching and Operation Reordering", PVLDB
//! 12(2), 2018) in its five modes: `batch-base`, `batch-batch`, `batch-sr`, `batch-vc`,
//! `batch-srvc`.
//!
//! The pipeline is driven by its own clients ([`Pipeline::run_metered`]): a processor
//! multiplexes many live transactions, so the interactive runner cannot drive it. What differs
//! from the interactive engines, in every result field's terms:
//!
//! - **threads**: `--threads` is the pipeline's processor count (clients, storage workers,
//!   reordering workers, batch preparation and the validation worker run besides them). Threads
//!   are not pinned (`cpus` is all `None`); `oversubscribed` compares every thread the engine
//!   runs with the CPUs the placement offers. `per_thread_commits` is per client.
//! - **latency**: from a client's submission to the commit decision, restarts included; commits
//!   are acknowledged when the decision is made (`ack` is `commit`).
//! - **aborts**: the restarts of counted transactions (`conflicts`, `retries`); their causes by
//!   validator stage are the counters `prevalidation_aborts`, `reordering_aborts`,
//!   `validation_aborts`, `stale_when_read_aborts` (over the measured interval, every
//!   transaction's). The pipeline restarts until commit while the run lasts; a transaction
//!   still aborting one second after the run stopped issuing is `abandoned` (the bounded drain
//!   of `txlab_batch::pipeline::driver`), so every run ends whatever its concurrency and table.
//! - **counters**: also `batches`, `reordered_txns`, `reorder_ns`, `reorder_failures`, and,
//!   over the whole run (warm-up and drain included), `peak_live` (most live transactions in
//!   one processor), the stage times `stage_reads` / `stage_read_ns` (attempts whose reads were
//!   fetched, and the time from asking the storage to having every value back) and
//!   `stage_validations` / `stage_validation_ns` (from sending to the validator to handling the
//!   decision), and `processor_drains` / `processor_drained` (events found waiting each time a
//!   processor took its queue: their ratio is its mean queue length).
//!
//! With `--check` the engine records through a [`MemoryRecorder`] (warm-up included: the whole
//! history is checked) and the workload's invariants are checked after the run.

use super::Descriptor;
use crate::driver::{Driven, Driver};
use crate::point::{EngineParams, PointCtx, PointOutcome, measure_loaded, with_history_check};
use crate::runner::RunConfig;
use crate::session::Session;
use crate::workloads::{AnyWorkload, WorkloadKind, WorkloadVisitor};
use serde::Serialize;
pub use txlab_batch::pipeline::config::{MAX_BATCH_SIZE, MAX_COMPONENT_THREADS, MAX_CONCURRENCY};
use txlab_batch::{Algorithm, Mode, Pipeline, PipelineConfig, Refinement, ReorderPolicy};
use txlab_check::MemoryRecorder;
use txlab_core::protocol::history::Recorder;
use txlab_core::protocol::sync::Arc;
use txlab_core::{AckMode, Error};
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

/// The feedback vertex set algorithm of the pipeline's reordering workers (`--fvs`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum PolicyChoice {
    /// Prod-degree: maximize commits (the paper's "mc", the default).
    #[default]
    #[cfg_attr(feature = "clap", value(alias = "mc"))]
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

/// The engine flags every pipeline mode reads.
const FLAGS: &[&str] = &["--batch-size", "--concurrency"];
/// ... and those of the mode with validator batching in arrival order.
const BATCHING_FLAGS: &[&str] = &["--batch-size", "--concurrency", "--reorder-workers"];
/// ... and those of the modes with validator reordering.
const REORDERING_FLAGS: &[&str] = &[
    "--batch-size",
    "--concurrency",
    "--reorder-workers",
    "--fvs",
    "--policy",
    "--fvs-refinement",
];

/// What every line of [`PROTOCOLS`] shares.
const PIPELINE: Descriptor = Descriptor {
    name: "",
    description: "",
    hidden: false,
    compared: false,
    flags: FLAGS,
    accepts: no_scans,
    validate: validate_base,
    run: run_base,
};

/// The pipeline's modes, in `txlab list` order.
pub const PROTOCOLS: &[Descriptor] = &[
    Descriptor {
        name: "batch-base",
        description: "OCC-batching pipeline, centralized validator, no batching (VLDB 2018 `base`)",
        ..PIPELINE
    },
    Descriptor {
        name: "batch-batch",
        description: "OCC-batching pipeline: storage + validator batching in arrival order (`batch`)",
        flags: BATCHING_FLAGS,
        validate: validate_batch,
        run: run_batch,
        ..PIPELINE
    },
    Descriptor {
        name: "batch-sr",
        description: "OCC-batching pipeline: storage batching with writes-first reordering (`sr`)",
        validate: validate_sr,
        run: run_sr,
        ..PIPELINE
    },
    Descriptor {
        name: "batch-vc",
        description: "OCC-batching pipeline: validator batching with FVS reordering (`vc`)",
        flags: REORDERING_FLAGS,
        validate: validate_vc,
        run: run_vc,
        ..PIPELINE
    },
    Descriptor {
        name: "batch-srvc",
        description: "OCC-batching pipeline: storage + validator reordering (`srvc`, the paper's best)",
        flags: REORDERING_FLAGS,
        validate: validate_srvc,
        run: run_srvc,
        ..PIPELINE
    },
];

/// One `validate` and one `run` per mode, so each descriptor line names its mode once.
macro_rules! modes {
    ($($validate:ident, $run:ident => $mode:expr;)*) => {$(
        fn $validate(threads: usize, p: &EngineParams, run: &RunConfig) -> Result<(), Error> {
            validate($mode, threads, &p.batch, run)
        }
        fn $run(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
            w.visit(Visit { mode: $mode, ctx })
        }
    )*};
}

modes! {
    validate_base, run_base => Mode::Base;
    validate_batch, run_batch => Mode::Batch;
    validate_sr, run_sr => Mode::Sr;
    validate_vc, run_vc => Mode::Vc;
    validate_srvc, run_srvc => Mode::Srvc;
}

/// The pipeline has no range scans (`TxOps::scan` fails with `ScanUnsupported`), so a scanning
/// workload would fail at its first scan: refused before anything runs.
fn no_scans(name: &'static str, w: WorkloadKind) -> Result<(), Error> {
    if !w.scans() {
        return Ok(());
    }
    Err(Error::invalid(
        "--protocol with --workload",
        format!("{name} with {}", w.name()),
        format!(
            "a workload without range scans for the batch-* protocols: {} scans (TPC-C's \
             Delivery, OrderStatus, StockLevel, Payment by name) and the OCC-batching pipeline \
             has no range scans; run {} with silo, tictoc, mvto, their -nwr variants or silo-ta",
            w.name(),
            w.name()
        ),
    ))
}

/// Checks that `mode` accepts `threads` and the batching parameters (before anything runs);
/// the error names the flag.
pub fn validate(mode: Mode, threads: usize, p: &BatchParams, run: &RunConfig) -> Result<(), Error> {
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
    pipeline_config(mode, threads, p, run.seed).validate()
}

struct Visit<'a> {
    mode: Mode,
    ctx: &'a PointCtx<'a>,
}

impl WorkloadVisitor for Visit<'_> {
    type Output = Result<PointOutcome, Error>;

    fn visit<W>(self, workload: &W) -> Self::Output
    where
        W: Workload + Sync,
        W::Program: Clone + Send + 'static,
    {
        let (run, check) = (self.ctx.run, self.ctx.check);
        let config = pipeline_config(self.mode, run.threads, &self.ctx.engine.batch, run.seed);
        let schema = workload.schema();
        if check {
            let recorder = Arc::new(MemoryRecorder::new());
            let engine = Pipeline::builder()
                .config(config)
                .recorder(Arc::clone(&recorder))
                .build(&schema)?;
            let driver = PipelineDriver {
                engine: &engine,
                workload,
            };
            let out = measure_loaded(&engine, workload, &driver, run, true)?;
            drop(engine);
            Ok(with_history_check(out, &recorder))
        } else {
            let engine = Pipeline::builder().config(config).build(&schema)?;
            let driver = PipelineDriver {
                engine: &engine,
                workload,
            };
            measure_loaded(&engine, workload, &driver, run, false)
        }
    }
}

/// The pipeline's [`Driver`] (module docs).
struct PipelineDriver<'a, W, Rec: Recorder> {
    engine: &'a Pipeline<Rec>,
    workload: &'a W,
}

impl<W, Rec> Driver for PipelineDriver<'_, W, Rec>
where
    W: Workload,
    W::Program: Clone + Send + 'static,
    Rec: Recorder,
{
    fn engine_threads(&self, _cfg: &RunConfig) -> usize {
        pipeline_threads(self.engine.config())
    }

    fn ack(&self) -> AckMode {
        AckMode::AtCommit
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let v = self.engine.validator_counters();
        vec![
            ("batches", v.batches),
            ("reordered_txns", v.reordered_txns),
            ("reorder_ns", v.reorder_ns),
            ("reorder_failures", v.reorder_failures),
            ("prevalidation_aborts", v.prevalidation_aborts),
            ("reordering_aborts", v.reordering_aborts),
            ("validation_aborts", v.validation_aborts),
            ("stale_when_read_aborts", v.stale_when_read_aborts),
        ]
    }

    fn drive(&self, session: &Session<'_>) -> Result<Driven, Error> {
        session.ready();
        let cfg = session.config();
        let run = self.engine.run_metered(self.workload, cfg.seed, session)?;
        Ok(Driven {
            cpus: vec![None; cfg.threads],
            counters: std::iter::once(("peak_live", run.peak_live as u64))
                .chain(run.stages.counters())
                .collect(),
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choices_reach_the_pipeline() {
        let params = BatchParams {
            policy: PolicyChoice::Rdeg,
            fvs_refinement: RefinementChoice::Minimal,
            ..BatchParams::default()
        };
        let config = pipeline_config(Mode::Srvc, 1, &params, 1);
        assert_eq!(config.policy, ReorderPolicy::Rdeg);
        assert_eq!(config.refinement, Refinement::Minimal);
        let default = pipeline_config(Mode::Srvc, 1, &BatchParams::default(), 1);
        assert_eq!(default.refinement, Refinement::None);
        assert_eq!(default.policy, ReorderPolicy::ProdDegree);
    }

    #[test]
    fn zero_reorder_workers_is_the_single_thread_layout() {
        let single = BatchParams {
            reorder_workers: 0,
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
        let e = validate(Mode::Srvc, 1, &too_many, &run)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--reorder-workers") && e.contains("0..=256"),
            "{e}"
        );
        assert!(validate(Mode::Srvc, 1, &single, &run).is_ok());
    }
}
