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
            &[
                "--protocol",
                "rococo",
                "--workload",
                "ycsb-f",
                "--theta",
                "0,0.5",
            ],
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

/// `txlab cluster --out`: two protocols, two rounds, interleaved; the directory holds what
/// `txlab run --out` writes (every round's record, ratios to the first protocol), the table is
/// printed, and `txlab plot` draws the directories of two client counts against clients per
/// server.
#[test]
fn cluster_out_writes_a_results_directory_that_plot_reads() {
    let root = std::env::temp_dir().join(format!("txlab-cluster-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let mut dirs = Vec::new();
    for clients in ["2", "4"] {
        let dir = root.join(format!("c{clients}"));
        let out = Command::new(TXLAB)
            .args(["cluster", "--local", "3", "--timeout-s", "120", "--out"])
            .arg(&dir)
            .args(["--", "run", "--protocol", "rococo,2pl-2pc", "--repeat", "2"])
            .args(["--clients-per-server", clients])
            .args(&TPCC[..TPCC.len() - 1])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("vs rococo [95% CI]"), "{stdout}");
        assert!(stdout.contains("throughput/s [95% CI]"), "{stdout}");
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap())
                .unwrap();
        let runs: Vec<(String, u64)> = json["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["protocol"].as_str().unwrap().to_string(),
                    r["repeat"].as_u64().unwrap(),
                )
            })
            .collect();
        let expected: Vec<(String, u64)> =
            [("rococo", 0), ("2pl-2pc", 0), ("rococo", 1), ("2pl-2pc", 1)]
                .map(|(p, r)| (p.to_string(), r))
                .to_vec();
        assert_eq!(runs, expected, "rounds interleaved, each its own repeat");
        let summary = json["summary"].as_array().unwrap();
        assert_eq!(summary.len(), 2);
        // `txlab run --out`'s config shape; the transport the launches used is the launch's.
        assert_eq!(json["config"]["engine"]["cluster"]["servers"], 2);
        assert_eq!(json["config"]["engine"]["cluster"]["link_latency_us"], 0);
        assert_eq!(json["config"]["cluster"]["transport"], "tcp");
        // The servers' counters are in the records: rococo's components are decided there.
        for r in json["runs"].as_array().unwrap() {
            let c = &r["result"]["counters"];
            assert!(c["net.messages"].as_u64().unwrap() > 0, "{c}");
            if r["protocol"] == "rococo" {
                assert!(c["scc_count"].as_u64().unwrap() > 0, "{c}");
            }
        }
        // TPC-C's kinds, with new-orders/s and its ratio to rococo's.
        let no = &summary[1]["by_kind"]["new_order"];
        assert!(no["throughput"]["median"].as_f64().unwrap() > 0.0, "{no}");
        assert_eq!(no["ratio"]["n"], 2, "{no}");
        assert!(
            stdout.contains("throughput by transaction kind"),
            "{stdout}"
        );

        assert_eq!(summary[1]["ratio"]["n"], 2, "{}", summary[1]);
        assert!(dir.join("results.csv").is_file() && dir.join("summary.csv").is_file());
        dirs.push(dir);
    }
    let plots = root.join("plots");
    let out = Command::new(TXLAB)
        .arg("plot")
        .args(&dirs)
        .arg("--out")
        .arg(&plots)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("TXLAB_FONT") {
        // No TrueType font on this machine: nothing can be drawn, and the error says so.
        assert_eq!(out.status.code(), Some(1), "{err}");
    } else {
        assert!(out.status.success(), "{err}");
        let svg = std::fs::read_to_string(plots.join("tpcc-throughput-vs-clients-per-server.svg"))
            .unwrap();
        assert!(
            svg.contains("clients per server"),
            "the x axis is clients per server"
        );
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn cluster_out_refuses_partitioned_protocols_before_launching() {
    let dir = std::env::temp_dir().join(format!("txlab-cluster-out-bad-{}", std::process::id()));
    let out = Command::new(TXLAB)
        .args(["cluster", "--local", "2", "--out"])
        .arg(&dir)
        .args(["--", "run", "--protocol", "docc", "--workload", "tpcc"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("docc") && err.contains("rococo"), "{err}");
    assert!(
        !dir.exists(),
        "nothing is written before the flags are accepted"
    );
}

#[test]
fn cluster_out_refuses_client_threads_before_creating_the_directory() {
    let dir = std::env::temp_dir().join(format!(
        "txlab-cluster-out-client-threads-{}",
        std::process::id()
    ));
    let out = Command::new(TXLAB)
        .args(["cluster", "--local", "3", "--out"])
        .arg(&dir)
        .args(["--", "run", "--protocol", "rococo", "--workload", "ycsb-f"])
        .args(["--client-threads", "2"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--client-threads 2") && err.contains("accepted: 1"),
        "{err}"
    );
    assert!(
        !dir.exists(),
        "the directory is not created before the flags are accepted"
    );
}

/// A server process that never comes up (`--fault hang`: it hangs before loading): the client
/// process issues nothing and fails once `--timeout-s` has passed, naming the server, its
/// address and the timeout, and the launch fails with it.
#[test]
fn a_server_that_never_comes_up_fails_the_launch_naming_it_and_the_timeout() {
    let out = Command::new(TXLAB)
        .args(["cluster", "--local", "3", "--timeout-s", "2"])
        .args(["--fault-node", "1", "--fault", "hang"])
        .args(["--", "run", "--protocol", "rococo"])
        .args(&TPCC[..TPCC.len() - 1])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("servers not ready within 2s (--timeout-s), so the run did not start"),
        "{err}"
    );
    assert!(
        err.contains(": not connected (still loading its shard, or unreachable)")
            && err.contains("server 1 at 127.0.0.1:"),
        "{err}"
    );
    // The client process's failure ends the launch, before the launcher's own timeout
    // (`--timeout-s` + 10 s) would.
    assert!(
        err.contains("node 2 (pid") && err.contains("failed"),
        "{err}"
    );
}
