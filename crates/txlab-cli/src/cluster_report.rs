//! `txlab cluster --local N --out DIR [--overwrite] -- run --protocol rococo,2pl-2pc,occ-2pc
//! --repeat R <run flags>`: the distributed protocols' tcp launches as a results directory.
//!
//! The launches are `txlab cluster`'s own (one cluster per protocol and round, rounds
//! interleaved ABCABC, `txlab_net::cluster::cli::cluster`); each client node's run record, its
//! repeat set to the launch's round, goes into `results.csv`, `summary.csv` and `results.json`
//! as `txlab run --out` writes them, with the same summary table (medians, 95 % bootstrap
//! intervals, per-round ratios to the baseline protocol) printed and the charts drawn. The
//! output directory and the run flags are checked before the first launch. `config` in
//! `results.json` is `{"sweep": <the run flags' sweep>, "cluster": {"local", "distinct_hosts"}}`;
//! `--servers` is N - 1, as every node sets it, and no link latency is emulated (the links are
//! loopback tcp).

use crate::{Failure, RunArgs, cluster_protocols, output, report_and_plot};
use std::path::PathBuf;
use txlab_core::Error;
use txlab_harness::report::RunRecord;
use txlab_net::cluster::cli::ClusterProtocol;

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

/// The value of `--name` among `flags`.
fn flag<'a>(flags: &'a [String], name: &str) -> Option<&'a str> {
    let i = flags.iter().position(|a| a == name)?;
    flags.get(i + 1).map(String::as_str)
}

/// The run flags, with `--servers` set to N - 1 where not given: what every node runs.
fn run_args(own: &[String], run: &[String]) -> Result<RunArgs, Failure> {
    let usage = |v: &str, e: String| Failure::Usage(Error::invalid("txlab cluster --out", v, e));
    let nodes: u16 = flag(own, "--local")
        .and_then(|n| n.parse().ok())
        .filter(|n| *n >= 2)
        .ok_or_else(|| usage("--local", "--local N with N >= 2".into()))?;
    let mut flags: Vec<String> = run.iter().skip_while(|a| *a == "run").cloned().collect();
    if !flags.iter().any(|a| a == "--servers") {
        flags.extend(["--servers".into(), (nodes - 1).to_string()]);
    }
    let args = RunArgs::parse_run_flags(&flags).map_err(|e| usage("run flags", e))?;
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
    Ok(args)
}

/// The run record of a launch's line (its client node's, repeat = the launch's round).
fn record_of(line: &serde_json::Value) -> Result<RunRecord, String> {
    let client = line["nodes"]
        .as_array()
        .and_then(|ns| ns.iter().find(|n| n["role"] == "client"))
        .ok_or("a launch without a client node's result")?;
    let mut record: RunRecord = serde_json::from_value(client["record"].clone())
        .map_err(|e| format!("the client node's record: {e}"))?;
    record.repeat = line["round"]
        .as_u64()
        .and_then(|r| u32::try_from(r).ok())
        .ok_or("a launch line without its round")?;
    Ok(record)
}

/// Runs `txlab cluster ... --out DIR` (module docs).
pub fn execute(req: &OutRequest) -> Result<(), Failure> {
    let end = req
        .args
        .iter()
        .position(|a| a == "--")
        .unwrap_or(req.args.len());
    let (own, run) = (&req.args[..end], req.args.get(end + 1..).unwrap_or(&[]));
    let args = run_args(own, run)?;
    let spec = args.spec();
    spec.validate().map_err(Failure::Usage)?;
    output::prepare(&req.out, req.overwrite).map_err(Failure::Usage)?;
    let mut records = Vec::new();
    let mut bad = None;
    let launched =
        txlab_net::cluster::cli::cluster(
            own,
            run,
            &cluster_protocols(),
            &mut |line| match record_of(line) {
                Ok(r) => {
                    eprintln!(
                        "{} round {}: {:.0} txn/s",
                        r.protocol, r.repeat, r.result.throughput_tps
                    );
                    records.push(r);
                }
                Err(e) => bad = Some(e),
            },
        );
    launched.map_err(|e| Failure::Run(format!("txlab cluster failed: {e}")))?;
    if let Some(e) = bad {
        return Err(Failure::Run(format!("txlab cluster: {e}")));
    }
    let config = serde_json::json!({
        "sweep": spec,
        "cluster": {
            "local": flag(own, "--local"),
            "distinct_hosts": own.iter().any(|a| a == "--distinct-hosts"),
        },
    });
    report_and_plot(&spec, &config, &records, &req.out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let e = run_args(
            &strings(&["--local", "3"]),
            &strings(&["run", "--protocol", "rococo,docc"]),
        )
        .unwrap_err();
        assert_eq!(e.exit_code(), crate::EXIT_USAGE);
        assert!(
            e.to_string().contains("docc") && e.to_string().contains("2pl-2pc"),
            "{e}"
        );
        let e = run_args(&strings(&["--local", "1"]), &strings(&["run"])).unwrap_err();
        assert!(e.to_string().contains("--local"), "{e}");
        let a = run_args(
            &strings(&["--local", "4"]),
            &strings(&["run", "--protocol", "rococo,occ-2pc", "--repeat", "2"]),
        )
        .unwrap();
        assert_eq!(a.params.servers, 3, "every node but the client serves");
        assert_eq!(a.repeat, 2);
    }
}
