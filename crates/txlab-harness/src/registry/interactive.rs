//! The interactive OCC engines: Silo, TicToc, MVTO and their non-visible-write-rule variants,
//! driven by [`crate::runner::Interactive`] (one pinned worker per thread runs each transaction
//! from `begin` to `commit`).
//!
//! Every engine is built by its family's [`Builder`] (`Silo::builder()`, ...), the same path an
//! embedding program takes: each line of [`PROTOCOLS`] names the family and the write-omission
//! policy, and `run` builds the engine (with a history recorder under `--check`) from the
//! engine flags.

use super::Descriptor;
use crate::point::{EngineParams, PointCtx, PointOutcome, measure_loaded, with_history_check};
use crate::runner::Interactive;
use crate::workloads::{AnyWorkload, WorkloadVisitor};
use txlab_check::MemoryRecorder;
use txlab_core::protocol::epoch::EpochConfig;
use txlab_core::protocol::sync::Arc;
use txlab_core::{Engine, Error};
use txlab_mvto::Mvto;
use txlab_nwr::{Builder, Family, NoNwr, Nwr, NwrSingleWrite, WriteOmission};
use txlab_occ::OccConfig;
use txlab_silo::Silo;
use txlab_tictoc::TicToc;
use txlab_workload::Workload;

/// Family `F`'s configuration from the engine flags (Silo's is also `silo-ta`'s).
pub(crate) fn occ_config<F: Family>(
    p: &EngineParams,
) -> Result<OccConfig<F::Mutation, F::Settings>, Error> {
    Ok(OccConfig::default()
        .with_epoch(EpochConfig::every(p.epoch)?)
        .with_ack(p.ack))
}

/// The engine flags every interactive engine reads.
const FLAGS: &[&str] = &["--epoch-ms", "--ack"];

/// What every line of [`PROTOCOLS`] shares.
const INTERACTIVE: Descriptor = Descriptor {
    name: "",
    description: "",
    hidden: false,
    compared: true,
    flags: FLAGS,
    accepts: Descriptor::any_workload,
    validate: Descriptor::nothing_to_validate,
    run: run::<Silo, NoNwr>,
};

/// The interactive protocols, in `txlab list` order.
pub const PROTOCOLS: &[Descriptor] = &[
    Descriptor {
        name: "silo",
        description: "Silo OCC: epoch-based group commit, read validation, phantom stripes (SOSP 2013)",
        run: run::<Silo, NoNwr>,
        ..INTERACTIVE
    },
    Descriptor {
        name: "tictoc",
        description: "TicToc OCC: commit timestamps computed from data (wts/rts), no global counter (SIGMOD 2016)",
        run: run::<TicToc, NoNwr>,
        ..INTERACTIVE
    },
    Descriptor {
        name: "mvto",
        description: "MVTO, Cicada style: per-worker clocks, version lists, rapid GC, group commit (SIGMOD 2017)",
        run: run::<Mvto, NoNwr>,
        ..INTERACTIVE
    },
    Descriptor {
        name: "silo-nwr",
        description: "Silo + non-visible write rule: blind writes omitted via a 128-bit pivot CAS (sound variant)",
        run: run::<Silo, Nwr>,
        ..INTERACTIVE
    },
    Descriptor {
        name: "silo-nwr-single",
        description: "Silo + non-visible write rule for single blind writes only; read-only transactions mark nothing",
        run: run::<Silo, NwrSingleWrite>,
        ..INTERACTIVE
    },
    Descriptor {
        name: "tictoc-nwr",
        description: "TicToc + non-visible write rule: epoch-prefixed timestamps, 128-bit pivot CAS (sound variant)",
        run: run::<TicToc, Nwr>,
        ..INTERACTIVE
    },
    Descriptor {
        name: "tictoc-nwr-single",
        description: "TicToc + non-visible write rule for single blind writes only; no reader marks anything",
        run: run::<TicToc, NwrSingleWrite>,
        ..INTERACTIVE
    },
    Descriptor {
        name: "mvto-nwr",
        description: "MVTO + non-visible write rule: omitted blind writes link no version (sound variant)",
        run: run::<Mvto, Nwr>,
        ..INTERACTIVE
    },
    Descriptor {
        name: "mvto-nwr-single",
        description: "MVTO + non-visible write rule for single blind writes, placed just below a pivot by timestamp; no reader marks anything",
        run: run::<Mvto, NwrSingleWrite>,
        ..INTERACTIVE
    },
];

/// The test-only broken engines (feature `mutants`), hidden.
#[cfg(feature = "mutants")]
pub const MUTANTS: &[Descriptor] = &[Descriptor {
    name: "silo-mutant-skip-read-validation",
    description: "BROKEN on purpose (tests only): Silo committing without read validation",
    hidden: true,
    compared: false,
    run: silo_mutant_skip_read_validation,
    ..INTERACTIVE
}];

#[cfg(feature = "mutants")]
fn silo_mutant_skip_read_validation(
    w: &AnyWorkload,
    ctx: &PointCtx<'_>,
) -> Result<PointOutcome, Error> {
    let c = occ_config::<Silo>(ctx.engine)?.with_mutation(txlab_silo::Mutation::SkipReadValidation);
    w.visit(Visit {
        ctx,
        builder: Silo::builder().config(c),
    })
}

/// Runs one point of family `F` under write-omission policy `W`, configured by the engine flags;
/// under `--check` the engine records its history, which is then checked.
fn run<F: Family, W: WriteOmission>(
    w: &AnyWorkload,
    ctx: &PointCtx<'_>,
) -> Result<PointOutcome, Error> {
    w.visit(Visit {
        ctx,
        builder: Builder::<F>::new()
            .config(occ_config::<F>(ctx.engine)?)
            .nwr(W::default()),
    })
}

struct Visit<'a, F: Family, W: WriteOmission> {
    ctx: &'a PointCtx<'a>,
    builder: Builder<F, txlab_core::protocol::history::NoRecorder, W>,
}

impl<F: Family, W: WriteOmission> WorkloadVisitor for Visit<'_, F, W> {
    type Output = Result<PointOutcome, Error>;

    fn visit<L>(self, workload: &L) -> Self::Output
    where
        L: Workload + Sync,
        L::Program: Clone + Send + 'static,
    {
        let schema = workload.schema();
        let (run, check) = (self.ctx.run, self.ctx.check);
        if check {
            let recorder = Arc::new(MemoryRecorder::new());
            let engine = self
                .builder
                .recorder(Arc::clone(&recorder))
                .build(&schema)?;
            let out = measure(&engine, workload, run, true)?;
            Ok(with_history_check(out, &recorder))
        } else {
            let engine = self.builder.build(&schema)?;
            measure(&engine, workload, run, false)
        }
    }
}

/// Loads `workload` into `engine` and measures it, one interactive worker per thread.
fn measure<E: Engine, L>(
    engine: &E,
    workload: &L,
    run: &crate::runner::RunConfig,
    check: bool,
) -> Result<PointOutcome, Error>
where
    L: Workload + Sync,
    L::Program: Clone + Send + 'static,
{
    let driver = Interactive { engine, workload };
    measure_loaded(engine, workload, &driver, run, check)
}
