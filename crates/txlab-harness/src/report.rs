//! Reports: `results.csv` (one row per run), `results.json` (everything, with the machine) and a
//! human summary table (median of repeats with min–max).
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
//! - `commits_<kind>`: commits by transaction type (`Program::kind()`, e.g. `commits_new_order`).
//!
//! Fields containing a comma, quote or newline are quoted RFC 4180 style. `cpus` lists the
//! pinned CPU of each worker separated by `;` (`-` for an unpinned worker).

use crate::machine::MachineInfo;
use crate::point::CheckSummary;
use crate::runner::RunResult;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
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

/// One run of the sweep: its coordinates and its result.
#[derive(Debug, Clone, Serialize)]
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
}

fn extra_columns(records: &[RunRecord]) -> Extra {
    let mut e = Extra {
        params: BTreeSet::new(),
        causes: BTreeSet::new(),
        counters: BTreeSet::new(),
        kinds: BTreeSet::new(),
    };
    for r in records {
        e.kinds.extend(r.result.commits_by_kind.keys().cloned());
        e.params.extend(r.parameters.keys().cloned());
        e.causes.extend(r.result.conflicts_by_cause.keys().cloned());
        e.counters.extend(r.result.counters.keys().cloned());
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
}

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::invalid(
        "output path",
        path.display(),
        format!("a writable location ({e})"),
    )
}

/// Writes `results.csv` and `results.json` into `dir` (created if missing).
pub fn write_results<C: Serialize>(
    dir: &Path,
    machine: &MachineInfo,
    config: &C,
    records: &[RunRecord],
) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let csv = dir.join("results.csv");
    std::fs::write(&csv, to_csv(records)).map_err(|e| io_err(&csv, e))?;
    let json = dir.join("results.json");
    let file = ResultsFile {
        machine,
        config,
        runs: records,
    };
    let text = serde_json::to_string_pretty(&file)
        .map_err(|e| Error::Internal(format!("serializing results: {e}")))?;
    std::fs::write(&json, text).map_err(|e| io_err(&json, e))?;
    Ok(())
}

/// Median of a non-empty slice (mean of the middle two for an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn si(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// The human summary: one line per (protocol, workload, threads, theta) in order of first
/// appearance, with the median over repeats and the min–max range of throughput.
pub fn summary_table(records: &[RunRecord]) -> String {
    type Key = (String, String, usize, String);
    let mut order: Vec<Key> = Vec::new();
    let mut groups: BTreeMap<Key, Vec<&RunRecord>> = BTreeMap::new();
    for r in records {
        let key = (
            r.protocol.clone(),
            r.workload.clone(),
            r.threads,
            r.theta.map(|t| t.to_string()).unwrap_or_else(|| "-".into()),
        );
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(r);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<10} {:<10} {:>7} {:>6} {:>24} {:>8} {:>10} {:>10} {:>4}",
        "protocol",
        "workload",
        "threads",
        "theta",
        "throughput/s [min-max]",
        "abort%",
        "p50 µs",
        "p99 µs",
        "runs"
    );
    for key in order {
        let g = &groups[&key];
        let tps: Vec<f64> = g.iter().map(|r| r.result.throughput_tps).collect();
        let lo = tps.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = tps.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let col = |f: &dyn Fn(&RunResult) -> f64| {
            median(&g.iter().map(|r| f(&r.result)).collect::<Vec<_>>())
        };
        let over = if g.iter().any(|r| r.result.oversubscribed) {
            " (oversubscribed)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{:<10} {:<10} {:>7} {:>6} {:>24} {:>8.2} {:>10.2} {:>10.2} {:>4}{over}",
            key.0,
            key.1,
            key.2,
            key.3,
            format!("{} [{}-{}]", si(median(&tps)), si(lo), si(hi)),
            100.0 * col(&|r| r.abort_rate),
            col(&|r| r.latency.p50_us),
            col(&|r| r.latency.p99_us),
            g.len(),
        );
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::runner::LatencySummary;

    /// A run record of `protocol` on YCSB-A with made-up numbers (also used by `cli`'s tests).
    pub(crate) fn record(protocol: &str, repeat: u32, tps: f64) -> RunRecord {
        let result = RunResult {
            threads: 2,
            elapsed_s: 1.0,
            commits: tps as u64,
            user_aborts: 1,
            conflicts: 10,
            retries: 10,
            abandoned: 0,
            conflicts_by_cause: [("read_validation".to_string(), 10)].into(),
            counters: [("omitted_writes".to_string(), 3)].into(),
            commits_by_kind: [("new_order".to_string(), 5u64)].into_iter().collect(),
            unacknowledged: 0,
            throughput_tps: tps,
            abort_rate: 0.01,
            latency: LatencySummary {
                p50_us: 1.0,
                p90_us: 2.0,
                p99_us: 3.0,
                p999_us: 4.0,
                max_us: 5.0,
            },
            latency_cdf: vec![crate::runner::CdfPoint {
                percentile: 50.0,
                latency_us: 1.0,
            }],
            per_thread_commits: vec![],
            cpu_time_s: 2.0,
            peak_rss_bytes: 1 << 20,
            cpus: vec![Some(0), None],
            oversubscribed: false,
            ack: "epoch".into(),
            latency_ns: hdrhistogram::Histogram::new(2).unwrap(),
        };
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
    fn the_csv_header_is_stable() {
        let header = csv_header(&[record("silo", 0, 1000.0)]);
        assert_eq!(
            header.join(","),
            "protocol,workload,threads,theta,repeat,duration_s,commits,aborts,throughput_tps,\
             abort_rate,p50_us,p90_us,p99_us,p999_us,max_us,oversubscribed,user_aborts,retries,\
             abandoned,unacknowledged,cpu_time_s,peak_rss_bytes,ack,seed,cpus,param_records,\
             abort_read_validation,counter_omitted_writes,commits_new_order"
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
    fn the_table_shows_the_median_and_range_of_repeats() {
        let recs = [
            record("silo", 0, 1000.0),
            record("silo", 1, 3000.0),
            record("silo", 2, 2000.0),
        ];
        let t = summary_table(&recs);
        assert_eq!(t.lines().count(), 2, "{t}");
        assert!(t.contains("2.0k [1.0k-3.0k]"), "{t}");
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
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
