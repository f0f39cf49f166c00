//! TicToc+NWR semantics, step by step from one thread with several workers
//! (`txlab_testkit::nwr_semantics!`): which blind writes the non-visible write rule omits (the
//! NWR paper, Figure 1 (b)–(d)), which it never omits, that an omitted write is never read, that
//! a failed validation hands over to TicToc, which alone aborts, strict serializability with
//! group-commit acknowledgements across epoch boundaries, the two NWR mutants caught by targeted
//! schedules; and TicToc's own: epoch-prefixed commit timestamps, rts extensions into the epoch,
//! and that a reader of an old version in the omitter's epoch cannot break serializability (the
//! hazard TicToc adds to Silo+NWR).

mod common;

use common::TicTocHooks;
use std::sync::Arc;
use txlab_check::{CheckOptions, History, MemoryRecorder, check};
use txlab_core::{Engine, Schema, TableSpec, Transaction, TxOps, Worker};
use txlab_nwr::{Nwr, NwrMutation};
use txlab_testkit::family::manual;
use txlab_testkit::nwr::{counters, omitted_writes as omitted};
use txlab_testkit::nwr_kit::{T, assert_serializable, blind_write, num, read_now, v};
use txlab_tictoc::__layout::{epoch_base, epoch_floor};
use txlab_tictoc::{Mutation, TicToc, TicTocConfig};

txlab_testkit::nwr_semantics!(
    TicTocHooks,
    fig1_b_d_a_later_blind_write_in_the_epoch_is_omitted,
    a_failed_validation_hands_over_to_the_baseline_which_alone_aborts,
);

const X: u64 = 1;
const Y: u64 = 2;
const Z: u64 = 3;
const K: u64 = 4;

type Db = txlab_testkit::nwr_kit::Db<TicTocHooks>;

fn config() -> TicTocConfig {
    manual::<TicTocHooks, Nwr>()
}

fn db() -> (Db, Arc<MemoryRecorder>) {
    txlab_testkit::nwr_kit::db::<TicTocHooks>()
}

fn db_with(config: TicTocConfig) -> (Db, Arc<MemoryRecorder>) {
    txlab_testkit::nwr_kit::db_with::<TicTocHooks, Nwr>(config)
}

fn bump(w: &mut impl Worker, key: u64) {
    let mut tx = w.begin();
    assert!(
        tx.update(T, key, &mut |b| b.copy_from_slice(&v(num(b) + 1)))
            .unwrap()
    );
    tx.commit().unwrap();
}

/// Commit timestamps respect epochs: every version installed in epoch `e` has a tag (its commit
/// timestamp) in `[floor(e), base(e + 1))` and omitted writes sit in `[base(e), floor(e))`.
#[test]
fn commit_timestamps_are_epoch_prefixed() {
    let (db, rec) = db();
    let mut w = db.worker().unwrap();
    for _ in 0..3 {
        let e = db.epochs().global();
        assert!(!blind_write(&mut w, X, e));
        assert!(blind_write(&mut w, X, e + 100));
        bump(&mut w, Y);
        assert!(db.epochs().advance());
    }
    let h = rec.take();
    let mut seen = 0;
    for r in h.records() {
        for wr in &r.writes {
            let e = wr.order >> 24;
            if wr.visible {
                assert!(wr.order >= epoch_floor(e) && wr.order < epoch_base(e + 1));
            } else {
                assert!(wr.order > epoch_base(e) && wr.order < epoch_floor(e));
            }
            seen += 1;
        }
    }
    assert_eq!(seen, 9);
    assert_serializable(&h);
}

/// Two reads of one pre-epoch version in one transaction: the first rts extension into the epoch
/// shifts the word's `wts` (delta overflow); the second read still validates (the history tag
/// recognises the version), so the transaction is not falsely aborted by its own extension.
#[test]
fn an_rts_extension_into_the_epoch_does_not_abort_a_second_read_of_the_version() {
    let (db, rec) = db();
    let mut w = db.worker().unwrap();
    let mut tx = w.begin();
    assert_eq!(tx.read(T, X).unwrap().map(num), Some(10));
    assert_eq!(tx.read(T, X).unwrap().map(num), Some(10));
    tx.write(T, Y, &v(1)).unwrap();
    tx.commit().unwrap();
    assert_eq!(read_now(&mut w, Y), 1);
    assert_serializable(&rec.take());
}

/// The hazard TicToc adds (`docs/protocols/tictoc.md`, "NWR"): TicToc may commit a read of a
/// version that has since been overwritten. In epoch `e`:
///
/// 1. k's read-modify-writes push key K's timestamp to `floor(e) + 9`;
/// 2. t reads x0 (x's pre-epoch version) and K and commits read-only at `floor(e) + 9`,
///    extending x0's rts there (after marking the read in x's read-epoch word);
/// 3. r reads x0 (rts `floor(e) + 9`, so r may later commit at any time up to that without
///    revalidating it);
/// 4. p blind-writes x: installed (x's first version of the epoch, the pivot);
/// 5. o reads y0 and blind-writes x;
/// 6. w blind-writes y (y's first version of the epoch: installed);
/// 7. r reads w's y and commits.
///
/// If o's write were omitted (ordered after x0, before the pivot), r would commit at
/// `floor(e) + 1` without revalidating x0: r -rw-> o (r read x0, o wrote x after it),
/// o -rw-> w (o read y0), w -wr-> r: a cycle. Correct TicToc+NWR refuses the omission (t's merge
/// put x0 in x's mRS before its extension made x0 readable at `floor(e)` and later), installs o,
/// and r then fails TicToc's own validation. Returns whether r committed.
fn old_version_reader_schedule(db: &Db) -> bool {
    let mut ws: Vec<_> = (0..6).map(|_| db.worker().unwrap()).collect();
    let [k, t, r, p, o, w] = &mut ws[..] else {
        unreachable!()
    };
    for _ in 0..10 {
        bump(k, K);
    }
    let mut tt = t.begin();
    assert_eq!(tt.read(T, X).unwrap().map(num), Some(10));
    assert_eq!(tt.read(T, K).unwrap().map(num), Some(50));
    tt.commit().unwrap();
    let mut tr = r.begin();
    assert_eq!(tr.read(T, X).unwrap().map(num), Some(10));
    assert!(!blind_write(p, X, 2));
    let mut to = o.begin();
    assert_eq!(to.read(T, Y).unwrap().map(num), Some(20));
    to.write(T, X, &v(3)).unwrap();
    to.commit().unwrap();
    assert!(!blind_write(w, Y, 4));
    assert_eq!(tr.read(T, Y).unwrap().map(num), Some(4));
    tr.commit().is_ok()
}

#[test]
fn a_reader_of_an_old_version_in_the_epoch_cannot_break_serializability() {
    let (db, rec) = db();
    let committed = old_version_reader_schedule(&db);
    let h = rec.take();
    assert_eq!(omitted(&h), 0, "o must not be omitted");
    assert!(
        !committed,
        "r read x0, which o's installed version replaced"
    );
    assert_serializable(&h);
}

#[test]
fn the_old_version_reader_schedule_is_the_hazard() {
    // With the mRS check skipped, o is omitted, r commits, and the checker finds the cycle.
    let (db, rec) =
        db_with(config().with_mutation(Mutation::Nwr(NwrMutation::SkipMergedReadCheck)));
    let committed = old_version_reader_schedule(&db);
    let h = rec.take();
    assert_eq!(omitted(&h), 1);
    assert!(committed, "r commits by time travel");
    let report = check(&h, CheckOptions::serializable());
    assert!(
        !report.is_serializable(),
        "the mutant must produce a cycle: {report}"
    );
}

/// Every TicToc variant has the same record: the word, the history tag and the value (TicToc+NWR
/// keeps its pivot objects beside the records, `txlab_storage::Companions`). With the
/// `line-aligned-records` feature it rounds up to one 64-byte line.
#[test]
fn every_tictoc_variant_has_plain_tictocs_record() {
    use std::mem::{align_of, size_of};
    use txlab_core::protocol::value::AtomicValue;
    use txlab_tictoc::{LINE_ALIGNED_RECORDS, TicTocRecord};
    let line = |packed| txlab_testkit::nwr::record_size_in_layout(packed, LINE_ALIGNED_RECORDS);
    assert_eq!(
        size_of::<TicTocRecord>(),
        line(16 + size_of::<AtomicValue>())
    );
    assert_eq!(align_of::<TicTocRecord>() == 64, LINE_ALIGNED_RECORDS);
}

/// The worked example of `docs/protocols/tictoc.md` ("NWR"), with its numbers.
#[test]
fn the_documented_worked_example() {
    let (db, rec) = db();
    let mut ws: Vec<_> = (0..5).map(|_| db.worker().unwrap()).collect();
    let [w0, w1, w2, w3, w4] = &mut ws[..] else {
        unreachable!()
    };
    while db.epochs().global() < 6 {
        assert!(db.epochs().advance());
    }
    for _ in 0..5 {
        bump(w0, X);
    }
    assert!(db.epochs().advance());
    assert_eq!(db.epochs().global(), 7);
    let _ = rec.take();

    assert!(!blind_write(w1, X, 1), "t1 installs the pivot");
    let mut t2 = w2.begin();
    assert_eq!(t2.read(T, Y).unwrap().map(num), Some(20));
    t2.write(T, X, &v(2)).unwrap();
    let info = t2.commit().unwrap();
    assert_eq!((info.epoch, info.acknowledged), (7, false));
    assert_eq!(counters(w2)["nwr_commits_omitted"], 1);
    assert_eq!(read_now(w3, X), 1, "t3 reads t1's value");
    assert!(!blind_write(w4, Y, 4), "t4 is installed");

    let h = rec.take();
    let writes: Vec<(u64, u64, bool)> = h
        .records()
        .iter()
        .flat_map(|r| r.writes.iter().map(|w| (w.key, w.order, w.visible)))
        .collect();
    assert_eq!(
        writes,
        [
            (X, 125_829_120, true),
            (X, 117_440_513, false),
            (Y, 125_829_121, true)
        ]
    );
    let t3_read = h.records()[2].reads[0];
    assert_eq!((t3_read.key, t3_read.version), (X, 125_829_120));
    let t1_prev = 109_051_908;
    assert_eq!(epoch_floor(6) + 4, t1_prev);
    assert_serializable(&h);
}

/// A pre-epoch reader whose read's `wts` a delta shift moved into `[base(e), floor(e))` (the
/// `txlab_tictoc::commit` case beyond plain TicToc's timestamps): `t1` reads y's loaded version
/// and writes z, so it merges y and extends `rts(y)` to `floor(e)`, which shifts y's `wts` to
/// `floor(e) - (2^15 - 1)`. `r` then reads only y: its history tag is pre-epoch and its TicToc
/// `commit_ts` (that `wts`) is below the floor, so it commits there and merges nothing. y's mark
/// (from `t1`) still blocks an omission of y in the epoch, and the history checks.
#[test]
fn a_pre_epoch_reader_of_a_shifted_version_merges_nothing() {
    let (db, rec) = db();
    let (mut a, mut r) = (db.worker().unwrap(), db.worker().unwrap());
    let mut t1 = a.begin();
    assert_eq!(t1.read(T, Y).unwrap().map(num), Some(20));
    t1.write(T, Z, &v(5)).unwrap();
    t1.commit().unwrap();
    let _ = counters(&mut a);
    assert_eq!(read_now(&mut r, Y), 20);
    let c = counters(&mut r);
    assert_eq!(c["nwr_unmarked_readers"], 1, "{c:?}");
    assert!(!blind_write(&mut a, Y, 1), "y's pivot");
    assert!(!blind_write(&mut a, Y, 2), "t1's read of y marked it");
    assert_eq!(read_now(&mut r, Y), 2, "installed by the baseline");
    assert_serializable(&rec.take());
}

/// TicToc+NWR over caller-built tables whose indexes differ from the schema's declarations (a
/// table declared dense with 4 keys, given a hash index; a dense index of 100 keys for a table
/// declared with 4): the pivot objects follow the indexes, so a key only the index accepts can be
/// omitted, and its object shows the omission.
#[test]
fn pivot_objects_follow_caller_built_indexes() {
    use txlab_storage::{HashIndex, Tables};
    let mut declared = Schema::new();
    declared.add(TableSpec::dense("t", 8, 4)).unwrap();
    let mut larger = Schema::new();
    larger.add(TableSpec::dense("t", 8, 100)).unwrap();
    let custom = Tables::with_custom(
        &declared,
        vec![(T, Box::new(HashIndex::new(T, 8)) as Box<_>)],
    )
    .unwrap();
    for tables in [custom, Tables::new(&larger).unwrap()] {
        let rec = Arc::new(MemoryRecorder::new());
        let db: Db = TicToc::builder()
            .nwr(Nwr)
            .config(config())
            .recorder(rec.clone())
            .tables(tables)
            .build(&declared)
            .unwrap();
        db.load(T, 50, &v(500)).unwrap();
        let mut w = db.worker().unwrap();
        assert!(!blind_write(&mut w, 50, 1), "the pivot");
        assert!(
            blind_write(&mut w, 50, 2),
            "a key beyond the declared capacity is omitted"
        );
        let word = db
            .pivot_word(T, 50)
            .expect("TicToc+NWR keeps pivot objects");
        assert_eq!(word.pivot, txlab_nwr::pivot::PIVOT_BASE - 1);
        let h: History = rec.take();
        assert_eq!(omitted(&h), 1);
        assert!(check(&h, CheckOptions::serializable()).is_serializable());
    }
}
