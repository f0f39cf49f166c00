//! The `txlab` command line (clap derive): `run`, `list`, `compare`, `plot`, `rococo-check`.
//!
//! Exit codes: 0 success; 1 a run failed (an engine error, an anomaly or invariant violation found
//! by `--check`, an unwritable output); 2 bad input (a flag's value out of range, an unknown
//! protocol or workload, an unparsable duration). Bad-input messages name the flag, the value and
//! what is accepted.

use crate::machine::MachineInfo;
use crate::point::EngineParams;
use crate::registry::Protocol;
use crate::registry::pipeline::{
    BatchParams, DEFAULT_BATCH_SIZE, DEFAULT_CONCURRENCY, DEFAULT_REORDER_WORKERS, FvsChoice,
    PolicyChoice, RefinementChoice,
};
use crate::report::{RunRecord, summary_table, write_results};
use crate::sweep::{SweepSpec, run_sweep};
use crate::workloads::{WorkloadKind, WorkloadParams};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use txlab_core::table::MAX_VALUE_SIZE;
use txlab_core::{AckMode, Error};
use txlab_workload::TpccConfig;

/// Exit code for bad input.
pub const EXIT_USAGE: u8 = 2;
/// Exit code for a failed run.
pub const EXIT_FAILURE: u8 = 1;

/// Largest key count (dense tables hold at most 2^40 keys).
const MAX_KEYS: u64 = 1 << 40;

/// txlab: run concurrency-control protocols on standard workloads and report throughput, abort
/// rates and latency.
#[derive(Debug, Parser)]
#[command(name = "txlab", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the cartesian product of protocols × workloads × thetas × threads × repeats.
    Run(RunArgs),
    /// List the protocols and workloads, one per line.
    List,
    /// Every interactive protocol (not batch-*/silo-ta) on YCSB-A and SmallBank (theta 0.99) at 1
    /// thread and all physical cores; writes results and their plots.
    Compare(CompareArgs),
    /// Plot a results directory (SVG and PNG next to results.json).
    Plot(PlotArgs),
    /// ROCOCO's offline SC-graph check of a workload's piece profiles (exit 1 if unreorderable).
    RococoCheck(crate::rococo_check::RococoCheckArgs),
}

/// `txlab run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Protocols, comma-separated (`txlab list` shows them).
    #[arg(long, value_delimiter = ',', default_value = "silo", value_parser = parse_protocol)]
    pub protocol: Vec<Protocol>,
    /// Workloads, comma-separated: ycsb-a, ycsb-b, ycsb-c, ycsb-f, micro, smallbank, tpcc (the
    /// full TPC-C mix), tpcc-np (TPC-C NewOrder + Payment).
    #[arg(long, value_delimiter = ',', default_value = "ycsb-a", value_parser = parse_workload)]
    pub workload: Vec<WorkloadKind>,
    /// Worker thread counts, comma-separated, each 1..=1024.
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = ranged(1usize, crate::runner::MAX_THREADS), allow_negative_numbers = true)]
    pub threads: Vec<usize>,
    /// Zipf skews, comma-separated, each 0..=10 (0 is uniform; YCSB's standard skew is 0.99).
    #[arg(long, value_delimiter = ',', default_value = "0", value_parser = ranged(0.0f64, 10.0), allow_negative_numbers = true)]
    pub theta: Vec<f64>,
    /// Measured interval per run, e.g. 500ms, 5s, 2m (greater than 0, at most 24h).
    #[arg(long, default_value = "5s", value_parser = parse_run_duration)]
    pub duration: Duration,
    /// Warm-up before each run's measurement, e.g. 0s, 1s (at most 24h).
    #[arg(long, default_value = "1s", value_parser = parse_warmup)]
    pub warmup: Duration,
    /// Cool-down after each run's measurement, e.g. 0s, 100ms (at most 24h): workers keep running
    /// uncounted transactions so the measured interval does not end with threads exiting.
    #[arg(long, default_value = "100ms", value_parser = parse_cooldown)]
    pub cooldown: Duration,
    /// Repeats of every point, 1..=1000 (the table shows their median and range).
    #[arg(long, default_value_t = 1, value_parser = ranged(1u32, 1000), allow_negative_numbers = true)]
    pub repeat: u32,
    /// Output directory [default: results/run-YYYYmmdd-HHMMSS, UTC].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Record every transaction and fail (exit 1) on a serializability anomaly or a violated
    /// workload invariant. Slows the run and keeps the whole history in memory.
    #[arg(long)]
    pub check: bool,
    /// Workload, engine and placement parameters.
    #[command(flatten)]
    pub params: ParamArgs,
}

/// Parameters shared by `run` and `compare`.
#[derive(Debug, Clone, Args)]
pub struct ParamArgs {
    /// YCSB records / micro keys, 1..=2^40.
    #[arg(long, default_value_t = 100_000, value_parser = ranged(1u64, MAX_KEYS), allow_negative_numbers = true)]
    pub records: u64,
    /// YCSB operations per transaction, 1..=1000 (and at most --records).
    #[arg(long, default_value_t = 10, value_parser = ranged(1usize, 1000), allow_negative_numbers = true)]
    pub ops_per_txn: usize,
    /// YCSB payload / micro value size in bytes, 1..=1048576.
    #[arg(long, default_value_t = 100, value_parser = ranged(1usize, MAX_VALUE_SIZE), allow_negative_numbers = true)]
    pub payload: usize,
    /// SmallBank customers, 2..=2^40.
    #[arg(long, default_value_t = 100_000, value_parser = ranged(2u64, MAX_KEYS), allow_negative_numbers = true)]
    pub customers: u64,
    /// Micro: keys read per transaction (shared key included), 1..=1000.
    #[arg(long, default_value_t = 5, value_parser = ranged(1usize, 1000), allow_negative_numbers = true)]
    pub reads: usize,
    /// Micro: keys written per transaction (shared key included), 1..=1000.
    #[arg(long, default_value_t = 5, value_parser = ranged(1usize, 1000), allow_negative_numbers = true)]
    pub writes: usize,
    /// TPC-C warehouses, 1..=65535.
    #[arg(long, default_value_t = 1, value_parser = ranged(1u32, 65_535), allow_negative_numbers = true)]
    pub warehouses: u32,
    /// TPC-C districts per warehouse, 1..=100000 (warehouses x districts at most 2^20)
    /// [default: 10, the standard; 1000 with --tpcc-scaled, ROCOCO's].
    #[arg(long, value_parser = ranged(1u32, 100_000), allow_negative_numbers = true)]
    pub districts: Option<u32>,
    /// TPC-C customers per district, 1..=100000 (3000 in the standard).
    #[arg(long, default_value_t = 3_000, value_parser = ranged(1u32, 100_000), allow_negative_numbers = true)]
    pub district_customers: u32,
    /// TPC-C: ROCOCO's scaled variant (Mu et al., OSDI 2014, §5 "Scaled TPC-C"): Payment does
    /// not update the warehouse's W_YTD (it is the sum of its districts' D_YTD), and --districts
    /// defaults to 1000. Only with --workload tpcc or tpcc-np.
    #[arg(long)]
    pub tpcc_scaled: bool,
    /// TPC-C items, 15..=1000000 (100000 in the standard; smaller is stated in every report).
    #[arg(long, default_value_t = 100_000, value_parser = ranged(15u32, 1_000_000), allow_negative_numbers = true)]
    pub items: u32,
    /// Epoch length in milliseconds (Silo's global epoch), 1..=10000.
    #[arg(long, default_value_t = 40, value_parser = ranged(1u64, 10_000), allow_negative_numbers = true)]
    pub epoch_ms: u64,
    /// When a commit is acknowledged: at commit, or once its epoch is stable (group commit).
    #[arg(long, value_enum, default_value_t = AckArg::Epoch)]
    pub ack: AckArg,
    /// Seed of the workload generators, 0..=18446744073709551615.
    #[arg(long, default_value_t = 42, value_parser = ranged(0u64, u64::MAX), allow_negative_numbers = true)]
    pub seed: u64,
    /// Place workers on every logical CPU (hyperthreads) instead of one per physical core.
    #[arg(long)]
    pub hyperthreads: bool,
    /// batch-*: transactions per validator batch and requests per storage batch, 1..=65536 (the
    /// paper's 40). silo-ta always batches 4 transactions per thread (the paper's).
    #[arg(long, default_value_t = DEFAULT_BATCH_SIZE, value_parser = ranged(1usize, txlab_batch::pipeline::config::MAX_BATCH_SIZE), allow_negative_numbers = true)]
    pub batch_size: usize,
    /// batch-*: live transactions in the pipeline (over all processors), 1..=1048576 (the
    /// paper's 300).
    #[arg(long, default_value_t = DEFAULT_CONCURRENCY, value_parser = ranged(1usize, txlab_batch::pipeline::config::MAX_CONCURRENCY), allow_negative_numbers = true)]
    pub concurrency: usize,
    /// batch-vc, batch-srvc: transaction reordering worker threads, 0..=256; 0 is the
    /// single-thread layout (one thread forms, reorders and validates each batch). For
    /// batch-batch only 0 or not 0 matters: 0 forms and validates batches on one thread.
    #[arg(long, default_value_t = DEFAULT_REORDER_WORKERS, value_parser = ranged(0usize, txlab_batch::pipeline::config::MAX_COMPONENT_THREADS), allow_negative_numbers = true)]
    pub reorder_workers: usize,
    /// batch-vc, batch-srvc: feedback vertex set algorithm: sort (sort-based greedy, multi
    /// factor 2, the paper's default), scc (SCC-based greedy), hybrid (SCC greedy, exact on
    /// components of at most 10 nodes).
    #[arg(long, value_enum, default_value_t = FvsChoice::Sort)]
    pub fvs: FvsChoice,
    /// batch-vc, batch-srvc: reordering policy: prod (alias mc; prod-degree, maximizes commits,
    /// the default), rct (fewest restarts aborted first), rdeg (in × out / 2^restarts).
    #[arg(long, value_enum, default_value_t = PolicyChoice::Prod)]
    pub policy: PolicyChoice,
    /// batch-vc, batch-srvc: pass over the feedback vertex set: none (the algorithm's set, the
    /// paper's algorithms, the default), minimal (put back every aborted transaction that closes
    /// no cycle; txlab's refinement).
    #[arg(long, value_enum, default_value_t = RefinementChoice::None)]
    pub fvs_refinement: RefinementChoice,
}

/// `--ack`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AckArg {
    /// At commit (latency runs).
    Commit,
    /// Once the commit's epoch is stable (Silo's group commit).
    Epoch,
}

/// `txlab compare`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Output directory [default: results/compare-YYYYmmdd-HHMMSS, UTC].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Measured interval per point (greater than 0, at most 24h).
    #[arg(long, default_value = "1s", value_parser = parse_run_duration)]
    pub duration: Duration,
    /// Warm-up before each point's measurement (at most 24h).
    #[arg(long, default_value = "200ms", value_parser = parse_warmup)]
    pub warmup: Duration,
    /// Uncounted cool-down after each point's measurement (at most 24h).
    #[arg(long, default_value = "100ms", value_parser = parse_cooldown)]
    pub cooldown: Duration,
    /// Workload, engine and placement parameters.
    #[command(flatten)]
    pub params: ParamArgs,
}

/// `txlab plot`.
#[derive(Debug, Clone, Args)]
pub struct PlotArgs {
    /// A directory written by `txlab run` or `txlab compare` (holding results.json).
    pub dir: PathBuf,
}

/// Parses `500ms`, `1s`, `2m`, `1h`, `250us` (a non-negative integer or decimal and a unit).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit {
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "'{s}' is not a duration: expected a number and a unit (us, ms, s, m, h), e.g. 500ms, 1s, 2m"
            ));
        }
    };
    let n: f64 = num.parse().map_err(|_| {
        format!("'{s}' is not a duration: '{num}' is not a number (e.g. 500ms, 1s, 2m)")
    })?;
    Duration::try_from_secs_f64(n * scale).map_err(|_| format!("'{s}' is out of range"))
}

fn parse_run_duration(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d.is_zero() || d > crate::runner::MAX_DURATION {
        return Err(format!(
            "{s} is not accepted: the duration must be greater than 0 and at most 24h"
        ));
    }
    Ok(d)
}

fn parse_warmup(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d > crate::runner::MAX_DURATION {
        return Err(format!(
            "{s} is not accepted: the warm-up must be at most 24h"
        ));
    }
    Ok(d)
}

fn parse_cooldown(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d > crate::runner::MAX_DURATION {
        return Err(format!(
            "{s} is not accepted: the cool-down must be at most 24h"
        ));
    }
    Ok(d)
}

fn parse_protocol(s: &str) -> Result<Protocol, String> {
    Protocol::from_name(s.trim()).map_err(|e| e.to_string())
}

fn parse_workload(s: &str) -> Result<WorkloadKind, String> {
    WorkloadKind::from_name(s.trim()).map_err(|e| e.to_string())
}

/// The value parser of every numeric flag: `ranged(lo, hi)` accepts a number in `lo..=hi`.
/// Both a non-number and a number out of range are rejected with the accepted range, which clap
/// prints after the flag and the value (`invalid value 'x' for '--records <RECORDS>': 'x' is not
/// a number (accepted: 1..=1099511627776)`), exit code 2. NaN is out of every range.
pub fn ranged<T>(lo: T, hi: T) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy + Send + Sync + 'static,
{
    move |s: &str| {
        let v: T = s
            .trim()
            .parse()
            .map_err(|_| format!("'{s}' is not a number (accepted: {lo}..={hi})"))?;
        // Written so that an unordered value (NaN) is rejected too.
        if !(lo <= v && v <= hi) {
            return Err(format!("{s} is out of range (accepted: {lo}..={hi})"));
        }
        Ok(v)
    }
}

impl ParamArgs {
    fn workload_params(&self, check: bool) -> WorkloadParams {
        WorkloadParams {
            records: self.records,
            ops_per_txn: self.ops_per_txn,
            payload: self.payload,
            customers: self.customers,
            reads: self.reads,
            writes: self.writes,
            theta: 0.0,
            audit: check,
            warehouses: self.warehouses,
            districts: self.districts.unwrap_or(if self.tpcc_scaled {
                TpccConfig::rococo_scaled().districts_per_warehouse
            } else {
                TpccConfig::default().districts_per_warehouse
            }),
            district_customers: self.district_customers,
            items: self.items,
            tpcc_scaled: self.tpcc_scaled,
        }
    }

    fn engine_params(&self) -> EngineParams {
        EngineParams {
            epoch: Duration::from_millis(self.epoch_ms),
            ack: match self.ack {
                AckArg::Commit => AckMode::AtCommit,
                AckArg::Epoch => AckMode::EpochStable,
            },
            batch: BatchParams {
                batch_size: self.batch_size,
                concurrency: self.concurrency,
                reorder_workers: self.reorder_workers,
                fvs: self.fvs,
                policy: self.policy,
                fvs_refinement: self.fvs_refinement,
            },
        }
    }
}

impl RunArgs {
    /// The sweep these flags describe (not yet validated against the workloads).
    pub fn spec(&self) -> SweepSpec {
        SweepSpec {
            protocols: self.protocol.clone(),
            workloads: self.workload.clone(),
            threads: self.threads.clone(),
            thetas: self.theta.clone(),
            repeat: self.repeat,
            warmup: self.warmup,
            duration: self.duration,
            cooldown: self.cooldown,
            seed: self.params.seed,
            hyperthreads: self.params.hyperthreads,
            params: self.params.workload_params(self.check),
            engine: self.params.engine_params(),
            check: self.check,
        }
    }
}

impl CompareArgs {
    /// The comparison sweep: every protocol [`Protocol::compared`] names (the
    /// batching engines are left out), YCSB-A and SmallBank at theta 0.99, 1 thread
    /// and every physical core, one repeat.
    pub fn spec(&self, physical_cores: usize) -> SweepSpec {
        let mut threads = vec![1, physical_cores.max(1)];
        threads.dedup();
        SweepSpec {
            protocols: Protocol::compared().collect(),
            workloads: vec![
                WorkloadKind::from_name("ycsb-a").unwrap_or(WorkloadKind::Micro),
                WorkloadKind::SmallBank,
            ],
            threads,
            thetas: vec![0.99],
            repeat: 1,
            warmup: self.warmup,
            duration: self.duration,
            cooldown: self.cooldown,
            seed: self.params.seed,
            hyperthreads: self.params.hyperthreads,
            params: self.params.workload_params(false),
            engine: self.params.engine_params(),
            check: false,
        }
    }
}

/// `YYYYmmdd-HHMMSS` in UTC for a Unix time (days-from-civil inverse, H. Hinnant's algorithm).
pub fn utc_timestamp(unix_secs: u64) -> String {
    let days = (unix_secs / 86_400) as i64;
    let secs = unix_secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

fn default_out(prefix: &str) -> PathBuf {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Path::new("results").join(format!("{prefix}-{}", utc_timestamp(now)))
}

/// The `txlab list` text.
pub fn list_text() -> String {
    let mut out = String::from("protocols:\n");
    for p in Protocol::visible() {
        out.push_str(&format!("  {:<11} {}\n", p.name(), p.description()));
    }
    out.push_str("workloads:\n");
    for w in WorkloadKind::visible() {
        out.push_str(&format!("  {:<11} {}\n", w.name(), w.description()));
    }
    out
}

/// How a command failed.
#[derive(Debug)]
pub enum Failure {
    /// Bad input (exit 2).
    Usage(Error),
    /// The run failed (exit 1).
    Run(String),
}

impl Failure {
    /// The process exit code.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Usage(_) => EXIT_USAGE,
            Failure::Run(_) => EXIT_FAILURE,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Usage(e) => write!(f, "{e}"),
            Failure::Run(m) => f.write_str(m),
        }
    }
}

/// Validates (exit 2 on bad input), runs, writes results and prints the table.
pub fn sweep_and_report(spec: &SweepSpec, out: &Path) -> Result<Vec<RunRecord>, Failure> {
    spec.validate().map_err(Failure::Usage)?;
    let records = run_sweep(spec).map_err(|e| Failure::Run(format!("run failed: {e}")))?;
    let machine = MachineInfo::detect();
    write_results(out, &machine, spec, &records).map_err(|e| Failure::Run(e.to_string()))?;
    print!("{}", summary_table(&records));
    for note in run_notes(&records, &machine) {
        println!("note: {note}");
    }
    println!("results written to {}", out.display());
    Ok(records)
}

/// The caveats `txlab run` prints under its table: what a reader of these numbers must know
/// about how they were produced.
pub fn run_notes(records: &[RunRecord], machine: &MachineInfo) -> Vec<String> {
    let mut notes = Vec::new();
    if records.iter().any(|r| r.result.oversubscribed) {
        notes.push(
            "oversubscribed runs have more workers than physical cores; do not read them as scaling"
                .to_string(),
        );
    }
    if !machine.release_build {
        notes
            .push("this is a debug build; build with --release for meaningful numbers".to_string());
    }
    if machine.record_layout != "packed" {
        notes.push(format!(
            "record layout {} (a layout experiment; default builds pack records)",
            machine.record_layout
        ));
    }
    notes
}

/// One line per run whose `--check` failed.
pub fn check_failures(records: &[RunRecord]) -> Vec<String> {
    records
        .iter()
        .filter_map(|r| {
            let c = r.check.as_ref()?;
            (!c.passed()).then(|| {
                format!(
                    "{} {} threads={} repeat={}: anomalies [{}] invariant [{}]",
                    r.protocol,
                    r.workload,
                    r.threads,
                    r.repeat,
                    c.anomalies.join(", "),
                    c.invariant.as_deref().unwrap_or("ok")
                )
            })
        })
        .collect()
}

/// Runs a parsed command line.
pub fn execute(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::List => {
            print!("{}", list_text());
            Ok(())
        }
        Command::Run(args) => {
            let out = args.out.clone().unwrap_or_else(|| default_out("run"));
            let records = sweep_and_report(&args.spec(), &out)?;
            if args.check {
                let failures = check_failures(&records);
                if !failures.is_empty() {
                    return Err(Failure::Run(format!(
                        "--check failed:\n{}",
                        failures.join("\n")
                    )));
                }
                println!("--check: every run's history is serializable and invariants hold");
            }
            Ok(())
        }
        Command::Compare(args) => {
            let cores = crate::topology::physical_cores_of_this_machine();
            let out = args.out.clone().unwrap_or_else(|| default_out("compare"));
            sweep_and_report(&args.spec(cores), &out)?;
            let files = crate::plot::plot_dir(&out).map_err(|e| {
                Failure::Run(format!(
                    "the results are in {}, but plotting them failed: {e} (fix that and run \
                     `txlab plot {}`)",
                    out.display(),
                    out.display()
                ))
            })?;
            println!("plots written to {} ({} files)", out.display(), files.len());
            Ok(())
        }
        Command::Plot(args) => {
            let files = crate::plot::plot_dir(&args.dir).map_err(|e| match e {
                e @ Error::InvalidConfig { .. } => Failure::Usage(e),
                e => Failure::Run(e.to_string()),
            })?;
            for f in files {
                println!("{}", f.display());
            }
            Ok(())
        }
        Command::RococoCheck(args) => crate::rococo_check::execute(&args),
    }
}

/// The `txlab` binary's entry point.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { 0 });
        }
    };
    match execute(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("error: {f}");
            ExitCode::from(f.exit_code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::record;

    fn machine(release: bool, layout: &str) -> MachineInfo {
        MachineInfo {
            cpu_model: "test".into(),
            logical_cpus: 2,
            physical_cores: 2,
            kernel: "Linux".into(),
            git_revision: "unknown".into(),
            crate_version: "0".into(),
            release_build: release,
            record_layout: layout.into(),
        }
    }

    fn on(workload: &str, protocol: &str) -> RunRecord {
        let mut r = record(protocol, 0, 1000.0);
        r.workload = workload.into();
        r
    }

    #[test]
    fn a_plain_release_run_has_no_notes() {
        let runs = [
            on("ycsb-a", "silo"),
            on("tpcc", "silo"),
            on("ycsb-b", "tictoc"),
            on("tpcc", "tictoc"),
            on("tpcc", "mvto"),
            on("tpcc", "mvto-nwr"),
        ];
        assert!(run_notes(&runs, &machine(true, "packed")).is_empty());
    }

    #[test]
    fn debug_builds_layouts_and_oversubscription_are_noted() {
        let mut over = on("ycsb-a", "silo");
        over.result.oversubscribed = true;
        let notes = run_notes(&[over], &machine(false, "line-aligned (64 B): silo"));
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(notes[0].starts_with("oversubscribed"));
        assert!(notes[1].contains("debug build"));
        assert!(notes[2].contains("line-aligned (64 B): silo"));
    }
}
