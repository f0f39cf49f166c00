//! `txlab cluster --local N --out DIR [--overwrite] -- run --protocol rococo,2pl-2pc,occ-2pc
//! --repeat R <run flags>`: the distributed protocols' tcp launches as a results directory.
//!
//! The launches are `txlab cluster`'s own (one cluster per protocol and round, rounds
//! interleaved ABCABC, `txlab_net::cluster::cli::cluster`); each client node's run record, its
//! repeat set to the launch's round, goes into `results.csv`, `summary.csv` and `results.json`
//! as `txlab run --out` writes them, with the same summary table (medians, 95 % bootstrap
//! intervals, per-round ratios to the baseline protocol) printed and the charts drawn.
//!
//! - **Checked first.** The output directory, `txlab cluster`'s own flags and the run flags
//!   (as every node will parse them, for every protocol) are checked before the directory is
//!   created and before the first launch (exit 2).
//! - **A failed launch.** The launches that completed are written and summarized; the command
//!   then fails (exit 1) naming the launch that failed.
//! - **Counters.** A run record's engine counters are the whole cluster's: the client node's
//!   (its coordinators') merged with every server's (dependency graph, components, commit
//!   messages, and the servers' `net.*` transport counters), as the in-process cluster merges
//!   its nodes' ([`merge_counters`]).
//! - **Config.** `config` in `results.json` has `txlab run --out`'s shape (the run flags'
//!   sweep at the top level, so `txlab plot` reads cluster and `txlab run` directories alike),
//!   with what the launch really ran: `engine.cluster.link_latency_us` 0 (no latency is
//!   emulated: the links are loopback tcp) and `engine.cluster.servers` N - 1 (as every node
//!   sets it). The launch itself is `cluster`: `cluster.local` (N), `cluster.distinct_hosts`
//!   and `cluster.transport` `tcp`. `engine.deterministic` (the partitioned protocols'
//!   `--transport` among them) is the run flags' as `txlab run` writes it: the distributed
//!   protocols do not read it.

use crate::{Failure, RunArgs, cluster_protocols, output, plot_written, write_report};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use txlab_core::Error;
use txlab_harness::registry::partitioned::Transport;
use txlab_harness::report::RunRecord;
use txlab_harness::sweep::SweepSpec;
use txlab_net::cluster::cli::{ClusterProtocol, Flags};

/// The `--out` request split off `txlab cluster`'s own flags.
#[derive(Debug, Clone, PartialEq)]
pub struct OutRequest {
    /// `--out DIR`.
    pub out: PathBuf,
    /// `--overwrite`.
    pub overwrite: bool,
    /// `txlab cluster`'s other flags, then `--` and the run flags, as given.
    pub args: Vec<String>,
}

/// Splits `--out DIR` and `--overwrite` off the flags before `--`; `None` without `--out`.
pub fn split_out(args: &[String]) -> Result<Option<OutRequest>, Error> {
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let Some(i) = args[..end].iter().position(|a| a == "--out") else {
        return Ok(None);
    };
    let out = args[..end]
        .get(i + 1)
        .filter(|v| !v.starts_with("--"))
        .ok_or_else(|| Error::invalid("--out", "", "a directory for the results"))?;
    let mut rest: Vec<String> = Vec::with_capacity(args.len());
    let mut overwrite = false;
    for (k, a) in args.iter().enumerate() {
        if k < end && (k == i || k == i + 1) {
            continue;
        }
        if k < end && a == "--overwrite" {
            overwrite = true;
            continue;
        }
        rest.push(a.clone());
    }
    Ok(Some(OutRequest {
        out: PathBuf::from(out),
        overwrite,
        args: rest,
    }))
}

/// The launch a request describes, checked.
struct Checked {
    /// The run flags as every node parses them (`--servers` N - 1).
    args: RunArgs,
    /// `--local N`.
    nodes: u16,
    /// `--distinct-hosts`.
    distinct_hosts: bool,
}

/// Checks `txlab cluster`'s own flags `own` and the run flags `run` as the launcher and every
/// node will (module docs): nothing is created or launched before this passes.
fn check(own: &[String], run: &[String]) -> Result<Checked, Failure> {
    let usage = |v: &str, e: String| Failure::Usage(Error::invalid("txlab cluster --out", v, e));
    let flags = Flags::parse(own).map_err(|e| usage("cluster flags", e))?;
    let nodes: u16 = flags
        .get("local")
        .and_then(|n| n.parse().ok())
        .filter(|n| *n >= 2)
        .ok_or_else(|| usage("--local", "--local N with N >= 2".into()))?;
    flags
        .number::<u64>("timeout-s", 600)
        .map_err(|e| usage("--timeout-s", e))?;
    let mut given: Vec<String> = run.iter().skip_while(|a| *a == "run").cloned().collect();
    if !given.iter().any(|a| a == "--servers") {
        given.extend(["--servers".into(), (nodes - 1).to_string()]);
    }
    let args = RunArgs::parse_run_flags(&given).map_err(|e| usage("run flags", e))?;
    let distributed: Vec<&str> = crate::cluster_run::DISTRIBUTED
        .iter()
        .map(|d| d.name())
        .collect();
    if let Some(p) = args
        .protocol
        .iter()
        .find(|p| !distributed.contains(&p.name()))
    {
        return Err(usage(
            p.name(),
            format!(
                "a protocol whose client node reports a run record: {} (docc and calvin \
                 clusters print their nodes' lines without --out)",
                distributed.join(", ")
            ),
        ));
    }
    args.spec().validate().map_err(Failure::Usage)?;
    // What each launch's nodes get: one protocol, no --repeat (`cli::cluster`'s launches).
    let run_flags = Flags::parse(run).map_err(|e| usage("run flags", e))?;
    for p in &crate::cluster_run::DISTRIBUTED {
        if args.protocol.iter().any(|q| q.name() == p.name()) {
            let mut one = run_flags.clone();
            one.set("protocol", p.name());
            one.remove("repeat");
            p.check_nodes(nodes, &one)
                .map_err(|e| usage("run flags", e))?;
        }
    }
    Ok(Checked {
        args,
        nodes,
        distinct_hosts: flags.has("distinct-hosts"),
    })
}

/// Counters that are a mean over events, by the counter that counts those events: merged
/// across nodes as the mean weighted by that count.
const MEAN_WEIGHTS: [(&str, &str); 3] = [
    ("scc_size_mean_x100", "scc_count"),
    ("commit_vertices_mean_x100", "commit_msgs"),
    ("commit_bytes_mean", "commit_msgs"),
];

/// Merges the counters of every node of a launch into one set, as the in-process cluster
/// merges its nodes' (`txlab_rococo::counters::Counters::merge`): counts are summed, `_max`
/// takes the largest, a mean is weighted by its event count (`MEAN_WEIGHTS`; a mean without
/// one is the plain mean of the nodes that report it non-zero), and a percentile (`_p99`,
/// `_p50_ns`, `_p99_ns`, e.g. `net.rtt_p99_ns`) takes the largest node's (an upper bound of the
/// cluster's: the nodes send statistics, not their histograms).
pub fn merge_counters(nodes: &[&BTreeMap<String, u64>]) -> BTreeMap<String, u64> {
    let mut names: Vec<&String> = nodes.iter().flat_map(|c| c.keys()).collect();
    names.sort();
    names.dedup();
    let value = |c: &BTreeMap<String, u64>, k: &str| c.get(k).copied().unwrap_or(0);
    names
        .into_iter()
        .map(|k| {
            let values = nodes.iter().map(|c| value(c, k));
            let merged = if ["_max", "_p99", "_p50_ns", "_p99_ns"]
                .iter()
                .any(|s| k.ends_with(s))
            {
                values.max().unwrap_or(0)
            } else if k.ends_with("_mean") || k.ends_with("_mean_x100") {
                match MEAN_WEIGHTS.iter().find(|(m, _)| m == k) {
                    Some((_, w)) => {
                        let total: u64 = nodes.iter().map(|c| value(c, w)).sum();
                        let weighted: f64 = nodes
                            .iter()
                            .map(|c| value(c, k) as f64 * value(c, w) as f64)
                            .sum();
                        if total == 0 {
                            0
                        } else {
                            (weighted / total as f64).round() as u64
                        }
                    }
                    None => {
                        let reported: Vec<u64> = values.filter(|v| *v > 0).collect();
                        let n = reported.len().max(1) as f64;
                        (reported.iter().sum::<u64>() as f64 / n).round() as u64
                    }
                }
            } else {
                values.sum()
            };
            (k.clone(), merged)
        })
        .collect()
}

/// The run record of a launch's line: its client node's, repeat = the launch's round, with the
/// counters of every node merged into it ([`merge_counters`]).
fn record_of(line: &Value) -> Result<RunRecord, String> {
    let nodes = line["nodes"]
        .as_array()
        .ok_or("a launch line without its nodes' results")?;
    let client = nodes
        .iter()
        .find(|n| n["role"] == "client")
        .ok_or("a launch without a client node's result")?;
    let mut record: RunRecord = serde_json::from_value(client["record"].clone())
        .map_err(|e| format!("the client node's record: {e}"))?;
    record.repeat = line["round"]
        .as_u64()
        .and_then(|r| u32::try_from(r).ok())
        .ok_or("a launch line without its round")?;
    let servers = nodes
        .iter()
        .filter(|n| n["role"] == "server")
        .map(|n| {
            serde_json::from_value::<BTreeMap<String, u64>>(n["counters"].clone()).map_err(|e| {
                format!(
                    "server node {}'s counters: {e}",
                    n["node"].as_u64().unwrap_or(0)
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if servers.is_empty() {
        return Err("a launch without a server node's result".into());
    }
    let mut all: Vec<&BTreeMap<String, u64>> = vec![&record.result.counters];
    all.extend(servers.iter());
    record.result.counters = merge_counters(&all);
    Ok(record)
}

/// `config` for `results.json`: the sweep as `txlab run --out` writes it, with the link the
/// launches used, and the launch with its transport (module docs).
fn config_of(spec: &SweepSpec, c: &Checked) -> Result<Value, Failure> {
    let mut spec = spec.clone();
    spec.engine.cluster.link_latency_us = 0;
    let mut config =
        serde_json::to_value(&spec).map_err(|e| Failure::Run(format!("config: {e}")))?;
    config["cluster"] = serde_json::json!({
        "local": c.nodes,
        "distinct_hosts": c.distinct_hosts,
        "transport": Transport::Tcp,
    });
    Ok(config)
}

/// Runs the launches: `cli::cluster` with `txlab cluster`'s own flags, the run flags and a
/// callback for each completed launch's line.
type Launcher<'a> =
    dyn FnMut(&[String], &[String], &mut dyn FnMut(&Value)) -> Result<(), String> + 'a;

/// Runs `txlab cluster ... --out DIR` (module docs).
pub fn execute(req: &OutRequest) -> Result<(), Failure> {
    execute_with(req, &mut |own, run, on_line| {
        txlab_net::cluster::cli::cluster(own, run, &cluster_protocols(), on_line)
    })
}

/// [`execute`] with the launches run by `launch`.
fn execute_with(req: &OutRequest, launch: &mut Launcher<'_>) -> Result<(), Failure> {
    let end = req
        .args
        .iter()
        .position(|a| a == "--")
        .unwrap_or(req.args.len());
    let (own, run) = (&req.args[..end], req.args.get(end + 1..).unwrap_or(&[]));
    let checked = check(own, run)?;
    let spec = checked.args.spec();
    let config = config_of(&spec, &checked)?;
    output::prepare(&req.out, req.overwrite).map_err(Failure::Usage)?;
    let mut records = Vec::new();
    let mut failures = Vec::new();
    let launched = launch(own, run, &mut |line| match record_of(line) {
        Ok(r) => {
            eprintln!(
                "{} round {}: {:.0} txn/s",
                r.protocol, r.repeat, r.result.throughput_tps
            );
            records.push(r);
        }
        Err(e) => failures.push(format!(
            "{} (round {}): {e}",
            line["protocol"].as_str().unwrap_or("?"),
            line["round"]
        )),
    });
    if let Err(e) = launched {
        failures.insert(0, e);
    }
    if records.is_empty() {
        return Err(Failure::Run(format!(
            "txlab cluster: no launch completed, nothing was written to {}:\n{}",
            req.out.display(),
            failures.join("\n")
        )));
    }
    let baseline = spec.baseline.map(|b| b.name());
    write_report(&spec, &config, &records, baseline, &req.out)?;
    let plotted = plot_written(&req.out);
    if failures.is_empty() {
        return plotted;
    }
    let mut message = format!(
        "txlab cluster: a launch failed; the {} launch(es) that completed are written to {}:\n{}",
        records.len(),
        req.out.display(),
        failures.join("\n")
    );
    if let Err(e) = plotted {
        message.push_str(&format!("\n{e}"));
    }
    Err(Failure::Run(message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use txlab_harness::runner::RunResult;

    /// A fresh directory path under the temp dir (not created).
    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("txlab-cluster-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    /// A launch line as `cli::cluster` hands it over: two servers with their counters and a
    /// client with its record (made-up numbers).
    fn line(protocol: &str, round: u32, tps: f64) -> Value {
        let mut result = RunResult::empty(1).unwrap();
        result.throughput_tps = tps;
        result.commits = tps as u64;
        result.elapsed_s = 1.0;
        result.cpu_time_s = 1.0;
        result.counters = [
            ("graph_vertices".to_string(), 0),
            ("ro_retries".to_string(), 4),
        ]
        .into();
        let record = RunRecord {
            protocol: protocol.into(),
            workload: "ycsb-f".into(),
            threads: 1,
            theta: Some(0.0),
            repeat: 0,
            seed: 42,
            parameters: Default::default(),
            result,
            check: None,
        };
        serde_json::json!({
            "protocol": protocol, "round": round, "cluster": null, "nodes": [
                {"node": 0, "role": "server", "counters": {
                    "graph_vertices": 5, "graph_vertices_max": 7, "scc_count": 10,
                    "scc_size_mean_x100": 100, "commit_msgs": 10, "commit_bytes_mean": 200,
                    "commit_bytes_p99": 900, "net.messages": 50, "net.rtt_p99_ns": 4000}},
                {"node": 1, "role": "server", "counters": {
                    "graph_vertices": 7, "graph_vertices_max": 9, "scc_count": 30,
                    "scc_size_mean_x100": 200, "commit_msgs": 30, "commit_bytes_mean": 100,
                    "commit_bytes_p99": 300, "net.messages": 70, "net.rtt_p99_ns": 3000}},
                {"node": 2, "role": "client", "record": record},
            ],
        })
    }

    fn request(out: &std::path::Path, own: &[&str], run: &[&str]) -> OutRequest {
        let mut args = strings(own);
        args.push("--".into());
        args.extend(strings(run));
        OutRequest {
            out: out.to_path_buf(),
            overwrite: false,
            args,
        }
    }

    #[test]
    fn the_servers_counters_are_merged_into_the_client_s_record() {
        let r = record_of(&line("rococo", 1, 1000.0)).unwrap();
        assert_eq!(r.repeat, 1);
        let c = &r.result.counters;
        let want: BTreeMap<String, u64> = [
            ("graph_vertices", 12),
            ("graph_vertices_max", 9),
            ("scc_count", 40),
            // (100 * 10 + 200 * 30) / 40 and (200 * 10 + 100 * 30) / 40.
            ("scc_size_mean_x100", 175),
            ("commit_msgs", 40),
            ("commit_bytes_mean", 125),
            ("commit_bytes_p99", 900),
            ("net.messages", 120),
            // A percentile: the largest server's, not the sum.
            ("net.rtt_p99_ns", 4000),
            ("ro_retries", 4),
        ]
        .map(|(k, v)| (k.to_string(), v))
        .into();
        assert_eq!(c, &want);
        let mut no_servers = line("rococo", 0, 1.0);
        no_servers["nodes"].as_array_mut().unwrap().drain(..2);
        let e = record_of(&no_servers).unwrap_err();
        assert!(e.contains("server"), "{e}");
    }

    #[test]
    fn config_has_txlab_run_s_shape_and_the_transport_the_launches_used() {
        let c = check(
            &strings(&["--local", "4"]),
            &strings(&["run", "--protocol", "rococo", "--repeat", "3"]),
        )
        .ok()
        .unwrap();
        let spec = c.args.spec();
        let config = config_of(&spec, &c).unwrap();
        let run_shape = serde_json::to_value(&spec).unwrap();
        for k in run_shape.as_object().unwrap().keys() {
            assert!(config.get(k).is_some(), "{k} missing from {config}");
        }
        assert!(config.get("sweep").is_none(), "{config}");
        assert_eq!(config["repeat"], 3);
        assert_eq!(config["engine"]["cluster"]["servers"], 3);
        assert_eq!(config["engine"]["cluster"]["link_latency_us"], 0);
        // The transport is the launch's; the partitioned protocols' block is the run flags'.
        assert_eq!(config["cluster"]["transport"], "tcp");
        assert_eq!(config["cluster"]["local"], 4);
        assert_eq!(
            config["engine"]["deterministic"], run_shape["engine"]["deterministic"],
            "{config}"
        );
        assert_eq!(config["engine"]["deterministic"]["transport"], "inproc");
    }

    #[test]
    fn a_failed_launch_keeps_the_rounds_that_completed_and_fails() {
        let dir = temp("failed");
        let req = request(
            &dir,
            &["--local", "3"],
            &[
                "run",
                "--protocol",
                "rococo,2pl-2pc",
                "--workload",
                "ycsb-f",
                "--repeat",
                "2",
            ],
        );
        let e = execute_with(&req, &mut |_, _, on_line| {
            on_line(&line("rococo", 0, 1000.0));
            on_line(&line("2pl-2pc", 0, 800.0));
            Err("rococo (round 1): node 0 exited with status 3".into())
        })
        .unwrap_err();
        assert_eq!(e.exit_code(), crate::EXIT_FAILURE);
        let e = e.to_string();
        assert!(e.contains("node 0 exited with status 3"), "{e}");
        assert!(e.contains("2 launch(es) that completed"), "{e}");
        let json: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap())
                .unwrap();
        let runs = json["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{json}");
        assert_eq!(runs[1]["protocol"], "2pl-2pc");
        assert_eq!(runs[0]["result"]["counters"]["graph_vertices"], 12);
        assert!(dir.join("summary.csv").is_file() && dir.join("results.csv").is_file());
        // A launch whose line cannot be read is a failure too, after the others are written.
        let dir2 = temp("bad-line");
        let req = OutRequest {
            out: dir2.clone(),
            ..req
        };
        let e = execute_with(&req, &mut |_, _, on_line| {
            on_line(&line("rococo", 0, 1000.0));
            on_line(&serde_json::json!({"protocol": "2pl-2pc", "round": 0, "nodes": []}));
            Ok(())
        })
        .unwrap_err();
        assert!(e.to_string().contains("2pl-2pc (round 0)"), "{e}");
        assert!(dir2.join("results.json").is_file());
        // Nothing completed: nothing is written, and the failure says so.
        let dir3 = temp("none");
        let req = OutRequest {
            out: dir3.clone(),
            ..req
        };
        let e = execute_with(&req, &mut |_, _, _| Err("node 1 hung".into())).unwrap_err();
        assert!(
            e.to_string().contains("no launch completed") && e.to_string().contains("node 1 hung")
        );
        assert!(!dir3.join("results.json").exists());
        for d in [dir, dir2, dir3] {
            std::fs::remove_dir_all(d).unwrap();
        }
    }

    #[test]
    fn flag_errors_are_refused_before_the_directory_is_created() {
        let cases: [(&[&str], &[&str], &str); 6] = [
            (
                &["--local", "3"],
                &["--theta", "0,0.5"],
                "one point per cluster",
            ),
            (&["--local", "3", "--timeout-s", "x"], &[], "--timeout-s"),
            (&["--local", "3"], &["--servers", "3"], "--servers 3"),
            (
                &["--local", "3"],
                &["--link-latency-us", "5"],
                "--link-latency-us",
            ),
            (&["--local", "3", "stray"], &[], "stray"),
            (
                &["--local", "3"],
                &["--client-threads", "2"],
                "--client-threads 2",
            ),
        ];
        for (own, extra, want) in cases {
            let dir = temp("flags");
            let mut run = vec!["run", "--protocol", "rococo", "--workload", "ycsb-f"];
            run.extend_from_slice(extra);
            let req = request(&dir, own, &run);
            let e =
                execute_with(&req, &mut |_, _, _| panic!("launched despite {want}")).unwrap_err();
            assert_eq!(e.exit_code(), crate::EXIT_USAGE, "{e}");
            assert!(e.to_string().contains(want), "{want}: {e}");
            assert!(!dir.exists(), "{want}: the directory was created");
        }
    }

    fn strings(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn out_and_overwrite_are_split_off_the_cluster_flags_only() {
        assert_eq!(
            split_out(&strings(&["--local", "3", "--", "run"])).unwrap(),
            None
        );
        let r = split_out(&strings(&[
            "--local",
            "3",
            "--out",
            "d",
            "--overwrite",
            "--",
            "run",
            "--protocol",
            "rococo",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(r.out, PathBuf::from("d"));
        assert!(r.overwrite);
        assert_eq!(
            r.args,
            strings(&["--local", "3", "--", "run", "--protocol", "rococo"])
        );
        let e = split_out(&strings(&["--local", "3", "--out"])).unwrap_err();
        assert!(e.to_string().contains("--out"), "{e}");
    }

    #[test]
    fn only_distributed_protocols_and_a_client_process_are_accepted() {
        let e = check(
            &strings(&["--local", "3"]),
            &strings(&["run", "--protocol", "rococo,docc"]),
        )
        .err()
        .unwrap();
        assert_eq!(e.exit_code(), crate::EXIT_USAGE);
        assert!(
            e.to_string().contains("docc") && e.to_string().contains("2pl-2pc"),
            "{e}"
        );
        let e = check(&strings(&["--local", "1"]), &strings(&["run"]))
            .err()
            .unwrap();
        assert!(e.to_string().contains("--local"), "{e}");
        let a = check(
            &strings(&["--local", "4"]),
            &strings(&["run", "--protocol", "rococo,occ-2pc", "--repeat", "2"]),
        )
        .ok()
        .unwrap()
        .args;
        assert_eq!(a.params.servers, 3, "every node but the client serves");
        assert_eq!(a.repeat, 2);
    }
}
