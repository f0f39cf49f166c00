//! `txlab cluster` and `txlab node` (a thin adapter over `txlab_net::cluster::cli`): three
//! processes of this binary run the replicated counter on loopback and converge; a protocol the
//! binary does not know is refused naming the accepted ones.

use std::process::Command;

const TXLAB: &str = env!("CARGO_BIN_EXE_txlab");

#[test]
fn three_node_processes_run_the_counter() {
    for extra in [&[][..], &["--distinct-hosts"][..]] {
        let out = Command::new(TXLAB)
            .args(["cluster", "--local", "3"])
            .args(extra)
            .args([
                "--",
                "run",
                "--protocol",
                "net-counter",
                "--increments",
                "20",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["protocol"], "net-counter");
        let nodes = v["nodes"].as_array().unwrap();
        assert_eq!(nodes.len(), 3);
        for n in nodes {
            assert_eq!(n["converged"], true, "{n}");
        }
    }
}

#[test]
fn unknown_protocols_are_refused_naming_the_accepted_ones() {
    let out = Command::new(TXLAB)
        .args(["cluster", "--local", "2", "--", "run", "--protocol", "nope"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown protocol \"nope\": accepted: net-counter"),
        "{err}"
    );
}
