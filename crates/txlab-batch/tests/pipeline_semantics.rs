//! The pipeline engine's transaction semantics through its interactive `Engine` interface,
//! driven step by step from one thread with several workers. Each schedule states what backward
//! validation against the committed-write cache does, and every history is checked.

use std::sync::Arc;
use txlab_batch::pipeline::{Mode, Pipeline, PipelineConfig};
use txlab_check::{CheckOptions, MemoryRecorder, check};
use txlab_core::{
    ConflictCause, Engine, Error, RetryPolicy, Schema, TableId, TableSpec, Transaction, TxError,
    TxOps, Worker, run,
};
use txlab_testkit::semantics::{self, H, O, T, cause, num, v};

fn db_with(mode: Mode) -> (Pipeline<MemoryRecorder>, Arc<MemoryRecorder>) {
    let rec = Arc::new(MemoryRecorder::new());
    let cfg = PipelineConfig::default().with_mode(mode);
    let db = Pipeline::builder()
        .config(cfg)
        .recorder(rec.clone())
        .build(&semantics::schema())
        .unwrap();
    semantics::load(&db);
    (db, rec)
}

/// Every mode must give the same answers to one-transaction-at-a-time schedules.
fn each_mode(test: impl Fn(&Pipeline<MemoryRecorder>)) {
    for mode in Mode::ALL {
        let (db, rec) = db_with(mode);
        test(&db);
        drop(db);
        let report = check(&rec.take(), CheckOptions::serializable());
        assert!(report.is_serializable(), "mode {}: {report}", mode.name());
    }
}

/// The kit's shared schedules (`txlab_testkit::semantics`), in every mode.
#[test]
fn committed_writes_are_visible_and_reads_see_own_writes() {
    each_mode(|db| {
        semantics::committed_writes_are_visible_and_reads_see_own_writes(db);
        // The storage holds the committed version with its commit timestamp.
        let (version, value) = db.storage().get((T.0, 3));
        assert!(version >= 1);
        assert_eq!(value.as_deref().map(num), Some(31));
    });
}

#[test]
fn aborted_and_dropped_transactions_leave_no_trace() {
    each_mode(semantics::aborted_and_dropped_transactions_leave_no_trace);
}

#[test]
fn a_stale_read_fails_backward_validation() {
    each_mode(|db| {
        let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
        let mut t1 = w1.begin();
        assert_eq!(t1.read(T, 5).unwrap().map(num), Some(50));
        let mut t2 = w2.begin();
        t2.write(T, 5, &v(55)).unwrap();
        t2.commit().unwrap();
        t1.write(T, 6, &v(1)).unwrap();
        assert_eq!(
            cause(t1.commit().unwrap_err()),
            ConflictCause::ReadValidation
        );
        // Read-only transactions are validated too: their reads must be one snapshot.
        let mut t1 = w1.begin();
        assert_eq!(t1.read(T, 5).unwrap().map(num), Some(55));
        let mut t2 = w2.begin();
        t2.write(T, 5, &v(56)).unwrap();
        t2.commit().unwrap();
        assert_eq!(
            cause(t1.commit().unwrap_err()),
            ConflictCause::ReadValidation
        );
    });
}

#[test]
fn lost_update_and_write_skew_abort_the_second_committer() {
    each_mode(|db| {
        let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
        // Lost update.
        let (mut t1, mut t2) = (w1.begin(), w2.begin());
        t1.update(T, 7, &mut |b| b.copy_from_slice(&v(num(b) + 1)))
            .unwrap();
        t2.update(T, 7, &mut |b| b.copy_from_slice(&v(num(b) + 2)))
            .unwrap();
        t1.commit().unwrap();
        assert_eq!(
            cause(t2.commit().unwrap_err()),
            ConflictCause::ReadValidation
        );
        // Write skew.
        let (mut t1, mut t2) = (w1.begin(), w2.begin());
        t1.read(T, 8).unwrap();
        t1.read(T, 9).unwrap();
        t2.read(T, 8).unwrap();
        t2.read(T, 9).unwrap();
        t1.write(T, 8, &v(0)).unwrap();
        t2.write(T, 9, &v(0)).unwrap();
        t1.commit().unwrap();
        assert_eq!(
            cause(t2.commit().unwrap_err()),
            ConflictCause::ReadValidation
        );
        let mut t = w1.begin();
        assert_eq!(t.read(T, 7).unwrap().map(num), Some(71));
        assert_eq!(t.read(T, 9).unwrap().map(num), Some(90));
        t.commit().unwrap();
    });
}

#[test]
fn blind_writes_never_conflict_and_the_last_committer_wins() {
    each_mode(|db| {
        let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
        let (mut t1, mut t2) = (w1.begin(), w2.begin());
        t1.write(T, 10, &v(1)).unwrap();
        t2.write(T, 10, &v(2)).unwrap();
        t2.commit().unwrap();
        t1.commit().unwrap();
        let mut t = w1.begin();
        assert_eq!(
            t.read(T, 10).unwrap().map(num),
            Some(1),
            "t1 committed last"
        );
        t.commit().unwrap();
    });
}

#[test]
fn inserts_and_deletes_validate_what_they_observed() {
    each_mode(|db| {
        let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
        let (mut t1, mut t2) = (w1.begin(), w2.begin());
        assert!(t1.insert(H, 1000, &v(1)).unwrap());
        assert!(t2.insert(H, 1000, &v(2)).unwrap());
        t1.commit().unwrap();
        assert_eq!(
            cause(t2.commit().unwrap_err()),
            ConflictCause::ReadValidation
        );
        let mut t = w2.begin();
        assert!(!t.insert(H, 1000, &v(3)).unwrap(), "present now");
        assert!(t.delete(H, 1000).unwrap());
        assert_eq!(t.read(H, 1000).unwrap(), None, "own delete");
        t.commit().unwrap();
        let mut t = w1.begin();
        assert_eq!(t.read(H, 1000).unwrap(), None);
        assert!(!t.delete(H, 1000).unwrap());
        assert!(!t.update(H, 1000, &mut |_| {}).unwrap());
        t.commit().unwrap();
    });
}

#[test]
fn bad_input_is_an_error_and_scans_are_unsupported() {
    let (db, _) = db_with(Mode::Srvc);
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    let e = tx.read(TableId(9), 0).unwrap_err();
    assert_eq!(e, TxError::Error(Error::UnknownTable { id: 9, count: 3 }));
    let e = tx.read(T, 16).unwrap_err();
    assert!(e.to_string().contains("key 16 is out of range"), "{e}");
    let e = tx.write(T, 1, &[0; 3]).unwrap_err();
    assert!(e.to_string().contains("3 bytes"), "{e}");
    let e = tx.scan(O, 0, 10, &mut |_, _| true).unwrap_err();
    assert!(
        e.to_string().contains("does not support range scans"),
        "{e}"
    );
    tx.abort();
    assert!(db.load(T, 99, &v(0)).is_err());
    let mut s = Schema::new();
    s.add(TableSpec::dense("t", 8, 4)).unwrap();
    let e = Pipeline::builder()
        .config(PipelineConfig::default().with_batch_size(0))
        .build(&s)
        .unwrap_err();
    assert!(e.to_string().contains("batch_size = 0"), "{e}");
}

#[test]
fn run_retries_a_transaction_that_lost_a_race() {
    each_mode(|db| {
        let mut w1 = db.worker().unwrap();
        let mut w2 = db.worker().unwrap();
        let mut raced = false;
        let committed = run(&mut w1, RetryPolicy::no_backoff(), |tx| {
            let x = num(tx.read(T, 11)?.unwrap());
            if !raced {
                raced = true;
                let mut t2 = w2.begin();
                t2.write(T, 11, &v(500)).unwrap();
                t2.commit().unwrap();
            }
            tx.write(T, 11, &v(x + 1))?;
            Ok(x)
        })
        .unwrap();
        assert_eq!(committed.attempts, 2);
        assert_eq!(committed.value, 500);
    });
}
