//! Thread-aware batching over Silo: contended multithreaded runs, histories recorded by the
//! wrapped engine and checked, SmallBank's conservation invariant checked, and the effect of the
//! assignment on conflicts.

use std::sync::Arc;
use txlab_batch::pipeline::RunLimit;
use txlab_batch::thread_aware::{Assignment, ThreadAware, ThreadAwareConfig};
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
    let silo = Silo::with_recorder(&workload.schema(), SiloConfig::default(), rec.clone()).unwrap();
    workload.load(&silo).unwrap();
    let cfg = ThreadAwareConfig::new(threads).with_assignment(assignment);
    let wrapper = ThreadAware::new(silo, cfg).unwrap();
    let stats = wrapper
        .run(workload, RunLimit::Transactions(txns), 11)
        .unwrap();
    assert_eq!(stats.committed + stats.user_aborts, txns);
    assert_eq!(stats.batches, txns.div_ceil(4 * threads as u64));
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
    let silo = Silo::new(&ycsb(10, 0.5).schema(), SiloConfig::manual()).unwrap();
    let e = ThreadAware::new(silo, ThreadAwareConfig::new(0)).unwrap_err();
    assert!(e.to_string().contains("threads = 0"), "{e}");
    let silo = Silo::new(&ycsb(10, 0.5).schema(), SiloConfig::manual()).unwrap();
    let e = ThreadAware::new(silo, ThreadAwareConfig::new(2).with_per_thread(0)).unwrap_err();
    assert!(e.to_string().contains("per_thread = 0"), "{e}");
}
