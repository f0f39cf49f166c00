//! `noop`: the hidden protocol whose transactions do nothing ([`crate::noop::NoopEngine`]),
//! driven like an interactive engine, to measure the harness's own per-transaction cost.

use super::Descriptor;
use crate::noop::NoopEngine;
use crate::point::{PointCtx, PointOutcome, measure_loaded};
use crate::runner::Interactive;
use crate::workloads::{AnyWorkload, WorkloadVisitor};
use txlab_core::Error;
use txlab_workload::Workload;

/// The protocols of this family.
pub const PROTOCOLS: &[Descriptor] = &[Descriptor {
    name: "noop",
    description: "transactions that do nothing; measures the harness's own overhead",
    hidden: true,
    compared: false,
    flags: &[],
    accepts: Descriptor::any_workload,
    validate: Descriptor::nothing_to_validate,
    run: noop,
}];

fn noop(w: &AnyWorkload, ctx: &PointCtx<'_>) -> Result<PointOutcome, Error> {
    w.visit(Visit { ctx })
}

struct Visit<'a> {
    ctx: &'a PointCtx<'a>,
}

impl WorkloadVisitor for Visit<'_> {
    type Output = Result<PointOutcome, Error>;

    fn visit<W>(self, workload: &W) -> Self::Output
    where
        W: Workload + Sync,
        W::Program: Clone + Send + 'static,
    {
        let engine = NoopEngine::new(&workload.schema());
        let driver = Interactive {
            engine: &engine,
            workload,
        };
        measure_loaded(&engine, workload, &driver, self.ctx.run, self.ctx.check)
    }
}
