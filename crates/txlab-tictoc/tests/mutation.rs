//! Mutation tests: a TicToc with one check disabled must produce histories the checker rejects.
//! This shows the schedules and the checker together can fail, i.e. that the passing histories of
//! the other tests mean something.
//!
//! Run with `CARGO_TARGET_DIR=/work/target-tictoc cargo test -p txlab-tictoc --features mutation
//! --test mutation`.
#![cfg(feature = "mutation")]

use std::sync::Arc;
use txlab_check::{CheckOptions, MemoryRecorder, check};
use txlab_core::{Engine, Schema, TableId, TableSpec, Transaction, TxOps, Worker};
use txlab_tictoc::{Mutation, TicToc, TicTocConfig};

const T: TableId = TableId(0);

fn v(x: u64) -> [u8; 8] {
    x.to_le_bytes()
}

fn num(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().unwrap())
}

fn recorded_db(mutation: Option<Mutation>) -> (TicToc<MemoryRecorder>, Arc<MemoryRecorder>) {
    let mut s = Schema::new();
    s.add(TableSpec::dense("dense", 8, 16)).unwrap();
    let rec = Arc::new(MemoryRecorder::new());
    let mut cfg = TicTocConfig::manual();
    if let Some(m) = mutation {
        cfg = cfg.with_mutation(m);
    }
    let db = TicToc::builder()
        .config(cfg)
        .recorder(rec.clone())
        .build(&s)
        .unwrap();
    for k in 0..16 {
        db.load(T, k, &v(k * 10)).unwrap();
    }
    (db, rec)
}

/// The write-skew-through-timestamps schedule that only `rts` extension prevents. Returns whether
/// both T1 and T2 committed, and the checker's verdict.
///
/// Setup: five blind writes give x = key 0 `wts = rts = 5` (no extension involved, so the setup
/// is the same under the mutation). Then T1 reads y = key 1 (wts 0, rts 0); T2 reads x (5, 5);
/// T1 writes x and commits at max(0, rts(x) + 1) = 6, validating y by extending its rts to 6; T2
/// writes y: correct TicToc gives it commit_ts max(5, 6 + 1) = 7 > rts(x as read) = 5, finds x's
/// wts changed and aborts it. Without the extension T2 commits at max(5, 0 + 1) = 5 <= 5 without
/// validating x, and T1 -> T2 (T1 read the y T2 replaced) plus T2 -> T1 (T2 read the x T1
/// replaced) is a cycle.
fn skew_schedule(mutation: Option<Mutation>) -> (bool, txlab_check::Report) {
    let (db, rec) = recorded_db(mutation);
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    for i in 0..5 {
        let mut t = w1.begin();
        t.write(T, 0, &v(i)).unwrap();
        t.commit().unwrap();
    }

    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    let y = num(t1.read(T, 1).unwrap().unwrap());
    let x = num(t2.read(T, 0).unwrap().unwrap());
    t1.write(T, 0, &v(x + y)).unwrap();
    let r1 = t1.commit();
    t2.write(T, 1, &v(x + y)).unwrap();
    let r2 = t2.commit();
    assert!(r1.is_ok(), "T1 commits in either engine: {r1:?}");
    (r2.is_ok(), check(&rec.take(), CheckOptions::serializable()))
}

#[test]
fn the_correct_engine_aborts_the_skew() {
    let (both, report) = skew_schedule(None);
    assert!(!both, "T2 must abort");
    assert!(report.is_serializable(), "{report}");
}

#[test]
fn skipping_rts_extension_is_caught_by_the_checker() {
    let (both, report) = skew_schedule(Some(Mutation::SkipRtsExtension));
    assert!(both, "the mutation lets T2 commit");
    assert!(
        !report.is_serializable(),
        "the checker must reject: {report}"
    );
}

#[test]
fn skipping_read_validation_is_caught_by_the_checker() {
    // Lost update: both read x = key 5 and write it. T1 commits at 1; T2 locks x (rts 1),
    // commit_ts 2 > rts read 0, and only read validation would notice x's wts changed.
    let (db, rec) = recorded_db(Some(Mutation::SkipReadValidation));
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    for t in [&mut t1, &mut t2] {
        assert!(
            t.update(T, 5, &mut |b| b.copy_from_slice(&v(num(b) + 1)))
                .unwrap()
        );
    }
    t1.commit().unwrap();
    t2.commit()
        .expect("the mutation lets the lost update commit");
    let report = check(&rec.take(), CheckOptions::serializable());
    assert!(
        !report.is_serializable(),
        "the checker must reject: {report}"
    );
}

/// The time-travel phantom (`tests/semantics.rs`,
/// `a_key_created_after_a_scan_cannot_be_ordered_before_the_scanner`): A reads k0 (wts 1), B scans
/// 0..=1 and overwrites k0 at 2, A inserts k1. Returns whether A committed, and the verdict.
fn phantom_schedule(mutation: Option<Mutation>) -> (bool, txlab_check::Report) {
    const O: TableId = TableId(0);
    let mut s = Schema::new();
    s.add(TableSpec::ordered("ordered", 8)).unwrap();
    let rec = Arc::new(MemoryRecorder::new());
    let mut cfg = TicTocConfig::manual();
    if let Some(m) = mutation {
        cfg = cfg.with_mutation(m);
    }
    let db = TicToc::builder()
        .config(cfg)
        .recorder(rec.clone())
        .build(&s)
        .unwrap();
    let (mut wa, mut wb) = (db.worker().unwrap(), db.worker().unwrap());
    let mut setup = wb.begin();
    setup.write(O, 0, &v(1)).unwrap();
    setup.commit().unwrap();
    let mut a = wa.begin();
    a.read(O, 0).unwrap();
    let mut b = wb.begin();
    b.scan(O, 0, 1, &mut |_, _| true).unwrap();
    b.write(O, 0, &v(2)).unwrap();
    b.commit().unwrap();
    assert!(a.insert(O, 1, &v(10)).unwrap());
    let committed = a.commit().is_ok();
    (committed, check(&rec.take(), CheckOptions::serializable()))
}

#[test]
fn the_correct_engine_orders_the_first_write_after_the_scan() {
    let (committed, report) = phantom_schedule(None);
    assert!(
        !committed,
        "A is pushed above B's scan and its read of k0 fails"
    );
    assert!(report.is_serializable(), "{report}");
}

#[test]
fn skipping_stripe_timestamps_is_caught_by_the_checker() {
    let (committed, report) = phantom_schedule(Some(Mutation::SkipStripeTimestamps));
    assert!(committed, "the mutation lets A commit below B");
    assert!(
        !report.is_serializable(),
        "the checker must reject: {report}"
    );
}
