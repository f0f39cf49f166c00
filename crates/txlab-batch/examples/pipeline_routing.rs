//! Why restarted transactions kept aborting: storage lag. Runs `base`, `sr` and `srvc` on the
//! micro benchmark in three configurations: storage requests spread over the two storage workers
//! round-robin and processor events handled in arrival order; routed by key, arrival order;
//! routed by key with commit decisions handled first (the defaults). Reports
//! how many validator aborts had a read that was already stale when the storage served it (a
//! write committed before the read had not reached the storage).
//!
//! ```text
//! CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
//!   cargo run --release -p txlab-batch --example pipeline_routing -- [seconds per point]
//! ```

mod common;

use txlab_batch::pipeline::{
    Mode, Pipeline, PipelineConfig, ProcessorScheduling, RunLimit, StorageRouting,
};
use txlab_core::Error;
use txlab_workload::{Micro, MicroConfig, Workload};

fn main() -> Result<(), Error> {
    let duration = common::seconds_arg(1, 1.5)?;
    common::print_load("before");
    println!(
        "| theta | mode | routing, processor order | commits/s | aborts/commit | stale-when-read aborts/commit | other aborts/commit | p95 latency µs |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for theta in [0.7, 0.8, 0.9] {
        let micro = Micro::new(MicroConfig {
            theta,
            ..MicroConfig::default()
        })?;
        for mode in [Mode::Base, Mode::Sr, Mode::Srvc] {
            for (routing, order) in [
                (
                    StorageRouting::RoundRobin,
                    ProcessorScheduling::ArrivalOrder,
                ),
                (StorageRouting::ByKey, ProcessorScheduling::ArrivalOrder),
                (StorageRouting::ByKey, ProcessorScheduling::WritePhaseFirst),
            ] {
                let cfg = PipelineConfig::default()
                    .with_mode(mode)
                    .with_storage_routing(routing)
                    .with_processor_scheduling(order);
                let db = Pipeline::builder().config(cfg).build(&micro.schema())?;
                micro.load(&db)?;
                let s = db.run(&micro, RunLimit::Duration(duration), 42)?;
                let commits = s.committed.max(1) as f64;
                let stale = s.validator.stale_when_read_aborts as f64 / commits;
                println!(
                    "| {theta} | {} | {routing:?}, {order:?} | {:.0} | {:.3} | {:.3} | {:.3} | {} |",
                    s.mode,
                    s.throughput(),
                    s.abort_rate(),
                    stale,
                    s.abort_rate() - stale,
                    s.latency_percentile_us(95.0),
                );
            }
        }
    }
    common::print_load("after");
    Ok(())
}
