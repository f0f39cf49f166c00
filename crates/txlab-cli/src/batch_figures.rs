//! `txlab batch-figures`: the OCC-batching experiments of `docs/results/batch.md` (Ding, Kot,
//! Gehrke, VLDB 2018) in one call, written to one CSV.
//!
//! Four sweeps, each run round by round with its protocols interleaved, every record tagged
//! with its figure in the `param_figure` column of `batch_figures.csv`. Each figure's runs are
//! also a results directory of their own, `OUT/<figure>/` (results.json, results.csv,
//! summary.csv as `txlab run --out` writes them, with the figure's sweep as `config`), with its
//! charts (`txlab plot`):
//!
//! | figure | protocols | workload | varies |
//! |---|---|---|---|
//! | `fig10-12` | `batch-base`, `batch-batch`, `batch-sr`, `batch-vc`, `batch-srvc` | micro: 100K keys, 5 reads + 5 writes, 8-byte values | θ ∈ {0.9, 0.99} |
//! | `fig19` | `silo`, `silo-ta` | YCSB 16 requests, 50 % read / 50 % RMW, 100-byte payload, `--records` (10M) | threads, θ = 0.99 |
//! | `fig20-21` | `silo`, `silo-ta` | the same | θ ∈ {0.5, 0.8, 0.9} at the most threads |
//! | `fig19-100k` | `silo`, `silo-ta` | the same on 100K records | threads, θ = 0.99 |
//!
//! The pipeline runs the paper's concurrency (300 live transactions in the whole system) and
//! batch size (40) with `--processors` processors; silo and silo-ta acknowledge at commit. The
//! defaults size the thread counts from the host's physical cores, so the same command is the
//! 2-core and the 16-core run: about 5 minutes on 16 cores, most of it loading the 10M-record
//! table.

use crate::progress::Progress;
use crate::{Failure, output, ranged};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;
use txlab_core::AckMode;
use txlab_harness::machine::MachineInfo;
use txlab_harness::point::EngineParams;
use txlab_harness::registry::Protocol;
use txlab_harness::registry::pipeline::MAX_COMPONENT_THREADS;
use txlab_harness::report::{RunRecord, summarize, summary_table, to_csv, write_results};
use txlab_harness::runner::MAX_THREADS;
use txlab_harness::sweep::{SweepSpec, run_sweep};
use txlab_harness::topology::physical_cores_of_this_machine;
use txlab_harness::workloads::{WorkloadKind, WorkloadParams};

/// The paper's table size for Figures 19-21 (§5.6: 10 million keys).
pub const PAPER_RECORDS: u64 = 10_000_000;

/// `txlab batch-figures`.
#[derive(Debug, Clone, Args)]
pub struct BatchFiguresArgs {
    /// Worker threads of the silo / silo-ta runs, comma-separated, each 1..=1024 [default: 2,
    /// half the physical cores and all of them; 1 and 2 below 4 cores].
    #[arg(long, value_delimiter = ',', value_parser = ranged(1usize, MAX_THREADS), allow_negative_numbers = true)]
    pub threads: Option<Vec<usize>>,
    /// Records of the Figures 19-21 table (fig19, fig20-21), 1..=2^40 [default: 10000000, the
    /// paper's]; fig19-100k always uses 100000.
    #[arg(long, default_value_t = PAPER_RECORDS, value_parser = ranged(1u64, 1 << 40), allow_negative_numbers = true)]
    pub records: u64,
    /// Pipeline processors, 1..=256 [default: the physical cores less the pipeline's other
    /// threads (2 clients, 2 storage workers, the validator's), at least 1].
    #[arg(long, value_parser = ranged(1usize, MAX_COMPONENT_THREADS), allow_negative_numbers = true)]
    pub processors: Option<usize>,
    /// Pipeline reordering workers, 0..=256 [default: 4, the paper's, from 12 physical cores
    /// on; 0 (the single-thread layout) below].
    #[arg(long, value_parser = ranged(0usize, MAX_COMPONENT_THREADS), allow_negative_numbers = true)]
    pub reorder_workers: Option<usize>,
    /// Rounds, 1..=1000: every point runs once per round, protocols interleaved.
    #[arg(long, default_value_t = 2, value_parser = ranged(1u32, 1000), allow_negative_numbers = true)]
    pub rounds: u32,
    /// Measured interval per run (at least 1ms, at most 24h).
    #[arg(long, default_value = "2s", value_parser = crate::parse_run_duration, allow_hyphen_values = true)]
    pub duration: Duration,
    /// Warm-up before each run's measurement (at most 24h).
    #[arg(long, default_value = "500ms", value_parser = crate::parse_warmup, allow_hyphen_values = true)]
    pub warmup: Duration,
    /// Output directory [default: results/batch-figures-YYYYmmdd-HHMMSS, UTC].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write into an --out directory that already holds results (replacing them).
    #[arg(long)]
    pub overwrite: bool,
}

/// One sweep of the experiment and the figure it belongs to.
#[derive(Debug, Clone)]
pub struct Figure {
    /// The `param_figure` value.
    pub name: &'static str,
    /// What it runs.
    pub spec: SweepSpec,
}

fn protocols(names: &[&str]) -> Vec<Protocol> {
    names
        .iter()
        .map(|n| Protocol::from_name(n).expect("a registered protocol"))
        .collect()
}

impl BatchFiguresArgs {
    /// The sweeps for a host with `cores` physical cores (module docs).
    pub fn figures(&self, cores: usize) -> Vec<Figure> {
        let threads = self.threads.clone().unwrap_or_else(|| {
            let mut t = if cores < 4 {
                vec![1, 2]
            } else {
                vec![2, cores / 2, cores]
            };
            t.dedup();
            t
        });
        let most = threads.iter().copied().max().unwrap_or(1);
        let reorder_workers = self
            .reorder_workers
            .unwrap_or(if cores >= 12 { 4 } else { 0 });
        let validator = if reorder_workers == 0 {
            1
        } else {
            2 + reorder_workers
        };
        let processors = self
            .processors
            .unwrap_or_else(|| cores.saturating_sub(4 + validator).max(1));
        let base = SweepSpec {
            protocols: Vec::new(),
            workloads: Vec::new(),
            threads: Vec::new(),
            thetas: vec![0.99],
            repeat: self.rounds,
            baseline: None,
            baseline_threads: None,
            warmup: self.warmup,
            duration: self.duration,
            cooldown: Duration::from_millis(100),
            seed: 42,
            hyperthreads: false,
            params: WorkloadParams::default(),
            engine: EngineParams {
                ack: AckMode::AtCommit,
                ..EngineParams::default()
            },
            check: false,
        };
        let mut pipeline = base.clone();
        pipeline.protocols = protocols(&[
            "batch-base",
            "batch-batch",
            "batch-sr",
            "batch-vc",
            "batch-srvc",
        ]);
        pipeline.workloads = vec![WorkloadKind::from_name("micro").expect("micro")];
        pipeline.threads = vec![processors];
        pipeline.thetas = vec![0.9, 0.99];
        pipeline.params.payload = 8;
        pipeline.engine.batch.reorder_workers = reorder_workers;
        let mut ycsb = base;
        ycsb.protocols = protocols(&["silo", "silo-ta"]);
        ycsb.workloads = vec![WorkloadKind::from_name("ycsb-f").expect("ycsb-f")];
        ycsb.params.ops_per_txn = 16;
        ycsb.params.records = self.records;
        ycsb.threads = threads.clone();
        let mut skews = ycsb.clone();
        skews.threads = vec![most];
        skews.thetas = vec![0.5, 0.8, 0.9];
        let mut small = ycsb.clone();
        small.params.records = 100_000;
        vec![
            Figure {
                name: "fig10-12",
                spec: pipeline,
            },
            Figure {
                name: "fig19",
                spec: ycsb,
            },
            Figure {
                name: "fig20-21",
                spec: skews,
            },
            Figure {
                name: "fig19-100k",
                spec: small,
            },
        ]
    }
}

/// Runs `txlab batch-figures`: validates every sweep first, runs them in order, writes
/// `batch_figures.csv` and each figure's results directory, prints one summary table per
/// figure and draws each figure's charts.
pub fn execute(args: &BatchFiguresArgs) -> Result<(), Failure> {
    let figures = args.figures(physical_cores_of_this_machine());
    for f in &figures {
        f.spec.validate().map_err(Failure::Usage)?;
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| output::default_dir("batch-figures"));
    output::prepare(&out, args.overwrite).map_err(Failure::Usage)?;
    let machine = MachineInfo::detect();
    let host = format!(
        "host: {} physical cores, {} logical, {}; build {}\n",
        machine.physical_cores, machine.logical_cpus, machine.cpu_model, machine.git_revision
    );
    let write = |name: &str, text: String| {
        let path = out.join(name);
        std::fs::write(&path, text)
            .map_err(|e| Failure::Run(format!("writing {}: {e}", path.display())))
    };
    let mut all: Vec<RunRecord> = Vec::new();
    let mut tables = host;
    for f in &figures {
        let mut progress = Progress::new();
        let records = run_sweep(&f.spec, &mut |step| progress.step(step));
        progress.finish(records.is_ok());
        let mut records = records.map_err(|e| Failure::Run(format!("{} failed: {e}", f.name)))?;
        for r in &mut records {
            r.parameters.insert("figure".into(), f.name.into());
        }
        let baseline = f.spec.protocols.first().map(|p| p.name());
        let summary = summarize(&records, baseline);
        tables.push_str(&format!("== {}\n", f.name));
        tables.push_str(&summary_table(&summary, baseline));
        // Written after every figure, so a run cut short keeps what it measured.
        write_results(&out.join(f.name), &machine, &f.spec, &records, &summary)
            .map_err(|e| Failure::Run(e.to_string()))?;
        all.extend(records);
        write(CSV, to_csv(&all))?;
        write("summary.txt", tables.clone())?;
    }
    print!("{tables}");
    println!("results written to {}", out.join(CSV).display());
    for f in &figures {
        crate::plot_written(&out.join(f.name))?;
    }
    Ok(())
}

/// The file every record goes to.
pub const CSV: &str = "batch_figures.csv";

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(extra: &[&str]) -> BatchFiguresArgs {
        let mut argv = vec!["txlab", "batch-figures"];
        argv.extend_from_slice(extra);
        match crate::Cli::try_parse_from(argv).unwrap().command {
            crate::Command::BatchFigures(a) => a,
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn the_defaults_follow_the_paper_and_the_host() {
        let sixteen = args(&[]).figures(16);
        let names: Vec<_> = sixteen.iter().map(|f| f.name).collect();
        assert_eq!(names, ["fig10-12", "fig19", "fig20-21", "fig19-100k"]);
        let pipeline = &sixteen[0].spec;
        assert_eq!(pipeline.engine.batch.concurrency, 300);
        assert_eq!(pipeline.engine.batch.batch_size, 40);
        assert_eq!(pipeline.engine.batch.reorder_workers, 4);
        // 16 cores less 2 clients, 2 storage workers, batch preparation, validation, 4 reorderers.
        assert_eq!(pipeline.threads, [6]);
        let fig19 = &sixteen[1].spec;
        assert_eq!(fig19.params.records, PAPER_RECORDS);
        assert_eq!((fig19.params.ops_per_txn, fig19.params.payload), (16, 100));
        assert_eq!(fig19.threads, [2, 8, 16]);
        assert_eq!(fig19.engine.ack, AckMode::AtCommit);
        assert_eq!(sixteen[2].spec.threads, [16]);
        assert_eq!(sixteen[3].spec.params.records, 100_000);
        for f in &sixteen {
            f.spec.validate().unwrap();
        }
        let two = args(&[]).figures(2);
        assert_eq!(two[0].spec.threads, [1]);
        assert_eq!(two[0].spec.engine.batch.reorder_workers, 0);
        assert_eq!(two[1].spec.threads, [1, 2]);
        let given = args(&["--threads", "4", "--records", "1000", "--processors", "3"]);
        let f = given.figures(2);
        assert_eq!(
            (f[0].spec.threads.clone(), f[1].spec.threads.clone()),
            (vec![3], vec![4])
        );
        assert_eq!(f[1].spec.params.records, 1000);
    }

    #[test]
    fn a_tiny_run_writes_one_csv_with_every_figure() {
        let out = std::env::temp_dir().join(format!("txlab-batch-figures-{}", std::process::id()));
        let a = args(&[
            "--threads",
            "1",
            "--records",
            "1000",
            "--rounds",
            "1",
            "--duration",
            "20ms",
            "--warmup",
            "0s",
            "--overwrite",
            "--out",
            out.to_str().unwrap(),
        ]);
        let done = execute(&a);
        if let Err(f) = &done {
            // Without a TrueType font only the charts are missing, and the error says so.
            assert!(f.to_string().contains("TXLAB_FONT"), "{f}");
        }
        let csv = std::fs::read_to_string(out.join(CSV)).unwrap();
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let col = header.iter().position(|h| *h == "param_figure").unwrap();
        let figures: std::collections::BTreeSet<&str> = csv
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(col).unwrap())
            .collect();
        assert_eq!(
            figures.into_iter().collect::<Vec<_>>(),
            ["fig10-12", "fig19", "fig19-100k", "fig20-21"]
        );
        // 5 modes × 2 θ, 2 protocols × 1 thread count, 2 × 3 θ, 2 × 1.
        assert_eq!(csv.lines().count() - 1, 10 + 2 + 6 + 2);
        for (figure, runs, chart) in [
            ("fig10-12", 10, "micro-throughput-vs-theta.svg"),
            ("fig19", 2, "ycsb-f-throughput-vs-threads.svg"),
            ("fig20-21", 6, "ycsb-f-throughput-vs-theta.svg"),
            ("fig19-100k", 2, "ycsb-f-throughput-vs-threads.svg"),
        ] {
            let dir = out.join(figure);
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap())
                    .unwrap();
            assert_eq!(json["runs"].as_array().unwrap().len(), runs, "{figure}");
            assert!(
                json["config"]["protocols"].is_array(),
                "{figure}: the sweep is the config"
            );
            assert!(
                done.is_err() || dir.join(chart).is_file(),
                "{figure}: {chart} missing"
            );
        }
        let _ = std::fs::remove_dir_all(&out);
    }
}
