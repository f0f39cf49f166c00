//! Thread-aware batching over Silo: contended multithreaded runs, histories recorded by the
//! wrapped engine and checked, SmallBank's conservation invariant checked, and the effect of the
//! assignment on conflicts.

use std::sync::Arc;
use txlab_batch::pipeline::RunLimit;
use txlab_batch::thread_aware::{Assignment, ThreadAware, ThreadAwareConfig, ThreadAwareStats};
use txlab_check::{CheckOptions, MemoryRecorder, check};
use txlab_core::Engine;
use txlab_silo::{Silo, SiloConfig};
use txlab_workload::{SmallBank, SmallBankConfig, Workload, Ycsb, YcsbConfig, YcsbPreset};

fn ycsb(records: u64, theta: f64) -> Ycsb {
    let mut cfg = YcsbConfig::preset(YcsbPreset::A);
    cfg.records = records;
    cfg.ops_per_txn = 4.min(records as usize);
    cfg.rmw_ratio = 0.5;
    cfg.payload_bytes = 16;
    cfg.theta = theta;
    Ycsb::new(cfg).unwrap()
}

fn drive<W>(workload: &W, threads: usize, assignment: Assignment, txns: u64) -> u64
where
    W: Workload,
    W::Program: Clone + Send,
{
    let rec = Arc::new(MemoryRecorder::new());
    let silo = Silo::builder()
        .recorder(rec.clone())
        .build(&workload.schema())
        .unwrap();
    workload.load(&silo).unwrap();
    let cfg = ThreadAwareConfig::new(threads).with_assignment(assignment);
    let wrapper = ThreadAware::new(silo, cfg).unwrap();
    let stats = wrapper
        .run(workload, RunLimit::Transactions(txns), 11)
        .unwrap();
    assert_eq!(stats.committed + stats.user_aborts, txns);
    // Full batches, except where formers racing for the meter's last tickets split one.
    let full = txns.div_ceil(4 * threads as u64);
    assert!(
        (full..full + threads as u64).contains(&stats.batches),
        "{} batches for {txns} transactions on {threads} threads",
        stats.batches
    );
    workload.check(wrapper.engine()).unwrap();
    assert_eq!(wrapper.engine().name(), "silo");
    drop(wrapper);
    let report = check(&rec.take(), CheckOptions::serializable());
    assert!(
        report.is_serializable(),
        "{} on {threads} threads: {report}",
        workload.name()
    );
    stats.conflicts
}

#[test]
fn thread_aware_silo_is_serializable_on_contended_ycsb() {
    for threads in [2, 4] {
        for records in [10, 1_000] {
            for assignment in [Assignment::ThreadAware, Assignment::RoundRobin] {
                drive(&ycsb(records, 0.99), threads, assignment, 3_000);
            }
        }
    }
}

#[test]
fn thread_aware_silo_conserves_money() {
    let bank = SmallBank::new(SmallBankConfig {
        customers: 100,
        theta: 0.9,
        audit: true,
        ..SmallBankConfig::default()
    })
    .unwrap();
    drive(&bank, 2, Assignment::ThreadAware, 3_000);
}

#[test]
fn bad_configuration_is_rejected() {
    let silo = Silo::builder()
        .config(SiloConfig::manual())
        .build(&ycsb(10, 0.5).schema())
        .unwrap();
    let e = ThreadAware::new(silo, ThreadAwareConfig::new(0)).unwrap_err();
    assert!(e.to_string().contains("threads = 0"), "{e}");
    let silo = Silo::builder()
        .config(SiloConfig::manual())
        .build(&ycsb(10, 0.5).schema())
        .unwrap();
    let e = ThreadAware::new(silo, ThreadAwareConfig::new(2).with_per_thread(0)).unwrap_err();
    assert!(e.to_string().contains("per_thread = 0"), "{e}");
}

/// Runs `txns` transactions of YCSB over `records` records on its own thread; fails if the run
/// has not ended after five minutes (a hang: the runs take well under a second). Checks the
/// history and returns the stats.
fn corner(
    threads: usize,
    per_thread: usize,
    records: u64,
    retry: Option<u32>,
    txns: u64,
) -> ThreadAwareStats {
    let label = format!("{threads} threads × {per_thread}, {records} records, retry {retry:?}");
    let (done, ended) = std::sync::mpsc::channel();
    let l = label.clone();
    std::thread::spawn(move || {
        let w = ycsb(records, 0.99);
        let rec = Arc::new(MemoryRecorder::new());
        let silo = Silo::builder()
            .recorder(rec.clone())
            .build(&w.schema())
            .unwrap();
        w.load(&silo).unwrap();
        let mut cfg = ThreadAwareConfig::new(threads).with_per_thread(per_thread);
        cfg.retry.max_attempts = retry;
        let wrapper = ThreadAware::new(silo, cfg).unwrap();
        let stats = wrapper.run(&w, RunLimit::Transactions(txns), 3).unwrap();
        w.check(wrapper.engine())
            .unwrap_or_else(|e| panic!("{l}: {e}"));
        drop(wrapper);
        let report = check(&rec.take(), CheckOptions::serializable());
        assert!(report.is_serializable(), "{l}: {report}");
        let _ = done.send(stats);
    });
    let stats = ended
        .recv_timeout(std::time::Duration::from_secs(300))
        .unwrap_or_else(|e| panic!("{label}: did not end ({e})"));
    assert_eq!(
        stats.committed + stats.user_aborts + stats.abandoned,
        txns,
        "{label}: every issued transaction is reported once"
    );
    stats
}

#[test]
fn runs_at_the_extreme_corners_end() {
    // Oversubscribed on any test host, every transaction on the one record.
    corner(64, 4, 1, None, 5_000);
    // The largest batch (the formers racing for the meter's tickets may split it).
    corner(16, 1024, 1, None, 16_384);
    // A retry limit of one attempt: every conflict abandons its transaction, none is retried.
    let stats = corner(8, 4, 1, Some(1), 5_000);
    assert_eq!(stats.conflicts, stats.abandoned);
}

#[test]
fn a_batch_beyond_the_largest_is_refused() {
    let silo = Silo::builder()
        .config(SiloConfig::manual())
        .build(&ycsb(10, 0.5).schema())
        .unwrap();
    let e = ThreadAware::new(silo, ThreadAwareConfig::new(1024).with_per_thread(17)).unwrap_err();
    assert!(
        e.to_string().contains("1024 × 17") && e.to_string().contains("16384"),
        "{e}"
    );
}
