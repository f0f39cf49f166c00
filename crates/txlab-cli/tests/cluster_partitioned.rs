//! `txlab cluster --local 2 -- run --protocol docc,calvin ...`: the deterministic engines with
//! one partition node per process over loopback tcp. Both protocols commit and pass the checks
//! (merged history strict, serial replay of the input log against the nodes' summed digests,
//! TPC-C's invariants); a node reporting a corrupted digest fails the check; an unknown
//! protocol in the list is refused naming the accepted ones.

use std::process::{Command, Output};

const TXLAB: &str = env!("CARGO_BIN_EXE_txlab");

/// A short checked TPC-C run small enough for a debug build (2 warehouses, 1,000 items, 100
/// customers per district, 64 outstanding transactions per node).
const RUN: &[&str] = &[
    "--workload",
    "tpcc",
    "--warehouses",
    "2",
    "--items",
    "1000",
    "--district-customers",
    "100",
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
