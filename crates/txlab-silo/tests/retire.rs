//! Retiring deleted records (`txlab_silo::retire`): tombstones leave their index two epochs after
//! the delete, the key is reusable with larger TIDs, and transactions still holding the old record
//! abort instead of using it. The threaded test checks recorded histories with retirement running.

mod common;

use std::sync::Arc;
use std::time::Duration;
use txlab_check::{CheckOptions, MemoryRecorder, check};
use txlab_core::protocol::epoch::EpochConfig;
use txlab_core::protocol::history::WriteKind;
use txlab_core::{AckMode, ConflictCause, Engine, Transaction, TxOps, Worker};
use txlab_silo::{Mutation, Silo, SiloConfig};

use txlab_testkit::retire::{
    DENSE as D, HASH as H, ORDERED as O, cause, churn_catches, churn_until_retired, delete, insert,
    number as num, schema, value as v, write_versions,
};

fn db(config: SiloConfig) -> (Silo<MemoryRecorder>, Arc<MemoryRecorder>) {
    let recorder = Arc::new(MemoryRecorder::new());
    let db = Silo::builder()
        .config(config)
        .recorder(Arc::clone(&recorder))
        .build(&schema())
        .unwrap();
    (db, recorder)
}

/// Begins and commits an empty transaction: lets `w` work on its retire queue.
fn tick(w: &mut impl Worker) {
    w.begin().commit().unwrap();
}

/// A tombstone is unlinked two epochs after its delete and the key is reusable
/// (`txlab_testkit::retire`).
#[test]
fn a_tombstone_is_unlinked_two_epochs_after_its_delete_and_the_key_is_reusable() {
    txlab_testkit::retire::a_tombstone_is_unlinked_and_the_key_is_reusable::<common::SiloHooks>();
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

/// A writer that held a record retired under it aborts; its retry writes the fresh record
/// (`txlab_testkit::retire`).
#[test]
fn a_writer_holding_the_retired_record_aborts_and_succeeds_on_retry() {
    txlab_testkit::retire::a_writer_holding_the_retired_record_aborts_and_succeeds_on_retry::<
        common::SiloHooks,
    >();
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

fn fast_epochs() -> SiloConfig {
    SiloConfig::manual()
        .with_epoch(EpochConfig::every(Duration::from_micros(50)).unwrap())
        .with_ack(AckMode::AtCommit)
}

/// The shared threaded churn (`txlab_testkit::retire`), histories checked for strict
/// serializability.
#[test]
fn concurrent_deletes_reinserts_and_retirements_are_strictly_serializable() {
    churn_until_retired(
        "silo",
        |s, r| Silo::builder().config(fast_epochs()).recorder(r).build(s),
        CheckOptions::strict(),
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
    let caught = churn_catches(
        |s, r| Silo::builder().config(config).recorder(r).build(s),
        CheckOptions::strict(),
    );
    eprintln!("caught after {caught:?} rounds");
    assert!(
        caught.is_some(),
        "80 rounds of the mutant looked serializable"
    );
}
