//! MVTO+NWR with single-write omitters (`MvtoNwrSingle`, engine `mvto-nwr-single`) in the
//! correctness kit (`txlab_testkit::nwr_single_kit!`): Hermitage schedules, random schedules
//! (reads, blind writes, read-modify-writes, inserts, deletes and scans), threaded stress across
//! epochs, the NWR mutants, and MVTO's own schedules: which version is the pivot, the pivot
//! writer's read, the omitter's reads validated at the pivot's timestamp, two omitters under one
//! pivot writer, a scan miss, and strictness with group-commit acknowledgements.
//!
//! As in `kit_nwr.rs`: manual epochs and `AckMode::EpochStable`; the kit checks histories for
//! serializability (MVTO's timestamp order need not follow commit-return order), strictness with
//! acknowledgement times is checked here.
//!
//! Workers are created in a fixed order, so in one round their timestamps order by worker id
//! (every clock starts at the horizon; a timestamp is the clock followed by the worker id): a
//! worker created earlier that begins first has the smaller timestamp.

mod common;

use common::MvtoHooks;
use std::sync::Arc;
use txlab_check::{CheckOptions, History, MemoryRecorder, check};
use txlab_core::protocol::history::Recorder;
use txlab_core::{ConflictCause, Engine, Schema, TableSpec, Transaction, TxError, TxOps, Worker};
use txlab_mvto::{Mutation, Mvto, MvtoConfig, NwrSingleWrite};
use txlab_nwr::NwrMutation;
use txlab_testkit::family::{EngineOf, manual};
use txlab_testkit::nwr::{at_acknowledgements, counters, omitted_writes};
use txlab_testkit::nwr_kit::{T, num, v};

txlab_testkit::nwr_single_kit!(MvtoHooks);

fn config() -> MvtoConfig {
    manual::<MvtoHooks, NwrSingleWrite>()
}

const X: u64 = 1;
const Y: u64 = 2;
const Z: u64 = 3;

type Db = EngineOf<MvtoHooks, NwrSingleWrite>;

fn db_with(config: MvtoConfig) -> (Db, Arc<MemoryRecorder>) {
    txlab_testkit::nwr_kit::db_with::<MvtoHooks, NwrSingleWrite>(config)
}

fn read(t: &mut impl TxOps, key: u64) -> u64 {
    t.read(T, key).unwrap().map(num).unwrap()
}

fn blind_write(w: &mut impl Worker, key: u64, value: u64) {
    let mut t = w.begin();
    t.write(T, key, &v(value)).unwrap();
    t.commit().unwrap();
}

fn omitted(w: &mut impl Worker) -> u64 {
    counters(w).get("nwr_commits_omitted").copied().unwrap_or(0)
}

fn serializable(rec: &MemoryRecorder) -> History {
    let h = rec.take();
    let report = check(&h, CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
    h
}

fn write_too_late(r: Result<txlab_core::CommitInfo, TxError>) -> bool {
    matches!(r, Err(TxError::Conflict(c)) if c.cause == ConflictCause::WriteTooLate)
}

/// A late blind write that plain MVTO aborts is omitted: `O` begins first; `R` (younger) reads
/// x0; `P` (youngest) blind-writes x. `O`'s write would land under `R`'s read (`WriteTooLate`);
/// here it sits just below `P`'s version, above `R`, and commits. Plain MVTO's outcome is checked
/// on the same schedule.
#[test]
fn a_late_blind_write_is_omitted_below_the_pivot() {
    fn schedule<E: Engine>(db: &E) -> Result<txlab_core::CommitInfo, TxError> {
        let (mut o, mut r, mut p) = (
            db.worker().unwrap(),
            db.worker().unwrap(),
            db.worker().unwrap(),
        );
        let mut to = o.begin();
        let mut tr = r.begin();
        assert_eq!(read(&mut tr, X), 10);
        tr.commit().unwrap();
        blind_write(&mut p, X, 2);
        to.write(T, X, &v(1)).unwrap();
        to.commit()
    }
    let (db, rec) = db_with(config());
    assert!(schedule(&db).is_ok());
    let h = serializable(&rec);
    assert_eq!(omitted_writes(&h), 1);
    let mut w = db.worker().unwrap();
    let mut t = w.begin();
    assert_eq!(read(&mut t, X), 2, "the omitted write is never visible");
    t.commit().unwrap();

    let mut s = Schema::new();
    s.add(TableSpec::dense("t", 8, 8)).unwrap();
    let plain = txlab_mvto::Mvto::builder()
        .config(config())
        .build(&s)
        .unwrap();
    for k in 0..8 {
        plain.load(T, k, &v(k * 10)).unwrap();
    }
    assert!(write_too_late(schedule(&plain)), "plain MVTO aborts O");
}

/// The pivot is the lowest committed version above the omitter whose writer did not read the
/// item: `P1` read-modify-writes x (it read x0), `P2` blind-writes x; `O`, older than both, is
/// placed between them, below `P2`. With only `P1`, `O` is refused (`nwr_fail_mrs`): a lost
/// update if omitted; plain MVTO then aborts it (`P1` read x0 above it).
#[test]
fn the_pivot_is_the_lowest_version_whose_writer_did_not_read_the_item() {
    let (db, rec) = db_with(config());
    let (mut o, mut p) = (db.worker().unwrap(), db.worker().unwrap());
    let mut to = o.begin();
    let mut t = p.begin();
    let x = read(&mut t, X);
    t.write(T, X, &v(x + 1)).unwrap();
    t.commit().unwrap();
    to.write(T, X, &v(5)).unwrap();
    assert!(
        write_too_late(to.commit()),
        "refused, then MVTO's rts check"
    );
    assert_eq!(counters(&mut o).get("nwr_fail_mrs"), Some(&1));

    let mut to = o.begin();
    let mut t = p.begin();
    let x = read(&mut t, X);
    t.write(T, X, &v(x + 1)).unwrap();
    t.commit().unwrap();
    blind_write(&mut p, X, 30);
    to.write(T, X, &v(6)).unwrap();
    to.commit().unwrap();
    assert_eq!(omitted(&mut o), 1, "placed between P1 and P2");
    // O's worker moved its clock past P2: its next transaction follows O, so it sees P2's x.
    let mut t = o.begin();
    assert_eq!(
        read(&mut t, X),
        30,
        "the omitter's worker is not sent back in time"
    );
    t.commit().unwrap();
    let h = serializable(&rec);
    assert_eq!(omitted_writes(&h), 1);
    let pivot = h
        .records()
        .iter()
        .flat_map(|r| r.writes.iter())
        .filter(|w| w.visible)
        .map(|w| w.order)
        .max()
        .unwrap();
    let omitted = h
        .records()
        .iter()
        .flat_map(|r| r.writes.iter())
        .find(|w| !w.visible)
        .unwrap();
    assert_eq!(
        omitted.order, pivot,
        "recorded with P2's order, just before it"
    );
}

/// The omitter's reads are validated at the pivot's timestamp. `O` reads z0; `W`, younger, reads
/// x0 and overwrites z; `P`, younger still, blind-writes x. At `P`'s timestamp `O`'s read of z is
/// stale, so `O` is refused, and plain MVTO aborts it (`W` read x0 above it). Returns whether `O`
/// committed and how many writes it omitted.
fn reads_at_the_pivot_schedule(db: &Db) -> (bool, u64) {
    let (mut o, mut w, mut p) = (
        db.worker().unwrap(),
        db.worker().unwrap(),
        db.worker().unwrap(),
    );
    let mut to = o.begin();
    assert_eq!(read(&mut to, Z), 30);
    let mut tw = w.begin();
    assert_eq!(read(&mut tw, X), 10);
    tw.write(T, Z, &v(3)).unwrap();
    tw.commit().unwrap();
    blind_write(&mut p, X, 2);
    to.write(T, X, &v(1)).unwrap();
    let committed = to.commit().is_ok();
    (committed, omitted(&mut o))
}

#[test]
fn an_omitters_reads_are_validated_at_the_pivots_timestamp() {
    let (db, rec) = db_with(config());
    assert_eq!(reads_at_the_pivot_schedule(&db), (false, 0));
    serializable(&rec);
}

#[test]
fn validating_at_the_omitters_own_timestamp_is_caught_by_the_checker() {
    let (db, rec) =
        db_with(config().with_mutation(Mutation::Nwr(NwrMutation::ValidateReadsBeforePivot)));
    assert_eq!(reads_at_the_pivot_schedule(&db), (true, 1));
    let h = rec.take();
    let report = check(&h, CheckOptions::serializable());
    assert!(
        !report.is_serializable(),
        "O -rw(z)-> W -rw(x)-> O must be found: {report}"
    );
}

/// Two omitters whose pivots one transaction wrote sit at the same place; neither may read what
/// the other writes. `P` blind-writes x and y; `O1` read y0 and blind-writes x, `O2` read x0 and
/// blind-writes y. Each finds the pivot writer's version of the item it read at the pivot's
/// timestamp, so neither is omitted; the history checks.
#[test]
fn omitters_under_one_pivot_writer_do_not_read_each_others_items() {
    let (db, rec) = db_with(config());
    let (mut o1, mut o2, mut p) = (
        db.worker().unwrap(),
        db.worker().unwrap(),
        db.worker().unwrap(),
    );
    let mut t1 = o1.begin();
    let mut t2 = o2.begin();
    assert_eq!(read(&mut t1, Y), 20);
    assert_eq!(read(&mut t2, X), 10);
    let mut tp = p.begin();
    tp.write(T, X, &v(1)).unwrap();
    tp.write(T, Y, &v(1)).unwrap();
    tp.commit().unwrap();
    t1.write(T, X, &v(2)).unwrap();
    t2.write(T, Y, &v(2)).unwrap();
    let _ = t1.commit();
    let _ = t2.commit();
    for w in [&mut o1, &mut o2] {
        let c = counters(w);
        assert_eq!(c.get("nwr_commits_omitted"), Some(&0), "{c:?}");
        assert_eq!(c.get("nwr_fail_overwriters"), Some(&1), "{c:?}");
    }
    let h = serializable(&rec);
    assert_eq!(omitted_writes(&h), 0);
}

/// A pivot written over a key with no record, by a transaction that scanned past it: the older
/// blind write is not omitted (it would be ordered before the pivot's writer, whose scan saw the
/// key missing). First with nothing below the pivot; then with the initial absent version linked
/// below it by an older reader (its `rts` is below the pivot's timestamp, so only the stripe's
/// scan timestamp reveals the scan).
#[test]
fn a_pivot_over_a_missing_key_is_not_used() {
    for older_reader in [false, true] {
        let mut s = Schema::new();
        s.add(TableSpec::ordered("t", 8)).unwrap();
        let rec = Arc::new(MemoryRecorder::new());
        let db = Mvto::builder()
            .nwr(NwrSingleWrite)
            .config(config())
            .recorder(rec.clone())
            .build(&s)
            .unwrap();
        db.load(T, 0, &v(0)).unwrap();
        let (mut o, mut r, mut p) = (
            db.worker().unwrap(),
            db.worker().unwrap(),
            db.worker().unwrap(),
        );
        let mut to = o.begin();
        let mut tr = r.begin();
        let mut tp = p.begin();
        let mut seen = Vec::new();
        tp.scan(T, 0, 1, &mut |k, _| {
            seen.push(k);
            true
        })
        .unwrap();
        assert_eq!(seen, [0], "k1 is missing");
        tp.write(T, 1, &v(1)).unwrap();
        tp.commit().unwrap();
        if older_reader {
            assert_eq!(tr.read(T, 1).unwrap(), None, "older than the pivot");
        }
        tr.commit().unwrap();
        to.write(T, 1, &v(2)).unwrap();
        let _ = to.commit();
        assert_eq!(omitted(&mut o), 0, "older reader: {older_reader}");
        let h = serializable(&rec);
        assert_eq!(omitted_writes(&h), 0);
    }
}

/// Strict serializability across epoch boundaries, epochs advanced by hand. Each round `P`
/// installs x's pivot and returns; then `O` begins with a lagging clock (its worker was created
/// first and has done no more transactions, so its timestamp is below `P`'s), reads y, and
/// blind-writes x: omitted below `P`'s version, so serialized before `P` although it began after
/// `P` returned. A reader then sees `P`'s value. With commit-return times the checker must find
/// the real-time violation; with group-commit acknowledgements (the end of each epoch) the history
/// is strictly serializable.
#[test]
fn strict_serializable_with_group_commit_acknowledgements() {
    let (db, rec) = db_with(config());
    let (mut o, mut p, mut r) = (
        db.worker().unwrap(),
        db.worker().unwrap(),
        db.worker().unwrap(),
    );
    let mut acks = Vec::new();
    for round in 0..3u64 {
        blind_write(&mut p, X, 100 + round);
        let mut to = o.begin();
        assert_eq!(read(&mut to, Y), 20);
        to.write(T, X, &v(200 + round)).unwrap();
        to.commit().unwrap();
        assert_eq!(omitted(&mut o), 1, "round {round}");
        let mut tr = r.begin();
        assert_eq!(read(&mut tr, X), 100 + round, "round {round}");
        tr.commit().unwrap();
        assert!(db.epochs().advance());
        acks.push(rec.now_ns());
    }
    assert!(db.epochs().advance());
    let last = rec.now_ns();
    let raw = rec.take();
    assert_eq!(omitted_writes(&raw), 3);
    let report = check(&raw, CheckOptions::strict());
    assert!(
        !report.is_serializable(),
        "commit-return times must show the reordering: {report}"
    );
    let report = check(
        &at_acknowledgements(raw, &acks, last),
        CheckOptions::strict(),
    );
    assert!(report.is_serializable(), "{report}");
}
