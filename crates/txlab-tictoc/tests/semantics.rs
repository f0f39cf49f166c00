//! TicToc's transaction semantics, driven step by step from one thread with several workers: the
//! kit's shared schedules (`txlab_testkit::semantics`), and the schedules that show what is
//! TicToc's own, its computed timestamps.
//!
//! Each schedule states what TicToc does and why, in terms of the timestamps it computes: a
//! loaded record has `wts = rts = 0`; a writer commits at `commit_ts = max(max wts read,
//! max rts + 1 written)`; a read whose `rts < commit_ts` must still have its `wts` and gets its
//! `rts` extended. Histories are checked with `CheckOptions::serializable()`: TicToc orders
//! transactions by `commit_ts`, which may differ from real-time order (a test below shows a
//! schedule that is serializable but not strictly serializable).
//!
//! The shared schedules, in those terms:
//!
//! - stale read: T1 reads x (wts 0, rts 0); T2 writes x at commit_ts 1; T1 writes y (rts 0), so
//!   its commit_ts is 1 > rts(x as read) = 0: validation finds x's wts changed and aborts T1.
//!   TicToc cannot order T1 before T2 here because x's rts never covered T1's timestamp.
//! - lost update: T1 commits x at ts 1; T2 locks x (rts 1), so commit_ts 2 > rts(x as read) = 0,
//!   and x's wts changed: abort.
//! - write skew: T1 commits at 1 and extends rts(7) to 1; T2 locks 7 (rts 1), commit_ts 2 >
//!   rts(6 as read) = 0 and 6's wts changed: T2 aborts.
//! - blind writes: ts 1, then ts 2: the later locker gets the later timestamp.

mod common;

use common::TicTocHooks;
use std::sync::Arc;
use txlab_check::{CheckOptions, MemoryRecorder, check};
use txlab_core::protocol::history::Recorder;
use txlab_core::{
    AckMode, ConflictCause, Engine, Schema, TableId, TableSpec, Transaction, TxOps, Worker,
};
use txlab_testkit::family::Kit;
use txlab_testkit::semantics::{self, T, cause, num, v};
use txlab_tictoc::{TicToc, TicTocConfig};

type TicTocSemantics = Kit<TicTocHooks>;

txlab_testkit::semantics_kit!(TicTocSemantics);

#[test]
fn group_commit_acknowledges_only_once_the_epoch_is_stable() {
    let cfg = TicTocConfig::manual().with_ack(AckMode::EpochStable);
    let db = TicToc::builder()
        .config(cfg)
        .build(&semantics::schema())
        .unwrap();
    semantics::group_commit_acknowledges_only_once_the_epoch_is_stable(&db, |db| {
        db.epochs().advance();
    });
}

fn recorded_db() -> (TicToc<MemoryRecorder>, Arc<MemoryRecorder>) {
    let mut s = Schema::new();
    s.add(TableSpec::dense("dense", 8, 16)).unwrap();
    let rec = Arc::new(MemoryRecorder::new());
    let db = TicToc::builder()
        .config(TicTocConfig::manual())
        .recorder(rec.clone())
        .build(&s)
        .unwrap();
    for k in 0..16 {
        db.load(T, k, &v(k * 10)).unwrap();
    }
    (db, rec)
}

/// Commits `n` blind writes of `key` one after the other: its `wts` (and `rts`) becomes `n`.
fn bump_wts<W: Worker>(w: &mut W, key: u64, n: u64) {
    for i in 0..n {
        let mut tx = w.begin();
        tx.write(T, key, &v(1000 + i)).unwrap();
        tx.commit().unwrap();
    }
}

#[test]
fn a_reader_of_an_overwritten_version_commits_by_being_ordered_before_the_writer() {
    // Silo aborts T1 in both schedules below (its read of x changed before commit). TicToc commits
    // it: x was written once before (wts = rts = 1), so T1 reads x valid over [1, 1]; T2
    // overwrites x at commit_ts 2; T1's commit_ts is max(wts read = 1, rts(y) + 1 = 1) = 1 <= the
    // rts it read, so T1 needs no validation and is serialized at 1, before T2 at 2.
    let (db, rec) = recorded_db();
    let (mut w1, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    bump_wts(&mut w1, 0, 1);

    // T1 writes a key nobody read.
    let mut t1 = w1.begin();
    assert_eq!(t1.read(T, 0).unwrap().map(num), Some(1000));
    let mut t2 = w2.begin();
    t2.write(T, 0, &v(7)).unwrap();
    t2.commit().unwrap();
    t1.write(T, 1, &v(1000)).unwrap();
    t1.commit()
        .expect("TicToc orders T1 before T2 instead of aborting it");

    // Read-only T1'.
    let mut t1 = w1.begin();
    assert_eq!(t1.read(T, 0).unwrap().map(num), Some(7));
    let mut t2 = w2.begin();
    t2.write(T, 0, &v(8)).unwrap();
    t2.commit().unwrap();
    assert!(t1.commit().expect("read-only T1' commits").read_only);

    let mut t = w1.begin();
    assert_eq!(t.read(T, 0).unwrap().map(num), Some(8));
    assert_eq!(t.read(T, 1).unwrap().map(num), Some(1000));
    t.commit().unwrap();

    let report = check(&rec.take(), CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
    assert_eq!(report.aborted, 0, "{report}");
}

#[test]
fn an_rts_extension_pushes_a_later_writer_past_the_reader() {
    // x = key 2 gets wts 3. T3 reads y = key 3 (wts 0, rts 0) and x (wts 3) and writes key 4:
    // commit_ts = max(3, rts(key 4) + 1 = 1) = 3 > rts(y) = 0, so validation extends y's rts to 3.
    // A later writer of y must then commit above 3, so a reader of y's old version at timestamp 3
    // stays valid and commits without validation even though y was overwritten meanwhile.
    let (db, rec) = recorded_db();
    let mut w = db.worker().unwrap();
    bump_wts(&mut w, 2, 3);
    let mut t3 = w.begin();
    t3.read(T, 3).unwrap();
    t3.read(T, 2).unwrap();
    t3.write(T, 4, &v(0)).unwrap();
    t3.commit().unwrap();
    let mut w2 = db.worker().unwrap();
    let mut reader = w2.begin();
    reader.read(T, 3).unwrap();
    reader.read(T, 2).unwrap(); // wts 3: reader's commit_ts is 3
    let mut writer = w.begin();
    writer.write(T, 3, &v(33)).unwrap();
    writer.commit().unwrap();
    reader
        .commit()
        .expect("the reader's timestamp 3 is covered by the extended rts of key 3");
    let report = check(&rec.take(), CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
}

#[test]
fn tictoc_is_serializable_but_not_strictly_serializable() {
    // Setup: key 9 (w) gets rts 10 through a read-only transaction at timestamp 10.
    // Tc reads w (wts 0, rts 10). Ta overwrites w at commit_ts 11 and finishes. Tb begins after Ta
    // finished, reads y (key 5, wts 0) and commits read-only at 0. Tc then writes y: commit_ts =
    // max(0, rts(y) + 1) = 1 <= 10, so its read of w needs no validation and it commits at 1.
    // Serial order by timestamp: Tb (0), Tc (1), Ta (11): serializable. But Ta finished before Tb
    // began, and Tb -> Tc -> Ta in the serial order: a real-time cycle, so not strictly
    // serializable.
    let (db, rec) = recorded_db();
    let (mut wa, mut wb, mut wc) = (
        db.worker().unwrap(),
        db.worker().unwrap(),
        db.worker().unwrap(),
    );
    bump_wts(&mut wa, 8, 10);
    let mut t = wa.begin();
    t.read(T, 8).unwrap();
    t.read(T, 9).unwrap();
    t.commit().unwrap();

    let mut tc = wc.begin();
    tc.read(T, 9).unwrap();
    let mut ta = wa.begin();
    ta.write(T, 9, &v(99)).unwrap();
    ta.commit().unwrap();
    // Make Tb's begin instant strictly later than Ta's end on the recorder's clock.
    let ta_done = rec.now_ns();
    while rec.now_ns() <= ta_done {
        std::hint::spin_loop();
    }
    let mut tb = wb.begin();
    assert_eq!(tb.read(T, 5).unwrap().map(num), Some(50));
    tb.commit().unwrap();
    tc.write(T, 5, &v(55)).unwrap();
    tc.commit()
        .expect("Tc commits at timestamp 1, before Ta's 11");

    let history = rec.take();
    let report = check(&history, CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
    let strict = check(&history, CheckOptions::strict());
    assert!(
        !strict.is_serializable(),
        "expected a real-time anomaly: {strict}"
    );
}

#[test]
fn history_tags_are_install_timestamps_and_strictly_increase_per_key() {
    let (db, rec) = recorded_db();
    let mut w = db.worker().unwrap();
    bump_wts(&mut w, 0, 3);
    let mut t = w.begin();
    t.read(T, 0).unwrap();
    t.commit().unwrap();
    let history = rec.take();
    let tags: Vec<u64> = history
        .records()
        .iter()
        .flat_map(|r| r.writes.iter().map(|w| w.version))
        .collect();
    assert_eq!(tags, vec![1, 2, 3]);
    let last = history.records().last().unwrap();
    assert_eq!(
        last.reads[0].version, 3,
        "the reader saw the version tagged 3"
    );
}

#[test]
fn the_engine_is_named_tictoc() {
    let db = TicToc::builder()
        .config(TicTocConfig::manual())
        .build(&semantics::schema())
        .unwrap();
    assert_eq!(db.name(), "tictoc");
    assert!(db.worker().is_ok());
}

#[test]
fn a_delta_overflow_shifts_wts_but_keeps_the_history_tag() {
    // Key 1 reaches wts 40_000 (> MAX_DELTA = 32_767 above key 2's wts 0). A reader of both
    // commits at 40_000 and must extend key 2's rts that far: key 2's wts moves to
    // 40_000 - 32_767 (paper §3.6). Readers must still name the version by the tag it was
    // installed with (0), and a transaction that read key 2 before the shift fails its wts
    // comparison if it needs an extension (a false abort, never a wrong commit).
    let (db, rec) = recorded_db();
    let (mut w, mut w2) = (db.worker().unwrap(), db.worker().unwrap());
    let far = 40_000u64;
    assert!(far > txlab_tictoc::__layout::MAX_DELTA);
    for i in 0..far {
        let mut tx = w.begin();
        tx.write(T, 1, &v(i)).unwrap();
        tx.commit().unwrap();
    }
    let mut early = w2.begin();
    early.read(T, 2).unwrap(); // wts 0, rts 0, before the shift
    let mut t = w.begin();
    t.read(T, 1).unwrap();
    t.read(T, 2).unwrap();
    t.commit().unwrap(); // commit_ts 40_000: extends key 2, shifting its wts
    early.write(T, 3, &v(0)).unwrap(); // commit_ts 1 > rts 0 read: must re-validate key 2
    assert_eq!(
        cause(early.commit().unwrap_err()),
        ConflictCause::ReadValidation,
        "the shifted wts no longer matches what the early reader saw"
    );
    let mut late = w.begin();
    assert_eq!(late.read(T, 2).unwrap().map(num), Some(20));
    late.write(T, 2, &v(21)).unwrap();
    late.commit().unwrap(); // commit_ts 40_001
    let history = rec.take();
    let last = history
        .records()
        .iter()
        .find(|r| r.writes.iter().any(|w| w.key == 2))
        .expect("the late writer of key 2 was recorded");
    assert_eq!(
        last.reads[0].version, 0,
        "the shifted version is still the loaded one"
    );
    assert_eq!(last.writes[0].version, far + 1);
    let report = check(&history, CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
}

/// A recorded database with one ordered table (table 0, 8-byte values) holding key 0 = 0.
fn recorded_ordered_db() -> (TicToc<MemoryRecorder>, Arc<MemoryRecorder>) {
    let mut s = Schema::new();
    s.add(TableSpec::ordered("ordered", 8)).unwrap();
    let rec = Arc::new(MemoryRecorder::new());
    let db = TicToc::builder()
        .config(TicTocConfig::manual())
        .recorder(rec.clone())
        .build(&s)
        .unwrap();
    db.load(TableId(0), 0, &v(0)).unwrap();
    (db, rec)
}

#[test]
fn a_key_created_after_a_scan_cannot_be_ordered_before_the_scanner() {
    // The minimal schedule the random-schedule kit found (`TXLAB_SEED=1
    // TXLAB_PROPTEST_CASES=20000 cargo test -p txlab-tictoc --test kit random`, shrunk by hand),
    // on an ordered table where keys 0 and 1 share a phantom stripe:
    //
    //   setup  write k0                          k0: wts = rts = 1
    //   A      read k0                           (wts 1, rts 1)
    //   B      scan 0..=1 (sees k0 only), write k0, commit at rts(k0) + 1 = 2
    //   A      insert k1, commit
    //
    // A must be ordered before B (B overwrote the k0 A read) and after B (B's scan missed k1,
    // which A creates). Before stripes were timestamped, A committed at max(wts read = 1,
    // rts(k1) + 1 = 1) = 1 without validating anything (its read's rts already reached 1; B's
    // stripe check had passed before A linked k1), and the checker found the cycle
    // A -rw(k0)-> B -rw(k1)-> A. Now B's validation raises the stripe's scan_rts to 2, A's
    // creation of k1 must commit above it (at 3), and at 3 A's read of k0 is no longer valid
    // (B replaced that version at 2): A aborts.
    const O: TableId = TableId(0);
    let (db, rec) = recorded_ordered_db();
    let (mut wa, mut wb) = (db.worker().unwrap(), db.worker().unwrap());
    let mut setup = wb.begin();
    setup.write(O, 0, &v(1)).unwrap();
    setup.commit().unwrap();

    let mut a = wa.begin();
    assert_eq!(a.read(O, 0).unwrap().map(num), Some(1));
    let mut b = wb.begin();
    let mut seen = Vec::new();
    b.scan(O, 0, 1, &mut |k, _| {
        seen.push(k);
        true
    })
    .unwrap();
    assert_eq!(seen, vec![0], "k1 does not exist yet");
    b.write(O, 0, &v(2)).unwrap();
    b.commit().unwrap();
    assert!(a.insert(O, 1, &v(10)).unwrap());
    let outcome = a.commit();
    let report = check(&rec.take(), CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
    assert_eq!(
        cause(outcome.unwrap_err()),
        ConflictCause::ReadValidation,
        "A's creation of k1 is pushed above B's scan, where its read of k0 is stale"
    );
}

#[test]
fn a_creator_commits_above_every_scan_that_missed_its_key() {
    // B scans 0..=1 and commits at 5 (it read k0 at wts 5). A, which read nothing, then creates
    // k1 in the same stripe: TicToc alone would give it timestamp rts(k1) + 1 = 1, before B,
    // whose scan did not see k1. The stripe's scan_rts (5) pushes A to 6, after B. A creator in
    // a stripe nobody scanned is not pushed.
    const O: TableId = TableId(0);
    let (db, rec) = recorded_ordered_db();
    let (mut wa, mut wb) = (db.worker().unwrap(), db.worker().unwrap());
    for i in 0..5 {
        let mut tx = wb.begin();
        tx.write(O, 0, &v(i)).unwrap();
        tx.commit().unwrap();
    }
    let mut b = wb.begin();
    b.scan(O, 0, 1, &mut |_, _| true).unwrap();
    b.commit().unwrap();
    let mut a = wa.begin();
    assert!(a.insert(O, 1, &v(10)).unwrap());
    a.commit().unwrap();
    let mut far = wa.begin();
    assert!(far.insert(O, 1 << 20, &v(11)).unwrap());
    far.commit().unwrap();
    let history = rec.take();
    let version_of = |key: u64| {
        history
            .records()
            .iter()
            .flat_map(|r| r.writes.iter())
            .find(|w| w.key == key)
            .map(|w| w.version)
    };
    assert_eq!(
        version_of(1),
        Some(6),
        "k1 is created after B's timestamp 5"
    );
    assert_eq!(
        version_of(1 << 20),
        Some(1),
        "a creation in an unscanned stripe keeps TicToc's own timestamp"
    );
    let report = check(&history, CheckOptions::serializable());
    assert!(report.is_serializable(), "{report}");
}
