//! Reordering policies against tail latency (Ding, Kot, Gehrke, VLDB 2018, §5.5, Figures
//! 16–18): `srvc` with prod-degree ("mc", maximize commits), `rct` and `rdeg`, next to `base` and
//! `batch`, on the micro benchmark (concurrency 300, batch 40). Prints throughput, mean latency
//! and the 90th to 100th percentiles. "FVS aborts/commit" counts the aborts the policy chose (the
//! feedback vertex sets); the other aborts (stale reads found by pre-validation or the final
//! validation) are the same whatever the policy.
//!
//! ```text
//! CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
//!   cargo run --release -p txlab-batch --example pipeline_policies -- \
//!   [seconds per point] [repeats] [staged|single]
//! ```
//!
//! The last argument picks the validator layout of the batching configurations: `staged` (the
//! default; the paper's stages on their own threads, 4 reordering workers) or `single` (one
//! thread forms, reorders and validates each batch: `PipelineConfig::reorder_workers = 0`).
//!
//! Every point runs `repeats` times (default 3), the configurations interleaved (base, batch,
//! mc, rct, rdeg, base, ...), and the table shows medians, so load from other processes hits
//! every configuration alike.

mod common;

use common::median;
use txlab_batch::pipeline::{Mode, Pipeline, PipelineConfig, ReorderPolicy, RunLimit, RunStats};
use txlab_core::Error;
use txlab_workload::{Micro, MicroConfig, Workload};

fn main() -> Result<(), Error> {
    let duration = common::seconds_arg(1, 1.5)?;
    let repeats = common::repeats_arg(2, 3)?;
    let reorder_workers = match common::word_arg(3, "staged").as_str() {
        "staged" => PipelineConfig::default().reorder_workers,
        "single" => 0,
        other => return Err(Error::invalid("layout", other, "staged or single")),
    };
    let layout = |c: PipelineConfig| {
        c.with_threads(c.clients, c.processors, c.storage_workers, reorder_workers)
    };
    println!("layout: {reorder_workers} reordering workers (0: single-thread layout)");
    common::print_load("before");
    println!(
        "| theta | config | commits/s | aborts/commit | FVS aborts/commit | avg µs | p90 µs | p95 µs | p99 µs | p99.9 µs | max µs |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for theta in [0.8, 0.9, 0.99] {
        let micro = Micro::new(MicroConfig {
            theta,
            ..MicroConfig::default()
        })?;
        let mut configs: Vec<(String, PipelineConfig)> = vec![
            (
                "base".into(),
                PipelineConfig::default().with_mode(Mode::Base),
            ),
            (
                "batch".into(),
                layout(PipelineConfig::default().with_mode(Mode::Batch)),
            ),
        ];
        for policy in ReorderPolicy::ALL {
            configs.push((
                format!("srvc {}", policy.paper_name()),
                layout(
                    PipelineConfig::default()
                        .with_mode(Mode::Srvc)
                        .with_policy(policy),
                ),
            ));
        }
        let mut runs: Vec<Vec<RunStats>> = vec![Vec::new(); configs.len()];
        for repeat in 0..repeats {
            for (c, (_, cfg)) in configs.iter().enumerate() {
                let db = Pipeline::builder().config(*cfg).build(&micro.schema())?;
                micro.load(&db)?;
                runs[c].push(db.run(&micro, RunLimit::Duration(duration), 42 + repeat as u64)?);
            }
        }
        for (c, (name, _)) in configs.iter().enumerate() {
            let med =
                |f: &dyn Fn(&RunStats) -> f64| median(&runs[c].iter().map(f).collect::<Vec<_>>());
            let p = |q: f64| med(&|s| s.latency_percentile_us(q) as f64);
            println!(
                "| {theta} | {name} | {:.0} | {:.2} | {:.2} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} |",
                med(&|s| s.throughput()),
                med(&|s| s.abort_rate()),
                med(&|s| s.validator.reordering_aborts as f64 / s.committed.max(1) as f64),
                med(&|s| s.mean_latency_us()),
                p(90.0),
                p(95.0),
                p(99.0),
                p(99.9),
                med(&|s| s.latency_us.max() as f64),
            );
        }
    }
    common::print_load("after");
    Ok(())
}
