//! `noop`: the hidden protocol whose transactions do nothing ([`crate::noop::NoopEngine`]),
//! driven like an interactive engine, to measure the harness's own per-transaction cost.
//!
//! It runs only the `noop` workload: the engine stores nothing, so a real workload's programs
//! would find their rows absent and fail their own invariant checks.

use super::Descriptor;
use crate::noop::NoopEngine;
use crate::point::{PointCtx, PointOutcome, measure_loaded};
use crate::runner::Interactive;
use crate::workloads::{AnyWorkload, WorkloadKind, WorkloadVisitor};
use txlab_core::Error;
use txlab_workload::Workload;

/// The protocols of this family.
pub const PROTOCOLS: &[Descriptor] = &[Descriptor {
    name: "noop",
    description: "transactions that do nothing; measures the harness's own overhead",
    hidden: true,
    compared: false,
    flags: &[],
    accepts: noop_workload_only,
    validate: Descriptor::nothing_to_validate,
    run: noop,
}];

fn noop_workload_only(name: &'static str, w: WorkloadKind) -> Result<(), Error> {
    if matches!(w, WorkloadKind::Noop) {
        return Ok(());
    }
    Err(Error::invalid(
        "--protocol with --workload",
        format!("{name} with {}", w.name()),
        "--workload noop: the noop engine stores nothing, so another workload's reads would \
         find their rows absent",
    ))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noop_refuses_a_workload_with_data() {
        assert!(noop_workload_only("noop", WorkloadKind::Noop).is_ok());
        let e = noop_workload_only("noop", WorkloadKind::from_name("ycsb-c").expect("ycsb-c"))
            .expect_err("ycsb-c needs stored rows");
        let msg = e.to_string();
        assert!(
            msg.contains("noop with ycsb-c") && msg.contains("--workload noop"),
            "{msg}"
        );
    }
}
