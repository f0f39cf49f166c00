//! Retiring deleted records (`txlab_tictoc::retire`): tombstones leave their index two epochs
//! after the delete; the key's fresh record is read and written above the retired tombstone's
//! `rts` (the retire floor); transactions still holding the old record abort instead of using it
//! unless the tombstone's interval already covers them. The threaded tests check recorded
//! histories of all three TicToc engines with retirement running, and the mutant without the
//! floor is caught.

mod common;

use std::sync::Arc;
use std::time::Duration;
use txlab_check::{CheckOptions, History, MemoryRecorder, check};
use txlab_core::protocol::epoch::EpochConfig;
use txlab_core::protocol::history::WriteKind;
use txlab_core::{AckMode, ConflictCause, Engine, TableId, Transaction, TxOps, Worker};
use txlab_tictoc::{Mutation, TicToc, TicTocConfig};
use txlab_tictoc::{Nwr, NwrSingleWrite};

use txlab_testkit::retire::{
    DENSE as D, HASH as H, ORDERED as O, cause, churn_catches, churn_until_retired, delete, insert,
    number as num, schema, value as v, write_versions,
};

fn db(config: TicTocConfig) -> (TicToc<MemoryRecorder>, Arc<MemoryRecorder>) {
    let recorder = Arc::new(MemoryRecorder::new());
    let db = TicToc::builder()
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

/// Overwrites `(H, 1000)` `n` times, so its `wts` (and a reader's commit timestamp) grows.
fn churn_timestamp(w: &mut impl Worker, n: u64) {
    for i in 0..n {
        let mut tx = w.begin();
        tx.write(H, 1000, &v(i)).unwrap();
        tx.commit().unwrap();
    }
}

fn assert_serializable(history: &History) {
    let report = check(history, CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
}

/// A tombstone is unlinked two epochs after its delete and the key is reusable
/// (`txlab_testkit::retire`).
#[test]
fn a_tombstone_is_unlinked_two_epochs_after_its_delete_and_the_key_is_reusable() {
    txlab_testkit::retire::a_tombstone_is_unlinked_and_the_key_is_reusable::<common::TicTocHooks>();
}

#[test]
fn dense_deletes_are_not_queued_and_a_rewritten_key_is_not_unlinked() {
    let (db, _rec) = db(TicTocConfig::manual());
    let mut w = db.worker().unwrap();
    db.load(D, 3, &v(30)).unwrap();
    delete(&mut w, D, 3);
    assert_eq!(w.retire_backlog(), 0);
    insert(&mut w, H, 9, 90);
    delete(&mut w, H, 9);
    insert(&mut w, H, 9, 91);
    assert!(db.epochs().advance() && db.epochs().advance());
    tick(&mut w);
    assert_eq!(w.retire_backlog(), 0);
    assert_eq!(
        w.retired_count(),
        0,
        "the tombstone was replaced: nothing unlinked"
    );
    assert!(db.is_mapped(H, 9).unwrap());
    let mut tx = w.begin();
    assert_eq!(tx.read(H, 9).unwrap().map(num), Some(91));
    tx.commit().unwrap();
}

#[test]
fn the_fresh_record_is_written_above_the_retired_tombstones_rts() {
    for t in [H, O] {
        let (db, rec) = db(TicTocConfig::manual());
        let mut deleter = db.worker().unwrap();
        let mut reader = db.worker().unwrap();
        insert(&mut deleter, t, 7, 70);
        delete(&mut deleter, t, 7);
        churn_timestamp(&mut deleter, 40);
        // The reader sits at the hot record's wts (about 40 above the delete) and extends the
        // tombstone's rts there.
        let mut tx = reader.begin();
        assert_eq!(tx.read(t, 7).unwrap(), None);
        assert!(tx.read(H, 1000).unwrap().is_some());
        tx.commit().unwrap();
        assert!(db.epochs().advance() && db.epochs().advance());
        tick(&mut deleter);
        assert_eq!(deleter.retired_count(), 1);
        let mut fresh = db.worker().unwrap();
        insert(&mut fresh, t, 7, 71);
        let history = rec.take();
        assert_serializable(&history);
        let versions = write_versions(&history, t, 7);
        let hot = write_versions(&history, H, 1000).last().unwrap().1;
        assert_eq!(versions.len(), 3, "{versions:?}");
        assert!(
            versions[2].1 > hot,
            "table {t:?}: the re-insert ({}) commits above the tombstone's rts (>= {hot})",
            versions[2].1
        );
    }
}

#[test]
fn a_reader_of_the_retired_tombstone_commits_only_where_its_interval_covers_it() {
    for t in [H, O] {
        for needs_extension in [false, true] {
            let (db, rec) = db(TicTocConfig::manual());
            let mut deleter = db.worker().unwrap();
            let mut reader = db.worker().unwrap();
            insert(&mut deleter, t, 7, 70);
            delete(&mut deleter, t, 7);
            churn_timestamp(&mut deleter, 10);
            assert!(db.epochs().advance());
            let mut tx = reader.begin(); // active in epoch 2: holds the epoch below 4
            assert_eq!(tx.read(t, 7).unwrap(), None, "reads the tombstone");
            if needs_extension {
                // A later version elsewhere lifts the reader above the tombstone's rts.
                assert!(tx.read(H, 1000).unwrap().is_some());
            }
            assert!(db.epochs().advance());
            tick(&mut deleter);
            assert_eq!(deleter.retired_count(), 1, "table {t:?}");
            assert!(!db.is_mapped(t, 7).unwrap());
            let result = tx.commit();
            if needs_extension {
                assert_eq!(
                    cause(result.unwrap_err()),
                    ConflictCause::ReadValidation,
                    "table {t:?}: the retired word cannot be extended"
                );
            } else {
                result.expect("the tombstone's interval covers the reader's timestamp");
            }
            assert_serializable(&rec.take());
        }
    }
}

/// A writer that held a record retired under it aborts; its retry writes the fresh record
/// (`txlab_testkit::retire`).
#[test]
fn a_transaction_holding_the_retired_record_aborts_and_succeeds_on_retry() {
    txlab_testkit::retire::a_writer_holding_the_retired_record_aborts_and_succeeds_on_retry::<
        common::TicTocHooks,
    >();
}

#[test]
fn a_scan_no_longer_visits_retired_tombstones_and_commits_above_them() {
    let (db, rec) = db(TicTocConfig::manual());
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
    // A scan that reads nothing else would sit at timestamp 0, before the inserts; the stripe's
    // retire floor lifts it above the deletes.
    let mut visited = 0;
    let mut tx = w.begin();
    tx.scan(O, 0, 100, &mut |_, _| {
        visited += 1;
        true
    })
    .unwrap();
    tx.write(D, 1, &v(1)).unwrap();
    tx.commit().unwrap();
    assert_eq!(visited, 0);
    let history = rec.take();
    assert_serializable(&history);
    let last_delete = write_versions(&history, O, 19).last().unwrap().1;
    let scanner = write_versions(&history, D, 1)[0].1;
    assert!(
        scanner >= last_delete,
        "the scanner ({scanner}) is ordered after the deletes it did not see ({last_delete})"
    );
}

#[test]
fn retiring_without_the_floor_is_caught() {
    for t in [H, O] {
        let config = TicTocConfig::manual().with_mutation(Mutation::RetireWithoutFloor);
        let (db, rec) = db(config);
        let mut deleter = db.worker().unwrap();
        insert(&mut deleter, t, 1, 10); // at 1
        delete(&mut deleter, t, 1); // at 2; the mutant's re-insert lands at 1 again
        assert!(db.epochs().advance() && db.epochs().advance());
        tick(&mut deleter);
        assert_eq!(deleter.retired_count(), 1);
        let mut fresh = db.worker().unwrap();
        insert(&mut fresh, t, 1, 11);
        let history = rec.take();
        let versions = write_versions(&history, t, 1);
        assert_ne!(
            versions.iter().map(|&(k, _)| k).collect::<Vec<_>>(),
            [WriteKind::Put, WriteKind::Delete, WriteKind::Put],
            "the mutant should order the re-insert below the tombstone: {versions:?}"
        );
        let report = check(&history, CheckOptions::serializable());
        assert!(
            !report.is_serializable(),
            "table {t:?}: the checker missed the broken order: {report}"
        );
    }
}

/// The schedule that needs the read floor: `T` reads `j0`; `X`, which read
/// `m0` (whose `rts` an earlier reader raised to 5), overwrites `j` at 1 without validating `m0`;
/// `D` overwrote `m` and deleted `k` at 6; after `k`'s tombstone is retired, `T` reads `k`'s
/// fresh record. `T` saw `D`'s delete but neither `X`'s write nor, through `X`, `D`'s write of
/// `m`: `T -rw(j)-> X -rw(m)-> D -wr(k)-> T`. With the floor `T` commits at 6 or above, where
/// `j0` is no longer valid, so it aborts; without it `T` commits at 0. Returns `T`'s commit
/// result.
fn fresh_read_cycle<E: Engine + TestEngine>(db: &E) -> Result<(), ConflictCause> {
    let (k, j, m, hot) = (1u64, 2u64, 3u64, 1000u64);
    for key in [k, j, m, hot] {
        db.load(H, key, &v(0)).unwrap();
    }
    let mut d = db.worker().unwrap();
    let mut x = db.worker().unwrap();
    let mut t = db.worker().unwrap();
    for i in 1..=5 {
        let mut tx = d.begin();
        tx.write(H, hot, &v(i)).unwrap();
        tx.commit().unwrap();
    }
    let mut tx = d.begin(); // U: lifts rts(m0) to 5
    tx.read(H, m).unwrap();
    tx.read(H, hot).unwrap();
    tx.commit().unwrap();
    let mut tx_x = x.begin();
    assert!(tx_x.read(H, m).unwrap().is_some());
    let mut tx = d.begin(); // D: commits at rts(m0) + 1 = 6
    assert!(tx.delete(H, k).unwrap());
    tx.update(H, m, &mut |b| b.copy_from_slice(&v(6))).unwrap();
    tx.commit().unwrap();
    assert!(
        db.epochs_advance(),
        "X holds epoch e: e -> e + 1 is allowed"
    );
    let mut tx_t = t.begin();
    assert!(tx_t.read(H, j).unwrap().is_some());
    tx_x.write(H, j, &v(1)).unwrap();
    tx_x.commit().unwrap(); // at rts(j0) + 1 = 1; its read of m0 (rts 5) needs no validation
    assert!(
        db.epochs_advance(),
        "T holds e + 1: e + 1 -> e + 2 is allowed"
    );
    let tx = d.begin(); // D's worker unlinks k's tombstone
    tx.commit().unwrap();
    assert!(!db.is_mapped_key(H, k), "the tombstone was retired");
    assert_eq!(tx_t.read(H, k).unwrap(), None, "T reads k's fresh record");
    tx_t.commit().map(drop).map_err(cause)
}

/// What [`fresh_read_cycle`] needs of an engine beyond `Engine`.
trait TestEngine {
    fn epochs_advance(&self) -> bool;
    fn is_mapped_key(&self, t: TableId, key: u64) -> bool;
}

impl<Rec: txlab_core::protocol::history::Recorder, Omit: txlab_tictoc::WriteOmission> TestEngine
    for TicToc<Rec, Omit>
{
    fn epochs_advance(&self) -> bool {
        self.epochs().advance()
    }
    fn is_mapped_key(&self, t: TableId, key: u64) -> bool {
        self.is_mapped(t, key).unwrap()
    }
}

#[test]
fn a_read_of_a_fresh_record_commits_above_the_retired_delete_with_and_without_a_recorder() {
    let plain = TicToc::builder()
        .config(TicTocConfig::manual())
        .build(&schema())
        .unwrap();
    assert_eq!(
        fresh_read_cycle(&plain),
        Err(ConflictCause::ReadValidation),
        "no recorder (the benchmark build)"
    );
    let (recorded, rec) = db(TicTocConfig::manual());
    assert_eq!(
        fresh_read_cycle(&recorded),
        Err(ConflictCause::ReadValidation),
        "with a recorder"
    );
    assert_serializable(&rec.take());
    // Without the floor T commits, and the checker finds the cycle.
    let (mutant, rec) = db(TicTocConfig::manual().with_mutation(Mutation::RetireWithoutFloor));
    assert_eq!(fresh_read_cycle(&mutant), Ok(()));
    let report = check(&rec.take(), CheckOptions::serializable());
    assert!(!report.is_serializable(), "{report}");
}

fn fast_epochs() -> TicTocConfig {
    TicTocConfig::manual().with_epoch(EpochConfig::every(Duration::from_micros(50)).unwrap())
}

#[test]
fn concurrent_deletes_reinserts_and_retirements_are_serializable_on_tictoc() {
    churn_until_retired(
        "tictoc",
        |s, r| TicToc::builder().config(fast_epochs()).recorder(r).build(s),
        CheckOptions::serializable(),
    );
}

#[test]
fn concurrent_deletes_reinserts_and_retirements_are_serializable_on_tictoc_nwr() {
    churn_until_retired(
        "tictoc-nwr",
        |s, r| {
            TicToc::builder()
                .nwr(Nwr)
                .config(fast_epochs().with_ack(AckMode::EpochStable))
                .recorder(r)
                .build(s)
        },
        CheckOptions::serializable(),
    );
}

#[test]
fn concurrent_deletes_reinserts_and_retirements_are_serializable_on_tictoc_nwr_single() {
    churn_until_retired(
        "tictoc-nwr-single",
        |s, r| {
            TicToc::builder()
                .nwr(NwrSingleWrite)
                .config(fast_epochs().with_ack(AckMode::EpochStable))
                .recorder(r)
                .build(s)
        },
        CheckOptions::serializable(),
    );
}

/// The threaded run catches the mutant without the floor too (a race: within a few rounds).
#[test]
fn concurrent_churn_catches_retiring_without_the_floor() {
    let config = fast_epochs().with_mutation(Mutation::RetireWithoutFloor);
    let caught = churn_catches(
        |s, r| TicToc::builder().config(config).recorder(r).build(s),
        CheckOptions::serializable(),
    );
    eprintln!("caught after {caught:?} rounds");
    assert!(
        caught.is_some(),
        "80 rounds of the mutant looked serializable"
    );
}
