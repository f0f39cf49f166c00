//! CLI tests: every flag parses, every bad input is a usage error (exit code 2) whose message
//! names the flag, the value and what is accepted, and a tiny sweep writes its reports.

use clap::Parser;
use std::time::Duration;
use txlab_cli::{AckArg, Cli, Command, EXIT_USAGE, Failure, execute, parse_duration};
use txlab_cli::{check_failures, list_text, utc_timestamp};
use txlab_harness::point::CheckSummary;
use txlab_harness::registry::Protocol;
use txlab_harness::registry::pipeline::{BatchParams, FvsChoice};
use txlab_harness::workloads::{WorkloadKind, YcsbKind};

fn protocol(name: &str) -> Protocol {
    Protocol::from_name(name).unwrap()
}

fn run_args(args: &[&str]) -> txlab_cli::RunArgs {
    let mut argv = vec!["txlab", "run"];
    argv.extend_from_slice(args);
    match Cli::try_parse_from(argv).unwrap().command {
        Command::Run(r) => r,
        other => panic!("parsed as {other:?}"),
    }
}

/// Parses, expects a usage error, and returns its rendered message.
fn usage_error(args: &[&str]) -> String {
    let mut argv = vec!["txlab"];
    argv.extend_from_slice(args);
    let e = Cli::try_parse_from(argv).unwrap_err();
    assert_eq!(e.exit_code(), EXIT_USAGE as i32, "{e}");
    e.to_string()
}

#[test]
fn defaults_are_documented_values() {
    let r = run_args(&[]);
    assert_eq!(r.protocol, vec![protocol("silo")]);
    assert_eq!(r.workload, vec![WorkloadKind::Ycsb(YcsbKind::A)]);
    assert_eq!(r.threads, vec![1]);
    assert_eq!(r.theta, vec![0.0]);
    assert_eq!(r.duration, Duration::from_secs(5));
    assert_eq!(r.warmup, Duration::from_secs(1));
    assert_eq!(r.cooldown, Duration::from_millis(100));
    assert_eq!(r.spec().cooldown, Duration::from_millis(100));
    assert_eq!(r.repeat, 1);
    assert_eq!(r.out, None);
    assert!(!r.check);
    let p = &r.params;
    assert_eq!(
        (p.records, p.ops_per_txn, p.payload, p.customers),
        (100_000, 10, 100, 100_000)
    );
    assert_eq!((p.reads, p.writes, p.epoch_ms, p.seed), (5, 5, 40, 42));
    assert_eq!(p.ack, AckArg::Epoch);
    assert!(!p.hyperthreads);
    assert_eq!(
        (p.batch_size, p.concurrency, p.reorder_workers, p.fvs),
        (40, None, 4, FvsChoice::Sort)
    );
    assert_eq!(
        r.spec().engine.batch,
        BatchParams::default(),
        "the flags' defaults are the engines' defaults"
    );
    assert_eq!(
        r.spec().engine.deterministic,
        txlab_harness::registry::deterministic::DeterministicParams::default(),
        "the deterministic engines' defaults too (--concurrency 4096, 5 ms epochs)"
    );
}

#[test]
fn batching_flags_parse_and_bad_values_name_the_flag() {
    let r = run_args(&[
        "--protocol",
        "batch-base,batch-batch,batch-sr,batch-vc,batch-srvc,silo-ta",
        "--batch-size",
        "8",
        "--concurrency",
        "64",
        "--reorder-workers",
        "2",
        "--fvs",
        "hybrid",
    ]);
    assert_eq!(r.protocol.len(), 6);
    assert!(r.protocol.iter().all(|p| !p.is_compared()));
    let b = r.spec().engine.batch;
    assert_eq!(
        (b.batch_size, b.concurrency, b.reorder_workers, b.fvs),
        (8, 64, 2, FvsChoice::Hybrid)
    );
    assert_eq!(run_args(&["--fvs", "scc"]).params.fvs, FvsChoice::Scc);
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["run", "--batch-size", "0"],
            &["--batch-size", "'0'", "1..=65536"],
        ),
        (
            &["run", "--batch-size", "65537"],
            &["--batch-size", "65537", "1..=65536"],
        ),
        (
            &["run", "--concurrency", "0"],
            &["--concurrency", "'0'", "1..=4194304"],
        ),
        (
            &["run", "--concurrency", "many"],
            &["--concurrency", "many", "1..=4194304"],
        ),
        (
            &["run", "--reorder-workers", "257"],
            &["--reorder-workers", "257", "0..=256"],
        ),
        (
            &["run", "--fvs", "exact"],
            &["--fvs", "exact", "sort", "scc", "hybrid"],
        ),
    ];
    for (args, needles) in cases {
        let msg = usage_error(args);
        for n in *needles {
            assert!(msg.contains(n), "{args:?}: message lacks {n:?}:\n{msg}");
        }
    }
    // The pipeline has at most 256 processors: a larger --threads is a usage error naming it.
    let r = run_args(&["--protocol", "batch-srvc", "--threads", "300"]);
    let out = std::env::temp_dir().join(format!("txlab-cli-batch-bad-{}", std::process::id()));
    let f = txlab_cli::sweep_and_report(&r.spec(), &out).unwrap_err();
    assert_eq!(f.exit_code(), EXIT_USAGE);
    assert!(f.to_string().contains("--threads = 300"), "{f}");
    assert!(!out.exists(), "nothing is written for bad input");
}

#[test]
fn every_flag_parses() {
    let r = run_args(&[
        "--protocol",
        "silo,noop",
        "--workload",
        "ycsb-a,ycsb-b,ycsb-c,ycsb-f,micro,smallbank",
        "--threads",
        "1,2,8",
        "--theta",
        "0,0.9,0.99",
        "--duration",
        "2m",
        "--warmup",
        "500ms",
        "--cooldown",
        "250ms",
        "--repeat",
        "3",
        "--out",
        "/tmp/x",
        "--check",
        "--records",
        "5000",
        "--ops-per-txn",
        "16",
        "--payload",
        "8",
        "--customers",
        "77",
        "--reads",
        "3",
        "--writes",
        "2",
        "--epoch-ms",
        "5",
        "--ack",
        "commit",
        "--seed",
        "9",
        "--hyperthreads",
    ]);
    assert_eq!(r.protocol, vec![protocol("silo"), protocol("noop")]);
    assert_eq!(r.workload.len(), 6);
    assert_eq!(r.workload[5], WorkloadKind::SmallBank);
    assert_eq!(r.threads, vec![1, 2, 8]);
    assert_eq!(r.theta, vec![0.0, 0.9, 0.99]);
    assert_eq!(r.duration, Duration::from_secs(120));
    assert_eq!(r.warmup, Duration::from_millis(500));
    assert_eq!(r.cooldown, Duration::from_millis(250));
    assert_eq!(r.repeat, 3);
    assert_eq!(r.out.as_deref(), Some(std::path::Path::new("/tmp/x")));
    assert!(r.check);
    let p = &r.params;
    assert_eq!(
        (p.records, p.ops_per_txn, p.payload, p.customers),
        (5000, 16, 8, 77)
    );
    assert_eq!((p.reads, p.writes, p.epoch_ms, p.seed), (3, 2, 5, 9));
    assert_eq!(p.ack, AckArg::Commit);
    assert!(p.hyperthreads);
    let spec = r.spec();
    assert_eq!(spec.cooldown, Duration::from_millis(250));
    assert_eq!(spec.engine.epoch, Duration::from_millis(5));
    assert!(
        spec.params.audit,
        "--check turns on SmallBank's money audit"
    );
    assert_eq!(spec.points().len(), 2 * 6 * 3 * 3 * 3);
}

#[test]
fn other_subcommands_parse() {
    assert!(matches!(
        Cli::try_parse_from(["txlab", "list"]).unwrap().command,
        Command::List
    ));
    match Cli::try_parse_from(["txlab", "compare"]).unwrap().command {
        Command::Compare(c) => {
            assert_eq!(c.duration, Duration::from_millis(500));
            assert_eq!(c.rounds, 8);
            assert_eq!(c.warmup, Duration::from_millis(200));
            assert_eq!(c.cooldown, Duration::from_millis(100));
            let spec = c.spec(4);
            assert_eq!(spec.cooldown, Duration::from_millis(100));
            assert_eq!(spec.repeat, 8);
            assert_eq!(spec.baseline, Some(protocol("silo")));
            assert_eq!(spec.threads, vec![1, 4]);
            assert_eq!(
                spec.workloads,
                vec![WorkloadKind::Ycsb(YcsbKind::A), WorkloadKind::SmallBank]
            );
            assert!(
                !spec.protocols.contains(&protocol("noop")),
                "hidden protocols are not compared"
            );
            assert!(spec.protocols.contains(&protocol("silo")));
            assert!(
                spec.protocols.iter().all(|p| p.is_compared()),
                "the batching engines are not compared: {:?}",
                spec.protocols
            );
            assert_eq!(c.spec(1).threads, vec![1]);
        }
        other => panic!("{other:?}"),
    }
    match Cli::try_parse_from(["txlab", "plot", "results/x"])
        .unwrap()
        .command
    {
        Command::Plot(p) => assert_eq!(p.dirs, [std::path::Path::new("results/x")]),
        other => panic!("{other:?}"),
    }
    let l = list_text();
    assert!(l.contains("silo") && l.contains("ycsb-f") && l.contains("smallbank"));
    assert!(!l.contains("noop"));
    for name in [
        "batch-base",
        "batch-batch",
        "batch-sr",
        "batch-vc",
        "batch-srvc",
        "silo-ta",
    ] {
        assert!(
            l.lines()
                .any(|line| line.trim_start().starts_with(name) && line.len() > name.len() + 10),
            "{name} is listed with a description:\n{l}"
        );
    }
}

#[test]
fn bad_values_are_usage_errors_naming_flag_value_and_range() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["run", "--threads", "0"],
            &["--threads", "'0'", "1..=1024"],
        ),
        (
            &["run", "--threads", "1,x"],
            &["--threads", "'x'", "1..=1024"],
        ),
        (
            &["run", "--threads", "2000"],
            &["--threads", "2000", "1..=1024"],
        ),
        (&["run", "--theta", "-0.5"], &["--theta", "-0.5", "0..=10"]),
        (&["run", "--theta", "10.5"], &["--theta", "10.5", "0..=10"]),
        (&["run", "--theta", "NaN"], &["--theta", "NaN", "0..=10"]),
        (
            &["run", "--protocol", "2pl"],
            &["--protocol", "2pl", "silo"],
        ),
        (
            &["run", "--workload", "tpch"],
            &["--workload", "tpch", "ycsb-a", "smallbank", "tpcc"],
        ),
        (
            &["run", "--workload", "tpcc", "--warehouses", "0"],
            &["--warehouses", "'0'", "1..=65535"],
        ),
        (
            &["run", "--workload", "tpcc", "--items", "5"],
            &["--items", "'5'", "15..=1000000"],
        ),
        (
            &["run", "--duration", "0s"],
            &["--duration", "0s", "greater than 0"],
        ),
        (
            &["run", "--duration", "0ms"],
            &["--duration", "0ms", "greater than 0"],
        ),
        (
            &["run", "--duration", "5"],
            &["--duration", "'5'", "ms, s, m"],
        ),
        (
            &["run", "--duration", "abc"],
            &["--duration", "abc", "500ms"],
        ),
        (&["run", "--duration", "25h"], &["--duration", "25h", "24h"]),
        (&["run", "--warmup", "1parsec"], &["--warmup", "1parsec"]),
        (&["run", "--cooldown", "25h"], &["--cooldown", "25h", "24h"]),
        (
            &["run", "--cooldown", "later"],
            &["--cooldown", "later", "500ms"],
        ),
        (&["run", "--repeat", "0"], &["--repeat", "'0'", "1..=1000"]),
        (&["run", "--records", "0"], &["--records", "'0'", "1..="]),
        (
            &["run", "--ops-per-txn", "0"],
            &["--ops-per-txn", "'0'", "1..=1000"],
        ),
        (
            &["run", "--payload", "0"],
            &["--payload", "'0'", "1..=1048576"],
        ),
        (
            &["run", "--customers", "1"],
            &["--customers", "'1'", "2..="],
        ),
        (&["run", "--reads", "0"], &["--reads", "'0'"]),
        (&["run", "--writes", "1001"], &["--writes", "1001"]),
        (
            &["run", "--epoch-ms", "0"],
            &["--epoch-ms", "'0'", "1..=10000"],
        ),
        (
            &["run", "--ack", "never"],
            &["--ack", "never", "commit", "epoch"],
        ),
        (&["run", "--seed", "-1"], &["--seed"]),
        (&["run", "--bogus"], &["--bogus"]),
        (&["compare", "--duration", "0s"], &["--duration", "0s"]),
        (&["compare", "--warmup", "soon"], &["--warmup", "soon"]),
        (&["compare", "--cooldown", "1y"], &["--cooldown", "1y"]),
        (&["frobnicate"], &["frobnicate"]),
        (&["plot"], &["DIR"]),
    ];
    for (args, needles) in cases {
        let msg = usage_error(args);
        for n in *needles {
            assert!(msg.contains(n), "{args:?}: message lacks {n:?}:\n{msg}");
        }
    }
}

#[test]
fn workload_constraints_across_flags_are_usage_errors() {
    let r = run_args(&[
        "--ops-per-txn",
        "50",
        "--records",
        "10",
        "--duration",
        "10ms",
    ]);
    let out = std::env::temp_dir().join(format!("txlab-cli-bad-{}", std::process::id()));
    let f = txlab_cli::sweep_and_report(&r.spec(), &out).unwrap_err();
    assert_eq!(f.exit_code(), EXIT_USAGE);
    let msg = f.to_string();
    assert!(
        msg.contains("ops_per_txn = 50") && msg.contains("--ops-per-txn"),
        "{msg}"
    );
    assert!(!out.exists(), "nothing is written for bad input");
}

#[test]
fn durations_parse_with_units() {
    assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
    assert_eq!(parse_duration("1s"), Ok(Duration::from_secs(1)));
    assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
    assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
    assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
    assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
    for bad in ["", "s", "5", "-1s", "1 s", "1.2.3s", "1d"] {
        assert!(parse_duration(bad).is_err(), "{bad:?} parsed");
    }
}

#[test]
fn timestamps_are_utc_calendar_dates() {
    assert_eq!(utc_timestamp(0), "19700101-000000");
    assert_eq!(utc_timestamp(951_782_400), "20000229-000000");
    assert_eq!(utc_timestamp(1_795_000_000 + 3723), "20261118-120843");
}

#[test]
fn a_run_writes_reports_and_a_failed_check_is_exit_1() {
    let out = std::env::temp_dir().join(format!("txlab-cli-run-{}", std::process::id()));
    let out_s = out.to_str().unwrap();
    let cli = Cli::try_parse_from([
        "txlab",
        "run",
        "--protocol",
        "noop",
        "--workload",
        "noop",
        "--threads",
        "1,2",
        "--duration",
        "20ms",
        "--warmup",
        "0s",
        "--cooldown",
        "5ms",
        "--repeat",
        "2",
        "--out",
        out_s,
        "--check",
    ])
    .unwrap();
    execute(cli).unwrap();
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 4, "{csv}");
    assert!(csv.lines().nth(1).unwrap().starts_with("noop,noop,1,,0,"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(json["config"]["threads"], serde_json::json!([1, 2]));
    assert_eq!(json["config"]["duration"], serde_json::json!(0.02));
    assert_eq!(json["config"]["cooldown"], serde_json::json!(0.005));
    // Each run stores its latency CDF, ending at the maximum (percentile 100).
    let cdf = json["runs"][0]["result"]["latency_cdf"].as_array().unwrap();
    assert!(cdf.len() > 100, "{cdf:?}");
    assert_eq!(cdf.last().unwrap()["percentile"], serde_json::json!(100.0));
    assert_eq!(
        cdf.last().unwrap()["latency_us"],
        json["runs"][0]["result"]["latency"]["max_us"]
    );
    assert_eq!(json["config"]["engine"]["ack"], "epoch");
    assert_eq!(json["runs"].as_array().unwrap().len(), 4);
    assert!(json["machine"]["git_revision"].is_string());
    std::fs::remove_dir_all(&out).unwrap();

    // A failed check is a run failure: exit code 1. (A really broken engine through this whole
    // path: tests/check_mutant.rs, with the feature `mutants`.)
    let bad = CheckSummary {
        history_checked: true,
        committed: 3,
        anomalies: vec!["G2Item: 1".into()],
        invariant: None,
    };
    assert!(!bad.passed());
    let ok = CheckSummary {
        anomalies: vec![],
        ..bad.clone()
    };
    assert!(ok.passed());
    let broken = CheckSummary {
        invariant: Some("money".into()),
        ..ok
    };
    assert!(!broken.passed());
    assert_eq!(Failure::Run("x".into()).exit_code(), 1);
    assert!(check_failures(&[]).is_empty());
}

#[test]
fn non_numeric_values_of_every_integer_flag_name_the_flag_the_value_and_the_range() {
    let cases: &[(&str, &str)] = &[
        ("--threads", "1..=1024"),
        ("--repeat", "1..=1000"),
        ("--records", "1..=1099511627776"),
        ("--ops-per-txn", "1..=1000"),
        ("--payload", "1..=1048576"),
        ("--customers", "2..=1099511627776"),
        ("--reads", "1..=1000"),
        ("--writes", "1..=1000"),
        ("--warehouses", "1..=65535"),
        ("--districts", "1..=100000"),
        ("--district-customers", "1..=100000"),
        ("--items", "15..=1000000"),
        ("--epoch-ms", "1..=10000"),
        ("--seed", "0..=18446744073709551615"),
        ("--batch-size", "1..=65536"),
        ("--concurrency", "1..=4194304"),
        ("--reorder-workers", "0..=256"),
        ("--batch-epoch-us", "1..=10000000"),
        ("--lock-managers", "1..=1024"),
    ];
    for &(flag, range) in cases {
        for bad in ["abc", "-1", "1.5", ""] {
            let msg = usage_error(&["run", flag, bad]);
            assert!(
                msg.contains(flag) && msg.contains(&format!("'{bad}'")) && msg.contains(range),
                "{flag} {bad:?}: the message lacks the flag, the value or {range}:\n{msg}"
            );
            assert!(!msg.contains("invalid digit"), "{flag} {bad:?}: {msg}");
        }
        // `compare` shares the workload and engine flags.
        if flag != "--threads" && flag != "--repeat" {
            let msg = usage_error(&["compare", flag, "many"]);
            assert!(msg.contains(flag) && msg.contains(range), "{msg}");
        }
    }
    // Out of range on the other side, too.
    let msg = usage_error(&["run", "--seed", "18446744073709551616"]);
    assert!(msg.contains("0..=18446744073709551615"), "{msg}");
}

/// Parses `txlab run ARGS`, runs it through the CLI and returns the failure.
fn run_failure(args: &[&str], name: &str) -> Failure {
    let out = std::env::temp_dir().join(format!("txlab-cli-{name}-{}", std::process::id()));
    let mut argv = vec!["txlab", "run"];
    argv.extend_from_slice(args);
    argv.extend_from_slice(&["--out", out.to_str().unwrap()]);
    let f = execute(Cli::try_parse_from(argv).unwrap()).unwrap_err();
    assert!(!out.exists(), "nothing is written for bad input");
    f
}

#[test]
fn batch_protocols_with_tpcc_are_refused_before_running() {
    for (protocol, workload) in [
        ("batch-base", "tpcc"),
        ("batch-srvc", "tpcc-np"),
        ("silo,batch-vc", "ycsb-a,tpcc"),
    ] {
        let f = run_failure(
            &[
                "--protocol",
                protocol,
                "--workload",
                workload,
                "--duration",
                "10ms",
            ],
            "batch-tpcc",
        );
        assert_eq!(f.exit_code(), EXIT_USAGE, "{f}");
        let msg = f.to_string();
        assert!(
            msg.contains("--protocol with --workload")
                && msg.contains(" with tpcc")
                && msg.contains("batch-")
                && msg.contains("range scans"),
            "{protocol} {workload}: {msg}"
        );
    }
    // The interactive protocols and silo-ta take TPC-C, and the batching engines other workloads.
    for (protocol, workload) in [
        (
            "silo,tictoc,mvto,silo-nwr,silo-nwr-single,tictoc-nwr,tictoc-nwr-single,mvto-nwr,mvto-nwr-single,silo-ta",
            "tpcc,tpcc-np",
        ),
        ("batch-base,batch-srvc", "ycsb-a,smallbank,micro"),
    ] {
        let r = run_args(&["--protocol", protocol, "--workload", workload]);
        r.spec().validate().unwrap();
    }
}

#[test]
fn tpcc_scaled_reaches_the_tpcc_config_and_needs_a_tpcc_workload() {
    // Default: the standard schema, 10 districts.
    let r = run_args(&["--workload", "tpcc"]);
    assert!(!r.params.tpcc_scaled);
    assert_eq!(r.spec().params.districts, 10);
    // --tpcc-scaled: ROCOCO's 1000 districts unless --districts says otherwise.
    let r = run_args(&["--workload", "tpcc", "--tpcc-scaled"]);
    assert!(r.spec().params.tpcc_scaled);
    assert_eq!(r.spec().params.districts, 1000);
    let r = run_args(&["--workload", "tpcc-np", "--tpcc-scaled", "--districts", "3"]);
    assert_eq!(r.spec().params.districts, 3);

    // A tiny scaled run: the workload reports the variant it ran.
    let r = run_args(&[
        "--protocol",
        "silo",
        "--workload",
        "tpcc",
        "--tpcc-scaled",
        "--districts",
        "2",
        "--district-customers",
        "30",
        "--items",
        "100",
        "--duration",
        "30ms",
        "--warmup",
        "0s",
        "--cooldown",
        "0s",
        "--check",
    ]);
    let recs = txlab_harness::sweep::run_sweep(&r.spec(), &mut |_| {}).unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(
        recs[0].parameters.get("scaled").map(String::as_str),
        Some("true"),
        "{:?}",
        recs[0].parameters
    );
    assert_eq!(
        recs[0]
            .parameters
            .get("districts_per_warehouse")
            .map(String::as_str),
        Some("2")
    );
    assert!(recs[0].check.as_ref().unwrap().passed());

    // Without a TPC-C workload the flag would do nothing: a usage error naming it.
    let f = run_failure(
        &["--workload", "ycsb-a,smallbank", "--tpcc-scaled"],
        "scaled-ycsb",
    );
    assert_eq!(f.exit_code(), EXIT_USAGE, "{f}");
    let msg = f.to_string();
    assert!(
        msg.contains("--tpcc-scaled") && msg.contains("tpcc-np") && msg.contains("ycsb-a"),
        "{msg}"
    );
    let cli = Cli::try_parse_from(["txlab", "compare", "--tpcc-scaled"]).unwrap();
    assert_eq!(execute(cli).unwrap_err().exit_code(), EXIT_USAGE);
}

#[test]
fn compare_writes_the_table_files_and_the_plots() {
    let out = std::env::temp_dir().join(format!("txlab-cli-compare-{}", std::process::id()));
    let cli = Cli::try_parse_from([
        "txlab",
        "compare",
        "--rounds",
        "2",
        "--duration",
        "10ms",
        "--warmup",
        "0s",
        "--cooldown",
        "0s",
        "--records",
        "1000",
        "--customers",
        "100",
        "--ack",
        "commit",
        "--out",
        out.to_str().unwrap(),
    ])
    .unwrap();
    match execute(cli) {
        Ok(()) => {
            for stem in [
                "ycsb-a-throughput-vs-threads",
                "ycsb-a-abort-rate",
                "ycsb-a-latency",
                "ycsb-a-latency-cdf",
                "smallbank-throughput-vs-threads",
                "smallbank-latency",
            ] {
                for ext in ["svg", "png"] {
                    let f = out.join(format!("{stem}.{ext}"));
                    assert!(f.is_file(), "{} missing", f.display());
                }
            }
        }
        // Without any TrueType font the plots cannot be drawn: a run failure that says how to
        // fix it, with the results already written.
        Err(f) => {
            assert_eq!(f.exit_code(), 1, "{f}");
            assert!(f.to_string().contains("TXLAB_FONT"), "{f}");
        }
    }
    assert!(out.join("results.csv").is_file() && out.join("results.json").is_file());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let mut protocols: Vec<&str> = json["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["protocol"].as_str().unwrap())
        .collect();
    assert_eq!(
        protocols.len() % (9 * 2 * 2),
        0,
        "9 protocols, 2 workloads, 2 rounds"
    );
    protocols.truncate(9);
    assert_eq!(
        protocols,
        [
            "silo",
            "tictoc",
            "mvto",
            "silo-nwr",
            "silo-nwr-single",
            "tictoc-nwr",
            "tictoc-nwr-single",
            "mvto-nwr",
            "mvto-nwr-single"
        ],
        "compare runs the nine interactive protocols, interleaved"
    );
    assert!(out.join("summary.csv").is_file());
    assert!(
        json["summary"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["ratio"]["n"] == 2)
    );
    std::fs::remove_dir_all(&out).unwrap();
}

/// The engine parameters `txlab run ARGS` parses to.
fn run_params(args: &[&str]) -> Result<txlab_cli::ParamArgs, clap::Error> {
    let mut argv = vec!["txlab", "run"];
    argv.extend_from_slice(args);
    match Cli::try_parse_from(argv)?.command {
        Command::Run(r) => Ok(r.params),
        other => panic!("parsed as {other:?}"),
    }
}

#[test]
fn the_pipeline_choice_flags_parse_and_bad_values_list_the_choices() {
    use txlab_harness::registry::pipeline::{PolicyChoice, RefinementChoice};
    let policy = |args: &[&str]| run_params(args).map(|p| p.policy);
    assert_eq!(policy(&[]).unwrap(), PolicyChoice::Prod);
    assert_eq!(policy(&["--policy", "mc"]).unwrap(), PolicyChoice::Prod);
    assert_eq!(policy(&["--policy", "rct"]).unwrap(), PolicyChoice::Rct);
    assert_eq!(policy(&["--policy", "rdeg"]).unwrap(), PolicyChoice::Rdeg);
    let refinement = |args: &[&str]| run_params(args).map(|p| p.fvs_refinement);
    assert_eq!(refinement(&[]).unwrap(), RefinementChoice::None);
    assert_eq!(
        refinement(&["--fvs-refinement", "minimal"]).unwrap(),
        RefinementChoice::Minimal
    );
    assert_eq!(
        run_params(&["--reorder-workers", "0"])
            .unwrap()
            .reorder_workers,
        0
    );
    for (args, needles) in [
        (
            &["--policy", "fifo"][..],
            &["--policy", "fifo", "prod", "rct", "rdeg"][..],
        ),
        (
            &["--fvs-refinement", "maximal"][..],
            &["--fvs-refinement", "maximal", "none", "minimal"][..],
        ),
    ] {
        let e = run_params(args).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let msg = e.to_string();
        for n in needles {
            assert!(msg.contains(n), "message lacks {n:?}: {msg}");
        }
    }
}

#[test]
fn compare_builds_interleaves_binaries_and_divides_by_the_first() {
    let bin = env!("CARGO_BIN_EXE_txlab");
    let out = std::env::temp_dir().join(format!("txlab-cli-builds-{}", std::process::id()));
    let builds = format!("a={bin},b={bin}");
    txlab_cli::execute_args([
        "txlab",
        "compare",
        "--builds",
        &builds,
        "--protocol",
        "silo,tictoc",
        "--workload",
        "ycsb-a",
        "--rounds",
        "2",
        "--duration",
        "250ms",
        "--warmup",
        "50ms",
        "--cooldown",
        "0s",
        "--records",
        "1000",
        "--ack",
        "commit",
        "--out",
        out.to_str().unwrap(),
    ])
    .unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(
        runs.len(),
        16,
        "2 builds x 2 protocols x 2 thread counts x 2 rounds"
    );
    let labels: Vec<&str> = runs
        .iter()
        .take(4)
        .map(|r| r["protocol"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["a:silo", "b:silo", "a:tictoc", "b:tictoc"]);
    assert!(
        runs.iter().all(|r| r["parameters"]["records"] == "1000"),
        "flags reach the children"
    );
    // Every label measured something. One round of a child may be starved of the CPU for its
    // whole window on a loaded machine; that round is reported as empty, which is not a fault.
    for label in ["a:silo", "b:silo", "a:tictoc", "b:tictoc"] {
        let commits: u64 = runs
            .iter()
            .filter(|r| r["protocol"] == label)
            .map(|r| r["result"]["commits"].as_u64().unwrap())
            .sum();
        assert!(commits > 0, "{label} committed nothing in any round");
    }
    // `txlab run --out`'s config shape (the sweep at the top level, which `txlab plot` reads),
    // and the builds.
    assert_eq!(json["config"]["repeat"], 2, "{}", json["config"]);
    assert_eq!(json["config"]["builds"][1]["label"], "b");
    let summary = json["summary"].as_array().unwrap();
    let b_silo = summary.iter().find(|r| r["protocol"] == "b:silo").unwrap();
    assert_eq!(b_silo["ratio"]["n"], 2, "{b_silo}");
    assert!(
        summary
            .iter()
            .any(|r| r["protocol"] == "a:silo" && r["ratio"].is_null())
    );
    std::fs::remove_dir_all(&out).unwrap();
    let e = txlab_cli::execute_args(["txlab", "compare", "--builds", "x=/nonexistent/txlab"])
        .unwrap_err();
    assert_eq!(e.exit_code(), EXIT_USAGE);
    assert!(
        e.to_string().contains("--builds") && e.to_string().contains("no such file"),
        "{e}"
    );
}

#[test]
fn deterministic_flags_reach_the_engines_and_bad_values_name_the_flag() {
    let r = run_args(&[
        "--protocol",
        "docc,docc-snapshot,docc-basic,calvin",
        "--workload",
        "tpcc",
        "--threads",
        "2",
        "--batch-epoch-us",
        "2500",
        "--concurrency",
        "512",
        "--lock-managers",
        "2",
    ]);
    let d = r.spec().engine.deterministic;
    assert_eq!(
        (d.batch_epoch_us, d.concurrency, d.lock_managers),
        (2500, 512, 2)
    );
    // The pipeline keeps its own default when --concurrency is not given.
    let r = run_args(&["--protocol", "batch-base"]);
    assert_eq!(r.spec().engine.batch.concurrency, 300);
    assert_eq!(r.spec().engine.deterministic.concurrency, 4096);
    for (args, needles) in [
        (
            &["run", "--batch-epoch-us", "0"][..],
            &["--batch-epoch-us", "'0'", "1..=10000000"][..],
        ),
        (
            &["run", "--lock-managers", "0"][..],
            &["--lock-managers", "'0'", "1..=1024"][..],
        ),
    ] {
        let msg = usage_error(args);
        for n in needles {
            assert!(msg.contains(n), "{args:?}: message lacks {n:?}:\n{msg}");
        }
    }
}

#[test]
fn baseline_threads_reaches_the_spec_and_must_be_one_of_the_thread_counts() {
    let r = run_args(&[
        "--protocol",
        "calvin,docc",
        "--threads",
        "1,2",
        "--baseline-threads",
        "1",
    ]);
    let spec = r.spec();
    assert_eq!(spec.baseline_threads, Some(1));
    spec.validate().unwrap();
    let r = run_args(&["--threads", "1,2", "--baseline-threads", "3"]);
    let e = r.spec().validate().unwrap_err().to_string();
    assert!(
        e.contains("--baseline-threads") && e.contains('3') && e.contains("[1, 2]"),
        "{e}"
    );
    let msg = usage_error(&["compare", "--baseline-threads", "0"]);
    assert!(msg.contains("--baseline-threads"), "{msg}");
}
