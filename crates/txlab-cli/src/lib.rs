//! # txlab-cli
//!
//! The `txlab` command line (clap derive): `run`, `list`, `compare`, `plot`, `rococo-check`,
//! over the
//! `txlab-harness` library. The binary (`src/main.rs`) only picks the allocator and calls
//! [`main`]; everything else is here, so tests drive the CLI in-process.
//!
//! Each subcommand is one variant of [`Command`] and one arm of [`execute`].
//!
//! Exit codes: 0 success; 1 a run failed (an engine error, an anomaly or invariant violation found
//! by `--check`, an unwritable output); 2 bad input (a flag's value out of range, an unknown
//! protocol or workload, an unparsable duration). Bad-input messages name the flag, the value and
//! what is accepted.

#![warn(missing_docs)]

pub mod batch_figures;
pub mod builds;
pub mod cluster;
pub mod cluster_report;
pub mod cluster_run;
pub mod output;
pub mod plot;
pub mod progress;
pub mod rococo_check;

use crate::progress::Progress;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use txlab_core::table::MAX_VALUE_SIZE;
use txlab_core::{AckMode, Error};
use txlab_harness::machine::MachineInfo;
use txlab_harness::point::EngineParams;
use txlab_harness::registry::Protocol;
use txlab_harness::registry::deterministic::{
    DEFAULT_BATCH_EPOCH_US, DEFAULT_CONCURRENCY as DETERMINISTIC_CONCURRENCY, DeterministicParams,
};
use txlab_harness::registry::distributed::ClusterParams;
use txlab_harness::registry::partitioned::Transport;
use txlab_harness::registry::pipeline::{
    BatchParams, DEFAULT_BATCH_SIZE, DEFAULT_CONCURRENCY, DEFAULT_REORDER_WORKERS, FvsChoice,
    PolicyChoice, RefinementChoice,
};
use txlab_harness::report::{RunRecord, summarize_against, summary_table, write_results};
use txlab_harness::sweep::{SweepSpec, run_sweep};
use txlab_harness::workloads::{WorkloadKind, WorkloadParams};
use txlab_workload::TpccConfig;

/// Exit code for bad input.
pub const EXIT_USAGE: u8 = 2;
/// Exit code for a failed run.
pub const EXIT_FAILURE: u8 = 1;

/// The shortest measured interval `--duration` accepts.
pub const MIN_RUN_DURATION: Duration = Duration::from_millis(1);

/// Runs that committed fewer transactions than this get a note: their numbers are noise.
pub const FEW_COMMITS: u64 = 100;

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
    /// The nine interactive protocols on YCSB-A and SmallBank (theta 0.99) at 1 thread and all
    /// physical cores, interleaved round by round: medians with 95% bootstrap intervals, ratios
    /// to the first protocol, plots with error bars.
    Compare(CompareArgs),
    /// Plot a results directory (SVG and PNG next to results.json).
    Plot(PlotArgs),
    /// The OCC-batching experiments (Ding, Kot, Gehrke, VLDB 2018, Figures 10-12 and 19-21)
    /// sized to this host, one CSV (docs/results/batch.md).
    BatchFigures(crate::batch_figures::BatchFiguresArgs),
    /// ROCOCO's offline SC-graph check of a workload's piece profiles (exit 1 if unreorderable).
    RococoCheck(crate::rococo_check::RococoCheckArgs),
    /// One node of a multi-process cluster: `txlab node --cluster FILE --id K [-- <run args>]`
    /// (docs/distribution.md).
    Node(ClusterArgs),
    /// N node processes of this binary on loopback, their results gathered:
    /// `txlab cluster --local N [--distinct-hosts] [--timeout-s S] [--out DIR [--overwrite]] --
    /// <run args>`; with --out (rococo, 2pl-2pc, occ-2pc) the runs are written and summarized
    /// as `txlab run --out` does (docs/distribution.md).
    Cluster(ClusterArgs),
}

/// The arguments of `txlab node` and `txlab cluster`, handed to `txlab_net::cluster::cli`.
#[derive(Debug, Clone, Args)]
pub struct ClusterArgs {
    /// The subcommand's flags, then `--` and the run's flags.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// The protocols `txlab node` and `txlab cluster` run, one node per process.
pub fn cluster_protocols() -> Vec<&'static dyn txlab_net::cluster::cli::ClusterProtocol> {
    let [rococo, twopl, occ] = &crate::cluster_run::DISTRIBUTED;
    vec![
        &txlab_net::counter::NetCounter,
        &cluster::PARTITIONED[0],
        &cluster::PARTITIONED[1],
        &cluster::PARTITIONED[2],
        &cluster::PARTITIONED[3],
        rococo,
        twopl,
        occ,
    ]
}

/// Runs `txlab node` or `txlab cluster` (`name`) with `args`; errors are printed by
/// `txlab_net::cluster::cli`.
fn cluster_subcommand(name: &str, args: &[String]) -> Result<(), Failure> {
    if name == "cluster"
        && let Some(req) = cluster_report::split_out(args).map_err(Failure::Usage)?
    {
        return cluster_report::execute(&req);
    }
    let git_revision = MachineInfo::detect().git_revision;
    let argv: Vec<String> = std::iter::once(name.to_string())
        .chain(args.iter().cloned())
        .collect();
    let code = txlab_net::cluster::cli::main(&argv, &cluster_protocols(), &git_revision);
    if code == ExitCode::SUCCESS {
        Ok(())
    } else {
        Err(Failure::Run(format!(
            "txlab {name} failed (its errors are above)"
        )))
    }
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
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = ranged(1usize, txlab_harness::runner::MAX_THREADS), allow_negative_numbers = true)]
    pub threads: Vec<usize>,
    /// Zipf skews, comma-separated, each 0..=10 (0 is uniform; YCSB's standard skew is 0.99).
    #[arg(long, value_delimiter = ',', default_value = "0", value_parser = ranged(0.0f64, 10.0), allow_negative_numbers = true)]
    pub theta: Vec<f64>,
    /// Measured interval per run, e.g. 500ms, 5s, 2m (at least 1ms, at most 24h).
    #[arg(long, default_value = "5s", value_parser = parse_run_duration, allow_hyphen_values = true)]
    pub duration: Duration,
    /// Warm-up before each run's measurement, e.g. 0s, 1s (at most 24h).
    #[arg(long, default_value = "1s", value_parser = parse_warmup, allow_hyphen_values = true)]
    pub warmup: Duration,
    /// Cool-down after each run's measurement, e.g. 0s, 100ms (at most 24h): workers keep running
    /// uncounted transactions so the measured interval does not end with threads exiting.
    #[arg(long, default_value = "100ms", value_parser = parse_cooldown, allow_hyphen_values = true)]
    pub cooldown: Duration,
    /// Rounds: every point is run this many times, 1..=1000, protocols interleaved round by
    /// round; the table shows the median with its 95% bootstrap interval.
    #[arg(long, alias = "rounds", default_value_t = 1, value_parser = ranged(1u32, 1000), allow_negative_numbers = true)]
    pub repeat: u32,
    /// The protocol the others are compared to (ratios in the table) [default: the first of
    /// --protocol].
    #[arg(long, value_parser = parse_protocol)]
    pub baseline: Option<Protocol>,
    /// Divide by the baseline's run at this thread count instead of each point's own (one of
    /// --threads): a comparison at the same thread budget, e.g. `--protocol calvin,docc
    /// --threads 1,2 --baseline-threads 1` (Calvin's lock manager and 1 worker, DOCC's 2
    /// workers).
    #[arg(long, value_parser = ranged(1usize, txlab_harness::runner::MAX_THREADS), allow_negative_numbers = true)]
    pub baseline_threads: Option<usize>,
    /// Output directory [default: results/run-YYYYmmdd-HHMMSS, UTC].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write into an --out directory that already holds results (replacing them).
    #[arg(long)]
    pub overwrite: bool,
    /// Record every transaction and fail (exit 1) on a serializability anomaly, a violated
    /// workload invariant or a run that committed nothing. Slows the run and keeps the history
    /// in memory: a run's measured interval ends early once its history would take half the
    /// memory available.
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
    #[arg(long, default_value_t = DEFAULT_BATCH_SIZE, value_parser = ranged(1usize, txlab_harness::registry::pipeline::MAX_BATCH_SIZE), allow_negative_numbers = true)]
    pub batch_size: usize,
    /// batch-*: live transactions in the pipeline (over all processors), 1..=1048576 [default:
    /// 300, the paper's]. docc*, calvin: outstanding transactions per node, 1..=4194304
    /// [default: 4096].
    #[arg(long, value_parser = ranged(1usize, txlab_harness::registry::deterministic::MAX_CONCURRENCY), allow_negative_numbers = true)]
    pub concurrency: Option<usize>,
    /// docc*, calvin: the sequencer's epoch (how long it collects submissions before sealing a
    /// batch), microseconds, 1..=10000000.
    #[arg(long, default_value_t = DEFAULT_BATCH_EPOCH_US, value_parser = ranged(1u64, 10_000_000), allow_negative_numbers = true)]
    pub batch_epoch_us: u64,
    /// calvin: lock-manager threads, 1..=--threads (1, as in Calvin and the DOCC paper; more
    /// partition the keys over the managers).
    #[arg(long, default_value_t = 1, value_parser = ranged(1usize, txlab_harness::registry::deterministic::MAX_WORKERS), allow_negative_numbers = true)]
    pub lock_managers: usize,
    /// batch-vc, batch-srvc: transaction reordering worker threads, 0..=256; 0 is the
    /// single-thread layout (one thread forms, reorders and validates each batch). For
    /// batch-batch only 0 or not 0 matters: 0 forms and validates batches on one thread.
    #[arg(long, default_value_t = DEFAULT_REORDER_WORKERS, value_parser = ranged(0usize, txlab_harness::registry::pipeline::MAX_COMPONENT_THREADS), allow_negative_numbers = true)]
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
    /// rococo, 2pl-2pc, occ-2pc: server nodes, 1..=512 (TPC-C: districts are spread over them;
    /// pass --districts, e.g. 10 x servers).
    #[arg(long, default_value_t = 2, value_parser = ranged(1u16, txlab_rococo::config::MAX_SERVERS), allow_negative_numbers = true)]
    pub servers: u16,
    /// rococo, 2pl-2pc, occ-2pc: closed-loop clients per server (each one transaction
    /// outstanding), 1..=10000.
    #[arg(long, default_value_t = 10, value_parser = ranged(1u32, txlab_rococo::cluster::MAX_CLIENTS_PER_SERVER), allow_negative_numbers = true)]
    pub clients_per_server: u32,
    /// rococo, 2pl-2pc, occ-2pc: client node threads the clients are spread over, 1..=64.
    #[arg(long, default_value_t = 1, value_parser = ranged(1u16, 64), allow_negative_numbers = true)]
    pub client_threads: u16,
    /// docc*, calvin: run as a cluster of this many partition nodes, 1..=255 (TPC-C by
    /// warehouse, at most --warehouses; YCSB by key range) [default: one node, no cluster].
    #[arg(long, value_parser = ranged(1u16, txlab_harness::registry::partitioned::MAX_NODES), allow_negative_numbers = true)]
    pub nodes: Option<u16>,
    /// docc*, calvin with --nodes: inproc (threads of this process with --link-latency-us); tcp
    /// runs one node per process through `txlab cluster --local N -- run ...`.
    #[arg(long, value_enum, default_value_t = Transport::Inproc)]
    pub transport: Transport,
    /// rococo, 2pl-2pc, occ-2pc, and docc*, calvin with --nodes: emulated one-way link latency
    /// between nodes in microseconds, 0..=1000000 (0: none).
    #[arg(long, default_value_t = 100, value_parser = ranged(0u64, 1_000_000), allow_negative_numbers = true)]
    pub link_latency_us: u64,
    /// docc*, calvin with --nodes: on (a multi-partition transaction's non-leading participants
    /// send their read set and go on without waiting for its outcome, holding its keys), off
    /// (they wait at it) [default: off].
    #[arg(long, value_enum)]
    pub pipeline: Option<SwitchArg>,
    /// rococo: the dependency graph's GC epoch in milliseconds, 0..=60000 (0: GC off).
    #[arg(long, default_value_t = 100, value_parser = ranged(0u64, 60_000), allow_negative_numbers = true)]
    pub gc_epoch_ms: u64,
}

/// An on/off flag (`--pipeline`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SwitchArg {
    /// On.
    On,
    /// Off.
    Off,
}

/// `--ack`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AckArg {
    /// At commit (latency runs).
    Commit,
    /// Once the commit's epoch is stable (Silo's group commit).
    Epoch,
}

/// The protocols `txlab compare` runs by default.
pub const COMPARED: &str = "silo,tictoc,mvto,silo-nwr,silo-nwr-single,tictoc-nwr,tictoc-nwr-single,mvto-nwr,mvto-nwr-single";

/// `txlab compare`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Protocols, comma-separated; the first is the baseline of the ratios unless --baseline
    /// names another.
    #[arg(long, value_delimiter = ',', default_value = COMPARED, value_parser = parse_protocol)]
    pub protocol: Vec<Protocol>,
    /// Workloads, comma-separated (theta 0.99 where the workload has a skew).
    #[arg(long, value_delimiter = ',', default_value = "ycsb-a,smallbank", value_parser = parse_workload)]
    pub workload: Vec<WorkloadKind>,
    /// Worker thread counts, comma-separated, each 1..=1024 [default: 1 and every physical
    /// core].
    #[arg(long, value_delimiter = ',', value_parser = ranged(1usize, txlab_harness::runner::MAX_THREADS), allow_negative_numbers = true)]
    pub threads: Option<Vec<usize>>,
    /// Zipf skews, comma-separated, each 0..=10.
    #[arg(long, value_delimiter = ',', default_value = "0.99", value_parser = ranged(0.0f64, 10.0), allow_negative_numbers = true)]
    pub theta: Vec<f64>,
    /// Rounds, 1..=1000: every point runs once per round, protocols interleaved.
    #[arg(long, default_value_t = 8, value_parser = ranged(1u32, 1000), allow_negative_numbers = true)]
    pub rounds: u32,
    /// The protocol the others are compared to [default: the first of --protocol].
    #[arg(long, value_parser = parse_protocol)]
    pub baseline: Option<Protocol>,
    /// Divide by the baseline's run at this thread count instead of each point's own (one of
    /// --threads; see `txlab run --help`).
    #[arg(long, value_parser = ranged(1usize, txlab_harness::runner::MAX_THREADS), allow_negative_numbers = true)]
    pub baseline_threads: Option<usize>,
    /// Output directory [default: results/compare-YYYYmmdd-HHMMSS, UTC].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write into an --out directory that already holds results (replacing them).
    #[arg(long)]
    pub overwrite: bool,
    /// Compare several txlab binaries, LABEL=PATH comma-separated (e.g.
    /// old=/tmp/txlab-old,new=target/release/txlab): every (build, protocol) pair runs in every
    /// round, as `LABEL:PROTOCOL`; ratios divide by the first build's baseline protocol.
    #[arg(long, value_delimiter = ',', value_parser = builds::parse_build)]
    pub builds: Vec<builds::Build>,
    /// Measured interval per run (at least 1ms, at most 24h).
    #[arg(long, default_value = "500ms", value_parser = parse_run_duration, allow_hyphen_values = true)]
    pub duration: Duration,
    /// Warm-up before each run's measurement (at most 24h).
    #[arg(long, default_value = "200ms", value_parser = parse_warmup, allow_hyphen_values = true)]
    pub warmup: Duration,
    /// Uncounted cool-down after each run's measurement (at most 24h).
    #[arg(long, default_value = "100ms", value_parser = parse_cooldown, allow_hyphen_values = true)]
    pub cooldown: Duration,
    /// Workload, engine and placement parameters.
    #[command(flatten)]
    pub params: ParamArgs,
}

/// `txlab plot`.
#[derive(Debug, Clone, Args)]
pub struct PlotArgs {
    /// Directories written by `txlab run`, `compare`, `cluster --out` or `batch-figures` (holding
    /// results.json), or results.json files under any name. Runs of several are drawn together,
    /// against whatever differs between them (threads, theta, --epoch-ms, --clients-per-server,
    /// --servers, --nodes, ...).
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where the charts go [default: the one DIR; required with several or with a file].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

impl PlotArgs {
    /// The charts' directory: `--out`, else the one directory given.
    pub fn out_dir(&self) -> Result<PathBuf, Error> {
        match (&self.out, self.dirs.as_slice()) {
            (Some(out), _) => Ok(out.clone()),
            (None, [dir]) if !dir.is_file() => Ok(dir.clone()),
            _ => Err(Error::invalid(
                "--out",
                "",
                "a directory for the charts: needed when several DIRs or a results file are \
                 given",
            )),
        }
    }
}

/// Parses `500ms`, `1s`, `2m`, `1h`, `250us` (a non-negative integer or decimal and a unit).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!(
            "'{s}' is negative: a duration is at least 0 (e.g. 500ms, 1s, 2m)"
        ));
    }
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
    if d < MIN_RUN_DURATION || d > txlab_harness::runner::MAX_DURATION {
        return Err(format!(
            "{s} is not accepted: the duration must be greater than 0, at least 1ms (a shorter \
             interval measures the clock, not the protocol) and at most 24h"
        ));
    }
    Ok(d)
}

fn parse_warmup(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d > txlab_harness::runner::MAX_DURATION {
        return Err(format!(
            "{s} is not accepted: the warm-up must be at most 24h"
        ));
    }
    Ok(d)
}

fn parse_cooldown(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d > txlab_harness::runner::MAX_DURATION {
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
                concurrency: self.concurrency.unwrap_or(DEFAULT_CONCURRENCY),
                reorder_workers: self.reorder_workers,
                fvs: self.fvs,
                policy: self.policy,
                fvs_refinement: self.fvs_refinement,
            },
            cluster: ClusterParams {
                servers: self.servers,
                clients_per_server: self.clients_per_server,
                client_threads: self.client_threads,
                link_latency_us: self.link_latency_us,
                gc_epoch_ms: self.gc_epoch_ms,
            },
            deterministic: DeterministicParams {
                batch_epoch_us: self.batch_epoch_us,
                concurrency: self.concurrency.unwrap_or(DETERMINISTIC_CONCURRENCY),
                lock_managers: self.lock_managers,
                nodes: self.nodes,
                transport: self.transport,
                pipeline: self.pipeline.map(|p| p == SwitchArg::On),
            },
        }
    }
}

impl RunArgs {
    /// `txlab run`'s flags parsed from `args` (without `txlab run`), as every node of a
    /// `txlab cluster` parses the flags its cluster file carries.
    pub fn parse_run_flags(args: &[String]) -> Result<Self, String> {
        let argv = ["txlab", "run"]
            .into_iter()
            .map(String::from)
            .chain(args.iter().cloned());
        match Cli::try_parse_from(argv)
            .map_err(|e| e.to_string())?
            .command
        {
            Command::Run(run) => Ok(run),
            _ => unreachable!("`txlab run ...` parses as the run command"),
        }
    }

    /// The sweep these flags describe (not yet validated against the workloads).
    pub fn spec(&self) -> SweepSpec {
        SweepSpec {
            protocols: self.protocol.clone(),
            workloads: self.workload.clone(),
            threads: self.threads.clone(),
            thetas: self.theta.clone(),
            repeat: self.repeat,
            baseline: self.baseline.or(self.protocol.first().copied()),
            baseline_threads: self.baseline_threads,
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
    /// The comparison sweep: `--protocol` (by default the nine interactive protocols; the
    /// batching engines measure another architecture), `--workload` at theta 0.99, 1 thread
    /// and every physical core, `--rounds` rounds.
    pub fn spec(&self, physical_cores: usize) -> SweepSpec {
        let mut threads = vec![1, physical_cores.max(1)];
        threads.dedup();
        SweepSpec {
            protocols: self.protocol.clone(),
            workloads: self.workload.clone(),
            threads: self.threads.clone().unwrap_or(threads),
            thetas: self.theta.clone(),
            repeat: self.rounds,
            baseline: self.baseline.or(self.protocol.first().copied()),
            baseline_threads: self.baseline_threads,
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

/// The `txlab list` text.
pub fn list_text() -> String {
    let width = Protocol::visible()
        .map(|p| p.name().len())
        .chain(WorkloadKind::visible().map(|w| w.name().len()))
        .max()
        .unwrap_or(0);
    let mut out = String::from("protocols:\n");
    for p in Protocol::visible() {
        out.push_str(&format!("  {:<width$}  {}\n", p.name(), p.description()));
    }
    out.push_str("workloads:\n");
    for w in WorkloadKind::visible() {
        out.push_str(&format!("  {:<width$}  {}\n", w.name(), w.description()));
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

/// [`sweep_into`] a directory that must not hold earlier results.
pub fn sweep_and_report(spec: &SweepSpec, out: &Path) -> Result<Vec<RunRecord>, Failure> {
    sweep_into(spec, out, false, &[])
}

/// Validates everything before running (exit 2 on bad input: the sweep, the memory it needs,
/// the flags given on the command line, the output directory), runs, writes results and prints
/// the summary table with its notes.
pub fn sweep_into(
    spec: &SweepSpec,
    out: &Path,
    overwrite: bool,
    given: &[&str],
) -> Result<Vec<RunRecord>, Failure> {
    spec.validate().map_err(Failure::Usage)?;
    let flag_notes = spec.applicability(given).map_err(Failure::Usage)?;
    output::prepare(out, overwrite).map_err(Failure::Usage)?;
    for note in &flag_notes {
        eprintln!("note: {note}");
    }
    let mut progress = Progress::new();
    let records = run_sweep(spec, &mut |step| progress.step(step));
    progress.finish(records.is_ok());
    let records = records.map_err(|e| Failure::Run(format!("run failed: {e}")))?;
    let baseline = spec.baseline.map(|b| b.name());
    write_report(spec, spec, &records, baseline, out)?;
    Ok(records)
}

/// Writes `records` into `out` (results.csv, summary.csv, results.json with `config`) and
/// prints their summary table against `baseline` and the notes on how they were produced.
fn write_report(
    spec: &SweepSpec,
    config: &impl serde::Serialize,
    records: &[RunRecord],
    baseline: Option<&str>,
    out: &Path,
) -> Result<(), Failure> {
    let machine = MachineInfo::detect();
    let summary = summarize_against(records, baseline, spec.baseline_threads);
    write_results(out, &machine, config, records, &summary)
        .map_err(|e| Failure::Run(e.to_string()))?;
    print!("{}", summary_table(&summary, baseline));
    for note in run_notes(records, &machine, spec) {
        println!("note: {note}");
    }
    println!("results written to {}", out.display());
    Ok(())
}

/// Draws the charts of the results in `out` ([`plot::plot_dir`]); a failure says that the
/// results are written and how to plot them once fixed.
pub fn plot_written(out: &Path) -> Result<(), Failure> {
    let files = plot::plot_dir(out).map_err(|e| {
        Failure::Run(format!(
            "the results are in {}, but plotting them failed: {e} (fix that and run `txlab \
             plot {}`)",
            out.display(),
            out.display()
        ))
    })?;
    println!("plots written to {} ({} files)", out.display(), files.len());
    Ok(())
}

/// `write_report` with the baseline of `spec`, then `plot_written`.
pub fn report_and_plot(
    spec: &SweepSpec,
    config: &impl serde::Serialize,
    records: &[RunRecord],
    out: &Path,
) -> Result<(), Failure> {
    write_report(spec, config, records, spec.baseline.map(|b| b.name()), out)?;
    plot_written(out)
}

/// `compare --builds`: validated like a sweep, run through [`builds::run`], reported alike.
fn compare_builds(
    args: &CompareArgs,
    spec: &SweepSpec,
    out: &Path,
    given: &[&str],
) -> Result<(), Failure> {
    spec.validate().map_err(Failure::Usage)?;
    builds::validate(&args.builds).map_err(Failure::Usage)?;
    spec.applicability(given).map_err(Failure::Usage)?;
    output::prepare(out, args.overwrite).map_err(Failure::Usage)?;
    let records = builds::run(args, spec, out, given)?;
    let baseline = spec
        .baseline
        .map(|b| format!("{}:{}", args.builds[0].label, b.name()));
    // `txlab run --out`'s config (the sweep at the top level, as `txlab plot` reads it) and
    // the builds compared.
    let mut config = serde_json::to_value(spec)
        .map_err(|e| Failure::Run(format!("serializing the config: {e}")))?;
    config["builds"] = args
        .builds
        .iter()
        .map(|b| serde_json::json!({"label": b.label, "path": b.path.display().to_string()}))
        .collect();
    write_report(spec, &config, &records, baseline.as_deref(), out)
}

/// The caveats `txlab run` prints under its table: what a reader of these numbers must know
/// about how they were produced.
pub fn run_notes(records: &[RunRecord], machine: &MachineInfo, spec: &SweepSpec) -> Vec<String> {
    let mut notes = Vec::new();
    let empty = records.iter().filter(|r| r.result.commits == 0).count();
    if empty > 0 {
        notes.push(format!(
            "{empty} run(s) committed no transaction: they are not measurements (a longer \
             --duration or fewer threads may help)"
        ));
    }
    let few = records
        .iter()
        .filter(|r| r.result.commits > 0 && r.result.commits < FEW_COMMITS)
        .count();
    if few > 0 {
        notes.push(format!(
            "{few} run(s) committed fewer than {FEW_COMMITS} transactions: their throughput and \
             latency are noise; use a longer --duration"
        ));
    }
    let capped = records
        .iter()
        .filter(|r| spec.check && r.result.elapsed_s < 0.99 * spec.duration.as_secs_f64())
        .count();
    if capped > 0 {
        notes.push(format!(
            "{capped} --check run(s) ended their measured interval early: the recorded history \
             (every attempt of the warm-up, measured interval and cool-down) reached its memory \
             bound, half the memory this process may use"
        ));
    }
    if records.iter().any(|r| r.result.ack == "epoch") {
        notes.push(format!(
            "latency of --ack epoch runs includes waiting for the commit's epoch to become stable \
             (group commit, --epoch-ms {}): p50 is about one epoch, p99 about two; --ack commit \
             measures the commit path",
            spec.engine.epoch.as_millis()
        ));
    }
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

/// One line per run whose `--check` failed or checked nothing (no commit).
pub fn check_failures(records: &[RunRecord]) -> Vec<String> {
    records
        .iter()
        .filter_map(|r| {
            let c = r.check.as_ref()?;
            if r.result.commits == 0 {
                return Some(format!(
                    "{} {} threads={} repeat={}: committed no transaction in its measured \
                     interval, so nothing was checked (use a longer --duration)",
                    r.protocol, r.workload, r.threads, r.repeat
                ));
            }
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

/// Runs a parsed command line (no flag-applicability check: [`execute_args`] has the flags
/// given).
pub fn execute(cli: Cli) -> Result<(), Failure> {
    execute_with(cli, &[])
}

/// Parses `argv` (the program name first) and runs it, refusing flags that no protocol or
/// workload of the run reads ([`SweepSpec::applicability`]).
pub fn execute_args<I, T>(argv: I) -> Result<(), Failure>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = Cli::command()
        .try_get_matches_from(argv)
        .map_err(|e| Failure::Usage(Error::invalid("command line", "", e.to_string())))?;
    let cli = Cli::from_arg_matches(&matches)
        .map_err(|e| Failure::Usage(Error::invalid("command line", "", e.to_string())))?;
    let given = given_flags(&matches);
    let given: Vec<&str> = given.iter().map(String::as_str).collect();
    execute_with(cli, &given)
}

/// The `--flags` given on the command line of the subcommand in `matches`.
pub fn given_flags(matches: &clap::ArgMatches) -> Vec<String> {
    let Some((_, sub)) = matches.subcommand() else {
        return Vec::new();
    };
    sub.ids()
        .filter(|id| sub.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine))
        .map(|id| format!("--{}", id.as_str().replace('_', "-")))
        .collect()
}

fn execute_with(cli: Cli, given: &[&str]) -> Result<(), Failure> {
    match cli.command {
        Command::List => {
            print!("{}", list_text());
            Ok(())
        }
        Command::Run(args) => {
            let out = args
                .out
                .clone()
                .unwrap_or_else(|| output::default_dir("run"));
            let records = sweep_into(&args.spec(), &out, args.overwrite, given)?;
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
            let cores = txlab_harness::topology::physical_cores_of_this_machine();
            let out = args
                .out
                .clone()
                .unwrap_or_else(|| output::default_dir("compare"));
            let spec = args.spec(cores);
            if args.builds.is_empty() {
                sweep_into(&spec, &out, args.overwrite, given)?;
            } else {
                compare_builds(&args, &spec, &out, given)?;
            }
            plot_written(&out)
        }
        Command::Plot(args) => {
            let out = args.out_dir().map_err(Failure::Usage)?;
            let files = plot::plot_inputs(&args.dirs, &out).map_err(|e| match e {
                e @ Error::InvalidConfig { .. } => Failure::Usage(e),
                e => Failure::Run(e.to_string()),
            })?;
            for f in files {
                println!("{}", f.display());
            }
            Ok(())
        }
        Command::RococoCheck(args) => crate::rococo_check::execute(&args),
        Command::BatchFigures(args) => crate::batch_figures::execute(&args),
        Command::Node(a) => cluster_subcommand("node", &a.args),
        Command::Cluster(a) => cluster_subcommand("cluster", &a.args),
    }
}

/// The `txlab` binary's entry point.
pub fn main() -> ExitCode {
    let matches = match Cli::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { 0 });
        }
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let given = given_flags(&matches);
    let given: Vec<&str> = given.iter().map(String::as_str).collect();
    match execute_with(cli, &given) {
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
    use txlab_harness::runner::RunResult;

    /// A run of `protocol` on YCSB-A with made-up numbers.
    fn record(protocol: &str, repeat: u32, tps: f64) -> RunRecord {
        let mut result = RunResult::empty(2).unwrap();
        result.throughput_tps = tps;
        result.commits = tps as u64;
        result.elapsed_s = 5.0;
        RunRecord {
            protocol: protocol.into(),
            workload: "ycsb-a".into(),
            threads: 2,
            theta: Some(0.9),
            repeat,
            seed: 42,
            parameters: Default::default(),
            result,
            check: None,
        }
    }

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
        let spec = run_spec(&[]);
        assert!(run_notes(&runs, &machine(true, "packed"), &spec).is_empty());
    }

    fn run_spec(args: &[&str]) -> SweepSpec {
        let mut argv = vec!["txlab", "run"];
        argv.extend_from_slice(args);
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Run(r) => r.spec(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn empty_and_short_runs_and_group_commit_latency_are_noted() {
        let mut empty = on("ycsb-a", "silo");
        empty.result.commits = 0;
        let mut few = on("ycsb-a", "silo");
        few.result.commits = 3;
        let mut epoch = on("ycsb-a", "silo");
        epoch.result.ack = "epoch".into();
        let notes = run_notes(
            &[empty, few, epoch],
            &machine(true, "packed"),
            &run_spec(&[]),
        );
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(notes[0].contains("1 run(s) committed no transaction"));
        assert!(notes[1].contains("fewer than 100"));
        assert!(notes[2].contains("--epoch-ms 40") && notes[2].contains("--ack commit"));
        let mut capped = on("ycsb-a", "silo");
        capped.result.elapsed_s = 0.5;
        let spec = run_spec(&["--check", "--duration", "1s"]);
        let notes = run_notes(&[capped], &machine(true, "packed"), &spec);
        assert!(notes[0].contains("memory bound"), "{notes:?}");
    }

    #[test]
    fn debug_builds_layouts_and_oversubscription_are_noted() {
        let mut over = on("ycsb-a", "silo");
        over.result.oversubscribed = true;
        let notes = run_notes(
            &[over],
            &machine(false, "line-aligned (64 B): silo"),
            &run_spec(&[]),
        );
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(notes[0].starts_with("oversubscribed"));
        assert!(notes[1].contains("debug build"));
        assert!(notes[2].contains("line-aligned (64 B): silo"));
    }
}
