//! `txlab cluster --local 3 -- run --protocol rococo|2pl-2pc|occ-2pc --check`: two server
//! processes and one client process on loopback. The client's record has commits and passed
//! the checks run on the history its coordinators recorded and on the shards the servers sent
//! back; every server reports its counters. Bad node counts and flags are refused naming the
//! value and what is accepted. (`check_mutant.rs` has the run whose checks must fail.)

use std::process::{Command, Output};

const TXLAB: &str = env!("CARGO_BIN_EXE_txlab");

fn cluster(local: &str, run: &[&str]) -> Output {
    Command::new(TXLAB)
        .args([
            "cluster",
            "--local",
            local,
            "--timeout-s",
            "120",
            "--",
            "run",
        ])
        .args(run)
        .output()
        .unwrap()
}

/// The small scaled TPC-C every protocol runs here (2 districts per server).
const TPCC: &[&str] = &[
    "--workload",
    "tpcc",
    "--tpcc-scaled",
    "--districts",
    "4",
    "--district-customers",
    "100",
    "--items",
    "1000",
    "--duration",
    "500ms",
    "--warmup",
    "100ms",
    "--check",
];

#[test]
fn every_distributed_protocol_runs_checked_in_three_processes() {
    for protocol in ["rococo", "2pl-2pc", "occ-2pc"] {
        let mut run = vec!["--protocol", protocol];
        run.extend_from_slice(TPCC);
        let out = cluster("3", &run);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{protocol}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["protocol"], protocol);
        let nodes = v["nodes"].as_array().unwrap();
        assert_eq!(nodes.len(), 3, "{v}");
        for server in &nodes[..2] {
            assert_eq!(server["role"], "server", "{server}");
            assert_eq!(server["counters"]["internal_errors"], 0, "{server}");
            assert!(server["counters"]["net.messages"].as_u64().unwrap() > 0);
        }
        let client = &nodes[2];
        assert_eq!(client["role"], "client", "{client}");
        let record = &client["record"];
        assert_eq!(record["protocol"], protocol);
        assert!(
            record["result"]["commits"].as_u64().unwrap() > 0,
            "{record}"
        );
        let check = &record["check"];
        assert_eq!(check["history_checked"], true, "{check}");
        assert!(check["committed"].as_u64().unwrap() > 0, "{check}");
        assert_eq!(check["anomalies"], serde_json::json!([]), "{check}");
        assert!(check["invariant"].is_null(), "{check}");
    }
}

#[test]
fn bad_node_counts_and_flags_are_refused_naming_the_value() {
    let cases: [(&str, &[&str], &str); 4] = [
        (
            "1",
            &["--protocol", "rococo"],
            "--local 1: accepted for rococo: at least 2",
        ),
        (
            "3",
            &["--protocol", "rococo", "--servers", "3"],
            "--servers 3: accepted: 2 with 3 nodes",
        ),
        (
            "3",
            &["--protocol", "occ-2pc", "--workload", "smallbank"],
            "occ-2pc with smallbank",
        ),
        (
            "3",
            &["--protocol", "rococo", "--repeat", "2"],
            "2 points (--workload, --theta, --threads, --repeat): accepted: one point",
        ),
    ];
    for (local, run, want) in cases {
        let out = cluster(local, run);
        assert!(!out.status.success(), "{run:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{run:?}: {err}");
        // Refused before any node process started.
        assert!(!err.contains("pid"), "{run:?}: {err}");
    }
}
