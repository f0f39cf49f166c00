//! The interactive OCC engines: Silo, TicToc, MVTO and their non-visible-write-rule variants,
//! driven by [`crate::runner::Interactive`] (one pinned worker per thread runs each transaction
//! from `begin` to `commit`).
//!
//! Each protocol is a build function (its engine with and without a history recorder) and one
//! line in [`PROTOCOLS`].

use super::Descriptor;
use crate::point::{EngineParams, PointCtx, PointOutcome, measure_loaded, with_history_check};
use crate::runner::Interactive;
use crate::workloads::{AnyWorkload, WorkloadVisitor};
use std::marker::PhantomData;
use txlab_check::MemoryRecorder;
use txlab_core::epoch::EpochConfig;
use txlab_core::sync::Arc;
use txlab_core::{Engine, Error, Schema};
use txlab_mvto::{Mvto, MvtoConfig, MvtoNwrSingle};
use txlab_silo::{Silo, SiloConfig, SiloNwrSingle};
use txlab_tictoc::{TicToc, TicTocConfig, TicTocNwrSingle};
use txlab_workload::Workload;

/// Silo's configuration from the engine flags (also `silo-ta`'s).
pub(crate) fn silo_config(p: &EngineParams) -> Result<SiloConfig, Error> {
    Ok(SiloConfig::default()
        .with_epoch(EpochConfig::every(p.epoch)?)
        .with_ack(p.ack))
}

fn tictoc_config(p: &EngineParams) -> Result<TicTocConfig, Error> {
    Ok(TicTocConfig::default()
        .with_epoch(EpochConfig::every(p.epoch)?)
        .with_ack(p.ack))
}

fn mvto_config(p: &EngineParams) -> Result<MvtoConfig, Error> {
    Ok(MvtoConfig::default()
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
    run: silo,
};

/// The interactive protocols, in `txlab list` order.
pub const PROTOCOLS: &[Descriptor] = &[
    Descriptor {
        name: "silo",
        description: "Silo OCC: epoch-based group commit, read validation, phantom stripes (SOSP 2013)",
        run: silo,
        ..INTERACTIVE
    },
    Descriptor {
        name: "tictoc",
        description: "TicToc OCC: commit timestamps computed from data (wts/rts), no global counter (SIGMOD 2016)",
        run: tictoc,
        ..INTERACTIVE
    },
    Descriptor {
        name: "mvto",
        description: "MVTO, Cicada style: per-worker clocks, version lists, rapid GC, group commit (SIGMOD 2017)",
        run: mvto,
        ..INTERACTIVE
    },
    Descriptor {
        name: "silo-nwr",
        description: "Silo + non-visible write rule: blind writes omitted via a 128-bit pivot CAS (sound variant)",
        run: silo_nwr,
        ..INTERACTIVE
    },
    Descriptor {
        name: "silo-nwr-single",
        description: "Silo + non-visible write rule for single blind writes only; read-only transactions mark nothing",
        run: silo_nwr_single,
        ..INTERACTIVE
    },
    Descriptor {
        name: "tictoc-nwr",
        description: "TicToc + non-visible write rule: epoch-prefixed timestamps, 128-bit pivot CAS (sound variant)",
        run: tictoc_nwr,
        ..INTERACTIVE
    },
    Descriptor {
        name: "tictoc-nwr-single",
        description: "TicToc + non-visible write rule for single blind writes only; no reader marks anything",
        run: tictoc_nwr_single,
        ..INTERACTIVE
    },
    Descriptor {
        name: "mvto-nwr",
        description: "MVTO + non-visible write rule: omitted blind writes link no version (sound variant)",
        run: mvto_nwr,
        ..INTERACTIVE
    },
    Descriptor {
        name: "mvto-nwr-single",
        description: "MVTO + non-visible write rule for single blind writes, placed just below a pivot by timestamp; no reader marks anything",
        run: mvto_nwr_single,
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

fn silo(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    let c = silo_config(ctx.engine)?;
    run(
        w,
        ctx,
        |s| Silo::new(s, c),
        |s, r| Silo::with_recorder(s, c, r),
    )
}

fn tictoc(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    let c = tictoc_config(ctx.engine)?;
    run(
        w,
        ctx,
        |s| TicToc::new(s, c),
        |s, r| TicToc::with_recorder(s, c, r),
    )
}

fn mvto(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    let c = mvto_config(ctx.engine)?;
    run(
        w,
        ctx,
        |s| Mvto::new(s, c),
        |s, r| Mvto::with_recorder(s, c, r),
    )
}

fn silo_nwr(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    let c = silo_config(ctx.engine)?;
    run(
        w,
        ctx,
        |s| Silo::new_nwr(s, c),
        |s, r| Silo::nwr_with_recorder(s, c, r),
    )
}

fn silo_nwr_single(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    let c = silo_config(ctx.engine)?;
    run(
        w,
        ctx,
        |s| SiloNwrSingle::new_with_omission(s, c),
        |s, r| SiloNwrSingle::with_omission(s, c, r),
    )
}

fn tictoc_nwr(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    let c = tictoc_config(ctx.engine)?;
    run(
        w,
        ctx,
        |s| TicToc::new_nwr(s, c),
        |s, r| TicToc::nwr_with_recorder(s, c, r),
    )
}

fn tictoc_nwr_single(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    let c = tictoc_config(ctx.engine)?;
    run(
        w,
        ctx,
        |s| TicTocNwrSingle::new_nwr_single(s, c),
        |s, r| TicTocNwrSingle::nwr_single_with_recorder(s, c, r),
    )
}

fn mvto_nwr(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    let c = mvto_config(ctx.engine)?;
    run(
        w,
        ctx,
        |s| Mvto::new_nwr(s, c),
        |s, r| Mvto::nwr_with_recorder(s, c, r),
    )
}

fn mvto_nwr_single(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    let c = mvto_config(ctx.engine)?;
    run(
        w,
        ctx,
        |s| MvtoNwrSingle::new_nwr_single(s, c),
        |s, r| MvtoNwrSingle::nwr_single_with_recorder(s, c, r),
    )
}

#[cfg(feature = "mutants")]
fn silo_mutant_skip_read_validation(
    w: &AnyWorkload,
    ctx: &PointCtx<'_>,
) -> Result<PointOutcome, Error> {
    let c = silo_config(ctx.engine)?.with_mutation(txlab_silo::Mutation::SkipReadValidation);
    run(
        w,
        ctx,
        |s| Silo::new(s, c),
        |s, r| Silo::with_recorder(s, c, r),
    )
}

/// Runs one point of an interactive engine built by `plain` (or, under `--check`, by
/// `recorded` with a history recorder, whose history is then checked).
fn run<E, R, F, G>(
    w: &AnyWorkload,
    ctx: &PointCtx<'_>,
    plain: F,
    recorded: G,
) -> Result<PointOutcome, Error>
where
    E: Engine,
    R: Engine,
    F: Fn(&Schema) -> Result<E, Error>,
    G: Fn(&Schema, Arc<MemoryRecorder>) -> Result<R, Error>,
{
    w.visit(Visit {
        ctx,
        plain,
        recorded,
        engines: PhantomData,
    })
}

struct Visit<'a, F, G, E, R> {
    ctx: &'a PointCtx<'a>,
    plain: F,
    recorded: G,
    engines: PhantomData<fn() -> (E, R)>,
}

impl<F, G, E, R> WorkloadVisitor for Visit<'_, F, G, E, R>
where
    E: Engine,
    R: Engine,
    F: Fn(&Schema) -> Result<E, Error>,
    G: Fn(&Schema, Arc<MemoryRecorder>) -> Result<R, Error>,
{
    type Output = Result<PointOutcome, Error>;

    fn visit<W>(self, workload: &W) -> Self::Output
    where
        W: Workload + Sync,
        W::Program: Clone + Send + 'static,
    {
        let schema = workload.schema();
        let (run, check) = (self.ctx.run, self.ctx.check);
        if check {
            let recorder = Arc::new(MemoryRecorder::new());
            let engine = (self.recorded)(&schema, Arc::clone(&recorder))?;
            let driver = Interactive {
                engine: &engine,
                workload,
            };
            let out = measure_loaded(&engine, workload, &driver, run, true)?;
            Ok(with_history_check(out, &recorder))
        } else {
            let engine = (self.plain)(&schema)?;
            let driver = Interactive {
                engine: &engine,
                workload,
            };
            measure_loaded(&engine, workload, &driver, run, false)
        }
    }
}
