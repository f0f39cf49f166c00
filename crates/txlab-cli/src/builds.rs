//! `txlab compare --builds LABEL=PATH,...`: the same comparison across several `txlab` binaries
//! (a build before and after a change, a build with a cargo feature), interleaved like protocols.
//!
//! Every round runs each point once per (build, protocol), builds innermost and rotated by the
//! round as protocols are (`txlab_harness::sweep`: round 1 starts with the second build), as a
//! child process `PATH run ... --repeat 1` into a scratch directory under `--out`; its
//! `results.json` run becomes a record of protocol `LABEL:PROTOCOL`. The summary's ratios divide
//! by the first build's run of the baseline protocol in the same round. The children get the
//! point's coordinates, the intervals and the workload and engine flags given to `compare`.

use crate::{CompareArgs, Failure, ParamArgs, progress::Progress};
use std::path::{Path, PathBuf};
use std::process::Command;
use txlab_core::Error;
use txlab_harness::point::CheckSummary;
use txlab_harness::report::RunRecord;
use txlab_harness::runner::{LatencySummary, RunResult};
use txlab_harness::sweep::{Step, SweepSpec, rotated};

/// One `--builds` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Build {
    /// The label runs of this build carry (`LABEL:PROTOCOL`).
    pub label: String,
    /// The `txlab` binary.
    pub path: PathBuf,
}

/// Parses `LABEL=PATH` (the label without `:` or `,`; the path an existing file).
pub fn parse_build(s: &str) -> Result<Build, String> {
    let (label, path) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}' is not LABEL=PATH (e.g. old=/tmp/txlab-old)"))?;
    if label.is_empty() || label.contains(':') {
        return Err(format!(
            "'{label}' is not a label: a non-empty name without ':'"
        ));
    }
    let path = PathBuf::from(path);
    if !path.is_file() {
        return Err(format!(
            "'{}' is not a txlab binary (no such file)",
            path.display()
        ));
    }
    Ok(Build {
        label: label.into(),
        path,
    })
}

/// The `--flag value` pairs of the workload and engine flags in `given`, for a child `run`.
fn param_args(p: &ParamArgs, given: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for &flag in given {
        let value = match flag {
            "--records" => p.records.to_string(),
            "--ops-per-txn" => p.ops_per_txn.to_string(),
            "--payload" => p.payload.to_string(),
            "--customers" => p.customers.to_string(),
            "--reads" => p.reads.to_string(),
            "--writes" => p.writes.to_string(),
            "--warehouses" => p.warehouses.to_string(),
            "--districts" => p.districts.map(|d| d.to_string()).unwrap_or_default(),
            "--district-customers" => p.district_customers.to_string(),
            "--items" => p.items.to_string(),
            "--epoch-ms" => p.epoch_ms.to_string(),
            "--ack" => format!("{:?}", p.ack).to_lowercase(),
            "--seed" => p.seed.to_string(),
            "--batch-size" => p.batch_size.to_string(),
            "--concurrency" => p.concurrency.map(|c| c.to_string()).unwrap_or_default(),
            "--batch-epoch-us" => p.batch_epoch_us.to_string(),
            "--lock-managers" => p.lock_managers.to_string(),
            "--pipeline" => match p.pipeline {
                Some(s) => format!("{s:?}").to_lowercase(),
                None => continue,
            },
            "--reorder-workers" => p.reorder_workers.to_string(),
            "--fvs" => format!("{:?}", p.fvs).to_lowercase(),
            "--policy" => format!("{:?}", p.policy).to_lowercase(),
            "--fvs-refinement" => format!("{:?}", p.fvs_refinement).to_lowercase(),
            "--tpcc-scaled" | "--hyperthreads" => {
                out.push(flag.to_string());
                continue;
            }
            _ => continue,
        };
        out.push(flag.to_string());
        out.push(value);
    }
    out
}

/// Runs the comparison of `spec` across `args.builds` (module docs); returns every run.
pub fn run(
    args: &CompareArgs,
    spec: &SweepSpec,
    out: &Path,
    given: &[&str],
) -> Result<Vec<RunRecord>, Failure> {
    let scratch = out.join(".build-run");
    let params = param_args(&args.params, given);
    let points = spec.points();
    let total = points.len() * args.builds.len();
    let mut progress = Progress::new();
    let mut records = Vec::with_capacity(total);
    for (i, p) in points.iter().enumerate() {
        for (b, build) in rotated(&args.builds, p.repeat).enumerate() {
            progress.step(&Step {
                done: i * args.builds.len() + b,
                total,
                point: p,
                rounds: spec.repeat,
            });
            let mut cmd = Command::new(&build.path);
            cmd.arg("run")
                .args([
                    "--protocol",
                    p.protocol.name(),
                    "--workload",
                    p.workload.name(),
                ])
                .args(["--threads", &p.threads.to_string(), "--repeat", "1"])
                .args(["--duration", &format!("{}us", spec.duration.as_micros())])
                .args(["--warmup", &format!("{}us", spec.warmup.as_micros())])
                .args(["--cooldown", &format!("{}us", spec.cooldown.as_micros())])
                .arg("--out")
                .arg(&scratch)
                .arg("--overwrite")
                .args(&params);
            if let Some(theta) = p.theta {
                cmd.args(["--theta", &theta.to_string()]);
            }
            let done = cmd
                .output()
                .map_err(|e| Failure::Run(format!("running {}: {e}", build.path.display())));
            match done {
                Ok(d) if d.status.success() => {}
                Ok(d) => {
                    progress.finish(false);
                    return Err(Failure::Run(format!(
                        "{} ({}) failed on {}: {}",
                        build.label,
                        build.path.display(),
                        p.label(),
                        String::from_utf8_lossy(&d.stderr).trim()
                    )));
                }
                Err(f) => {
                    progress.finish(false);
                    return Err(f);
                }
            }
            let mut record = read_run(&scratch.join("results.json")).map_err(Failure::Run)?;
            record.protocol = format!("{}:{}", build.label, p.protocol.name());
            record.repeat = p.repeat;
            records.push(record);
        }
    }
    progress.finish(true);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(records)
}

/// The one run of a child's `results.json`.
fn read_run(path: &Path) -> Result<RunRecord, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let r = &json["runs"][0];
    let res = &r["result"];
    let f = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
    let u = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    let threads = u(&r["threads"]) as usize;
    let mut result = RunResult::empty(threads).map_err(|e| e.to_string())?;
    result.elapsed_s = f(&res["elapsed_s"]);
    result.commits = u(&res["commits"]);
    result.user_aborts = u(&res["user_aborts"]);
    result.conflicts = u(&res["conflicts"]);
    result.retries = u(&res["retries"]);
    result.abandoned = u(&res["abandoned"]);
    result.unacknowledged = u(&res["unacknowledged"]);
    result.throughput_tps = f(&res["throughput_tps"]);
    result.abort_rate = f(&res["abort_rate"]);
    result.cpu_time_s = f(&res["cpu_time_s"]);
    result.peak_rss_bytes = u(&res["peak_rss_bytes"]);
    result.oversubscribed = res["oversubscribed"].as_bool().unwrap_or(false);
    result.ack = res["ack"].as_str().unwrap_or("").into();
    result.latency = serde_json::from_value::<LatencySummary>(res["latency"].clone())
        .map_err(|e| format!("{}: latency: {e}", path.display()))?;
    result.latency_cdf = serde_json::from_value(res["latency_cdf"].clone()).unwrap_or_default();
    for (map, key) in [
        (&mut result.conflicts_by_cause, "conflicts_by_cause"),
        (&mut result.conflicts_by_table, "conflicts_by_table"),
        (&mut result.counters, "counters"),
        (&mut result.commits_by_kind, "commits_by_kind"),
    ] {
        *map = serde_json::from_value(res[key].clone()).unwrap_or_default();
    }
    Ok(RunRecord {
        protocol: String::new(),
        workload: r["workload"].as_str().unwrap_or("").into(),
        threads,
        theta: r["theta"].as_f64(),
        repeat: 0,
        seed: u(&r["seed"]),
        parameters: serde_json::from_value(r["parameters"].clone()).unwrap_or_default(),
        result,
        check: None::<CheckSummary>,
    })
}

/// Checks that every build has a distinct label.
pub fn validate(builds: &[Build]) -> Result<(), Error> {
    for (i, b) in builds.iter().enumerate() {
        if builds[..i].iter().any(|a| a.label == b.label) {
            return Err(Error::invalid(
                "--builds",
                &b.label,
                "distinct labels (LABEL=PATH,LABEL=PATH)",
            ));
        }
    }
    Ok(())
}
