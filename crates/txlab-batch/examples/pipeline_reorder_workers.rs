//! Reordering workers 1 to 4 (Ding, Kot, Gehrke, VLDB 2018, appendix B): `srvc` on the micro
//! benchmark; throughput, and one reordering worker's rate (transactions pre-validated, graphed
//! and reordered per second of its busy time) against the commit rate.
//!
//! ```text
//! CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
//!   cargo run --release -p txlab-batch --example pipeline_reorder_workers -- [seconds per point] [repeats]
//! ```
//!
//! Medians of `repeats` (default 3) interleaved runs per point.

mod common;

use common::median;
use txlab_batch::pipeline::{Mode, Pipeline, PipelineConfig, RunLimit, RunStats};
use txlab_core::Error;
use txlab_workload::{Micro, MicroConfig, Workload};

fn main() -> Result<(), Error> {
    let duration = common::seconds_arg(1, 1.5)?;
    let repeats = common::repeats_arg(2, 3)?;
    common::print_load("before");
    println!(
        "| theta | reorder workers | commits/s | aborts/commit | avg latency µs | p95 latency µs | reorder txns/s (1 worker busy) | reorder rate / commit rate |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for theta in [0.7, 0.9, 0.99] {
        let micro = Micro::new(MicroConfig {
            theta,
            ..MicroConfig::default()
        })?;
        let mut runs: Vec<Vec<RunStats>> = vec![Vec::new(); 4];
        for repeat in 0..repeats {
            for workers in 1..=4 {
                let cfg = PipelineConfig::default()
                    .with_mode(Mode::Srvc)
                    .with_threads(2, 1, 2, workers);
                let db = Pipeline::builder().config(cfg).build(&micro.schema())?;
                micro.load(&db)?;
                runs[workers - 1].push(db.run(
                    &micro,
                    RunLimit::Duration(duration),
                    42 + repeat as u64,
                )?);
            }
        }
        for (w, runs) in runs.iter().enumerate() {
            let med =
                |f: &dyn Fn(&RunStats) -> f64| median(&runs.iter().map(f).collect::<Vec<_>>());
            let rate = med(&|s| s.reorder_rate().unwrap_or(0.0));
            let ratio = med(&|s| s.reorder_rate().unwrap_or(0.0) / s.throughput().max(1e-9));
            println!(
                "| {theta} | {} | {:.0} | {:.2} | {:.0} | {:.0} | {rate:.0} | {ratio:.1} |",
                w + 1,
                med(&|s| s.throughput()),
                med(&|s| s.abort_rate()),
                med(&|s| s.mean_latency_us()),
                med(&|s| s.latency_percentile_us(95.0) as f64),
            );
        }
    }
    common::print_load("after");
    Ok(())
}
