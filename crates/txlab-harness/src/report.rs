//! Reports: `results.csv` (one row per run, every round), `summary.csv` and the summary table
//! (one row per point: median over rounds with its bootstrap interval, ratio to the baseline
//! protocol), and `results.json` (everything, with the machine).
//!
//! # CSV schema (stable)
//!
//! The first columns are fixed, in this order ([`FIXED_COLUMNS`]); a test pins them, and they
//! change only by appending. Then, sorted by name within each group and taken over all rows of the
//! file (empty where a row has no such value):
//!
//! - `param_<name>`: one per workload parameter (`Workload::parameters`);
//! - `abort_<cause>`: conflict aborts by `ConflictCause::name()`;
//! - `counter_<name>`: protocol-specific counters (`Worker::drain_counters`);
//! - `commits_<kind>`: commits by transaction type (`Program::kind()`, e.g. `commits_new_order`);
//! - `abort_<cause>@<table>`: conflict aborts by cause and by the table the conflict named
//!   (`RunResult::conflicts_by_table`, e.g. `abort_phantom_validation@new_order`).
//!
//! Fields containing a comma, quote or newline are quoted RFC 4180 style. `cpus` lists the
//! pinned CPU of each worker separated by `;` (`-` for an unpinned worker).

use crate::machine::MachineInfo;
use crate::point::CheckSummary;
use crate::runner::RunResult;
use crate::stats::{Estimate, median};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use txlab_core::Error;

/// The fixed leading columns of `results.csv`, in order.
pub const FIXED_COLUMNS: [&str; 25] = [
    "protocol",
    "workload",
    "threads",
    "theta",
    "repeat",
    "duration_s",
    "commits",
    "aborts",
    "throughput_tps",
    "abort_rate",
    "p50_us",
    "p90_us",
    "p99_us",
    "p999_us",
    "max_us",
    "oversubscribed",
    "user_aborts",
    "retries",
    "abandoned",
    "unacknowledged",
    "cpu_time_s",
    "peak_rss_bytes",
    "ack",
    "seed",
    "cpus",
];

/// One run of the sweep: its coordinates and its result (as `results.json` holds it, and as a
/// `txlab cluster` client node reports it).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    /// Protocol name.
    pub protocol: String,
    /// Workload name.
    pub workload: String,
    /// Worker threads.
    pub threads: usize,
    /// Zipf skew, for workloads that have one.
    pub theta: Option<f64>,
    /// Repeat index, from 0.
    pub repeat: u32,
    /// Generator seed.
    pub seed: u64,
    /// The workload's parameters.
    pub parameters: BTreeMap<String, String>,
    /// The measurement.
    pub result: RunResult,
    /// What `--check` found, if it was given.
    pub check: Option<CheckSummary>,
}

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

struct Extra {
    params: BTreeSet<String>,
    causes: BTreeSet<String>,
    counters: BTreeSet<String>,
    kinds: BTreeSet<String>,
    tables: BTreeSet<String>,
}

fn extra_columns(records: &[RunRecord]) -> Extra {
    let mut e = Extra {
        params: BTreeSet::new(),
        causes: BTreeSet::new(),
        counters: BTreeSet::new(),
        kinds: BTreeSet::new(),
        tables: BTreeSet::new(),
    };
    for r in records {
        e.kinds.extend(r.result.commits_by_kind.keys().cloned());
        e.params.extend(r.parameters.keys().cloned());
        e.causes.extend(r.result.conflicts_by_cause.keys().cloned());
        e.counters.extend(r.result.counters.keys().cloned());
        e.tables.extend(r.result.conflicts_by_table.keys().cloned());
    }
    e
}

/// The header of `results.csv` for these records.
pub fn csv_header(records: &[RunRecord]) -> Vec<String> {
    let e = extra_columns(records);
    FIXED_COLUMNS
        .iter()
        .map(|c| c.to_string())
        .chain(e.params.iter().map(|p| format!("param_{p}")))
        .chain(e.causes.iter().map(|c| format!("abort_{c}")))
        .chain(e.counters.iter().map(|c| format!("counter_{c}")))
        .chain(e.kinds.iter().map(|k| format!("commits_{k}")))
        .chain(e.tables.iter().map(|t| format!("abort_{t}")))
        .collect()
}

/// `results.csv` as text.
pub fn to_csv(records: &[RunRecord]) -> String {
    let e = extra_columns(records);
    let mut out = csv_header(records).join(",");
    out.push('\n');
    for rec in records {
        let r = &rec.result;
        let cpus: Vec<String> = r
            .cpus
            .iter()
            .map(|c| c.map_or_else(|| "-".to_string(), |c| c.to_string()))
            .collect();
        let mut row: Vec<String> = vec![
            rec.protocol.clone(),
            rec.workload.clone(),
            rec.threads.to_string(),
            rec.theta.map(|t| t.to_string()).unwrap_or_default(),
            rec.repeat.to_string(),
            format!("{:.6}", r.elapsed_s),
            r.commits.to_string(),
            r.conflicts.to_string(),
            format!("{:.1}", r.throughput_tps),
            format!("{:.6}", r.abort_rate),
            format!("{:.3}", r.latency.p50_us),
            format!("{:.3}", r.latency.p90_us),
            format!("{:.3}", r.latency.p99_us),
            format!("{:.3}", r.latency.p999_us),
            format!("{:.3}", r.latency.max_us),
            r.oversubscribed.to_string(),
            r.user_aborts.to_string(),
            r.retries.to_string(),
            r.abandoned.to_string(),
            r.unacknowledged.to_string(),
            format!("{:.6}", r.cpu_time_s),
            r.peak_rss_bytes.to_string(),
            r.ack.clone(),
            rec.seed.to_string(),
            cpus.join(";"),
        ];
        row.extend(
            e.params
                .iter()
                .map(|p| rec.parameters.get(p).cloned().unwrap_or_default()),
        );
        row.extend(e.causes.iter().map(|c| {
            r.conflicts_by_cause
                .get(c)
                .copied()
                .unwrap_or(0)
                .to_string()
        }));
        row.extend(
            e.counters
                .iter()
                .map(|c| r.counters.get(c).copied().unwrap_or(0).to_string()),
        );
        row.extend(
            e.kinds
                .iter()
                .map(|k| r.commits_by_kind.get(k).copied().unwrap_or(0).to_string()),
        );
        row.extend(e.tables.iter().map(|t| {
            r.conflicts_by_table
                .get(t)
                .copied()
                .unwrap_or(0)
                .to_string()
        }));
        let row: Vec<String> = row.iter().map(|f| field(f)).collect();
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

/// Everything `results.json` holds.
#[derive(Debug, Serialize)]
pub struct ResultsFile<'a, C: Serialize> {
    /// The machine and build.
    pub machine: &'a MachineInfo,
    /// The sweep's configuration (every parameter, defaults included).
    pub config: &'a C,
    /// Every run.
    pub runs: &'a [RunRecord],
    /// One row per point over its rounds, with ratios to the baseline ([`summarize`]).
    pub summary: &'a [SummaryRow],
}

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::invalid(
        "output path",
        path.display(),
        format!("a writable location ({e})"),
    )
}

/// Writes `results.csv` (every run), `summary.csv` and `results.json` into `dir` (created if
/// missing).
pub fn write_results<C: Serialize>(
    dir: &Path,
    machine: &MachineInfo,
    config: &C,
    records: &[RunRecord],
    summary: &[SummaryRow],
) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let csv = dir.join("results.csv");
    std::fs::write(&csv, to_csv(records)).map_err(|e| io_err(&csv, e))?;
    let sum = dir.join("summary.csv");
    std::fs::write(&sum, summary_csv(summary)).map_err(|e| io_err(&sum, e))?;
    let json = dir.join("results.json");
    let file = ResultsFile {
        machine,
        config,
        runs: records,
        summary,
    };
    let text = serde_json::to_string_pretty(&file)
        .map_err(|e| Error::Internal(format!("serializing results: {e}")))?;
    std::fs::write(&json, text).map_err(|e| io_err(&json, e))?;
    Ok(())
}

/// One line of the summary: a (protocol, workload, threads, theta) point over its rounds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRow {
    /// Protocol name.
    pub protocol: String,
    /// Workload name.
    pub workload: String,
    /// Worker threads.
    pub threads: usize,
    /// Zipf skew, for workloads that have one.
    pub theta: Option<f64>,
    /// Rounds (runs) of the point.
    pub rounds: usize,
    /// Runs that committed no transaction (their throughput and latency are not measurements).
    pub empty_runs: usize,
    /// Throughput (commits/s): median over the rounds and its bootstrap interval.
    pub throughput: Option<Estimate>,
    /// Throughput relative to the baseline protocol's at the same point, per round, with its
    /// interval; `None` for the baseline itself or without a baseline run.
    pub ratio: Option<Estimate>,
    /// Commits per CPU-second (process CPU time over the measured interval) relative to the
    /// baseline's, per round, with its interval: the ratio at equal CPU spent, which threads
    /// that wait without working (or a different thread budget) do not inflate.
    pub cpu_ratio: Option<Estimate>,
    /// Engine counters over all rounds, by name: events per commit (summed over the
    /// rounds, divided by their commits); `NAME_busy_ns` as `NAME_utilization`, the busy time
    /// as a fraction of the measured time; statistics of a distribution (`_mean`,
    /// `_mean_x100` shown as `_mean` divided by 100, `_p99`) as their median over the rounds,
    /// and maxima (`_max`) as the largest round's.
    pub counters: BTreeMap<String, f64>,
    /// Conflict aborts by `cause@table` ([`RunResult::conflicts_by_table`]) as a fraction of all
    /// attempts (commits plus conflict aborts), pooled over the rounds.
    pub aborts_by_table: BTreeMap<String, f64>,
    /// Throughput by transaction kind (`RunResult::commits_by_kind` over the measured
    /// interval, e.g. TPC-C `new_order` commits/s), by kind: median over the rounds with its
    /// interval and the per-round ratio to the baseline's throughput of the same kind.
    pub by_kind: BTreeMap<String, KindRow>,
    /// Median conflict abort rate.
    pub abort_rate: f64,
    /// Median p50 latency (µs).
    pub p50_us: f64,
    /// Median p99 latency (µs).
    pub p99_us: f64,
    /// Some run was oversubscribed.
    pub oversubscribed: bool,
}

/// One transaction kind's throughput in a [`SummaryRow`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KindRow {
    /// Commits of this kind per second: median over the rounds and its bootstrap interval.
    pub throughput: Option<Estimate>,
    /// This kind's throughput relative to the baseline's of the same kind, per round, with its
    /// interval (`None` for the baseline itself, without a baseline run or where the baseline
    /// committed none of this kind).
    pub ratio: Option<Estimate>,
}

/// Commits of `kind` per second of a run's measured interval (0 where it committed none).
fn kind_tps(r: &RunResult, kind: &str) -> f64 {
    let n = r.commits_by_kind.get(kind).copied().unwrap_or(0);
    if r.elapsed_s > 0.0 {
        n as f64 / r.elapsed_s
    } else {
        0.0
    }
}

/// Commits per CPU-second of a run.
fn per_cpu_second(r: &RunResult) -> f64 {
    r.commits as f64 / r.cpu_time_s
}

/// [`SummaryRow::aborts_by_table`] of a point's runs.
fn abort_shares(g: &[&RunRecord]) -> BTreeMap<String, f64> {
    let attempts: u64 = g
        .iter()
        .map(|r| r.result.commits + r.result.conflicts)
        .sum();
    let mut sums: BTreeMap<String, u64> = BTreeMap::new();
    for r in g {
        for (k, v) in &r.result.conflicts_by_table {
            *sums.entry(k.clone()).or_default() += v;
        }
    }
    sums.into_iter()
        .map(|(k, n)| (k, n as f64 / attempts.max(1) as f64))
        .collect()
}

/// How [`SummaryRow::counters`] summarizes one engine counter over a point's rounds, by the
/// counter's name: most counters count events, but a few report a statistic of a run (a mean,
/// a percentile, a maximum), which divided by commits would mean nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CounterKind {
    /// Events: the sum over the rounds per commit.
    PerCommit,
    /// `NAME_busy_ns`: busy time over the measured time, as `NAME_utilization`.
    Busy,
    /// `_mean`, `_p99` or a percentile in nanoseconds (`_p50_ns`, `_p99_ns`): the median over
    /// the rounds.
    Statistic,
    /// `_mean_x100`: a mean kept with two decimals; the median over the rounds, divided by 100,
    /// as `NAME_mean`.
    MeanX100,
    /// `_max`: the largest over the rounds.
    Max,
}

impl CounterKind {
    /// The kind of the counter `name` and the name it is shown under.
    fn of(name: &str) -> (Self, String) {
        if let Some(base) = name.strip_suffix("_busy_ns") {
            (Self::Busy, format!("{base}_utilization"))
        } else if let Some(base) = name.strip_suffix("_mean_x100") {
            (Self::MeanX100, format!("{base}_mean"))
        } else if name.ends_with("_mean")
            || name.ends_with("_p99")
            || name.ends_with("_p50_ns")
            || name.ends_with("_p99_ns")
        {
            (Self::Statistic, name.to_string())
        } else if name.ends_with("_max") {
            (Self::Max, name.to_string())
        } else {
            (Self::PerCommit, name.to_string())
        }
    }
}

/// A summary row's point as the table's per-point lines name it: protocol, workload, threads
/// and, where set, theta.
fn point_label(r: &SummaryRow) -> String {
    let theta = r.theta.map_or_else(String::new, |t| format!(" theta {t}"));
    format!("{} {} {}{theta}", r.protocol, r.workload, r.threads)
}

/// [`SummaryRow::counters`] of a point's runs.
fn counter_rates(g: &[&RunRecord]) -> BTreeMap<String, f64> {
    let commits: u64 = g.iter().map(|r| r.result.commits).sum();
    let elapsed_ns: f64 = g.iter().map(|r| r.result.elapsed_s * 1e9).sum();
    let mut rounds: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for r in g {
        for (k, v) in &r.result.counters {
            rounds.entry(k.as_str()).or_default().push(*v);
        }
    }
    rounds
        .into_iter()
        .filter_map(|(k, values)| {
            let (kind, name) = CounterKind::of(k);
            let sum = values.iter().sum::<u64>() as f64;
            let mid = || median(&values.iter().map(|&v| v as f64).collect::<Vec<_>>());
            let value = match kind {
                CounterKind::Busy if elapsed_ns > 0.0 => sum / elapsed_ns,
                CounterKind::PerCommit if commits > 0 => sum / commits as f64,
                CounterKind::Busy | CounterKind::PerCommit => return None,
                CounterKind::Statistic => mid(),
                CounterKind::MeanX100 => mid() / 100.0,
                CounterKind::Max => values.iter().copied().max().unwrap_or(0) as f64,
            };
            Some((name, value))
        })
        .collect()
}

/// The summary of `records`: one row per (protocol, workload, threads, theta) in order of first
/// appearance, ratios against `baseline` at the same point (`crate::stats`: medians over
/// rounds, bootstrap intervals, per-round ratios). Runs without commits are left out of the
/// estimates.
pub fn summarize(records: &[RunRecord], baseline: Option<&str>) -> Vec<SummaryRow> {
    summarize_against(records, baseline, None)
}

/// [`summarize`], with the baseline's runs taken at `baseline_threads` threads (when given)
/// instead of each row's own thread count: a comparison at the same thread budget when the
/// protocols use their threads differently (DOCC's 2 workers against Calvin's lock manager and
/// 1 worker).
pub fn summarize_against(
    records: &[RunRecord],
    baseline: Option<&str>,
    baseline_threads: Option<usize>,
) -> Vec<SummaryRow> {
    type Key = (String, String, usize, u64);
    let key = |r: &RunRecord| {
        (
            r.protocol.clone(),
            r.workload.clone(),
            r.threads,
            r.theta.map_or(u64::MAX, f64::to_bits),
        )
    };
    let mut order: Vec<Key> = Vec::new();
    let mut groups: BTreeMap<Key, Vec<&RunRecord>> = BTreeMap::new();
    for r in records {
        let k = key(r);
        if !groups.contains_key(&k) {
            order.push(k.clone());
        }
        groups.entry(k).or_default().push(r);
    }
    let measured = |g: &[&RunRecord]| -> Vec<f64> {
        g.iter()
            .filter(|r| r.result.commits > 0)
            .map(|r| r.result.throughput_tps)
            .collect()
    };
    order
        .into_iter()
        .map(|k| {
            let g = &groups[&k];
            let col = |f: &dyn Fn(&RunResult) -> f64| {
                median(
                    &g.iter()
                        .filter(|r| r.result.commits > 0)
                        .map(|r| f(&r.result))
                        .collect::<Vec<_>>(),
                )
            };
            let base_threads = baseline_threads.unwrap_or(k.2);
            let base = baseline
                .filter(|b| *b != k.0 || base_threads != k.2)
                .and_then(|b| groups.get(&(b.to_string(), k.1.clone(), base_threads, k.3)));
            let ratio_of = |f: &dyn Fn(&RunResult) -> f64| {
                let base = base?;
                Estimate::of_ratios(g.iter().filter(|r| r.result.commits > 0).filter_map(|r| {
                    let a = base
                        .iter()
                        .find(|a| a.repeat == r.repeat && a.result.commits > 0)?;
                    Some((f(&r.result), f(&a.result)))
                }))
            };
            let kinds: BTreeSet<&String> = g
                .iter()
                .flat_map(|r| r.result.commits_by_kind.keys())
                .collect();
            let by_kind = kinds
                .into_iter()
                .map(|kind| {
                    let tps = |r: &RunResult| kind_tps(r, kind);
                    let values: Vec<f64> = g
                        .iter()
                        .filter(|r| r.result.commits > 0)
                        .map(|r| tps(&r.result))
                        .collect();
                    let row = KindRow {
                        throughput: Estimate::of(&values),
                        ratio: ratio_of(&tps),
                    };
                    (kind.clone(), row)
                })
                .collect();
            SummaryRow {
                protocol: k.0.clone(),
                workload: k.1.clone(),
                threads: k.2,
                theta: g[0].theta,
                rounds: g.len(),
                empty_runs: g.iter().filter(|r| r.result.commits == 0).count(),
                throughput: Estimate::of(&measured(g)),
                ratio: ratio_of(&|r| r.throughput_tps),
                cpu_ratio: ratio_of(&per_cpu_second),
                counters: counter_rates(g),
                aborts_by_table: abort_shares(g),
                by_kind,
                abort_rate: col(&|r| r.abort_rate),
                p50_us: col(&|r| r.latency.p50_us),
                p99_us: col(&|r| r.latency.p99_us),
                oversubscribed: g.iter().any(|r| r.result.oversubscribed),
            }
        })
        .collect()
}

fn si(x: f64) -> String {
    if !x.is_finite() {
        "-".into()
    } else if x >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// Lays out rows of cells in columns as wide as their widest cell (first `left` columns
/// left-aligned, the others right-aligned), two spaces apart.
pub fn aligned(rows: &[Vec<String>], left: usize) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let pad = width[c] - cell.chars().count();
            if c > 0 {
                line.push_str("  ");
            }
            if c < left {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', pad));
            } else {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The human summary table of [`summarize`]'s rows (columns as wide as their longest entry).
///
/// `throughput/s [95% CI]` is the median over the rounds with its bootstrap interval; `vs
/// BASELINE` the median per-round ratio to the baseline with its interval, marked `~` when the
/// interval contains 1 (not distinguishable); `runs` counts rounds, with the ones that committed
/// nothing named (`3, 1 empty`). A point whose every run committed nothing shows `no commits`.
pub fn summary_table(rows: &[SummaryRow], baseline: Option<&str>) -> String {
    let with_ratio = baseline.is_some() && rows.iter().any(|r| r.ratio.is_some());
    let mut header: Vec<String> = ["protocol", "workload", "threads", "theta"]
        .map(String::from)
        .to_vec();
    header.push("throughput/s [95% CI]".into());
    if let (true, Some(b)) = (with_ratio, baseline) {
        header.push(format!("vs {b} [95% CI]"));
        header.push("per CPU-s".into());
    }
    header.extend(["abort%", "p50 µs", "p99 µs", "runs"].map(String::from));
    let mut table = vec![header];
    for r in rows {
        let mut row = vec![
            r.protocol.clone(),
            r.workload.clone(),
            r.threads.to_string(),
            r.theta.map_or_else(|| "-".into(), |t| t.to_string()),
        ];
        row.push(estimate_si(r.throughput));
        if with_ratio {
            let ratio = |q: Option<Estimate>| match q {
                Some(e) => ratio_cell(e),
                None if baseline == Some(r.protocol.as_str()) => "baseline".into(),
                None => "-".into(),
            };
            row.push(ratio(r.ratio));
            row.push(ratio(r.cpu_ratio));
        }
        let num = |x: f64| {
            if x.is_finite() {
                format!("{x:.2}")
            } else {
                "-".into()
            }
        };
        row.push(num(100.0 * r.abort_rate));
        row.push(num(r.p50_us));
        row.push(num(r.p99_us));
        let mut runs = r.rounds.to_string();
        if r.empty_runs > 0 {
            runs.push_str(&format!(", {} empty", r.empty_runs));
        }
        if r.oversubscribed {
            runs.push_str(" (oversubscribed)");
        }
        row.push(runs);
        table.push(row);
    }
    let mut out = aligned(&table, 2);
    if with_ratio {
        out.push_str(
            "~: the ratio's interval contains 1 (not distinguishable from the baseline at 95 %); \
             per CPU-s: the ratio of commits per CPU-second\n",
        );
    }
    let aborted: Vec<&SummaryRow> = rows
        .iter()
        .filter(|r| !r.aborts_by_table.is_empty())
        .collect();
    if !aborted.is_empty() {
        out.push_str("aborted attempts by cause@table (% of attempts, all rounds):\n");
        for r in aborted {
            let list: Vec<String> = r
                .aborts_by_table
                .iter()
                .map(|(k, v)| format!("{k} {}", significant(100.0 * v)))
                .collect();
            out.push_str(&format!("  {}: {}\n", point_label(r), list.join(", ")));
        }
    }
    let kinds: Vec<&SummaryRow> = rows.iter().filter(|r| r.by_kind.len() > 1).collect();
    if !kinds.is_empty() {
        out.push_str(&format!(
            "throughput by transaction kind (commits/s, median [95% CI]{}):\n",
            match baseline.filter(|_| with_ratio) {
                Some(b) => format!("; x the ratio to {b}'s of the same kind [95% CI]"),
                None => String::new(),
            }
        ));
        for r in kinds {
            let list: Vec<String> = r
                .by_kind
                .iter()
                .map(|(k, v)| {
                    let mut s = format!("{k} {}", estimate_si(v.throughput));
                    if let Some(q) = v.ratio {
                        s.push_str(&format!(" x{}", ratio_cell(q)));
                    }
                    s
                })
                .collect();
            out.push_str(&format!("  {}: {}\n", point_label(r), list.join(", ")));
        }
    }
    let counted: Vec<&SummaryRow> = rows.iter().filter(|r| !r.counters.is_empty()).collect();
    if !counted.is_empty() {
        out.push_str(
            "engine counters per commit (NAME_utilization: busy fraction of the measured time; _mean, _p99: median over the rounds; _max: largest round):\n",
        );
        for r in counted {
            let list: Vec<String> = r
                .counters
                .iter()
                .map(|(k, v)| format!("{k} {}", significant(*v)))
                .collect();
            out.push_str(&format!("  {}: {}\n", point_label(r), list.join(", ")));
        }
    }
    out
}

/// A throughput estimate: `median [lo, hi]` in k/M units (the median alone from one round;
/// `no commits` without one).
fn estimate_si(e: Option<Estimate>) -> String {
    match e {
        Some(e) if e.n > 1 => format!("{} [{}, {}]", si(e.median), si(e.lo), si(e.hi)),
        Some(e) => si(e.median),
        None => "no commits".into(),
    }
}

/// A ratio estimate: `median [lo, hi]`, marked `~` when the interval contains 1.
fn ratio_cell(e: Estimate) -> String {
    if e.n > 1 {
        format!(
            "{}{:.3} [{:.3}, {:.3}]",
            if e.distinguishes_from_one() { "" } else { "~" },
            e.median,
            e.lo,
            e.hi
        )
    } else {
        format!("{:.3}", e.median)
    }
}

/// `x` with three significant digits (no exponent for the counters' usual range).
fn significant(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.digits$}")
}

/// `summary.csv`: one row per [`SummaryRow`]; after the fixed columns, for every transaction
/// kind of any row (sorted), `throughput_<kind>_{median,lo,hi}` and `ratio_<kind>_{median,lo,hi}`
/// ([`SummaryRow::by_kind`]; empty where a row has no such kind or ratio).
pub fn summary_csv(rows: &[SummaryRow]) -> String {
    let kinds: BTreeSet<&String> = rows.iter().flat_map(|r| r.by_kind.keys()).collect();
    let mut out = String::from(
        "protocol,workload,threads,theta,rounds,empty_runs,throughput_median,throughput_lo,\
         throughput_hi,ratio_median,ratio_lo,ratio_hi,distinguishable,cpu_ratio_median,\
         cpu_ratio_lo,cpu_ratio_hi,abort_rate,p50_us,p99_us,oversubscribed",
    );
    for k in &kinds {
        for what in ["throughput", "ratio"] {
            for end in ["median", "lo", "hi"] {
                out.push_str(&format!(",{}", field(&format!("{what}_{k}_{end}"))));
            }
        }
    }
    out.push('\n');
    let opt = |x: Option<f64>| x.map_or_else(String::new, |x| format!("{x:.6}"));
    for r in rows {
        let t = r.throughput;
        let q = r.ratio;
        let fields = [
            field(&r.protocol),
            field(&r.workload),
            r.threads.to_string(),
            r.theta.map(|t| t.to_string()).unwrap_or_default(),
            r.rounds.to_string(),
            r.empty_runs.to_string(),
            opt(t.map(|e| e.median)),
            opt(t.map(|e| e.lo)),
            opt(t.map(|e| e.hi)),
            opt(q.map(|e| e.median)),
            opt(q.map(|e| e.lo)),
            opt(q.map(|e| e.hi)),
            q.map(|e| e.distinguishes_from_one().to_string())
                .unwrap_or_default(),
            opt(r.cpu_ratio.map(|e| e.median)),
            opt(r.cpu_ratio.map(|e| e.lo)),
            opt(r.cpu_ratio.map(|e| e.hi)),
            format!("{:.6}", r.abort_rate),
            format!("{:.3}", r.p50_us),
            format!("{:.3}", r.p99_us),
            r.oversubscribed.to_string(),
        ];
        out.push_str(&fields.join(","));
        for k in &kinds {
            let kind = r.by_kind.get(*k);
            for e in [kind.and_then(|k| k.throughput), kind.and_then(|k| k.ratio)] {
                for x in [e.map(|e| e.median), e.map(|e| e.lo), e.map(|e| e.hi)] {
                    out.push(',');
                    out.push_str(&opt(x));
                }
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::LatencySummary;

    /// A run record of `protocol` on YCSB-A with made-up numbers (also used by `cli`'s tests).
    pub(crate) fn record(protocol: &str, repeat: u32, tps: f64) -> RunRecord {
        let mut result = RunResult::empty(2).unwrap();
        result.elapsed_s = 1.0;
        result.commits = tps as u64;
        result.user_aborts = 1;
        result.conflicts = 10;
        result.retries = 10;
        result.conflicts_by_cause = [("read_validation".to_string(), 10)].into();
        result.conflicts_by_table = [("read_validation@stock".to_string(), 10)].into();
        result.counters = [("omitted_writes".to_string(), 3)].into();
        result.commits_by_kind = [("new_order".to_string(), 5u64)].into();
        result.throughput_tps = tps;
        result.abort_rate = 0.01;
        result.latency = LatencySummary {
            p50_us: 1.0,
            p90_us: 2.0,
            p99_us: 3.0,
            p999_us: 4.0,
            max_us: 5.0,
        };
        result.latency_cdf = vec![crate::runner::CdfPoint {
            percentile: 50.0,
            latency_us: 1.0,
        }];
        result.cpu_time_s = 2.0;
        result.peak_rss_bytes = 1 << 20;
        result.cpus = vec![Some(0), None];
        result.ack = "epoch".into();
        RunRecord {
            protocol: protocol.into(),
            workload: "ycsb-a".into(),
            threads: 2,
            theta: Some(0.9),
            repeat,
            seed: 42,
            parameters: [("records".to_string(), "1,000".to_string())].into(),
            result,
            check: None,
        }
    }

    #[test]
    fn ratios_against_a_baseline_thread_count_per_cpu_second_and_counter_rates() {
        let mut recs = Vec::new();
        for round in 0..4u32 {
            let mut base = record("calvin", round, 1000.0);
            base.threads = 1;
            base.result.counters = [("lock_manager_busy_ns".to_string(), 500_000_000)].into();
            recs.push(base);
            let mut docc = record("docc", round, 3000.0);
            docc.result.cpu_time_s = 4.0;
            docc.result.counters = [
                ("docc_retries".to_string(), 300),
                ("graph_mean_x100".to_string(), 150 + 10 * u64::from(round)),
                ("bytes_p99".to_string(), 800 + u64::from(round)),
                ("net.rtt_p99_ns".to_string(), 2000 + u64::from(round)),
                ("graph_max".to_string(), 7 * u64::from(round + 1)),
            ]
            .into();
            recs.push(docc);
        }
        let rows = summarize_against(&recs, Some("calvin"), Some(1));
        let docc = rows.iter().find(|r| r.protocol == "docc").unwrap();
        assert!((docc.ratio.unwrap().median - 3.0).abs() < 1e-9, "{docc:?}");
        // 3000 commits on 4 CPU-seconds against 1000 on 2.
        assert!(
            (docc.cpu_ratio.unwrap().median - 1.5).abs() < 1e-9,
            "{docc:?}"
        );
        assert!((docc.counters["docc_retries"] - 0.1).abs() < 1e-9);
        // Statistics of a run are not divided by commits: medians and the largest round.
        assert!(
            (docc.counters["graph_mean"] - 1.65).abs() < 1e-9,
            "{docc:?}"
        );
        assert!(!docc.counters.contains_key("graph_mean_x100"));
        assert!(
            (docc.counters["bytes_p99"] - 801.5).abs() < 1e-9,
            "{docc:?}"
        );
        assert!(
            (docc.counters["net.rtt_p99_ns"] - 2001.5).abs() < 1e-9,
            "{docc:?}"
        );
        assert!((docc.counters["graph_max"] - 28.0).abs() < 1e-9, "{docc:?}");
        // 10 conflicts of 3010 attempts in every round.
        let share = docc.aborts_by_table["read_validation@stock"];
        assert!((share - 10.0 / 3010.0).abs() < 1e-12, "{share}");
        let calvin = rows.iter().find(|r| r.protocol == "calvin").unwrap();
        assert!(calvin.ratio.is_none(), "the baseline itself");
        assert!((calvin.counters["lock_manager_utilization"] - 0.5).abs() < 1e-9);
        let t = summary_table(&rows, Some("calvin"));
        assert!(
            t.contains("3.000 [3.000, 3.000]") && t.contains("1.500 [1.500, 1.500]"),
            "{t}"
        );
        assert!(
            t.contains("docc ycsb-a 2 theta 0.9: bytes_p99 802, docc_retries 0.100"),
            "{t}"
        );
        assert!(t.contains("graph_max 28.0, graph_mean 1.65"), "{t}");
        assert!(t.contains("lock_manager_utilization 0.500"), "{t}");
        assert!(
            t.contains("docc ycsb-a 2 theta 0.9: read_validation@stock 0.332"),
            "{t}"
        );
        // Without a baseline thread count the rows at 2 threads have no baseline run.
        let rows = summarize(&recs, Some("calvin"));
        assert!(rows.iter().all(|r| r.ratio.is_none()));
    }

    #[test]
    fn throughput_by_kind_is_summarized_with_ratios_in_the_table_and_summary_csv() {
        let mut recs = Vec::new();
        for round in 0..3u32 {
            let mut base = record("rococo", round, 1000.0);
            base.result.elapsed_s = 2.0;
            base.result.commits_by_kind =
                [("new_order".to_string(), 400), ("payment".to_string(), 600)].into();
            recs.push(base);
            let mut other = record("2pl-2pc", round, 1000.0);
            other.result.elapsed_s = 2.0;
            other.result.commits_by_kind = [
                ("new_order".to_string(), 200 + 2 * u64::from(round)),
                ("payment".to_string(), 800),
            ]
            .into();
            recs.push(other);
        }
        let rows = summarize(&recs, Some("rococo"));
        let kind = |p: &str, k: &str| rows.iter().find(|r| r.protocol == p).unwrap().by_kind[k];
        // new_order: 400 commits in 2 s against 200, 202, 204.
        assert_eq!(
            kind("rococo", "new_order").throughput.unwrap().median,
            200.0
        );
        assert!(
            kind("rococo", "new_order").ratio.is_none(),
            "the baseline itself"
        );
        let no = kind("2pl-2pc", "new_order");
        assert_eq!(no.throughput.unwrap().median, 101.0);
        assert!(
            (no.ratio.unwrap().median - 101.0 / 200.0).abs() < 1e-12,
            "{no:?}"
        );
        let pay = kind("2pl-2pc", "payment").ratio.unwrap();
        assert!((pay.median - 800.0 / 600.0).abs() < 1e-12, "{pay:?}");
        let t = summary_table(&rows, Some("rococo"));
        assert!(t.contains("throughput by transaction kind"), "{t}");
        assert!(
            t.contains(
                "2pl-2pc ycsb-a 2 theta 0.9: new_order 101 [100, 102] x0.505 [0.500, 0.510], \
                 payment 400 [400, 400] x1.333 [1.333, 1.333]"
            ),
            "{t}"
        );
        let csv = summary_csv(&rows);
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let row: Vec<&str> = csv.lines().nth(2).unwrap().split(',').collect();
        assert_eq!(row.len(), header.len(), "{csv}");
        assert_eq!(row[col("throughput_new_order_median")], "101.000000");
        assert_eq!(row[col("ratio_payment_median")], "1.333333");
        let json = serde_json::to_value(&rows[1]).unwrap();
        assert_eq!(json["by_kind"]["new_order"]["throughput"]["median"], 101.0);
    }

    #[test]
    fn the_csv_header_is_stable() {
        let header = csv_header(&[record("silo", 0, 1000.0)]);
        assert_eq!(
            header.join(","),
            "protocol,workload,threads,theta,repeat,duration_s,commits,aborts,throughput_tps,\
             abort_rate,p50_us,p90_us,p99_us,p999_us,max_us,oversubscribed,user_aborts,retries,\
             abandoned,unacknowledged,cpu_time_s,peak_rss_bytes,ack,seed,cpus,param_records,\
             abort_read_validation,counter_omitted_writes,commits_new_order,\
             abort_read_validation@stock"
        );
    }

    #[test]
    fn csv_rows_line_up_with_the_header_and_quote_commas() {
        let csv = to_csv(&[record("silo", 0, 1000.0), record("silo", 1, 2000.0)]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].starts_with("silo,ycsb-a,2,0.9,0,1.000000,1000,10,1000.0,0.010000,"));
        assert!(lines[1].contains(",0;-,\"1,000\",10,3"), "{}", lines[1]);
    }

    #[test]
    fn the_table_shows_medians_intervals_and_ratios_in_aligned_columns() {
        let mut recs = Vec::new();
        for (round, drift) in [1.0, 1.2, 0.8, 1.1, 0.9].into_iter().enumerate() {
            recs.push(record("silo", round as u32, 1000.0 * drift));
            recs.push(record(
                "a-much-longer-protocol-name",
                round as u32,
                1500.0 * drift,
            ));
            recs.push(record(
                "same",
                round as u32,
                1000.0 * drift * if round % 2 == 0 { 1.02 } else { 0.98 },
            ));
        }
        let mut empty = record("silo", 5, 0.0);
        empty.result.commits = 0;
        recs.push(empty);
        let rows = summarize(&recs, Some("silo"));
        assert_eq!(rows.len(), 3);
        assert_eq!((rows[0].rounds, rows[0].empty_runs), (6, 1));
        assert_eq!(
            rows[0].throughput.unwrap().n,
            5,
            "the empty run is not a measurement"
        );
        let r = rows[1].ratio.unwrap();
        assert!(
            (r.median - 1.5).abs() < 1e-9 && r.distinguishes_from_one(),
            "{r:?}"
        );
        assert!(!rows[2].ratio.unwrap().distinguishes_from_one());
        let t = summary_table(&rows, Some("silo"));
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].contains("vs silo [95% CI]"), "{t}");
        assert!(
            lines[1].contains("baseline") && lines[1].contains("6, 1 empty"),
            "{t}"
        );
        assert!(lines[2].contains("1.500 [1.500, 1.500]"), "{t}");
        assert!(lines[3].contains("~"), "{t}");
        assert!(t.contains("not distinguishable"), "{t}");
        // Every column starts at the same offset on every line, whatever the names' lengths.
        let col = |line: &str, word: &str| line.find(word).unwrap();
        assert_eq!(col(lines[1], "ycsb-a"), col(lines[0], "workload"));
        assert_eq!(col(lines[2], "ycsb-a"), col(lines[0], "workload"));
        let csv = summary_csv(&rows);
        assert_eq!(csv.lines().count(), 4);
        assert!(csv.lines().nth(2).unwrap().contains(",true,"), "{csv}");
        let mut none = record("x", 0, 0.0);
        none.result.commits = 0;
        let t = summary_table(&summarize(&[none], None), None);
        assert!(t.contains("no commits"), "{t}");
    }

    #[test]
    fn results_files_are_written() {
        let dir = std::env::temp_dir().join(format!("txlab-report-{}", std::process::id()));
        let m = MachineInfo::detect();
        write_results(
            &dir,
            &m,
            &serde_json::json!({"threads": [2]}),
            &[record("silo", 0, 5.0)],
            &summarize(&[record("silo", 0, 5.0)], None),
        )
        .unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap())
                .unwrap();
        assert_eq!(json["runs"][0]["protocol"], "silo");
        assert_eq!(json["runs"][0]["result"]["throughput_tps"], 5.0);
        assert_eq!(
            json["runs"][0]["result"]["latency_cdf"][0],
            serde_json::json!({"percentile": 50.0, "latency_us": 1.0})
        );
        assert!(json["machine"]["cpu_model"].is_string());
        assert!(
            std::fs::read_to_string(dir.join("results.csv"))
                .unwrap()
                .starts_with("protocol,")
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
