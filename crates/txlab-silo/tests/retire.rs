//! Retiring deleted records (`txlab_silo::retire`): tombstones leave their index two epochs after
//! the delete, the key is reusable with larger TIDs, and transactions still holding the old record
//! abort instead of using it. The threaded test checks recorded histories with retirement running.

use std::sync::Arc;
use std::time::Duration;
use txlab_check::{CheckOptions, History, MemoryRecorder, check};
use txlab_core::epoch::EpochConfig;
use txlab_core::history::{Outcome, WriteKind};
use txlab_core::{
    AckMode, ConflictCause, Engine, Schema, TableId, TableSpec, Transaction, TxError, TxOps, Worker,
};
use txlab_silo::{Mutation, Silo, SiloConfig};

const H: TableId = TableId(0); // hash
const O: TableId = TableId(1); // ordered
const D: TableId = TableId(2); // dense

fn schema() -> Schema {
    let mut s = Schema::new();
    s.add(TableSpec::hash("hash", 8)).unwrap();
    s.add(TableSpec::ordered("ordered", 8)).unwrap();
    s.add(TableSpec::dense("dense", 8, 16)).unwrap();
    s
}

fn db(config: SiloConfig) -> (Silo<MemoryRecorder>, Arc<MemoryRecorder>) {
    let recorder = Arc::new(MemoryRecorder::new());
    let db = Silo::with_recorder(&schema(), config, Arc::clone(&recorder)).unwrap();
    (db, recorder)
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

/// Begins and commits an empty transaction: lets `w` work on its retire queue.
fn tick(w: &mut impl Worker) {
    w.begin().commit().unwrap();
}

fn insert(w: &mut impl Worker, t: TableId, key: u64, val: u64) {
    let mut tx = w.begin();
    assert!(tx.insert(t, key, &v(val)).unwrap());
    tx.commit().unwrap();
}

fn delete(w: &mut impl Worker, t: TableId, key: u64) {
    let mut tx = w.begin();
    assert!(tx.delete(t, key).unwrap());
    tx.commit().unwrap();
}

/// The committed writes of `(t, key)` as `(kind, TID)`, in TID order (the checker's version
/// order).
fn write_versions(history: &History, t: TableId, key: u64) -> Vec<(WriteKind, u64)> {
    let mut out: Vec<(WriteKind, u64)> = history
        .records()
        .iter()
        .filter(|r| r.outcome == Outcome::Committed)
        .flat_map(|r| r.writes.iter())
        .filter(|w| w.table == t && w.key == key)
        .map(|w| (w.kind, w.version))
        .collect();
    out.sort_by_key(|&(_, ver)| ver);
    out
}

#[test]
fn a_tombstone_is_unlinked_two_epochs_after_its_delete_and_the_key_is_reusable() {
    for t in [H, O] {
        let (db, rec) = db(SiloConfig::manual());
        let mut w = db.worker().unwrap();
        insert(&mut w, t, 5, 50);
        delete(&mut w, t, 5);
        assert_eq!(w.retire_backlog(), 1, "table {t:?}: the delete is queued");
        tick(&mut w);
        assert!(db.is_mapped(t, 5).unwrap(), "same epoch: still mapped");
        assert!(db.epochs().advance());
        tick(&mut w);
        assert!(db.is_mapped(t, 5).unwrap(), "one epoch later: still mapped");
        assert_eq!(w.retire_backlog(), 1);
        assert!(db.epochs().advance());
        tick(&mut w);
        assert!(
            !db.is_mapped(t, 5).unwrap(),
            "table {t:?}: two epochs later the tombstone is gone"
        );
        assert_eq!(w.retire_backlog(), 0);
        assert_eq!(w.retired_count(), 1);
        assert_eq!(db.mapped_keys(t).unwrap(), 0);

        // The key comes back in a fresh record, on another worker whose own TIDs are small.
        let mut w2 = db.worker().unwrap();
        let mut tx = w2.begin();
        assert_eq!(tx.read(t, 5).unwrap(), None);
        tx.commit().unwrap();
        insert(&mut w2, t, 5, 51);
        let mut tx = w2.begin();
        assert_eq!(tx.read(t, 5).unwrap().map(num), Some(51));
        tx.commit().unwrap();

        let history = rec.take();
        let report = check(&history, CheckOptions::strict());
        assert!(report.is_serializable(), "{report}");
        // In TID order: insert, delete, re-insert (the fresh incarnation's TID is larger).
        let versions = write_versions(&history, t, 5);
        assert_eq!(
            versions.iter().map(|&(k, _)| k).collect::<Vec<_>>(),
            [WriteKind::Put, WriteKind::Delete, WriteKind::Put],
            "{versions:x?}"
        );
    }
}

#[test]
fn dense_deletes_are_not_queued() {
    let (db, _rec) = db(SiloConfig::manual());
    let mut w = db.worker().unwrap();
    db.load(D, 3, &v(30)).unwrap();
    delete(&mut w, D, 3);
    assert_eq!(w.retire_backlog(), 0);
    // A re-inserted key keeps its queue entry harmless: the word changed, nothing is unlinked.
    insert(&mut w, H, 9, 90);
    delete(&mut w, H, 9);
    insert(&mut w, H, 9, 91);
    assert!(db.epochs().advance() && db.epochs().advance());
    tick(&mut w);
    assert_eq!(w.retire_backlog(), 0);
    assert_eq!(w.retired_count(), 0);
    let mut tx = w.begin();
    assert_eq!(tx.read(H, 9).unwrap().map(num), Some(91));
    tx.commit().unwrap();
}

#[test]
fn a_reader_of_the_retired_tombstone_fails_validation() {
    for t in [H, O] {
        let (db, rec) = db(SiloConfig::manual());
        let mut deleter = db.worker().unwrap();
        let mut reader = db.worker().unwrap();
        insert(&mut deleter, t, 7, 70);
        delete(&mut deleter, t, 7); // epoch 1
        assert!(db.epochs().advance()); // 2
        let mut tx = reader.begin(); // active in epoch 2
        assert_eq!(tx.read(t, 7).unwrap(), None, "reads the tombstone");
        assert!(db.epochs().advance()); // 3 = 1 + 2
        tick(&mut deleter);
        assert_eq!(deleter.retired_count(), 1, "table {t:?}");
        assert!(!db.is_mapped(t, 7).unwrap());
        assert_eq!(
            cause(tx.commit().unwrap_err()),
            ConflictCause::ReadValidation
        );
        let report = check(&rec.take(), CheckOptions::strict());
        assert!(report.is_serializable(), "{report}");
    }
}

#[test]
fn a_writer_holding_the_retired_record_aborts_and_succeeds_on_retry() {
    for t in [H, O] {
        for blind in [false, true] {
            let (db, rec) = db(SiloConfig::manual());
            let mut deleter = db.worker().unwrap();
            let mut writer = db.worker().unwrap();
            insert(&mut deleter, t, 7, 70);
            delete(&mut deleter, t, 7);
            assert!(db.epochs().advance());
            let mut tx = writer.begin();
            if blind {
                tx.write(t, 7, &v(71)).unwrap();
            } else {
                assert!(tx.insert(t, 7, &v(71)).unwrap());
            }
            assert!(db.epochs().advance());
            tick(&mut deleter);
            assert_eq!(deleter.retired_count(), 1);
            assert_eq!(
                cause(tx.commit().unwrap_err()),
                ConflictCause::RecordRetired,
                "table {t:?}, blind {blind}"
            );
            // The retry finds the fresh incarnation.
            let mut tx = writer.begin();
            if blind {
                tx.write(t, 7, &v(72)).unwrap();
            } else {
                assert!(tx.insert(t, 7, &v(72)).unwrap());
            }
            tx.commit().unwrap();
            let mut tx = deleter.begin();
            assert_eq!(tx.read(t, 7).unwrap().map(num), Some(72));
            tx.commit().unwrap();
            let report = check(&rec.take(), CheckOptions::strict());
            assert!(report.is_serializable(), "{report}");
        }
    }
}

#[test]
fn a_scan_no_longer_visits_retired_tombstones() {
    let (db, _rec) = db(SiloConfig::manual());
    let mut w = db.worker().unwrap();
    for k in 0..20 {
        insert(&mut w, O, k, k);
    }
    for k in 0..20 {
        delete(&mut w, O, k);
    }
    assert_eq!(db.mapped_keys(O).unwrap(), 20, "tombstones stay at first");
    assert!(db.epochs().advance() && db.epochs().advance());
    for _ in 0..5 {
        tick(&mut w); // BUDGET entries per begin
    }
    assert_eq!(w.retire_backlog(), 0);
    assert_eq!(db.mapped_keys(O).unwrap(), 0);
    let mut visited = 0;
    let mut tx = w.begin();
    tx.scan(O, 0, 100, &mut |_, _| {
        visited += 1;
        true
    })
    .unwrap();
    tx.commit().unwrap();
    assert_eq!(visited, 0);
}

/// Keys of the threaded test's sliding window: few, so deletes, re-inserts and retirements
/// collide; the window moves by half its width every [`WINDOW_TXNS`] transactions, so tombstones
/// left behind get old enough to retire while transactions on the newer half still meet them.
const KEYS: u64 = 8;
const WINDOW_TXNS: u64 = 50;

/// Threads run short transactions of inserts, deletes, reads, read-modify-writes and scans on a
/// hash and an ordered table while a background thread advances the epoch every 50 µs, so
/// tombstones are retired while other transactions hold them. The history must be strictly
/// serializable and retirements must have happened.
fn churn(config: SiloConfig, threads: u64, txns: u64) -> (bool, u64, String) {
    let (db, rec) = db(config);
    let db = Arc::new(db);
    let retired: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let db = Arc::clone(&db);
                s.spawn(move || {
                    let mut w = db.worker().unwrap();
                    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (t + 1);
                    let mut next = move || {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x
                    };
                    for i in 0..txns {
                        let mut tx = w.begin();
                        let body = (|| -> Result<(), TxError> {
                            for op in 0..3 {
                                let r = next();
                                let table = if r & 1 == 0 { H } else { O };
                                let key = (i / WINDOW_TXNS) * (KEYS / 2) + (r >> 1) % KEYS;
                                let unique = (t << 40) | (i << 8) | op;
                                match (r >> 8) % 6 {
                                    0 | 1 => {
                                        tx.insert(table, key, &v(unique))?;
                                    }
                                    2 | 3 => {
                                        tx.delete(table, key)?;
                                    }
                                    4 => {
                                        tx.read(table, key)?;
                                    }
                                    _ if table == O => {
                                        tx.scan(O, key, key + 2, &mut |_, _| true)?;
                                    }
                                    _ => {
                                        tx.update(table, key, &mut |b| {
                                            b.copy_from_slice(&v(unique))
                                        })?;
                                    }
                                }
                            }
                            Ok(())
                        })();
                        if body.is_ok() {
                            let _ = tx.commit();
                        }
                    }
                    w.retired_count()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    drop(db);
    let report = check(&rec.take(), CheckOptions::strict());
    (report.is_serializable(), retired, report.to_string())
}

fn fast_epochs() -> SiloConfig {
    SiloConfig::manual()
        .with_epoch(EpochConfig::every(Duration::from_micros(50)).unwrap())
        .with_ack(AckMode::AtCommit)
}

/// Retirement needs the background epoch thread to run while the workers do; on a loaded test
/// runner it may barely get scheduled in one round (a CI run saw none retired), so rounds repeat,
/// each on a fresh database with its history checked, until more than 10 tombstones were retired
/// in all, at most 8 rounds.
#[test]
fn concurrent_deletes_reinserts_and_retirements_are_strictly_serializable() {
    let mut retired = 0;
    for round in 0..8 {
        let (ok, n, report) = churn(fast_epochs(), 3, 4_000);
        assert!(ok, "round {round}: {report}");
        retired += n;
        eprintln!("round {round}: retired {n}");
        if retired > 10 {
            break;
        }
    }
    assert!(
        retired > 10,
        "{retired} tombstones retired in 8 rounds: the test did not exercise retirement"
    );
}

/// Without the two-epoch grace period a key's next incarnation can commit a TID below its
/// tombstone's, and the checker sees the broken version order.
#[test]
fn retiring_without_the_grace_period_is_caught() {
    let (db, rec) = db(SiloConfig::manual().with_mutation(Mutation::RetireWithoutGrace));
    let mut busy = db.worker().unwrap();
    let mut fresh = db.worker().unwrap();
    // `busy` commits several times, so its TIDs in epoch 1 are larger than `fresh`'s first one.
    for k in 100..110 {
        insert(&mut busy, H, k, k);
    }
    insert(&mut busy, H, 1, 10);
    delete(&mut busy, H, 1);
    tick(&mut busy); // unlinks at once
    assert_eq!(busy.retired_count(), 1);
    insert(&mut fresh, H, 1, 11);
    let mut tx = busy.begin();
    assert_eq!(tx.read(H, 1).unwrap().map(num), Some(11));
    tx.commit().unwrap();
    let history = rec.take();
    let versions = write_versions(&history, H, 1);
    assert_ne!(
        versions.iter().map(|&(k, _)| k).collect::<Vec<_>>(),
        [WriteKind::Put, WriteKind::Delete, WriteKind::Put],
        "the mutant should give the re-insert a TID below the tombstone's: {versions:x?}"
    );
    let report = check(&history, CheckOptions::strict());
    assert!(
        !report.is_serializable(),
        "the checker missed the broken order: {report}"
    );
}

/// The threaded run catches the no-grace mutant too (within a few rounds: it is a race).
#[test]
fn concurrent_churn_catches_retiring_without_the_grace_period() {
    let config = fast_epochs().with_mutation(Mutation::RetireWithoutGrace);
    let caught = (0..20).position(|_| !churn(config, 3, 3_000).0);
    eprintln!("caught after {caught:?} rounds");
    assert!(
        caught.is_some(),
        "20 rounds of the mutant looked serializable"
    );
}
