//! Silo's transaction semantics, driven step by step from one thread with several workers.

use txlab_core::{
    ConflictCause, Engine, Error, RetryPolicy, Schema, TableId, TableSpec, Transaction, TxError,
    TxOps, Worker, run,
};
use txlab_silo::{Silo, SiloConfig};

const T: TableId = TableId(0); // dense, 16 keys, 8-byte values
const H: TableId = TableId(1); // hash
const O: TableId = TableId(2); // ordered

fn db() -> Silo {
    let mut s = Schema::new();
    s.add(TableSpec::dense("dense", 8, 16)).unwrap();
    s.add(TableSpec::hash("hash", 8)).unwrap();
    s.add(TableSpec::ordered("ordered", 8)).unwrap();
    let db = Silo::builder()
        .config(SiloConfig::manual())
        .build(&s)
        .unwrap();
    for k in 0..16 {
        db.load(T, k, &v(k * 10)).unwrap();
    }
    db
}

fn v(x: u64) -> [u8; 8] {
    x.to_le_bytes()
}

fn num(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().unwrap())
}

fn cause(e: TxError) -> ConflictCause {
    match e {
        TxError::Conflict(c) => c.cause,
        other => panic!("expected a conflict, got {other:?}"),
    }
}

#[test]
fn committed_writes_are_visible_and_reads_see_own_writes() {
    let db = db();
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    assert_eq!(tx.read(T, 3).unwrap().map(num), Some(30));
    tx.write(T, 3, &v(31)).unwrap();
    assert_eq!(
        tx.read(T, 3).unwrap().map(num),
        Some(31),
        "read-your-writes"
    );
    assert!(
        tx.update(T, 4, &mut |b| b.copy_from_slice(&v(num(b) + 1)))
            .unwrap()
    );
    let info = tx.commit().unwrap();
    assert!(info.acknowledged);
    assert!(!info.read_only);
    let mut tx = w.begin();
    assert_eq!(tx.read(T, 3).unwrap().map(num), Some(31));
    assert_eq!(tx.read(T, 4).unwrap().map(num), Some(41));
    assert!(tx.commit().unwrap().read_only);
}

#[test]
fn aborted_and_dropped_transactions_leave_no_trace() {
    let db = db();
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

#[test]
fn a_stale_read_fails_validation() {
    // T1 reads x; T2 writes x and commits; T1 commits a write: T1 must abort (read skew).
    let db = db();
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

#[test]
fn lost_update_is_prevented() {
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    t1.update(T, 5, &mut |b| b.copy_from_slice(&v(num(b) + 1)))
        .unwrap();
    t2.update(T, 5, &mut |b| b.copy_from_slice(&v(num(b) + 1)))
        .unwrap();
    t1.commit().unwrap();
    assert!(t2.commit().is_err());
    let mut t = w1.begin();
    assert_eq!(t.read(T, 5).unwrap().map(num), Some(51));
    t.commit().unwrap();
}

#[test]
fn write_skew_is_prevented() {
    // x + y >= 0 style: each reads both, writes one. Serializability forbids both committing.
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
    assert!(
        r1.is_ok() != r2.is_ok(),
        "exactly one of the two commits: {r1:?} {r2:?}"
    );
}

#[test]
fn blind_writes_do_not_conflict_with_each_other() {
    let db = db();
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

#[test]
fn insert_and_delete_semantics() {
    let db = db();
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

#[test]
fn concurrent_inserts_of_one_key_let_only_one_commit() {
    let db = db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = w1.begin();
    let mut t2 = w2.begin();
    assert!(t1.insert(H, 100, &v(1)).unwrap());
    assert!(t2.insert(H, 100, &v(2)).unwrap());
    t1.commit().unwrap();
    assert!(t2.commit().is_err());
}

#[test]
fn a_read_of_a_missing_key_is_invalidated_by_a_later_insert() {
    let db = db();
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

#[test]
fn scans_see_present_keys_in_order_with_own_writes_overlaid() {
    let db = db();
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

#[test]
fn a_phantom_insert_aborts_the_scanner_but_its_own_insert_does_not() {
    let db = db();
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

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let db = db();
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

    let r: Result<_, _> = run(&mut w, RetryPolicy::default(), |tx| {
        tx.write(T, 11, &v(0))?;
        Err::<(), _>(TxError::user_abort("changed my mind"))
    });
    assert_eq!(r.unwrap_err(), TxError::user_abort("changed my mind"));
    let mut tx = w.begin();
    assert_eq!(tx.read(T, 11).unwrap().map(num), Some(110));
    tx.commit().unwrap();
}

#[test]
fn run_gives_up_after_max_attempts_with_the_last_conflict() {
    let db = db();
    let mut w = db.worker().unwrap();
    let mut other = db.worker().unwrap();
    let mut calls = 0u32;
    // Every attempt's read is overwritten before it commits: each one conflicts.
    let r = run(&mut w, RetryPolicy::attempts(3).unwrap(), |tx| {
        calls += 1;
        let x = num(tx.read(T, 12)?.unwrap());
        let mut t = other.begin();
        t.write(T, 12, &v(x + 1))?;
        t.commit()?;
        tx.write(T, 13, &v(x))?;
        Ok(())
    });
    assert_eq!(cause(r.unwrap_err()), ConflictCause::ReadValidation);
    assert_eq!(calls, 3, "three attempts, then the conflict is returned");
    let e = RetryPolicy::attempts(0).unwrap_err();
    assert!(e.to_string().contains("max_attempts = 0"), "{e}");
}

/// An application keyed by byte strings: names are interned once in a `KeyDictionary` and the
/// ids are the table keys (docs/architecture.md, "Storage").
#[test]
fn byte_string_keys_work_through_a_key_dictionary() {
    let mut s = Schema::new();
    let users = s.add(TableSpec::hash("users", 8)).unwrap();
    let db = Silo::builder()
        .config(SiloConfig::manual())
        .build(&s)
        .unwrap();
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
}

#[test]
fn group_commit_acknowledges_only_once_the_epoch_is_stable() {
    let mut s = Schema::new();
    s.add(TableSpec::dense("t", 8, 4)).unwrap();
    let cfg = SiloConfig::manual().with_ack(txlab_core::AckMode::EpochStable);
    let db = Silo::builder().config(cfg).build(&s).unwrap();
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    tx.write(T, 0, &v(1)).unwrap();
    let info = tx.commit().unwrap();
    assert!(!info.acknowledged);
    assert!(
        db.stable_epoch() < info.epoch,
        "not stable before the epoch advances"
    );
    db.epochs().advance();
    assert!(db.stable_epoch() >= info.epoch);
}
