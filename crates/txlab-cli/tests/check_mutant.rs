//! `txlab run --check` on a really broken engine: Silo with its read validation switched off
//! (`txlab-silo`'s `mutation` fault injection, registered as the hidden protocol
//! `silo-mutant-skip-read-validation` by this crate's test-only feature `mutants`). The run goes
//! through the CLI's own path (parse, sweep, record, check, report) and must fail with exit
//! code 1 naming the anomaly.
//!
//! Needs the feature (Cargo.toml gives this target `required-features`, so a plain
//! `cargo test -p txlab-harness` skips it):
//!
//! ```sh
//! cargo test -p txlab-harness --features mutants --test check_mutant
//! ```

use clap::Parser;
use txlab_cli::{Cli, EXIT_FAILURE, execute, list_text};
use txlab_harness::registry::Protocol;

const MUTANT: &str = "silo-mutant-skip-read-validation";

/// Anomaly kinds a commit without read validation produces (lost updates and read skew are
/// G-single; longer cycles G2-item), as `CheckSummary` prints them.
const ANOMALIES: [&str; 6] = [
    "GSingle",
    "G2Item",
    "G1c",
    "G0",
    "GSingleRealtime",
    "G2ItemRealtime",
];

/// `txlab run --check` of `protocol` on the contended configuration both tests share.
fn check_run(protocol: &str, out: &std::path::Path, seed: u64) -> Result<(), txlab_cli::Failure> {
    let seed = seed.to_string();
    let cli = Cli::try_parse_from([
        "txlab",
        "run",
        "--protocol",
        protocol,
        // YCSB-F: half the transactions read-modify-write, so two of them updating one hot key
        // both commit without read validation (a lost update).
        "--workload",
        "ycsb-f",
        "--records",
        "8",
        "--ops-per-txn",
        "4",
        "--theta",
        "0.99",
        "--threads",
        "2",
        "--duration",
        "150ms",
        "--warmup",
        "0s",
        "--cooldown",
        "0s",
        "--ack",
        "commit",
        "--seed",
        &seed,
        "--out",
        out.to_str().unwrap(),
        "--check",
    ])
    .unwrap();
    execute(cli)
}

#[test]
fn check_fails_the_command_on_a_broken_engine() {
    let p = Protocol::from_name(MUTANT).unwrap();
    assert!(p.hidden() && !p.is_compared());
    assert!(!list_text().contains("mutant"), "mutants are not listed");

    let out = std::env::temp_dir().join(format!("txlab-check-mutant-{}", std::process::id()));
    // Anomalies need two transactions to overlap, which a loaded 2-core machine may not schedule
    // in one short run: try a bounded number of runs (each of them is a real CLI run).
    let mut failure = None;
    for seed in 0..10 {
        match check_run(MUTANT, &out, seed) {
            Err(f) => {
                failure = Some(f);
                break;
            }
            Ok(()) => eprintln!("seed {seed}: no anomaly this time, retrying"),
        }
    }
    let f = failure.expect("10 runs of Silo without read validation were all serializable");
    assert_eq!(f.exit_code(), EXIT_FAILURE, "{f}");
    let msg = f.to_string();
    eprintln!("exit {}: error: {msg}", f.exit_code());
    assert!(
        msg.contains("--check failed") && msg.contains(MUTANT),
        "{msg}"
    );
    assert!(
        ANOMALIES.iter().any(|a| msg.contains(&format!("{a}: "))),
        "the message names the anomaly: {msg}"
    );
    // The results were written before the check failed the command.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let check = &json["runs"][0]["check"];
    assert_eq!(check["history_checked"], true, "{check}");
    assert!(
        !check["anomalies"].as_array().unwrap().is_empty(),
        "{check}"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn the_sound_engine_passes_the_same_check() {
    // The same configuration on the real Silo: the failure above is the mutant's, not the
    // configuration's.
    let out = std::env::temp_dir().join(format!("txlab-check-sound-{}", std::process::id()));
    // The CLI's default seed.
    check_run("silo", &out, 42).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
}

/// `txlab cluster --local 3 -- run --protocol occ-2pc --check` with OCC's read validation
/// switched off (`--mutant OccNoValidation`, this feature's hidden flag): the client process
/// finds the anomalies in the history its coordinators recorded, and TPC-C's consistency
/// conditions fail on the shards the two server processes sent back.
#[test]
fn a_multi_process_cluster_check_catches_occ_without_validation() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_txlab"))
        .args(["cluster", "--local", "3", "--timeout-s", "120", "--", "run"])
        .args([
            "--protocol",
            "occ-2pc",
            "--workload",
            "tpcc-np",
            "--tpcc-scaled",
        ])
        .args([
            "--districts",
            "2",
            "--district-customers",
            "30",
            "--items",
            "100",
        ])
        .args(["--duration", "1s", "--warmup", "0s", "--check"])
        .args(["--mutant", "OccNoValidation"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--check failed"), "{err}");
    assert!(
        ANOMALIES.iter().any(|a| err.contains(&format!("{a}: "))),
        "{err}"
    );
    assert!(
        err.contains("invariant violated: tpcc consistency"),
        "{err}"
    );
}
