//! The transaction semantics every interactive engine shares, driven step by step from one thread
//! with several workers, written once and run over each protocol:
//!
//! ```ignore
//! txlab_testkit::semantics_kit!(SiloKit); // every schedule below, one #[test] each
//! txlab_testkit::semantics_kit!(MvtoKit: insert_and_delete_semantics); // only those named
//! ```
//!
//! Each schedule is a function over an engine built on [`schema`] and loaded by [`load`] (key `k`
//! of the dense table [`T`] holds `10 k`). [`run`] builds the engine of a [`Protocol`] with a
//! recorder, runs one schedule and checks the recorded history with the protocol's checker
//! options, so every schedule's outcomes are also proved serializable. Engines whose
//! expectations differ on a schedule (MVTO orders by begin timestamps, the batch pipeline by
//! validation against its write cache) run the schedules they share and keep their own versions
//! of the others.
//!
//! The single-version validating engines (Silo, TicToc) run every schedule: a stale read, a lost
//! update and write skew abort the later committer with `ReadValidation`, two blind writes of one
//! key both commit and the later committer's value stays, and a phantom insert into a scanned
//! range aborts the scanner with `PhantomValidation`.

use std::sync::Arc;
use txlab_check::{MemoryRecorder, check};
use txlab_core::{
    ConflictCause, Engine, Error, RetryPolicy, Schema, TableId, TableSpec, Transaction, TxError,
    TxOps, Worker, run as run_tx,
};

use crate::{Protocol, check_options};

pub use crate::retire::{cause, number as num, value as v};

/// The dense table of [`schema`]: 16 keys, 8-byte values, key `k` loaded with `10 k`.
pub const T: TableId = TableId(0);
/// The hash table of [`schema`] (8-byte values), empty.
pub const H: TableId = TableId(1);
/// The ordered table of [`schema`] (8-byte values), empty.
pub const O: TableId = TableId(2);

/// A dense, a hash and an ordered table, in the order of [`T`], [`H`], [`O`].
pub fn schema() -> Schema {
    let mut s = Schema::new();
    s.add(TableSpec::dense("dense", 8, 16))
        .expect("valid table");
    s.add(TableSpec::hash("hash", 8)).expect("valid table");
    s.add(TableSpec::ordered("ordered", 8))
        .expect("valid table");
    s
}

/// Loads key `k` of [`T`] with `10 k`, for every `k` in `0..16`.
pub fn load<E: Engine>(db: &E) {
    for k in 0..16 {
        db.load(T, k, &v(k * 10)).expect("load");
    }
}

/// Builds `P`'s engine over [`schema`], [`load`]s it, runs `test` on it, and checks the recorded
/// history with `P`'s checker options.
pub fn run<P: Protocol>(test: impl FnOnce(&P::Engine)) {
    let recorder = Arc::new(MemoryRecorder::new());
    let db = P::build(&schema(), recorder.clone()).expect("the engine builds");
    load(&db);
    test(&db);
    drop(db);
    let report = check(&recorder.take(), check_options::<P>());
    assert!(report.is_serializable(), "{}: {report}", P::NAME);
}

fn incr(b: &mut [u8]) {
    let x = num(b);
    b.copy_from_slice(&v(x + 1));
}

/// A transaction reads its own writes; its committed writes are visible to the next one; a
/// transaction without writes commits read-only.
pub fn committed_writes_are_visible_and_reads_see_own_writes<E: Engine>(db: &E) {
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    assert_eq!(tx.read(T, 3).unwrap().map(num), Some(30));
    tx.write(T, 3, &v(31)).unwrap();
    assert_eq!(
        tx.read(T, 3).unwrap().map(num),
        Some(31),
        "read-your-writes"
    );
    assert!(tx.update(T, 4, &mut incr).unwrap());
    let info = tx.commit().unwrap();
    assert!(info.acknowledged);
    assert!(!info.read_only);
    let mut tx = w.begin();
    assert_eq!(tx.read(T, 3).unwrap().map(num), Some(31));
    assert_eq!(tx.read(T, 4).unwrap().map(num), Some(41));
    assert!(tx.commit().unwrap().read_only);
}

/// Writes of an aborted transaction and of a dropped one are never seen.
pub fn aborted_and_dropped_transactions_leave_no_trace<E: Engine>(db: &E) {
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    tx.write(T, 1, &v(99)).unwrap();
    tx.abort();
    {
        let mut tx = w.begin();
        tx.write(T, 2, &v(99)).unwrap();
        // dropped here
    }
    let mut tx = w.begin();
    assert_eq!(tx.read(T, 1).unwrap().map(num), Some(10));
    assert_eq!(tx.read(T, 2).unwrap().map(num), Some(20));
    tx.commit().unwrap();
}

/// T1 reads x; T2 writes x and commits; T1 commits a write: T1 aborts (read skew).
pub fn a_stale_read_fails_validation<E: Engine>(db: &E) {
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    t1.read(T, 0).unwrap();
    t2.write(T, 0, &v(1)).unwrap();
    t2.commit().unwrap();
    t1.write(T, 1, &v(1)).unwrap();
    assert_eq!(
        cause(t1.commit().unwrap_err()),
        ConflictCause::ReadValidation
    );
}

/// Two read-modify-writes of one key: the second committer aborts, one increment remains.
pub fn lost_update_is_prevented<E: Engine>(db: &E) {
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    t1.update(T, 5, &mut incr).unwrap();
    t2.update(T, 5, &mut incr).unwrap();
    t1.commit().unwrap();
    assert!(t2.commit().is_err());
    let mut t = w1.begin();
    assert_eq!(t.read(T, 5).unwrap().map(num), Some(51));
    t.commit().unwrap();
}

/// x + y >= 0 style: each reads both, writes one. Serializability forbids both committing.
pub fn write_skew_is_prevented<E: Engine>(db: &E) {
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
    assert!(
        r1.is_ok() != r2.is_ok(),
        "exactly one of the two commits: {r1:?} {r2:?}"
    );
}

/// Two blind writes of one key both commit; the last committer's value stays.
pub fn blind_writes_do_not_conflict_with_each_other<E: Engine>(db: &E) {
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    t1.write(T, 8, &v(1)).unwrap();
    t2.write(T, 8, &v(2)).unwrap();
    t1.commit().unwrap();
    t2.commit().unwrap();
    let mut t = w1.begin();
    assert_eq!(
        t.read(T, 8).unwrap().map(num),
        Some(2),
        "last committer wins"
    );
    t.commit().unwrap();
}

/// Insert of an absent key, of a present one (refused), delete, delete of an absent key, update
/// of an absent key, re-insert after delete: within a transaction and across commits.
pub fn insert_and_delete_semantics<E: Engine>(db: &E) {
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    assert_eq!(tx.read(H, 7).unwrap(), None);
    assert!(tx.insert(H, 7, &v(70)).unwrap());
    assert!(
        !tx.insert(H, 7, &v(71)).unwrap(),
        "already present in this transaction"
    );
    assert_eq!(tx.read(H, 7).unwrap().map(num), Some(70));
    tx.commit().unwrap();

    let mut tx = w.begin();
    assert!(!tx.insert(H, 7, &v(72)).unwrap(), "present in the database");
    assert!(tx.delete(H, 7).unwrap());
    assert_eq!(tx.read(H, 7).unwrap(), None);
    assert!(!tx.delete(H, 7).unwrap());
    tx.commit().unwrap();

    let mut tx = w.begin();
    assert_eq!(tx.read(H, 7).unwrap(), None);
    assert!(!tx.delete(H, 7).unwrap());
    assert!(!tx.update(H, 7, &mut |_| {}).unwrap());
    assert!(tx.insert(H, 7, &v(73)).unwrap(), "re-insert after delete");
    tx.commit().unwrap();
    let mut tx = w.begin();
    assert_eq!(tx.read(H, 7).unwrap().map(num), Some(73));
    tx.commit().unwrap();
}

/// Two transactions insert one key: the second committer aborts.
pub fn concurrent_inserts_of_one_key_let_only_one_commit<E: Engine>(db: &E) {
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    assert!(t1.insert(H, 100, &v(1)).unwrap());
    assert!(t2.insert(H, 100, &v(2)).unwrap());
    t1.commit().unwrap();
    assert!(t2.commit().is_err());
}

/// T1 reads a key absent; T2 inserts it and commits; T1's read fails validation.
pub fn a_read_of_a_missing_key_is_invalidated_by_a_later_insert<E: Engine>(db: &E) {
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    assert_eq!(t1.read(H, 55).unwrap(), None);
    assert!(t2.insert(H, 55, &v(1)).unwrap());
    t2.commit().unwrap();
    t1.write(T, 0, &v(0)).unwrap();
    assert_eq!(
        cause(t1.commit().unwrap_err()),
        ConflictCause::ReadValidation
    );
}

/// A scan visits present keys in order, sees the transaction's own inserts, updates and deletes,
/// and stops when the visitor returns `false`.
pub fn scans_see_present_keys_in_order_with_own_writes_overlaid<E: Engine>(db: &E) {
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    for k in [10u64, 20, 30, 40] {
        tx.insert(O, k, &v(k)).unwrap();
    }
    tx.commit().unwrap();
    let mut tx = w.begin();
    tx.delete(O, 20).unwrap();
    tx.insert(O, 25, &v(250)).unwrap();
    tx.write(O, 30, &v(300)).unwrap();
    let mut seen = Vec::new();
    tx.scan(O, 15, 40, &mut |k, val| {
        seen.push((k, num(val)));
        true
    })
    .unwrap();
    assert_eq!(seen, vec![(25, 250), (30, 300), (40, 40)]);
    let mut first = Vec::new();
    tx.scan(O, 0, u64::MAX, &mut |k, _| {
        first.push(k);
        false
    })
    .unwrap();
    assert_eq!(first, vec![10], "the visitor stops the scan");
    tx.commit().unwrap();
}

/// An insert into a range another transaction scanned aborts the scanner (phantom validation); a
/// scanner's own insert into its range does not.
pub fn a_phantom_insert_aborts_the_scanner_but_its_own_insert_does_not<E: Engine>(db: &E) {
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
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

    let mut t3 = w1.begin();
    t3.scan(O, 3000, 4000, &mut |_, _| true).unwrap();
    assert!(t3.insert(O, 3500, &v(2)).unwrap());
    t3.commit()
        .expect("its own insert must not invalidate its own scan");
}

/// An unknown table, a key out of range, a value of the wrong size and a scan of a hash table
/// are errors that name the value, not panics; bad loads are refused.
pub fn bad_input_is_an_error_not_a_panic<E: Engine>(db: &E) {
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    let e = tx.read(TableId(9), 0).unwrap_err();
    assert_eq!(e, TxError::Error(Error::UnknownTable { id: 9, count: 3 }));
    let e = tx.read(T, 16).unwrap_err();
    assert!(e.to_string().contains("key 16 is out of range"), "{e}");
    let e = tx.write(T, 1, &[1, 2, 3]).unwrap_err();
    assert!(
        e.to_string().contains("3 bytes") && e.to_string().contains("8 bytes"),
        "{e}"
    );
    let e = tx.scan(H, 0, 10, &mut |_, _| true).unwrap_err();
    assert!(e.to_string().contains("range scans"), "{e}");
    assert!(!e.is_retryable());
    tx.abort();
    assert!(db.load(T, 100, &v(0)).is_err());
    assert!(db.load(T, 1, &[0; 3]).is_err());
}

/// `txlab_core::run` retries an attempt whose read another transaction overwrote before it
/// committed, and returns a user abort without retrying (its writes discarded).
pub fn run_retries_conflicts_and_stops_on_user_abort<E: Engine>(db: &E) {
    let mut w = db.worker().unwrap();
    let mut other = db.worker().unwrap();
    let mut calls = 0;
    let done = run_tx(&mut w, RetryPolicy::no_backoff(), |tx| {
        calls += 1;
        let x = num(tx.read(T, 9)?.unwrap());
        if calls == 1 {
            // Another transaction changes what we read before we commit: a conflict.
            let mut t = other.begin();
            t.write(T, 9, &v(x + 100))?;
            t.commit()?;
        }
        tx.write(T, 10, &v(x))?;
        Ok(x)
    })
    .unwrap();
    assert_eq!(calls, 2);
    assert_eq!(done.attempts, 2);
    assert_eq!(done.value, 190);

    let r: Result<_, _> = run_tx(&mut w, RetryPolicy::default(), |tx| {
        tx.write(T, 11, &v(0))?;
        Err::<(), _>(TxError::user_abort("changed my mind"))
    });
    assert_eq!(r.unwrap_err(), TxError::user_abort("changed my mind"));
    let mut tx = w.begin();
    assert_eq!(tx.read(T, 11).unwrap().map(num), Some(110));
    tx.commit().unwrap();
}

/// Under `AckMode::EpochStable` a commit is not acknowledged, and its epoch is not stable, until
/// `advance` moves the epoch on. `db` is built over [`schema`] with that acknowledgement mode.
pub fn group_commit_acknowledges_only_once_the_epoch_is_stable<E: Engine>(
    db: &E,
    advance: impl Fn(&E),
) {
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    tx.write(T, 0, &v(1)).unwrap();
    let info = tx.commit().unwrap();
    assert!(!info.acknowledged);
    assert!(
        db.stable_epoch() < info.epoch,
        "not stable before the epoch advances"
    );
    advance(db);
    assert!(db.stable_epoch() >= info.epoch);
}

/// An application keyed by byte strings: names are interned once in a `KeyDictionary` and the
/// ids are the table keys (docs/architecture.md, "Storage").
pub fn byte_string_keys_work_through_a_key_dictionary<P: Protocol>() {
    let mut s = Schema::new();
    let users = s.add(TableSpec::hash("users", 8)).unwrap();
    let recorder = Arc::new(MemoryRecorder::new());
    let db = P::build(&s, recorder.clone()).unwrap();
    let names = txlab_storage::KeyDictionary::new(u64::MAX).unwrap();
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    for (name, credit) in [
        (&b"alice"[..], 10u64),
        (b"bob", 20),
        (b"carol@example.org", 30),
    ] {
        tx.insert(users, names.intern(name).unwrap(), &v(credit))
            .unwrap();
    }
    tx.commit().unwrap();
    let mut tx = w.begin();
    let bob = names.get(b"bob").expect("interned");
    assert_eq!(tx.read(users, bob).unwrap().map(num), Some(20));
    let id = names.intern(b"carol@example.org").unwrap();
    assert_eq!(tx.read(users, id).unwrap().map(num), Some(30));
    // A name interned but never inserted has no record: reads see it absent.
    let dave = names.intern(b"dave").unwrap();
    assert_eq!(tx.read(users, dave).unwrap(), None);
    tx.commit().unwrap();
    drop(w);
    drop(db);
    let report = check(&recorder.take(), check_options::<P>());
    assert!(report.is_serializable(), "{}: {report}", P::NAME);
}

/// Instantiates the schedules of this module for a [`Protocol`] as `#[test]` functions named
/// after them: all of them (the single-version validating engines), or only those listed.
#[macro_export]
macro_rules! semantics_kit {
    ($proto:ty) => {
        $crate::semantics_kit!(
            $proto: committed_writes_are_visible_and_reads_see_own_writes,
            aborted_and_dropped_transactions_leave_no_trace,
            a_stale_read_fails_validation,
            lost_update_is_prevented,
            write_skew_is_prevented,
            blind_writes_do_not_conflict_with_each_other,
            insert_and_delete_semantics,
            concurrent_inserts_of_one_key_let_only_one_commit,
            a_read_of_a_missing_key_is_invalidated_by_a_later_insert,
            scans_see_present_keys_in_order_with_own_writes_overlaid,
            a_phantom_insert_aborts_the_scanner_but_its_own_insert_does_not,
            bad_input_is_an_error_not_a_panic,
            run_retries_conflicts_and_stops_on_user_abort,
        );
        #[test]
        fn byte_string_keys_work_through_a_key_dictionary() {
            $crate::semantics::byte_string_keys_work_through_a_key_dictionary::<$proto>();
        }
    };
    ($proto:ty: $($test:ident),+ $(,)?) => {
        $(
            #[test]
            fn $test() {
                $crate::semantics::run::<$proto>($crate::semantics::$test);
            }
        )+
    };
}
