//! The pipeline modes against skew (Ding, Kot, Gehrke, VLDB 2018, §5.3 and §5.4, Figures 10–15):
//! `base`, `batch`, `sr`, `vc`, `srvc` on the micro benchmark (100K keys, 5 reads and 5 writes
//! per transaction, one key shared) and on SmallBank (100K customers), concurrency 300, batch 40,
//! sort-based greedy with prod-degree. Prints one markdown table per workload.
//!
//! ```text
//! CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
//!   cargo run --release -p txlab-batch --example pipeline_modes -- \
//!   [seconds per point] [micro|smallbank|both] [repeats]
//! ```
//!
//! Every point runs `repeats` times, the modes interleaved (base, batch, ..., srvc, base, ...),
//! and the table shows medians, so load from other processes hits every mode alike. Columns:
//! "aborts/commit" is validator aborts (restarts) per commit; "stale-read share" is the fraction
//! of those aborts with a read that was already stale when the storage served it
//! (`ValidatorSnapshot::stale_when_read_aborts`); "reorder txns/s" is one reordering worker's
//! rate per second of busy time, to compare with the commit rate; "× base" is the mode's median
//! throughput over `base`'s.

mod common;

use common::median;
use std::time::Duration;
use txlab_batch::pipeline::{Mode, Pipeline, PipelineConfig, RunLimit, RunStats};
use txlab_core::Error;
use txlab_workload::{Micro, MicroConfig, SmallBank, SmallBankConfig, Workload};

const THETAS: [f64; 5] = [0.5, 0.7, 0.8, 0.9, 0.99];

fn run_point<W>(workload: &W, mode: Mode, duration: Duration, seed: u64) -> Result<RunStats, Error>
where
    W: Workload,
    W::Program: Clone + Send + 'static,
{
    let db = Pipeline::new(
        &workload.schema(),
        PipelineConfig::default().with_mode(mode),
    )?;
    workload.load(&db)?;
    db.run(workload, RunLimit::Duration(duration), seed)
}

fn table<W, F>(make: F, duration: Duration, repeats: usize) -> Result<(), Error>
where
    F: Fn(f64) -> Result<W, Error>,
    W: Workload,
    W::Program: Clone + Send + 'static,
{
    common::print_load("before");
    println!(
        "| theta | mode | commits/s | × base | aborts/commit | stale-read share | avg latency µs | p95 latency µs | reorder txns/s (1 worker busy) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for theta in THETAS {
        let workload = make(theta)?;
        let mut runs: Vec<Vec<RunStats>> = vec![Vec::new(); Mode::ALL.len()];
        for repeat in 0..repeats {
            for (m, mode) in Mode::ALL.into_iter().enumerate() {
                runs[m].push(run_point(&workload, mode, duration, 42 + repeat as u64)?);
            }
        }
        let med = |m: usize, f: &dyn Fn(&RunStats) -> f64| {
            median(&runs[m].iter().map(f).collect::<Vec<_>>())
        };
        let base = med(0, &|s| s.throughput());
        for (m, mode) in Mode::ALL.into_iter().enumerate() {
            let stale = med(m, &|s| {
                let v = s.validator;
                let aborts = v.prevalidation_aborts + v.reordering_aborts + v.validation_aborts;
                v.stale_when_read_aborts as f64 / aborts.max(1) as f64
            });
            let reorder = med(m, &|s| s.reorder_rate().unwrap_or(0.0));
            let reorder = if reorder > 0.0 {
                format!("{reorder:.0}")
            } else {
                "-".into()
            };
            println!(
                "| {theta} | {} | {:.0} | {:.2} | {:.2} | {:.2} | {:.0} | {:.0} | {reorder} |",
                mode.name(),
                med(m, &|s| s.throughput()),
                med(m, &|s| s.throughput()) / base.max(1e-9),
                med(m, &|s| s.abort_rate()),
                stale,
                med(m, &|s| s.mean_latency_us()),
                med(m, &|s| s.latency_percentile_us(95.0) as f64),
            );
        }
    }
    common::print_load("after");
    Ok(())
}

fn main() -> Result<(), Error> {
    let duration = common::seconds_arg(1, 1.5)?;
    let which = common::word_arg(2, "both");
    let repeats = common::repeats_arg(3, 3)?;
    if !matches!(which.as_str(), "micro" | "smallbank" | "both") {
        return Err(Error::invalid(
            "workload",
            which,
            "one of micro, smallbank, both",
        ));
    }
    if which != "smallbank" {
        println!("### micro benchmark ({repeats} interleaved runs per point, medians)");
        table(
            |theta| {
                Micro::new(MicroConfig {
                    theta,
                    ..MicroConfig::default()
                })
            },
            duration,
            repeats,
        )?;
    }
    if which != "micro" {
        println!("### SmallBank ({repeats} interleaved runs per point, medians)");
        table(
            |theta| {
                SmallBank::new(SmallBankConfig {
                    theta,
                    ..SmallBankConfig::default()
                })
            },
            duration,
            repeats,
        )?;
    }
    Ok(())
}
