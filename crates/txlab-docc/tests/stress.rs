//! Driven runs on real threads with history recording on and the sequence clock: every engine's
//! history must be equivalent to the serial execution in the order the sequencer fixed
//! (`CheckOptions::strict()` over rank-based instants), and TPC-C's consistency conditions must
//! hold. Bounded by transaction count.

use std::sync::Arc;
use std::time::Duration;
use txlab_check::{CheckOptions, MemoryRecorder, check};
use txlab_core::{Engine, RunLimit};
use txlab_docc::calvin::{Calvin, CalvinConfig};
use txlab_docc::{
    BatchConfig, Chain, Docc, DoccConfig, DriverConfig, InPlace, Layout, RunStats, StandAlone,
};
use txlab_testkit::deterministic::{smallbank, tpcc_small, ycsb_hot, ycsb_read_mostly_hot};
use txlab_workload::Workload;

const TXNS: u64 = 3_000;

fn batch() -> BatchConfig {
    BatchConfig {
        epoch: Duration::from_micros(300),
        ..BatchConfig::default()
    }
}

fn driver() -> DriverConfig {
    DriverConfig {
        concurrency: 48,
        clients: 6,
        seed: 11,
        keep_log: false,
    }
}

fn checked<E: Engine, W: Workload>(
    engine: &E,
    recorder: &MemoryRecorder,
    workload: &W,
    stats: &RunStats,
    what: &str,
) {
    assert_eq!(stats.errors, 0, "{what}: {:?}", stats.first_error);
    assert_eq!(stats.committed + stats.user_aborts, TXNS, "{what}");
    workload
        .check(engine)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let report = check(&recorder.take(), CheckOptions::strict());
    assert!(report.is_serializable(), "{what}:\n{report}");
}

fn docc<L: Layout, W: Workload>(workload: &W, prefetch: bool, workers: usize)
where
    W::Program: Clone + Send + Sync,
{
    let recorder = Arc::new(MemoryRecorder::new());
    let config = DoccConfig {
        workers,
        prefetch,
        batch: batch(),
        sequence_clock: true,
        ..DoccConfig::default()
    };
    let db = Docc::<L, _>::builder()
        .config(config)
        .recorder(Arc::clone(&recorder))
        .build(&workload.schema())
        .unwrap();
    workload.load(&db).unwrap();
    let stats = db
        .run(workload, RunLimit::Transactions(TXNS), driver())
        .unwrap();
    let what = format!("{} on {} at {workers} workers", db.name(), workload.name());
    checked(&db, &recorder, workload, &stats, &what);
}

fn calvin<W: Workload>(workload: &W, workers: usize, lock_managers: usize)
where
    W::Program: Clone + Send + Sync,
{
    let recorder = Arc::new(MemoryRecorder::new());
    let config = CalvinConfig {
        workers,
        lock_managers,
        batch: batch(),
        sequence_clock: true,
        ..CalvinConfig::default()
    };
    let db = Calvin::builder()
        .config(config)
        .recorder(Arc::clone(&recorder))
        .build(&workload.schema())
        .unwrap();
    workload.load(&db).unwrap();
    let stats = db
        .run(workload, RunLimit::Transactions(TXNS), driver())
        .unwrap();
    let what = format!("calvin on {} at {workers} workers", workload.name());
    checked(&db, &recorder, workload, &stats, &what);
}

#[test]
fn docc_basic_recorded_runs_follow_the_log_order() {
    for workers in [2, 4] {
        docc::<InPlace, _>(&ycsb_hot(), false, workers);
        docc::<InPlace, _>(&smallbank(), false, workers);
        docc::<InPlace, _>(&tpcc_small(), false, workers);
    }
}

#[test]
fn docc_snapshot_recorded_runs_follow_the_log_order() {
    for workers in [2, 4] {
        docc::<Chain, _>(&ycsb_read_mostly_hot(), false, workers);
        docc::<Chain, _>(&smallbank(), false, workers);
        docc::<Chain, _>(&tpcc_small(), false, workers);
    }
}

#[test]
fn docc_recorded_runs_follow_the_log_order() {
    for workers in [2, 4] {
        docc::<Chain, _>(&ycsb_hot(), true, workers);
        docc::<Chain, _>(&smallbank(), true, workers);
        docc::<Chain, _>(&tpcc_small(), true, workers);
    }
}

#[test]
fn calvin_recorded_runs_follow_the_log_order() {
    for (workers, managers) in [(2, 1), (4, 2)] {
        calvin(&ycsb_hot(), workers, managers);
        calvin(&smallbank(), workers, managers);
        calvin(&tpcc_small(), workers, managers);
    }
}
