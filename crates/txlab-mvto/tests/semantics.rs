//! MVTO's transaction semantics, driven step by step from one thread with several workers: the
//! kit's shared schedules whose outcome MVTO shares (`txlab_testkit::semantics`), and MVTO's own.
//!
//! Every schedule states what MVTO does with it. MVTO serializes in timestamp order (fixed at
//! begin), so it differs from Silo where the older transaction can still commit by reading the
//! older version, and where a write arrives after a younger transaction read what it overwrites
//! (`WriteTooLate`). Every test ends by checking the recorded history for serializability.

mod common;

use common::MvtoHooks;
use std::sync::Arc;
use txlab_check::{CheckOptions, MemoryRecorder, check};
use txlab_core::{
    AckMode, ConflictCause, Engine, Error, RetryPolicy, Transaction, TxError, TxOps, Worker, run,
};
use txlab_mvto::{Mvto, MvtoConfig, MvtoConfigExt, Timestamped};
use txlab_testkit::family::Kit;
use txlab_testkit::semantics::{self, H, O, T, cause, num, v};

type Db = Mvto<MemoryRecorder>;

type MvtoSemantics = Kit<MvtoHooks>;

// The shared schedules whose outcome in MVTO is the single-version one. (MVTO's versions of the
// stale read, lost update, write skew, blind writes, concurrent inserts, missing-key read,
// phantom and retry schedules follow, with MVTO's outcomes.)
txlab_testkit::semantics_kit!(MvtoSemantics:
    insert_and_delete_semantics,
    scans_see_present_keys_in_order_with_own_writes_overlaid,
);

#[test]
fn byte_string_keys_work_through_a_key_dictionary() {
    semantics::byte_string_keys_work_through_a_key_dictionary::<MvtoSemantics>();
}

/// The shared schedule, and MVTO's engine name.
#[test]
fn committed_writes_are_visible_and_reads_see_own_writes() {
    semantics::run::<MvtoSemantics>(|db| {
        assert_eq!(db.name(), "mvto");
        semantics::committed_writes_are_visible_and_reads_see_own_writes(db);
    });
}

/// The shared schedule, and no version installed by the aborted or dropped writes.
#[test]
fn aborted_and_dropped_transactions_leave_no_trace() {
    semantics::run::<MvtoSemantics>(|db| {
        semantics::aborted_and_dropped_transactions_leave_no_trace(db);
        assert_eq!(db.version_count(T, 1).unwrap(), (1, 0), "nothing installed");
    });
}

/// The shared schedule, and MVTO's configuration values out of range.
#[test]
fn bad_input_is_an_error_not_a_panic() {
    semantics::run::<MvtoSemantics>(semantics::bad_input_is_an_error_not_a_panic);
    for cfg in [
        MvtoConfig::manual().with_horizon_interval(0),
        MvtoConfig::manual().with_clock_sync_interval(1 << 21),
        MvtoConfig::manual().with_read_wait_rounds(0),
    ] {
        let e = Mvto::builder()
            .config(cfg)
            .build(&semantics::schema())
            .unwrap_err();
        assert!(
            matches!(e, Error::InvalidConfig { .. }) && e.to_string().contains("in 1..="),
            "{e}"
        );
    }
}

fn db_with(cfg: MvtoConfig) -> Db {
    let db = Mvto::builder()
        .config(cfg)
        .recorder(Arc::new(MemoryRecorder::new()))
        .build(&semantics::schema())
        .unwrap();
    semantics::load(&db);
    db
}

fn db() -> Db {
    db_with(MvtoConfig::manual())
}

fn assert_serializable(db: &Db) {
    let report = check(&db.recorder().take(), CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
}

fn incr(b: &mut [u8]) {
    let x = num(b);
    b.copy_from_slice(&v(x + 1));
}

#[test]
fn an_older_reader_reads_the_old_version_after_a_newer_writer_commits() {
    // Silo aborts T1 here (stale read). MVTO serializes T1 before T2: T1 keeps reading the version
    // older than its timestamp and commits.
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    assert!(t1.timestamp() < t2.timestamp());
    assert_eq!(t1.read(T, 0).unwrap().map(num), Some(0));
    t2.write(T, 0, &v(1)).unwrap();
    t2.commit().unwrap();
    assert_eq!(
        t1.read(T, 0).unwrap().map(num),
        Some(0),
        "repeatable: the newer version is above T1's timestamp"
    );
    t1.write(T, 1, &v(1)).unwrap();
    t1.commit().expect("T1 is serialized before T2");
    let mut t = w1.begin();
    assert_eq!(t.read(T, 0).unwrap().map(num), Some(1));
    t.commit().unwrap();
    drop((w1, w2));
    assert_serializable(&db);
}

#[test]
fn a_write_after_a_younger_read_of_the_previous_version_is_too_late() {
    // T2 (younger) reads x; T1 (older) then writes x: T1's version would have to precede T2's
    // read, which already returned the previous version. T1 aborts with WriteTooLate.
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    assert!(t1.timestamp() < t2.timestamp());
    assert_eq!(t2.read(T, 0).unwrap().map(num), Some(0));
    t2.commit().unwrap();
    t1.write(T, 0, &v(7)).unwrap();
    assert_eq!(cause(t1.commit().unwrap_err()), ConflictCause::WriteTooLate);
    // The aborted version is skipped by readers; the retry gets a later timestamp and commits.
    let mut t = w1.begin();
    assert_eq!(t.read(T, 0).unwrap().map(num), Some(0));
    t.write(T, 0, &v(7)).unwrap();
    t.commit().unwrap();
    let mut t = w2.begin();
    assert_eq!(t.read(T, 0).unwrap().map(num), Some(7));
    t.commit().unwrap();
    drop((w1, w2));
    assert_serializable(&db);
}

#[test]
fn lost_update_is_prevented_and_the_older_writer_aborts() {
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    assert!(t1.timestamp() < t2.timestamp());
    t1.update(T, 5, &mut incr).unwrap();
    t2.update(T, 5, &mut incr).unwrap();
    // T2 read version 0 of key 5 at a later timestamp: T1's write would slip under that read.
    assert_eq!(cause(t1.commit().unwrap_err()), ConflictCause::WriteTooLate);
    t2.commit().unwrap();
    let mut t = w1.begin();
    assert_eq!(t.read(T, 5).unwrap().map(num), Some(51));
    t.commit().unwrap();
    drop((w1, w2));
    assert_serializable(&db);
}

#[test]
fn lost_update_in_the_other_commit_order_aborts_the_younger_reader() {
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    t1.update(T, 5, &mut incr).unwrap();
    t2.update(T, 5, &mut incr).unwrap();
    t2.commit().unwrap();
    // T1 is older and its read of version 0 is still visible to it, but its write lands under a
    // version T2 read at a later timestamp.
    assert_eq!(cause(t1.commit().unwrap_err()), ConflictCause::WriteTooLate);
    drop((w1, w2));
    assert_serializable(&db);
}

#[test]
fn write_skew_is_prevented() {
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    t1.read(T, 6).unwrap();
    t1.read(T, 7).unwrap();
    t2.read(T, 6).unwrap();
    t2.read(T, 7).unwrap();
    t1.write(T, 6, &v(0)).unwrap();
    t2.write(T, 7, &v(0)).unwrap();
    let r1 = t1.commit();
    let r2 = t2.commit();
    // The older T1 writes under T2's read of key 6: T1 aborts, T2 commits.
    assert_eq!(cause(r1.unwrap_err()), ConflictCause::WriteTooLate);
    r2.unwrap();
    drop((w1, w2));
    assert_serializable(&db);
}

#[test]
fn blind_writes_do_not_conflict_and_the_newest_timestamp_wins() {
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    assert!(t1.timestamp() < t2.timestamp());
    t1.write(T, 8, &v(1)).unwrap();
    t2.write(T, 8, &v(2)).unwrap();
    // Committed in reverse timestamp order: T1's version is linked below T2's.
    t2.commit().unwrap();
    t1.commit().unwrap();
    let mut t = w1.begin();
    assert_eq!(
        t.read(T, 8).unwrap().map(num),
        Some(2),
        "the version with the larger timestamp is the newest, whatever the commit order"
    );
    t.commit().unwrap();
    drop((w1, w2));
    assert_serializable(&db);
}

#[test]
fn concurrent_inserts_of_one_key_let_only_one_commit() {
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    assert!(t1.insert(H, 100, &v(1)).unwrap());
    assert!(t2.insert(H, 100, &v(2)).unwrap());
    assert_eq!(cause(t1.commit().unwrap_err()), ConflictCause::WriteTooLate);
    t2.commit().unwrap();
    let mut t = w1.begin();
    assert_eq!(t.read(H, 100).unwrap().map(num), Some(2));
    t.commit().unwrap();
    drop((w1, w2));
    assert_serializable(&db);
}

#[test]
fn a_read_of_a_missing_key_orders_the_reader_before_a_later_insert() {
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    // Older reader, younger inserter: both commit (reader first in timestamp order).
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    assert_eq!(t1.read(H, 55).unwrap(), None);
    assert!(t2.insert(H, 55, &v(1)).unwrap());
    t2.commit().unwrap();
    t1.write(T, 0, &v(0)).unwrap();
    t1.commit().unwrap();
    // Younger reader, older inserter: the insert is too late.
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    assert!(t1.timestamp() < t2.timestamp());
    assert_eq!(t2.read(H, 56).unwrap(), None);
    t2.commit().unwrap();
    assert!(t1.insert(H, 56, &v(1)).unwrap());
    assert_eq!(cause(t1.commit().unwrap_err()), ConflictCause::WriteTooLate);
    drop((w1, w2));
    assert_serializable(&db);
}

#[test]
fn an_older_reader_sees_a_key_absent_that_a_younger_transaction_inserted() {
    // The key's list holds only a version newer than the reader: the reader links the initial
    // absent version below it, reads "absent", and commits before the inserter in timestamp order.
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    assert!(t1.timestamp() < t2.timestamp());
    assert!(t2.insert(H, 77, &v(1)).unwrap());
    assert!(t2.insert(O, 77, &v(1)).unwrap());
    t2.commit().unwrap();
    assert_eq!(t1.read(H, 77).unwrap(), None);
    let mut seen = 0;
    t1.scan(O, 0, 100, &mut |_, _| {
        seen += 1;
        true
    })
    .unwrap();
    assert_eq!(seen, 0);
    t1.write(T, 0, &v(5)).unwrap();
    t1.commit().unwrap();
    assert_eq!(db.version_count(H, 77).unwrap(), (2, 0));
    let mut t = w1.begin();
    assert_eq!(t.read(H, 77).unwrap().map(num), Some(1));
    t.commit().unwrap();
    drop((w1, w2));
    assert_serializable(&db);
}

#[test]
fn phantoms_abort_the_scanner_or_the_older_inserter() {
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    // Older scanner, younger inserter: the stripe changed under the scan. MVTO could order the
    // scanner first, but stripe validation is conservative (as in Silo): the scanner aborts.
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    let mut n = 0;
    t1.scan(O, 1000, 2000, &mut |_, _| {
        n += 1;
        true
    })
    .unwrap();
    assert_eq!(n, 0);
    t2.insert(O, 1500, &v(1)).unwrap();
    t2.commit().unwrap();
    t1.write(T, 0, &v(0)).unwrap();
    assert_eq!(
        cause(t1.commit().unwrap_err()),
        ConflictCause::PhantomValidation
    );

    // Younger scanner commits first, older inserter second: the insert would be a phantom for
    // the committed scan, so the inserter aborts (stripe scan timestamp).
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    assert!(t1.timestamp() < t2.timestamp());
    t2.scan(O, 5000, 6000, &mut |_, _| true).unwrap();
    t2.commit().unwrap();
    assert!(t1.insert(O, 5500, &v(1)).unwrap());
    assert_eq!(cause(t1.commit().unwrap_err()), ConflictCause::WriteTooLate);

    // A scanner's own insert does not invalidate its scan.
    let mut t3 = w1.begin();
    t3.scan(O, 3000, 4000, &mut |_, _| true).unwrap();
    assert!(t3.insert(O, 3500, &v(2)).unwrap());
    t3.commit()
        .expect("its own insert must not invalidate its own scan");
    drop((w1, w2));
    assert_serializable(&db);
}

#[test]
fn run_retries_conflicts_and_stops_on_user_abort() {
    let db = db();
    let mut w = db.worker().unwrap();
    let mut other = db.worker().unwrap();
    let mut calls = 0;
    let done = run(&mut w, RetryPolicy::no_backoff(), |tx| {
        calls += 1;
        let x = num(tx.read(T, 9)?.unwrap());
        if calls == 1 {
            // A younger transaction reads key 10 before we write it: our write is too late.
            let mut t = other.begin();
            t.read(T, 10)?;
            t.commit()?;
        }
        tx.write(T, 10, &v(x))?;
        Ok(x)
    })
    .unwrap();
    assert_eq!(calls, 2);
    assert_eq!(done.attempts, 2);
    assert_eq!(done.value, 90);

    let r: Result<_, _> = run(&mut w, RetryPolicy::default(), |tx| {
        tx.write(T, 11, &v(0))?;
        Err::<(), _>(TxError::user_abort("changed my mind"))
    });
    assert_eq!(r.unwrap_err(), TxError::user_abort("changed my mind"));
    let mut tx = w.begin();
    assert_eq!(tx.read(T, 11).unwrap().map(num), Some(110));
    assert_eq!(tx.read(T, 10).unwrap().map(num), Some(90));
    tx.commit().unwrap();
    drop((w, other));
    assert_serializable(&db);
}

#[test]
fn group_commit_acknowledges_only_once_the_epoch_is_stable() {
    let db = db_with(MvtoConfig::manual().with_ack(AckMode::EpochStable));
    assert_eq!(db.ack_mode(), AckMode::EpochStable);
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    tx.write(T, 0, &v(1)).unwrap();
    let ts1 = tx.timestamp();
    let info = tx.commit().unwrap();
    assert!(!info.acknowledged);
    assert_eq!(info.epoch, txlab_mvto::__layout::epoch_of(ts1));
    assert!(
        db.stable_epoch() < info.epoch,
        "not stable before the epoch advances"
    );
    db.epochs().wait_stable(info.epoch);
    assert!(db.stable_epoch() >= info.epoch);
    // Any transaction beginning after the acknowledgement follows in timestamp order, even on a
    // worker whose clock lags far behind.
    let mut lagging = db.worker().unwrap();
    let t = lagging.begin();
    assert!(t.timestamp() > ts1);
    drop(t);
    drop((w, lagging));
    assert_serializable(&db);
}

#[test]
fn garbage_collection_keeps_a_hot_key_short() {
    let db = db_with(MvtoConfig::manual().with_horizon_interval(1));
    let mut w = db.worker().unwrap();
    let mut max_versions = 0;
    for i in 0..2_000u64 {
        let mut tx = w.begin();
        tx.update(T, 2, &mut incr).unwrap();
        if i % 3 == 0 {
            tx.write(T, 3, &v(i)).unwrap();
        }
        tx.commit().unwrap();
        max_versions = max_versions.max(db.version_count(T, 2).unwrap().0);
    }
    assert!(
        max_versions <= 2,
        "one worker: the newest version plus the one below the horizon, got {max_versions}"
    );
    let mut tx = w.begin();
    assert_eq!(tx.read(T, 2).unwrap().map(num), Some(20 + 2_000));
    tx.commit().unwrap();

    // An old reader holds the horizon back (it may still need the old versions), and GC resumes
    // once it finishes.
    let mut old_worker = db.worker().unwrap();
    let mut old = old_worker.begin();
    let before = num(old.read(T, 2).unwrap().unwrap());
    for _ in 0..50 {
        // The first update may be too late for the old reader's timestamp (it read key 2): retry.
        run(&mut w, RetryPolicy::no_backoff(), |tx| {
            tx.update(T, 2, &mut incr)?;
            Ok(())
        })
        .unwrap();
    }
    assert!(db.version_count(T, 2).unwrap().0 > 50);
    assert_eq!(
        old.read(T, 2).unwrap().map(num),
        Some(before),
        "the old snapshot survives"
    );
    old.commit().unwrap();
    let mut tx = w.begin();
    tx.update(T, 2, &mut incr).unwrap();
    tx.commit().unwrap();
    assert!(db.version_count(T, 2).unwrap().0 <= 2);
    drop((w, old_worker));
    assert_serializable(&db);
}
