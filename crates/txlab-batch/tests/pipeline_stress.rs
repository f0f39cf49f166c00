//! The multiplexing pipeline ([`Pipeline::run`]: clients, non-blocking processors, storage
//! workers, validator stages) on contended workloads, every history recorded and checked, in
//! every mode; and the mutation that must be caught.

use std::sync::Arc;
use txlab_batch::Refinement;
use txlab_batch::pipeline::{Mode, Mutation, Pipeline, PipelineConfig, RunLimit};
use txlab_check::{CheckOptions, MemoryRecorder, Report, check};
use txlab_workload::{
    Micro, MicroConfig, SmallBank, SmallBankConfig, Workload, Ycsb, YcsbConfig, YcsbPreset,
};

fn ycsb(records: u64, theta: f64) -> Ycsb {
    let mut cfg = YcsbConfig::preset(YcsbPreset::A);
    cfg.records = records;
    cfg.ops_per_txn = 4.min(records as usize);
    cfg.rmw_ratio = 0.5;
    cfg.payload_bytes = 16;
    cfg.theta = theta;
    Ycsb::new(cfg).unwrap()
}

/// SmallBank over 100 customers, θ = 0.9, with its conservation audit.
fn hot_bank() -> SmallBank {
    SmallBank::new(SmallBankConfig {
        customers: 100,
        theta: 0.9,
        audit: true,
        ..SmallBankConfig::default()
    })
    .unwrap()
}

/// Runs `txns` transactions of `workload` and returns the checker's report.
fn drive<W>(workload: &W, cfg: PipelineConfig, txns: u64) -> Report
where
    W: Workload,
    W::Program: Clone + Send + 'static,
{
    let rec = Arc::new(MemoryRecorder::new());
    let db = Pipeline::builder()
        .config(cfg)
        .recorder(rec.clone())
        .build(&workload.schema())
        .unwrap();
    workload.load(&db).unwrap();
    let stats = db.run(workload, RunLimit::Transactions(txns), 7).unwrap();
    assert_eq!(
        stats.committed + stats.user_aborts + stats.abandoned,
        txns,
        "every submitted transaction finishes ({})",
        cfg.mode.name()
    );
    assert!(stats.latency_us.len() == stats.committed);
    workload
        .check(&db)
        .unwrap_or_else(|e| panic!("{}: {e}", cfg.mode.name()));
    drop(db);
    check(&rec.take(), CheckOptions::serializable())
}

#[test]
fn ycsb_histories_are_serializable_in_every_mode() {
    for mode in Mode::ALL {
        for (records, processors) in [(10, 2), (1_000, 4), (10, 4)] {
            let cfg = PipelineConfig::default()
                .with_mode(mode)
                .with_concurrency(64)
                .with_threads(2, processors, 2, 2);
            let report = drive(&ycsb(records, 0.99), cfg, 2_000);
            assert!(
                report.is_serializable(),
                "{} over {records} keys, {processors} processors: {report}",
                mode.name()
            );
        }
    }
}

/// The single-thread layout (no reordering workers: one thread forms, reorders and validates
/// each batch) in every batching mode, on a hot key set and on SmallBank. With reordering,
/// pre-validation there sees the cache the final validation starts from, so the final
/// validation must abort nothing.
#[test]
fn the_single_thread_layout_keeps_histories_serializable() {
    let single_thread = |mode| {
        PipelineConfig::default()
            .with_mode(mode)
            .with_concurrency(64)
            .with_threads(2, 2, 2, 0)
    };
    let bank = hot_bank();
    for mode in [Mode::Batch, Mode::Vc, Mode::Srvc] {
        let cfg = single_thread(mode);
        let report = drive(&ycsb(10, 0.99), cfg, 2_000);
        assert!(report.is_serializable(), "{}: {report}", mode.name());
        let report = drive(&bank, cfg, 2_000);
        assert!(report.is_serializable(), "{}: {report}", mode.name());
    }
    let w = ycsb(10, 0.99);
    let db = Pipeline::builder()
        .config(single_thread(Mode::Srvc))
        .build(&w.schema())
        .unwrap();
    w.load(&db).unwrap();
    let stats = db.run(&w, RunLimit::Transactions(2_000), 5).unwrap();
    let v = stats.validator;
    assert!(v.reordered_txns > 0 && v.reordering_aborts + v.prevalidation_aborts > 0);
    assert_eq!(v.reorder_failures, 0);
    assert_eq!(v.validation_aborts, 0, "{v:?}");
}

/// The minimal refinement only keeps transactions the validator then validates in order: the
/// reordering modes stay serializable with it, on a hot key set.
#[test]
fn the_minimal_refinement_keeps_histories_serializable() {
    for mode in [Mode::Vc, Mode::Srvc] {
        let cfg = PipelineConfig::default()
            .with_mode(mode)
            .with_concurrency(64)
            .with_threads(2, 2, 2, 2)
            .with_refinement(Refinement::Minimal);
        let report = drive(&ycsb(10, 0.99), cfg, 2_000);
        assert!(report.is_serializable(), "{}: {report}", mode.name());
    }
}

#[test]
fn smallbank_conserves_money_in_every_mode() {
    let bank = hot_bank();
    for mode in Mode::ALL {
        let cfg = PipelineConfig::default()
            .with_mode(mode)
            .with_concurrency(64)
            .with_threads(2, 2, 2, 2);
        let report = drive(&bank, cfg, 2_000);
        assert!(report.is_serializable(), "{}: {report}", mode.name());
    }
}

#[test]
fn reordering_reduces_aborts_on_the_micro_benchmark() {
    // Contended micro benchmark; the same transactions in batch (no reordering) and srvc mode.
    // Reordering must abort fewer attempts per commit. The count-bounded runs make this a
    // statement about abort decisions, not about speed.
    let micro = Micro::new(MicroConfig {
        keys: 1_000,
        theta: 0.9,
        ..MicroConfig::default()
    })
    .unwrap();
    let mut rates = Vec::new();
    for mode in [Mode::Batch, Mode::Srvc] {
        let cfg = PipelineConfig::default()
            .with_mode(mode)
            .with_concurrency(200)
            .with_threads(2, 2, 2, 1);
        let db = Pipeline::builder()
            .config(cfg)
            .build(&micro.schema())
            .unwrap();
        micro.load(&db).unwrap();
        let stats = db.run(&micro, RunLimit::Transactions(4_000), 3).unwrap();
        assert_eq!(stats.committed + stats.abandoned, 4_000);
        if mode == Mode::Srvc {
            assert!(
                stats.validator.reordered_txns > 0,
                "the reordering stage ran"
            );
            assert!(stats.reorder_rate().is_some());
        } else {
            assert_eq!(stats.validator.reordered_txns, 0);
        }
        rates.push(stats.abort_rate());
    }
    assert!(
        rates[1] < rates[0],
        "aborts per commit: batch {:.3}, srvc {:.3}",
        rates[0],
        rates[1]
    );
}

#[test]
fn the_checker_catches_a_validator_that_skips_validation() {
    let cfg = PipelineConfig::default()
        .with_mode(Mode::Base)
        .with_concurrency(64)
        .with_threads(2, 2, 2, 1)
        .with_mutation(Mutation::SkipFinalValidation);
    let report = drive(&ycsb(10, 0.99), cfg, 2_000);
    assert!(
        !report.is_serializable(),
        "committing stale reads must show up as anomalies"
    );
}

#[test]
fn bad_run_limits_are_rejected() {
    let w = ycsb(10, 0.5);
    let db = Pipeline::builder().build(&w.schema()).unwrap();
    let e = db.run(&w, RunLimit::Transactions(0), 1).unwrap_err();
    assert!(e.to_string().contains("transactions = 0"), "{e}");
    let e = db
        .run(&w, RunLimit::Duration(std::time::Duration::ZERO), 1)
        .unwrap_err();
    assert!(e.to_string().contains("between 1ms and 1h"), "{e}");
}
