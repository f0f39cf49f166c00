//! The correctness kit must be able to fail: with the `mutation` feature, an MVTO build that skips
//! the read-timestamp check (`WriteTooLate`) must produce histories the checker rejects.
//!
//! The crate's dev-dependencies enable the `mutation` feature, so `cargo test -p txlab-mvto`
//! runs these.

use std::sync::Arc;
use txlab_check::{CheckOptions, MemoryRecorder, check};
use txlab_core::{Engine, Program, RetryPolicy, Schema, TableId, TableSpec, Transaction, TxOps};
use txlab_core::{Worker, run};
use txlab_mvto::{Mutation, Mvto, MvtoConfig, Timestamped};
use txlab_workload::{Generator, Workload, Ycsb, YcsbConfig};

const T: TableId = TableId(0);

#[test]
fn skipping_the_write_check_lets_write_skew_through_and_the_checker_sees_it() {
    let mut s = Schema::new();
    s.add(TableSpec::dense("t", 8, 4)).unwrap();
    let rec = Arc::new(MemoryRecorder::new());
    let cfg = MvtoConfig::manual().with_mutation(Mutation::SkipWriteTooLate);
    let db = Mvto::builder()
        .config(cfg)
        .recorder(rec.clone())
        .build(&s)
        .unwrap();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    // Write skew where the younger T2 commits first: T1 (older) then writes key 0, which T2
    // read at a later timestamp. The correct build aborts T1 with WriteTooLate.
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    assert!(t1.timestamp() < t2.timestamp());
    for t in [&mut t1, &mut t2] {
        t.read(T, 0).unwrap();
        t.read(T, 1).unwrap();
    }
    t2.write(T, 1, &[1; 8]).unwrap();
    t2.commit().unwrap();
    t1.write(T, 0, &[1; 8]).unwrap();
    t1.commit()
        .expect("the broken build commits the too-late write");
    drop((w1, w2));
    let report = check(&rec.take(), CheckOptions::serializable());
    assert!(!report.is_serializable(), "the checker must see the cycle");
}

/// One contended run of the broken build; returns whether the checker rejected its history.
fn broken_run(wl: &Ycsb, seed: u64) -> bool {
    let rec = Arc::new(MemoryRecorder::new());
    let cfg = MvtoConfig::manual().with_mutation(Mutation::SkipWriteTooLate);
    let db = Mvto::builder()
        .config(cfg)
        .recorder(rec.clone())
        .build(&wl.schema())
        .unwrap();
    wl.load(&db).unwrap();
    let start = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        for t in 0..2 {
            let (db, start) = (&db, &start);
            s.spawn(move || {
                let mut worker = db.worker().unwrap();
                start.wait();
                let mut generator = wl.generator(t, seed);
                for _ in 0..3_000 {
                    let program = generator.next();
                    run(&mut worker, RetryPolicy::default(), |tx| program.run(tx)).unwrap();
                }
            });
        }
    });
    !check(&rec.take(), CheckOptions::serializable()).is_serializable()
}

/// Whether the two threads overlap enough depends on the scheduler of a loaded 2-core machine, so
/// the test runs up to 20 rounds and needs one rejected history; the correct build passes every
/// round of the same workload (`tests/stress.rs`).
#[test]
fn skipping_the_write_check_breaks_a_contended_stress_run() {
    let wl = Ycsb::new(YcsbConfig {
        records: 10,
        ops_per_txn: 4,
        read_ratio: 0.5,
        rmw_ratio: 0.5,
        payload_bytes: 8,
        theta: 0.99,
    })
    .unwrap();
    let caught = (0..20).find(|&round| broken_run(&wl, 7 + round));
    assert!(
        caught.is_some(),
        "20 rounds of 2 threads x 3,000 hot transactions without the write check: no anomaly"
    );
}
