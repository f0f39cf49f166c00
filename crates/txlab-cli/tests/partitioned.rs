//! `txlab run --nodes N` for the deterministic engines (`registry::partitioned`): a short
//! 2-node TPC-C run of `docc` and `calvin` interleaved, checked (merged history strict, serial
//! replay, invariants), and the bad inputs refused before anything runs.

mod common;

use clap::Parser;
use common::SMALL_TPCC;
use std::process::Command;
use txlab_cli::{Cli, EXIT_USAGE, execute};

const TXLAB: &str = env!("CARGO_BIN_EXE_txlab");

#[test]
fn two_nodes_run_docc_and_calvin_interleaved_and_pass_the_checks() {
    let out = std::env::temp_dir().join(format!("txlab-cli-nodes-{}", std::process::id()));
    let run = Command::new(TXLAB)
        .args(["run", "--protocol", "docc,calvin", "--nodes", "2"])
        .args(SMALL_TPCC)
        .args([
            "--threads",
            "1",
            "--batch-epoch-us",
            "1000",
            "--concurrency",
            "64",
        ])
        .args(["--link-latency-us", "100", "--transport", "inproc"])
        .args([
            "--warmup",
            "50ms",
            "--duration",
            "200ms",
            "--cooldown",
            "20ms",
        ])
        .args(["--repeat", "2", "--check", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let row = |p: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("{p} ")) && l.contains("tpcc"))
            .unwrap_or_else(|| panic!("no {p} row in:\n{stdout}"))
            .to_string()
    };
    assert!(row("docc").contains("baseline"), "{stdout}");
    assert!(row("calvin").contains(" 2 "), "two runs: {stdout}");
    assert!(
        stdout.contains("--check: every run's history is serializable and invariants hold"),
        "{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(json["config"]["engine"]["deterministic"]["nodes"], 2);
    let runs = json["runs"].as_array().unwrap();
    // Every round runs both protocols, rotated by the round (AB BA).
    let order: Vec<&str> = runs
        .iter()
        .map(|r| r["protocol"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["docc", "calvin", "calvin", "docc"], "{json}");
    for r in runs {
        let res = &r["result"];
        assert!(res["commits"].as_u64().unwrap() > 0, "{r}");
        assert!(res["latency"]["p50_us"].as_f64().unwrap() > 0.0, "{r}");
        assert!(
            res["counters"]["single_partition"].as_u64().unwrap() > 0,
            "{r}"
        );
        let check = &r["check"];
        assert_eq!(check["history_checked"], true, "{r}");
        assert!(check["committed"].as_u64().unwrap() > 0, "{r}");
        assert_eq!(check["anomalies"], serde_json::json!([]), "{r}");
        assert!(check["invariant"].is_null(), "{r}");
    }
    // Transactions crossed the partitions somewhere in the runs (TPC-C's remote payments and
    // order lines).
    let multi: u64 = runs
        .iter()
        .map(|r| {
            r["result"]["counters"]["multi_partition"]
                .as_u64()
                .unwrap_or(0)
        })
        .sum();
    assert!(multi > 0, "{json}");
    std::fs::remove_dir_all(&out).unwrap();
}

/// Runs `txlab run ARGS`, expects a usage failure before anything is written, returns its text.
fn refused(args: &[&str]) -> String {
    let out = std::env::temp_dir().join(format!("txlab-cli-nodes-bad-{}", std::process::id()));
    let mut argv = vec!["txlab", "run"];
    argv.extend_from_slice(args);
    argv.extend_from_slice(&["--duration", "10ms", "--out", out.to_str().unwrap()]);
    let f = execute(Cli::try_parse_from(argv).unwrap()).unwrap_err();
    assert_eq!(f.exit_code(), EXIT_USAGE, "{args:?}: {f}");
    assert!(!out.exists(), "nothing is written for bad input");
    f.to_string()
}

#[test]
fn bad_node_settings_are_refused_naming_the_value_and_what_is_accepted() {
    let mut more_than_warehouses = vec!["--protocol", "docc", "--nodes", "3"];
    more_than_warehouses.extend_from_slice(SMALL_TPCC);
    let e = refused(&more_than_warehouses);
    assert!(
        e.contains("--nodes = 3") && e.contains("1..=2") && e.contains("--warehouses 2"),
        "{e}"
    );
    let e = refused(&[
        "--protocol",
        "docc,silo",
        "--workload",
        "tpcc",
        "--nodes",
        "2",
    ]);
    assert!(
        e.contains("silo with --nodes 2")
            && e.contains("docc, docc-snapshot, docc-basic or calvin"),
        "{e}"
    );
    let e = refused(&[
        "--protocol",
        "calvin",
        "--workload",
        "smallbank",
        "--nodes",
        "2",
    ]);
    assert!(e.contains("smallbank") && e.contains("tpcc"), "{e}");
    let e = refused(&["--protocol", "docc", "--nodes", "2", "--transport", "tcp"]);
    assert!(
        e.contains("tcp") && e.contains("txlab cluster --local N"),
        "{e}"
    );
    // Out of range at parsing: clap's usage error names the flag, the value and the range.
    for bad in ["0", "256"] {
        let e = Cli::try_parse_from(["txlab", "run", "--protocol", "docc", "--nodes", bad])
            .unwrap_err();
        assert_eq!(e.exit_code(), EXIT_USAGE as i32);
        let msg = e.to_string();
        assert!(
            msg.contains("--nodes") && msg.contains(&format!("'{bad}'")) && msg.contains("1..=255"),
            "{msg}"
        );
    }
    // Without --nodes every deterministic protocol runs single-node, and --nodes 1 with a
    // protocol that cannot be partitioned is only a note (one node is no partitioning).
    let r =
        Cli::try_parse_from(["txlab", "run", "--protocol", "silo,docc", "--nodes", "1"]).unwrap();
    let txlab_cli::Command::Run(r) = r.command else {
        panic!("not a run")
    };
    r.spec().validate().unwrap();
}
