//! The CLI fails early and says what it ignores: every case refused before anything is
//! measured (so within a bound far below the run's own duration), with exit code 2 and a message
//! naming the flag; runs that measured nothing are reported as such.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use txlab_cli::{EXIT_USAGE, check_failures, execute_args, list_text};
use txlab_harness::point::CheckSummary;
use txlab_harness::report::RunRecord;
use txlab_harness::runner::RunResult;

/// Runs the `txlab` binary with `args` under `sh -c 'ulimit ...; exec txlab ...'` when a limit
/// is given; returns its output and how long it took.
fn txlab(args: &[&str], address_space_kib: Option<u64>) -> (Output, Duration) {
    let bin = env!("CARGO_BIN_EXE_txlab");
    let start = Instant::now();
    let out = match address_space_kib {
        None => Command::new(bin).args(args).output().unwrap(),
        Some(kib) => Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v {kib}; exec \"$0\" \"$@\""))
            .arg(bin)
            .args(args)
            .output()
            .unwrap(),
    };
    (out, start.elapsed())
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("txlab-early-{name}-{}", std::process::id()))
}

/// The run these tests refuse would measure for an hour and a second (1 s warm-up and `1h`) if
/// it started; the refusal must come within this bound (the acceptance: "well under a second").
/// The binary is started once untimed before (`refused`), so the bound measures the refusal, not
/// the first start of a freshly built debug binary, which pages it in and can take seconds on a
/// loaded machine.
const REFUSED_WITHIN: Duration = Duration::from_secs(1);

fn refused(args: &[&str], limit: Option<u64>, needles: &[&str]) {
    let (warm, _) = txlab(&["list"], None);
    assert!(warm.status.success(), "txlab list: {warm:?}");
    let (out, took) = txlab(args, limit);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(i32::from(EXIT_USAGE)),
        "{args:?}: {stderr}"
    );
    assert!(
        took < REFUSED_WITHIN,
        "{args:?} took {took:?}: it ran before refusing"
    );
    for n in needles {
        assert!(
            stderr.contains(n),
            "{args:?}: stderr lacks {n:?}:\n{stderr}"
        );
    }
}

#[test]
fn an_unwritable_out_is_refused_before_measuring() {
    let file = temp("file");
    std::fs::write(&file, b"x").unwrap();
    let f = file.to_str().unwrap();
    refused(
        &["run", "--duration", "1h", "--out", f],
        None,
        &["--out", "is a file"],
    );
    let below = file.join("sub");
    refused(
        &["run", "--duration", "1h", "--out", below.to_str().unwrap()],
        None,
        &["--out", "can be created"],
    );
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn configurations_beyond_memory_are_refused_before_loading() {
    refused(
        &[
            "run",
            "--payload",
            "1048576",
            "--duration",
            "1h",
            "--out",
            "/nonexistent/x",
        ],
        None,
        &["ycsb-a needing at least", "--payload"],
    );
    // Under an 8 GB address-space limit, as a user's shell may set it.
    refused(
        &[
            "run",
            "--workload",
            "tpcc",
            "--warehouses",
            "1000",
            "--duration",
            "1h",
        ],
        Some(8 << 20),
        &["tpcc needing at least", "--warehouses"],
    );
}

/// `--check` keeps every attempt of the run in memory. Under a 768 MiB address-space limit, a
/// 20 s checked run (with its default 1 s warm-up, 1 and 8 threads, contended so that attempts
/// retry) stops recording at its history bound: it ends its measured interval early with a note,
/// checks what it recorded, and exits cleanly instead of failing an allocation.
#[test]
fn a_checked_run_stays_within_the_memory_it_may_use() {
    let dir = temp("bounded");
    let args = [
        "run",
        "--check",
        "--duration",
        "20s",
        "--ack",
        "commit",
        "--threads",
        "1,8",
        "--theta",
        "0.99",
        "--records",
        "1000",
        "--out",
        dir.to_str().unwrap(),
    ];
    let (out, took) = txlab(&args, Some(768 << 10));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(took < Duration::from_secs(40), "took {took:?}: not bounded");
    let all = format!("{stdout}{stderr}");
    assert!(
        all.contains("2 --check run(s) ended their measured interval early"),
        "no note of the bound:\n{all}"
    );
    assert!(all.contains("serializable"), "no check verdict:\n{all}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A thread count the process cannot start (here: 64 workers under a 512 MiB address-space
/// limit) ends the run with an error naming `threads`, instead of leaving the started workers
/// waiting for the missing one or aborting in a started worker's first allocation.
#[test]
fn worker_threads_that_cannot_start_are_an_error_not_a_hang() {
    let dir = temp("threads");
    let args = [
        "run",
        "--threads",
        "64",
        "--duration",
        "1s",
        "--out",
        dir.to_str().unwrap(),
    ];
    let (out, took) = txlab(&args, Some(512 << 10));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("threads") && stderr.contains("could not be started"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn durations_that_measure_nothing_and_negative_ones_name_the_flag() {
    refused(
        &["run", "--duration", "0.000000001s"],
        None,
        &["--duration", "at least 1ms"],
    );
    refused(
        &["run", "--duration", "1us"],
        None,
        &["--duration", "at least 1ms"],
    );
    refused(
        &["run", "--duration", "-1s"],
        None,
        &["--duration", "-1s", "negative"],
    );
    refused(
        &["compare", "--warmup", "-5ms"],
        None,
        &["--warmup", "negative"],
    );
}

fn usage(args: &[&str]) -> String {
    let mut argv = vec!["txlab"];
    argv.extend_from_slice(args);
    let f = execute_args(argv).unwrap_err();
    assert_eq!(f.exit_code(), EXIT_USAGE, "{args:?}: {f}");
    f.to_string()
}

#[test]
fn workload_flags_that_apply_to_nothing_in_the_run_are_refused() {
    let out = temp("flags");
    let o = out.to_str().unwrap();
    let e = usage(&[
        "run",
        "--workload",
        "tpcc",
        "--theta",
        "0,0.5,0.99",
        "--out",
        o,
    ]);
    assert!(e.contains("--theta") && e.contains("tpcc"), "{e}");
    let e = usage(&[
        "run",
        "--workload",
        "smallbank",
        "--records",
        "10",
        "--out",
        o,
    ]);
    assert!(e.contains("--records") && e.contains("ycsb-a"), "{e}");
    assert!(!out.exists(), "nothing is written for bad input");
}

/// An engine flag that no protocol of the run reads changes nothing: the run goes ahead and says,
/// before it starts, that the flag is ignored and which protocols read it.
#[test]
fn engine_flags_that_no_protocol_reads_are_reported_as_ignored() {
    let out = temp("ignored");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_txlab"))
        .args([
            "run",
            "--protocol",
            "silo",
            "--batch-size",
            "5",
            "--policy",
            "rct",
        ])
        .args(["--records", "100", "--duration", "5ms", "--warmup", "0s"])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    for flag in ["--batch-size", "--policy"] {
        assert!(
            err.contains(&format!("note: {flag} is ignored: none of silo reads it")),
            "{err}"
        );
    }
    assert!(
        err.contains("batch-base") && err.contains("batch-vc"),
        "{err}"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn an_earlier_result_directory_is_not_overwritten_silently() {
    let out = temp("again");
    let o = out.to_str().unwrap();
    let args = [
        "txlab",
        "run",
        "--protocol",
        "noop",
        "--workload",
        "noop",
        "--duration",
        "5ms",
        "--warmup",
        "0s",
        "--cooldown",
        "0s",
        "--out",
        o,
    ];
    execute_args(args).unwrap();
    let before = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let e = execute_args(args).unwrap_err();
    assert_eq!(e.exit_code(), EXIT_USAGE);
    assert!(e.to_string().contains("--overwrite"), "{e}");
    assert_eq!(
        std::fs::read_to_string(out.join("results.csv")).unwrap(),
        before
    );
    let mut again = args.to_vec();
    again.push("--overwrite");
    execute_args(again).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_check_of_a_run_without_commits_is_not_clean() {
    let mut result = RunResult::empty(1).unwrap();
    result.commits = 0;
    let record = RunRecord {
        protocol: "silo".into(),
        workload: "ycsb-a".into(),
        threads: 1,
        theta: None,
        repeat: 0,
        seed: 42,
        parameters: Default::default(),
        result,
        check: Some(CheckSummary {
            history_checked: true,
            committed: 0,
            anomalies: vec![],
            invariant: None,
        }),
    };
    let failures = check_failures(&[record]);
    assert_eq!(failures.len(), 1);
    assert!(
        failures[0].contains("committed no transaction"),
        "{failures:?}"
    );
}

#[test]
fn the_list_stays_aligned_for_every_name() {
    let text = list_text();
    let columns: Vec<usize> = text
        .lines()
        .filter(|l| l.starts_with("  "))
        .map(|l| {
            let name_end = 2 + l[2..].find(' ').unwrap();
            name_end + l[name_end..].find(|c: char| c != ' ').unwrap()
        })
        .collect();
    assert!(columns.len() > 20, "{text}");
    assert!(columns.iter().all(|&c| c == columns[0]), "{text}");
    assert!(text.contains("tictoc-nwr-single"));
}
