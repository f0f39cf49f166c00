//! The pipeline modes against skew (Ding, Kot, Gehrke, VLDB 2018, §5.3 and §5.4, Figures 10–15):
//! `base`, `batch`, `sr`, `vc`, `srvc` on the micro benchmark (100K keys, 5 reads and 5 writes
//! per transaction, one key shared) and on SmallBank (100K customers), concurrency 300, batch 40,
//! sort-based greedy with prod-degree. Prints one markdown table per workload.
//!
//! ```text
//! CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
//!   cargo run --release -p txlab-batch --example pipeline_modes -- \
//!   [seconds per point] [micro|smallbank|both] [repeats] [staged|single|both]
//! ```
//!
//! The last argument picks the validator layout of the batching modes (`batch`, `vc`, `srvc`):
//! `staged` (the default) runs the paper's stages on their own threads with 4 reordering
//! workers; `single` runs each batch through one thread (`PipelineConfig::reorder_workers = 0`),
//! labelled "1-thread"; `both` interleaves the two.
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
use txlab_batch::pipeline::{
    Mode, Pipeline, PipelineConfig, RunLimit, RunStats, ValidatorBatching,
};
use txlab_core::Error;
use txlab_workload::{Micro, MicroConfig, SmallBank, SmallBankConfig, Workload};

const THETAS: [f64; 5] = [0.5, 0.7, 0.8, 0.9, 0.99];

/// Which validator layouts to run the batching modes in (`PipelineConfig::reorder_workers`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layouts {
    /// The paper's stages on their own threads (4 reordering workers).
    Staged,
    /// One thread forms, reorders and validates each batch (0 reordering workers).
    Single,
    /// Both, interleaved in one run.
    Both,
}

/// The configurations of one table: every mode in the staged layout and/or, for the batching
/// modes, the single-thread layout (`base` and `sr` have no batch stages).
fn configs(layouts: Layouts) -> Vec<(String, PipelineConfig)> {
    let mut out = Vec::new();
    for mode in Mode::ALL {
        let staged = PipelineConfig::default().with_mode(mode);
        let batches = mode.validator() != ValidatorBatching::Off;
        if layouts != Layouts::Single || !batches {
            out.push((mode.name().to_string(), staged));
        }
        if layouts != Layouts::Staged && batches {
            let single =
                staged.with_threads(staged.clients, staged.processors, staged.storage_workers, 0);
            out.push((format!("{} 1-thread", mode.name()), single));
        }
    }
    out
}

fn run_point<W>(
    workload: &W,
    config: PipelineConfig,
    duration: Duration,
    seed: u64,
) -> Result<RunStats, Error>
where
    W: Workload,
    W::Program: Clone + Send + 'static,
{
    let db = Pipeline::builder()
        .config(config)
        .build(&workload.schema())?;
    workload.load(&db)?;
    db.run(workload, RunLimit::Duration(duration), seed)
}

fn table<W, F>(make: F, duration: Duration, repeats: usize, layouts: Layouts) -> Result<(), Error>
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
    let configs = configs(layouts);
    for theta in THETAS {
        let workload = make(theta)?;
        let mut runs: Vec<Vec<RunStats>> = vec![Vec::new(); configs.len()];
        for repeat in 0..repeats {
            for (c, (_, config)) in configs.iter().enumerate() {
                runs[c].push(run_point(&workload, *config, duration, 42 + repeat as u64)?);
            }
        }
        let med = |m: usize, f: &dyn Fn(&RunStats) -> f64| {
            median(&runs[m].iter().map(f).collect::<Vec<_>>())
        };
        let base = med(0, &|s| s.throughput());
        for (m, (name, _)) in configs.iter().enumerate() {
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
                "| {theta} | {name} | {:.0} | {:.2} | {:.2} | {:.2} | {:.0} | {:.0} | {reorder} |",
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
    let layouts = match common::word_arg(4, "staged").as_str() {
        "staged" => Layouts::Staged,
        "single" => Layouts::Single,
        "both" => Layouts::Both,
        other => {
            return Err(Error::invalid(
                "layouts",
                other,
                "one of staged, single, both",
            ));
        }
    };
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
            layouts,
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
            layouts,
        )?;
    }
    Ok(())
}
