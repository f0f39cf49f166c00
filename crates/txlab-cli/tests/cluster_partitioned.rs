//! `txlab cluster --local 2 -- run --protocol docc,calvin ...`: the deterministic engines with
//! one partition node per process over loopback tcp. Both protocols commit and pass the checks
//! (merged history strict, serial replay of the input log against the nodes' summed digests,
//! TPC-C's invariants); a node reporting a corrupted digest fails the check; an unknown
//! protocol in the list is refused naming the accepted ones; a run with epochs far shorter than
//! the nodes can keep up with still ends within its duration plus a bounded drain.

mod common;

use common::SMALL_TPCC;
use std::process::{Command, Output};

const TXLAB: &str = env!("CARGO_BIN_EXE_txlab");

/// A short checked run of [`SMALL_TPCC`] with 1 ms epochs and 64 outstanding transactions per
/// node.
const RUN: &[&str] = &[
    "--concurrency",
    "64",
    "--batch-epoch-us",
    "1000",
    "--warmup",
    "50ms",
    "--duration",
    "200ms",
    "--cooldown",
    "20ms",
    "--check",
];

fn cluster(own: &[&str], protocols: &str) -> Output {
    Command::new(TXLAB)
        .args(["cluster", "--local", "2", "--timeout-s", "120"])
        .args(own)
        .args(["--", "run", "--protocol", protocols])
        .args(SMALL_TPCC)
        .args(RUN)
        .output()
        .unwrap()
}

fn lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn two_processes_run_docc_and_calvin_and_pass_the_checks() {
    let out = cluster(&[], "docc,calvin");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let runs = lines(&out);
    let protocols: Vec<&str> = runs
        .iter()
        .map(|r| r["protocol"].as_str().unwrap())
        .collect();
    assert_eq!(protocols, ["docc", "calvin"]);
    for r in &runs {
        let c = &r["cluster"];
        assert!(c["committed"].as_u64().unwrap() > 0, "{r}");
        assert_eq!(c["check"]["passed"], true, "{r}");
        assert!(c["check"]["committed"].as_u64().unwrap() > 0, "{r}");
        let nodes = r["nodes"].as_array().unwrap();
        assert_eq!(nodes.len(), 2);
        for n in nodes {
            assert_eq!(n["errors"], 0, "{n}");
            let file = n["check_file"].as_str().unwrap();
            assert!(
                !std::path::Path::new(file).exists(),
                "the launcher removes {file}"
            );
        }
        // Both nodes took part in multi-partition transactions: the exchange ran over tcp.
        assert!(
            nodes
                .iter()
                .all(|n| n["counters"]["multi_partition"].as_u64().unwrap() > 0),
            "{r}"
        );
    }
}

#[test]
fn a_node_reporting_a_corrupted_digest_fails_the_check() {
    let out = cluster(&["--fault-node", "1", "--fault", "digest"], "docc");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--check failed") && err.contains("serial replay: the merged state differs"),
        "{err}"
    );
    let runs = lines(&out);
    assert_eq!(runs.len(), 1, "the failed run's line is still printed");
    assert_eq!(runs[0]["cluster"]["check"]["passed"], false);
}

#[test]
fn an_unknown_protocol_in_the_list_is_refused_naming_the_accepted_ones() {
    let out = Command::new(TXLAB)
        .args([
            "cluster",
            "--local",
            "2",
            "--",
            "run",
            "--protocol",
            "docc,nope",
        ])
        .args(SMALL_TPCC)
        .args(RUN)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "nothing ran");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown protocol \"nope\": accepted: ")
            && [
                "net-counter",
                "docc",
                "docc-snapshot",
                "docc-basic",
                "calvin"
            ]
            .iter()
            .all(|p| err.contains(p)),
        "{err}"
    );
}

#[test]
fn a_node_count_other_than_the_clusters_is_refused() {
    let out = Command::new(TXLAB)
        .args(["cluster", "--local", "2", "--", "run", "--protocol", "docc"])
        .args(["--nodes", "1"])
        .args(SMALL_TPCC)
        .args(RUN)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--nodes") && err.contains("the cluster's node count (--local 2)"),
        "{err}"
    );
}

/// A 1 s checked run of [`SMALL_TPCC`] with 100 µs epochs, too short for a debug build's nodes
/// to keep up, and 64 outstanding transactions per node.
const SHORT_EPOCHS: &[&str] = &[
    "--concurrency",
    "64",
    "--batch-epoch-us",
    "100",
    "--warmup",
    "0ms",
    "--duration",
    "1s",
    "--cooldown",
    "0ms",
    "--check",
];

/// Calvin's nodes fall far behind 100 µs epochs on a debug build; the run still stops
/// sequencing at its wall-clock end and drains, and what it ran passes the checks. (Bound
/// generous: the nodes' start, the load and the checks of a debug build are inside it.)
#[test]
fn a_run_with_epochs_too_short_to_keep_up_with_ends_within_its_duration_plus_a_drain() {
    let start = std::time::Instant::now();
    let out = Command::new(TXLAB)
        .args(["cluster", "--local", "2", "--timeout-s", "120"])
        .args(["--", "run", "--protocol", "calvin"])
        .args(SMALL_TPCC)
        .args(SHORT_EPOCHS)
        .output()
        .unwrap();
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        took < std::time::Duration::from_secs(60),
        "a 1 s run took {took:?}"
    );
    let runs = lines(&out);
    assert_eq!(runs.len(), 1);
    let c = &runs[0]["cluster"];
    assert!(c["committed"].as_u64().unwrap() > 0, "{c}");
    assert_eq!(c["check"]["passed"], true, "{c}");
}

/// The same in one process (`txlab run --nodes 2`): the feeds end at the planned end and the
/// nodes drain, instead of running every planned epoch into the run's timeout.
#[test]
fn an_in_process_cluster_with_epochs_too_short_to_keep_up_with_ends_within_a_drain() {
    let dir = std::env::temp_dir().join(format!("txlab-short-epochs-{}", std::process::id()));
    let start = std::time::Instant::now();
    let out = Command::new(TXLAB)
        .args([
            "run",
            "--protocol",
            "calvin",
            "--nodes",
            "2",
            "--link-latency-us",
            "100",
        ])
        .args(SMALL_TPCC)
        .args(SHORT_EPOCHS)
        .args(["--out", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let took = start.elapsed();
    // The results directory is not what this test checks.
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        took < std::time::Duration::from_secs(60),
        "a 1 s run took {took:?}"
    );
}
